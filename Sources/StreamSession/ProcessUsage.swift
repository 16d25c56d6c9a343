import FoundationEssentials
import Glibc

/// CPU and memory of this process, read from the kernel.
public struct ProcessUsage: Sendable {
    /// User plus system CPU seconds since the process started.
    public let cpuSeconds: Double
    public let residentMegabytes: Double
    public let peakResidentMegabytes: Double

    public init(cpuSeconds: Double, residentMegabytes: Double, peakResidentMegabytes: Double) {
        self.cpuSeconds = cpuSeconds
        self.residentMegabytes = residentMegabytes
        self.peakResidentMegabytes = peakResidentMegabytes
    }

    public static func now() -> ProcessUsage {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpu = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        // Without /proc (a sandbox that does not mount it) the resident sizes read 0 and the peak
        // falls back to getrusage's: the figures are read on every stats line and scrape, which
        // must not fail for want of one of them, and the CPU time above is still right.
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        return ProcessUsage(cpuSeconds: cpu,
                            residentMegabytes: kilobytes("VmRSS:", in: status) / 1024,
                            peakResidentMegabytes: max(kilobytes("VmHWM:", in: status), Double(usage.ru_maxrss)) / 1024)
    }

    static func kilobytes(_ field: String, in status: String) -> Double {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }) else { return 0 }
        return Double(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }
}
