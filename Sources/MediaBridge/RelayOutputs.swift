internal import CGStreamer
import FoundationEssentials
import StreamPlan
import Synchronization

/// The encoder and the outputs of one stream: built from the first frame, the encoder once, each
/// output again after its failure. The frame thread pushes to the encoder; the packet thread
/// (`relayEncodedPackets`, RelayOutputs+Packets.swift) hands each encoded frame to every output
/// that is up, and the audio thread each audio packet. A live stream never waits for an output:
/// one that falls more than `maximumBacklog` behind is skipped to the next keyframe, and what it
/// misses is counted.
final class RelayOutputs: Sendable {
    /// How far behind an output of a live stream may fall before it skips to the next keyframe.
    static let maximumBacklog: UInt64 = 2_000_000_000

    struct State {
        var encoder: EncoderPipeline?
        /// The raw caps the encoder was built for, with a reference of its own.
        var rawCaps: CapsPointer?
        var info: MediaRelay.StreamInfo?
        /// The outputs built from the first frame are up: the stream's size and rate are known to all.
        var outputsReady = false
        var slots: [OutputSlot]
        /// The latest caps of the encoded video and of the audio, each with a reference of its
        /// own; a slot whose version differs gets them before its next packet.
        var videoCaps: (pointer: CapsPointer, version: Int)?
        var audioCaps: (pointer: CapsPointer, version: Int)?
        var audioCapsGeneration = -1
        /// The input's audio stopped while its video goes on: every output relays video alone.
        var audioStopped = false
        /// The audio thread is done: every output's audio has ended.
        var audioFinished = false
        var videoEnded = false
        /// Recording segments rotated out: finishing (end-of-stream sent), watched until they have.
        var closing: [OutputPipeline] = []
    }

    let state: Mutex<State>
    let changes: ChangeSignal
    private let input: InputEndpoint
    private let settings: RelaySettings
    private let library: PipelineLibrary
    private let threadTag: ThreadTag
    let live: Bool
    private let encoderFiles: [String]
    /// Whether any output records in segments (a keyframe then checks whether one is due).
    let hasRecordings = Atomic<Bool>(false)

    init(input: InputEndpoint, outputs: [OutputEndpoint], settings: RelaySettings, library: PipelineLibrary,
         threadTag: ThreadTag, changes: ChangeSignal) throws(MediaError) {
        self.input = input
        self.settings = settings
        self.library = library
        self.threadTag = threadTag
        self.changes = changes
        live = settings.isLive(input)
        encoderFiles = [library.directory + "/encode.gst"]
        state = Mutex(State(slots: outputs.enumerated().map { index, endpoint in OutputSlot(endpoint: endpoint, index: index) }))
        if outputs.contains(where: { if case .recording = $0 { true } else { false } }) { hasRecordings.store(true, ordering: .relaxed) }
        // Built once with stand-in values so that a broken template fails now, not when the first
        // frame arrives.
        fr_unref(try GStreamer.parse(try encoderDescription(framesPerSecond: 30), files: encoderFiles))
        for output in outputs {
            fr_unref(try GStreamer.parse(try outputDescription(output, withAudio: true), files: library.outputFiles(for: output)))
        }
    }

    deinit {
        state.withLock { state in
            for caps in [state.rawCaps, state.videoCaps?.pointer, state.audioCaps?.pointer] { if let caps { gst_caps_unref(caps.pointer) } }
        }
    }

    var encoder: EncoderPipeline? { state.withLock { $0.encoder } }

    /// The encoder and the raw caps it was built for, read together.
    var encoderWithCaps: (encoder: EncoderPipeline?, videoCaps: UnsafeMutablePointer<GstCaps>?) {
        state.withLock { ($0.encoder, $0.rawCaps?.pointer) }
    }

    /// Size, rate and audio of the stream, once the encoder was built.
    var streamInfo: MediaRelay.StreamInfo? { state.withLock { $0.outputsReady ? $0.info : nil } }

