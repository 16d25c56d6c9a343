import Dispatch
import MediaBridge
import Synchronization
import Testing

@Suite struct LoopThreadTests {
    /// `serve` waits on `whenFreed` before the process exits: had it run while the body still held
    /// its captures (a stream's session, its GStreamer pipeline), the session would be freed after
    /// the wait, as exit tears down the libraries it calls.
    @Test(arguments: [true, false])
    func whenFreedRunsOnceTheBodysCapturesAreGone(detached: Bool) {
        let captureWasAlive = Mutex<Bool?>(nil)
        let freed = DispatchSemaphore(value: 0)
        // The body waits until this scope has let go of `captured`: the only reference left is then
        // the body's own, whichever thread runs first.
        let scopeLeft = DispatchSemaphore(value: 0)
        let thread: LoopThread
        do {
            let captured = Held()
            let watch = Watch(captured)
            thread = LoopThread(detached: detached) {
                scopeLeft.wait()
                captured.touch()
            } whenFreed: {
                captureWasAlive.withLock { $0 = watch.isAlive }
                freed.signal()
            }
        }
        scopeLeft.signal()
        #expect(freed.wait(timeout: .now() + 10) == .success, "whenFreed never ran")
        #expect(captureWasAlive.withLock { $0 } == false, "the body's capture was still alive when whenFreed ran")
        if !detached { thread.join() }
    }

    private final class Held: Sendable {
        func touch() {}
    }

    /// A weak reference that can be read from another thread.
    private final class Watch: Sendable {
        private let held: Mutex<WeakBox>
        init(_ object: Held) { held = Mutex(WeakBox(object: object)) }
        var isAlive: Bool { held.withLock { $0.object != nil } }
    }

    private struct WeakBox {
        weak var object: Held?
    }
}
