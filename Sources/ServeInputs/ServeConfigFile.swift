import FaceTracking
import FoundationEssentials
import StreamPlan
import Yams

/// Reading a configuration file: every key checked against the keys allowed where it stands and
/// every value against its type and range, each refusal naming the file, the line and the key.
extension ServeConfig {
    /// Reads and checks a configuration file.
    public static func load(file: String) throws(ConfigError) -> ServeConfig {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ConfigError(file: file, line: nil, key: "", message: FileManager.default.fileExists(atPath: file)
                ? "cannot be read; check its permissions" : "no such file; give the path of a YAML file (see deploy/facerelay.yml)")
        }
        guard let text = String(data: data, encoding: .utf8) else { throw ConfigError(file: file, line: nil, key: "", message: "is not UTF-8 text") }
        return try parse(text, file: file)
    }

    /// Parses configuration text; `file` names it in errors.
    public static func parse(_ text: String, file: String) throws(ConfigError) -> ServeConfig {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch {
            throw ConfigError(file: file, line: nil, key: "", message: "is not valid YAML: \("\(error)".split(whereSeparator: \.isNewline).joined(separator: " "))")
        }
        var config = ServeConfig()
        guard let root else { return config }
        let reader = ConfigReader(file: file)
        let top = try reader.mapping(root, "", keys: ["control_socket", "http", "http_token", "http_token_file", "stickers", "pipelines", "landmark_model", "defaults", "rtmp", "srt", "webhooks"])
        if let node = top["control_socket"] { config.controlSocket = try reader.string(node, "control_socket") }
        if let node = top["http"] {
            let text = try reader.string(node, "http")
            guard let address = HostPort(parsing: text) else {
                throw reader.error(node, "http", "'\(text)' is not ADDRESS:PORT; for example 127.0.0.1:8190")
            }
            config.http = address
        }
        if let node = top["http_token"] { config.httpToken = try reader.string(node, "http_token") }
        if let node = top["http_token_file"] {
            let path = try reader.string(node, "http_token_file")
            let problem = "cannot read a token from '\(path)'"
            let text: String
            do {
                text = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw reader.error(node, "http_token_file", "\(problem) (\(error)); the file must exist, be readable and hold the token")
            }
            let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !token.isEmpty else {
                throw reader.error(node, "http_token_file", "\(problem): it is empty; the file must hold the token")
            }
            config.httpToken = token
        }
        if let node = top["stickers"] { config.stickers = try reader.string(node, "stickers") }
        if let node = top["pipelines"] { config.pipelines = try reader.string(node, "pipelines") }
        if let node = top["landmark_model"] { config.landmarkModel = try reader.string(node, "landmark_model") }
        if let node = top["defaults"] { config.defaults = try reader.defaults(node) }
        if let node = top["rtmp"] {
            let rtmp = try reader.mapping(node, "rtmp", keys: ["ingest", "applications"])
            if let ingest = rtmp["ingest"] {
                let url = try reader.string(ingest, "rtmp.ingest")
                guard url.hasPrefix("rtmp://"), !url.dropFirst(7).isEmpty else {
                    throw reader.error(ingest, "rtmp.ingest", "'\(url)' is not an RTMP server address; use rtmp://HOST:PORT, where nginx-rtmp serves plays")
                }
                config.rtmpIngest = url.hasSuffix("/") ? String(url.dropLast()) : url
            }
            if let node = rtmp["applications"] {
                for (name, value) in try reader.anyMapping(node, "rtmp.applications") {
                    config.applications[name] = try reader.application(value, "rtmp.applications.\(name)")
                }
            }
        }
        if let node = top["srt"] {
            guard let sequence = node.sequence else { throw reader.error(node, "srt", "must be a list of listeners (- listen: srt://:PORT ...)") }
            for (index, item) in sequence.enumerated() {
                config.srtListeners.append(try reader.srtListener(item, "srt[\(index)]"))
            }
        }
        if let node = top["webhooks"] {
            guard let sequence = node.sequence else { throw reader.error(node, "webhooks", "must be a list of receivers (- url: https://... events: [...] secret: ...)") }
            for (index, item) in sequence.enumerated() {
                config.webhooks.append(try reader.webhook(item, "webhooks[\(index)]"))
            }
        }
        return config
    }
}

/// Walks the YAML tree, checking each key against the ones allowed and each value's type.
private struct ConfigReader {
    let file: String

