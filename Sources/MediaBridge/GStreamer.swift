internal import CGStreamer
import Glibc

/// Process-wide GStreamer set-up and the conversions every other file here shares.
enum GStreamer {
    private static let initialization: Result<Void, MediaError> = {
        var message: UnsafeMutablePointer<CChar>?
        guard fr_gst_init(&message) != 0 else {
            return .failure(MediaError(.setup, "GStreamer failed to start: \(takeString(message) ?? "unknown reason")"))
        }
        return .success(())
    }()

    static func initialize() throws(MediaError) {
        try initialization.get()
    }

    /// Elements the relay cannot work without, with the Debian package that provides each.
    static let requiredElements: [(element: String, package: String)] = [
        ("decodebin", "gstreamer1.0-plugins-base"), ("appsink", "gstreamer1.0-plugins-base"),
        ("x264enc", "gstreamer1.0-plugins-ugly"), ("h264parse", "gstreamer1.0-plugins-bad"),
        ("aacparse", "gstreamer1.0-plugins-good"), ("flvmux", "gstreamer1.0-plugins-good"),
        ("avdec_h264", "gstreamer1.0-libav"), ("avenc_aac", "gstreamer1.0-libav"),
    ]

    /// Names the first missing element and its package, so an install problem is not reported as a
    /// pipeline syntax error.
    static func checkRequiredElements() throws(MediaError) {
        for (element, package) in requiredElements where gst_element_factory_find(element) == nil {
            throw MediaError(.setup, "GStreamer element '\(element)' is not installed: apt-get install \(package)")
        }
    }

    /// Copies a C string GStreamer allocated for us and frees it.
    static func takeString(_ pointer: UnsafeMutablePointer<CChar>?) -> String? {
        guard let pointer else { return nil }
        defer { g_free(pointer) }
        return String(cString: pointer)
    }

    static func parse(_ description: String, files: [String]) throws(MediaError) -> UnsafeMutablePointer<GstElement> {
        var message: UnsafeMutablePointer<CChar>?
        guard let element = fr_parse_launch(description, &message) else {
            throw templateError(files: files, message: takeString(message))
        }
        return element
    }

    static func parseBin(_ description: String, files: [String]) throws(MediaError) -> UnsafeMutablePointer<GstElement> {
        var message: UnsafeMutablePointer<CChar>?
        guard let bin = fr_parse_bin(description, &message) else {
            throw templateError(files: files, message: takeString(message))
        }
        return bin
    }

    static func templateError(files: [String], message: String?) -> MediaError {
        MediaError(.pipelineTemplate, "pipeline from \(files.joined(separator: " + ")) does not build: GStreamer says \"\(message ?? "unknown error")\"; fix the file or restore it from the FaceRelay release")
    }

    /// An element by name inside a pipeline, or an error naming the template that should define it.
    static func element(_ name: String, in bin: UnsafeMutablePointer<GstElement>, files: [String]) throws(MediaError) -> UnsafeMutablePointer<GstElement> {
        guard let element = fr_bin_get(bin, name) else {
            throw MediaError(.pipelineTemplate, "pipeline from \(files.joined(separator: " + ")) has no element named '\(name)'; facerelay needs it (name=\(name))")
        }
        return element
    }

    /// One bus message, already parsed into Swift.
    enum BusEvent {
        case error(BusError)
        case warning(source: String, text: String)
        case endOfStream
        case missingPlugin(MissingPlugin)
    }

