import CGStreamer
import Logging
import Synchronization

/// The input side: source, decodebin, and the appsinks its pads are linked to as they appear.
///
/// decodebin exposes one pad per stream once it knows the stream: raw video goes to the
/// `video_out` appsink, AAC as it is and any other audio encoded to AAC to the `audio_out` appsink,
/// anything else (a second video, subtitles, data) to a fakesink so it cannot stall the others.
///
/// `@unchecked Sendable` because of its C pointers, both `let`: the pipeline, a GStreamer object whose
/// calls are thread-safe, and `framesArrived`, a counter that a pad probe increments and readers
/// read with GLib's atomics. Everything else it changes after `init` is in a `Locked`, a Mutex or an
/// Atomic: decodebin links its pads on streaming threads while the relay's threads read.
final class IngestPipeline: @unchecked Sendable {
    let pipeline: UnsafeMutablePointer<GstElement>
    private let videoBranch: String
    private let audioBranchAAC: String
    private let audioBranchEncode: String
    private let logger: Logger
    private let inputName: String
    /// A network input, timed by its sender rather than read from a file.
    private let isLiveInput: Bool

    /// Decoded frames that reached the video appsink, including any it dropped: a C counter
    /// incremented by a pad probe on a streaming thread.
    let framesArrived: UnsafeMutablePointer<gint>

    struct Streams {
        var videoSink: UnsafeMutablePointer<GstElement>?
        var audioSink: UnsafeMutablePointer<GstElement>?
        var audioIsPassThrough = false
        var allPadsKnown = false
        var failure: MediaError?
        /// "audio", "video": the kinds of stream the demuxer found so far, before decodebin
        /// exposes them (it waits until it knows them all, which a demuxer told to expect a
        /// track that never comes may not say for seconds).
        var demuxedKinds: Set<String> = []
    }
    private let streams = Locked(Streams())

    /// The branch bins decodebin's pads feed, kept so that a replacement pad can take over.
    private struct Branches {
        var video: UnsafeMutablePointer<GstElement>?
        var audio: UnsafeMutablePointer<GstElement>?
        var audioMediaType: String?
    }
    private let branches = Locked(Branches())
    /// The SRT listener's registration with `SRTCallerWatch`, for an SRT listener input.
    private let srtWatch: Int?
    private let srtRefusals = Locked<SRTRefusal?>(nil)
    /// Set once the output was opened without audio: audio that appears later has nowhere to go.
    private let audioRefused = Atomic<Bool>(false)
    /// The picture size every frame is scaled to, once the relay has fixed it.
    private let lockedVideoSize = Mutex<(width: Int, height: Int)?>(nil)
    /// The last caller an SRT listener input refused (a wrong passphrase...), if any.
    var lastSRTRefusal: SRTRefusal? { srtRefusals.withLock { $0 } }

