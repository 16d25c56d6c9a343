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
