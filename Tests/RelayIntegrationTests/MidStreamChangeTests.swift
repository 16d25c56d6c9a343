import Foundation
import Testing
import TestFixtures

/// An input that changes mid-stream (Tests/Fixtures/make-fixtures.sh `change_*.ts`: 2 s of the face
/// video, then 8 s more with one thing changed, in one MPEG-TS) relayed into an MP4, the container
/// least forgiving of it: the stream goes on to the end, and the file is finalised and playable,
/// with every frame in order, time never going back or squeezed, and the audio in sync while there
/// is audio.
@Suite(.serialized) struct MidStreamChangeTests {
    struct Change: Sendable, CustomTestStringConvertible {
        let fixture: String
        /// Input frames in the file: 2 s at 30 fps, then 8 s at its rate.
        let frames: Int
        let audio: Audio
        /// What the relay says about it, if anything.
        let logged: String?

        enum Audio: Sendable { case throughout, firstPartOnly, none }
        var testDescription: String { fixture }
    }

    static let changes = [
        Change(fixture: "change_frame_rate.ts", frames: 60 + 200, audio: .throughout, logged: nil),
        Change(fixture: "change_pixel_format.ts", frames: 300, audio: .throughout, logged: nil),
        Change(fixture: "change_profile.ts", frames: 300, audio: .throughout, logged: nil),
        Change(fixture: "change_time_forward.ts", frames: 300, audio: .throughout, logged: nil),
        Change(fixture: "change_time_back.ts", frames: 300, audio: .throughout, logged: nil),
        Change(fixture: "change_audio_stops.ts", frames: 300, audio: .firstPartOnly,
               logged: "the input's audio stopped at 1.9"),
        Change(fixture: "change_audio_starts.ts", frames: 300, audio: .none,
               logged: "audio appeared in the input mid-stream; the output was opened without audio, relaying the video alone"),
    ]

