/// What an expression analyser sees of one face on one frame.
public struct FaceSample {
    public let landmarks: Landmarks
    public let pose: HeadPose?
    /// The face's recent head poses, oldest first (about one second).
    public let poseHistory: PoseHistory
    /// The face's recent eye and brow measures, this frame's included: how it looks at rest.
    public let history: ExpressionHistory

    public init(landmarks: Landmarks, pose: HeadPose?, poseHistory: PoseHistory, history: ExpressionHistory = ExpressionHistory()) {
        self.landmarks = landmarks
        self.pose = pose
        self.poseHistory = poseHistory
        self.history = history
    }
}

/// Turns one face into a coefficient in 0...1 for one expression. Add one by conforming to this
/// protocol and passing it in `ExpressionSettings.analysers`; the built-in ones stay as they are.
public protocol ExpressionAnalyser: Sendable {
    var name: String { get }
    func coefficient(of face: FaceSample) -> Float
}

/// When an expression counts as happening: at `threshold` and above (the minimum valid
/// coefficient), until it falls below `threshold - hysteresis`; one event per gesture.
public struct ExpressionRule: Sendable {
    public var analyser: any ExpressionAnalyser
    public var threshold: Float
    public var hysteresis: Float

    public init(_ analyser: any ExpressionAnalyser, threshold: Float, hysteresis: Float = 0.15) {
        self.analyser = analyser
        self.threshold = threshold
        self.hysteresis = hysteresis
    }
}

public struct ExpressionSettings: Sendable {
    public var rules: [ExpressionRule]

    public init(rules: [ExpressionRule] = ExpressionSettings.defaultRules) {
        self.rules = rules
    }

    public static let defaultRules: [ExpressionRule] = [
        ExpressionRule(EyeBlink(side: .left), threshold: 0.6),
        ExpressionRule(EyeBlink(side: .right), threshold: 0.6),
        ExpressionRule(MouthOpen(), threshold: 0.5),
        ExpressionRule(Smile(), threshold: 0.6),
        ExpressionRule(BrowRaise(), threshold: 0.6),
        ExpressionRule(HeadGesture(kind: .nod), threshold: 0.7, hysteresis: 0.5),
        ExpressionRule(HeadGesture(kind: .shake), threshold: 0.7, hysteresis: 0.5),
    ]

    /// Replaces the threshold of the named expression; false when no rule has that name.
    public mutating func setThreshold(_ threshold: Float, for name: String) -> Bool {
        guard let index = rules.firstIndex(where: { $0.analyser.name == name }) else { return false }
        rules[index].threshold = threshold
        return true
    }
}

/// An expression starting or ending on one face.
public struct ExpressionEvent: Sendable, Equatable {
    public let faceID: Int
    public let expression: String
    /// True when the expression starts, false when it ends.
    public let started: Bool
    /// Presentation time of the frame, seconds.
    public let seconds: Double

    public init(faceID: Int, expression: String, started: Bool, seconds: Double) {
        self.faceID = faceID
        self.expression = expression
        self.started = started
        self.seconds = seconds
    }
}

/// Coefficients and on/off state of every rule for one face. Created with the track; `update`
/// allocates nothing.
public struct ExpressionState {
    public private(set) var coefficients: ContiguousArray<Float>
    public private(set) var active: ContiguousArray<Bool>

    public init(ruleCount: Int) {
        coefficients = ContiguousArray(repeating: 0, count: ruleCount)
        active = ContiguousArray(repeating: false, count: ruleCount)
    }

    /// Updates the coefficients and calls `changed` with the index of each rule that just switched
    /// on (`started` true) or off.
    public mutating func update(_ sample: FaceSample, rules: [ExpressionRule], changed: (_ rule: Int, _ started: Bool) -> Void) {
        for (index, rule) in rules.enumerated() {
            let value = min(1, max(0, rule.analyser.coefficient(of: sample)))
            coefficients[index] = value
            if active[index] {
                if value < rule.threshold - rule.hysteresis {
                    active[index] = false
                    changed(index, false)
                }
            } else if value >= rule.threshold {
                active[index] = true
                changed(index, true)
            }
        }
    }
}

