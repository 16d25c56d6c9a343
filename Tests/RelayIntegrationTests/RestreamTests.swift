import Foundation
import Testing
import TestFixtures

/// One broadcast to several platforms: one encode for all of them, and a platform that goes away
/// neither stalls nor costs frames to another.
@Suite(.serialized) struct RestreamTests {
    @Test func everyPlatformGetsTheSameEncodeAndADeadOneCostsTheOtherNothing() throws {
        let ingest = try NginxRTMP()
        let steady = try NginxRTMP()
        var flaky: NginxRTMP? = try NginxRTMP()
        let flakyPort = flaky!.port
        let directory = try Package.temporaryDirectory("restream")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path("face_720p_bench.mp4")
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", ingest.url("in"), "--sticker", "sunglasses",
                                                          "--output", steady.recordedURL("steady"), "--output", flaky!.recordedURL("flaky"),
                                                          "--stats-json", directory + "/stats.json"],
                                     logDirectory: directory, name: "relay")
        try ingest.waitForPlayer("in")
        let publisher = try ChildProcess("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-re", "-i", input, "-c", "copy", "-f", "flv", ingest.url("in")],
                                         logDirectory: directory, name: "publisher")
        let published = Date()
        // One platform is away for 8 s, from 3 s into the 20 s broadcast.
        Thread.sleep(forTimeInterval: 3)
        flaky!.kill()
        flaky = nil
        Thread.sleep(forTimeInterval: 8)
        let back = Date()
        flaky = try NginxRTMP(port: flakyPort)
        #expect(publisher.wait(seconds: 60) == 0, "publisher: \(publisher.stderr)")
        #expect(relay.wait(seconds: 30) == 0, "facerelay: \(relay.stderr)")
        #expect(relay.stderr.contains("output failed, reconnecting") && relay.stderr.contains("output reconnected"), "\(relay.stderr)")

        // The steady platform has every frame the relay sent, in order: a gap only where the relay
        // itself let a frame go (a stage that fell behind), never for the other platform.
        let stats = try RelayStatsFile(directory + "/stats.json")
        let whole = try MediaReport(try steady.recording("steady"))
        let indices = whole.frames.compactMap(\.index)
        #expect(indices.count == whole.frames.count && indices.count == stats.frames_out && stats.frames_out >= 400,
                "\(indices.count) frames on the steady platform, \(stats.frames_out) sent")
        #expect(zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 })
        #expect(frameGaps(indices).count <= stats.frames_dropped, "gaps on the steady platform: \(frameGaps(indices)), \(stats.frames_dropped) dropped")
        #expect(whole.audio?.codec == "aac")

        // The returning platform is sent to again within 5 s, from a keyframe: its first frame decodes.
        let resumed = try MediaReport(try flaky!.recording("flaky"))
        let resumedIndices = resumed.frames.compactMap(\.index)
        let frameAtReturn = Int(back.timeIntervalSince(published) * 30)
        #expect((resumedIndices.first ?? .max) <= frameAtReturn + 150, "back at frame \(resumedIndices.first ?? -1), returned at about \(frameAtReturn)")
        #expect(resumed.frames.first?.index != nil, "the returning platform's recording starts with a whole picture")
        #expect(resumedIndices.count >= 100, "\(resumedIndices.count) frames after the platform came back")
        #expect(frameGaps(resumedIndices).count <= stats.frames_dropped, "gaps after the return: \(frameGaps(resumedIndices))")
        #expect(resumed.audio?.codec == "aac")

        // One encode: the same frame is the same picture, sticker and all, on both platforms.
        let steadyFrames = Dictionary(whole.frames.compactMap { frame in frame.index.map { ($0, frame.pixels) } }) { first, _ in first }
        let shared = resumed.frames.filter { $0.index.map { steadyFrames[$0] != nil } ?? false }
        #expect(shared.count >= 100)
        #expect(shared.allSatisfy { steadyFrames[$0.index!] == $0.pixels }, "the platforms got different pictures of the same frames")

        // What the relay read is the broadcast itself: the file's audio and video (93 % of the MP4)
        // in FLV tags, less what went by before the relay was playing.
        let mediaBytes = try #require(try FileManager.default.attributesOfItem(atPath: input)[.size] as? Int)
        #expect(Double(stats.ingest_bytes) > 0.85 * Double(mediaBytes) && Double(stats.ingest_bytes) < 1.1 * Double(mediaBytes),
                "\(stats.ingest_bytes) bytes read of a \(mediaBytes)-byte broadcast")
        #expect(stats.ingest_bitrate_kbps > 0 && abs(stats.ingest_bitrate_kbps - Double(stats.ingest_bytes) * 8 / stats.duration_s / 1000) < 1)

        let outputs = stats.outputs ?? []
        #expect(outputs.count == 2)
        if outputs.count == 2 {
            #expect(outputs[0].frames_missed == 0 && outputs[0].reconnects == 0 && outputs[0].frames_sent == stats.frames_out)
            #expect(outputs[1].reconnects == 1 && outputs[1].frames_missed >= 200, "\(outputs[1])")
            #expect(outputs[1].frames_sent + outputs[1].frames_missed == outputs[0].frames_sent)
            #expect(outputs.allSatisfy { !$0.address.contains("steady") && !$0.address.contains("flaky") }, "addresses are masked: \(outputs)")
        }
    }

    /// `serve` sends a route with `upstreams` to both platforms and records it; `ctl add-output`
    /// adds a third destination mid-stream, which starts from a keyframe, and `remove-output` ends
    /// one; the other outputs never notice. Webhooks: a real HTTP receiver gets the events, each
    /// signed as documented (checked with Python's hmac); a second receiver that accepts
    /// connections and never answers costs the stream nothing.
    @Test func serveRestreamsARouteAndOutputsComeAndGoLive() throws {
        let first = try NginxRTMP(), second = try NginxRTMP()
        let httpPort = freePort(), receiverPort = freePort(), silentPort = freePort()
        let ingest = try NginxRTMP.facerelayIngest(facerelayHTTP: httpPort)
        let directory = try Package.temporaryDirectory("serve-restream")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let received = directory + "/received.jsonl"
        let receiver = try ChildProcess("/usr/bin/python3", [Package.root.appendingPathComponent("Tests/RelayIntegrationTests/Support/webhook_receiver.py").path,
                                                             String(receiverPort), "hook-secret", received], logDirectory: directory, name: "receiver")
        defer { receiver.signal(SIGTERM) }
        // Accepts connections (the kernel does, from its backlog) and never reads or answers.
        let silent = try ChildProcess("/usr/bin/python3", ["-c", "import socket,sys,time; s=socket.socket(); s.bind(('127.0.0.1',int(sys.argv[1]))); s.listen(64); time.sleep(600)",
                                                           String(silentPort)], logDirectory: directory, name: "silent")
        defer { silent.signal(SIGTERM) }
        Thread.sleep(forTimeInterval: 0.5)
        let serve = try ServeProcess("""
            rtmp:
              ingest: rtmp://127.0.0.1:\(ingest.port)
              applications:
                live:
                  upstreams: ["\(first.recordedURL("{key}-a"))", "\(second.recordedURL("{key}-b"))"]
                  record: \(directory)/rec/{key}/%Y%m%d-%H%M%S.mkv
            webhooks:
              - url: http://127.0.0.1:\(receiverPort)/facerelay?token=t0ken
                events: [stream, output]
                secret: hook-secret
              - url: http://127.0.0.1:\(silentPort)/never
                secret: other-secret
            """, httpPort: httpPort, name: "serve-restream")
        let input = try Fixtures.path("face_720p_close.mp4")
        let publisher = try ChildProcess("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-re", "-i", input, "-t", "12", "-c", "copy", "-f", "flv", ingest.url("alice")],
                                         logDirectory: serve.directory, name: "publish-alice")
        let relaying = try serve.waitForStreams(seconds: 20) { $0["alice"]?["state"] as? String == "relaying" }
        try #require(relaying, "relaying: \(serve.log.suffix(2000))")
        let outputs = try serve.streams()["alice"]?["outputs"] as? [[String: Any]] ?? []
        #expect(outputs.count == 3 && outputs.allSatisfy { $0["state"] as? String == "sending" }, "\(outputs)")
        #expect(outputs.prefix(2).allSatisfy { ($0["address"] as? String)?.hasSuffix("/record/****") == true }, "masked: \(outputs)")

        Thread.sleep(forTimeInterval: 3)
        // The broadcaster's rate over the last second: a live publish of a file that averages
        // about 210 kbit/s (its keyframes make any one second vary).
        let ingestKbps = try serve.streams()["alice"]?["ingest_bitrate_kbps"] as? Double ?? 0
        #expect(ingestKbps > 20 && ingestKbps < 2000, "ingest \(ingestKbps) kbit/s")
        let addition = try serve.result(["add-output", "alice", second.recordedURL("alice-c")])
        #expect(addition["output"] as? Int == 3)
        func refusal(_ arguments: [String]) throws -> String? {
            ((try serve.ctl(arguments))["error"] as? [String: Any])?["code"] as? String
        }
        #expect(try refusal(["add-output", "alice", first.recordedURL("alice-a")]) == "duplicate-output")
        #expect(try refusal(["add-output", "alice", "rtmp://nohost"]) == "bad-output")
        #expect(try refusal(["add-output", "bob", second.recordedURL("bob-c")]) == "unknown-stream")
        Thread.sleep(forTimeInterval: 2)
        #expect(try serve.result(["remove-output", "alice", second.recordedURL("alice-b")])["output"] as? Int == 1)
        #expect(try refusal(["remove-output", "alice", second.recordedURL("alice-b")]) == "unknown-output")
        let states = (try serve.streams()["alice"]?["outputs"] as? [[String: Any]] ?? []).map { $0["state"] as? String ?? "" }
        #expect(states == ["sending", "removed", "sending", "sending"], "\(states)")
        // Each output has its series, labelled by number, never by address.
        let metrics = try String(decoding: run("/usr/bin/curl", ["-s", "http://127.0.0.1:\(serve.httpPort)/metrics"]), as: UTF8.self)
        #expect(metrics.contains("facerelay_stream_output_up{stream=\"alice\",output=\"0\"} 1"), "\(metrics)")
        #expect(metrics.contains("facerelay_stream_output_up{stream=\"alice\",output=\"1\"} 0"))
        #expect(metrics.contains("facerelay_stream_output_bytes_total{stream=\"alice\",output=\"3\"}"))
        #expect(!metrics.contains("alice-a") && !metrics.contains("record/"))

        // The silent receiver's deliveries are still being tried while the stream runs in real time.
        let hooks = (try serve.result(["stats"])["process"] as? [String: Any])?["webhooks"] as? [[String: Any]] ?? []
        #expect(hooks.count == 2 && hooks[1]["delivered"] as? Int == 0, "\(hooks)")
        #expect((hooks.first?["url"] as? String)?.contains("t0ken") == false, "the receiver's token is masked: \(hooks)")

        #expect(publisher.wait(seconds: 30) == 0, "publisher: \(publisher.stderr)")
        #expect(try serve.waitForStreams(seconds: 20) { $0.isEmpty })
        let whole = try MediaReport(try first.recording("alice-a"))
        let removed = try MediaReport(try second.recording("alice-b"))
        let added = try MediaReport(try second.recording("alice-c"))
        let wholeIndices = whole.frames.compactMap(\.index), removedIndices = removed.frames.compactMap(\.index)
        let addedIndices = added.frames.compactMap(\.index)
        // From the broadcast's first frame: the relay joined the ingest before nginx let the
        // publish through (`on_play`'s connection closed before `on_publish` is answered); with the
        // answers racing, a loaded machine started some runs at the next keyframe, frame 60.
        #expect(wholeIndices.count == whole.frames.count && (wholeIndices.first ?? 99) <= 1 && wholeIndices.count >= 330,
                "the untouched output: \(wholeIndices.count) frames from \(wholeIndices.first ?? -1)")
        #expect((removedIndices.last ?? .max) < (wholeIndices.last ?? 0) - 60, "the removed output ended at \(removedIndices.last ?? -1)")
        // A frame the relay itself let go (its live input's queue, at the end of the publish or on
        // a machine loaded by other tests) is missing from every output alike; adding and removing
        // outputs costs the untouched one none: no frame another output got while outputs changed
        // is missing from it, and no run of 4 frames or more (a stall of 130 ms on the frame thread
        // or at the encoder) is missing from all of them; a CI machine loaded by the tracker's tests
        // dropped single frames and pairs.
        let changes = ((addedIndices.first ?? 0) - 30)...((removedIndices.last ?? 0) + 30)
        let wholeGaps = frameGaps(wholeIndices)
        let untouched = Set(wholeIndices), removedSet = Set(removedIndices), addedSet = Set(addedIndices)
        let lostByTheUntouchedAlone = changes.filter { !untouched.contains($0) && (removedSet.contains($0) || addedSet.contains($0)) }
        #expect(lostByTheUntouchedAlone.isEmpty, "frames the untouched output lost while outputs changed, which another output got: \(lostByTheUntouchedAlone); its gaps: \(wholeGaps)")
        let stalls = zip(wholeIndices, wholeIndices.dropFirst()).filter { $1 - $0 > 4 && changes.contains($0) }
        #expect(stalls.isEmpty, "runs of frames missing from every output while outputs changed: \(stalls)")
        #expect(Set(frameGaps(removedIndices)).isSubset(of: wholeGaps))
        // The added output starts at the keyframe it asked for: its first frame is a whole picture.
        #expect(added.frames.first?.index != nil && (addedIndices.first ?? 0) > 60 && addedIndices.count >= 150,
                "the added output: \(addedIndices.count) frames from \(added.frames.first?.index ?? -1)")
        #expect(Set(frameGaps(addedIndices)).isSubset(of: wholeGaps), "gaps of the added output alone: \(frameGaps(addedIndices))")
        let wholeFrames = Dictionary(whole.frames.compactMap { frame in frame.index.map { ($0, frame.pixels) } }) { first, _ in first }
        #expect(added.frames.allSatisfy { frame in frame.index.map { wholeFrames[$0] == frame.pixels } ?? false }, "one encode for every output")
        #expect(!serve.log.contains("alice-a") && !serve.log.contains("alice-c"), "a platform key reached the log")

        // The route's recording: one segment (600 s by default), whole and playable.
        let recorded = try FileManager.default.contentsOfDirectory(atPath: directory + "/rec/alice")
        #expect(recorded.count == 1, "\(recorded)")
        if let file = recorded.first {
            let recording = try MediaReport(directory + "/rec/alice/" + file)
            #expect(recording.frames.compactMap(\.index) == wholeIndices, "the recording has what the untouched platform got")
        }

        // Webhooks: every delivery signed, of the classes asked for, to the address as configured.
        func deliveries() -> [[String: Any]] {
            ((try? String(contentsOfFile: received, encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }
        let deadline = Date().addingTimeInterval(10)
        while !deliveries().contains(where: { ($0["body"] as? [String: Any])?["state"] as? String == "ended" }), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.2)
        }
        let got = deliveries()
        let bodies = got.compactMap { $0["body"] as? [String: Any] }
        #expect(!got.isEmpty && got.allSatisfy { $0["signature_valid"] as? Bool == true }, "\(got)")
        #expect(got.allSatisfy { $0["event"] as? String == ($0["body"] as? [String: Any])?["event"] as? String && $0["content_type"] as? String == "application/json" })
        #expect(got.allSatisfy { $0["path"] as? String == "/facerelay?token=t0ken" })
        #expect(bodies.contains { $0["event"] as? String == "stream" && $0["state"] as? String == "started" && $0["stream"] as? String == "alice" }, "\(bodies)")
        #expect(bodies.contains { $0["event"] as? String == "output" && $0["output"] as? Int == 1 && $0["state"] as? String == "removed" }, "\(bodies)")
        #expect(bodies.contains { $0["event"] as? String == "stream" && $0["state"] as? String == "ended" }, "\(bodies)")
        #expect(!bodies.contains { ["expression", "sticker", "stats"].contains($0["event"] as? String ?? "") }, "a class the receiver did not ask for")
        #expect(!bodies.contains { ($0["address"] as? String).map { $0.hasPrefix("rtmp") && $0.contains("alice") } == true }, "platform keys are masked in events")
    }

    /// A recording beside a file output, the input paced as a live one (`--realtime`): it rotates
    /// at the keyframe that ends each segment of stream time, every kept segment plays on its own
    /// from its first frame, with its audio, the kept ones follow on without a gap to the stream's
    /// last frame, and the oldest files (an earlier recording's first) go once the recording passes
    /// its disk limit. The other output gets every frame.
    @Test func aRecordingRotatesIntoPlayableSegmentsWithinItsDiskLimit() throws {
        let directory = try Package.temporaryDirectory("recording")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let folder = directory + "/rec"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let stale = folder + "/show-20200101-000000.mkv"
        try Data(repeating: 0, count: 2_000_000).write(to: URL(fileURLWithPath: stale))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: stale)
        let input = try Fixtures.path("face_720p.mp4")
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", input, "--realtime", "--output", directory + "/whole.mkv",
                                                          "--output", folder + "/show-%Y%m%d-%H%M%S.mkv?segment_s=2&max_disk_mb=1",
                                                          "--keyframe-interval", "1", "--bitrate", "6000"], logDirectory: directory, name: "relay")
        #expect(relay.wait(seconds: 120) == 0, "facerelay: \(relay.stderr)")
        #expect(try MediaReport(directory + "/whole.mkv").frames.compactMap(\.index) == Array(0..<180))
        #expect(!FileManager.default.fileExists(atPath: stale), "the earlier recording's file is the first to go")

        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("show-") && $0.hasSuffix(".mkv") }
        let segments = try names.map { try MediaReport(folder + "/" + $0) }.sorted { ($0.frames.first?.index ?? 0) < ($1.frames.first?.index ?? 0) }
        // 6 s in 2 s segments makes three, of about 1.5 MB at 6000 kbit/s: 1 MB holds fewer.
        #expect(segments.count >= 1 && segments.count < 3, "\(names)")
        for segment in segments {
            let indices = segment.frames.compactMap(\.index)
            #expect(segment.frames.first?.index != nil && indices.count == segment.frames.count, "\(segment.path) starts with a whole picture")
            #expect(frameGaps(indices).isEmpty && (indices.first ?? 1) % 60 == 0, "\(segment.path): \(indices.first ?? -1)...\(indices.last ?? -1)")
            #expect(indices.count == 60 || indices.last == 179, "\(segment.path): \(indices.count) frames")
            #expect(segment.audio?.codec == "aac")
        }
        let kept = segments.flatMap { $0.frames.compactMap(\.index) }
        #expect(kept.last == 179 && frameGaps(kept).isEmpty, "the kept segments follow on to the end: \(frameGaps(kept))")
    }
}
