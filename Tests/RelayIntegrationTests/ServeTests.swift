import Foundation
import Testing
import TestFixtures

/// `facerelay serve` with real parts: nginx-rtmp with the shipped configuration as the ingest, a
/// second nginx-rtmp as the platform (recording what reaches it), ffmpeg broadcasters, and
/// `facerelay ctl`.
@Suite(.serialized) struct ServeTests {
    /// Pixels (of the 320x180 grey picture) that differ by more than 40 levels: a sticker changes
    /// hundreds, encoding alone next to none.
    static func changedPixels(_ a: [UInt8], _ b: [UInt8]) -> Int {
        let skip = MediaReport.width * MediaReport.barcodeRows
        var count = 0
        for index in skip..<min(a.count, b.count) where abs(Int(a[index]) - Int(b[index])) > 40 { count += 1 }
        return count
    }

    /// Two broadcasters publish; each gets its own stickered stream at the platform; one is switched
    /// live; an unrouted key is refused; the end of each publish ends and frees its stream.
    @Test func twoBroadcastersGetTheirStickersAndOneIsSwitchedLive() throws {
        let platform = try NginxRTMP()
        let httpPort = freePort()
        let ingest = try NginxRTMP.facerelayIngest(facerelayHTTP: httpPort)
        let serve = try ServeProcess("""
            rtmp:
              ingest: rtmp://127.0.0.1:\(ingest.port)
              applications:
                live:
                  keys:
                    alice: { upstream: "\(platform.recordedURL("alice-secret"))", sticker: sunglasses }
                    bob: { upstream: "\(platform.recordedURL("bob-secret"))", sticker: cat }
            """, httpPort: httpPort, name: "serve-two")
        let subscriber = try serve.subscribe()
        let input = try Fixtures.path("face_720p_close.mp4")
        let publishers = try ["alice", "bob", "mallory"].map { name in
            try ChildProcess("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-re", "-i", input, "-t", "9", "-c", "copy", "-f", "flv", ingest.url(name)],
                             logDirectory: serve.directory, name: "publish-\(name)")
        }
        #expect(publishers[2].wait(seconds: 20) != 0, "a key without a route is refused")
        let relaying = try serve.waitForStreams(seconds: 20) { streams in
            ["alice", "bob"].allSatisfy { streams[$0]?["state"] as? String == "relaying" }
        }
        try #require(relaying, "both streams relaying: \(serve.log.suffix(2000))")
        let listed = try serve.streams()
        #expect(listed["mallory"] == nil)
        #expect(listed["alice"]?["sticker"] as? String == "sunglasses" && listed["bob"]?["sticker"] as? String == "cat")
        #expect(listed["alice"]?["output"] as? String == platform.recordedURL("****"), "the platform key is masked")
        Thread.sleep(forTimeInterval: 4)
        let switched = try serve.result(["set-sticker", "alice", "none"])
        #expect(switched["sticker"] as? String == "none")
        #expect(try serve.streams()["alice"]?["sticker"] as? String == "none")

