import FoundationEssentials
import JSONTree

/// The event classes a subscriber can ask for.
public enum EventClass: String, Sendable, CaseIterable {
    case expression, stream, sticker, stats
    /// An output of a stream changed state (sending, reconnecting, failed, finished, removed).
    case output
}

/// One request line of the control protocol, read and checked before anything acts on it: the
/// JSON, the command and every argument's type. What needs the running service (whether a stream
/// or sticker exists) is checked by whoever runs the request.
public struct ControlRequest: Sendable, Equatable {
    /// The longest request line; a longer one is refused and the connection closed.
    public static let maximumLineBytes = 64 * 1024
    public static let commands = ["streams", "stickers", "reload-stickers", "start", "stop", "set-sticker", "add-output", "remove-output", "stats", "subscribe"]

    public enum Command: Sendable, Equatable {
        case streams
        case stickers
        case reloadStickers
        case start(input: String, outputs: [String], sticker: String?, stream: String?)
        case addOutput(stream: String, output: String)
        case removeOutput(stream: String, output: String)
        case stop(stream: String)
        case setSticker(stream: String, sticker: String)
        case stats(stream: String?)
        case subscribe(Set<EventClass>)
    }

    /// A line that is not a request: the error its reply carries, with the request's id once known.
    public struct Refusal: Error, Sendable, Equatable {
        public let id: JSONValue
        public let error: ControlError
    }

    /// Echoed in the reply, whatever its JSON type.
    public let id: JSONValue
    public let command: Command

    public init(id: JSONValue, command: Command) {
        self.id = id
        self.command = command
    }

    /// Reads one request line (without its newline).
    public static func parse(_ line: String) -> Result<ControlRequest, Refusal> {
        let request: JSONValue
        do {
            request = try JSONDecoder().decode(JSONValue.self, from: Data(line.utf8))
        } catch {
            return .failure(Refusal(id: .null, error: ControlError(.badJSON, "the request is not valid JSON; send one JSON object per line, e.g. {\"id\": 1, \"command\": \"streams\"}")))
        }
        guard case .object(let fields) = request else {
            return .failure(Refusal(id: .null, error: ControlError(.badRequest, "the request must be a JSON object with \"id\" and \"command\", not \(request.kind)")))
        }
        let id = fields["id"] ?? .null
        do throws(ControlError) {
            return .success(ControlRequest(id: id, command: try command(fields)))
        } catch {
            return .failure(Refusal(id: id, error: error))
        }
    }

    private static func command(_ fields: [String: JSONValue]) throws(ControlError) -> Command {
        guard let commandValue = fields["command"] else {
            throw ControlError(.missingArgument, "the request has no \"command\"; one of: \(commands.joined(separator: ", "))")
        }
        guard case .string(let command) = commandValue else {
            throw ControlError(.badArgument, "\"command\" must be a string, not \(commandValue.kind)")
        }
        let arguments = Arguments(fields: fields, command: command)
        switch command {
        case "streams": return .streams
        case "stickers": return .stickers
        case "reload-stickers": return .reloadStickers
        case "start":
            return .start(input: try arguments.string("input"), outputs: try arguments.outputs(),
                          sticker: try arguments.optionalString("sticker"), stream: try arguments.optionalString("stream"))
        case "stop": return .stop(stream: try arguments.string("stream"))
        case "add-output": return .addOutput(stream: try arguments.string("stream"), output: try arguments.string("output"))
        case "remove-output": return .removeOutput(stream: try arguments.string("stream"), output: try arguments.string("output"))
        case "set-sticker": return .setSticker(stream: try arguments.string("stream"), sticker: try arguments.string("sticker"))
        case "stats": return .stats(stream: try arguments.optionalString("stream"))
        case "subscribe": return .subscribe(try arguments.eventClasses())
        default:
            throw ControlError(.unknownCommand, "unknown command '\(command)'; one of: \(commands.joined(separator: ", "))")
        }
    }

    public static func success(id: JSONValue, _ result: JSONValue) -> JSONValue {
        ["id": id, "ok": true, "result": result]
    }

    public static func failure(id: JSONValue, _ error: ControlError) -> JSONValue {
        ["id": id, "ok": false, "error": ["code": .string(error.code.rawValue), "message": .string(error.message)]]
    }

    /// One JSON line, newline included.
    public static func line(_ value: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Cannot fail: JSONEncoder refuses only numbers that are not finite, and JSONValue writes
        // those as null. The fallback keeps the line valid JSON all the same.
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
            throw ControlError(.missingArgument, "\(command) needs \"\(name)\"")
        }
        guard case .string(let text) = value, !text.isEmpty else {
            throw ControlError(.badArgument, "\"\(name)\" of \(command) must be a non-empty string, not \(value.kind)")
        }
        return text
    }

    func optionalString(_ name: String) throws(ControlError) -> String? {
        guard let value = fields[name], value != .null else { return nil }
        return try string(name)
    }

    /// `"output": URL` or `"outputs": [URL, ...]`, not both.
    func outputs() throws(ControlError) -> [String] {
        switch (fields["output"], fields["outputs"]) {
        case (nil, nil):
            throw ControlError(.missingArgument, "\(command) needs \"output\" (one address) or \"outputs\" (a list)")
        case (_?, nil):
            return [try string("output")]
        case (nil, let value?):
            guard case .array(let items) = value, !items.isEmpty else {
                throw ControlError(.badArgument, "\"outputs\" of \(command) must be a non-empty list of addresses, not \(value.kind)")
            }
            return try items.enumerated().map { index, item throws(ControlError) in
                guard case .string(let text) = item, !text.isEmpty else {
                    throw ControlError(.badArgument, "\"outputs\"[\(index)] of \(command) must be a non-empty string, not \(item.kind)")
                }
                return text
            }
        case (_?, _?):
            throw ControlError(.badArgument, "\(command) takes \"output\" or \"outputs\", not both")
        }
    }

    func eventClasses() throws(ControlError) -> Set<EventClass> {
        guard let value = fields["events"], value != .null else { return Set(EventClass.allCases) }
        guard case .array(let names) = value else {
            throw ControlError(.badArgument, "\"events\" of subscribe must be a list of \(EventClass.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var classes = Set<EventClass>()
        for name in names {
            guard case .string(let text) = name, let kind = EventClass(rawValue: text) else {
                throw ControlError(.badArgument, "unknown event class \(name); subscribe to \(EventClass.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            classes.insert(kind)
        }
        return classes.isEmpty ? Set(EventClass.allCases) : classes
    }
}
