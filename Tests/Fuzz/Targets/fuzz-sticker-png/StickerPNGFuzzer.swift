import FaceTracking
import FoundationEssentials
import FuzzSupport
import MediaBridge
import StickerKit

// The bytes of a sticker's frame, loaded by a valid sticker.json: GStreamer's PNG decoder behind
// PNGDecoder, then the loader's size and transparency checks. The frame decodes to a picture the
// loader accepts, or the package is refused; nothing else.

let folder = FuzzSupport.scratchDirectory("sticker-png")
let decoder: PNGDecoder = {
    do {
        return try PNGDecoder(library: PipelineLibrary(directory: FuzzSupport.root + "/Pipelines"))
    } catch {
        fatalError("cannot start the PNG decoder: \(error)")
    }
}()
let loader = StickerLoader(expressions: ExpressionSettings.defaultRules.map(\.analyser.name)) { try decoder.decode($0) }
let stickerJSON = """
    {"items": [{"id": "fuzzed", "frames": ["frame.png"], "region": {"feature": "eyes"}}]}
    """

@_cdecl("LLVMFuzzerInitialize")
public func initializeStickerPNGFuzzer(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    guard FileManager.default.createFile(atPath: folder + "/" + StickerLoader.fileName, contents: Data(stickerJSON.utf8)) else {
        fatalError("cannot write \(folder)/\(StickerLoader.fileName)")
    }
    // GStreamer registers its plugins on the first decode: done here, out of the inputs' leak checks.
    _ = try? decoder.decode(FuzzSupport.root + "/Stickers/sunglasses/glasses.png")
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStickerPNG(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzSupport.write(data, size, to: folder + "/frame.png")
    do {
        let package = try loader.load(directory: folder)
        let frame = package.items[0].frames[0]
        FuzzSupport.require(frame.pixels.count == frame.width * frame.height * 4, "a \(frame.width)x\(frame.height) frame holds \(frame.pixels.count) bytes")
        FuzzSupport.require(!frame.isBlank, "a blank frame was loaded")
    } catch {
        FuzzSupport.require(!error.problems.isEmpty, "refused without a problem")
    }
    return 0
}
