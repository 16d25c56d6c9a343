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
    /// How surely the fit is on a face, 0...1: the face detector's score on the fitted face's box,
    /// from -1 (background) to +1 (a clear face) mapped onto 0...1.
    public internal(set) var confidence: Float
    /// Whether stickers are drawn on it on this frame. A face followed but not shown is just found,
    /// lost (kept a few frames at its last place) or doubted (its fit no longer scores as a face).
    public var isShown: Bool { life.isShown }

    let filter: LandmarkFilter
    var framing: BoxFraming
    var poseHistory = PoseHistory()
    var expressionHistory = ExpressionHistory()
    var life: FaceLife
    /// How far the face moved and turned from the frame before to this one: the prediction for the next.
    var motion = FaceMotion.none
    /// The last fit was taken for a jump, so `motion` is none for want of a speed, not because the
    /// face stopped: a face turning straight back at speed is seen as a jump, and goes on moving.
    var jumped = false
    /// The smoothed landmarks as the last fit left them and its time, and how far they moved and
    /// turned since the fit before and in how many seconds: what `FaceTracker.coast` carries
    /// `landmarks` on by on a frame that is not fitted.
    var landmarksAtFit: Landmarks
    var fittedAt: Double = 0
    /// When `pose` was solved: a pose held against a turn too fast for a head is older than the fit.
    var posedAt: Double = 0
    var landmarksMotion = FaceMotion.none
    var fitInterval: Double = 0
    /// Its inner face's pixels at the last fit, kept while the tracker coasts between fits
    /// (`FaceTracker.keepsPatches`), and how far they had moved on the last frame coasted, and when.
    var patch: FacePatch?
    var followedShift = Point.zero
    var followedAt: Double = 0
    var edge = EdgeContact.inside
    /// Its fit's region on the last frame it was shown wholly in view: where it is looked for once it
    /// is dropped (`FaceTracker.lostRegion`).
    var wholeRegion: FitRegion
    /// How to box it once it is wholly in view, when its framing was learnt from a box the frame's
    /// edge may cut: a face found again where one was lost is boxed as that one was.
    var framingWhenWhole: BoxFraming?
    /// Eye distance when detection last found this face.
    var confirmedSize: Float
    /// Side of its box then.
    var confirmedBoxSide: Float
    /// `confirmedBoxSide` on the last frame it was shown wholly in view: a face lost turning away is
    /// looked for at this size as it turns back (`FaceTracker.lostRegion`). Hidden while turning
    /// away, it can be restarted from the detector's box of its near half, two pyramid steps smaller.
    var wholeBoxSide: Float
    /// Side of its box when the detector last scored its size, a pyramid step either way.
    var sizeCheckedSide: Float
    /// How far its fit strays from the prediction on frames where nothing happened.
    var fitNoise: FitNoise
    /// Where its last fit started: held while the face stays where it was (`FaceTracker.refit`).
    var fitStart: FitRegion
    /// The face's size moved well away from the size detection last confirmed (it leans in or back):
    /// detection is due, before its fit grows or shrinks past what counts as plausible.
    var resized: Bool { abs(rawLandmarks.eyeDistance / max(1, confirmedSize) - 1) > 0.15 }

    init(id: Int, raw: Landmarks, framing: BoxFraming, filter: LandmarkFilter, ruleCount: Int, life: FaceLife, confidence: Float,
         fitNoise: FitNoise) {
        self.id = id
        self.life = life
        self.confidence = confidence
        self.box = framing.box(around: raw)
        fitStart = framing.region(around: raw)
        wholeRegion = fitStart
        self.filter = filter
        rawLandmarks = raw
        landmarks = raw
        landmarksAtFit = raw
        self.framing = framing
        self.fitNoise = fitNoise
        confirmedSize = raw.eyeDistance
        confirmedBoxSide = box.width
        wholeBoxSide = box.width
        sizeCheckedSide = box.width
        expressions = ExpressionState(ruleCount: ruleCount)
    }
}

