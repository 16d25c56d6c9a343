import FrameKit
import StickerKit

/// A loaded sticker ready to draw: every frame of every item converted to a `StickerLayer` once,
/// then blended wherever a scene places it.
public final class StickerRenderer: Sendable {
    public let package: StickerPackage
    /// layers[item][frame]
    private let layers: [[StickerLayer]]

    public init(package: StickerPackage) {
        self.package = package
        layers = package.items.map { $0.frames.map(StickerLayer.init) }
    }

    /// Blends every placement, in order, onto `frame`. Returns the luma pixels covered.
    @discardableResult
    public func draw(_ placements: ContiguousArray<StickerPlacement>, on frame: VideoFrame) -> Int {
        var covered = 0
        for placement in placements {
            covered += StickerBlender.blend(layers[placement.item][placement.frame], transform: placement.transform, onto: frame)
        }
        return covered
    }
}
