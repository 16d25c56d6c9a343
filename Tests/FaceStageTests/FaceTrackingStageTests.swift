import Compositor
import FaceTestSupport
import FaceTracking
import FrameKit
@testable import FaceStage
import StickerKit
import Synchronization
import Testing

/// Frame `index` of a 1280x720 I420 stream over `pixels` (1280 * 720 * 3 / 2 bytes), 30 fps.
private func frame720p(_ index: Int, pixels: UnsafeMutablePointer<UInt8>) -> VideoFrame {
    let chroma = pixels + 1280 * 720
    return VideoFrame(format: .i420, luma: Plane(base: pixels, stride: 1280, width: 1280, height: 720),
                      chromaU: Plane(base: chroma, stride: 640, width: 640, height: 360),
                      chromaV: Plane(base: chroma + 640 * 360, stride: 640, width: 640, height: 360),
                      pts: Int64(index) * 33_333_333, duration: 33_333_333)
}

/// The pixels of a 1280x720 I420 frame, mid-grey; the caller deallocates them.
private func grey720p() -> UnsafeMutablePointer<UInt8> {
    let count = 1280 * 720 * 3 / 2
    let pixels = UnsafeMutablePointer<UInt8>.allocate(capacity: count)
    pixels.initialize(repeating: 128, count: count)
    return pixels
}

/// Frames the stage's tracker fitted (the others it coasted through under load).
private func tracked(_ stage: FaceTrackingStage) -> Int {
    let figures = stage.trackingFigures
    return (figures?.frames ?? 0) - (figures?.lightenedFrames ?? 0)
}

/// The sticker stage on a drawn face: it draws only when a sticker item is placed, switches
/// stickers between frames, and reports its costs.
@Suite struct FaceTrackingStageTests {
    func renderer(_ name: String, begin: Trigger) -> StickerRenderer {
        let anchor = LandmarkAnchor(position: LandmarkPoint(landmarks: [27], x: 5, y: 5), rotateCenter: nil,
                                    pointA: LandmarkPoint(landmarks: [36], x: 0, y: 5), pointB: LandmarkPoint(landmarks: [45], x: 10, y: 5))
        let item = StickerItem(id: "dot", frames: [RGBAImage(width: 10, height: 10, red: 0, green: 0, blue: 0, alpha: 255)], fps: 0, loop: true,
                               z: 0, placement: .landmarks(anchor), begin: begin, end: nil, duration: nil, follow3D: false)
        return StickerRenderer(package: StickerPackage(name: name, title: name, directory: "/", items: [item]))
    }

    /// Expressions reach the listener as they start and end, at their frame's time. A face lost
    /// with its mouth open ends the expression: without that, a listener (a sticker trigger, an
    /// event subscriber) waits for an end that never comes.
    @Test func expressionsStartAndEndAndALostFaceEndsItsOwn() {
        let pixels = grey720p()
        defer { pixels.deallocate() }
        let scene = Scene()
        scene.faces = [SyntheticFace(centre: Point(x: 640, y: 360))]
        var settings = FaceTracker.Settings()
        settings.synchronousDetection = true
        settings.smoothing = .none  // smoothed landmarks open the mouth a frame later
        let tracker = FaceTracker(settings: settings, landmarker: SceneLandmarker(scene), detector: SceneDetector(scene), poseSolver: NoPose())
        let events = Mutex<[FaceStageEvent]>([])
        let stage = FaceTrackingStage(tracker: tracker, look: .none) { event in events.withLock { $0.append(event) } }
        func seconds(_ index: Int) -> Double { Double(Int64(index) * 33_333_333) / 1e9 }
        for index in 0..<60 {
            if index == 40 { scene.faces = [] }  // the face gone, its mouth open
            if !scene.faces.isEmpty { scene.faces[0].mouthGap = (10..<20).contains(index) || index >= 30 ? 0.6 : 0 }
            let frame = frame720p(index, pixels: pixels)
            scene.paint(frame.luma, frame: index)
            #expect(stage.analyse(frame) == .passThrough)
        }
        let reported = events.withLock { $0 }
        #expect(Array(reported.prefix(3)) == [
            .expression(face: 1, expression: "mouthOpen", started: true, seconds: seconds(10)),
            .expression(face: 1, expression: "mouthOpen", started: false, seconds: seconds(20)),
            .expression(face: 1, expression: "mouthOpen", started: true, seconds: seconds(30)),
        ], "\(reported)")
        #expect(reported.count == 4, "\(reported)")
        guard reported.count == 4, case .expression(1, "mouthOpen", false, let end) = reported[3] else { return }
        #expect(end >= seconds(40) && end <= seconds(50), "ended when the face was dropped: \(end) s")
        #expect(stage.facesNow == 0)
    }

    @Test func aReplacedStickerTakesOverOnTheNextFrame() {
        let pixels = grey720p()
        defer { pixels.deallocate() }
        func frame(_ index: Int) -> VideoFrame { frame720p(index, pixels: pixels) }
        let scene = Scene()
        scene.faces = [SyntheticFace(centre: Point(x: 640, y: 360))]
        var settings = FaceTracker.Settings()
        settings.synchronousDetection = true
        let tracker = FaceTracker(settings: settings, landmarker: SceneLandmarker(scene), detector: SceneDetector(scene), poseSolver: NoPose())
        let stage = FaceTrackingStage(tracker: tracker, look: .sticker(renderer("waiting", begin: .expressionStarts("mouthOpen"))))
        // Nothing placed while the mouth stays shut: the frame passes through uncopied.
        for index in 0..<3 { #expect(stage.analyse(frame(index)) == .passThrough) }
        #expect(stage.lookNow == "waiting")
        stage.replaceLook(with: .sticker(renderer("always", begin: .always)))
        #expect(stage.lookNow == "waiting", "the switch waits for the next frame")
        #expect(stage.analyse(frame(3)) == .draw)
        #expect(stage.lookNow == "always")
        stage.draw(on: frame(3))
        let figures = stage.trackingFigures
        #expect(figures?.frames == 4 && figures?.faceFrames == 4)
        #expect((figures?.stickerCPUNanoseconds ?? 0) > 0)
    }
}

