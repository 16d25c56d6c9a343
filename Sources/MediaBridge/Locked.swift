import Foundation

/// State shared between GStreamer's streaming threads and ours. Unlike the standard library's
/// Mutex it may hold C pointers (GStreamer objects are thread-safe by reference counting), which
/// the compiler cannot prove Sendable.
final class Locked<State>: @unchecked Sendable {
    private let lock = NSLock()
    private var state: State

    init(_ state: State) { self.state = state }

    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
