import FaceTracking
import FoundationEssentials
import Glibc
import Logging
import MediaBridge
import NIOCore
@testable import RelayServer
import ServiceLifecycle
import StickerKit
import Testing

/// nginx-rtmp acts on a notification's answer when that connection closes. A publish waiting for
/// its relay's `on_play` must therefore be let through only once the play's connection has closed:
/// let through when the play's answer is written, a busy machine can close the publish's connection
/// first, nginx lets the broadcaster in before the relay has joined, and the relay starts at the
/// broadcast's next keyframe (ServeTests once started at frame 60 so).
@Suite struct NotificationOrderTests {
    @Test func aPublishIsLetThroughOnlyOnceItsRelaysPlayConnectionHasClosed() async throws {
        let pipelines = PipelineLibrary(directory: Package.root + "/Pipelines")
        let catalog = StickerCatalog(library: StickerLibrary(directory: Package.root + "/Stickers"),
                                     loader: StickerLoader(expressions: ExpressionSettings.defaultRules.map(\.analyser.name)))
        let registry = StreamRegistry(config: ServeConfig(), catalog: catalog, events: EventHub(), library: pipelines,
                                      makeTracker: { _ in throw ControlError(.vision, "no tracker in this test") }, logger: .init(label: "test"))
        // The play's client keeps its connection alive, so the server closes it only after this
        // idle time: the gap between the answer and the close is wide enough to see on any machine.
        let idle = Duration.seconds(2)
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let app = HTTPServer.application(registry: registry, address: .init(host: "127.0.0.1", port: 0), build: "test",
                                         idleTimeout: .seconds(2), logger: .init(label: "test"),
                                         onServerRunning: { listening.yield($0.localAddress?.port ?? 0) })
        let server = ServiceGroup(configuration: .init(services: [app], logger: .init(label: "test")))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { listening.finish() }  // a server that cannot start ends the wait for its port
                try await server.run()
            }
            defer { Task { await server.triggerGracefulShutdown() } }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next(), "the server did not start")

            async let letThrough = registry.waitForPlay("live/alice")
            let play = try LoopbackClient(port: port)
            let form = "app=live&name=alice"
            let asked = ContinuousClock.now
            try play.send("POST /rtmp/on_play HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: \(form.utf8.count)\r\n\r\n\(form)")
            let answer = try play.readAnswerHead()
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
            #expect(await letThrough, "the publish waited its whole limit")
            let released = ContinuousClock.now
            // The server closed the play's connection before the publish went on: its end of file
            // is at the client within a moment (loopback), not at the end of the idle time.
            let endOfFile = try play.waitForEndOfFile(upTo: .seconds(10))
            #expect(released - asked >= idle && endOfFile < .milliseconds(500),
                    "publish let through \(released - asked) after the play was asked; the play's connection closed \(endOfFile) later")
        }
    }
}

/// A blocking TCP client on 127.0.0.1, enough to speak one HTTP request by hand. A read waits at
/// most 10 s, so that a server that never answers fails the test instead of hanging it.
private struct LoopbackClient: ~Copyable {
    let socket: Int32

    init(port: Int) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw TestFailure("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { close(socket); throw TestFailure("connect to \(port): errno \(errno)") }
        var limit = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(socket) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ Glibc.send(socket, $0.baseAddress, $0.count, 0) }) == bytes.count else {
            throw TestFailure("send: errno \(errno)")
        }
    }

    /// Reads up to the blank line after the answer's headers (the answers here have no body).
    func readAnswerHead() throws -> String {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while !bytes.ends(with: Array("\r\n\r\n".utf8)) {
            guard recv(socket, &byte, 1, 0) == 1 else { throw TestFailure("the answer ended early: \(String(decoding: bytes, as: UTF8.self))") }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// How long until the server closed the connection, with no more bytes before it.
    func waitForEndOfFile(upTo limit: Duration) throws -> Duration {
        let started = ContinuousClock.now
        var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(limit.components.seconds * 1000)) == 1 else { throw TestFailure("the connection stayed open \(limit)") }
        var byte: UInt8 = 0
        guard recv(socket, &byte, 1, 0) == 0 else { throw TestFailure("bytes after the answer") }
        return ContinuousClock.now - started
    }
}

private extension Array where Element: Equatable {
    func ends(with suffix: [Element]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}
