internal import CGStreamer
import Logging
import StreamPlan
import Synchronization

/// The input side: source, decodebin, and the appsinks its pads are linked to as they appear.
///
/// decodebin exposes one pad per stream once it knows the stream: raw video goes to the
/// `video_out` appsink, AAC as it is and any other audio encoded to AAC to the `audio_out` appsink,
/// anything else (a second video, subtitles, data) to a fakesink so it cannot stall the others.
///
/// decodebin links its pads on streaming threads while the relay's threads read what it found:
/// that work and its state are a `PadLinker`, which the signal handlers hold on to for as long as
/// they are connected; `deinit` stops the pipeline, then disconnects every handler.
final class IngestPipeline: Sendable {
    /// The reference `GStreamer.parse` returned, released by `deinit`.
    private let pipelineReference: ElementPointer
    var pipeline: UnsafeMutablePointer<GstElement> { pipelineReference.pointer }
    private let linker: PadLinker
    private let inputName: String
    /// The SRT listener's registration with `SRTCallerWatch`, for an SRT listener input.
    private let srtWatch: Int?

    struct Streams: Sendable {
        /// The appsinks, each with a reference of the ingest's own.
        var videoSink: ElementPointer?
        var audioSink: ElementPointer?
        var audioIsPassThrough = false
        var allPadsKnown = false
        var failure: MediaError?
        /// "audio", "video": the kinds of stream the demuxer found so far, before decodebin
        /// exposes them (it waits until it knows them all, which a demuxer told to expect a
        /// track that never comes may not say for seconds).
        var demuxedKinds: Set<String> = []
    }

    /// `streamsChanged` is called, on a streaming thread, after every change to `snapshot`.
    init(input: InputEndpoint, settings: RelaySettings, library: PipelineLibrary, threadTag: ThreadTag, logger: Logger,
         streamsChanged: @escaping @Sendable () -> Void) throws(MediaError) {
        let inputName = input.description
        self.inputName = inputName
        let files = [library.directory + "/ingest.gst", library.directory + "/" + Self.sourceFile(for: input)]
        let sync = settings.pacesFile(input)
        let branches: PadLinker.BranchDescriptions
        let pipeline: UnsafeMutablePointer<GstElement>
        do {
            branches = PadLinker.BranchDescriptions(
                video: try library.videoBranchDescription(live: settings.isLive(input), sync: sync),
                audioAAC: try library.audioBranchDescription(isAAC: true, sync: sync, settings: settings),
                audioEncode: try library.audioBranchDescription(isAAC: false, sync: sync, settings: settings))
            pipeline = try GStreamer.parse(try library.ingestDescription(for: input, settings: settings), files: files)
        } catch let error as PipelineTemplateError {
            throw MediaError(.pipelineTemplate, error.description)
        } catch let error as MediaError {
            throw error
        } catch {
            throw MediaError(.pipelineTemplate, "\(error)")
        }
        pipelineReference = ElementPointer(pointer: pipeline)
        let linker = PadLinker(pipeline: pipeline, branches: branches, inputName: inputName, isLiveInput: input.isLive,
                               decodeThreads: settings.decodeThreads, logger: logger, streamsChanged: streamsChanged)
        self.linker = linker
        TaskNamer.install(on: pipeline, tag: threadTag) { _ in .decode }
        if case .srtListener(let uri) = input, let source = fr_bin_find_by_factory(pipeline, "srtsrc") {
            // A refused caller never reaches the pipeline: without this, a broadcaster with the
            // wrong passphrase would look like no broadcaster at all.
            let hasPassphrase = uri.split(separator: "?").last?.split(separator: "&").contains { $0.hasPrefix("passphrase=") } ?? false
            srtWatch = SRTCallerWatch.shared.watch(source, hasPassphrase: hasPassphrase) { [logger, inputName, linker] refusal in
                linker.noteRefusal(refusal)
                logger.warning("\(refusal); still listening on \(inputName)", metadata: ["input": "\(inputName)"])
            }
            fr_unref(source)
        } else {
            srtWatch = nil
        }
        // Branch templates are checked now so that a typo is reported at start, not mid-stream.
        for (description, file) in [(branches.video, "ingest-video.gst"), (branches.audioAAC, "ingest-audio-aac.gst"), (branches.audioEncode, "ingest-audio-encode.gst")] {
            let bin = try GStreamer.parseBin(description, files: [library.directory + "/" + file])
            fr_unref(bin)
        }
        let decode = try GStreamer.element("decode", in: pipeline, files: files)
        defer { fr_unref(decode) }
        try linker.connectHandlers(decode: decode)
    }

    deinit {
        // Setting NULL returns once every streaming thread has left the pipeline's elements, so
        // no handler is running or can start; the handlers are then disconnected, which releases
        // their references to the linker.
        fr_set_state(pipeline, GST_STATE_NULL)
        linker.disconnectHandlers()
        if let srtWatch { SRTCallerWatch.shared.stopWatching(srtWatch) }
        fr_unref(pipeline)
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

    var snapshot: Streams { linker.streams }

    /// Decoded frames that reached the video appsink, including any it dropped.
    var framesArrived: Int { linker.framesArrived.value }

    /// Bytes of the input's stream read so far (the container, before demuxing).
    var bytesReceived: Int { linker.bytesReceived.value }

    /// The last caller an SRT listener input refused (a wrong passphrase...), if any.
    var lastSRTRefusal: SRTRefusal? { linker.lastSRTRefusal }

    /// The output has no audio: audio streams that appear from now on are discarded.
    func refuseAudio() { linker.refuseAudio() }

    /// From now on frames of this size are delivered whatever the input sends: a broadcaster
    /// switching resolution mid-stream, or coming back with another one, is scaled to the size
    /// the output (and upstream) was opened with, instead of ending the stream.
    func lockVideoSize(width: Int, height: Int) { linker.lockVideoSize(width: width, height: height) }
}
