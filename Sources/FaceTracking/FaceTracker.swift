import FrameKit

/// Follows faces from frame to frame: every frame refits each face's 68 landmarks from where they
/// were on the previous frame (about 1.4 ms per face), smooths them, solves the head pose and scores
/// the expressions. Detection (tens of milliseconds) runs every few frames on a downscaled copy of
/// the Y plane on its own thread, so no frame waits for it; it finds new faces, confirms the known
/// ones, and drops those it keeps missing.
///
/// Call `process` from one thread, one frame at a time. After the first frames at a given size the
/// Swift code and the landmark fit allocate nothing (the fit's scratch memory lives in its fitter),
/// except for the message of a vision failure. OpenCV's solvePnP, inside the pose solver, allocates
/// its own temporaries: about 200 small blocks per face and frame (facerelay-bench landmark-memory).
public final class FaceTracker {
    public struct Settings: Sendable {
        /// Most faces followed at once.
        public var maximumFaces = 4
        /// Frames between detections while all faces are found.
        public var detectionInterval = 30
        /// Smallest face, in pixels of the frame, detection must find; sets the downscale (dlib's
        /// detector finds faces of about 80 pixels at its working scale).
        public var minimumFaceSize = 160
        /// Frames a face that is not found is kept at its last place before it is dropped.
        public var holdFrames = 6
        /// Detections in a row that miss a face before it is dropped.
        public var missedDetectionsToDrop = 3
        public var smoothing = Smoothing.lowpass
        public var expressions = ExpressionSettings()
        /// Detect on the frame thread, so results depend only on the frames (single images, tests).
        public var synchronousDetection = false

        public init() {}
    }

    public let settings: Settings
    public private(set) var faces: ContiguousArray<TrackedFace> = []
    /// Called on the frame thread when an expression starts on a face.
    public var onExpression: ((ExpressionEvent) -> Void)?
    /// Fits, detections and head poses the vision back end failed (threw) since the start. A failed
    /// fit counts as a lost fit for its face; a failed detection neither finds nor misses any face;
    /// a failed pose leaves the face without one for that frame.
    public private(set) var visionErrors = 0
    /// What the latest of those failures said.
    public private(set) var lastVisionError: String?

    private let landmarker: FaceLandmarker
    private let poseSolver: PoseSolver
    private let detector: FaceDetector
    private let worker: DetectionWorker
    private var frameIndex = 0
    private var lastDetectionFrame = Int.min / 2
    private var nextID = 1
    private var frameCPU: UInt64 = 0
    /// Boxes of the faces on the frame a pending detection looks at, to match its results against.
    private var snapshot: ContiguousArray<(id: Int, box: FaceBox, landmarks: Landmarks)> = []

    public init(settings: Settings, landmarker: FaceLandmarker, detector: FaceDetector, poseSolver: PoseSolver) {
        self.settings = settings
        self.landmarker = landmarker
        self.detector = detector
        self.poseSolver = poseSolver
        worker = DetectionWorker(detector: detector, capacity: settings.maximumFaces * 2 + 4)
        faces.reserveCapacity(settings.maximumFaces)
        snapshot.reserveCapacity(settings.maximumFaces)
    }

    deinit { worker.shutDown() }

    /// Frames processed so far.
    public var framesProcessed: Int { frameIndex }

    /// CPU time spent tracking, frame thread and detection thread together, nanoseconds.
    public var cpuNanoseconds: UInt64 { frameCPU &+ worker.cpuTime }

    /// Faces found on this frame (held ones excluded).
    public var visibleFaceCount: Int {
        var count = 0
        for face in faces where !face.isHeld { count += 1 }
        return count
    }

    /// Tracks the faces on one frame's grey (Y) plane, read in place.
    public func process(_ grey: Plane, seconds: Double) {
        let started = threadCPUNanoseconds()
        defer {
            frameCPU &+= threadCPUNanoseconds() &- started
            frameIndex += 1
        }
        // dlib's detector works on 80-pixel windows: nothing can be found on a smaller frame.
        let canDetect = grey.width >= 80 && grey.height >= 80
        if canDetect {
            // The first frame waits for its detection once, so a single image is tracked at all.
            if settings.synchronousDetection || frameIndex == 0 {
                if detectionDue && prepareDetection(grey) { take(worker.detectNow(frame: frameIndex), grey) }
            } else {
                if let outcome = worker.takeResult() { take(outcome, grey) }
                if detectionDue && worker.currentPhase == .idle && prepareDetection(grey) { worker.submit(frame: frameIndex) }
            }
        }
        var index = 0
        while index < faces.count {
            if refit(&faces[index], grey, seconds: seconds) && !duplicatesAnOlderFace(index) { index += 1 } else { faces.remove(at: index) }
        }
    }

