import FaceTestSupport
import FaceTracking
import Testing

/// Deterministic noise in -amplitude...amplitude.
struct Noise {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    mutating func next(_ amplitude: Float) -> Float {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return (Float(state >> 40) / Float(1 << 24) * 2 - 1) * amplitude
    }
}

func shifted(_ landmarks: Landmarks, by offset: Point, noise: inout Noise, amplitude: Float) -> Landmarks {
    var moved = landmarks
    for i in 0..<68 { moved[i] = landmarks[i] + offset + Point(x: noise.next(amplitude), y: noise.next(amplitude)) }
    return moved
}

@Suite struct SmoothingTests {
    let face = SyntheticFace().landmarks

    /// RMS frame-to-frame motion of point 30 over a still face with ±1 px noise, raw and filtered.
    func stillJitter(_ filter: LandmarkFilter) -> (raw: Float, smoothed: Float) {
        var noise = Noise()
        var raw: [Point] = [], smoothed: [Point] = []
        for frame in 0..<300 {
            let sample = shifted(face, by: .zero, noise: &noise, amplitude: 1)
            raw.append(sample[30])
            smoothed.append(filter.filter(sample, at: Double(frame) / 30)[30])
        }
        func rms(_ points: [Point]) -> Float {
            let steps = zip(points.dropFirst(20), points.dropFirst(21)).map { ($0.1 - $0.0).dot($0.1 - $0.0) }
            return (steps.reduce(0, +) / Float(steps.count)).squareRoot()
        }
        return (rms(raw), rms(smoothed))
    }

    /// Frames the filtered position trails a face moving at `speed` px/frame, once settled.
    func lag(_ filter: LandmarkFilter, speed: Float) -> Float {
        var noise = Noise()
        var output = Point.zero, truth = Point.zero
        for frame in 0..<90 {
            let offset = Point(x: speed * Float(frame), y: 0)
            output = filter.filter(shifted(face, by: offset, noise: &noise, amplitude: 0.3), at: Double(frame) / 30)[30]
            truth = face[30] + offset
        }
        return (truth.x - output.x) / speed
    }

    @Test(arguments: [Smoothing.lowpass, .oneeuro])
    func smoothingCutsJitterOnAStillFace(kind: Smoothing) {
        let jitter = stillJitter(kind.makeFilter())
        #expect(jitter.smoothed < jitter.raw * 0.35, "\(kind): raw \(jitter.raw) px, smoothed \(jitter.smoothed) px")
    }

    @Test(arguments: [Smoothing.lowpass, .oneeuro])
    func smoothingKeepsUpWithAMovingFace(kind: Smoothing) {
        let frames = lag(kind.makeFilter(), speed: 8)
        #expect(frames >= -0.2 && frames < 1, "\(kind) lags \(frames) frames at 8 px/frame")
    }

    @Test func noSmoothingPassesTheFitThrough() {
        let jitter = stillJitter(Smoothing.none.makeFilter())
        #expect(jitter.smoothed == jitter.raw)
    }

    @Test(arguments: [Smoothing.lowpass, .oneeuro])
    func resetForgetsTheHistory(kind: Smoothing) {
        let filter = kind.makeFilter()
        _ = filter.filter(face, at: 0)
        var moved = face
        for i in 0..<68 { moved[i] = face[i] + Point(x: 50, y: 0) }
        #expect(filter.filter(moved, at: 1.0 / 30)[30] != moved[30], "smoothed, not jumped")
        filter.reset()
        #expect(filter.filter(moved, at: 2.0 / 30)[30] == moved[30], "after a reset the first frame passes as is")
    }

    /// One Euro smooths a face's pose (where it is, its size, its roll) apart from its shape, with
    /// quicker parameters: a face sliding, rolling or leaning in follows with less than half the lag it
    /// has when the pose is as stiff as the shape (as it was with one filter on every point).
    @Test(arguments: ["slide", "roll", "lean"])
    func oneEuroFollowsAFaceMovingWholeMoreCloselyThanItsShape(motion: String) {
        func face(at frame: Int) -> Landmarks {
            var face = SyntheticFace(centre: Point(x: 300, y: 300), size: 120)
            switch motion {
            case "slide": face.centre.x += 8 * Float(frame)
            case "roll": face.roll = 0.03 * Float(frame)
            default: face.size *= 1 + 0.01 * Float(frame)
            }
            return face.landmarks
        }
        /// Frames the jaw's first point trails the face after two seconds.
        func lag(_ filter: OneEuroFilter) -> Float {
            var output = Landmarks.zero
            for frame in 0..<60 { output = filter.filter(face(at: frame), at: Double(frame) / 30) }
            return output[0].distance(to: face(at: 59)[0]) / face(at: 59)[0].distance(to: face(at: 58)[0])
        }
        let stiff = OneEuroFilter(pose: OneEuroFilter().shape)
        let split = lag(OneEuroFilter()), together = lag(stiff)
        #expect(split < together / 2, "\(motion): \(split) frames behind, \(together) with the pose as stiff as the shape")
    }

    /// The lowpass coefficient drops back when the motion turns, so a stop does not overshoot.
    @Test func lowpassDoesNotOvershootWhenTheFaceStops() {
        let filter = DynamicLowPassFilter()
        var output = Point.zero
        for frame in 0..<60 {
            let x = Float(min(frame, 30)) * 6
            var moved = face
            for i in 0..<68 { moved[i] = face[i] + Point(x: x, y: 0) }
            output = filter.filter(moved, at: Double(frame) / 30)[30]
        }
        #expect(abs(output.x - (face[30].x + 180)) < 0.5)
    }
}
