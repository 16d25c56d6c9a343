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
