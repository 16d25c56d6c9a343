/// What a stage decides after looking at a decoded frame.
public enum StageDecision: Sendable {
    /// The frame goes out as decoded: no copy is made.
    case passThrough
    /// The stage wants to draw: it gets a writable copy of the frame from a pool via `draw(on:)`.
    case draw
}

/// The per-frame Swift stage between ingest and egress (tracking, stickers).
///
/// Called on the stream's frame thread only, one frame at a time and in presentation order. A stage
/// must not keep a frame past the call: the memory behind it goes back to GStreamer. In the steady
/// state neither call may allocate.
public protocol FrameStage: AnyObject {
    /// Reads the decoded frame (read-only) and says whether it needs to draw on it.
    func analyse(_ frame: VideoFrame) -> StageDecision
    /// Draws on a pooled, writable copy of the frame last passed to `analyse`.
    func draw(on frame: VideoFrame)
}

/// The stage of a relay without stickers: looks at nothing, draws nothing.
public final class PassThroughStage: FrameStage {
    public init() {}
    public func analyse(_ frame: VideoFrame) -> StageDecision { .passThrough }
    public func draw(on frame: VideoFrame) {}
}
