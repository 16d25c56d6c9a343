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

    /// An input that came back starts its running time again; it continues the output where the
    /// relay places it, audio and video keeping their offset.
    @Test func aReturningInputContinuesTheOutput() {
        var timeline = SharedTimeline()
        timeline.start(at: 1_000_000)
        #expect(timeline.rebase(4_000_000_000) == 3_999_000_000)
        timeline.resume(at: 200_000, outputTime: 6_000_000_000, generation: 1)
        #expect(timeline.generation == 1)
        #expect(timeline.rebase(200_000) == 6_000_000_000)
        #expect(timeline.rebase(221_000) == 6_000_021_000)
        #expect(timeline.rebase(199_999) == nil, "audio from before the returning input's first frame is trimmed")
    }
}

@Suite struct MonotonicTimestampsTests {
    @Test func increasingStampsPassUnchanged() {
        var stamps = MonotonicTimestamps()
        #expect([0, 33, 66, 100].map { stamps.next($0) } == [0, 33, 66, 100])
        #expect(stamps.repaired == 0)
    }

    @Test func stampsThatGoBackAreMovedJustAfterTheirPredecessor() {
        var stamps = MonotonicTimestamps()
        let ms: UInt64 = 1_000_000
        let out = [2_840 * ms, 2_800 * ms, 2_831 * ms, 2_874 * ms, 2_874 * ms].map { stamps.next($0) }
        #expect(out == [2_840 * ms, 2_841 * ms, 2_842 * ms, 2_874 * ms, 2_875 * ms])
        #expect(stamps.repaired == 3)
    }
}
