import Foundation
import Testing
import TestFixtures

/// The README's first command, as a newcomer runs it, on a machine whose GStreamer has never run
/// (an empty plugin registry, which makes GStreamer's first start seconds slower): it must relay
/// the whole broadcast and end by itself, within its time limit.
@Suite(.serialized) struct DemoTests {
    @Test func theDemoEndsByItselfWithAColdRegistry() throws {
        let directory = try Package.temporaryDirectory("demo")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let demo = try ChildProcess("/usr/bin/env", [
            "FACERELAY_BIN=\(Package.facerelay)", "FACERELAY_DEMO_OUTPUT=\(directory)/out", "GST_REGISTRY=\(directory)/registry.bin",
            Package.root.appendingPathComponent("deploy/demo.sh").path,
        ], logDirectory: directory, name: "demo")
        let status = demo.wait(seconds: 420)
        #expect(status == 0, "the demo ended with \(String(describing: status)) (nil: still running after 420 s): \(demo.stdout.suffix(2000)) \(demo.stderr.suffix(2000))")
        #expect(demo.stdout.contains("== done in"), "\(demo.stdout.suffix(1000))")
        #expect(FileManager.default.fileExists(atPath: "\(directory)/registry.bin"), "the demo ran on the fresh registry")
        let stats = try RelayStatsFile("\(directory)/out/stats.json")
        #expect(stats.frames_out >= 450, "relayed \(stats.frames_out) of the broadcast's 600 frames")
        let report = try MediaReport("\(directory)/out/relayed.flv")
        #expect(report.frames.count >= 450, "recorded \(report.frames.count) frames")
        #expect((report.frames.compactMap(\.index).first ?? 99) <= 1, "the relay was listening before the broadcast began")
    }
}
