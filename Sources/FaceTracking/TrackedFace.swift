/// One face followed across frames.
public struct TrackedFace {
    /// Stable while the face stays in view; a face that is lost and found again later gets a new one.
    public let id: Int
    /// The face box the landmarks were fitted in, in the detector's framing.
    public internal(set) var box: FaceBox
    /// Smoothed landmarks: what stickers are placed on.
    public internal(set) var landmarks: Landmarks
    /// The landmarks as fitted on this frame, before smoothing.
    public internal(set) var rawLandmarks: Landmarks
    public internal(set) var pose: HeadPose?
    public internal(set) var expressions: ExpressionState
    /// True while the face is not found on this frame but kept for a few frames at its last place.
    public internal(set) var isHeld = false

    let filter: LandmarkFilter
    var framing: BoxFraming
    var poseHistory = PoseHistory()
    var heldFrames = 0
    var missedDetections = 0
    /// True while the fit's box reaches past the frame's edge: part of the face may be off the frame.
    var atEdge = false
    /// Eye distance when detection last found this face.
    var confirmedSize: Float

    init(id: Int, box: FaceBox, raw: Landmarks, filter: LandmarkFilter, ruleCount: Int) {
        self.id = id
        self.box = box
        self.filter = filter
        rawLandmarks = raw
        landmarks = raw
        framing = BoxFraming(detection: box, landmarks: raw)
        confirmedSize = raw.eyeDistance
        expressions = ExpressionState(ruleCount: ruleCount)
    }
}

/// Where the detector would put its box around a set of landmarks, learnt from the face's own
/// detections: the box centre sits at a fixed offset from the landmarks' centroid and its side is a
/// fixed multiple of their extent, both measured along the face's own axes so that an in-plane
/// rotation of the head does not grow the box. The box is square, as dlib's detector draws it, so
/// the fit and the box cannot drift into an ever wider or taller shape together.
struct BoxFraming {
    var offsetX: Float, offsetY: Float, sideScale: Float

    struct Geometry {
        var centroid: Point, cos: Float, sin: Float, width: Float, height: Float
    }

    static func geometry(_ landmarks: Landmarks) -> Geometry {
        let centroid = landmarks.centroid
        let angle = landmarks.eyeLineAngle
        let c = cosf(-angle), s = sinf(-angle)
        var minX = Float.infinity, maxX = -Float.infinity, minY = Float.infinity, maxY = -Float.infinity
        for i in 0..<68 {
            let p = (landmarks[i] - centroid).rotated(cos: c, sin: s)
            minX = min(minX, p.x); maxX = max(maxX, p.x)
            minY = min(minY, p.y); maxY = max(maxY, p.y)
        }
        return Geometry(centroid: centroid, cos: cosf(angle), sin: sinf(angle), width: maxX - minX, height: maxY - minY)
    }

    init(detection: FaceBox, landmarks: Landmarks) {
        let g = Self.geometry(landmarks)
        let offset = (detection.centre - g.centroid).rotated(cos: g.cos, sin: -g.sin)
        let width = max(g.width, 1), height = max(g.height, 1)
        offsetX = offset.x / width
        offsetY = offset.y / height
        sideScale = (detection.width * detection.height).squareRoot() / (width * height).squareRoot()
    }

    /// Moves part of the way towards the framing of a new detection, so one noisy box cannot jolt it.
    mutating func learn(detection: FaceBox, landmarks: Landmarks, rate: Float = 0.2) {
        let new = BoxFraming(detection: detection, landmarks: landmarks)
        offsetX += (new.offsetX - offsetX) * rate
        offsetY += (new.offsetY - offsetY) * rate
        sideScale += (new.sideScale - sideScale) * rate
    }

    func box(around landmarks: Landmarks) -> FaceBox {
        let g = Self.geometry(landmarks)
        let centre = g.centroid + Point(x: offsetX * g.width, y: offsetY * g.height).rotated(cos: g.cos, sin: g.sin)
        let side = sideScale * (max(g.width, 1) * max(g.height, 1)).squareRoot()
        return FaceBox(x: centre.x - side / 2, y: centre.y - side / 2, width: side, height: side)
    }
}

#if canImport(Glibc)
import Glibc
#endif