    init(input: InputEndpoint, settings: RelaySettings, library: PipelineLibrary, threadTag: ThreadTag, logger: Logger) throws(MediaError) {
        self.logger = logger
        inputName = input.description
        isLiveInput = input.isLive
        let files = [library.directory + "/ingest.gst", library.directory + "/" + Self.sourceFile(for: input)]
        let sync = settings.pacesFile(input)
        do {
            videoBranch = try library.videoBranchDescription(live: settings.isLive(input), sync: sync)
            audioBranchAAC = try library.audioBranchDescription(isAAC: true, sync: sync, settings: settings)
            audioBranchEncode = try library.audioBranchDescription(isAAC: false, sync: sync, settings: settings)
            pipeline = try GStreamer.parse(try library.ingestDescription(for: input, settings: settings), files: files)
        } catch let error as PipelineTemplateError {
            throw MediaError(.pipelineTemplate, error.description)
        } catch let error as MediaError {
            throw error
        } catch {
            throw MediaError(.pipelineTemplate, "\(error)")
        }
        TaskNamer.install(on: pipeline, tag: threadTag) { _ in .decode }
        if case .srtListener(let uri) = input, let source = fr_bin_find_by_factory(pipeline, "srtsrc") {
            // A refused caller never reaches the pipeline: without this, a broadcaster with the
            // wrong passphrase would look like no broadcaster at all.
            let hasPassphrase = uri.split(separator: "?").last?.split(separator: "&").contains { $0.hasPrefix("passphrase=") } ?? false
            srtWatch = SRTCallerWatch.shared.watch(source, hasPassphrase: hasPassphrase) { [logger, inputName, srtRefusals] refusal in
                srtRefusals.withLock { $0 = refusal }
                logger.warning("\(refusal); still listening on \(inputName)", metadata: ["input": "\(inputName)"])
            }
            fr_unref(source)
        } else {
            srtWatch = nil
        }
        framesArrived = .allocate(capacity: 1)
        framesArrived.initialize(to: 0)
        // Branch templates are checked now so that a typo is reported at start, not mid-stream.
        for (description, file) in [(videoBranch, "ingest-video.gst"), (audioBranchAAC, "ingest-audio-aac.gst"), (audioBranchEncode, "ingest-audio-encode.gst")] {
            let bin = try GStreamer.parseBin(description, files: [library.directory + "/" + file])
            fr_unref(bin)
        }
        let decode = try GStreamer.element("decode", in: pipeline, files: files)
        defer { fr_unref(decode) }
        let context = Unmanaged.passUnretained(self).toOpaque()
        fr_connect_pad_added(decode, { _, pad, context in
            guard let pad, let context else { return }
            Unmanaged<IngestPipeline>.fromOpaque(context).takeUnretainedValue().attach(pad: pad)
        }, context)
        fr_connect_no_more_pads(decode, { _, context in
            guard let context else { return }
            Unmanaged<IngestPipeline>.fromOpaque(context).takeUnretainedValue().streams.withLock { $0.allPadsKnown = true }
        }, context)
        fr_connect_deep_element_added(pipeline, { _, _, element, context in
            guard let element, let context else { return }
            // Pictures the decoder knows to be corrupt (no reference picture after a loss) are
            // dropped rather than relayed as green smears; damaged slices are concealed, as
            // any player does.
            if fr_element_has_property(element, "output-corrupt") != 0 { fr_set_bool(element, "output-corrupt", 0) }
            if let klass = gst_element_get_metadata(element, "klass"), String(cString: klass).contains("Demux") {
                fr_connect_pad_added(element, { _, pad, context in
                    guard let pad, let context else { return }
                    let name = String(cString: fr_object_name(pad))
                    guard let kind = ["audio", "video"].first(where: { name.hasPrefix($0) }) else { return }
                    Unmanaged<IngestPipeline>.fromOpaque(context).takeUnretainedValue().streams.withLock { _ = $0.demuxedKinds.insert(kind) }
                }, context)
            }
            // A relay keeps the broadcaster's own timeline (it never plays against our clock), so
            // live MPEG-TS is timed from its PTS: tsdemux's PCR skew estimate jumps while it
            // converges and shifts audio against video by tens of milliseconds. A file needs its
            // PCR: without it tsdemux gives its audio no timestamps at all.
            let isLive = Unmanaged<IngestPipeline>.fromOpaque(context).takeUnretainedValue().isLiveInput
            switch String(cString: fr_element_factory_name(element)) {
            case "tsdemux" where isLive: fr_set_bool(element, "ignore-pcr", 1)
            // A live broadcast's audio comes within a few tags of its video, if at all.
            case "flvdemux" where isLive: fr_decide_flv_audio_within(element, IngestPipeline.audioWaitAfterVideoMilliseconds)
            default: break
            }
        }, context)
    }

    deinit {
        fr_set_state(pipeline, GST_STATE_NULL)
        if let srtWatch { SRTCallerWatch.shared.stopWatching(srtWatch) }
        streams.withLock { streams in
            fr_unref(streams.videoSink)
            fr_unref(streams.audioSink)
        }
        fr_unref(pipeline)
        framesArrived.deallocate()
    }

    /// Stream time a live FLV input's video runs before the relay stops waiting for its audio.
    static let audioWaitAfterVideoMilliseconds: guint32 = 2000

    static func sourceFile(for input: InputEndpoint) -> String {
        switch input {
        case .rtmp: return "source-rtmp.gst"
        case .srtListener, .srtCaller: return "source-srt.gst"
        case .file: return "source-file.gst"
        }
    }

    func start() throws(MediaError) {
        if fr_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE {
            // The bus holds the reason; the supervisor reads it. This is the fallback text.
            throw MediaError(.input, "cannot open input \(inputName)")
        }
    }

    var snapshot: Streams { streams.withLock { $0 } }

