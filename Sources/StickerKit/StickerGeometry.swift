#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import FaceTracking

/// Where an item's picture goes on a face: the map from design pixels (the PNG's) to frame pixels.
///
/// In the plane, an item turns with the face's roll and scales with its landmarks. With `follow3D`
/// it also turns with the head's yaw and pitch: the picture is a flat card rotated in 3D about its
/// rotate centre and projected by a camera about seven eye-widths away, the distance of a webcam
/// from a face (the seed's model-view-projection, as one homography).
public enum StickerGeometry {
    /// Beyond this the picture would be seen nearly edge on, and the pose itself is unreliable.
    static let maximumTurn = 60.0 * .pi / 180
    /// Camera distance in eye widths (outer eye corners).
    static let cameraDistance = 7.0

    public static func transform(for item: StickerItem, landmarks: Landmarks, pose: HeadPose?) -> Homography? {
        let turn = item.follow3D ? pose.map { (yaw: clampTurn($0.yaw), pitch: clampTurn($0.pitch)) } : nil
        let width = Double(item.designWidth), height = Double(item.designHeight)
        switch item.placement {
        case .landmarks(let anchor):
            let pa = mean(anchor.pointA.landmarks, landmarks), pb = mean(anchor.pointB.landmarks, landmarks)
            let design = (x: anchor.pointB.x - anchor.pointA.x, y: anchor.pointB.y - anchor.pointA.y)
            let frame = (x: pb.x - pa.x, y: pb.y - pa.y)
            let angle = atan2(frame.y, frame.x) - atan2(design.y, design.x)
            let frameLength = (frame.x * frame.x + frame.y * frame.y).squareRoot()
            guard frameLength > 0.5 else { return nil }
            guard let turn else {
                let scale = frameLength / (design.x * design.x + design.y * design.y).squareRoot()
                let position = mean(anchor.position.landmarks, landmarks)
                return .translation(position.x, position.y) * .rotation(angle) * .scale(scale, scale)
                    * .translation(-anchor.position.x, -anchor.position.y)
            }
            // The landmarks' distance is foreshortened by the turn; the card gets it back in 3D.
            let seen = ((design.x * cos(turn.yaw)) * (design.x * cos(turn.yaw)) + (design.y * cos(turn.pitch)) * (design.y * cos(turn.pitch))).squareRoot()
            let scale = frameLength / seen
            let centre = anchor.rotateCenter ?? anchor.position
            let pivot = mean(centre.landmarks, landmarks)
            return .translation(pivot.x, pivot.y) * .rotation(angle) * perspective(turn, landmarks: landmarks)
                * .scale(scale, scale) * .translation(-centre.x, -centre.y)
        case .region(let region):
            let angle = Double(landmarks.eyeLineAngle)
            let c = cos(-angle), s = sin(-angle)
            var minX = Double.infinity, maxX = -Double.infinity, minY = Double.infinity, maxY = -Double.infinity
            for index in region.feature.landmarks {
                let p = landmarks[index]
                let x = Double(p.x) * c - Double(p.y) * s, y = Double(p.x) * s + Double(p.y) * c
                minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y); maxY = max(maxY, y)
            }
            var extentX = maxX - minX, extentY = maxY - minY
            guard extentX > 0.5, extentY > 0.5 else { return nil }
            if let turn {
                extentX /= cos(turn.yaw)
                extentY /= cos(turn.pitch)
            }
            // Centre in face axes, shifted by the offsets, then back to the frame's axes.
            let faceX = (minX + maxX) / 2 + region.offsetX * extentX, faceY = (minY + maxY) / 2 + region.offsetY * extentY
            let centre = (x: faceX * cos(angle) - faceY * sin(angle), y: faceX * sin(angle) + faceY * cos(angle))
            let size = Homography.scale(extentX * region.widthFactor / width, extentY * region.heightFactor / height)
            let turned = turn.map { perspective($0, landmarks: landmarks) } ?? .identity
            return .translation(centre.x, centre.y) * .rotation(angle) * turned * size * .translation(-width / 2, -height / 2)
        }
    }

    /// A card in the face's plane (pixels, origin at the pivot) turned by yaw then pitch and seen by a
    /// pinhole camera: x' = f X / (f + Z), y' = f Y / (f + Z). Positive yaw sends the card's right
    /// side away from the camera, positive pitch its lower side.
    static func perspective(_ turn: (yaw: Double, pitch: Double), landmarks: Landmarks) -> Homography {
        let eyes = Double(landmarks.eyeDistance) / max(0.3, cos(turn.yaw))
        let f = cameraDistance * max(eyes, 1)
        let cy = cos(turn.yaw), sy = sin(turn.yaw), cp = cos(turn.pitch), sp = sin(turn.pitch)
        return Homography(f * cy, -f * sp * sy, 0,
                          0, f * cp, 0,
                          sy, sp * cy, f)
    }

    static func clampTurn(_ degrees: Double) -> Double {
        min(maximumTurn, max(-maximumTurn, degrees * .pi / 180))
    }

    static func mean(_ indices: [Int], _ landmarks: Landmarks) -> (x: Double, y: Double) {
        var x = 0.0, y = 0.0
        for index in indices {
            x += Double(landmarks[index].x)
            y += Double(landmarks[index].y)
        }
        let count = Double(indices.count)
        return (x / count, y / count)
    }
}
