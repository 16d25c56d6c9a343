import FaceTracking
import FrameKit

/// Draws what the tracker sees, so a person can check it by eye: each face's box and id, its 68
/// landmarks, the head-pose axes from the nose tip (red x, green y, blue towards the camera), and one
/// bar per expression (yellow while the expression is on).
public struct TrackingOverlay: Sendable {
    public init() {}

    public func draw(_ faces: some Collection<TrackedFace>, ruleCount: Int, on frame: VideoFrame) {
        let canvas = Canvas(frame)
        let scale = max(1, frame.width / 640)
        for face in faces where face.isShown {
            let box = face.box
            canvas.strokeRectangle(x: Int(box.x), y: Int(box.y), width: Int(box.width), height: Int(box.height),
                                   thickness: scale, .white)
            canvas.text("#\(face.id)", x: Int(box.x), y: Int(box.y) - 8 * scale, scale: 2 * scale, .white)
            for i in 0..<Landmark.count {
                canvas.disc(x: face.landmarks[i].x, y: face.landmarks[i].y, radius: Float(scale) * 1.5, .green)
            }
            if let pose = face.pose {
                let nose = face.landmarks[Landmark.noseTip]
                let length = face.landmarks.eyeDistance * 0.8
                let r = pose.rotation
                // Columns of the rotation: the model's axes in camera coordinates (z flipped to point at the viewer).
                for (axis, sign, colour) in [(0, Float(1), YUVColour.red), (1, 1, .green), (2, -1, .blue)] {
                    let end = (x: nose.x + sign * Float(r[axis]) * length, y: nose.y + sign * Float(r[3 + axis]) * length)
                    canvas.line(from: (nose.x, nose.y), to: end, thickness: Float(scale), colour)
                }
            }
            let barWidth = Int(box.width)
            for rule in 0..<min(ruleCount, face.expressions.coefficients.count) {
                let top = Int(box.y + box.height) + 4 * scale + rule * 6 * scale
                canvas.fillRectangle(x: Int(box.x), y: top, width: barWidth, height: 4 * scale, .grey)
                let filled = Int(Float(barWidth) * face.expressions.coefficients[rule])
                canvas.fillRectangle(x: Int(box.x), y: top, width: filled, height: 4 * scale,
                                     face.expressions.active[rule] ? .yellow : .white)
            }
        }
    }
}
