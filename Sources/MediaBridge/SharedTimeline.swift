/// One timeline for audio and video: both are rebased on the same origin, the running time of the
/// first relayed video frame, so the offset between them is kept exactly as the input had it.
/// (Rebasing each stream on its own first timestamp is the classic cause of A/V drift.)
///
/// An input that comes back (a publisher reconnecting within the grace period) starts its own
/// running time again: it gets a new origin, placed at an output time after everything sent so far.
public struct SharedTimeline: Sendable, Equatable {
    public private(set) var origin: UInt64?
    /// The output time of the origin: 0 for the first input.
    public private(set) var originOutputTime: UInt64 = 0
    /// Which input (the relay's count of inputs that came back) the origin belongs to.
    public private(set) var generation = 0

    public init() {}

    public mutating func start(at runningTime: UInt64) {
        if origin == nil { origin = runningTime }
    }

    /// The input `generation` continues the output: its running time `runningTime` is output at `outputTime`.
    public mutating func resume(at runningTime: UInt64, outputTime: UInt64, generation: Int) {
        origin = runningTime
        originOutputTime = outputTime
        self.generation = generation
    }

    /// The output timestamp for an input running time; nil before the origin (audio that precedes
    /// the first video frame) or while the timeline has not started.
    public func rebase(_ runningTime: UInt64) -> UInt64? {
        guard let origin, runningTime >= origin, runningTime != UInt64.max else { return nil }
        return runningTime - origin + originOutputTime
    }
}

/// Output video timestamps that never go backwards. Network inputs can decode to decreasing
/// timestamps (MPEG-TS over SRT is retimed by tsdemux's clock-skew estimate, which jumps while it
/// converges), and muxers drop or mangle such frames. The picture order from the decoder is right;
/// only the stamp is wrong, so a late stamp is moved to just after its predecessor.
public struct MonotonicTimestamps: Sendable {
    public static let nudgeNanoseconds: UInt64 = 1_000_000
    private var last: UInt64?
    public private(set) var repaired = 0

    public init() {}

    public mutating func next(_ pts: UInt64) -> UInt64 {
        guard let previous = last, pts <= previous else {
            last = pts
            return pts
        }
        repaired += 1
        last = previous + Self.nudgeNanoseconds
        return previous + Self.nudgeNanoseconds
    }
}
