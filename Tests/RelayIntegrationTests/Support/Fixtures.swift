import Foundation
import TestFixtures

/// Test media built once per test run by Tests/Fixtures/make-fixtures.sh from a real face photo.
enum Fixtures {
    /// Frame rate of every fixture video, and where its audio beeps and video markers sit.
    static let framesPerSecond = 30.0
    /// Beeps start at 1, 3, 5... s: on frames 30, 90, 150...
    static func beepFrames(upTo count: Int) -> [Int] { Array(stride(from: 30, to: count, by: 60)) }

    static func path(_ name: String) throws -> String {
        try FixtureFolder.path() + "/" + name
    }

    private static let motionBuilt = Result { () throws(FixtureError) in
        let folder = try FixtureFolder.path()
        try run("/usr/bin/python3", [FixtureFolder.root + "/Tests/Fixtures/face-motion.py", folder + "/astronaut.png",
                                     folder + "/motion", "translate", "leave"], timeout: 600)
        return folder + "/motion"
    }

    /// A moving-face video with known truth from Tests/Fixtures/face-motion.py (NAME.mp4,
    /// NAME.truth.json), or face_tile.png, the face it moves.
    static func motion(_ name: String) throws -> String {
        try motionBuilt.get() + "/" + name
    }
}
