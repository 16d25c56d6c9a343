import FaceTracking
import Foundation
import FrameKit
import MediaBridge
import StickerKit

enum Support {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static let expressions = ExpressionSettings.defaultRules.map(\.analyser.name)

    static let loader: StickerLoader = {
        let decoder = try! PNGDecoder(library: PipelineLibrary(directory: root + "/Pipelines"))
        return StickerLoader(expressions: expressions) { try decoder.decode($0) }
    }()

    /// A fresh folder holding `json` as sticker.json and the named PNGs copied from shipped stickers
    /// ("sunglasses/glasses.png" arrives as "glasses.png").
    static func package(_ json: String, pictures: [String] = ["sunglasses/glasses.png"]) throws -> String {
        let directory = NSTemporaryDirectory() + "sticker-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for picture in pictures {
            try FileManager.default.copyItem(atPath: root + "/Stickers/" + picture,
                                             toPath: directory + "/" + (picture as NSString).lastPathComponent)
        }
        try json.write(toFile: directory + "/sticker.json", atomically: true, encoding: .utf8)
        return directory
    }

    /// Writes a red PNG of the given size and alpha with Pillow (a picture no shipped sticker has).
    static func writePNG(_ path: String, width: Int, height: Int, alpha: Int) throws {
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        python.arguments = ["-c", "from PIL import Image; Image.new('RGBA', (\(width), \(height)), (255, 0, 0, \(alpha))).save('\(path)')"]
        try python.run()
        python.waitUntilExit()
    }

    /// The problems the loader reports for a package, as "field: message" lines.
    static func problems(_ json: String, pictures: [String] = ["sunglasses/glasses.png"], prepare: (String) throws -> Void = { _ in }) throws -> [StickerProblem] {
        let directory = try package(json, pictures: pictures)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try prepare(directory)
        do {
            _ = try loader.load(directory: directory)
            return []
        } catch {
            return error.problems
        }
    }

    /// One item around `body` (its fields), inside a valid package.
    static func item(_ body: String) -> String {
        "{\"title\": \"Test\", \"items\": [{\(body)}]}"
    }

    static let anchor = """
        "position": {"flag": 27, "x": 300, "y": 100},
        "scale": {"pointA": {"flag": 36, "x": 100, "y": 110}, "pointB": {"flag": 45, "x": 500, "y": 110}}
        """
}

/// An I420 or NV12 frame in memory owned by the test, filled with one colour.
final class TestFrame {
    let frame: VideoFrame
    private let memory: UnsafeMutablePointer<UInt8>

    init(width: Int, height: Int, format: PixelFormat = .i420, y: UInt8 = 128, u: UInt8 = 128, v: UInt8 = 128) {
        let chroma = VideoFrame.chromaSize(width: width, height: height)
        memory = .allocate(capacity: width * height + 2 * chroma.width * chroma.height)
        memory.initialize(repeating: y, count: width * height)
        let base = memory + width * height
        switch format {
        case .i420:
            base.initialize(repeating: u, count: chroma.width * chroma.height)
            (base + chroma.width * chroma.height).initialize(repeating: v, count: chroma.width * chroma.height)
            frame = VideoFrame(format: .i420, luma: Plane(base: memory, stride: width, width: width, height: height),
                               chromaU: Plane(base: base, stride: chroma.width, width: chroma.width, height: chroma.height),
                               chromaV: Plane(base: base + chroma.width * chroma.height, stride: chroma.width, width: chroma.width, height: chroma.height),
                               pts: 0, duration: 0)
        case .nv12:
            for i in 0..<(chroma.width * chroma.height) {
                base[2 * i] = u
                base[2 * i + 1] = v
            }
            let uv = Plane(base: base, stride: chroma.width * 2, width: chroma.width * 2, height: chroma.height)
            frame = VideoFrame(format: .nv12, luma: Plane(base: memory, stride: width, width: width, height: height),
                               chromaU: uv, chromaV: uv, pts: 0, duration: 0)
        }
    }

    deinit { memory.deallocate() }

    func u(_ x: Int, _ y: Int) -> UInt8 { frame.format == .nv12 ? frame.chromaU[2 * x, y] : frame.chromaU[x, y] }
    func v(_ x: Int, _ y: Int) -> UInt8 { frame.format == .nv12 ? frame.chromaU[2 * x + 1, y] : frame.chromaV[x, y] }
}
