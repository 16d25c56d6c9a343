import CStickerImages
import FrameKit

/// An SVG document, checked (`SVGCheck`), with the size it is drawn at in pixels: what a sticker's
/// design coordinates refer to. It can be drawn at any size, so that a sticker drawn small or large
/// on a face is sharp rather than a scaled picture.
public struct VectorDrawing: Sendable {
    public let bytes: [UInt8]
    /// The document's own size, rounded to whole pixels.
    public let width: Int
    public let height: Int

    public init(_ bytes: [UInt8], limits: PictureLimits) throws(PictureError) {
        try SVGCheck.check(bytes)
        var width = 0.0, height = 0.0
        var error = [CChar](repeating: 0, count: Int(SI_ERROR_SIZE))
        let status = bytes.withUnsafeBufferPointer { si_svg_size($0.baseAddress, $0.count, &width, &height, &error) }
        guard status == 0 else { throw PictureError(PictureDecoder.message(error)) }
        let (roundedWidth, roundedHeight) = (Int(width.rounded()), Int(height.rounded()))
        guard width.isFinite, height.isFinite, (1...limits.maximumSide).contains(roundedWidth), (1...limits.maximumSide).contains(roundedHeight) else {
            throw PictureError("is drawn at \(width)x\(height) px; each side must be 1...\(limits.maximumSide) px (set the <svg> width and height)")
        }
        self.bytes = bytes
        self.width = roundedWidth
        self.height = roundedHeight
    }

    /// The document drawn to fill `width` x `height` pixels.
    public func render(width: Int, height: Int) throws(PictureError) -> RGBAImage {
        var frames = si_frames()
        var error = [CChar](repeating: 0, count: Int(SI_ERROR_SIZE))
        let status = bytes.withUnsafeBufferPointer { si_render_svg($0.baseAddress, $0.count, Int32(width), Int32(height), &frames, &error) }
        guard status == 0 else { throw PictureError(PictureDecoder.message(error)) }
        defer { si_frames_free(&frames) }
        return PictureDecoder.images(frames)[0]
    }
}
