import Foundation
import FrameKit
import MediaBridge
import StreamSession
import Testing

@Suite struct StreamStatsTests {
    @Test func figuresCoverOnlyTheirInterval() throws {
        var before = MediaRelay.Counters()
        before.framesIn = 100
        before.framesOut = 98
        before.stageCPUNanoseconds = 1_000_000
        var now = before
        now.framesIn = 400
        now.framesOut = 398
        now.framesDropped = 2
        now.stageCPUNanoseconds = 1_000_000 + 300 * 500_000
        let usageBefore = ProcessUsage(cpuSeconds: 10, residentMegabytes: 100, peakResidentMegabytes: 100)
        let usageNow = ProcessUsage(cpuSeconds: 14, residentMegabytes: 110, peakResidentMegabytes: 120)
        let info = MediaRelay.StreamInfo(width: 1280, height: 720, framesPerSecond: 30, hasAudio: true)
        let stats = StreamStats(input: "in", output: "out", info: info, counters: now, since: (before, usageBefore), usage: usageNow, seconds: 10)
        #expect(stats.framesIn == 300 && stats.framesOut == 300 && stats.framesDropped == 2)
        #expect(stats.fps == 30)
        #expect(abs(stats.stageMsPerFrame - 0.5) < 1e-9)
        #expect(abs(stats.processCpuCores - 0.4) < 1e-9)
        #expect(stats.peakRssMb == 120)
    }

    @Test func jsonUsesTheDocumentedKeys() throws {
        let stats = StreamStats(input: "in", output: "out", info: nil, counters: .init(),
                                since: (.init(), ProcessUsage(cpuSeconds: 0, residentMegabytes: 0, peakResidentMegabytes: 0)),
                                usage: ProcessUsage(cpuSeconds: 0, residentMegabytes: 1, peakResidentMegabytes: 1), seconds: 0)
        let object = try #require(try JSONSerialization.jsonObject(with: stats.json()) as? [String: Any])
        for key in ["frames_in", "frames_out", "frames_dropped", "fps", "stage_ms_per_frame", "process_cpu_cores", "rss_mb", "peak_rss_mb", "duration_s"] {
            #expect(object[key] != nil, "missing \(key)")
        }
    }

    @Test func processUsageReadsThisProcess() {
        let usage = ProcessUsage.now()
        #expect(usage.residentMegabytes > 1 && usage.peakResidentMegabytes >= usage.residentMegabytes)
        #expect(usage.cpuSeconds > 0)
    }

    /// Each stage from what measured it: the threads' names for decode, encode and mux; the
    /// tracker for tracking (detection thread included); the Swift stage minus its tracking for
    /// compositing; the frame thread minus the Swift stage for the relay's own work.
    @Test func stagesSplitTheThreadsAndTheStage() {
        var counters = MediaRelay.Counters()
        counters.framesOut = 300
        counters.threadCPUNanoseconds = [.decode: 900_000_000, .encode: 3_000_000_000, .mux: 60_000_000, .audio: 40_000_000, .frame: 2_100_000_000]
        counters.stageCPUNanoseconds = 2_000_000_000
        counters.tracking = TrackingFigures(frames: 300, cpuNanoseconds: 1_500_000_000, detectionCPUNanoseconds: 300_000_000)
        let stages = StageCPU(counters)
        #expect(stages.decode == 900_000_000 && stages.encode == 3_000_000_000 && stages.mux == 100_000_000)
        #expect(stages.track == 1_500_000_000)
        #expect(stages.composite == 2_000_000_000 - 1_200_000_000)
        #expect(stages.relay == 100_000_000)
        // Frame thread + detection thread + the named GStreamer threads, each counted once.
        #expect(stages.total == 2_100_000_000 + 300_000_000 + 900_000_000 + 3_000_000_000 + 100_000_000)

        let info = MediaRelay.StreamInfo(width: 1280, height: 720, framesPerSecond: 30, hasAudio: true)
        let usage = ProcessUsage(cpuSeconds: 0, residentMegabytes: 0, peakResidentMegabytes: 0)
        let stats = StreamStats(input: "in", output: "out", info: info, counters: counters, since: (MediaRelay.Counters(), usage), usage: usage, seconds: 10)
        #expect(abs((stats.stages["encode"]?.msPerFrame ?? 0) - 10) < 1e-9)
        #expect(abs((stats.stages["track"]?.percentOfCore ?? 0) - 15) < 1e-9)
        // Tracking + compositing over decode + encode: 2.3 s over 3.9 s.
        #expect(abs(stats.stickerOverhead.ratioToTranscode - 2.3 / 3.9) < 1e-9)
        #expect(abs(stats.stickerOverhead.percentOfCore - 23) < 1e-9)
        #expect(stats.stickerOverhead.memoryMb == 0, "a stream that never drew holds no drawn frames")
    }

    /// A span never shows negative CPU, even when a counter's source restarted (an output rebuilt).
    @Test func aSpanNeverGoesNegative() {
        var earlier = MediaRelay.Counters()
        earlier.threadCPUNanoseconds = [.encode: 5_000]
        var later = MediaRelay.Counters()
        later.threadCPUNanoseconds = [.encode: 1_000]
        #expect(StageCPU(later).minus(StageCPU(earlier)).encode == 0)
    }
}
