import Glibc
import JSONTree
import Logging
import NIOCore
import NIOExtras
import NIOPosix

/// The control socket: a Unix domain socket only its owner may connect to (mode 0600), speaking
/// `ControlProtocol` one line at a time. Each connection is served on its own task; a subscriber's
/// connection receives events until it closes.
public struct ControlServer: Sendable {
    public let path: String
    let control: ControlProtocol
    let events: EventHub
    let logger: Logger

    public init(path: String, control: ControlProtocol, events: EventHub, logger: Logger) {
        self.path = path
        self.control = control
        self.events = events
        self.logger = logger
    }

    typealias Connection = NIOAsyncChannel<ByteBuffer, ByteBuffer>

    /// Binds the socket (refusing to take over one another process is serving) and serves until
    /// the task is cancelled.
    public func run() async throws {
        if ControlClient.isServing(path) {
            throw ControlServerError.inUse(path: path)
        }
        // The socket is created with the umask's mode: make it 0600 from the first instant rather
        // than chmod it afterwards, when a connection could already have slipped in.
        let previousMask = umask(0o177)
        let server: NIOAsyncChannel<Connection, Never>
        do {
            server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                // A client may close its sending side after its request (`nc -N`, a script's
                // shutdown): it still gets its reply.
                .childChannelOption(.allowRemoteHalfClosure, value: true)
                .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            ByteToMessageHandler(LineBasedFrameDecoder(), maximumBufferSize: ControlProtocol.maximumLineBytes))
                        return try Connection(wrappingChannelSynchronously: channel)
                    }
                }
            umask(previousMask)
        } catch {
            umask(previousMask)
            throw ControlServerError.cannotListen(path: path, reason: error)
        }
        chmod(path, 0o600)
        logger.info("control socket listening", metadata: ["path": "\(path)"])
        defer { unlink(path) }
        try await withThrowingDiscardingTaskGroup { group in
            try await server.executeThenClose { connections in
                for try await connection in connections {
                    group.addTask { await serve(connection) }
                }
            }
        }
    }

    private func serve(_ connection: Connection) async {
        do {
            try await connection.executeThenClose { inbound, outbound in
                var lines = inbound.makeAsyncIterator()
                while true {
                    let buffer: ByteBuffer
                    var isLast = false
                    do {
                        guard let next = try await lines.next() else { return }
                        buffer = next
                    } catch is ByteToMessageDecoderError.PayloadTooLargeError {
                        try await refuseLongLine(outbound)
                        return
                    } catch let error as NIOExtrasErrors.LeftOverBytesError {
                        // The last request of a client that closed its sending side without a newline.
                        buffer = error.leftOverBytes
                        isLast = true
                    }
                    // A long line that came in one read is framed whole before the buffer limit applies.
                    guard buffer.readableBytes <= ControlProtocol.maximumLineBytes else {
                        try await refuseLongLine(outbound)
                        return
                    }
                    let line = String(buffer: buffer)
                    if line.allSatisfy(\.isWhitespace) { continue }
                    switch await offload({ [control] in control.handle(line) }) {
                    case .reply(let reply):
                        try await outbound.write(ByteBuffer(string: ControlProtocol.line(reply)))
                    case .subscribe(let reply, let classes):
                        // Subscribed before the reply goes out: every event after the reply reaches it.
                        let subscription = events.subscribe(to: classes)
                        defer { events.unsubscribe(subscription.id) }
                        try await outbound.write(ByteBuffer(string: ControlProtocol.line(reply)))
                        try await streamEvents(subscription, to: outbound, closedWhen: &lines)
                        return
                    }
                    if isLast { return }
                }
            }
        } catch {
            logger.debug("control connection ended: \(error)")
        }
    }

    private func refuseLongLine(_ outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>) async throws {
        let error = ControlError(.lineTooLong, "a request line is limited to \(ControlProtocol.maximumLineBytes / 1024) KiB; the connection is closed")
        try await outbound.write(ByteBuffer(string: ControlProtocol.line(ControlProtocol.failure(id: .null, error))))
    }

    /// Writes events to a subscriber until it closes its end (anything it sends meanwhile is ignored).
    private func streamEvents(_ subscription: EventHub.Subscription, to outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>,
                              closedWhen lines: inout NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in subscription.events {
                    try await outbound.write(ByteBuffer(string: ControlProtocol.line(event)))
                }
            }
            // The subscriber closing its end ends the subscription.
            while try await lines.next() != nil {}
            group.cancelAll()
        }
    }
}
