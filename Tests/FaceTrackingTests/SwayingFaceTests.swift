import CDlibReference
@testable import FaceTracking
import FaceVision
import Foundation
import FrameKit
import Testing

/// A corpus person's largest face, 150 px, swaying from side to side across a 720x720 frame under
/// sigma-6 sensor noise, as a streamer sways in front of the screen: from 150 to 570 px and back,
/// twice, at up to 20 px a frame, slowing into each side and turning straight back there (20 px a
/// frame the other way on the next frame), tracked with detection on the frame thread so that the
/// result depends on the frames alone.
struct SwayingFace {
    static let side = 720, faceSide = 150.0
    /// The face's centre on each frame.
    static let centres: [Double] = {
        var centres: [Double] = [150]
        for _ in 0..<2 {
            for target in [570.0, 150.0] {
                while abs(centres.last! - target) > 0.5 {
                    let left = target - centres.last!
                    centres.append(centres.last! + max(-20, min(20, left * 0.35 + (left > 0 ? 2 : -2))))
                }
            }
        }
        return centres
    }()
    /// A face darting from side to side instead: from rest at 150 px, faster by 2 px a frame each
    /// frame up to 30 px a frame, on to 570 px, and straight back to 150 and to 570 again at that
    /// speed, never slowing into a side.
    static let darting: [Double] = {
        var centres: [Double] = [150]
        for speed in stride(from: 2.0, through: 30, by: 2) { centres.append(centres.last! + speed) }
        for target in [570.0, 150.0, 570.0] {
            while abs(centres.last! - target) > 0.5 { centres.append(centres.last! + max(-30, min(30, target - centres.last!))) }
        }
        return centres
    }()

    let photo: FaceCorpus.Photo
    /// The face's centre on each frame, across (or down) the frame: `centres` unless told otherwise.
    let path: [Double]
    /// Whether `path` runs down the frame rather than across it.
    let upAndDown: Bool
    private let face: dr_detection
    private var noise: GaussianNoise

    /// Nil when dlib's detector finds no face on the photo. `noiseDraw`: that draw of the noise,
    /// whatever `FACERELAY_NOISE_SEED` says.
    init?(_ photo: FaceCorpus.Photo, noiseDraw: UInt64? = nil, path: [Double] = Self.centres, upAndDown: Bool = false) throws {
        guard let face = try photo.stockDetections().max(by: { $0.width < $1.width }) else { return nil }
        self.photo = photo
        self.path = path
        self.upAndDown = upAndDown
        self.face = face
        noise = noiseDraw.map { GaussianNoise(sigma: 6, draw: $0) } ?? GaussianNoise(sigma: 6)
    }

    /// A tracker at the default settings, detecting on the frame thread.
    static func tracker(_ model: LandmarkModel) throws -> FaceTracker {
        var settings = FaceTracker.Settings()
        settings.synchronousDetection = true
        return try makeFaceTracker(settings: settings, model: model)
    }

    /// A frame `render` draws into: side x side grey pixels, freed with it.
    final class Frame {
        let pixels = UnsafeMutablePointer<UInt8>.allocate(capacity: SwayingFace.side * SwayingFace.side)
        var plane: Plane { Plane(base: pixels, stride: SwayingFace.side, width: SwayingFace.side, height: SwayingFace.side) }
        deinit { pixels.deallocate() }
    }

    /// Draws frame `index` into `frame` and returns the face's box there, as dlib's detector drew it
    /// on the photo, scaled to 150 px and moved with it.
    mutating func render(_ index: Int, into frame: Frame) throws -> FaceBox {
        var error: UnsafeMutablePointer<CChar>?
        let scale = Self.faceSide / Double(face.width)
        let (x, y) = upAndDown ? (Double(Self.side / 2), path[index]) : (path[index], Double(Self.side / 2))
        let (fx, fy) = (Double(face.x + face.width / 2), Double(face.y + face.height / 2))
        let forward = [scale, 0, x - scale * fx, 0, scale, y - scale * fy]
        try #require(dr_warp_affine(photo.pixels, photo.width, photo.height, photo.width, forward, frame.pixels, Int32(Self.side), &error) == 0)
        noise.add(to: frame.pixels, count: Self.side * Self.side)
        let half = Float(Self.faceSide / 2)
        return FaceBox(x: Float(x) - half, y: Float(y) - half, width: 2 * half, height: 2 * half)
    }
}

