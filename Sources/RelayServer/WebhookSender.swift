import AsyncHTTPClient
import Crypto
import JSONTree
import Logging
import NIOCore
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
/// a growing pause between, and is then dropped, counted and logged.
public final class WebhookSender: Sendable {
    static let attempts = 3
    static let timeout = TimeAmount.seconds(5)
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
        let subscriptions = hooks.map { events.subscribe(to: $0.events) }
        defer { for subscription in subscriptions { events.unsubscribe(subscription.id) } }
        await withDiscardingTaskGroup { group in
            for (index, subscription) in subscriptions.enumerated() {
                group.addTask { [self] in
                    for await event in subscription.events {
                        if Task.isCancelled { break }
                        await deliver(event, to: index)
                    }
                }
            }
        }
    }

    private func deliver(_ event: JSONValue, to index: Int) async {
        let hook = hooks[index]
        var body = Array(ControlRequest.line(event).utf8)
        body.removeLast()  // the newline that ends a control-socket line
        let kind: String
        if case .string(let name)? = event["event"] { kind = name } else { kind = "event" }
        var request = HTTPClientRequest(url: hook.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "FaceRelay")
        request.headers.add(name: "X-FaceRelay-Event", value: kind)
        request.headers.add(name: "X-FaceRelay-Signature", value: Self.signature(of: body, secret: hook.secret))
        request.body = .bytes(ByteBuffer(bytes: body))
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
                let response = try await HTTPClient.shared.execute(request, timeout: Self.timeout)
                _ = try? await response.body.collect(upTo: 64 * 1024)
                if (200..<300).contains(response.status.code) {
                    figures.withLock { $0[index].delivered += 1 }
                    return
                }
                lastError = "HTTP \(response.status.code)"
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
        let code = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Array(secret.utf8)))
        return "sha256=" + code.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
