import FoundationEssentials
import HummingbirdWebSocket
import NIOCore

/// One dashboard connection: the control protocol over a WebSocket (each text message one request,
/// answered by its reply, so that a click takes the same path as `facerelay ctl set-sticker`), and
/// pushed to the page: every event as it fires, and the `stats` reply once a second.
struct DashboardSocket {
    let control: ControlProtocol
    let registry: StreamRegistry

    func serve(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        let subscription = registry.events.subscribe(to: Set(EventClass.allCases))
        defer { registry.events.unsubscribe(subscription.id) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in subscription.events {
                    try await outbound.write(.text(ControlProtocol.line(event)))
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    let figures = await offload { [control] in control.handle(#"{"id": "figures", "command": "stats"}"#) }
                    if case .reply(let reply) = figures { try await outbound.write(.text(ControlProtocol.line(reply))) }
                    try await Task.sleep(for: .seconds(1))
                }
            }
            group.addTask {
                for try await message in inbound.messages(maxSize: ControlProtocol.maximumLineBytes) {
                    guard case .text(let line) = message else { continue }
                    let outcome = await offload { [control] in control.handle(line) }
                    switch outcome {
                    case .reply(let reply):
                        try await outbound.write(.text(ControlProtocol.line(reply)))
                    case .subscribe:
                        let refusal = ControlProtocol.failure(id: .null, ControlError(.badRequest, "the dashboard's socket already receives every event; subscribe on the control socket instead"))
                        try await outbound.write(.text(ControlProtocol.line(refusal)))
                    }
                }
            }
            // The page closing its end ends the connection.
            try await group.next()
            group.cancelAll()
        }
    }
}
