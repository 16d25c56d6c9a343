import FoundationEssentials
import StickerKit

/// The control protocol, with no I/O: one request line in, one reply line out (or a subscription).
/// Newline-delimited JSON; every request carries an `id` its reply echoes:
///
///     {"id": 1, "command": "set-sticker", "stream": "alice", "sticker": "cat"}
///     {"id": 1, "ok": true, "result": {"stream": "alice", "sticker": "cat"}}
///     {"id": 2, "ok": false, "error": {"code": "unknown-stream", "message": "no stream 'bob'; running: alice"}}
public struct ControlProtocol: Sendable {
    /// The longest request line; a longer one is refused and the connection closed.
    public static let maximumLineBytes = 64 * 1024
    public static let commands = ["streams", "stickers", "reload-stickers", "start", "stop", "set-sticker", "stats", "subscribe"]

    public enum Outcome: Sendable, Equatable {
        /// One reply line.
        case reply(JSONValue)
        /// The reply line, then the connection receives the events of these classes.
        case subscribe(reply: JSONValue, classes: Set<EventClass>)
    }

    let registry: StreamRegistry

    public init(registry: StreamRegistry) {
        self.registry = registry
    }

    /// Handles one request line (without its newline).
    public func handle(_ line: String) -> Outcome {
        let request: JSONValue
        do {
            request = try JSONDecoder().decode(JSONValue.self, from: Data(line.utf8))
        } catch {
            return .reply(Self.failure(id: .null, ControlError("bad-json", "the request is not valid JSON; send one JSON object per line, e.g. {\"id\": 1, \"command\": \"streams\"}")))
        }
        guard case .object(let fields) = request else {
            return .reply(Self.failure(id: .null, ControlError("bad-request", "the request must be a JSON object with \"id\" and \"command\", not \(request.kind)")))
        }
        let id = fields["id"] ?? .null
        do throws(ControlError) {
            guard let commandValue = fields["command"] else {
                throw ControlError("missing-argument", "the request has no \"command\"; one of: \(Self.commands.joined(separator: ", "))")
            }
            guard case .string(let command) = commandValue else {
                throw ControlError("bad-argument", "\"command\" must be a string, not \(commandValue.kind)")
            }
            let arguments = Arguments(fields: fields, command: command)
            switch command {
            case "subscribe":
                let classes = try arguments.eventClasses()
                let reply = Self.success(id: id, ["events": .array(classes.map(\.rawValue).sorted().map(JSONValue.string)),
                                                  "queue": .number(Double(registry.events.queueCapacity))])
                return .subscribe(reply: reply, classes: classes)
            default:
                return .reply(Self.success(id: id, try run(command, arguments)))
            }
        } catch {
            return .reply(Self.failure(id: id, error))
        }
    }

    private func run(_ command: String, _ arguments: Arguments) throws(ControlError) -> JSONValue {
        switch command {
        case "streams":
            return ["streams": registry.summaries()]
        case "stickers":
            return ["stickers": .array(registry.catalog.packages.map(Self.describe)), "builtin": ["none", "landmarks"]]
        case "reload-stickers":
            let report = registry.catalog.reload()
            return ["loaded": .array(report.loaded.map(JSONValue.string)),
                    "failed": .array(report.failed.map { ["name": .string($0.name), "message": .string($0.message)] })]
        case "start":
            let id = try registry.start(input: try arguments.string("input"), output: try arguments.string("output"),
                                        sticker: try arguments.optionalString("sticker"), stream: try arguments.optionalString("stream"))
            return ["stream": .string(id)]
        case "stop":
            let id = try arguments.string("stream")
            try registry.stop(id)
            return ["stream": .string(id), "state": "stopping"]
        case "set-sticker":
            let id = try arguments.string("stream"), sticker = try arguments.string("sticker")
            try registry.setSticker(id, to: sticker)
            return ["stream": .string(id), "sticker": .string(sticker)]
        case "stats":
            return try registry.stats(of: try arguments.optionalString("stream"))
        default:
            throw ControlError("unknown-command", "unknown command '\(command)'; one of: \(Self.commands.joined(separator: ", "))")
        }
    }

    static func describe(_ package: StickerPackage) -> JSONValue {
        let items: [JSONValue] = package.items.map { item in
            var fields: [String: JSONValue] = ["id": .string(item.id), "frames": .number(Double(item.frames.count)),
                                               "fps": .rounded(item.fps, 2), "loop": .bool(item.loop),
                                               "begin": .string("\(item.begin)"), "follow3D": .bool(item.follow3D)]
            if let end = item.end { fields["end"] = .string("\(end)") }
            return .object(fields)
        }
        return ["name": .string(package.name), "title": .string(package.title), "items": .array(items),
                "triggers": .array(package.expressionsUsed.sorted().map(JSONValue.string)),
                "preview": .string(package.directory + "/preview.png")]
    }

    public static func success(id: JSONValue, _ result: JSONValue) -> JSONValue {
        ["id": id, "ok": true, "result": result]
    }

    public static func failure(id: JSONValue, _ error: ControlError) -> JSONValue {
        ["id": id, "ok": false, "error": ["code": .string(error.code), "message": .string(error.message)]]
    }

    /// One JSON line, newline included.
    public static func line(_ value: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("{\"ok\":false}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}

/// A request's arguments, read with errors that name the argument and the command.
private struct Arguments {
    let fields: [String: JSONValue]
    let command: String

    func string(_ name: String) throws(ControlError) -> String {
        guard let value = fields[name] else {
            throw ControlError("missing-argument", "\(command) needs \"\(name)\"")
        }
        guard case .string(let text) = value, !text.isEmpty else {
            throw ControlError("bad-argument", "\"\(name)\" of \(command) must be a non-empty string, not \(value.kind)")
        }
        return text
    }

    func optionalString(_ name: String) throws(ControlError) -> String? {
        guard let value = fields[name], value != .null else { return nil }
        return try string(name)
    }

    func eventClasses() throws(ControlError) -> Set<EventClass> {
        guard let value = fields["events"], value != .null else { return Set(EventClass.allCases) }
        guard case .array(let names) = value else {
            throw ControlError("bad-argument", "\"events\" of subscribe must be a list of \(EventClass.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var classes = Set<EventClass>()
        for name in names {
            guard case .string(let text) = name, let kind = EventClass(rawValue: text) else {
                throw ControlError("bad-argument", "unknown event class \(name); subscribe to \(EventClass.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            classes.insert(kind)
        }
        return classes.isEmpty ? Set(EventClass.allCases) : classes
    }
}
