import CGStreamer
import Dispatch
import FoundationEssentials
import FrameKit
import Logging
import StreamPlan
import Synchronization

/// One relayed stream: ingest pipeline -> frame thread running the Swift stage -> egress pipeline,
/// with audio carried beside it on the same timeline.
///
/// Threads: `run()` supervises (buses, time-outs, reconnects); a frame thread pulls decoded frames
/// and runs the stage; an audio thread moves AAC packets. Each stops at end of input or on
/// `requestStop()`, after which the egress gets end-of-stream so that files are finalised.
///
/// With an input grace period, a live input that ends is listened to again with a new ingest
/// pipeline (a new generation) while the egress waits; the returning publisher's frames continue
/// the same output on the same timeline, shifted to follow on from where the last input stopped.
///
/// `@unchecked Sendable` because of three members the compiler cannot prove: `stage`, not Sendable,
/// used on the frame thread but for `trackingFigures`, which `FrameStage` makes readable from any
/// thread; and `videoTimestamps` and `outputStartedAt`, used on the frame thread only. What the
/// supervisor, the audio thread and callers share is in a Mutex (`shared`) or an Atomic.
public final class MediaRelay: @unchecked Sendable {
    public struct Counters: Sendable, Equatable {
        /// Decoded frames that reached the relay.
        public var framesIn = 0
        /// Frames handed to the encoder.
        public var framesOut = 0
        /// Frames that reached the relay but not the encoder (a live input outrunning the stage, an
        /// output reconnecting).
        public var framesDropped = 0
        /// Thread CPU time spent in the Swift stage (analyse, copy, draw), all frames together.
        public var stageCPUNanoseconds: UInt64 = 0
        public var audioPacketsOut = 0
        public var outputReconnects = 0
        /// Video frames whose input timestamp went backwards and was moved forward.
        public var timestampsRepaired = 0
        /// Frames of a live input that went by before the relay was listening: estimated from the
        /// first frame's own timestamp (a stream's timestamps start at 0 when its publisher starts).
        public var framesMissedAtStart = 0
        /// The stage's face-tracking totals, when it tracks faces.
        public var tracking: TrackingFigures?
        /// CPU nanoseconds of the relay's threads, by what they do (see `ThreadRole`).
        public var threadCPUNanoseconds: [ThreadRole: UInt64] = [:]
        /// Frames the stage drew on (each a copy from the pool of drawn frames).
        public var framesDrawn = 0
        /// Decoded frames the relay can hold at once: the ingest's queue and the encoder's input queue.
        public var frameQueueCapacity = 0
        /// Drawn frames the relay can hold at once, in its pool.
        public var drawnFramePoolCapacity = Int(EgressPipeline.poolBuffers)

        public init() {}

        init(framesIn: Int, framesOut: Int, framesDropped: Int, stageCPUNanoseconds: UInt64, audioPacketsOut: Int, outputReconnects: Int, timestampsRepaired: Int) {
            self.framesIn = framesIn
            self.framesOut = framesOut
            self.framesDropped = framesDropped
            self.stageCPUNanoseconds = stageCPUNanoseconds
            self.audioPacketsOut = audioPacketsOut
            self.outputReconnects = outputReconnects
            self.timestampsRepaired = timestampsRepaired
        }
    }

    public struct StreamInfo: Sendable {
        public let width: Int
        public let height: Int
        public let framesPerSecond: Double
        public let hasAudio: Bool

        public init(width: Int, height: Int, framesPerSecond: Double, hasAudio: Bool) {
            self.width = width
            self.height = height
            self.framesPerSecond = framesPerSecond
            self.hasAudio = hasAudio
        }
    }

    private let input: InputEndpoint
    private let output: OutputEndpoint
    private let settings: RelaySettings
    private let library: PipelineLibrary
    private let logger: Logger
    /// Used on the frame thread only, but for `trackingFigures`.
    private let stage: FrameStage
    private let egressFiles: [String]

    private struct Shared {
        /// The input being listened to; replaced (next generation) when an awaited input is restarted.
        var ingest: IngestPipeline
        var ingestGeneration = 0
        /// The last generation whose input ended (its stream, or an error such as the idle
        /// time-out, which reaches no appsink): its readers wait for the next one. A new
        /// generation still waiting for its broadcaster has not ended.
        var endedGeneration: Int?
        /// Frames that reached the appsinks of earlier generations.
        var framesArrivedEarlier = 0
        var egress: EgressPipeline?
        /// The video caps the egress was built for, kept to rebuild it after an output failure.
        var videoCaps: CapsPointer?
        var info: StreamInfo?
        var timeline = SharedTimeline()
        var stopRequested = false
        var videoFinished = false
        var audioFinished = false
        var failure: MediaError?
        var lifecycle: RelayLifecycle
    }
    private let shared: Mutex<Shared>
    private let framesPulled = Atomic<Int>(0)
    private let framesOut = Atomic<Int>(0)
    private let framesDiscarded = Atomic<Int>(0)
    private let audioPacketsOut = Atomic<Int>(0)
    private let outputReconnects = Atomic<Int>(0)
    private let timestampsRepaired = Atomic<Int>(0)
    private let framesMissedAtStart = Atomic<Int>(0)
    private let framesDroppedByIngest = Atomic<Int>(0)
    private let framesDrawn = Atomic<Int>(0)
    /// Set by `thumbnailJPEG`: the frame thread hands the next frame out to `thumbnailFrame`.
    private let thumbnailWanted = Atomic<Bool>(false)
    private let thumbnailFrame = Mutex<SampleReference?>(nil)
    /// Used on the frame thread only.
    private var videoTimestamps = MonotonicTimestamps()
    /// When the output's timeline started (its first frame). Used on the frame thread only.
    private var outputStartedAt: ContinuousClock.Instant?
    private let stageCPU = Atomic<UInt64>(0)
    /// The latest audio or video timestamp handed to the egress: where a returning input continues.
    private let latestOutputTime = Atomic<UInt64>(0)
    /// The latest video timestamp handed to the egress: how far the video has gone without audio.
    private let latestVideoTime = Atomic<UInt64>(0)
    /// How far the video may run ahead of the last audio packet before the input's audio counts
    /// as stopped. Below the egress queue's 3 s, which a muxer waiting for audio would fill.
    static let audioStoppedAfter: UInt64 = 2_000_000_000
    /// The prefix of this relay's thread names, by which its CPU time is told apart from other streams'.
    public let threadTag = ThreadTag.unique()

