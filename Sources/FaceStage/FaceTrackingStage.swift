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
///
/// `@unchecked Sendable` because `tracker`, `look`, `scene`, `activeExpressions` and `shedding` are
/// used by `noteBacklog`, `analyse` and `draw` only, which the relay calls on its frame thread alone (`FrameStage`'s
/// contract). Everything read from other threads is a `Mutex` or an `Atomic`.
public final class FaceTrackingStage: FrameStage, @unchecked Sendable {
    private let tracker: FaceTracker
    private let overlay = TrackingOverlay()
    private let expressions: [String]
    private var look: FaceLook = .none
    private var scene: StickerScene?
    /// Expressions on, per face id, to end them when the face is lost.
    private var activeExpressions: [Int: [String]] = [:]
    private let pending = Mutex<FaceLook?>(nil)
    private let lookName = Mutex("none")
    private let onEvent: (@Sendable (FaceStageEvent) -> Void)?
    private let frames = Atomic<Int>(0)
    private let cpu = Atomic<UInt64>(0)
    private let stickerCPU = Atomic<UInt64>(0)
    /// Tracking time measured around the tracker on the frame thread; the rest of `cpu` is detection.
    private let frameThreadTrackingCPU = Atomic<UInt64>(0)
    private var shedding = LoadShedding()
    private let lightenedFrames = Atomic<Int>(0)
    private let loadLevel = Atomic<Int>(0)
    private let faceFrames = Atomic<Int>(0)
    private let faces = Atomic<Int>(0)
    /// Landmarks are inline values: the copy each frame allocates nothing.
    private let lastFace = Mutex<FaceSnapshot?>(nil)

    public init(tracker: FaceTracker, look: FaceLook = .landmarks, onEvent: (@Sendable (FaceStageEvent) -> Void)? = nil) {
        self.tracker = tracker
        self.onEvent = onEvent
        expressions = tracker.settings.expressions.rules.map(\.analyser.name)
        install(look)
        if onEvent != nil {
            tracker.onExpression = { [unowned self] event in expressionChanged(event) }
        }
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

    private func install(_ look: FaceLook) {
        self.look = look
        if case .sticker(let renderer) = look {
            scene = StickerScene(package: renderer.package, expressions: expressions, maximumFaces: tracker.settings.maximumFaces)
        } else {
            scene = nil
        }
        lookName.withLock { $0 = look.name }
    }

    public func analyse(_ frame: VideoFrame) -> StageDecision {
        let seconds = Double(frame.pts) / 1e9
        if let next = pending.withLock({ look -> FaceLook? in
            defer { look = nil }
            return look
        }) {
            install(next)
            onEvent?(.lookChanged(name: next.name, seconds: seconds))
        }
        // Under load, faces are refitted on every second or fourth frame only; on the frames between,
        // their landmarks (and stickers) move on as they moved between the last two fits.
        if frames.load(ordering: .relaxed) % shedding.level.trackingStride != 0 {
            lightenedFrames.add(1, ordering: .relaxed)
            tracker.coast(to: seconds)
        } else {
            let trackingStart = threadCPUNanoseconds()
            tracker.process(frame.luma, seconds: seconds)
            frameThreadTrackingCPU.add(threadCPUNanoseconds() &- trackingStart, ordering: .relaxed)
            if !activeExpressions.isEmpty { endExpressionsOfLostFaces(seconds: seconds) }
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
        switch look {
        case .none:
            return .passThrough
        case .landmarks:
            return visible > 0 ? .draw : .passThrough
        case .sticker:
            guard let scene else { return .passThrough }
            let start = threadCPUNanoseconds()
            scene.update(faces: tracker.faces, seconds: seconds)
            stickerCPU.add(threadCPUNanoseconds() &- start, ordering: .relaxed)
            return scene.placements.isEmpty ? .passThrough : .draw
        }
    }

    public func draw(on frame: VideoFrame) {
        switch look {
        case .none:
            break
        case .landmarks:
            overlay.draw(tracker.faces, ruleCount: tracker.settings.expressions.rules.count, on: frame)
        case .sticker(let renderer):
            guard let scene else { return }
            let start = threadCPUNanoseconds()
            renderer.draw(scene.placements, on: frame)
            stickerCPU.add(threadCPUNanoseconds() &- start, ordering: .relaxed)
        }
    }

    public func noteBacklog(queued: Int, capacity: Int) {
        let level = shedding.update(queued: queued, capacity: capacity)
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

    private func expressionChanged(_ event: ExpressionEvent) {
        if event.started {
            activeExpressions[event.faceID, default: []].append(event.expression)
        } else {
            activeExpressions[event.faceID]?.removeAll { $0 == event.expression }
            if activeExpressions[event.faceID]?.isEmpty == true { activeExpressions[event.faceID] = nil }
        }
        onEvent?(.expression(face: event.faceID, expression: event.expression, started: event.started, seconds: event.seconds))
    }

    /// A face that is lost ends its expressions, so that a listener never waits for an end that
    /// cannot come.
    private func endExpressionsOfLostFaces(seconds: Double) {
        for (face, names) in activeExpressions where !tracker.faces.contains(where: { $0.id == face }) {
            activeExpressions[face] = nil
            for name in names {
                onEvent?(.expression(face: face, expression: name, started: false, seconds: seconds))
            }
        }
    }
}
