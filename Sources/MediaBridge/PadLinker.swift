internal import CGStreamer
import Logging
import StreamPlan
import Synchronization

/// What the ingest's signal handlers work on: it links decodebin's pads to branches as they
/// appear, and keeps what they found for the relay's threads.
///
/// The handlers run on GStreamer's streaming threads, and each gets this linker as its user data
/// with a reference of its own (`Unmanaged.passRetained`), which GLib gives back to
/// `releasePadLinker` once the handler is gone: disconnected, or its instance finalized, and in
/// either case no longer running. So the linker outlives every handler that can call it, whatever
/// thread drops the ingest and whenever. Nothing here refers to the `IngestPipeline`, so a handler
/// never keeps it alive; its `deinit` disconnects every handler, which also breaks the cycle
/// through the pipeline reference held here.
final class PadLinker: Sendable {
    struct BranchDescriptions: Sendable {
        let video: String
        let audioAAC: String
        let audioEncode: String
    }

    enum Kind: Sendable {
        case video, audio

        var sinkName: String { self == .video ? "video_out" : "audio_out" }
    }

    /// A connected signal handler, with a reference to the object it is connected on.
    struct SignalHandler: Sendable {
        let instance: ElementPointer
        let id: gulong
    }

    struct State: Sendable {
        var streams = IngestPipeline.Streams()
        /// The branch bins decodebin's pads feed (the pipeline holds them), kept so that a
        /// replacement pad can take over.
        var videoBranch: ElementPointer?
        var audioBranch: ElementPointer?
        var audioMediaType: String?
        /// A pad was given that kind's branch: it is being built, or was built.
        var videoClaimed = false
        var audioClaimed = false
        /// Set once the output was opened without audio: audio that appears later has nowhere to go.
        var audioRefused = false
        /// The picture size every frame is scaled to, once the relay has fixed it.
        var videoSize: (width: Int, height: Int)?
        /// The last caller an SRT listener input refused (a wrong passphrase...), if any.
        var lastSRTRefusal: SRTRefusal?
        var handlers: [SignalHandler] = []
        /// Set by `disconnectHandlers`: a handler connected later is disconnected at once.
        var handlersDisconnected = false
    }

    private enum Plan {
        case build(Kind, description: String)
        case relink(ElementPointer)
        case ignore
    }

    /// A reference of the linker's own, released by `deinit`.
    private let pipeline: ElementPointer
    private let branches: BranchDescriptions
    private let inputName: String
    /// A network input, timed by its sender rather than read from a file.
    private let isLiveInput: Bool
    /// The decoder's `max-threads` (0: one per core).
    private let decodeThreads: Int
    private let logger: Logger
    /// Told after every change to `state.streams`, once the lock is released.
    private let streamsChanged: @Sendable () -> Void
    /// Decoded frames that reached the video appsink, including any it dropped: a C counter
    /// incremented by a pad probe on a streaming thread.
    let framesArrived = AtomicCountPointer.allocate()
    /// Bytes of the input's stream that reached decodebin (the container as it comes off the
    /// network or the file): counted by a pad probe on a streaming thread.
    let bytesReceived = AtomicCountPointer.allocate()
    private let state = Mutex(State())

    init(pipeline: UnsafeMutablePointer<GstElement>, branches: BranchDescriptions, inputName: String, isLiveInput: Bool, decodeThreads: Int,
         logger: Logger, streamsChanged: @escaping @Sendable () -> Void) {
        _ = gst_object_ref(pipeline)
        self.pipeline = ElementPointer(pointer: pipeline)
        self.branches = branches
        self.inputName = inputName
        self.isLiveInput = isLiveInput
        self.decodeThreads = decodeThreads
        self.logger = logger
        self.streamsChanged = streamsChanged
    }

    deinit {
        // Every handler is gone (each held a reference), and with the pipeline, the probes that
        // count into `framesArrived` and `bytesReceived`.
        let sinks = state.withLock { [$0.streams.videoSink, $0.streams.audioSink] }
        for sink in sinks { fr_unref(sink?.pointer) }
        fr_unref(pipeline.pointer)
        framesArrived.pointer.deallocate()
        bytesReceived.pointer.deallocate()
    }