    public init(input: InputEndpoint, output: OutputEndpoint, settings: RelaySettings, library: PipelineLibrary,
                stage: FrameStage, logger: Logger) throws(MediaError) {
        try GStreamer.initialize()
        try GStreamer.checkRequiredElements()
        self.input = input
        self.output = output
        self.settings = settings
        self.library = library
        self.stage = stage
        self.logger = logger
        var policy = settings.lifecyclePolicy
        // A publisher comes back to the same RTMP key, an SRT caller to the same port (or the
        // broadcaster's listener takes our call again); a file that ends has ended.
        if case .file = input { policy.inputGrace = nil }
        let ingest = try IngestPipeline(input: input, settings: settings, library: library, threadTag: threadTag, logger: logger)
        shared = Mutex(Shared(ingest: ingest, lifecycle: RelayLifecycle(policy: policy, now: .now)))
        egressFiles = ["egress.gst", "sink-\(Self.sinkKind(output)).gst", "egress-audio.gst"].map { library.directory + "/" + $0 }
        // Build the egress once with stand-in values so that a broken template fails now, not when
        // the first frame arrives.
        let trial = try Self.egressDescription(library: library, input: input, output: output, fps: 30, withAudio: true, settings: settings)
        fr_unref(try GStreamer.parse(trial, files: egressFiles))
    }

    deinit {
        shared.withLock { shared in
            if let caps = shared.videoCaps { gst_caps_unref(caps.pointer) }
        }
        if let sample = thumbnailFrame.withLock({ $0 }) { fr_sample_unref(sample.pointer) }
    }

    static func sinkKind(_ output: OutputEndpoint) -> String {
        switch output {
        case .rtmp: return "rtmp"
        case .srt: return "srt"
        case .file(_, let container): return container.rawValue
        }
    }

    static func egressDescription(library: PipelineLibrary, input: InputEndpoint, output: OutputEndpoint, fps: Double, withAudio: Bool, settings: RelaySettings) throws(MediaError) -> String {
        do {
            return try library.egressDescription(for: output, framesPerSecond: fps, withAudio: withAudio,
                                                 live: settings.isLive(input), settings: settings)
        } catch {
            throw MediaError(.pipelineTemplate, error.description)
        }
    }

    /// The input being listened to now.
    private var ingest: IngestPipeline { shared.withLock { $0.ingest } }

    /// Decoded frames that reached the video appsinks of every input generation so far.
    private var framesArrived: Int {
        shared.withLock { $0.framesArrivedEarlier + $0.ingest.framesArrived }
    }

    public var counters: Counters {
        let pulled = framesPulled.load(ordering: .relaxed)
        let arrived = max(framesArrived, pulled)
        // The appsink drops the oldest frame silently once it holds its capacity: of the frames
        // that arrived and were not pulled, all but the capacity are certainly gone. Counted as
        // a high-water mark, so the figure never goes down while frames wait in the queue.
        let certainlyDropped = max(0, arrived - pulled - PipelineLibrary.videoQueueCapacity(live: settings.isLive(input)))
        let dropped = framesDroppedByIngest.max(certainlyDropped, ordering: .relaxed).newValue
        var counters = Counters(
            framesIn: arrived,
            framesOut: framesOut.load(ordering: .relaxed),
            framesDropped: dropped + framesDiscarded.load(ordering: .relaxed),
            stageCPUNanoseconds: stageCPU.load(ordering: .relaxed),
            audioPacketsOut: audioPacketsOut.load(ordering: .relaxed),
            outputReconnects: outputReconnects.load(ordering: .relaxed),
            timestampsRepaired: timestampsRepaired.load(ordering: .relaxed))
        counters.framesMissedAtStart = framesMissedAtStart.load(ordering: .relaxed)
        counters.tracking = stage.trackingFigures
        counters.threadCPUNanoseconds = ThreadCPUAccounting.shared.totals(for: threadTag)
        counters.framesDrawn = framesDrawn.load(ordering: .relaxed)
        counters.frameQueueCapacity = PipelineLibrary.videoQueueCapacity(live: settings.isLive(input)) + PipelineLibrary.encoderQueueCapacity
        return counters
    }

    /// The next frame out (stickers drawn) as a JPEG `width` pixels wide (the height keeps the
    /// picture's shape), or nil when no frame comes
    /// within `timeoutSeconds` or it cannot be encoded. Blocks the calling thread, never the frame
    /// thread, which only hands over a reference to the frame.
    public func thumbnailJPEG(width: Int, timeoutSeconds: Double) -> [UInt8]? {
        thumbnailWanted.store(true, ordering: .relaxed)
        let deadline = ContinuousClock.now + .milliseconds(Int(timeoutSeconds * 1000))
        var taken: SampleReference?
        while taken == nil, ContinuousClock.now < deadline {
            taken = thumbnailFrame.withLock { slot in defer { slot = nil }; return slot }
            if taken == nil { sleep(seconds: 0.01) }
        }
        guard let sample = taken?.pointer else { return nil }
        defer { fr_sample_unref(sample) }
        var message: UnsafeMutablePointer<CChar>?
        let info = streamInfo
        // Even sizes: the encoder's chroma planes are half the picture's.
        let height = info.map { max(2, Int((Double(width) * Double($0.height) / Double(max($0.width, 1)) / 2).rounded()) * 2) } ?? width * 9 / 16
        guard let jpeg = fr_sample_to_jpeg(sample, gint(width), gint(height), GstClockTime(1_000_000_000), &message) else {
            logger.warning("cannot make a thumbnail: \(GStreamer.takeString(message) ?? "unknown error")")
            return nil
        }
        defer { fr_buffer_unref(jpeg) }
        var bytes = [UInt8](repeating: 0, count: Int(fr_buffer_size(jpeg)))
        _ = bytes.withUnsafeMutableBufferPointer { fr_buffer_extract_all(jpeg, $0.baseAddress, gsize($0.count)) }
        return bytes
    }