@inline(__always)
func ramp(_ value: Float, from low: Float, to high: Float) -> Float {
    min(1, max(0, (value - low) / (high - low)))
}

/// Eye closure from the eye aspect ratio (Soukupová and Čech, 2016): eyelid gap over eye width,
/// against how open this face's eyes usually are.
///
/// Open eyes measure 0.12-0.6 across the corpus's people (narrow eyes, eyes narrowed by a smile or
/// by looking down, a face turned to profile), so one fixed ratio for "open" reads some people as
/// blinking all the time and never sees them blink. The open ratio is the face's own instead: the
/// `openPercentile` of its recent ratios (`ExpressionHistory`), which a blink or a closure of a few
/// seconds does not move. A face with no history is judged against `open`.
public struct EyeBlink: ExpressionAnalyser {
    public enum Side: Sendable { case left, right }
    public let side: Side
    /// Aspect ratio of an open eye and of a closed one: the coefficient is 1 where the ratio has
    /// fallen from the face's own open ratio by the part `1 - closed / open` of it.
    public var open: Float = 0.27
    public var closed: Float = 0.12
    /// Which of the face's recent ratios is its open one: eyes are open most of the time, so a
    /// closure counts until it fills more than the other part of the history.
    public var openPercentile: Float = 0.8

    public init(side: Side) { self.side = side }

    public var name: String { side == .left ? "blinkLeft" : "blinkRight" }

    public static func aspectRatio(_ l: Landmarks, first: Int) -> Float {
        // Points first...first+5: outer/inner corner at +0 and +3, upper lid +1 +2, lower lid +5 +4.
        let width = l[first].distance(to: l[first + 3])
        guard width > 0 else { return 0 }
        return (l[first + 1].distance(to: l[first + 5]) + l[first + 2].distance(to: l[first + 4])) / (2 * width)
    }

    public func coefficient(of face: FaceSample) -> Float {
        let ratio = Self.aspectRatio(face.landmarks, first: side == .left ? Landmark.leftEye.lowerBound : Landmark.rightEye.lowerBound)
        let history = side == .left ? face.history.leftEye : face.history.rightEye
        let ownOpen = history.percentile(openPercentile) ?? open
        guard ownOpen > 0 else { return 0 }
        return ramp(1 - ratio / ownOpen, from: 0, to: 1 - closed / open)
    }
}

/// Gap between the inner lips over the mouth width.
public struct MouthOpen: ExpressionAnalyser {
    public var closed: Float = 0.08
    public var open: Float = 0.55
    public init() {}
    public var name: String { "mouthOpen" }

    public func coefficient(of face: FaceSample) -> Float {
        let l = face.landmarks
        let width = l[60].distance(to: l[64])
        guard width > 0 else { return 0 }
        let gap = (l[61].distance(to: l[67]) + l[62].distance(to: l[66]) + l[63].distance(to: l[65])) / 3
        return ramp(gap / width, from: closed, to: open)
    }
}

/// Mouth width over the eye distance, plus how far the corners rise above the lips' centre.
public struct Smile: ExpressionAnalyser {
    public var neutral: Float = 0.62
    public var broad: Float = 0.80
    public init() {}
    public var name: String { "smile" }

    public func coefficient(of face: FaceSample) -> Float {
        let l = face.landmarks
        let eyes = l.eyeDistance
        guard eyes > 0 else { return 0 }
        let width = l[Landmark.mouthRight].distance(to: l[Landmark.mouthLeft]) / eyes
        // Corner lift, measured across the face's own axis so head roll does not count.
        let angle = l.eyeLineAngle
        let c = cosf(-angle), s = sinf(-angle)
        let centre = Point.midpoint(l[51], l[57]).rotated(cos: c, sin: s)
        let corners = Point.midpoint(l[Landmark.mouthRight], l[Landmark.mouthLeft]).rotated(cos: c, sin: s)
        let lift = (centre.y - corners.y) / eyes
        return ramp(width + lift, from: neutral, to: broad)
    }
}

