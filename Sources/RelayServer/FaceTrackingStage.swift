import Compositor
import FaceTracking
import FrameKit
import StickerKit
import Synchronization

/// What the face stage draws on every tracked face.
public enum FaceLook {
    /// The tracking overlay (box, landmarks, pose, expressions), for checking the tracking live.
    case landmarks
    /// A sticker package.
    case sticker(StickerRenderer)
}

/// The stage of `run --sticker NAME`: tracks every face and draws a sticker (or the tracking
/// overlay) on each. The sticker can be replaced while the stream runs; the new one takes over on
/// the next frame, with fresh timelines on every face.
public final class FaceTrackingStage: FrameStage, @unchecked Sendable {
    private let tracker: FaceTracker
    private let overlay = TrackingOverlay()
    private let expressions: [String]
    /// Touched on the frame thread only.
    private var look: FaceLook
    private var scene: StickerScene?
    private let pending = Mutex<StickerRenderer?>(nil)
    private let frames = Atomic<Int>(0)
    private let cpu = Atomic<UInt64>(0)
    private let stickerCPU = Atomic<UInt64>(0)
    private let faceFrames = Atomic<Int>(0)

    public init(tracker: FaceTracker, look: FaceLook = .landmarks) {
        self.tracker = tracker
        expressions = tracker.settings.expressions.rules.map(\.analyser.name)
        self.look = .landmarks
        install(look)
    }

    /// The expression names sticker triggers may use with this stage's tracker.
    public var expressionNames: [String] { expressions }

    /// Puts `renderer`'s sticker on every face from the next frame on. Callable from any thread.
    public func replaceSticker(with renderer: StickerRenderer) {
        pending.withLock { $0 = renderer }
    }

    /// The name of the sticker on the faces, nil for the tracking overlay.
    public var stickerName: String? {
        if case .sticker(let renderer) = look { return renderer.package.name }
        return nil
    }

    private func install(_ look: FaceLook) {
        self.look = look
        if case .sticker(let renderer) = look {
            scene = StickerScene(package: renderer.package, expressions: expressions, maximumFaces: tracker.settings.maximumFaces)
        } else {
            scene = nil
        }
    }

    public func analyse(_ frame: VideoFrame) -> StageDecision {
        if let next = pending.withLock({ renderer -> StickerRenderer? in
            defer { renderer = nil }
            return renderer
        }) {
            install(.sticker(next))
        }
        let seconds = Double(frame.pts) / 1e9
        tracker.process(frame.luma, seconds: seconds)
        let visible = tracker.visibleFaceCount
        frames.add(1, ordering: .relaxed)
        faceFrames.add(visible, ordering: .relaxed)
        cpu.store(tracker.cpuNanoseconds, ordering: .relaxed)
        guard let scene else { return visible > 0 ? .draw : .passThrough }
        let start = threadCPUNanoseconds()
        scene.update(faces: tracker.faces, seconds: seconds)
        stickerCPU.add(threadCPUNanoseconds() &- start, ordering: .relaxed)
        return scene.placements.isEmpty ? .passThrough : .draw
    }

    public func draw(on frame: VideoFrame) {
        switch look {
        case .landmarks:
            overlay.draw(tracker.faces, ruleCount: tracker.settings.expressions.rules.count, on: frame)
        case .sticker(let renderer):
            guard let scene else { return }
            let start = threadCPUNanoseconds()
            renderer.draw(scene.placements, on: frame)
            stickerCPU.add(threadCPUNanoseconds() &- start, ordering: .relaxed)
        }
    }

    public var trackingFigures: TrackingFigures? {
        TrackingFigures(frames: frames.load(ordering: .relaxed), cpuNanoseconds: cpu.load(ordering: .relaxed),
                        faceFrames: faceFrames.load(ordering: .relaxed), stickerCPUNanoseconds: stickerCPU.load(ordering: .relaxed))
    }
}
