import ArgumentParser
import Logging
import StickerKit

struct Stickers: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List and check sticker packages.",
        subcommands: [List.self, Validate.self]
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the sticker packages with their items and triggers; each one is loaded and checked.")

        @OptionGroup var folder: StickerFolderOption

        func run() throws {
            let logger = Logger(label: "facerelay")
            try exitingOnFailure(logger) {
                let library = try StickerLibrary.locate(explicit: folder.directory)
                let loader = StickerLoader(expressions: defaultExpressionNames)
                print("stickers in \(library.directory):")
                for name in try library.packageNames() {
                    do {
                        let package = try loader.load(directory: library.directory + "/" + name)
                        let items = package.items.map { item in
                            let frames = item.frames.count > 1 ? " \(item.frames.count)f@\(Int(item.fps))" : ""
                            let trigger = item.begin == .always ? "" : " on \(item.begin)"
                            return item.id + frames + trigger + (item.follow3D ? " 3D" : "")
                        }
                        print("  \(padded(name)) \(package.title): \(items.joined(separator: ", "))")
                    } catch let error as StickerLoadError {
                        print("  \(padded(name)) INVALID, \(error.problems.count) problem(s): facerelay stickers validate \(library.directory)/\(name)")
                    }
                }
            }
        }
    }

    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check sticker package folders; print every problem with its file and field.",
            discussion: "Exit status: 0 when every package is valid, 1 otherwise."
        )

        @Argument(help: "Sticker package folders (each holding a sticker.json).")
        var directories: [String]

        func run() throws {
            let logger = Logger(label: "facerelay")
            var invalid = 0
            try exitingOnFailure(logger) {
                let loader = StickerLoader(expressions: defaultExpressionNames)
                for directory in directories {
                    do {
                        let package = try loader.load(directory: directory)
                        let frames = package.items.map(\.frames.count).reduce(0, +)
                        print("\(directory): valid, \(package.items.count) item(s), \(frames) frame(s)")
                    } catch {
                        invalid += 1
                        print("\(error)")
                    }
                }
            }
            if invalid > 0 { throw ExitCode(1) }
        }
    }
}

private func padded(_ name: String, to width: Int = 14) -> String {
    name + String(repeating: " ", count: max(1, width - name.count))
}
