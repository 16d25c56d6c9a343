import FaceTracking
import FaceVision
import Foundation
import FrameKit
import MediaBridge
import Synchronization
import Testing
import TestFixtures

/// dlib's real model on a real face: fitters that share one model fit exactly as a fitter alone,
/// also while they fit at the same time on different threads (as the trackers of several streams do).
@Suite struct SharedLandmarkModelTests {
    @Test func fittersSharingOneModelOnTwoThreadsFitAsAFitterAlone() throws {
        let photo = try FacePhoto.shared.get()
        let model = try LandmarkModel()
        let detector = try DlibFaceDetector()
        let found = UnsafeMutableBufferPointer<FaceSighting>.allocate(capacity: 4)
        defer { found.deallocate() }
        try #require(try detector.detect(photo.plane, into: found) >= 1, "the face on portrait.png")
        // Each thread fits its own box: were any scratch memory shared, two threads fitting the same
        // box would write the same values into it and hide the race.
        let face = found[0].box
        let boxes = [face, FaceBox(x: face.x + 6, y: face.y - 4, width: face.width * 1.05, height: face.height * 1.05)]
        let alone = try DlibLandmarker(model: model)
        let expected = try boxes.map { try #require(try alone.fit(photo.plane, in: $0)) }
        #expect(!same(expected[0], expected[1]), "the two boxes give different fits")

        let fits = 150
        let mismatches = Mismatches()
        let finished = DispatchSemaphore(value: 0)
        for (index, box) in boxes.enumerated() {
            let want = expected[index]
            Thread {
                defer { finished.signal() }
                do {
                    let landmarker = try DlibLandmarker(model: model)
                    for fit in 0..<fits {
                        guard let got = try landmarker.fit(photo.plane, in: box), same(got, want) else {
                            mismatches.list.withLock { $0.append("thread \(index), fit \(fit)") }
                            return
                        }
                    }
                } catch {
                    mismatches.list.withLock { $0.append("thread \(index): \(error)") }
                }
            }.start()
        }
        finished.wait()
        finished.wait()
        #expect(mismatches.list.withLock { $0 } == [])
    }
}

/// Fits that differ from the fitter alone, from any thread.
private final class Mismatches: Sendable {
    let list = Mutex<[String]>([])
}

private func same(_ a: Landmarks, _ b: Landmarks) -> Bool {
    for i in 0..<68 where a[i] != b[i] { return false }
    return true
}

/// The grey plane of portrait.png, the real face photo (about 400 px) in the fixture folder.
final class FacePhoto: Sendable {
    let plane: Plane

    static let shared: Result<FacePhoto, FixtureError> = Result { () throws(FixtureError) in try FacePhoto() }

    private init() throws(FixtureError) {
        let directory = try FixtureFolder.path()
        var copied: Plane?
        do {
            let reader = try FrameFileReader(path: directory + "/portrait.png", library: PipelineLibrary(directory: FixtureFolder.root + "/Pipelines"))
            try reader.forEachFrame { frame, _ in
                let luma = frame.luma
                let memory = UnsafeMutablePointer<UInt8>.allocate(capacity: luma.width * luma.height)
                for row in 0..<luma.height {
                    (memory + row * luma.width).update(from: luma.base + row * luma.stride, count: luma.width)
                }
                copied = Plane(base: memory, stride: luma.width, width: luma.width, height: luma.height)
            }
        } catch {
            throw FixtureError(description: "cannot decode portrait.png: \(error)")
        }
        guard let copied else { throw FixtureError(description: "portrait.png has no picture") }
        plane = copied
    }

    deinit { plane.base.deallocate() }
}
