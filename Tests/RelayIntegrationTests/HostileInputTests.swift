import Foundation
import Testing
import TestFixtures

/// Inputs a broken or careless broadcaster sends: each stream either carries on (a playable output,
/// its frames counted) or ends with an error that says what, where and what to do, within seconds;
/// never a hang, a signal, an unfinalised output, or harm to another stream of the same process.
/// The damaged files come from Tests/Fixtures/make-fixtures.sh (damage-flv.py).
@Suite(.serialized) struct HostileInputTests {
    /// One `facerelay run` of a fixture to a file, bounded in time.
    struct FileRun {
        let input: String
        let output: String
        let directory: String
        let status: Int32?
        let exitedNormally: Bool
        let stderr: String
        let seconds: Double

        init(_ fixture: String, container: String = "mkv", arguments: [String] = [], timeout: Double) throws {
            directory = try Package.temporaryDirectory("hostile")
            input = try Fixtures.path(fixture)
            output = directory + "/relayed." + container
            let started = Date()
            let relay = try ChildProcess(Package.facerelay, ["run", "--input", input, "--output", output, "--input-timeout", "10",
                                                              "--stats-json", directory + "/stats.json"] + arguments,
                                         logDirectory: directory, name: "relay")
            status = relay.wait(seconds: timeout)
            exitedNormally = relay.process.terminationReason == .exit
            seconds = Date().timeIntervalSince(started)
            stderr = relay.stderr
        }

        var stats: RelayStatsFile { get throws { try RelayStatsFile(directory + "/stats.json") } }
        var outputExists: Bool { FileManager.default.fileExists(atPath: output) }

        func remove() { try? FileManager.default.removeItem(atPath: directory) }
    }

    // MARK: files

    /// An upload cut off mid-tag: what arrived is relayed, in order, and the file is finalised.
    @Test func aTruncatedFLVIsRelayedUpToWhereItEnds() throws {
        let run = try FileRun("truncated.flv", timeout: 60)
        defer { run.remove() }
        #expect(run.status == 0 && run.exitedNormally, "facerelay: \(run.stderr)")
        let report = try MediaReport(run.output)
        let indices = report.frames.compactMap(\.index)
        // 60 % of the bytes: the first 6 of 12 s (the rest of the bytes are the other tracks' and the keyframes').
        #expect(indices.count >= 150 && indices.count < 300, "\(indices.count) frames")
        #expect(indices == Array(0..<indices.count), "a prefix of the input, every frame of it")
        #expect(report.audio?.codec == "aac")
        let stats = try run.stats
        #expect(stats.frames_out == report.frames.count && stats.frames_in == stats.frames_out + stats.frames_dropped)
    }

