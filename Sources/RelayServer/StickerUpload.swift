import FoundationEssentials
import MultipartKit
import NIOCore
import StickerKit
import StickerPictures

/// A sticker package as the studio (or a script) sends it to `POST /api/stickers`: one
/// `multipart/form-data` request with a `name` field, an optional `replace=1`, and one file part
/// per package file, `sticker.json` among them.
public struct StickerUpload: Sendable {
    public static let maximumRequestBytes = 64 * 1024 * 1024
    public static let maximumFiles = 250
    /// What a package may hold besides its pictures.
    static let otherFiles: Set<String> = [StickerLoader.fileName, "preview.png"]

    public let name: String
    public let replace: Bool
    /// File name and content, in the order sent.
    public let files: [(name: String, bytes: [UInt8])]

    /// Reads the request's parts; every refusal says what to change.
    public static func parse(_ body: ByteBuffer, contentType: String?) throws(UploadError) -> StickerUpload {
        guard let contentType, contentType.lowercased().hasPrefix("multipart/form-data"), let boundary = parameter("boundary", of: contentType) else {
            throw UploadError(.notMultipart, "send the package as multipart/form-data (a name field and one file part per package file)")
        }
        let collector = PartCollector()
        let parser = MultipartParser(boundary: boundary)
        parser.onHeader = { field, value in collector.headers.append((field.lowercased(), value)) }
        parser.onBody = { buffer in collector.body.writeBuffer(&buffer) }
        parser.onPartComplete = { collector.complete() }
        do {
            try parser.execute(body)
        } catch {
            throw UploadError(.notMultipart, "the multipart body does not parse (\(error)); send it as a browser's FormData does")
        }
        var name: String?
        var replace = false
        var files: [(name: String, bytes: [UInt8])] = []
        for part in collector.parts {
            guard let field = part.disposition["name"] else {
                throw UploadError(.badFile, "a part has no name in its Content-Disposition")
            }
            guard let fileName = part.disposition["filename"] else {
                switch field {
                case "name": name = String(decoding: part.bytes, as: UTF8.self)
                case "replace": replace = ["1", "true", "yes"].contains(String(decoding: part.bytes, as: UTF8.self))
                default: throw UploadError(.badFile, "unknown field '\(field.prefix(40))'; send name, replace and files")
                }
                continue
            }
            guard isPlainFileName(fileName) else {
                throw UploadError(.badFile, "'\(fileName.prefix(80))' is not a plain file name: no folders, no leading dot")
            }
            guard otherFiles.contains(fileName) || PictureFormat.named(fileName) != nil else {
                throw UploadError(.badFile, "'\(fileName)' is neither sticker.json, preview.png nor a PNG, APNG, GIF, WebP or SVG picture")
            }
            guard !files.contains(where: { $0.name == fileName }) else { throw UploadError(.badFile, "'\(fileName)' is sent twice") }
            files.append((fileName, part.bytes))
        }
        guard let name, !name.isEmpty else { throw UploadError(.badName, "the name field is missing: the package's folder name") }
        guard StickerCatalog.isPlainName(name), !["none", "landmarks"].contains(name) else {
            throw UploadError(.badName, "'\(name.prefix(80))' cannot be a sticker name: use letters, digits, - _ . (up to 64, not starting with a dot; not none or landmarks)")
        }
        guard files.count <= maximumFiles else { throw UploadError(.badFile, "\(files.count) files; a package may have at most \(maximumFiles)") }
        guard files.contains(where: { $0.name == StickerLoader.fileName }) else {
            throw UploadError(.noStickerJSON, "the package has no sticker.json; send it as a file part named sticker.json")
        }
        return StickerUpload(name: name, replace: replace, files: files)
    }

    static func isPlainFileName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 128 && !name.hasPrefix(".") && !name.contains("/") && !name.contains("\\")
            && !name.unicodeScalars.contains { $0.value < 0x20 }
    }

    /// `key=value` (or `key="value"`) of a header value such as `multipart/form-data; boundary=X`.
    static func parameter(_ key: String, of value: String) -> String? {
        for item in value.split(separator: ";").dropFirst() {
            let pair = item.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmed.lowercased() == key else { continue }
            var text = pair[1].trimmed
            if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 { text = String(text.dropFirst().dropLast()) }
            return text
        }
        return nil
    }

    /// The parts as MultipartKit's parser hands them over, header by header and body piece by piece.
    private final class PartCollector {
        struct Part {
            var disposition: [String: String]
            var bytes: [UInt8]
        }

        var headers: [(String, String)] = []
        var body = ByteBuffer()
        var parts: [Part] = []

        func complete() {
            var disposition: [String: String] = [:]
            if let value = headers.first(where: { $0.0 == "content-disposition" })?.1 {
                for key in ["name", "filename"] { disposition[key] = StickerUpload.parameter(key, of: value) }
            }
            parts.append(Part(disposition: disposition, bytes: body.readBytes(length: body.readableBytes) ?? []))
            headers = []
            body.clear()
        }
    }
}

/// Why an upload was refused: a code for scripts, a sentence for people, and the package's
/// problems when it does not validate.
public struct UploadError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case notMultipart = "not-multipart"
        case tooLarge = "too-large"
        case badName = "bad-name"
        case badFile = "bad-file"
        case noStickerJSON = "no-sticker-json"
        case exists
        case invalidSticker = "invalid-sticker"
        case cannotWrite = "cannot-write"
    }

    public let code: Code
    public let message: String
    public let problems: [StickerProblem]

    public init(_ code: Code, _ message: String, problems: [StickerProblem] = []) {
        self.code = code
        self.message = message
        self.problems = problems
    }

    public var description: String { message }
}

extension Substring {
    fileprivate var trimmed: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
