import Synchronization

/// A one-way event that tasks await with a time limit: once `fire()` is called, every waiter, and
/// everyone who waits later, goes on at once. What the service waits for (a relay playing a key, a
/// stream finishing) is signalled when it happens rather than polled for.
final class AsyncSignal: Sendable {
    private struct State {
        var fired = false
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    init() {}

    var hasFired: Bool { state.withLock { $0.fired } }

    func fire() {
        let waiters = state.withLock { state in
            state.fired = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until the signal fires or `limit` passes; true when it fired.
    @discardableResult
    func wait(upTo limit: Duration) async -> Bool {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitUntilFiredOrCancelled() }
            group.addTask { try? await Task.sleep(for: limit) }
            await group.next()
            group.cancelAll()
        }
        return hasFired
    }

    /// Returns when the signal fires or the task is cancelled. A cancellation that comes before the
    /// waiter is registered is seen under the same lock, so no waiter is left behind.
    private func waitUntilFiredOrCancelled() async {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let goOn = state.withLock { state in
                    if state.fired || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if goOn { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
