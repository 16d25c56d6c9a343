import CDlibReference
@testable import FaceTracking
import FrameKit
import Testing

/// What tells the tracker a new face may have come into view: a webcam's sensor noise and gain must
/// not (every check would start a whole-frame scan), a face coming in must.
@Suite struct SceneChangeTests {
    /// A corpus photo as a frame under sensor noise, measured as the coarse scan last saw it.
    struct Still: ~Copyable {
        let photo: FaceCorpus.Photo
        let count: Int
        let frame: UnsafeMutablePointer<UInt8>
        var scene = SceneChange(maximumFaces: 8)

        init(_ photo: FaceCorpus.Photo, noise: inout GaussianNoise) {
            self.photo = photo
            count = Int(photo.width) * Int(photo.height)
            frame = .allocate(capacity: count)
            show(gain: 1, noise: &noise)
            scene.markScanned(.coarse, faces: [])
        }

        deinit { frame.deallocate() }

        /// Measures the photo again, through the camera's `gain` (clipped at white, as a sensor
        /// clips) and new noise, after `changing` the frame.
        mutating func show(gain: Float, noise: inout GaussianNoise, changing: (UnsafeMutablePointer<UInt8>) -> Void = { _ in }) {
            if gain == 1 {
                frame.update(from: photo.pixels, count: count)
            } else {
                for i in 0..<count { frame[i] = UInt8(min(255, (Float(photo.pixels[i]) * gain).rounded())) }
            }
            changing(frame)
            noise.add(to: frame, count: count)
            scene.measure(Plane(base: frame, stride: Int(photo.width), width: Int(photo.width), height: Int(photo.height)))
        }

        mutating func changed(outside faces: [FaceBox] = []) -> Bool { scene.changed(since: .coarse, outside: faces) }

        mutating func changedShare() -> Float { motion().changed }

        mutating func motion() -> SceneMotion { scene.motionSinceLastCheck(outside: []) }
    }

    /// Every corpus photo as a still frame under Gaussian noise new on every frame: sigma 6 and 8,
    /// the noise of a dim webcam. With too few pixels sampled per block, the mean of some block of
    /// a 720p frame's 880 moves past the threshold on nearly every frame at sigma 6.
    @Test(arguments: [Float(6), 8])
    func sensorNoiseOnAStillSceneIsNoChange(sigma: Float) throws {
        var noise = GaussianNoise(sigma: sigma)
        for photo in try FaceCorpus.shared.get().photos {
            var still = Still(photo, noise: &noise)
            var changes = 0
            for _ in 0..<10 {
                still.show(gain: 1, noise: &noise)
                if still.changed() { changes += 1 }
            }
            #expect(changes == 0, "\(photo.name), sigma \(sigma): noise taken for a change on \(changes) of 10 frames")
        }
    }

    /// A webcam's automatic gain moving the whole frame by 12 % either way, under sigma-6 noise, is
    /// no change: compared as they are, the bright blocks of every photo move by far more than the
    /// threshold.
    @Test(arguments: [Float(0.88), 1.12])
    func theCamerasGainMovingIsNoChange(gain: Float) throws {
        var noise = GaussianNoise(sigma: 6)
        for photo in try FaceCorpus.shared.get().photos {
            var still = Still(photo, noise: &noise)
            still.show(gain: gain, noise: &noise)
            let changed = still.changed()
            #expect(!changed, "\(photo.name): a gain of \(gain) taken for a change")
        }
    }

    /// A webcam's gain drifting by 1 % a frame for a second, under sigma-8 noise, moves every block
    /// the same way at every check, but by the whole frame's gain, which the checks take out: what
    /// changes steadily beyond it (blocks clipped at white, the gain's steps of 1/256) is 0.08 of the
    /// blocks at most, far from a transition (`transitionSteadyShare`), which would scan at every check.
    @Test func aDriftingGainUnderNoiseIsNoTransition() throws {
        var noise = GaussianNoise(sigma: 8)
        var worst: Float = 0
        for photo in try FaceCorpus.shared.get().photos {
            var still = Still(photo, noise: &noise)
            _ = still.motion()
            for frame in stride(from: 3, through: 30, by: 3) {
                still.show(gain: 1 + Float(frame) / 100, noise: &noise)
                let steady = still.motion().steady
                worst = max(worst, steady)
                #expect(steady < FaceTracker.Settings().transitionSteadyShare / 2, "\(photo.name), frame \(frame): \(steady) of the blocks changed steadily")
            }
        }
        print("a drifting gain under noise: at most \(worst) of the blocks changed steadily")
    }

