/// One timeline for audio and video: both are rebased on the same origin, the running time of the
/// first relayed video frame, so the offset between them is kept exactly as the input had it.
/// (Rebasing each stream on its own first timestamp is the classic cause of A/V drift.)
public struct SharedTimeline: Sendable, Equatable {
    public private(set) var origin: UInt64?

    public init() {}

    public mutating func start(at runningTime: UInt64) {
        if origin == nil { origin = runningTime }
    }

    /// The output timestamp for an input running time; nil before the origin (audio that precedes
    /// the first video frame) or while the timeline has not started.
    public func rebase(_ runningTime: UInt64) -> UInt64? {
        guard let origin, runningTime >= origin, runningTime != UInt64.max else { return nil }
        return runningTime - origin
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
