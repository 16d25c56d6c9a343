import ArgumentParser
import FoundationEssentials
import Glibc
import JSONTree
import MediaBridge
import NIOCore
import RelayServer

struct Ctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Steer a running facerelay serve through its control socket.",
        discussion: "Readable tables by default, the raw reply lines with --json. Exit status: 0 when the reply is ok, 1 otherwise.",
        subcommands: [Streams.self, StickersList.self, ReloadStickers.self, Start.self, Stop.self, SetSticker.self, AddOutput.self, RemoveOutput.self,
                      Stats.self, Subscribe.self]
    )

    struct Connection: ParsableArguments {
        @Option(help: "The serve's control socket (default: $FACERELAY_SOCKET, then /run/facerelay/control.sock).")
        var socket: String?

        @Flag(help: "Print the raw JSON reply lines.")
        var json = false

        var path: String {
            socket ?? ProcessInfo.processInfo.environment["FACERELAY_SOCKET"] ?? "/run/facerelay/control.sock"
        }

        /// Sends one request; prints the reply (raw or through `table`); exits 1 when it is an error.
        func send(_ command: String, _ arguments: [String: JSONValue] = [:], table: (JSONValue) -> String) async throws {
            var request = arguments
            request["id"] = 1
            request["command"] = .string(command)
            let reply: JSONValue
            do {
                reply = try await ControlClient.request(.object(request), socket: path)
            } catch {
                printError("\(error)")
                throw ExitCode(1)
            }
            if json {
                print(ControlProtocol.line(reply), terminator: "")
            }
            guard reply["ok"] == .bool(true) else {
                if !json {
                    printError("\(reply["error"]?["code"]?.stringValue ?? "error"): \(reply["error"]?["message"]?.stringValue ?? "no message")")
                }
                throw ExitCode(1)
            }
            if !json { print(table(reply["result"] ?? .null), terminator: "") }
        }
    }

    struct Streams: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The running streams: state, sticker, rate, faces, frames.")
        @OptionGroup var connection: Connection

        func run() async throws {
            try await connection.send("streams") { result in
                let rows = array(result["streams"]).map { (stream: JSONValue) -> [String] in
                    ["stream", "state", "sticker", "fps", "faces", "frames_in", "frames_out", "frames_dropped", "uptime_s", "input", "output"].map { text(stream[$0]) }
                }
                return Table.render(["STREAM", "STATE", "STICKER", "FPS", "FACES", "IN", "OUT", "DROPPED", "UPTIME_S", "INPUT", "OUTPUT"], rows,
                                    empty: "no streams")
            }
        }
    }

    struct StickersList: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "stickers", abstract: "The sticker packages the service has loaded, with their items and triggers.")
        @OptionGroup var connection: Connection

        func run() async throws {
            try await connection.send("stickers") { result in
                let rows = array(result["stickers"]).map { (package: JSONValue) -> [String] in
                    let items = array(package["items"])
                    return [text(package["name"]), text(package["title"]), items.map { text($0["id"]) }.joined(separator: ","), list(package["triggers"])]
                }
                return Table.render(["NAME", "TITLE", "ITEMS", "TRIGGERS"], rows, empty: "no stickers") + "built in: none, landmarks\n"
            }
        }
    }

    struct ReloadStickers: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rescan the stickers folder; a broken package never replaces a working one.")
        @OptionGroup var connection: Connection

        func run() async throws {
            try await connection.send("reload-stickers") { result in
                var out = "loaded: \(list(result["loaded"]))\n"
                if case .array(let failed)? = result["failed"] {
                    for problem in failed { out += "not loaded: \(text(problem["name"])): \(text(problem["message"]))\n" }
                }
                return out
            }
        }
    }

    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Start a stream from INPUT to each OUTPUT (one encode for all).")
        @Argument(help: "rtmp://..., srt://... or a media file.") var input: String
        @Argument(help: "rtmp://..., srt://... or a .flv/.mp4/.mkv/.ts file; several for several outputs.") var outputs: [String]
        @Option(help: "Sticker: a package name, none or landmarks (default: the configured one).") var sticker: String?
        @Option(help: "Name of the stream (default: stream-N).") var stream: String?
        @OptionGroup var connection: Connection

        func run() async throws {
            var arguments: [String: JSONValue] = ["input": .string(input), "outputs": .array(outputs.map(JSONValue.string))]
            if let sticker { arguments["sticker"] = .string(sticker) }
            if let stream { arguments["stream"] = .string(stream) }
            try await connection.send("start", arguments) { "started \(text($0["stream"]))\n" }
        }
    }

    struct Stop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "End a stream cleanly (its output is finalised).")
        @Argument(help: "The stream's name.") var stream: String
        @OptionGroup var connection: Connection

        func run() async throws {
            try await connection.send("stop", ["stream": .string(stream)]) { "stopping \(text($0["stream"]))\n" }
        }
    }

    struct SetSticker: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Switch a stream's sticker from its next frame on.")
        @Argument(help: "The stream's name.") var stream: String
        @Argument(help: "A package name, none or landmarks.") var sticker: String
        @OptionGroup var connection: Connection

        func run() async throws {
            try await connection.send("set-sticker", ["stream": .string(stream), "sticker": .string(sticker)]) {
                "\(text($0["stream"])): \(text($0["sticker"]))\n"
            }
        }
    }

    struct AddOutput: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send a running stream to one more OUTPUT, from its next keyframe; its other outputs are not touched.")
        @Argument(help: "The stream's name.") var stream: String
        @Argument(help: "rtmp://..., srt://... or a .flv/.mp4/.mkv/.ts file.") var output: String
        @OptionGroup var connection: Connection

        func run() async throws {
            try await connection.send("add-output", ["stream": .string(stream), "output": .string(output)]) {
                "\(text($0["stream"])): output \(text($0["output"])) added\n"
            }
        }
    }

    struct RemoveOutput: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Take OUTPUT out of a running stream (a file is finalised); its other outputs are not touched.")
        @Argument(help: "The stream's name.") var stream: String
        @Argument(help: "The output's address, as given when it was added.") var output: String
        @OptionGroup var connection: Connection

        func run() async throws {
            try await connection.send("remove-output", ["stream": .string(stream), "output": .string(output)]) {
                "\(text($0["stream"])): output \(text($0["output"])) removed\n"
            }
        }
    }

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Each stream's figures since it started, and the process's.")
        @Argument(help: "One stream (default: all).") var stream: String?
        @OptionGroup var connection: Connection

        func run() async throws {
            var arguments: [String: JSONValue] = [:]
            if let stream { arguments["stream"] = .string(stream) }
            try await connection.send("stats", arguments) { result in
                let rows = array(result["streams"]).map { (stream: JSONValue) -> [String] in
                    ["stream", "state", "sticker", "fps", "frames_out", "frames_dropped", "stage_ms_per_frame", "track_ms_per_frame", "sticker_ms_per_frame", "output_reconnects"].map { text(stream[$0]) }
                }
                let stages = array(result["streams"]).map { (stream: JSONValue) -> [String] in
                    let overhead = stream["sticker_overhead"]
                    return [text(stream["stream"])]
                        + ["decode", "track", "composite", "relay", "encode", "mux"].map { text(stream["stages"]?[$0]?["ms_per_frame"]) }
                        + [text(overhead?["percent_of_core"]), text(overhead?["ratio_to_decode_encode"]), text(overhead?["memory_mb"]), text(stream["stream_memory_mb"])]
                }
                let process = result["process"] ?? .null
                return Table.render(["STREAM", "STATE", "STICKER", "FPS", "OUT", "DROPPED", "STAGE_MS", "TRACK_MS", "STICKER_MS", "RECONNECTS"], rows, empty: "no streams")
                    + (stages.isEmpty ? "" : "\nCPU in ms per frame by stage; what stickers cost (tracking + compositing)\n"
                        + Table.render(["STREAM", "DECODE", "TRACK", "COMPOSITE", "RELAY", "ENCODE", "MUX", "STICKERS_%CORE", "STICKERS/TRANSCODE", "STICKER_MB", "STREAM_MB"], stages, empty: ""))
                    + "process: cpu \(text(process["cpu_s"])) s, rss \(text(process["rss_mb"])) MB (peak \(text(process["peak_rss_mb"])) MB), "
                    + "\(text(process["subscribers"])) subscriber(s), events \(text(process["events_published"])) published, \(text(process["events_dropped"])) dropped\n"
            }
        }
    }

    struct Subscribe: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print events as they come: expression, stream, sticker, stats (default: all). Ends with Ctrl-C.")
        @Argument(help: "Event classes.") var events: [String] = []
        @OptionGroup var connection: Connection

        func run() async throws {
            let request: JSONValue = ["id": 1, "command": "subscribe", "events": .array(events.map(JSONValue.string))]
            let json = connection.json
            do {
                try await ControlClient.withConnection(to: connection.path) { send, lines in
                    try await send(request)
                    var first = true
                    for try await buffer in lines {
                        let line = String(buffer: buffer)
                        let value = try JSONDecoder().decode(JSONValue.self, from: Data(line.utf8))
                        if first {
                            first = false
                            guard value["ok"] == .bool(true) else {
                                printError("\(value["error"]?["code"]?.stringValue ?? "error"): \(value["error"]?["message"]?.stringValue ?? "")")
                                throw ExitCode(1)
                            }
                            if json { printLine(line) }
                            continue
                        }
                        // Unbuffered: a listener piping events on reads each as it comes.
                        printLine(json ? line : eventLine(value))
                    }
                }
            } catch let exit as ExitCode {
                throw exit
            } catch {
                printError("\(error)")
                throw ExitCode(1)
            }
        }

        func eventLine(_ event: JSONValue) -> String {
            guard case .object(let fields) = event else { return "\(event)" }
            let kind = text(fields["event"]), stream = text(fields["stream"])
            let rest = fields.keys.filter { $0 != "event" && $0 != "stream" }.sorted().map { "\($0)=\(text(fields[$0]))" }
            return "\(kind) \(stream) \(rest.joined(separator: " "))"
        }
    }
}

