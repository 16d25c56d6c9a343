import FrameKit

/// Follows faces from frame to frame: every frame refits each face's 68 landmarks where its motion
/// so far says it is now (under 1 ms per face), checks with the face detector's score that the fit
/// is still on a face, smooths the landmarks, solves the head pose and scores the expressions.
/// Detection (tens of milliseconds) runs every few frames on a copy of the Y plane on its
/// own thread, so no frame waits for it; it finds new faces, restarts lost ones and calibrates how
/// each face's box is drawn. Both of its scans, the coarse one and the fine one for small faces
/// (down to `minimumFaceSize`, nearly twice the cost), run on the first frame and after that only
/// when the scene away from the followed faces changed since they last ran (checked every few
/// frames), a followed face changed size, or a few intervals went by: a still scene holds no new
/// face. A face whose fit no longer scores as a face is hidden, then dropped.
///
/// Call `process` from one thread, one frame at a time. After the first frames at a given size a
/// tracked frame allocates nothing on the frame thread: the fit, the detector's checks of it and the
/// pose keep their scratch memory in their handles, and so do the detection thread's scans (the
/// tests and facerelay-bench landmark-memory count them). What still allocates: a face's first
/// pose (OpenCV's solvePnP) and the message of a vision failure.
public final class FaceTracker {
    public let settings: Settings
    public internal(set) var faces: ContiguousArray<TrackedFace> = []
    /// The expressions that started or ended on a face in the last `process`, in the order they did.
    public internal(set) var expressionEvents: ContiguousArray<ExpressionEvent> = []
    /// Fits, detections and head poses the vision back end failed (threw) since the start. A failed
    /// fit counts as a lost fit for its face; a failed detection neither finds nor misses any face;
    /// a failed pose leaves the face without one for that frame.
    public internal(set) var visionErrors = 0
    /// What the latest of those failures said.
    public internal(set) var lastVisionError: (any Error)?

    let landmarker: FaceLandmarker
    let poseSolver: PoseSolver
    private let detector: FaceDetector
    let worker: DetectionWorker
    private(set) var frameIndex = 0
    private(set) var nextID = 1
    private var frameCPU: UInt64 = 0
    var scheduler: DetectionScheduler
    /// Faces lost while the watch lasts and not found again, and faces a scan saw cut by the edge
    /// (`watchCutByEdge`), searched for on the frame thread (`searchSoughtFaces`); the watch ends early
    /// once every lost one is back.
    var soughtFaces: ContiguousArray<SoughtFace> = []
    /// Boxes of the faces on the frame a pending detection looks at, to match its results against.
    var snapshot: ContiguousArray<(id: Int, box: FaceBox, landmarks: Landmarks)> = []
    var sceneChange: SceneChange
    /// The pixels region scans covered in the interval that began on frame `since` (`regionToScan`).
    private var regionScans = (since: 0, pixels: 0)
    /// Scratch for `followedFacesAndLostRegions`.
    private var awayFromFaces: ContiguousArray<FaceBox> = []

    public init(settings: Settings, landmarker: FaceLandmarker, detector: FaceDetector, poseSolver: PoseSolver) {
        self.settings = settings
        self.landmarker = landmarker
        self.detector = detector
        self.poseSolver = poseSolver
        worker = DetectionWorker(detector: detector, capacity: settings.maximumFaces * 2 + 4)
        faces.reserveCapacity(settings.maximumFaces)
        snapshot.reserveCapacity(settings.maximumFaces)
        soughtFaces.reserveCapacity(settings.maximumFaces)
        awayFromFaces.reserveCapacity(settings.maximumFaces * 2)
        // At most a start or an end of each rule per fit, and a face is fitted at most twice a frame.
        expressionEvents.reserveCapacity(settings.maximumFaces * settings.expressions.rules.count * 2)
        sceneChange = SceneChange(maximumFaces: settings.maximumFaces)
        scheduler = DetectionScheduler(settings: settings)
    }

    deinit { worker.shutDown() }

    /// Frames processed so far.
    public var framesProcessed: Int { frameIndex }

