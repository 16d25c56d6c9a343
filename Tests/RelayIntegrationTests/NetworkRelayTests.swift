import Foundation
import Testing
import TestFixtures

/// `facerelay run` between real network peers: nginx-rtmp, ffmpeg as broadcaster and recorder.
@Suite(.serialized) struct NetworkRelayTests {
    @Test func rtmpToRtmpThroughNginx() throws {
        let nginx = try NginxRTMP()
        let directory = try Package.temporaryDirectory("rtmp")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path("face_720p.flv")
        let recording = directory + "/recorded.flv"
        // nginx-rtmp holds players of a stream until it is published, so start order is free.
        let recorder = try ChildProcess("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-i", nginx.url("out"), "-t", "8", "-c", "copy", "-y", recording],
                                        logDirectory: directory, name: "recorder")
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", nginx.url("in"), "--output", nginx.url("out"),
                                                          "--stats-json", directory + "/stats.json", "--stats-interval", "2"],
                                     logDirectory: directory, name: "relay")
        try nginx.waitForPlayer("in")
        let publisher = try ChildProcess("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-re", "-i", input, "-c", "copy", "-f", "flv", nginx.url("in")],
                                         logDirectory: directory, name: "publisher")
        #expect(publisher.wait(seconds: 60) == 0, "publisher: \(publisher.stderr)")
        // The publisher has stopped: the relay ends the stream cleanly and exits 0.
        #expect(relay.wait(seconds: 30) == 0, "facerelay: \(relay.stderr)")
        #expect(recorder.wait(seconds: 30) == 0, "recorder: \(recorder.stderr)")

        let report = try MediaReport(recording)
        expectFaithfulRelay(report, of: try ReferenceReports.report(input), expectAudio: true)
        // Eight seconds recorded at 30 fps.
        #expect(abs(report.frames.count - 240) <= 240 * 3 / 100, "\(report.frames.count) frames recorded")
        #expect(relay.stderr.contains("stats frames_in="), "periodic stats line: \(relay.stderr)")
        let stats = try RelayStatsFile(directory + "/stats.json")
        #expect(stats.frames_out >= 350 && stats.frames_in == stats.frames_out + stats.frames_dropped)
    }

    @Test func srtListenerToFile() throws {
        let directory = try Package.temporaryDirectory("srt")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path("face_720p.ts")
        let output = directory + "/relayed.mkv"
        let (relay, broadcaster) = try srtBroadcast(input, to: output, directory: directory)
        #expect(broadcaster.wait(seconds: 60) == 0, "broadcaster: \(broadcaster.stderr)")
        // The broadcaster hung up: end of stream.
        #expect(relay.wait(seconds: 30) == 0, "facerelay: \(relay.stderr)")
        let report = try MediaReport(output)
        expectFaithfulRelay(report, of: try ReferenceReports.report(input), expectAudio: true)
        #expect(report.frames.count >= 340, "\(report.frames.count) of 360 frames")
        // MPEG-TS starts at the encoder's clock (1.4 s here), not at zero: nothing was missed.
        #expect(!relay.stderr.contains("joined the input"), "\(relay.stderr)")
    }

    /// A relay held off the CPU for a moment (a host that stalls, a paused VM): the frames of a live
    /// input that came meanwhile beyond its queue are dropped, each one counted, and the face stage,
    /// which lightened its work while they queued, fits every frame again once the queue is calm.
    /// Counted from the queue between pulls, 24 frames gone were reported as 14; and with the
    /// dropped frames taken for frames still waiting, the stage would never have found the queue calm.
    @Test func aRelayHeldOffTheCPUCountsWhatItDroppedAndTracksFullyAgain() throws {
        let directory = try Package.temporaryDirectory("stall")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path("face_720p.ts")
        let output = directory + "/relayed.mkv"
        let (relay, broadcaster) = try srtBroadcast(input, to: output, relayArguments: ["--sticker", "sunglasses", "--stats-json", directory + "/stats.json"],
                                                    directory: directory)
        Thread.sleep(forTimeInterval: 4)
        relay.signal(SIGSTOP)
        Thread.sleep(forTimeInterval: 1.5)
        relay.signal(SIGCONT)
        #expect(broadcaster.wait(seconds: 60) == 0, "broadcaster: \(broadcaster.stderr)")
        #expect(relay.wait(seconds: 30) == 0, "facerelay: \(relay.stderr)")
        let stats = try RelayStatsFile(directory + "/stats.json")
        let indices = try MediaReport(output).frames.compactMap(\.index)
        let figures = "in \(stats.frames_in), out \(stats.frames_out), dropped \(stats.frames_dropped), \(indices.count) in the file, "
            + "gaps \(frameGaps(indices)); load level \(stats.load_level) at the end"
        print("held off the CPU for 1.5 s: \(figures)")
        // Every frame counted: one that reached the queue's door as the pull made room for it may be counted
        // gone too (RelayCounters.noteFramesGone), never one missed. Counted between pulls, ten were missed.
        let uncounted = stats.frames_in - stats.frames_out - stats.frames_dropped
        #expect(stats.frames_dropped >= 10 && (uncounted == 0 || uncounted == -1) && indices.count == stats.frames_out
                    && zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 }, "\(figures)")
        #expect(stats.load_level == 0, "\(figures)")
    }

    /// A relay started after the broadcast: it says how much it missed, from the first frame's
    /// timestamp (RTMP stamps a broadcast from zero), and relays from the next keyframe on.
    @Test func aRelayThatJoinsLateSaysHowManyFramesItMissed() throws {
        let nginx = try NginxRTMP()
        let directory = try Package.temporaryDirectory("late")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path("face_720p.flv")
        let publisher = try ChildProcess("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-re", "-i", input, "-c", "copy", "-f", "flv", nginx.url("in")],
                                         logDirectory: directory, name: "publisher")
        Thread.sleep(forTimeInterval: 3)
        let output = directory + "/relayed.mp4"
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", nginx.url("in"), "--output", output, "--stats-json", directory + "/stats.json"],
                                     logDirectory: directory, name: "relay")
        #expect(publisher.wait(seconds: 30) == 0, "publisher: \(publisher.stderr)")
        #expect(relay.wait(seconds: 30) == 0, "facerelay: \(relay.stderr)")
        let first = try #require(try MediaReport(output).frames.first?.index, "no frame relayed")
        let stats = try RelayStatsFile(directory + "/stats.json")
        // Within the two frames B-frames put the broadcast's first picture past zero.
        #expect(first >= 60 && abs(stats.frames_missed_at_start - first) <= 3, "first frame \(first), \(stats.frames_missed_at_start) said missed")
        #expect(relay.stderr.contains("about \(stats.frames_missed_at_start) frames were missed before the relay was listening"), "\(relay.stderr)")
    }

    @Test func unreachableRtmpServerFailsFast() throws {
        let directory = try Package.temporaryDirectory("unreachable")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let started = Date()
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", "rtmp://127.0.0.1:\(freePort())/live/key", "--output", directory + "/o.flv",
                                                          "--input-timeout", "5"], logDirectory: directory, name: "relay")
        #expect(relay.wait(seconds: 30) == 1, "facerelay: \(relay.stderr)")
        #expect(relay.stderr.contains("cannot read input rtmp://127.0.0.1"), "\(relay.stderr)")
        #expect(Date().timeIntervalSince(started) < 10)
    }

    @Test func streamKeyNobodyPublishesTimesOut() throws {
        let nginx = try NginxRTMP()
        let directory = try Package.temporaryDirectory("nokey")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let started = Date()
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", nginx.url("nobody"), "--output", directory + "/o.flv",
                                                          "--input-timeout", "3"], logDirectory: directory, name: "relay")
        #expect(relay.wait(seconds: 30) == 1, "facerelay: \(relay.stderr)")
        // Usually the 3 s time-out; on a loaded machine nginx may end the idle play first.
        #expect(relay.stderr.contains("no video from \(nginx.url("nobody")) within 3 s")
            || relay.stderr.contains("no video from \(nginx.url("nobody")): the server ended the stream before any data came"), "\(relay.stderr)")
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed >= 3 && elapsed < 15, "bounded wait took \(elapsed) s")
    }

    @Test func srtListenerWithoutBroadcasterTimesOut() throws {
        let directory = try Package.temporaryDirectory("srt-idle")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", "srt://127.0.0.1:\(freePort(udp: true))?mode=listener",
                                                          "--output", directory + "/o.mkv", "--input-timeout", "2"],
                                     logDirectory: directory, name: "relay")
        #expect(relay.wait(seconds: 30) == 1, "facerelay: \(relay.stderr)")
        #expect(relay.stderr.contains("no broadcaster sent video"), "\(relay.stderr)")
    }
}

