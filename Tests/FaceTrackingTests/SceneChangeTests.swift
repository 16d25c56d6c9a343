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

        mutating func changedShare() -> Float { scene.changedShareSinceLastCheck(outside: []) }
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
}