    /// CPU time spent tracking, frame thread and detection thread together, nanoseconds.
    public var cpuNanoseconds: UInt64 { frameCPU &+ worker.cpuTime }

    /// Faces shown on this frame.
    public var visibleFaceCount: Int { faces.count { $0.isShown } }

    /// Tracks the faces on one frame's grey (Y) plane, read in place.
    public func process(_ grey: Plane, seconds: Double) {
        let started = threadCPUNanoseconds()
        defer {
            frameCPU &+= threadCPUNanoseconds() &- started
            frameIndex += 1
        }
        expressionEvents.removeAll(keepingCapacity: true)
        // dlib's detector works on 80-pixel windows: nothing can be found on a smaller frame.
        let canDetect = grey.width >= 80 && grey.height >= 80
        // The first frame waits for its detection once, so a single image is tracked at all.
        let synchronous = settings.synchronousDetection || frameIndex == 0 || !worker.hasThread
        if canDetect && !synchronous, let outcome = worker.takeResult() { take(outcome, grey) }
        refitFaces(grey, seconds: seconds, onlyFound: false)
        guard canDetect else { return }
        searchSoughtFaces(grey, seconds: seconds)
        let fineUseful = fineScanUseful(grey)
        if frameIndex % settings.sceneCheckInterval == 0 {
            sceneChange.measure(grey)
            var motion = sceneChange.motionSinceLastCheck(outside: followedFaces)
            if !changesAreNews { motion.regionSettled = false }
            let sinceScan = scheduler.settles(changedShare: motion.changed) ? sceneChange.changedShare(since: .coarse, outside: followedFacesAndLostRegions()) : 0
            scheduler.sceneChecked(at: frameIndex, motion: motion, changedSinceCoarseScan: sinceScan)
        }
        if scheduler.sceneCheckDue(at: frameIndex, fineUseful: fineUseful) {
            scheduler.sceneChanged(
                coarse: !scheduler.coarseDue && sceneChange.changed(since: .coarse, outside: followedFacesAndLostRegions()),
                fine: !scheduler.fineDue && fineUseful && sceneChange.changed(since: .fine, outside: followedFaces))
        }
        // Detection looks at this frame, so it is matched against the faces as fitted on it.
        guard synchronous || worker.currentPhase == .idle else { return }
        if let scan = scheduler.scan(at: frameIndex, faces: detectionNeeds(fineUseful: fineUseful), fineUseful: fineUseful,
                                     synchronous: synchronous) {
            prepareDetection(grey, scan, fineUseful: fineUseful)
        } else if let region = regionToScan(grey) {
            prepareRegionDetection(grey, region)
        } else {
            return
        }
        if synchronous {
            take(worker.detectNow(frame: frameIndex), grey)
            refitFaces(grey, seconds: seconds, onlyFound: true)
        } else {
            worker.submit(frame: frameIndex)
        }
    }

    /// Whether each fit keeps its face's pixels for `coast` to follow: set while the face stage fits
    /// only some frames, so that a tracker fitting every frame spends nothing on them.
    public var keepsPatches = false

    /// Carries each shown face's landmarks on to `seconds`, on a frame that is not fitted (the face
    /// stage under load fits every second or fourth frame only), so that a sticker on a moving face
    /// keeps moving with it instead of standing still until the next fit: the last fit moved by how
    /// far the inner face's pixels moved since (`FacePatch`), turned as it turned between the last
    /// two fits, and smoothed as a fit is, so that the smoothing sees the face on every frame, as it
    /// was tuned to (fed every fourth frame only, it trailed a face turning back by 8 % of the eye
    /// distance). Where the pixels cannot tell (no patch kept, a face at the frame's edge or turning
    /// away), the smoothed landmarks move on at the speed they moved between the last two fits, never
    /// further than those fits were apart: the next fit comes as soon, and a jump of the timestamps
    /// (a new input after a pause) moves nothing further. The fit and its prediction are left as
    /// they are; the next `process` replaces these landmarks with its own.
    public func coast(_ grey: Plane, to seconds: Double) {
        let started = threadCPUNanoseconds()
        defer { frameCPU &+= threadCPUNanoseconds() &- started }
        for index in faces.indices where faces[index].isShown && seconds > faces[index].fittedAt {
            let face = faces[index]
            let share = face.fitInterval > 0 ? Float(min(1, max(0, (seconds - face.fittedAt) / face.fitInterval))) : 0
            var motion = face.landmarksMotion.times(share)
            if let patch = face.patch, patch.isKept {
                let guess = face.followedAt > face.fittedAt ? Self.expectedMotion(face, at: seconds).shift : motion.shift
                if let shift = patch.follow(grey, guess: guess) {
                    motion.shift = shift
                    faces[index].followedShift = shift
                    faces[index].followedAt = seconds
                    // Where the face is seen, as a fit would see it: smoothed as a fit is.
                    faces[index].landmarks = face.filter.filter(face.rawLandmarks.moved(by: motion), at: seconds)
                    continue
                }
            }
            faces[index].landmarks = face.landmarksAtFit.moved(by: motion)
        }
    }

