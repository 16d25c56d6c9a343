/// What the face stage leaves out when a live stream's frames queue up (the stage or the encoder
/// cannot keep up, or the machine is busy), so that it lightens its own work before the queue
/// overflows and whole frames are dropped: first it refits faces on every other frame (detection
/// with it), then on every fourth; stickers stay on every frame, since a sticker blinking on and off
/// is worse to watch than one that lags, carried on between fits by how far the face's pixels
/// moved (`FaceTracker.coast`), since one that stands still for three frames and then jumps is
/// worse than either. It steps back once the queue has stayed nearly empty for two seconds.
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

    /// Frames between two steps up, so that a step's effect shows in the queue before the next.
    static let framesToSettle = 15
    /// Frames in a row with the queue at most a fifth full before a step down.
    static let calmFramesToStepDown = 60

    public private(set) var level = Level.full
    private var framesSinceStep = LoadShedding.framesToSettle
    private var calmFrames = 0

    public init() {}

    /// Called once per frame with the frames waiting behind it and how many the queue holds at
    /// most (0: a queue that is allowed to fill, such as a file read as fast as possible).
    public mutating func update(queued: Int, capacity: Int) -> Level {
        framesSinceStep += 1
        guard capacity > 0 else { return level }
        if queued * 2 >= capacity {
            calmFrames = 0
            if level < .trackEveryFourthFrame, framesSinceStep >= Self.framesToSettle {
                level = Level(rawValue: level.rawValue + 1)!
                framesSinceStep = 0
            }
        } else if queued * 5 <= capacity {
            calmFrames += 1
            if level > .full, calmFrames >= Self.calmFramesToStepDown {
                level = Level(rawValue: level.rawValue - 1)!
                framesSinceStep = 0
                calmFrames = 0
            }
        } else {
            calmFrames = 0
        }
        return level
    }
}
