/// How raw landmarks are smoothed over time, chosen per deployment.
public enum Smoothing: String, Sendable, CaseIterable {
    /// No smoothing: the landmarks as fitted.
    case none
    /// A first-order low-pass filter whose coefficient grows while a point keeps moving the same way
    /// and drops back when it turns (the live-sticker approach: still when still, quick when moving).
    case lowpass
    /// The One Euro filter: cut-off frequency rises with speed (Casiez, Roussel, Vogel, CHI 2012).
    case oneeuro

    public func makeFilter() -> LandmarkFilter {
        switch self {
        case .none: PassThroughFilter()
        case .lowpass: DynamicLowPassFilter()
        case .oneeuro: OneEuroFilter()
        }
    }
}

/// Smooths one face's landmarks frame by frame. One instance per tracked face, created with the
/// track; `filter` allocates nothing.
public protocol LandmarkFilter: AnyObject {
    /// Forgets the history: the next frame is passed through as is.
    func reset()
    /// The smoothed landmarks for a raw fit at `seconds` (presentation time).
    func filter(_ raw: Landmarks, at seconds: Double) -> Landmarks
}

public final class PassThroughFilter: LandmarkFilter {
    public init() {}
    public func reset() {}
    public func filter(_ raw: Landmarks, at seconds: Double) -> Landmarks { raw }
}

/// Y(n) = α·X(n) + (1−α)·Y(n−1), per point, with α raised by `step` for every frame a point moves
/// the same way as in the frame before (by more than the noise floor), and reset to `minimum` when
/// it turns or stops. On a still face sensor noise keeps flipping direction, so α stays low; on a
/// moving face it climbs to `maximum` within a few frames, so the lag stays small. A step of more
/// than four times the noise floor is motion beyond doubt and takes `maximum` at once, so a face
/// that starts moving does not trail for those first frames.
public final class DynamicLowPassFilter: LandmarkFilter {
    public let minimum: Float
    public let maximum: Float
    public let step: Float
    /// Motion below this, in pixels per frame, counts as noise.
    public let noiseFloor: Float

    private var output = Landmarks.zero
    private var lastRaw = Landmarks.zero
    private var lastMotion = Landmarks.zero
    private var alpha = InlineArray<68, Float>(repeating: 0)
    private var primed = false

    public init(minimum: Float = 0.15, maximum: Float = 0.95, step: Float = 0.3, noiseFloor: Float = 0.6) {
        self.minimum = minimum
        self.maximum = maximum
        self.step = step
        self.noiseFloor = noiseFloor
    }

    public func reset() { primed = false }

    public func filter(_ raw: Landmarks, at seconds: Double) -> Landmarks {
        guard primed else {
            output = raw
            lastRaw = raw
            lastMotion = .zero
            for i in 0..<68 { alpha[i] = minimum }
            primed = true
            return raw
        }
        let floorSquared = noiseFloor * noiseFloor
        for i in 0..<68 {
            let motion = raw[i] - lastRaw[i]
            let size = motion.dot(motion)
            let moving = size > floorSquared
            if size > floorSquared * 16 {
                alpha[i] = maximum  // far beyond noise: real motion even on its first frame
            } else {
                alpha[i] = moving && motion.dot(lastMotion[i]) > 0 ? min(maximum, alpha[i] + step) : minimum
            }
            output[i] = output[i] + (raw[i] - output[i]) * alpha[i]
            lastMotion[i] = moving ? motion : .zero
        }
        lastRaw = raw
        return output
    }
}

/// The One Euro filter per point, with the speed taken as the length of the 2D velocity.
public final class OneEuroFilter: LandmarkFilter {
    /// Cut-off at rest, in Hz: lower is stiller.
    public let minimumCutoff: Double
    /// How fast the cut-off rises with speed (per pixel per second): higher lags less.
    public let beta: Double
    /// Cut-off of the velocity estimate, in Hz.
    public let derivativeCutoff: Double

    private var output = Landmarks.zero
    private var velocity = Landmarks.zero
    private var lastTime = 0.0
    private var primed = false

    public init(minimumCutoff: Double = 0.2, beta: Double = 0.06, derivativeCutoff: Double = 1.0) {
        self.minimumCutoff = minimumCutoff
        self.beta = beta
        self.derivativeCutoff = derivativeCutoff
    }

    public func reset() { primed = false }

    @inline(__always)
    private static func smoothingFactor(cutoff: Double, interval: Double) -> Float {
        let tau = 1 / (2 * Double.pi * cutoff)
        return Float(1 / (1 + tau / interval))
    }

    public func filter(_ raw: Landmarks, at seconds: Double) -> Landmarks {
        let interval = seconds - lastTime
        guard primed, interval > 0 else {
            if !primed {
                output = raw
                velocity = .zero
                primed = true
            }
            lastTime = seconds
            return output
        }
        lastTime = seconds
        let derivativeFactor = Self.smoothingFactor(cutoff: derivativeCutoff, interval: interval)
        let perSecond = Float(1 / interval)
        for i in 0..<68 {
            let measured = (raw[i] - output[i]) * perSecond
            velocity[i] = velocity[i] + (measured - velocity[i]) * derivativeFactor
            let speed = Double(velocity[i].dot(velocity[i]).squareRoot())
            let factor = Self.smoothingFactor(cutoff: minimumCutoff + beta * speed, interval: interval)
            output[i] = output[i] + (raw[i] - output[i]) * factor
        }
        return output
    }
}
