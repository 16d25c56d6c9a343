import FoundationEssentials
import FrameKit
import MediaBridge

/// The figures of one stream, as logged every --stats-interval and written to --stats-json at exit.
public struct StreamStats: Codable, Sendable, Equatable {
    public var input: String
    public var output: String
    public var width: Int
    public var height: Int
    public var hasAudio: Bool
    /// The input's frame rate (0 before the first frame).
    public var inputFps: Double
    public var framesIn: Int
    public var framesOut: Int
    public var framesDropped: Int
    public var audioPacketsOut: Int
    public var outputReconnects: Int
    /// Video frames whose input timestamp went backwards and was moved forward.
    public var timestampsRepaired: Int
    /// Frames of a live input that went by before the relay was listening.
    public var framesMissedAtStart: Int
    /// Frames out per second of wall time.
    public var fps: Double
    /// Thread CPU time of the Swift stage per frame out, in milliseconds (not wall time).
    public var stageMsPerFrame: Double
    /// Process CPU seconds per wall second: 1.0 is one core busy.
    public var processCpuCores: Double
    public var rssMb: Double
    public var peakRssMb: Double
    public var durationS: Double
    /// Face-tracking CPU per frame (frame and detection threads), ms; only when a sticker is on.
    public var trackMsPerFrame: Double?
    /// Faces tracked per frame, on average over the span.
    public var facesTracked: Double?
    /// Sticker CPU per frame (timelines, placement, blending), ms; only when a sticker package is on.
    public var stickerMsPerFrame: Double?
    /// The stream's CPU by stage, from thread CPU time (see `StageCPU`).
    public var stages: [String: StageFigures]
    /// What face tracking and stickers add to the relay the operator would run anyway.
    public var stickerOverhead: StickerOverhead
    /// Frames the face stage lightened because frames queued up (drawn at the last fit instead of
    /// refitted), and how much it leaves out now (0, 1 or 2; see `LoadShedding`).
    public var lightenedFrames: Int
    public var loadLevel: Int
    /// Frame memory the stream can hold: its ingest queue, the encoder's input queue and, once it
    /// draws, its pool of drawn frames, at their capacities.
    public var streamMemoryMb: Double
    /// Each output over the span.
    public var outputs: [OutputFigures]
    /// Bytes of the input's stream read over the span (the container as it arrives), and their rate.
    public var ingestBytes: Int
    public var ingestBitrateKbps: Double

    enum CodingKeys: String, CodingKey {
        case input, output, width, height, fps
        case hasAudio = "has_audio"
        case inputFps = "input_fps"
        case framesIn = "frames_in"
        case framesOut = "frames_out"
        case framesDropped = "frames_dropped"
        case audioPacketsOut = "audio_packets_out"
        case outputReconnects = "output_reconnects"
        case timestampsRepaired = "timestamps_repaired"
        case framesMissedAtStart = "frames_missed_at_start"
        case stageMsPerFrame = "stage_ms_per_frame"
        case processCpuCores = "process_cpu_cores"
        case rssMb = "rss_mb"
        case peakRssMb = "peak_rss_mb"
        case durationS = "duration_s"
        case trackMsPerFrame = "track_ms_per_frame"
        case facesTracked = "faces_tracked"
        case stickerMsPerFrame = "sticker_ms_per_frame"
        case stages
        case stickerOverhead = "sticker_overhead"
        case streamMemoryMb = "stream_memory_mb"
        case lightenedFrames = "lightened_frames"
        case loadLevel = "load_level"
        case outputs
        case ingestBytes = "ingest_bytes"
        case ingestBitrateKbps = "ingest_bitrate_kbps"
    }

    /// One output over the span: what it sent, at what rate, and what it missed.
    public struct OutputFigures: Codable, Sendable, Equatable {
        public var index: Int
        public var address: String
        public var state: String
        public var bytesSent: Int
        public var bitrateKbps: Double
        public var framesSent: Int
        public var framesMissed: Int
        public var reconnects: Int
        public var connectedS: Double
        public var lastError: String?