    /// Two tracks that converged on one face (a face found again while its old track recovered):
    /// the older one stays.
    private func duplicatesAnOlderFace(_ index: Int) -> Bool {
        let centre = faces[index].rawLandmarks.centroid, size = faces[index].rawLandmarks.eyeDistance
        for older in 0..<index where faces[older].rawLandmarks.centroid.distance(to: centre) < size * 0.3 { return true }
        return false
    }

    /// Frames between detections while a face reaches past the frame's edge.
    static let edgeDetectionInterval = 5

    private var detectionDue: Bool {
        let since = frameIndex - lastDetectionFrame
        if since >= settings.detectionInterval { return true }
        for face in faces where face.isHeld { return true }
        // A face sliding out of the frame can leave a fit that looks like a face on the background
        // beside the edge; detection tells the two apart, so it runs often while a face is there.
        for face in faces where face.atEdge && since >= min(settings.detectionInterval, Self.edgeDetectionInterval) { return true }
        return false
    }

    /// Fills the worker's image for a detection; false when the downscale failed (counted), which
    /// skips this detection until the next one is due.
    private func prepareDetection(_ grey: Plane) -> Bool {
        lastDetectionFrame = frameIndex
        // Shrink so that the smallest wanted face becomes 80 pixels, but keep at least 80x80.
        let shrink = min(Float(max(80, settings.minimumFaceSize)) / 80, Float(min(grey.width, grey.height)) / 80)
        let factor = max(1, shrink)
        worker.prepare(width: Int(Float(grey.width) / factor), height: Int(Float(grey.height) / factor))
        do {
            try detector.downscale(grey, into: worker.image)
        } catch {
            recordVisionError(error)
            return false
        }
        snapshot.removeAll(keepingCapacity: true)
        for face in faces where !face.isHeld {
            snapshot.append((face.id, face.box, face.rawLandmarks))
        }
        return true
    }

    private func take(_ detection: DetectionWorker.Outcome, _ grey: Plane) {
        switch detection {
        case .success(let found): merge(found, grey)
        // Counting it as a miss would drop faces that are still there.
        case .failure(let error): recordVisionError(error)
        }
    }

    /// The landmarks inside `box`, or nil when there is no fit; a failure is counted, not thrown,
    /// so that one bad fit loses one face for one frame rather than the stream.
    private func fitLandmarks(_ grey: Plane, in box: FaceBox) -> Landmarks? {
        do {
            return try landmarker.fit(grey, in: box)
        } catch {
            recordVisionError(error)
            return nil
        }
    }

    /// The head pose, or nil when there is none; a failure is counted and leaves the face without
    /// a pose for this frame, as when solvePnP finds none.
    private func solvePose(_ landmarks: Landmarks, in grey: Plane, previous: HeadPose?) -> HeadPose? {
        do {
            return try poseSolver.solve(landmarks, frameWidth: grey.width, frameHeight: grey.height, previous: previous)
        } catch {
            recordVisionError(error)
            return nil
        }
    }

    private func recordVisionError(_ error: any Error) {
        visionErrors += 1
        lastVisionError = String(describing: error)
    }