    /// The phase and the last output failure. Safe from any thread.
    public var status: (phase: RelayLifecycle.Phase, lastOutputError: String?) {
        shared.withLock { ($0.lifecycle.phase, $0.lifecycle.lastOutputError) }
    }

    /// Size, rate and audio of the stream, once the first frame has arrived.
    public var streamInfo: StreamInfo? { shared.withLock { $0.info } }

    /// Ends the stream cleanly: the output gets end-of-stream and is finalised. Safe from any thread.
    public func requestStop() {
        shared.withLock { $0.stopRequested = true }
    }

    private var stopRequested: Bool { shared.withLock { $0.stopRequested } }

    // MARK: supervisor

    /// Relays until the input ends, `requestStop()` is called or something fails; then finalises
    /// the output. Throws what failed, after the output has been finalised.
    public func run() throws(MediaError) {
        ThreadCPUAccounting.shared.startSampling()
        try ingest.start()
        let frameThread = LoopThread { [self] in
            nameCurrentThread(threadTag.name(.frame))
            frameLoop()
        }
        let audioThread = LoopThread { [self] in
            nameCurrentThread(threadTag.name(.audio))
            audioLoop()
        }
        defer {
            frameThread.join()
            audioThread.join()
        }

        var missingPlugin: MissingPlugin?
        var egressFinished = false

        func fail(_ error: MediaError) {
            shared.withLock { shared in
                if shared.failure == nil { shared.failure = error }
                shared.stopRequested = true
            }
        }

        supervising: while true {
            if let event = GStreamer.popBus(ingest.pipeline, timeoutNanoseconds: 20_000_000) {
                switch event {
                case .error(let error):
                    let everStarted = shared.withLock { $0.info != nil }
                    if awaitInput(ended: error.summary, cleanly: false) {
                        break
                    } else if everStarted, case .rtmp = input, error.domain == .resource {
                        // Once media has flowed, a read error of an RTMP pull (the idle time-out
                        // included) means the publisher has gone: the end of its stream.
                        logger.info("input ended: \(error.summary)", metadata: ["input": "\(input)"])
                        requestStop()
                    } else {
                        fail(describeInputError(error, missingPlugin: missingPlugin))
                    }
                case .missingPlugin(let missing):
                    noteMissingPlugin(missing, into: &missingPlugin)
                case .warning(let source, let text):
                    logger.warning("input: \(text)", metadata: ["element": "\(source)"])
                case .endOfStream:
                    // The appsinks see it too: without a grace period, the threads finish the stream.
                    _ = awaitInput(ended: liveInputEndReason, cleanly: true)
                }
            }
            let streams = ingest.snapshot
            if let failure = streams.failure { fail(failure) }
            if streams.allPadsKnown, streams.videoSink == nil {
                // decodebin tells of a video it cannot decode before it announces its last pad, but
                // that message may still wait on the bus: read it, so that the error names the codec.
                while let event = GStreamer.popBus(ingest.pipeline, timeoutNanoseconds: 0) {
                    if case .missingPlugin(let missing) = event { noteMissingPlugin(missing, into: &missingPlugin) }
                }
                if let missingPlugin, missingPlugin.isVideoDecoder {
                    fail(undecodableInput(missingPlugin))
                } else {
                    fail(MediaError(.input, "input \(input) has no video stream\(streams.audioSink == nil ? "" : " (only audio)"); FaceRelay needs a video stream"))
                }
            }

            let egress = shared.withLock { $0.egress }
            if let egress, let event = GStreamer.popBus(egress.pipeline, timeoutNanoseconds: 20_000_000) {
                switch event {
                case .endOfStream:
                    egressFinished = true
                case .error(let error):
                    if output.isNetwork, !stopRequested {
                        // A dead upstream: stop feeding this egress (frames are dropped and
                        // counted meanwhile) and rebuild it after the lifecycle's pause.
                        logger.warning("output failed, reconnecting", metadata: ["output": "\(output)", "error": "\(error.summary)"])
                        shared.withLock { shared in
                            shared.egress = nil
                            shared.lifecycle.outputFailed(error.summary, at: .now)
                        }
                        ThreadCPUAccounting.shared.sampleNow()
                        fr_set_state(egress.pipeline, GST_STATE_NULL)
                    } else {
                        fail(MediaError(.output, "output \(output) failed: \(error.summary)"))
                        egressFinished = true
                    }
                case .warning(let source, let text):
                    logger.warning("output: \(text)", metadata: ["element": "\(source)"])
                case .missingPlugin(let missing):
                    fail(MediaError(.setup, "output needs a GStreamer plugin that is missing: \(missing.description)"))
                }
            } else if egress == nil {
                sleep(seconds: 0.02)
            }

            let state = shared.withLock { shared in
                if shared.stopRequested || (shared.videoFinished && shared.audioFinished) { shared.lifecycle.drain(at: .now) }
                return shared
            }
            let threadsDone = state.videoFinished && state.audioFinished
            if threadsDone, state.egress == nil || egressFinished { break }
            switch state.lifecycle.decide(at: .now) {
            case .wait:
                break
            case .retryOutput:
                do {
                    try rebuildEgress()
                    shared.withLock { $0.lifecycle.outputRebuilt(at: .now) }
                } catch {
                    logger.warning("output reconnect failed: \(error)", metadata: ["output": "\(output)"])
                    shared.withLock { $0.lifecycle.outputRebuildFailed(error.description, at: .now) }
                }
            case .outputAccepted:
                shared.withLock { $0.lifecycle.outputAccepted() }
                outputReconnects.add(1, ordering: .relaxed)
                logger.info("output reconnected", metadata: ["output": "\(output)"])
            case .failNoInput:
                fail(MediaError(.input, noMediaMessage()))
            case .failOutputUnreachable:
                let seconds = state.lifecycle.policy.giveUpAfter.map { "\($0.components.seconds) s" } ?? ""
                fail(MediaError(.output, "output \(output) unreachable for \(seconds), giving up; last error: \(state.lifecycle.lastOutputError ?? "none")"))
            case .restartInput:
                restartInput()
            case .endAwaitedInput:
                let grace = state.lifecycle.policy.inputGrace.map { formatted($0.inSeconds, decimals: 1) } ?? "0"
                logger.info("the input did not come back within its grace period of \(grace) s; ending the stream", metadata: ["input": "\(input)"])
                requestStop()
            case .stopDraining:
                if threadsDone {
                    logger.warning("output did not finish within \(state.lifecycle.policy.drainTimeout) of end-of-stream; closing it anyway", metadata: ["output": "\(output)"])
                    break supervising
                }
            }
        }
        // The streaming threads end with their pipelines: what they spent since the last sample
        // is read first.
        ThreadCPUAccounting.shared.sampleNow()
        fr_set_state(ingest.pipeline, GST_STATE_NULL)
        let final = shared.withLock { shared in
            let egress = shared.egress
            shared.egress = nil
            return (egress, shared.failure)
        }
        if let egress = final.0 { fr_set_state(egress.pipeline, GST_STATE_NULL) }
        if let failure = final.1 { throw failure }
        if shared.withLock({ $0.info == nil && !$0.stopRequested }) {
            throw MediaError(.input, "input \(input) ended without a single video frame; it needs a video stream")
        }
    }

