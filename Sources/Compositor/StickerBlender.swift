import FrameKit
import StickerKit

/// Blends a sticker layer into a writable I420 or NV12 frame in place, through a design-to-frame
/// homography: every frame pixel inside the sticker's footprint is mapped back into the layer and
/// sampled bilinearly (premultiplied alpha, so edges do not darken). Work is bounded by the
/// sticker's footprint, not the frame: each row is clipped to the exact span where the mapped
/// point falls inside the layer. Allocates nothing.
public enum StickerBlender {
    /// Blends `layer` placed by `transform` (design pixels to frame pixels) onto `frame`. Returns the
    /// number of luma pixels the footprint covered.
    @discardableResult
    public static func blend(_ layer: StickerLayer, transform: Homography, onto frame: VideoFrame) -> Int {
        guard let inverse = transform.inverse else { return 0 }
        // The padded layer spans design coordinates -1...width (texel centres).
        let w = Double(layer.width), h = Double(layer.height)
        // A corner behind the camera: the card is edge on or turned away. Draw nothing.
        guard let a = transform.apply(-1, -1), let b = transform.apply(w, -1), let c = transform.apply(w, h),
              let d = transform.apply(-1, h) else { return 0 }
        let box = Box(minX: min(a.x, b.x, c.x, d.x), maxX: max(a.x, b.x, c.x, d.x),
                      minY: min(a.y, b.y, c.y, d.y), maxY: max(a.y, b.y, c.y, d.y))
        guard let lumaBox = box.clipped(width: frame.width, height: frame.height, scale: 1) else { return 0 }
        // Frame pixel centre -> padded texel coordinates.
        let lumaMap = Homography.translation(1, 1) * inverse
        let covered = blendLuma(layer, map: lumaMap, box: lumaBox, plane: frame.luma)
        let chroma = VideoFrame.chromaSize(width: frame.width, height: frame.height)
        if let chromaBox = box.clipped(width: chroma.width, height: chroma.height, scale: 0.5) {
            // Chroma sample (cx, cy) sits at luma (2cx + 0.5, 2cy + 0.5); layer chroma texel j at design 2j + 0.5.
            let chromaMap = Homography(0.5, 0, 0.75, 0, 0.5, 0.75) * inverse * Homography(2, 0, 0.5, 0, 2, 0.5)
            blendChroma(layer, map: chromaMap, box: chromaBox, frame: frame)
        }
        return covered
    }

    struct Box {
        var minX, maxX, minY, maxY: Double

        func clipped(width: Int, height: Int, scale: Double) -> (x0: Int, x1: Int, y0: Int, y1: Int)? {
            let x0 = max(0, Int((minX * scale).rounded(.down))), x1 = min(width - 1, Int(min(1e9, (maxX * scale).rounded(.up))))
            let y0 = max(0, Int((minY * scale).rounded(.down))), y1 = min(height - 1, Int(min(1e9, (maxY * scale).rounded(.up))))
            return x0 <= x1 && y0 <= y1 ? (x0, x1, y0, y1) : nil
        }
    }

    /// Narrows [lo, hi] to the x where c0 + c1 x >= 0.
    @inline(__always)
    static func keep(_ c0: Double, _ c1: Double, _ lo: inout Int, _ hi: inout Int) {
        if c1 > 1e-12 {
            lo = max(lo, Int(max(-1e9, min(1e9, (-c0 / c1).rounded(.up)))))
        } else if c1 < -1e-12 {
            hi = min(hi, Int(max(-1e9, min(1e9, (-c0 / c1).rounded(.down)))))
        } else if c0 < 0 {
            hi = lo - 1
        }
    }

    /// The columns of row `y` whose mapped point lies inside the padded layer (0 <= u < width + 1).
    @inline(__always)
    static func span(_ m: Homography, row y: Double, width: Double, height: Double, _ lo: inout Int, _ hi: inout Int) {
        let u0 = m.b * y + m.c, v0 = m.e * y + m.f, w0 = m.h * y + m.i
        // u/w >= 0 and u/w < limit, with w > 0 in front of the camera; a hair inside the limit.
        let uLimit = width + 1 - 1e-3, vLimit = height + 1 - 1e-3
        keep(u0, m.a, &lo, &hi)
        keep(uLimit * w0 - u0, uLimit * m.g - m.a, &lo, &hi)
        keep(v0, m.d, &lo, &hi)
        keep(vLimit * w0 - v0, vLimit * m.g - m.d, &lo, &hi)
    }

    @inline(__always)
    static func divideBy255(_ value: Int) -> Int {
        let t = value &+ 128
        return (t &+ (t >> 8)) >> 8
    }