/// Height of the brows above the eyes over the nose's length, above this face's own brows at rest.
///
/// Both lengths run up the face, so a head turned aside shortens neither (over the eye distance,
/// which a turn shortens, brows rose by up to 0.2 of it on the corpus's `yaw` sequences). Brows at
/// rest sit 0.30-0.49 of the nose's length above the eyes across the corpus's people, further apart
/// than a raise moves them, so a raise is measured from the face's own height at rest: the
/// `restPercentile` of its recent heights (`ExpressionHistory`). A face with no history is measured
/// from `neutral`.
public struct BrowRaise: ExpressionAnalyser {
    /// Brow height at rest and raised, over the nose's length: the coefficient is 1 `raised - neutral`
    /// above the face's own height at rest.
    public var neutral: Float = 0.38
    public var raised: Float = 0.555
    /// Which of the face's recent heights is its height at rest: a raise counts until it fills more
    /// than the other part of the history.
    public var restPercentile: Float = 0.3
    public init() {}
    public var name: String { "browRaise" }

    /// The brows' mean height above the eyes' centres over the nose's length (from its bridge, point
    /// 27, to the base, point 33); 0 where the nose has no length.
    public static func height(_ l: Landmarks) -> Float {
        let nose = l[27].distance(to: l[33])
        guard nose > 0 else { return 0 }
        let right = l.mean(Landmark.rightBrow).distance(to: l.mean(Landmark.rightEye))
        let left = l.mean(Landmark.leftBrow).distance(to: l.mean(Landmark.leftEye))
        return (left + right) / (2 * nose)
    }

    public func coefficient(of face: FaceSample) -> Float {
        let atRest = face.history.brows.percentile(restPercentile) ?? neutral
        return ramp(Self.height(face.landmarks) - atRest, from: 0, to: raised - neutral)
    }
}

/// A nod (pitch) or shake (yaw): the head swings away and comes back within about a second. The
/// coefficient is the largest swing out and back in the window, over `fullSwing`: how far an angle
/// lies beyond the angles both before and after it, the nearer side counting. A shake swings both
/// ways, so its coefficient is the smaller of its largest swing to each side: a glance aside and back
/// (at a chat on a second screen) is no shake, nor is a fit that slides off a face held turned and
/// back (`ExpressionTests.aGlanceAsideAndBackIsNoShake`); a nod is one dip and back. A swing keeps its full
/// size wherever it falls in the window, and a shake of several swings stays one gesture; a steady
/// turn and a turn that stops (a look aside at a second screen) score nothing, since nothing after
/// their farthest angle comes back. A nod counts only where the pitch swung further than the yaw,
/// and a shake the other way round. A second with a pose turned beyond `measurableYaw` scores
/// nothing either: there the fit folds the hidden eye and mouth corner onto the visible side and the
/// pose jumps by tens of degrees.
public struct HeadGesture: ExpressionAnalyser {
    public enum Kind: Sendable { case nod, shake }
    public let kind: Kind
    public var fullSwing: Double = 12
    /// The largest yaw, either way, at which the pose follows the head (docs/tracking-design.md).
    public var measurableYaw: Double = 45
    public init(kind: Kind) { self.kind = kind }
    public var name: String { kind == .nod ? "nod" : "shake" }

    public func coefficient(of face: FaceSample) -> Float {
        let history = face.poseHistory
        guard history.count >= 4 else { return 0 }
        for i in 0..<history.count where abs(history[i].yaw) > measurableYaw { return 0 }
        // A turned head's pitch picks up part of its yaw, and a nodding head's yaw part of its
        // pitch: the gesture is the axis that swung further.
        let nod = Self.swings(history) { $0.pitch }, shake = Self.swings(history) { $0.yaw }
        let (own, other) = kind == .nod ? (nod, shake) : (shake, nod)
        guard max(own.up, own.down) >= max(other.up, other.down) else { return 0 }
        // A shake swings both ways; a turn out and back to one side alone is a glance.
        let size = kind == .nod ? max(own.up, own.down) : min(own.up, own.down)
        return Float(min(1, size / fullSwing))
    }

