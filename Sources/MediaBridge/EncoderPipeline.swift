internal import CGStreamer
import Synchronization

/// The encoder: an appsrc fed by the relay, x264 and an appsink of H.264 access units, which the
/// relay hands to every output of the stream (`RelayOutputs`). Built once, from the first decoded
/// frame's size and rate; it lives as long as the stream, whatever its outputs do.
///
/// A decoded frame is copied into a buffer from a fixed-size pool before the stage draws on it, so
/// that the steady state allocates nothing per frame; one sent as decoded needs no copy (see
/// `EncoderStamps`).
///
/// `@unchecked Sendable` because of its C pointers, all `let`: the pipeline, its appsrc, its
/// appsink and the buffer pool are GStreamer objects, whose calls used here (state changes, pushes,
/// pulls, caps, events, pool acquire) are thread-safe; `videoInfo` is written only by `init`.
final class EncoderPipeline: @unchecked Sendable {
    let pipeline: UnsafeMutablePointer<GstElement>
    private let videoSource: UnsafeMutablePointer<GstElement>
    private let encoded: UnsafeMutablePointer<GstElement>
    private let pool: UnsafeMutablePointer<GstBufferPool>
    let videoInfo: UnsafeMutablePointer<GstVideoInfo>

    /// At most this many drawn frames are in flight (appsrc queue plus encoder); a stage that gets
    /// ahead of the encoder waits for a buffer to come back.
    static let poolBuffers: guint = 12

    init(description: String, files: [String], videoCaps: UnsafeMutablePointer<GstCaps>, threadTag: ThreadTag) throws(MediaError) {
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
            encoded = try GStreamer.element("encoded", in: pipeline, files: files)
        } catch {
            fr_unref(videoSource)
            fr_unref(pipeline)
            videoInfo.deallocate()
            throw error
        }
        fr_appsrc_set_caps(videoSource, videoCaps)
        // video_in's streaming thread runs x264 (and x264 starts its own threads from it).
        TaskNamer.install(on: pipeline, tag: threadTag) { _ in .encode }
        guard let pool = fr_video_pool_new(videoCaps, guint(fr_video_info_size(videoInfo)), 0, Self.poolBuffers) else {
            fr_unref(videoSource)
            fr_unref(encoded)
            fr_unref(pipeline)
            videoInfo.deallocate()
            throw MediaError(.output, "cannot allocate frame buffers for the encoder")
        }
        self.pool = pool
    }

    deinit {
        fr_set_state(pipeline, GST_STATE_NULL)
        fr_unref(videoSource)
        fr_unref(encoded)
        fr_unref(pipeline)
        fr_pool_release(pool)
        videoInfo.deallocate()
    }

    func start() throws(MediaError) {
        if fr_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE {
            throw MediaError(.output, "the encoder failed to start")
        }
    }

    /// A writable frame buffer from the pool; nil only when the pipeline is shutting down.
    func acquireFrameBuffer() -> UnsafeMutablePointer<GstBuffer>? { fr_pool_acquire(pool) }

    /// Pushes a video buffer, taking ownership. False when the encoder no longer accepts data.
    func pushVideo(_ buffer: UnsafeMutablePointer<GstBuffer>) -> Bool {
        fr_appsrc_push(videoSource, buffer) == GST_FLOW_OK
    }

    /// Encodes a frame stamped `offset + t` at output time t (see `EncoderStamps`); set before
    /// the first frame.
    func delayTimeline(by offset: UInt64) { fr_element_delay_source(videoSource, guint64(offset)) }

    func endVideo() { _ = fr_appsrc_end_of_stream(videoSource) }

    /// The next encoded access unit, waiting as long as it takes; nil at the end of the stream or
    /// once the encoder is stopped.
    func nextEncoded() -> OpaquePointer? { fr_appsink_pull(encoded, GstClockTime.max) }

    /// Asks x264 for a keyframe: an output that starts or comes back starts from it.
    func requestKeyframe() { _ = fr_request_keyframe(encoded) }
}
