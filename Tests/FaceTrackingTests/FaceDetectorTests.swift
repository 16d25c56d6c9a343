import FaceTracking
import FaceVision
import FrameKit
import Testing
import TestFixtures

/// The detector's whole-frame scan sums a window's whole filters only where its largest filters
/// leave the window near the floor (pruned_filters.h). On real faces of many sizes, over the
/// photo's own background, it must find exactly the windows that summing every filter everywhere,
/// as dlib does, finds: the same boxes in the same order, at dlib's floor and at one far lower,
/// which keeps hundreds of windows that only just reach it.
@Suite struct FaceDetectorTests {
    @Test(arguments: [0.0, -3.0])
    func aPrunedScanFindsWhatTheWholeFiltersFind(minimumScore: Double) throws {
        let photo = try FacePhoto.shared.get().plane
        let manySizes = try Self.facesOfManySizes(photo)
        defer { manySizes.base.deallocate() }
        let scenes = [photo, manySizes]
        let pruned = try DlibFaceDetector(minimumScore: minimumScore)
        let whole = try DlibFaceDetector(minimumScore: minimumScore, prunedFilters: false)
        let capacity = 2000
        let (a, b) = (UnsafeMutableBufferPointer<FaceSighting>.allocate(capacity: capacity), UnsafeMutableBufferPointer<FaceSighting>.allocate(capacity: capacity))
        defer { a.deallocate(); b.deallocate() }
        var compared = 0
        for scene in scenes {
            for levels in [PyramidLevels.all, PyramidLevels(first: 0, count: 3), PyramidLevels(first: 3, count: nil)] {
                let found = try pruned.detect(scene, levels: levels, into: a)
                let expected = try whole.detect(scene, levels: levels, into: b)
                #expect(found == expected, "\(scene.width)x\(scene.height), \(levels) levels: \(found) windows, \(expected) with every filter")
                #expect(found < capacity)
                for i in 0..<min(found, expected) {
                    // The same window; its score summed in another order (float rounding only).
                    #expect(a[i].box == b[i].box && abs(a[i].score - b[i].score) < 1e-4, "window \(i) of \(scene.width)x\(scene.height), \(levels): \(a[i]) against \(b[i])")
                }
                compared += expected
            }
        }
        if minimumScore < 0 { #expect(compared > 100, "only \(compared) windows compared") } else { #expect(compared >= 4, "faces found: \(compared)") }
    }

    /// A 1280x720 frame holding the photo at its own size and shrunk 1.6, 2.5 and 4 times, side by
    /// side, on a mid grey: faces from about 60 to 240 pixels wide.
    static func facesOfManySizes(_ photo: Plane) throws -> Plane {
        let (width, height) = (1280, 720)
        let frame = Plane(base: .allocate(capacity: width * height), stride: width, width: width, height: height)
        frame.base.initialize(repeating: 128, count: width * height)
        var x = 0
        for shrink: Float in [1, 1.6, 2.5, 4] {
            let side = min(Int(Float(photo.width) / shrink), height, width - x)
            guard side > 0 else { break }
            let copy = Plane(base: .allocate(capacity: side * side), stride: side, width: side, height: side)
            defer { copy.base.deallocate() }
            try DlibFaceDetector().downscale(photo, into: copy)
            for row in 0..<side { (frame.base + row * width + x).update(from: copy.base + row * side, count: side) }
            x += side
        }
        return frame
    }
}
