import Foundation
import Synchronization

/// The builds that only one suite each needs, and that take minutes of a 2-core machine: the
/// libFuzzer targets (about a minute and a half) and FaceRelay with AddressSanitizer (about 7
/// minutes; both once per build folder, later runs rebuild what changed). They run one after the
/// other at idle priority (SCHED_IDLE) from the moment the integration tests ask for their
/// fixtures, on the CPU that the tests waiting on real time leave unused: they get none a test
/// wants, the suites that need them seldom wait for all of it, and they are interrupted when the
/// test process ends (`--pdeathsig`, bound to the thread that waits for them).
final class BackgroundBuilds: Sendable {
    static let fuzzTargets = BackgroundBuilds(["/bin/bash", Package.root.appendingPathComponent("Tests/Fuzz/fuzz.sh").path, "0"],
                                              product: Package.root.appendingPathComponent(".build/fuzz").path)
    static let addressSanitizer = BackgroundBuilds(
        ["/usr/bin/env", "swift", "build", "--package-path", Package.root.path, "--build-path", Package.root.appendingPathComponent(".build/asan").path,
         "--sanitize=address", "--product", "facerelay"],
        product: Package.root.appendingPathComponent(".build/asan/debug/facerelay").path)

    private static let started: Void = {
        Thread.detachNewThread {
            fuzzTargets.build()
            addressSanitizer.build()
        }
    }()

    /// Starts the builds once; later calls do nothing.
    static func start() { started }

    private let command: [String]
    private let product: String
    private let done = DispatchGroup()
    private let outcome = Mutex<Result<String, CommandError>?>(nil)

    private init(_ command: [String], product: String) {
        self.command = command
        self.product = product
        done.enter()
    }

    private func build() {
        let result: Result<String, CommandError>
        do {
            try run("/usr/bin/setpriv", ["--pdeathsig", "INT", "/usr/bin/chrt", "--idle", "0"] + command, timeout: 3600)
            result = .success(product)
        } catch let error as CommandError {
            result = .failure(error)
        } catch {
            result = .failure(CommandError(description: "\(error)"))
        }
        outcome.withLock { $0 = result }
        done.leave()
    }

    /// What the build made (its executable or folder), once it is done; starts the builds if no
    /// test has yet.
    func finished() throws -> String {
        Self.start()
        done.wait()
        return try outcome.withLock { $0! }.get()
    }
}
