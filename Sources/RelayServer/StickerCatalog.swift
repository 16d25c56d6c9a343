import Compositor
import FaceStage
import MediaBridge
import StickerKit
import Synchronization

/// Every sticker package of the stickers folder, loaded once and shared: each stream showing a
/// sticker draws from the same renderer (its layers are read-only after load).
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
    private let renderers = Mutex<[String: StickerRenderer]>([:])
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
        var loaded: [String: StickerRenderer] = [:]
        var failed: [Problem] = []
        for name in try library.packageNames() {
            do {
                loaded[name] = StickerRenderer(package: try loader.load(directory: library.directory + "/" + name))
            } catch {
                failed.append(Problem(name: name, error: error))
            }
        }
        let names = renderers.withLock { renderers in
            for (name, renderer) in loaded { renderers[name] = renderer }
            return renderers.keys.sorted()
        }
        broken.withLock { broken in
            broken = Dictionary(uniqueKeysWithValues: failed.map { ($0.name, $0.error) })
        }
        return ReloadReport(loaded: names, failed: failed)
    }

    /// Loads one package of the folder again and puts it in place of its previous version.
    @discardableResult
    public func loadOne(_ name: String) throws(StickerLoadError) -> StickerPackage {
        let renderer = StickerRenderer(package: try loader.load(directory: library.directory + "/" + name))
        renderers.withLock { $0[name] = renderer }
        broken.withLock { _ = $0.removeValue(forKey: name) }
        return renderer.package
    }

    /// The packages loaded, sorted by name.
    public var packages: [StickerPackage] {
        renderers.withLock { $0.values.map(\.package) }.sorted { $0.name < $1.name }
    }

    /// The look for a sticker name: a package name, `none` or `landmarks`. Names are plain package
    /// names: a path cannot reach outside the stickers folder.
    public func look(named name: String) throws(StickerChoiceError) -> FaceLook {
        switch name {
        case "none": return .none
        case "landmarks": return .landmarks
        default:
            guard Self.isPlainName(name) else { throw .notAName(name) }
            guard let renderer = renderers.withLock({ $0[name] }) else {
                if let problem = broken.withLock({ $0[name] }) { throw .broken(name, problem) }
                throw .unknown(name, available: ["none", "landmarks"] + renderers.withLock { $0.keys.sorted() })
            }
            return .sticker(renderer)
        }
    }

    /// The preview picture of a loaded package, for the dashboard's sticker picker.
    public func previewPath(named name: String) -> String? {
        guard Self.isPlainName(name), renderers.withLock({ $0[name] }) != nil else { return nil }
        return library.directory + "/" + name + "/preview.png"
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
