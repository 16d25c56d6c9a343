import Foundation
import StickerKit
import Testing

/// Every check of the package loader, each through the problem it reports (file, field, advice).
@Suite struct LoaderTests {
    func fields(_ problems: [StickerProblem]) -> [String] { problems.map(\.field) }

    @Test func aValidPackageLoadsWithItsItemsInZOrder() throws {
        let directory = try Support.package("""
            {"title": "Two", "items": [
              {"id": "top", "frames": ["glasses.png"], "z": 5, \(Support.anchor)},
              {"id": "bottom", "frames": ["glasses.png"], "z": -1, "region": {"feature": "eyes"}, "begin": "smile", "end": "smile.end"}
            ]}
            """)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let package = try Support.loader.load(directory: directory)
        #expect(package.title == "Two")
        #expect(package.items.map(\.id) == ["bottom", "top"])
        #expect(package.items[0].begin == .expressionStarts("smile") && package.items[0].end == .expressionEnds("smile"))
        #expect(package.items[1].begin == .always && package.items[1].designWidth == 600 && package.items[1].designHeight == 220)
        #expect(package.items[0].placement == .region(RegionAnchor(feature: .eyes, widthFactor: 1, heightFactor: 1, offsetX: 0, offsetY: 0)))
    }

    @Test func everyShippedPackageLoads() throws {
        let names = try StickerLibrary(directory: Support.root + "/Stickers").packageNames()
        #expect(names.count >= 10)
        for name in names {
            #expect(throws: Never.self, "\(name)") { try Support.loader.load(directory: Support.root + "/Stickers/" + name) }
            #expect(FileManager.default.fileExists(atPath: Support.root + "/Stickers/\(name)/preview.png"), "\(name) has a preview")
        }
    }