    /// The largest swing out and back of `angle` in `history` above the angles around it (`up`)
    /// and below them (`down`).
    private static func swings(_ history: PoseHistory, _ angle: ((yaw: Double, pitch: Double)) -> Double) -> (up: Double, down: Double) {
        // The lowest and highest angle from each frame on, then each frame against those and the
        // lowest and highest before it.
        var lowestAfter = InlineArray<30, Double>(repeating: 0), highestAfter = InlineArray<30, Double>(repeating: 0)
        var low = Double.infinity, high = -Double.infinity
        for i in (0..<history.count).reversed() {
            low = min(low, angle(history[i]))
            high = max(high, angle(history[i]))
            lowestAfter[i] = low
            highestAfter[i] = high
        }
        var up = 0.0, down = 0.0
        low = angle(history[0])
        high = low
        for i in 1..<(history.count - 1) {
            let a = angle(history[i])
            low = min(low, a)
            high = max(high, a)
            up = max(up, min(a - low, a - lowestAfter[i + 1]))
            down = max(down, min(high - a, highestAfter[i + 1] - a))
        }
        return (up, down)
    }
}

/// The last `capacity` (yaw, pitch) pairs of a face, oldest first, in fixed storage.
public struct PoseHistory {
    public static let capacity = 30
    private var yaws = InlineArray<30, Double>(repeating: 0)
    private var pitches = InlineArray<30, Double>(repeating: 0)
    private var start = 0
    public private(set) var count = 0

    public init() {}

    public mutating func append(yaw: Double, pitch: Double) {
        let slot = (start + count) % Self.capacity
        yaws[slot] = yaw
        pitches[slot] = pitch
        if count < Self.capacity { count += 1 } else { start = (start + 1) % Self.capacity }
    }

    public mutating func removeAll() {
        start = 0
        count = 0
    }

    public subscript(index: Int) -> (yaw: Double, pitch: Double) {
        let slot = (start + index) % Self.capacity
        return (yaws[slot], pitches[slot])
    }
}

/// A face's measures on its last `RecentRatios.capacity` fitted frames, in fixed storage: each eye's
/// aspect ratio (`EyeBlink.aspectRatio`) and the brows' height (`BrowRaise.height`).
public struct ExpressionHistory {
    public private(set) var leftEye = RecentRatios()
    public private(set) var rightEye = RecentRatios()
    public private(set) var brows = RecentRatios()

    public init() {}

    /// Adds the measures of `landmarks`.
    public mutating func append(_ landmarks: Landmarks) {
        leftEye.append(EyeBlink.aspectRatio(landmarks, first: Landmark.leftEye.lowerBound))
        rightEye.append(EyeBlink.aspectRatio(landmarks, first: Landmark.rightEye.lowerBound))
        brows.append(BrowRaise.height(landmarks))
    }

    public mutating func removeAll() {
        leftEye.removeAll()
        rightEye.removeAll()
        brows.removeAll()
    }
}

/// The last `capacity` values of one measure (150: five seconds at 30 fps), and their percentiles,
/// without allocating.
public struct RecentRatios {
    public static let capacity = 150
    private var values = InlineArray<150, Float>(repeating: 0)
    private var next = 0
    public private(set) var count = 0

    public init() {}

    public mutating func append(_ value: Float) {
        values[next] = value
        next = (next + 1) % Self.capacity
        count = min(count + 1, Self.capacity)
    }

    public mutating func removeAll() {
        next = 0
        count = 0
    }

    /// The value `fraction` (0...1) of the way up the sorted values, rounded up; nil when empty.
    public func percentile(_ fraction: Float) -> Float? {
        guard count > 0 else { return nil }
        // The stored values are the first `count` slots until the history is full, then all of them.
        var scratch = values
        var low = 0, high = count - 1
        let rank = min(count - 1, Int((Float(count - 1) * min(1, max(0, fraction))).rounded(.up)))
        // Quickselect (Hoare's partition, middle pivot): the values below `rank` end up before it.
        while low < high {
            let pivot = scratch[(low + high) / 2]
            var i = low, j = high
            while i <= j {
                while scratch[i] < pivot { i += 1 }
                while scratch[j] > pivot { j -= 1 }
                if i <= j {
                    let swapped = scratch[i]
                    scratch[i] = scratch[j]
                    scratch[j] = swapped
                    i += 1
                    j -= 1
                }
            }
            if rank <= j { high = j } else if rank >= i { low = i } else { break }
        }
        return scratch[rank]
    }
}

#if canImport(Glibc)
import Glibc
#endif
