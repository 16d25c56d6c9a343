import Foundation

/// A child process with its output collected in files (pipes could fill and stall it), waited for
/// by its exit, not by polling.
///
/// `@unchecked Sendable` because Foundation's `Process` is not marked Sendable: after `run()` in
/// `init`, it is only asked for its state (`isRunning`, `terminationStatus`, `terminationReason`,
/// `processIdentifier`) and signalled, which Foundation guards with its own lock.
public final class ChildProcess: @unchecked Sendable {
    public let process = Process()
    public let stdoutPath: String
    public let stderrPath: String
    private let exited = DispatchGroup()

    public init(_ executable: String, _ arguments: [String], logDirectory: String, name: String) throws {
        stdoutPath = "\(logDirectory)/\(name).out"
        stderrPath = "\(logDirectory)/\(name).err"
        try Data().write(to: URL(fileURLWithPath: stdoutPath))
        try Data().write(to: URL(fileURLWithPath: stderrPath))
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        exited.enter()
        process.terminationHandler = { [exited] _ in exited.leave() }
        do {
            try withSignalsUnblocked { try process.run() }
        } catch {
            exited.leave()
            throw error
        }
    }

    public var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
    public var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }

    /// Waits for the process to exit and returns its status; stops it (SIGTERM, then SIGKILL half
    /// a second later) and returns nil if it takes longer than `seconds`.
    @discardableResult
    public func wait(seconds: Double) -> Int32? {
        if exited.wait(timeout: .now() + seconds) == .success { return process.terminationStatus }
        process.terminate()
        if exited.wait(timeout: .now() + 0.5) == .timedOut { kill(process.processIdentifier, SIGKILL) }
        exited.wait()
        return nil
    }

    public func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            exited.wait()
        }
    }
}

/// Runs a command to completion and returns its standard output; throws with its stderr when it
/// fails or, stopped, takes longer than `timeout` seconds.
@discardableResult
public func run(_ executable: String, _ arguments: [String], timeout: Double = 120) throws(FixtureError) -> Data {
    let command = ([executable] + arguments).joined(separator: " ")
    let child: ChildProcess
    do {
        child = try ChildProcess(executable, arguments, logDirectory: FileManager.default.temporaryDirectory.path,
                                 name: "cmd-\(UUID().uuidString.prefix(8))")
    } catch {
        throw FixtureError(description: "cannot run \(command): \(error)")
    }
    defer {
        try? FileManager.default.removeItem(atPath: child.stdoutPath)
        try? FileManager.default.removeItem(atPath: child.stderrPath)
    }
    let status = child.wait(seconds: timeout)
    guard status == 0, child.process.terminationReason == .exit else {
        throw FixtureError(description: "\(command) exited \(status.map(String.init) ?? "by time-out"): \(child.stderr.suffix(2000))")
    }
    return FileManager.default.contents(atPath: child.stdoutPath) ?? Data()
}

/// A child inherits its parent thread's blocked signals, and a test runs on a pool thread that
/// blocks them all: a child that never unblocks them (nginx; a build asked to stop by
/// `--pdeathsig`) would ignore every signal but SIGKILL. The child gets an empty mask, as it would
/// from a shell.
func withSignalsUnblocked<T>(_ body: () throws -> T) rethrows -> T {
    var none = sigset_t(), previous = sigset_t()
    sigemptyset(&none)
    pthread_sigmask(SIG_SETMASK, &none, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
    return try body()
}