    var statuses: [MediaRelay.OutputStatus] {
        let now = ContinuousClock.now
        return state.withLock { state in
            state.slots.map { slot in
                var status = slot.status
                status.connectedSeconds = slot.status.state == .sending ? slot.builtAt.map { (now - $0).inSeconds } ?? 0 : 0
                return status
            }
        }
    }

    func endpoint(_ index: Int) -> OutputEndpoint? { state.withLock { $0.slots.indices.contains(index) ? $0.slots[index].endpoint : nil } }

    /// The outputs that are up, with their numbers: the buses the supervisor watches.
    var running: [(index: Int, pipeline: OutputPipeline)] {
        state.withLock { state in state.slots.enumerated().compactMap { index, slot in slot.pipeline.map { (index, $0) } } }
    }

    /// Whether `pipeline` is still output `index`'s.
    func isRunning(_ index: Int, _ pipeline: OutputPipeline) -> Bool { state.withLock { $0.slots[index].pipeline === pipeline } }

    /// Every output is finalised, down or given up: nothing is left to finish.
    var allFinished: Bool { state.withLock { $0.closing.isEmpty && $0.slots.allSatisfy { $0.pipeline == nil || $0.finished } } }

    /// Recording segments being finalised: the buses the supervisor also watches.
    var closing: [OutputPipeline] { state.withLock { $0.closing } }

    /// A rotated-out segment posted its end of stream (or failed finishing): it is let go.
    func closed(_ pipeline: OutputPipeline) {
        let found = state.withLock { state in
            guard let position = state.closing.firstIndex(where: { $0 === pipeline }) else { return false }
            state.closing.remove(at: position)
            return true
        }
        if found { pipeline.stop() }
        changes.notify()
    }

    /// Outputs neither given up nor finished.
    var activeCount: Int { state.withLock { $0.slots.count(where: \.isActive) } }

    /// Builds the encoder for frames of `videoCaps` described by `info`, then every output. An
    /// output that cannot start is returned with its error, for the supervisor to retry; when
    /// none can, the first error is thrown.
    func build(videoCaps: UnsafeMutablePointer<GstCaps>, info: MediaRelay.StreamInfo) throws(MediaError) -> (EncoderPipeline, failed: [(Int, MediaError)]) {
        let text = try encoderDescription(framesPerSecond: info.framesPerSecond > 0 ? info.framesPerSecond : 30)
        let encoder = try EncoderPipeline(description: text, files: encoderFiles, videoCaps: videoCaps, threadTag: threadTag)
        try encoder.start()
        gst_caps_ref(videoCaps)
        // An output added from here on is built by `add`; those before, here.
        let count = state.withLock { state in
            state.encoder = encoder
            state.rawCaps = CapsPointer(pointer: videoCaps)
            state.info = info
            return state.slots.count
        }
        var failed: [(Int, MediaError)] = []
        for index in 0..<count {
            do throws(MediaError) { try build(index, info: info, encoder: encoder) } catch { failed.append((index, error)) }
        }
        // Known only once the outputs are up: the audio thread starts sending when it is.
        state.withLock { $0.outputsReady = true }
        changes.notify()
        if failed.count == count, let first = failed.first { throw first.1 }
        return (encoder, failed)
    }

    /// Builds output `index` (again), as the first was built: it starts at the next keyframe,
    /// which the encoder is asked for. Nothing to do before the encoder exists.
    func rebuild(_ index: Int) throws(MediaError) {
        guard let (info, encoder) = state.withLock({ state in state.info.flatMap { info in state.encoder.map { (info, $0) } } }) else { return }
        try build(index, info: info, encoder: encoder)
    }

