import Foundation
import Testing
import TestFixtures

/// FaceRelay built with AddressSanitizer (LeakSanitizer included) in its own build folder, driven
/// through the frame path and the control socket: no memory error, and no leak from FaceRelay's
/// code. GStreamer, glib and the Swift runtime keep a few allocations for the life of the process
/// on purpose; Tests/Sanitizers/lsan.supp names each one and why it is not ours.
/// The AddressSanitizer build (`BackgroundBuilds.addressSanitizer`) starts in the background with
/// the first test that asks for fixtures and is usually done when this suite runs.
@Suite(.serialized)
struct SanitizerTests {
    static let suppressions = Package.root.appendingPathComponent("Tests/Sanitizers/lsan.supp").path
    static let environment = [
        // Swift's crash reporter would take the place of ASan's report.
        "SWIFT_BACKTRACE": "enable=no",
        // The slow unwinder follows a leak's stack through glib (no frame pointers) to where it began,
        // which the suppressions and the report need.
        "ASAN_OPTIONS": "detect_leaks=1:fast_unwind_on_malloc=0",
        "LSAN_OPTIONS": "suppressions=\(suppressions):print_suppressions=0",
    ]

    /// What the sanitizers said, one report per entry: empty when they found nothing.
    static func reports(_ log: String) -> [String] {
        log.components(separatedBy: "=================================================================").dropFirst()
            .filter { $0.contains("ERROR: AddressSanitizer") || $0.contains("ERROR: LeakSanitizer") }
            .map { String($0.prefix(4000)) }
    }

    @Test func theFramePathIsCleanUnderAddressSanitizer() throws {
        let facerelay = try BackgroundBuilds.addressSanitizer.finished()
        let directory = try Package.temporaryDirectory("asan-run")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let variables = Self.environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let relay = try ChildProcess("/usr/bin/env", variables + [
            facerelay, "run", "--input", try Fixtures.path("face_720p.mp4"), "--output", directory + "/out.mp4",
            "--sticker", "cat", "--stats-json", directory + "/stats.json",
        ], logDirectory: directory, name: "relay")
        let status = relay.wait(seconds: 600)
        #expect(Self.reports(relay.stderr).isEmpty, "\(Self.reports(relay.stderr).joined(separator: "\n----\n"))")
        #expect(status == 0, "run ended with \(String(describing: status)): \(relay.stderr.suffix(3000))")
        let stats = try RelayStatsFile(directory + "/stats.json")
        #expect(stats.frames_out >= 170, "relayed \(stats.frames_out) of 180 frames")
    }

    @Test func serveAndTheControlSocketAreCleanUnderAddressSanitizer() throws {
        let facerelay = try BackgroundBuilds.addressSanitizer.finished()
        let serve = try ServeProcess("", name: "serve-asan", executable: facerelay, environment: Self.environment)
        // Ten minutes of 180p: still running while the commands below switch its sticker, then stopped.
        let output = serve.directory + "/out.mp4"
        #expect(try serve.result(["start", try Fixtures.path("face_180p_10min.flv"), output, "--sticker", "cat", "--stream", "asan"])["stream"] as? String == "asan")
        #expect(try serve.result(["stickers"])["stickers"] as? [Any] != nil)
        #expect(try serve.streams()["asan"] != nil)
        let subscriber = try serve.subscribe(["sticker"])
        #expect(try serve.result(["set-sticker", "asan", "sunglasses"])["sticker"] as? String == "sunglasses")
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !subscriber.events().contains(where: { $0["sticker"] as? String == "sunglasses" }) {
            Thread.sleep(forTimeInterval: 0.2)
        }
        #expect(subscriber.events().contains { $0["sticker"] as? String == "sunglasses" }, "\(subscriber.events())")
        #expect(try serve.result(["stats"])["process"] != nil)
        #expect((try serve.ctl(["set-sticker", "nobody", "cat"])["error"] as? [String: Any])?["code"] as? String == "unknown-stream")
        #expect((try serve.ctl(["set-sticker", "asan", "../../etc"])["error"] as? [String: Any])?["code"] as? String == "bad-sticker-name")
        // Lines no client of ours sends: not JSON, not an object, a bad argument, and 70 KB that are
        // still no line (over the 64 KiB limit) when the server refuses them.
        let raw = try run("/usr/bin/python3", ["-c", """
            import socket, sys
            for line in [b'{not json\\n', b'[1, 2]\\n', b'{"id": 1, "command": "stats", "stream": ["x"]}\\n', b'x' * 70000]:
                s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
                try:
                    s.sendall(line)
                except OSError:
                    pass  # the server hung up on the long line: its reply is read below
                print(s.makefile().readline().strip()); s.close()
            """, serve.socket], timeout: 60)
        let codes = String(decoding: raw, as: UTF8.self).split(separator: "\n").map { line in
            ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any])
                .flatMap { $0["error"] as? [String: Any] }?["code"] as? String ?? String(line)
        }
        #expect(codes == ["bad-json", "bad-request", "bad-argument", "line-too-long"])
        #expect(try serve.result(["stop", "asan"])["state"] as? String == "stopping")
        #expect(try serve.waitForStreams(seconds: 120) { $0["asan"] == nil }, "the stream did not end")
        let status = serve.terminate(seconds: 60)
        #expect(Self.reports(serve.log).isEmpty, "\(Self.reports(serve.log).joined(separator: "\n----\n"))")
        #expect(status == 0, "serve ended with \(String(describing: status)): \(serve.log.suffix(3000))")
        #expect(FileManager.default.fileExists(atPath: output))
    }
}
