internal import CGStreamer
import FrameKit
import Logging
import StreamPlan

/// One relayed stream: ingest pipeline -> frame thread running the Swift stage -> encoder, encoded
/// once -> every output (RTMP, SRT, files), with audio carried beside it on the same timeline.
///
/// Threads: `run()` supervises (`RelaySupervisor`: buses, time-outs, each output's reconnects); a
/// frame thread pulls decoded frames and runs the stage (`VideoPump`); a packet thread hands each
/// encoded frame to every output (`RelayOutputs`); an audio thread moves AAC packets
/// (`AudioPump`). Each stops at end of input or on `requestStop()`, after which every output gets
/// end-of-stream so that files are finalised.
///
/// With an input grace period, a live input that ends is listened to again with a new ingest
/// pipeline (a new generation, `IngestGenerations`) while the egress waits; the returning
/// publisher's frames continue the same output on the same timeline (`OutputTimeline`), shifted to
/// follow on from where the last input stopped.
///
/// This type only puts the parts together and answers for them; each part keeps its own state.
public final class MediaRelay: Sendable {
    private let control: RelayControl
    private let generations: IngestGenerations
    private let outputs: RelayOutputs
    private let counting: RelayCounters
    private let thumbnails: ThumbnailTap
    private let videoPump: VideoPump
    private let audioPump: AudioPump
    private let supervisor: RelaySupervisor
    private let logger: Logger
    /// The prefix of this relay's thread names, by which its CPU time is told apart from other streams'.
    public let threadTag: ThreadTag

    /// `outputs`: where the stream goes, at least one; each is reconnected on its own.
    public init(input: InputEndpoint, outputs endpoints: [OutputEndpoint], settings: RelaySettings, library: PipelineLibrary,
                stage: FrameStage, logger: Logger) throws(MediaError) {
        try GStreamer.initialize()
        try GStreamer.checkRequiredElements()
        let threadTag = ThreadTag.unique()
        self.threadTag = threadTag
        self.logger = logger
        var policy = settings.lifecyclePolicy
        // A publisher comes back to the same RTMP key, an SRT caller to the same port (or the
        // broadcaster's listener takes our call again); a file that ends has ended.
        if case .file = input { policy.inputGrace = nil }
        // The pumps sleep until their appsinks queue something or the relay changes (a stop, a
        // new input generation, an input that ended): every change wakes them too.
        let samples = try ChangeSignal(pollable: false)
        let changes = try ChangeSignal(pollable: true, alsoWakes: samples)
        guard !endpoints.isEmpty else { throw MediaError(.output, "a stream needs at least one output") }
        control = RelayControl(lifecycle: RelayLifecycle(policy: policy, now: .now, outputs: endpoints.count), changes: changes)
        generations = try IngestGenerations(input: input, settings: settings, library: library, threadTag: threadTag,
                                            changes: changes, logger: logger)
        outputs = try RelayOutputs(input: input, outputs: endpoints, settings: settings, library: library, threadTag: threadTag, changes: changes)
        let live = settings.isLive(input)
        counting = RelayCounters(live: live)
        thumbnails = try ThumbnailTap()
        let timeline = OutputTimeline(changes: changes)
        let describer = InputErrorDescriber(input: input, settings: settings)
        videoPump = VideoPump(stage: stage, input: input, live: live, control: control, generations: generations,
                              samples: samples, outputs: outputs, timeline: timeline, counters: counting, thumbnails: thumbnails,
                              describer: describer, logger: logger)
        audioPump = AudioPump(input: input, control: control, generations: generations, samples: samples, outputs: outputs,
                              timeline: timeline, counters: counting, logger: logger)
        supervisor = RelaySupervisor(input: input, control: control, generations: generations,
                                     outputs: outputs, counters: counting, describer: describer, logger: logger)
    }

    public var counters: Counters {
        var counters = counting.snapshot(framesArrived: generations.framesArrived)
        counters.tracking = videoPump.trackingFigures
        counters.outputs = outputs.statuses
        counters.ingestBytes = generations.bytesReceived
        counters.threadCPUNanoseconds = ThreadCPUAccounting.shared.totals(for: threadTag)
        return counters
    }

    /// The next frame out (stickers drawn) as a JPEG `width` pixels wide (the height keeps the
    /// picture's shape), or nil when no frame comes
    /// within `timeoutSeconds` or it cannot be encoded. Blocks the calling thread, never the frame
    /// thread, which only hands over a reference to the frame.
    public func thumbnailJPEG(width: Int, timeoutSeconds: Double) -> [UInt8]? {
        thumbnails.jpeg(width: width, timeoutSeconds: timeoutSeconds, info: streamInfo, logger: logger)
    }

    /// Every output with its state and figures. Safe from any thread.
    public var outputStatuses: [OutputStatus] { outputs.statuses }

