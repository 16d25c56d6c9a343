/// When detection runs and which of its scans: the coarse one (every pyramid level above the fine
/// ones), the fine one (the finest few levels, for small faces, nearly twice the cost) or, on the
/// frame thread, both at once as one whole scan. A still scene holds no new face, so after the first
/// frame each scan waits until the scene away from the followed faces changed since it last ran
/// (`sceneChanged`), a followed face changed size, or a few intervals went by; a shown face gone
/// missing, and the watch after a face was lost, bring forward the scan whose levels hold that
/// face's size. A cut (most of the scene new at once) and the end of a transition (a fade, a pan
/// that stopped) bring both scans forward, and a transition under way (a fade, a dissolve) or a
/// region of the scene that settled (a wipe) the coarse scan.
///
/// A value: the tracker asks it once a frame (`scan`) and tells it what ran (`ran`).
struct DetectionScheduler: Sendable {
    /// What the followed faces ask of detection on this frame.
    struct Faces: Sendable {
        /// A face is hidden (just found, doubted, lost): the fine scan waits, as it would hold up
        /// the coarse scan that looks for that face.
        var anyHidden = false
        /// A face shown before is hidden and not leaving through an edge: it may be anywhere now,
        /// and the coarse scan looks for it on every frame the detection thread is free.
        var shownFaceMissing = false
        /// The same, for a face of a size only the fine scan's levels hold: the fine scan looks for it.
        var smallFaceMissing = false
        /// A face's size moved away from the size detection last confirmed (it leans in or back).
        var anyResized = false
    }

    let settings: FaceTracker.Settings
    /// The frames the coarse scan (or a whole one) and the fine scan (or a whole one) last looked at.
    private(set) var lastCoarseScan = Int.min / 2, lastFineScan = Int.min / 2
    /// The scene away from the followed faces changed since that scan last ran (both are due at the start).
    private(set) var coarseDue = true, fineDue = true
    /// Detection runs often until this frame: a face left through an edge, or was lost in view.
    private(set) var watchUntil = Int.min / 2
    /// The watch looks for a face of a size only the fine scan's levels hold.
    private(set) var watchesForSmallFace = false
    /// The frames of the last cut, of the last check of a transition under way (or of a cut going
    /// on) and of the last transition seen to end that brought the scans forward (`sceneChecked`).
    private(set) var lastCut = Int.min / 2, lastTransition = Int.min / 2, lastSettle = Int.min / 2
    /// The first check of the transition under way.
    private(set) var transitionStart = Int.min / 2
    /// The last check that found a region of the scene settled.
    private(set) var lastRegionSettle = Int.min / 2
    /// The share of the scene that changed at the check before, and whether that check found a transition.
    private var changedShareBefore: Float = 0, inTransitionBefore = false

    init(settings: FaceTracker.Settings) { self.settings = settings }

    func isWatching(at frame: Int) -> Bool { frame < watchUntil }

    /// A shown face was lost: watch for it for `lostWatchFrames`. `small`: only the fine scan's
    /// levels hold a face of its size, so the watch runs fine scans as well as coarse ones, and the
    /// first is due whatever the scene did: a face whose fit slid off it is still there, and a
    /// change where the last scan saw it is no news to the scene check.
    mutating func watch(from frame: Int, small: Bool) {
        if !isWatching(at: frame) { watchesForSmallFace = false }
        watchUntil = frame + settings.lostWatchFrames
        if small {
            watchesForSmallFace = true
            fineDue = true
        }
    }

    /// Every face lost is back.
    mutating func endWatch(at frame: Int) {
        watchUntil = min(watchUntil, frame)
        watchesForSmallFace = false
    }

    /// Whether to compare the scene, measured every `sceneCheckInterval` frames, with what the scans
    /// saw: only while a scan waits for a change.
    func sceneCheckDue(at frame: Int, fineUseful: Bool) -> Bool {
        frame % settings.sceneCheckInterval == 0 && (!coarseDue || !fineDue && fineUseful)
    }

    /// Whether a check that found `share` of the scene changed since the check before finds a scene
    /// that was moving settled (`sceneSettledShare`): the tracker then measures how much of it
    /// changed since the coarse scan looked, for `sceneChecked`.
    func settles(changedShare share: Float) -> Bool {
        share < settings.sceneSettledShare && changedShareBefore >= settings.sceneSettledShare
    }

