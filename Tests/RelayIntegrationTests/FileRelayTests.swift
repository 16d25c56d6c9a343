import Foundation
import Testing
import TestFixtures

/// `facerelay run` on local files: the simplest end-to-end path, and the bad inputs.
@Suite(.serialized) struct FileRelayTests {
    @Test func fileToFileRelaysEveryFrameWithAudioInSync() throws {
        let directory = try Package.temporaryDirectory("file")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path("face_720p.flv")
        let output = directory + "/relayed.mkv"
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", input, "--output", output, "--stats-json", directory + "/stats.json"],
                                     logDirectory: directory, name: "relay")
        #expect(relay.wait(seconds: 120) == 0, "facerelay: \(relay.stderr)")
        let report = try MediaReport(output)
        expectFaithfulRelay(report, of: try ReferenceReports.report(input), expectAudio: true, frameTolerance: 0)
        #expect(report.frames.compactMap(\.index) == Array(0..<360), "a file relay keeps every frame")

        let stats = try RelayStatsFile(directory + "/stats.json")
        #expect(stats.frames_in == 360 && stats.frames_out == 360 && stats.frames_dropped == 0)
        #expect(stats.stage_ms_per_frame > 0 && stats.stage_ms_per_frame < 5)
        #expect(stats.process_cpu_cores > 0 && stats.rss_mb > 10 && stats.peak_rss_mb >= stats.rss_mb && stats.duration_s > 0)
    }

    @Test(arguments: ["flv", "mp4", "ts"])
    func everyOutputContainerIsPlayable(container: String) throws {
        let directory = try Package.temporaryDirectory("container")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path("face_720p.mp4")
        let output = directory + "/relayed." + container
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", input, "--output", output], logDirectory: directory, name: "relay")
        #expect(relay.wait(seconds: 120) == 0, "facerelay: \(relay.stderr)")
        let report = try MediaReport(output)
        #expect(report.frames.compactMap(\.index) == Array(0..<180))
        #expect(report.audio?.codec == "aac")
    }

    /// `--compare-baseline` relays the input twice at once, with and without the sticker, and the
    /// table shows tracking and compositing only on the stickered side, from the same frames.
    @Test func compareBaselineShowsWhatTheStickerAdds() throws {
        let directory = try Package.temporaryDirectory("compare")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path("face_720p_close.mp4")
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", input, "--output", directory + "/out.mkv", "--sticker", "sunglasses",
                                                         "--compare-baseline", "--stats-json", directory + "/stats.json"],
                                     logDirectory: directory, name: "compare")
        #expect(relay.wait(seconds: 180) == 0, "facerelay: \(relay.stderr)")
        let rows = Dictionary(relay.stdout.split(separator: "\n").compactMap { line -> (String, [Double])? in
            let fields = line.split(separator: " ")
            guard fields.count >= 4, let base = Double(fields[fields.count - 3]), let with = Double(fields[fields.count - 2]) else { return nil }
            return (fields.dropLast(3).joined(separator: " "), [base, with])
        }, uniquingKeysWith: { first, _ in first })
        let track = try #require(rows["track"], "no track row in: \(relay.stdout)")
        #expect(track[0] == 0 && track[1] > 0.3, "tracking only with the sticker: \(track)")
        let composite = try #require(rows["composite"])
        #expect(composite[1] > composite[0] + 0.1, "compositing (the glasses) only with the sticker: \(composite)")
        let frameMemory = try #require(rows["stream frame memory, MB"])
        #expect(frameMemory[0] > 10 && frameMemory[1] == frameMemory[0], "every frame goes out as a pooled copy, sticker or not: \(frameMemory)")
        let encode = try #require(rows["encode"])
        #expect(encode[0] > 1 && encode[1] > 1, "x264's threads are counted as encode on both sides: \(encode)")
        #expect(rows["frames out"] == [600, 600], "both relays carried every frame: \(String(describing: rows["frames out"]))")
        #expect(relay.stdout.contains("baseline output: \(directory)/out.baseline.mkv"))
        #expect(try MediaReport(directory + "/out.baseline.mkv").frames.compactMap(\.index) == Array(0..<600))
        #expect(try MediaReport(directory + "/out.mkv").frames.compactMap(\.index) == Array(0..<600))
    }

    /// A broadcaster switching from 720p to 854x480 mid-stream: the relay goes on to the end, at the
    /// size it started with (upstream cannot take a new size without a new connection), and ends
    /// by itself.
    @Test func aResolutionChangeMidStreamKeepsTheOutputSize() throws {
        let directory = try Package.temporaryDirectory("resize")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = directory + "/relayed.mkv"
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", try Fixtures.path("face_720p_then_480p.ts"), "--output", output],
                                     logDirectory: directory, name: "relay")
        #expect(relay.wait(seconds: 60) == 0, "facerelay: \(relay.stderr)")
        let report = try MediaReport(output)
        #expect(report.video?.width == 1280 && report.video?.height == 720)
        #expect(report.frames.count >= 175, "\(report.frames.count) of 180 frames relayed")
        let indices = report.frames.compactMap(\.index)
        #expect(indices.contains(60) && indices.contains(170), "frames of both parts are the input's: \(indices.count) barcodes read")
        // The second part keeps its own pace: 6 s of input last 6 s, not squeezed after the first.
        let times = report.frames.map(\.seconds)
        let duration = (times.last ?? 0) - (times.first ?? 0)
        #expect(duration > 5.7 && duration < 6.1 && zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "the relayed video lasts \(duration) s")
    }

    @Test func inputWithoutAudioGetsNoAudioTrack() throws {
        let directory = try Package.temporaryDirectory("silent")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path("face_720p_silent.mkv")
        let output = directory + "/relayed.flv"
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", input, "--output", output], logDirectory: directory, name: "relay")
        #expect(relay.wait(seconds: 120) == 0, "facerelay: \(relay.stderr)")
        expectFaithfulRelay(try MediaReport(output), of: try ReferenceReports.report(input), expectAudio: false, frameTolerance: 0)
    }

    @Test func audioThatIsNotAACIsEncodedToAACInSync() throws {
        let directory = try Package.temporaryDirectory("mp3")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path("face_720p_mp3.mkv")
        let output = directory + "/relayed.mkv"
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", input, "--output", output], logDirectory: directory, name: "relay")
        #expect(relay.wait(seconds: 120) == 0, "facerelay: \(relay.stderr)")
        #expect(relay.stderr.contains("encoded to AAC"))
        expectFaithfulRelay(try MediaReport(output), of: try ReferenceReports.report(input), expectAudio: true, frameTolerance: 0,
                            audioReencoded: true)
    }

    @Test func sigtermFinalisesAnMP4MidStream() throws {
        let directory = try Package.temporaryDirectory("sigterm")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path("face_720p.flv")
        let output = directory + "/relayed.mp4"
        let relay = try ChildProcess(Package.facerelay, ["run", "--realtime", "--input", input, "--output", output], logDirectory: directory, name: "relay")
        Thread.sleep(forTimeInterval: 4)
        relay.signal(SIGTERM)
        #expect(relay.wait(seconds: 20) == 0, "facerelay: \(relay.stderr)")
        let report = try MediaReport(output)
        let indices = report.frames.compactMap(\.index)
        // Stopped part-way at real-time pace: a prefix of the input, every frame of it, playable.
        #expect(indices.count > 45 && indices.count < 300, "\(indices.count) frames")
        #expect(indices == Array(0..<indices.count))
        #expect(report.audio?.codec == "aac")
    }

    @Test(arguments: [
        ("random_bytes.mp4", "is not a media stream"),
        ("notes.txt.mkv", "is not a media stream"),
        ("audio_only.m4a", "needs a video stream"),
    ])
    func nonMediaInputEndsWithAClearError(fixture: String, message: String) throws {
        let directory = try Package.temporaryDirectory("bad")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path(fixture)
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", input, "--output", directory + "/out.flv", "--input-timeout", "10"],
                                     logDirectory: directory, name: "relay")
        #expect(relay.wait(seconds: 30) == 1, "facerelay should fail with status 1: \(relay.stderr)")
        #expect(relay.stderr.contains(message) && relay.stderr.contains(input), "\(relay.stderr)")
    }

    @Test func invalidURIsAndOptionsAreUsageErrors() throws {
        let directory = try Package.temporaryDirectory("usage")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path("face_720p.mp4")
        let cases: [([String], String)] = [
            (["--input", "rtmp://host/onlyapp", "--output", directory + "/o.flv"], "missing application or stream key"),
            (["--input", "ftp://x/y", "--output", directory + "/o.flv"], "unsupported scheme"),
            (["--input", input, "--output", directory + "/o.avi"], "unknown file type"),
            (["--input", input, "--output", directory + "/o.flv", "--x264-preset", "warp"], "unknown --x264-preset"),
            (["--input", input, "--output", directory + "/o.flv", "--sticker", "no-such-sticker"], "unknown sticker"),
        ]
        for (arguments, message) in cases {
            let relay = try ChildProcess(Package.facerelay, ["run"] + arguments, logDirectory: directory, name: "usage")
            #expect(relay.wait(seconds: 10) == 64, "\(arguments): \(relay.stderr)")
            #expect(relay.stderr.contains(message), "\(arguments): \(relay.stderr)")
        }
    }

    @Test func aBrokenTemplateNamesItsFileAndGStreamersMessage() throws {
        let directory = try Package.temporaryDirectory("template")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pipelines = directory + "/Pipelines"
        try FileManager.default.copyItem(atPath: Package.root.appendingPathComponent("Pipelines").path, toPath: pipelines)
        let encoder = pipelines + "/encode.gst"
        let text = try String(contentsOfFile: encoder, encoding: .utf8).replacingOccurrences(of: "x264enc", with: "x264encoder")
        try text.write(toFile: encoder, atomically: true, encoding: .utf8)
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", try Fixtures.path("face_720p.mp4"), "--output", directory + "/o.flv",
                                                          "--pipelines", pipelines], logDirectory: directory, name: "relay")
        #expect(relay.wait(seconds: 20) == 1)
        #expect(relay.stderr.contains(encoder) && relay.stderr.contains("x264encoder"), "\(relay.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/o.flv"))
    }
}
