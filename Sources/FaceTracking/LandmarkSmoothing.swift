#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

/// The One Euro filter (Casiez, Roussel, Vogel, CHI 2012) on a face in two parts: its pose (where
/// the landmarks' centroid is, their size and their roll) and its shape (each landmark's offset from
/// the centroid, in the face's own frame: unrolled and divided by its size), each with its own
/// parameters. Sensor noise shifts a whole fit about as much as it shifts single points, so both parts
/// need smoothing; but a face that slides, jumps, leans in or tilts changes only its pose, and that
/// part can follow quickly while the shape, unchanged by the move, stays steady. One filter on every
/// point had to choose: steady enough under noise, it trailed a sliding face by most of a frame, a
/// 72 px jump by 9 px, and a small face swaying and leaning by 2-3 % of its eye distance
/// (`Tests/Benchmarks/noise_jitter.py --tune` sweeps the pose's parameters on the face corpus).
///
/// Each channel also learns how noisy its own input is, and takes that noise out of the speed it
/// measures (`noiseAllowance`). One Euro's cut-off rises with speed, and the speed it measures on a
/// still face is the fit's noise: on a fit three times as noisy as a frontal face's (a face turned
/// to profile) it let half the noise through, 0.78 px a frame on the nose, where frontal faces
/// showed 0.1. Judging speed against the face's own noise keeps every face equally still, and lets
/// the velocity estimate be quicker, which follows a face that reverses more closely.
public final class OneEuroFilter: LandmarkFilter {
    public struct Parameters: Sendable {
        /// Cut-off at rest, in Hz: lower is stiller.
        public var minimumCutoff: Double
        /// How fast the cut-off rises with speed (per pixel per second): higher lags less.
        public var beta: Double
        /// Cut-off of the velocity estimate, in Hz.
        public var derivativeCutoff: Double
        /// How many times the input's own noise (its standard deviation per frame, as a speed) is
        /// taken out of the measured speed. On white noise the speed a still input's velocity
        /// estimate shows averages about 0.4 of that at a derivative cut-off of 1 Hz and 0.5 at 2 Hz,
        /// so 1.5 holds a still face near the minimum cut-off, however noisy its fit. Noise adds to
        /// a speed in quadrature (the square of the measured speed is, on average, the true one's plus
        /// the noise's), so it is taken out in quadrature too: a still face is held as still as with a
        /// plain subtraction, and a fast one keeps nearly all its speed, where a plain subtraction
        /// took the same amount from every speed and held back a noisy face the most where it
        /// turns fastest (row `turn`: a profile face rolling 5 degrees a frame lay 10.2 % of its eye
        /// distance off at its reversals, 9.2 % in quadrature). 0: plain One Euro.
        public var noiseAllowance: Double
        /// Half-life, in seconds, of the held speed: a speed measured on two frames in a row is held
        /// and decays by half in this time, and the cut-off follows the larger of it and this frame's
        /// speed. Where a face reverses (a head tilting back, a face swaying back) the measured speed
        /// passes through zero for a frame or two, One Euro's cut-off drops to its minimum and the
        /// output stalls while the face moves on. In the tracking benchmark's `turn` the woman in
        /// profile, rolling 5 degrees a frame, stayed at -48 degrees for two frames while she turned
        /// back to -38: 12.1 % of her eye distance off (5.3 % held), and seven more people 5.2-7.5 %
        /// (1.9-7.0); in `slide` the worst frame is two frames after the face turns back: 3.5-6.9 %
        /// on eight people (1.7-5.0). A still face's noise seldom shows a speed beyond its allowance
        /// on two frames in a row, so it holds none: its jitter is unchanged. 0: no hold.
        public var speedHalfLife: Double

        public init(minimumCutoff: Double, beta: Double, derivativeCutoff: Double = 1.0, noiseAllowance: Double = 0,
                    speedHalfLife: Double = 0) {
            self.minimumCutoff = minimumCutoff
            self.beta = beta
            self.derivativeCutoff = derivativeCutoff
            self.noiseAllowance = noiseAllowance
            self.speedHalfLife = speedHalfLife
        }
    }

    /// The pose's filter: quick, since the pose is what moves fast.
    public let pose: Parameters
    /// The shape's filter: stiller, since a face's shape changes slowly.
    public let shape: Parameters

    private var centre = Channel()
    /// x: the size (RMS distance of the points from the centroid, px); y: the roll (radians).
    private var form = Channel()
    private var offsets = InlineArray<68, Channel>(repeating: Channel())
    private var lastTime = 0.0
    private var primed = false

    /// The defaults hold every person of the face corpus under 0.25 px of nose jitter at sigma-6
    /// sensor noise, with a velocity estimate quick enough (2 Hz) that a face reversing its slide
    /// is not left behind (`Tests/Benchmarks/noise_jitter.py --tune`), and the pose's speed held for
    /// a frame at 30 fps through a reversal. The shape takes out twice its
    /// noise: its points change slowly, and at 1.5 in quadrature the mean jitter of the 68 points of a
    /// partly hidden face rose from 0.17 px (1.5, subtracted) to 0.30; at 2, 0.18. It holds no
    /// speed: a face that moves whole does not change its shape.
    public init(pose: Parameters = Parameters(minimumCutoff: 0.4, beta: 0.2, derivativeCutoff: 2, noiseAllowance: 1.5,
                                              speedHalfLife: 1.0 / 30),
                shape: Parameters = Parameters(minimumCutoff: 0.2, beta: 0.06, derivativeCutoff: 2, noiseAllowance: 2)) {
        self.pose = pose
        self.shape = shape
    }

    public func reset() { primed = false }

