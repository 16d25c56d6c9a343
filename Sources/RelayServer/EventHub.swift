import JSONTree
import Synchronization

/// Hands every event to the subscribers that asked for its class (seed article 001's reactive
/// publisher). A slow or stuck subscriber never slows a stream: its queue is bounded, events that
/// do not fit are dropped and counted, and the subscriber is told how many it missed before its
/// next event.
public final class EventHub: Sendable {
    public struct Subscription: Sendable {
        public let id: Int
        public let events: AsyncStream<JSONValue>
    }

    private struct Subscriber {
        let classes: Set<EventClass>
        let continuation: AsyncStream<JSONValue>.Continuation
        var missed = 0
    }

    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var nextID = 1
        var published = 0
        var publishedByClass: [EventClass: Int] = [:]
        var droppedTotal = 0
    }

    private let state = Mutex(State())
    public let queueCapacity: Int

    public init(queueCapacity: Int = 256) {
        self.queueCapacity = queueCapacity
    }

    public func subscribe(to classes: Set<EventClass>) -> Subscription {
        let (stream, continuation) = AsyncStream.makeStream(of: JSONValue.self, bufferingPolicy: .bufferingOldest(queueCapacity))
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            state.subscribers[state.nextID] = Subscriber(classes: classes, continuation: continuation)
            return state.nextID
        }
        return Subscription(id: id, events: stream)
    }

    /// Ends a subscription. A subscriber whose stream has ended without it is dropped at the next
    /// event it would get (`publish`), so the hub keeps no reference back to itself in the stream.
    public func unsubscribe(_ id: Int) {
        let subscriber = state.withLock { $0.subscribers.removeValue(forKey: id) }
        subscriber?.continuation.finish()
    }

    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }
    /// Events published since start, and events dropped for subscribers that could not keep up.
    public var totals: (published: Int, dropped: Int) { state.withLock { ($0.published, $0.droppedTotal) } }
    /// Events published since start, by class.
    public var publishedByClass: [EventClass: Int] { state.withLock { $0.publishedByClass } }

    /// Queues `event` (a JSON object with an "event" field) for every subscriber of `kind`. Never
    /// blocks beyond a short lock; callable from any thread, frame threads included.
    public func publish(_ kind: EventClass, _ event: JSONValue) {
        state.withLock { state in
            state.published += 1
            state.publishedByClass[kind, default: 0] += 1
            for (id, subscriber) in state.subscribers where subscriber.classes.contains(kind) {
                var subscriber = subscriber
                if subscriber.missed > 0 {
                    let notice: JSONValue = ["event": "missed", "count": .number(Double(subscriber.missed))]
                    if case .enqueued = subscriber.continuation.yield(notice) { subscriber.missed = 0 }
                }
                if subscriber.missed > 0 {
                    subscriber.missed += 1
                    state.droppedTotal += 1
                } else {
                    switch subscriber.continuation.yield(event) {
                    case .enqueued: break
                    case .dropped:
                        subscriber.missed += 1
                        state.droppedTotal += 1
                    case .terminated:
                        state.subscribers[id] = nil
                        continue
                    @unknown default: break
                    }
                }
                state.subscribers[id] = subscriber
            }
        }
    }

    /// Ends every subscription (at shutdown).
    public func finishAll() {
        let all = state.withLock { state in
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for subscriber in all { subscriber.continuation.finish() }
    }
}
