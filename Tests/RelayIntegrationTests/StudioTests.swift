import Foundation
import Testing
import TestFixtures

/// The sticker studio in a real headless Chromium: a streamer's own picture, uploaded, made to
/// follow the nose, dragged onto it with the mouse, saved and worn on a live stream; the stream's
/// recording shows it on the nose on every frame, moving with the face.
@Suite(.serialized) struct StudioTests {
    /// A magenta disc with a white rim: a picture no shipped sticker has, easy to find in a frame.
    static func writeBadge(_ path: String) throws {
        let script = "from PIL import Image, ImageDraw\nimage = Image.new('RGBA', (120, 120), (0, 0, 0, 0))\n"
            + "ImageDraw.Draw(image).ellipse((4, 4, 115, 115), fill=(255, 0, 255, 255), outline=(255, 255, 255, 255), width=8)\nimage.save('\(path)')"
        _ = try run("/usr/bin/python3", ["-c", script])
    }

    /// Each frame of a recording decoded at 640x360 as it was sent (no frame added or dropped): its
    /// index from the fixtures' 20-bit barcode in the top rows, and the centre of its magenta
    /// pixels, nil where there are too few of them to be the badge.
    static func badgeCentres(_ recording: String) throws -> [(index: Int?, centre: (x: Double, y: Double)?)] {
        let raw = try run("/usr/bin/ffmpeg", ["-v", "error", "-nostdin", "-i", recording, "-map", "0:v:0", "-vf", "scale=640:360", "-fps_mode", "passthrough",
                                              "-f", "rawvideo", "-pix_fmt", "rgb24", "-"], timeout: 300)
        let frameBytes = 640 * 360 * 3
        return raw.withUnsafeBytes { bytes in
            stride(from: 0, to: bytes.count - frameBytes + 1, by: frameBytes).map { start in
                var index: Int? = 0
                for bit in 0..<20 {
                    let p = start + (3 * 640 + bit * 32 + 16) * 3
                    let value = (Int(bytes[p]) + Int(bytes[p + 1]) + Int(bytes[p + 2])) / 3
                    if value > 170 { index? |= 1 << bit } else if value > 80 { index = nil }
                }
                var sumX = 0, sumY = 0, count = 0
                for y in 8..<360 {
                    for x in 0..<640 {
                        let p = start + (y * 640 + x) * 3
                        if bytes[p] > 170 && bytes[p + 2] > 170 && bytes[p + 1] < 100 { sumX += x; sumY += y; count += 1 }
                    }
                }
                return (index, count > 150 ? (Double(sumX) / Double(count), Double(sumY) / Double(count)) : nil)
            }
        }
    }