    private func build(_ index: Int, info: MediaRelay.StreamInfo, encoder: EncoderPipeline) throws(MediaError) {
        guard state.withLock({ $0.slots[index].status.state != .removed }) else { return }
        let endpoint = state.withLock { $0.slots[index].endpoint }
        let (output, segment) = try makePipeline(for: endpoint, info: info)
        let endAudio = state.withLock { state in
            state.slots[index].pipeline = output
            state.slots[index].builtAt = .now
            state.slots[index].status.state = .sending
            state.slots[index].segmentPath = segment
            state.slots[index].startsAtNextKeyframe(audioOver: state.audioStopped || state.audioFinished)
            return state.audioStopped || state.audioFinished
        }
        if endAudio { output.endAudio() }
        if case .recording(let recording) = endpoint, let segment { keepWithinDiskLimit(index, recording, keeping: [segment]) }
        encoder.requestKeyframe()
        changes.notify()
    }

    /// A started pipeline for `endpoint`; for a recording, the new segment's file too.
    private func makePipeline(for endpoint: OutputEndpoint, info: MediaRelay.StreamInfo) throws(MediaError) -> (OutputPipeline, segment: String?) {
        var concrete = endpoint
        var segment: String?
        if case .recording(let recording) = endpoint {
            do {
                try FileManager.default.createDirectory(atPath: recording.directory, withIntermediateDirectories: true)
            } catch {
                throw MediaError(.output, "cannot create the recording folder \(recording.directory): \(error)")
            }
            let path = recording.path(at: Int(Date().timeIntervalSince1970)) { FileManager.default.fileExists(atPath: $0) }
            concrete = .file(path: path, container: recording.container)
            segment = path
        }
        let output = try OutputPipeline(description: try outputDescription(concrete, withAudio: info.hasAudio),
                                        files: library.outputFiles(for: endpoint), withAudio: info.hasAudio, threadTag: threadTag)
        try output.start()
        return (output, segment)
    }

    /// Recordings whose segment is `segmentSeconds` long at this keyframe (running time `pts`) go
    /// on in a new file from it: the old one gets end-of-stream and is finalised while the new one
    /// fills, and the oldest files go past the recording's disk limit. A segment that cannot be
    /// started keeps the current one going, tried again at the next keyframe, and the output's last error says why.
    func rotateRecordings(at pts: UInt64) {
        let due = state.withLock { state in
            state.slots.indices.compactMap { index in state.slots[index].segmentDue(at: pts).map { (index, $0) } }
        }
        guard !due.isEmpty, let info = state.withLock({ $0.info }) else { return }
        for (index, recording) in due {
            let output: OutputPipeline, segment: String?
            do throws(MediaError) {
                (output, segment) = try makePipeline(for: .recording(recording), info: info)
            } catch {
                state.withLock { $0.slots[index].status.lastError = "the next segment could not start (\(error)); the current file goes on, tried again at the next keyframe" }
                continue
            }
            let (old, oldSegment, endAudio) = state.withLock { state in
                let old = state.slots[index].pipeline, oldSegment = state.slots[index].segmentPath
                if let old { state.closing.append(old) }
                state.slots[index].pipeline = output
                state.slots[index].segmentPath = segment
                state.slots[index].startsAtNextKeyframe(audioOver: state.audioStopped || state.audioFinished)
                return (old, oldSegment, state.audioStopped || state.audioFinished)
            }
            if endAudio { output.endAudio() }
            old?.endVideo()
            old?.endAudio()
            // The segment being finalised is kept with the new one.
            if let segment { keepWithinDiskLimit(index, recording, keeping: [segment] + (oldSegment.map { [$0] } ?? [])) }
        }
        changes.notify()
    }

    /// Deletes `recording`'s oldest files past its disk limit, never `keeping`; where that fails,
    /// output `index` goes on recording and its last error says why the disk may fill.
    private func keepWithinDiskLimit(_ index: Int, _ recording: OutputEndpoint.Recording, keeping: [String]) {
        do throws(OutputEndpoint.DiskLimitError) {
            try recording.deleteOldestFiles(keeping: keeping)
        } catch {
            state.withLock { $0.slots[index].status.lastError = error.description }
        }
    }

