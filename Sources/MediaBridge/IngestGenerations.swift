internal import CGStreamer
import Logging
import StreamPlan
import Synchronization

/// The input being listened to, generation after generation: with an input grace period, a live
/// input that ended is listened to again with a new `IngestPipeline` (the next generation) while
/// the output waits. The supervisor ends and replaces generations; the pumps follow them, waiting
/// on `changes` for the next one and for its appsinks.
final class IngestGenerations: Sendable {
    private struct State {
        /// The input being listened to; replaced (next generation) when an awaited input is restarted.
        var ingest: IngestPipeline
        var generation = 0
        /// The last generation whose input ended (its stream, or an error such as the idle
        /// time-out, which reaches no appsink): its readers wait for the next one. A new
        /// generation still waiting for its broadcaster has not ended.
        var endedGeneration: Int?
        /// Frames that reached the appsinks of earlier generations.
        var framesArrivedEarlier = 0
        /// Bytes of the input read by earlier generations.
        var bytesReceivedEarlier = 0
    }

    enum SinkWait {
        case found(UnsafeMutablePointer<GstElement>)
        /// The input has no such stream.
        case absent
        /// A stop, or the input was listened to again meanwhile.
        case superseded
    }

    private let state: Mutex<State>
    /// Notified by every new generation, ended generation and change to a generation's streams.
    let changes: ChangeSignal
    private let input: InputEndpoint
    private let settings: RelaySettings
    private let library: PipelineLibrary
    private let threadTag: ThreadTag
    private let logger: Logger

    init(input: InputEndpoint, settings: RelaySettings, library: PipelineLibrary, threadTag: ThreadTag,
         changes: ChangeSignal, logger: Logger) throws(MediaError) {
        self.input = input
        self.settings = settings
        self.library = library
        self.threadTag = threadTag
        self.changes = changes
        self.logger = logger
        let first = try IngestPipeline(input: input, settings: settings, library: library, threadTag: threadTag,
                                       logger: logger, streamsChanged: { [changes] in changes.notify() })
        state = Mutex(State(ingest: first))
    }

    var current: (ingest: IngestPipeline, generation: Int) { state.withLock { ($0.ingest, $0.generation) } }

    var ingest: IngestPipeline { state.withLock { $0.ingest } }

    var generation: Int { state.withLock { $0.generation } }

    /// Decoded frames that reached the video appsinks of every generation so far.
    var framesArrived: Int { state.withLock { $0.framesArrivedEarlier + $0.ingest.framesArrived } }

    /// Decoded frames that reached the video appsinks of the generations before `generation`, or
    /// nil when `generation` is no longer the current one.
    func framesArrived(before generation: Int) -> Int? {
        state.withLock { $0.generation == generation ? $0.framesArrivedEarlier : nil }
    }

    /// Bytes of the input read by every generation so far.
    var bytesReceived: Int { state.withLock { $0.bytesReceivedEarlier + $0.ingest.bytesReceived } }

    /// The supervisor saw the current generation end (its readers may not: an error reaches no appsink).
    func endCurrent() {
        let changed = state.withLock { state in
            defer { state.endedGeneration = state.generation }
            return state.endedGeneration != state.generation
        }
        if changed { changes.notify() }
    }

    /// Whether the generation an appsink belongs to has ended: its stream ended, or the
    /// supervisor saw it end.
    func hasEnded(_ sink: UnsafeMutablePointer<GstElement>, generation: Int) -> Bool {
        fr_appsink_is_eos(sink) != 0 || state.withLock { $0.endedGeneration == generation }
    }

    /// Listens to the input again with a new ingest pipeline, at the size the output was opened
    /// with (`info`, once known). The old pipeline is stopped first: an SRT listener needs its port back.
    func restart(keeping info: MediaRelay.StreamInfo?) throws(MediaError) {
        let old = ingest
        ThreadCPUAccounting.shared.sampleNow()
        fr_set_state(old.pipeline, GST_STATE_NULL)
        let fresh = try IngestPipeline(input: input, settings: settings, library: library, threadTag: threadTag,
                                       logger: logger, streamsChanged: { [changes] in changes.notify() })
        if let info {
            fresh.lockVideoSize(width: info.width, height: info.height)
            if !info.hasAudio { fresh.refuseAudio() }
        }
        try fresh.start()
        state.withLock { state in
            state.framesArrivedEarlier += old.framesArrived
            state.bytesReceivedEarlier += old.bytesReceived
            state.ingest = fresh
            state.generation += 1
        }
        changes.notify()
    }

    /// Waits until the supervisor has listened to the input again (a new generation), or a stop.
    func waitForNext(after generation: Int, control: RelayControl) {
        _ = changes.wait(until: nil) {
            control.stopRequested || self.generation != generation
        }
    }

    /// Waits for the appsink at `path` of generation `generation` of the input. `videoStarted`
    /// tells whether the output has started: an audio stream that is not there by then is absent.
    func waitForSink(_ path: KeyPath<IngestPipeline.Streams, ElementPointer?>, of ingest: IngestPipeline, generation: Int,
                     control: RelayControl, videoStarted: () -> Bool) -> SinkWait {
        var outcome = SinkWait.superseded
        _ = changes.wait(until: nil) {
            guard !control.stopRequested, self.generation == generation else { return true }
            let streams = ingest.snapshot
            if let sink = streams[keyPath: path] {
                outcome = .found(sink.pointer)
                return true
            }
            // Audio: once the video has started without an audio stream, there is none to wait for;
            // an input that came back says so by announcing all its streams.
            if path == \.audioSink, streams.allPadsKnown || generation == 0 && videoStarted() {
                outcome = .absent
                return true
            }
            return false
        }
        return outcome
    }
}