/// Where the detector would put its box around a set of landmarks, learnt from the face's own
/// detections: the box centre sits at a fixed offset from the landmarks' centroid and its side is a
/// fixed multiple of their spread, both measured along the face's own axes so that an in-plane
/// rotation of the head does not grow the box. The box is square, as dlib's detector draws it, so
/// the fit and the box cannot drift into an ever wider or taller shape together.
///
/// Centroid and spread are those of the inner points (brows, eyes, nose, mouth), as standard
/// deviations: the jaw line is what a fit on a noisy face gets most wrong, and the extremes of the
/// points are their noisiest measure. Each frame's box is drawn from the last frame's fit, so the
/// box's noise is the next fit's: on the jaw's extremes, a 140 px face under sigma-6 sensor noise
/// lay up to 6.9 % of the eye distance from dlib's fit on the same box and was hidden for doubt on a
/// frame; on the inner points, up to 3.1 % and never hidden (DlibReferenceTests, noisy sequences).
struct BoxFraming {
    var offsetX: Float, offsetY: Float, sideScale: Float

    struct Geometry {
        var centroid: Point, cos: Float, sin: Float, width: Float, height: Float
    }

    /// Brows, nose, eyes and mouth: 17...67.
    static let innerPoints = 17..<68

    static func geometry(_ landmarks: Landmarks) -> Geometry {
        var sum = Point.zero
        for i in innerPoints { sum = sum + landmarks[i] }
        let centroid = sum * (1 / Float(innerPoints.count))
        let angle = landmarks.eyeLineAngle
        let c = cosf(-angle), s = sinf(-angle)
        var xx: Float = 0, yy: Float = 0
        for i in innerPoints {
            let p = (landmarks[i] - centroid).rotated(cos: c, sin: s)
            xx += p.x * p.x
            yy += p.y * p.y
        }
        let n = Float(innerPoints.count)
        return Geometry(centroid: centroid, cos: cosf(angle), sin: sinf(angle), width: (xx / n).squareRoot(), height: (yy / n).squareRoot())
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

    func box(around landmarks: Landmarks) -> FaceBox { region(around: landmarks).box }

    /// The box the detector would draw around the upright face, and the angle it is turned by, for
    /// landmarks moved on by `motion`.
    func region(around landmarks: Landmarks, moved motion: FaceMotion = .none) -> FitRegion {
        let g = Self.geometry(landmarks)
        let angle = landmarks.eyeLineAngle + motion.turn
        let c = cosf(angle), s = sinf(angle)
        let centre = g.centroid + motion.shift + Point(x: offsetX * g.width, y: offsetY * g.height).rotated(cos: c, sin: s)
        let side = sideScale * (max(g.width, 1) * max(g.height, 1)).squareRoot()
        return FitRegion(box: FaceBox(centre: centre, side: side), angle: angle)
    }
}

/// Where a face is fitted: the detector's box around the upright face, turned by `angle` radians
/// (clockwise on the image, as the eye line's angle) about its centre.
struct FitRegion {
    var box: FaceBox
    var angle: Float
}

/// How a face moved from one frame to the next: its landmarks' centroid shifted and its eye line turned.
struct FaceMotion {
    var shift: Point
    var turn: Float

    static let none = FaceMotion(shift: .zero, turn: 0)

    init(shift: Point, turn: Float) {
        self.shift = shift
        self.turn = turn
    }

    init(from before: Landmarks, to after: Landmarks) {
        shift = after.centroid - before.centroid
        var turn = after.eyeLineAngle - before.eyeLineAngle
        if turn > .pi { turn -= 2 * .pi } else if turn < -.pi { turn += 2 * .pi }
        self.turn = turn
    }

    func times(_ frames: Float) -> FaceMotion { FaceMotion(shift: shift * frames, turn: turn * frames) }
}

extension InlineArray where Element == Point, count == 68 {
    /// The landmarks turned by `motion.turn` about their centroid, then shifted by `motion.shift`.
    func moved(by motion: FaceMotion) -> Landmarks {
        let centroid = self.centroid
        let c = cosf(motion.turn), s = sinf(motion.turn)
        var moved = self
        for i in 0..<68 { moved[i] = centroid + motion.shift + (self[i] - centroid).rotated(cos: c, sin: s) }
        return moved
    }
}

#if canImport(Glibc)
import Glibc
#endif