    /// Adds an output to the stream; returns its number. Built at once when the stream runs (it
    /// starts at a keyframe asked for), else with the others from the first frame.
    func add(_ endpoint: OutputEndpoint) throws(MediaError) -> Int {
        if case .recording = endpoint { hasRecordings.store(true, ordering: .relaxed) }
        let (index, encoder, info) = state.withLock { state in
            state.slots.append(OutputSlot(endpoint: endpoint, index: state.slots.count))
            return (state.slots.count - 1, state.encoder, state.info)
        }
        if let encoder, let info {
            do {
                try build(index, info: info, encoder: encoder)
            } catch {
                giveUp(index, error: error.description)
                throw error
            }
        }
        changes.notify()
        return index
    }

    /// The number of the output at `endpoint` that is still part of the stream.
    func index(of endpoint: OutputEndpoint) -> Int? {
        state.withLock { state in
            state.slots.firstIndex { $0.endpoint == endpoint && $0.isActive }
        }
    }

    func wasRemoved(_ index: Int) -> Bool { state.withLock { $0.slots[index].status.state == .removed } }

    /// Takes output `index` out of the stream: it gets end-of-stream (a file is finalised) and
    /// no more packets.
    func remove(_ index: Int) {
        let pipeline = state.withLock { state in
            state.slots[index].status.state = .removed
            state.slots[index].videoEnded = true
            state.slots[index].audioEnded = true
            return state.slots[index].pipeline
        }
        pipeline?.endVideo()
        pipeline?.endAudio()
        changes.notify()
    }

    /// Output `index` failed and will be rebuilt: it is taken down, and misses frames meanwhile.
    func takeDown(_ index: Int, error: String) { stop(index, leaving: .reconnecting, error: error) }

    /// Output `index` is given up for good.
    func giveUp(_ index: Int, error: String) { stop(index, leaving: .failed, error: error) }

    private func stop(_ index: Int, leaving state: MediaRelay.OutputStatus.State, error: String) {
        let pipeline = self.state.withLock { slots in
            defer {
                slots.slots[index].pipeline = nil
                slots.slots[index].status.state = state
                slots.slots[index].status.lastError = error
            }
            return slots.slots[index].pipeline
        }
        pipeline?.stop()
        changes.notify()
    }

    /// Output `index`, rebuilt, has stayed up: its upstream took the stream again.
    func accepted(_ index: Int) {
        state.withLock { $0.slots[index].status.reconnects += 1 }
    }

    /// Output `index` posted its end of stream: it is finalised. A removed output is stopped and
    /// let go at once; the others stay until the stream's end.
    func finished(_ index: Int) {
        let released = state.withLock { state -> OutputPipeline? in
            state.slots[index].finished = true
            guard state.slots[index].status.state == .removed else {
                state.slots[index].status.state = .finished
                return nil
            }
            defer { state.slots[index].pipeline = nil }
            return state.slots[index].pipeline
        }
        released?.stop()
        changes.notify()
    }

    /// Stops every output and then the encoder (which ends the packet thread's wait).
    func stopAll() {
        let (outputs, encoder) = state.withLock { state in
            (state.slots.compactMap(\.pipeline) + state.closing, state.encoder)
        }
        for output in outputs { output.stop() }
        if let encoder { fr_set_state(encoder.pipeline, GST_STATE_NULL) }
    }

    // MARK: descriptions

    private func encoderDescription(framesPerSecond: Double) throws(MediaError) -> String {
        do {
            return try library.encoderDescription(framesPerSecond: framesPerSecond, live: live, settings: settings)
        } catch {
            throw MediaError(.pipelineTemplate, error.description)
        }
    }

    private func outputDescription(_ output: OutputEndpoint, withAudio: Bool) throws(MediaError) -> String {
        do {
            return try library.outputDescription(for: output, withAudio: withAudio, live: live)
        } catch {
            throw MediaError(.pipelineTemplate, error.description)
        }
    }
}
