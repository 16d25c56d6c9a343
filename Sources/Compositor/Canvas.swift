import FrameKit

/// A colour in BT.601 limited-range YUV, the encoding of the frames.
public struct YUVColour: Sendable, Equatable {
    public var y: UInt8, u: UInt8, v: UInt8

    public init(y: UInt8, u: UInt8, v: UInt8) {
        self.y = y
        self.u = u
        self.v = v
    }

    public init(red: Int, green: Int, blue: Int) {
        func clamp(_ value: Int) -> UInt8 { UInt8(min(255, max(0, value))) }
        y = clamp((66 * red + 129 * green + 25 * blue + 128) >> 8 + 16)
        u = clamp((-38 * red - 74 * green + 112 * blue + 128) >> 8 + 128)
        v = clamp((112 * red - 94 * green - 18 * blue + 128) >> 8 + 128)
    }

    public static let white = YUVColour(red: 255, green: 255, blue: 255)
    public static let black = YUVColour(red: 0, green: 0, blue: 0)
    public static let green = YUVColour(red: 40, green: 230, blue: 60)
    public static let red = YUVColour(red: 235, green: 40, blue: 40)
    public static let blue = YUVColour(red: 50, green: 110, blue: 255)
    public static let yellow = YUVColour(red: 255, green: 220, blue: 0)
    public static let grey = YUVColour(red: 110, green: 110, blue: 110)
}

/// Opaque drawing on a writable I420 or NV12 frame, clipped to the frame: the shapes of the
/// tracking overlay. Chroma is written once per 2x2 block, so shapes finer than two pixels keep
/// the colour of what is under them and only change brightness.
public struct Canvas {
    public let frame: VideoFrame

    public init(_ frame: VideoFrame) { self.frame = frame }

    @inline(__always)
    public func plot(_ x: Int, _ y: Int, _ colour: YUVColour) {
        guard x >= 0, y >= 0, x < frame.width, y < frame.height else { return }
        frame.luma[x, y] = colour.y
        guard x & 1 == 0, y & 1 == 0 else { return }
        switch frame.format {
        case .i420:
            frame.chromaU[x / 2, y / 2] = colour.u
            frame.chromaV[x / 2, y / 2] = colour.v
        case .nv12:
            frame.chromaU[x & ~1, y / 2] = colour.u
            frame.chromaU[(x & ~1) + 1, y / 2] = colour.v
        }
    }

    public func fillRectangle(x: Int, y: Int, width: Int, height: Int, _ colour: YUVColour) {
        let left = max(0, x), top = max(0, y)
        let right = min(frame.width, x + width), bottom = min(frame.height, y + height)
        guard left < right, top < bottom else { return }
        for row in top..<bottom {
            for column in left..<right { plot(column, row, colour) }
        }
    }

    public func strokeRectangle(x: Int, y: Int, width: Int, height: Int, thickness: Int = 2, _ colour: YUVColour) {
        fillRectangle(x: x, y: y, width: width, height: thickness, colour)
        fillRectangle(x: x, y: y + height - thickness, width: width, height: thickness, colour)
        fillRectangle(x: x, y: y, width: thickness, height: height, colour)
        fillRectangle(x: x + width - thickness, y: y, width: thickness, height: height, colour)
    }

    public func disc(x: Float, y: Float, radius: Float, _ colour: YUVColour) {
        let r = Int(radius.rounded(.up))
        let cx = Int(x.rounded()), cy = Int(y.rounded())
        for dy in -r...r {
            for dx in -r...r where Float(dx * dx + dy * dy) <= radius * radius { plot(cx + dx, cy + dy, colour) }
        }
    }

    public func line(from a: (x: Float, y: Float), to b: (x: Float, y: Float), thickness: Float = 1, _ colour: YUVColour) {
        let steps = Int(max(abs(b.x - a.x), abs(b.y - a.y)).rounded(.up))
        guard steps > 0 else { return disc(x: a.x, y: a.y, radius: thickness, colour) }
        for step in 0...steps {
            let t = Float(step) / Float(steps)
            disc(x: a.x + (b.x - a.x) * t, y: a.y + (b.y - a.y) * t, radius: thickness, colour)
        }
    }

    /// Digits and a few letters from a 3x5 pixel font, each font pixel `scale` pixels wide.
    public func text(_ string: String, x: Int, y: Int, scale: Int = 3, _ colour: YUVColour) {
        var left = x
        for character in string {
            let rows = Self.glyph(character)
            for (row, bits) in rows.enumerated() {
                for column in 0..<3 where bits & (4 >> column) != 0 {
                    fillRectangle(x: left + column * scale, y: y + row * scale, width: scale, height: scale, colour)
                }
            }
            left += 4 * scale
        }
    }

    static func glyph(_ character: Character) -> [UInt8] {
        switch character {
        case "0": [7, 5, 5, 5, 7]
        case "1": [2, 6, 2, 2, 7]
        case "2": [7, 1, 7, 4, 7]
        case "3": [7, 1, 7, 1, 7]
        case "4": [5, 5, 7, 1, 1]
        case "5": [7, 4, 7, 1, 7]
        case "6": [7, 4, 7, 5, 7]
        case "7": [7, 1, 1, 1, 1]
        case "8": [7, 5, 7, 5, 7]
        case "9": [7, 5, 7, 1, 7]
        case "#": [5, 7, 5, 7, 5]
        case "-": [0, 0, 7, 0, 0]
        default: [0, 0, 0, 0, 0]
        }
    }
}