    private func noMediaMessage() -> String {
        let wait = "\(settings.inputTimeoutSeconds) s"
        // A demuxer told to expect video (an RTMP pull's FLV header always announces both tracks)
        // waits for it and never says there is none: audio alone is the broadcaster's mistake,
        // not a silent input.
        let streams = ingest.snapshot
        let onlyAudio = streams.audioSink != nil || streams.demuxedKinds.contains("audio") && !streams.demuxedKinds.contains("video")
        if onlyAudio, streams.videoSink == nil {
            return "input \(input) has no video stream (only audio for \(wait)); FaceRelay needs a video stream: check the broadcaster's video source and encoder"
        }
        switch input {
        case .rtmp(let url):
            return "no video from \(url) within \(wait): is the stream key publishing? (raise --input-timeout to wait longer)"
        case .srtListener:
            // The input's description, not its URI: the URI holds the passphrase.
            let refused = ingest.lastSRTRefusal.map { "; the last caller was refused: \($0)" } ?? ""
            return "no broadcaster sent video to \(input) within \(wait) (raise --input-timeout, or 0 to wait forever)\(refused)"
        case .srtCaller:
            return "no video from \(input) within \(wait): is the SRT listener up? (raise --input-timeout to wait longer)"
        case .file(let path):
            return "no video decoded from \(path) within \(wait)"
        }
    }

    /// Keeps the missing plugin that matters most (a video decoder: without it there is no stream)
    /// and says so when only a secondary stream (audio, data) is lost to it.
    private func noteMissingPlugin(_ missing: MissingPlugin, into kept: inout MissingPlugin?) {
        if kept?.isVideoDecoder != true { kept = missing }
        if missing.decodedMediaType != nil, !missing.isVideoDecoder {
            logger.warning("input \(input) carries \(missing.what), which GStreamer on this machine cannot decode; relaying without it",
                           metadata: ["input": "\(input)"])
        }
    }

    private func undecodableInput(_ missing: MissingPlugin) -> MediaError {
        if missing.isVideoDecoder {
            return MediaError(.input, "input \(input) carries \(missing.what), which GStreamer on this machine cannot decode; have the broadcaster send H.264 or H.265 video, or install a GStreamer plugin that decodes it")
        }
        return MediaError(.input, "input \(input) needs a GStreamer plugin that is not installed (\(missing.what)); install gstreamer1.0-libav and gstreamer1.0-plugins-bad, or send H.264 video")
    }

    private func describeInputError(_ error: BusError, missingPlugin: MissingPlugin?) -> MediaError {
        // nginx-rtmp ends a play nobody publishes to after a while, which can come before the input
        // time-out; the demuxer then sees end-of-stream before any data.
        if case .rtmp(let url) = input, shared.withLock({ $0.info == nil }), error.isUnrecognisedMedia {
            return MediaError(.input, "no video from \(url): the server ended the stream before any data came; is the stream key publishing?")
        }
        if let missingPlugin { return undecodableInput(missingPlugin) }
        if error.isUnrecognisedMedia {
            return MediaError(.input, "input \(input) is not a media stream GStreamer recognises (\(error.text)); send FLV, MP4, MKV or MPEG-TS with H.264 video")
        }
        if error.isMissingCodec {
            return MediaError(.input, "input \(input) uses a codec this machine cannot decode: \(error.text); send H.264 video")
        }
        switch error.domain {
        case .resource:
            return MediaError(.input, "cannot read input \(input): \(error.summary); check the address and that the server is up")
        case .stream:
            return MediaError(.input, "input \(input) is damaged or unsupported: \(error.summary)")
        case .other:
            return MediaError(.input, "input \(input) failed: \(error.summary)")
        }
    }

