import FoundationEssentials
import Glibc
import JSONTree
import NIOCore
import NIOExtras
import NIOPosix

/// A connection to a serve's control socket: sends requests, reads reply and event lines.
public enum ControlClient {
    /// Connects, runs `body` with the connection, and closes it.
    ///
    /// The connection has an event loop of its own, shut down before this returns. NIO completes a
    /// channel's close before its loop thread lets go of the channel's cached addresses: on a shared
    /// loop `ctl` could exit in between, and LeakSanitizer would report those addresses as leaked
    /// (Swift stores their pointers with an enum tag in the spare bits, so it cannot see them).
    public static func withConnection<Result: Sendable>(
        to path: String, _ body: (_ send: (JSONValue) async throws -> Void, _ lines: NIOAsyncChannelInboundStream<ByteBuffer>) async throws -> Result
    ) async throws -> Result {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let result: Swift.Result<Result, any Error>
        do {
            result = .success(try await withConnection(to: path, on: group, body))
        } catch {
            result = .failure(error)
        }
        try await group.shutdownGracefully()
        return try result.get()
    }

    private static func withConnection<Result: Sendable>(
        to path: String, on group: MultiThreadedEventLoopGroup,
        _ body: (_ send: (JSONValue) async throws -> Void, _ lines: NIOAsyncChannelInboundStream<ByteBuffer>) async throws -> Result
    ) async throws -> Result {
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            channel = try await ClientBootstrap(group: group)
                .connect(unixDomainSocketPath: path) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineBasedFrameDecoder(), maximumBufferSize: 16 << 20))
                        return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw ControlServerError.cannotConnect(path: path, reason: error)
        }
        return try await channel.executeThenClose { inbound, outbound in
            try await body({ request in
                try await outbound.write(ByteBuffer(string: ControlProtocol.line(request)))
            }, inbound)
        }
    }

    /// Sends one request and returns its reply.
    public static func request(_ request: JSONValue, socket path: String) async throws -> JSONValue {
        try await withConnection(to: path) { send, lines in
            try await send(request)
            for try await line in lines {
                return try JSONDecoder().decode(JSONValue.self, from: Data(String(buffer: line).utf8))
            }
            throw ControlServerError.noReply(path: path)
        }
    }

    /// Whether something accepts connections on the socket at `path` (a stale file does not).
    static func isServing(_ path: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8.prefix(MemoryLayout.size(ofValue: address.sun_path) - 1))
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } == 0
    }
}
