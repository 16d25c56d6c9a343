import Compositor
import Foundation
import FrameKit
import StickerKit
import StickerPictures
import Testing

/// An SVG sticker shown small is blended from a layer librsvg drew at about that size, not from its
/// design-size picture four texels a tap apart.
@Suite struct VectorLevelTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// Mean and largest luma difference of two frames over a box.
    static func difference(_ a: TestFrame, _ b: TestFrame, x: Range<Int>, y: Range<Int>) -> (mean: Double, largest: Int) {
        var total = 0, largest = 0
        for row in y {
            for column in x {
                let d = abs(Int(a.frame.luma[column, row]) - Int(b.frame.luma[column, row]))
                total += d
                largest = max(largest, d)
            }
        }
        return (Double(total) / Double(x.count * y.count), largest)
    }

    @Test(arguments: ["sunglasses/glasses.svg", "crown/crown.svg", "cat/whiskers.svg"])
    func aDrawingShownAtAQuarterOfItsSizeIsBlendedAsLibrsvgDrawsItThere(file: String) throws {
        let picture = try PictureDecoder().decode(file: Self.root + "/Stickers/" + file)
        let drawing = try #require(picture.drawing)
        let item = StickerItem(id: "art", frames: picture.frames, frameSeconds: [0], drawings: [drawing], loop: true, z: 0,
                               placement: .region(RegionAnchor(feature: .eyes, widthFactor: 1, heightFactor: 1, offsetX: 0, offsetY: 0)),
                               begin: .always, end: nil, duration: nil, follow3D: false)
        let renderer = StickerRenderer(package: StickerPackage(name: "art", title: "art", directory: "", items: [item]))
        let (width, height) = (drawing.width / 4, drawing.height / 4)
        let transform = Homography.translation(40, 30) * .scale(0.25, 0.25)

        let drawn = TestFrame(width: width + 80, height: height + 60, y: 90)
        renderer.draw([StickerPlacement(faceID: 1, item: 0, frame: 0, transform: transform)], on: drawn.frame)
        // The reference: librsvg's picture at exactly that size, blended texel for pixel, its
        // texel centres where the quarter-size picture's fall (design pixel i spans i - 0.5...i + 0.5).
        let reference = TestFrame(width: width + 80, height: height + 60, y: 90)
        StickerBlender.blend(StickerLayer(try drawing.render(width: width, height: height)), transform: .translation(40.375, 30.375), onto: reference.frame)
        // Without the levels: the design-size picture, sampled four texels apart.
        let designOnly = TestFrame(width: width + 80, height: height + 60, y: 90)
        StickerBlender.blend(StickerLayer(picture.frames[0]), transform: transform, onto: designOnly.frame)

        let box = (x: 38..<(42 + width), y: 28..<(32 + height))
        let levels = Self.difference(drawn, reference, x: box.x, y: box.y), design = Self.difference(designOnly, reference, x: box.x, y: box.y)
        #expect(levels.mean < 0.5 && levels.largest <= 6, "\(file): from its level, \(levels) off librsvg's quarter-size drawing")
        #expect(design.mean > levels.mean * 3 + 0.3, "\(file): the design-size picture alone is \(design) off, the level \(levels)")
    }

    /// At or above its design size a drawing is blended from its design-size layer.
    @Test func aDrawingShownLargeUsesItsDesignPicture() throws {
        let picture = try PictureDecoder().decode(file: Self.root + "/Stickers/sunglasses/glasses.svg")
        let item = StickerItem(id: "art", frames: picture.frames, frameSeconds: [0], drawings: [try #require(picture.drawing)], loop: true, z: 0,
                               placement: .region(RegionAnchor(feature: .eyes, widthFactor: 1, heightFactor: 1, offsetX: 0, offsetY: 0)),
                               begin: .always, end: nil, duration: nil, follow3D: false)
        let renderer = StickerRenderer(package: StickerPackage(name: "art", title: "art", directory: "", items: [item]))
        let drawn = TestFrame(width: 700, height: 300, y: 90), reference = TestFrame(width: 700, height: 300, y: 90)
        renderer.draw([StickerPlacement(faceID: 1, item: 0, frame: 0, transform: .translation(20, 20))], on: drawn.frame)
        StickerBlender.blend(StickerLayer(picture.frames[0]), transform: .translation(20, 20), onto: reference.frame)
        #expect(Self.difference(drawn, reference, x: 0..<700, y: 0..<300).largest == 0)
    }
}
