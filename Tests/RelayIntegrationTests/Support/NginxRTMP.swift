import Foundation
import TestFixtures

/// A real nginx with the RTMP module, on 127.0.0.1 and a free high port, in its own folder.
final class NginxRTMP {
    let port: Int
    let directory: String
    private let child: ChildProcess

    /// A server on `port` (a free one when nil): a stopped server can be brought back on its port.
    convenience init(port fixedPort: Int? = nil) throws {
        try self.init(port: fixedPort) { directory, port in
            """
            rtmp {
                server {
                    listen 127.0.0.1:\(port);
                    chunk_size 4096;
                    application live { live on; record off; }
                    application record { live on; record all; record_path \(Self.recordings(in: directory)); record_unique off; }
                }
            }
            """
        }
    }

    /// FaceRelay's shipped ingest configuration (deploy/nginx-facerelay.conf), with its ports
    /// moved to a free one and to `facerelayHTTP`, and its files kept in its own folder.
    static func facerelayIngest(facerelayHTTP: Int) throws -> NginxRTMP {
        let shipped = try String(contentsOfFile: Package.root.appendingPathComponent("deploy/nginx-facerelay.conf").path, encoding: .utf8)
        return try NginxRTMP(port: nil) { _, port in
            shipped.split(separator: "\n", omittingEmptySubsequences: false)
                .filter { !$0.hasPrefix("load_module") && !$0.hasPrefix("worker_processes") && !$0.hasPrefix("events") }
                .joined(separator: "\n")
                .replacingOccurrences(of: "listen 1935;", with: "listen 127.0.0.1:\(port);")
                .replacingOccurrences(of: "127.0.0.1:8190", with: "127.0.0.1:\(facerelayHTTP)")
        }
    }

    private init(port fixedPort: Int?, rtmpBlock: (String, Int) -> String) throws {
        directory = try Package.temporaryDirectory("nginx")
        try FileManager.default.createDirectory(atPath: Self.recordings(in: directory), withIntermediateDirectories: true)
        port = fixedPort ?? freePort()
        let config = """
        load_module /usr/lib/nginx/modules/ngx_rtmp_module.so;
        daemon off;
        master_process off;
        pid \(directory)/nginx.pid;
        error_log \(directory)/error.log info;
        events { worker_connections 256; }
        \(rtmpBlock(directory, port))
        """
        try config.write(toFile: "\(directory)/nginx.conf", atomically: true, encoding: .utf8)
        child = try ChildProcess("/usr/sbin/nginx", ["-p", directory, "-c", "\(directory)/nginx.conf", "-e", "\(directory)/error.log"],
                                 logDirectory: directory, name: "nginx")
        // Ready when the port accepts connections.
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if Self.accepts(port: port) { return }
            guard child.process.isRunning else { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw FixtureError(description: "nginx-rtmp did not start on port \(port): \(child.stderr) \((try? String(contentsOfFile: "\(directory)/error.log", encoding: .utf8)) ?? "")")
    }

    func url(_ key: String) -> String { "rtmp://127.0.0.1:\(port)/live/\(key)" }

    /// A key whose every frame nginx-rtmp writes to a file as it arrives, from the publish on: a
    /// recording is whole once its publisher has gone, with no player to wait out a read timeout.
    func recordedURL(_ key: String) -> String { "rtmp://127.0.0.1:\(port)/record/\(key)" }

    private static func recordings(in directory: String) -> String { directory + "/recorded" }

    /// The file recorded from `recordedURL(key)`, once the connection that published it has closed
    /// (nginx writes each frame as it comes, so everything sent is in it by then).
    func recording(_ key: String, seconds: Double = 30) throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        let log = directory + "/error.log"
        while Date() < deadline {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            // Each line names its connection ("*12 publish: name='key'"): the publisher's must have disconnected.
            if let publish = text.range(of: " publish: name='\(key)'") {
                let connection = text[..<publish.lowerBound].split(separator: " ").last.map(String.init) ?? ""
                if connection.hasPrefix("*"), text[publish.upperBound...].contains("\(connection) disconnect") {
                    return Self.recordings(in: directory) + "/\(key).flv"
                }
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw FixtureError(description: "nginx-rtmp's recording of '\(key)' was not closed within \(Int(seconds)) s: \((try? String(contentsOfFile: log, encoding: .utf8))?.suffix(2000) ?? "")")
    }

    /// Waits until a player (a relay) has asked for `key`: nginx-rtmp logs each play as it joins
    /// the stream, a player of a key not yet published waiting for its publish, so a publish from
    /// then on reaches it from its first frame. A fixed pause instead lost the broadcast's first
    /// seconds whenever the relay took longer to start than the pause (a debug build beside two
    /// busy cores took over 0.5 s).
    func waitForPlayer(_ key: String, seconds: Double = 30) throws {
        let deadline = Date().addingTimeInterval(seconds)
        let log = directory + "/error.log"
        while Date() < deadline {
            if ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains(" play: name='\(key)'") { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw FixtureError(description: "no player asked nginx-rtmp for '\(key)' within \(Int(seconds)) s")
    }

    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// Stops the server abruptly, as a crashed or unreachable platform would.
    func kill() {
        child.signal(SIGKILL)
        child.wait(seconds: 5)
    }

    deinit {
        // A fast shutdown: a graceful one (SIGQUIT) would wait for open RTMP sessions to end.
        child.signal(SIGTERM)
        child.wait(seconds: 5)
        try? FileManager.default.removeItem(atPath: directory)
    }
}
