import FaceTracking
import FoundationEssentials
import FrameKit
import FuzzSupport
import Glibc
import StickerKit

// sticker.json bytes, loaded from a folder that holds the frames of every shipped sticker (so the
// shipped packages in the corpus load, and mutations of them reach the placement and trigger
// checks). A package loads whole and sound, or is refused with problems that say where; a loaded
// package then plays on a timeline without trapping.

let expressions = ExpressionSettings.defaultRules.map(\.analyser.name)
let folder = FuzzSupport.scratchDirectory("sticker-json")
let loader = StickerLoader(expressions: expressions)

@_cdecl("LLVMFuzzerInitialize")
public func initializeStickerJSONFuzzer(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    let stickers = FuzzSupport.root + "/Stickers"
    let packages = (try? FileManager.default.contentsOfDirectory(atPath: stickers)) ?? []
    for package in packages.sorted() {
        for file in (try? FileManager.default.contentsOfDirectory(atPath: stickers + "/" + package)) ?? [] where file.hasSuffix(".svg") || file.hasSuffix(".png") {
            // Two packages with a frame of the same name: the first one's is used.
            _ = symlink(stickers + "/" + package + "/" + file, folder + "/" + file)
        }
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStickerJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzSupport.write(data, size, to: folder + "/" + StickerLoader.fileName)
    let package: StickerPackage
    do {
        package = try loader.load(directory: folder)
    } catch {
        FuzzSupport.require(!error.problems.isEmpty, "refused without a problem")
        return 0
    }
    FuzzSupport.require((1...StickerLoader.maximumItems).contains(package.items.count), "\(package.items.count) items loaded")
    for item in package.items {
        FuzzSupport.require((1...loader.maximumFrames).contains(item.frames.count), "item \(item.id) has \(item.frames.count) frames")
        FuzzSupport.require(item.frames.allSatisfy { $0.width == item.frames[0].width && $0.height == item.frames[0].height },
                            "item \(item.id) has frames of different sizes")
    }
    var timeline = StickerTimeline(package: package, expressions: expressions)
    var active = ContiguousArray(repeating: false, count: expressions.count)
    for step in 0..<90 {
        // Expressions go on and off in a pattern of the input's bytes, over three seconds at 30 fps.
        let byte = size == 0 ? 0 : data[step % size]
        for rule in active.indices { active[rule] = (Int(byte) >> (rule % 8)) & 1 == 1 }
        let seconds = Double(step) / 30
        timeline.advance(to: seconds, active: active)
        for (index, item) in package.items.enumerated() {
            if let frame = timeline.frame(of: index, at: seconds) {
                FuzzSupport.require(item.frames.indices.contains(frame), "item \(item.id) shows frame \(frame) of \(item.frames.count)")
            }
        }
    }
    return 0
}
