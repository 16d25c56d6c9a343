import ArgumentParser
import Compositor
import FaceTracking
import MediaBridge
import StickerKit

/// Where sticker packages are found, shared by every command that loads one.
struct StickerFolderOption: ParsableArguments {
    @Option(name: .customLong("stickers"), help: "Folder of sticker packages (default: $FACERELAY_STICKERS, then the installed or checked-out Stickers/).")
    var directory: String?

    /// Loads and checks a package by name (or folder path); every problem is reported at once.
    func load(_ sticker: String, expressions: [String] = defaultExpressionNames) throws -> StickerPackage {
        let library = try StickerLibrary.locate(explicit: directory)
        return try StickerLoader(expressions: expressions).load(directory: try library.path(of: sticker))
    }
}

/// The expression names of the tracker's default rules: what sticker triggers may name.
let defaultExpressionNames = ExpressionSettings.defaultRules.map(\.analyser.name)

/// The sticker names with a built-in meaning rather than a package.
enum BuiltInLook: String, CaseIterable {
    case off = "none", landmarks
}
