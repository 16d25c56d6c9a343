import Compositor
import FaceStage
import MediaBridge
import StickerKit
import Synchronization

/// Every sticker package of the stickers folder, loaded once and shared: each stream showing a
/// sticker draws from the same renderer (its layers are read-only once made).
public final class StickerCatalog: Sendable {
    public struct Problem: Sendable {
        public let name: String
        public let error: StickerLoadError

        /// Every problem of the package, with its file and field.
        public var message: String { error.description }
    }

    public struct ReloadReport: Sendable {
        /// Packages now available, sorted.
        public let loaded: [String]
        /// Packages that failed to load; a working copy loaded before is kept for each.
        public let failed: [Problem]
    }

    public let library: StickerLibrary
    let loader: StickerLoader
    /// Held while an upload is written and swapped in: one package change at a time.
    let installing = Mutex(())
    private let entries = Mutex<[String: Entry]>([:])
    /// Why each package that failed its last load failed.
    private let broken = Mutex<[String: StickerLoadError]>([:])

    public init(library: StickerLibrary, loader: StickerLoader) {
        self.library = library
        self.loader = loader
    }

    /// Scans the folder and loads every package. A package that fails to load never replaces a
    /// working one: streams showing it keep it; nor does a folder that cannot be read.
    @discardableResult
    public func reload() throws(StickerLibraryError) -> ReloadReport {
        try installing.withLock { _ throws(StickerLibraryError) in try reloadAll() }
    }

    private func reloadAll() throws(StickerLibraryError) -> ReloadReport {
        var loaded: [String: Entry] = [:]
        var failed: [Problem] = []
        for name in try library.packageNames() {
            do {
                loaded[name] = Entry(try loader.load(directory: library.directory + "/" + name))
            } catch {
                failed.append(Problem(name: name, error: error))
            }
        }
        let names = entries.withLock { entries in
            entries.merge(loaded) { _, new in new }
            return entries.keys.sorted()
        }
        broken.withLock { broken in
            broken = Dictionary(uniqueKeysWithValues: failed.map { ($0.name, $0.error) })
        }
        return ReloadReport(loaded: names, failed: failed)
    }

    /// Loads one package of the folder again and puts it in place of its previous version.
    @discardableResult
    public func loadOne(_ name: String) throws(StickerLoadError) -> StickerPackage {
        let entry = Entry(try loader.load(directory: library.directory + "/" + name))
        entries.withLock { $0[name] = entry }
        broken.withLock { _ = $0.removeValue(forKey: name) }
        return entry.package
    }

    /// The packages loaded, sorted by name.
    public var packages: [StickerPackage] {
        entries.withLock { $0.values.map(\.package) }.sorted { $0.name < $1.name }
    }

    /// The look for a sticker name: a package name, `none` or `landmarks`. Names are plain package
    /// names: a path cannot reach outside the stickers folder. A package's renderer is made on the
    /// first call that names it (a fraction of a second for an animated vector sticker), not here.
    /// Blocks the calling thread meanwhile.
    public func look(named name: String) throws(StickerChoiceError) -> FaceLook {
        switch name {
        case "none": return .none
        case "landmarks": return .landmarks
        default:
            guard Self.isPlainName(name) else { throw .notAName(name) }
            guard let entry = entries.withLock({ $0[name] }) else {
                if let problem = broken.withLock({ $0[name] }) { throw .broken(name, problem) }
                throw .unknown(name, available: ["none", "landmarks"] + entries.withLock { $0.keys.sorted() })
            }
            return .sticker(entry.renderer())
        }
    }

    /// The preview picture of a loaded package, for the dashboard's sticker picker.
    public func previewPath(named name: String) -> String? {
        guard Self.isPlainName(name), entries.withLock({ $0[name] }) != nil else { return nil }
        return library.directory + "/" + name + "/preview.png"
    }

    /// A loaded package and, once a stream has asked for it, its renderer. Making the renderer
    /// (every vector frame drawn again at four smaller sizes, every layer converted to YUV) costs
    /// several times the load: made for every package, it held serve's start and each reload for
    /// seconds, and the memory of stickers nobody wears.
    private final class Entry: Sendable {
        let package: StickerPackage
        private let made = Mutex<StickerRenderer?>(nil)

        init(_ package: StickerPackage) { self.package = package }

        /// The renderer, made on the first call; a second caller meanwhile waits for that one.
        func renderer() -> StickerRenderer {
            made.withLock { made in
                if let made { return made }
                let renderer = StickerRenderer(package: package)
                made = renderer
                return renderer
            }
        }
    }

    static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64 && !name.hasPrefix(".")
            && name.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0) }
    }
}

public enum StickerChoiceError: Error, Sendable, CustomStringConvertible {
    case notAName(String)
    case unknown(String, available: [String])
    case broken(String, StickerLoadError)

    public var description: String {
        switch self {
        case .notAName(let name):
            "'\(name)' is not a sticker name: use a package name from the stickers folder (letters, digits, - _ .), not a path"
        case .unknown(let name, let available):
            "unknown sticker '\(name)'; available: \(available.joined(separator: ", ")) (after adding a package, send reload-stickers)"
        case .broken(let name, let problem):
            "sticker '\(name)' does not load, so it cannot be shown: \(problem) (fix it, then send reload-stickers)"
        }
    }
}