    var streams: IngestPipeline.Streams { state.withLock { $0.streams } }

    var lastSRTRefusal: SRTRefusal? { state.withLock { $0.lastSRTRefusal } }

    func noteRefusal(_ refusal: SRTRefusal) { state.withLock { $0.lastSRTRefusal = refusal } }

    func refuseAudio() { state.withLock { $0.audioRefused = true } }

    func lockVideoSize(width: Int, height: Int) {
        // Stored before it is set on the pipeline: a video branch being built reads it once its
        // bin is in the pipeline, so either it reads the size or this finds its bin.
        state.withLock { $0.videoSize = (width, height) }
        Self.setSize((width, height), in: pipeline.pointer)
    }

    // MARK: signal handlers

    func connectHandlers(decode: UnsafeMutablePointer<GstElement>) throws(MediaError) {
        guard fr_count_bytes_into(decode, bytesReceived.pointer) != 0 else {
            throw MediaError(.pipelineTemplate, "the ingest's decodebin has no sink pad to count the input's bytes on")
        }
        connect(decode) { userData in
            fr_connect_pad_added(decode, { _, pad, context in
                guard let pad, let context else { return }
                PadLinker.of(context).attach(pad: pad)
            }, userData, releasePadLinker)
        }
        connect(decode) { userData in
            fr_connect_no_more_pads(decode, { _, context in
                guard let context else { return }
                PadLinker.of(context).changeStreams { $0.allPadsKnown = true }
            }, userData, releasePadLinker)
        }
        connect(pipeline.pointer) { userData in
            fr_connect_deep_element_added(pipeline.pointer, { _, _, element, context in
                guard let element, let context else { return }
                PadLinker.of(context).elementAdded(element)
            }, userData, releasePadLinker)
        }
    }

    /// Disconnects every handler connected so far, and from now on any connected later (a
    /// demuxer's, should one be added meanwhile) as soon as it is.
    func disconnectHandlers() {
        let handlers = state.withLock { state in
            defer { state.handlers = [] }
            state.handlersDisconnected = true
            return state.handlers
        }
        for handler in handlers { Self.disconnect(handler) }
    }

    /// The linker a handler was given, borrowed: the handler's own reference keeps it alive.
    private static func of(_ context: UnsafeMutableRawPointer) -> PadLinker {
        Unmanaged<PadLinker>.fromOpaque(context).takeUnretainedValue()
    }

    /// Connects a handler on `instance` with `connecting`, which gets the user data to pass (a
    /// reference to this linker, for `releasePadLinker`) and returns the handler's id.
    private func connect(_ instance: UnsafeMutablePointer<GstElement>, _ connecting: (UnsafeMutableRawPointer) -> gulong) {
        let context = Unmanaged.passRetained(self).toOpaque()
        let id = connecting(context)
        guard id != 0 else {
            // No such signal: GLib kept no handler, and will release nothing.
            Unmanaged<PadLinker>.fromOpaque(context).release()
            return
        }
        _ = gst_object_ref(instance)
        let handler = SignalHandler(instance: ElementPointer(pointer: instance), id: id)
        let kept = state.withLock { state in
            if !state.handlersDisconnected { state.handlers.append(handler) }
            return !state.handlersDisconnected
        }
        if !kept { Self.disconnect(handler) }
    }

    private static func disconnect(_ handler: SignalHandler) {
        g_signal_handler_disconnect(handler.instance.pointer, handler.id)
        fr_unref(handler.instance.pointer)
    }