    // MARK: egress

    /// `framesPerSecond` 0 (a variable-rate input) sets keyframes as for 30 fps.
    private func buildEgress(videoCaps: UnsafeMutablePointer<GstCaps>, framesPerSecond: Double, withAudio: Bool) throws(MediaError) -> EgressPipeline {
        let fps = framesPerSecond > 0 ? framesPerSecond : 30
        let description = try Self.egressDescription(library: library, input: input, output: output, fps: fps, withAudio: withAudio, settings: settings)
        let egress = try EgressPipeline(description: description, files: egressFiles, videoCaps: videoCaps, withAudio: withAudio, threadTag: threadTag)
        try egress.start()
        return egress
    }

    private func rebuildEgress() throws(MediaError) {
        guard let (caps, info) = shared.withLock({ shared in shared.videoCaps.flatMap { caps in shared.info.map { (caps, $0) } } }) else { return }
        let egress = try buildEgress(videoCaps: caps.pointer, framesPerSecond: info.framesPerSecond, withAudio: info.hasAudio)
        shared.withLock { $0.egress = egress }
    }

    // MARK: input grace

    /// With a grace period, a live input that ended is awaited: listened to again rather than
    /// ending the stream; while awaited, another end of a restarted input is one more attempt.
    /// False when the end is the stream's end.
    private func awaitInput(ended reason: String, cleanly: Bool) -> Bool {
        let (awaited, newlyLost) = shared.withLock { shared -> (Bool, Bool) in
            shared.endedGeneration = shared.ingestGeneration
            if shared.lifecycle.awaitingInputSince != nil {
                shared.lifecycle.inputRestartFailed(at: .now, ended: cleanly)
                return (true, false)
            }
            guard shared.lifecycle.awaitsLostInput else { return (false, false) }
            shared.lifecycle.inputLost(at: .now)
            return (true, true)
        }
        if newlyLost {
            let grace = shared.withLock { $0.lifecycle.policy.inputGrace }.map { formatted($0.inSeconds, decimals: 1) } ?? "0"
            logger.warning("input ended (\(reason)); waiting up to \(grace) s for it to come back, the output stays open", metadata: ["input": "\(input)"])
        }
        return awaited
    }

    /// Why a live input's stream ended: rtmp2src ends it the same way for a publisher that
    /// stopped and for one silent past the idle time-out.
    private var liveInputEndReason: String {
        if case .rtmp = input, settings.idleTimeoutSeconds > 0 {
            return "the publisher stopped, or sent nothing for \(settings.idleTimeoutSeconds) s"
        }
        return "the broadcaster stopped"
    }

    /// Listens to the awaited input again with a new ingest pipeline, at the size the output was
    /// opened with. The old pipeline is stopped first: an SRT listener needs its port back.
    private func restartInput() {
        let old = ingest
        ThreadCPUAccounting.shared.sampleNow()
        fr_set_state(old.pipeline, GST_STATE_NULL)
        do {
            let fresh = try IngestPipeline(input: input, settings: settings, library: library, threadTag: threadTag, logger: logger)
            if let info = streamInfo {
                fresh.lockVideoSize(width: info.width, height: info.height)
                if !info.hasAudio { fresh.refuseAudio() }
            }
            try fresh.start()
            shared.withLock { shared in
                shared.framesArrivedEarlier += old.framesArrived
                shared.ingest = fresh
                shared.ingestGeneration += 1
                shared.lifecycle.inputRestarted()
            }
            logger.debug("listening to the input again", metadata: ["input": "\(input)"])
        } catch {
            logger.debug("cannot listen to the input again yet: \(error)", metadata: ["input": "\(input)"])
            shared.withLock { $0.lifecycle.inputRestartFailed(at: .now) }
        }
    }

    /// Whether an input that ends now (or has ended) is awaited rather than ending the stream.
    private var inputEndIsAwaited: Bool {
        shared.withLock { $0.lifecycle.awaitsLostInput || $0.lifecycle.awaitingInputSince != nil }
    }

    /// Whether the input generation an appsink belongs to has ended: its stream ended, or the
    /// supervisor saw it end (an error such as the idle time-out reaches no appsink).
    private func inputHasEnded(_ sink: UnsafeMutablePointer<GstElement>, generation: Int) -> Bool {
        fr_appsink_is_eos(sink) != 0 || shared.withLock { $0.endedGeneration == generation }
    }

    /// Waits until the supervisor has listened to the input again (a new generation), or a stop.
    private func waitForNextInput(after generation: Int) {
        while !stopRequested, shared.withLock({ $0.ingestGeneration == generation }) { sleep(seconds: 0.01) }
    }

    // MARK: frame thread

