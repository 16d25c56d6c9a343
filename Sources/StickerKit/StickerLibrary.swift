import FoundationEssentials

/// The folder of sticker packages (`Stickers/`): one sub-folder with a `sticker.json` per sticker.
public struct StickerLibrary: Sendable {
    public let directory: String

    public init(directory: String) { self.directory = directory }

    /// `explicit`, else $FACERELAY_STICKERS, else the first that holds packages of an installed
    /// share folder, a `Stickers/` beside or above the executable (a source checkout), and the
    /// working directory's.
    public static func locate(explicit: String? = nil) throws(StickerLibraryError) -> StickerLibrary {
        if let chosen = explicit ?? ProcessInfo.processInfo.environment["FACERELAY_STICKERS"] {
            // An operator's choice, by flag or by environment, is never silently replaced by
            // another folder: serving the shipped stickers instead of theirs must not look normal.
            guard FileManager.default.fileExists(atPath: chosen) else { throw .directoryNotFound(searched: [chosen]) }
            return StickerLibrary(directory: chosen)
        }
        var candidates: [String] = []
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        candidates.append(directory.appendingPathComponent("../share/facerelay/Stickers").standardized.path)
        for _ in 0..<5 {
            candidates.append(directory.appendingPathComponent("Stickers").path)
            directory = directory.deletingLastPathComponent()
        }
        candidates.append(FileManager.default.currentDirectoryPath + "/Stickers")
        // A candidate that cannot be read is passed over like an empty one: the search is for a
        // folder that works, and when none does the error lists every place it looked.
        guard let found = candidates.first(where: { (try? StickerLibrary(directory: $0).packageNames())?.isEmpty == false }) else {
            throw .directoryNotFound(searched: candidates)
        }
        return StickerLibrary(directory: found)
    }

    /// Names of the packages in the folder, sorted. A folder that cannot be read is an error, not
    /// an empty folder: serving without the stickers the operator installed must not look normal.
    public func packageNames() throws(StickerLibraryError) -> [String] {
        let entries: [String]
        do {
            entries = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw .unreadable(directory: directory, reason: error)
        }
        // A hidden folder is an upload being written or replaced, never a package.
        return entries.filter { !$0.hasPrefix(".") && FileManager.default.fileExists(atPath: directory + "/" + $0 + "/" + StickerLoader.fileName) }.sorted()
    }

    /// The folder of a sticker given by name (a package of this library) or by path (any folder
    /// holding a `sticker.json`).
    public func path(of sticker: String) throws(StickerLibraryError) -> String {
        if sticker.contains("/") {
            guard FileManager.default.fileExists(atPath: sticker + "/" + StickerLoader.fileName) else {
                throw .notAStickerFolder(sticker)
            }
            return sticker
        }
        let names = try packageNames()
        guard names.contains(sticker) else { throw .notFound(sticker, available: names, directory: directory) }
        return directory + "/" + sticker
    }
}

public enum StickerLibraryError: Error, Sendable, CustomStringConvertible {
    case directoryNotFound(searched: [String])
    /// A package name this library does not have.
    case notFound(String, available: [String], directory: String)
    /// A path given for a sticker that has no sticker.json.
    case notAStickerFolder(String)
    case unreadable(directory: String, reason: any Error)

    public var description: String {
        switch self {
        case .directoryNotFound(let searched):
            "no sticker folder found (looked in \(searched.joined(separator: ", "))); give one with --stickers DIR or $FACERELAY_STICKERS"
        case .notFound(let name, let available, let directory):
            "unknown sticker '\(name)' in \(directory); available: \((["landmarks", "none"] + available).joined(separator: ", "))"
        case .notAStickerFolder(let path):
            "\(path) is not a sticker folder: it has no \(StickerLoader.fileName)"
        case .unreadable(let directory, let reason):
            "cannot read the sticker folder \(directory) (\(reason)); it must be a folder this user can read: fix it or give another with --stickers DIR"
        }
    }
}
