import CGStreamer
import StreamPlan
import Synchronization

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
}

/// The one place the output is built: from the first frame's caps, and again with the same caps
/// after an output failure. The pumps push to whichever egress is current; none while it is down.
final class EgressBuilder: Sendable {
    private struct State {
        var egress: EgressPipeline?
        /// The video caps the egress was built for, with a reference of the builder's own: set
        /// once, with the first egress, and kept to rebuild it after an output failure.
        var videoCaps: CapsPointer?
        var info: MediaRelay.StreamInfo?
    }

    private let state = Mutex(State())
    private let changes: ChangeSignal
    private let input: InputEndpoint
    private let output: OutputEndpoint
    private let settings: RelaySettings
    private let library: PipelineLibrary
    private let threadTag: ThreadTag
    private let files: [String]

    init(input: InputEndpoint, output: OutputEndpoint, settings: RelaySettings, library: PipelineLibrary,
         threadTag: ThreadTag, changes: ChangeSignal) throws(MediaError) {
        self.input = input
        self.output = output
        self.settings = settings
        self.library = library
        self.threadTag = threadTag
        self.changes = changes
        files = ["egress.gst", "sink-\(Self.sinkKind(output)).gst", "egress-audio.gst"].map { library.directory + "/" + $0 }
        // Built once with stand-in values so that a broken template fails now, not when the first
        // frame arrives.
        fr_unref(try GStreamer.parse(try description(framesPerSecond: 30, withAudio: true), files: files))
    }

    deinit {
        if let caps = state.withLock({ $0.videoCaps }) { gst_caps_unref(caps.pointer) }
    }

    var current: EgressPipeline? { state.withLock { $0.egress } }

    /// The current egress and the caps the output was built for, read together.
    var currentWithCaps: (egress: EgressPipeline?, videoCaps: UnsafeMutablePointer<GstCaps>?) {
        state.withLock { ($0.egress, $0.videoCaps?.pointer) }
    }

    /// Size, rate and audio of the stream, once the output was first built.
    var streamInfo: MediaRelay.StreamInfo? { state.withLock { $0.info } }

    /// Builds the first egress, for frames of `videoCaps` described by `info`.
    func build(videoCaps: UnsafeMutablePointer<GstCaps>, info: MediaRelay.StreamInfo) throws(MediaError) -> EgressPipeline {
        let egress = try start(videoCaps: videoCaps, info: info)
        gst_caps_ref(videoCaps)
        let kept = CapsPointer(pointer: videoCaps)
        state.withLock { state in
            state.egress = egress
            state.videoCaps = kept
            state.info = info
        }
        changes.notify()
        return egress
    }

    /// Builds the egress again after an output failure, as the first was built. Nothing to do
    /// before the first.
    func rebuild() throws(MediaError) {
        guard let (caps, info) = state.withLock({ state in state.videoCaps.flatMap { caps in state.info.map { (caps, $0) } } }) else { return }
        let egress = try start(videoCaps: caps.pointer, info: info)
        state.withLock { $0.egress = egress }
        changes.notify()
    }

    /// Takes the current egress away from the pumps (the output failed, or the run is over): they
    /// drop what they have until another is built.
    func detach() -> EgressPipeline? {
        let egress = state.withLock { state in
            defer { state.egress = nil }
            return state.egress
        }
        if egress != nil { changes.notify() }
        return egress
    }

    /// Size and rate from a frame's caps.
    static func streamInfo(of caps: UnsafeMutablePointer<GstCaps>, withAudio: Bool) throws(MediaError) -> MediaRelay.StreamInfo {
        let info = UnsafeMutablePointer<GstVideoInfo>.allocate(capacity: 1)
        defer { info.deallocate() }
        gst_video_info_init(info)
        guard gst_video_info_from_caps(info, caps) != 0 else {
            throw MediaError(.input, "the input's video caps are not usable raw video: \(GStreamer.takeString(fr_caps_string(caps)) ?? "")")
        }
        let fpsN = fr_video_info_fps_n(info), fpsD = fr_video_info_fps_d(info)
        return MediaRelay.StreamInfo(width: Int(fr_video_info_width(info)), height: Int(fr_video_info_height(info)),
                                     framesPerSecond: fpsN > 0 && fpsD > 0 ? Double(fpsN) / Double(fpsD) : 0, hasAudio: withAudio)
    }

    /// `framesPerSecond` 0 (a variable-rate input) sets keyframes as for 30 fps.
    private func start(videoCaps: UnsafeMutablePointer<GstCaps>, info: MediaRelay.StreamInfo) throws(MediaError) -> EgressPipeline {
        let text = try description(framesPerSecond: info.framesPerSecond > 0 ? info.framesPerSecond : 30, withAudio: info.hasAudio)
        let egress = try EgressPipeline(description: text, files: files, videoCaps: videoCaps, withAudio: info.hasAudio, threadTag: threadTag)
        try egress.start()
        return egress
    }

    private func description(framesPerSecond: Double, withAudio: Bool) throws(MediaError) -> String {
        do {
            return try library.egressDescription(for: output, framesPerSecond: framesPerSecond, withAudio: withAudio,
                                                 live: settings.isLive(input), settings: settings)
        } catch {
            throw MediaError(.pipelineTemplate, error.description)
        }
    }

    static func sinkKind(_ output: OutputEndpoint) -> String {
        switch output {
        case .rtmp: return "rtmp"
        case .srt: return "srt"
        case .file(_, let container): return container.rawValue
        }
    }
}
