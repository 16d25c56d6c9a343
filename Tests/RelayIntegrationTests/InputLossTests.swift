import Foundation
import Testing
import TestFixtures

/// A broadcaster who leaves, stalls or comes back, through a real nginx-rtmp: `--idle-timeout` and
/// `--input-grace` in `run`, `input_grace_s` in `serve`.
@Suite(.serialized) struct InputLossTests {
    /// The face video is 12 s at 30 fps with a keyframe every 2 s: the first publish sends frames
    /// 0-119, the second starts at the keyframe of frame 182 and sends about 120 more. (Seeking
    /// further would send the frames from that keyframe to the seek point in a burst, faster than
    /// a live relay takes them.)
    static let firstPublish = ["-t", "4"]
    static let secondPublish = ["-ss", "6.1", "-t", "4"]

    /// Publishes over RTMP as FLV, or calls an SRT listener with MPEG-TS.
    static func publish(_ input: String, to url: String, _ options: [String], codec: [String] = ["-c", "copy"],
                        in directory: String, name: String) throws -> ChildProcess {
        try ChildProcess("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-re"] + options.prefix(2) + ["-i", input] + options.dropFirst(2)
                         + codec + ["-f", url.hasPrefix("srt:") ? "mpegts" : "flv", url], logDirectory: directory, name: name)
    }

    /// A broadcaster coming back with a smaller picture (its encoder's settings changed).
    static let smallerPicture = ["-vf", "scale=854:480", "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-c:a", "copy"]

    /// One output holding both publishes: the first one's frames, then after a pause as long as the
    /// broadcaster was away, the second one's, each in order, with time never going back and the
    /// audio where it was against the video.
    static func expectBothPublishesInOneOutput(_ report: MediaReport, pause: ClosedRange<Double>, input: String = "face_720p.flv",
                                               sourceLocation: SourceLocation = #_sourceLocation) throws {
        let numbered = report.frames.filter { $0.index != nil }
        #expect(numbered.count >= report.frames.count - 2, "unreadable frames: \(report.frames.count - numbered.count)", sourceLocation: sourceLocation)
        let first = numbered.filter { $0.index! < 150 }, second = numbered.filter { $0.index! >= 150 }
        try #require(first.count >= 60 && second.count >= 100, "\(first.count) frames of the first publish, \(second.count) of the second: \(second.map { $0.index! })", sourceLocation: sourceLocation)
        #expect(numbered.prefix(first.count).allSatisfy { $0.index! < 150 }, "the publishes are interleaved", sourceLocation: sourceLocation)
        for part in [first, second] {
            let indices = part.map { $0.index! }
            #expect(zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 }, "frames out of order: \(indices)", sourceLocation: sourceLocation)
            #expect(indices.last! - indices.first! + 1 - indices.count <= 2, "frames missing within a publish: \(indices)", sourceLocation: sourceLocation)
        }
        let times = report.frames.map(\.seconds)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "timestamps go back", sourceLocation: sourceLocation)
        let gap = second.first!.seconds - first.last!.seconds
        #expect(pause.contains(gap), "the second publish follows the first after \(gap) s", sourceLocation: sourceLocation)
        #expect(report.audio?.codec == "aac", sourceLocation: sourceLocation)
        let reference = try ReferenceReports.report(try Fixtures.path(input)).audioVideoOffsets()
        let byMarker = report.audioVideoOffsetsByMarker()
        let offsets = byMarker.values
        let expected = reference.sorted()[reference.count / 2]
        let markerTimes = Fixtures.beepFrames(upTo: 400).map { marker in "\(marker): \(report.frames.first { $0.index == marker }?.seconds ?? -1)" }
        #expect(offsets.count >= 3 && offsets.allSatisfy { abs($0 - expected) < 0.05 },
                "A/V offsets by marker frame \(byMarker.sorted { $0.key < $1.key }) against the input's \(expected) s; marker frames at \(markerTimes), beeps at \(report.beepOnsets)",
                sourceLocation: sourceLocation)
    }

    /// The second publish as it was sent, or with a smaller picture, which is scaled to the size
    /// the output was opened with.
    @Test(arguments: [false, true])
    func aPublisherBackWithinTheGracePeriodContinuesTheSameOutput(returnsSmaller: Bool) throws {
        let nginx = try NginxRTMP()
        let directory = try Package.temporaryDirectory("grace")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path("face_720p.flv")
        let output = directory + "/relayed.mp4"
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", nginx.url("in"), "--output", output, "--input-grace", "5",
                                                          "--stats-json", directory + "/stats.json"], logDirectory: directory, name: "relay")
        try nginx.waitForPlayer("in")
        let first = try Self.publish(input, to: nginx.url("in"), Self.firstPublish, in: directory, name: "first")
        #expect(first.wait(seconds: 30) == 0, "first publisher: \(first.stderr)")
        Thread.sleep(forTimeInterval: 2)
        #expect(relay.process.isRunning, "the relay ended with its publisher: \(relay.stderr)")
        let second = try Self.publish(input, to: nginx.url("in"), Self.secondPublish, codec: returnsSmaller ? Self.smallerPicture : ["-c", "copy"],
                                      in: directory, name: "second")
        #expect(second.wait(seconds: 30) == 0, "second publisher: \(second.stderr)")
        let secondEnded = Date()
        #expect(relay.wait(seconds: 30) == 0, "facerelay: \(relay.stderr)")
        let waited = Date().timeIntervalSince(secondEnded)
        #expect(waited > 4 && waited < 15, "the relay ended \(waited) s after the last publish, with a grace period of 5 s")
        #expect(relay.stderr.contains("input back after") && relay.stderr.contains("continuing the same output"), "\(relay.stderr)")
        #expect(relay.stderr.contains("did not come back within its grace period of 5.0 s"), "\(relay.stderr)")

        let report = try MediaReport(output)
        try Self.expectBothPublishesInOneOutput(report, pause: 1.5...5)
        let video = report.streams.first { $0.type == "video" }
        #expect(video?.width == 1280 && video?.height == 720, "\(String(describing: video))")
        let stats = try RelayStatsFile(directory + "/stats.json")
        #expect(abs(stats.frames_out - report.frames.count) <= 2, "\(stats.frames_out) frames sent, \(report.frames.count) in the file")
    }

    /// A broadcaster back after a pause longer than the audio-stopped limit (2 s), whose audio
    /// starts 0.4 s after its video: the pause is no silence of the audio, so the returning audio
    /// is relayed, as far from its video as it was sent. Counting the pause as silence (measuring
    /// from the first input's last packet) gave the audio up for the rest of the stream.
    @Test func aReturningPublishWhoseAudioStartsLateKeepsItsAudio() throws {
        let nginx = try NginxRTMP()
        let directory = try Package.temporaryDirectory("grace-late-audio")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path("face_720p.flv")
        let output = directory + "/relayed.mp4"
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", nginx.url("in"), "--output", output, "--input-grace", "5"],
                                     logDirectory: directory, name: "relay")
        try nginx.waitForPlayer("in")
        let first = try Self.publish(input, to: nginx.url("in"), Self.firstPublish, in: directory, name: "first")
        #expect(first.wait(seconds: 30) == 0, "first publisher: \(first.stderr)")
        Thread.sleep(forTimeInterval: 2.5)
        let lateAudio = 0.4
        let second = try ChildProcess("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-re", "-ss", "6.1", "-i", input,
                                                          "-re", "-ss", "6.1", "-itsoffset", String(lateAudio), "-i", input,
                                                          "-map", "0:v", "-map", "1:a", "-t", "4", "-c", "copy", "-f", "flv", nginx.url("in")],
                                      logDirectory: directory, name: "second")
        #expect(second.wait(seconds: 30) == 0, "second publisher: \(second.stderr)")
        #expect(relay.wait(seconds: 30) == 0, "facerelay: \(relay.stderr)")
        #expect(relay.stderr.contains("input back after"), "\(relay.stderr)")
        #expect(!relay.stderr.contains("audio stopped"), "\(relay.stderr)")

        let report = try MediaReport(output)
        let expected = try ReferenceReports.report(input).audioVideoOffsets().sorted()[1]
        let offsets = report.audioVideoOffsetsByMarker()
        // Markers 30 and 90 are the first publish's; 210 and 270 (7 s and 9 s in) the second's.
        #expect(offsets.keys.sorted() == [30, 90, 210, 270], "\(offsets.sorted { $0.key < $1.key }), beeps at \(report.beepOnsets)")
        for (marker, offset) in offsets {
            let sent = marker > 150 ? expected + lateAudio : expected
            #expect(abs(offset - sent) < 0.05, "marker \(marker): audio \(offset) s from its frame, sent \(sent) s")
        }
    }

    /// An SRT caller that hangs up and calls again: the listener is opened again on its port, and
    /// the second call continues the same output.
    @Test func anSRTCallerBackWithinTheGracePeriodContinuesTheSameOutput() throws {
        let directory = try Package.temporaryDirectory("grace-srt")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path("face_720p.ts")
        let port = freePort(udp: true)
        let output = directory + "/relayed.mp4"
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", "srt://:\(port)", "--output", output, "--input-grace", "5"],
                                     logDirectory: directory, name: "relay")
        Thread.sleep(forTimeInterval: 1)
        let url = "srt://127.0.0.1:\(port)"
        let first = try Self.publish(input, to: url, Self.firstPublish, in: directory, name: "first")
        #expect(first.wait(seconds: 30) == 0, "first caller: \(first.stderr)")
        Thread.sleep(forTimeInterval: 2)
        #expect(relay.process.isRunning, "the relay ended with its caller: \(relay.stderr)")
        let second = try Self.publish(input, to: url, Self.secondPublish, in: directory, name: "second")
        #expect(second.wait(seconds: 30) == 0, "second caller: \(second.stderr)")
        #expect(relay.wait(seconds: 30) == 0, "facerelay: \(relay.stderr)")
        #expect(relay.stderr.contains("input back after") && relay.stderr.contains("continuing the same output"), "\(relay.stderr)")
        try Self.expectBothPublishesInOneOutput(try MediaReport(output), pause: 1.5...5, input: "face_720p.ts")
    }

    /// A publisher whose connection stays open but sends nothing (SIGSTOP) is given up after the
    /// idle time-out: the stream ends cleanly and the file is finalised with what came.
    @Test func aStalledPublisherEndsTheStreamAfterTheIdleTimeout() throws {
        let nginx = try NginxRTMP()
        let directory = try Package.temporaryDirectory("stall")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path("face_720p.flv")
        let output = directory + "/relayed.mp4"
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", nginx.url("in"), "--output", output, "--idle-timeout", "3"],
                                     logDirectory: directory, name: "relay")
        try nginx.waitForPlayer("in")
        let publisher = try Self.publish(input, to: nginx.url("in"), [], in: directory, name: "publisher")
        defer {
            publisher.signal(SIGKILL)
            publisher.wait(seconds: 5)
        }
        Thread.sleep(forTimeInterval: 5)
        publisher.signal(SIGSTOP)
        let stalled = Date()
        #expect(relay.wait(seconds: 30) == 0, "facerelay: \(relay.stderr)")
        let took = Date().timeIntervalSince(stalled)
        #expect(took > 2.5 && took < 10, "the stream ended \(took) s after the publisher stalled, with an idle time-out of 3 s")
        #expect(relay.stderr.contains("input ended"), "\(relay.stderr)")
        let report = try MediaReport(output)
        let indices = report.frames.compactMap(\.index)
        #expect(indices.count >= 90 && zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 }, "\(indices.count) frames: \(indices)")
    }

    /// A broadcaster on a bad connection: it stalls past the idle time-out, gives up and publishes
    /// again; within the grace period that continues the same output.
    @Test func aStalledPublisherThatReconnectsWithinTheGracePeriodContinuesTheStream() throws {
        let nginx = try NginxRTMP()
        let directory = try Package.temporaryDirectory("stall-grace")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path("face_720p.flv")
        let output = directory + "/relayed.mp4"
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", nginx.url("in"), "--output", output,
                                                          "--idle-timeout", "2", "--input-grace", "4"], logDirectory: directory, name: "relay")
        try nginx.waitForPlayer("in")
        let first = try Self.publish(input, to: nginx.url("in"), [], in: directory, name: "first")
        Thread.sleep(forTimeInterval: 4)
        first.signal(SIGSTOP)
        Thread.sleep(forTimeInterval: 3)
        #expect(relay.stderr.contains("waiting up to 4.0 s for it to come back"), "\(relay.stderr)")
        first.signal(SIGKILL)
        first.wait(seconds: 5)
        // The broadcaster's software takes a moment to connect again.
        Thread.sleep(forTimeInterval: 1)
        let second = try Self.publish(input, to: nginx.url("in"), Self.secondPublish, in: directory, name: "second")
        #expect(second.wait(seconds: 30) == 0, "second publisher: \(second.stderr)")
        #expect(relay.wait(seconds: 30) == 0, "facerelay: \(relay.stderr)")
        #expect(relay.stderr.contains("input back after"), "\(relay.stderr)")
        try Self.expectBothPublishesInOneOutput(try MediaReport(output), pause: 2.5...8)
    }

    /// In `serve`, the end of a publish keeps its stream open for the grace period: the broadcaster's
    /// return continues the same stream and the same upstream connection; the platform sees one
    /// publish, whose recording holds both.
    @Test func serveKeepsAStreamOpenForItsBroadcastersReturn() throws {
        let platform = try NginxRTMP()
        let httpPort = freePort()
        let ingest = try NginxRTMP.facerelayIngest(facerelayHTTP: httpPort)
        let serve = try ServeProcess("""
            defaults:
              input_grace_s: 5
            rtmp:
              ingest: rtmp://127.0.0.1:\(ingest.port)
              applications:
                live:
                  keys:
                    alice: { upstream: "\(platform.recordedURL("alice-out"))", sticker: none }
            """, httpPort: httpPort, name: "serve-grace")
        let subscriber = try serve.subscribe(["stream"])
        let input = try Fixtures.path("face_720p.flv")
        let first = try Self.publish(input, to: ingest.url("alice"), Self.firstPublish, in: serve.directory, name: "first")
        #expect(first.wait(seconds: 30) == 0, "first publisher: \(first.stderr)")
        let firstEnded = ContinuousClock.now
        let away = try serve.waitForStreams(seconds: 10) { $0["alice"]?["state"] as? String == "awaiting_input" }
        #expect(away, "alice while her broadcaster is away: \(String(describing: try? serve.streams()))")
        // Nothing waits here on purpose: the pause is however long the broadcaster was really away.
        let pause = ContinuousClock.now - firstEnded
        let second = try Self.publish(input, to: ingest.url("alice"), Self.secondPublish, in: serve.directory, name: "second")
        #expect(second.wait(seconds: 30) == 0, "second publisher: \(second.stderr)")
        let freed = try serve.waitForStreams(seconds: 20) { $0.isEmpty }
        #expect(freed, "streams left: \(String(describing: try? serve.streams()))")
        #expect(serve.log.contains("publisher back; continuing its stream"), "\(serve.log.suffix(3000))")

        let events = subscriber.events().filter { $0["stream"] as? String == "alice" }.compactMap { $0["state"] as? String }
        #expect(events == ["started", "awaiting_input", "started", "awaiting_input", "ended"], "alice's stream events: \(events)")
        let platformLog = try String(contentsOfFile: platform.directory + "/error.log", encoding: .utf8)
        let publishes = platformLog.components(separatedBy: "publish: name='alice-out'").count - 1
        #expect(publishes == 1, "the platform saw \(publishes) publishes of alice's stream")
        // At least the time between the first publisher's end and the second's start, less the
        // timestamps' jitter (a pause dropped from the timeline would leave one frame's 0.033 s).
        let awaySeconds = Double(pause.components.seconds) + Double(pause.components.attoseconds) / 1e18
        try Self.expectBothPublishesInOneOutput(try MediaReport(try platform.recording("alice-out")),
                                                pause: max(0.1, awaySeconds - 0.2)...(awaySeconds + 5))
    }
}
