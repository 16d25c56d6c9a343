import CFaceVision
import FaceTracking
import FrameKit

/// A failure the vision shim reported: a back end that cannot start (naming what is wrong and what
/// to do) or a detection, fit, head pose or downscale that failed.
public struct VisionError: Error, CustomStringConvertible {
    public let description: String
}

/// Moves a C error string into a Swift error, and frees it: every error of the shim reaches Swift
/// through here. `fallback` stands in for a shim that failed without a message; `advice`, when
/// given, follows the message.
func visionError(_ message: UnsafeMutablePointer<CChar>?, _ fallback: String, advice: String? = nil) -> VisionError {
    defer { fv_free_error(message) }
    let reason = message.map { String(cString: $0) } ?? fallback
    return VisionError(description: advice.map { "\(reason). \($0)" } ?? reason)
}

/// Where Debian's libdlib-data puts dlib's 68-point model.
public let defaultLandmarkModelPath = "/usr/share/dlib/shape_predictor_68_face_landmarks.dat"

/// dlib's 68-point shape predictor, loaded once and shared by the landmarkers of every stream.
///
/// `@unchecked Sendable` because the handle is a C pointer; sharing it is safe because the C++
/// object is written only inside `fv_landmark_model_load`, before `init` returns, and never again:
/// `fv_fitter_create` and `fv_fit_landmarks` take it as `const fv_landmark_model *`, and every
/// buffer a fit writes lives in the fitter. It is destroyed in `deinit`, when no landmarker holds it.
public final class LandmarkModel: @unchecked Sendable {
    fileprivate let handle: OpaquePointer
    /// The file the model was loaded from.
    public let path: String

    public init(path: String = defaultLandmarkModelPath) throws(VisionError) {
        var error: UnsafeMutablePointer<CChar>?
        guard let handle = fv_landmark_model_load(path, &error) else {
            throw visionError(error, "cannot load \(path)", advice: "The 68-point landmark model comes with Debian's libdlib-data package (apt-get install libdlib-data); pass --landmark-model to use another copy.")
        }
        self.handle = handle
        self.path = path
    }

    deinit { fv_landmark_model_destroy(handle) }
}

/// Fits dlib's 68 landmarks for one tracker (its own scratch memory over a shared model) and scores
/// fitted faces with a HOG detector of its own, apart from the one on the detection thread.
public final class DlibLandmarker: FaceLandmarker {
    /// Kept so that the model outlives the fitter, which reads it without owning it.
    public let model: LandmarkModel
    private let fitter: OpaquePointer
    private let scorer: OpaquePointer
    private let points: UnsafeMutablePointer<fv_point>

    public init(model: LandmarkModel) throws(VisionError) {
        var error: UnsafeMutablePointer<CChar>?
        guard let fitter = fv_fitter_create(model.handle, &error) else { throw visionError(error, "cannot create a landmark fitter") }
        guard let scorer = fv_detector_create(&error) else {
            fv_fitter_destroy(fitter)
            throw visionError(error, "cannot create the face detector")
        }
        self.model = model
        self.fitter = fitter
        self.scorer = scorer
        points = .allocate(capacity: 68)
    }

    deinit {
        fv_fitter_destroy(fitter)
        fv_detector_destroy(scorer)
        points.deallocate()
    }

    /// Never nil: dlib places the 68 points in any box; whether they make a face is the caller's call.
    public func fit(_ grey: Plane, in box: FaceBox, angle: Float = 0) throws(VisionError) -> Landmarks? {
        var error: UnsafeMutablePointer<CChar>?
        let status = fv_fit_landmarks(fitter, grey.base, Int32(grey.width), Int32(grey.height), Int32(grey.stride),
                                      fv_box(box), angle, points, &error)
        guard status == 0 else { throw visionError(error, "landmark fit failed") }
        var landmarks = Landmarks.zero
        for i in 0..<68 { landmarks[i] = Point(x: points[i].x, y: points[i].y) }
        return landmarks
    }

    public func locateFace(_ grey: Plane, around box: FaceBox, angle: Float, reach: Float) throws(VisionError) -> FaceSighting {
        var error: UnsafeMutablePointer<CChar>?
        var found = fv_box(box), score = 0.0
        guard fv_locate_face(scorer, grey.base, Int32(grey.width), Int32(grey.height), Int32(grey.stride),
                             fv_box(box), angle, reach, &found, &score, &error) == 0 else {
            throw visionError(error, "face search failed")
        }
        return FaceSighting(box: FaceBox(x: found.x, y: found.y, width: found.width, height: found.height), score: Float(score))
    }
}

extension fv_box {
    init(_ box: FaceBox) { self.init(x: box.x, y: box.y, width: box.width, height: box.height) }
}

/// dlib's HOG frontal face detector.
public final class DlibFaceDetector: FaceDetector {
    private let handle: OpaquePointer
    private let minimumScore: Double
    /// What fv_detect writes, before it is copied out as sightings; grown to the largest request.
    private var boxes = UnsafeMutableBufferPointer<fv_box>.allocate(capacity: 0)
    private var scores = UnsafeMutableBufferPointer<Double>.allocate(capacity: 0)

