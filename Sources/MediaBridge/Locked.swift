import Glibc

/// State shared between GStreamer's streaming threads and ours. Unlike the standard library's
/// Mutex it may hold C pointers (GStreamer objects are thread-safe by reference counting), which
/// the compiler cannot prove Sendable.
public final class Locked<State>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var state: State

    public init(_ state: State) {
        self.state = state
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
