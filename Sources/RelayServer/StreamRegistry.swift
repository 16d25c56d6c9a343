import FaceStage
import FaceTracking
import FoundationEssentials
import Glibc
import JSONTree
import Logging
import MediaBridge
import StreamPlan
import StreamSession
import Synchronization

/// Every stream of `serve`, each relaying on its own thread: started from the control socket, by
/// nginx-rtmp's notifications or by an SRT listener, and stopped, switched and read from there.
/// One stream failing, ending or reconnecting touches no other: each has its own pipelines,
/// threads, tracker and queues; what they share (the landmark model, sticker layers) is read-only.
public final class StreamRegistry: Sendable {
    public typealias TrackerFactory = @Sendable (FaceTracker.Settings) throws -> FaceTracker

    public let config: ServeConfig
    public let catalog: StickerCatalog
    public let events: EventHub
    /// The configured webhooks, fed from `events`.
    public let webhooks: WebhookSender
    private let library: PipelineLibrary
    private let makeTracker: TrackerFactory
    let logger: Logger

    /// Everything the registry changes, behind one lock: the streams and the keys played (see
    /// StreamRegistry+Ingest.swift), so that a stream's end and its key's play change together.
    struct State {
        var streams: [String: ServedStream] = [:]
        var nextNumber = 1
        /// Stream keys nginx-rtmp reported a play for ("app/key"), so that a publish is let through
        /// only once its relay is listening: fired on its play, replaced when the play ends.
        var plays: [String: AsyncSignal] = [:]
        /// Ids taken by streams being set up.
        var reserved: Set<String> = []
        var shuttingDown = false
    }

    let state = Mutex(State())
    /// Each change of a stream's relay (its phases in order, any other change), by stream id, as
    /// it happens: their state and output events go out from `publishChangesAsTheyHappen`.
    let changedStreams = AsyncStream.makeStream(of: (stream: String, change: RelayChange).self, bufferingPolicy: .bufferingNewest(1024))

    public init(config: ServeConfig, catalog: StickerCatalog, events: EventHub, library: PipelineLibrary,
                makeTracker: @escaping TrackerFactory, logger: Logger) {
        self.config = config
        self.catalog = catalog
        self.events = events
        webhooks = WebhookSender(hooks: config.webhooks, events: events, logger: logger)
        self.library = library
        self.makeTracker = makeTracker
        self.logger = logger
    }

    // MARK: starting and stopping

    /// Starts a stream sent to each of `outputTexts` (one encode); returns its id. `stream` names
    /// it (default: the ingest key, or stream-N).
    @discardableResult
    public func start(input inputText: String, outputs outputTexts: [String], sticker: String?, stream: String?,
                      origin: StreamOrigin = .control) throws(ControlError) -> String {
        let input: InputEndpoint
        var outputs: [OutputEndpoint] = []
        do {
            input = try InputEndpoint(parsing: inputText)
        } catch {
            throw ControlError(.badInput, error.description)
        }
        guard !outputTexts.isEmpty else { throw ControlError(.badOutput, "a stream needs at least one output") }
        for text in outputTexts {
            let output = try Self.output(text)
            guard !outputs.contains(output) else {
                throw ControlError(.badOutput, "output \(output) is given twice: each output gets the stream once")
            }
            outputs.append(output)
        }
        if let stream, !StickerCatalog.isPlainName(stream) {
            throw ControlError(.badArgument, "stream name '\(stream)' must be 1-64 letters, digits, '-', '_' or '.'")
        }
        let look: FaceLook
        do {
            look = try catalog.look(named: sticker ?? config.defaults.sticker)
        } catch {
            throw ControlError(Self.code(of: error), error.description)
        }
        let tracker: FaceTracker
        do {
            tracker = try makeTracker(config.defaults.tracking)
        } catch {
            throw ControlError(.vision, "\(error)")
        }
        let id = try reserveID(stream, origin: origin)
        var streamLogger = logger
        streamLogger[metadataKey: "stream"] = "\(id)"
        let events = events
        let stage = FaceTrackingStage(tracker: tracker, look: look) { event in Self.publish(event, of: id, to: events) }
        var settings = config.defaults.relay
        // A configured SRT listener waits as long as it takes for its broadcaster to call.
        if case .srtListener = origin { settings.inputTimeoutSeconds = 0 }
        let session: RelaySession
        do {
            session = try RelaySession(options: .init(input: input, outputs: outputs, settings: settings,
                                                      statsInterval: config.defaults.statsIntervalSeconds, statsJSONPath: nil),
                                       library: library, stage: stage, logger: streamLogger)
        } catch {
            release(id)
            throw ControlError(.startFailed, error.description)
        }
        let served = ServedStream(id: id, input: input, outputs: outputs, origin: origin, stage: stage, session: session)
        let admitted = state.withLock { state -> Bool in
            state.reserved.remove(id)
            // A start that raced `stopAll` past its count of the streams would run unstopped.
            guard !state.shuttingDown else { return false }
            state.streams[id] = served
            return true
        }
        guard admitted else { throw ControlError(.shuttingDown, "the service is stopping; start the stream again once it is back") }
        session.observeChanges { [changed = changedStreams.continuation] change in changed.yield((id, change)) }
        streamLogger.info("stream started", metadata: ["input": "\(input)", "outputs": "\(outputs.map(\.description).joined(separator: ", "))", "sticker": "\(look.name)"])
        _ = LoopThread(detached: true) { [self, streamLogger] in
            var failure: MediaError?
            do throws(MediaError) {
                try session.run()
            } catch {
                failure = error
            }
            ended(served, failure: failure, logger: streamLogger)
        } whenFreed: { [threadFreed = served.threadFreed] in
            threadFreed.fire()
        }
        if origin == .control {
            // A control client is told at once when its input cannot be read (refused, missing,
            // not media) rather than getting a stream id for a stream already gone.
            // A failing stream drains (finalising its output) before it has finished: wait for that too.
            let deadline = ContinuousClock.now + .seconds(2)
            if let failure = session.waitForStart(until: deadline, drainingUntil: deadline + .seconds(5)) {
                throw ControlError(.startFailed, failure.description)
            }
        }
        return id
    }

