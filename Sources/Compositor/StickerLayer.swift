import FrameKit

/// One sticker frame converted once, at load time, to what blending reads: premultiplied-alpha YUV
/// in the frame's BT.601 limited range, luma at full resolution and chroma at half, each with a
/// one-texel transparent border so that bilinear taps never need a bounds check and the picture's
/// edges fade out over one pixel instead of cutting off.
///
/// Texels are stored with their channels spread over the lanes of one 64-bit word, so that a
/// bilinear tap weighs every channel with one multiplication (SIMD within a register): luma as
/// Y·a in bits 0-31 and a in bits 32-63, chroma as U·a, V·a and a at bits 0, 21 and 42.
///
/// `@unchecked Sendable` because of its two texel buffers, which the compiler cannot prove: every
/// property is a `let`, the buffers are written only by `init` and freed only by `deinit`, and every
/// other use (blending, on any stream's thread) reads them.
public final class StickerLayer: @unchecked Sendable {
    public let width: Int
    public let height: Int
    /// Luma texels, `lumaStride` a row, (height + 2) rows.
    let luma: UnsafeMutablePointer<UInt64>
    let lumaStride: Int
    /// Chroma texels at half resolution, `chromaStride` a row, (chromaHeight + 2) rows.
    let chroma: UnsafeMutablePointer<UInt64>
    let chromaStride: Int
    let chromaWidth: Int
    let chromaHeight: Int

    public init(_ image: RGBAImage) {
        width = image.width
        height = image.height
        lumaStride = width + 2
        chromaWidth = (width + 1) / 2
        chromaHeight = (height + 1) / 2
        chromaStride = chromaWidth + 2
        luma = .allocate(capacity: lumaStride * (height + 2))
        luma.initialize(repeating: 0, count: lumaStride * (height + 2))
        chroma = .allocate(capacity: chromaStride * (chromaHeight + 2))
        chroma.initialize(repeating: 0, count: chromaStride * (chromaHeight + 2))

        // Premultiplied Y, U, V (scaled by 255) and alpha of every pixel.
        var premultipliedU = [Int](repeating: 0, count: width * height)
        var premultipliedV = premultipliedU
        image.pixels.withUnsafeBufferPointer { rgba in
            for y in 0..<height {
                for x in 0..<width {
                    let p = (y * width + x) * 4
                    let r = Int(rgba[p]), g = Int(rgba[p + 1]), b = Int(rgba[p + 2]), a = Int(rgba[p + 3])
                    let yuv = Self.yuv(r, g, b)
                    luma[(y + 1) * lumaStride + x + 1] = UInt64((yuv.y * a + 127) / 255) | UInt64(a) << 32
                    premultipliedU[y * width + x] = yuv.u * a
                    premultipliedV[y * width + x] = yuv.v * a
                }
            }
            // Chroma texels average their 2x2 block of premultiplied values; a block's missing
            // pixels (odd sizes) count as transparent.
            for cy in 0..<chromaHeight {
                for cx in 0..<chromaWidth {
                    var u = 0, v = 0, a = 0
                    for y in (cy * 2)..<min(height, cy * 2 + 2) {
                        for x in (cx * 2)..<min(width, cx * 2 + 2) {
                            u += premultipliedU[y * width + x]
                            v += premultipliedV[y * width + x]
                            a += Int(rgba[(y * width + x) * 4 + 3])
                        }
                    }
                    chroma[(cy + 1) * chromaStride + cx + 1] = UInt64(min(255, (u + 510) / 1020))
                        | UInt64(min(255, (v + 510) / 1020)) << 21 | UInt64((a + 2) / 4) << 42
                }
            }
        }
    }

    deinit {
        luma.deallocate()
        chroma.deallocate()
    }

    /// BT.601 limited range, as `YUVColour`.
    static func yuv(_ r: Int, _ g: Int, _ b: Int) -> (y: Int, u: Int, v: Int) {
        let colour = YUVColour(red: r, green: g, blue: b)
        return (Int(colour.y), Int(colour.u), Int(colour.v))
    }
}
