import StreamPlan

/// What the user reads when an input fails: GStreamer's bus errors, missing plugins and silent
/// inputs turned into a `MediaError` that says what went wrong, where, and what to do.
///
/// Pure: it is told what the relay knows (whether video ever flowed, what the ingest found) and
/// touches no pipeline, so every message is tested as it is worded.
struct InputErrorDescriber: Sendable {
    let input: InputEndpoint
    /// How long the input may take to deliver its first frame (`RelaySettings.inputTimeoutSeconds`).
    let inputTimeoutSeconds: Int
    /// How long a live input may stay silent (`RelaySettings.idleTimeoutSeconds`).
    let idleTimeoutSeconds: Int

    /// An error on the ingest's bus. `everStarted`: video has flowed; `missingPlugin`: the one
    /// `keeping(_:over:)` kept from the missing-plugin messages so far.
    func describe(_ error: BusError, missingPlugin: MissingPlugin?, everStarted: Bool) -> MediaError {
        // nginx-rtmp ends a play nobody publishes to after a while, which can come before the input
        // time-out; the demuxer then sees end-of-stream before any data.
        if case .rtmp(let url) = input, !everStarted, error.isUnrecognisedMedia {
            return MediaError(.input, "no video from \(url): the server ended the stream before any data came; is the stream key publishing?")
        }
        if let missingPlugin { return undecodable(missingPlugin) }
        if error.isUnrecognisedMedia {
            return MediaError(.input, "input \(input) is not a media stream GStreamer recognises (\(error.text)); send FLV, MP4, MKV or MPEG-TS with H.264 video")
        }
        if error.isMissingCodec {
            return MediaError(.input, "input \(input) uses a codec this machine cannot decode: \(error.text); send H.264 video")
        }
        switch error.domain {
        case .resource:
            return MediaError(.input, "cannot read input \(input): \(error.summary); check the address and that the server is up")
        case .stream:
            return MediaError(.input, "input \(input) is damaged or unsupported: \(error.summary)")
        case .other:
            return MediaError(.input, "input \(input) failed: \(error.summary)")
        }
    }

    /// The input needs a plugin this machine lacks.
    func undecodable(_ missing: MissingPlugin) -> MediaError {
        if missing.isVideoDecoder {
            return MediaError(.input, "input \(input) carries \(missing.what), which GStreamer on this machine cannot decode; have the broadcaster send H.264 or H.265 video, or install a GStreamer plugin that decodes it")
        }
        return MediaError(.input, "input \(input) needs a GStreamer plugin that is not installed (\(missing.what)); install gstreamer1.0-libav and gstreamer1.0-plugins-bad, or send H.264 video")
    }

    /// The ingest announced all its streams and none is video.
    func noVideoStream(_ streams: IngestPipeline.Streams, missingPlugin: MissingPlugin?) -> MediaError {
        if let missingPlugin, missingPlugin.isVideoDecoder { return undecodable(missingPlugin) }
        return MediaError(.input, "input \(input) has no video stream\(streams.audioSink == nil ? "" : " (only audio)"); FaceRelay needs a video stream")
    }

    /// No first frame within the start time-out. `lastSRTRefusal`: an SRT listener's last refused caller.
    func noMedia(_ streams: IngestPipeline.Streams, lastSRTRefusal: SRTRefusal?) -> MediaError {
        let wait = "\(inputTimeoutSeconds) s"
        // A demuxer told to expect video (an RTMP pull's FLV header always announces both tracks)
        // waits for it and never says there is none: audio alone is the broadcaster's mistake,
        // not a silent input.
        let onlyAudio = streams.audioSink != nil || streams.demuxedKinds.contains("audio") && !streams.demuxedKinds.contains("video")
        if onlyAudio, streams.videoSink == nil {
            return MediaError(.input, "input \(input) has no video stream (only audio for \(wait)); FaceRelay needs a video stream: check the broadcaster's video source and encoder")
        }
        switch input {
        case .rtmp(let url):
            return MediaError(.input, "no video from \(url) within \(wait): is the stream key publishing? (raise --input-timeout to wait longer)")
        case .srtListener:
            // The input's description, not its URI: the URI holds the passphrase.
            let refused = lastSRTRefusal.map { "; the last caller was refused: \($0)" } ?? ""
            return MediaError(.input, "no broadcaster sent video to \(input) within \(wait) (raise --input-timeout, or 0 to wait forever)\(refused)")
        case .srtCaller:
            return MediaError(.input, "no video from \(input) within \(wait): is the SRT listener up? (raise --input-timeout to wait longer)")
        case .file(let path):
            return MediaError(.input, "no video decoded from \(path) within \(wait)")
        }
    }

    /// The input ended before a single frame, with no stop asked for.
    var endedWithoutVideo: MediaError {
        MediaError(.input, "input \(input) ended without a single video frame; it needs a video stream")
    }

    /// The input's frames changed size or format mid-stream; `caps` is GStreamer's text for the new ones.
    func formatChanged(to caps: String) -> MediaError {
        MediaError(.input, "input \(input) changed its picture size or format mid-stream (now \(caps)); restart the relay for the new format")
    }

    /// Why a live input's stream ended: rtmp2src ends it the same way for a publisher that
    /// stopped and for one silent past the idle time-out.
    var liveInputEndReason: String {
        if case .rtmp = input, idleTimeoutSeconds > 0 {
            return "the publisher stopped, or sent nothing for \(idleTimeoutSeconds) s"
        }
        return "the broadcaster stopped"
    }

    /// The missing plugin that matters most: a video decoder (without it there is no stream) once
    /// one is seen, else the latest.
    static func keeping(_ missing: MissingPlugin, over kept: MissingPlugin?) -> MissingPlugin? {
        kept?.isVideoDecoder == true ? kept : missing
    }

    /// The warning to log when only a secondary stream (audio, data) is lost to a missing decoder;
    /// nil when the plugin is not a decoder, or decodes video (which `undecodable` reports).
    func streamLeftOut(_ missing: MissingPlugin) -> String? {
        guard missing.decodedMediaType != nil, !missing.isVideoDecoder else { return nil }
        return "input \(input) carries \(missing.what), which GStreamer on this machine cannot decode; relaying without it"
    }
}

extension InputErrorDescriber {
    init(input: InputEndpoint, settings: RelaySettings) {
        self.init(input: input, inputTimeoutSeconds: settings.inputTimeoutSeconds, idleTimeoutSeconds: settings.idleTimeoutSeconds)
    }
}
