internal import CGStreamer
import FrameKit
import Glibc
import StreamPlan

/// Reads the video frames of an image or video file in order, for inspection (no audio, no clock).
public final class FrameFileReader {
    private let pipeline: UnsafeMutablePointer<GstElement>
    private let sink: UnsafeMutablePointer<GstElement>
    private let path: String

    public init(path: String, library: PipelineLibrary) throws(MediaError) {
        try GStreamer.initialize()
        guard access(path, R_OK) == 0 else {
            throw MediaError(.input, "cannot read \(path): \(String(cString: strerror(errno))); give the path of an image (PNG, JPEG) or a video file")
        }
        self.path = path
        let description: String
        do {
            description = try library.template("inspect-source.gst").filled(["location": PipelineTemplate.quoted(path)])
        } catch {
            throw MediaError(.pipelineTemplate, error.description)
        }
        let file = library.directory + "/inspect-source.gst"
        pipeline = try GStreamer.parse(description, files: [file])
        sink = try GStreamer.element("video_out", in: pipeline, files: [file])
    }

    deinit {
        _ = fr_set_state(pipeline, GST_STATE_NULL)
        fr_unref(sink)
        fr_unref(pipeline)
    }

    /// Calls `body` with each decoded frame (read-only, valid during the call) and its index.
    public func forEachFrame(_ body: (VideoFrame, Int) throws(MediaError) -> Void) throws(MediaError) {
        guard fr_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE else { throw failure() }
        let info = UnsafeMutablePointer<GstVideoInfo>.allocate(capacity: 1)
        let mapped = UnsafeMutablePointer<GstVideoFrame>.allocate(capacity: 1)
        defer {
            info.deallocate()
            mapped.deallocate()
        }
        // Sleeps until the sink queues a frame or ends, or the bus has a message (an error
        // reaches no appsink).
        let queued = try ChangeSignal(pollable: true)
        queued.notify(onSamplesOf: sink)
        var descriptors = [pollfd(fd: queued.descriptor ?? -1, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: fr_bus_pollfd(pipeline), events: Int16(POLLIN), revents: 0)]
        var index = 0
        while true {
            queued.clearDescriptor()
            guard let sample = fr_appsink_pull(sink, 0) else {
                if fr_appsink_is_eos(sink) != 0 { break }
                if let error = busError() { throw error }
                _ = poll(&descriptors, nfds_t(descriptors.count), -1)
                continue
            }
            defer { fr_sample_unref(sample) }
            guard let caps = fr_sample_caps(sample), let buffer = fr_sample_buffer(sample) else { continue }
            gst_video_info_init(info)
            guard gst_video_info_from_caps(info, caps) != 0, gst_video_frame_map(mapped, info, buffer, GST_MAP_READ) != 0 else { continue }
            let pts = UInt64(fr_buffer_pts(buffer))
            let frame = videoFrame(mapped, pts: pts == UInt64.max ? 0 : pts, duration: UInt64(fr_buffer_duration(buffer)))
            do {
                try body(frame, index)
            } catch {
                gst_video_frame_unmap(mapped)
                throw error
            }
            gst_video_frame_unmap(mapped)
            index += 1
        }
        if index == 0 { throw MediaError(.input, "\(path) holds no video frame: give an image (PNG, JPEG) or a video file") }
    }

    private func busError() -> MediaError? {
        while let event = GStreamer.popBus(pipeline, timeoutNanoseconds: 0) {
            switch event {
            case .error(let error):
                if error.isUnrecognisedMedia {
                    return MediaError(.input, "\(path) is not an image or a video GStreamer can read (\(error.text)); give a PNG, JPEG or video file")
                }
                return MediaError(.input, "cannot read \(path): \(error.summary)")
            case .missingPlugin(let what):
                return MediaError(.input, "cannot decode \(path): \(what.description) is not installed")
            default:
                continue
            }
        }
        return nil
    }

    private func failure() -> MediaError {
        busError() ?? MediaError(.input, "cannot start reading \(path)")
    }
}

/// Writes frames, each a copy of a read frame with a drawing on it, as a PNG image (one frame) or
/// an H.264 video (.mp4, .mkv, .flv, .ts).
public final class FrameFileWriter {
    private let pipeline: UnsafeMutablePointer<GstElement>
    private let source: UnsafeMutablePointer<GstElement>
    private let path: String
    private var info: UnsafeMutablePointer<GstVideoInfo>?
    private let mapped = UnsafeMutablePointer<GstVideoFrame>.allocate(capacity: 1)
    private let copied = UnsafeMutablePointer<GstVideoFrame>.allocate(capacity: 1)

    public init(path: String, library: PipelineLibrary) throws(MediaError) {
        try GStreamer.initialize()
        self.path = path
        let lower = path.lowercased()
        let file: String
        let description: String
        do {
            if lower.hasSuffix(".png") {
                file = "inspect-image.gst"
                description = try library.template(file).filled(["location": PipelineTemplate.quoted(path)])
            } else if let container = OutputEndpoint.Container.allCases.first(where: { lower.hasSuffix("." + $0.rawValue) }) {
                file = "inspect-video.gst"
                let sink = try library.template("sink-\(container.rawValue).gst").filled(["location": PipelineTemplate.quoted(path)])
                description = try library.template(file).filled(["sink": sink])
            } else {
                throw MediaError(.output, "cannot tell how to write \(path): end it in .png for an image, or .mp4, .mkv, .flv or .ts for a video")
            }
        } catch let error as PipelineTemplateError {
            throw MediaError(.pipelineTemplate, error.description)
        } catch let error as MediaError {
            throw error
        } catch {
            throw MediaError(.output, "\(error)")
        }
        pipeline = try GStreamer.parse(description, files: [library.directory + "/" + file])
        source = try GStreamer.element("video_in", in: pipeline, files: [library.directory + "/" + file])
    }