/// A JSON value as table text.
private func text(_ value: JSONValue?) -> String {
    switch value {
    case .string(let text)?: text
    case .number(let number)?: number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : formatted(number, decimals: 2)
    case .bool(let bool)?: String(bool)
    case .array?: list(value)
    case .object?: ControlProtocol.line(value!).trimmingSuffixNewline
    case .null?, nil: "-"
    }
}

private func array(_ value: JSONValue?) -> [JSONValue] {
    if case .array(let values)? = value { return values }
    return []
}

private func list(_ value: JSONValue?) -> String {
    guard case .array(let values)? = value, !values.isEmpty else { return "-" }
    return values.map { text($0) }.joined(separator: ",")
}

private extension String {
    var trimmingSuffixNewline: String { hasSuffix("\n") ? String(dropLast()) : self }
}

func printError(_ message: String) {
    let line = message + "\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
}

/// A line to standard output at once, without stdio's buffer.
func printLine(_ message: String) {
    let line = message + "\n"
    _ = line.withCString { write(1, $0, strlen($0)) }
}

/// Columns padded to their widest cell.
enum Table {
    static func render(_ header: [String], _ rows: [[String]], empty: String) -> String {
        guard !rows.isEmpty else { return empty + "\n" }
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.indices.map { column in
                column == row.count - 1 ? row[column] : row[column] + String(repeating: " ", count: widths[column] - row[column].count)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }
}
