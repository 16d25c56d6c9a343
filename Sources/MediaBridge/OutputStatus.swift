internal import CGStreamer

// What a relay tells about its stream and each of its outputs.

extension MediaRelay {
    public struct StreamInfo: Sendable {
        public let width: Int
        public let height: Int
        public let framesPerSecond: Double
        public let hasAudio: Bool

        public init(width: Int, height: Int, framesPerSecond: Double, hasAudio: Bool) {
            self.width = width
            self.height = height
            self.framesPerSecond = framesPerSecond
            self.hasAudio = hasAudio
        }
    }

    /// One output of a stream, as an operator sees it.
    public struct OutputStatus: Sendable, Equatable {
        public enum State: String, Sendable {
            /// Built; the first packets go out.
            case sending
            /// Failed; rebuilt after the lifecycle's pause (see `RelayLifecycle`).
            case reconnecting
            /// Given up (unreachable past the give-up time, a file that cannot be written, removed).
            case failed
            /// Finalised at the end of the stream.
            case finished
            /// Taken out of the stream by `remove-output` (a file is finalised).
            case removed
        }

        /// The output's number in its stream: its place in the list it was started with, stable
        /// while the stream lives (an added output gets the next number).
        public let index: Int
        /// The address, its stream key or passphrase masked.
        public let address: String
        public var state: State
        /// Encoded video and audio handed to the muxer since the stream started.
        public var bytesSent = 0
        public var framesSent = 0
        /// Encoded frames this output did not get: while it was down, waiting for a keyframe after
        /// coming back, or skipped for being too far behind.
        public var framesMissed = 0
        public var reconnects = 0
        /// Since the output was last built, while it sends.
        public var connectedSeconds: Double = 0
        public var lastError: String?

        public init(index: Int, address: String, state: State) {
            self.index = index
            self.address = address
            self.state = state
        }
    }
}

extension MediaRelay.StreamInfo {
    /// Size and rate from a frame's caps.
    init(caps: UnsafeMutablePointer<GstCaps>, withAudio: Bool) throws(MediaError) {
        let info = UnsafeMutablePointer<GstVideoInfo>.allocate(capacity: 1)
        defer { info.deallocate() }
        gst_video_info_init(info)
        guard gst_video_info_from_caps(info, caps) != 0 else {
            throw MediaError(.input, "the input's video caps are not usable raw video: \(GStreamer.takeString(fr_caps_string(caps)) ?? "")")
        }
        let fpsN = fr_video_info_fps_n(info), fpsD = fr_video_info_fps_d(info)
        self.init(width: Int(fr_video_info_width(info)), height: Int(fr_video_info_height(info)),
                  framesPerSecond: fpsN > 0 && fpsD > 0 ? Double(fpsN) / Double(fpsD) : 0, hasAudio: withAudio)
    }
}