    /// One filtered 2D value, its velocity estimate and its input's noise.
    private struct Channel {
        var output = Point.zero
        var velocity = Point.zero
        /// The last two inputs, for their second difference: noise shows in it, steady motion does not.
        var previous = Point.zero, beforePrevious = Point.zero
        /// Mean square of the second difference (px², both coordinates): 12 times the input's
        /// variance per coordinate when it is white noise.
        var noiseMeanSquare: Float = 0
        var inputs = 0
        /// The last frame's speed beyond the noise, and the speed held from the frames before (px/s).
        var lastSpeed = 0.0, heldSpeed = 0.0

        init(output: Point = .zero) {
            self.output = output
            previous = output
            inputs = 1
        }

        @inline(__always)
        static func smoothingFactor(cutoff: Double, interval: Double) -> Float {
            let tau = 1 / (2 * Double.pi * cutoff)
            return Float(1 / (1 + tau / interval))
        }

        /// Learns the input's noise from its second difference. A step far beyond the noise learnt
        /// so far (a jump, a face that starts or stops) is motion, not noise, and is left out once
        /// the first frames have set the level; the first 30 weigh equally, later ones fade.
        @inline(__always)
        mutating func learnNoise(_ raw: Point, unit: Point) {
            defer {
                beforePrevious = previous
                previous = raw
                inputs += 1
            }
            guard inputs >= 2 else { return }
            let second = raw - previous * 2 + beforePrevious
            let scaled = Point(x: second.x * unit.x, y: second.y * unit.y)
            let square = scaled.dot(scaled)
            let seen = inputs - 2
            guard seen < 10 || square <= 9 * noiseMeanSquare else { return }
            noiseMeanSquare += (square - noiseMeanSquare) / Float(min(seen + 1, 30))
        }

        /// `unit`: pixels per unit of each coordinate, so that every channel's speed is in px/s.
        @inline(__always)
        mutating func update(_ raw: Point, _ parameters: Parameters, interval: Double, unit: Point = Point(x: 1, y: 1)) {
            learnNoise(raw, unit: unit)
            let derivativeFactor = Self.smoothingFactor(cutoff: parameters.derivativeCutoff, interval: interval)
            let measured = (raw - output) * Float(1 / interval)
            velocity = velocity + (measured - velocity) * derivativeFactor
            let inPixels = Point(x: velocity.x * unit.x, y: velocity.y * unit.y)
            // In squares: the noise's speed squared is its variance per frame (a twelfth of the
            // second difference's mean square) over the interval squared.
            let allowedSpeed = parameters.noiseAllowance / interval
            let noiseSquare = Double(noiseMeanSquare) / 12 * allowedSpeed * allowedSpeed
            var speed = max(0, Double(inPixels.dot(inPixels)) - noiseSquare).squareRoot()
            if parameters.speedHalfLife > 0 {
                heldSpeed = max(min(speed, lastSpeed), heldSpeed * pow(0.5, interval / parameters.speedHalfLife))
                lastSpeed = speed
                speed = max(speed, heldSpeed)
            }
            output = output + (raw - output) * Self.smoothingFactor(cutoff: parameters.minimumCutoff + parameters.beta * speed, interval: interval)
        }
    }

    /// The centroid, the size and the roll of a fit.
    private static func pose(of landmarks: Landmarks) -> (centre: Point, size: Float, roll: Float) {
        let centre = landmarks.centroid
        var sum: Float = 0
        for i in 0..<68 {
            let d = landmarks[i] - centre
            sum += d.dot(d)
        }
        return (centre, max((sum / 68).squareRoot(), 1), landmarks.eyeLineAngle)
    }

    public func filter(_ raw: Landmarks, at seconds: Double) -> Landmarks {
        let interval = seconds - lastTime
        var (rawCentre, size, roll) = Self.pose(of: raw)
        // A clock that went back or stood still (an input whose timestamps restart) tells no speed:
        // the filter starts again from this fit, as for a face shown again, instead of holding its
        // output until the clock is back where it was (`HeadPoseTests.aClockThatGoesBackDoesNotFreezeThePose`).
        guard primed, interval > 0 else {
            centre = Channel(output: rawCentre)
            form = Channel(output: Point(x: size, y: roll))
            primed = true
            lastTime = seconds
            setOffsets(raw, centre: rawCentre, size: size, roll: roll, update: nil)
            return raw
        }
        lastTime = seconds
        // The roll goes the short way round from the last one: -179 degrees follows 179.
        roll = form.output.y + remainderf(roll - form.output.y, 2 * .pi)
        centre.update(rawCentre, pose, interval: interval)
        form.update(Point(x: size, y: roll), pose, interval: interval, unit: Point(x: 1, y: form.output.x))
        setOffsets(raw, centre: rawCentre, size: size, roll: roll, update: interval)
        return output
    }

    /// Each point's offset from the centroid in the face's frame, taken as is (`update` nil) or filtered.
    private func setOffsets(_ raw: Landmarks, centre: Point, size: Float, roll: Float, update interval: Double?) {
        let cosine = cosf(-roll) / size, sine = sinf(-roll) / size
        let unit = Point(x: form.output.x, y: form.output.x)
        for i in 0..<68 {
            let offset = (raw[i] - centre).rotated(cos: cosine, sin: sine)
            if let interval {
                offsets[i].update(offset, shape, interval: interval, unit: unit)
            } else {
                offsets[i] = Channel(output: offset)
            }
        }
    }

    private var output: Landmarks {
        let size = form.output.x, roll = form.output.y
        let cosine = cosf(roll) * size, sine = sinf(roll) * size
        var landmarks = Landmarks.zero
        for i in 0..<68 { landmarks[i] = centre.output + offsets[i].output.rotated(cos: cosine, sin: sine) }
        return landmarks
    }
}
