import Compositor
import FaceTracking
import FrameKit
import StickerKit
import Synchronization

/// What the face stage draws on every tracked face.
public enum FaceLook: Sendable {
    /// Nothing: faces are tracked and their expressions reported, the picture is left as it is.
    case none
    /// The tracking overlay (box, landmarks, pose, expressions), for checking the tracking live.
    case landmarks
    /// A sticker package.
    case sticker(StickerRenderer)

    /// The name `set-sticker` and `--sticker` use for this look.
    public var name: String {
        switch self {
        case .none: "none"
        case .landmarks: "landmarks"
        case .sticker(let renderer): renderer.package.name
        }
    }
}

/// What the stage reports as it happens, on the frame thread: keep the handler short.
public enum FaceStageEvent: Sendable, Equatable {
    /// An expression started (`started`) or ended on a face; `seconds` is the frame's output time.
    case expression(face: Int, expression: String, started: Bool, seconds: Double)
    /// A new look was put on the faces, from the frame at `seconds` on.
    case lookChanged(name: String, seconds: Double)
}

/// The first face shown on a recent frame, in that frame's pixels: what the sticker studio places a
/// sticker on when it shows a live stream.
public struct FaceSnapshot: Sendable {
    public let frameWidth: Int
    public let frameHeight: Int
    public let landmarks: Landmarks
}

/// The stage of `run --sticker NAME` and of every `serve` stream: tracks every face, reports
/// expressions, and draws a sticker (or the tracking overlay) on each. The look can be replaced
/// while the stream runs; the new one takes over on the next frame, with fresh timelines.
public final class FaceTrackingStage: FrameStage, Sendable {
    /// What only the frame thread uses (`FrameStage`'s contract: `noteBacklog`, `analyse` and `draw`
    /// are called from one thread), in a lock that is therefore never contended.
    private struct FrameThreadState {
        let tracker: FaceTracker
        var look: FaceLook = .none
        var scene: StickerScene?
        /// Expressions on, per face id, to end them when the face is lost.
        var activeExpressions: [Int: [String]] = [:]
        var shedding = LoadShedding()
    }

    private let state: Mutex<FrameThreadState>
    private let overlay = TrackingOverlay()
    private let expressions: [String]
    private let maximumFaces: Int
    private let ruleCount: Int
    private let pending = Mutex<FaceLook?>(nil)
    private let lookName = Mutex("none")
    private let onEvent: (@Sendable (FaceStageEvent) -> Void)?
    private let frames = Atomic<Int>(0)
    private let cpu = Atomic<UInt64>(0)
    private let stickerCPU = Atomic<UInt64>(0)
    /// Tracking time measured around the tracker on the frame thread; the rest of `cpu` is detection.
    private let frameThreadTrackingCPU = Atomic<UInt64>(0)
    private let lightenedFrames = Atomic<Int>(0)
    private let loadLevel = Atomic<Int>(0)
    private let faceFrames = Atomic<Int>(0)
    private let faces = Atomic<Int>(0)
    /// Landmarks are inline values: the copy each frame allocates nothing.
    private let lastFace = Mutex<FaceSnapshot?>(nil)

    public init(tracker: sending FaceTracker, look: FaceLook = .landmarks, onEvent: (@Sendable (FaceStageEvent) -> Void)? = nil) {
        self.onEvent = onEvent
        expressions = tracker.settings.expressions.rules.map(\.analyser.name)
        maximumFaces = tracker.settings.maximumFaces
        ruleCount = tracker.settings.expressions.rules.count
        state = Mutex(FrameThreadState(tracker: tracker))
        state.withLock { install(look, in: &$0) }
    }

    /// The expression names sticker triggers may use with this stage's tracker.
    public var expressionNames: [String] { expressions }

    /// Puts `look` on every face from the next frame on. Callable from any thread.
    public func replaceLook(with look: FaceLook) {
        pending.withLock { $0 = look }
    }

    /// The name of the look on the faces now (a package name, `none` or `landmarks`). Callable from
    /// any thread.
    public var lookNow: String { lookName.withLock { $0 } }

    /// Faces tracked on the last frame. Callable from any thread.
    public var facesNow: Int { faces.load(ordering: .relaxed) }

    /// The first face shown on the last frame that showed one, nil when the last frame showed none.
    /// Callable from any thread.
    public var faceNow: FaceSnapshot? { lastFace.withLock { $0 } }

    private func install(_ look: FaceLook, in state: inout FrameThreadState) {
        state.look = look
        if case .sticker(let renderer) = look {
            state.scene = StickerScene(package: renderer.package, expressions: expressions, maximumFaces: maximumFaces)
        } else {
            state.scene = nil
        }
        lookName.withLock { $0 = look.name }
    }

    public func analyse(_ frame: VideoFrame) -> StageDecision {
        state.withLock { analyse(frame, &$0) }
    }

