import Foundation
import Testing
import TestFixtures

/// The dashboard and `/metrics` of a real `facerelay serve`, seen by a real headless Chromium and
/// a plain HTTP client.
@Suite(.serialized) struct DashboardTests {
    /// Two live streams: the page shows both with their pictures; a click on a sticker switches
    /// that stream's output (checked in the recording) and leaves the other as it was; /metrics
    /// carries both streams under the names dashboards and alerts are written against.
    @Test func aClickOnAStickerSwitchesThatStreamsOutput() throws {
        let platform = try NginxRTMP()
        let serve = try ServeProcess("defaults:\n  sticker: sunglasses\n  input_timeout_s: 0\n", name: "serve-dashboard")
        let input = try Fixtures.path("face_720p_close.mp4")
        for name in ["alice", "bob"] {
            _ = try serve.result(["start", platform.url("in-\(name)"), platform.recordedURL("out-\(name)"), "--stream", name])
        }
        // Published in a loop until every check of the running streams is done: how long the page
        // takes depends on the machine's load (a fixed 18 s ran out under load, and the streams had
        // ended before the checks).
        let publishers = try ["alice", "bob"].map { name in
            try ChildProcess("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-re", "-stream_loop", "-1", "-i", input, "-t", "180", "-c", "copy", "-f", "flv", platform.url("in-\(name)")],
                             logDirectory: serve.directory, name: "publish-\(name)")
        }
        let relaying = try serve.waitForStreams(seconds: 30) { streams in
            ["alice", "bob"].allSatisfy { streams[$0]?["state"] as? String == "relaying" }
        }
        try #require(relaying, "both streams relaying: \(serve.log.suffix(2000))")

        let script = Package.root.appendingPathComponent("Tests/RelayIntegrationTests/Support/dashboard.py").path
        let screenshot = serve.directory + "/dashboard.png"
        let browser = try ChildProcess("/usr/bin/python3", [script, "http://127.0.0.1:\(serve.httpPort)/", "alice,bob", "alice", "none", screenshot],
                                       logDirectory: serve.directory, name: "chromium")
        #expect(browser.wait(seconds: 120) == 0, "the page: \(browser.stdout) \(browser.stderr)")
        let seen = try #require(try JSONSerialization.jsonObject(with: Data(browser.stdout.utf8)) as? [String: Any], "\(browser.stdout)")
        #expect(seen["cards"] as? Int == 2)
        let thumbnails = seen["thumbnails"] as? [[Int]] ?? []
        #expect(thumbnails.count == 2 && thumbnails.allSatisfy { $0 == [320, 180] }, "thumbnails \(thumbnails) (a 16:9 picture 320 wide)")
        #expect((seen["stickers"] as? [String] ?? []).contains("cat"), "the picker lists the packages")
        #expect(seen["outputs"] as? [[String]] == [["sending"], ["sending"]], "each card lists its output: \(seen["outputs"] ?? "none")")
        let ingest = (seen["ingest"] as? [String] ?? []).map { Int($0.split(separator: " ").first ?? "") ?? 0 }
        #expect(ingest.count == 2 && ingest.allSatisfy { $0 > 50 }, "each card shows its broadcaster's bitrate: \(seen["ingest"] ?? "none")")
        #expect(try serve.streams()["alice"]?["sticker"] as? String == "none", "the click reached the stream")
        #expect(try serve.streams()["bob"]?["sticker"] as? String == "sunglasses")
        if let keep = ProcessInfo.processInfo.environment["FACERELAY_DASHBOARD_SCREENSHOT"] {
            try? FileManager.default.removeItem(atPath: keep)
            try FileManager.default.copyItem(atPath: screenshot, toPath: keep)
        }

        let metrics = try String(decoding: run("/usr/bin/curl", ["-s", "http://127.0.0.1:\(serve.httpPort)/metrics"]), as: UTF8.self)
        for name in ["alice", "bob"] {
            for stage in ["decode", "track", "composite", "relay", "encode", "mux"] {
                #expect(metrics.contains("facerelay_stream_cpu_seconds_total{stream=\"\(name)\",stage=\"\(stage)\"}"), "\(name) \(stage)")
            }
            for direction in ["in", "out", "dropped"] {
                #expect(metrics.contains("facerelay_stream_frames_total{stream=\"\(name)\",direction=\"\(direction)\"}"))
            }
            let ingestBytes = metrics.split(separator: "\n").first { $0.hasPrefix("facerelay_stream_ingest_bytes_total{stream=\"\(name)\"}") }
                .flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
            #expect(ingestBytes > 100_000, "\(name)'s broadcast read: \(ingestBytes) bytes")
        }
        #expect(metrics.contains("facerelay_stream_sticker_info{stream=\"alice\",sticker=\"none\"} 1"))
        #expect(!metrics.contains("in-alice") && !metrics.contains("out-alice"), "no address in a label")
        let encodeSeconds = metrics.split(separator: "\n").first { $0.hasPrefix("facerelay_stream_cpu_seconds_total{stream=\"bob\",stage=\"encode\"}") }
            .flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
        #expect(encodeSeconds > 0.5, "x264's threads are counted as bob's encode stage: \(encodeSeconds) s")
        let modelBytes = metrics.split(separator: "\n").first { $0.hasPrefix("facerelay_shared_memory_bytes{part=\"landmark_model\"}") }
            .flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
        #expect(modelBytes > 15_000_000, "the landmark model is reported once, as shared: \(modelBytes) bytes")