    /// A face of another photo coming into a corner of each photo, under the same noise and a gain
    /// that moved by 12 %: a change, unless a followed face covers that corner.
    @Test func aFaceComingIntoViewIsAChangeUnlessAFollowedFaceIsThere() throws {
        let corpus = try FaceCorpus.shared.get()
        let visitor = try #require(corpus.photos.first { $0.name == "astronaut" })
        let face = try #require(try visitor.stockDetections().first, "dlib finds no face on the astronaut photo")
        var noise = GaussianNoise(sigma: 6)
        let side = 96
        for photo in corpus.photos where photo.name != visitor.name && photo.width >= 200 && photo.height >= 200 {
            var still = Still(photo, noise: &noise)
            // The astronaut's face, as dlib boxes it, scaled into the corner (nearest pixel).
            still.show(gain: 1.12, noise: &noise) { frame in
                for y in 0..<side {
                    for x in 0..<side {
                        let sourceX = Int(face.x) + x * Int(face.width) / side, sourceY = Int(face.y) + y * Int(face.height) / side
                        frame[(y + 8) * Int(photo.width) + x + 8] = visitor.pixels[sourceY * Int(visitor.width) + sourceX]
                    }
                }
            }
            let seen = still.changed()
            #expect(seen, "\(photo.name): a face coming in went unseen")
            let news = still.changed(outside: [FaceBox(x: 0, y: 0, width: Float(side + 16), height: Float(side + 16))])
            #expect(!news, "\(photo.name): a followed face moving is no news")
        }
    }

    /// A cut to another photo changes most of the blocks between two checks (0.56-0.96 of them
    /// over the corpus; the least between two photos of one man in two masks); the camera's noise and
    /// gain change none, and a face coming into a corner at most 0.18; against the scene a scan saw
    /// (`changedShare(since:)`, which tells a settled scene that is new after a transition), the same.
    /// `DetectionScheduler.sceneChecked` takes half or more for a cut and for a new scene.
    @Test func aCutChangesMostOfTheSceneAndNoiseGainOrAFaceComingInLittle() throws {
        let photos = try FaceCorpus.shared.get().photos.filter { $0.width >= 200 && $0.height >= 200 }
        var noise = GaussianNoise(sigma: 6)
        for (index, photo) in photos.enumerated() {
            let other = photos[(index + 1) % photos.count]
            var still = Still(photo, noise: &noise)
            _ = still.changedShare()
            still.show(gain: 1.12, noise: &noise)
            let camera = still.changedShare(), cameraSinceScan = still.scene.changedShare(since: .coarse, outside: [])
            still.show(gain: 1.12, noise: &noise) { frame in
                for y in 8..<104 {
                    for x in 8..<104 { frame[y * Int(photo.width) + x] = other.pixels[y * Int(other.width) + x] }
                }
            }
            let corner = still.changedShare()
            // The other photo, scaled to this one's size (nearest pixel).
            still.show(gain: 1, noise: &noise) { frame in
                for y in 0..<Int(photo.height) {
                    for x in 0..<Int(photo.width) {
                        frame[y * Int(photo.width) + x] = other.pixels[y * Int(other.height) / Int(photo.height) * Int(other.width) + x * Int(other.width) / Int(photo.width)]
                    }
                }
            }
            let cut = still.changedShare(), cutSinceScan = still.scene.changedShare(since: .coarse, outside: [])
            #expect(camera < 0.05 && corner < 0.5, "\(photo.name): \(camera) of the blocks changed with the gain, \(corner) with a face in a corner")
            #expect(cut >= 0.5, "\(photo.name): a cut to \(other.name) changed \(cut) of the blocks")
            #expect(cameraSinceScan < 0.05 && cutSinceScan >= 0.5, "\(photo.name): since the scan, \(cameraSinceScan) with the gain, \(cutSinceScan) after the cut")
        }
    }

