/// The life of one relayed stream as a small state machine, apart from GStreamer: the relay's
/// supervisor tells it what happened and asks it what to do; the policies (start time-out, output
/// retry backoff, giving up, drain time-out) are plain values, so they are tested without media.
///
///     starting --first frame--> relaying --output failed--> reconnecting --output accepted--> relaying
///        |                         |                            |  retry failed: wait twice as long, up to the cap
///        +----- stop / input end --+------------> draining <----+  (gives up after `giveUpAfter`, if set)
public struct RelayLifecycle: Sendable {
    public struct Policy: Sendable, Equatable {
        /// How long the input may take to deliver its first frame; nil waits for ever.
        public var startTimeout: Duration?
        /// The first pause before rebuilding a failed output; each failed attempt doubles it...
        public var firstRetryDelay: Duration
        /// ...up to this cap.
        public var maximumRetryDelay: Duration
        /// How long an output may stay unreachable before the stream fails; nil retries for ever.
        public var giveUpAfter: Duration?
        /// How long the output may take to finish (flush, finalise a file) once the input has ended.
        public var drainTimeout: Duration
        /// How long a rebuilt output must run without error to count as accepted by the upstream.
        public var acceptedAfter: Duration

        public init(startTimeout: Duration?, firstRetryDelay: Duration = .seconds(1), maximumRetryDelay: Duration = .seconds(4),
                    giveUpAfter: Duration?, drainTimeout: Duration = .seconds(10), acceptedAfter: Duration = .seconds(2)) {
            self.startTimeout = startTimeout
            self.firstRetryDelay = firstRetryDelay
            self.maximumRetryDelay = maximumRetryDelay
            self.giveUpAfter = giveUpAfter
            self.drainTimeout = drainTimeout
            self.acceptedAfter = acceptedAfter
        }
    }

    public enum Phase: String, Sendable, Equatable {
        case starting, relaying, reconnecting, draining
    }

    /// What the supervisor should do now.
    public enum Decision: Sendable, Equatable {
        case wait
        /// Build the output again.
        case retryOutput
        /// The rebuilt output has run long enough: the upstream took the stream.
        case outputAccepted
        /// No first frame within the start time-out.
        case failNoInput
        /// The output stayed unreachable past `giveUpAfter`.
        case failOutputUnreachable
        /// The output did not finish within the drain time-out: close it anyway.
        case stopDraining
    }

    public let policy: Policy
    public private(set) var phase = Phase.starting
    public private(set) var lastOutputError: String?
    private let started: ContinuousClock.Instant
    private var outageStarted: ContinuousClock.Instant?
    private var retryDelay: Duration
    private var nextRetry: ContinuousClock.Instant?
    private var rebuiltAt: ContinuousClock.Instant?
    private var drainStarted: ContinuousClock.Instant?

    public init(policy: Policy, now: ContinuousClock.Instant) {
        self.policy = policy
        started = now
        retryDelay = policy.firstRetryDelay
    }

    public mutating func firstFrame() {
        if phase == .starting { phase = .relaying }
    }

    /// The output reported an error: wait, then rebuild it; a rebuilt output that fails again
    /// before being accepted doubles the wait.
    public mutating func outputFailed(_ error: String, at now: ContinuousClock.Instant) {
        guard phase != .draining else { return }
        lastOutputError = error
        if outageStarted == nil {
            outageStarted = now
            retryDelay = policy.firstRetryDelay
        } else {
            retryDelay = min(retryDelay * 2, policy.maximumRetryDelay)
        }
        nextRetry = now + retryDelay
        rebuiltAt = nil
        phase = .reconnecting
    }

    /// The output was built again (not yet known to be accepted).
    public mutating func outputRebuilt(at now: ContinuousClock.Instant) {
        nextRetry = nil
        rebuiltAt = now
    }

    /// The rebuild itself failed (the output could not even start): try again later.
    public mutating func outputRebuildFailed(_ error: String, at now: ContinuousClock.Instant) {
        outputFailed(error, at: now)
    }

    /// The input ended or a stop was asked for: only the output's finishing is left.
    public mutating func drain(at now: ContinuousClock.Instant) {
        if drainStarted == nil { drainStarted = now }
        phase = .draining
    }

    public func decide(at now: ContinuousClock.Instant) -> Decision {
        if let drainStarted {
            return now - drainStarted > policy.drainTimeout ? .stopDraining : .wait
        }
        switch phase {
        case .starting:
            if let timeout = policy.startTimeout, now - started > timeout { return .failNoInput }
        case .reconnecting:
            if let rebuiltAt, now - rebuiltAt >= policy.acceptedAfter { return .outputAccepted }
            if let nextRetry, now >= nextRetry {
                if let giveUp = policy.giveUpAfter, let outageStarted, now - outageStarted > giveUp { return .failOutputUnreachable }
                return .retryOutput
            }
        case .relaying, .draining:
            break
        }
        return .wait
    }

    /// Call after `.outputAccepted`: the outage is over.
    public mutating func outputAccepted() {
        outageStarted = nil
        rebuiltAt = nil
        retryDelay = policy.firstRetryDelay
        if phase == .reconnecting { phase = .relaying }
    }

    /// How long the output has been down, if it is.
    public func outage(at now: ContinuousClock.Instant) -> Duration? { outageStarted.map { now - $0 } }
}