    static func popBus(_ pipeline: UnsafeMutablePointer<GstElement>, timeoutNanoseconds: UInt64) -> BusEvent? {
        guard let message = fr_bus_pop(pipeline, GstClockTime(timeoutNanoseconds)) else { return nil }
        defer { fr_message_unref(message) }
        let source = String(cString: fr_message_source_name(message))
        switch fr_message_type(message) {
        case GST_MESSAGE_EOS:
            return .endOfStream
        case GST_MESSAGE_ERROR, GST_MESSAGE_WARNING:
            var text: UnsafeMutablePointer<CChar>?
            var debug: UnsafeMutablePointer<CChar>?
            var code: gint = 0
            var domain: GQuark = 0
            fr_message_parse(message, &text, &debug, &code, &domain)
            let textString = takeString(text) ?? ""
            let debugString = takeString(debug) ?? ""
            if fr_message_type(message) == GST_MESSAGE_WARNING { return .warning(source: source, text: textString) }
            let kind: BusError.Domain = fr_is_stream_error(domain) != 0 ? .stream : fr_is_resource_error(domain) != 0 ? .resource : .other
            return .error(BusError(source: source, text: textString, debug: debugString, domain: kind, code: code))
        case GST_MESSAGE_ELEMENT:
            guard let missing = takeString(fr_message_missing_plugin(message)) else { return nil }
            var mediaType: UnsafeMutablePointer<CChar>?
            var codecName: UnsafeMutablePointer<CChar>?
            guard fr_message_missing_decoder(message, &mediaType, &codecName) != 0 else { return .missingPlugin(MissingPlugin(description: missing)) }
            return .missingPlugin(MissingPlugin(description: missing, decodedMediaType: takeString(mediaType), codecName: takeString(codecName)))
        default:
            return nil
        }
    }
}

/// A plugin GStreamer looked for and did not find, as its missing-plugin message describes it.
struct MissingPlugin {
    /// GStreamer's own words: "decoder for video/x-dirac, width=(int)320, ...".
    let description: String
    /// For a missing decoder, the media type it would decode ("video/x-dirac")...
    var decodedMediaType: String?
    /// ...and GStreamer's name for that codec ("Dirac").
    var codecName: String?

    var isVideoDecoder: Bool { decodedMediaType?.hasPrefix("video/") == true }

    /// "Dirac video (video/x-dirac)", or GStreamer's description when it is not a decoder.
    var what: String {
        guard let decodedMediaType else { return description }
        let kind = decodedMediaType.hasPrefix("video/") ? "video" : decodedMediaType.hasPrefix("audio/") ? "audio" : "data"
        // pbutils names a codec it does not know by its media type: say so in words.
        guard let codecName, codecName != decodedMediaType else { return "\(kind) in a codec GStreamer does not know (\(decodedMediaType))" }
        return "\(codecName) \(kind) (\(decodedMediaType))"
    }
}

/// A GStreamer error message: the element that posted it, its text, and GStreamer's error class.
struct BusError {
    enum Domain { case stream, resource, other }
    let source: String
    let text: String
    let debug: String
    let domain: Domain
    let code: Int32

    /// The input is not something GStreamer can recognise as media (random bytes, a text file).
    var isUnrecognisedMedia: Bool {
        domain == .stream && (code == Int32(GST_STREAM_ERROR_TYPE_NOT_FOUND.rawValue) || code == Int32(GST_STREAM_ERROR_WRONG_TYPE.rawValue))
    }

    var isMissingCodec: Bool { domain == .stream && code == Int32(GST_STREAM_ERROR_CODEC_NOT_FOUND.rawValue) }


    var summary: String { "\(text) (\(source)\(debug.isEmpty ? "" : ": " + (debug.split(separator: "\n").last.map(String.init) ?? "")))" }
}

/// Call first thing in `main`, before any second thread exists: glibc fixes the arena limit when a
/// thread first needs an arena of its own, and ignores a later change.
///
/// glibc gives threads their own malloc arenas (up to 8 per core) and keeps what each one freed. A
/// relay starts new threads whenever it rebuilds an output (x264's, GStreamer's), so with the
/// default every upstream loss left 5-25 MB more resident for good (+110 MB over a 10-minute soak
/// with a loss a minute); two arenas keep RSS flat at the same CPU.
///
/// glibc also raises its mmap threshold up to 32 MB each time a mapped block is freed, after which
/// pictures and encoder buffers (1-4 MB each, made anew with every rebuilt output) come from the
/// arenas, where the holes they leave keep the heap resident: with two arenas the heap in use
/// stayed flat over a soak while RSS swung by 20 MB and crept up. A fixed threshold keeps such
/// blocks in mappings of their own, given back whole when freed; the pools that hold pictures
/// keep them, so this costs no mapping per frame.
public func tuneMallocForThreadChurn() {
    fr_tune_malloc(2, 256 * 1024)
}

/// Loads GStreamer and its plugin registry now (seconds on a machine that never ran it) and checks
/// the elements relays need, so that a service's first stream does not pay for it.
public func prepareMediaBridge() throws(MediaError) {
    try GStreamer.initialize()
    try GStreamer.checkRequiredElements()
}