    /// An element added anywhere in the pipeline (decodebin adds its demuxer and decoders).
    private func elementAdded(_ element: UnsafeMutablePointer<GstElement>) {
        // Pictures the decoder knows to be corrupt (no reference picture after a loss) are
        // dropped rather than relayed as green smears; damaged slices are concealed, as
        // any player does.
        if fr_element_has_property(element, "output-corrupt") != 0 { fr_set_bool(element, "output-corrupt", 0) }
        // libav decoders otherwise decode straight into the buffers they hand out and keep those
        // as reference pictures, so GstVideoDecoder copies each picture into fresh memory before
        // handing it out (a 720p picture mapped and faulted in anew on every frame: 0.35 s more
        // system time per 600 frames). Decoding into libav's own pictures costs the same one copy,
        // into buffers from the decoder's pool, which come back once the relay has copied them.
        if fr_element_has_property(element, "direct-rendering") != 0 { fr_set_bool(element, "direct-rendering", 0) }
        if fr_element_has_property(element, "max-threads") != 0 { fr_set_int(element, "max-threads", gint(clamping: decodeThreads)) }
        if let klass = gst_element_get_metadata(element, "klass"), String(cString: klass).contains("Demux") {
            connect(element) { userData in
                fr_connect_pad_added(element, { _, pad, context in
                    guard let pad, let context else { return }
                    let name = String(cString: fr_object_name(pad))
                    guard let kind = ["audio", "video"].first(where: { name.hasPrefix($0) }) else { return }
                    PadLinker.of(context).changeStreams { _ = $0.demuxedKinds.insert(kind) }
                }, userData, releasePadLinker)
            }
        }
        // A relay keeps the broadcaster's own timeline (it never plays against our clock), so
        // live MPEG-TS is timed from its PTS: tsdemux's PCR skew estimate jumps while it
        // converges and shifts audio against video by tens of milliseconds. A file needs its
        // PCR: without it tsdemux gives its audio no timestamps at all.
        switch String(cString: fr_element_factory_name(element)) {
        case "tsdemux" where isLiveInput: fr_set_bool(element, "ignore-pcr", 1)
        // A live broadcast's audio comes within a few tags of its video, if at all.
        case "flvdemux" where isLiveInput: fr_decide_flv_audio_within(element, IngestPipeline.audioWaitAfterVideoMilliseconds)
        default: break
        }
    }

    // MARK: linking pads

    private func attach(pad: UnsafeMutablePointer<GstPad>) {
        let mediaType = String(cString: fr_pad_media_type(pad))
        let padCaps = GStreamer.takeString(fr_pad_caps_string(pad)) ?? mediaType
        // What the pad gets is decided, and a branch claimed, in one critical section: two pads
        // exposed at once on two streaming threads cannot both build the same branch.
        let (plan, audioRefused) = state.withLock { state -> (Plan, Bool) in
            switch mediaType {
            case "video/x-raw" where !state.videoClaimed:
                state.videoClaimed = true
                return (.build(.video, description: branches.video), state.audioRefused)
            case "audio/mpeg" where !state.audioClaimed && !state.audioRefused:
                state.audioClaimed = true
                return (.build(.audio, description: branches.audioAAC), state.audioRefused)
            case "audio/x-raw" where !state.audioClaimed && !state.audioRefused:
                state.audioClaimed = true
                return (.build(.audio, description: branches.audioEncode), state.audioRefused)
            default:
                // A program change (MPEG-TS with a new PMT, a new resolution) brings new pads for
                // the same streams: they take over the branches the old pads fed, so the stream goes on.
                let branch = mediaType == "video/x-raw" ? state.videoBranch : state.audioMediaType == mediaType ? state.audioBranch : nil
                return (branch.map { .relink($0) } ?? .ignore, state.audioRefused)
            }
        }
        switch plan {
        case .build(let kind, let description):
            build(kind, from: description, for: pad, mediaType: mediaType, padCaps: padCaps)
            return
        case .relink(let branch):
            if fr_relink_pad_to_element(pad, branch.pointer) != 0 {
                logger.info("input stream changed; continuing", metadata: ["input": "\(inputName)", "caps": "\(padCaps)"])
                return
            }
        case .ignore:
            break
        }
        if mediaType.hasPrefix("audio/"), audioRefused {
            // Unread, its appsink would fill and stall the demuxer, and the video with it.
            logger.warning("audio appeared in the input mid-stream; the output was opened without audio, relaying the video alone",
                           metadata: ["input": "\(inputName)", "caps": "\(padCaps)"])
        } else {
            logger.info("ignoring an extra stream of the input", metadata: ["input": "\(inputName)", "caps": "\(padCaps)"])
        }
        linkToFakeSink(pad, caps: padCaps)
    }

