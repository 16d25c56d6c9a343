/// How far a followed face has earned being drawn on.
enum FaceStanding: Equatable, Sendable {
    /// Started by detection and not yet shown: shown once the detector scores its fit as it scores a
    /// detection. `lowScores` counts the fits in a row that scored below that.
    case new(lowScores: Int)
    /// Shown: stickers are drawn on it.
    case shown
    /// Shown before, then its fit scored below the doubtful confidence: hidden until the detector
    /// scores it as a detection again.
    case doubted(lowScores: Int)

    var wasShown: Bool { if case .new = self { false } else { true } }

    /// Fits in a row that did not score as a face.
    var lowScores: Int {
        switch self {
        case .new(let count), .doubted(let count): count
        case .shown: 0
        }
    }

    /// The standing after one more fit that did not score as a face: a shown face is doubted.
    var scoredLow: FaceStanding {
        switch self {
        case .new(let count): .new(lowScores: count + 1)
        case .shown: .doubted(lowScores: 1)
        case .doubted(let count): .doubted(lowScores: count + 1)
        }
    }

    /// The same standing with its count of low scores cleared (a detection found the face again).
    var rescored: FaceStanding {
        switch self {
        case .new: .new(lowScores: 0)
        case .shown: .shown
        case .doubted: .doubted(lowScores: 0)
        }
    }
}

/// A followed face's life, frame to frame. Every change of it is one of the transitions below, pure
/// functions of the life and what this frame's fit found; `FaceTracker` only carries them out.
///
///     found(s) --fitted--> tracked(s')         s' from the fit's score (`scored`); a new face
///                                              coming back cut by the edge waits for its next fit
///     tracked(s) --fit missed--> lost(1, s) --fit missed--> ... lost(holdFrames, s) --> dropped
///     (a missed fit of a new or doubted face also counts as a low score)
///     lost(n, s) --fitted--> tracked(s')
///     new/doubted: lowScores reaching `doubtfulFramesToDrop` --> dropped
///     any hidden life --detection finds it again--> found(s with lowScores cleared)
enum FaceLife: Equatable, Sendable {
    /// Started or restarted from a detection on this frame, before its first fit from there.
    /// `scoredByScan`: a whole-frame scan of this very frame scored it, on dlib's own windows, so
    /// its first fit needs no check by the detector.
    case found(FaceStanding, scoredByScan: Bool)
    /// Fitted on this frame.
    case tracked(FaceStanding)
    /// Not fitted on the last `frames` frames: kept at its last place, hidden.
    case lost(frames: Int, FaceStanding)

    var standing: FaceStanding {
        switch self {
        case .found(let standing, _), .tracked(let standing), .lost(_, let standing): standing
        }
    }

    /// Drawn on this frame.
    var isShown: Bool { self == .tracked(.shown) }

    /// Frames since it was last fitted.
    var framesLost: Int { if case .lost(let frames, _) = self { frames } else { 0 } }

    /// Awaiting its first fit since a detection (re)started it.
    var awaitsFit: Bool { if case .found = self { true } else { false } }

    /// A face a detection just found on this frame.
    static func started(scoredByScan: Bool) -> FaceLife { .found(.new(lowScores: 0), scoredByScan: scoredByScan) }

    /// The fit failed, or landed where no face can be: kept hidden at its last place for `holdFrames`
    /// frames, then dropped (nil). For a face hidden for doubt, or never shown, a missed fit is one
    /// more frame that did not score as a face, and counts towards `dropAfter` as a low score does:
    /// otherwise a fit on the background kept now and then, scored low each time, would restart the
    /// hold on every kept fit and keep the face for up to `dropAfter` holds.
    func fitMissed(holdFrames: Int, dropAfter: Int) -> FaceLife? {
        let frames = framesLost + 1
        guard frames <= holdFrames else { return nil }
        guard standing != .shown else { return .lost(frames: frames, .shown) }
        let low = standing.scoredLow
        return low.lowScores >= dropAfter ? nil : .lost(frames: frames, low)
    }

    /// The fit landed and the detector scored it `confidence`: shown when it reaches the detector's
    /// own threshold (`detectionConfidence`) for a face never shown or doubted since, or
    /// `doubtfulConfidence` for one shown; hidden otherwise and dropped (nil) after `dropAfter` such
    /// fits in a row.
    /// `returningCut`: the face is coming back where one left through the frame's edge, and the edge
    /// still cuts its box. Its first fit since detection started from the detector's box of a cut
    /// face, and can lie well off it (grace_hopper back through the left edge: 13.9 % of the eye
    /// distance, the fit 15 % too large); the next starts from that fit and lies on it (3.8 %). That
    /// first fit is not shown, whatever it scores, and is no low score either.
    func scored(_ confidence: Float, doubtfulConfidence: Float, detectionConfidence: Float, dropAfter: Int,
                returningCut: Bool = false) -> FaceLife? {
        let needed = standing == .shown ? doubtfulConfidence : max(doubtfulConfidence, detectionConfidence)
        if confidence >= needed, returningCut, awaitsFit, !standing.wasShown { return .tracked(standing) }
        if confidence >= needed { return .tracked(.shown) }
        let low = standing.scoredLow
        return low.lowScores >= dropAfter ? nil : .tracked(low)
    }

    /// A detection found the hidden face again: it is fitted from the detection's box next, with its
    /// standing kept (a face never shown still has to score as a detection) and its low scores cleared.
    var restarted: FaceLife { .found(standing.rescored, scoredByScan: false) }
}

/// Where a face's box is against the frame's edges.
enum EdgeContact: Equatable, Sendable {
    /// Wholly on the frame.
    case inside
    /// Reaching past an edge: part of the face may be off the frame.
    case cutByEdge
    /// Reaching past an edge and moving out through it: lost there, it left, it is not elsewhere.
    case leaving

    /// Whether `box` reaches past the edge of a `width` x `height` frame, and whether `shift` (its last
    /// move) carries it out by more than 1 % of its width a frame: a face cut by the edge that stays
    /// there (a face cam's close-up) is not leaving.
    init(_ box: FaceBox, moving shift: Point, width: Float, height: Float) {
        let cut = box.x < 0 || box.y < 0 || box.x + box.width > width || box.y + box.height > height
        let speed = box.width * 0.01
        let movesOut = box.x < 0 && shift.x < -speed || box.x + box.width > width && shift.x > speed
            || box.y < 0 && shift.y < -speed || box.y + box.height > height && shift.y > speed
        self = movesOut ? .leaving : cut ? .cutByEdge : .inside
    }
}
