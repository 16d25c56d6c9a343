/// What the face stage leaves out when a live stream's frames queue up (the stage or the encoder
/// cannot keep up, or the machine is busy), so that it lightens its own work rather than drop
/// whole frames: first it refits faces on every other frame (detection with it), then on every
/// fourth; stickers stay on every frame, since a sticker blinking on and off is worse to watch than
/// one that lags, carried on between fits by how far the face's pixels moved (`FaceTracker.coast`),
/// since one that stands still for three frames and then jumps is worse than either.
///
/// A backlog is a queue that stays up, not one that is up: a live input's frames come in bursts
/// (an SRT caller's MPEG-TS brought five or six decoded frames at once every ten or so, measured
/// on the queue), which a stage that keeps up drains in a few frames. So a step up waits for the
/// queue to stay at least half full for longer than `framesABurstDrainsIn` frames, and the calm
/// that steps back is two seconds in which the queue never stayed above a fifth full that long. The
/// price: a stage at half the input's pace fills the queue before the first step and drops a few
/// frames (each counted) where a step at the first half-full frame would have dropped none.
public struct LoadShedding: Sendable, Equatable {
    public enum Level: Int, Sendable, Comparable {
        case full = 0
        /// Faces are refitted on every other frame; on the frames between they coast.
        case trackEveryOtherFrame = 1
        /// Faces are refitted on every fourth frame.
        case trackEveryFourthFrame = 2

        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }

        /// Frames from one refit to the next.
        public var trackingStride: Int { 1 << rawValue }
    }

    /// Frames a burst takes to drain at most at a stage that keeps up: a queue up for longer is a
    /// backlog. A burst of a whole queue (10 frames) stays half full for six frames, above a fifth
    /// for eight.
    static let framesABurstDrainsIn = 8
    /// Frames between two steps up, so that a step's effect shows in the queue before the next.
    static let framesToSettle = 15
    /// Calm frames before a step down.
    static let calmFramesToStepDown = 60

    public private(set) var level = Level.full
    private var framesSinceStep = LoadShedding.framesToSettle
    /// Frames in a row with the queue at least half full.
    private var halfFullRun = 0
    /// Frames in a row with the queue more than a fifth full.
    private var aboveAFifthRun = 0
    /// Frames since the queue last stayed more than a fifth full for longer than a burst drains.
    private var calmFrames = 0

    public init() {}

    /// Called once per frame with the frames waiting behind it and how many the queue holds at
    /// most (0: a queue that is allowed to fill, such as a file read as fast as possible).
    public mutating func update(queued: Int, capacity: Int) -> Level {
        framesSinceStep += 1
        guard capacity > 0 else { return level }
        halfFullRun = queued * 2 >= capacity ? halfFullRun + 1 : 0
        aboveAFifthRun = queued * 5 > capacity ? aboveAFifthRun + 1 : 0
        calmFrames = aboveAFifthRun > Self.framesABurstDrainsIn ? 0 : calmFrames + 1
        if halfFullRun > Self.framesABurstDrainsIn, level < .trackEveryFourthFrame, framesSinceStep >= Self.framesToSettle {
            level = Level(rawValue: level.rawValue + 1)!
            framesSinceStep = 0
        } else if level > .full, calmFrames >= Self.calmFramesToStepDown, aboveAFifthRun == 0 {
            level = Level(rawValue: level.rawValue - 1)!
            framesSinceStep = 0
            calmFrames = 0
        }
        return level
    }
}
