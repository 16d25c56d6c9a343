import Foundation
@testable import RelayServer
import Testing

/// A webhook's signature and its POST through libcurl, against real HTTP servers (Python's
/// http.server) that answer, fail, never answer, or speak TLS with a certificate nobody vouches for.
@Suite struct WebhookPostTests {
    /// RFC 4231's HMAC-SHA256 test cases 2 (a short key) and 6 (a key longer than SHA-256's block,
    /// which HMAC hashes first): what a receiver computes with any HMAC library.
    @Test func theSignatureIsHMACSHA256InHex() {
        #expect(WebhookSender.signature(of: Array("what do ya want for nothing?".utf8), secret: "Jefe")
                == "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(WebhookSender.signature(of: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
                                        key: [UInt8](repeating: 0xaa, count: 131))
                == "sha256=60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    @Test func aPostArrivesWithItsHeadersAndBody() throws {
        let server = try TestServer(["answer", "204"])
        defer { server.stop() }
        let body = Array(#"{"event":"started","stream":"alice"}"#.utf8)
        let status = try WebhookPost.send(body, to: "http://127.0.0.1:\(server.port)/hook?token=t", headers: [
            "Content-Type: application/json", "X-FaceRelay-Event: started",
            "X-FaceRelay-Signature: \(WebhookSender.signature(of: body, secret: "s"))",
        ], timeout: .seconds(5), stopping: .init())
        #expect(status == 204)
        let request = try server.request()
        #expect(request["method"] as? String == "POST" && request["path"] as? String == "/hook?token=t")
        #expect(request["body"] as? String == String(decoding: body, as: UTF8.self))
        let headers = request["headers"] as? [String: String] ?? [:]
        #expect(headers["Content-Type"] == "application/json" && headers["X-FaceRelay-Event"] == "started", "\(headers)")
        #expect(headers["X-FaceRelay-Signature"] == WebhookSender.signature(of: body, secret: "s"))
        #expect(headers["Expect"] == nil, "no 100-continue round trip: \(headers)")
    }

    /// A redirected POST stays a POST with its body (what the receiver's move to https asks).
    @Test func aRedirectIsFollowedAsAPost() throws {
        let server = try TestServer(["redirect", "/moved"])
        defer { server.stop() }
        let status = try WebhookPost.send(Array("{}".utf8), to: "http://127.0.0.1:\(server.port)/hook", headers: [],
                                          timeout: .seconds(5), stopping: .init())
        #expect(status == 204)
        let first = try server.request(), second = try server.request()
        #expect(first["path"] as? String == "/hook" && second["path"] as? String == "/moved")
        #expect(second["method"] as? String == "POST" && second["body"] as? String == "{}")
    }

    /// Any status is an answer; the sender decides what counts as delivered.
    @Test func aFailingReceiversStatusComesBack() throws {
        let server = try TestServer(["answer", "503"])
        defer { server.stop() }
        #expect(try WebhookPost.send([], to: "http://127.0.0.1:\(server.port)/", headers: [], timeout: .seconds(5), stopping: .init()) == 503)
    }

    @Test func noReceiverIsAnErrorThatSaysWhy() throws {
        let server = try TestServer(["answer", "204"])
        let port = server.port
        server.stop()
        #expect {
            try WebhookPost.send([], to: "http://127.0.0.1:\(port)/", headers: [], timeout: .seconds(5), stopping: .init())
        } throws: { "\($0)".contains("127.0.0.1 port \(port)") && "\($0)".contains("onnect") }
    }

    /// A receiver that takes the connection and never answers costs at most the time-out, and the
    /// stop signal (the service shutting down) ends the wait long before it.
    @Test func aSilentReceiverTimesOutOrIsStopped() throws {
        let server = try TestServer(["silent"])
        defer { server.stop() }
        let started = Date()
        #expect {
            try WebhookPost.send([], to: "http://127.0.0.1:\(server.port)/", headers: [], timeout: .seconds(1), stopping: .init())
        } throws: { "\($0)".contains("timed out") }
        #expect(Date().timeIntervalSince(started) < 20)

        let stopping = WebhookPost.StopSignal()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) { stopping.raised.store(true, ordering: .relaxed) }
        let stopStarted = Date()
        #expect {
            try WebhookPost.send([], to: "http://127.0.0.1:\(server.port)/", headers: [], timeout: .seconds(120), stopping: stopping)
        } throws: { "\($0)".contains("shutting down") }
        #expect(Date().timeIntervalSince(stopStarted) < 60, "stopped after \(Date().timeIntervalSince(stopStarted)) s, not the 120 s time-out")
    }

    /// https goes through TLS with the system's certificate authorities: a certificate nobody
    /// vouches for is refused, and the body never reaches that server.
    @Test func httpsRefusesACertificateNobodyVouchesFor() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webhook-tls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                             "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem"]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        try #require(openssl.terminationStatus == 0)
        let server = try TestServer(["tls", "204", directory + "/cert.pem", directory + "/key.pem"])
        defer { server.stop() }
        #expect {
            try WebhookPost.send(Array("{}".utf8), to: "https://127.0.0.1:\(server.port)/", headers: [], timeout: .seconds(5), stopping: .init())
        } throws: { "\($0)".contains("certificate") }
        server.stop()
        #expect(server.requests().isEmpty)
    }
}

/// A Python HTTP server on a free port of 127.0.0.1 that prints each request it gets as a JSON line:
/// `answer STATUS`, `redirect PATH` (307 to PATH, then 204 there), `silent` (takes connections,
/// never reads), `tls STATUS CERT KEY`.
private final class TestServer {
    static let script = #"""
        import http.server, json, socket, ssl, sys, time
        mode = sys.argv[1]
        if mode == "silent":
            s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
            print(s.getsockname()[1], flush=True); time.sleep(600)
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                print(json.dumps({"method": "POST", "path": self.path, "headers": dict(self.headers), "body": body.decode()}), flush=True)
                if mode == "redirect" and self.path != sys.argv[2]:
                    self.send_response(307); self.send_header("Location", sys.argv[2])
                else:
                    self.send_response(204 if mode == "redirect" else int(sys.argv[2]))
                self.send_header("Content-Length", "0"); self.end_headers()
            def log_message(self, *arguments):
                pass
        server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        if mode == "tls":
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); context.load_cert_chain(sys.argv[3], sys.argv[4])
            server.socket = context.wrap_socket(server.socket, server_side=True)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """#

    let process = Process()
    let port: Int
    private let lines: LineReader

    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", Self.script] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        lines = LineReader(output.fileHandleForReading)
        guard let first = lines.next(), let port = Int(first) else { throw TestFailure("the test server printed no port") }
        self.port = port
    }

    /// The next request the server got, waiting for it.
    func request() throws -> [String: Any] {
        guard let line = lines.next(), let request = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw TestFailure("the test server ended without another request")
        }
        return request
    }

    /// Every request printed until the server ended (call after `stop`).
    func requests() -> [String] {
        return Array(sequence(state: lines) { $0.next() })
    }

    /// SIGKILL: the test process's blocked signals, SIGTERM among them, are the child's too.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// Lines from a pipe, read as they come.
private final class LineReader {
    private let handle: FileHandle
    private var buffer = Data()

    init(_ handle: FileHandle) { self.handle = handle }

    func next() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            let more = handle.availableData
            if more.isEmpty { return nil }
            buffer.append(more)
        }
    }
}
