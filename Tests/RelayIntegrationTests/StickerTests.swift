import Foundation
import Testing
import TestFixtures

/// One face of an `inspect --json --sticker` line, with the placement of each sticker item.
struct StickeredFace: Decodable {
    struct Placement: Decodable {
        let item: String
        let frame: Int
        let corners: [[Double]]
        let centre: [Double]
    }
    let id: Int
    let landmarks: [[Double]]
    let stickers: [Placement]
}

struct StickeredFrame: Decodable {
    let frame: Int
    let faces: [StickeredFace]
}

/// Stickers on real faces through the command line: placement on a photo, golden previews, the
/// relay, and what a bad sticker does.
@Suite(.serialized) struct StickerPlacementTests {
    func sunglasses(on photo: String) throws -> (face: StickeredFace, glasses: StickeredFace.Placement) {
        let output = try run(Package.facerelay, ["inspect", "--json", "--sticker", "sunglasses", try Fixtures.path(photo)], timeout: 120)
        let frame = try JSONDecoder().decode(StickeredFrame.self, from: output)
        try #require(frame.faces.count == 1, "one face on \(photo)")
        let face = frame.faces[0]
        try #require(face.stickers.count == 1 && face.stickers[0].item == "glasses")
        return (face, face.stickers[0])
    }

    func angle(_ a: [Double], _ b: [Double]) -> Double { atan2(b[1] - a[1], b[0] - a[0]) * 180 / .pi }

    /// The glasses' centre on the midpoint of the eyes, their width in step with the eye distance,
    /// and their angle with the photo's.
    @Test func sunglassesSitOnTheEyesAndFollowScaleAndRotation() throws {
        var widths: [String: Double] = [:], angles: [String: Double] = [:], eyeDistances: [String: Double] = [:]
        for photo in ["portrait.png", "portrait_small.png", "portrait_rot12.png"] {
            let (face, glasses) = try sunglasses(on: photo)
            let eyes = (36...47).map { face.landmarks[$0] }
            let midpoint = [eyes.map { $0[0] }.reduce(0, +) / 12, eyes.map { $0[1] }.reduce(0, +) / 12]
            let eyeDistance = distance(face.landmarks[36], face.landmarks[45])
            let offset = distance(glasses.centre, midpoint) / eyeDistance
            #expect(offset < 0.03, "\(photo): the glasses' centre is \(Int(offset * 1000)) per mille of the eye distance off the eyes' midpoint")
            let corners = glasses.corners
            widths[photo] = (distance(corners[0], corners[1]) + distance(corners[3], corners[2])) / 2
            angles[photo] = (angle(corners[0], corners[1]) + angle(corners[3], corners[2])) / 2
            eyeDistances[photo] = eyeDistance
        }
        let ratio = widths["portrait_small.png"]! / widths["portrait.png"]!
        #expect(abs(ratio - 0.75) < 0.75 * 0.03, "width ratio \(ratio) on a photo scaled by 0.75")
        let perEye = widths["portrait.png"]! / eyeDistances["portrait.png"]!, perEyeSmall = widths["portrait_small.png"]! / eyeDistances["portrait_small.png"]!
        #expect(abs(perEye / perEyeSmall - 1) < 0.03, "width per eye distance \(perEye) and \(perEyeSmall)")
        // portraits.py turns the photo 12 degrees counter-clockwise as seen: -12 with y down.
        let turn = angles["portrait_rot12.png"]! - angles["portrait.png"]!
        #expect(abs(turn + 12) < 2, "the glasses turned \(turn) degrees")
    }

    /// Each package's preview is what FaceRelay draws today on the same photo (golden images).
    @Test func everyPreviewMatchesWhatTheToolDraws() throws {
        let directory = try Package.temporaryDirectory("previews")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let stickers = Package.root.appendingPathComponent("Stickers").path
        let names = try FileManager.default.contentsOfDirectory(atPath: stickers)
            .filter { FileManager.default.fileExists(atPath: "\(stickers)/\($0)/sticker.json") }.sorted()
        #expect(names.count >= 10)
        let photo = try Fixtures.path("portrait_preview.png")
        let plain = try grey(photo)
        for name in names {
            let drawn = "\(directory)/\(name).png"
            try run(Package.facerelay, ["inspect", photo, "--sticker", name, "--show-all", "--min-face-size", "80", "--annotate", drawn])
            let (now, golden) = (try grey(drawn), try grey("\(stickers)/\(name)/preview.png"))
            try #require(now.count == golden.count && now.count == 320 * 320)
            let differences = zip(now, golden).map { abs(Int($0) - Int($1)) }
            let mean = Double(differences.reduce(0, +)) / Double(differences.count)
            let large = differences.filter { $0 > 24 }.count
            #expect(mean < 1 && large < now.count / 200, "\(name): mean difference \(mean), \(large) pixels off by more than 24")
            // And the sticker is there at all.
            let changed = zip(now, plain).filter { abs(Int($0) - Int($1)) > 24 }.count
            #expect(changed > 100, "\(name) changed only \(changed) pixels of the photo")
        }
    }

