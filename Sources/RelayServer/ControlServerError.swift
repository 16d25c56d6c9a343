/// Why the control socket cannot serve, or a client cannot talk to it; the underlying error is kept
/// until the message is shown.
public enum ControlServerError: Error, CustomStringConvertible, Sendable {
    /// Another serve answers on this socket.
    case inUse(path: String)
    /// The socket could not be created.
    case cannotListen(path: String, reason: any Error)
    /// Nothing accepted the client's connection.
    case cannotConnect(path: String, reason: any Error)
    /// The server closed the connection before replying.
    case noReply(path: String)

    public var description: String {
        switch self {
        case .inUse(let path):
            "\(path): another facerelay serve is listening on this control socket; stop it or give another --control-socket"
        case .cannotListen(let path, let reason):
            "\(path): cannot create the control socket: \(reason); check that its folder exists and is writable, or give another --control-socket"
        case .cannotConnect(let path, let reason):
            "cannot connect to \(path): \(reason); is facerelay serve running, and is this its --control-socket (and yours)?"
        case .noReply(let path):
            "\(path) closed the connection without a reply"
        }
    }
}