        enum CodingKeys: String, CodingKey {
            case index, address, state, reconnects
            case bytesSent = "bytes_sent"
            case bitrateKbps = "bitrate_kbps"
            case framesSent = "frames_sent"
            case framesMissed = "frames_missed"
            case connectedS = "connected_s"
            case lastError = "last_error"
        }
    }

    /// One stage's CPU over the span: per frame out, as a share of one core, and in seconds.
    public struct StageFigures: Codable, Sendable, Equatable {
        public var msPerFrame: Double
        public var percentOfCore: Double
        public var cpuSeconds: Double

        enum CodingKeys: String, CodingKey {
            case msPerFrame = "ms_per_frame"
            case percentOfCore = "percent_of_core"
            case cpuSeconds = "cpu_s"
        }
    }

    public struct StickerOverhead: Codable, Sendable, Equatable {
        /// Tracking plus compositing, in % of one core.
        public var percentOfCore: Double
        /// The same CPU over the stream's decode plus encode: 0.3 means stickers cost 30% of the
        /// transcode the relay needs anyway.
        public var ratioToTranscode: Double
        /// Frame memory the stickers add: none, as they draw on the copy that every frame gets.
        public var memoryMb: Double

        enum CodingKeys: String, CodingKey {
            case percentOfCore = "percent_of_core"
            case ratioToTranscode = "ratio_to_decode_encode"
            case memoryMb = "memory_mb"
        }
    }