    func grey(_ path: String) throws -> [UInt8] {
        [UInt8](try run("/usr/bin/ffmpeg", ["-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "gray", "-"]))
    }

    @Test func everyShippedPackageValidatesAndIsListed() throws {
        let stickers = Package.root.appendingPathComponent("Stickers").path
        let names = try FileManager.default.contentsOfDirectory(atPath: stickers)
            .filter { FileManager.default.fileExists(atPath: "\(stickers)/\($0)/sticker.json") }.sorted()
        let validated = String(decoding: try run(Package.facerelay, ["stickers", "validate"] + names.map { "\(stickers)/\($0)" }), as: UTF8.self)
        #expect(validated.split(separator: "\n").filter { $0.contains(": valid,") }.count == names.count, "\(validated)")
        let listed = String(decoding: try run(Package.facerelay, ["stickers", "list", "--stickers", stickers]), as: UTF8.self)
        for name in names { #expect(listed.contains("  \(name) "), "\(name) in \(listed)") }
        #expect(!listed.contains("INVALID"))
        #expect(listed.contains("flames 8f@15 on mouthOpen"))
    }

    /// A sticker folder the operator chose through the environment is the one used: where it does
    /// not exist, the command fails naming it, rather than serving the shipped stickers instead.
    @Test func theEnvironmentsStickerFolderIsNotReplacedByAnother() throws {
        #expect {
            try run("/usr/bin/env", ["FACERELAY_STICKERS=/nonexistent/stickers", Package.facerelay, "stickers", "list"])
        } throws: { "\($0)".contains("no sticker folder found (looked in /nonexistent/stickers)") }
        let stickers = Package.root.appendingPathComponent("Stickers").path
        let listed = String(decoding: try run("/usr/bin/env", ["FACERELAY_STICKERS=" + stickers, Package.facerelay, "stickers", "list"]), as: UTF8.self)
        #expect(listed.contains("  cat "), "\(listed)")
    }

    /// The JSON Schema beside the packages accepts every shipped sticker.json and rejects what the
    /// loader rejects for its shape (here a typo, a landmark out of range and both anchorings).
    @Test func theSchemaAgreesWithTheShippedPackages() throws {
        let stickers = Package.root.appendingPathComponent("Stickers").path
        let script = """
            import glob, json, sys, jsonschema
            schema = json.load(open(sys.argv[1] + "/sticker.schema.json"))
            jsonschema.Draft202012Validator.check_schema(schema)
            validator = jsonschema.Draft202012Validator(schema)
            for path in sorted(glob.glob(sys.argv[1] + "/*/sticker.json")):
                errors = [e.message for e in validator.iter_errors(json.load(open(path)))]
                print(path, "ok" if not errors else errors)
            bad = {"items": [{"id": "a", "frames": ["a.png"], "sclae": 1, "region": {"feature": "eyes"},
                              "position": {"flag": 68, "x": 0, "y": 0}}]}
            print("bad", "ok" if validator.is_valid(bad) else "rejected")
            """
        let output = String(decoding: try run("/usr/bin/python3", ["-c", script, stickers]), as: UTF8.self)
        let lines = output.split(separator: "\n")
        #expect(lines.count >= 11 && lines.dropLast().allSatisfy { $0.hasSuffix(" ok") }, "\(output)")
        #expect(lines.last == "bad rejected")
    }

    /// `run --sticker sunglasses` on a moving face: dark lenses on the face in the output, and the
    /// sticker's cost in the stats.
    @Test func aRelayPutsTheGlassesOnTheFace() throws {
        let directory = try Package.temporaryDirectory("run-sunglasses")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.motion("translate.mp4")
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", input, "--output", directory + "/out.mp4", "--sticker", "sunglasses",
                                                         "--stats-json", directory + "/stats.json"], logDirectory: directory, name: "relay")
        #expect(relay.wait(seconds: 180) == 0, "facerelay: \(relay.stderr)")
        let stats = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: directory + "/stats.json"))) as! [String: Any]
        let sticker = stats["sticker_ms_per_frame"] as? Double ?? 0, faces = stats["faces_tracked"] as? Double ?? 0
        #expect(sticker > 0 && sticker < 20, "sticker_ms_per_frame \(sticker)")
        #expect(faces > 0.95, "faces_tracked \(faces)")

        // Where the glasses go on the input, from inspect: a point on the left lens below the eye.
        let placements = try String(decoding: run(Package.facerelay, ["inspect", "--json", "--sticker", "sunglasses", input], timeout: 300), as: UTF8.self)
            .split(separator: "\n").map { try JSONDecoder().decode(StickeredFrame.self, from: Data($0.utf8)) }
        for index in [15, 75, 135] {
            let glasses = try #require(placements[index].faces.first?.stickers.first, "glasses on frame \(index)")
            let c = glasses.corners
            // Design point (165, 160) of the 600x220 picture, inside the lens and off the eye.
            let (s, t) = (165.0 / 600, 160.0 / 220)
            let x = Int(c[0][0] + (c[1][0] - c[0][0]) * s + (c[3][0] - c[0][0]) * t)
            let y = Int(c[0][1] + (c[1][1] - c[0][1]) * s + (c[3][1] - c[0][1]) * t)
            let before = try lumaAt(input, frame: index, x: x, y: y), after = try lumaAt(directory + "/out.mp4", frame: index, x: x, y: y)
            #expect(before > 90 && after < 75, "frame \(index) at \(x),\(y): luma \(before) in the input, \(after) in the output")
        }
    }

    /// An animated GIF plays at its own frame delays and a list of SVG frames at its fps, checked
    /// in the relayed video: the colour each shows on every frame, as runs of frames.
    @Test func animatedGIFAndSVGFramesPlayAtTheirDelaysInTheOutput() throws {
        let directory = try Package.temporaryDirectory("run-animated")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let package = directory + "/stickers/anim"
        try FileManager.default.createDirectory(atPath: package, withIntermediateDirectories: true)
        // Red 200 ms, green 400 ms, blue 600 ms (6, 12 and 18 frames at 30 fps); SVG yellow and cyan at 5 fps.
        _ = try run("/usr/bin/python3", ["-c", "from PIL import Image\nframes = [Image.new('RGB', (90, 90), c) for c in [(255, 0, 0), (0, 255, 0), (0, 0, 255)]]\n"
                                           + "frames[0].save('\(package)/colours.gif', save_all=True, append_images=frames[1:], duration=[200, 400, 600], loop=0)"])
        for (name, colour) in [("yellow", "#ffff00"), ("cyan", "#00ffff")] {
            try "<svg xmlns='http://www.w3.org/2000/svg' width='90' height='90'><rect width='90' height='90' rx='12' fill='\(colour)'/></svg>"
                .write(toFile: "\(package)/\(name).svg", atomically: true, encoding: .utf8)
        }
        try """
            {"title": "Animated", "items": [
              {"id": "gif", "frames": ["colours.gif"], "region": {"feature": "brows", "widthFactor": 0.5, "heightFactor": 2, "offsetY": -2}},
              {"id": "svg", "frames": ["yellow.svg", "cyan.svg"], "fps": 5, "region": {"feature": "lips", "widthFactor": 0.6, "heightFactor": 1}}]}
            """.write(toFile: package + "/sticker.json", atomically: true, encoding: .utf8)
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", try Fixtures.motion("translate.mp4"), "--output", directory + "/out.mp4",
                                                         "--stickers", directory + "/stickers", "--sticker", "anim"], logDirectory: directory, name: "relay")
        #expect(relay.wait(seconds: 180) == 0, "facerelay: \(relay.stderr)")

        let raw = try run("/usr/bin/ffmpeg", ["-v", "error", "-i", directory + "/out.mp4", "-vf", "scale=320:180", "-fps_mode", "passthrough",
                                              "-f", "rawvideo", "-pix_fmt", "rgb24", "-"], timeout: 120)
        let colours: [(String, (UInt8, UInt8, UInt8) -> Bool)] = [
            ("red", { $0 > 180 && $1 < 80 && $2 < 80 }), ("green", { $0 < 80 && $1 > 180 && $2 < 80 }), ("blue", { $0 < 80 && $1 < 80 && $2 > 180 }),
            ("yellow", { $0 > 180 && $1 > 180 && $2 < 80 }), ("cyan", { $0 < 80 && $1 > 180 && $2 > 180 }),
        ]
        var gif: [String] = [], svg: [String] = []
        let frameBytes = 320 * 180 * 3
        for start in stride(from: 0, to: raw.count - frameBytes + 1, by: frameBytes) {
            var counts = [Int](repeating: 0, count: colours.count)
            for p in stride(from: start, to: start + frameBytes, by: 3) {
                for (index, colour) in colours.enumerated() where colour.1(raw[p], raw[p + 1], raw[p + 2]) { counts[index] += 1 }
            }
            let shown = colours.indices.filter { counts[$0] > 40 }.map { colours[$0].0 }
            gif.append(shown.first { ["red", "green", "blue"].contains($0) } ?? "-")
            svg.append(shown.first { ["yellow", "cyan"].contains($0) } ?? "-")
        }
        /// Runs of equal values, without the first and last (cut by the start and end of the video).
        func runs(_ values: [String]) -> [(String, Int)] {
            var result: [(String, Int)] = []
            for value in values {
                if let last = result.last, last.0 == value { result[result.count - 1].1 += 1 } else { result.append((value, 1)) }
            }
            return Array(result.dropFirst().dropLast())
        }
        let gifRuns = runs(gif), svgRuns = runs(svg)
        let expected = ["red": 6, "green": 12, "blue": 18, "yellow": 6, "cyan": 6]
        #expect(gifRuns.count >= 8 && svgRuns.count >= 20, "runs: \(gifRuns) \(svgRuns)")
        #expect((gifRuns + svgRuns).allSatisfy { abs($0.1 - (expected[$0.0] ?? 0)) <= 1 }, "frames each colour showed for: \(gifRuns) \(svgRuns)")
        #expect(zip(gifRuns, gifRuns.dropFirst()).allSatisfy { ["red": "green", "green": "blue", "blue": "red"][$0.0] == $1.0 }, "the GIF's order: \(gifRuns)")
    }

    /// The luma of one pixel of one frame of a video, decoded by ffmpeg.
    func lumaAt(_ path: String, frame: Int, x: Int, y: Int) throws -> Int {
        let pixels = try run("/usr/bin/ffmpeg", ["-v", "error", "-i", path, "-vf", "select=eq(n\\,\(frame)),format=gray,crop=1:1:\(x):\(y)", "-frames:v", "1",
                                                 "-f", "rawvideo", "-pix_fmt", "gray", "-"])
        return Int(pixels.first ?? 0)
    }

    @Test func aBadStickerStopsTheCommandWithEveryProblem() throws {
        let directory = try Package.temporaryDirectory("bad-sticker")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let package = directory + "/broken"
        try FileManager.default.createDirectory(atPath: package, withIntermediateDirectories: true)
        try #"{"items": [{"id": "a", "frames": ["missing.png"], "region": {"feature": "ears"}, "begin": "wink"}]}"#
            .write(toFile: package + "/sticker.json", atomically: true, encoding: .utf8)
        let inspect = try ChildProcess(Package.facerelay, ["inspect", try Fixtures.path("portrait_preview.png"), "--sticker", package],
                                       logDirectory: directory, name: "inspect")
        #expect(inspect.wait(seconds: 60) == 1)
        for field in ["items[0].frames[0]", "items[0].region.feature", "items[0].begin"] {
            #expect(inspect.stderr.contains("\(package)/sticker.json: \(field):"), "\(field) in \(inspect.stderr)")
        }
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", try Fixtures.path("face_720p.mp4"), "--output", directory + "/o.flv",
                                                         "--sticker", package], logDirectory: directory, name: "relay")
        #expect(relay.wait(seconds: 60) == 1)
        #expect(relay.stderr.contains("is not valid (3 problems)"), "\(relay.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/o.flv"), "nothing is relayed with a bad sticker")
    }
}