    /// Keeps the pixels of `face`'s inner face (the box of its brows, eyes, nose and mouth) as `raw` fitted them on `grey`.
    func keepPatch(_ face: inout TrackedFace, _ raw: Landmarks, _ grey: Plane) {
        var low = raw[BoxFraming.innerPoints.lowerBound], high = low
        for i in BoxFraming.innerPoints {
            low = Point(x: min(low.x, raw[i].x), y: min(low.y, raw[i].y))
            high = Point(x: max(high.x, raw[i].x), y: max(high.y, raw[i].y))
        }
        if face.patch == nil { face.patch = FacePatch() }
        face.patch?.keep(grey, centre: (low + high) * 0.5, side: max(high.x - low.x, high.y - low.y))
        face.followedShift = .zero
        face.followedAt = face.fittedAt
    }

    /// What the faces ask of detection on this frame. A shown face hidden (lost or doubted) may be
    /// elsewhere by now, and is looked for by the scan whose levels hold its size; not one held while
    /// it moves out through the frame's edge: it is leaving, and is looked for there on every frame
    /// while it is held.
    private func detectionNeeds(fineUseful: Bool) -> DetectionScheduler.Faces {
        var needs = DetectionScheduler.Faces()
        for face in faces {
            needs.anyResized = needs.anyResized || face.resized
            guard !face.isShown else { continue }
            needs.anyHidden = true
            guard face.life.standing.wasShown && face.edge != .leaving else { continue }
            if isSmall(face, fineUseful: fineUseful) { needs.smallFaceMissing = true } else { needs.shownFaceMissing = true }
        }
        return needs
    }

    /// Refits every face, or only those a detection found since they were last fitted, and drops
    /// those lost, or doubted, for too long.
    func refitFaces(_ grey: Plane, seconds: Double, onlyFound: Bool) {
        var index = 0
        while index < faces.count {
            if onlyFound && !faces[index].life.awaitsFit {
                index += 1
                continue
            }
            let kept = refit(&faces[index], grey, seconds: seconds)
            if kept && !duplicatesAnOlderFace(index) {
                index += 1
                continue
            }
            // A shown face dropped hidden, or cut by the edge, was lost, not merged into another
            // track: it may come back, and the periodic detection alone would find a face turning
            // back only up to 30 frames late. Not one never shown: nobody saw it leave. One started
            // where a face was lost, scored just above the detector's threshold by the search and just
            // below it since, puts the search there off for twice as long each time, not to start it
            // every few frames.
            let face = faces.remove(at: index)
            if face.life.standing.wasShown && (face.edge != .inside || !kept || !face.isShown) {
                scheduler.watch(from: frameIndex, small: isSmall(face, fineUseful: fineScanUseful(grey)))
                seek(SoughtFace(region: Self.lostRegion(face), cause: .lost(framing: face.framing), firstLaterID: nextID))
            } else if !face.life.standing.wasShown {
                for lost in soughtFaces.indices where soughtFaces[lost].isCovered(by: face) {
                    soughtFaces[lost].putOff(from: frameIndex, interval: settings.lostSearchInterval)
                }
            }
        }
    }

