import Foundation
import MediaBridge
import RelayServer
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
}