    deinit {
        _ = fr_set_state(pipeline, GST_STATE_NULL)
        fr_unref(source)
        fr_unref(pipeline)
        info?.deallocate()
        mapped.deallocate()
        copied.deallocate()
    }

    /// Writes a copy of `frame` after `draw` has drawn on the copy.
    public func write(_ frame: VideoFrame, framesPerSecond: Double, draw: (VideoFrame) -> Void) throws(MediaError) {
        if info == nil { try start(frame, framesPerSecond: framesPerSecond) }
        guard let info, let buffer = gst_buffer_new_allocate(nil, fr_video_info_size(info), nil) else {
            throw MediaError(.output, "out of memory writing \(path)")
        }
        guard gst_video_frame_map(copied, info, buffer, GST_MAP_WRITE) != 0 else {
            fr_buffer_unref(buffer)
            throw MediaError(.output, "cannot map a frame for \(path)")
        }
        let copy = videoFrame(copied, pts: UInt64(max(0, frame.pts)))
        // The copy may be a pixel narrower or shorter than the frame (H.264 wants even sizes).
        for (from, to) in [(frame.luma, copy.luma), (frame.chromaU, copy.chromaU), (frame.chromaV, copy.chromaV)] {
            for row in 0..<min(from.height, to.height) {
                (to.base + row * to.stride).update(from: from.base + row * from.stride, count: min(from.width, to.width))
            }
        }
        draw(copy)
        gst_video_frame_unmap(copied)
        let duration = frame.duration > 0 ? UInt64(frame.duration) : UInt64(1e9 / max(1, framesPerSecond))
        fr_buffer_set_timing(buffer, GstClockTime(max(0, frame.pts)), GstClockTime(duration))
        // A failed encoder stops pulling, and a blocking push would then wait for ever.
        if let error = pendingError() {
            fr_buffer_unref(buffer)
            throw error
        }
        guard fr_appsrc_push(source, buffer) == GST_FLOW_OK else { throw failure() }
    }

    /// Ends the file and waits until it is complete on disk.
    public func finish() throws(MediaError) {
        guard info != nil else { return }
        _ = fr_appsrc_end_of_stream(source)
        while true {
            switch GStreamer.popBus(pipeline, timeoutNanoseconds: 30_000_000_000) {
            case .endOfStream: return
            case .error(let error): throw MediaError(.output, "cannot write \(path): \(error.summary)")
            case nil: throw MediaError(.output, "writing \(path) did not finish within 30 s")
            default: continue
            }
        }
    }

    private func start(_ frame: VideoFrame, framesPerSecond: Double) throws(MediaError) {
        let info = UnsafeMutablePointer<GstVideoInfo>.allocate(capacity: 1)
        gst_video_info_init(info)
        let even = !path.lowercased().hasSuffix(".png")
        let width = even ? max(2, frame.width & ~1) : frame.width, height = even ? max(2, frame.height & ~1) : frame.height
        gst_video_info_set_format(info, GST_VIDEO_FORMAT_I420, guint(width), guint(height))
        let rate = max(1, Int((framesPerSecond * 1000).rounded()))
        fr_video_info_set_fps(info, gint(rate), 1000)
        self.info = info
        let caps = gst_video_info_to_caps(info)
        fr_appsrc_set_caps(source, caps)
        gst_caps_unref(caps)
        guard fr_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE else { throw failure() }
    }

    private func pendingError() -> MediaError? {
        while let event = GStreamer.popBus(pipeline, timeoutNanoseconds: 0) {
            if case .error(let error) = event { return MediaError(.output, "cannot write \(path): \(error.summary)") }
        }
        return nil
    }

    private func failure() -> MediaError {
        pendingError() ?? MediaError(.output, "cannot write \(path)")
    }
}

/// A view of a mapped I420 GstVideoFrame.
func videoFrame(_ mapped: UnsafeMutablePointer<GstVideoFrame>, pts: UInt64, duration: UInt64 = 0) -> VideoFrame {
    let width = Int(fr_video_frame_width(mapped))
    let height = Int(fr_video_frame_height(mapped))
    let chroma = VideoFrame.chromaSize(width: width, height: height)
    func plane(_ index: guint, _ w: Int, _ h: Int) -> Plane {
        Plane(base: fr_video_frame_plane(mapped, index), stride: Int(fr_video_frame_stride(mapped, index)), width: w, height: h)
    }
    return VideoFrame(format: .i420, luma: plane(0, width, height), chromaU: plane(1, chroma.width, chroma.height),
                      chromaV: plane(2, chroma.width, chroma.height),
                      pts: Int64(bitPattern: UInt64(pts)), duration: duration == UInt64.max ? 0 : Int64(duration))
}
