/// What a stage decides after looking at a decoded frame.
public enum StageDecision: Sendable {
    /// The frame goes out as decoded: no copy is made.
    case passThrough
    /// The stage wants to draw: it gets the frame, writable, through `draw(on:)`.
    case draw
}

/// The per-frame Swift stage between ingest and egress (tracking, stickers).
///
/// Called on the stream's frame thread only, one frame at a time and in presentation order. A stage
/// must not keep a frame past the call: the memory behind it goes back to GStreamer. In the steady
/// state neither call may allocate. Sendable: the relay that calls it is made on one thread and runs
/// on another, and `trackingFigures` is read from any.
public protocol FrameStage: AnyObject, Sendable {
    /// Reads the decoded frame (read-only) and says whether it needs to draw on it.
    func analyse(_ frame: VideoFrame) -> StageDecision
    /// Draws on the frame last passed to `analyse`, writable now: a pooled copy of the decoded
    /// frame, which the ingest's appsink still holds. A frame nothing is drawn on goes out uncopied.
    func draw(on frame: VideoFrame)
    /// Running totals of a stage that tracks faces, readable from any thread; nil for other stages.
    var trackingFigures: TrackingFigures? { get }
    /// Before `analyse`: decoded frames waiting behind this one, and how many the queue holds before
    /// whole frames are dropped (0 when the queue may fill, as for a file read as fast as possible).
    /// A stage may do less while frames queue up.
    func noteBacklog(queued: Int, capacity: Int)
}

extension FrameStage {
    public var trackingFigures: TrackingFigures? { nil }
    public func noteBacklog(queued: Int, capacity: Int) {}
}

/// What face tracking and stickers have cost so far, and how many faces tracking saw.
public struct TrackingFigures: Sendable, Equatable {
    public var frames = 0
    /// Tracking CPU time, the frame thread's and the detection thread's.
    public var cpuNanoseconds: UInt64 = 0
    /// Faces found, summed over frames.
    public var faceFrames = 0
    /// Sticker CPU time: timelines, placement and blending.
    public var stickerCPUNanoseconds: UInt64 = 0
    /// The part of `cpuNanoseconds` spent on the detection thread, off the frame thread.
    public var detectionCPUNanoseconds: UInt64 = 0
    /// Frames the stage lightened because frames queued up (drawn at the last fit, not refitted).
    public var lightenedFrames = 0
    /// How much the stage leaves out now: 0 nothing, 1 refits every other frame, 2 every fourth.
    public var loadLevel = 0

    public init(frames: Int = 0, cpuNanoseconds: UInt64 = 0, faceFrames: Int = 0, stickerCPUNanoseconds: UInt64 = 0, detectionCPUNanoseconds: UInt64 = 0) {
        self.frames = frames
        self.cpuNanoseconds = cpuNanoseconds
        self.faceFrames = faceFrames
        self.stickerCPUNanoseconds = stickerCPUNanoseconds
        self.detectionCPUNanoseconds = detectionCPUNanoseconds
    }
}

/// The stage of a relay without stickers: looks at nothing, draws nothing.
public final class PassThroughStage: FrameStage {
    public init() {}
    public func analyse(_ frame: VideoFrame) -> StageDecision { .passThrough }
    public func draw(on frame: VideoFrame) {}
}
