import FaceTestSupport
import FaceTracking
import Foundation
import FrameKit
import Testing

/// How the detector's check of a fit's size changes it. The fake fit takes the size of the box it
/// starts from, as dlib's shape predictor nearly does (so only the checks set the fit's size), and
/// the fake check scores a window by how far its size is from the face's, in pyramid steps.
@Suite final class SizeCheckTests {
    /// One face, 100 px (eye distance 90), in the middle of a 1280x720 frame.
    let scene = Scene()
    let sizing: SizingLandmarker
    let pixels = UnsafeMutablePointer<UInt8>.allocate(capacity: 1280 * 720)

    init() {
        scene.faces = [SyntheticFace(centre: Point(x: 640, y: 360))]
        sizing = SizingLandmarker(scene)
    }

    deinit { pixels.deallocate() }

    /// Every check looks at the sizes a pyramid step either way (a negative `sizeDrift`), so that
    /// what is tested is what a check makes of them; detection runs on the first frame only.
    func tracker() -> FaceTracker {
        var settings = FaceTracker.Settings()
        settings.synchronousDetection = true
        settings.detectionInterval = 100_000
        settings.smoothing = .none
        settings.sizeDrift = -1
        return FaceTracker(settings: settings, landmarker: sizing, detector: SceneDetector(scene), poseSolver: NoPose())
    }

    /// The fit's eye distance over the face's on each of `frames` frames.
    func sizes(_ tracker: FaceTracker, frames: Range<Int>, before: (Int) -> Void = { _ in }) -> [Float] {
        frames.map { frame in
            before(frame)
            sizing.frame = frame
            let plane = Plane(base: pixels, stride: 1280, width: 1280, height: 720)
            scene.paint(plane, frame: frame)
            tracker.process(plane, seconds: Double(frame) / 30)
            guard let face = tracker.faces.first(where: \.isShown) else { return 0 }
            return face.rawLandmarks.eyeDistance / scene.faces[0].landmarks.eyeDistance
        }
    }

    /// Where a face's size lies between two pyramid steps, either can score higher on one frame. On
    /// grace_hopper's `turn` (tracking-quality.sh), at a roll of 45-50 degrees, the window 6/5 the
    /// fit's size won one check by 0.13, having lost the one before; a fit resized on that win was shown
    /// 13 % of the eye distance off on the next frame, in a quarter of the runs. Without the second
    /// check, the fit here takes the larger size on each frame the larger window wins.
    @Test func oneCheckThatScoresAnotherSizeHigherDoesNotResizeTheFit() {
        let tracker = tracker()
        sizing.largerWins = [8, 14, 20, 26, 29]
        let sizes = sizes(tracker, frames: 0..<40)
        #expect(sizes.allSatisfy { abs($0 - 1) < 0.01 }, "the fit's size over the face's, frame by frame: \(sizes)")
        #expect(sizing.largerLooks >= 4, "the larger window was looked at on \(sizing.largerLooks) of its winning frames")
    }

    /// A face that leans in by a pyramid step (the fit keeps its old size) is resized on the frame
    /// after the first check that sees it: that check's preference is checked again at once. Without
    /// that, the second check would come a check interval later.
    @Test func aFaceThatGrowsByAStepIsResizedOnTheFrameAfterTheFirstCheckThatSeesIt() {
        let tracker = tracker()
        let before = sizes(tracker, frames: 0..<10)
        #expect(before.allSatisfy { abs($0 - 1) < 0.01 }, "\(before)")
        let after = sizes(tracker, frames: 10..<20) { frame in if frame == 10 { scene.faces[0].size *= 6 / 5 } }
        // The fit keeps 100 px, 5/6 of the face's size, until a check looks.
        let firstCheck = sizing.checkedFrames.first { $0 >= 10 }
        let resized = after.firstIndex { abs($0 - 1) < 0.01 }.map { $0 + 10 }
        #expect(firstCheck != nil && resized == firstCheck! + 1,
                "first checked on frame \(firstCheck ?? -1), resized on \(resized ?? -1); the fit's size over the face's from frame 10: \(after)")
        #expect(after[((resized ?? 10) - 10)...].allSatisfy { abs($0 - 1) < 0.01 }, "\(after)")
    }
}

/// Fits the scene's face at the size of the box it is given (its centre stays the face's), and
/// scores a window 2 at the face's size, 3 less for each pyramid step (6/5) it is off; on the
/// frames in `largerWins`, a window 6/5 the face's size scores 2.1.
final class SizingLandmarker: FaceLandmarker {
    let scene: Scene
    var frame = 0
    var largerWins: Set<Int> = []
    private(set) var largerLooks = 0
    /// Frames on which the fit was checked, in order.
    private(set) var checkedFrames: [Int] = []

    init(_ scene: Scene) { self.scene = scene }

    func fit(_ grey: Plane, in box: FaceBox, angle: Float) throws -> Landmarks? {
        var face = scene.faces[0]
        let own = Scene.box(face.landmarks)
        guard own.overlap(with: box) > 0.2 else { return nil }
        face.size *= Self.side(box) / Self.side(own)
        return face.landmarks
    }

    /// A box's size, square or not (the detector's box around the synthetic face is wider than tall).
    static func side(_ box: FaceBox) -> Float { (box.width * box.height).squareRoot() }

    func locateFace(_ grey: Plane, around box: FaceBox, angle: Float, reach: Float) throws -> FaceSighting {
        if checkedFrames.last != frame { checkedFrames.append(frame) }
        let own = Scene.box(scene.faces[0].landmarks)
        let centre = own.centre
        let window = FaceBox(x: centre.x - box.width / 2, y: centre.y - box.height / 2, width: box.width, height: box.height)
        let steps = logf(Self.side(box) / Self.side(own)) / logf(6 / 5)
        var score = 2 - 3 * abs(steps)
        if largerWins.contains(frame), abs(steps - 1) < 0.05 {
            score = 2.1
            largerLooks += 1
        }
        return FaceSighting(box: window, score: score)
    }
}
