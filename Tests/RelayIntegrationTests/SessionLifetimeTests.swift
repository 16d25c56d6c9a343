import Foundation
import FrameKit
import Logging
import MediaBridge
import StreamPlan
import StreamSession
import Testing
import TestFixtures

/// A stage that only tells whether it still exists.
private final class WatchedStage: FrameStage {
    func analyse(_ frame: VideoFrame) -> StageDecision { .passThrough }
    func draw(on frame: VideoFrame) {}
}

@Suite struct SessionLifetimeTests {
    /// A session's stage (in `run`, the face tracker and its detection thread) is freed by its
    /// owner's last reference, as soon as `run` has returned. Held by the stats timer's handler
    /// instead, it was freed later on Dispatch's queue: as `facerelay run` exited, with a detection
    /// still scanning on weights the exit had freed.
    @Test(arguments: [0.02, 0.5]) func aFinishedSessionIsFreedByItsOwner(statsInterval: Double) throws {
        let directory = try Package.temporaryDirectory("lifetime")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        weak var stage: WatchedStage?
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        do {
            let watched = WatchedStage()
            stage = watched
            let session = try RelaySession(
                options: .init(input: .file(path: try Fixtures.path("face_720p.mp4")), outputs: [.file(path: directory + "/out.mkv", container: .mkv)],
                               settings: RelaySettings(), statsInterval: statsInterval, statsJSONPath: nil),
                library: PipelineLibrary(directory: Package.root.appendingPathComponent("Pipelines").path), stage: watched, logger: logger)
            let stats = try session.run()
            #expect(stats.framesOut == 180)
        }
        #expect(stage == nil, "the session outlived its owner's last reference (stats every \(statsInterval) s)")
    }
}
