import FoundationEssentials
import FaceTracking
import Hummingbird
import JSONTree
import HummingbirdWebSocket
import Logging
import NIOCore
import StickerKit
import StickerPictures

/// The HTTP side of `serve`, loopback by default:
/// - nginx-rtmp's notifications (`on_publish`, `on_play`, `on_publish_done`, form-encoded POSTs);
/// - `/healthz`; `/metrics` for Prometheus;
/// - the dashboard (`/`), its WebSocket (`/api/control`: the control protocol, one request per
///   message, plus every event and the figures each second), stream thumbnails and sticker previews.
///
/// Why notifications rather than `exec_push`: nginx-rtmp waits for the `on_publish` reply before it
/// accepts the broadcaster's data, so the relay can be listening before the first keyframe; a
/// refusal (no route for the key) reaches the broadcaster as a refused publish; and FaceRelay stays
/// one process holding one landmark model, instead of a child per stream that nginx starts as its
/// worker user with an empty environment and kills with SIGKILL.
public enum HTTPServer {
    public static let version = "0.5.0"

    struct Notice: Decodable {
        let app: String
        let name: String
    }

    /// `build` is what `facerelay_info` says of how the vision code was compiled (`avx2` or `portable`).
    /// `idleTimeout` closes a kept-alive connection that sends nothing more. `onServerRunning` gets
    /// the listening channel (its local address is the port, when asked for port 0).
    public static func application(registry: StreamRegistry, address: ServeConfig.HostPort, build: String, sharedMemoryBytes: [String: Double] = [:],
                                   idleTimeout: TimeAmount = .milliseconds(100), logger: Logger,
                                   onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }) -> some ApplicationProtocol {
        let config = registry.config
        let metrics = ServiceMetrics(streams: registry, version: version, build: build, sharedMemoryBytes: sharedMemoryBytes)
        let control = ControlProtocol(registry: registry)
        let router = Router(context: HTTPRequestContext.self)
        router.get("/healthz") { _, _ in "ok\n" }
        if !config.httpIsLoopback, let token = config.httpToken {
            router.add(middleware: TokenMiddleware(token: token))
            router.get("/login") { _, _ in html(DashboardPage.login(failed: false)) }
            router.post("/login") { request, _ -> Response in
                let body = try await request.body.collect(upTo: 4096)
                // A form that does not decode is a failed login, like a wrong token: the page says so.
                let form = try? URLEncodedFormDecoder().decode([String: String].self, from: String(buffer: body))
                guard form?["token"] == token else { return html(DashboardPage.login(failed: true), status: .unauthorized) }
                return Response(status: .seeOther, headers: [.location: "/", .setCookie: "\(tokenCookie)=\(token); Path=/; HttpOnly; SameSite=Strict"])
            }
        }
        router.post("/rtmp/on_publish") { request, _ -> Response in
            guard let notice = try await notice(request, logger: logger) else { return reply(.badRequest) }
            return reply(await registry.publishStarted(application: notice.app, key: notice.name) == nil ? .forbidden : .ok)
        }
        router.post("/rtmp/on_play") { request, context -> Response in
            guard let notice = try await notice(request, logger: logger) else { return reply(.badRequest) }
            // nginx-rtmp acts on a notification's answer when its connection closes, not when the
            // answer arrives. So the publish this play unblocks is answered only once this
            // connection has closed: nginx then sees the play's end of file first, the relay joins
            // the stream before its first frame. Released when the answer was written instead, a
            // busy machine could close the publish's connection first, and the relay started at
            // the broadcast's next keyframe, seconds in.
            context.connectionClosed.whenComplete { _ in registry.playStarted(application: notice.app, key: notice.name) }
            return reply(.ok)
        }
        router.post("/rtmp/on_publish_done") { request, _ -> Response in
            guard let notice = try await notice(request, logger: logger) else { return reply(.badRequest) }
            registry.publishEnded(application: notice.app, key: notice.name)
            return reply(.ok)
        }
        router.get("/metrics") { _, _ -> Response in
            let text = await offload { metrics.render() }
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(string: text)))
        }
        router.get("/") { _, _ in html(DashboardPage.html) }
        router.get("/api/streams/:stream/thumbnail.jpg") { _, context -> Response in
            let id = try context.parameters.require("stream")
            guard let jpeg = await registry.thumbnail(stream: id) else {
                return Response(status: .notFound, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: "no picture from stream '\(id)' yet\n")))
            }
            return Response(status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "no-store"],
                            body: .init(byteBuffer: ByteBuffer(bytes: jpeg)))
        }
        router.get("/api/stickers/:name/preview.png") { _, context -> Response in
            let name = try context.parameters.require("name")
            guard let path = registry.catalog.previewPath(named: name), let data = FileManager.default.contents(atPath: path) else {
                return Response(status: .notFound)
            }
            return Response(status: .ok, headers: [.contentType: "image/png", .cacheControl: "max-age=60"],
                            body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }
        router.get("/studio") { _, _ in html(StudioPage.html) }
        router.get("/api/streams/:stream/face") { _, context -> Response in
            let id = try context.parameters.require("stream")
            guard let face = registry.face(stream: id) else {
                return Response(status: .notFound, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: "no face in stream '\(id)' now\n")))
            }
            var points: [JSONValue] = []
            for index in 0..<Landmark.count { points.append([.rounded(Double(face.landmarks[index].x), 2), .rounded(Double(face.landmarks[index].y), 2)]) }
            return json(["width": .number(Double(face.frameWidth)), "height": .number(Double(face.frameHeight)), "landmarks": .array(points)])
        }
        // The studio's portrait, from the stickers folder, else from the shipped one.
        router.get("/api/studio/:file") { _, context -> Response in
            let file = try context.parameters.require("file")
            guard ["portrait.jpg", "portrait.json"].contains(file) else { return Response(status: .notFound) }
            let name = "studio-" + file
            let folders = [registry.catalog.library.directory] + ((try? StickerLibrary.locate().directory).map { [$0] } ?? [])
            guard let data = folders.lazy.compactMap({ FileManager.default.contents(atPath: $0 + "/" + name) }).first else { return Response(status: .notFound) }
            return Response(status: .ok, headers: [.contentType: file.hasSuffix(".jpg") ? "image/jpeg" : "application/json", .cacheControl: "max-age=3600"],
                            body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }
        // A package's own files, for the studio to start from a shipped picture.
        router.get("/api/stickers/:name/files/:file") { _, context -> Response in
            let name = try context.parameters.require("name"), file = try context.parameters.require("file")
            guard StickerCatalog.isPlainName(name), StickerUpload.isPlainFileName(file),
                  let data = FileManager.default.contents(atPath: registry.catalog.library.directory + "/" + name + "/" + file) else {
                return Response(status: .notFound)
            }
            let type = switch PictureFormat.named(file) {
            case .png?: "image/png"
            case .gif?: "image/gif"
            case .webp?: "image/webp"
            case .svg?: "image/svg+xml"
            case nil: "application/json"
            }
            // An SVG from the folder is shown as a picture only: no script of it may run on this origin.
            return Response(status: .ok, headers: [.contentType: type, .cacheControl: "no-store", .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'"],
                            body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }
        router.post("/api/stickers") { request, _ -> Response in
            let tooLarge = UploadError(.tooLarge, "the request is over \(StickerUpload.maximumRequestBytes / 1_048_576) MiB; send smaller pictures or fewer frames")
            // Refused from its declared length before a byte of it is read (a client that waits
            // for 100-continue then sends nothing).
            if let length = request.headers[.contentLength].flatMap(Int.init), length > StickerUpload.maximumRequestBytes {
                return uploadReply(.failure(tooLarge))
            }
            let body: ByteBuffer
            do {
                body = try await request.body.collect(upTo: StickerUpload.maximumRequestBytes)
            } catch {
                return uploadReply(.failure(tooLarge))
            }
            let contentType = request.headers[.contentType]
            return uploadReply(await offload {
                Result { () throws(UploadError) in try registry.catalog.install(try StickerUpload.parse(body, contentType: contentType)) }
            }, logger: logger)
        }
        router.ws("/api/control") { inbound, outbound, _ in
            try await DashboardSocket(control: control, registry: registry).serve(inbound: inbound, outbound: outbound)
        }
        var httpLogger = logger
        httpLogger.logLevel = max(logger.logLevel, .warning)
        // nginx-rtmp's notifications are HTTP/1.0 requests answered on a connection it reads until
        // it closes; the server keeps connections open unless told to close, so an idle
        // connection is closed at once, or nginx would act on each answer only at its own time-out.
        return Application(router: router,
                           server: .http1WebSocketUpgrade(webSocketRouter: router, configuration: .init(http1: .init(idleTimeout: idleTimeout))),
                           configuration: .init(address: .hostname(address.host, port: address.port), serverName: "facerelay"),
                           onServerRunning: onServerRunning, logger: httpLogger)
    }

    /// `201 {"sticker", "replaced", "package"}`, or the refusal: `{"error": CODE, "message",
    /// "problems": [{"file", "field", "message"}]}` with 400, 409 (exists), 413 (too large) or 422
    /// (does not validate).
    private static func uploadReply(_ result: Result<(package: StickerPackage, replaced: Bool), UploadError>, logger: Logger? = nil) -> Response {
        let status: HTTPResponse.Status
        let value: JSONValue
        switch result {
        case .success(let installed):
            logger?.info("sticker uploaded", metadata: ["sticker": "\(installed.package.name)", "replaced": "\(installed.replaced)"])
            status = .created
            value = ["sticker": .string(installed.package.name), "replaced": .bool(installed.replaced),
                     "package": ControlProtocol.describe(installed.package)]
        case .failure(let error):
            status = switch error.code {
            case .exists: .conflict
            case .tooLarge: .contentTooLarge
            case .invalidSticker: .unprocessableContent
            case .cannotWrite: .internalServerError
            case .notMultipart, .badName, .badFile, .noStickerJSON: .badRequest
            }
            let problems: [JSONValue] = error.problems.map { ["file": .string($0.file), "field": .string($0.field), "message": .string($0.message)] }
            value = ["error": .string(error.code.rawValue), "message": .string(error.message), "problems": .array(problems)]
        }
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: ControlProtocol.line(value))))
    }

    private static func json(_ value: JSONValue) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                 body: .init(byteBuffer: ByteBuffer(string: ControlProtocol.line(value))))
    }

    private static func reply(_ status: HTTPResponse.Status) -> Response {
        Response(status: status, headers: [.connection: "close"])
    }

    private static func html(_ page: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: page)))
    }

    /// nginx-rtmp's notification form, or nil (answered 400) for one without `app` and `name`. The
    /// reason is logged: nginx-rtmp refuses the publish on that answer and says only that it did.
    private static func notice(_ request: Request, logger: Logger) async throws -> Notice? {
        let body = try await request.body.collect(upTo: 16 * 1024)
        do {
            return try URLEncodedFormDecoder().decode(Notice.self, from: String(buffer: body))
        } catch {
            logger.warning("refused a notification that is not nginx-rtmp's form with app and name: \(error)",
                           metadata: ["path": "\(request.uri.path)"])
            return nil
        }
    }
}

