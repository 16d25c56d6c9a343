import FrameKit

/// Where a face was lost while the watch lasts, how its box sat on its landmarks (a face found again
/// there is boxed so once wholly in view), and the first id a track started after the loss got.
struct LostFace {
    var region: FitRegion
    var framing: BoxFraming
    var firstLaterID: Int
    /// Faces started here and dropped before they were shown, and the first frame the search may
    /// look here again.
    var unshownStarts = 0, nextSearch = 0

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
