import ArgumentParser
import CDlibReference
import CFaceVision
import Foundation

/// The detector's HOG features (`fv_hog_features`) beside dlib's own `extract_fhog_features` on the
/// same grey photos, in one run: milliseconds per extraction (the fastest of the repeats) and the
/// largest difference between any two features.
struct HOGFeatures: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hog-features",
        abstract: "HOG feature extraction: the detector's against dlib's, on binary PGM photos."
    )

    @Argument(help: "Binary (P5) PGM photos, e.g. the corpus of Tests/Fixtures/face-corpus.sh.")
    var photos: [String]

    @Option(help: "Extractions of each photo by each; the fastest counts.")
    var repeats = 15

    func run() throws {
        print("photo                          size        dlib ms   FaceRelay ms   ratio   largest difference")
        for path in photos {
            let (pixels, width, height) = try Self.readPGM(path)
            let capacity = 31 * (height / 8 + 1) * (width / 8 + 1)
            var ours = [Float](repeating: 0, count: capacity), theirs = [Float](repeating: 0, count: capacity)
            var rows: Int32 = 0, columns: Int32 = 0
            var error: UnsafeMutablePointer<CChar>?
            var count = 0, theirCount = 0
            let (mine, dlib) = pixels.withUnsafeBufferPointer { grey in
                (Self.fastest(repeats) { count = fv_hog_features(grey.baseAddress, Int32(width), Int32(height), Int32(width), &ours, capacity, &rows, &columns, &error) },
                 Self.fastest(repeats) { theirCount = dr_hog_features(grey.baseAddress, Int32(width), Int32(height), Int32(width), &theirs, capacity, &rows, &columns, &error) })
            }
            guard count > 0, count == theirCount else { throw ValidationError("\(path): \(count) features against dlib's \(theirCount)") }
            let largest = zip(ours[0..<count], theirs[0..<count]).map { abs($0 - $1) }.max() ?? 0
            let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            print(name.padding(toLength: 30, withPad: " ", startingAt: 0) + " " + "\(width)x\(height)".padding(toLength: 11, withPad: " ", startingAt: 0)
                  + String(format: " %8.2f   %12.2f   %5.2fx   %.1e", dlib, mine, dlib / mine, largest))
        }
    }

    /// The fastest of `repeats` calls, in milliseconds.
    static func fastest(_ repeats: Int, _ body: () -> Void) -> Double {
        var best = Double.infinity
        for _ in 0..<max(1, repeats) {
            let start = ContinuousClock.now
            body()
            let elapsed = ContinuousClock.now - start
            best = min(best, Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
        }
        return best
    }

    /// A binary PGM: "P5", width, height, 255, one whitespace, the pixels.
    static func readPGM(_ path: String) throws -> ([UInt8], Int, Int) {
        guard let data = FileManager.default.contents(atPath: path), data.starts(with: Array("P5".utf8)) else {
            throw ValidationError("\(path) is not a binary PGM")
        }
        var fields: [Int] = [], index = data.startIndex + 2, token = ""
        while fields.count < 3, index < data.endIndex {
            let byte = data[index]
            index += 1
            if (0x30...0x39).contains(byte) { token.append(Character(UnicodeScalar(byte))) } else if !token.isEmpty {
                fields.append(Int(token) ?? 0)
                token = ""
            }
        }
        guard fields.count == 3, fields[2] == 255, fields[0] > 0, fields[1] > 0, data.endIndex - index >= fields[0] * fields[1] else {
            throw ValidationError("\(path): a PGM of 8-bit pixels expected")
        }
        return (Array(data[index..<(index + fields[0] * fields[1])]), fields[0], fields[1])
    }
}
