import Glibc
import StreamSession
import Testing

/// Serialized: both tests change the process's signal dispositions.
@Suite(.serialized) struct StopSignalsTests {
    /// `run` holds its session only through the stop handler at the end: if that handler outlived
    /// `cancel`, the session (and its face detection thread) would be torn down on Dispatch's queue
    /// while the process exits, and a detection still scanning crashed the process.
    @Test func cancelLetsGoOfWhatTheHandlerHolds() {
        weak var held: Session?
        let signals: StopSignals
        do {
            let session = Session()
            held = session
            signals = StopSignals { session.requestStop() }
        }
        #expect(held != nil, "the handler holds the session until cancelled")
        signals.cancel()
        #expect(held == nil, "the session outlived cancel(): Dispatch still holds the handler")
    }

    /// After `run`'s stream ends, the process may still flush and close for a while: a SIGTERM then
    /// must end it as it would any program, not be ignored because the stream once listened for it.
    @Test(arguments: [SIGINT, SIGTERM])
    func cancelGivesTheSignalItsDispositionBack(number: Int32) {
        let before = handler(of: number)
        let signals = StopSignals {}
        #expect(handler(of: number) == unsafeBitCast(SIG_IGN, to: Int.self), "Dispatch needs the default action off")
        signals.cancel()
        #expect(handler(of: number) == before, "the signal is still ignored after cancel()")
    }

    /// The signal's handler as a number: 0 for SIG_DFL, 1 for SIG_IGN, else a function's address.
    private func handler(of number: Int32) -> Int {
        var action = sigaction()
        sigaction(number, nil, &action)
        return unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self)
    }

    private final class Session: Sendable {
        func requestStop() {}
    }
}
