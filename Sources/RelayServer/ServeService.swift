import Logging
import MediaBridge
import ServiceLifecycle
import StickerKit

/// `facerelay serve` put together: the registry of streams, the control socket, the HTTP hooks and
/// the ticker that turns stream states and figures into events. SIGINT or SIGTERM, handled once
/// for the whole process, ends every stream cleanly (end-of-stream to each output), then the
/// servers, and `run` returns.
public struct ServeService: Sendable {
    public let registry: StreamRegistry
    /// How the vision code was compiled (`avx2` or `portable`), for /metrics.
    let build: String
    /// Memory every stream shares (`landmark_model`, `stickers`), for /metrics.
    let sharedMemoryBytes: [String: Double]
    let logger: Logger

    public init(registry: StreamRegistry, build: String, sharedMemoryBytes: [String: Double] = [:], logger: Logger) {
        self.registry = registry
        self.build = build
        self.sharedMemoryBytes = sharedMemoryBytes
        self.logger = logger
    }

    public func run() async throws {
        let config = registry.config
        let control = ControlServer(path: config.controlSocket, control: ControlProtocol(registry: registry), events: registry.events, logger: logger)
        let http = HTTPServer.application(registry: registry, address: config.http, build: build,
                                          sharedMemoryBytes: sharedMemoryBytes, logger: logger)
        // A ServiceGroup shuts its services down in reverse order: the streams first, so that each
        // output is finalised while the sockets still answer.
        let group = ServiceGroup(configuration: .init(
            services: [
                .init(service: http),
                .init(service: ClosureService { try await control.run() }),
                .init(service: ClosureService { await ticker() }),
                .init(service: ClosureService { [registry] in await registry.publishChangesAsTheyHappen() }),
                // Stopped after the streams: their last events still go out. Without receivers
                // (or once the hub has ended) it waits for the shutdown like the others.
                .init(service: ClosureService { [registry] in
                    await registry.webhooks.run()
                    try await gracefulShutdown()
                }),
                .init(service: StreamsService(registry: registry, logger: logger)),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
    }

    private func ticker() async {
        var tick = 0
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            try? await Task.sleep(for: .seconds(1))
            tick += 1
            registry.tick(withStats: tick % 5 == 0)
        }
    }

}

/// Arms the SRT listeners, then waits for the shutdown signal and ends every stream.
private struct StreamsService: Service {
    let registry: StreamRegistry
    let logger: Logger

    func run() async throws {
        registry.startSRTListeners()
        try? await gracefulShutdown()
        logger.info("stopping: ending every stream")
        await registry.stopAll()
    }
}

/// A service whose work is one closure; ended by cancellation or graceful shutdown.
private struct ClosureService: Service {
    let body: @Sendable () async throws -> Void

    init(_ body: @escaping @Sendable () async throws -> Void) {
        self.body = body
    }

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await body() }
        } catch is CancellationError where Task.isShuttingDownGracefully {
            // Cancelled because the service is stopping: a clean end, not a failure.
        }
    }
}
