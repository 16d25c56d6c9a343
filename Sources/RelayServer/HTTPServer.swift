import Hummingbird
import Logging

/// The HTTP side of `serve`: nginx-rtmp's notifications (`on_publish`, `on_play`,
/// `on_publish_done`, form-encoded POSTs) and a health check. Loopback by default.
///
/// Why notifications rather than `exec_push`: nginx-rtmp waits for the `on_publish` reply before it
/// accepts the broadcaster's data, so the relay can be listening before the first keyframe; a
/// refusal (no route for the key) reaches the broadcaster as a refused publish; and FaceRelay stays
/// one process holding one landmark model, instead of a child per stream that nginx starts as its
/// worker user with an empty environment and kills with SIGKILL.
public enum HTTPServer {
    struct Notice: Decodable {
        let app: String
        let name: String
    }

    public static func application(registry: StreamRegistry, address: ServeConfig.HostPort, logger: Logger) -> some ApplicationProtocol {
        let router = Router()
        router.get("/healthz") { _, _ in "ok\n" }
        router.post("/rtmp/on_publish") { request, _ -> Response in
            guard let notice = try await notice(request) else { return reply(.badRequest) }
            return reply(await registry.publishStarted(application: notice.app, key: notice.name) == nil ? .forbidden : .ok)
        }
        router.post("/rtmp/on_play") { request, _ -> Response in
            guard let notice = try await notice(request) else { return reply(.badRequest) }
            registry.playStarted(application: notice.app, key: notice.name)
            return reply(.ok)
        }
        router.post("/rtmp/on_publish_done") { request, _ -> Response in
            guard let notice = try await notice(request) else { return reply(.badRequest) }
            registry.publishEnded(application: notice.app, key: notice.name)
            return reply(.ok)
        }
        var httpLogger = logger
        httpLogger.logLevel = max(logger.logLevel, .warning)
        // nginx-rtmp's notifications are HTTP/1.0 requests answered on a connection it reads until
        // it closes; the server keeps connections open unless told to close, so an idle
        // connection is closed at once, or nginx would act on each answer only at its own time-out.
        return Application(router: router, server: .http1(configuration: .init(idleTimeout: .milliseconds(100))),
                           configuration: .init(address: .hostname(address.host, port: address.port), serverName: "facerelay"),
                           logger: httpLogger)
    }

    private static func reply(_ status: HTTPResponse.Status) -> Response {
        Response(status: status, headers: [.connection: "close"])
    }

    private static func notice(_ request: Request) async throws -> Notice? {
        let body = try await request.body.collect(upTo: 16 * 1024)
        return try? URLEncodedFormDecoder().decode(Notice.self, from: String(buffer: body))
    }
}
