import Foundation
import Testing
import TestFixtures

/// A short run of every libFuzzer target (Tests/Fuzz/fuzz.sh, which builds them with
/// `--sanitize=fuzzer --sanitize=address` into .build/fuzz): the committed corpus first, then
/// mutations of it. Any crash, sanitizer report or broken promise fails the test, with the input
/// left in .build/fuzz-artifacts/. The long run is `Tests/Fuzz/fuzz.sh 600`. The targets are
/// built in the background (`BackgroundBuilds.fuzzTargets`).
@Suite(.serialized) struct FuzzTests {
    static let secondsPerTarget = 5

    @Test func noFuzzTargetCrashesInAShortRun() throws {
        let script = Package.root.appendingPathComponent("Tests/Fuzz/fuzz.sh").path
        let output: String
        do {
            _ = try BackgroundBuilds.fuzzTargets.finished()
            output = String(decoding: try run("/bin/bash", [script, String(Self.secondsPerTarget)], timeout: 1800), as: UTF8.self)
        } catch {
            Issue.record("\(error)")
            return
        }
        let lines = output.split(separator: "\n")
        for target in ["sticker-json", "sticker-picture", "control-request", "serve-config"] {
            #expect(lines.contains { $0.hasPrefix("== \(target): ") && $0.hasSuffix("no crash") }, "\(target): \(output)")
        }
    }
}