    func error(_ node: Node, _ key: String, _ message: String) -> ConfigError {
        ConfigError(file: file, line: node.mark?.line, key: key, message: message)
    }

    func anyMapping(_ node: Node, _ key: String) throws(ConfigError) -> [(String, Node)] {
        guard let mapping = node.mapping else { throw error(node, key, "must be a mapping of names to settings") }
        var pairs: [(String, Node)] = []
        for (name, value) in mapping {
            guard let text = name.string else { throw error(name, key, "keys must be text") }
            pairs.append((text, value))
        }
        return pairs
    }

    func mapping(_ node: Node, _ key: String, keys allowed: [String]) throws(ConfigError) -> [String: Node] {
        guard let mapping = node.mapping else {
            throw error(node, key, "must be a mapping with keys \(allowed.joined(separator: ", "))")
        }
        var result: [String: Node] = [:]
        for (name, value) in mapping {
            let text = name.string ?? ""
            let path = key.isEmpty ? text : "\(key).\(text)"
            guard allowed.contains(text) else {
                throw error(name, path, "unknown key; known keys here: \(allowed.joined(separator: ", "))")
            }
            result[text] = value
        }
        return result
    }

    func string(_ node: Node, _ key: String) throws(ConfigError) -> String {
        guard let scalar = node.scalar, !scalar.string.isEmpty else { throw error(node, key, "must be a non-empty text value") }
        return scalar.string
    }

    func number(_ node: Node, _ key: String, in range: ClosedRange<Double>) throws(ConfigError) -> Double {
        guard let value = node.float ?? node.int.map(Double.init), range.contains(value) else {
            throw error(node, key, "must be a number in \(Int(range.lowerBound.rounded()))...\(Int(range.upperBound.rounded()))")
        }
        return value
    }

    func integer(_ node: Node, _ key: String, in range: ClosedRange<Int>) throws(ConfigError) -> Int {
        guard let value = node.int, range.contains(value) else { throw error(node, key, "must be a whole number in \(range.lowerBound)...\(range.upperBound)") }
        return value
    }