    /// Takes a stream id for a new stream, so that two starts at once cannot both get it.
    private func reserveID(_ requested: String?, origin: StreamOrigin) throws(ControlError) -> String {
        let result: Result<String, ControlError> = state.withLock { state in
            if state.shuttingDown { return .failure(ControlError(.shuttingDown, "the service is stopping; start the stream again once it is back")) }
            if let requested {
                guard state.streams[requested] == nil, !state.reserved.contains(requested) else {
                    return .failure(ControlError(.streamExists, "a stream named '\(requested)' is running; stop it first or choose another name"))
                }
                state.reserved.insert(requested)
                return .success(requested)
            }
            var base: String
            switch origin {
            case .rtmpPublish(_, let key): base = Self.plainName(key)
            case .srtListener(let index): base = "srt-\(index)"
            case .control:
                base = "stream-\(state.nextNumber)"
                state.nextNumber += 1
            }
            var candidate = base, suffix = 2
            while state.streams[candidate] != nil || state.reserved.contains(candidate) {
                candidate = "\(base)-\(suffix)"
                suffix += 1
            }
            state.reserved.insert(candidate)
            return .success(candidate)
        }
        return try result.get()
    }

    private func release(_ id: String) {
        _ = state.withLock { $0.reserved.remove(id) }
    }

    private func ended(_ stream: ServedStream, failure: MediaError?, logger: Logger) {
        let restart = state.withLock { state -> Bool in
            if state.streams[stream.id] === stream { state.streams[stream.id] = nil }
            if case .rtmpPublish(let app, let key) = stream.origin { state.playEnded("\(app)/\(key)") }
            if case .srtListener = stream.origin { return !state.shuttingDown }
            return false
        }
        var event: JSONValue = ["event": "stream", "stream": .string(stream.id), "state": failure == nil ? "ended" : "failed"]
        if let failure {
            event = event.adding("reason", .string(failure.description))
            logger.error("stream failed: \(failure)")
        }
        events.publish(.stream, event)
        // Last: `stopAll` ends the event streams once every stream has finished, so the stream's
        // ended or failed event must be published before.
        stream.finish(failure: failure)
        if restart, case .srtListener(let index) = stream.origin {
            // The broadcaster left: listen again for the next one, after a pause so that a listener
            // that cannot start does not spin.
            _ = LoopThread(detached: true) { [self] in
                usleep(1_000_000)
                startSRTListener(index)
            }
        }
    }

