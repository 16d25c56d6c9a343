import FrameKit

/// The tracker's calls into the vision back end. A failure is counted (`visionErrors`) and costs
/// what it touched for one frame, never the stream.
extension FaceTracker {
    /// The landmarks inside `region`, or nil when there is no fit; a failure is counted, not thrown,
    /// so that one bad fit loses one face for one frame rather than the stream.
    func fitLandmarks(_ grey: Plane, in region: FitRegion) -> Landmarks? {
        do {
            return try landmarker.fit(grey, in: region.box, angle: region.angle)
        } catch {
            recordVisionError(error)
            return nil
        }
    }

    /// Where the detector scores a face where it was expected: no search beyond its own step.
    static let checkReach: Float = 0

    /// Where the detector sees a face near `region` on this frame, within `reach` box widths
    /// (`searchReach` by default), in a window turned as the region is; where that window does not
    /// score as a face and the region leans by `uprightCheckLean` or more, in an upright window,
    /// taken when it scores as a face. A face turned to one side has an eye line that leans with no
    /// roll of the head (the woman in profile turned a further 35 degrees: 14-24 degrees), and
    /// dlib's detector, trained on such faces upright, scores them upright (0.7-1.6 there) and far
    /// lower turned by that lean (-0.8 to 0.3): checked turned alone, she was doubted and dropped
    /// while dlib's own scan kept finding her (row `yaw30`). A face whose head is rolled scores
    /// turned, as before. The upright window only vouches for the face: where it is stays the
    /// turned search's answer, the box the face's fits and framing are made in. Fitted from the
    /// upright window's box, the same woman coming to rest after a slide was shown 13.7 % off, then
    /// 26-28 % (row `leave_left`, `ReturningFaceTests`); fitted upright as well, a face held
    /// 35 degrees aside landed elsewhere and its pose jumped into a shake (`LookingAsideTests`).
    /// Nil when the search failed (counted).
    func locate(_ grey: Plane, around region: FitRegion, reach: Float? = nil) -> FaceSighting? {
        do {
            let reach = reach ?? settings.searchReach
            let turned = try landmarker.locateFace(grey, around: region.box, angle: region.angle, reach: reach)
            guard turned.score < 0, abs(region.angle) * 180 / .pi >= settings.uprightCheckLean else { return turned }
            let upright = try landmarker.locateFace(grey, around: region.box, angle: 0, reach: reach)
            return upright.score >= 0 ? FaceSighting(box: turned.box, score: upright.score) : turned
        } catch {
            recordVisionError(error)
            return nil
        }
    }

    /// Where the detector sees a face near `region` (within `reach`), and, when `scales`, near
    /// `region` a pyramid step (6/5) smaller and larger, as far: the best of the three. A fit that
    /// grew or shrank off the face is off centre too, so a window of another size placed on the
    /// fit's centre misses the face by a HOG cell or more. Row `small1080`: the woman in profile's
    /// fit grows from 106 to 113 px; the window a step smaller, searched, scores 1.0 10 px to the
    /// side, and she is fitted again from it (105 px). Placed on the centre, it had scored below the
    /// window at the fit's size, which leaves the fit alone: it grew to 130 px the next frame (21 %
    /// off), she was lost on the one after, and the window a step smaller there scored -0.7, 8 px off.
    func locate(_ grey: Plane, around region: FitRegion, reach: Float, scales: Bool) -> FaceSighting? {
        guard var best = locate(grey, around: region, reach: reach) else { return nil }
        guard scales else { return best }
        for factor: Float in [5 / 6, 6 / 5] {
            let side = region.box.width * factor, centre = region.box.centre
            let scaled = FitRegion(box: FaceBox(centre: centre, side: side), angle: region.angle)
            if let other = locate(grey, around: scaled, reach: reach), other.score > best.score { best = other }
        }
        return best
    }

    /// A detector score as a confidence (see `TrackedFace.confidence`).
    static func confidence(_ score: Float) -> Float { min(1, max(0, (score + 1) / 2)) }

    /// A face fitted where the detector sees one near `region` on this frame, from the detector's own
    /// box as the cascade was trained; nil when the detector sees none there, or scores it below
    /// `minimumScore` (by default, the doubtful confidence's).
    func fitSighted(_ grey: Plane, around region: FitRegion, minimumScore: Float? = nil) -> (raw: Landmarks, sighting: FaceSighting)? {
        guard let sighting = locate(grey, around: region),
              sighting.score >= minimumScore ?? settings.doubtfulConfidence * 2 - 1,
              let raw = fitLandmarks(grey, in: FitRegion(box: sighting.box, angle: region.angle)) else { return nil }
        return (raw, sighting)
    }

    /// The head pose, or nil when there is none; a failure is counted and leaves the face without
    /// a pose for this frame, as when solvePnP finds none.
    func solvePose(_ landmarks: Landmarks, in grey: Plane, previous: HeadPose?) -> HeadPose? {
        do {
            return try poseSolver.solve(landmarks, frameWidth: grey.width, frameHeight: grey.height, previous: previous)
        } catch {
            recordVisionError(error)
            return nil
        }
    }

    func recordVisionError(_ error: any Error) {
        visionErrors += 1
        lastVisionError = error
    }
}
