import Compositor
import FaceStage
import FaceTracking
import Foundation
import RelayServer
import StickerKit
import Testing

@Suite struct StickerCatalogTests {
    /// Renderers are made when a stream first asks, not at load: every stream wearing a sticker must
    /// still draw from one renderer (one copy of its layers), and a reload must reach new streams.
    @Test func streamsShareOneRendererAndAReloadGivesNewStreamsTheNewPackage() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("catalog-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for name in ["moustache", "crown"] {
            try FileManager.default.copyItem(atPath: Package.root + "/Stickers/" + name, toPath: folder + "/" + name)
        }
        let catalog = StickerCatalog(library: StickerLibrary(directory: folder),
                                     loader: StickerLoader(expressions: ExpressionSettings.defaultRules.map(\.analyser.name)))
        try catalog.reload()

        let first = try renderer(catalog, "moustache"), second = try renderer(catalog, "moustache")
        #expect(first === second, "two streams wearing one sticker got two renderers")
        #expect(try renderer(catalog, "crown") !== first)

        try catalog.reload()
        let afterReload = try renderer(catalog, "moustache")
        #expect(afterReload !== first, "a stream started after the reload got the package as it was before")
        #expect(try renderer(catalog, "moustache") === afterReload)
    }

    private func renderer(_ catalog: StickerCatalog, _ name: String) throws -> StickerRenderer {
        guard case .sticker(let renderer) = try catalog.look(named: name) else { throw TestFailure("\(name) is not a sticker") }
        return renderer
    }
}