    /// Adds an output to the running stream (one more destination of the same encode); returns
    /// its number. The others are not touched. Safe from any thread.
    public func addOutput(_ endpoint: OutputEndpoint) throws(OutputChangeError) -> Int {
        guard !control.stopRequested else { throw .streamEnding }
        guard outputs.index(of: endpoint) == nil else { throw .duplicate(endpoint.description) }
        let index: Int
        do {
            index = try outputs.add(endpoint)
        } catch {
            throw .cannotStart(endpoint.description, error.description)
        }
        control.withLifecycle { $0.outputAdded() }
        logger.info("output added", metadata: ["output": "\(endpoint)", "index": "\(index)"])
        return index
    }

    /// Takes the output at `endpoint` out of the stream (a file is finalised); the others are not
    /// touched. The last output stays: stop the stream instead. Returns its number. Safe from any thread.
    public func removeOutput(_ endpoint: OutputEndpoint) throws(OutputChangeError) -> Int {
        guard let index = outputs.index(of: endpoint) else {
            throw .unknown(endpoint.description, outputs.statuses.filter { $0.state == .sending || $0.state == .reconnecting }.map(\.address))
        }
        guard outputs.activeCount > 1 else { throw .lastOutput(endpoint.description) }
        outputs.remove(index)
        control.withLifecycle { $0.outputRemoved(index) }
        logger.info("output removed", metadata: ["output": "\(endpoint)", "index": "\(index)"])
        return index
    }

    /// Why an output could not be added or removed.
    public enum OutputChangeError: Error, Sendable, Equatable {
        case duplicate(String)
        case unknown(String, [String])
        case lastOutput(String)
        case cannotStart(String, String)
        case streamEnding
    }

    /// The phase and the last output failure. Safe from any thread.
    public var status: (phase: RelayLifecycle.Phase, lastOutputError: String?) { control.status }

    /// Size, rate and audio of the stream, once the first frame has arrived.
    public var streamInfo: StreamInfo? { outputs.streamInfo }

    /// Has `body` told every change of the relay as it happens, on the relay's own threads: each
    /// new phase in order (from inside the lock that changed it), and `.other` for any other
    /// change (an output's state, the input). It must only hand the news on, never block or call
    /// back into the relay.
    public func observeChanges(_ body: @escaping @Sendable (RelayChange) -> Void) {
        control.observePhases(body)
        control.changes.observe { body(.other) }
    }

    /// Ends the stream cleanly: every output gets end-of-stream and is finalised. Safe from any thread.
    public func requestStop() { control.requestStop() }

    /// Relays until the input ends, `requestStop()` is called or something fails; then finalises
    /// the output. Throws what failed, after the output has been finalised.
    public func run() throws(MediaError) {
        do {
            try relayUntilEnd()
        } catch {
            control.runEnded(failure: error)
            throw error
        }
        control.runEnded(failure: nil)
    }

    /// Blocks until the relay is past its start: relaying, ended, or still starting at `deadline`.
    /// A relay that failed while starting is waited for while it finalises its output, up to
    /// `drainDeadline`. Returns why it failed, if it did within that time. Safe from any thread.
    public func waitForStart(until deadline: ContinuousClock.Instant, drainingUntil drainDeadline: ContinuousClock.Instant) -> MediaError? {
        _ = control.changes.wait(until: deadline) { control.outcome != nil || control.status.phase != .starting }
        guard control.outcome != nil || control.status.phase == .draining else { return nil }
        _ = control.changes.wait(until: drainDeadline) { control.outcome != nil }
        guard case .failure(let error) = control.outcome else { return nil }
        return error
    }

    private func relayUntilEnd() throws(MediaError) {
        ThreadCPUAccounting.shared.startSampling()
        try generations.ingest.start()
        let frameThread = try LoopThread(starting: "the relay's frame thread") { [videoPump, threadTag] in
            nameCurrentThread(threadTag.name(.frame))
            videoPump.run()
        }
        let audioThread: LoopThread
        do {
            audioThread = try LoopThread(starting: "the relay's audio thread") { [audioPump, threadTag] in
                nameCurrentThread(threadTag.name(.audio))
                audioPump.run()
            }
        } catch {
            control.requestStop()
            frameThread.join()
            throw error
        }
        let packetThread: LoopThread
        do {
            packetThread = try LoopThread(starting: "the relay's packet thread") { [outputs, control, threadTag] in
                nameCurrentThread(threadTag.name(.mux))
                outputs.relayEncodedPackets(control: control)
            }
        } catch {
            control.requestStop()
            frameThread.join()
            audioThread.join()
            throw error
        }
        defer {
            frameThread.join()
            audioThread.join()
            packetThread.join()
        }
        try supervisor.run()
    }
}

/// What `MediaRelay.observeChanges` tells.
public enum RelayChange: Sendable {
    /// The relay entered `phase`; `lastOutputError` as it was then.
    case phase(RelayLifecycle.Phase, lastOutputError: String?)
    /// Something else changed that its figures show: an output's state, the input.
    case other
}
