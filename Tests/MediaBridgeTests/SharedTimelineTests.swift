import MediaBridge
import Testing

@Suite struct SharedTimelineTests {
    @Test func bothStreamsAreRebasedOnTheFirstVideoFrame() {
        var timeline = SharedTimeline()
        #expect(timeline.rebase(5_000) == nil)
        timeline.start(at: 1_000_000)
        timeline.start(at: 9_000_000) // later starts do not move the origin
        #expect(timeline.rebase(1_000_000) == 0)
        // Audio 21 ms after video in the input stays 21 ms after it in the output.
        #expect(timeline.rebase(1_021_000) == 21_000)
        #expect(timeline.rebase(999_999) == nil)
        #expect(timeline.rebase(UInt64.max) == nil)
    }
}