    private func frameLoop() {
        defer {
            shared.withLock { $0.egress }?.endVideo()
            shared.withLock { $0.videoFinished = true }
        }
        let mapped = UnsafeMutablePointer<GstVideoFrame>.allocate(capacity: 1)
        let drawn = UnsafeMutablePointer<GstVideoFrame>.allocate(capacity: 1)
        defer {
            mapped.deallocate()
            drawn.deallocate()
        }
        // The ingest hands over its first frames without dropping any (see IngestPipeline): a
        // live input catches up on them under back-pressure, then drops the oldest frames again
        // (the template's `drop`) as soon as none is waiting, so that a stage that falls behind
        // loses frames rather than delay; a stage too slow ever to catch up gets there after
        // `catchUpLimit` all the same. Each generation of the input starts so again.
        var source: (ingest: IngestPipeline, sink: UnsafeMutablePointer<GstElement>, generation: Int)?
        var catchingUp = false
        var firstFrameAt: ContinuousClock.Instant?
        while !stopRequested {
            let (current, generation) = shared.withLock { ($0.ingest, $0.ingestGeneration) }
            if source?.generation != generation {
                source = nil
                switch waitForSink(\.videoSink, of: current, generation: generation) {
                case .found(let sink):
                    source = (current, sink, generation)
                    catchingUp = settings.isLive(input)
                    firstFrameAt = nil
                case .absent, .superseded:
                    continue
                }
            }
            guard let (_, sink, generation) = source else { continue }
            if catchingUp, let firstFrameAt, ContinuousClock.now - firstFrameAt > Self.catchUpLimit {
                fr_set_bool(sink, "drop", 1)
                catchingUp = false
            }
            // Caught up once no frame comes for 50 ms, longer than a live input's frames are apart:
            // a decoder working through the backlog on a busy machine leaves shorter gaps.
            guard let sample = fr_appsink_pull(sink, catchingUp && firstFrameAt != nil ? 50_000_000 : 100_000_000) else {
                if inputHasEnded(sink, generation: generation) {
                    guard inputEndIsAwaited else {
                        if input.isLive { logger.info("input ended: \(liveInputEndReason)", metadata: ["input": "\(input)"]) }
                        break
                    }
                    waitForNextInput(after: generation)
                    continue
                }
                if catchingUp && firstFrameAt != nil {
                    fr_set_bool(sink, "drop", 1)
                    catchingUp = false
                }
                continue
            }
            framesPulled.add(1, ordering: .relaxed)
            relay(sample: sample, from: sink, mapped: mapped, drawn: drawn, resumingInput: generation > 0 && firstFrameAt == nil ? generation : nil)
            if firstFrameAt == nil { firstFrameAt = .now }
            fr_sample_unref(sample)
        }
    }

    /// The longest a live input's start-up backlog is relayed under back-pressure (a demuxer's
    /// 6 s of held frames take about 2 s at three times real time).
    static let catchUpLimit = Duration.seconds(10)

    private enum SinkWait {
        case found(UnsafeMutablePointer<GstElement>)
        /// The input has no such stream.
        case absent
        /// A stop, or the input was listened to again meanwhile.
        case superseded
    }

    private func waitForSink(_ path: KeyPath<IngestPipeline.Streams, ElementPointer?>, of ingest: IngestPipeline, generation: Int) -> SinkWait {
        while !stopRequested, shared.withLock({ $0.ingestGeneration == generation }) {
            let streams = ingest.snapshot
            if let sink = streams[keyPath: path] { return .found(sink.pointer) }
            // Audio: once the video has started without an audio stream, there is none to wait for;
            // an input that came back says so by announcing all its streams.
            if path == \.audioSink, streams.allPadsKnown || generation == 0 && shared.withLock({ $0.info != nil }) {
                if streams.audioSink == nil { return .absent }
            }
            sleep(seconds: 0.01)
        }
        return .superseded
    }

    /// The first frame decides the output: its caps, and whether an audio stream is there to carry.
    private func startEgress(caps: UnsafeMutablePointer<GstCaps>, runningTime: UInt64, videoSink: UnsafeMutablePointer<GstElement>) -> EgressPipeline? {
        // Building the egress takes a moment (x264 start-up) while a live input keeps coming: hold
        // the frames (back-pressure) instead of letting the appsink drop them, then restore.
        let dropsFrames = fr_get_bool(videoSink, "drop")
        fr_set_bool(videoSink, "drop", 0)
        defer { fr_set_bool(videoSink, "drop", dropsFrames) }
        // decodebin announces audio and video pads separately: give the audio pad a moment.
        let deadline = ContinuousClock.now + .seconds(1)
        while !ingest.snapshot.allPadsKnown, ingest.snapshot.audioSink == nil, ContinuousClock.now < deadline, !stopRequested {
            sleep(seconds: 0.01)
        }
        let withAudio = ingest.snapshot.audioSink != nil
        logger.debug("egress start: waited for the audio pad", metadata: ["seconds": "\(ContinuousClock.now - deadline + .seconds(1))", "audio": "\(withAudio)"])
        let info = UnsafeMutablePointer<GstVideoInfo>.allocate(capacity: 1)
        defer { info.deallocate() }
        gst_video_info_init(info)
        _ = gst_video_info_from_caps(info, caps)
        let fpsN = fr_video_info_fps_n(info), fpsD = fr_video_info_fps_d(info)
        let streamInfo = StreamInfo(width: Int(fr_video_info_width(info)), height: Int(fr_video_info_height(info)),
                                    framesPerSecond: fpsN > 0 && fpsD > 0 ? Double(fpsN) / Double(fpsD) : 0, hasAudio: withAudio)
        do {
            let egress = try buildEgress(videoCaps: caps, framesPerSecond: streamInfo.framesPerSecond, withAudio: withAudio)
            gst_caps_ref(caps)
            let videoCaps = CapsPointer(pointer: caps)
            shared.withLock { shared in
                shared.egress = egress
                shared.videoCaps = videoCaps
                shared.info = streamInfo
                shared.lifecycle.firstFrame()
                shared.timeline.start(at: runningTime)
            }
            ingest.lockVideoSize(width: streamInfo.width, height: streamInfo.height)
            if !withAudio { ingest.refuseAudio() }
            logger.info("relaying", metadata: [
                "input": "\(input)", "output": "\(output)",
                "video": "\(streamInfo.width)x\(streamInfo.height) @ \(formatted(streamInfo.framesPerSecond, decimals: 2)) fps",
                "audio": "\(withAudio ? (ingest.snapshot.audioIsPassThrough ? "AAC kept as is" : "encoded to AAC") : "none")",
            ])
            return egress
        } catch {
            shared.withLock { shared in
                if shared.failure == nil { shared.failure = error }
                shared.stopRequested = true
            }
            return nil
        }
    }

