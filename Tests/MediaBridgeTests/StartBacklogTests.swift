@testable import MediaBridge
import Testing

/// When a live input's start-up backlog is caught up, judged on frame timings as a stream gives them.
@Suite struct StartBacklogTests {
    static let frame: UInt64 = 40_000_000  // 25 fps
    let start = ContinuousClock.now

    /// Feeds frames `first..<end` pulled `spacing` apart from `at`; the index of the frame that ends
    /// the backlog, if one does, and when the next frame would be pulled.
    func feed(_ backlog: inout StartBacklog, frames range: Range<Int>, from at: ContinuousClock.Instant,
              spacing: (Int) -> Duration) -> (caughtUpAt: Int?, next: ContinuousClock.Instant) {
        var pulledAt = at
        for index in range {
            if backlog.relayed(runningTime: UInt64(index) * Self.frame, pulledAt: pulledAt) { return (index, pulledAt) }
            pulledAt += spacing(index)
        }
        return (nil, pulledAt)
    }

    /// Two seconds of held frames relayed at three times real time, with the decoder kept off the
    /// CPU for 200 ms in the middle: still a backlog (judged by a pause between frames, as
    /// before, it ended there, and the rest of the backlog overflowed the appsink's ten frames).
    /// Once the frames come at the input's pace, it is caught up within two seconds of them.
    @Test func aPauseInTheBacklogDoesNotEndIt() {
        var backlog = StartBacklog()
        let (during, liveFrom) = feed(&backlog, frames: 0..<50, from: start) { $0 == 25 ? .milliseconds(200) : .nanoseconds(Int64(Self.frame / 3)) }
        #expect(during == nil, "caught up at frame \(during ?? -1) of a backlog relayed at three times real time")
        let (live, _) = feed(&backlog, frames: 50..<200, from: liveFrom) { _ in .nanoseconds(Int64(Self.frame)) }
        #expect(live.map { (51...100).contains($0) } == true, "caught up at frame \(live ?? -1), live from frame 50")
    }

    /// Frames that come at the input's pace, unevenly (a network's bursts of up to 30 ms), are
    /// caught up after a second of them.
    @Test func framesAtTheInputsPaceAreCaughtUp() {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<20 {
            var backlog = StartBacklog()
            var pulledAt = start, caughtUp: Int?
            for index in 0..<200 {
                // Each frame sent on time, received up to 30 ms late.
                let late = Duration.milliseconds(Int.random(in: 0...30, using: &random))
                let sentAt = start + .nanoseconds(Int64(UInt64(index) * Self.frame))
                pulledAt = max(pulledAt, sentAt + late)
                if backlog.relayed(runningTime: UInt64(index) * Self.frame, pulledAt: pulledAt) {
                    caughtUp = index
                    break
                }
            }
            #expect(caughtUp == 26, "a second of frames after the first")
        }
    }

    /// A stage too slow to catch up (the backlog relayed at twice real time for good) stops
    /// catching up after `limit`: from then on it drops frames rather than fall further behind.
    @Test func aStageThatNeverCatchesUpStopsAfterTheLimit() {
        var backlog = StartBacklog()
        let spacing = Duration.nanoseconds(Int64(Self.frame / 2))
        let (caughtUp, _) = feed(&backlog, frames: 0..<2000, from: start) { _ in spacing }
        let expected = Int(StartBacklog.limit / spacing) + 1
        #expect(caughtUp == expected)
    }

    /// Timestamps that go back (an input that restarts its clock) start a new window: the frames
    /// after it are judged on their own.
    @Test func timestampsThatGoBackStartTheJudgementAgain() {
        var backlog = StartBacklog()
        let pace = Duration.nanoseconds(Int64(Self.frame))
        var pulledAt = start
        for index in 0..<20 {
            let caughtUp = backlog.relayed(runningTime: 5_000_000_000 + UInt64(index) * Self.frame, pulledAt: pulledAt)
            #expect(!caughtUp)
            pulledAt += pace
        }
        var caughtUp: Int?
        for index in 0..<100 where caughtUp == nil {
            if backlog.relayed(runningTime: UInt64(index) * Self.frame, pulledAt: pulledAt) { caughtUp = index }
            pulledAt += pace
        }
        #expect(caughtUp == 25, "a second of frames after the jump back, at the input's pace")
    }
}
