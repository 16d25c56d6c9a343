import CDlibReference
@testable import FaceTracking
import FrameKit
import Testing

/// What tells the tracker a new face may have come into view: a webcam's sensor noise must not
/// (every check would start a whole-frame scan), a face coming in must.
@Suite struct SceneChangeTests {
    /// Every corpus photo as a still frame under Gaussian noise new on every frame: sigma 6 and 8,
    /// the noise of a dim webcam. With too few pixels sampled per block, the mean of some block of
    /// a 720p frame's 880 moves past the threshold on nearly every frame at sigma 6.
    @Test(arguments: [Float(6), 8])
    func sensorNoiseOnAStillSceneIsNoChange(sigma: Float) throws {
        let corpus = try FaceCorpus.shared.get()
        var noise = GaussianNoise(sigma: sigma)
        for photo in corpus.photos {
            let count = Int(photo.width) * Int(photo.height)
            let frame = UnsafeMutablePointer<UInt8>.allocate(capacity: count)
            defer { frame.deallocate() }
            let plane = Plane(base: frame, stride: Int(photo.width), width: Int(photo.width), height: Int(photo.height))
            var scene = SceneChange(maximumFaces: 8)
            frame.update(from: photo.pixels, count: count)
            noise.add(to: frame, count: count)
            scene.measure(plane)
            scene.markScanned(.coarse, faces: [])
            var changes = 0
            for _ in 0..<10 {
                frame.update(from: photo.pixels, count: count)
                noise.add(to: frame, count: count)
                scene.measure(plane)
                if scene.changed(since: .coarse, outside: []) { changes += 1 }
            }
            #expect(changes == 0, "\(photo.name), sigma \(sigma): noise taken for a change on \(changes) of 10 frames")
        }
    }

    /// A webcam's automatic gain moving the whole frame by 12 % either way, under sigma-6 noise, is
    /// no change: compared as they are, the bright blocks of every photo move by far more than the
    /// threshold.
    @Test(arguments: [Float(0.88), 1.12])
    func theCamerasGainMovingIsNoChange(gain: Float) throws {
        let corpus = try FaceCorpus.shared.get()
        var noise = GaussianNoise(sigma: 6)
        for photo in corpus.photos {
            let count = Int(photo.width) * Int(photo.height)
            let frame = UnsafeMutablePointer<UInt8>.allocate(capacity: count)
            defer { frame.deallocate() }
            let plane = Plane(base: frame, stride: Int(photo.width), width: Int(photo.width), height: Int(photo.height))
            var scene = SceneChange(maximumFaces: 8)
            frame.update(from: photo.pixels, count: count)
            noise.add(to: frame, count: count)
            scene.measure(plane)
            scene.markScanned(.coarse, faces: [])
            for i in 0..<count { frame[i] = UInt8(min(255, (Float(photo.pixels[i]) * gain).rounded())) }
            noise.add(to: frame, count: count)
            scene.measure(plane)
            let changed = scene.changed(since: .coarse, outside: [])
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
            let count = Int(photo.width) * Int(photo.height)
            let frame = UnsafeMutablePointer<UInt8>.allocate(capacity: count)
            defer { frame.deallocate() }
            let plane = Plane(base: frame, stride: Int(photo.width), width: Int(photo.width), height: Int(photo.height))
            var scene = SceneChange(maximumFaces: 8)
            frame.update(from: photo.pixels, count: count)
            noise.add(to: frame, count: count)
            scene.measure(plane)
            scene.markScanned(.coarse, faces: [])
            for i in 0..<count { frame[i] = UInt8(min(255, (Float(photo.pixels[i]) * 1.12).rounded())) }
            // The astronaut's face, as dlib boxes it, scaled into the corner (nearest pixel).
            for y in 0..<side {
                for x in 0..<side {
                    let sourceX = Int(face.x) + x * Int(face.width) / side, sourceY = Int(face.y) + y * Int(face.height) / side
                    frame[(y + 8) * Int(photo.width) + x + 8] = visitor.pixels[sourceY * Int(visitor.width) + sourceX]
                }
            }
            noise.add(to: frame, count: count)
            scene.measure(plane)
            let seen = scene.changed(since: .coarse, outside: [])
            #expect(seen, "\(photo.name): a face coming in went unseen")
            let followed = FaceBox(x: 0, y: 0, width: Float(side + 16), height: Float(side + 16))
            let news = scene.changed(since: .coarse, outside: [followed])
            #expect(!news, "\(photo.name): a followed face moving is no news")
        }
    }
}
