/// Head pose from the landmarks and a generic 3D face model.
///
/// Angles are in degrees, zero when the face looks straight at the camera, wherever it is in the
/// frame: they are the head's turn against the line of sight to it (a face swaying from side to
/// side while it looks at the camera does not turn; `rotation` is against the camera's axis). Yaw
/// turns the nose towards the image's left (positive: the subject turns to their right) or right,
/// pitch tilts the chin down (positive) or up, roll tilts the head clockwise in the image
/// (positive). Reliable within about ±45° of yaw: beyond that the far eye and mouth corner are
/// hidden, the 68-point fit folds them onto the visible side, and yaw is underestimated while pitch
/// and roll pick up errors.
public struct HeadPose: Sendable, Equatable {
    public var yaw: Double
    public var pitch: Double
    public var roll: Double
    /// Row-major rotation of the model in camera coordinates (x right, y down, z away from the camera),
    /// against the camera's axis.
    public var rotation: InlineArray<9, Double>
    /// Position of the model's nose tip in camera coordinates, millimetres.
    public var translation: InlineArray<3, Double>

    public init(yaw: Double, pitch: Double, roll: Double, rotation: InlineArray<9, Double>, translation: InlineArray<3, Double>) {
        self.yaw = yaw
        self.pitch = pitch
        self.roll = roll
        self.rotation = rotation
        self.translation = translation
    }

    /// The angle of the rotation that turns `other` into this pose, in degrees (0 to 180).
    public func degreesTurned(from other: HeadPose) -> Double {
        // trace(other^T * self) = 1 + 2 cos(angle)
        var trace = 0.0
        for i in 0..<9 { trace += rotation[i] * other.rotation[i] }
        return acos(min(1, max(-1, (trace - 1) / 2))) * 180 / Double.pi
    }

    public static func == (a: HeadPose, b: HeadPose) -> Bool {
        a.yaw == b.yaw && a.pitch == b.pitch && a.roll == b.roll
    }
}

/// The vision back end the tracker runs on: dlib and OpenCV in production, recorded data in tests.
/// A method that throws reports a failure of the back end itself; the tracker counts it in
/// `FaceTracker.visionErrors` and carries on.
/// Works on the frame thread, on faces whose place is known.
public protocol FaceLandmarker: AnyObject {
    /// Fits the 68 landmarks inside `box` (drawn as the detector draws it around the upright face)
    /// turned by `angle` radians about its centre, on a grey image; nil when there is no face to fit there.
    func fit(_ grey: FrameKit.Plane, in box: FaceBox, angle: Float) throws -> Landmarks?
    /// The detector's best window of the size of `box` (turned by `angle`) within `reach` box widths
    /// of it: a detection around a face whose place is known, on the current frame.
    func locateFace(_ grey: FrameKit.Plane, around box: FaceBox, angle: Float, reach: Float) throws -> FaceSighting
}

/// Where the detector sees a face best near a given box, and how surely.
public struct FaceSighting: Sendable, Equatable {
    /// As the detector draws it around the upright face (turned by the angle that was searched).
    public var box: FaceBox
    /// 0 is the detection threshold; faces score up to about 3, background about -1 or less, and
    /// -2 means nothing scored higher (`box` is then the box searched).
    public var score: Float

    public init(box: FaceBox, score: Float) {
        self.box = box
        self.score = score
    }
}

/// Levels of the detector's image pyramid: level 0 is the image itself (faces of about 73 pixels),
/// each next level 5/6 the size of the one above (faces 6/5 larger).
public struct PyramidLevels: Sendable, Equatable, CustomStringConvertible {
    public var first: Int
    /// How many levels from `first`; nil: every level to the smallest.
    public var count: Int?

    public init(first: Int, count: Int?) {
        self.first = first
        self.count = count
    }

    /// Every level: what dlib's detector scans.
    public static let all = PyramidLevels(first: 0, count: nil)

    public var description: String { count.map { "levels \(first)..<\(first + $0)" } ?? "levels \(first)..." }
}

/// Finds faces. Not Sendable: a tracker's `DetectionWorker` hands its detector between the frame thread
/// (which copies the frame into the worker's image) and the detection thread (which detects), one at a time.
public protocol FaceDetector: AnyObject {
    /// Writes up to `into.count` faces with their scores, most confident first, and returns how many:
    /// the windows dlib's detector finds on `grey` at the pyramid levels `levels`.
    func detect(_ grey: FrameKit.Plane, levels: PyramidLevels, into faces: UnsafeMutableBufferPointer<FaceSighting>) throws -> Int
}

public protocol PoseSolver: AnyObject {
    /// The pose for landmarks in a frame of the given size, seeded by the previous pose of the face;
    /// nil when there is none.
    func solve(_ landmarks: Landmarks, frameWidth: Int, frameHeight: Int, previous: HeadPose?) throws -> HeadPose?
}

import FrameKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