@Suite(.serialized) struct SwayingFaceTests {
    /// The fit stays on a swaying face, on every frame after the first 10, the frames it turns back
    /// included: within 10 % of the outer-eye distance of dlib's shape predictor on the face's own
    /// box (mean over the 68 points), the median face's worst frame within 4 %. A fit started where
    /// the face was heading, 20 px off, stops short with its shape pulled askew; fitted again from
    /// where it landed (`FaceTracker.refit`), it settles: the worst frames are 1.1-8.8 %, median
    /// 2.2. Without that second fit, the median face's worst frame was 5.7 % and
    /// tflite_portrait_large's 10.9 %, on the frame she turned back (with another draw of the noise,
    /// biden 13.5 %, obama2 16.2 %, t1 12.9 %).
    @Test func theFitStaysOnAFaceThatTurnsStraightBack() throws {
        try Self.followEveryFace(along: SwayingFace.centres)
    }

    /// The same, for a face darting from side to side at 30 px a frame and turning straight back at
    /// that speed (`SwayingFace.darting`). The frame of a turn, the fit starts 60 px past the face and
    /// the detector's check sees the face far from it: fitted again from the detector's box
    /// (`FaceTracker.refit`). That move, as long as the face's speed, is its speed (`turnedBack`):
    /// the median face is taken for a jump on no frame, and the worst frames are 1.0-7.8 %, median
    /// 1.9. Taken for a jump, the turn left every face without a speed (median face: 2 frames
    /// taken for a jump, one a turn), its fit on the next frame started a frame's travel behind and
    /// stopped short, askew (grace_hopper 28.2 % off before such a fit was fitted again from the
    /// detector's box). A move right after a jump is the face's speed too: taken for a jump again, a
    /// face was fitted from a frame's travel behind on every frame (median face: 28 frames taken for
    /// a jump, each searched half a box around and fitted three times; row `reversal`,
    /// Tom_Hanks_54745: 2.1 ms a frame, not 0.8).
    @Test func theFitStaysOnAFaceThatTurnsStraightBackAtFullSpeed() throws {
        try Self.followEveryFace(along: SwayingFace.darting, medianJumpsAtMost: 1)
    }

    /// A face that jumps a third of its width between two frames (50 px at 150 px), one way or the
    /// other, across the frame or up and down it, and rests for 7 frames between jumps, so that the
    /// jumps fall on every phase of the detector's periodic check (every 3 frames): on the frame of
    /// each jump the fit, started where the face was, lands only part of the way and is searched
    /// for and fitted again from the detector's box (`FaceTracker.refit`). Every person's face is
    /// followed on every frame, the frames of the 23 jumps included: worst frames 1.2-9.1 % from
    /// dlib's fit across, median 2.5, and 1.1-9.7 up and down, median 2.4 (tflite_portrait_large
    /// 9.1 and 9.7, and 10.2 and 11.8 across under noise draws 3 and 5: the face whose fit flips to
    /// a second place now and then, open in docs/tracking.md). Left for the periodic check, a fit
    /// is shown a third of a box or more off the face (checks and searches switched off:
    /// 54-259 px).
    @Test(arguments: [false, true]) func aFaceThatJumpsAThirdOfItsWidthIsFollowedOnTheFrameItJumps(upAndDown: Bool) throws {
        var path: [Double] = []
        for block in 0..<24 { path += Array(repeating: [300.0, 350, 300, 250][block % 4], count: 7) }
        try Self.followEveryFace(along: path, upAndDown: upAndDown)
    }