    /// A cross-fade moves every block toward the next scene's mean by about as much at every check;
    /// a camera panning changes a block by what its texture brings in, another amount each time.
    /// `DetectionScheduler.sceneChecked` takes a scene whose blocks change steadily
    /// (`transitionSteadyShare` of them, each for three checks in a row: `SceneChange.steadyChecks`)
    /// for a transition and scans it at every check: without the tell, a pan would be scanned at
    /// every check too, or a fade's face found only at its end. Every corpus photo of 400 px and more
    /// under sigma-6 noise, faded over 1 s (30 frames) to the next photo: 0.35-0.83 of the blocks
    /// steady from the third check; panned across at 2, 3, 4 and 8 px a frame and diagonally: 0.24
    /// at most (the slowest over the softest photo). Counted on single checks (two changes alike),
    /// the fades were 0.40-0.83 and the pans 0.35 at most.
    @Test func aFadeChangesTheSceneSteadilyAndAPanDoesNot() throws {
        let settings = FaceTracker.Settings()
        let photos = try FaceCorpus.shared.get().photos.filter { $0.width >= 400 && $0.height >= 400 }
        var noise = GaussianNoise(sigma: 6)
        var fadeSteady: [Float] = [], panSteady: [Float] = []
        for (index, photo) in photos.enumerated() {
            let other = photos[(index + 1) % photos.count]
            let (width, height) = (Int(photo.width), Int(photo.height))
            var still = Still(photo, noise: &noise)
            _ = still.motion()
            for frame in stride(from: 3, through: 33, by: 3) {
                let blend = Float(min(frame, 30)) / 30
                still.show(gain: 1, noise: &noise) { pixels in
                    for y in 0..<height {
                        for x in 0..<width {
                            let next = Float(other.pixels[y * Int(other.height) / height * Int(other.width) + x * Int(other.width) / width])
                            pixels[y * width + x] = UInt8((Float(pixels[y * width + x]) * (1 - blend) + next * blend).rounded())
                        }
                    }
                }
                let motion = still.motion()
                // The first checks of the fade have too few changes before them to compare with.
                guard frame >= 9 && frame < 30 else { continue }
                fadeSteady.append(motion.steady)
                #expect(motion.steady >= settings.transitionSteadyShare,
                        "\(photo.name) fading to \(other.name), frame \(frame): \(motion.steady) of the changes steady, \(motion.changed) changed")
            }
            Self.pan(across: photo, noise: &noise) { dx, dy, frame, motion in
                panSteady.append(motion.steady)
                #expect(motion.steady < settings.transitionSteadyShare,
                        "\(photo.name) panned by \(dx), \(dy) px a frame, frame \(frame): \(motion.steady) of the changes steady, \(motion.changed) changed")
            }
        }
        print("share of the blocks changed steadily: fades \(fadeSteady.min() ?? 0)-\(fadeSteady.max() ?? 0) (\(fadeSteady.count) checks), "
              + "pans \(panSteady.min() ?? 0)-\(panSteady.max() ?? 0) (\(panSteady.count))")
        #expect(fadeSteady.count >= 6 * photos.count && panSteady.count >= 10 * photos.count, "\(fadeSteady.count) fade checks, \(panSteady.count) pan checks")
    }

    /// A wipe uncovers the next scene a strip at a time: the strip uncovered at one check is still
    /// at the next (`SceneMotion.regionSettled`), while the rest of the scene keeps changing as the
    /// wipe goes on. Every corpus photo of 400 px and more under sigma-6 noise, wiped from the left
    /// over 1 s (30 frames) to the next photo: a region settled on 136 of 144 checks; counting only
    /// blocks that settled at the same check, 113 (a check misses where its strip, 40-67 px on these
    /// photos, holds no two whole block columns). The same photos still under that noise, their gain
    /// drifting 1 % a frame: on none, which would cost a coarse scan at every check. Panned across at
    /// 2, 3, 4 and 8 px a frame and diagonally: on 69 of 640 (30 counting only blocks settled at the
    /// same check), a coarse scan on one check in nine while no face is followed.
    @Test func aWipeSettlesARegionAndNoiseGainOrAPanDoNot() throws {
        let photos = try FaceCorpus.shared.get().photos.filter { $0.width >= 400 && $0.height >= 400 }
        var noise = GaussianNoise(sigma: 6)
        var wipeChecks = 0, wipeSettled = 0, stillSettled = 0, panChecks = 0, panSettled = 0
        for (index, photo) in photos.enumerated() {
            let other = photos[(index + 1) % photos.count]
            let (width, height) = (Int(photo.width), Int(photo.height))
            var still = Still(photo, noise: &noise)
            _ = still.motion()
            for frame in stride(from: 3, through: 30, by: 3) {
                still.show(gain: 1 + Float(frame) / 100, noise: &noise)
                if still.motion().regionSettled { stillSettled += 1 }
            }
            still = Still(photo, noise: &noise)
            _ = still.motion()
            for frame in stride(from: 3, through: 30, by: 3) {
                let uncovered = width * frame / 30
                still.show(gain: 1, noise: &noise) { pixels in
                    for y in 0..<height {
                        for x in 0..<uncovered { pixels[y * width + x] = other.pixels[y * Int(other.height) / height * Int(other.width) + x * Int(other.width) / width] }
                    }
                }
                let motion = still.motion()
                // The first strip has no check before it that saw it change.
                guard frame >= 6 else { continue }
                wipeChecks += 1
                if motion.regionSettled { wipeSettled += 1 }
            }
            Self.pan(across: photo, noise: &noise) { _, _, frame, motion in
                // As for the wipe, the first change has no check before it to settle from.
                guard frame >= 6 else { return }
                panChecks += 1
                if motion.regionSettled { panSettled += 1 }
            }
        }
        print("a region settled: wipes \(wipeSettled) of \(wipeChecks) checks, still under noise and a drifting gain \(stillSettled), pans \(panSettled) of \(panChecks)")
        #expect(wipeSettled * 2 >= wipeChecks, "a region settled on \(wipeSettled) of \(wipeChecks) checks of the wipes")
        #expect(stillSettled == 0, "a still scene under noise and a drifting gain settled a region on \(stillSettled) checks")
        #expect(panSettled * 8 <= panChecks, "a pan settled a region on \(panSettled) of \(panChecks) checks")
    }

    /// A window 240 px narrower and 60 px lower than `photo`, under `noise`, panned across it at 2, 3,
    /// 4 and 8 px a frame and diagonally; `check` gets each scene check's motion after the first.
    static func pan(across photo: FaceCorpus.Photo, noise: inout GaussianNoise,
                    _ check: (_ dx: Int, _ dy: Int, _ frame: Int, SceneMotion) -> Void) {
        let (width, height) = (Int(photo.width), Int(photo.height))
        let (windowWidth, windowHeight) = (width - 240, height - 60)
        let window = UnsafeMutablePointer<UInt8>.allocate(capacity: windowWidth * windowHeight)
        defer { window.deallocate() }
        for (dx, dy) in [(2, 0), (3, 0), (4, 0), (8, 0), (4, 2)] {
            var scene = SceneChange(maximumFaces: 8)
            for frame in stride(from: 0, through: 27, by: 3) {
                for y in 0..<windowHeight {
                    (window + y * windowWidth).update(from: photo.pixels + (y + frame * dy) * width + frame * dx, count: windowWidth)
                }
                noise.add(to: window, count: windowWidth * windowHeight)
                scene.measure(Plane(base: window, stride: windowWidth, width: windowWidth, height: windowHeight))
                let motion = scene.motionSinceLastCheck(outside: [])
                if frame > 0 { check(dx, dy, frame, motion) }
            }
        }
    }
}
