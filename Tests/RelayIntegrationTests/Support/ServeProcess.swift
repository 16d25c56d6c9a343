import Foundation
import TestFixtures

/// A real `facerelay serve`, configured with YAML in its own folder, with its control socket and
/// HTTP port; `ctl` runs the real `facerelay ctl` against it.
final class ServeProcess {
    let directory: String
    let socket: String
    let httpPort: Int
    let child: ChildProcess
    /// The facerelay binary that serves and answers `ctl`: the tests' build unless told otherwise.
    let executable: String

    /// `configuration` is the YAML after the control socket and HTTP lines, which this fills in.
    init(_ configuration: String, httpPort fixedPort: Int? = nil, name: String = "serve", executable: String = Package.facerelay,
         environment: [String: String] = [:]) throws {
        self.executable = executable
        directory = try Package.temporaryDirectory(name)
        socket = directory + "/control.sock"
        httpPort = fixedPort ?? freePort()
        let path = directory + "/facerelay.yml"
        try ("control_socket: \(socket)\nhttp: 127.0.0.1:\(httpPort)\n" + configuration).write(toFile: path, atomically: true, encoding: .utf8)
        let variables = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        child = try variables.isEmpty
            ? ChildProcess(executable, ["serve", "--config", path], logDirectory: directory, name: "serve")
            : ChildProcess("/usr/bin/env", variables + [executable, "serve", "--config", path], logDirectory: directory, name: "serve")
        // Ready once both the HTTP port and the control socket answer (a debug build loads every
        // sticker first, which takes a while).
        let deadline = Date().addingTimeInterval(180)
        while Date() < deadline {
            if NginxRTMP.accepts(port: httpPort), FileManager.default.fileExists(atPath: socket) { return }
            guard child.process.isRunning else { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw FixtureError(description: "facerelay serve did not come up: \(child.stderr.suffix(3000))")
    }

    var log: String { child.stderr + child.stdout }

    /// `facerelay ctl ARGS --json`: the reply, whether ok or not.
    @discardableResult
    func ctl(_ arguments: [String]) throws -> [String: Any] {
        let child = try ChildProcess(executable, ["ctl"] + arguments + ["--socket", socket, "--json"],
                                     logDirectory: directory, name: "ctl-\(UUID().uuidString.prefix(6))")
        guard child.wait(seconds: 60) != nil else { throw FixtureError(description: "ctl \(arguments) did not answer") }
        guard let line = child.stdout.split(separator: "\n").first,
              let reply = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw FixtureError(description: "ctl \(arguments): no JSON reply; stderr: \(child.stderr)")
        }
        return reply
    }

    /// The `result` of an ok reply; throws with the error otherwise.
    func result(_ arguments: [String]) throws -> [String: Any] {
        let reply = try ctl(arguments)
        guard reply["ok"] as? Bool == true, let result = reply["result"] as? [String: Any] else {
            throw FixtureError(description: "ctl \(arguments) failed: \(reply)")
        }
        return result
    }

    /// The streams as `streams` lists them, by name.
    func streams() throws -> [String: [String: Any]] {
        let list = try result(["streams"])["streams"] as? [[String: Any]] ?? []
        return Dictionary(uniqueKeysWithValues: list.map { ($0["stream"] as? String ?? "", $0) })
    }

    /// Waits until `condition` holds on the streams, or `seconds` pass.
    @discardableResult
    func waitForStreams(seconds: Double, _ condition: ([String: [String: Any]]) -> Bool) throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(try streams()) { return true }
            Thread.sleep(forTimeInterval: 0.2)
        }
        return false
    }

    /// `facerelay ctl subscribe --json` in the background; `events()` reads what it printed.
    func subscribe(_ classes: [String] = []) throws -> Subscriber {
        let child = try ChildProcess(executable, ["ctl", "subscribe"] + classes + ["--socket", socket, "--json"],
                                     logDirectory: directory, name: "subscriber-\(UUID().uuidString.prefix(6))")
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, !child.stdout.contains("\"ok\":true") { Thread.sleep(forTimeInterval: 0.05) }
        return Subscriber(child: child)
    }

    struct Subscriber {
        let child: ChildProcess

        /// Every event line so far (the subscribe reply left out).
        func events() -> [[String: Any]] {
            child.stdout.split(separator: "\n").dropFirst().compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }

        /// The first event that matches, waiting up to `seconds` for it to be printed.
        func firstEvent(within seconds: Double, where matches: ([String: Any]) -> Bool) -> [String: Any]? {
            let deadline = Date().addingTimeInterval(seconds)
            repeat {
                if let event = events().first(where: matches) { return event }
                Thread.sleep(forTimeInterval: 0.05)
            } while Date() < deadline
            return nil
        }
    }

    /// SIGTERM, as an operator or systemd stops the service; the exit status.
    func terminate(seconds: Double = 30) -> Int32? {
        child.signal(SIGTERM)
        return child.wait(seconds: seconds)
    }

    deinit {
        if child.process.isRunning { _ = terminate(seconds: 10) }
        try? FileManager.default.removeItem(atPath: directory)
    }
}
