import FrameKit

/// What a detection's boxes do: each is matched to the face it was run for, restarts a lost one or
/// starts a track for a new one.
extension FaceTracker {
    func take(_ detection: DetectionWorker.Outcome, _ grey: Plane) {
        switch detection {
        case .success(let found): merge(found, grey)
        // Counting it as a miss would drop faces that are still there.
        case .failure(let error): recordVisionError(error)
        }
    }

    /// Matches detections to the faces they were run for, restarts lost faces and starts tracks for
    /// new ones. The detection was run on an earlier frame: a face it finds may have moved since, so
    /// a face's own fit is never pulled towards it. A box of a followed face only calibrates that
    /// face's framing (against its landmarks of that frame); a box for a lost face is moved on by the
    /// face's motion for the frames since; and any fit from a detection box must converge and score as
    /// a face on this frame before it counts.
    private func merge(_ found: UnsafeMutableBufferPointer<FaceSighting>, _ grey: Plane) {
        let elapsed = Float(frameIndex - worker.submittedFrame)
        for detection in found {
            let box = detection.box
            // The face this detection belongs to on the frame it was run on.
            var best = -1, bestOverlap: Float = 0.3
            for (i, known) in snapshot.enumerated() where known.box.overlap(with: box) > bestOverlap && known.box.isSameSize(as: box) {
                best = i
                bestOverlap = known.box.overlap(with: box)
            }
            if best >= 0, let face = faces.firstIndex(where: { $0.id == snapshot[best].id }) {
                faces[face].confirmedSize = snapshot[best].landmarks.eyeDistance
                faces[face].confirmedBoxSide = snapshot[best].box.width
                faces[face].framing.learn(detection: box, landmarks: snapshot[best].landmarks)
                if !faces[face].isShown { restart(&faces[face], box, grey, elapsed: elapsed) }
                continue
            }
            // A held face found again, or a new face not already followed since the snapshot.
            if let held = faces.firstIndex(where: { !$0.isShown && $0.box.overlap(with: box) > 0.2 && $0.box.isSameSize(as: box) }) {
                restart(&faces[held], box, grey, elapsed: elapsed)
                continue
            }
            if isFollowed(near: box) { continue }
            // Started where the detector scores a face on this frame at its own threshold, as the
            // search where a face was lost does: it would not be shown below that. A detection of
            // this very frame is that score, on dlib's own windows.
            guard faces.count < settings.maximumFaces else { continue }
            if elapsed == 0 {
                guard detection.score >= 0, let raw = fitLandmarks(grey, in: FitRegion(box: box, angle: 0)) else {
                    watchCutByEdge(box, grey)
                    continue
                }
                startFace(raw, detection, scoredByScan: true)
            } else {
                guard let (raw, sighting) = fitSighted(grey, around: FitRegion(box: box, angle: 0), minimumScore: 0) else {
                    watchCutByEdge(box, grey)
                    continue
                }
                startFace(raw, sighting)
            }
            // The scan saw it there: its moving on from there is no news.
            if worker.scan != .fine { sceneChange.addFace(box.grown(by: 1), to: .coarse) }
            if worker.scan != .coarse { sceneChange.addFace(box.grown(by: 1), to: .fine) }
        }
    }

    /// Starts a held face again from a detection made `elapsed` frames ago, moved on by the face's
    /// motion since; kept held when the detector sees no face there on this frame.
    private func restart(_ face: inout TrackedFace, _ box: FaceBox, _ grey: Plane, elapsed: Float) {
        let motion = face.motion.times(elapsed)
        let moved = FaceBox(x: box.x + motion.shift.x, y: box.y + motion.shift.y, width: box.width, height: box.height)
        guard let (raw, sighting) = fitSighted(grey, around: FitRegion(box: moved, angle: face.rawLandmarks.eyeLineAngle)) else { return }
        face.rawLandmarks = raw
        face.fitStart = face.framing.region(around: raw)
        face.confirmedSize = raw.eyeDistance
        face.confirmedBoxSide = sighting.box.width
        face.sizeCheckedSide = sighting.box.width
        face.confidence = Self.confidence(sighting.score)
        face.motion = .none
        face.filter.reset()
        face.poseHistory.removeAll()
        face.expressionHistory.removeAll()
        face.life = face.life.restarted
    }
}