    private func analyse(_ frame: VideoFrame, _ state: inout FrameThreadState) -> StageDecision {
        let seconds = Double(frame.pts) / 1e9
        let tracker = state.tracker
        if let next = pending.withLock({ look -> FaceLook? in
            defer { look = nil }
            return look
        }) {
            install(next, in: &state)
            onEvent?(.lookChanged(name: next.name, seconds: seconds))
        }
        // Under load, faces are refitted on every second or fourth frame only; on the frames between,
        // their landmarks (and stickers) move on as their pixels moved since the last fit, which
        // keeps their pixels for that.
        if frames.load(ordering: .relaxed) % state.shedding.level.trackingStride != 0 {
            lightenedFrames.add(1, ordering: .relaxed)
            let coastStart = threadCPUNanoseconds()
            tracker.coast(frame.luma, to: seconds)
            frameThreadTrackingCPU.add(threadCPUNanoseconds() &- coastStart, ordering: .relaxed)
        } else {
            let trackingStart = threadCPUNanoseconds()
            tracker.keepsPatches = state.shedding.level > .full
            tracker.process(frame.luma, seconds: seconds)
            frameThreadTrackingCPU.add(threadCPUNanoseconds() &- trackingStart, ordering: .relaxed)
            for event in tracker.expressionEvents { expressionChanged(event, &state.activeExpressions) }
            if !state.activeExpressions.isEmpty { endExpressionsOfLostFaces(seconds: seconds, tracker, &state.activeExpressions) }
        }
        let visible = tracker.visibleFaceCount
        frames.add(1, ordering: .relaxed)
        faceFrames.add(visible, ordering: .relaxed)
        faces.store(visible, ordering: .relaxed)
        if let face = tracker.faces.first(where: \.isShown) {
            let snapshot = FaceSnapshot(frameWidth: frame.width, frameHeight: frame.height, landmarks: face.landmarks)
            lastFace.withLock { $0 = snapshot }
        } else if visible == 0 {
            lastFace.withLock { $0 = nil }
        }
        cpu.store(tracker.cpuNanoseconds, ordering: .relaxed)
        switch state.look {
        case .none:
            return .passThrough
        case .landmarks:
            return visible > 0 ? .draw : .passThrough
        case .sticker:
            guard let scene = state.scene else { return .passThrough }
            let start = threadCPUNanoseconds()
            scene.update(faces: tracker.faces, seconds: seconds)
            stickerCPU.add(threadCPUNanoseconds() &- start, ordering: .relaxed)
            return scene.placements.isEmpty ? .passThrough : .draw
        }
    }

    public func draw(on frame: VideoFrame) {
        state.withLock { state in
            switch state.look {
            case .none:
                break
            case .landmarks:
                overlay.draw(state.tracker.faces, ruleCount: ruleCount, on: frame)
            case .sticker(let renderer):
                guard let scene = state.scene else { return }
                let start = threadCPUNanoseconds()
                renderer.draw(scene.placements, on: frame)
                stickerCPU.add(threadCPUNanoseconds() &- start, ordering: .relaxed)
            }
        }
    }

    public func noteBacklog(queued: Int, capacity: Int) {
        let level = state.withLock { $0.shedding.update(queued: queued, capacity: capacity) }
        loadLevel.store(level.rawValue, ordering: .relaxed)
    }

    public var trackingFigures: TrackingFigures? {
        let total = cpu.load(ordering: .relaxed)
        let onFrameThread = frameThreadTrackingCPU.load(ordering: .relaxed)
        var figures = TrackingFigures(frames: frames.load(ordering: .relaxed), cpuNanoseconds: total,
                                      faceFrames: faceFrames.load(ordering: .relaxed), stickerCPUNanoseconds: stickerCPU.load(ordering: .relaxed),
                                      detectionCPUNanoseconds: total > onFrameThread ? total - onFrameThread : 0)
        figures.lightenedFrames = lightenedFrames.load(ordering: .relaxed)
        figures.loadLevel = loadLevel.load(ordering: .relaxed)
        return figures
    }

    // MARK: expressions

    private func expressionChanged(_ event: ExpressionEvent, _ active: inout [Int: [String]]) {
        if event.started {
            active[event.faceID, default: []].append(event.expression)
        } else {
            active[event.faceID]?.removeAll { $0 == event.expression }
            if active[event.faceID]?.isEmpty == true { active[event.faceID] = nil }
        }
        onEvent?(.expression(face: event.faceID, expression: event.expression, started: event.started, seconds: event.seconds))
    }

    /// A face that is lost ends its expressions, so that a listener never waits for an end that
    /// cannot come.
    private func endExpressionsOfLostFaces(seconds: Double, _ tracker: FaceTracker, _ active: inout [Int: [String]]) {
        for (face, names) in active where !tracker.faces.contains(where: { $0.id == face }) {
            active[face] = nil
            for name in names {
                onEvent?(.expression(face: face, expression: name, started: false, seconds: seconds))
            }
        }
    }
}