    /// Matches detections to the faces they were run for, starts tracks for new faces, and counts
    /// misses for the faces detection no longer finds.
    private func merge(_ found: UnsafeMutableBufferPointer<FaceBox>, _ grey: Plane) {
        let scale = Float(grey.width) / Float(max(1, worker.image.width))
        // Only faces the detection looked for can be missed by it; held ones run out on holdFrames.
        for index in faces.indices where snapshot.contains(where: { $0.id == faces[index].id }) {
            faces[index].missedDetections += 1
        }
        for detection in found {
            let box = detection.scaled(by: scale)
            // The face this detection belongs to on the frame it was run on.
            var best = -1, bestOverlap: Float = 0.3
            for (i, known) in snapshot.enumerated() where known.box.overlap(with: box) > bestOverlap {
                best = i
                bestOverlap = known.box.overlap(with: box)
            }
            if best >= 0, let face = faces.firstIndex(where: { $0.id == snapshot[best].id }) {
                faces[face].missedDetections = 0
                faces[face].confirmedSize = snapshot[best].landmarks.eyeDistance
                faces[face].framing.learn(detection: box, landmarks: snapshot[best].landmarks)
                continue
            }
            // A held face found again, or a new face not already followed since the snapshot.
            if let held = faces.firstIndex(where: { $0.isHeld && $0.box.overlap(with: box) > 0.2 }) {
                restart(&faces[held], box, grey)
                continue
            }
            if faces.contains(where: { $0.rawLandmarks.centroid.distance(to: box.centre) < box.width * 0.5 }) { continue }
            guard faces.count < settings.maximumFaces, let raw = fitLandmarks(grey, in: box) else { continue }
            faces.append(TrackedFace(id: nextID, box: box, raw: raw, filter: settings.smoothing.makeFilter(),
                                     ruleCount: settings.expressions.rules.count))
            faces[faces.count - 1].isHeld = true  // refit on this frame below, like every face
            faces[faces.count - 1].heldFrames = 0
            nextID += 1
        }
        // At the edge one miss is enough: the face is leaving, or the fit is on the background.
        faces.removeAll { $0.missedDetections >= ($0.atEdge ? 1 : settings.missedDetectionsToDrop) }
    }

    private func restart(_ face: inout TrackedFace, _ box: FaceBox, _ grey: Plane) {
        guard let raw = fitLandmarks(grey, in: box) else { return }
        face.rawLandmarks = raw
        face.framing = BoxFraming(detection: box, landmarks: raw)
        face.confirmedSize = raw.eyeDistance
        face.filter.reset()
        face.poseHistory.removeAll()
        face.missedDetections = 0
    }

    /// Refits one face from its previous landmarks; false when it has been lost for too long.
    private func refit(_ face: inout TrackedFace, _ grey: Plane, seconds: Double) -> Bool {
        let box = face.framing.box(around: face.rawLandmarks)
        guard let raw = fitLandmarks(grey, in: box),
              Self.plausible(raw, after: face.isHeld ? nil : face.rawLandmarks, confirmedSize: face.confirmedSize, in: grey) else {
            face.heldFrames += 1
            face.isHeld = true
            return face.heldFrames <= settings.holdFrames
        }
        if face.isHeld { face.filter.reset() }
        face.isHeld = false
        face.heldFrames = 0
        face.box = box
        face.atEdge = box.x < 0 || box.y < 0 || box.x + box.width > Float(grey.width) || box.y + box.height > Float(grey.height)
        face.rawLandmarks = raw
        face.landmarks = face.filter.filter(raw, at: seconds)
        face.pose = solvePose(face.landmarks, in: grey, previous: face.pose)
        if let pose = face.pose { face.poseHistory.append(yaw: pose.yaw, pitch: pose.pitch) }
        let sample = FaceSample(landmarks: face.landmarks, pose: face.pose, poseHistory: face.poseHistory)
        let id = face.id
        face.expressions.update(sample, rules: settings.expressions.rules) { rule, started in
            onExpression?(ExpressionEvent(faceID: id, expression: settings.expressions.rules[rule].analyser.name, started: started, seconds: seconds))
        }
        return true
    }

    /// A fit is kept when most of the face is on the frame and its size is close both to the last
    /// frame's and to the size detection last confirmed. A face sliding out of the frame otherwise
    /// leaves a fit squashed against the edge, shrinking a little every frame.
    /// A held face is compared with the size detection confirmed only: its last fit is stale.
    static func plausible(_ raw: Landmarks, after previous: Landmarks?, confirmedSize: Float, in grey: Plane) -> Bool {
        var inside = 0
        for i in 0..<68 where raw[i].x >= 0 && raw[i].y >= 0 && raw[i].x < Float(grey.width) && raw[i].y < Float(grey.height) {
            inside += 1
        }
        guard inside >= 48 else { return false }
        let size = raw.eyeDistance, last = previous?.eyeDistance ?? 0
        guard size >= 8 else { return false }
        guard last <= 0 || (size > last * 0.7 && size < last * 1.4) else { return false }
        return confirmedSize <= 0 || (size > confirmedSize * 0.6 && size < confirmedSize * 1.6)
    }
}
