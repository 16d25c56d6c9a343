import Foundation
import FrameKit
import StickerPictures
import Testing

/// Sticker pictures decoded by FaceRelay's decoders (libpng with APNG composition, giflib, libwebp,
/// librsvg), frame for frame against other decoders (Pillow, ffmpeg, librsvg's rsvg-convert), and
/// hostile files refused by what they declare.
@Suite struct PictureDecoderTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// The fixtures of Tests/Fixtures/sticker-pictures.py, written once per test process and removed
    /// when it exits: the suite's tests read them in any order, so none of them can remove them.
    static let fixtures: String = {
        let folder = NSTemporaryDirectory() + "sticker-pictures-" + UUID().uuidString
        let status = run("/usr/bin/python3", [root + "/Tests/Fixtures/sticker-pictures.py", folder])
        precondition(status == 0, "Tests/Fixtures/sticker-pictures.py failed")
        atexit { try? FileManager.default.removeItem(atPath: PictureDecoderTests.fixtures) }
        return folder
    }()

    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        try! process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// The largest difference of two RGBA pictures' channels, colour counted only where both show.
    static func largestDifference(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Int {
        var largest = 0
        var (i, j) = (a.startIndex, b.startIndex)
        while i < a.endIndex {
            let alpha = abs(Int(a[i + 3]) - Int(b[j + 3]))
            largest = max(largest, alpha)
            if a[i + 3] > 0 && b[j + 3] > 0 {
                for channel in 0..<3 { largest = max(largest, abs(Int(a[i + channel]) - Int(b[j + channel]))) }
            }
            i += 4
            j += 4
        }
        return largest
    }

    @Test(arguments: ["flames.gif", "flames.apng", "flames.webp", "hearts.apng", "hearts.gif"])
    func anAnimationDecodesToTheReferenceFramesWithItsDelays(file: String) throws {
        let picture = try PictureDecoder().decode(file: Self.fixtures + "/" + file)
        let description = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.fixtures + "/" + file + ".json"))) as! [String: Any]
        let reference = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.fixtures + "/" + file + ".frames.rgba")))
        let count = description["count"] as! Int, width = description["width"] as! Int, height = description["height"] as! Int
        #expect(picture.frames.count == count && picture.frames[0].width == width && picture.frames[0].height == height)
        let delays = (description["delays_ms"] as! [Double]).map { $0 / 1000 }
        #expect(picture.delays == delays, "\(String(describing: picture.delays)) against \(delays)")
        let bytes = width * height * 4
        let differences = picture.frames.enumerated().map { index, frame in
            Self.largestDifference(frame.pixels[...], reference[(index * bytes)..<((index + 1) * bytes)])
        }
        #expect(differences.allSatisfy { $0 <= 1 }, "largest channel difference per frame: \(differences)")
        // The frames differ: the animation is not one picture repeated.
        #expect(Set(picture.frames.map(\.pixels.hashValue)).count == count)
    }

    /// Every shipped PNG (the previews) and the fuzzing corpus's pictures with alpha decode to
    /// Pillow's pixels.
    @Test func everyShippedPNGDecodesAsPillowDecodesIt() throws {
        let stickers = try FileManager.default.subpathsOfDirectory(atPath: Self.root + "/Stickers").filter { $0.hasSuffix(".png") }
        let corpus = ["carnival-brows.png", "cat-nose.png", "cat-whiskers.png", "moustache-moustache.png", "surprise-confetti_0.png", "tiny-2x2.png"]
            .map { "../Tests/Fuzz/Corpus/sticker-picture/" + $0 }
        let files = (stickers + corpus).sorted()
        #expect(files.count > 15)
        let raw = NSTemporaryDirectory() + "pillow-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: raw, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: raw) }
        let script = "import sys\nfrom PIL import Image\nfor i, path in enumerate(sys.argv[2:]):\n    open(f'{sys.argv[1]}/{i}.rgba', 'wb').write(Image.open(path).convert('RGBA').tobytes())"
        #expect(Self.run("/usr/bin/python3", ["-c", script, raw] + files.map { Self.root + "/Stickers/" + $0 }) == 0)
        for (index, file) in files.enumerated() {
            let picture = try PictureDecoder().decode(file: Self.root + "/Stickers/" + file)
            let reference = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(raw)/\(index).rgba")))
            #expect(picture.frames.count == 1 && picture.delays == nil)
            #expect(picture.frames[0].pixels == reference, "\(file) differs from Pillow's decoding")
        }
    }

    @Test(arguments: [
        ("bomb.png", "is 12000x12000; each side must be 1...2048 px"),
        ("huge-canvas.gif", "is 60000x60000; each side must be 1...2048 px"),
        ("many-frames.apng", "has 100000 frames; at most 240 are allowed"),
        ("huge.webp", "is 16000x16000; each side must be 1...2048 px"),
        ("truncated.gif", "(truncated)"),
        ("truncated.apng", "(truncated)"),
        ("truncated.webp", "damaged or truncated"),
        ("damaged-crc.png", "does not decode as a PNG"),
        ("second-header.apng", "has a second IHDR chunk"),
        ("second-actl.apng", "has a second acTL chunk"),
    ])
    func aHostilePictureIsRefusedWithWhatIsWrong(file: String, expected: String) throws {
        let error = #expect(throws: PictureError.self) { try PictureDecoder().decode(file: Self.fixtures + "/" + file) }
        #expect(error?.message.contains(expected) == true, "\(file): \(String(describing: error))")
    }

    @Test func aPictureOverTheDecodedSizeLimitIsRefusedBeforeDecoding() throws {
        var limits = PictureLimits()
        limits.maximumPixels = 300 * 420 * 4
        let error = #expect(throws: PictureError.self) { try PictureDecoder(limits: limits).decode(file: Self.fixtures + "/flames.webp") }
        #expect(error?.message.contains("would decode to 8 frames of 300x420") == true, "\(String(describing: error))")
        limits.maximumFileBytes = 1000
        let big = #expect(throws: PictureError.self) { try PictureDecoder(limits: limits).decode(file: Self.fixtures + "/flames.gif") }
        #expect(big?.message.contains("a picture may be at most") == true)
    }

    @Test func somethingThatIsNoPictureIsNamedSo() throws {
        let error = #expect(throws: PictureError.self) { try PictureDecoder().decode(bytes: Array("GIF? no, a text file".utf8)) }
        #expect(error?.message.contains("save it as PNG, APNG, GIF, WebP or SVG") == true)
    }
}
