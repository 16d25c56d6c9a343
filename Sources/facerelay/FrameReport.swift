import FaceTracking
import MediaBridge
import StickerKit

/// The `inspect --json` line of one frame, written by hand: fixed decimals, keys in a fixed order.
enum FrameReport {
    static func json(frame: Int, seconds: Double, faces: some Collection<TrackedFace>, rules: [ExpressionRule], scene: StickerScene? = nil) -> String {
        var line = "{\"frame\":\(frame),\"pts\":\(formatted(seconds, decimals: 6)),\"faces\":["
        var first = true
        for face in faces where face.isShown {
            if !first { line += "," }
            first = false
            let box = face.box
            line += "{\"id\":\(face.id),\"confidence\":\(formatted(Double(face.confidence), decimals: 3)),\"box\":[\(number(box.x)),\(number(box.y)),\(number(box.width)),\(number(box.height))]"
            line += ",\"landmarks\":" + points(face.landmarks) + ",\"rawLandmarks\":" + points(face.rawLandmarks)
            if let pose = face.pose {
                line += ",\"pose\":{\"yaw\":\(formatted(pose.yaw, decimals: 2)),\"pitch\":\(formatted(pose.pitch, decimals: 2)),\"roll\":\(formatted(pose.roll, decimals: 2))}"
            } else {
                line += ",\"pose\":null"
            }
            line += ",\"expressions\":{"
            for (index, rule) in rules.enumerated() {
                line += (index > 0 ? "," : "") + "\"\(rule.analyser.name)\":\(formatted(Double(face.expressions.coefficients[index]), decimals: 3))"
            }
            line += "},\"expressionsOn\":["
            var firstOn = true
            for (index, rule) in rules.enumerated() where face.expressions.active[index] {
                line += (firstOn ? "" : ",") + "\"\(rule.analyser.name)\""
                firstOn = false
            }
            line += "]"
            if let scene { line += ",\"stickers\":" + stickers(scene, face: face.id) }
            line += "}"
        }
        return line + "]}"
    }

    /// Each item drawn on the face: its id, animation frame, and where the corners and the centre
    /// of its picture land (top left, top right, bottom right, bottom left).
    private static func stickers(_ scene: StickerScene, face: Int) -> String {
        var text = "["
        for placement in scene.placements where placement.faceID == face {
            let item = scene.package.items[placement.item]
            let w = Double(item.designWidth), h = Double(item.designHeight)
            func point(_ x: Double, _ y: Double) -> String {
                guard let p = placement.transform.apply(x, y) else { return "null" }
                return "[\(formatted(p.x, decimals: 2)),\(formatted(p.y, decimals: 2))]"
            }
            text += (text.count > 1 ? "," : "") + "{\"item\":\"\(item.id)\",\"frame\":\(placement.frame),\"corners\":["
                + [point(0, 0), point(w, 0), point(w, h), point(0, h)].joined(separator: ",") + "],\"centre\":" + point(w / 2, h / 2) + "}"
        }
        return text + "]"
    }

    private static func number(_ value: Float) -> String { formatted(Double(value), decimals: 2) }

    private static func points(_ landmarks: Landmarks) -> String {
        var text = "["
        for i in 0..<Landmark.count { text += (i > 0 ? "," : "") + "[\(number(landmarks[i].x)),\(number(landmarks[i].y))]" }
        return text + "]"
    }
}

/// Tracking figures of one run: what `--stats-json` of `inspect` holds.
struct TrackingStats {
    /// Frames that hold the tracker's start: the first frame's scans for every face size.
    static let startFrames = 30

    let frames: Int
    let cpuNanoseconds: UInt64
    /// Tracking CPU after the first `startFrames` frames: what a stream that runs on costs per frame.
    let steadyCPUNanoseconds: UInt64
    let faceFrames: Int
    /// Sticker CPU (placement and blending), when a sticker package was drawn.
    var stickerNanoseconds: UInt64? = nil

    var trackMillisecondsPerFrame: Double { frames > 0 ? Double(cpuNanoseconds) / 1e6 / Double(frames) : 0 }
    var steadyTrackMillisecondsPerFrame: Double? {
        frames > Self.startFrames ? Double(steadyCPUNanoseconds) / 1e6 / Double(frames - Self.startFrames) : nil
    }
    var facesPerFrame: Double { frames > 0 ? Double(faceFrames) / Double(frames) : 0 }

    func write(to path: String) throws(MediaError) {
        let text = "{\"frames\":\(frames),\"track_ms_per_frame\":\(formatted(trackMillisecondsPerFrame, decimals: 4)),\"faces_tracked\":\(formatted(facesPerFrame, decimals: 3))"
            + (steadyTrackMillisecondsPerFrame.map { ",\"steady_track_ms_per_frame\":\(formatted($0, decimals: 4))" } ?? "")
            + (stickerNanoseconds.map { ",\"sticker_ms_per_frame\":\(formatted(frames > 0 ? Double($0) / 1e6 / Double(frames) : 0, decimals: 4))" } ?? "") + "}\n"
        guard let file = fopen(path, "w") else { throw MediaError(.output, "cannot write \(path)") }
        defer { fclose(file) }
        fputs(text, file)
    }
}

import Glibc