    /// A search half a box around reads the frame on a coarse grid (a tenth of the box), and off
    /// the face by part of a cell, the best windows a pyramid step apart score about alike: the
    /// winner's size says little of the face's. Fitted from a window a step too large, a soft face's
    /// fit grows from it. So the face is also fitted from a box of its own size on the window's
    /// centre, and the fit the detector scores higher where it lands is kept
    /// (`FaceTracker.refitFromSighting`): from a window a step larger or smaller on the face's centre, every
    /// person lands within 10 % of the eye distance (the worst-frame target) of the fit from the
    /// face's own box: 0.0-2.1 %, grace_hopper 4.1 % from the window a step smaller under another
    /// draw of the noise (`FACERELAY_NOISE_SEED=5`), kept as it scored higher. From the window
    /// alone, grace_hopper's fit from the window a step larger came out 25.1-26.0 % off (the frame
    /// she turned back in row `reversal`: 22.5 % off, then 25.8 % on the next).
    @Test func aFaceSightedAStepTooLargeOrSmallIsFittedAtItsOwnSize() throws {
        let corpus = try FaceCorpus.shared.get()
        let model = try SharedModel.landmarks()
        let landmarker = try DlibLandmarker(model: model)
        let frame = SwayingFace.Frame()
        var people = 0
        for photo in corpus.photos {
            guard var face = try SwayingFace(photo, path: [360]) else { continue }
            let box = try face.render(0, into: frame)
            let tracker = try SwayingFace.tracker(model)
            let framing = BoxFraming(detection: box, landmarks: try #require(try landmarker.fit(frame.plane, in: box)))
            let fromOwnBox = try #require(tracker.refitFromSighting(FaceSighting(box: box, score: 1), size: box.width, angle: 0, framing: framing, frame.plane))
            for step: Float in [6 / 5, 5 / 6] {
                let sighting = FaceSighting(box: FaceBox(centre: box.centre, side: box.width * step), score: 0.5)
                let fitted = try #require(tracker.refitFromSighting(sighting, size: box.width, angle: 0, framing: framing, frame.plane))
                let fromWindowAlone = tracker.refitFromSighting(sighting, size: sighting.box.width, angle: 0, framing: framing, frame.plane)
                let error = fitted.raw.meanError(to: fromOwnBox.raw)
                print("\(photo.name), a window \(step) times the face: \(String(format: "%.1f", error * 100)) % from the fit from its own box; from the window alone \(fromWindowAlone.map { String(format: "%.1f", $0.raw.meanError(to: fromOwnBox.raw) * 100) } ?? "no fit") %")
                #expect(error <= 0.10, "\(photo.name), a window \(step) times the face: \(error * 100) % from the fit from its own box")
            }
            people += 1
        }
        #expect(people >= 10, "only \(people) people")
    }

    /// Every corpus person's largest face moved along `path`, each frame from the eleventh compared
    /// with dlib's fit on the face's own box, and the face followed never shown off it; and, when
    /// given, the most frames the median face may be taken for a jump on.
    private static func followEveryFace(along path: [Double], upAndDown: Bool = false, medianJumpsAtMost: Int? = nil) throws {
        let corpus = try FaceCorpus.shared.get()
        let model = try SharedModel.landmarks()
        let landmarker = try DlibLandmarker(model: model)
        let frame = SwayingFace.Frame()
        var worsts: [Float] = [], jumpCounts: [Int] = []
        for photo in corpus.photos {
            guard var sway = try SwayingFace(photo, path: path, upAndDown: upAndDown) else { continue }
            let tracker = try SwayingFace.tracker(model)
            var worst: Float = 0, compared = 0, jumps = 0, followedID: Int?
            for index in path.indices {
                let box = try sway.render(index, into: frame)
                tracker.process(frame.plane, seconds: Double(index) / 30)
                jumps += tracker.faces.filter(\.jumped).count
                guard index >= 10, let truth = try landmarker.fit(frame.plane, in: box) else { continue }
                // The face followed, shown anywhere but on the face, is a fit left off it (the
                // photo's other people are on the frame too).
                if let followed = tracker.faces.first(where: { $0.id == followedID && $0.isShown }) {
                    let away = followed.rawLandmarks.centroid.distance(to: truth.centroid)
                    #expect(away < box.width * 0.3, "\(photo.name), frame \(index) at \(Int(path[index])) px: shown \(Int(away)) px from the face")
                }
                guard let shown = tracker.faces.first(where: { $0.isShown && $0.rawLandmarks.centroid.distance(to: truth.centroid) < box.width * 0.3 })
                else { continue }
                followedID = shown.id
                compared += 1
                let distance = shown.rawLandmarks.meanError(to: truth)
                #expect(distance <= 0.10, "\(photo.name), frame \(index) at \(Int(path[index])) px: \(distance * 100) % from dlib's fit")
                worst = max(worst, distance)
            }
            #expect(compared >= (path.count - 10) * 2 / 3, "\(photo.name): shown on \(compared) of \(path.count - 10) frames")
            print("\(photo.name): worst frame \(String(format: "%.1f", worst * 100)) % from dlib's fit, \(jumps) frames taken for a jump")
            worsts.append(worst)
            jumpCounts.append(jumps)
        }
        #expect(worsts.count >= 10, "only \(worsts.count) people")
        let median = worsts.sorted()[worsts.count / 2]
        #expect(median <= 0.04, "the median face's worst frame is \(median * 100) % from dlib's fit: \(worsts)")
        if let medianJumpsAtMost {
            let medianJumps = jumpCounts.sorted()[jumpCounts.count / 2]
            #expect(medianJumps <= medianJumpsAtMost, "the median face was taken for a jump on \(medianJumps) frames: \(jumpCounts)")
        }
    }
}
