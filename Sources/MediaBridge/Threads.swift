import Glibc

/// A dedicated thread for a loop that blocks in GStreamer calls (and so must not sit on a
/// Swift-concurrency or Dispatch worker). Joined with `join()`.
public final class LoopThread: @unchecked Sendable {
    private var thread = pthread_t()
    private let body: () -> Void

    /// A `detached` thread frees itself when `body` returns and cannot be joined.
    public init(detached: Bool = false, _ body: @escaping @Sendable () -> Void) {
        self.body = body
        let context = Unmanaged.passRetained(self).toOpaque()
        pthread_create(&thread, nil, { context in
            let loop = Unmanaged<LoopThread>.fromOpaque(context!).takeRetainedValue()
            loop.body()
            return nil
        }, context)
        if detached { pthread_detach(thread) }
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
