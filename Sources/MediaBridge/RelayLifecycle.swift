/// The life of one relayed stream as a small state machine, apart from GStreamer: the relay's
/// supervisor tells it what happened and asks it what to do; the policies (start time-out, output
/// retry backoff, giving up, drain time-out) are plain values, so they are tested without media.
///
///     starting --first frame--> relaying --every output failed--> reconnecting --one accepted--> relaying
///        |                         |                                   |
///        +----- stop / input end --+------------> draining <-----------+
///
/// Each output of the stream has its own outage (`OutputOutage`): a failed output is rebuilt after
/// a pause that doubles with every attempt that fails, up to a cap, while the other outputs go on;
/// it is given up after `giveUpAfter`, if set. The stream is `reconnecting` only while nothing
/// goes out at all.
///
/// With an input grace period, a live input that ends is awaited instead of ending the stream:
///
///     relaying --input lost--> awaitingInput --frames again--> relaying   (same output, timeline continued)
///                                    |  input restarted every second while the publisher is away
///                                    +--grace over--> draining
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
        /// How long a live input that ended (its publisher gone or stalled) is awaited before the
        /// stream ends; its return within this time continues the same output. Nil: ends at once.
        public var inputGrace: Duration?
        /// The pause before listening to the input again after it ended, and between attempts.
        public var inputRetryDelay: Duration

        public init(startTimeout: Duration?, firstRetryDelay: Duration = .seconds(1), maximumRetryDelay: Duration = .seconds(4),
                    giveUpAfter: Duration?, drainTimeout: Duration = .seconds(10), acceptedAfter: Duration = .seconds(2),
                    inputGrace: Duration? = nil, inputRetryDelay: Duration = .milliseconds(250)) {
            self.startTimeout = startTimeout
            self.firstRetryDelay = firstRetryDelay
            self.maximumRetryDelay = maximumRetryDelay
            self.giveUpAfter = giveUpAfter
            self.drainTimeout = drainTimeout
            self.acceptedAfter = acceptedAfter
            self.inputGrace = inputGrace
            self.inputRetryDelay = inputRetryDelay
        }
    }

    public enum Phase: String, Sendable, Equatable {
        case starting, relaying, reconnecting, awaitingInput, draining
    }

    /// What the supervisor should do now.
    public enum Decision: Sendable, Equatable {
        case wait
        /// Build this output again.
        case retryOutput(Int)
        /// This rebuilt output has run long enough: its upstream took the stream.
        case outputAccepted(Int)
        /// No first frame within the start time-out.
        case failNoInput
        /// This output stayed unreachable past `giveUpAfter`.
        case giveUpOutput(Int)
        /// The output did not finish within the drain time-out: close it anyway.
        case stopDraining
        /// Listen to the ended input again (a new connection to the same address).
        case restartInput
        /// The input did not come back within the grace period: end the stream cleanly.
        case endAwaitedInput
    }

    /// One output's outage: from its failure until a rebuilt output has stayed up for `acceptedAfter`.
    public struct OutputOutage: Sendable, Equatable {
        public let started: ContinuousClock.Instant
        public fileprivate(set) var lastError: String
        fileprivate var retryDelay: Duration
        fileprivate var nextRetry: ContinuousClock.Instant?
        fileprivate var rebuiltAt: ContinuousClock.Instant?
    }

    public let policy: Policy
    public private(set) var phase = Phase.starting
    /// The last error of any output.
    public private(set) var lastOutputError: String?
    /// The outputs the stream sends to, down or not.
    public private(set) var outputCount: Int
    /// The outputs that are down, by the relay's number for them.
    public private(set) var outages: [Int: OutputOutage] = [:]
    private let started: ContinuousClock.Instant
    private var drainStarted: ContinuousClock.Instant?
    /// When the input ended, while it is awaited.
    public private(set) var awaitingInputSince: ContinuousClock.Instant?
    private var nextInputAttempt: ContinuousClock.Instant?

    public init(policy: Policy, now: ContinuousClock.Instant, outputs: Int = 1) {
        self.policy = policy
        started = now
        outputCount = outputs
    }

    public mutating func firstFrame() {
        if phase == .starting { phase = .relaying }
    }

    /// Output `output` reported an error: wait, then rebuild it; a rebuilt output that fails again
    /// before being accepted doubles the wait.
    public mutating func outputFailed(_ output: Int, _ error: String, at now: ContinuousClock.Instant) {
        guard phase != .draining else { return }
        lastOutputError = error
        var outage = outages[output] ?? OutputOutage(started: now, lastError: error, retryDelay: policy.firstRetryDelay / 2)
        outage.lastError = error
        outage.retryDelay = min(outage.retryDelay * 2, policy.maximumRetryDelay)
        outage.nextRetry = now + outage.retryDelay
        outage.rebuiltAt = nil
        outages[output] = outage
        if outages.count >= outputCount { phase = .reconnecting }
    }

    /// Output `output` was built again (not yet known to be accepted).
    public mutating func outputRebuilt(_ output: Int, at now: ContinuousClock.Instant) {
        outages[output]?.nextRetry = nil
        outages[output]?.rebuiltAt = now
    }

    /// The rebuild itself failed (the output could not even start): try again later.
    public mutating func outputRebuildFailed(_ output: Int, _ error: String, at now: ContinuousClock.Instant) {
        outputFailed(output, error, at: now)
    }

    /// A new output joined the stream.
    public mutating func outputAdded() {
        outputCount += 1
        if phase == .reconnecting { phase = awaitingInputSince == nil ? .relaying : .awaitingInput }
    }

    /// Output `output` left the stream (removed, or given up): its outage ends with it.
    public mutating func outputRemoved(_ output: Int) {
        outages[output] = nil
        outputCount = max(0, outputCount - 1)
        if phase == .reconnecting, outages.count < outputCount { phase = awaitingInputSince == nil ? .relaying : .awaitingInput }
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
        if let awaitingInputSince, let grace = policy.inputGrace {
            if now - awaitingInputSince > grace { return .endAwaitedInput }
            if let nextInputAttempt, now >= nextInputAttempt { return .restartInput }
        }
        if phase == .starting, let timeout = policy.startTimeout, now - started > timeout { return .failNoInput }
        for (output, outage) in outages.sorted(by: { $0.key < $1.key }) {
            if let rebuiltAt = outage.rebuiltAt, now - rebuiltAt >= policy.acceptedAfter { return .outputAccepted(output) }
            if let nextRetry = outage.nextRetry, now >= nextRetry {
                if let giveUp = policy.giveUpAfter, now - outage.started > giveUp { return .giveUpOutput(output) }
                return .retryOutput(output)
            }
        }
        return .wait
    }

    /// The first instant after `now` at which `decide` may answer otherwise than it does at `now`
    /// with nothing else happening: the supervisor sleeps until then, or until an event. Nil when
    /// only an event (a frame, a bus message, a stop) can change the decision.
    public func nextDeadline(after now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        // `decide` compares some times with `>`: their decision changes a tick after the time itself.
        let tick = Duration.nanoseconds(1)
        var candidates: [ContinuousClock.Instant?] = []
        if let drainStarted {
            candidates = [drainStarted + policy.drainTimeout + tick]
        } else {
            if let awaitingInputSince, let grace = policy.inputGrace {
                candidates += [awaitingInputSince + grace + tick, nextInputAttempt]
            }
            if phase == .starting { candidates.append(policy.startTimeout.map { started + $0 + tick }) }
            for outage in outages.values { candidates += [outage.rebuiltAt.map { $0 + policy.acceptedAfter }, outage.nextRetry] }
        }
        return candidates.compactMap { $0 }.filter { $0 > now }.min()
    }

    /// Call after `.outputAccepted(output)`: its outage is over.
    public mutating func outputAccepted(_ output: Int) {
        outages[output] = nil
        if phase == .reconnecting { phase = awaitingInputSince == nil ? .relaying : .awaitingInput }
    }

    /// Whether an input that ends now is awaited rather than ending the stream: only once it
    /// has delivered frames, with a grace period, and not while the stream is being stopped.
    public var awaitsLostInput: Bool { policy.inputGrace != nil && phase != .starting && drainStarted == nil }

    /// The input ended (its publisher left, stalled past the idle time-out, or its connection
    /// broke). Call only when `awaitsLostInput`. A second report while awaited changes nothing.
    public mutating func inputLost(at now: ContinuousClock.Instant) {
        guard awaitsLostInput, awaitingInputSince == nil else { return }
        awaitingInputSince = now
        nextInputAttempt = now + policy.inputRetryDelay
        if phase == .relaying { phase = .awaitingInput }
    }

    /// The input is listened to again; frames follow once the publisher is back.
    public mutating func inputRestarted() {
        nextInputAttempt = nil
    }

    /// The restarted input failed before any frame (the server refused it...): try again after a
    /// second; or it `ended` (the stream it joined was unpublished): listen again at once, so that
    /// a publisher returning now is heard from its first frame.
    public mutating func inputRestartFailed(at now: ContinuousClock.Instant, ended: Bool = false) {
        guard awaitingInputSince != nil else { return }
        nextInputAttempt = now + (ended ? policy.inputRetryDelay : max(policy.inputRetryDelay, .seconds(1)))
    }

    /// Frames came again: the stream goes on. Returns how long the input was away.
    @discardableResult
    public mutating func inputResumed(at now: ContinuousClock.Instant) -> Duration? {
        guard let since = awaitingInputSince else { return nil }
        awaitingInputSince = nil
        nextInputAttempt = nil
        if phase == .awaitingInput { phase = .relaying }
        return now - since
    }

    /// How long output `output` has been down, if it is.
    public func outage(of output: Int, at now: ContinuousClock.Instant) -> Duration? { outages[output].map { now - $0.started } }
}