    /// A scene check found the scene away from the faces changed since the check before (`motion`),
    /// and, where it `settles`, `sinceScan` of it changed since the coarse scan last looked (else 0).
    ///
    /// Most of it new at once (`sceneCutShare`), where the check before found most of it as it was,
    /// is a cut: the stream switched scenes or a camera came on, and any face in view is new, so
    /// both scans are due at once instead of at the next interval; while the checks after it find
    /// most of the scene changing again, for up to `sceneCutChecks` checks, the cut is a quick fade
    /// whose face grows clearer, and the coarse scan is due at each. A scene whose blocks change as at
    /// the two checks before (`transitionSteadyShare` of them) is in a transition, a fade or a dissolve
    /// to another scene: a face fading in grows clearer at every check, so the coarse scan is due at
    /// every check while it lasts (the fine one, twice the cost, keeps its pace), for at most
    /// `longestTransition` frames (a steady change that lasts longer is a scene that keeps
    /// changing). A scene that was moving and has settled, most of it new since the coarse scan
    /// looked, ended a transition: a fade too quick to be seen steady (300 ms in OBS by default: the
    /// cut taken at its start scanned a faint face), a fade through black, a camera that panned and
    /// stopped: both scans are due at once too. Cuts and ends each at most once an interval, so that
    /// a game's flashes cost at most two more scans of each kind an interval; a scene that keeps
    /// changing wholesale (a game's camera panning) is one cut where it starts, and waits for the
    /// interval after that.
    ///
    /// A region of the scene that changed and is still now (`SceneMotion.regionSettled`) may hold a
    /// face that came into view while the rest of the scene kept changing, which the interval would
    /// find: a wipe uncovering a camera a strip at a time, a person who walked in front of a game and
    /// sat down. The coarse scan is due at once. The tracker reports it only while no face is followed
    /// or watched for, as it scans the region that changed only then.
    mutating func sceneChecked(at frame: Int, motion: SceneMotion, changedSinceCoarseScan sinceScan: Float) {
        let share = motion.changed
        if motion.regionSettled {
            lastRegionSettle = frame
            coarseDue = true
        }
        let inTransition = motion.steady >= settings.transitionSteadyShare
        defer {
            changedShareBefore = share
            inTransitionBefore = inTransition
        }
        let interval = settings.detectionInterval
        if inTransition && !inTransitionBefore { transitionStart = frame }
        let cutGoesOn = share >= settings.sceneCutShare && changedShareBefore >= settings.sceneCutShare
            && frame - lastCut < settings.sceneCutChecks * settings.sceneCheckInterval
        if inTransition && frame - transitionStart < settings.longestTransition || cutGoesOn {
            lastTransition = frame
            coarseDue = true
            return
        }
        if share >= settings.sceneCutShare, changedShareBefore < settings.sceneCutShare, frame - lastCut >= interval {
            lastCut = frame
        } else if settles(changedShare: share), sinceScan >= settings.sceneCutShare, frame - lastSettle >= interval {
            lastSettle = frame
        } else {
            return
        }
        coarseDue = true
        fineDue = true
    }

    /// The last cut or transition's end, which bring both scans forward.
    private var lastCutOrSettle: Int { max(lastCut, lastSettle) }

    /// The scene changed away from the faces since the coarse or the fine scan ran.
    mutating func sceneChanged(coarse: Bool, fine: Bool) {
        coarseDue = coarseDue || coarse
        fineDue = fineDue || fine
    }

    /// The scan to start on `frame`, if any. `fineUseful`: the frame is large enough for the fine
    /// levels to exist apart from the coarse ones. `synchronous`: the scan runs on the frame thread
    /// and is waited for, so a coarse and a fine scan due together run as one whole scan (a face one
    /// of them would start is not started again, a few pixels off, by the other).
    func scan(at frame: Int, faces: Faces, fineUseful: Bool, synchronous: Bool) -> DetectionScan? {
        let coarse = coarseScanDue(at: frame, faces: faces)
        if synchronous && coarse && (fineScanDue(at: frame) || !fineUseful) { return .whole }
        // A small face missing, or watched for, is looked for as a large one is, taking turns
        // with the coarse scan when that looks for another face.
        let fine = fineUseful
            && (faces.smallFaceMissing || watchesForSmallFace && watchScanDue(at: frame, since: lastFineScan, due: fineDue))
        if fine && (!coarse || lastFineScan <= lastCoarseScan) { return .fine }
        if coarse { return .coarse }
        return fineUseful && fineScanDue(at: frame) && !isWatching(at: frame) && !faces.anyHidden ? .fine : nil
    }

    /// A scan started on `frame`.
    mutating func ran(_ scan: DetectionScan, at frame: Int, fineUseful: Bool) {
        if scan != .coarse {
            fineDue = false
            lastFineScan = frame
        }
        if scan != .fine {
            coarseDue = false
            lastCoarseScan = frame
        }
        if frame - lastFineScan >= settings.detectionInterval * settings.fineRescanCycles { fineDue = true }
        // Without a fine level to look at, the coarse scan covers every size.
        if !fineUseful { fineDue = false }
    }

    private func coarseScanDue(at frame: Int, faces: Faces) -> Bool {
        let since = frame - lastCoarseScan, interval = settings.detectionInterval
        if max(lastCutOrSettle, lastTransition, lastRegionSettle) > lastCoarseScan { return true }
        if since >= interval * settings.coarseRescanCycles { return true }
        if since >= interval && (coarseDue || faces.anyResized) { return true }
        if faces.shownFaceMissing { return true }
        return watchScanDue(at: frame, since: lastCoarseScan, due: coarseDue)
    }

    /// While the watch lasts, a scan runs when the scene changed (`due`), a third of an interval
    /// or `watchDetectionInterval` after it last ran (`since`), whichever is longer.
    private func watchScanDue(at frame: Int, since last: Int, due: Bool) -> Bool {
        let interval = settings.detectionInterval
        let watchSpacing = max(min(interval, settings.watchDetectionInterval), interval / 3)
        return isWatching(at: frame) && due && frame - last >= watchSpacing
    }

    /// Due, and not sooner than a detection interval after the last, less `fineScanLead` (two thirds
    /// of a short interval), unless a cut or a transition's end came since: a scene that keeps
    /// changing (a game behind a face cam) costs about one fine scan per interval, and a small face
    /// coming into view is still found within the interval.
    private func fineScanDue(at frame: Int) -> Bool {
        let interval = settings.detectionInterval
        let spacing = max(1, interval * 2 / 3, interval - settings.fineScanLead)
        return fineDue && (frame - lastFineScan >= spacing || lastCutOrSettle > lastFineScan)
    }
}
