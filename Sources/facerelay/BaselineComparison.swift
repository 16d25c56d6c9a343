import FoundationEssentials
import Glibc
import MediaBridge
import StreamPlan
import StreamSession
import Synchronization

/// `run --compare-baseline`: the same input relayed twice at once in this process, with the
/// sticker and without, and what the sticker adds, stage by stage. Both relays' threads are told
/// apart by name (see `StageCPU`), so running them side by side measures each on its own.
struct BaselineComparison {
    let stickered: StreamStats
    let baseline: StreamStats

    /// Runs both relays to the end; throws the stickered relay's failure, else the baseline's.
    static func run(stickered: RelaySession, baseline: RelaySession) throws(MediaError) -> BaselineComparison {
        let baselineResult = Outcome()
        let thread = LoopThread {
            let result = Result { () throws(MediaError) in try baseline.run() }
            baselineResult.value.withLock { $0 = result }
        }
        let stickeredResult = Result { () throws(MediaError) in try stickered.run() }
        thread.join()
        let stickeredStats = try stickeredResult.get()
        guard let baselineStats = try baselineResult.value.withLock({ $0 })?.get() else {
            throw MediaError(.output, "the baseline relay did not finish")
        }
        return BaselineComparison(stickered: stickeredStats, baseline: baselineStats)
    }

    /// Where the baseline's output goes: beside a file output, in the temporary folder for a
    /// network one.
    static func outputPath(besides output: String) -> String {
        if case .file(let path, let container)? = try? OutputEndpoint(parsing: output) {
            let stem = path.hasSuffix("." + container.rawValue) ? String(path.dropLast(container.rawValue.count + 1)) : path
            return stem + ".baseline." + container.rawValue
        }
        return (ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp") + "/facerelay-baseline-\(getpid()).flv"
    }

    func table(sticker: String, baselineOutput: String) -> String {
        let fps = stickered.inputFps > 0 ? stickered.inputFps : 30
        func msPerFrame(_ stats: StreamStats, _ stage: String) -> Double { stats.stages[stage]?.msPerFrame ?? 0 }
        func total(_ stats: StreamStats) -> Double { StageCPU.Stage.allCases.reduce(0) { $0 + msPerFrame(stats, $1.rawValue) } }
        func row(_ label: String, _ base: Double, _ with: Double, decimals: Int = 2) -> String {
            func cell(_ value: Double) -> String { formatted(value, decimals: decimals) }
            return label.padding(toLength: 26, withPad: " ", startingAt: 0)
                + cell(base).leftPadded(12) + cell(with).leftPadded(14) + ((with - base >= 0 ? "+" : "") + cell(with - base)).leftPadded(14) + "\n"
        }
        var text = "CPU in ms per frame".padding(toLength: 26, withPad: " ", startingAt: 0)
            + "baseline".leftPadded(12) + sticker.leftPadded(14) + "sticker adds".leftPadded(14) + "\n"
        for stage in StageCPU.Stage.allCases {
            text += row("  " + stage.rawValue, msPerFrame(baseline, stage.rawValue), msPerFrame(stickered, stage.rawValue))
        }
        text += row("  total", total(baseline), total(stickered))
        text += row("% of one core at \(formatted(fps, decimals: 0)) fps", total(baseline) * fps / 10, total(stickered) * fps / 10, decimals: 1)
        text += row("stream frame memory, MB", baseline.streamMemoryMb, stickered.streamMemoryMb, decimals: 1)
        text += row("frames out", Double(baseline.framesOut), Double(stickered.framesOut), decimals: 0)
        let transcode = msPerFrame(stickered, "decode") + msPerFrame(stickered, "encode")
        text += "the sticker (tracking + compositing) costs \(formatted(stickered.stickerOverhead.percentOfCore, decimals: 1))% of one core "
            + "over the run, \(formatted(transcode > 0 ? (msPerFrame(stickered, "track") + msPerFrame(stickered, "composite")) / transcode : 0, decimals: 2))x the transcode (decode + encode); "
            + "the landmark model (about 46 MB) is loaded once per process, whatever the number of streams\n"
            + "baseline output: \(baselineOutput)\n"
        return text
    }
}

/// The baseline relay's result, handed from its thread.
private final class Outcome: Sendable {
    let value = Mutex<Result<StreamStats, MediaError>?>(nil)
}

private extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? " " + self : String(repeating: " ", count: width - count) + self }
}