    /// Builds the branch `attach` claimed for `kind`, links the pad to it and publishes its sink;
    /// on failure records the error and gives the claim up.
    private func build(_ kind: Kind, from description: String, for pad: UnsafeMutablePointer<GstPad>, mediaType: String, padCaps: String) {
        do {
            let bin = try GStreamer.parseBin(description, files: ["\(kind) branch"])
            let sink = try GStreamer.element(kind.sinkName, in: bin, files: ["\(kind) branch"])
            fr_bin_add(pipeline.pointer, bin)
            // Read once the bin is in the pipeline: see `lockVideoSize`.
            if kind == .video, let size = state.withLock({ $0.videoSize }) { Self.setSize(size, in: bin) }
            fr_sync_state_with_parent(bin)
            guard fr_link_pad_to_element(pad, bin) != 0 else {
                fr_unref(sink)
                throw MediaError(.input, "cannot link the \(kind) stream of \(inputName) (\(padCaps)) to the relay")
            }
            if kind == .video {
                fr_count_buffers_into(sink, framesArrived.pointer)
                // Frames that waited for the relay before it could take them (flvdemux holds a
                // video-only RTMP stream's pads for 6 s, looking for audio) come in a burst: they
                // are relayed, not dropped. The frame thread turns dropping on once it caught up.
                fr_set_bool(sink, "drop", 0)
            }
            let branch = ElementPointer(pointer: bin), published = ElementPointer(pointer: sink)
            state.withLock { state in
                switch kind {
                case .video:
                    state.videoBranch = branch
                    state.streams.videoSink = published
                case .audio:
                    state.audioBranch = branch
                    state.audioMediaType = mediaType
                    state.streams.audioSink = published
                    state.streams.audioIsPassThrough = mediaType == "audio/mpeg"
                }
            }
            streamsChanged()
            logger.debug("input stream linked", metadata: ["kind": "\(kind)", "caps": "\(padCaps)"])
        } catch let error as MediaError {
            failed(kind, error)
        } catch {
            failed(kind, MediaError(.input, "\(error)"))
        }
    }

    private func failed(_ kind: Kind, _ error: MediaError) {
        state.withLock { state in
            state.streams.failure = error
            switch kind {
            case .video: state.videoClaimed = false
            case .audio: state.audioClaimed = false
            }
        }
        streamsChanged()
    }

    /// Changes what the relay's threads read in `streams`, then tells them.
    private func changeStreams(_ change: (inout IngestPipeline.Streams) -> Void) {
        state.withLock { change(&$0.streams) }
        streamsChanged()
    }

    private static func setSize(_ size: (width: Int, height: Int), in bin: UnsafeMutablePointer<GstElement>) {
        guard let sizeFilter = fr_bin_get(bin, "video_size") else { return }
        defer { fr_unref(sizeFilter) }
        let caps = gst_caps_from_string("video/x-raw, format=I420, width=\(size.width), height=\(size.height)")
        fr_set_caps_property(sizeFilter, "caps", caps)
        gst_caps_unref(caps)
    }

    /// A stream the relay does not carry is read and thrown away: unread, it would stall the demuxer.
    private func linkToFakeSink(_ pad: UnsafeMutablePointer<GstPad>, caps: String) {
        guard let fakesink = gst_element_factory_make("fakesink", nil) else {
            logger.warning("cannot discard an extra stream of the input: GStreamer has no fakesink (install gstreamer1.0-plugins-base); the input may stall",
                           metadata: ["input": "\(inputName)", "caps": "\(caps)"])
            return
        }
        fr_set_bool(fakesink, "sync", 0)
        fr_set_bool(fakesink, "async", 0)
        fr_bin_add(pipeline.pointer, fakesink)
        fr_sync_state_with_parent(fakesink)
        if fr_link_pad_to_element(pad, fakesink) == 0 {
            logger.warning("cannot link an extra stream of the input to a sink that discards it; the input may stall on it: send the input without that stream",
                           metadata: ["input": "\(inputName)", "caps": "\(caps)"])
        }
    }
}

/// GLib's release of a handler's reference to its `PadLinker`, once the handler is gone.
private func releasePadLinker(_ context: gpointer?, _ closure: UnsafeMutablePointer<GClosure>?) {
    guard let context else { return }
    Unmanaged<PadLinker>.fromOpaque(context).release()
}