    /// Whether a face followed already is where `box` is (its landmarks' centre within half the box).
    func isFollowed(near box: FaceBox) -> Bool {
        faces.contains { $0.rawLandmarks.centroid.distance(to: box.centre) < box.width * 0.5 }
    }

    /// Starts a track for a face the detector confirmed on this frame, hidden until it is first
    /// refitted. `scoredByScan`: a whole-frame scan of this very frame found it (`FaceLife.found`).
    func startFace(_ raw: Landmarks, _ sighting: FaceSighting, scoredByScan: Bool = false, framingWhenWhole: BoxFraming? = nil) {
        faces.append(TrackedFace(id: nextID, raw: raw, framing: BoxFraming(detection: sighting.box, landmarks: raw),
                                 filter: settings.smoothing.makeFilter(), ruleCount: settings.expressions.rules.count,
                                 life: .started(scoredByScan: scoredByScan), confidence: Self.confidence(sighting.score),
                                 fitNoise: FitNoise(floor: settings.unexpectedChange, margin: settings.surpriseMargin,
                                                    frames: settings.fitNoiseFrames)))
        faces[faces.count - 1].framingWhenWhole = framingWhenWhole
        nextID += 1
    }

    /// The side of the box dlib's detector draws around the faces it scores best on the image's own
    /// scale (its 80-pixel window, margin included); each pyramid level finds faces 6/5 as large.
    static let detectorFaceSide: Float = 73

    /// Where the faces followed are, with their heads and shoulders: a box three times the face's on a
    /// side, which moves with it and turns with it (a head leaning to one side sweeps its hair and
    /// shoulders round). A new face that close to a followed one waits for the periodic fine scan.
    /// Held faces too: each is looked for around its place on every frame, and a change there is
    /// that face (just started and not yet shown, or leaving, or turning away).
    private var followedFaces: LazyMapSequence<ContiguousArray<TrackedFace>, FaceBox> {
        faces.lazy.map { $0.box.grown(by: 1).bounds(turnedBy: $0.rawLandmarks.eyeLineAngle) }
    }

    /// The followed faces, and while the watch lasts where faces were lost (`lostRegion`): the search
    /// there finds a face coming back in or turning back, so a change there is no news for the coarse
    /// scan, which looks for faces elsewhere.
    private func followedFacesAndLostRegions() -> ContiguousArray<FaceBox> {
        awayFromFaces.removeAll(keepingCapacity: true)
        awayFromFaces.append(contentsOf: followedFaces)
        for sought in soughtFaces where sought.wasShown { awayFromFaces.append(sought.region.box.grown(by: 1)) }
        return awayFromFaces
    }

    /// The finest pyramid level detection looks at: the one whose faces are the largest not above
    /// `minimumFaceSize` (the detector finds faces up to about a tenth larger than its own size).
    private var finestLevel: Int {
        var level = 0, side = Self.detectorFaceSide * 6 / 5
        while side <= Float(settings.minimumFaceSize) {
            level += 1
            side *= 6 / 5
        }
        return level
    }

    /// Whether only the fine scan's levels hold a face of `face`'s size, the box side detection last
    /// found it at (nearer the fine scan's largest faces than the coarse scan's smallest): the
    /// coarse scan would not find it again (row `small1080`: the woman in profile, at 104 px).
    private func isSmall(_ face: TrackedFace, fineUseful: Bool) -> Bool {
        var coarseSide = Self.detectorFaceSide
        for _ in 0..<(finestLevel + settings.fineScanLevels) { coarseSide *= 6 / 5 }
        return fineUseful && face.confirmedBoxSide < coarseSide * (5 / 6 as Float).squareRoot()
    }

    /// Pyramid levels of `grey` the detector finds faces on: those at least its 80-pixel window tall and wide.
    private static func levelsWithWindows(_ grey: Plane) -> Int {
        var side = Float(min(grey.width, grey.height)), levels = 0
        while side >= 80 {
            levels += 1
            side *= 5 / 6
        }
        return levels
    }

