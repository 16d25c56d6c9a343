import Foundation
import Testing
import TestFixtures

/// `POST /api/stickers` on a real `facerelay serve`, with curl as the client (a browser's FormData
/// sends the same multipart body): a package is validated, written whole and loaded, or refused with
/// its code and problems, and the stickers folder is left exactly as it was.
@Suite(.serialized) struct StickerUploadTests {
    /// A serve with a stickers folder of its own holding one shipped package.
    static func serve(_ name: String) throws -> (ServeProcess, String) {
        let stickers = try Package.temporaryDirectory(name + "-stickers")
        try FileManager.default.copyItem(atPath: Package.root.appendingPathComponent("Stickers/moustache").path, toPath: stickers + "/moustache")
        return (try ServeProcess("stickers: \(stickers)\n", name: name), stickers)
    }

    /// curl's multipart POST: `fields` as `-F name=value`, `files` as `-F file=@PATH;filename=NAME`.
    static func upload(_ serve: ServeProcess, fields: [String: String], files: [(path: String, name: String)], extra: [String] = []) throws -> (status: Int, body: [String: Any]) {
        let output = serve.directory + "/reply-\(UUID().uuidString.prefix(6)).json"
        var arguments = ["-s", "-o", output, "-w", "%{http_code}"] + extra
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) { arguments += ["-F", "\(key)=\(value)"] }
        for file in files { arguments += ["-F", "file=@\(file.path);filename=\(file.name)"] }
        let status = Int(String(decoding: try run("/usr/bin/curl", arguments + ["http://127.0.0.1:\(serve.httpPort)/api/stickers"]), as: UTF8.self)) ?? 0
        let body = (try? JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: output)))) as? [String: Any] ?? [:]
        return (status, body)
    }

    /// Every file under the folder, hidden ones included, with its size.
    static func listing(_ folder: String) -> [String: Int] {
        var files: [String: Int] = [:]
        for path in FileManager.default.enumerator(atPath: folder)?.allObjects as? [String] ?? [] {
            files[path] = (try? FileManager.default.attributesOfItem(atPath: folder + "/" + path)[.size] as? Int) ?? -1
        }
        return files
    }

    /// A package made of a picture the shipped art does not have, anchored by nose and eyes.
    static func writePackage(in folder: String, picture: String = "badge.png", json: String? = nil) throws -> [(path: String, name: String)] {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let script = "from PIL import Image, ImageDraw\nimage = Image.new('RGBA', (200, 100), (0, 0, 0, 0))\n"
            + "ImageDraw.Draw(image).ellipse((10, 10, 190, 90), fill=(250, 200, 30, 255), outline=(120, 60, 0, 255), width=6)\nimage.save('\(folder)/badge.png')"
        _ = try run("/usr/bin/python3", ["-c", script])
        let sticker = json ?? """
            {"title": "Badge", "items": [{"id": "badge", "frames": ["\(picture)"],
              "position": {"flag": 30, "x": 100, "y": 50},
              "scale": {"pointA": {"flag": 36, "x": 20, "y": 50}, "pointB": {"flag": 45, "x": 180, "y": 50}}}]}
            """
        try sticker.write(toFile: folder + "/sticker.json", atomically: true, encoding: .utf8)
        return [(folder + "/sticker.json", "sticker.json"), (folder + "/badge.png", picture)]
    }

    @Test func aPackageIsWrittenWholeLoadedAndListedAndReplacedOnlyWhenAsked() throws {
        let (serve, stickers) = try Self.serve("upload-good")
        defer { try? FileManager.default.removeItem(atPath: stickers) }
        defer { #expect(serve.terminate() == 0, "\(serve.log.suffix(1000))") }
        let files = try Self.writePackage(in: serve.directory + "/badge")
        let created = try Self.upload(serve, fields: ["name": "my-badge"], files: files)
        #expect(created.status == 201 && created.body["sticker"] as? String == "my-badge" && created.body["replaced"] as? Bool == false, "\(created)")
        #expect(Set(Self.listing(stickers + "/my-badge").keys) == ["sticker.json", "badge.png"])
        let listed = try serve.result(["stickers"])["stickers"] as? [[String: Any]] ?? []
        #expect(listed.contains { $0["name"] as? String == "my-badge" && $0["title"] as? String == "Badge" })

        let again = try Self.upload(serve, fields: ["name": "my-badge"], files: files)
        #expect(again.status == 409 && again.body["error"] as? String == "exists", "\(again)")
        let replaced = try Self.upload(serve, fields: ["name": "my-badge", "replace": "1"], files: files + [(files[1].path, "preview.png")])
        #expect(replaced.status == 201 && replaced.body["replaced"] as? Bool == true, "\(replaced)")
        #expect(Set(Self.listing(stickers + "/my-badge").keys) == ["sticker.json", "badge.png", "preview.png"])
        #expect(!Self.listing(stickers).keys.contains { $0.hasPrefix(".") }, "a hidden folder was left: \(Self.listing(stickers).keys.sorted())")
    }

    @Test func everyBadUploadIsRefusedWithItsReasonAndNothingIsWritten() throws {
        let (serve, stickers) = try Self.serve("upload-bad")
        defer { try? FileManager.default.removeItem(atPath: stickers) }
        defer { #expect(serve.terminate() == 0, "\(serve.log.suffix(1000))") }
        let before = Self.listing(stickers)
        let good = try Self.writePackage(in: serve.directory + "/good")
        let fixtures = serve.directory + "/pictures"
        _ = try run("/usr/bin/python3", [Package.root.appendingPathComponent("Tests/Fixtures/sticker-pictures.py").path, fixtures])
        func svg(_ name: String, _ body: String) throws -> (path: String, name: String) {
            let path = serve.directory + "/" + name
            try "<svg xmlns='http://www.w3.org/2000/svg' xmlns:xlink='http://www.w3.org/1999/xlink' width='200' height='100'>\(body)</svg>".write(toFile: path, atomically: true, encoding: .utf8)
            return (path, "badge.svg")
        }
        let text = serve.directory + "/not-a-picture.png"
        try "just some text".write(toFile: text, atomically: true, encoding: .utf8)
        let big = serve.directory + "/big.bin"
        try Data(count: 65 * 1024 * 1024).write(to: URL(fileURLWithPath: big))
        let svgJSON = try String(contentsOfFile: good[0].path, encoding: .utf8).replacingOccurrences(of: "badge.png", with: "badge.svg")
        try svgJSON.write(toFile: serve.directory + "/svg.json", atomically: true, encoding: .utf8)
        let svgPackage = [(serve.directory + "/svg.json", "sticker.json")]
        let entities = (serve.directory + "/entities.svg", "badge.svg")
        try "<?xml version='1.0'?><!DOCTYPE svg [<!ENTITY a 'aaaa'><!ENTITY b '&a;&a;&a;'>]><svg xmlns='http://www.w3.org/2000/svg' width='200' height='100'><desc>&b;</desc><rect width='9' height='9'/></svg>"
            .write(toFile: entities.0, atomically: true, encoding: .utf8)

        let cases: [(what: String, fields: [String: String], files: [(path: String, name: String)], status: Int, code: String, says: String)] = [
            ("over the size limit", ["name": "big"], [good[0], (big, "badge.png")], 413, "too-large", "MiB"),
            ("not an image", ["name": "text"], [good[0], (text, "badge.png")], 422, "invalid-sticker", "is not a picture FaceRelay reads"),
            ("an image bomb", ["name": "bomb"], [good[0], (fixtures + "/bomb.png", "badge.png")], 422, "invalid-sticker", "12000x12000"),
            ("an SVG with a script", ["name": "script"], svgPackage + [try svg("s1.svg", "<script>alert(1)</script><rect width='9' height='9'/>")], 422, "invalid-sticker", "<script>"),
            ("an SVG with an external href", ["name": "href"], svgPackage + [try svg("s2.svg", "<use xlink:href='/etc/passwd#x'/><rect width='9' height='9'/>")], 422, "invalid-sticker", "outside the document"),
            ("an SVG with entities", ["name": "entity"], svgPackage + [entities], 422, "invalid-sticker", "<!ENTITY>"),
            ("a name with a path", ["name": "../escape"], good, 400, "bad-name", "cannot be a sticker name"),
            ("a file name with a path", ["name": "files"], [good[0], (good[1].path, "../badge.png")], 400, "bad-file", "not a plain file name"),
            ("an existing name", ["name": "moustache"], good, 409, "exists", "replace=1"),
            ("no sticker.json", ["name": "nojson"], [good[1]], 400, "no-sticker-json", "sticker.json"),
            ("a sticker.json that fails validation", ["name": "invalid"], [(try Self.writePackage(in: serve.directory + "/invalid", json: "{\"items\": [{\"id\": \"x\", \"frames\": [\"badge.png\"], \"region\": {\"feature\": \"ears\"}}]}")[0]), good[1]], 422, "invalid-sticker", "'ears' is not a face feature"),
        ]
        for test in cases {
            let reply = try Self.upload(serve, fields: test.fields, files: test.files)
            let problems = (reply.body["problems"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
            let said = ([reply.body["message"] as? String ?? ""] + problems).joined(separator: " | ")
            #expect(reply.status == test.status && reply.body["error"] as? String == test.code && said.contains(test.says),
                    "\(test.what): \(reply.status) \(reply.body)")
            #expect(!said.contains(stickers), "\(test.what): the reply names the server's folder: \(said)")
        }
        let notMultipart = try run("/usr/bin/curl", ["-s", "-w", " %{http_code}", "-H", "Content-Type: application/json", "--data", "{}",
                                                     "http://127.0.0.1:\(serve.httpPort)/api/stickers"])
        #expect(String(decoding: notMultipart, as: UTF8.self).hasSuffix(" 400") && String(decoding: notMultipart, as: UTF8.self).contains("not-multipart"))
        #expect(Self.listing(stickers) == before, "the stickers folder changed: \(Self.listing(stickers).keys.sorted())")
        #expect(serve.log.contains("sticker uploaded") == false)
    }
}
