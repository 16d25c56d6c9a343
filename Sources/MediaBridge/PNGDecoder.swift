import CGStreamer
import FrameKit
import Glibc

/// Decodes PNG files to RGBA (straight alpha) with GStreamer's pngdec: how sticker frames are read.
public struct PNGDecoder: Sendable {
    private let library: PipelineLibrary

    public init(library: PipelineLibrary) throws(MediaError) {
        try GStreamer.initialize()
        self.library = library
    }

    public func decode(_ path: String) throws(MediaError) -> RGBAImage {
        guard access(path, R_OK) == 0 else {
            throw MediaError(.input, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        let file = library.directory + "/image-rgba.gst"
        let description: String
        do {
            description = try library.template("image-rgba.gst").filled(["location": PipelineTemplate.quoted(path)])
        } catch {
            throw MediaError(.pipelineTemplate, error.description)
        }
        let pipeline = try GStreamer.parse(description, files: [file])
        defer {
            _ = fr_set_state(pipeline, GST_STATE_NULL)
            fr_unref(pipeline)
        }
        let sink = try GStreamer.element("image_out", in: pipeline, files: [file])
        defer { fr_unref(sink) }
        guard fr_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE else { throw failure(pipeline, path) }
        let sample = try pullSample(from: sink, of: pipeline, path)
        defer { fr_sample_unref(sample) }
        return try image(in: sample, of: pipeline, path)
    }

    /// The decoded picture, within five seconds. A broken file makes pngdec post an error and the
    /// sink never gets a sample.
    private func pullSample(from sink: UnsafeMutablePointer<GstElement>, of pipeline: UnsafeMutablePointer<GstElement>,
                            _ path: String) throws(MediaError) -> OpaquePointer {
        for _ in 0...50 {
            if let sample = fr_appsink_pull(sink, GstClockTime(100_000_000)) { return sample }
            if fr_appsink_is_eos(sink) != 0 { break }
            if let error = busError(pipeline, path) { throw error }
        }
        throw failure(pipeline, path)
    }

    private func image(in sample: OpaquePointer, of pipeline: UnsafeMutablePointer<GstElement>, _ path: String) throws(MediaError) -> RGBAImage {
        guard let caps = fr_sample_caps(sample), let buffer = fr_sample_buffer(sample) else { throw failure(pipeline, path) }
        let info = UnsafeMutablePointer<GstVideoInfo>.allocate(capacity: 1)
        let mapped = UnsafeMutablePointer<GstVideoFrame>.allocate(capacity: 1)
        defer {
            info.deallocate()
            mapped.deallocate()
        }
        gst_video_info_init(info)
        guard gst_video_info_from_caps(info, caps) != 0, gst_video_frame_map(mapped, info, buffer, GST_MAP_READ) != 0 else {
            throw MediaError(.input, "cannot map the decoded picture of \(path)")
        }
        defer { gst_video_frame_unmap(mapped) }
        let width = Int(fr_video_frame_width(mapped)), height = Int(fr_video_frame_height(mapped))
        let stride = Int(fr_video_frame_stride(mapped, 0))
        let base = fr_video_frame_plane(mapped, 0)!
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        pixels.withUnsafeMutableBufferPointer { out in
            for row in 0..<height {
                (out.baseAddress! + row * width * 4).update(from: base + row * stride, count: width * 4)
            }
        }
        return RGBAImage(width: width, height: height, pixels: pixels)
    }

    private func busError(_ pipeline: UnsafeMutablePointer<GstElement>, _ path: String) -> MediaError? {
        while let event = GStreamer.popBus(pipeline, timeoutNanoseconds: 0) {
            if case .error(let error) = event { return MediaError(.input, "\(path) is not a readable PNG (\(error.text))") }
        }
        return nil
    }

    private func failure(_ pipeline: UnsafeMutablePointer<GstElement>, _ path: String) -> MediaError {
        busError(pipeline, path) ?? MediaError(.input, "\(path) holds no PNG picture")
    }
}
