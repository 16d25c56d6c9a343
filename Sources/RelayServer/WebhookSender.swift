import CWebhookTransport
import JSONTree
import Logging
import NIOPosix
import ServeInputs
import StreamPlan
import Synchronization

/// Pushes events to the operator's own systems: each configured receiver gets the events of its
/// classes, one POST each, in order, as the JSON `subscribe` delivers, with
/// `X-FaceRelay-Event: CLASS` and `X-FaceRelay-Signature: sha256=HEX` (HMAC-SHA256 of the body
/// with the receiver's secret).
///
/// A receiver that is slow or down never slows a stream: its events wait in its own bounded
/// queue (an `EventHub` subscription, which drops and counts what does not fit, and tells the
/// receiver how many it missed); a delivery gets `attempts` tries of at most `timeout` each, with
/// a growing pause between, and is then dropped, counted and logged. Each receiver has a thread of
/// its own for the POST (libcurl's, which blocks), so one that never answers holds up only itself.
public final class WebhookSender: Sendable {
    static let attempts = 3
    static let timeout = Duration.seconds(5)
    static let pauses: [Duration] = [.milliseconds(500), .seconds(2)]

    /// One receiver's deliveries since start.
    public struct Figures: Sendable, Equatable {
        public var delivered = 0
        /// Events given up after every attempt failed.
        public var failed = 0
        public var lastError: String?
    }

    private let hooks: [ServeConfig.Webhook]
    private let events: EventHub
    private let logger: Logger
    private let figures: Mutex<[Figures]>

    public init(hooks: [ServeConfig.Webhook], events: EventHub, logger: Logger) {
        self.hooks = hooks
        self.events = events
        self.logger = logger
        figures = Mutex(Array(repeating: Figures(), count: hooks.count))
    }

    /// Each receiver with its masked address and deliveries.
    public var summary: [(address: String, figures: Figures)] {
        let figures = figures.withLock { $0 }
        return zip(hooks, figures).map { (maskedWebhookURL($0.url), $1) }
    }

    /// Delivers until cancelled (the service stopping). Subscribes to the hub at once, so that no
    /// event published after this call starts is missed.
    public func run() async {
        guard !hooks.isEmpty else { return }
        let subscriptions = hooks.map { events.subscribe(to: $0.events) }
        defer { for subscription in subscriptions { events.unsubscribe(subscription.id) } }
        let posters = NIOThreadPool(numberOfThreads: hooks.count)
        posters.start()
        // Raised when this task is cancelled: a POST under way ends within about a second.
        let stopping = WebhookPost.StopSignal()
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                for (index, subscription) in subscriptions.enumerated() {
                    group.addTask { [self] in
                        for await event in subscription.events {
                            if Task.isCancelled { break }
                            await deliver(event, to: index, on: posters, stopping: stopping)
                        }
                    }
                }
            }
        } onCancel: {
            stopping.raised.store(true, ordering: .relaxed)
        }
        try? await posters.shutdownGracefully()
    }

    private func deliver(_ event: JSONValue, to index: Int, on posters: NIOThreadPool, stopping: WebhookPost.StopSignal) async {
        let hook = hooks[index]
        let body = Array(ControlRequest.line(event).utf8.dropLast())  // without the newline that ends a control-socket line
        let kind: String
        if case .string(let name)? = event["event"] { kind = name } else { kind = "event" }
        let headers = [
            "Content-Type: application/json",
            "User-Agent: FaceRelay",
            "X-FaceRelay-Event: \(kind)",
            "X-FaceRelay-Signature: \(Self.signature(of: body, secret: hook.secret))",
        ]
        var lastError = ""
        for attempt in 0..<Self.attempts {
            if attempt > 0 {
                do {
                    try await Task.sleep(for: Self.pauses[min(attempt - 1, Self.pauses.count - 1)])
                } catch {
                    return
                }
            }
            do {
                let status = try await posters.runIfActive {
                    try WebhookPost.send(body, to: hook.url, headers: headers, timeout: Self.timeout, stopping: stopping)
                }
                if (200..<300).contains(status) {
                    figures.withLock { $0[index].delivered += 1 }
                    return
                }
                lastError = "HTTP \(status)"
            } catch {
                if Task.isCancelled { return }
                lastError = "\(error)"
            }
        }
        let failed = figures.withLock { figures in
            figures[index].failed += 1
            figures[index].lastError = lastError
            return figures[index].failed
        }
        // The first and then every hundredth: a receiver that is down must not flood the log.
        if failed == 1 || failed % 100 == 0 {
            logger.warning("webhook delivery failed after \(Self.attempts) attempts (\(failed) so far): \(lastError)",
                           metadata: ["webhook": "\(maskedWebhookURL(hook.url))", "event": "\(kind)"])
        }
    }

    /// `sha256=` and the HMAC-SHA256 of `body` with `secret`, in lowercase hex: what a receiver
    /// computes from the body it got and compares (in constant time) with the header.
    public static func signature(of body: [UInt8], secret: String) -> String {
        signature(of: body, key: Array(secret.utf8))
    }

    static func signature(of body: [UInt8], key: [UInt8]) -> String {
        var hex = [CChar](repeating: 0, count: 65)
        webhook_hmac_sha256_hex(key, key.count, body, body.count, &hex)
        return "sha256=" + String(decoding: hex.prefix(64).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
