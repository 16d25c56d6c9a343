import FoundationEssentials
// The configuration and control requests are part of this module's API; they live in ServeInputs only so that
// the fuzz targets can link them without NIO, Hummingbird and dlib.
@_exported import ServeInputs
import JSONTree
import StickerKit

/// The control protocol, with no I/O: one request line in, one reply line out (or a subscription).
/// Newline-delimited JSON; every request carries an `id` its reply echoes:
///
///     {"id": 1, "command": "set-sticker", "stream": "alice", "sticker": "cat"}
///     {"id": 1, "ok": true, "result": {"stream": "alice", "sticker": "cat"}}
///     {"id": 2, "ok": false, "error": {"code": "unknown-stream", "message": "no stream 'bob'; running: alice"}}
public struct ControlProtocol: Sendable {
    /// The longest request line; a longer one is refused and the connection closed.
    public static let maximumLineBytes = ControlRequest.maximumLineBytes
    public static let commands = ControlRequest.commands

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
        let request: ControlRequest
        switch ControlRequest.parse(line) {
        case .success(let parsed): request = parsed
        case .failure(let refusal): return .reply(Self.failure(id: refusal.id, refusal.error))
        }
        if case .subscribe(let classes) = request.command {
            let reply = Self.success(id: request.id, ["events": .array(classes.map(\.rawValue).sorted().map(JSONValue.string)),
                                                      "queue": .number(Double(registry.events.queueCapacity))])
            return .subscribe(reply: reply, classes: classes)
        }
        do throws(ControlError) {
            return .reply(Self.success(id: request.id, try run(request.command)))
        } catch {
            return .reply(Self.failure(id: request.id, error))
        }
    }

    private func run(_ command: ControlRequest.Command) throws(ControlError) -> JSONValue {
        switch command {
        case .streams:
            return ["streams": registry.summaries()]
        case .stickers:
            return ["stickers": .array(registry.catalog.packages.map(Self.describe)), "builtin": ["none", "landmarks"]]
        case .reloadStickers:
            let report: StickerCatalog.ReloadReport
            do {
                report = try registry.catalog.reload()
            } catch {
                throw ControlError(.unreadableStickers, error.description)
            }
            return ["loaded": .array(report.loaded.map(JSONValue.string)),
                    "failed": .array(report.failed.map { ["name": .string($0.name), "message": .string($0.message)] })]
        case .start(let input, let outputs, let sticker, let stream):
            let id = try registry.start(input: input, outputs: outputs, sticker: sticker, stream: stream)
            return ["stream": .string(id)]
        case .addOutput(let id, let output):
            let index = try registry.addOutput(output, to: id)
            return ["stream": .string(id), "output": .number(Double(index))]
        case .removeOutput(let id, let output):
            let index = try registry.removeOutput(output, from: id)
            return ["stream": .string(id), "output": .number(Double(index))]
        case .stop(let id):
            try registry.stop(id)
            return ["stream": .string(id), "state": "stopping"]
        case .setSticker(let id, let sticker):
            try registry.setSticker(id, to: sticker)
            return ["stream": .string(id), "sticker": .string(sticker)]
        case .stats(let stream):
            return try registry.stats(of: stream)
        case .subscribe(let classes):
            // handle(_:) answers subscriptions itself; this only keeps the switch exhaustive.
            return ["events": .array(classes.map(\.rawValue).sorted().map(JSONValue.string))]
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
        ControlRequest.success(id: id, result)
    }

    public static func failure(id: JSONValue, _ error: ControlError) -> JSONValue {
        ControlRequest.failure(id: id, error)
    }

    /// One JSON line, newline included.
    public static func line(_ value: JSONValue) -> String {
        ControlRequest.line(value)
    }
}
