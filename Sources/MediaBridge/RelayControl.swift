import Synchronization

/// The run state a relay's threads share: its `RelayLifecycle`, whether a stop was asked for,
/// which pumps have finished, the first failure and how `run` ended. Every change that a waiting
/// thread may care about notifies `changes`; asking again for what is already so notifies nobody,
/// so that the supervisor, which both waits on `changes` and repeats its checks, does not wake
/// itself for nothing. A change of phase notifies too, for whoever waits for the start
/// (`MediaRelay.waitForStart`): the supervisor then looks once more, at the few phase changes a
/// stream has.
final class RelayControl: Sendable {
    enum Pump { case video, audio }

    private struct State {
        var lifecycle: RelayLifecycle
        var stopRequested = false
        var videoFinished = false
        var audioFinished = false
        var failure: MediaError?
        /// Set once `MediaRelay.run` has returned: nil while it runs, then what it threw, if anything.
        var outcome: Result<Void, MediaError>?
    }

    /// What the supervisor reads in one go to decide its next step.
    struct Snapshot {
        let lifecycle: RelayLifecycle
        let pumpsFinished: Bool
    }

    private let state: Mutex<State>
    let changes: ChangeSignal
    /// Told each new phase, inside the lock that changed it, so that phases are told in the order
    /// they came (see `MediaRelay.observeChanges`).
    private let phaseObserver = Mutex<(@Sendable (RelayChange) -> Void)?>(nil)

    init(lifecycle: RelayLifecycle, changes: ChangeSignal) {
        state = Mutex(State(lifecycle: lifecycle))
        self.changes = changes
    }

    func observePhases(_ body: @escaping @Sendable (RelayChange) -> Void) { phaseObserver.withLock { $0 = body } }

    /// Runs `body` on the state and tells the observer the phase it left the lifecycle in, if
    /// that changed; all in one critical section. Returns whether the phase changed.
    private func changing<Result>(_ body: (inout State) -> Result) -> (Result, phaseChanged: Bool) {
        state.withLock { state in
            let phase = state.lifecycle.phase
            let result = body(&state)
            guard state.lifecycle.phase != phase else { return (result, false) }
            phaseObserver.withLock { $0 }?(.phase(state.lifecycle.phase, lastOutputError: state.lifecycle.lastOutputError))
            return (result, true)
        }
    }

    var stopRequested: Bool { state.withLock { $0.stopRequested } }

    var failure: MediaError? { state.withLock { $0.failure } }

    var videoFinished: Bool { state.withLock { $0.videoFinished } }

    var status: (phase: RelayLifecycle.Phase, lastOutputError: String?) {
        state.withLock { ($0.lifecycle.phase, $0.lifecycle.lastOutputError) }
    }

    /// Ends the stream cleanly: the pumps stop, the output is finalised.
    func requestStop() {
        let changed = state.withLock { state in
            defer { state.stopRequested = true }
            return !state.stopRequested
        }
        if changed { changes.notify() }
    }

    /// Ends the stream with `error`, unless an earlier failure is already the reason.
    func fail(_ error: MediaError) {
        let changed = state.withLock { state in
            defer { state.stopRequested = true }
            guard state.failure == nil else { return !state.stopRequested }
            state.failure = error
            return true
        }
        if changed { changes.notify() }
    }

    func finished(_ pump: Pump) {
        state.withLock { state in
            switch pump {
            case .video: state.videoFinished = true
            case .audio: state.audioFinished = true
            }
        }
        changes.notify()
    }

    /// One change to the lifecycle, made and read in a single critical section. A change of phase
    /// notifies `changes` (`MediaRelay.waitForStart` waits on it).
    func withLifecycle<Result>(_ body: (inout RelayLifecycle) -> Result) -> Result {
        let (result, phaseChanged) = changing { body(&$0.lifecycle) }
        if phaseChanged { changes.notify() }
        return result
    }

    /// The relay's `run` has returned, having thrown `failure` if anything.
    func runEnded(failure: MediaError?) {
        state.withLock { $0.outcome = failure.map { .failure($0) } ?? .success(()) }
        changes.notify()
    }

    /// Nil while the relay runs; then what its `run` threw, if anything.
    var outcome: Result<Void, MediaError>? { state.withLock { $0.outcome } }

    /// Puts the lifecycle in its draining phase once a stop was asked for or both pumps finished,
    /// and returns what the supervisor decides on, all in one critical section.
    func drainIfEnded(at now: ContinuousClock.Instant) -> Snapshot {
        let (snapshot, startedDraining) = changing { state in
            let pumpsFinished = state.videoFinished && state.audioFinished
            if state.stopRequested || pumpsFinished { state.lifecycle.drain(at: now) }
            return Snapshot(lifecycle: state.lifecycle, pumpsFinished: pumpsFinished)
        }
        if startedDraining { changes.notify() }
        return snapshot
    }

    /// Whether an input that ends now (or has ended) is awaited rather than ending the stream.
    var inputEndIsAwaited: Bool {
        state.withLock { $0.lifecycle.awaitsLostInput || $0.lifecycle.awaitingInputSince != nil }
    }

    /// The input ended: with a grace period it is awaited (true), and `newlyLost` says whether it
    /// was relaying until now (rather than a restarted input that ended again).
    func inputEnded(cleanly: Bool, at now: ContinuousClock.Instant) -> (awaited: Bool, newlyLost: Bool) {
        changing { state in
            if state.lifecycle.awaitingInputSince != nil {
                state.lifecycle.inputRestartFailed(at: now, ended: cleanly)
                return (true, false)
            }
            guard state.lifecycle.awaitsLostInput else { return (false, false) }
            state.lifecycle.inputLost(at: now)
            return (true, true)
        }.0
    }
}
