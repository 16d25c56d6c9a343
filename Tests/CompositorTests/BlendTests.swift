import Compositor
import FrameKit
import StickerKit
import Testing

/// The compositor against values worked out by hand: BT.601 colours, premultiplied blending, the
/// footprint, orientation, and the two pixel formats.
@Suite struct BlendTests {
    static let red = YUVColour(red: 255, green: 0, blue: 0)

    func differences(_ a: TestFrame, _ b: TestFrame) -> Int {
        var count = 0
        for y in 0..<a.frame.height { for x in 0..<a.frame.width where a.frame.luma[x, y] != b.frame.luma[x, y] { count += 1 } }
        return count
    }

    @Test(arguments: [PixelFormat.i420, .nv12])
    func anOpaqueStickerCoversExactlyItsFootprint(format: PixelFormat) {
        let target = TestFrame(width: 160, height: 120, format: format)
        let layer = StickerLayer(RGBAImage(width: 20, height: 20, red: 255, green: 0, blue: 0, alpha: 255))
        StickerBlender.blend(layer, transform: .translation(50, 40), onto: target.frame)
        for y in 0..<120 {
            for x in 0..<160 {
                let inside = (50..<70).contains(x) && (40..<60).contains(y)
                #expect(target.frame.luma[x, y] == (inside ? Self.red.y : 128), "luma at \(x),\(y)")
            }
        }
        for y in 0..<60 {
            for x in 0..<80 {
                let inside = (25..<35).contains(x) && (20..<30).contains(y)
                #expect(target.u(x, y) == (inside ? Self.red.u : 128) && target.v(x, y) == (inside ? Self.red.v : 128), "chroma at \(x),\(y)")
            }
        }
    }

    @Test func halfAlphaMixesHalfway() {
        let target = TestFrame(width: 64, height: 64, y: 200, u: 100, v: 150)
        let layer = StickerLayer(RGBAImage(width: 16, height: 16, red: 255, green: 0, blue: 0, alpha: 128))
        StickerBlender.blend(layer, transform: .translation(20, 20), onto: target.frame)
        func mix(_ under: Int, _ over: UInt8) -> Int { (under * 127 + Int(over) * 128) / 255 }
        #expect(abs(Int(target.frame.luma[28, 28]) - mix(200, Self.red.y)) <= 1)
        #expect(abs(Int(target.u(14, 14)) - mix(100, Self.red.u)) <= 1)
        #expect(abs(Int(target.v(14, 14)) - mix(150, Self.red.v)) <= 1)
        #expect(target.frame.luma[10, 10] == 200)
    }

    @Test func aQuarterTurnPutsTheLeftHalfOnTop() {
        // Left half white, right half black; turned a quarter clockwise (y down) about the origin.
        var pixels = [UInt8]()
        for _ in 0..<20 { for x in 0..<20 { pixels += x < 10 ? [255, 255, 255, 255] : [0, 0, 0, 255] } }
        let layer = StickerLayer(RGBAImage(width: 20, height: 20, pixels: pixels))
        let target = TestFrame(width: 100, height: 100)
        StickerBlender.blend(layer, transform: .translation(60, 30) * .rotation(.pi / 2), onto: target.frame)
        // Design (u, v) lands on (60 - v, 30 + u): the white half (u < 10) on rows 30...39.
        #expect(target.frame.luma[50, 33] == YUVColour.white.y)
        #expect(target.frame.luma[50, 46] == YUVColour.black.y)
        #expect(target.frame.luma[50, 55] == 128)
    }

    @Test func scalingTwiceCoversFourTimesThePixels() {
        let layer = StickerLayer(RGBAImage(width: 20, height: 20, red: 0, green: 0, blue: 255, alpha: 255))
        let once = TestFrame(width: 200, height: 200), twice = TestFrame(width: 200, height: 200)
        StickerBlender.blend(layer, transform: .translation(10, 10), onto: once.frame)
        StickerBlender.blend(layer, transform: .translation(10, 10) * .scale(2, 2), onto: twice.frame)
        let reference = TestFrame(width: 200, height: 200)
        #expect(differences(once, reference) == 400)
        // Twice the size, plus the one-texel edge fade now two pixels wide: 40x40 to 42x42.
        #expect((1600...1764).contains(differences(twice, reference)), "\(differences(twice, reference)) pixels")
    }

    @Test func theProjectivePathAgreesWithTheAffineOneOnAFlatMap() {
        var pixels = [UInt8]()
        for y in 0..<40 { for x in 0..<60 { pixels += [UInt8(x * 4), UInt8(y * 6), 90, UInt8(x < 5 ? 0 : 255)] } }
        let layer = StickerLayer(RGBAImage(width: 60, height: 40, pixels: pixels))
        let affine = Homography.translation(70, 50) * .rotation(0.3) * .scale(1.5, 1.5)
        // The same map with a last row that is almost, but not exactly, (0, 0, 1).
        var projective = affine
        projective.g = 1e-9
        let a = TestFrame(width: 200, height: 160), b = TestFrame(width: 200, height: 160)
        StickerBlender.blend(layer, transform: affine, onto: a.frame)
        StickerBlender.blend(layer, transform: projective, onto: b.frame)
        #expect(!projective.isAffine)
        var worst = 0
        for y in 0..<160 { for x in 0..<200 { worst = max(worst, abs(Int(a.frame.luma[x, y]) - Int(b.frame.luma[x, y]))) } }
        #expect(worst <= 2, "largest luma difference \(worst)")
    }

    @Test func aStickerOffTheFrameOrTurnedAwayDrawsNothing() {
        let layer = StickerLayer(RGBAImage(width: 20, height: 20, red: 255, green: 255, blue: 0, alpha: 255))
        let target = TestFrame(width: 64, height: 64), reference = TestFrame(width: 64, height: 64)
        #expect(StickerBlender.blend(layer, transform: .translation(-100, 10), onto: target.frame) == 0)
        #expect(StickerBlender.blend(layer, transform: .translation(70, 70), onto: target.frame) == 0)
        // A card whose far edge is behind the camera.
        #expect(StickerBlender.blend(layer, transform: Homography(1, 0, 10, 0, 1, 10, -0.1, 0, 1), onto: target.frame) == 0)
        // Partly outside: clipped, not wrapped.
        StickerBlender.blend(layer, transform: .translation(54, -10), onto: target.frame)
        #expect(differences(target, reference) == 10 * 10)
    }
}
