import MediaBridge
import Testing

/// The stream lifecycle's policies, on a made-up clock: no media, no waiting.
@Suite struct RelayLifecycleTests {
    let t0 = ContinuousClock.now
    func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .milliseconds(Int(seconds * 1000)) }

    @Test func noFirstFrameWithinTheStartTimeoutFails() {
        var life = RelayLifecycle(policy: .init(startTimeout: .seconds(15), giveUpAfter: nil), now: t0)
        #expect(life.decide(at: at(14.9)) == .wait)
        #expect(life.decide(at: at(15.1)) == .failNoInput)
        life.firstFrame()
        #expect(life.phase == .relaying && life.decide(at: at(100)) == .wait)
        let patient = RelayLifecycle(policy: .init(startTimeout: nil, giveUpAfter: nil), now: t0)
        #expect(patient.decide(at: at(86_400)) == .wait, "no start time-out waits for ever")
    }

    /// 1 s, then doubling to the cap, for every attempt that fails before being accepted.
    @Test func retriesBackOffFromOneSecondToTheCap() {
        var life = RelayLifecycle(policy: .init(startTimeout: nil, maximumRetryDelay: .seconds(4), giveUpAfter: nil), now: t0)
        life.firstFrame()
        life.outputFailed(0, "Connection refused", at: at(10))
        #expect(life.phase == .reconnecting && life.lastOutputError == "Connection refused")
        var retries: [Double] = []
        for tenth in 101...300 {
            let now = Double(tenth) / 10
            if life.decide(at: at(now)) == .retryOutput(0) {
                retries.append(now)
                life.outputRebuilt(0, at: at(now))
                // The rebuilt output is refused again at once.
                life.outputFailed(0, "Connection refused", at: at(now))
            }
        }
        #expect(retries == [11, 13, 17, 21, 25, 29], "retries at \(retries)")
    }

    @Test func aRebuiltOutputThatStaysUpIsAcceptedAndTheBackoffStartsOver() {
        var life = RelayLifecycle(policy: .init(startTimeout: nil, giveUpAfter: .seconds(60)), now: t0)
        life.firstFrame()
        life.outputFailed(0, "refused", at: at(0))
        #expect(life.decide(at: at(1)) == .retryOutput(0))
        life.outputRebuilt(0, at: at(1))
        #expect(life.decide(at: at(2.9)) == .wait, "not accepted before it has run 2 s")
        #expect(life.phase == .reconnecting)
        #expect(life.decide(at: at(3.1)) == .outputAccepted(0))
        life.outputAccepted(0)
        #expect(life.phase == .relaying && life.outage(of: 0, at: at(4)) == nil)
        life.outputFailed(0, "refused", at: at(100))
        #expect(life.decide(at: at(101)) == .retryOutput(0), "a new outage starts again at 1 s")
    }

    @Test func anUnreachableOutputIsGivenUpOnlyWhenTheRelayIsBounded() {
        var bounded = RelayLifecycle(policy: .init(startTimeout: nil, giveUpAfter: .seconds(60)), now: t0)
        var forever = RelayLifecycle(policy: .init(startTimeout: nil, giveUpAfter: nil), now: t0)
        for index in 0..<2 {
            var life = index == 0 ? bounded : forever
            life.firstFrame()
            life.outputFailed(0, "refused", at: at(0))
            var decisions: [RelayLifecycle.Decision] = []
            var now = 0.0
            while now < 120 {
                now += 0.5
                let decision = life.decide(at: at(now))
                if decision == .retryOutput(0) {
                    life.outputRebuilt(0, at: at(now))
                    life.outputFailed(0, "refused", at: at(now))
                }
                if decision != .wait { decisions.append(decision) }
                if decision == .giveUpOutput(0) { break }
            }
            if index == 0 { bounded = life } else { forever = life }
            #expect(decisions.last == (index == 0 ? .giveUpOutput(0) : .retryOutput(0)), "\(decisions)")
        }
    }

    /// Each output has its own outage and backoff: one platform down never holds back another's
    /// retries, and the stream counts as reconnecting only while every output is down.
    @Test func eachOutputReconnectsOnItsOwnAndTheStreamIsDownOnlyWithAll() {
        var life = RelayLifecycle(policy: .init(startTimeout: nil, maximumRetryDelay: .seconds(4), giveUpAfter: .seconds(30)), now: t0, outputs: 2)
        life.firstFrame()
        life.outputFailed(1, "refused", at: at(10))
        #expect(life.phase == .relaying, "the other output still sends")
        #expect(life.decide(at: at(11)) == .retryOutput(1))
        life.outputRebuilt(1, at: at(11))
        life.outputFailed(1, "refused", at: at(11))
        life.outputFailed(0, "closed", at: at(12))
        #expect(life.phase == .reconnecting && life.lastOutputError == "closed")
        // Output 0's first retry comes after 1 s, output 1's second after 2 s: neither waits for the other.
        #expect(life.decide(at: at(13)) == .retryOutput(0))
        life.outputRebuilt(0, at: at(13))
        #expect(life.decide(at: at(13)) == .retryOutput(1), "output 1 is due at 13 too")
        life.outputRebuilt(1, at: at(13))
        life.outputFailed(1, "refused", at: at(13.5))
        #expect(life.decide(at: at(15.1)) == .outputAccepted(0))
        life.outputAccepted(0)
        #expect(life.phase == .relaying && life.outage(of: 1, at: at(16)) == .seconds(6))
        // Output 1 stays unreachable past the give-up time: it alone is given up.
        var retries: [Double] = []
        var givenUpAt: Double?
        for tenth in 160...500 where givenUpAt == nil {
            let now = Double(tenth) / 10
            switch life.decide(at: at(now)) {
            case .retryOutput(1):
                retries.append(now)
                life.outputRebuilt(1, at: at(now))
                life.outputFailed(1, "refused", at: at(now))
            case .giveUpOutput(1): givenUpAt = now
            case .wait: break
            case let other: Issue.record("unexpected \(other) at \(now)")
            }
        }
        #expect(retries == [17.5, 21.5, 25.5, 29.5, 33.5, 37.5] && givenUpAt == 41.5, "\(retries) \(String(describing: givenUpAt))")
        life.outputRemoved(1)
        #expect(life.outputCount == 1 && life.outages.isEmpty && life.decide(at: at(100)) == .wait)
    }

    @Test func drainingIsBoundedAndIgnoresLateOutputErrors() {
        var life = RelayLifecycle(policy: .init(startTimeout: .seconds(5), giveUpAfter: nil), now: t0)
        life.firstFrame()
        life.drain(at: at(50))
        life.outputFailed(0, "closed", at: at(51))
        #expect(life.phase == .draining)
        #expect(life.decide(at: at(59)) == .wait)
        #expect(life.decide(at: at(60.5)) == .stopDraining)
    }

    @Test func withoutAGracePeriodALostInputIsNotAwaited() {
        var life = RelayLifecycle(policy: .init(startTimeout: nil, giveUpAfter: nil), now: t0)
        life.firstFrame()
        #expect(!life.awaitsLostInput)
        life.inputLost(at: at(5))
        #expect(life.awaitingInputSince == nil && life.phase == .relaying && life.decide(at: at(100)) == .wait)
    }

    @Test func anInputThatEndsBeforeItsFirstFrameIsNotAwaited() {
        var life = RelayLifecycle(policy: .init(startTimeout: .seconds(15), giveUpAfter: nil, inputGrace: .seconds(10)), now: t0)
        #expect(!life.awaitsLostInput, "a stream that never started has nothing to continue")
        life.firstFrame()
        life.drain(at: at(3))
        #expect(!life.awaitsLostInput, "nor has one being stopped")
    }

    /// Listened to again after a quarter second, then after every failure (a second when refused,
    /// at once when the joined stream ended); back within the grace period: relaying, the same
    /// stream; away longer: the stream ends.
    @Test func aLostInputIsAwaitedForItsGracePeriod() {
        var life = RelayLifecycle(policy: .init(startTimeout: nil, giveUpAfter: nil, inputGrace: .seconds(10)), now: t0)
        life.firstFrame()
        #expect(life.awaitsLostInput)
        life.inputLost(at: at(20))
        life.inputLost(at: at(21))
        #expect(life.phase == .awaitingInput && life.awaitingInputSince == at(20), "a second report changes nothing")
        #expect(life.decide(at: at(20.2)) == .wait)
        #expect(life.decide(at: at(20.3)) == .restartInput)
        life.inputRestarted()
        #expect(life.decide(at: at(22)) == .wait, "listening: nothing to do until it ends or frames come")
        life.inputRestartFailed(at: at(22))
        #expect(life.decide(at: at(22.9)) == .wait && life.decide(at: at(23)) == .restartInput, "refused: again after a second")
        life.inputRestarted()
        life.inputRestartFailed(at: at(24), ended: true)
        #expect(life.decide(at: at(24.3)) == .restartInput, "ended: again at once")
        life.inputRestarted()
        #expect(life.inputResumed(at: at(26)) == .seconds(6))
        #expect(life.phase == .relaying && life.awaitingInputSince == nil && life.decide(at: at(40)) == .wait)

        life.inputLost(at: at(50))
        #expect(life.decide(at: at(59.9)) != .endAwaitedInput)
        #expect(life.decide(at: at(60.1)) == .endAwaitedInput)
    }

    /// The upstream failing while the input is away: the output is retried as ever, and once it is
    /// accepted the stream goes back to awaiting its input.
    @Test func anOutputLostWhileTheInputIsAwayIsStillReconnected() {
        var life = RelayLifecycle(policy: .init(startTimeout: nil, giveUpAfter: nil, inputGrace: .seconds(30)), now: t0)
        life.firstFrame()
        life.inputLost(at: at(0))
        life.inputRestarted()
        life.outputFailed(0, "refused", at: at(1))
        #expect(life.phase == .reconnecting && life.decide(at: at(2)) == .retryOutput(0))
        life.outputRebuilt(0, at: at(2))
        #expect(life.decide(at: at(4.1)) == .outputAccepted(0))
        life.outputAccepted(0)
        #expect(life.phase == .awaitingInput)
    }
}

