import Foundation

/// The test media Tests/Fixtures/make-fixtures.sh makes (real face photos, the corpus, videos),
/// once per test process, in `FACERELAY_FIXTURES` or `.build/test-fixtures`: the tracker tests
/// and the integration tests read the same folder.
public enum FixtureFolder {
    /// The package's root folder.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// The folder, filled: made on the first call (minutes on a bare machine, seconds later), which
    /// also starts the builds a few suites need later (`BackgroundBuilds`), so that they have every
    /// test from the first fixture on to use the CPU the tests leave free.
    public static func path() throws(FixtureError) -> String { try made.get() }

    private static let made: Result<String, FixtureError> = Result { () throws(FixtureError) in
        // Tests/run.sh's tracker process needs none of them: the other process builds them.
        if ProcessInfo.processInfo.environment["FACERELAY_BACKGROUND_BUILDS"] != "0" { BackgroundBuilds.start() }
        let directory = ProcessInfo.processInfo.environment["FACERELAY_FIXTURES"] ?? root + "/.build/test-fixtures"
        try run("/bin/bash", [root + "/Tests/Fixtures/make-fixtures.sh", directory], timeout: 900)
        return directory
    }
}

/// What the tests stand on that could not be made, read or started (a fixture, a command, a server):
/// what, where, and the failing command's own words.
public struct FixtureError: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}
