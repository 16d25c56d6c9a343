import FaceTracking
import FoundationEssentials
import StreamPlan

/// The configuration of `facerelay serve`, read from a YAML file (see `deploy/facerelay.yml`, which
/// documents every key). Every key is checked: an unknown or mistyped one is refused with the
/// file, the line and the key, since a typo silently ignored would run a relay the operator did not
/// configure.
public struct ServeConfig: Sendable {
    /// The Unix socket of the control protocol.
    public var controlSocket = "/run/facerelay/control.sock"
    /// The HTTP listener: nginx-rtmp's notifications (and, later, metrics). Loopback by default.
    public var http = HostPort(host: "127.0.0.1", port: 8190)
    /// What the dashboard, `/metrics` and the WebSocket require when `http` is not on loopback:
    /// an `Authorization: Bearer` header, the login page's cookie, or a `token` query parameter.
    public var httpToken: String?
    public var stickers: String?
    public var pipelines: String?
    public var landmarkModel: String?
    public var defaults = StreamDefaults()
    /// Where FaceRelay pulls a stream published to nginx-rtmp from: rtmp://HOST:PORT.
    public var rtmpIngest = "rtmp://127.0.0.1:1935"
    /// nginx-rtmp applications whose publishes start a stream, by name.
    public var applications: [String: Application] = [:]
    /// SRT listeners that start a stream when a broadcaster connects.
    public var srtListeners: [SRTListener] = []
    /// Receivers of the events `subscribe` delivers, POSTed to them signed.
    public var webhooks: [Webhook] = []

    public init() {}

    /// An HTTP(S) receiver of events: each event of `events` is POSTed to `url` as its JSON, signed
    /// with `secret` (HMAC-SHA256 of the body, in `X-FaceRelay-Signature: sha256=HEX`).
    public struct Webhook: Sendable, Equatable {
        public var url: String
        public var events: Set<EventClass>
        public var secret: String
    }

    /// Whether the HTTP listener is reachable from this machine only.
    public var httpIsLoopback: Bool {
        http.host == "localhost" || http.host == "::1" || http.host.hasPrefix("127.")
    }

    /// Refuses an HTTP listener open to the network without a token: the dashboard switches
    /// stickers and shows every stream's picture. `source` is where the settings came from (the
    /// file, or "the command line"), for the error.
    public func checkHTTPAccess(source: String) throws(ConfigError) {
        if !httpIsLoopback, (httpToken ?? "").isEmpty {
            throw ConfigError(file: source, line: nil, key: "http", message: "\(http) is not a loopback address, and the dashboard, /metrics and stream control it serves need a token there: set http_token (or http_token_file) in the config, or bind to 127.0.0.1")
        }
    }

    public struct HostPort: Sendable, Equatable, CustomStringConvertible {
        public var host: String
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        /// "ADDRESS:PORT" (a bare ":PORT" means 127.0.0.1).
        public init?(parsing text: String) {
            guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else { return nil }
            let host = String(text[..<colon])
            self.init(host: host.isEmpty ? "127.0.0.1" : host, port: port)
        }

        public var description: String { "\(host):\(port)" }
        public var isLoopback: Bool { host == "127.0.0.1" || host == "localhost" || host == "::1" }
    }

    /// What every stream starts with unless its route says otherwise.
    public struct StreamDefaults: Sendable {
        public var sticker = "none"
        public var relay = RelaySettings()
        public var tracking = FaceTracker.Settings()
        public var statsIntervalSeconds = 10.0

        public init() {
            // A broadcaster may go live minutes after the notification: serve waits for the first
            // frame as long as the publish lasts, and relays forever while the upstream comes back.
            relay.inputTimeoutSeconds = 30
            relay.reconnectGiveUpSeconds = nil
            // A host running many streams gets its parallelism from the streams: one decoder and
            // one x264 thread each keep 720p30 in real time, and every further thread holds more
            // (2.0 MB a stream for x264's second thread, serve-capacity.sh), on top of the
            // threads a large host would otherwise give every stream.
            relay.decodeThreads = 1
            relay.encodeThreads = 1
        }
    }

    /// An nginx-rtmp application: the upstreams of every key (`{key}` in them is the ingest key), a
    /// table of keys with their own upstreams, or both (the table wins).
    public struct Application: Sendable {
        /// Empty when only the keys table routes.
        public var upstreams: [String] = []
        public var sticker: String?
        /// A recording of every key's stream (`{key}` in it is the ingest key).
        public var record: String?
        public var keys: [String: Route] = [:]
    }

    /// Where one broadcast goes: one encode, sent to every upstream and, if set, recorded.
    public struct Route: Sendable {
        public var upstreams: [String]
        public var sticker: String?
        /// A file pattern with strftime fields, rotated in segments (see `OutputEndpoint.Recording`).
        public var record: String? = nil

        /// Every output of the stream.
        public var outputs: [String] { upstreams + (record.map { [$0] } ?? []) }
    }

    public struct SRTListener: Sendable {
        public var listen: String
        public var upstreams: [String]
        public var sticker: String?
        public var stream: String
    }

    /// Every sticker the configuration names, with its key, to be checked before serving.
    public var stickerChoices: [(key: String, name: String)] {
        var choices = [(key: "defaults.sticker", name: defaults.sticker)]
        for (application, routes) in applications.sorted(by: { $0.key < $1.key }) {
            if let sticker = routes.sticker { choices.append(("rtmp.applications.\(application).sticker", sticker)) }
            for (key, route) in routes.keys.sorted(by: { $0.key < $1.key }) {
                if let sticker = route.sticker { choices.append(("rtmp.applications.\(application).keys.\(key).sticker", sticker)) }
            }
        }
        for (index, listener) in srtListeners.enumerated() {
            if let sticker = listener.sticker { choices.append(("srt[\(index)].sticker", sticker)) }
        }
        return choices
    }

    /// The upstream and sticker for a publish to `application`/`key`, or nil when it has no route.
    public func route(application: String, key: String) -> Route? {
        guard let app = applications[application] else { return nil }
        if let route = app.keys[key] {
            return Route(upstreams: route.upstreams, sticker: route.sticker ?? app.sticker, record: (route.record ?? app.record)?.replacing("{key}", with: key))
        }
        guard !app.upstreams.isEmpty else { return nil }
        return Route(upstreams: app.upstreams.map { $0.replacing("{key}", with: key) }, sticker: app.sticker,
                     record: app.record?.replacing("{key}", with: key))
    }
}
