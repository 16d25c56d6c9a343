import FrameKit

/// Where a face is looked for on the frame thread (`FaceTracker.searchSoughtFaces`): where a shown
/// face was lost, or where a scan saw a face cut by the frame's edge that it could not start; and
/// the first id a track started after that got.
struct SoughtFace {
    enum Cause {
        /// A shown face was lost here: looked for while the watch lasts; found again, it is boxed as
        /// `framing` (how its box sat on its landmarks) once wholly in view.
        case lost(framing: BoxFraming)
        /// A scan saw a face reaching past the frame's edge here, where the frame after could not
        /// confirm it: looked for where it is once wholly in view, until frame `until`.
        case cutByEdge(until: Int)
    }

    var region: FitRegion
    var cause: Cause
    var firstLaterID: Int
    /// Faces started here and dropped before they were shown, and the first frame the search may
    /// look here again.
    var unshownStarts = 0, nextSearch = 0

    /// Whether a shown face was lost here (else a scan saw one cut by the edge).
    var wasShown: Bool { framing != nil }

    /// How a face found here is boxed once wholly in view: as the lost one was.
    var framing: BoxFraming? {
        if case .lost(let framing) = cause { framing } else { nil }
    }

    /// Whether the search here is over on `frame`: a lost face's once the watch for it ended
    /// (`watching` false), a face cut by the edge's at its own end.
    func isOver(at frame: Int, watching: Bool) -> Bool {
        switch cause {
        case .lost: !watching
        case .cutByEdge(let until): frame >= until
        }
    }

    /// Puts the search here off after a face started here was dropped unshown: 2, 4, 8 then 16
    /// search intervals.
    mutating func putOff(from frame: Int, interval: Int) {
        unshownStarts += 1
        nextSearch = frame + interval << min(unshownStarts, 4)
    }

    /// Whether `face` is where the lost one was (its box overlaps by a fifth).
    func isCovered(by face: TrackedFace) -> Bool { face.box.overlap(with: region.box) > 0.2 }

    /// A face started since the loss and shown, where the lost one was; a face followed all along
    /// (one that hid the lost one as they crossed) is not it, nor one started there that has not yet
    /// scored as a detection (it may be dropped, and the face is still to be found).
    func isFoundAgain(by face: TrackedFace) -> Bool { face.id >= firstLaterID && face.life.standing.wasShown && isCovered(by: face) }
}

extension FaceBox {
    /// This box moved the least that puts it wholly on a `width` x `height` frame (centred on an
    /// axis the frame is smaller on): where a face the box cuts is once it has come wholly in.
    func movedInside(width: Float, height: Float) -> FaceBox {
        func moved(_ start: Float, _ length: Float, within frame: Float) -> Float {
            length >= frame ? (frame - length) / 2 : min(max(start, 0), frame - length)
        }
        return FaceBox(x: moved(x, self.width, within: width), y: moved(y, self.height, within: height),
                       width: self.width, height: self.height)
    }
}
