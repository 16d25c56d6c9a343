internal import CGStreamer
import StreamPlan

/// One output of a stream: appsrcs of encoded video and AAC audio, the muxer and the sink
/// (output.gst, sink-<kind>.gst, output-audio.gst). Each output has its own pipeline and bus, so
/// that one that fails is stopped and rebuilt without touching the encoder or another output.
///
/// Its GStreamer objects are held as `ElementPointer`s (see there why they may be shared), so the
/// compiler checks that nothing else in it crosses threads.
final class OutputPipeline: Sendable {
    private let pipelineElement: ElementPointer
    private let videoSourceElement: ElementPointer
    private let audioSourceElement: ElementPointer?

    var pipeline: UnsafeMutablePointer<GstElement> { pipelineElement.pointer }
    private var videoSource: UnsafeMutablePointer<GstElement> { videoSourceElement.pointer }
    private var audioSource: UnsafeMutablePointer<GstElement>? { audioSourceElement?.pointer }

    init(description: String, files: [String], withAudio: Bool, threadTag: ThreadTag) throws(MediaError) {
        let pipeline = try GStreamer.parse(description, files: files)
        let videoSource: UnsafeMutablePointer<GstElement>
        do {
            videoSource = try GStreamer.element("video_in", in: pipeline, files: files)
        } catch {
            fr_unref(pipeline)
            throw error
        }
        let audioSource: UnsafeMutablePointer<GstElement>?
        do {
            audioSource = withAudio ? try GStreamer.element("audio_in", in: pipeline, files: files) : nil
        } catch {
            fr_unref(videoSource)
            fr_unref(pipeline)
            throw error
        }
        pipelineElement = ElementPointer(pointer: pipeline)
        videoSourceElement = ElementPointer(pointer: videoSource)
        audioSourceElement = audioSource.map(ElementPointer.init(pointer:))
        TaskNamer.install(on: pipeline, tag: threadTag) { _ in .mux }
    }

    deinit {
        fr_set_state(pipeline, GST_STATE_NULL)
        fr_unref(videoSource)
        fr_unref(audioSource)
        fr_unref(pipeline)
    }

    func start() throws(MediaError) {
        if fr_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE {
            throw MediaError(.output, "the output pipeline failed to start")
        }
    }

    func stop() { fr_set_state(pipeline, GST_STATE_NULL) }

    func setVideoCaps(_ caps: UnsafeMutablePointer<GstCaps>) { fr_appsrc_set_caps(videoSource, caps) }

    func setAudioCaps(_ caps: UnsafeMutablePointer<GstCaps>) {
        if let audioSource { fr_appsrc_set_caps(audioSource, caps) }
    }

    /// Pushes a buffer, taking ownership. False when the output no longer accepts data.
    func pushVideo(_ buffer: UnsafeMutablePointer<GstBuffer>) -> Bool { fr_appsrc_push(videoSource, buffer) == GST_FLOW_OK }

    func pushAudio(_ buffer: UnsafeMutablePointer<GstBuffer>) -> Bool {
        guard let audioSource else {
            fr_buffer_unref(buffer)
            return true
        }
        return fr_appsrc_push(audioSource, buffer) == GST_FLOW_OK
    }

    /// Nanoseconds of video waiting to be muxed and sent: how far this output lags behind.
    var queuedVideo: UInt64 { UInt64(fr_appsrc_queued_time(videoSource)) }

    func endVideo() { _ = fr_appsrc_end_of_stream(videoSource) }
    func endAudio() { if let audioSource { _ = fr_appsrc_end_of_stream(audioSource) } }
}