    @Test(arguments: changes)
    func theStreamGoesOnAndTheFileIsPlayable(_ change: Change) throws {
        let directory = try Package.temporaryDirectory("change")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = directory + "/relayed.mp4"
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", try Fixtures.path(change.fixture), "--output", output],
                                     logDirectory: directory, name: "relay")
        #expect(relay.wait(seconds: 60) == 0, "facerelay: \(relay.stderr)")
        if let logged = change.logged { #expect(relay.stderr.contains(logged), "\(relay.stderr)") }

        let report = try MediaReport(output)
        #expect(report.video?.width == 1280 && report.video?.height == 720)
        #expect(report.frames.count >= change.frames - 3, "\(report.frames.count) of \(change.frames) frames relayed")
        let indices = report.frames.compactMap(\.index)
        #expect(indices.count >= report.frames.count - 2 && zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 },
                "frames out of order: \(indices)")
        #expect(indices.contains { $0 >= 290 }, "the second part was relayed to its end: \(indices.suffix(5))")
        let times = report.frames.map(\.seconds)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "timestamps go back")
        // 10 s of input: no part squeezed into a moment, nor stretched by a jump of the input's clock.
        let duration = (times.last ?? 0) - (times.first ?? 0)
        #expect(duration > 9.3 && duration < 10.8, "the relayed video lasts \(duration) s")

        switch change.audio {
        case .none:
            #expect(report.audio == nil, "an audio track")
        case .firstPartOnly, .throughout:
            #expect(report.audio?.codec == "aac")
            // Beeps on frames 30, 90, 150, 210, 270 (the frame-rate change drops some markers).
            // Before the change, where the input has it against its video, within one frame;
            // after it, a file is timed by tsdemux from the second encoder's clock reference, which
            // may move the audio by up to a few frames (the live path times from the PTS instead:
            // `aLiveInputKeepsItsAudioInSyncThroughTheChange`).
            let input = try ReferenceReports.report(try Fixtures.path(change.fixture)).audioVideoOffsetsByMarker()
            let offsets = report.audioVideoOffsetsByMarker()
            #expect(offsets.count >= (change.audio == .throughout ? 3 : 1), "beeps found on markers \(offsets.keys.sorted())")
            for (marker, offset) in offsets {
                let expected = try #require(input[marker], "the input has no beep on marker frame \(marker)")
                let tolerance = (marker < 60 ? 1 : 3) / Fixtures.framesPerSecond + 1e-6
                #expect(abs(offset - expected) <= tolerance,
                        "A/V offset on frame \(marker): \(Int(offset * 1000)) ms, the input's \(Int(expected * 1000)) ms")
            }
            if change.audio == .firstPartOnly {
                #expect(report.beepOnsets.allSatisfy { $0 < 2.1 }, "audio after it stopped: \(report.beepOnsets)")
            }
        }
    }

    /// The changes sent live over SRT, as a broadcaster's encoder would: the stream goes on, and each
    /// beep stays where the input has it against its video, within one frame.
    @Test(arguments: changes.filter { $0.audio == .throughout })
    func aLiveInputKeepsItsAudioInSyncThroughTheChange(_ change: Change) throws {
        let directory = try Package.temporaryDirectory("change-srt")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path(change.fixture)
        let output = directory + "/relayed.mkv"
        let (relay, broadcaster) = try srtBroadcast(input, to: output, relayArguments: ["--stats-json", directory + "/stats.json"], directory: directory)
        #expect(broadcaster.wait(seconds: 60) == 0, "broadcaster: \(broadcaster.stderr)")
        #expect(relay.wait(seconds: 30) == 0, "facerelay: \(relay.stderr)")
        let report = try MediaReport(output)
        let indices = report.frames.compactMap(\.index)
        let stats = try RelayStatsFile(directory + "/stats.json")
        let figures = "\(indices.count) frames, from \(indices.first ?? -1) to \(indices.last ?? -1), gaps \(frameGaps(indices)); "
            + "in \(stats.frames_in), out \(stats.frames_out), dropped \(stats.frames_dropped)"
        print("\(change.fixture) live: \(figures)")
        // The stream goes on through the change, in order, and every frame the relay sent is in the file.
        #expect(indices.contains { $0 >= 270 } && zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 } && indices.count == stats.frames_out,
                "\(figures)")
        // The input arrives whole but for its last half second, which the caller hangs up with still in
        // flight (as in srtListenerToFile). A live input drops the oldest frame when the relay falls
        // behind (a machine that stalls for a moment); the relay counts each, and a second's worth at most.
        #expect(stats.frames_in >= change.frames - 20 && stats.frames_out + stats.frames_dropped >= stats.frames_in && stats.frames_dropped <= 30,
                "\(figures)")
        let expected = try ReferenceReports.report(input).audioVideoOffsetsByMarker()
        let offsets = report.audioVideoOffsetsByMarker()
        #expect(offsets.count >= 3, "beeps found on markers \(offsets.keys.sorted())")
        for (marker, offset) in offsets {
            let inputOffset = try #require(expected[marker], "the input has no beep on marker frame \(marker)")
            #expect(abs(offset - inputOffset) <= 1 / Fixtures.framesPerSecond + 1e-6,
                    "A/V offset on frame \(marker): \(Int(offset * 1000)) ms, the input's \(Int(inputOffset * 1000)) ms")
        }
    }

    /// The same file as a live input (paced, as a broadcaster sends it): the live muxer must not
    /// wait for audio that stopped either.
    @Test func audioThatStopsInALiveStreamLetsTheVideoGoOn() throws {
        let directory = try Package.temporaryDirectory("change-live")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = directory + "/relayed.mp4"
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", try Fixtures.path("change_audio_stops.ts"), "--output", output, "--realtime"],
                                     logDirectory: directory, name: "relay")
        #expect(relay.wait(seconds: 60) == 0, "facerelay: \(relay.stderr)")
        let report = try MediaReport(output)
        #expect(report.frames.count >= 297, "\(report.frames.count) of 300 frames relayed")
        let times = report.frames.map(\.seconds)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "timestamps go back")
    }
}