    private func attach(pad: UnsafeMutablePointer<GstPad>) {
        let mediaType = String(cString: fr_pad_media_type(pad))
        let padCaps = GStreamer.takeString(fr_pad_caps_string(pad)) ?? mediaType
        let kind: String
        let description: String?
        switch mediaType {
        case "video/x-raw" where snapshot.videoSink == nil:
            kind = "video"
            description = videoBranch
        case "audio/mpeg" where snapshot.audioSink == nil && !audioRefused.load(ordering: .relaxed):
            kind = "audio"
            description = audioBranchAAC
        case "audio/x-raw" where snapshot.audioSink == nil && !audioRefused.load(ordering: .relaxed):
            kind = "audio"
            description = audioBranchEncode
        default:
            kind = "ignored"
            description = nil
        }
        // A program change (MPEG-TS with a new PMT, a new resolution) brings new pads for the same
        // streams: they take over the branches the old pads fed, so the stream goes on.
        let branch = branches.withLock { branches in
            mediaType == "video/x-raw" ? branches.video : branches.audioMediaType == mediaType ? branches.audio : nil
        }
        if description == nil, let branch {
            if fr_relink_pad_to_element(pad, branch) != 0 {
                logger.info("input stream changed; continuing", metadata: ["input": "\(inputName)", "caps": "\(padCaps)"])
                return
            }
        }
        guard let description else {
            if mediaType.hasPrefix("audio/"), audioRefused.load(ordering: .relaxed) {
                // Unread, its appsink would fill and stall the demuxer, and the video with it.
                logger.warning("audio appeared in the input mid-stream; the output was opened without audio, relaying the video alone",
                               metadata: ["input": "\(inputName)", "caps": "\(padCaps)"])
            } else {
                logger.info("ignoring an extra stream of the input", metadata: ["input": "\(inputName)", "caps": "\(padCaps)"])
            }
            linkToFakeSink(pad)
            return
        }
        do {
            let bin = try GStreamer.parseBin(description, files: ["\(kind) branch"])
            let sinkName = kind == "video" ? "video_out" : "audio_out"
            let sink = try GStreamer.element(sinkName, in: bin, files: ["\(kind) branch"])
            if kind == "video", let size = lockedVideoSize.withLock({ $0 }) { Self.setSize(size, in: bin) }
            fr_bin_add(pipeline, bin)
            fr_sync_state_with_parent(bin)
            guard fr_link_pad_to_element(pad, bin) != 0 else {
                fr_unref(sink)
                throw MediaError(.input, "cannot link the \(kind) stream of \(inputName) (\(padCaps)) to the relay")
            }
            if kind == "video" {
                fr_count_buffers_into(sink, framesArrived)
                // Frames that waited for the relay before it could take them (flvdemux holds a
                // video-only RTMP stream's pads for 6 s, looking for audio) come in a burst: they
                // are relayed, not dropped. The frame thread turns dropping on once it caught up.
                fr_set_bool(sink, "drop", 0)
            }
            branches.withLock { branches in
                if kind == "video" {
                    branches.video = bin
                } else {
                    branches.audio = bin
                    branches.audioMediaType = mediaType
                }
            }
            streams.withLock { streams in
                if kind == "video" {
                    streams.videoSink = sink
                } else {
                    streams.audioSink = sink
                    streams.audioIsPassThrough = mediaType == "audio/mpeg"
                }
            }
            logger.debug("input stream linked", metadata: ["kind": "\(kind)", "caps": "\(padCaps)"])
        } catch let error as MediaError {
            streams.withLock { $0.failure = error }
        } catch {
            streams.withLock { $0.failure = MediaError(.input, "\(error)") }
        }
    }

    /// The output has no audio: audio streams that appear from now on are discarded.
    func refuseAudio() { audioRefused.store(true, ordering: .relaxed) }

    /// From now on frames of this size are delivered whatever the input sends: a broadcaster
    /// switching resolution mid-stream, or coming back with another one, is scaled to the size
    /// the output (and upstream) was opened with, instead of ending the stream.
    func lockVideoSize(width: Int, height: Int) {
        lockedVideoSize.withLock { $0 = (width, height) }
        Self.setSize((width, height), in: pipeline)
    }

    private static func setSize(_ size: (width: Int, height: Int), in bin: UnsafeMutablePointer<GstElement>) {
        guard let sizeFilter = fr_bin_get(bin, "video_size") else { return }
        defer { fr_unref(sizeFilter) }
        let caps = gst_caps_from_string("video/x-raw, format=I420, width=\(size.width), height=\(size.height)")
        fr_set_caps_property(sizeFilter, "caps", caps)
        gst_caps_unref(caps)
    }

    private func linkToFakeSink(_ pad: UnsafeMutablePointer<GstPad>) {
        guard let fakesink = gst_element_factory_make("fakesink", nil) else { return }
        fr_set_bool(fakesink, "sync", 0)
        fr_set_bool(fakesink, "async", 0)
        fr_bin_add(pipeline, fakesink)
        fr_sync_state_with_parent(fakesink)
        _ = fr_link_pad_to_element(pad, fakesink)
    }
}
