import Glibc

/// A dedicated thread for a loop that blocks in GStreamer calls (and so must not sit on a
/// Swift-concurrency or Dispatch worker). Joined with `join()`.
public final class LoopThread: Sendable {
    private let thread: pthread_t

    /// What the new thread runs, passed to it as its start argument.
    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// A `detached` thread frees itself when `body` returns and cannot be joined.
    public init(detached: Bool = false, _ body: @escaping @Sendable () -> Void) {
        var thread = pthread_t()
        pthread_create(&thread, nil, { context in
            Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, Unmanaged.passRetained(Body(body)).toOpaque())
        if detached { pthread_detach(thread) }
        self.thread = thread
    }

    public func join() { pthread_join(thread, nil) }
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
