import Foundation
import TestFixtures

/// Paths of the package under test and of its built executable.
enum Package {
    static let root = URL(fileURLWithPath: FixtureFolder.root)

    /// The facerelay binary built next to this test bundle (or $FACERELAY_BIN).
    static var facerelay: String {
        if let explicit = ProcessInfo.processInfo.environment["FACERELAY_BIN"] { return explicit }
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = bundle.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("facerelay").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return root.appendingPathComponent(".build/debug/facerelay").path
    }

    static func temporaryDirectory(_ name: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("facerelay-test-\(name)-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        // nginx workers and GStreamer never need more, and a world-writable folder avoids owner surprises.
        chmod(path, 0o777)
        return path
    }
}

/// A port nothing listens on right now (the kernel's choice), for TCP or UDP.
func freePort(udp: Bool = false) -> Int {
    let fd = socket(AF_INET, Int32(udp ? SOCK_DGRAM.rawValue : SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// `facerelay run` listening for SRT on a free port, and, once it listens, an ffmpeg caller sending
/// `input` to it at the input's own pace in MPEG-TS, as a broadcaster's encoder does. Logs in `directory`.
func srtBroadcast(_ input: String, to output: String, relayArguments: [String] = [], directory: String) throws
    -> (relay: ChildProcess, broadcaster: ChildProcess) {
    let port = freePort(udp: true)
    let relay = try ChildProcess(Package.facerelay, ["run", "--input", "srt://127.0.0.1:\(port)?mode=listener", "--output", output] + relayArguments,
                                 logDirectory: directory, name: "relay")
    Thread.sleep(forTimeInterval: 1)
    let broadcaster = try ChildProcess("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-re", "-i", input, "-c", "copy", "-f", "mpegts",
                                                           "srt://127.0.0.1:\(port)?mode=caller"],
                                       logDirectory: directory, name: "broadcaster")
    return (relay, broadcaster)
}
