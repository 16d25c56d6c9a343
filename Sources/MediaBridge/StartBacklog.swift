/// A live input's start-up backlog: the frames that queued up before the first was relayed (a
/// demuxer holding video while it waits for audio, the encoder's start) are relayed under
/// back-pressure, faster than real time, until the input comes at its own pace again; from then on
/// the appsink drops the oldest frame rather than let the stream fall behind.
///
/// Caught up is judged by the frames' own timestamps: once `window` of media took at least
/// `paceShare` of that long to come through, the frames came as the input sends them, so nothing
/// waits behind them. A pause between two frames alone says nothing: a decoder kept off the CPU
/// for a moment leaves one in the middle of a backlog, and the frames after it come faster than
/// real time again. A stage too slow ever to catch up is caught up after `limit` all the same.
///
/// A value: the frame thread tells it each frame it relayed (`relayed`).
struct StartBacklog: Sendable {
    /// How much media one judgement spans: a second holds enough frames that one late frame at
    /// either end moves the pace by a few percent, and is short beside a backlog relayed at
    /// three times real time.
    static let window = Duration.seconds(1)
    /// The share of the window's media time its frames must take in wall time: at the input's pace
    /// they take all of it (a few percent less as frames arrive unevenly); a backlog relayed at
    /// twice real time or more takes half or less.
    static let paceShare = 0.85
    /// The longest a backlog is relayed under back-pressure (a demuxer's 6 s of held frames take
    /// about 2 s at three times real time).
    static let limit = Duration.seconds(10)

    private var firstFrameAt: ContinuousClock.Instant?
    /// The frame the current window starts at: its running time (ns) and when it was pulled.
    private var windowStart: (runningTime: UInt64, pulledAt: ContinuousClock.Instant)?

    init() {}

    /// A frame with `runningTime` (ns), pulled from the appsink at `pulledAt`, was relayed. True
    /// when the backlog is caught up. The first frame only starts the clock: it waits for the
    /// encoder to start, which is no measure of the input's pace.
    mutating func relayed(runningTime: UInt64, pulledAt: ContinuousClock.Instant) -> Bool {
        guard let firstFrameAt else {
            firstFrameAt = pulledAt
            return false
        }
        if pulledAt - firstFrameAt > Self.limit { return true }
        guard let start = windowStart, runningTime >= start.runningTime else {
            // The first window, or timestamps that went back: start one here.
            windowStart = (runningTime, pulledAt)
            return false
        }
        let media = Duration.nanoseconds(Int64(clamping: runningTime - start.runningTime))
        guard media >= Self.window else { return false }
        let wall = pulledAt - start.pulledAt
        if wall >= media * Self.paceShare { return true }
        windowStart = (runningTime, pulledAt)
        return false
    }
}
