@testable import RelayServer
import Testing

/// The one-way signal the service waits on for a relay's play and a stream's end.
@Suite struct AsyncSignalTests {
    @Test func aWaiterGoesOnWhenTheSignalFiresNotAtItsLimit() async {
        let signal = AsyncSignal()
        let started = ContinuousClock.now
        async let fired = signal.wait(upTo: .seconds(300))
        try? await Task.sleep(for: .milliseconds(50))
        signal.fire()
        #expect(await fired)
        // Far under the limit, however busy the machine's other tests keep its threads.
        #expect(ContinuousClock.now - started < .seconds(150), "woken by the signal, not by its limit")
    }

    @Test func aSignalThatFiredBeforehandLetsEveryLaterWaiterThrough() async {
        let signal = AsyncSignal()
        signal.fire()
        for _ in 0..<3 { #expect(await signal.wait(upTo: .seconds(300))) }
    }

    @Test func aWaitEndsAtItsLimitWhenNothingFires() async {
        let signal = AsyncSignal()
        let started = ContinuousClock.now
        #expect(await signal.wait(upTo: .milliseconds(100)) == false)
        #expect(ContinuousClock.now - started >= .milliseconds(100))
    }

    @Test func aCancelledWaiterReturnsAtOnceAndIsNotLeftBehind() async {
        let signal = AsyncSignal()
        let started = ContinuousClock.now
        let waiter = Task { await signal.wait(upTo: .seconds(300)) }
        try? await Task.sleep(for: .milliseconds(50))
        waiter.cancel()
        #expect(await waiter.value == false)
        #expect(ContinuousClock.now - started < .seconds(150), "returned on its cancellation, not at its limit")
        signal.fire()  // nothing left to resume twice
        #expect(signal.hasFired)
    }
}
