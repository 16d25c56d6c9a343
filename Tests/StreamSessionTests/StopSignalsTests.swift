import StreamSession
import Testing

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

    private final class Session: Sendable {
        func requestStop() {}
    }
}