/// The platform going away mid-stream: the relay keeps the input, rebuilds its output and carries on.
@Suite(.serialized) struct UpstreamReconnectTests {
    @Test func deadUpstreamIsReconnected() throws {
        let ingest = try NginxRTMP()
        var platform: NginxRTMP? = try NginxRTMP()
        let platformPort = platform!.port
        let directory = try Package.temporaryDirectory("reconnect")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path("face_720p_bench.mp4")
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", ingest.url("in"), "--output", platform!.url("out"),
                                                          "--stats-json", directory + "/stats.json"],
                                     logDirectory: directory, name: "relay")
        try ingest.waitForPlayer("in")
        let publisher = try ChildProcess("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-re", "-i", input, "-c", "copy", "-f", "flv", ingest.url("in")],
                                         logDirectory: directory, name: "publisher")
        Thread.sleep(forTimeInterval: 4)
        platform!.kill()
        platform = nil
        Thread.sleep(forTimeInterval: 1)
        platform = try NginxRTMP(port: platformPort)
        let recording = directory + "/after-reconnect.flv"
        // The relay may publish again (first retry after 1 s) before the recorder plays, which then
        // starts at the next keyframe, up to 2 s later: 8 s of recording hold at least 6 s of stream.
        let recorder = try ChildProcess("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-i", platform!.url("out"), "-t", "8", "-c", "copy", "-y", recording],
                                        logDirectory: directory, name: "recorder")
        #expect(publisher.wait(seconds: 60) == 0, "publisher: \(publisher.stderr)")
        #expect(relay.wait(seconds: 30) == 0, "facerelay: \(relay.stderr)")
        #expect(recorder.wait(seconds: 30) == 0, "recorder: \(recorder.stderr)")
        #expect(relay.stderr.contains("output failed, reconnecting") && relay.stderr.contains("output reconnected"), "\(relay.stderr)")
        let stats = try RelayStatsFile(directory + "/stats.json")
        #expect(stats.frames_out > 400, "\(stats.frames_out) frames relayed of 600")

        // What the platform receives after it came back is the input's own stream, in order.
        let report = try MediaReport(recording)
        let indices = report.frames.compactMap(\.index)
        #expect(report.frames.count >= 150, "\(report.frames.count) frames after the reconnect")
        #expect(indices.count >= report.frames.count - 1 && zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 })
        #expect((indices.first ?? 0) > 120, "the stream resumed where the input was, not from its start")
        #expect(report.audio?.codec == "aac")
    }
}
