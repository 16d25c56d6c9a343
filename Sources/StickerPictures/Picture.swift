import CStickerImages
import FrameKit
import Glibc

/// What is wrong with a picture file, as the rest of a sentence that starts with its name
/// ("is 4000x4000; each side must be 1...2048 px").
public struct PictureError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// The picture formats a sticker frame may be in, told apart by their first bytes.
public enum PictureFormat: String, Sendable, CaseIterable {
    case png, gif, webp, svg

    /// The file name endings of each format (APNG is a PNG, often named .apng).
    public var fileExtensions: [String] {
        switch self {
        case .png: ["png", "apng"]
        case .gif: ["gif"]
        case .webp: ["webp"]
        case .svg: ["svg"]
        }
    }

    public static func named(_ fileName: String) -> PictureFormat? {
        guard let dot = fileName.lastIndex(of: ".") else { return nil }
        let ending = fileName[fileName.index(after: dot)...].lowercased()
        return allCases.first { $0.fileExtensions.contains(ending) }
    }

    /// The format the bytes are in, nil when none: an SVG is text whose first tag is `<svg`
    /// (after an XML declaration, comments or a DOCTYPE).
    public static func of(_ bytes: [UInt8]) -> PictureFormat? {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if bytes.starts(with: Array("GIF87a".utf8)) || bytes.starts(with: Array("GIF89a".utf8)) { return .gif }
        if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) { return .webp }
        return SVGCheck.startsAsSVG(bytes) ? .svg : nil
    }
}

/// How large a picture may be. Checked before its pixels are allocated: a small file that claims
/// a huge canvas or thousands of frames (a decompression bomb) is refused by what it declares.
public struct PictureLimits: Sendable, Equatable {
    public var maximumSide = 2048
    public var maximumFrames = 240
    /// Canvas pixels times frames: 16 M is 64 MB of RGBA.
    public var maximumPixels = 16 * 1024 * 1024
    public var maximumFileBytes = 16 * 1024 * 1024

    public init() {}
}

/// A decoded sticker picture: its frames, all one size, and how long each shows.
public struct Picture: Sendable {
    public let format: PictureFormat
    public let frames: [RGBAImage]
    /// Seconds each frame shows, for an animated file (GIF, APNG, WebP); nil for a still picture.
    public let delays: [Double]?
    /// An SVG document, which can be drawn again at another size.
    public let drawing: VectorDrawing?
}

/// Reads sticker pictures within limits.
public struct PictureDecoder: Sendable {
    public let limits: PictureLimits

    public init(limits: PictureLimits = PictureLimits()) { self.limits = limits }

    public func decode(file path: String) throws(PictureError) -> Picture {
        try decode(bytes: try Self.read(path, limit: limits.maximumFileBytes))
    }

    public func decode(bytes: [UInt8]) throws(PictureError) -> Picture {
        guard let format = PictureFormat.of(bytes) else {
            throw PictureError("is not a picture FaceRelay reads: save it as PNG, APNG, GIF, WebP or SVG")
        }
        if format == .svg {
            let drawing = try VectorDrawing(bytes, limits: limits)
            return Picture(format: .svg, frames: [try drawing.render(width: drawing.width, height: drawing.height)], delays: nil, drawing: drawing)
        }
        var frames = si_frames()
        var error = [CChar](repeating: 0, count: Int(SI_ERROR_SIZE))
        let cLimits = si_limits(max_side: Int32(limits.maximumSide), max_frames: Int32(limits.maximumFrames),
                                max_pixels: Int64(limits.maximumPixels))
        let status = bytes.withUnsafeBufferPointer { data in
            switch format {
            case .png: si_decode_png(data.baseAddress, data.count, cLimits, &frames, &error)
            case .gif: si_decode_gif(data.baseAddress, data.count, cLimits, &frames, &error)
            case .webp: si_decode_webp(data.baseAddress, data.count, cLimits, &frames, &error)
            case .svg: Int32(-1)
            }
        }
        guard status == 0 else { throw PictureError(Self.message(error)) }
        defer { si_frames_free(&frames) }
        let images = Self.images(frames)
        let delays = frames.count > 1 ? (0..<Int(frames.count)).map { Double(frames.delays_ms[$0]) / 1000 } : nil
        return Picture(format: format, frames: images, delays: delays, drawing: nil)
    }

    static func images(_ frames: si_frames) -> [RGBAImage] {
        let width = Int(frames.width), height = Int(frames.height), bytes = width * height * 4
        return (0..<Int(frames.count)).map { index in
            RGBAImage(width: width, height: height,
                      pixels: Array(UnsafeBufferPointer(start: frames.pixels + index * bytes, count: bytes)))
        }
    }

    static func message(_ error: [CChar]) -> String {
        String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The whole file, refused past `limit` bytes before it is read.
    static func read(_ path: String, limit: Int) throws(PictureError) -> [UInt8] {
        guard let stream = fopen(path, "rb") else { throw PictureError("cannot be read: \(String(cString: strerror(errno)))") }
        defer { fclose(stream) }
        var status = stat()
        guard fstat(fileno(stream), &status) == 0 else { throw PictureError("cannot be read: \(String(cString: strerror(errno)))") }
        guard status.st_mode & S_IFMT == S_IFREG else { throw PictureError("is not a regular file") }
        guard status.st_size <= limit else {
            throw PictureError("is \(status.st_size / 1024) KiB; a picture may be at most \(limit / 1024 / 1024) MiB")
        }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        let count = bytes.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, stream) }
        guard count == bytes.count else { throw PictureError("cannot be read whole (\(count) of \(bytes.count) bytes)") }
        return bytes
    }
}
