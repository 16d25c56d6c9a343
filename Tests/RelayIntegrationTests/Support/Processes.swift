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

/// A child process with its output collected in files (pipes could fill and stall it).
final class ChildProcess: @unchecked Sendable {
    let process = Process()
    let stdoutPath: String
    let stderrPath: String

    init(_ executable: String, _ arguments: [String], logDirectory: String, name: String) throws {
        stdoutPath = "\(logDirectory)/\(name).out"
        stderrPath = "\(logDirectory)/\(name).err"
        try Data().write(to: URL(fileURLWithPath: stdoutPath))
        try Data().write(to: URL(fileURLWithPath: stderrPath))
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        try withSignalsUnblocked { try process.run() }
    }

    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
    var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }

    /// Waits for the process to exit; kills it and returns nil if it takes longer than `seconds`.
    @discardableResult
    func wait(seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning {
            process.terminate()
            Thread.sleep(forTimeInterval: 0.5)
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            return nil
        }
        return process.terminationStatus
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// Runs a command to completion and returns its standard output; throws with its stderr on failure.
@discardableResult
func run(_ executable: String, _ arguments: [String], timeout: Double = 120) throws -> Data {
    let directory = FileManager.default.temporaryDirectory.path
    let name = "cmd-\(UUID().uuidString.prefix(8))"
    let child = try ChildProcess(executable, arguments, logDirectory: directory, name: name)
    let status = child.wait(seconds: timeout)
    defer {
        try? FileManager.default.removeItem(atPath: child.stdoutPath)
        try? FileManager.default.removeItem(atPath: child.stderrPath)
    }
    guard status == 0 else {
        throw CommandError(description: "\(executable) \(arguments.joined(separator: " ")) exited \(status.map(String.init) ?? "by time-out"): \(child.stderr.suffix(2000))")
    }
    return FileManager.default.contents(atPath: child.stdoutPath) ?? Data()
}

struct CommandError: Error, CustomStringConvertible {
    let description: String
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