    /// A live input joined late (a player of nginx-rtmp gets a running stream from its next
    /// keyframe on) starts with a timestamp past zero: say how much of the broadcast was missed.
    private func noteMissedStart(firstTimestamp: GstClockTime, frameDuration: GstClockTime) {
        // Only RTMP stamps a broadcast from zero at its start: MPEG-TS (over SRT) carries the
        // encoder's clock, which starts anywhere (1.4 s is ffmpeg's habit).
        guard case .rtmp = input, firstTimestamp != GstClockTime.max, frameDuration > 0, frameDuration != GstClockTime.max else { return }
        let missed = Int((firstTimestamp + frameDuration / 2) / frameDuration)
        // B-frames put a broadcast's first picture a few frames past zero (0.067 s is common):
        // only more than a quarter of a second counts as missed; over a minute is not a start.
        guard firstTimestamp > 250_000_000, firstTimestamp < 60_000_000_000 else { return }
        framesMissedAtStart.store(missed, ordering: .relaxed)
        logger.warning("joined the input \(formatted(Double(firstTimestamp) / 1e9, decimals: 2)) s after it started: about \(missed) frames were missed before the relay was listening", metadata: ["input": "\(input)"])
    }

    /// `resumingInput`: the generation of an input that came back, on its first frame.
    private func relay(sample: OpaquePointer, from sink: UnsafeMutablePointer<GstElement>, mapped: UnsafeMutablePointer<GstVideoFrame>,
                       drawn: UnsafeMutablePointer<GstVideoFrame>, resumingInput: Int?) {
        let runningTime = UInt64(fr_sample_running_time(sample))
        guard let caps = fr_sample_caps(sample), let buffer = fr_sample_buffer(sample), runningTime != UInt64.max else {
            framesDiscarded.add(1, ordering: .relaxed)
            return
        }
        var (egress, timeline, storedCaps) = shared.withLock { ($0.egress, $0.timeline, $0.videoCaps) }
        let knownCaps = storedCaps?.pointer
        if knownCaps == nil {
            guard let started = startEgress(caps: caps, runningTime: runningTime, videoSink: sink) else { return }
            egress = started
            timeline.start(at: runningTime)
            noteMissedStart(firstTimestamp: fr_buffer_pts(buffer), frameDuration: fr_buffer_duration(buffer))
            outputStartedAt = .now
        } else if let generation = resumingInput {
            timeline = continueTimeline(at: runningTime, frameDuration: UInt64(fr_buffer_duration(buffer)), generation: generation)
        } else if let knownCaps, knownCaps != caps, gst_caps_is_equal(knownCaps, caps) == 0, !sameGeometry(knownCaps, caps) {
            let text = GStreamer.takeString(fr_caps_string(caps)) ?? ""
            shared.withLock { shared in
                if shared.failure == nil {
                    shared.failure = MediaError(.input, "input \(input) changed its picture size or format mid-stream (now \(text)); restart the relay for the new format")
                }
                shared.stopRequested = true
            }
            return
        }
        // A video frame stamped before the first one (start-up jitter of a live input) is kept,
        // clamped to the origin and then repaired; only audio is trimmed before the origin.
        guard let egress, let rebased = timeline.rebase(max(runningTime, timeline.origin ?? runningTime)) else {
            framesDiscarded.add(1, ordering: .relaxed)
            return
        }
        let pts = videoTimestamps.next(rebased)
        if pts != rebased {
            timestampsRepaired.add(1, ordering: .relaxed)
            logger.debug("input video timestamp went backwards; moved forward", metadata: ["by_ms": "\(Double(pts - rebased) / 1e6)"])
        }
        let cpuBefore = threadCPUNanoseconds()
        guard gst_video_frame_map(mapped, egress.videoInfo, buffer, GST_MAP_READ) != 0 else {
            framesDiscarded.add(1, ordering: .relaxed)
            return
        }
        let duration = UInt64(fr_buffer_duration(buffer))
        let frame = videoFrame(mapped, pts: pts, duration: duration)
        // A live input's queue drops frames once full: the stage is told how full it is, so that
        // it can lighten its work first. A file's queue is meant to fill.
        let live = settings.isLive(input)
        stage.noteBacklog(queued: max(0, framesArrived - framesPulled.load(ordering: .relaxed)),
                          capacity: live ? PipelineLibrary.videoQueueCapacity(live: true) : 0)
        var output: UnsafeMutablePointer<GstBuffer>?
        if stage.analyse(frame) == .draw, let pooled = egress.acquireFrameBuffer() {
            if gst_video_frame_map(drawn, egress.videoInfo, pooled, GST_MAP_WRITE) != 0 {
                _ = gst_video_frame_copy(drawn, mapped)
                stage.draw(on: videoFrame(drawn, pts: pts, duration: duration))
                framesDrawn.add(1, ordering: .relaxed)
                gst_video_frame_unmap(drawn)
                output = pooled
            } else {
                fr_buffer_unref(pooled)
            }
        }
        gst_video_frame_unmap(mapped)
        let outgoing = output ?? fr_sample_take_buffer(sample)!
        stageCPU.add(threadCPUNanoseconds() - cpuBefore, ordering: .relaxed)
        fr_buffer_set_timing(outgoing, GstClockTime(pts), GstClockTime(duration))
        if thumbnailWanted.load(ordering: .relaxed), thumbnailWanted.exchange(false, ordering: .relaxed) {
            // The sample holds its own reference: the buffer returns to its pool once converted.
            let sample = SampleReference(pointer: fr_sample_new(outgoing, caps))
            if let previous = thumbnailFrame.withLock({ slot in defer { slot = sample }; return slot }) { fr_sample_unref(previous.pointer) }
        }
        latestOutputTime.max(pts, ordering: .relaxed)
        latestVideoTime.max(pts, ordering: .relaxed)
        if egress.pushVideo(outgoing) {
            framesOut.add(1, ordering: .relaxed)
        } else {
            framesDiscarded.add(1, ordering: .relaxed)
        }
    }