    static func blendLuma(_ layer: StickerLayer, map m: Homography, box: (x0: Int, x1: Int, y0: Int, y1: Int), plane: Plane) -> Int {
        let texels = layer.luma, stride = layer.lumaStride
        let maxU = Float(layer.width) + 0.999, maxV = Float(layer.height) + 0.999
        let affine = m.isAffine
        var covered = 0
        for y in box.y0...box.y1 {
            var lo = box.x0, hi = box.x1
            span(m, row: Double(y), width: Double(layer.width), height: Double(layer.height), &lo, &hi)
            guard lo <= hi else { continue }
            covered &+= hi - lo + 1
            let row = plane.row(y)
            let u0 = Float(m.a * Double(lo) + m.b * Double(y) + m.c), du = Float(m.a)
            let v0 = Float(m.d * Double(lo) + m.e * Double(y) + m.f), dv = Float(m.d)
            let w0 = Float(m.g * Double(lo) + m.h * Double(y) + m.i), dw = Float(m.g)
            for x in lo...hi {
                let step = Float(x &- lo)
                var u = u0 + du * step, v = v0 + dv * step
                if !affine {
                    let r = 1 / (w0 + dw * step)
                    u *= r
                    v *= r
                }
                u = min(max(u, 0), maxU)
                v = min(max(v, 0), maxV)
                let iu = Int(u), iv = Int(v)
                let fu = Int((u - Float(iu)) * 256), fv = Int((v - Float(iv)) * 256)
                let p = texels + ((iv &* stride &+ iu) &* 2)
                let q = p + stride &* 2
                let a0 = Int(p[1]) &* (256 &- fu) &+ Int(p[3]) &* fu
                let a1 = Int(q[1]) &* (256 &- fu) &+ Int(q[3]) &* fu
                let alpha = (a0 &* (256 &- fv) &+ a1 &* fv &+ 32768) >> 16
                guard alpha > 0 else { continue }
                let y0 = Int(p[0]) &* (256 &- fu) &+ Int(p[2]) &* fu
                let y1 = Int(q[0]) &* (256 &- fu) &+ Int(q[2]) &* fu
                let luma = (y0 &* (256 &- fv) &+ y1 &* fv &+ 32768) >> 16
                row[x] = UInt8(truncatingIfNeeded: min(255, divideBy255(Int(row[x]) &* (255 &- alpha)) &+ luma))
            }
        }
        return covered
    }

    static func blendChroma(_ layer: StickerLayer, map m: Homography, box: (x0: Int, x1: Int, y0: Int, y1: Int), frame: VideoFrame) {
        let texels = layer.chroma, stride = layer.chromaStride
        let maxU = Float(layer.chromaWidth) + 0.999, maxV = Float(layer.chromaHeight) + 0.999
        let affine = m.isAffine
        let interleaved = frame.format == .nv12
        for y in box.y0...box.y1 {
            var lo = box.x0, hi = box.x1
            span(m, row: Double(y), width: Double(layer.chromaWidth), height: Double(layer.chromaHeight), &lo, &hi)
            guard lo <= hi else { continue }
            let rowU = frame.chromaU.row(y), rowV = frame.chromaV.row(y)
            let u0 = Float(m.a * Double(lo) + m.b * Double(y) + m.c), du = Float(m.a)
            let v0 = Float(m.d * Double(lo) + m.e * Double(y) + m.f), dv = Float(m.d)
            let w0 = Float(m.g * Double(lo) + m.h * Double(y) + m.i), dw = Float(m.g)
            for x in lo...hi {
                let step = Float(x &- lo)
                var u = u0 + du * step, v = v0 + dv * step
                if !affine {
                    let r = 1 / (w0 + dw * step)
                    u *= r
                    v *= r
                }
                u = min(max(u, 0), maxU)
                v = min(max(v, 0), maxV)
                let iu = Int(u), iv = Int(v)
                let fu = Int((u - Float(iu)) * 256), fv = Int((v - Float(iv)) * 256)
                let p = texels + ((iv &* stride &+ iu) &* 4)
                let q = p + stride &* 4
                @inline(__always) func sample(_ k: Int) -> Int {
                    let top = Int(p[k]) &* (256 &- fu) &+ Int(p[k &+ 4]) &* fu
                    let bottom = Int(q[k]) &* (256 &- fu) &+ Int(q[k &+ 4]) &* fu
                    return (top &* (256 &- fv) &+ bottom &* fv &+ 32768) >> 16
                }
                let alpha = sample(2)
                guard alpha > 0 else { continue }
                let keep = 255 &- alpha
                let cu = interleaved ? x &* 2 : x, cv = interleaved ? x &* 2 &+ 1 : x
                rowU[cu] = UInt8(truncatingIfNeeded: min(255, divideBy255(Int(rowU[cu]) &* keep) &+ sample(0)))
                rowV[cv] = UInt8(truncatingIfNeeded: min(255, divideBy255(Int(rowV[cv]) &* keep) &+ sample(1)))
            }
        }
    }
}