    /// `prunedFilters: false` scores every window with the detector's whole filters, as dlib does:
    /// slower, and what the tests compare the default with.
    public init(minimumScore: Double = 0, prunedFilters: Bool = true) throws(VisionError) {
        self.minimumScore = minimumScore
        var error: UnsafeMutablePointer<CChar>?
        guard let handle = fv_detector_create(&error) else { throw visionError(error, "cannot create the face detector") }
        self.handle = handle
        fv_detector_prune_filters(handle, prunedFilters ? 1 : 0)
    }

    deinit {
        fv_detector_destroy(handle)
        boxes.deallocate()
        scores.deallocate()
    }

    public func detect(_ grey: Plane, levels: PyramidLevels = .all, into faces: UnsafeMutableBufferPointer<FaceSighting>) throws(VisionError) -> Int {
        if boxes.count < faces.count {
            boxes.deallocate()
            scores.deallocate()
            boxes = .allocate(capacity: faces.count)
            scores = .allocate(capacity: faces.count)
        }
        var error: UnsafeMutablePointer<CChar>?
        let found = fv_detect(handle, grey.base, Int32(grey.width), Int32(grey.height), Int32(grey.stride), minimumScore,
                              Int32(levels.first), Int32(levels.count ?? 0), boxes.baseAddress, scores.baseAddress, Int32(faces.count), &error)
        guard found >= 0 else { throw visionError(error, "face detection failed") }
        for i in 0..<Int(found) {
            let box = boxes[i]
            faces[i] = FaceSighting(box: FaceBox(x: box.x, y: box.y, width: box.width, height: box.height), score: Float(scores[i]))
        }
        return Int(found)
    }

    /// An area-averaged copy of `grey` at the size of `smaller` (for test scenes of many face sizes).
    public func downscale(_ grey: Plane, into smaller: Plane) throws(VisionError) {
        var error: UnsafeMutablePointer<CChar>?
        guard fv_downscale(grey.base, Int32(grey.width), Int32(grey.height), Int32(grey.stride),
                           smaller.base, Int32(smaller.width), Int32(smaller.height), &error) == 0 else {
            throw visionError(error, "downscale for detection failed")
        }
    }
}

/// Head pose against a generic 3D face model (pose.cpp: a refinement of the last pose, or the better
/// of an upright start and OpenCV's solvePnP, with the face in front of the camera).
public final class PnPPoseSolver: PoseSolver {
    private let handle: OpaquePointer
    private let points = UnsafeMutablePointer<fv_point>.allocate(capacity: 68)

    public init() throws(VisionError) {
        var error: UnsafeMutablePointer<CChar>?
        guard let handle = fv_pose_solver_create(&error) else { throw visionError(error, "cannot create the pose solver") }
        self.handle = handle
    }

    deinit {
        fv_pose_solver_destroy(handle)
        points.deallocate()
    }

    public func solve(_ landmarks: Landmarks, frameWidth: Int, frameHeight: Int, previous: HeadPose?) throws(VisionError) -> HeadPose? {
        for i in 0..<68 { points[i] = fv_point(x: landmarks[i].x, y: landmarks[i].y) }
        var seed = fv_pose()
        if let previous {
            withUnsafeMutableBytes(of: &seed.rotation) { raw in
                let r = raw.bindMemory(to: Double.self)
                for i in 0..<9 { r[i] = previous.rotation[i] }
            }
            seed.translation = (previous.translation[0], previous.translation[1], previous.translation[2])
        }
        var pose = fv_pose()
        var error: UnsafeMutablePointer<CChar>?
        let status = withUnsafePointer(to: &seed) { seedPointer in
            fv_solve_pose(handle, points, Int32(frameWidth), Int32(frameHeight), previous == nil ? nil : seedPointer, &pose, &error)
        }
        guard status >= 0 else { throw visionError(error, "head pose failed") }
        guard status == 0 else { return nil }
        var rotation = InlineArray<9, Double>(repeating: 0)
        withUnsafeBytes(of: pose.rotation) { raw in
            let r = raw.bindMemory(to: Double.self)
            for i in 0..<9 { rotation[i] = r[i] }
        }
        return HeadPose(yaw: pose.yaw, pitch: pose.pitch, roll: pose.roll, rotation: rotation,
                        translation: [pose.translation.0, pose.translation.1, pose.translation.2])
    }
}

/// Whether the vision code was built with AVX2/FMA (FACERELAY_PORTABLE=1 builds without).
public var visionOptimisedForAVX2: Bool { fv_optimised_for_avx2() != 0 }

/// The production tracker: dlib landmarks and detection, OpenCV pose. Every tracker made from one
/// `model` shares it; each has its own fitter, detector and pose solver.
public func makeFaceTracker(settings: FaceTracker.Settings, model: LandmarkModel) throws(VisionError) -> FaceTracker {
    FaceTracker(settings: settings, landmarker: try DlibLandmarker(model: model),
                detector: try DlibFaceDetector(), poseSolver: try PnPPoseSolver())
}

/// A tracker with a model of its own, loaded from `landmarkModelPath`: for one stream per process.
public func makeFaceTracker(settings: FaceTracker.Settings, landmarkModelPath: String = defaultLandmarkModelPath) throws(VisionError) -> FaceTracker {
    try makeFaceTracker(settings: settings, model: try LandmarkModel(path: landmarkModelPath))
}
