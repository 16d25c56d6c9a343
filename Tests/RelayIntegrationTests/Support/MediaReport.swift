import Foundation
import TestFixtures

/// What a media file holds, measured with ffprobe/ffmpeg: its streams, every video frame (as a small
/// grey picture, with its timestamp and the frame index read from the fixture's barcode), and the
/// onsets of its audio beeps.
struct MediaReport: Sendable {
    struct Stream: Sendable {
        let type: String
        let codec: String
        let width: Int
        let height: Int
    }

    struct Frame: Sendable {
        /// Index of the input frame this picture shows, read from the barcode; nil when unreadable.
        let index: Int?
        let seconds: Double
        let pixels: [UInt8]
    }

    static let width = 320, height = 180
    /// Rows of the small picture covered by the barcode (16 of 720 full-size rows).
    static let barcodeRows = 4

    let path: String
    let streams: [Stream]
    let frames: [Frame]
    let beepOnsets: [Double]

    var video: Stream? { streams.first { $0.type == "video" } }
    var audio: Stream? { streams.first { $0.type == "audio" } }

    init(_ path: String) throws {
        self.path = path
        let probe = try run("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "stream=codec_type,codec_name,width,height", "-of", "json", path])
        let json = try JSONSerialization.jsonObject(with: probe) as? [String: Any]
        streams = (json?["streams"] as? [[String: Any]] ?? []).map {
            Stream(type: $0["codec_type"] as? String ?? "", codec: $0["codec_name"] as? String ?? "",
                   width: $0["width"] as? Int ?? 0, height: $0["height"] as? Int ?? 0)
        }
        frames = streams.contains { $0.type == "video" } ? try Self.videoFrames(path) : []
        beepOnsets = try streams.first { $0.type == "audio" }.map { try Self.beeps(path, codec: $0.codec) } ?? []
    }

    private static func videoFrames(_ path: String) throws -> [Frame] {
        let times = String(decoding: try run("/usr/bin/ffprobe", [
            "-v", "error", "-select_streams", "v:0", "-show_entries", "frame=best_effort_timestamp_time", "-of", "csv=p=0", path,
        ]), as: UTF8.self).split(separator: "\n").compactMap { Double($0.split(separator: ",")[0]) }
        let raw = try run("/usr/bin/ffmpeg", [
            "-v", "error", "-nostdin", "-i", path, "-map", "0:v:0", "-vf", "scale=\(width):\(height):flags=area",
            "-fps_mode", "passthrough", "-pix_fmt", "gray", "-f", "rawvideo", "-",
        ])
        let size = width * height
        let count = min(raw.count / size, times.count)
        return (0..<count).map { n in
            let pixels = [UInt8](raw[(n * size)..<((n + 1) * size)])
            return Frame(index: frameIndex(pixels), seconds: times[n], pixels: pixels)
        }
    }

    /// Reads the 20-bit barcode (64-pixel blocks at full size, 16 here) in the top rows.
    static func frameIndex(_ pixels: [UInt8]) -> Int? {
        var index = 0
        for bit in 0..<20 {
            let x = bit * 16 + 8
            let value = (Int(pixels[1 * width + x]) + Int(pixels[2 * width + x])) / 2
            if value > 170 { index |= 1 << bit } else if value > 80 { return nil }
        }
        return index
    }

    /// Beep onsets in the packet domain: the timestamp of the first large AAC packet after silent
    /// ones. Relayed AAC is bit-for-bit the input's, so this compares input and output exactly,
    /// free of the decoder's start-up trimming (which differs between a file that starts on the
    /// encoder's priming packet and one that starts mid-stream).
    static func beeps(_ path: String, codec: String) throws -> [Double] {
        guard codec == "aac" else { return [] }
        let packets = String(decoding: try run("/usr/bin/ffprobe", [
            "-v", "error", "-select_streams", "a:0", "-show_entries", "packet=pts_time,size", "-of", "csv=p=0", path,
        ]), as: UTF8.self).split(separator: "\n").compactMap { line -> (Double, Int)? in
            let fields = line.split(separator: ",")
            guard fields.count >= 2, let time = Double(fields[0]), let size = Int(fields[1]) else { return nil }
            return (time, size)
        }
        // Silent AAC frames are a few bytes; a 1 kHz tone needs hundreds.
        let loud = 50
        return zip(packets.dropFirst(), packets).compactMap { current, previous in
            current.1 >= loud && previous.1 < loud ? current.0 : nil
        }
    }

    /// Peak signal-to-noise ratio between two small pictures, below the barcode, in dB.
    static func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
        var sum = 0.0
        for i in (barcodeRows * width)..<(width * height) {
            let d = Double(a[i]) - Double(b[i])
            sum += d * d
        }
        let mse = sum / Double(width * (height - barcodeRows))
        return mse == 0 ? 99 : 10 * log10(255 * 255 / mse)
    }

    /// For each beep, the time from the marker frame it belongs to (30, 90, 150...) to the beep's
    /// onset: how far the audio sits from the video.
    func audioVideoOffsets() -> [Double] {
        audioVideoOffsetsByMarker().sorted { $0.key < $1.key }.map(\.value)
    }

    /// The same, by the index of the marker frame.
    func audioVideoOffsetsByMarker() -> [Int: Double] {
        var byIndex: [Int: Double] = [:]
        for frame in frames { if let index = frame.index, byIndex[index] == nil { byIndex[index] = frame.seconds } }
        var offsets: [Int: Double] = [:]
        for marker in Fixtures.beepFrames(upTo: 100_000) {
            guard let videoTime = byIndex[marker] else { continue }
            guard let onset = beepOnsets.min(by: { abs($0 - videoTime) < abs($1 - videoTime) }), abs(onset - videoTime) < 0.5 else { continue }
            offsets[marker] = onset - videoTime
        }
        return offsets
    }
}

/// Input reports are measured once per run.
enum ReferenceReports {
    private static let cache = NSLock()
    nonisolated(unsafe) private static var reports: [String: MediaReport] = [:]

    static func report(_ path: String) throws -> MediaReport {
        cache.lock()
        defer { cache.unlock() }
        if let report = reports[path] { return report }
        let report = try MediaReport(path)
        reports[path] = report
        return report
    }
}
