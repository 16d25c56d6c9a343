/// A decoded picture with straight (not premultiplied) alpha: `width * height` pixels of red,
/// green, blue and alpha bytes, row after row. Sticker frames arrive in this form and are turned
/// into the frame's YUV once, when a sticker is loaded.
public struct RGBAImage: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public let pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width > 0 && height > 0 && pixels.count == width * height * 4, "RGBA image of \(width)x\(height) needs \(width * height * 4) bytes, got \(pixels.count)")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// A picture of one colour.
    public init(width: Int, height: Int, red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8) {
        self.init(width: width, height: height, pixels: Array([red, green, blue, alpha].lazy.cycled(times: width * height)))
    }

    /// True when every pixel is fully transparent.
    public var isBlank: Bool {
        stride(from: 3, to: pixels.count, by: 4).allSatisfy { pixels[$0] == 0 }
    }
}

extension Collection {
    fileprivate func cycled(times: Int) -> [Element] {
        var result: [Element] = []
        result.reserveCapacity(count * times)
        for _ in 0..<times { result.append(contentsOf: self) }
        return result
    }
}