    /// Noise inside the H.264 NAL units of every third picture from 2 s on: the decoder conceals
    /// what it cannot decode (the damage shows until the next keyframe, as in any player) and the
    /// stream goes on to its end at its own pace, every frame counted.
    @Test func corruptNALUnitsDoNotStopTheStream() throws {
        let run = try FileRun("corrupt_nal.flv", timeout: 60)
        defer { run.remove() }
        #expect(run.status == 0 && run.exitedNormally, "facerelay: \(run.stderr)")
        let report = try MediaReport(run.output)
        #expect(report.frames.count >= 330, "\(report.frames.count) of 360 frames relayed")
        // Before the damage, the input's own pictures; after it, concealed ones, still on time.
        #expect(Array(report.frames.prefix(60).map(\.index)) == Array(0..<60))
        let times = report.frames.map(\.seconds)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "timestamps out of order")
        #expect((times.last ?? 0) > 11.8, "the output ends at \(times.last ?? 0) s of 12")
        #expect(report.audio?.codec == "aac")
        let stats = try run.stats
        #expect(stats.frames_out == report.frames.count && stats.frames_in == stats.frames_out + stats.frames_dropped,
                "frames in \(stats.frames_in), out \(stats.frames_out), dropped \(stats.frames_dropped)")
    }

    /// H.265 is decoded here (gstreamer1.0-libav) and relayed as H.264, every frame.
    @Test func h265IsRelayedAsH264() throws {
        let run = try FileRun("face_h265.mkv", container: "flv", timeout: 60)
        defer { run.remove() }
        #expect(run.status == 0 && run.exitedNormally, "facerelay: \(run.stderr)")
        let report = try MediaReport(run.output)
        #expect(report.video?.codec == "h264" && report.video?.width == 640 && report.video?.height == 360)
        #expect(report.frames.compactMap(\.index) == Array(0..<90))
        #expect(report.audio?.codec == "aac")
    }

    /// Dirac (VC-2), which no GStreamer decoder here reads, with AAC beside it: the error names the
    /// video codec (not "only audio") and what to do, and no output is left behind.
    @Test func aVideoCodecNobodyDecodesHereIsNamed() throws {
        let run = try FileRun("face_dirac.mkv", timeout: 30)
        defer { run.remove() }
        #expect(run.status == 1 && run.exitedNormally, "facerelay: \(run.stderr)")
        #expect(run.stderr.contains("input \(run.input) carries Dirac video (video/x-dirac), which GStreamer on this machine cannot decode; have the broadcaster send H.264 or H.265 video"),
                "\(run.stderr)")
        #expect(run.seconds < 15, "took \(run.seconds) s")
        #expect(!run.outputExists, "an output was started for a stream that never had a frame")
    }

    /// H.264 with an audio track in a codec nobody knows: the video is relayed, the audio left out
    /// with a warning that says so.
    @Test func anUnknownAudioCodecIsLeftOutWithAWarning() throws {
        let run = try FileRun("unknown_audio.mkv", timeout: 60)
        defer { run.remove() }
        #expect(run.status == 0 && run.exitedNormally, "facerelay: \(run.stderr)")
        #expect(run.stderr.contains("input \(run.input) carries audio in a codec GStreamer does not know (audio/x-unknown), which GStreamer on this machine cannot decode; relaying without it"),
                "\(run.stderr)")
        let report = try MediaReport(run.output)
        #expect(report.frames.compactMap(\.index) == Array(0..<120))
        #expect(report.audio == nil)
    }

    /// One second of 3840x2160: relayed at its size.
    @Test func a4KStreamIsRelayedAtItsSize() throws {
        let run = try FileRun("face_4k.mp4", timeout: 180)
        defer { run.remove() }
        #expect(run.status == 0 && run.exitedNormally, "facerelay: \(run.stderr)")
        let report = try MediaReport(run.output)
        #expect(report.video?.width == 3840 && report.video?.height == 2160)
        #expect(report.frames.compactMap(\.index) == Array(0..<30))
    }

    /// 64x64 through the face tracker (no face can be found that small) into an MP4, finalised.
    @Test func a64x64StreamGoesThroughTheTracker() throws {
        let run = try FileRun("face_64x64.mp4", container: "mp4", arguments: ["--sticker", "landmarks"], timeout: 60)
        defer { run.remove() }
        #expect(run.status == 0 && run.exitedNormally, "facerelay: \(run.stderr)")
        let report = try MediaReport(run.output)
        #expect(report.video?.width == 64 && report.video?.height == 64)
        #expect(report.frames.count == 90)
        #expect(report.audio?.codec == "aac")
    }

    /// 60 fps: every frame, 1/60 s apart.
    @Test func sixtyFramesPerSecondKeepsEveryFrame() throws {
        let run = try FileRun("face_60fps.mp4", timeout: 60)
        defer { run.remove() }
        #expect(run.status == 0 && run.exitedNormally, "facerelay: \(run.stderr)")
        #expect(run.stderr.contains("@ 60.00 fps"), "\(run.stderr)")
        let report = try MediaReport(run.output)
        #expect(report.frames.compactMap(\.index) == Array(0..<180))
        let span = (report.frames.last?.seconds ?? 0) - (report.frames.first?.seconds ?? 0)
        #expect(abs(span - 179.0 / 60) < 0.01, "180 frames over \(span) s")
    }

    /// Frames at irregular times (all, then every other one, then one in five missing): the same
    /// frames at the same times.
    @Test func aVariableFrameRateKeepsItsTimestamps() throws {
        let run = try FileRun("face_vfr.mkv", timeout: 60)
        defer { run.remove() }
        #expect(run.status == 0 && run.exitedNormally, "facerelay: \(run.stderr)")
        let input = try ReferenceReports.report(run.input)
        let output = try MediaReport(run.output)
        #expect(input.frames.count == 138)
        #expect(output.frames.compactMap(\.index) == input.frames.compactMap(\.index), "the input's frames, no more, no fewer")
        // The same times (the first frame starts the output's timeline at 0).
        #expect((output.frames.first?.seconds ?? 1) < 0.05)
        let shifts = zip(input.frames, output.frames).dropFirst().map { abs($1.seconds - $0.seconds) }
        #expect((shifts.max() ?? 1) < 0.002, "largest timestamp change \(shifts.max() ?? 1) s")
    }

    /// FLV headers announcing tracks they do not carry, or hiding one they do: the tags decide.
    @Test(arguments: [("header_claims_audio.flv", false), ("header_hides_audio.flv", true)])
    func anFLVHeaderThatLiesAboutItsTracks(fixture: String, carriesAudio: Bool) throws {
        let run = try FileRun(fixture, timeout: 60)
        defer { run.remove() }
        #expect(run.status == 0 && run.exitedNormally, "facerelay: \(run.stderr)")
        let report = try MediaReport(run.output)
        #expect(report.frames.compactMap(\.index) == Array(0..<360))
        #expect((report.audio?.codec == "aac") == carriesAudio, "audio: \(report.audio?.codec ?? "none")")
        #expect(try run.stats.frames_out == 360)
    }

    // MARK: live, through nginx-rtmp

    /// ffmpeg publishes `fixture` to a real nginx-rtmp at its own pace, the relay plays it to a file.
    private func relayLive(_ fixture: String, readArguments: [String] = [], writeArguments: [String] = [], inputTimeout: Int = 15)
        throws -> (relay: ChildProcess, publisher: ChildProcess, output: String, directory: String, nginx: NginxRTMP) {
        let nginx = try NginxRTMP()
        let directory = try Package.temporaryDirectory("hostile-live")
        let output = directory + "/relayed.mkv"
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", nginx.url("in"), "--output", output, "--input-timeout", "\(inputTimeout)",
                                                          "--stats-json", directory + "/stats.json"],
                                     logDirectory: directory, name: "relay")
        try nginx.waitForPlayer("in")
        let publisher = try ChildProcess("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-re"] + readArguments + ["-i", try Fixtures.path(fixture),
                                                             "-c", "copy"] + writeArguments + ["-f", "flv", nginx.url("in")],
                                         logDirectory: directory, name: "publisher")
        return (relay, publisher, output, directory, nginx)
    }

    @Test func aTruncatedFLVPublishedLiveEndsCleanly() throws {
        let live = try relayLive("truncated.flv")
        defer { try? FileManager.default.removeItem(atPath: live.directory) }
        #expect(live.publisher.wait(seconds: 30) == 0, "publisher: \(live.publisher.stderr)")
        let ended = Date()
        #expect(live.relay.wait(seconds: 30) == 0 && live.relay.process.terminationReason == .exit, "facerelay: \(live.relay.stderr)")
        #expect(Date().timeIntervalSince(ended) < 10, "the relay took \(Date().timeIntervalSince(ended)) s to notice the end")
        let report = try MediaReport(live.output)
        let indices = report.frames.compactMap(\.index)
        #expect(indices.count >= 150, "\(indices.count) frames")
        #expect((indices.first ?? 99) <= 1 && zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 }, "\(indices.prefix(5))...")
        let stats = try RelayStatsFile(live.directory + "/stats.json")
        #expect(stats.frames_out == report.frames.count)
    }

    @Test func corruptNALUnitsPublishedLiveDoNotStopTheStream() throws {
        let live = try relayLive("corrupt_nal.flv")
        defer { try? FileManager.default.removeItem(atPath: live.directory) }
        #expect(live.publisher.wait(seconds: 40) == 0, "publisher: \(live.publisher.stderr)")
        #expect(live.relay.wait(seconds: 30) == 0 && live.relay.process.terminationReason == .exit, "facerelay: \(live.relay.stderr)")
        let report = try MediaReport(live.output)
        #expect(report.frames.count >= 320, "\(report.frames.count) of 360 frames")
        let times = report.frames.map(\.seconds)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 } && (times.last ?? 0) - (times.first ?? 0) > 11, "\(times.first ?? 0)...\(times.last ?? 0) s")
        let stats = try RelayStatsFile(live.directory + "/stats.json")
        #expect(stats.frames_out == report.frames.count && stats.frames_in >= stats.frames_out,
                "frames in \(stats.frames_in), out \(stats.frames_out), dropped \(stats.frames_dropped); \(report.frames.count) in the file")
    }

    /// A publish without audio: rtmp2src's FLV header announces video only, yet flvdemux holds its
    /// pads for 6 s of video looking for audio, then hands them over in a burst. Every frame is
    /// relayed, none dropped (it lost 161 of 360 to the live queue before).
    /// flvdemux waits for 6 s of video for an audio stream before it lets decodebin go on: the
    /// relay stops that wait after 2 s of video without audio.
    @Test func aVideoOnlyPublishLosesNoFrames() throws {
        let live = try relayLive("header_claims_audio.flv")
        defer { try? FileManager.default.removeItem(atPath: live.directory) }
        let published = Date()
        while !live.relay.stderr.contains("relaying"), live.relay.process.isRunning, Date().timeIntervalSince(published) < 20 {
            Thread.sleep(forTimeInterval: 0.02)
        }
        let delay = Date().timeIntervalSince(published)
        #expect(delay < 4, "the output started \(delay) s after the publish")
        #expect(live.publisher.wait(seconds: 30) == 0, "publisher: \(live.publisher.stderr)")
        #expect(live.relay.wait(seconds: 30) == 0 && live.relay.process.terminationReason == .exit, "facerelay: \(live.relay.stderr)")
        let report = try MediaReport(live.output)
        let indices = report.frames.compactMap(\.index)
        #expect(report.audio == nil)
        #expect(indices.count >= 355 && (indices.first ?? 99) <= 1 && zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 },
                "\(indices.count) frames, from \(indices.first ?? -1)")
        let stats = try RelayStatsFile(live.directory + "/stats.json")
        #expect(stats.frames_dropped <= 3, "\(stats.frames_dropped) frames dropped")
    }

    /// Audio that starts 1.5 s after the video is relayed; from 3 s on it comes too late for an
    /// output opened at 2 s, and is left out with a warning, the video going on whole.
    @Test(arguments: [("audio_from_1.5s.flv", true), ("audio_from_3s.flv", false)])
    func audioThatStartsAfterTheVideo(fixture: String, isRelayed: Bool) throws {
        // Sent as an encoder sends it, each picture as it comes: ffmpeg's muxer would otherwise
        // hold the video until the audio starts, then send it in a burst.
        let live = try relayLive(fixture, writeArguments: ["-max_interleave_delta", "50000"])
        defer { try? FileManager.default.removeItem(atPath: live.directory) }
        #expect(live.publisher.wait(seconds: 30) == 0, "publisher: \(live.publisher.stderr)")
        #expect(live.relay.wait(seconds: 30) == 0 && live.relay.process.terminationReason == .exit, "facerelay: \(live.relay.stderr)")
        let report = try MediaReport(live.output)
        let indices = report.frames.compactMap(\.index)
        let stats = try? RelayStatsFile(live.directory + "/stats.json")
        #expect(indices.count >= 340 && zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 },
                "\(indices.count) frames, \(indices.first ?? -1) to \(indices.last ?? -1); the relay's own count: \(stats.map { "\($0.frames_in) in, \($0.frames_out) out, \($0.frames_dropped) dropped, \($0.frames_missed_at_start) missed at the start" } ?? "none")")
        #expect((report.audio != nil) == isRelayed, "audio: \(String(describing: report.audio))")
        #expect(live.relay.stderr.contains("audio appeared in the input after 2000 ms of video alone") != isRelayed, "\(live.relay.stderr)")
    }

    /// With a time-out shorter than the 6 s after which flvdemux stops waiting for the video its
    /// header announced, the time-out itself tells that audio came and video did not; with a
    /// longer one, the demuxer's verdict does.
    @Test(arguments: [3, 20])
    func anAudioOnlyPublishEndsWithAClearError(inputTimeout: Int) throws {
        let live = try relayLive("audio_only.m4a", readArguments: ["-stream_loop", "5"], inputTimeout: inputTimeout)
        defer {
            live.publisher.signal(SIGKILL)
            try? FileManager.default.removeItem(atPath: live.directory)
        }
        let started = Date()
        #expect(live.relay.wait(seconds: 30) == 1 && live.relay.process.terminationReason == .exit, "facerelay: \(live.relay.stderr)")
        #expect(live.publisher.process.isRunning, "the publisher stopped first: \(live.publisher.stderr)")
        #expect(Date().timeIntervalSince(started) < Double(min(inputTimeout, 6) + 8), "took \(Date().timeIntervalSince(started)) s")
        #expect(live.relay.stderr.contains("input \(live.nginx.url("in")) has no video stream (only audio")
            && live.relay.stderr.contains("FaceRelay needs a video stream"),
                "\(live.relay.stderr)")
        #expect(!FileManager.default.fileExists(atPath: live.output))
    }

    // MARK: live, over SRT

    /// A relay listening on SRT, and a broadcaster calling it with ffmpeg.
    private func srtListener(passphrase: String? = nil, inputTimeout: Int = 15) throws -> (relay: ChildProcess, port: Int, output: String, directory: String) {
        let directory = try Package.temporaryDirectory("hostile-srt")
        let port = freePort(udp: true)
        let output = directory + "/relayed.mkv"
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", "srt://:\(port)" + (passphrase.map { "?passphrase=\($0)" } ?? ""),
                                                          "--output", output, "--input-timeout", "\(inputTimeout)"],
                                     logDirectory: directory, name: "relay")
        Thread.sleep(forTimeInterval: 1)
        return (relay, port, output, directory)
    }

    @Test func randomBytesOverSRTEndWithAClearError() throws {
        let listener = try srtListener()
        defer { try? FileManager.default.removeItem(atPath: listener.directory) }
        let caller = try ChildProcess("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-re", "-f", "data", "-i", try Fixtures.path("random_bytes.mp4"),
                                                          "-map", "0", "-c", "copy", "-f", "data", "srt://127.0.0.1:\(listener.port)"],
                                      logDirectory: listener.directory, name: "caller")
        defer { caller.signal(SIGKILL) }
        let started = Date()
        #expect(listener.relay.wait(seconds: 30) == 1 && listener.relay.process.terminationReason == .exit, "facerelay: \(listener.relay.stderr)")
        #expect(Date().timeIntervalSince(started) < 15)
        #expect(listener.relay.stderr.contains("input srt://:\(listener.port)?mode=listener is not a media stream GStreamer recognises"), "\(listener.relay.stderr)")
        #expect(!FileManager.default.fileExists(atPath: listener.output))
    }

    @Test func anUndecodableCodecOverSRTIsNamed() throws {
        let listener = try srtListener()
        defer { try? FileManager.default.removeItem(atPath: listener.directory) }
        let caller = try ChildProcess("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-re", "-i", try Fixtures.path("face_dirac.mkv"),
                                                          "-c", "copy", "-f", "mpegts", "srt://127.0.0.1:\(listener.port)"],
                                      logDirectory: listener.directory, name: "caller")
        defer { caller.signal(SIGKILL) }
        #expect(listener.relay.wait(seconds: 30) == 1 && listener.relay.process.terminationReason == .exit, "facerelay: \(listener.relay.stderr)")
        #expect(listener.relay.stderr.contains("carries Dirac video (video/x-dirac), which GStreamer on this machine cannot decode"), "\(listener.relay.stderr)")
    }

    /// A listener with a passphrase: a caller with the wrong one, then one with none, are refused
    /// and named in the log, the listener goes on listening, and the right caller is relayed.
    @Test func anSRTListenerSaysWhenACallersPassphraseIsWrong() throws {
        let passphrase = "facerelay-listener-secret"
        let listener = try srtListener(passphrase: passphrase, inputTimeout: 60)
        defer { try? FileManager.default.removeItem(atPath: listener.directory) }
        func call(passphrase: String?, seconds: Int) throws -> ChildProcess {
            try ChildProcess("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-re", "-i", try Fixtures.path("face_720p.ts"), "-t", "\(seconds)", "-c", "copy",
                                                 "-f", "mpegts", "srt://127.0.0.1:\(listener.port)" + (passphrase.map { "?passphrase=\($0)" } ?? "")],
                             logDirectory: listener.directory, name: "caller-\(UUID().uuidString.prefix(6))")
        }
        let wrong = try call(passphrase: "not-the-right-one", seconds: 3)
        #expect(wrong.wait(seconds: 15) != 0, "the wrong passphrase was accepted")
        let none = try call(passphrase: nil, seconds: 3)
        #expect(none.wait(seconds: 15) != 0, "a caller without a passphrase was accepted")
        // Both refusals are logged as the callers give up; a busy machine may write them later.
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !listener.relay.stderr.contains("refused: it sent no passphrase") { Thread.sleep(forTimeInterval: 0.05) }
        let log = listener.relay.stderr
        #expect(log.contains("SRT caller 127.0.0.1:") && log.contains("refused: wrong passphrase (it does not match this listener's); give the broadcaster the listener's passphrase"),
                "\(log)")
        #expect(log.contains("refused: it sent no passphrase and this listener requires one"), "\(log)")
        #expect(!log.contains(passphrase), "the passphrase reached the log")
        #expect(listener.relay.process.isRunning, "the listener gave up after refusing a caller: \(log)")

        let right = try call(passphrase: passphrase, seconds: 4)
        #expect(right.wait(seconds: 30) == 0, "caller: \(right.stderr)")
        #expect(listener.relay.wait(seconds: 30) == 0, "facerelay: \(listener.relay.stderr)")
        let report = try MediaReport(listener.output)
        #expect(report.frames.count >= 100 && report.video?.codec == "h264", "\(report.frames.count) frames from the right caller")
    }

    /// Without a passphrase of its own, a listener refuses an encrypting caller, and the time-out
    /// that follows says why nobody got through.
    @Test func anSRTListenerWithoutPassphraseNamesTheRefusalWhenItTimesOut() throws {
        let listener = try srtListener(inputTimeout: 4)
        defer { try? FileManager.default.removeItem(atPath: listener.directory) }
        let caller = try ChildProcess("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-i", try Fixtures.path("face_720p.ts"), "-t", "2", "-c", "copy",
                                                          "-f", "mpegts", "srt://127.0.0.1:\(listener.port)?passphrase=a-passphrase-nobody-expects"],
                                      logDirectory: listener.directory, name: "caller")
        #expect(caller.wait(seconds: 15) != 0)
        #expect(listener.relay.wait(seconds: 20) == 1, "facerelay: \(listener.relay.stderr)")
        #expect(listener.relay.stderr.contains("no broadcaster sent video to srt://:\(listener.port)?mode=listener within 4 s")
            && listener.relay.stderr.contains("the last caller was refused: SRT caller 127.0.0.1:")
            && listener.relay.stderr.contains("it encrypts with a passphrase but this listener has none"), "\(listener.relay.stderr)")
    }

    // MARK: serve

    /// A configured SRT listener of `serve`: a caller with the wrong passphrase is refused and
    /// logged against the listener's stream, which stays armed and relays the right caller.
    @Test func serveSaysWhichSRTCallerHadTheWrongPassphrase() throws {
        let platform = try NginxRTMP()
        let port = freePort(udp: true)
        let passphrase = "serve-listener-secret"
        let serve = try ServeProcess("""
            defaults:
              sticker: none
            srt:
              - listen: srt://:\(port)?passphrase=\(passphrase)
                upstream: \(platform.url("studio-key"))
                stream: studio
            """, name: "serve-srt-refusal")
        func call(_ passphrase: String) throws -> ChildProcess {
            try ChildProcess("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-re", "-i", try Fixtures.path("face_720p.ts"), "-t", "4", "-c", "copy",
                                                 "-f", "mpegts", "srt://127.0.0.1:\(port)?passphrase=\(passphrase)"],
                             logDirectory: serve.directory, name: "caller-\(UUID().uuidString.prefix(6))")
        }
        Thread.sleep(forTimeInterval: 1)
        let wrong = try call("not-the-right-one")
        #expect(wrong.wait(seconds: 15) != 0, "the wrong passphrase was accepted")
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline, !serve.log.contains("refused: wrong passphrase") { Thread.sleep(forTimeInterval: 0.1) }
        let refusal = serve.log.split(separator: "\n").first { $0.contains("refused: wrong passphrase") }.map(String.init) ?? ""
        #expect(refusal.contains("stream=studio") && refusal.contains("SRT caller 127.0.0.1:"), "\(serve.log.suffix(2000))")
        #expect(!serve.log.contains(passphrase), "the passphrase reached the log")

        let right = try call(passphrase)
        defer { right.signal(SIGKILL) }
        let relaying = try serve.waitForStreams(seconds: 20) { $0["studio"]?["state"] as? String == "relaying" }
        #expect(relaying, "the listener did not take the right caller after refusing one: \(serve.log.suffix(2000))")
        #expect(right.wait(seconds: 30) == 0, "caller: \(right.stderr)")
        #expect(serve.terminate() == 0, "\(serve.log.suffix(1000))")
    }

    /// In one `facerelay serve`: a good stream (a file: relayed whole, no frame may be missing) and
    /// beside it random bytes, an undecodable codec, corrupt NAL units and a truncated FLV. The bad
    /// ones are refused or end by themselves; the good one is relayed whole and in sync; the process
    /// stays up and exits cleanly.
    @Test func hostileStreamsLeaveTheirNeighbourAlone() throws {
        let serve = try ServeProcess("defaults:\n  sticker: none\n", name: "serve-hostile")
        let subscriber = try serve.subscribe(["stream"])
        let reference = try Fixtures.path("face_720p_bench.mp4")
        let good = serve.directory + "/good.mkv"
        _ = try serve.result(["start", reference, good, "--stream", "good"])

        for (fixture, message) in [("random_bytes.mp4", "is not a media stream GStreamer recognises"),
                                   ("face_dirac.mkv", "carries Dirac video (video/x-dirac)")] {
            let reply = try serve.ctl(["start", try Fixtures.path(fixture), serve.directory + "/\(fixture).mkv", "--stream", fixture])
            let error = reply["error"] as? [String: Any]
            #expect(error?["code"] as? String == "start-failed" && (error?["message"] as? String)?.contains(message) == true, "\(fixture): \(reply)")
        }
        for fixture in ["corrupt_nal.flv", "truncated.flv"] {
            _ = try serve.result(["start", try Fixtures.path(fixture), serve.directory + "/\(fixture).mkv", "--stream", fixture])
        }
        // The good stream is relayed as fast as the machine goes, so it may be done already; if it
        // is still there, it is relaying. Its events and its output say the rest.
        let streams = try serve.streams()
        #expect(streams["good"].map { $0["state"] as? String == "relaying" } ?? true, "the good stream is not relaying beside the others: \(streams)")

        let allDone = try serve.waitForStreams(seconds: 120) { $0.isEmpty }
        #expect(allDone, "streams still running: \(String(describing: try? serve.streams()))")
        #expect(serve.child.process.isRunning, "serve died: \(serve.log.suffix(2000))")
        let events = subscriber.events()
        func state(_ stream: String) -> String? {
            events.last { $0["stream"] as? String == stream && ["ended", "failed"].contains($0["state"] as? String ?? "") }?["state"] as? String
        }
        #expect(state("good") == "ended" && state("corrupt_nal.flv") == "ended" && state("truncated.flv") == "ended", "\(events)")
        #expect(state("random_bytes.mp4") == "failed" && state("face_dirac.mkv") == "failed", "\(events)")

        let report = try MediaReport(good)
        expectFaithfulRelay(report, of: try ReferenceReports.report(reference), expectAudio: true, frameTolerance: 0)
        #expect(report.frames.compactMap(\.index) == Array(0..<600), "the good stream lost frames beside the others")
        #expect(try MediaReport(serve.directory + "/corrupt_nal.flv.mkv").frames.count >= 330)
        #expect(serve.terminate() == 0, "\(serve.log.suffix(1000))")
    }
}