    /// Figures over a span: from `since` (counters and usage at its start) to now.
    public init(input: String, output: String, info: MediaRelay.StreamInfo?, counters: MediaRelay.Counters,
                since start: (counters: MediaRelay.Counters, usage: ProcessUsage), usage: ProcessUsage, seconds: Double) {
        self.input = input
        self.output = output
        width = info?.width ?? 0
        height = info?.height ?? 0
        hasAudio = info?.hasAudio ?? false
        inputFps = info?.framesPerSecond ?? 0
        framesIn = counters.framesIn - start.counters.framesIn
        framesOut = counters.framesOut - start.counters.framesOut
        framesDropped = counters.framesDropped - start.counters.framesDropped
        audioPacketsOut = counters.audioPacketsOut - start.counters.audioPacketsOut
        outputReconnects = counters.outputReconnects - start.counters.outputReconnects
        timestampsRepaired = counters.timestampsRepaired - start.counters.timestampsRepaired
        framesMissedAtStart = counters.framesMissedAtStart
        durationS = seconds
        fps = seconds > 0 ? Double(framesOut) / seconds : 0
        let stageNanoseconds = counters.stageCPUNanoseconds - start.counters.stageCPUNanoseconds
        stageMsPerFrame = framesOut > 0 ? Double(stageNanoseconds) / 1e6 / Double(framesOut) : 0
        processCpuCores = seconds > 0 ? (usage.cpuSeconds - start.usage.cpuSeconds) / seconds : 0
        rssMb = usage.residentMegabytes
        peakRssMb = usage.peakResidentMegabytes
        if let tracking = counters.tracking {
            let before = start.counters.tracking ?? TrackingFigures()
            let frames = tracking.frames - before.frames
            trackMsPerFrame = frames > 0 ? Double(tracking.cpuNanoseconds - before.cpuNanoseconds) / 1e6 / Double(frames) : 0
            facesTracked = frames > 0 ? Double(tracking.faceFrames - before.faceFrames) / Double(frames) : 0
            if tracking.stickerCPUNanoseconds > 0 {
                stickerMsPerFrame = frames > 0 ? Double(tracking.stickerCPUNanoseconds - before.stickerCPUNanoseconds) / 1e6 / Double(frames) : 0
            }
        }
        lightenedFrames = (counters.tracking?.lightenedFrames ?? 0) - (start.counters.tracking?.lightenedFrames ?? 0)
        loadLevel = counters.tracking?.loadLevel ?? 0
        let spent = StageCPU(counters).minus(StageCPU(start.counters))
        var stages: [String: StageFigures] = [:]
        for (stage, nanoseconds) in spent.byStage {
            stages[stage.rawValue] = StageFigures(
                msPerFrame: framesOut > 0 ? Double(nanoseconds) / 1e6 / Double(framesOut) : 0,
                percentOfCore: seconds > 0 ? Double(nanoseconds) / 1e9 / seconds * 100 : 0,
                cpuSeconds: Double(nanoseconds) / 1e9)
        }
        self.stages = stages
        let stickers = Double(spent.track + spent.composite)
        let transcode = Double(spent.decode + spent.encode)
        let frameBytes = Double(width * height * 3 / 2)
        // Stickers draw on the copy every frame gets anyway: they hold no frames of their own.
        stickerOverhead = StickerOverhead(percentOfCore: seconds > 0 ? stickers / 1e9 / seconds * 100 : 0,
                                          ratioToTranscode: transcode > 0 ? stickers / transcode : 0,
                                          memoryMb: 0)
        let pool = counters.framesOut > 0 ? frameBytes * Double(counters.framePoolCapacity) : 0
        streamMemoryMb = (frameBytes * Double(counters.frameQueueCapacity) + pool) / 1_048_576
        ingestBytes = counters.ingestBytes - start.counters.ingestBytes
        ingestBitrateKbps = seconds > 0 ? Double(ingestBytes) * 8 / seconds / 1000 : 0
        outputs = counters.outputs.map { output in
            let before = start.counters.outputs.first { $0.index == output.index }
            let bytes = output.bytesSent - (before?.bytesSent ?? 0)
            return OutputFigures(index: output.index, address: output.address, state: output.state.rawValue, bytesSent: bytes,
                                 bitrateKbps: seconds > 0 ? Double(bytes) * 8 / seconds / 1000 : 0,
                                 framesSent: output.framesSent - (before?.framesSent ?? 0),
                                 framesMissed: output.framesMissed - (before?.framesMissed ?? 0),
                                 reconnects: output.reconnects - (before?.reconnects ?? 0),
                                 connectedS: output.connectedSeconds, lastError: output.lastError)
        }
    }

    public var logLine: String {
        "frames_in=\(framesIn) frames_out=\(framesOut) dropped=\(framesDropped) fps=\(formatted(fps, decimals: 1))"
            + " ingest_kbps=\(formatted(ingestBitrateKbps, decimals: 0))"
            + " stage_ms=\(formatted(stageMsPerFrame, decimals: 3)) cpu_cores=\(formatted(processCpuCores, decimals: 2))"
            + " rss_mb=\(formatted(rssMb, decimals: 1))"
            + (trackMsPerFrame.map { " track_ms=\(formatted($0, decimals: 3)) faces=\(formatted(facesTracked ?? 0, decimals: 2))" } ?? "")
            + (stickerMsPerFrame.map { " sticker_ms=\(formatted($0, decimals: 3))" } ?? "")
            + StageCPU.Stage.allCases.map { " cpu_\($0.rawValue)_ms=\(formatted(stages[$0.rawValue]?.msPerFrame ?? 0, decimals: 2))" }.joined()
            + " sticker_overhead=\(formatted(stickerOverhead.percentOfCore, decimals: 1))%core"
            + "(\(formatted(stickerOverhead.ratioToTranscode, decimals: 2))x transcode)"
            + (timestampsRepaired > 0 ? " timestamps_repaired=\(timestampsRepaired)" : "")
            + (lightenedFrames > 0 || loadLevel > 0 ? " lightened_frames=\(lightenedFrames) load_level=\(loadLevel)" : "")
    }

    public func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self)
    }
}
