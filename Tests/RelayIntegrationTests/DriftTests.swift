import Foundation
import Testing
import TestFixtures

/// Ten minutes through the relay: the audio stays exactly as far from the video as in the input,
/// at the first beep and at the last.
@Suite struct DriftTests {
    /// Presentation times of a file's video packets, in order.
    static func videoTimes(_ path: String) throws -> [Double] {
        String(decoding: try run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time", "-of", "csv=p=0", path]),
               as: UTF8.self).split(separator: "\n").compactMap { Double($0.split(separator: ",")[0]) }.sorted()
    }

    /// For each beep, its onset minus the time of its marker frame (30, 90, 150...).
    static func offsets(_ path: String) throws -> [Double] {
        let video = try videoTimes(path)
        let beeps = try MediaReport.beeps(path, codec: "aac")
        return Fixtures.beepFrames(upTo: video.count).compactMap { marker in
            let frameTime = video[marker]
            guard let onset = beeps.min(by: { abs($0 - frameTime) < abs($1 - frameTime) }), abs(onset - frameTime) < 0.5 else { return nil }
            return onset - frameTime
        }
    }

    @Test func tenMinutesWithoutDrift() throws {
        let directory = try Package.temporaryDirectory("drift")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path("face_180p_10min.flv")
        let output = directory + "/relayed.flv"
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", input, "--output", output], logDirectory: directory, name: "relay")
        #expect(relay.wait(seconds: 300) == 0, "facerelay: \(relay.stderr)")
        #expect(try Self.videoTimes(output).count == 18_000)

        let inputOffsets = try Self.offsets(input)
        let outputOffsets = try Self.offsets(output)
        #expect(inputOffsets.count == 300 && outputOffsets.count == 300, "beeps found: \(inputOffsets.count) in, \(outputOffsets.count) out")
        let frame = 1 / Fixtures.framesPerSecond
        for (minute, (relayed, original)) in zip(outputOffsets, inputOffsets).enumerated() where minute % 30 == 0 || minute == 299 {
            #expect(abs(relayed - original) <= frame, "beep \(minute): offset \(Int(relayed * 1000)) ms, input's \(Int(original * 1000)) ms")
        }
        let spread = (outputOffsets.max() ?? 0) - (outputOffsets.min() ?? 0)
        #expect(spread <= frame, "the offset moved by \(Int(spread * 1000)) ms over ten minutes")
    }
}
