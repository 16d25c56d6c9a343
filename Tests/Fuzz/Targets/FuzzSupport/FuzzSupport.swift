import FoundationEssentials
import Glibc

/// What every fuzz target shares: where the repository is, a private scratch folder, and stopping
/// with a message when an input breaks a promise the code under test makes.
public enum FuzzSupport {
    /// The repository, found from this file: the fuzzers read the shipped stickers and pipelines.
    public static let root: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(5)  // Tests/Fuzz/Targets/FuzzSupport/FuzzSupport.swift
        return parts.joined(separator: "/")
    }()

    /// A fresh folder for this process, so fuzzers running side by side never share files.
    public static func scratchDirectory(_ name: String) -> String {
        let path = FileManager.default.temporaryDirectory.appending(path: "facerelay-fuzz-\(name)-\(getpid())").path
        try? FileManager.default.removeItem(atPath: path)
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            fatalError("cannot create the fuzzer's scratch folder \(path): \(error)")
        }
        return path
    }

    /// Writes one input where the code under test will read it.
    public static func write(_ data: UnsafePointer<UInt8>, _ size: Int, to path: String) {
        guard FileManager.default.createFile(atPath: path, contents: Data(UnsafeBufferPointer(start: data, count: size))) else {
            fatalError("cannot write the fuzz input to \(path)")
        }
    }

    /// Stops the run when the code under test broke one of its promises: libFuzzer keeps the input.
    public static func require(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("broken promise: \(message())") }
    }
}
