import Foundation
import Synchronization

/// The builds that only one suite each needs, and that take minutes of a 2-core machine: the
/// libFuzzer targets (about a minute and a half) and FaceRelay with AddressSanitizer (about 4
/// minutes; both once per build folder, later runs rebuild what changed). They run one after the
/// other at idle priority (SCHED_IDLE) from the moment the first test asks for fixtures
/// (`FixtureFolder`), on the CPU the tests leave unused (a single-threaded tracker test leaves a
/// core, a relay waiting on real time more): they get none a test wants, the suites that need
/// them seldom wait for them, and they are ended when the test process ends
/// (`--pdeathsig`, bound to the thread that waits for them).
public final class BackgroundBuilds: Sendable {
    public static let fuzzTargets = BackgroundBuilds(["/bin/bash", FixtureFolder.root + "/Tests/Fuzz/fuzz.sh", "0"],
                                                     product: FixtureFolder.root + "/.build/fuzz")
    /// Without the index store, which nobody browses for these builds: 8 % less CPU (docs/testing.md).
    public static let addressSanitizer = BackgroundBuilds(
        ["/usr/bin/env", "swift", "build", "--package-path", FixtureFolder.root, "--build-path", FixtureFolder.root + "/.build/asan",
         "--sanitize=address", "--disable-index-store", "--product", "facerelay"],
        product: FixtureFolder.root + "/.build/asan/debug/facerelay")

    private static let started: Void = {
        Thread.detachNewThread {
            fuzzTargets.build()
            addressSanitizer.build()
        }
    }()

    /// Starts the builds once; later calls do nothing.
    public static func start() { started }

    private let command: [String]
    private let product: String
    private let done = DispatchGroup()
    private let outcome = Mutex<Result<String, FixtureError>?>(nil)

    private init(_ command: [String], product: String) {
        self.command = command
        self.product = product
        done.enter()
    }

    /// The signal `--pdeathsig` sends reaches the one process it is set on. Sent to the build
    /// itself (a script, or swift-build), it stopped that process and left its children building,
    /// orphans that every later run of a few tests added to (88 processes after a few dozen runs).
    /// The build runs in its own process group under a shell that passes the signal to the group.
    private static let groupEndedOnSignal = "setsid \"$@\" & build=$!; trap 'kill -TERM -- -$build' TERM; wait $build"

    private func build() {
        let result = Result { () throws(FixtureError) in
            try run("/usr/bin/setpriv", ["--pdeathsig", "TERM", "/usr/bin/chrt", "--idle", "0",
                                         "/bin/bash", "-c", Self.groupEndedOnSignal, "background-build"] + command, timeout: 3600)
            return product
        }
        outcome.withLock { $0 = result }
        done.leave()
    }

    /// What the build made (its executable or folder), once it is done; starts the builds if no
    /// test has yet.
    public func finished() throws(FixtureError) -> String {
        Self.start()
        done.wait()
        return try outcome.withLock { $0! }.get()
    }
}
