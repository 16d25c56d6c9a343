import ArgumentParser
import CDlibReference
import CFaceVision
import Foundation

/// The detector's separable filter (`fv_separable_filter`) beside dlib's own
/// `float_spatially_filter_image_separable` on the HOG planes of the same grey photos, in one run:
/// milliseconds for the 30 filters of 10x10 taps the scan runs first per detector and level (the
/// fastest of the repeats), and the largest difference between any two sums. Both calls copy the
/// plane in and out the same way, so the ratio understates the filters' own.
struct SeparableFilter: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "separable-filter",
        abstract: "The detector's separable filters against dlib's, on the HOG planes of binary PGM photos."
    )

    @Argument(help: "Binary (P5) PGM photos, e.g. the corpus of Tests/Fixtures/face-corpus.sh.")
    var photos: [String]

    @Option(help: "Runs of the 30 filters by each; the fastest counts.")
    var repeats = 15

    static let filters = 30, taps = 10

    func run() throws {
        print("photo                          HOG cells   dlib ms   FaceRelay ms   ratio   largest difference")
        var generator = SystemRandomNumberGenerator()
        let coefficients = (0..<(2 * Self.filters * Self.taps)).map { _ in Float.random(in: -0.2...0.2, using: &generator) }
        for path in photos {
            let (pixels, width, height) = try HOGFeatures.readPGM(path)
            let capacity = 31 * (height / 8 + 1) * (width / 8 + 1)
            var features = [Float](repeating: 0, count: capacity)
            var rows: Int32 = 0, columns: Int32 = 0
            var error: UnsafeMutablePointer<CChar>?
            guard fv_hog_features(pixels, Int32(width), Int32(height), Int32(width), &features, capacity, &rows, &columns, &error) > 0 else {
                throw ValidationError("\(path): no HOG features")
            }
            let planeSize = Int(rows * columns)
            var ours = [Float](repeating: 0, count: planeSize), theirs = ours
            func filterAll(_ filter: (UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>, UnsafeMutablePointer<Float>, Int32) -> Int32,
                           into out: inout [Float]) {
                features.withUnsafeBufferPointer { planes in
                    coefficients.withUnsafeBufferPointer { taps in
                        for index in 0..<Self.filters {
                            let plane = planes.baseAddress! + (index % 31) * planeSize, row = taps.baseAddress! + 2 * index * Self.taps
                            _ = filter(plane, row, row + Self.taps, &out, index > 0 ? 1 : 0)
                        }
                    }
                }
            }
            let mine = HOGFeatures.fastest(repeats) {
                filterAll({ fv_separable_filter($0, rows, columns, $1, Int32(Self.taps), $2, Int32(Self.taps), $3, $4, &error) }, into: &ours)
            }
            let dlib = HOGFeatures.fastest(repeats) {
                filterAll({ dr_separable_filter($0, rows, columns, $1, Int32(Self.taps), $2, Int32(Self.taps), $3, $4, &error) }, into: &theirs)
            }
            let largest = zip(ours, theirs).map { abs($0 - $1) }.max() ?? 0
            let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            print(name.padding(toLength: 30, withPad: " ", startingAt: 0) + " " + "\(columns)x\(rows)".padding(toLength: 11, withPad: " ", startingAt: 0)
                  + String(format: " %8.2f   %12.2f   %5.2fx   %.1e", dlib, mine, dlib / mine, largest))
        }
    }
}