    /// A sticker folder that cannot be read is an error naming it, not a folder without stickers.
    @Test func anUnreadableStickerFolderIsAnError() {
        let library = StickerLibrary(directory: Support.root + "/README.md")
        do {
            let names = try library.packageNames()
            Issue.record("read \(names) from a file")
        } catch {
            guard case .unreadable(let directory, _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(directory == library.directory)
            #expect(error.description.hasPrefix("cannot read the sticker folder \(library.directory) ("), "\(error)")
        }
    }

    @Test func aMissingFolderOrFileOrBrokenJSONIsNamed() throws {
        var problems: [StickerProblem] = []
        do { _ = try Support.loader.load(directory: "/nonexistent/sticker") } catch { problems = error.problems }
        #expect(problems.count == 1 && problems[0].message.contains("no such sticker folder"))
        problems = try Support.problems("{\"items\": [ {\"id\": \"a\", } ]")
        #expect(problems.count == 1 && problems[0].file.hasSuffix("/sticker.json") && problems[0].message.contains("not valid JSON"))
        problems = try Support.problems("[1, 2]")
        #expect(problems.first?.message.contains("must be an object") == true)
    }

    @Test func topLevelFieldsAreChecked() throws {
        #expect(fields(try Support.problems("{\"title\": 3, \"items\": []}")) == ["title", "items"])
        #expect(fields(try Support.problems("{\"version\": 2, \"items\": [{\"id\": \"a\", \"frames\": [\"glasses.png\"], \(Support.anchor)}]}")) == ["version"])
        #expect(fields(try Support.problems("{\"title\": \"x\"}")) == ["items"])
    }

    @Test func everyProblemOfAFileIsReportedAtOnce() throws {
        let problems = try Support.problems("""
            {"items": [
              {"id": "a", "frames": ["glasses.png"], "fps": -1, "sclae": 1, \(Support.anchor)},
              {"id": "a", "frames": [], "region": {"feature": "ears"}},
              {"id": "b c", "frames": ["nothere.png"], "position": {"flag": 68, "x": 1, "y": "2"},
               "scale": {"pointA": {"flag": 3.5, "x": 0, "y": 0}, "pointB": {"flag": [1, "x"], "x": 50, "y": 0}}}
            ]}
            """)
        #expect(Set(fields(problems)) == [
            "items[1].id", "items[2].id", "items[0].fps", "items[0].sclae", "items[1].frames", "items[1].region.feature",
            "items[2].frames[0]", "items[2].position.flag", "items[2].position.y", "items[2].scale.pointA.flag", "items[2].scale.pointB.flag[1]",
        ], "\(problems.map(\.description).joined(separator: "\n"))")
        #expect(problems.first { $0.field == "items[0].sclae" }?.message.contains("known here:") == true)
        #expect(problems.first { $0.field == "items[2].position.flag" }?.message.contains("0...67") == true)
        #expect(problems.first { $0.field == "items[1].region.feature" }?.message.contains("leftEye") == true)
    }

    @Test func framesMustExistDecodeAndShareASize() throws {
        var problems = try Support.problems(Support.item("\"id\": \"a\", \"frames\": [\"../glasses.png\", \"/etc/passwd\", \"glasses.jpg\"], \(Support.anchor)"))
        #expect(fields(problems) == ["items[0].frames[0]", "items[0].frames[1]", "items[0].frames[2]"])
        #expect(problems.allSatisfy { $0.message.contains("inside the sticker folder") })
        problems = try Support.problems(Support.item("\"id\": \"a\", \"frames\": [\"glasses.png\", \"broken.png\"], \"fps\": 5, \(Support.anchor)")) { directory in
            try "not a picture".write(toFile: directory + "/broken.png", atomically: true, encoding: .utf8)
        }
        #expect(fields(problems) == ["items[0].frames[1]"])
        #expect(problems.first?.message.contains("is not a picture FaceRelay reads: save it as PNG, APNG, GIF, WebP or SVG") == true, "\(problems)")
        problems = try Support.problems(Support.item("\"id\": \"a\", \"frames\": [\"glasses.png\", \"flame_0.png\"], \"fps\": 5, \(Support.anchor)"),
                                        pictures: ["sunglasses/glasses.png", "flames/flame_0.png"])
        #expect(problems.first?.message.contains("all frames of an item share one size") == true)
        problems = try Support.problems(Support.item("\"id\": \"a\", \"frames\": [\"glasses.png\", \"glasses.png\"], \(Support.anchor)"))
        #expect(fields(problems) == ["items[0].fps"])
    }

    @Test func aFullyTransparentFrameIsRefused() throws {
        let problems = try Support.problems(Support.item("\"id\": \"a\", \"frames\": [\"clear.png\"], \(Support.anchor)")) { directory in
            try Support.writePNG(directory + "/clear.png", width: 8, height: 8, alpha: 0)
        }
        #expect(problems.first?.message.contains("fully transparent") == true, "\(problems)")
    }

    @Test func countsAndSizesHaveLimits() throws {
        let frames = Array(repeating: "\"glasses.png\"", count: Support.loader.maximumFrames + 1).joined(separator: ", ")
        let many = try Support.problems(Support.item("\"id\": \"a\", \"frames\": [\(frames)], \"fps\": 30, \(Support.anchor)"))
        #expect(fields(many) == ["items[0].frames"] && many[0].message.contains("at most 240"))
        let items = (0...StickerLoader.maximumItems).map { "{\"id\": \"i\($0)\", \"frames\": [\"glasses.png\"], \(Support.anchor)}" }.joined(separator: ", ")
        let crowded = try Support.problems("{\"items\": [\(items)]}")
        #expect(fields(crowded) == ["items"] && crowded[0].message.contains("at most 32"))
        let huge = try Support.problems(Support.item("\"id\": \"a\", \"frames\": [\"wide.png\"], \(Support.anchor)")) { directory in
            try Support.writePNG(directory + "/wide.png", width: 2049, height: 2, alpha: 255)
        }
        #expect(fields(huge) == ["items[0].frames[0]"] && huge.first?.message.contains("2049x2") == true, "\(huge)")
    }

    @Test func placementNeedsExactlyOneWayAndSaneValues() throws {
        #expect(try Support.problems(Support.item("\"id\": \"a\", \"frames\": [\"glasses.png\"]")).first?.message.contains("says nowhere") == true)
        #expect(try Support.problems(Support.item("\"id\": \"a\", \"frames\": [\"glasses.png\"], \"region\": {\"feature\": \"nose\"}, \(Support.anchor)"))
            .first?.message.contains("both") == true)
        let same = try Support.problems(Support.item("""
            "id": "a", "frames": ["glasses.png"], "position": {"flag": 27, "x": 300, "y": 100},
            "scale": {"pointA": {"flag": [36, 45], "x": 100, "y": 110}, "pointB": {"flag": [45, 36], "x": 500, "y": 110}}
            """))
        #expect(same.first?.message.contains("same landmarks") == true)
        let close = try Support.problems(Support.item("""
            "id": "a", "frames": ["glasses.png"], "position": {"flag": 27, "x": 300, "y": 100},
            "scale": {"pointA": {"flag": 36, "x": 100, "y": 110}, "pointB": {"flag": 45, "x": 100.5, "y": 110}}
            """))
        #expect(close.first?.message.contains("less than 1 design pixel") == true)
        let far = try Support.problems(Support.item("""
            "id": "a", "frames": ["glasses.png"], "position": {"flag": 27, "x": 90000, "y": 100},
            "scale": {"pointA": {"flag": 36, "x": 100, "y": 110}, "pointB": {"flag": 45, "x": 500, "y": 110}}
            """))
        #expect(fields(far) == ["items[0].position.x"])
        let region = try Support.problems(Support.item("\"id\": \"a\", \"frames\": [\"glasses.png\"], \"region\": {\"feature\": \"lips\", \"widthFactor\": 0, \"offsetY\": 9}"))
        #expect(fields(region) == ["items[0].region.widthFactor", "items[0].region.offsetY"])
        let centres = try Support.problems(Support.item("""
            "id": "a", "frames": ["glasses.png"], \(Support.anchor),
            "rotateCenter": [{"flag": 27, "x": 300, "y": 100}, {"flag": 99, "x": 300, "y": 100}]
            """))
        #expect(fields(centres) == ["items[0].rotateCenter[1].flag"])
        let centre = try Support.problems(Support.item("\"id\": \"a\", \"frames\": [\"glasses.png\"], \(Support.anchor), \"rotateCenter\": {\"flag\": -1, \"x\": 0, \"y\": 0}"))
        #expect(fields(centre) == ["items[0].rotateCenter.flag"])
        let missing = try Support.problems(Support.item("\"id\": \"a\", \"frames\": [\"glasses.png\"], \"scale\": {\"pointA\": {\"flag\": 36, \"x\": 1, \"y\": 1}}"))
        #expect(Set(fields(missing)) == ["items[0].position", "items[0].scale.pointB"])
    }

    @Test func triggersNameKnownExpressionsAndItemsWithoutCycles() throws {
        func begin(_ trigger: String, end: String? = nil) throws -> [StickerProblem] {
            try Support.problems(Support.item("\"id\": \"a\", \"frames\": [\"glasses.png\"], \(Support.anchor), \"begin\": \"\(trigger)\"" + (end.map { ", \"end\": \"\($0)\"" } ?? "")))
        }
        #expect(try begin("wink").first?.message.contains("mouthOpen") == true)
        #expect(try begin("wink.end").first?.message.contains("not an expression") == true)
        #expect(try begin("b.complete").first?.message.contains("names no item") == true)
        #expect(try begin("a.complete").first?.message.contains("itself") == true)
        #expect(fields(try begin("smile", end: "always")) == ["items[0].end"])
        #expect(try begin("blinkLeft", end: "mouthOpen.end").isEmpty)

        let cycle = try Support.problems("""
            {"items": [
              {"id": "a", "frames": ["glasses.png"], \(Support.anchor), "begin": "c.complete"},
              {"id": "b", "frames": ["glasses.png"], \(Support.anchor), "begin": "a.complete"},
              {"id": "c", "frames": ["glasses.png"], \(Support.anchor), "begin": "smile", "end": "b.complete"}
            ]}
            """)
        #expect(cycle.count == 1 && cycle[0].message.contains("trigger cycle a waits for c waits for b waits for a"), "\(cycle)")
        let once = try Support.problems(Support.item("\"id\": \"a\", \"frames\": [\"glasses.png\"], \"loop\": false, \(Support.anchor)"))
        #expect(fields(once) == ["items[0].loop"])
    }

    @Test func theErrorSaysWhichPackageAndHowManyProblems() throws {
        let directory = try Support.package(Support.item("\"id\": \"a\", \"frames\": [], \"z\": 1.5, \(Support.anchor)"))
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect {
            try Support.loader.load(directory: directory)
        } throws: { error in
            let text = "\(error)"
            return text.contains("sticker \(directory) is not valid (2 problems)") && text.contains("\(directory)/sticker.json: items[0].z: is 1.5")
        }
    }

    /// An animated GIF is an item's frames with its own delays; it cannot take fps, share the item
    /// with other files, or carry another format's name.
    @Test func anAnimatedPictureIsTheItemsFramesWithItsOwnDelays() throws {
        let script = "import sys\nfrom PIL import Image\nframes = [Image.new('RGBA', (120, 60), c) for c in [(255, 0, 0, 255), (0, 255, 0, 255), (0, 0, 255, 255)]]\n"
            + "frames[0].save(sys.argv[1], save_all=True, append_images=frames[1:], duration=[100, 300, 200], loop=0)"
        let write: (String) throws -> Void = { directory in
            let python = Process()
            python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            python.arguments = ["-c", script, directory + "/wave.gif"]
            try python.run()
            python.waitUntilExit()
            try FileManager.default.copyItem(atPath: directory + "/wave.gif", toPath: directory + "/wave-gif.png")
        }
        let anchor = "\"position\": {\"flag\": 27, \"x\": 60, \"y\": 30}, \"scale\": {\"pointA\": {\"flag\": 36, \"x\": 10, \"y\": 30}, \"pointB\": {\"flag\": 45, \"x\": 110, \"y\": 30}}"
        let directory = try Support.package(Support.item("\"id\": \"wave\", \"frames\": [\"wave.gif\"], \(anchor)"), pictures: [])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try write(directory)
        let item = try Support.loader.load(directory: directory).items[0]
        #expect(item.frames.count == 3 && item.frameSeconds == [0.1, 0.3, 0.2] && abs(item.animationSeconds - 0.6) < 1e-9)
        #expect(item.frames[2].pixels[0...3] == [0, 0, 255, 255] && item.frames[1].pixels[0...3] == [0, 255, 0, 255])

        var problems = try Support.problems(Support.item("\"id\": \"wave\", \"frames\": [\"wave.gif\"], \"fps\": 10, \(anchor)"), pictures: [], prepare: write)
        #expect(fields(problems) == ["items[0].fps"] && problems[0].message.contains("its own delays"), "\(problems)")
        problems = try Support.problems(Support.item("\"id\": \"wave\", \"frames\": [\"wave.gif\", \"wave.gif\"], \"fps\": 10, \(anchor)"), pictures: [], prepare: write)
        #expect(fields(problems) == ["items[0].frames[0]", "items[0].frames[1]"] && problems[0].message.contains("must be the item's only frame"), "\(problems)")
        problems = try Support.problems(Support.item("\"id\": \"wave\", \"frames\": [\"wave-gif.png\"], \(anchor)"), pictures: [], prepare: write)
        #expect(fields(problems) == ["items[0].frames[0]"] && problems[0].message.contains("holds a GIF picture; name it .gif"), "\(problems)")
    }

    // Found by Tests/Fuzz (sticker-png, now sticker-picture): a decoder that allocated the whole 3.6 GB picture a
    // frame's header claimed before the loader could refuse its size; and a PNG behind 7 other
    // bytes, found all the same by a decoder's type detection. The size is checked from the header
    // inside the decoder, and the format from the first bytes.
    @Test(arguments: [("claims-30000x30000.png", "is 30000x30000; each side must be 1...2048 px"),
                      ("png-behind-other-bytes.png", "is not a picture FaceRelay reads")])
    func aFrameClaimingAHugeSizeIsRefusedWithoutDecodingIt(file: String, expected: String) throws {
        let directory = try Support.package(Support.item("\"id\": \"a\", \"frames\": [\"huge.png\"], \(Support.anchor)"), pictures: [])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.copyItem(atPath: Support.root + "/Tests/Fuzz/Corpus/sticker-picture/" + file, toPath: directory + "/huge.png")
        var problems: [StickerProblem] = []
        do { _ = try Support.loader.load(directory: directory) } catch { problems = error.problems }
        #expect(fields(problems) == ["items[0].frames[0]"] && problems.first?.message.contains(expected) == true, "\(problems)")
    }

    // Found by Tests/Fuzz (sticker-json) under LeakSanitizer: reading an empty sticker.json lost
    // 4 KiB inside FoundationEssentials each time; an empty file is now refused before it is read.
    @Test func anEmptyStickerJSONIsRefusedAsEmpty() throws {
        let problems = try Support.problems("")
        #expect(problems.count == 1 && problems[0].field.isEmpty && problems[0].message.hasPrefix("is empty"), "\(problems)")
    }
}
