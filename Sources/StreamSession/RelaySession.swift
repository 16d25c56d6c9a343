import Dispatch
import FoundationEssentials
import FrameKit
import Logging
import MediaBridge
import StreamPlan
import Synchronization

/// One stream from start to finish: the media relay, its periodic stats line and its stats file.
public final class RelaySession: Sendable {
    public struct Options: Sendable {
        public var input: InputEndpoint
        /// Where the stream goes: one encode, sent to each.
        public var outputs: [OutputEndpoint]
        public var settings: RelaySettings
        public var statsInterval: Double
        public var statsJSONPath: String?

        public init(input: InputEndpoint, outputs: [OutputEndpoint], settings: RelaySettings, statsInterval: Double, statsJSONPath: String?) {
            self.input = input
            self.outputs = outputs
            self.settings = settings
            self.statsInterval = statsInterval
            self.statsJSONPath = statsJSONPath
        }
    }

    private let options: Options
    private let relay: MediaRelay
    private let logger: Logger
    private let origin: Report

    public init(options: Options, library: PipelineLibrary, stage: FrameStage, logger: Logger) throws(MediaError) {
        self.options = options
        self.logger = logger
        origin = Report(counters: MediaRelay.Counters(), usage: ProcessUsage.now(), at: ContinuousClock.now)
        relay = try MediaRelay(input: options.input, outputs: options.outputs, settings: options.settings,
                               library: library, stage: stage, logger: logger)
    }

    public func requestStop() { relay.requestStop() }

    /// See `MediaRelay.observeChanges`.
    public func observeChanges(_ body: @escaping @Sendable (RelayChange) -> Void) { relay.observeChanges(body) }

    /// The next frame out as a JPEG; blocks up to `timeoutSeconds`. Safe from any thread.
    public func thumbnailJPEG(width: Int, timeoutSeconds: Double) -> [UInt8]? {
        relay.thumbnailJPEG(width: width, timeoutSeconds: timeoutSeconds)
    }

    /// The relay's counters now. Safe from any thread.
    public var counters: MediaRelay.Counters { relay.counters }

    /// Blocks until the relay is past its start; why it failed, if it did (see `MediaRelay.waitForStart`).
    public func waitForStart(until deadline: ContinuousClock.Instant, drainingUntil drainDeadline: ContinuousClock.Instant) -> MediaError? {
        relay.waitForStart(until: deadline, drainingUntil: drainDeadline)
    }

    /// One more output of the same encode (see `MediaRelay.addOutput`). Safe from any thread.
    public func addOutput(_ endpoint: OutputEndpoint) throws(MediaRelay.OutputChangeError) -> Int { try relay.addOutput(endpoint) }

    /// One output fewer (see `MediaRelay.removeOutput`). Safe from any thread.
    public func removeOutput(_ endpoint: OutputEndpoint) throws(MediaRelay.OutputChangeError) -> Int { try relay.removeOutput(endpoint) }

    /// Every output with its state and figures. Safe from any thread.
    public var outputs: [MediaRelay.OutputStatus] { relay.outputStatuses }

    /// The relay's phase and last output failure. Safe from any thread.
    public var status: (phase: RelayLifecycle.Phase, lastOutputError: String?) { relay.status }

    /// The figures of the whole stream so far (the process figures are the whole process's, read
    /// once by a caller that asks for many streams).
    public func statsSoFar(usage: ProcessUsage = .now()) -> StreamStats {
        stats(since: origin, until: Report(counters: relay.counters, usage: usage, at: .now))
    }

    /// The figures between two readings: what the stats file, the stats lines and `statsSoFar` report.
    private func stats(since earlier: Report, until now: Report) -> StreamStats {
        StreamStats(input: options.input.description, output: options.outputs.map(\.description).joined(separator: ", "), info: relay.streamInfo,
                    counters: now.counters, since: (earlier.counters, earlier.usage), usage: now.usage,
                    seconds: (now.at - earlier.at).inSeconds)
    }

    /// Relays until the input ends or a stop is requested; returns the figures of the whole stream.
    /// The stats file is written even when the stream fails.
    @discardableResult
    public func run() throws(MediaError) -> StreamStats {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "facerelay.stats"))
        let lastReport = LastReport(origin)
        timer.schedule(deadline: .now() + options.statsInterval, repeating: options.statsInterval)
        // The handler holds the session weakly and `run` waits for the timer's cancellation, which
        // Dispatch runs after any handler still running: once `run` returns, the timer's queue holds
        // nothing of the session, so the caller's last reference frees it (and stops its face
        // detection) on the caller's thread, not on that queue as the process exits.
        timer.setEventHandler { [weak self] in self?.logStats(since: lastReport) }
        let cancelled = DispatchSemaphore(value: 0)
        timer.setCancelHandler { cancelled.signal() }
        timer.resume()
        defer {
            timer.cancel()
            cancelled.wait()
        }

        var failure: MediaError?
        do {
            try relay.run()
        } catch {
            failure = error
        }
        let stats = statsSoFar()
        logger.info("stream ended \(stats.logLine)")
        if let path = options.statsJSONPath {
            do {
                try stats.json().write(to: URL(fileURLWithPath: path))
            } catch {
                logger.error("cannot write stats to \(path): \(error)")
            }
        }
        if let failure { throw failure }
        return stats
    }

    /// The periodic stats line, covering the time since the last one.
    private func logStats(since lastReport: LastReport) {
        let now = Report(counters: relay.counters, usage: ProcessUsage.now(), at: .now)
        logger.info("stats \(stats(since: lastReport.swap(now), until: now).logLine)")
    }
}

/// One reading of a stream's figures: its counters and the process's usage at an instant.
private struct Report: Sendable {
    var counters: MediaRelay.Counters
    var usage: ProcessUsage
    var at: ContinuousClock.Instant
}

/// The reading at the previous stats line, so that each line covers its own interval.
private final class LastReport: Sendable {
    private let last: Mutex<Report>

    init(_ first: Report) { last = Mutex(first) }

    /// The previous reading; `now` takes its place.
    func swap(_ now: Report) -> Report {
        last.withLock { last in
            defer { last = now }
            return last
        }
    }
}
