import Glibc

/// The size a PNG file declares in its header, read before the file is decoded: the decoder
/// allocates the whole picture first, so a frame claiming 30000x30000 px would cost gigabytes
/// before the loader could refuse its size.
public struct PNGHeader: Sendable, Equatable {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    /// The signature, the first chunk's length and type (IHDR), then width and height.
    static let byteCount = 24

    public let width: Int
    public let height: Int

    /// Nil when the bytes do not start like a PNG: the decoder says what is wrong with them.
    public init?(_ bytes: some Collection<UInt8>) {
        let bytes = Array(bytes.prefix(Self.byteCount))
        guard bytes.count == Self.byteCount, Array(bytes[0..<8]) == Self.signature, Array(bytes[12..<16]) == Array("IHDR".utf8) else { return nil }
        func bigEndian(_ offset: Int) -> Int { bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
        width = bigEndian(16)
        height = bigEndian(20)
    }

    /// The header of the file at `path`, nil when it cannot be read or is not a PNG header.
    public init?(file path: String) {
        guard let stream = fopen(path, "rb") else { return nil }
        defer { fclose(stream) }
        var bytes = [UInt8](repeating: 0, count: Self.byteCount)
        let count = fread(&bytes, 1, Self.byteCount, stream)
        self.init(bytes.prefix(count))
    }
}
