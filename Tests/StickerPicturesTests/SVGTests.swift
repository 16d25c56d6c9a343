import Foundation
import FrameKit
import StickerPictures
import Testing

/// SVG stickers: drawn as librsvg's own rsvg-convert draws them, at their size and at others;
/// everything that runs code, reaches outside the document or expands without bound is refused.
@Suite struct SVGTests {
    /// A drawing with what sticker art uses: gradients, a blurred shadow, strokes, `<use>`, opacity.
    static let drawing = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- a lens -->
        <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="240" height="120" viewBox="0 0 240 120">
          <defs>
            <linearGradient id="glass" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#203060"/><stop offset="1" stop-color="#0a0a14" stop-opacity="0.9"/></linearGradient>
            <filter id="shadow" x="-20%" y="-20%" width="140%" height="140%"><feGaussianBlur stdDeviation="4"/></filter>
            <ellipse id="lens" cx="60" cy="60" rx="50" ry="38"/>
          </defs>
          <use href="#lens" transform="translate(4 6)" fill="black" opacity="0.4" filter="url(#shadow)"/>
          <use xlink:href="#lens" fill="url(#glass)" stroke="#c8a040" stroke-width="6"/>
          <use href="#lens" x="120" fill="url( '#glass' )" stroke="#c8a040" stroke-width="6"/>
          <path d="M100 55 Q120 40 140 55" fill="none" stroke="#c8a040" stroke-width="5" stroke-linecap="round"/>
          <ellipse cx="40" cy="42" rx="14" ry="6" fill="white" opacity="0.6" transform="rotate(-20 40 42)"/>
        </svg>
        """

    static func rsvgConvert(_ svg: String, width: Int, height: Int) throws -> RGBAImage {
        let folder = NSTemporaryDirectory() + "svg-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try svg.write(toFile: folder + "/in.svg", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/rsvg-convert")
        process.arguments = ["-w", "\(width)", "-h", "\(height)", folder + "/in.svg", "-o", folder + "/out.png"]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return try PictureDecoder().decode(file: folder + "/out.png").frames[0]
    }

    @Test(arguments: [(240, 120), (96, 48), (600, 300)])
    func aDrawingMatchesRsvgConvertAtAnySize(width: Int, height: Int) throws {
        let picture = try PictureDecoder().decode(bytes: Array(Self.drawing.utf8))
        #expect(picture.format == .svg && picture.frames[0].width == 240 && picture.frames[0].height == 120)
        let drawing = try #require(picture.drawing)
        let ours = try drawing.render(width: width, height: height)
        let reference = try Self.rsvgConvert(Self.drawing, width: width, height: height)
        #expect(ours.width == reference.width && ours.height == reference.height)
        // Colour is compared where the drawing is opaque enough for unpremultiplying to be exact.
        var largest = 0, opaque = 0
        for index in stride(from: 0, to: ours.pixels.count, by: 4) {
            largest = max(largest, abs(Int(ours.pixels[index + 3]) - Int(reference.pixels[index + 3])))
            guard ours.pixels[index + 3] > 64 else { continue }
            opaque += 1
            for channel in 0..<3 { largest = max(largest, abs(Int(ours.pixels[index + channel]) - Int(reference.pixels[index + channel]))) }
        }
        #expect(largest <= 2 && opaque > width * height / 4, "largest difference \(largest), \(opaque) opaque pixels")
    }

    @Test(arguments: [
        ("<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'><script>alert(1)</script></svg>", "contains a <script>"),
        ("<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10' onload='alert(1)'/>", "event attribute (onload=)"),
        ("<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'><use href='other.svg#a'/></svg>", "refers to 'other.svg#a' outside the document"),
        ("<svg xmlns='http://www.w3.org/2000/svg' xmlns:xlink='http://www.w3.org/1999/xlink' width='10' height='10'><use xlink:href = \"file:///etc/passwd\"/></svg>", "refers to 'file:///etc/passwd'"),
        ("<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'><rect width='5' height='5' fill='url(http://example.com/a.svg#g)'/></svg>", "refers to 'http://example.com/a.svg#g'"),
        ("<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'><style>@import url(#x);</style></svg>", "@import"),
        ("<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'><image href='data:image/png;base64,AAAA' width='5' height='5'/></svg>", "<image>"),
        ("<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'><foreignObject/></svg>", "<foreignObject>"),
        ("<?xml version='1.0'?><!DOCTYPE svg [<!ENTITY a 'aaaaaaaaaa'><!ENTITY b '&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;'>]><svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'><text>&b;</text></svg>", "XML entities"),
        ("<svg xmlns='http://www.w3.org/2000/svg' width='100000' height='10'/>", "each side must be 1...2048 px"),
        ("<svg xmlns='http://www.w3.org/2000/svg'><rect width='5' height='5'/></svg>", "has no size"),
        ("<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'><rect width='5'", "does not parse as SVG"),
    ])
    func aHostileOrBrokenDrawingIsRefusedWithWhatIsWrong(svg: String, expected: String) throws {
        let error = #expect(throws: PictureError.self) { try PictureDecoder().decode(bytes: Array(svg.utf8)) }
        #expect(error?.message.contains(expected) == true, "\(String(describing: error))")
    }
}
