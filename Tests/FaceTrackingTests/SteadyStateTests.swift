import CAllocationCounter
import CFaceVision
import FaceTracking
import FaceVision
import Foundation
import FrameKit
import Testing
import TestFixtures

/// The vision shim on the real photo, once warmed up: every call a tracked frame and the detection
/// thread make allocates nothing on the heap (the counter counts the calling thread). The shim is
/// called directly: in the unoptimised test build Swift boxes large values such as the 68 landmarks
/// when they pass through generic code, which the release build does not (facerelay-bench
/// landmark-memory counts whole tracked frames there). And the head pose seeded by the last frame's,
/// which replaced solvePnP's allocating solve, against solvePnP's own.
@Suite struct SteadyStateTests {
    /// A 1280x720 frame with the portrait on it, and its face box.
    final class Frame {
        let pixels = UnsafeMutablePointer<UInt8>.allocate(capacity: 1280 * 720)
        var plane: Plane { Plane(base: pixels, stride: 1280, width: 1280, height: 720) }
        let box: fv_box

        init() throws {
            let photo = try FacePhoto.shared.get().plane
            pixels.update(repeating: 96, count: 1280 * 720)
            for row in 0..<min(photo.height, 720) {
                (pixels + row * 1280 + 300).update(from: photo.base + row * photo.stride, count: min(photo.width, 980))
            }
            let found = UnsafeMutableBufferPointer<FaceSighting>.allocate(capacity: 4)
            defer { found.deallocate() }
            let plane = Plane(base: pixels, stride: 1280, width: 1280, height: 720)
            guard try DlibFaceDetector().detect(plane, into: found) >= 1 else { throw FixtureError(description: "no face on the frame") }
            box = fv_box(x: found[0].box.x, y: found[0].box.y, width: found[0].box.width, height: found[0].box.height)
        }

        deinit { pixels.deallocate() }
    }

    /// Heap allocations of `body` on this thread, after one call to warm it up.
    func allocations(_ body: () -> Void) -> UInt64 {
        body()
        let before = fr_allocation_count()
        body()
        return UInt64(fr_allocation_count() - before)
    }

    @Test func aFitAChecksOfItAndASeededPoseAllocateNothing() throws {
        let frame = try Frame()
        var error: UnsafeMutablePointer<CChar>?
        let model = try #require(fv_landmark_model_load(defaultLandmarkModelPath, &error))
        defer { fv_landmark_model_destroy(model) }
        let fitter = try #require(fv_fitter_create(model, &error))
        defer { fv_fitter_destroy(fitter) }
        let detector = try #require(fv_detector_create(&error))
        defer { fv_detector_destroy(detector) }
        let solver = try #require(fv_pose_solver_create(&error))
        defer { fv_pose_solver_destroy(solver) }
        let points = UnsafeMutablePointer<fv_point>.allocate(capacity: 68)
        defer { points.deallocate() }

        var status: Int32 = -1
        #expect(allocations { status = fv_fit_landmarks(fitter, frame.pixels, 1280, 720, 1280, frame.box, 0.02, points, &error) } == 0)
        #expect(status == 0)
        // A check where the face is expected, and a search around it (the two patch sizes), in turn.
        var found = fv_box(), score = 0.0, best = -2.0
        #expect(allocations {
            for index in 0..<4 {
                let reach: Float = index % 2 == 0 ? 0 : 0.5
                status = fv_locate_face(detector, frame.pixels, 1280, 720, 1280, frame.box, 0.02, reach, &found, &score, &error)
                best = max(best, score)
            }
        } == 0)
        #expect(status == 0 && best > 0, "the face scores as a face: \(best)")
        var first = fv_pose(), seeded = fv_pose()
        #expect(fv_solve_pose(solver, points, 1280, 720, nil, &first, &error) == 0)
        #expect(allocations { status = fv_solve_pose(solver, points, 1280, 720, &first, &seeded, &error) } == 0)
        #expect(status == 0 && abs(seeded.yaw - first.yaw) < 0.01 && abs(seeded.pitch - first.pitch) < 0.01)
    }

    /// The detection thread's scans, coarse and fine in turn as the tracker runs them, on the frame
    /// at the default settings.
    @Test func theDetectionThreadsScansAllocateNothing() throws {
        let frame = try Frame()
        var error: UnsafeMutablePointer<CChar>?
        let detector = try #require(fv_detector_create(&error))
        defer { fv_detector_destroy(detector) }
        let boxes = UnsafeMutablePointer<fv_box>.allocate(capacity: 8)
        defer { boxes.deallocate() }
        var coarseFound: Int32 = 0, fineFound: Int32 = 0
        let scanBoth = {
            coarseFound = fv_detect(detector, frame.pixels, 1280, 720, 1280, 0, 3, 0, boxes, nil, 8, &error)
            fineFound = fv_detect(detector, frame.pixels, 1280, 720, 1280, 0, 0, 3, boxes, nil, 8, &error)
        }
        #expect(allocations(scanBoth) == 0)
        // The face (about 215 px) is a coarse scan's; the fine scan looks for faces under 126 px.
        #expect(coarseFound == 1 && fineFound == 0, "coarse \(coarseFound), fine \(fineFound)")
    }

    /// The pose seeded by a nearby one converges to solvePnP's from scratch: the same minimum of the
    /// reprojection error.
    @Test func aSeededPoseIsSolvePnPsPose() throws {
        let frame = try Frame()
        let landmarker = try DlibLandmarker(model: try SharedModel.landmarks())
        let box = FaceBox(x: frame.box.x, y: frame.box.y, width: frame.box.width, height: frame.box.height)
        let landmarks = try #require(try landmarker.fit(frame.plane, in: box))
        let solver = try PnPPoseSolver()
        let fresh = try #require(try solver.solve(landmarks, frameWidth: 1280, frameHeight: 720, previous: nil))
        // The fresh pose turned by 8° about each axis in turn and moved by 20 mm, as the previous frame's.
        for axis in 0..<3 {
            var seed = fresh
            let turn = Self.rotation(axis: axis, degrees: 8)
            for row in 0..<3 {
                for column in 0..<3 {
                    var sum = 0.0
                    for k in 0..<3 { sum += turn[row * 3 + k] * fresh.rotation[k * 3 + column] }
                    seed.rotation[row * 3 + column] = sum
                }
            }
            seed.translation[axis] += 20
            let seeded = try #require(try solver.solve(landmarks, frameWidth: 1280, frameHeight: 720, previous: seed))
            #expect(abs(seeded.yaw - fresh.yaw) < 0.05 && abs(seeded.pitch - fresh.pitch) < 0.05 && abs(seeded.roll - fresh.roll) < 0.05,
                    "axis \(axis): \(seeded.yaw), \(seeded.pitch), \(seeded.roll) against \(fresh.yaw), \(fresh.pitch), \(fresh.roll)")
            for i in 0..<3 { #expect(abs(seeded.translation[i] - fresh.translation[i]) < 0.5, "axis \(axis), translation \(i)") }
        }
    }

    static func rotation(axis: Int, degrees: Double) -> [Double] {
        let a = degrees * .pi / 180, c = cos(a), s = sin(a)
        switch axis {
        case 0: return [1, 0, 0, 0, c, -s, 0, s, c]
        case 1: return [c, 0, s, 0, 1, 0, -s, 0, c]
        default: return [c, -s, 0, s, c, 0, 0, 0, 1]
        }
    }
}
