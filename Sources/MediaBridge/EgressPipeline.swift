import CGStreamer
import Synchronization

/// The output side: appsrcs fed by the relay, the encoder, the muxer and the sink.
///
/// Built once the first decoded frame tells the size and rate. A frame the stage draws on while the
/// decoder still holds it is copied into a buffer from a fixed-size pool, so that even then the
/// steady state allocates nothing per frame.
///
/// `@unchecked Sendable` because of its C pointers, all `let`: the pipeline, its appsrcs and the
/// buffer pool are GStreamer objects, whose calls used here (state changes, pushes, caps, pool
/// acquire) are thread-safe; `videoInfo` is written only by `init`. The one mutable value,
/// `startedAt`, is in a Mutex.
final class EgressPipeline: @unchecked Sendable {
    let pipeline: UnsafeMutablePointer<GstElement>
    private let videoSource: UnsafeMutablePointer<GstElement>
    private let audioSource: UnsafeMutablePointer<GstElement>?
    private let pool: UnsafeMutablePointer<GstBufferPool>
    let videoInfo: UnsafeMutablePointer<GstVideoInfo>

    /// Allocated on first use (a relay that never draws on a shared frame never pays for them). At most this many
    /// drawn frames are in flight (appsrc queue plus encoder); a stage that gets
    /// ahead of the encoder waits for a buffer to come back.
    static let poolBuffers: guint = 12

    private let startedAt = Mutex(ContinuousClock.now)

    init(description: String, files: [String], videoCaps: UnsafeMutablePointer<GstCaps>, withAudio: Bool, threadTag: ThreadTag) throws(MediaError) {
        videoInfo = .allocate(capacity: 1)
        gst_video_info_init(videoInfo)
        guard gst_video_info_from_caps(videoInfo, videoCaps) != 0 else {
            videoInfo.deallocate()
            throw MediaError(.input, "the input's video caps are not usable raw video: \(GStreamer.takeString(fr_caps_string(videoCaps)) ?? "")")
        }
        do {
            pipeline = try GStreamer.parse(description, files: files)
        } catch {
            videoInfo.deallocate()
            throw error
        }
        do {
            videoSource = try GStreamer.element("video_in", in: pipeline, files: files)
        } catch {
            fr_unref(pipeline)
            videoInfo.deallocate()
            throw error
        }
        do {
            audioSource = withAudio ? try GStreamer.element("audio_in", in: pipeline, files: files) : nil
        } catch {
            fr_unref(videoSource)
            fr_unref(pipeline)
            videoInfo.deallocate()
            throw error
        }
        fr_appsrc_set_caps(videoSource, videoCaps)
        // video_in's streaming thread runs x264 (and x264 starts its own threads from it); every
        // other task belongs to muxing and sending: the audio branch, the queue, the muxer.
        TaskNamer.install(on: pipeline, tag: threadTag) { $0 == "video_in" ? .encode : .mux }
        guard let pool = fr_video_pool_new(videoCaps, guint(fr_video_info_size(videoInfo)), 0, Self.poolBuffers) else {
            fr_unref(videoSource)
            fr_unref(audioSource)
            fr_unref(pipeline)
            videoInfo.deallocate()
            throw MediaError(.output, "cannot allocate frame buffers for the output")
        }
        self.pool = pool
    }

    deinit {
        fr_set_state(pipeline, GST_STATE_NULL)
        fr_unref(videoSource)
        fr_unref(audioSource)
        fr_unref(pipeline)
        fr_pool_release(pool)
        videoInfo.deallocate()
    }

    var hasAudio: Bool { audioSource != nil }

    func start() throws(MediaError) {
        startedAt.withLock { $0 = .now }
        if fr_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE {
            throw MediaError(.output, "the output pipeline failed to start")
        }
    }

    /// A writable frame buffer from the pool; nil only when the pipeline is shutting down.
    func acquireFrameBuffer() -> UnsafeMutablePointer<GstBuffer>? { fr_pool_acquire(pool) }

    /// Pushes a video buffer, taking ownership. False when the output no longer accepts data.
    func pushVideo(_ buffer: UnsafeMutablePointer<GstBuffer>) -> Bool {
        fr_appsrc_push(videoSource, buffer) == GST_FLOW_OK
    }

    func pushAudio(_ buffer: UnsafeMutablePointer<GstBuffer>) -> Bool {
        guard let audioSource else {
            fr_buffer_unref(buffer)
            return true
        }
        return fr_appsrc_push(audioSource, buffer) == GST_FLOW_OK
    }

    /// Audio caps (with the AAC codec_data) are known from the first audio packet, after start.
    func setAudioCaps(_ caps: UnsafeMutablePointer<GstCaps>) {
        if let audioSource { fr_appsrc_set_caps(audioSource, caps) }
    }

    /// Running for at least this long: an output that has stayed up after a reconnect.
    func isHealthyFor(seconds: Int) -> Bool { ContinuousClock.now - startedAt.withLock { $0 } > .seconds(seconds) }

    func endVideo() { _ = fr_appsrc_end_of_stream(videoSource) }
    func endAudio() { if let audioSource { _ = fr_appsrc_end_of_stream(audioSource) } }
}
