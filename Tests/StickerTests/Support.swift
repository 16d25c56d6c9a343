import FaceTracking
import Foundation
import FrameKit
import MediaBridge
import StickerKit

enum Support {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static let expressions = ExpressionSettings.defaultRules.map(\.analyser.name)

    static let loader = StickerLoader(expressions: expressions)

    /// A fresh folder holding `json` as sticker.json and the named pictures copied from shipped
    /// stickers ("sunglasses/glasses.svg" arrives as "glasses.svg"); a PNG of a shipped SVG
    /// ("sunglasses/glasses.png") is drawn from it by librsvg's rsvg-convert at its own size.
    static func package(_ json: String, pictures: [String] = ["sunglasses/glasses.png"]) throws -> String {
        let directory = NSTemporaryDirectory() + "sticker-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for picture in pictures {
            let target = directory + "/" + (picture as NSString).lastPathComponent
            if FileManager.default.fileExists(atPath: root + "/Stickers/" + picture) {
                try FileManager.default.copyItem(atPath: root + "/Stickers/" + picture, toPath: target)
                continue
            }
            let convert = Process()
            convert.executableURL = URL(fileURLWithPath: "/usr/bin/rsvg-convert")
            convert.arguments = [root + "/Stickers/" + (picture as NSString).deletingPathExtension + ".svg", "-o", target]
            try convert.run()
            convert.waitUntilExit()
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
