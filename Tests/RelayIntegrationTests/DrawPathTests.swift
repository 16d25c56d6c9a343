import Foundation
import FrameKit
import Logging
import MediaBridge
import StreamPlan
import Synchronization
import Testing
import TestFixtures

/// A stage that never draws: every frame passes through.
private final class PassThroughStage: FrameStage {
    func analyse(_ frame: VideoFrame) -> StageDecision { .passThrough }
    func draw(on frame: VideoFrame) {}
}

/// A stage that asks to draw on every other frame and paints a white square on it.
private final class SquareStage: FrameStage {
    static let box = (x: 128, y: 320, size: 64)
    private struct Counts {
        var analysed = 0
        var drawn = 0
        var sawNonIncreasingPTS = false
        var lastPTS: Int64 = -1
    }
    /// Changed on the relay's frame thread, read by the test once the relay is done.
    private let counts = Mutex(Counts())
    var analysed: Int { counts.withLock { $0.analysed } }
    var drawn: Int { counts.withLock { $0.drawn } }
    var sawNonIncreasingPTS: Bool { counts.withLock { $0.sawNonIncreasingPTS } }

    func analyse(_ frame: VideoFrame) -> StageDecision {
        counts.withLock { counts in
            if frame.pts <= counts.lastPTS { counts.sawNonIncreasingPTS = true }
            counts.lastPTS = frame.pts
            counts.analysed += 1
            return counts.analysed % 2 == 0 ? .draw : .passThrough
        }
    }

    func draw(on frame: VideoFrame) {
        counts.withLock { $0.drawn += 1 }
        let box = Self.box
        for y in box.y..<(box.y + box.size) {
            frame.luma.row(y).advanced(by: box.x).update(repeating: 235, count: box.size)
        }
        for y in (box.y / 2)..<((box.y + box.size) / 2) {
            frame.chromaU.row(y).advanced(by: box.x / 2).update(repeating: 128, count: box.size / 2)
            frame.chromaV.row(y).advanced(by: box.x / 2).update(repeating: 128, count: box.size / 2)
        }
    }
}

@Suite struct DrawPathTests {
    @Test func drawnFramesGoOutWithTheDrawingAndTheRestUntouched() throws {
        let directory = try Package.temporaryDirectory("draw")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path("face_720p.mp4")
        let output = directory + "/drawn.mkv"
        let stage = SquareStage()
        let relay = try MediaRelay(input: .file(path: input), outputs: [.file(path: output, container: .mkv)], settings: RelaySettings(),
                                   library: PipelineLibrary(directory: Package.root.appendingPathComponent("Pipelines").path),
                                   stage: stage, logger: Logger(label: "test"))
        try relay.run()
        #expect(stage.analysed == 180 && stage.drawn == 90)
        #expect(!stage.sawNonIncreasingPTS)
        #expect(relay.counters.framesOut == 180)
        // Only the drawn frames are copied (see the test below).
        #expect(relay.counters.framesCopied == 90)

        let report = try MediaReport(output)
        let reference = try ReferenceReports.report(input)
        #expect(report.frames.compactMap(\.index) == Array(0..<180))
        // The square, in the 320x180 analysis pictures: a quarter of its full-size coordinates.
        let inside = (x: SquareStage.box.x / 4 + 4, y: SquareStage.box.y / 4 + 4)
        for frame in report.frames {
            guard let index = frame.index else { continue }
            let value = frame.pixels[inside.y * MediaReport.width + inside.x]
            if index % 2 == 1 {
                #expect(value > 220, "frame \(index) should carry the square: \(value)")
            } else {
                #expect(value < 200, "frame \(index) should be untouched: \(value)")
                #expect(MediaReport.psnr(frame.pixels, reference.frames[index].pixels) > 30)
            }
        }
    }

    /// Frames nothing is drawn on go to the encoder as decoded, uncopied, whether the input's clock
    /// starts at 0.067 s (MP4, after two B-frames) or at 1.47 s (MPEG-TS), and come out at the same
    /// times, in sync. Sent as they are without the encoder's offset (`EncoderStamps`), they came out
    /// late against the audio: 0.067 s for the MP4, 0.77 s for the TS.
    @Test(arguments: [("face_720p.mp4", 180), ("face_720p.ts", 360)])
    func framesNothingIsDrawnOnGoOutUncopiedAtTheirTimes(fixture: String, frames: Int) throws {
        let directory = try Package.temporaryDirectory("uncopied")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path(fixture)
        let output = directory + "/relayed.mkv"
        let relay = try MediaRelay(input: .file(path: input), outputs: [.file(path: output, container: .mkv)], settings: RelaySettings(),
                                   library: PipelineLibrary(directory: Package.root.appendingPathComponent("Pipelines").path),
                                   stage: PassThroughStage(), logger: Logger(label: "test"))
        try relay.run()
        #expect(relay.counters.framesOut == frames)
        #expect(relay.counters.framesCopied == 0)

        let report = try MediaReport(output)
        expectFaithfulRelay(report, of: try ReferenceReports.report(input), expectAudio: true, frameTolerance: 0)
        #expect(report.frames.compactMap(\.index) == Array(0..<frames))
        let lateFrames = report.frames.filter { frame in frame.index.map { abs(frame.seconds - Double($0) / 30) > 0.002 } ?? true }
        #expect(lateFrames.isEmpty, "frames not at index / 30 s: \(lateFrames.prefix(5).map { ($0.index ?? -1, $0.seconds) })")
    }

    /// Closed captions the broadcaster embeds (CEA-608 in H.264 SEI) reach x264 as the decoded
    /// frame's caption metadata: frames drawn on, which go out as copies, carry them as the frames
    /// sent uncopied do. Without the copy taking the decoded frame's metadata, the drawn half of the
    /// captioned frames lost their captions.
    @Test func captionsGoOutOnDrawnFramesAndOnTheRest() throws {
        let directory = try Package.temporaryDirectory("captions")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path("face_720p_captions.mp4")
        let output = directory + "/captioned.mkv"
        let stage = SquareStage()
        let relay = try MediaRelay(input: .file(path: input), outputs: [.file(path: output, container: .mkv)], settings: RelaySettings(),
                                   library: PipelineLibrary(directory: Package.root.appendingPathComponent("Pipelines").path),
                                   stage: stage, logger: Logger(label: "test"))
        try relay.run()
        #expect(stage.drawn == 90 && relay.counters.framesCopied == 90)

        let captioned = try Self.captionedFrames(input)
        #expect(captioned.contains(1) && captioned.contains(2), "the fixture should caption frames drawn on and not: \(captioned)")
        #expect(try Self.captionedFrames(output) == captioned)
    }

    /// The indices (time x 30 from the first frame) of a file's video frames that carry caption data.
    static func captionedFrames(_ path: String) throws -> [Int] {
        struct Probe: Decodable {
            struct Frame: Decodable {
                struct SideData: Decodable { let side_data_type: String? }
                let pts_time: String
                let side_data_list: [SideData]?
            }
            let frames: [Frame]
        }
        let probe = try JSONDecoder().decode(Probe.self, from: run("/usr/bin/ffprobe", [
            "-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts_time:frame_side_data=side_data_type", "-of", "json", path]))
        let times = probe.frames.compactMap { Double($0.pts_time) }
        guard let first = times.min() else { return [] }
        return probe.frames.filter { frame in
            frame.side_data_list?.contains { $0.side_data_type?.contains("Closed Captions") == true } == true
        }.compactMap { Double($0.pts_time) }.map { Int((($0 - first) * 30).rounded()) }.sorted()
    }
}
