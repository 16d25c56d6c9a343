import Glibc

/// A dedicated thread for a loop that blocks in GStreamer calls (and so must not sit on a
/// Swift-concurrency or Dispatch worker). Joined with `join()`.
public final class LoopThread: Sendable {
    private let thread: pthread_t

    /// What the new thread runs, passed to it as its start argument.
    fileprivate final class Body: Sendable {
        let run: @Sendable () -> Void
        let whenFreed: (@Sendable () -> Void)?
        init(_ run: @escaping @Sendable () -> Void, whenFreed: (@Sendable () -> Void)?) {
            self.run = run
            self.whenFreed = whenFreed
        }
    }

    /// A `detached` thread frees itself when `body` returns and cannot be joined. `what` names the
    /// thread in the error thrown when the system refuses to start it.
    public init(starting what: String, detached: Bool = false, _ body: @escaping @Sendable () -> Void) throws(MediaError) {
        switch Self.start(body, detached: detached, whenFreed: nil) {
        case .success(let thread):
            self.thread = thread
        case .failure(let error):
            throw MediaError(.setup, "cannot start \(what): the system refused a new thread (\(String(cString: strerror(error.code)))); the machine is out of threads or memory: stop other streams or raise the limit on processes (ulimit -u)")
        }
    }

    /// For a caller that cannot go on without the thread: a refusal stops the process, saying why.
    /// `whenFreed` runs on the thread once `body` has returned and what it captured is released: a
    /// detached thread's owner can wait for that, as it could join a joinable one.
    public init(detached: Bool = false, _ body: @escaping @Sendable () -> Void, whenFreed: (@Sendable () -> Void)? = nil) {
        switch Self.start(body, detached: detached, whenFreed: whenFreed) {
        case .success(let thread):
            self.thread = thread
        case .failure(let error):
            fatalError("cannot start a thread: the system refused (\(String(cString: strerror(error.code)))); the machine is out of threads or memory")
        }
    }

    /// The new thread, or pthread_create's error number.
    private static func start(_ body: @escaping @Sendable () -> Void, detached: Bool,
                              whenFreed: (@Sendable () -> Void)?) -> Result<pthread_t, ThreadStartError> {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Body(body, whenFreed: whenFreed)).toOpaque()
        let result = pthread_create(&thread, nil, { context in
            if let whenFreed = runAndFree(context!) { whenFreed() }
            return nil
        }, context)
        guard result == 0 else {
            // No thread took the body: its reference is still ours to release.
            Unmanaged<Body>.fromOpaque(context).release()
            return .failure(ThreadStartError(code: result))
        }
        if detached { pthread_detach(thread) }
        return .success(thread)
    }

    public func join() { pthread_join(thread, nil) }
}

/// Runs a thread's body, then frees it with its captures, all before returning: the body is this
/// function's only reference, so it cannot outlive the call.
@inline(never)
private func runAndFree(_ context: UnsafeMutableRawPointer) -> (@Sendable () -> Void)? {
    let body = Unmanaged<LoopThread.Body>.fromOpaque(context).takeRetainedValue()
    body.run()
    return body.whenFreed
}

/// pthread_create's error number.
struct ThreadStartError: Error {
    let code: Int32
}

func sleep(seconds: Double) {
    usleep(useconds_t(seconds * 1_000_000))
}

extension Duration {
    /// The duration in seconds, as a figure to print or compute with.
    public var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// "%.Nf" without Foundation's String(format:).
public func formatted(_ value: Double, decimals: Int) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (abs(value) * scale).rounded()
    let whole = Int(rounded / scale)
    let fraction = Int(rounded - Double(whole) * scale)
    var digits = String(fraction)
    while digits.count < decimals { digits = "0" + digits }
    return (value < 0 && rounded > 0 ? "-" : "") + String(whole) + (decimals > 0 ? "." + digits : "")
}
