import Compositor
import FaceTracking
import FrameKit
import Synchronization

/// The stage of `run --sticker landmarks`: tracks every face and draws the tracking overlay, so an
/// operator can check the tracking on the live output.
public final class FaceTrackingStage: FrameStage, @unchecked Sendable {
    private let tracker: FaceTracker
    private let overlay = TrackingOverlay()
    private let frames = Atomic<Int>(0)
    private let cpu = Atomic<UInt64>(0)
    private let faceFrames = Atomic<Int>(0)

    public init(tracker: FaceTracker) {
        self.tracker = tracker
    }

    public func analyse(_ frame: VideoFrame) -> StageDecision {
        tracker.process(frame.luma, seconds: Double(frame.pts) / 1e9)
        let visible = tracker.visibleFaceCount
        frames.add(1, ordering: .relaxed)
        faceFrames.add(visible, ordering: .relaxed)
        cpu.store(tracker.cpuNanoseconds, ordering: .relaxed)
        return visible > 0 ? .draw : .passThrough
    }

    public func draw(on frame: VideoFrame) {
        overlay.draw(tracker.faces, ruleCount: tracker.settings.expressions.rules.count, on: frame)
    }

    public var trackingFigures: TrackingFigures? {
        TrackingFigures(frames: frames.load(ordering: .relaxed), cpuNanoseconds: cpu.load(ordering: .relaxed),
                        faceFrames: faceFrames.load(ordering: .relaxed))
    }
}