        // Three more seconds of both streams after the click, then both stopped, then their broadcasts.
        func framesOut(_ streams: [String: [String: Any]]) -> [String: Int] { streams.mapValues { $0["frames_out"] as? Int ?? 0 } }
        let sent = framesOut(try serve.streams())
        let further = try serve.waitForStreams(seconds: 60) { streams in
            ["alice", "bob"].allSatisfy { framesOut(streams)[$0] ?? 0 >= (sent[$0] ?? 0) + 90 }
        }
        let after = framesOut(try serve.streams())
        #expect(further, "both streams relaying on after the click: frames out \(sent), then \(after)")
        for name in ["alice", "bob"] { _ = try serve.ctl(["stop", name]) }
        for publisher in publishers {
            publisher.signal(SIGTERM)
            #expect(publisher.wait(seconds: 40) == 255 && publisher.stderr.isEmpty, "publisher, stopped: \(publisher.stderr)")
        }

        // Alice: glasses, then none from the click on; bob: glasses throughout.
        let original = try MediaReport(input)
        var inputFrames: [Int: [UInt8]] = [:]
        for frame in original.frames { if let index = frame.index { inputFrames[index] = frame.pixels } }
        func changes(_ path: String) throws -> [Int] {
            try MediaReport(path).frames.compactMap { frame in
                guard let index = frame.index, let source = inputFrames[index] else { return nil }
                return ServeTests.changedPixels(frame.pixels, source)
            }
        }
        let alice = try changes(try platform.recording("out-alice")), bob = try changes(try platform.recording("out-bob"))
        try #require(alice.count > 100 && bob.count > 100, "recorded \(alice.count) and \(bob.count) frames")
        let firstGlasses = try #require(alice.firstIndex { $0 > 150 }, "no glasses on alice: \(alice)")
        let lastGlasses = try #require(alice.lastIndex { $0 > 150 })
        #expect(alice[firstGlasses...lastGlasses].filter { $0 > 150 }.count >= (lastGlasses - firstGlasses + 1) * 8 / 10, "alice's glasses before the click: \(alice)")
        #expect(alice.count - lastGlasses > 60 && alice[(lastGlasses + 1)...].allSatisfy { $0 < 30 }, "no glasses after the click: \(alice)")
        #expect(bob.filter { $0 > 150 }.count >= bob.count * 8 / 10, "glasses on \(bob.filter { $0 > 150 }.count) of \(bob.count) of bob's frames")
        #expect(serve.terminate() == 0)
    }

    /// Open to the network, the HTTP port needs a token: without one serve refuses to start; with
    /// one, /metrics and the dashboard answer only to it, and the health check to anyone.
    @Test func aNonLoopbackPortNeedsAToken() throws {
        let directory = try Package.temporaryDirectory("serve-token")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let port = freePort()
        try "control_socket: \(directory)/control.sock\nhttp: 0.0.0.0:\(port)\n".write(toFile: directory + "/open.yml", atomically: true, encoding: .utf8)
        let refused = try ChildProcess(Package.facerelay, ["serve", "--config", directory + "/open.yml"], logDirectory: directory, name: "refused")
        #expect(refused.wait(seconds: 120) == 1)
        #expect(refused.stderr.contains("open.yml: http: 0.0.0.0:\(port) is not a loopback address") && refused.stderr.contains("http_token"), "\(refused.stderr)")

        try "control_socket: \(directory)/c2.sock\nhttp: 0.0.0.0:\(port)\nhttp_token: s3cret-token\n".write(toFile: directory + "/token.yml", atomically: true, encoding: .utf8)
        let guarded = try ChildProcess(Package.facerelay, ["serve", "--config", directory + "/token.yml"], logDirectory: directory, name: "guarded")
        defer { guarded.signal(SIGTERM); guarded.wait(seconds: 30) }
        let deadline = Date().addingTimeInterval(180)
        while Date() < deadline, !NginxRTMP.accepts(port: port), guarded.process.isRunning { Thread.sleep(forTimeInterval: 0.1) }
        func status(_ path: String, _ headers: [String] = [], form: [String] = []) throws -> Int {
            let curl = try ChildProcess("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}"] + headers.flatMap { ["-H", $0] } + form.flatMap { ["-F", $0] }
                                        + ["http://127.0.0.1:\(port)\(path)"], logDirectory: directory, name: "curl")
            curl.wait(seconds: 30)
            return Int(curl.stdout) ?? 0
        }
        #expect(try status("/healthz") == 200)
        #expect(try status("/metrics") == 401)
        #expect(try status("/metrics", ["Authorization: Bearer wrong"]) == 401)
        #expect(try status("/metrics", ["Authorization: Bearer s3cret-token"]) == 200)
        #expect(try status("/metrics?token=s3cret-token") == 200)
        #expect(try status("/") == 303, "the dashboard sends a stranger to its login page")
        #expect(try status("/login") == 200)
        // A sticker upload is the dashboard's too: refused before it is read without the token.
        #expect(try status("/api/stickers", form: ["name=x", "file=@/etc/hostname;filename=sticker.json"]) == 401)
        #expect(try status("/api/stickers", ["Authorization: Bearer s3cret-token"], form: ["name=x", "file=@/etc/hostname;filename=sticker.json"]) == 422)
    }
}
