import ArgumentParser
import Compositor
import FaceStage
import FaceVision
import FrameKit
import Logging
import MediaBridge
import StickerKit
import StreamPlan
import StreamSession

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Relay one stream from --input to --output through the sticker stage.",
        discussion: """
        Inputs: rtmp://host:port/app/key (pulled), srt://:PORT (listen), srt://host:port (call), or a media file.
        Outputs: rtmp://... (push), srt://..., or a .flv/.mp4/.mkv/.ts file, finalised on SIGINT/SIGTERM.
        --output more than once sends one encode to each; each network output reconnects on its own.
        Exit status: 0 when the input ended or a stop was asked for, 1 when the stream failed, 64 for bad options.
        """
    )

    @Option(help: "Where the stream comes from.")
    var input: String

    @Option(help: "Where the processed stream goes; give it again for more outputs of the same encode.")
    var output: [String] = []

    @Option(help: "Sticker on every face: a package (see `facerelay stickers list`) or its folder, 'landmarks' (the tracking overlay) or 'none'.")
    var sticker = "none"

    @OptionGroup var stickerFolder: StickerFolderOption

    @OptionGroup var tracking: TrackingOptions

    @Option(name: .customLong("x264-preset"), help: "x264 speed preset (\(RelaySettings.x264Presets.joined(separator: ", "))).")
    var x264Preset = "veryfast"

    @Option(help: "Video bitrate in kbit/s.")
    var bitrate = 2500

    @Option(name: .customLong("keyframe-interval"), help: "Seconds between keyframes.")
    var keyframeInterval = 2.0

    @Option(name: .customLong("decode-threads"), help: "Threads the video decoder may use (0: one per core).")
    var decodeThreads = RelaySettings().decodeThreads

    @Option(name: .customLong("encode-threads"), help: "Threads x264 may use (0: one per core).")
    var encodeThreads = RelaySettings().encodeThreads

    @Option(name: .customLong("audio-bitrate"), help: "AAC bitrate in kbit/s, used only when the input's audio is not AAC.")
    var audioBitrate = 128

    @Option(name: .customLong("input-timeout"), help: "Seconds to wait for the input's first frame (0: forever).")
    var inputTimeout = 15

    @Option(name: .customLong("idle-timeout"), help: "Seconds a live input may stay silent (a stalled publisher) before it counts as ended (0: forever).")
    var idleTimeout = 10

    @Option(name: .customLong("input-grace"), help: "Seconds an ended live input is awaited: a publisher back within this time continues the same output (0: the stream ends with its input).")
    var inputGrace = 0.0

    @Option(name: .customLong("reconnect-for"), help: "Seconds a dead network output is retried before the relay gives up (0: for ever).")
    var reconnectFor = 60.0

    @Option(name: .customLong("reconnect-max-delay"), help: "Longest pause between output retries, in seconds (the first is 1 s, then doubling).")
    var reconnectMaxDelay = 4.0

    @Flag(help: "Pace a file input at its own frame rate instead of as fast as possible.")
    var realtime = false

    @Option(name: .customLong("stats-json"), help: "Write the stream's figures to this JSON file at exit.")
    var statsJSON: String?

    @Option(name: .customLong("stats-interval"), help: "Seconds between stats log lines.")
    var statsInterval = 10.0

    @Option(help: "Folder of pipeline templates (default: $FACERELAY_PIPELINES, then the installed or checked-out Pipelines/).")
    var pipelines: String?

    @Flag(name: .customLong("compare-baseline"), help: "Relay the same input a second time without stickers, side by side in this process (to a file next to --output, or a temporary one for a network output), and print what the sticker costs: CPU by stage and memory.")
    var compareBaseline = false

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    func validate() throws {
        do {
            _ = try InputEndpoint(parsing: input)
            let outputs = try output.map { text throws(EndpointError) in try OutputEndpoint(parsing: text) }
            guard !outputs.isEmpty else { throw ValidationError("missing --output: where the processed stream goes") }
            if let repeated = outputs.first(where: { one in outputs.count { $0 == one } > 1 }) {
                throw ValidationError("--output \(repeated) is given twice: each output gets the stream once")
            }
        } catch let error as EndpointError {
            throw ValidationError(error.description)
        }
        guard RelaySettings.x264Presets.contains(x264Preset) else {
            throw ValidationError("unknown --x264-preset '\(x264Preset)'; use one of \(RelaySettings.x264Presets.joined(separator: ", "))")
        }
        guard (50...100_000).contains(bitrate) else { throw ValidationError("--bitrate \(bitrate) is out of range: use 50...100000 kbit/s") }
        guard (8...512).contains(audioBitrate) else { throw ValidationError("--audio-bitrate \(audioBitrate) is out of range: use 8...512 kbit/s") }
        guard (0...64).contains(decodeThreads) else { throw ValidationError("--decode-threads \(decodeThreads) is out of range: use 0 (one per core) to 64") }
        guard (0...64).contains(encodeThreads) else { throw ValidationError("--encode-threads \(encodeThreads) is out of range: use 0 (one per core) to 64") }
        guard keyframeInterval > 0, keyframeInterval <= 60 else { throw ValidationError("--keyframe-interval must be in (0, 60] seconds") }
        guard statsInterval > 0 else { throw ValidationError("--stats-interval must be positive") }
        guard reconnectFor >= 0 else { throw ValidationError("--reconnect-for must be 0 (for ever) or positive") }
        guard reconnectMaxDelay >= 1, reconnectMaxDelay <= 600 else { throw ValidationError("--reconnect-max-delay must be 1...600 seconds") }
        guard inputTimeout >= 0 else { throw ValidationError("--input-timeout must be 0 (forever) or positive") }
        guard idleTimeout >= 0 else { throw ValidationError("--idle-timeout must be 0 (forever) or positive") }
        guard (0...3600).contains(inputGrace) else { throw ValidationError("--input-grace must be 0...3600 seconds") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level '\(logLevel)'") }
        if compareBaseline, sticker == BuiltInLook.off.rawValue {
            throw ValidationError("--compare-baseline compares a sticker with the relay without one: give --sticker NAME (or landmarks)")
        }
        if compareBaseline, case .srtListener? = try? InputEndpoint(parsing: input) {
            throw ValidationError("--compare-baseline needs an input two relays can read at once: a file, an RTMP stream or an SRT caller, not an SRT listener")
        }
        if BuiltInLook(rawValue: sticker) == nil {
            do {
                _ = try StickerLibrary.locate(explicit: stickerFolder.directory).path(of: sticker)
            } catch {
                throw ValidationError(error.description)
            }
        }
    }

    func run() throws {
        var logger = Logger(label: "facerelay")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        var settings = RelaySettings()
        settings.x264Preset = x264Preset
        settings.bitrateKbps = bitrate
        settings.keyframeIntervalSeconds = keyframeInterval
        settings.audioBitrateKbps = audioBitrate
        settings.decodeThreads = decodeThreads
        settings.encodeThreads = encodeThreads
        settings.inputTimeoutSeconds = inputTimeout
        settings.idleTimeoutSeconds = idleTimeout
        settings.inputGraceSeconds = inputGrace
        settings.realtime = realtime
        settings.reconnectGiveUpSeconds = reconnectFor > 0 ? reconnectFor : nil
        settings.reconnectMaximumDelaySeconds = reconnectMaxDelay
        let options = RelaySession.Options(
            input: try InputEndpoint(parsing: input), outputs: try output.map { text throws(EndpointError) in try OutputEndpoint(parsing: text) },
            settings: settings, statsInterval: statsInterval, statsJSONPath: statsJSON)
        try exitingOnFailure(logger) {
            let library = try PipelineLibrary.locate(explicit: pipelines)
            let stage: FrameStage
            switch BuiltInLook(rawValue: sticker) {
            case .off?:
                stage = PassThroughStage()
            case .landmarks?:
                stage = FaceTrackingStage(tracker: try makeFaceTracker(settings: try tracking.settings(), landmarkModelPath: tracking.landmarkModel))
            case nil:
                // The package is loaded and checked before anything connects.
                let settings = try tracking.settings()
                let package = try stickerFolder.load(sticker, expressions: settings.expressions.rules.map(\.analyser.name))
                logger.info("sticker \(package.name): \(package.items.count) item(s) from \(package.directory)")
                stage = FaceTrackingStage(tracker: try makeFaceTracker(settings: settings, landmarkModelPath: tracking.landmarkModel),
                                          look: .sticker(StickerRenderer(package: package)))
            }
            let session = try RelaySession(options: options, library: library, stage: stage, logger: logger)
            guard compareBaseline else {
                let signals = StopSignals { session.requestStop() }
                defer { signals.cancel() }
                try session.run()
                return
            }
            var baselineOptions = options
            baselineOptions.outputs = [try OutputEndpoint(parsing: BaselineComparison.outputPath(besides: output[0]))]
            baselineOptions.statsJSONPath = nil
            var baselineLogger = logger
            baselineLogger[metadataKey: "relay"] = "baseline"
            let baseline = try RelaySession(options: baselineOptions, library: library, stage: PassThroughStage(), logger: baselineLogger)
            let signals = StopSignals {
                session.requestStop()
                baseline.requestStop()
            }
            defer { signals.cancel() }
            let comparison = try BaselineComparison.run(stickered: session, baseline: baseline)
            print(comparison.table(sticker: sticker, baselineOutput: baselineOptions.outputs[0].description), terminator: "")
        }
    }
}
