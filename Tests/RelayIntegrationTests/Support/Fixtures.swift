import Foundation

/// Test media built once per test run by Tests/Fixtures/make-fixtures.sh from a real face photo.
enum Fixtures {
    /// Frame rate of every fixture video, and where its audio beeps and video markers sit.
    static let framesPerSecond = 30.0
    /// Beeps start at 1, 3, 5... s: on frames 30, 90, 150...
    static func beepFrames(upTo count: Int) -> [Int] { Array(stride(from: 30, to: count, by: 60)) }

    /// Every integration suite asks for fixtures first: the sanitizer builds start in the
    /// background here too (see `BackgroundBuilds`).
    private static let built: Result<String, CommandError> = {
        BackgroundBuilds.start()
        let directory = ProcessInfo.processInfo.environment["FACERELAY_FIXTURES"]
            ?? Package.root.appendingPathComponent(".build/test-fixtures").path
        do {
            try run("/bin/bash", [Package.root.appendingPathComponent("Tests/Fixtures/make-fixtures.sh").path, directory], timeout: 600)
            return .success(directory)
        } catch let error as CommandError {
            return .failure(error)
        } catch {
            return .failure(CommandError(description: "\(error)"))
        }
    }()

    static func path(_ name: String) throws -> String {
        try built.get() + "/" + name
    }

    private static let motionBuilt: Result<String, CommandError> = {
        do {
            let directory = try built.get() + "/motion"
            try run("/usr/bin/python3", [Package.root.appendingPathComponent("Tests/Fixtures/face-motion.py").path,
                                         try path("astronaut.png"), directory, "translate", "leave"], timeout: 600)
            return .success(directory)
        } catch let error as CommandError {
            return .failure(error)
        } catch {
            return .failure(CommandError(description: "\(error)"))
        }
    }()

    /// A moving-face video with known truth from Tests/Fixtures/face-motion.py (NAME.mp4,
    /// NAME.truth.json), or face_tile.png, the face it moves.
    static func motion(_ name: String) throws -> String {
        try motionBuilt.get() + "/" + name
    }
}
