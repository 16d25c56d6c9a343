import CAllocationCounter
import CFaceVision
@testable import FaceTracking
import FaceVision
import Foundation
import FrameKit
import Testing

/// The head pose of real faces: every face of the corpus that dlib's stock detector finds.
@Suite(.serialized) struct HeadPoseTests {
    /// A face's first pose puts it in front of the camera, facing it, and upright: within the ±45
    /// degrees of yaw where a pose is reliable (`HeadPose`), its roll lies within 20 degrees of the
    /// angle of its eye line (turn and tilt move the two apart by at most 13 here; the man looking
    /// aside in t1.png, turned about 65 degrees, is posed rolled 25 from his eye line, as the fit
    /// folds his far eye in). solvePnP alone posed the laughing man in t1.png as his mirror image
    /// behind the camera, which projects onto nearly the same points, rolled -171 degrees. The
    /// refinement keeps every point in front, so it could not start from that pose, and every later
    /// frame of his was solved afresh by solvePnP, allocating, and behind the camera again: here the
    /// pose seeded by the first allocates nothing, on every face.
    @Test func everyFaceDlibFindsIsPosedUprightInFrontOfTheCamera() throws {
        let corpus = try FaceCorpus.shared.get()
        let landmarker = try DlibLandmarker(model: try SharedModel.landmarks())
        var error: UnsafeMutablePointer<CChar>?
        let solver = try #require(fv_pose_solver_create(&error))
        defer { fv_pose_solver_destroy(solver) }
        let points = UnsafeMutablePointer<fv_point>.allocate(capacity: 68)
        defer { points.deallocate() }
        var posed = 0, upright = 0
        for photo in corpus.photos {
            for face in try photo.stockDetections() where face.width >= 80 {
                let box = FaceBox(x: face.x, y: face.y, width: face.width, height: face.height)
                guard let landmarks = try photo.withPlane({ try landmarker.fit($0, in: box) }) else {
                    Issue.record("\(photo.name): no landmarks in dlib's box \(box)")
                    continue
                }
                for i in 0..<68 { points[i] = fv_point(x: landmarks[i].x, y: landmarks[i].y) }
                var pose = fv_pose()
                guard fv_solve_pose(solver, points, photo.width, photo.height, nil, &pose, &error) == 0 else {
                    Issue.record("\(photo.name): no pose for the face at \(box)")
                    continue
                }
                posed += 1
                let eyeLine = Double(landmarks.eyeLineAngle) * 180 / .pi
                var tilt = (pose.roll - eyeLine).truncatingRemainder(dividingBy: 360)
                if tilt > 180 { tilt -= 360 } else if tilt < -180 { tilt += 360 }
                // The model looks along -z: facing the camera, its z axis points away from it.
                #expect(pose.translation.2 > 0 && pose.rotation.8 > 0,
                        "\(photo.name), face at \(box): posed \(pose.translation.2) mm from the camera, facing \(pose.rotation.8)")
                if abs(pose.yaw) <= 45 {
                    upright += 1
                    #expect(abs(tilt) <= 20, "\(photo.name), face at \(box): roll \(pose.roll) degrees, eye line \(eyeLine)")
                }
                // Seeded by itself, as the next frame's is, the pose stays where it is, without allocating.
                var again = fv_pose(), status: Int32 = -1
                let before = fr_allocation_count()
                status = fv_solve_pose(solver, points, photo.width, photo.height, &pose, &again, &error)
                #expect(fr_allocation_count() == before, "\(photo.name), face at \(box): the seeded pose allocated")
                #expect(status == 0 && abs(again.yaw - pose.yaw) < 0.05 && abs(again.pitch - pose.pitch) < 0.05 && abs(again.roll - pose.roll) < 0.05,
                        "\(photo.name), face at \(box): \(again.yaw), \(again.pitch), \(again.roll) refined from \(pose.yaw), \(pose.pitch), \(pose.roll)")
            }
        }
        #expect(posed >= 24 && upright >= 20, "only \(posed) faces posed, \(upright) within 45 degrees of yaw")
    }

    /// Yaw and pitch are the head's turn away from the line of sight to it: a head looking straight
    /// at the camera has none wherever it is in the frame, and a head facing along the camera's axis
    /// is turned by the angle it is seen at. The six points of the generic face (as pose.cpp places
    /// them) projected exactly, the head 1.5 m away. Against the camera's axis, the head looking at
    /// the camera from 450 px left of centre (on a 1280 px frame) had a yaw of -19 degrees.
    @Test func aHeadLookingAtTheCameraHasNoTurnWhereverItIs() throws {
        var error: UnsafeMutablePointer<CChar>?
        let solver = try #require(fv_pose_solver_create(&error))
        defer { fv_pose_solver_destroy(solver) }
        let (width, height) = (1280.0, 720.0), focal = width
        for (x, y) in [(-450.0, 0.0), (450, 0), (0, -250), (0, 250), (-450, 250), (300, -200), (0, 0)] {
            let z = 1500.0, nose = [x * z / focal, y * z / focal, z]
            let length = (nose[0] * nose[0] + nose[1] * nose[1] + z * z).squareRoot()
            let sight = nose.map { $0 / length }
            let seen = atan2((nose[0] * nose[0] + nose[1] * nose[1]).squareRoot(), z) * 180 / .pi
            for looksAtCamera in [true, false] {
                let rotation = looksAtCamera ? Self.turning(axisOnto: sight) : [1, 0, 0, 0, 1, 0, 0, 0, 1]
                let points = UnsafeMutablePointer<fv_point>.allocate(capacity: 68)
                defer { points.deallocate() }
                points.initialize(repeating: fv_point(x: 0, y: 0), count: 68)
                for (index, m) in Self.genericFace {
                    let p = (0..<3).map { row in rotation[row * 3] * m[0] + rotation[row * 3 + 1] * m[1] + rotation[row * 3 + 2] * m[2] + nose[row] }
                    points[index] = fv_point(x: Float(focal * p[0] / p[2] + width / 2), y: Float(focal * p[1] / p[2] + height / 2))
                }
                var pose = fv_pose()
                try #require(fv_solve_pose(solver, points, Int32(width), Int32(height), nil, &pose, &error) == 0)
                let turn = (pose.yaw * pose.yaw + pose.pitch * pose.pitch).squareRoot()
                if looksAtCamera {
                    #expect(turn < 0.5 && abs(pose.roll) < 0.5, "looking at the camera from (\(x), \(y)) px: yaw \(pose.yaw), pitch \(pose.pitch), roll \(pose.roll)")
                } else {
                    #expect(abs(turn - seen) < 0.5, "facing along the axis at (\(x), \(y)) px, seen \(seen) degrees off it: yaw \(pose.yaw), pitch \(pose.pitch)")
                }
            }
        }
    }

    /// A real face sliding from side to side across the frame keeps its yaw (`SwayingFace`: every
    /// corpus person, 150 px, on a 720x720 frame, 420 px and back twice). It is seen from angles 32
    /// degrees apart; after the first 10 frames, the median face's yaw spans under 16 degrees, half
    /// that (2-29 here, median 6), and no face's over 40. Against the camera's axis the yaw followed
    /// the face across the frame: 22-71 degrees, median 31, and every person started a `shake`.
    /// Known, not yet fixed: a nod or a shake can still start where the pose wanders with the
    /// sway: on none of the 16 faces with this noise, on 1 of 128 over eight draws of it (t1, whose
    /// yaw spans 28-30 degrees on every draw). obama2's pose flipped on one draw (-33 and 40
    /// degrees) until a pose turning faster than a head can stopped being taken
    /// (`aPoseThatTurnsFasterThanAHeadCanIsNotTaken`). Judged by how far the angles bend from the
    /// straight line between the second's ends, as gestures were, 3 of these 16.
    @Test func aFaceSlidingFromSideToSideKeepsItsYaw() throws {
        let corpus = try FaceCorpus.shared.get()
        let model = try SharedModel.landmarks()
        let frame = SwayingFace.Frame()
        let frames = SwayingFace.centres.count
        var ranges: [Double] = []
        for photo in corpus.photos {
            guard var sway = try SwayingFace(photo) else { continue }
            let (yaws, gestures) = try Self.poses(of: &sway, tracker: try SwayingFace.tracker(model), frame: frame)
            let range = (yaws.max() ?? 0) - (yaws.min() ?? 0)
            ranges.append(range)
            #expect(yaws.count >= (frames - 10) * 2 / 3, "\(photo.name): posed on \(yaws.count) of \(frames - 10) frames")
            #expect(range < 40, "\(photo.name): yaw \(yaws.min() ?? 0) to \(yaws.max() ?? 0) degrees")
            withKnownIssue("a nod or a shake from a pose that jumps for a few frames", isIntermittent: true) {
                #expect(gestures.isEmpty, "\(photo.name): \(gestures)")
            }
        }
        #expect(ranges.count >= 10, "only \(ranges.count) people")
        let median = ranges.sorted()[ranges.count / 2]
        #expect(median < 16, "the median face's yaw spans \(median) degrees: \(ranges)")
    }

    /// A pose that turned faster than a head can is not taken (`FaceTracker.Settings.headTurnSpeed`):
    /// the last one stands until the time since it allows the turn. obama2's face (turned about 40
    /// degrees) swaying under the noise's draw 3 turns straight back on frame 25; its fit there lands
    /// with the nose tip on the far side of the eyes (14 % of the eye distance from dlib's fit, the one
    /// such fit in 128 swaying faces over eight draws: docs/tracking.md), and without the limit the
    /// pose solved from it reads yaw -33 and -32 degrees between frames at +40, and a shake starts.
    /// With it, the yaw spans 5 degrees and no gesture starts. A quick shake turns about 130 degrees
    /// a second (`LookingAsideTests`), well within the limit.
    @Test func aPoseThatTurnsFasterThanAHeadCanIsNotTaken() throws {
        let corpus = try FaceCorpus.shared.get()
        let photo = try #require(corpus.photos.first { $0.name == "obama2" }, "obama2 is in the corpus")
        let model = try SharedModel.landmarks()
        let frame = SwayingFace.Frame()
        func sway(headTurnSpeed: Float) throws -> (yaws: [Double], gestures: [String]) {
            var settings = FaceTracker.Settings()
            settings.synchronousDetection = true
            settings.headTurnSpeed = headTurnSpeed
            var sway = try #require(try SwayingFace(photo, noiseDraw: 3))
            return try Self.poses(of: &sway, tracker: try makeFaceTracker(settings: settings, model: model), frame: frame)
        }
        let unlimited = try sway(headTurnSpeed: .infinity)
        let unlimitedRange = (unlimited.yaws.max() ?? 0) - (unlimited.yaws.min() ?? 0)
        #expect(unlimitedRange > 40, "without the limit the yaw spans only \(unlimitedRange) degrees: the flip this test is about no longer happens")
        let limited = try sway(headTurnSpeed: FaceTracker.Settings().headTurnSpeed)
        let range = (limited.yaws.max() ?? 0) - (limited.yaws.min() ?? 0)
        #expect(limited.yaws.count >= (SwayingFace.centres.count - 10) * 2 / 3, "posed on \(limited.yaws.count) frames")
        #expect(range < 15, "the yaw spans \(range) degrees: \(limited.yaws.min() ?? 0) to \(limited.yaws.max() ?? 0)")
        #expect(limited.gestures.isEmpty, "\(limited.gestures)")
    }

    /// A clock that goes back (an input whose timestamps restart) freezes neither the landmarks nor
    /// the pose: the smoothing starts again from the fit, and the turn-speed limit takes time that
    /// did not move on as telling nothing. obama's head shake with the clock set back 10 s just
    /// before it: the yaw still swings. Without either, the yaw spanned 0 degrees through the whole
    /// shake: the smoothing held its output until the clock was back where it had been, 10 s on,
    /// and the limit, measuring the turn against the negative time, found any turn too fast.
    @Test func aClockThatGoesBackDoesNotFreezeThePose() throws {
        let corpus = try FaceCorpus.shared.get()
        let photo = try #require(corpus.photos.first { $0.name == "obama" }, "obama is in the corpus")
        let model = try SharedModel.landmarks()
        let landmarker = try DlibLandmarker(model: model)
        var shaking = try #require(try TurningFace(photo, landmarker: landmarker, yaws: TurningFace.shaking))
        let (width, height) = (TurningFace.width, TurningFace.height)
        let pixels = UnsafeMutablePointer<UInt8>.allocate(capacity: width * height)
        let flat = UnsafeMutablePointer<UInt8>.allocate(capacity: width * width)
        defer { pixels.deallocate(); flat.deallocate() }
        let plane = Plane(base: pixels, stride: width, width: width, height: height)
        let tracker = try SwayingFace.tracker(model)
        let jump = 15
        var yaws: [Double] = []
        for index in shaking.yaws.indices {
            try shaking.render(index, into: pixels, flat: flat)
            tracker.process(plane, seconds: Double(index) / 30 - (index >= jump ? 10 : 0))
            if index >= jump, let pose = tracker.faces.first(where: { $0.isShown })?.pose { yaws.append(pose.yaw) }
        }
        let range = (yaws.max() ?? 0) - (yaws.min() ?? 0)
        #expect(yaws.count >= (shaking.yaws.count - jump) * 2 / 3, "posed on \(yaws.count) frames")
        #expect(range > 10, "through a 40-degree shake after the clock went back, the yaw spans \(range) degrees")
    }

    /// Tracks `sway` through every frame: the shown face's yaw after the first 10 frames, and the
    /// nods and shakes that started.
    static func poses(of sway: inout SwayingFace, tracker: FaceTracker, frame: SwayingFace.Frame) throws -> (yaws: [Double], gestures: [String]) {
        var yaws: [Double] = [], gestures: [String] = []
        for index in SwayingFace.centres.indices {
            _ = try sway.render(index, into: frame)
            tracker.process(frame.plane, seconds: Double(index) / 30)
            if index >= 10, let pose = tracker.faces.first(where: { $0.isShown })?.pose { yaws.append(pose.yaw) }
            for event in tracker.expressionEvents where event.started && (event.expression == "shake" || event.expression == "nod") {
                gestures.append("\(event.expression) at frame \(index), centre \(Int(SwayingFace.centres[index])) px")
            }
        }
        return (yaws, gestures)
    }

    /// pose.cpp's generic face: the landmarks the pose is solved from, millimetres, nose tip at the origin.
    static let genericFace: [(Int, [Double])] = [
        (30, [0, 0, 0]), (8, [0, 66, 13]), (36, [-45, -34, 27]), (45, [45, -34, 27]), (48, [-30, 30, 25]), (54, [30, 30, 25]),
    ]

    /// The rotation that turns the camera's axis (0, 0, 1) onto the unit vector `d`, row-major.
    static func turning(axisOnto d: [Double]) -> [Double] {
        let s = (d[0] * d[0] + d[1] * d[1]).squareRoot(), c = d[2]
        guard s > 1e-12 else { return [1, 0, 0, 0, 1, 0, 0, 0, 1] }
        let kx = -d[1] / s, ky = d[0] / s, w = 1 - c
        return [c + kx * kx * w, kx * ky * w, ky * s, kx * ky * w, c + ky * ky * w, -kx * s, -ky * s, kx * s, c]
    }
}
