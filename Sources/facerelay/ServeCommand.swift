import ArgumentParser
import FaceTracking
import FaceVision
import Logging
import MediaBridge
import RelayServer
import StickerKit
import StreamSession

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Relay many streams in one process: nginx-rtmp publishes and SRT listeners start them, the control socket steers them.",
        discussion: """
        Configuration: a YAML file (--config; every key is documented in deploy/facerelay.yml). The flags below
        override the file. SIGINT or SIGTERM ends every stream cleanly (each output is finalised) and exits 0.
        Exit status: 0 after a signal, 1 when the service cannot start (bad configuration, socket or port in use).
        """
    )

    @Option(help: "YAML configuration file (see deploy/facerelay.yml).")
    var config: String?

    @Option(name: .customLong("control-socket"), help: "Unix socket of the control protocol (created with mode 0600).")
    var controlSocket: String?

    @Option(help: "ADDRESS:PORT of the HTTP listener for nginx-rtmp's notifications (default 127.0.0.1:8190).")
    var http: String?

    @Option(help: "Folder of sticker packages.")
    var stickers: String?

    @Option(help: "Folder of pipeline templates.")
    var pipelines: String?

    @Option(name: .customLong("landmark-model"), help: "dlib 68-point shape predictor file, loaded once for every stream.")
    var landmarkModel: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    func validate() throws {
        if let http, ServeConfig.HostPort(parsing: http) == nil {
            throw ValidationError("--http '\(http)' is not ADDRESS:PORT; for example 127.0.0.1:8190")
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level '\(logLevel)'") }
    }

    func run() async throws {
        var logger = Logger(label: "facerelay")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let service: ServeService
        do {
            service = try prepare(logger: logger)
        } catch {
            logger.error("\(error)")
            throw ExitCode(1)
        }
        do {
            try await service.run()
        } catch {
            logger.error("\(error)")
            throw ExitCode(1)
        }
        logger.info("stopped")
    }

    /// Everything that can be checked before serving is checked here, so that a bad configuration
    /// is refused at start rather than on the first publish.
    private func prepare(logger: Logger) throws -> ServeService {
        var settings = try config.map { path throws(ConfigError) in try ServeConfig.load(file: path) } ?? ServeConfig()
        if let controlSocket { settings.controlSocket = controlSocket }
        if let http { settings.http = ServeConfig.HostPort(parsing: http)! }
        if let stickers { settings.stickers = stickers }
        if let pipelines { settings.pipelines = pipelines }
        if let landmarkModel { settings.landmarkModel = landmarkModel }
        let source = config ?? "the command line"
        try settings.checkHTTPAccess(source: source)

        try prepareMediaBridge()
        let library = try PipelineLibrary.locate(explicit: settings.pipelines)
        let expressions = settings.defaults.tracking.expressions.rules.map(\.analyser.name)
        let catalog = StickerCatalog(library: try StickerLibrary.locate(explicit: settings.stickers),
                                     loader: StickerLoader(expressions: expressions))
        let beforeStickers = ProcessUsage.now().residentMegabytes
        let report = try catalog.reload()
        let stickersMegabytes = ProcessUsage.now().residentMegabytes - beforeStickers
        for problem in report.failed {
            logger.warning("sticker \(problem.name) is not available: \(problem.message)")
        }
        for (key, name) in settings.stickerChoices {
            do {
                _ = try catalog.look(named: name)
            } catch {
                throw ConfiguredStickerError(source: source, key: key, problem: error)
            }
        }
        // One model for every stream, loaded now: a missing model stops the service at start.
        let beforeModel = ProcessUsage.now().residentMegabytes
        let model = try LandmarkModel(path: settings.landmarkModel ?? defaultLandmarkModelPath)
        let modelMegabytes = ProcessUsage.now().residentMegabytes - beforeModel
        let registry = StreamRegistry(config: settings, catalog: catalog, events: EventHub(), library: library,
                                      makeTracker: { trackerSettings in try makeFaceTracker(settings: trackerSettings, model: model) },
                                      logger: logger)
        logger.info("serving", metadata: ["control_socket": "\(settings.controlSocket)", "http": "\(settings.http)",
                                          "stickers": "\(report.loaded.count)", "routes": "\(settings.applications.keys.sorted().joined(separator: ","))",
                                          "srt_listeners": "\(settings.srtListeners.count)"])
        // What every stream shares, measured as the resident memory each part added when loaded.
        let shared = ["landmark_model": max(0, modelMegabytes) * 1_048_576, "stickers": max(0, stickersMegabytes) * 1_048_576]
        return ServeService(registry: registry, build: visionOptimisedForAVX2 ? "avx2" : "portable", sharedMemoryBytes: shared, logger: logger)
    }
}

/// A sticker the configuration names that serve could not show: refused at start rather than on
/// the first publish that asks for it.
struct ConfiguredStickerError: Error, CustomStringConvertible {
    /// The configuration file, or "the command line".
    let source: String
    let key: String
    let problem: StickerChoiceError

    var description: String { "\(source): \(key): \(problem)" }
}