    /// The first frame of an input that came back is placed at the real time passed since the
    /// output started, and after every audio and video packet sent: the output's timeline goes on
    /// in real time (the pause a stall or a reconnection took included), never back. (The time of
    /// the last frame sent would not do: a stalled input's decoder lets its last frames go only
    /// when the input is given up.)
    private func continueTimeline(at runningTime: UInt64, frameDuration: UInt64, generation: Int) -> SharedTimeline {
        let step = frameDuration > 0 && frameDuration != UInt64(GstClockTime.max) ? frameDuration : 33_333_333
        let elapsed = outputStartedAt.map { UInt64(max(0, (ContinuousClock.now - $0).inSeconds) * 1e9) } ?? 0
        let outputTime = max(latestOutputTime.load(ordering: .relaxed) + step, elapsed)
        let (timeline, away) = shared.withLock { shared in
            let away = shared.lifecycle.inputResumed(at: .now) ?? .zero
            shared.timeline.resume(at: runningTime, outputTime: outputTime, generation: generation)
            return (shared.timeline, away)
        }
        logger.info("input back after \(formatted(away.inSeconds, decimals: 1)) s; continuing the same output", metadata: [
            "input": "\(input)", "output": "\(output)", "at_s": "\(formatted(Double(timeline.rebase(runningTime) ?? 0) / 1e9, decimals: 2))",
        ])
        return timeline
    }

    private func sameGeometry(_ a: UnsafeMutablePointer<GstCaps>, _ b: UnsafeMutablePointer<GstCaps>) -> Bool {
        let first = UnsafeMutablePointer<GstVideoInfo>.allocate(capacity: 2)
        defer { first.deallocate() }
        gst_video_info_init(first)
        gst_video_info_init(first + 1)
        guard gst_video_info_from_caps(first, a) != 0, gst_video_info_from_caps(first + 1, b) != 0 else { return false }
        return fr_video_info_width(first) == fr_video_info_width(first + 1)
            && fr_video_info_height(first) == fr_video_info_height(first + 1)
            && fr_video_info_format(first) == fr_video_info_format(first + 1)
    }

    // MARK: audio thread

    private func audioLoop() {
        defer {
            shared.withLock { $0.egress }?.endAudio()
            shared.withLock { $0.audioFinished = true }
        }
        var capsSetOn: (egress: ObjectIdentifier, generation: Int)?
        var source: (ingest: IngestPipeline, sink: UnsafeMutablePointer<GstElement>, generation: Int)?
        var lastAudioTime: UInt64 = 0
        /// The egress whose audio was ended because the input's audio stopped.
        var audioEndedOn: ObjectIdentifier?
        while !stopRequested {
            let (current, generation) = shared.withLock { ($0.ingest, $0.ingestGeneration) }
            if source?.generation != generation {
                source = nil
                switch waitForSink(\.audioSink, of: current, generation: generation) {
                case .found(let sink):
                    // Audio is not pulled until this input's first video frame has fixed its place
                    // on the timeline: the appsink holds it meanwhile, and packets from just before
                    // that frame are trimmed below.
                    while !stopRequested, shared.withLock({ $0.ingestGeneration == generation && ($0.info == nil || $0.timeline.generation != generation) }) {
                        sleep(seconds: 0.005)
                    }
                    source = (current, sink, generation)
                case .absent:
                    guard inputEndIsAwaited else { return }
                    waitForNextInput(after: generation)
                    continue
                case .superseded:
                    continue
                }
            }
            guard let (_, sink, generation) = source else { continue }
            guard let sample = fr_appsink_pull(sink, 100_000_000) else {
                if inputHasEnded(sink, generation: generation) {
                    guard inputEndIsAwaited else { break }
                    waitForNextInput(after: generation)
                    continue
                }
                // An audio stream can stop without an end (an MPEG-TS program that drops it): once
                // the video has ended, or gone on too far without it, the muxer must not wait for it.
                if shared.withLock({ $0.videoFinished }) { break }
                if let egress = shared.withLock({ $0.egress }), egress.hasAudio, audioEndedOn != ObjectIdentifier(egress),
                   latestVideoTime.load(ordering: .relaxed) > lastAudioTime + Self.audioStoppedAfter {
                    logger.warning("the input's audio stopped at \(formatted(Double(lastAudioTime) / 1e9, decimals: 2)) s while its video goes on; relaying the video alone", metadata: ["input": "\(input)"])
                    egress.endAudio()
                    audioEndedOn = ObjectIdentifier(egress)
                }
                continue
            }
            defer { fr_sample_unref(sample) }
            let (egress, timeline) = shared.withLock { ($0.egress, $0.timeline) }
            // Audio from before the first video frame, and while the output reconnects, is dropped.
            guard let egress, egress.hasAudio, audioEndedOn != ObjectIdentifier(egress), timeline.generation == generation,
                  let pts = timeline.rebase(UInt64(fr_sample_running_time(sample))),
                  let caps = fr_sample_caps(sample), let buffer = fr_sample_take_buffer(sample) else { continue }
            if capsSetOn?.egress != ObjectIdentifier(egress) || capsSetOn?.generation != generation {
                egress.setAudioCaps(caps)
                capsSetOn = (ObjectIdentifier(egress), generation)
            }
            fr_buffer_set_timing(buffer, GstClockTime(pts), fr_buffer_duration(buffer))
            latestOutputTime.max(pts, ordering: .relaxed)
            lastAudioTime = pts
            if egress.pushAudio(buffer) { audioPacketsOut.add(1, ordering: .relaxed) }
        }
    }
}

/// One reference to a GstSample, handed from the frame thread to a thumbnail request.
/// `@unchecked Sendable`: a GstSample is immutable once made and its reference count is atomic;
/// the value carries the one reference it owns from thread to thread, and its receiver unrefs it.
private struct SampleReference: @unchecked Sendable {
    let pointer: OpaquePointer
}