/// The login page's cookie, holding the token.
let tokenCookie = "facerelay_token"

/// A request's context: the WebSocket upgrade, and the peer's address.
struct HTTPRequestContext: RequestContext, WebSocketRequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<HTTPRequestContext>
    let remoteAddress: SocketAddress?
    /// Completes once the request's connection has closed (its answer was written and the socket shut).
    let connectionClosed: EventLoopFuture<Void>

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        remoteAddress = source.channel.remoteAddress
        connectionClosed = source.channel.closeFuture
    }
}

/// With the HTTP port open to the network, every route but the health check, the login page and
/// nginx-rtmp's notifications from this machine needs the configured token: as `Authorization:
/// Bearer TOKEN`, the login page's cookie, or a `token` query parameter.
struct TokenMiddleware<Context: RemoteAddressRequestContext>: RouterMiddleware {
    let token: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        if path == "/healthz" || path == "/login" { return try await next(request, context) }
        // nginx-rtmp beside FaceRelay (same host or pod) cannot send a header.
        if path.hasPrefix("/rtmp/"), let peer = context.remoteAddress?.ipAddress, peer.hasPrefix("127.") || peer == "::1" {
            return try await next(request, context)
        }
        let bearer = request.headers[.authorization].map { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : "" }
        let cookie = request.cookies[tokenCookie]?.value
        let query = request.uri.queryParameters.get("token")
        if [bearer, cookie, query].contains(token) { return try await next(request, context) }
        if path == "/" { return Response(status: .seeOther, headers: [.location: "/login"]) }
        return Response(status: .unauthorized, headers: [.contentType: "text/plain"],
                        body: .init(byteBuffer: ByteBuffer(string: "this FaceRelay needs its token: send Authorization: Bearer TOKEN, or log in at /login\n")))
    }
}
