internal import CGStreamer
import Glibc
import Synchronization

/// What a relay's threads wait on instead of sleeping in a loop: whoever changes something another
/// thread may be waiting for (a new input generation, an appsink that appeared, the output built,
/// a stop) calls `notify()` after the change. A waiter reads the count, checks its condition, and
/// sleeps until the count moves on or its deadline passes; a change made between its check and its
/// sleep has moved the count, so no wake-up is lost (an event count).
///
/// A `pollable` signal also makes `descriptor` readable on each notification, so that a thread
/// waiting in poll(2) on other descriptors (the supervisor, on the pipelines' buses) wakes for it.
/// A signal may also wake another (`alsoWakes`): the pumps wait on one that their appsinks notify
/// on every sample, which every change of the relay's also wakes, without waking the supervisor.
///
/// `@unchecked Sendable` because `count` is a plain `var`: it is read and written only between
/// `pthread_mutex_lock(mutex)` and `pthread_mutex_unlock(mutex)` (in `notify`, `current` and
/// `wait(past:until:)`). The mutex, the condition and the descriptor are made by `init` and
/// destroyed by `deinit` only; `follower` is a `let` of this same type, `observer` a `Mutex`.
final class ChangeSignal: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var count: UInt64 = 0
    /// Readable after a notification until `clearDescriptor()`; nil when not pollable.
    let descriptor: Int32?
    private let follower: ChangeSignal?
    private let observer = Mutex<(@Sendable () -> Void)?>(nil)

    init(pollable: Bool, alsoWakes follower: ChangeSignal? = nil) throws(MediaError) {
        self.follower = follower
        if pollable {
            let descriptor = fr_eventfd_new()
            guard descriptor >= 0 else {
                throw MediaError(.setup, "cannot create the relay's wake-up descriptor (eventfd: \(String(cString: strerror(errno)))); the process is out of file descriptors: raise its limit (ulimit -n)")
            }
            self.descriptor = descriptor
        } else {
            descriptor = nil
        }
        pthread_mutex_init(mutex, nil)
        // Deadlines are measured on the monotonic clock, which the wall clock's changes do not move.
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(changed, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        changed.deallocate()
        mutex.deallocate()
        if let descriptor { close(descriptor) }
    }

    /// Wakes every waiter: something they may wait for has changed.
    func notify() {
        pthread_mutex_lock(mutex)
        count &+= 1
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(mutex)
        if let descriptor { fr_eventfd_signal(descriptor) }
        follower?.notify()
        observer.withLock { $0 }?()
    }

    /// Has `body` called after every notification, on the thread that notified: it must only
    /// hand the news on (a server queues it), never block or call back into what notified.
    func observe(_ body: @escaping @Sendable () -> Void) { observer.withLock { $0 = body } }

    /// Has `sink` notify this signal whenever it queues a sample or reaches end-of-stream; the
    /// sink keeps this signal alive until it goes.
    func notify(onSamplesOf sink: UnsafeMutablePointer<GstElement>) {
        fr_appsink_wake_on_samples(sink, { context in
            Unmanaged<ChangeSignal>.fromOpaque(context!).takeUnretainedValue().notify()
        }, { context in
            Unmanaged<ChangeSignal>.fromOpaque(context!).release()
        }, Unmanaged.passRetained(self).toOpaque())
    }

    /// The number of notifications so far: read it before checking a condition, then wait past it.
    var current: UInt64 {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return count
    }

    /// Sleeps until a notification after `seen`, or until `deadline` (nil: no deadline).
    func wait(past seen: UInt64, until deadline: ContinuousClock.Instant?) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        guard let deadline else {
            while count == seen { pthread_cond_wait(changed, mutex) }
            return
        }
        while count == seen, ContinuousClock.now < deadline {
            var wakeAt = Self.monotonicTime(after: deadline - .now)
            _ = pthread_cond_timedwait(changed, mutex, &wakeAt)
        }
    }

    /// Waits until `condition` holds (true) or `deadline` passes (false). `condition` runs without
    /// this signal's lock, so it may take the locks of what it reads.
    func wait(until deadline: ContinuousClock.Instant?, for condition: () -> Bool) -> Bool {
        while true {
            let seen = current
            if condition() { return true }
            if let deadline, ContinuousClock.now >= deadline { return false }
            wait(past: seen, until: deadline)
        }
    }

    /// For a poll(2) waiter, before it checks what changed: notifications from then on make the
    /// descriptor readable again.
    func clearDescriptor() {
        if let descriptor { fr_eventfd_clear(descriptor) }
    }

    /// CLOCK_MONOTONIC's time `interval` from now, as `pthread_cond_timedwait` takes it.
    private static func monotonicTime(after interval: Duration) -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let (seconds, attoseconds) = max(interval, .zero).components
        var nanoseconds = Int(now.tv_nsec) + Int(attoseconds / 1_000_000_000)
        var wholeSeconds = Int(now.tv_sec) + Int(seconds)
        if nanoseconds >= 1_000_000_000 {
            nanoseconds -= 1_000_000_000
            wholeSeconds += 1
        }
        return timespec(tv_sec: wholeSeconds, tv_nsec: nanoseconds)
    }
}
