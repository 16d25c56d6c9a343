import FoundationEssentials
import StreamPlan

/// The folder of pipeline templates, and the descriptions built from them for one stream.
public struct PipelineLibrary: Sendable {
    public let directory: String

    public init(directory: String) { self.directory = directory }

    /// `explicit`, then $FACERELAY_PIPELINES, then an installed share folder, then a `Pipelines/`
    /// beside or above the executable (a source checkout), then the working directory's.
    public static func locate(explicit: String? = nil) throws(PipelineTemplateError) -> PipelineLibrary {
        var candidates: [String] = []
        if let explicit { candidates.append(explicit) }
        if let env = ProcessInfo.processInfo.environment["FACERELAY_PIPELINES"] { candidates.append(env) }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        candidates.append(directory.appendingPathComponent("../share/facerelay/Pipelines").standardized.path)
        for _ in 0..<5 {
            candidates.append(directory.appendingPathComponent("Pipelines").path)
            directory = directory.deletingLastPathComponent()
        }
        candidates.append(FileManager.default.currentDirectoryPath + "/Pipelines")
        let ingest = "ingest.gst"
        if let explicit {
            // An operator's choice is never silently replaced by another folder.
            guard FileManager.default.fileExists(atPath: explicit + "/" + ingest) else { throw .directoryNotFound(searched: [explicit]) }
            return PipelineLibrary(directory: explicit)
        }
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0 + "/" + ingest) }) else {
            throw .directoryNotFound(searched: candidates)
        }
        return PipelineLibrary(directory: found)
    }

    public func template(_ name: String) throws(PipelineTemplateError) -> PipelineTemplate {
        try PipelineTemplate(path: directory + "/" + name)
    }

    /// The ingest description: the input's source fragment inside `ingest.gst`.
    public func ingestDescription(for input: InputEndpoint, settings: RelaySettings) throws(PipelineTemplateError) -> String {
        let source: String
        switch input {
        case .rtmp(let url):
            source = try template("source-rtmp.gst").filled([
                "location": PipelineTemplate.quoted(url),
                "timeout_s": String(settings.inputTimeoutSeconds),
                "idle_timeout_s": String(settings.idleTimeoutSeconds),
            ])
        case .srtListener(let uri), .srtCaller(let uri):
            source = try template("source-srt.gst").filled(["uri": PipelineTemplate.quoted(uri)])
        case .file(let path):
            source = try template("source-file.gst").filled(["location": PipelineTemplate.quoted(path)])
        }
        return try template("ingest.gst").filled(["source": source])
    }

    /// Decoded frames the video appsink holds for the frame thread: a live input drops the oldest
    /// beyond this, a file waits.
    public static func videoQueueCapacity(live: Bool) -> Int { live ? 10 : 4 }

    /// Raw frames the encoder's appsrc holds (`max-buffers` in encode.gst).
    public static let encoderQueueCapacity = 4

    /// The branch linked to the decoder's raw video pad, ending in the `video_out` appsink.
    public func videoBranchDescription(live: Bool, sync: Bool) throws(PipelineTemplateError) -> String {
        try template("ingest-video.gst").filled([
            "max_buffers": String(Self.videoQueueCapacity(live: live)),
            "drop": live ? "true" : "false",
            "sync": sync ? "true" : "false",
        ])
    }

    /// The branch linked to the decoder's audio pad, ending in the `audio_out` appsink: AAC is kept
    /// as it is, anything else is encoded to AAC.
    public func audioBranchDescription(isAAC: Bool, sync: Bool, settings: RelaySettings) throws(PipelineTemplateError) -> String {
        try template(isAAC ? "ingest-audio-aac.gst" : "ingest-audio-encode.gst").filled([
            "sync": sync ? "true" : "false",
            "audio_bitrate": String(settings.audioBitrateKbps * 1000),
        ])
    }

    /// The encoder's description: raw frames in, H.264 access units out (encode.gst).
    public func encoderDescription(framesPerSecond: Double, live: Bool, settings: RelaySettings) throws(PipelineTemplateError) -> String {
        let keyframeFrames = max(1, Int((settings.keyframeIntervalSeconds * framesPerSecond).rounded()))
        return try template("encode.gst").filled([
            "x264_preset": settings.x264Preset,
            "encode_threads": String(settings.encodeThreads),
            "bitrate_kbps": String(settings.bitrateKbps),
            "keyframe_frames": String(keyframeFrames),
            "live": live ? "true" : "false",
        ])
    }

    /// One output's description: encoded video (and audio) in, muxed and sent to `output`. A live
    /// stream's outputs never hold the encoder back; a file relayed as fast as possible is (`block`).
    public func outputDescription(for output: OutputEndpoint, withAudio: Bool, live: Bool) throws(PipelineTemplateError) -> String {
        let sink: String
        switch output {
        case .rtmp(let url):
            sink = try template("sink-rtmp.gst").filled(["location": PipelineTemplate.quoted(url)])
        case .srt(let uri):
            sink = try template("sink-srt.gst").filled(["uri": PipelineTemplate.quoted(uri)])
        case .file(let path, let container):
            sink = try template("sink-\(container.rawValue).gst").filled(["location": PipelineTemplate.quoted(path)])
        case .recording(let recording):
            // Each segment is built as the file it goes to; the pattern stands in for checking the template.
            sink = try template("sink-\(recording.container.rawValue).gst").filled(["location": PipelineTemplate.quoted(recording.pattern)])
        }
        let values = ["live": live ? "true" : "false", "block": live ? "false" : "true"]
        var description = try template("output.gst").filled(values.merging(["sink": sink]) { $1 })
        if withAudio { description += " " + (try template("output-audio.gst").filled(values)) }
        return description
    }

    /// The template files an output of `output` is made of, for errors that name them.
    public func outputFiles(for output: OutputEndpoint) -> [String] {
        let kind: String
        switch output {
        case .rtmp: kind = "rtmp"
        case .srt: kind = "srt"
        case .file(_, let container): kind = container.rawValue
        case .recording(let recording): kind = recording.container.rawValue
        }
        return ["output.gst", "sink-\(kind).gst", "output-audio.gst"].map { directory + "/" + $0 }
    }
}

extension RelaySettings {
    /// The stream's lifecycle policies from these settings.
    public var lifecyclePolicy: RelayLifecycle.Policy {
        RelayLifecycle.Policy(startTimeout: inputTimeoutSeconds > 0 ? .seconds(inputTimeoutSeconds) : nil,
                              maximumRetryDelay: .milliseconds(Int(reconnectMaximumDelaySeconds * 1000)),
                              giveUpAfter: reconnectGiveUpSeconds.map { .milliseconds(Int($0 * 1000)) },
                              inputGrace: inputGraceSeconds > 0 ? .milliseconds(Int(inputGraceSeconds * 1000)) : nil)
    }
}
