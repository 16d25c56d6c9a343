import Dispatch
import Glibc
import Synchronization

/// SIGINT and SIGTERM end the stream cleanly (the output is finalised); a second one exits at once.
///
/// `cancel` lets go of `onStop`, and of what it holds, before it returns. Dispatch releases a
/// cancelled source's handler later, on the source's queue: a session held there would be torn down
/// on that queue while the process exits, its face detection still scanning. It also gives each
/// signal back the disposition it had, so that a signal after the stream ends is not ignored.
public final class StopSignals {
    private static let numbers = [SIGINT, SIGTERM]
    private let sources: [DispatchSourceSignal]
    private let state: StopRequests
    private let previousActions: [sigaction]

    public init(onStop: @escaping @Sendable () -> Void) {
        let queue = DispatchQueue(label: "facerelay.signals")
        let state = StopRequests(onStop: onStop)
        self.state = state
        // Dispatch sees a signal only if its default action (ending the process) is turned off.
        previousActions = Self.numbers.map { number in
            var previous = sigaction()
            sigaction(number, nil, &previous)
            signal(number, SIG_IGN)
            return previous
        }
        sources = Self.numbers.map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { state.receive() }
            source.resume()
            return source
        }
    }

    /// Stops listening; `onStop` is released when this returns.
    public func cancel() {
        sources.forEach { $0.cancel() }
        state.onStop.withLock { $0 = nil }
        for (number, var action) in zip(Self.numbers, previousActions) {
            sigaction(number, &action, nil)
        }
    }
}

/// What a signal does, and how many have come, whichever they were.
private final class StopRequests: Sendable {
    let onStop: Mutex<(@Sendable () -> Void)?>
    let received = Atomic<Int>(0)

    init(onStop: @escaping @Sendable () -> Void) { self.onStop = Mutex(onStop) }

    func receive() {
        // `_exit`, not `exit`: the relay's threads are still running, and exit's static destructors
        // (libsrt's among them) would free what they use.
        if received.add(1, ordering: .relaxed).newValue > 1 {
            fflush(nil)
            _exit(130)
        }
        // Called under the lock, so that once `cancel` has it, nothing here holds `onStop` any more.
        onStop.withLock { $0?() }
    }
}
