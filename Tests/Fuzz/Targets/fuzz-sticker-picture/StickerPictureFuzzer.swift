import FrameKit
import FuzzSupport
import StickerPictures

// The bytes of a sticker picture (PNG, APNG, GIF, WebP or SVG, told apart by their first bytes)
// through FaceRelay's decoders: they decode to frames of one size within the limits, with a delay
// for each frame of an animation, or are refused with a message; nothing else.

let decoder = PictureDecoder()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStickerPicture(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    do {
        let picture = try decoder.decode(bytes: Array(UnsafeBufferPointer(start: data, count: size)))
        let first = picture.frames[0]
        FuzzSupport.require((1...decoder.limits.maximumSide).contains(first.width) && (1...decoder.limits.maximumSide).contains(first.height),
                            "a \(first.width)x\(first.height) picture was decoded")
        FuzzSupport.require(picture.frames.count <= decoder.limits.maximumFrames, "\(picture.frames.count) frames were decoded")
        for frame in picture.frames {
            FuzzSupport.require(frame.width == first.width && frame.height == first.height, "frames of different sizes")
        }
        FuzzSupport.require(picture.delays.map { $0.count == picture.frames.count && $0.allSatisfy { $0 > 0 } } ?? (picture.frames.count == 1),
                            "\(picture.frames.count) frames with delays \(String(describing: picture.delays))")
    } catch {
        FuzzSupport.require(!error.message.isEmpty, "refused without a message")
    }
    return 0
}