/// The face stage under load: it lightens its work step by step while a live stream's frames stay
/// queued, and steps back once the queue stays nearly empty.
@Suite struct LoadSheddingTests {
    @Test func stepsUpWhileFramesStayQueuedAndBackWhenCalm() {
        var shedding = LoadShedding()
        for _ in 0..<20 { #expect(shedding.update(queued: 4, capacity: 10) == .full, "under half full: nothing changes") }
        for _ in 0..<8 { #expect(shedding.update(queued: 5, capacity: 10) == .full, "half full for no longer than a burst takes to drain") }
        #expect(shedding.update(queued: 5, capacity: 10) == .trackEveryOtherFrame, "half full for nine frames in a row: the first step")
        for _ in 0..<14 { #expect(shedding.update(queued: 9, capacity: 10) == .trackEveryOtherFrame, "a step settles before the next") }
        #expect(shedding.update(queued: 9, capacity: 10) == .trackEveryFourthFrame)
        for _ in 0..<100 { _ = shedding.update(queued: 10, capacity: 10) }
        #expect(shedding.level == .trackEveryFourthFrame, "no step beyond the last")
        for _ in 0..<50 { _ = shedding.update(queued: 1, capacity: 10) }
        for _ in 0..<9 { _ = shedding.update(queued: 3, capacity: 10) }
        for _ in 0..<59 { _ = shedding.update(queued: 2, capacity: 10) }
        #expect(shedding.level == .trackEveryFourthFrame, "calm lasts two seconds; a queue above a fifth full for nine frames restarts it")
        #expect(shedding.update(queued: 2, capacity: 10) == .trackEveryOtherFrame)
        for _ in 0..<60 { _ = shedding.update(queued: 0, capacity: 10) }
        #expect(shedding.level == .full)
    }

    /// A live input's frames come in bursts (an SRT caller's MPEG-TS brought five or six decoded
    /// frames at once every ten or so; a live input's start fills the whole queue), which a stage
    /// that keeps up drains in a few frames. Judged on the queue as it stood at each frame, every
    /// burst looked like a backlog: a relay with a stage of 2 ms a frame went to every fourth frame
    /// within a second and never came back (197 of 286 frames lightened, no frame dropped).
    @Test(arguments: [6, 10]) func burstsThatDrainChangeNothing(burst: Int) {
        var shedding = LoadShedding()
        for frame in 0..<600 {
            let level = shedding.update(queued: max(0, burst - frame % 12), capacity: 10)
            #expect(level == .full, "frame \(frame)")
            if level != .full { break }
        }
    }

    /// A stage that caught up steps back while bursts of a whole queue go on (each above a fifth
    /// full for eight frames), and never while the queue is up: a stall that fills the queue after
    /// a calm spell is not a step down.
    @Test func aStageThatCaughtUpStepsBackThroughBursts() {
        var shedding = LoadShedding()
        for _ in 0..<40 { _ = shedding.update(queued: 10, capacity: 10) }
        #expect(shedding.level == .trackEveryFourthFrame)
        for frame in 0..<150 { _ = shedding.update(queued: max(0, 10 - frame % 12), capacity: 10) }
        #expect(shedding.level == .full)
        for _ in 0..<40 { _ = shedding.update(queued: 10, capacity: 10) }
        for _ in 0..<55 { _ = shedding.update(queued: 0, capacity: 10) }
        for _ in 0..<8 { #expect(shedding.update(queued: 10, capacity: 10) == .trackEveryFourthFrame, "stepped down with the queue full") }
    }

    /// The same bursts of six at a stage slower than they come (the queue one frame shorter every
    /// third frame): the queue climbs and stays up, a backlog.
    @Test func burstsThatPileUpAreABacklog() {
        var shedding = LoadShedding()
        var queued = 0
        for frame in 0..<120 {
            if frame % 12 == 0 { queued += 6 }
            if frame % 3 == 0 { queued = max(0, queued - 1) }
            queued = min(queued, 10)
            _ = shedding.update(queued: queued, capacity: 10)
        }
        #expect(shedding.level == .trackEveryFourthFrame)
    }

    @Test func aQueueThatMayFillChangesNothing() {
        var shedding = LoadShedding()
        for _ in 0..<100 { #expect(shedding.update(queued: 4, capacity: 0) == .full) }
    }

    /// Tracking runs on every other frame at the first step, on every fourth at the second; every
    /// frame keeps its overlay; the figures say how many frames were lightened and at which level.
    @Test func theStageLightensEveryOtherFrame() {
        let pixels = grey720p()
        defer { pixels.deallocate() }
        func frame(_ index: Int) -> VideoFrame { frame720p(index, pixels: pixels) }
        let scene = Scene()
        scene.faces = [SyntheticFace(centre: Point(x: 640, y: 360))]
        var settings = FaceTracker.Settings()
        settings.synchronousDetection = true
        let tracker = FaceTracker(settings: settings, landmarker: SceneLandmarker(scene), detector: SceneDetector(scene), poseSolver: NoPose())
        let stage = FaceTrackingStage(tracker: tracker, look: .landmarks)
        for index in 0..<10 {
            stage.noteBacklog(queued: 0, capacity: 10)
            #expect(stage.analyse(frame(index)) == .draw)
        }
        #expect(tracked(stage) == 10)
        for _ in 0..<9 { stage.noteBacklog(queued: 6, capacity: 10) }
        for index in 10..<20 {
            #expect(stage.analyse(frame(index)) == .draw, "at the first step every frame still gets its overlay")
            if index < 19 { stage.noteBacklog(queued: 6, capacity: 10) }
        }
        #expect(tracked(stage) == 15, "tracked every other frame: \(tracked(stage))")
        for _ in 0..<15 { stage.noteBacklog(queued: 9, capacity: 10) }
        let decisions = (20..<32).map { index in stage.analyse(frame(index)) }
        #expect(decisions.allSatisfy { $0 == .draw }, "every frame keeps its overlay: \(decisions)")
        #expect(tracked(stage) == 18, "tracked every fourth frame: \(tracked(stage))")
        let figures = stage.trackingFigures
        #expect(figures?.loadLevel == 2 && figures?.lightenedFrames == 14, "\(String(describing: figures))")
    }

    /// On the frames it does not track, where the face's pixels cannot be followed (a drawn face on
    /// a flat frame: nothing to match; real faces are followed by their pixels, `CoastingTests`), a
    /// moving face's landmarks (and its sticker) move on as they moved between the last two fits.
    /// Kept at the last fit instead, a face sliding 6 px and
    /// turning 0.6 degrees a frame at the second step stands still for three frames and then jumps:
    /// 18 px behind on every fourth frame, against the few pixels the smoothing lags on a fitted one.
    @Test func aMovingFaceKeepsMovingOnFramesThatAreNotTracked() {
        let pixels = grey720p()
        defer { pixels.deallocate() }
        let scene = Scene()
        scene.faces = [SyntheticFace(centre: Point(x: 300, y: 360), size: 160)]
        var settings = FaceTracker.Settings()
        settings.synchronousDetection = true
        let tracker = FaceTracker(settings: settings, landmarker: SceneLandmarker(scene), detector: SceneDetector(scene), poseSolver: NoPose())
        let stage = FaceTrackingStage(tracker: tracker, look: .landmarks)
        for _ in 0..<24 { stage.noteBacklog(queued: 9, capacity: 10) }
        var fitted: [Float] = [], coasted: [Float] = []
        for index in 0..<80 {
            scene.faces[0].centre.x = 300 + 6 * Float(index)
            scene.faces[0].roll = 0.01 * Float(index)
            let processed = tracked(stage)
            #expect(stage.analyse(frame720p(index, pixels: pixels)) == .draw)
            guard index >= 20, let shown = stage.faceNow?.landmarks else { continue }
            var error: Float = 0
            for point in [Landmark.noseTip, Landmark.rightEyeOuter, Landmark.leftEyeOuter, Landmark.chin] {
                error = max(error, shown[point].distance(to: scene.faces[0].landmarks[point]))
            }
            if tracked(stage) > processed { fitted.append(error) } else { coasted.append(error) }
        }
        #expect(fitted.count == 15 && coasted.count == 45, "tracked every fourth frame: \(fitted.count) fitted, \(coasted.count) not")
        let lag = fitted.max() ?? 0
        #expect((coasted.max() ?? .infinity) <= lag + 1, "the landmarks between fits (px off, worst): \(coasted.max() ?? -1), on fitted frames \(lag)")
        // A jump of the timestamps (a new input after a pause) carries them no further than the fits
        // are apart (24 px here), not on at the same speed for the 10 s skipped (1,800 px).
        scene.faces[0].centre.x = 300 + 6 * 80
        #expect(stage.analyse(frame720p(80, pixels: pixels)) == .draw)
        #expect(stage.analyse(frame720p(380, pixels: pixels)) == .draw)
        let drift = (stage.faceNow?.landmarks[Landmark.noseTip].x ?? .infinity) - scene.faces[0].landmarks[Landmark.noseTip].x
        #expect(abs(drift) <= 24 + lag + 1, "10 s after the last fit the nose is \(drift) px on")
    }
}
