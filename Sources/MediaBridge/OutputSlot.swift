import StreamPlan

/// One output of a stream as `RelayOutputs` keeps it, behind its lock: its pipeline while it is up,
/// what the operator sees of it, and what it has been sent, so that each encoded frame and audio
/// packet is handed to it only when its muxer can take it.
struct OutputSlot {
    let endpoint: OutputEndpoint
    var pipeline: OutputPipeline?
    var status: MediaRelay.OutputStatus
    var builtAt: ContinuousClock.Instant?
    /// Video starts at a keyframe: after a (re)build, or after being skipped for lagging.
    private(set) var waitsForKeyframe = true
    private var videoCapsVersion = 0
    private var audioCapsVersion = 0
    var audioEnded = false
    var videoEnded = false
    var finished = false
    /// A recording's current segment: its file, and the running time of its first keyframe.
    var segmentPath: String?
    private(set) var segmentStartedAt: UInt64?

    init(endpoint: OutputEndpoint, index: Int) {
        self.endpoint = endpoint
        status = .init(index: index, address: endpoint.description, state: .sending)
    }

    /// Neither given up, finished nor removed.
    var isActive: Bool { status.state == .sending || status.state == .reconnecting }

    /// A new pipeline in the slot starts at a keyframe, and gets the caps before its first packets;
    /// once the stream's audio is over (`audioOver`), it starts with its audio ended, or its muxer
    /// would wait for audio for ever.
    mutating func startsAtNextKeyframe(audioOver: Bool) {
        waitsForKeyframe = true
        videoCapsVersion = 0
        audioCapsVersion = 0
        audioEnded = audioOver
        segmentStartedAt = nil
    }

    /// The pipeline to push an encoded frame to (given the caps of version `caps` first when it has
    /// not had them), or nil when this output misses the frame, counted: it is down, or waits for a
    /// keyframe since it came up or since it fell more than `maximumBacklog` behind (`live` only).
    mutating func takeVideo(keyframe: Bool, pts: UInt64, size: Int, caps: (pointer: CapsPointer, version: Int)?, live: Bool,
                            maximumBacklog: UInt64) -> OutputPipeline? {
        guard isActive else { return nil }
        guard let output = pipeline, !videoEnded else {
            status.framesMissed += 1
            return nil
        }
        if live, !waitsForKeyframe, output.queuedVideo > maximumBacklog { waitsForKeyframe = true }
        if waitsForKeyframe {
            guard keyframe else {
                status.framesMissed += 1
                return nil
            }
            waitsForKeyframe = false
            if case .recording = endpoint { segmentStartedAt = pts }
        }
        if let caps, videoCapsVersion != caps.version {
            output.setVideoCaps(caps.pointer.pointer)
            videoCapsVersion = caps.version
        }
        status.framesSent += 1
        status.bytesSent += size
        return output
    }

    /// The pipeline to push an audio packet to (given the caps of version `caps` first when it has
    /// not had them), or nil when its audio is over. Audio is not held back until the output's first
    /// keyframe: a file relayed as fast as possible sends its audio ahead, and waits on the
    /// output's queue instead.
    mutating func takeAudio(size: Int, caps: (pointer: CapsPointer, version: Int)?) -> OutputPipeline? {
        guard let output = pipeline, !audioEnded, !finished else { return nil }
        if let caps, audioCapsVersion != caps.version {
            output.setAudioCaps(caps.pointer.pointer)
            audioCapsVersion = caps.version
        }
        status.bytesSent += size
        return output
    }

    /// The recording whose current segment has lasted its length at the keyframe at `pts`.
    func segmentDue(at pts: UInt64) -> OutputEndpoint.Recording? {
        guard case .recording(let recording) = endpoint, status.state == .sending, pipeline != nil, !videoEnded,
              let started = segmentStartedAt, pts >= started + UInt64(recording.segmentSeconds) * 1_000_000_000 else { return nil }
        return recording
    }
}