    /// Whether the fine scan looks at levels the coarse one does not (not on small frames).
    private func fineScanUseful(_ grey: Plane) -> Bool { Self.levelsWithWindows(grey) > finestLevel + settings.fineScanLevels }

    /// The levels a scan looks at: the fine scan the finest few, the coarse one the rest (all of them
    /// on small frames, where the fine scan is not used), the whole scan both at once.
    private func levels(_ scan: DetectionScan, fineUseful: Bool) -> PyramidLevels {
        switch scan {
        case .fine: PyramidLevels(first: finestLevel, count: settings.fineScanLevels)
        case .coarse where fineUseful: PyramidLevels(first: finestLevel + settings.fineScanLevels, count: nil)
        case .coarse, .whole: PyramidLevels(first: finestLevel, count: nil)
        }
    }

    /// Copies the frame into the worker's image for a scan and notes the faces it is matched against.
    private func prepareDetection(_ grey: Plane, _ scan: DetectionScan, fineUseful: Bool) {
        scheduler.ran(scan, at: frameIndex, fineUseful: fineUseful)
        worker.prepare(copying: grey, scan: scan, levels: levels(scan, fineUseful: fineUseful))
        snapshot.removeAll(keepingCapacity: true)
        for face in faces where face.life.framesLost == 0 {
            snapshot.append((face.id, face.box, face.rawLandmarks))
        }
        sceneChange.measure(grey)
        if scan != .fine { sceneChange.markScanned(.coarse, faces: followedFaces) }
        if scan != .coarse { sceneChange.markScanned(.fine, faces: followedFaces) }
    }

    /// No face is followed or watched for, so where the scene changes is where a face may have come
    /// into view: the region that changed is scanned, and a region that settled brings the coarse
    /// scan forward. Beside a followed face a change is no news, and the periodic rescan finds a
    /// second face.
    private var changesAreNews: Bool { faces.isEmpty && soughtFaces.isEmpty && !scheduler.isWatching(at: frameIndex) }

    /// The part of the scene to scan now, at every level, when no face is followed, no lost face is
    /// watched for and the scene changed since the coarse scan: the change grown to a square of its
    /// longer side and half as much again, at least four blocks more (the whole of a face of which
    /// only an edge moved lies in it), while the region scans of this interval stay within
    /// `regionScanBudget` frames. Someone who sits down in front of a still camera is looked for
    /// where they are, at once.
    private func regionToScan(_ grey: Plane) -> PixelRegion? {
        guard settings.regionScanBudget > 0, frameIndex % settings.sceneCheckInterval == 0, changesAreNews, scheduler.coarseDue,
              let changed = sceneChange.changedRegion(since: .coarse, outside: EmptyCollection())
        else { return nil }
        let longer = max(changed.width, changed.height)
        let side = longer + max(4 * SceneChange.block, longer / 2)
        let region = PixelRegion(x: changed.x + changed.width / 2 - side / 2, y: changed.y + changed.height / 2 - side / 2,
                                 width: side, height: side)
            .clamped(toWidth: grey.width, height: grey.height)
        let window = Int(Self.detectorFaceSide * 6 / 5)
        if frameIndex - regionScans.since >= settings.detectionInterval { regionScans = (frameIndex, 0) }
        let area = region.width * region.height
        guard region.width >= window, region.height >= window,
              Float(regionScans.pixels + area) <= settings.regionScanBudget * Float(grey.width * grey.height) else { return nil }
        regionScans.pixels += area
        return region
    }

    /// Copies the region into the worker's image for a scan of every level there. The scheduler's
    /// scans keep their pace, and the change stays news until they run: a region scan that found
    /// nothing is made again at the next check while the budget lasts, on another draw of the
    /// sensor's noise and another sampling of the pyramid (a region's levels do not fall on the
    /// whole frame's pixels), which a face near the detector's threshold needs.
    private func prepareRegionDetection(_ grey: Plane, _ region: PixelRegion) {
        worker.prepare(copying: grey, scan: .whole, levels: levels(.whole, fineUseful: false), region: region)
        snapshot.removeAll(keepingCapacity: true)
    }
}
