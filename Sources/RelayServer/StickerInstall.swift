import FoundationEssentials
import Glibc
import StickerKit

extension StickerCatalog {
    /// Writes an uploaded package into the stickers folder and loads it, or refuses it whole.
    ///
    /// The files go to a hidden folder beside the packages (same file system; `packageNames` skips
    /// hidden folders), which the loader checks exactly as `stickers validate` does; only a package
    /// that loads is moved into place, by renames, so the folder holds the old package or the new
    /// one, never a mix, and nothing half-written is ever left behind or loaded. Reloads take the
    /// same lock, so none runs between the package going aside and the new one arriving.
    public func install(_ upload: StickerUpload) throws(UploadError) -> (package: StickerPackage, replaced: Bool) {
        try installing.withLock { _ throws(UploadError) in
            let target = library.directory + "/" + upload.name
            let exists = FileManager.default.fileExists(atPath: target)
            if exists, !upload.replace {
                throw UploadError(.exists, "a sticker named '\(upload.name)' exists; send replace=1 to overwrite it, or choose another name")
            }
            let staging = library.directory + "/.upload-" + upload.name + "-" + UUID().uuidString
            defer { Self.removeTree(staging) }
            do {
                try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
                for file in upload.files {
                    guard FileManager.default.createFile(atPath: staging + "/" + file.name, contents: Data(file.bytes)) else {
                        throw UploadError(.cannotWrite, "cannot write \(file.name) into the stickers folder \(library.directory); check its permissions and free space")
                    }
                }
            } catch let error as UploadError {
                throw error
            } catch {
                throw UploadError(.cannotWrite, "cannot write into the stickers folder \(library.directory) (\(error)); check its permissions and free space")
            }
            do {
                _ = try loader.load(directory: staging)
            } catch let error as StickerLoadError {
                let problems = error.problems.map { problem in
                    StickerProblem(file: problem.file.replacingOccurrences(of: staging + "/", with: ""), field: problem.field,
                                   message: problem.message.replacingOccurrences(of: staging, with: upload.name))
                }
                throw UploadError(.invalidSticker, "the package does not validate (\(problems.count) problem\(problems.count == 1 ? "" : "s")); nothing was written", problems: problems)
            } catch {
                throw UploadError(.invalidSticker, "the package does not validate: \(error)")
            }
            // The package it replaces goes aside first and is removed once the new one is in place.
            let replaced = library.directory + "/.replaced-" + upload.name + "-" + UUID().uuidString
            defer { Self.removeTree(replaced) }
            if exists, rename(target, replaced) != 0 {
                throw UploadError(.cannotWrite, "cannot move the package \(target) aside: \(String(cString: strerror(errno)))")
            }
            guard rename(staging, target) == 0 else {
                let reason = String(cString: strerror(errno))
                if exists { _ = rename(replaced, target) }
                throw UploadError(.cannotWrite, "cannot move the package into place as \(target): \(reason)")
            }
            do {
                return (try loadOne(upload.name), exists)
            } catch {
                throw UploadError(.invalidSticker, "the package was written but does not load: \(error)")
            }
        }
    }

    static func removeTree(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }
}
