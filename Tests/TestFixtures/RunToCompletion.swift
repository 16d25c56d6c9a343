import Foundation

/// Runs a command that must succeed for the tests to go on (a fixture script, a build) and waits
/// for its exit. Its standard error goes to a file (a pipe could fill and stall it) and is quoted
/// when it fails; after `timeout` seconds it is interrupted and the call throws.
public func runToCompletion(_ executable: String, _ arguments: [String], timeout: Double) throws(FixtureError) {
    let command = ([executable] + arguments).joined(separator: " ")
    let log = FileManager.default.temporaryDirectory.appendingPathComponent("facerelay-command-\(UUID().uuidString.prefix(8)).err")
    defer { try? FileManager.default.removeItem(at: log) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    let exited = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in exited.signal() }
    do {
        try Data().write(to: log)
        process.standardError = try FileHandle(forWritingTo: log)
        try withSignalsUnblocked { try process.run() }
    } catch {
        throw FixtureError(description: "cannot run \(command): \(error)")
    }
    if exited.wait(timeout: .now() + timeout) == .timedOut {
        process.interrupt()
        exited.wait()
        throw FixtureError(description: "\(command) did not end within \(Int(timeout)) s")
    }
    guard process.terminationReason == .exit, process.terminationStatus == 0 else {
        let stderr = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        throw FixtureError(description: "\(command) ended with \(process.terminationStatus): \(stderr.suffix(2000))")
    }
}

/// A child inherits its parent thread's blocked signals, and a test runs on a pool thread that
/// blocks them all: a child that never unblocks them (nginx; a build asked to stop by
/// `--pdeathsig`) would ignore every signal but SIGKILL. The child gets an empty mask, as it would
/// from a shell.
public func withSignalsUnblocked<T>(_ body: () throws -> T) rethrows -> T {
    var none = sigset_t(), previous = sigset_t()
    sigemptyset(&none)
    pthread_sigmask(SIG_SETMASK, &none, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
    return try body()
}
