import Synchronization

/// Where the output is in time: the origin audio and video are both rebased on (`SharedTimeline`),
/// when the output started, and the latest timestamps sent. An input that comes back continues it.
final class OutputTimeline: Sendable {
    private struct State {
        var timeline = SharedTimeline()
        /// When the output's first frame went out.
        var startedAt: ContinuousClock.Instant?
    }

    private let state = Mutex(State())
    private let changes: ChangeSignal
    /// The latest audio or video timestamp handed to the egress: where a returning input continues.
    private let latestOutputTime = Atomic<UInt64>(0)
    /// The latest video timestamp handed to the egress: how far the video has gone without audio.
    private let latestVideoTime = Atomic<UInt64>(0)

    init(changes: ChangeSignal) {
        self.changes = changes
    }

    var current: SharedTimeline { state.withLock { $0.timeline } }

    var latestVideo: UInt64 { latestVideoTime.load(ordering: .relaxed) }

    /// The first frame's running time is the origin of the output.
    func start(at runningTime: UInt64) {
        state.withLock { state in
            state.timeline.start(at: runningTime)
            state.startedAt = .now
        }
        changes.notify()
    }

    /// The first frame of an input that came back (generation `generation`) is placed at the real
    /// time passed since the output started, and after every audio and video packet sent: the
    /// output's timeline goes on in real time (the pause a stall or a reconnection took included),
    /// never back. (The time of the last frame sent would not do: a stalled input's decoder lets
    /// its last frames go only when the input is given up.)
    func resume(at runningTime: UInt64, frameDuration: UInt64, generation: Int) -> SharedTimeline {
        let step = frameDuration > 0 && frameDuration != UInt64.max ? frameDuration : 33_333_333
        let latest = latestOutputTime.load(ordering: .relaxed) + step
        let timeline = state.withLock { state in
            let elapsed = state.startedAt.map { UInt64(max(0, (ContinuousClock.now - $0).inSeconds) * 1e9) } ?? 0
            state.timeline.resume(at: runningTime, outputTime: max(latest, elapsed), generation: generation)
            return state.timeline
        }
        changes.notify()
        return timeline
    }

    func sentVideo(at pts: UInt64) {
        latestOutputTime.max(pts, ordering: .relaxed)
        latestVideoTime.max(pts, ordering: .relaxed)
    }

    func sentAudio(at pts: UInt64) {
        latestOutputTime.max(pts, ordering: .relaxed)
    }
}