        for publisher in publishers.prefix(2) { #expect(publisher.wait(seconds: 30) == 0, "publisher: \(publisher.stderr)") }
        // The end of each publish ends its stream and frees it.
        let freed = try serve.waitForStreams(seconds: 20) { $0.isEmpty }
        #expect(freed, "streams left: \(String(describing: try? serve.streams()))")
        #expect(!serve.log.contains("secret"), "a platform key reached the log")

        let original = try MediaReport(input)
        var inputFrames: [Int: [UInt8]] = [:]
        for frame in original.frames { if let index = frame.index { inputFrames[index] = frame.pixels } }
        func stickered(_ report: MediaReport) -> [(index: Int, changed: Int)] {
            report.frames.compactMap { frame in
                guard let index = frame.index, let source = inputFrames[index] else { return nil }
                return (index, Self.changedPixels(frame.pixels, source))
            }
        }
        let alice = try MediaReport(try platform.recording("alice-secret")), bob = try MediaReport(try platform.recording("bob-secret"))
        let aliceFrames = stickered(alice), bobFrames = stickered(bob)
        try #require(aliceFrames.count > 60 && bobFrames.count > 60, "recorded \(aliceFrames.count) and \(bobFrames.count) frames")
        // Alice: glasses from when her face is found, then none from the switch on, with no frame
        // of glasses after the first clean one (no glitch, no flicker back).
        // nginx-rtmp held each publish until its relay was playing: nothing of the broadcast was lost.
        #expect((aliceFrames.first?.index ?? 99) <= 1 && (bobFrames.first?.index ?? 99) <= 1,
                "the first relayed frames are \(aliceFrames.first?.index ?? -1) and \(bobFrames.first?.index ?? -1): \(serve.log.split(separator: "\n").filter { $0.contains("joined the input") || $0.contains("before its relay played") })")
        let firstGlasses = try #require(aliceFrames.firstIndex { $0.changed > 150 }, "no glasses on alice: \(aliceFrames.map(\.changed))")
        let firstClean = try #require(aliceFrames[firstGlasses...].firstIndex { $0.changed < 30 }, "alice never switched: \(aliceFrames.map(\.changed))")
        #expect(aliceFrames[firstClean...].allSatisfy { $0.changed < 30 }, "glasses after the switch: \(aliceFrames[firstClean...].map(\.changed))")
        #expect(aliceFrames[firstGlasses..<firstClean].filter { $0.changed > 150 }.count >= (firstClean - firstGlasses) * 9 / 10,
                "alice's glasses came and went before the switch: \(aliceFrames[firstGlasses..<firstClean].map(\.changed))")
        #expect(firstClean - firstGlasses > 30, "the switch came \(firstClean - firstGlasses) frames after the glasses")
        // Bob: the cat stays on, and it is not alice's sticker.
        let bobWithCat = bobFrames.filter { $0.changed > 150 }.count
        #expect(bobWithCat >= bobFrames.count * 8 / 10, "cat on \(bobWithCat) of \(bobFrames.count) frames")
        var bobByIndex: [Int: [UInt8]] = [:]
        for frame in bob.frames { if let index = frame.index { bobByIndex[index] = frame.pixels } }
        let compared = alice.frames.filter { frame in frame.index.map { $0 < aliceFrames[firstClean].index && $0 >= aliceFrames[firstGlasses].index } ?? false }
            .compactMap { frame in bobByIndex[frame.index!].map { Self.changedPixels(frame.pixels, $0) } }
        #expect(!compared.isEmpty && compared.allSatisfy { $0 > 150 }, "alice's and bob's outputs differ on the same input frame: \(compared)")

        // Events: each stream started and ended, alice's switch announced.
        let events = subscriber.events()
        func stream(_ name: String, _ state: String) -> Bool {
            events.contains { $0["event"] as? String == "stream" && $0["stream"] as? String == name && $0["state"] as? String == state }
        }
        #expect(stream("alice", "started") && stream("bob", "started") && stream("alice", "ended") && stream("bob", "ended"), "\(events)")
        #expect(events.contains { $0["event"] as? String == "sticker" && $0["stream"] as? String == "alice" && $0["sticker"] as? String == "none" })
        #expect(serve.terminate() == 0, "serve exits 0 on SIGTERM: \(serve.log.suffix(1000))")
    }

    /// A subscriber gets the expressions of a face that opens its mouth on frames 60-119 of the
    /// video, with their times, and the stream's own events.
    @Test func subscribersGetTheExpressionsOfAFace() throws {
        let serve = try ServeProcess("defaults:\n  sticker: flames\n", name: "serve-expressions")
        let subscriber = try serve.subscribe(["expression", "stream", "sticker"])
        let output = serve.directory + "/mouth.mp4"
        let started = try serve.result(["start", try Fixtures.path("face_mouth.mp4"), output, "--stream", "mouth"])
        #expect(started["stream"] as? String == "mouth")
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline, !subscriber.events().contains(where: { $0["state"] as? String == "ended" || $0["state"] as? String == "failed" }) {
            Thread.sleep(forTimeInterval: 0.2)
        }
        let events = subscriber.events()
        let mouth = events.filter { $0["event"] as? String == "expression" && $0["expression"] as? String == "mouthOpen" }
        #expect(mouth.map { $0["state"] as? String ?? "" } == ["start", "end"], "\(events)")
        if mouth.count == 2 {
            let start = mouth[0]["pts"] as? Double ?? -1, end = mouth[1]["pts"] as? Double ?? -1
            // Compared in frames: an event's time is given to the millisecond, so two frames late
            // reads 0.067 s, a hair over 2/30.
            #expect(abs((start * 30).rounded() - 60) <= 2, "mouthOpen started at \(start) s, the video opens it at 2.0 s")
            #expect(abs((end * 30).rounded() - 120) <= 2, "mouthOpen ended at \(end) s, the video closes it at 4.0 s")
            #expect(mouth[0]["stream"] as? String == "mouth" && mouth[0]["face"] as? Int == mouth[1]["face"] as? Int)
        }
        #expect(events.contains { $0["event"] as? String == "stream" && $0["state"] as? String == "started" })
        #expect(events.contains { $0["event"] as? String == "stream" && $0["state"] as? String == "ended" }, "\(events)")
        #expect(FileManager.default.fileExists(atPath: output))
    }

    /// Bad requests each get their own error; a line too long closes only its connection; idle and
    /// many clients stop nobody; a stream relaying meanwhile is untouched; SIGTERM finalises it.
    @Test func badInputGetsErrorsAndNothingElseStops() throws {
        // The stream that must keep running: a broadcaster calling a configured SRT listener with
        // its passphrase, relayed to a platform.
        let platform = try NginxRTMP()
        let srtPort = freePort(udp: true)
        // A stickers folder of its own, with a broken package in it.
        let stickers = try Package.temporaryDirectory("stickers")
        defer { try? FileManager.default.removeItem(atPath: stickers) }
        for name in ["sunglasses", "cat"] {
            try FileManager.default.copyItem(atPath: Package.root.appendingPathComponent("Stickers/\(name)").path, toPath: "\(stickers)/\(name)")
        }
        try FileManager.default.createDirectory(atPath: stickers + "/broken", withIntermediateDirectories: true)
        try #"{"items": [{"id": "a", "frames": ["missing.png"], "region": {"feature": "eyes"}}]}"#
            .write(toFile: stickers + "/broken/sticker.json", atomically: true, encoding: .utf8)
        let serve = try ServeProcess("""
            stickers: \(stickers)
            defaults:
              sticker: sunglasses
            srt:
              - listen: srt://:\(srtPort)?passphrase=facerelay-test-passphrase
                upstream: \(platform.url("studio-key"))
                stream: long
            """, name: "serve-bad")
        let broadcaster = try ChildProcess("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-re", "-stream_loop", "-1", "-i", try Fixtures.path("face_720p.ts"),
                                                               "-c", "copy", "-f", "mpegts", "srt://127.0.0.1:\(srtPort)?mode=caller&passphrase=facerelay-test-passphrase"],
                                           logDirectory: serve.directory, name: "srt-broadcaster")
        defer { broadcaster.signal(SIGKILL) }
        let relaying = try serve.waitForStreams(seconds: 30) { $0["long"]?["state"] as? String == "relaying" }
        try #require(relaying, "the SRT stream relays: \(serve.log.suffix(1500)) \(broadcaster.stderr)")

        let idle = try UnixSocket(serve.socket)  // connects and says nothing
        func code(_ line: String) throws -> String? {
            let client = try UnixSocket(serve.socket)
            try client.send(line + "\n")
            let reply = try JSONSerialization.jsonObject(with: Data(try client.readLine().utf8)) as? [String: Any]
            return (reply?["error"] as? [String: Any])?["code"] as? String
        }
        #expect(try code("{oops") == "bad-json")
        #expect(try code(#"{"id": 1, "command": "fly"}"#) == "unknown-command")
        #expect(try code(#"{"id": 1, "command": "stop"}"#) == "missing-argument")
        #expect(try code(#"{"id": 1, "command": "stop", "stream": ["long"]}"#) == "bad-argument")
        #expect(try code(#"{"id": 1, "command": "stop", "stream": "nobody"}"#) == "unknown-stream")
        #expect(try code(#"{"id": 1, "command": "set-sticker", "stream": "long", "sticker": "../../etc"}"#) == "bad-sticker-name")
        #expect(try code(#"{"id": 1, "command": "set-sticker", "stream": "long", "sticker": "unicorn"}"#) == "unknown-sticker")
        #expect(try code(#"{"id": 1, "command": "start", "input": "rtmp://127.0.0.1:1/live/x", "output": "/tmp/x.flv", "stream": "long"}"#) == "stream-exists")
        #expect(try code(#"{"id": 1, "command": "set-sticker", "stream": "long", "sticker": "broken"}"#) == "broken-sticker")
        // A package broken on disk after it loaded: reload reports it and keeps the working copy.
        try "{ not json".write(toFile: stickers + "/cat/sticker.json", atomically: true, encoding: .utf8)
        let reloaded = try serve.result(["reload-stickers"])
        #expect((reloaded["failed"] as? [[String: Any]])?.compactMap { $0["name"] as? String }.sorted() == ["broken", "cat"], "\(reloaded)")
        #expect((reloaded["loaded"] as? [String])?.contains("cat") == true, "the working cat is kept: \(reloaded)")
        #expect(try serve.result(["set-sticker", "long", "cat"])["sticker"] as? String == "cat")
        let showsCat = try serve.waitForStreams(seconds: 5) { $0["long"]?["sticker"] as? String == "cat" }
        #expect(showsCat, "the cat is on the long stream from its next frame")

        // A line over 64 KiB: an error, then that connection is closed.
        let flooder = try UnixSocket(serve.socket)
        try flooder.send(String(repeating: "x", count: 70_000))
        let refusal = try JSONSerialization.jsonObject(with: Data(try flooder.readLine().utf8)) as? [String: Any]
        #expect((refusal?["error"] as? [String: Any])?["code"] as? String == "line-too-long")
        #expect(try flooder.readLine(timeout: 5) == "", "the connection is closed after a line too long")
        // The same with its newline, in one write: framed whole before the buffer's limit applies.
        let wholeFlooder = try UnixSocket(serve.socket)
        try wholeFlooder.send(#"{"id": 7, "command": "streams", "pad": ""# + String(repeating: "x", count: 70_000) + "\"}\n")
        let wholeRefusal = try JSONSerialization.jsonObject(with: Data(try wholeFlooder.readLine().utf8)) as? [String: Any]
        #expect((wholeRefusal?["error"] as? [String: Any])?["code"] as? String == "line-too-long", "\(String(describing: wholeRefusal))")

        // A client that closes its sending side after its request still gets the reply, with or
        // without a newline after it.
        for request in [#"{"id": 8, "command": "streams"}"# + "\n", #"{"id": 9, "command": "streams"}"#] {
            let halfClosed = try UnixSocket(serve.socket)
            try halfClosed.send(request)
            halfClosed.finishSending()
            let reply = try JSONSerialization.jsonObject(with: Data(try halfClosed.readLine(timeout: 5).utf8)) as? [String: Any]
            #expect(reply?["ok"] as? Bool == true && reply?["id"] as? Int == (request.hasSuffix("\n") ? 8 : 9), "\(String(describing: reply))")
        }

        // A hundred clients at once, each answered.
        let clients = try (0..<100).map { _ in try UnixSocket(serve.socket) }
        for (index, client) in clients.enumerated() { try client.send(#"{"id": \#(index), "command": "streams"}"# + "\n") }
        let answered = try clients.enumerated().filter { index, client in
            let reply = try JSONSerialization.jsonObject(with: Data(try client.readLine().utf8)) as? [String: Any]
            return reply?["id"] as? Int == index && reply?["ok"] as? Bool == true
        }.count
        #expect(answered == 100)

        // An unreachable input: the start is refused with the reason; the stream's failure is told.
        let subscriber = try serve.subscribe(["stream"])
        let unreachable = try serve.ctl(["start", "rtmp://127.0.0.1:\(freePort())/live/x", serve.directory + "/x.flv", "--stream", "unreachable"])
        let startError = unreachable["error"] as? [String: Any]
        #expect(startError?["code"] as? String == "start-failed" && (startError?["message"] as? String)?.contains("cannot read input") == true, "\(unreachable)")
        let failure = subscriber.firstEvent(within: 10) { $0["stream"] as? String == "unreachable" && $0["state"] as? String == "failed" }
        #expect((failure?["reason"] as? String)?.contains("Connection refused") == true, "\(subscriber.events())")

        let long1 = try #require(try serve.streams()["long"], "the long stream still runs")
        Thread.sleep(forTimeInterval: 1)
        let long2 = try #require(try serve.streams()["long"])
        #expect((long2["frames_out"] as? Int ?? 0) > (long1["frames_out"] as? Int ?? 0), "the long stream keeps relaying")
        _ = idle
        // SIGTERM: every stream ends cleanly, a file output finalised, and serve exits 0.
        let file = serve.directory + "/file.mkv"
        _ = try serve.result(["start", try Fixtures.path("face_180p_10min.flv"), file, "--stream", "file"])
        Thread.sleep(forTimeInterval: 2)
        #expect(try serve.streams()["file"] != nil, "the file stream is still relaying when the signal comes")
        #expect(serve.terminate() == 0, "\(serve.log.suffix(1000))")
        let report = try MediaReport(file)
        #expect(report.video?.codec == "h264" && report.frames.count > 30, "the file output is playable: \(report.frames.count) frames")
        #expect(!FileManager.default.fileExists(atPath: serve.socket), "the socket is removed at exit")
    }

    /// The control socket is its owner's alone: mode 0600.
    @Test func theControlSocketIsItsOwnersAlone() throws {
        let serve = try ServeProcess("", name: "serve-owner")
        var status = stat()
        #expect(stat(serve.socket, &status) == 0 && status.st_mode & 0o777 == 0o600, "mode \(String(status.st_mode & 0o777, radix: 8))")
    }

    /// Another account is refused at the control socket. Switching accounts needs root (as CI runs).
    @Test(.enabled(if: getuid() == 0, "switching to another account needs root"))
    func theControlSocketRefusesOtherUsers() throws {
        let serve = try ServeProcess("", name: "serve-owner")
        let script = "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ntry:\n  s.connect(sys.argv[1]); print('connected')\nexcept OSError as e:\n  print(e.errno)"
        let output = String(decoding: try run("/usr/sbin/runuser", ["-u", "nobody", "--", "/usr/bin/python3", "-c", script, serve.socket]), as: UTF8.self)
        #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "\(EACCES)", "another user: \(output)")
    }

    /// A bad configuration stops serve at start with the file, the line and the key.
    @Test func aBadConfigurationIsRefusedAtStart() throws {
        let directory = try Package.temporaryDirectory("serve-config")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "defaults:\n  stiker: cat\n".write(toFile: directory + "/bad.yml", atomically: true, encoding: .utf8)
        let serve = try ChildProcess(Package.facerelay, ["serve", "--config", directory + "/bad.yml"], logDirectory: directory, name: "serve")
        #expect(serve.wait(seconds: 60) == 1)
        #expect(serve.stderr.contains("\(directory)/bad.yml:2: defaults.stiker: unknown key"), "\(serve.stderr)")
        try "defaults:\n  sticker: unicorn\n".write(toFile: directory + "/bad.yml", atomically: true, encoding: .utf8)
        let second = try ChildProcess(Package.facerelay, ["serve", "--config", directory + "/bad.yml", "--control-socket", directory + "/c.sock",
                                                          "--http", "127.0.0.1:\(freePort())"], logDirectory: directory, name: "serve2")
        #expect(second.wait(seconds: 120) == 1)
        #expect(second.stderr.contains("bad.yml: defaults.sticker: unknown sticker 'unicorn'"), "\(second.stderr)")
    }
}

/// A plain blocking Unix-socket client, for what `ctl` never sends: broken and oversized lines.
final class UnixSocket {
    private let descriptor: Int32
    private var buffer: [UInt8] = []

    init(_ path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard status == 0 else { throw FixtureError(description: "cannot connect to \(path): errno \(errno)") }
    }

    deinit { close(descriptor) }

    func send(_ text: String) throws {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeMutableBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            guard sent > 0 else { return } // the server closed: what is read next tells
            offset += sent
        }
    }

    /// Closes the sending side, as `nc -N` does after its input.
    func finishSending() { shutdown(descriptor, Int32(SHUT_WR)) }

    /// One line without its newline; "" when the server closed the connection.
    func readLine(timeout: Double = 30) throws -> String {
        var waited = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &waited, socklen_t(MemoryLayout<timeval>.size))
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeFirst(newline + 1)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = read(descriptor, &chunk, chunk.count)
            if count == 0 { return "" }
            guard count > 0 else { throw FixtureError(description: "no reply within \(timeout) s (errno \(errno))") }
            buffer += chunk[..<count]
        }
    }
}
