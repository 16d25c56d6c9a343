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
    /// The face's centre on each frame: `centres` unless told otherwise.
    let path: [Double]
    private let face: dr_detection
    private var noise: GaussianNoise

    /// Nil when dlib's detector finds no face on the photo. `noiseDraw`: that draw of the noise,
    /// whatever `FACERELAY_NOISE_SEED` says.
    init?(_ photo: FaceCorpus.Photo, noiseDraw: UInt64? = nil, path: [Double] = Self.centres) throws {
        guard let face = try photo.stockDetections().max(by: { $0.width < $1.width }) else { return nil }
        self.photo = photo
        self.path = path
        self.face = face
        noise = noiseDraw.map { GaussianNoise(sigma: 6, draw: $0) } ?? GaussianNoise(sigma: 6)
    }

    /// A tracker at the default settings, detecting on the frame thread.
    static func tracker(_ model: LandmarkModel) throws -> FaceTracker {
        var settings = FaceTracker.Settings()
        settings.synchronousDetection = true
        return try makeFaceTracker(settings: settings, model: model)
    }

    /// Draws frame `index` into `frame` (side x side pixels) and returns the face's box there, as
    /// dlib's detector drew it on the photo, scaled to 150 px and moved with it.
    mutating func render(_ index: Int, into frame: UnsafeMutablePointer<UInt8>) throws -> FaceBox {
        var error: UnsafeMutablePointer<CChar>?
        let scale = Self.faceSide / Double(face.width), centre = path[index]
        let (fx, fy) = (Double(face.x + face.width / 2), Double(face.y + face.height / 2))
        let forward = [scale, 0, centre - scale * fx, 0, scale, Double(Self.side / 2) - scale * fy]
        try #require(dr_warp_affine(photo.pixels, photo.width, photo.height, photo.width, forward, frame, Int32(Self.side), &error) == 0)
        noise.add(to: frame, count: Self.side * Self.side)
        let half = Float(Self.faceSide / 2)
        return FaceBox(x: Float(centre) - half, y: Float(Self.side / 2) - half, width: 2 * half, height: 2 * half)
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
    /// the detector's check sees the face far from it: a jump, fitted again from the detector's box,
    /// which leaves the face without a speed. On the next frame the fit starts where the face was,
    /// 30 px behind it, and stops short, askew. Such a face is fitted again from the detector's box
    /// when that lies beyond the refit distance from where the fit started (`FaceTracker.refit`,
    /// `startedAway`): worst frames 1.1-8.1 %, median 2.3. Without it, grace_hopper was 12.2 % and
    /// 28.2 % off on frames after the turns. Applied to every face, not only after a jump, it
    /// put the woman in profile 26.8 % off on the swaying face above: fitted from the detector's box,
    /// her fit takes its second answer. That move is the face's speed: the median face is taken
    /// for a jump on 2 frames, one a turn. Taken for a jump again, it was left without a speed and
    /// fitted from a frame's travel behind on every frame: 28 frames, each searched half a box
    /// around and fitted three times (row `reversal`, Tom_Hanks_54745: 2.1 ms a frame, not 0.8).
    @Test func theFitStaysOnAFaceThatTurnsStraightBackAtFullSpeed() throws {
        try Self.followEveryFace(along: SwayingFace.darting, medianJumpsAtMost: 4)
    }

    /// Every corpus person's largest face moved along `path`, each frame from the eleventh compared
    /// with dlib's fit on the face's own box; and, when given, the most frames the median face may be
    /// taken for a jump on.
    private static func followEveryFace(along path: [Double], medianJumpsAtMost: Int? = nil) throws {
        let corpus = try FaceCorpus.shared.get()
        let model = try LandmarkModel()
        let landmarker = try DlibLandmarker(model: model)
        let frame = UnsafeMutablePointer<UInt8>.allocate(capacity: SwayingFace.side * SwayingFace.side)
        defer { frame.deallocate() }
        let plane = Plane(base: frame, stride: SwayingFace.side, width: SwayingFace.side, height: SwayingFace.side)
        var worsts: [Float] = [], jumpCounts: [Int] = []
        for photo in corpus.photos {
            guard var sway = try SwayingFace(photo, path: path) else { continue }
            let tracker = try SwayingFace.tracker(model)
            var worst: Float = 0, compared = 0, jumps = 0
            for index in path.indices {
                let box = try sway.render(index, into: frame)
                tracker.process(plane, seconds: Double(index) / 30)
                jumps += tracker.faces.filter(\.jumped).count
                guard index >= 10, let truth = try landmarker.fit(plane, in: box),
                      let shown = tracker.faces.first(where: { $0.isShown && $0.rawLandmarks.centroid.distance(to: truth.centroid) < box.width * 0.3 })
                else { continue }
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
