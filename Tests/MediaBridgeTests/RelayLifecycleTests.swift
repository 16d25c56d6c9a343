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
        life.outputFailed("Connection refused", at: at(10))
        #expect(life.phase == .reconnecting && life.lastOutputError == "Connection refused")
        var retries: [Double] = []
        for tenth in 101...300 {
            let now = Double(tenth) / 10
            if life.decide(at: at(now)) == .retryOutput {
                retries.append(now)
                life.outputRebuilt(at: at(now))
                // The rebuilt output is refused again at once.
                life.outputFailed("Connection refused", at: at(now))
            }
        }
        #expect(retries == [11, 13, 17, 21, 25, 29], "retries at \(retries)")
    }

    @Test func aRebuiltOutputThatStaysUpIsAcceptedAndTheBackoffStartsOver() {
        var life = RelayLifecycle(policy: .init(startTimeout: nil, giveUpAfter: .seconds(60)), now: t0)
        life.firstFrame()
        life.outputFailed("refused", at: at(0))
        #expect(life.decide(at: at(1)) == .retryOutput)
        life.outputRebuilt(at: at(1))
        #expect(life.decide(at: at(2.9)) == .wait, "not accepted before it has run 2 s")
        #expect(life.phase == .reconnecting)
        #expect(life.decide(at: at(3.1)) == .outputAccepted)
        life.outputAccepted()
        #expect(life.phase == .relaying && life.outage(at: at(4)) == nil)
        life.outputFailed("refused", at: at(100))
        #expect(life.decide(at: at(101)) == .retryOutput, "a new outage starts again at 1 s")
    }

    @Test func anUnreachableOutputIsGivenUpOnlyWhenTheRelayIsBounded() {
        var bounded = RelayLifecycle(policy: .init(startTimeout: nil, giveUpAfter: .seconds(60)), now: t0)
        var forever = RelayLifecycle(policy: .init(startTimeout: nil, giveUpAfter: nil), now: t0)
        for index in 0..<2 {
            var life = index == 0 ? bounded : forever
            life.firstFrame()
            life.outputFailed("refused", at: at(0))
            var decisions: [RelayLifecycle.Decision] = []
            var now = 0.0
            while now < 120 {
                now += 0.5
                let decision = life.decide(at: at(now))
                if decision == .retryOutput {
                    life.outputRebuilt(at: at(now))
                    life.outputFailed("refused", at: at(now))
                }
                if decision != .wait { decisions.append(decision) }
                if decision == .failOutputUnreachable { break }
            }
            if index == 0 { bounded = life } else { forever = life }
            #expect(decisions.last == (index == 0 ? .failOutputUnreachable : .retryOutput), "\(decisions)")
        }
    }

    @Test func drainingIsBoundedAndIgnoresLateOutputErrors() {
        var life = RelayLifecycle(policy: .init(startTimeout: .seconds(5), giveUpAfter: nil), now: t0)
        life.firstFrame()
        life.drain(at: at(50))
        life.outputFailed("closed", at: at(51))
        #expect(life.phase == .draining)
        #expect(life.decide(at: at(59)) == .wait)
        #expect(life.decide(at: at(60.5)) == .stopDraining)
    }
}
