import FrameKit

/// Looking for faces where they are expected but not followed: where a shown face was lost (it may
/// come back in where it left, or turn back), and where a scan saw a face cut by the frame's edge
/// that it could not start (it may be coming in).
extension FaceTracker {
    /// Ends the searches that are over (the faces found again, the watch ended) and searches the
    /// rest every `lostSearchInterval` frames; ends the watch once every lost face is back.
    func searchSoughtFaces(_ grey: Plane, seconds: Double) {
        let watching = scheduler.isWatching(at: frameIndex)
        soughtFaces.removeAll { sought in sought.isOver(at: frameIndex, watching: watching) || faces.contains { sought.isFoundAgain(by: $0) } }
        if watching && !soughtFaces.contains(where: \.wasShown) { scheduler.endWatch(at: frameIndex) }
        if !soughtFaces.isEmpty && frameIndex % settings.lostSearchInterval == 0 { searchRegions(grey, seconds: seconds) }
    }

    /// A scan saw a face at `box` that the frame after could not confirm (`merge`). Where the box
    /// reaches past the frame's edge, the face may be coming in: the check of a face cut by the edge
    /// leaves about one in sixteen that dlib's scan finds unconfirmed
    /// (`DlibReferenceTests.theCheckConfirmsAFaceCutByTheEdgeThatDlibsScanFinds`), and one that has
    /// moved on since the scan's frame more. Such a face would wait for the next scan, up to an
    /// interval after it is wholly in view (`EdgeReentryTests`: tflite_portrait_large panned in
    /// through the right edge, 25 frames). So it is looked for where it is once wholly in view (the
    /// box moved onto the frame) until the next coarse scan is due (an interval), as a lost face is:
    /// a person who stands cut by the edge, unconfirmed, costs a search every `lostSearchInterval`
    /// frames while the scans keep seeing them there.
    func watchCutByEdge(_ box: FaceBox, _ grey: Plane) {
        let inside = box.movedInside(width: Float(grey.width), height: Float(grey.height))
        guard inside != box, !soughtFaces.contains(where: { $0.region.box.overlap(with: inside) > 0.2 }) else { return }
        let until = frameIndex + settings.detectionInterval
        seek(SoughtFace(region: FitRegion(box: inside, angle: 0), cause: .cutByEdge(until: until), firstLaterID: nextID))
    }

    /// Adds a place to look for a face, the oldest given up when `maximumFaces` are sought already.
    func seek(_ sought: SoughtFace) {
        if soughtFaces.count == settings.maximumFaces { soughtFaces.removeFirst() }
        soughtFaces.append(sought)
    }

    /// Where a dropped face is looked for: where it was last shown wholly in view, turned as it was
    /// then, at the size detection had found it at by then (`TrackedFace.wholeBoxSide`). The fits of
    /// a face leaving through an edge slide along it, stretch and turn (`leave_top`: grace_hopper's
    /// last fit 40 px to her side and turned 81 degrees; looked for there, she was found 16 frames
    /// late). It comes back as large as it was, and its box seldom is: a face lost in view (turned
    /// away until its fit no longer scored as a face) leaves a turned face's box, narrower and off to
    /// one side, beyond the scale the search tolerates.
    static func lostRegion(_ face: TrackedFace) -> FitRegion {
        let whole = face.wholeRegion, side = face.wholeBoxSide
        guard side > 0 else { return whole }
        return FitRegion(box: FaceBox(centre: whole.box.centre, side: side), angle: whole.angle)
    }

    /// Looks with the detector around where faces are sought, on this frame (about 1.3 ms a region,
    /// every `lostSearchInterval` frames while the search there lasts): a face coming back in where it
    /// left, turning back, or coming in where a scan saw it cut by the edge, is found within a few
    /// frames of being whole, whatever the detection thread's timing. It counts only where the
    /// detector's own threshold (a score of 0) takes it for a face, as a detection would. Not where a
    /// followed face is: it would find that face. The face is looked for until one started there is
    /// shown (`SoughtFace.isFoundAgain`): a face turning back can score just above the threshold
    /// here, then just below it for the frames until it is dropped unshown.
    private func searchRegions(_ grey: Plane, seconds: Double) {
        var started = false
        for sought in soughtFaces where frameIndex >= sought.nextSearch && !faces.contains(where: { sought.isCovered(by: $0) })
            && faces.count < settings.maximumFaces {
            if let (raw, sighting) = fitSighted(grey, around: sought.region, minimumScore: 0), !isFollowed(near: sighting.box) {
                startFace(raw, sighting, framingWhenWhole: sought.framing)
                started = true
            }
        }
        if started { refitFaces(grey, seconds: seconds, onlyFound: true) }
    }
}