/// The supervisor sleeps until `nextDeadline`: the decision must not change before it, and must
/// change right at it, in every phase that has a deadline.
@Suite struct RelayLifecycleDeadlineTests {
    let t0 = ContinuousClock.now
    func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .milliseconds(Int(seconds * 1000)) }

    /// The decision just before `deadline` is `.wait`, and at the deadline it is `expected`.
    func expectDeadline(_ life: RelayLifecycle, after now: ContinuousClock.Instant, is expected: RelayLifecycle.Decision,
                        sourceLocation: SourceLocation = #_sourceLocation) {
        guard let deadline = life.nextDeadline(after: now) else {
            Issue.record("no deadline", sourceLocation: sourceLocation)
            return
        }
        #expect(life.decide(at: deadline - .nanoseconds(1)) == .wait, sourceLocation: sourceLocation)
        #expect(life.decide(at: deadline) == expected, sourceLocation: sourceLocation)
    }

    @Test func theStartTimeoutIsTheFirstDeadline() {
        var life = RelayLifecycle(policy: .init(startTimeout: .seconds(15), giveUpAfter: nil), now: t0)
        expectDeadline(life, after: t0, is: .failNoInput)
        life.firstFrame()
        #expect(life.nextDeadline(after: t0) == nil, "relaying, only events change the decision")
        let patient = RelayLifecycle(policy: .init(startTimeout: nil, giveUpAfter: nil), now: t0)
        #expect(patient.nextDeadline(after: t0) == nil)
    }

    @Test func aFailedOutputIsRetriedThenAcceptedAtItsDeadlines() {
        var life = RelayLifecycle(policy: .init(startTimeout: nil, giveUpAfter: .seconds(60)), now: t0)
        life.firstFrame()
        life.outputFailed(0, "Connection refused", at: at(10))
        expectDeadline(life, after: at(10), is: .retryOutput(0))
        life.outputRebuilt(0, at: at(11))
        expectDeadline(life, after: at(11), is: .outputAccepted(0))
    }

    @Test func anAwaitedInputIsRestartedThenGivenUpAtItsDeadlines() {
        var life = RelayLifecycle(policy: .init(startTimeout: nil, giveUpAfter: nil, inputGrace: .seconds(5)), now: t0)
        life.firstFrame()
        life.inputLost(at: at(10))
        expectDeadline(life, after: at(10), is: .restartInput)
        life.inputRestarted()
        expectDeadline(life, after: at(10.3), is: .endAwaitedInput)
        life.inputResumed(at: at(12))
        #expect(life.nextDeadline(after: at(12)) == nil)
    }

    /// Once the drain time-out has passed only the pumps' end can end the stream: no deadline is
    /// left, so the supervisor does not spin on one in the past.
    @Test func drainingHasOneDeadlineAndNoneOnceItPassed() {
        var life = RelayLifecycle(policy: .init(startTimeout: .seconds(15), giveUpAfter: nil, drainTimeout: .seconds(10)), now: t0)
        life.drain(at: at(1))
        expectDeadline(life, after: at(1), is: .stopDraining)
        #expect(life.nextDeadline(after: at(12)) == nil)
    }
}