    func defaults(_ node: Node) throws(ConfigError) -> ServeConfig.StreamDefaults {
        var defaults = ServeConfig.StreamDefaults()
        let keys = try mapping(node, "defaults", keys: ["sticker", "encoder", "threads", "tracking", "input_timeout_s", "idle_timeout_s", "input_grace_s", "reconnect_max_delay_s", "stats_interval_s"])
        if let value = keys["sticker"] { defaults.sticker = try string(value, "defaults.sticker") }
        if let value = keys["input_timeout_s"] { defaults.relay.inputTimeoutSeconds = try integer(value, "defaults.input_timeout_s", in: 0...86_400) }
        if let value = keys["idle_timeout_s"] { defaults.relay.idleTimeoutSeconds = try integer(value, "defaults.idle_timeout_s", in: 0...86_400) }
        if let value = keys["input_grace_s"] { defaults.relay.inputGraceSeconds = try number(value, "defaults.input_grace_s", in: 0...3600) }
        if let value = keys["reconnect_max_delay_s"] { defaults.relay.reconnectMaximumDelaySeconds = try number(value, "defaults.reconnect_max_delay_s", in: 1...600) }
        if let value = keys["stats_interval_s"] { defaults.statsIntervalSeconds = try number(value, "defaults.stats_interval_s", in: 1...3600) }
        if let encoder = keys["encoder"] {
            let settings = try mapping(encoder, "defaults.encoder", keys: ["x264_preset", "bitrate_kbps", "keyframe_interval_s", "audio_bitrate_kbps"])
            if let value = settings["x264_preset"] {
                let preset = try string(value, "defaults.encoder.x264_preset")
                guard RelaySettings.x264Presets.contains(preset) else {
                    throw error(value, "defaults.encoder.x264_preset", "unknown preset '\(preset)'; use one of \(RelaySettings.x264Presets.joined(separator: ", "))")
                }
                defaults.relay.x264Preset = preset
            }
            if let value = settings["bitrate_kbps"] { defaults.relay.bitrateKbps = try integer(value, "defaults.encoder.bitrate_kbps", in: 50...100_000) }
            if let value = settings["keyframe_interval_s"] { defaults.relay.keyframeIntervalSeconds = try number(value, "defaults.encoder.keyframe_interval_s", in: 0.1...60) }
            if let value = settings["audio_bitrate_kbps"] { defaults.relay.audioBitrateKbps = try integer(value, "defaults.encoder.audio_bitrate_kbps", in: 8...512) }
        }
        if let threads = keys["threads"] {
            let settings = try mapping(threads, "defaults.threads", keys: ["decode", "encode"])
            if let value = settings["decode"] { defaults.relay.decodeThreads = try integer(value, "defaults.threads.decode", in: 0...64) }
            if let value = settings["encode"] { defaults.relay.encodeThreads = try integer(value, "defaults.threads.encode", in: 0...64) }
        }
        if let tracking = keys["tracking"] {
            let settings = try mapping(tracking, "defaults.tracking", keys: ["max_faces", "detection_interval", "min_face_size", "smoothing", "expression_thresholds"])
            if let value = settings["max_faces"] { defaults.tracking.maximumFaces = try integer(value, "defaults.tracking.max_faces", in: 1...16) }
            if let value = settings["detection_interval"] { defaults.tracking.detectionInterval = try integer(value, "defaults.tracking.detection_interval", in: 1...600) }
            if let value = settings["min_face_size"] { defaults.tracking.minimumFaceSize = try integer(value, "defaults.tracking.min_face_size", in: 80...4000) }
            if let value = settings["smoothing"] {
                let name = try string(value, "defaults.tracking.smoothing")
                guard let smoothing = Smoothing(rawValue: name) else {
                    throw error(value, "defaults.tracking.smoothing", "unknown smoothing '\(name)'; use one of \(Smoothing.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                defaults.tracking.smoothing = smoothing
            }
            if let value = settings["expression_thresholds"] {
                for (name, threshold) in try anyMapping(value, "defaults.tracking.expression_thresholds") {
                    let key = "defaults.tracking.expression_thresholds.\(name)"
                    let number = try number(threshold, key, in: 0...1)
                    guard defaults.tracking.expressions.setThreshold(Float(number), for: name) else {
                        let known = defaults.tracking.expressions.rules.map(\.analyser.name)
                        throw error(threshold, key, "unknown expression; known: \(known.joined(separator: ", "))")
                    }
                }
            }
        }
        return defaults
    }

    func upstream(_ node: Node, _ key: String) throws(ConfigError) -> String {
        let text = try string(node, key)
        do {
            _ = try OutputEndpoint(parsing: text.replacing("{key}", with: "key"))
        } catch {
            throw self.error(node, key, "\(error)")
        }
        guard text.hasPrefix("rtmp://") || text.hasPrefix("rtmps://") || text.hasPrefix("srt://") else {
            throw error(node, key, "an upstream is a network address (rtmp://... or srt://...), not a file")
        }
        return text
    }

    /// `upstream: URL` or `upstreams: [URL, ...]` (not both) of the mapping at `key`; nil when neither.
    func upstreams(_ keys: [String: Node], of node: Node, _ key: String) throws(ConfigError) -> [String]? {
        switch (keys["upstream"], keys["upstreams"]) {
        case (nil, nil):
            return nil
        case (let one?, nil):
            return [try upstream(one, "\(key).upstream")]
        case (nil, let list?):
            guard let items = list.sequence, !items.isEmpty else {
                throw error(list, "\(key).upstreams", "must be a list of one or more addresses ([rtmp://..., srt://...])")
            }
            var upstreams: [String] = []
            for (index, item) in items.enumerated() {
                let address = try upstream(item, "\(key).upstreams[\(index)]")
                guard !upstreams.contains(address) else {
                    throw error(item, "\(key).upstreams[\(index)]", "'\(maskedAddress(address))' is listed twice: each upstream gets the stream once")
                }
                upstreams.append(address)
            }
            return upstreams
        case (_?, _?):
            throw error(node, key, "give upstream (one address) or upstreams (a list), not both")
        }
    }

    /// A `record` value: a file pattern with strftime fields, `?segment_s=N&max_disk_mb=N` optional.
    func record(_ node: Node, _ key: String) throws(ConfigError) -> String {
        let text = try string(node, key)
        do {
            guard case .recording = try OutputEndpoint(parsing: text.replacing("{key}", with: "key")) else {
                throw error(node, key, "a recording's file name needs strftime fields (e.g. /var/lib/facerelay/{key}/%Y-%m-%d_%H-%M-%S.mkv), or every publish would overwrite it")
            }
        } catch let error as ConfigError {
            throw error
        } catch {
            throw self.error(node, key, "\(error)")
        }
        return text
    }

    func application(_ node: Node, _ key: String) throws(ConfigError) -> ServeConfig.Application {
        let keys = try mapping(node, key, keys: ["upstream", "upstreams", "sticker", "record", "keys"])
        var application = ServeConfig.Application()
        application.upstreams = try upstreams(keys, of: node, key) ?? []
        if let value = keys["record"] { application.record = try record(value, "\(key).record") }
        if let value = keys["sticker"] { application.sticker = try string(value, "\(key).sticker") }
        if let table = keys["keys"] {
            for (name, value) in try anyMapping(table, "\(key).keys") {
                let path = "\(key).keys.\(name)"
                let route = try mapping(value, path, keys: ["upstream", "upstreams", "sticker", "record"])
                guard let upstreams = try upstreams(route, of: value, path) else {
                    throw error(value, path, "needs an upstream (rtmp://... or srt://...) or upstreams (a list)")
                }
                application.keys[name] = ServeConfig.Route(upstreams: upstreams,
                                                           sticker: try route["sticker"].map { node throws(ConfigError) in try string(node, "\(path).sticker") },
                                                           record: try route["record"].map { node throws(ConfigError) in try record(node, "\(path).record") })
            }
        }
        if application.upstreams.isEmpty, application.keys.isEmpty {
            throw error(node, key, "has no route: give an upstream (rtmp://platform/app/{key}), upstreams (a list) or a keys table")
        }
        return application
    }

    func webhook(_ node: Node, _ key: String) throws(ConfigError) -> ServeConfig.Webhook {
        let keys = try mapping(node, key, keys: ["url", "events", "secret"])
        guard let urlNode = keys["url"], let secretNode = keys["secret"] else {
            throw error(node, key, "needs url (http://... or https://...) and secret (what signs each delivery)")
        }
        let url = try string(urlNode, "\(key).url")
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host, !host.isEmpty else {
            throw error(urlNode, "\(key).url", "'\(maskedWebhookURL(url))' is not an http:// or https:// address of a receiver")
        }
        let secret = try string(secretNode, "\(key).secret")
        guard !secret.isEmpty else { throw error(secretNode, "\(key).secret", "is empty; give the secret the receiver checks signatures with") }
        var events = Set(EventClass.allCases)
        if let eventsNode = keys["events"] {
            guard let names = eventsNode.sequence, !names.isEmpty else {
                throw error(eventsNode, "\(key).events", "must be a list of \(EventClass.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            events = []
            for (index, nameNode) in names.enumerated() {
                let name = try string(nameNode, "\(key).events[\(index)]")
                guard let kind = EventClass(rawValue: name) else {
                    throw error(nameNode, "\(key).events[\(index)]", "unknown event class '\(name)'; one of \(EventClass.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                events.insert(kind)
            }
        }
        return ServeConfig.Webhook(url: url, events: events, secret: secret)
    }

    func srtListener(_ node: Node, _ key: String) throws(ConfigError) -> ServeConfig.SRTListener {
        let keys = try mapping(node, key, keys: ["listen", "upstream", "upstreams", "sticker", "stream"])
        guard let listenNode = keys["listen"], let upstreams = try upstreams(keys, of: node, key) else {
            throw error(node, key, "needs listen (srt://:PORT[?passphrase=...]) and upstream (or upstreams, a list)")
        }
        let listen = try string(listenNode, "\(key).listen")
        do {
            guard case .srtListener = try InputEndpoint(parsing: listen) else {
                throw error(listenNode, "\(key).listen", "'\(maskedAddress(listen))' calls out; a listener has no host: srt://:PORT")
            }
        } catch let error as ConfigError {
            throw error
        } catch {
            throw self.error(listenNode, "\(key).listen", "\(error)")
        }
        let port = listen.split(separator: ":").last.map { String($0.prefix { $0.isNumber }) } ?? "srt"
        return ServeConfig.SRTListener(listen: listen, upstreams: upstreams,
                                       sticker: try keys["sticker"].map { node throws(ConfigError) in try string(node, "\(key).sticker") },
                                       stream: try keys["stream"].map { node throws(ConfigError) in try string(node, "\(key).stream") } ?? "srt-\(port)")
    }
}
