/// Encoder and timing choices for one stream, from the command line.
public struct RelaySettings: Sendable {
    public var x264Preset = "veryfast"
    public var bitrateKbps = 2500
    public var keyframeIntervalSeconds = 2.0
    public var audioBitrateKbps = 128
    /// Threads the stream's video decoder may use; 0: as many as the machine has cores, which suits
    /// one stream (`run`). Each further thread holds a decoding context and its pictures (about
    /// 10 MB at 720p). `serve` sets 1 (see `ServeConfig.StreamDefaults`).
    public var decodeThreads = 0
    /// Threads x264 may use for the stream (slices of each frame, under zerolatency); 0: as many as
    /// the machine has cores, which suits one stream and on a large host splits every frame into
    /// dozens of slices. `serve` sets 1.
    public var encodeThreads = 0
    /// How long to wait for the input to connect and deliver its first frame; 0 waits forever.
    public var inputTimeoutSeconds = 15
    /// Pace a file input at its own frame rate instead of as fast as the machine allows.
    public var realtime = false
    /// A dead network output is retried after 1 s, then twice as long each time up to this cap...
    public var reconnectMaximumDelaySeconds = 4.0
    /// ...for this long in all before the stream fails; nil retries for ever.
    public var reconnectGiveUpSeconds: Double? = 60
    /// How long a live input may stay silent (a stalled publisher, its connection still open)
    /// before it counts as ended; 0 waits forever.
    public var idleTimeoutSeconds = 10
    /// How long an ended live input is awaited: a publisher back within this time continues the
    /// same output (same upstream connection, timeline continued). 0 ends the stream at once.
    public var inputGraceSeconds = 0.0

    public init() {}

    /// Whether a stream runs at its own pace: a network input, or a file paced by --realtime.
    /// Ingest (drop policy) and egress (live muxing) must agree on this.
    public func isLive(_ input: InputEndpoint) -> Bool { input.isLive || realtime }

    /// Whether the ingest paces a file at its own frame rate (a network input paces itself).
    public func pacesFile(_ input: InputEndpoint) -> Bool { realtime && !input.isLive }

    public static let x264Presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow"]
}