    @Test func aStreamerMakesAStickerFromTheirPictureAndWearsItLive() throws {
        let platform = try NginxRTMP()
        let stickers = try Package.temporaryDirectory("studio-stickers")
        defer { try? FileManager.default.removeItem(atPath: stickers) }
        try FileManager.default.copyItem(atPath: Package.root.appendingPathComponent("Stickers/moustache").path, toPath: stickers + "/moustache")
        let serve = try ServeProcess("stickers: \(stickers)\ndefaults:\n  sticker: none\n  input_timeout_s: 0\n", name: "serve-studio")
        defer { #expect(serve.terminate() == 0, "\(serve.log.suffix(1000))") }
        let input = try Fixtures.path("face_720p_close.mp4")
        _ = try serve.result(["start", platform.url("in-live"), platform.recordedURL("out-live"), "--stream", "live"])
        let publisher = try ChildProcess("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-re", "-i", input, "-t", "20", "-c", "copy", "-f", "flv", platform.url("in-live")],
                                         logDirectory: serve.directory, name: "publish")
        try #require(try serve.waitForStreams(seconds: 30) { $0["live"]?["state"] as? String == "relaying" }, "relaying: \(serve.log.suffix(2000))")

        let badge = serve.directory + "/badge.png"
        try Self.writeBadge(badge)
        let screenshot = serve.directory + "/studio.png"
        let browser = try ChildProcess("/usr/bin/python3", [Package.root.appendingPathComponent("Tests/RelayIntegrationTests/Support/studio.py").path,
                                                            "http://127.0.0.1:\(serve.httpPort)/studio", badge, "nose-badge", "live", screenshot],
                                       logDirectory: serve.directory, name: "chromium")
        #expect(browser.wait(seconds: 120) == 0, "the studio: \(browser.stdout) \(browser.stderr)")
        let seen = try #require(try JSONSerialization.jsonObject(with: Data(browser.stdout.utf8)) as? [String: Any], "\(browser.stdout)")
        let offset = seen["offset"] as? [Double] ?? [99, 99]
        #expect(abs(offset[0]) < 2 && abs(offset[1]) < 2, "the drag left the picture's centre \(offset) px from the nose tip on the portrait")
        let item = try #require(((seen["sticker"] as? [String: Any])?["items"] as? [[String: Any]])?.first)
        #expect((item["position"] as? [String: Any])?["flag"] as? [Int] == [30], "the picture follows the nose: \(item)")
        #expect(FileManager.default.fileExists(atPath: stickers + "/nose-badge/sticker.json") && FileManager.default.fileExists(atPath: stickers + "/nose-badge/preview.png"))
        #expect(try serve.streams()["live"]?["sticker"] as? String == "nose-badge", "worn: \(seen["worn"] ?? "")")
        if let keep = ProcessInfo.processInfo.environment["FACERELAY_STUDIO_SCREENSHOT"] {
            try? FileManager.default.removeItem(atPath: keep)
            try FileManager.default.copyItem(atPath: screenshot, toPath: keep)
        }
        #expect(publisher.wait(seconds: 60) == 0)
        #expect(try serve.waitForStreams(seconds: 30) { $0.isEmpty || $0["live"]?["state"] as? String == "ended" })

        // The nose tip on every frame of the input: its first frame's, moved as the fixture moves
        // the face (x = 190 + 150 sin(2 pi t / 4) px at 1280x720, y fixed), at 640x360.
        let first = serve.directory + "/first.png"
        _ = try run("/usr/bin/ffmpeg", ["-v", "error", "-i", input, "-frames:v", "1", first])
        let inspected = try JSONSerialization.jsonObject(with: try run(Package.facerelay, ["inspect", "--json", first], timeout: 120)) as? [String: Any]
        let landmarks = try #require(((inspected?["faces"] as? [[String: Any]])?.first?["landmarks"] as? [[Double]]), "a face on the first frame")
        func nose(_ frame: Int) -> (x: Double, y: Double) {
            let shift = 150 * sin(2 * .pi * Double(frame) / 30 / 4)
            return ((landmarks[30][0] + shift) / 2, landmarks[30][1] / 2)
        }
        let recording = try platform.recording("out-live")
        let frames = try Self.badgeCentres(recording)
        let firstShown = try #require(frames.firstIndex { $0.centre != nil }, "the badge never shows in the recording")
        let after = frames[firstShown...]
        let shown = after.filter { $0.centre != nil }
        #expect(shown.count >= after.count * 95 / 100 && after.count > 100, "the badge shows on \(shown.count) of the \(after.count) frames after it first does")
        let located = shown.compactMap { frame -> (index: Int, error: Double)? in
            guard let index = frame.index, let centre = frame.centre else { return nil }
            let tip = nose(index)
            return (index, ((centre.x - tip.x) * (centre.x - tip.x) + (centre.y - tip.y) * (centre.y - tip.y)).squareRoot())
        }
        let errors = located.map(\.error)
        // Within 3 px (6 at 1280x720) of the frame's own nose tip, where the face moves up to 4 px a
        // frame: a loaded machine (a debug build beside Chromium) refits the face on every second or
        // fourth frame only (load shedding), and the badge follows the face's pixels between fits.
        // Carried on at the speed of the last two fits instead, it overshot each turn of the face
        // (up to 5 px here; 12 px at 1280x720 fitting every fourth frame) and this failed.
        let close = errors.filter { $0 < 3 }.count
        #expect(errors.count > 100 && close >= errors.count * 95 / 100 && errors.allSatisfy { $0 < 8 },
                "the badge's centre from the nose tip (px at 640x360): \(close) of \(errors.count) within 3, worst \(errors.max() ?? -1), mean \(errors.reduce(0, +) / Double(max(1, errors.count))); frames over 3 px (index, px): \(located.filter { $0.error >= 3 }.prefix(40).map { "\($0.index) \(Int($0.error.rounded()))" })")
        let xs = shown.compactMap { $0.centre?.x }
        #expect((xs.max() ?? 0) - (xs.min() ?? 0) > 60, "the badge moves with the face: x from \(xs.min() ?? 0) to \(xs.max() ?? 0)")
    }
}
