import FrameKit
import StickerKit
import StickerPictures

/// A loaded sticker ready to draw: every frame of every item converted to a `StickerLayer` once,
/// then blended wherever a scene places it.
///
/// An SVG frame is also drawn, at load, at smaller sizes in half-octave steps (1/√2, 1/2, ... of its
/// design size): a picture shown at a quarter of its size is then blended from a layer drawn by
/// librsvg at about that size, sharp and without the aliasing of bilinear taps four texels apart.
/// The frame thread only picks the level; nothing is drawn on it.
public final class StickerRenderer: Sendable {
    public let package: StickerPackage
    /// levels[item][frame]: the design-size layer first, then the smaller ones.
    private let levels: [[[Level]]]

    struct Level: Sendable {
        let layer: StickerLayer
        /// Its size over the design size.
        let scale: Double
        /// Layer texels to design pixels (texel centres).
        let toDesign: Homography
    }

    /// Steps below the design size, and the smallest side a level may have.
    static let smallerLevels = 4
    static let smallestSide = 8

    public init(package: StickerPackage) {
        self.package = package
        levels = package.items.map { item in
            item.frames.indices.map { index in
                let design = Level(layer: StickerLayer(item.frames[index]), scale: 1, toDesign: .identity)
                guard let drawing = item.drawings?[index] else { return [design] }
                return [design] + Self.smallerLevels(of: drawing)
            }
        }
    }

    static func smallerLevels(of drawing: VectorDrawing) -> [Level] {
        var levels: [Level] = []
        for step in 1...smallerLevels {
            let scale = 1 / Double(1 << step).squareRoot()
            let width = Int((Double(drawing.width) * scale).rounded()), height = Int((Double(drawing.height) * scale).rounded())
            guard min(width, height) >= smallestSide, let image = try? drawing.render(width: width, height: height) else { break }
            // Texel j's centre is design (j + 0.5) * design / drawn - 0.5.
            let sx = Double(drawing.width) / Double(width), sy = Double(drawing.height) / Double(height)
            levels.append(Level(layer: StickerLayer(image), scale: scale, toDesign: Homography(sx, 0, 0.5 * sx - 0.5, 0, sy, 0.5 * sy - 0.5)))
        }
        return levels
    }

    /// Blends every placement, in order, onto `frame`. Returns the luma pixels covered.
    @discardableResult
    public func draw(_ placements: ContiguousArray<StickerPlacement>, on frame: VideoFrame) -> Int {
        var covered = 0
        for placement in placements {
            let level = Self.level(levels[placement.item][placement.frame], for: placement.transform)
            covered += StickerBlender.blend(level.layer, transform: placement.transform * level.toDesign, onto: frame)
        }
        return covered
    }

    /// The smallest level at least as large as the picture shows: its design pixels' size on the
    /// frame, the larger of the two axes at the picture's centre.
    static func level(_ levels: [Level], for transform: Homography) -> Level {
        guard levels.count > 1 else { return levels[0] }
        let layer = levels[0].layer
        let cx = Double(layer.width) / 2, cy = Double(layer.height) / 2
        guard let centre = transform.apply(cx, cy), let right = transform.apply(cx + 1, cy), let down = transform.apply(cx, cy + 1) else {
            return levels[0]
        }
        let shown = max(((right.x - centre.x) * (right.x - centre.x) + (right.y - centre.y) * (right.y - centre.y)).squareRoot(),
                        ((down.x - centre.x) * (down.x - centre.x) + (down.y - centre.y) * (down.y - centre.y)).squareRoot())
        var chosen = levels[0]
        for level in levels.dropFirst() where level.scale >= shown { chosen = level }
        return chosen
    }
}
