import Foundation
import Testing
import TestFixtures

/// Checks that `output` is `input` relayed: same size, H.264, AAC when the input had audio, the
/// input's own frames in order (a per-frame picture comparison, not just "a file exists"), at most
/// `frameTolerance` of them missing over the window it covers, and the audio as far from the video
/// as it was in the input (within one frame), at every beep.
func expectFaithfulRelay(_ output: MediaReport, of input: MediaReport, expectAudio: Bool, frameTolerance: Double = 0.03,
                         audioReencoded: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(output.video?.codec == "h264", "video codec of \(output.path)", sourceLocation: sourceLocation)
    #expect(output.video?.width == input.video?.width && output.video?.height == input.video?.height,
            "picture size \(output.video?.width ?? 0)x\(output.video?.height ?? 0)", sourceLocation: sourceLocation)
    if expectAudio {
        #expect(output.audio?.codec == "aac", "audio of \(output.path): \(output.audio?.codec ?? "none")", sourceLocation: sourceLocation)
    } else {
        #expect(output.audio == nil, "an audio track was invented", sourceLocation: sourceLocation)
    }

    let indices = output.frames.compactMap(\.index)
    #expect(output.frames.count > 30, "only \(output.frames.count) frames in \(output.path)", sourceLocation: sourceLocation)
    #expect(indices.count >= output.frames.count - 1, "unreadable frame barcodes: the pictures are not the input's", sourceLocation: sourceLocation)
    guard let first = indices.first, let last = indices.last else { return }
    #expect(zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 }, "frames out of order or repeated", sourceLocation: sourceLocation)
    let window = last - first + 1
    let missing = window - indices.count
    #expect(Double(missing) <= frameTolerance * Double(window),
            "\(missing) of \(window) input frames missing (frames \(first)...\(last))", sourceLocation: sourceLocation)

    var inputFrames: [Int: MediaReport.Frame] = [:]
    for frame in input.frames { if let index = frame.index { inputFrames[index] = frame } }
    let similarities = output.frames.compactMap { frame in
        frame.index.flatMap { inputFrames[$0] }.map { MediaReport.psnr(frame.pixels, $0.pixels) }
    }
    let worst = similarities.min() ?? 0
    let mean = similarities.reduce(0, +) / Double(max(similarities.count, 1))
    #expect(similarities.count == indices.count, sourceLocation: sourceLocation)
    #expect(worst >= 30 && mean >= 35, "picture similarity to the input: worst \(worst) dB, mean \(mean) dB", sourceLocation: sourceLocation)

    guard expectAudio else { return }
    // Passed-through AAC is compared packet for packet: one video frame of tolerance. Re-encoded
    // audio has new packet boundaries, so a beep is only located to within one AAC frame more.
    let frame = 1 / Fixtures.framesPerSecond + (audioReencoded ? 1024.0 / 48000 : 0)
    // Input audio that is not AAC (constant-size MP3 packets) cannot be read this way: its beeps
    // start on the marker frames by construction of the fixture.
    let inputOffsets = input.audio?.codec == "aac" ? input.audioVideoOffsets() : [0]
    let outputOffsets = output.audioVideoOffsets()
    let inputOffset = inputOffsets.reduce(0, +) / Double(max(inputOffsets.count, 1))
    #expect(!inputOffsets.isEmpty, "no beep found in the input", sourceLocation: sourceLocation)
    #expect(!outputOffsets.isEmpty, "no beep found at a marker frame in \(output.path)", sourceLocation: sourceLocation)
    for offset in outputOffsets {
        #expect(abs(offset - inputOffset) <= frame + 1e-6,
                "A/V offset \(Int(offset * 1000)) ms, input's \(Int(inputOffset * 1000)) ms (all: \(outputOffsets.map { Int($0 * 1000) }))",
                sourceLocation: sourceLocation)
    }
}

struct RelayStatsFile: Decodable {
    let frames_in: Int
    let frames_out: Int
    let frames_dropped: Int
    let fps: Double
    let stage_ms_per_frame: Double
    let process_cpu_cores: Double
    let rss_mb: Double
    let peak_rss_mb: Double
    let duration_s: Double
    let frames_missed_at_start: Int
    let load_level: Int
    let outputs: [Output]?
    let ingest_bytes: Int
    let ingest_bitrate_kbps: Double

    struct Output: Decodable {
        let index: Int
        let address: String
        let state: String
        let bytes_sent: Int
        let frames_sent: Int
        let frames_missed: Int
        let reconnects: Int
    }

    init(_ path: String) throws {
        self = try JSONDecoder().decode(Self.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }
}

/// Where a run of frame markers skips, as "last->next" (empty when none is missing between the first and the last).
func frameGaps(_ indices: [Int]) -> [String] {
    zip(indices, indices.dropFirst()).filter { $1 != $0 + 1 }.map { "\($0)->\($1)" }
}