    /// Asks a stream to end; its output is finalised and it leaves the registry once done.
    public func stop(_ id: String) throws(ControlError) {
        guard let stream = state.withLock({ $0.streams[id] }) else { throw unknownStream(id) }
        stream.session.requestStop()
    }

    /// Switches a stream's sticker from its next frame on.
    public func setSticker(_ id: String, to name: String) throws(ControlError) {
        guard let stream = state.withLock({ $0.streams[id] }) else { throw unknownStream(id) }
        do {
            stream.stage.replaceLook(with: try catalog.look(named: name))
        } catch {
            throw ControlError(Self.code(of: error), error.description)
        }
    }

    /// Sends stream `id` to one more output, from its next keyframe; returns the output's number.
    public func addOutput(_ outputText: String, to id: String) throws(ControlError) -> Int {
        try changeOutputs(of: id, outputText) { session, output throws(MediaRelay.OutputChangeError) in try session.addOutput(output) }
    }

    /// Takes an output out of stream `id` (a file is finalised); returns the output's number.
    public func removeOutput(_ outputText: String, from id: String) throws(ControlError) -> Int {
        try changeOutputs(of: id, outputText) { session, output throws(MediaRelay.OutputChangeError) in try session.removeOutput(output) }
    }

    private func changeOutputs(of id: String, _ outputText: String,
                               _ change: (RelaySession, OutputEndpoint) throws(MediaRelay.OutputChangeError) -> Int) throws(ControlError) -> Int {
        guard let stream = state.withLock({ $0.streams[id] }) else { throw unknownStream(id) }
        let output = try Self.output(outputText)
        do {
            return try change(stream.session, output)
        } catch {
            throw Self.controlError(error)
        }
    }

    private static func output(_ text: String) throws(ControlError) -> OutputEndpoint {
        do {
            return try OutputEndpoint(parsing: text)
        } catch {
            throw ControlError(.badOutput, error.description)
        }
    }

    private static func controlError(_ error: MediaRelay.OutputChangeError) -> ControlError {
        switch error {
        case .duplicate(let address):
            ControlError(.duplicateOutput, "the stream already sends to \(address)")
        case .unknown(let address, let outputs):
            ControlError(.unknownOutput, "the stream does not send to \(address); its outputs: \(outputs.joined(separator: ", "))")
        case .lastOutput(let address):
            ControlError(.lastOutput, "\(address) is the stream's only output: stop the stream instead")
        case .cannotStart(let address, let reason):
            ControlError(.outputFailed, "output \(address) could not start: \(reason); the stream's other outputs go on")
        case .streamEnding:
            ControlError(.shuttingDown, "the stream is ending")
        }
    }

    func unknownStream(_ id: String) -> ControlError {
        let names = state.withLock { $0.streams.keys.sorted() }
        return ControlError(.unknownStream, "no stream '\(id)'; running: \(names.isEmpty ? "none" : names.joined(separator: ", "))")
    }

    static func code(of error: StickerChoiceError) -> ControlError.Code {
        switch error {
        case .notAName: .badStickerName
        case .unknown: .unknownSticker
        case .broken: .brokenSticker
        }
    }

    /// A stream key as a stream id: letters, digits and `-_.` kept, anything else replaced.
    static func plainName(_ key: String) -> String {
        let kept = String(key.prefix(64).map { $0.isLetter || $0.isNumber || "-_".contains($0) ? $0 : "_" })
        return kept.isEmpty || kept.hasPrefix(".") ? "stream" : kept
    }

    /// Every stream, by id.
    var streams: [ServedStream] {
        state.withLock { Array($0.streams.values) }.sorted { $0.id < $1.id }
    }

    func stream(_ id: String) -> ServedStream? { state.withLock { $0.streams[id] } }

    // MARK: shutdown

    /// Ends every stream cleanly (end-of-stream to each output) and waits, bounded, until all are done.
    public func stopAll(timeout: Duration = .seconds(15)) async {
        let all = state.withLock { state in
            state.shuttingDown = true
            return Array(state.streams.values)
        }
        for stream in all { stream.session.requestStop() }
        let deadline = ContinuousClock.now + timeout
        // Each stream's thread, not only its `finished`: the thread lets go of the session just
        // after, and a session freed while the process exits would free GStreamer elements whose
        // libraries (libsrt) exit has already torn down. The sessions are freed here, with `all`.
        for stream in all { await stream.threadFreed.wait(upTo: deadline - .now) }
        events.finishAll()
    }
}
