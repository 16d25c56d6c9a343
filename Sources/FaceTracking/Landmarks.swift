/// A point in pixels of the frame (x right, y down).
public struct Point: Sendable, Equatable {
    public var x: Float
    public var y: Float

    public init(x: Float, y: Float) {
        self.x = x
        self.y = y
    }

    public static let zero = Point(x: 0, y: 0)

    @inline(__always) public static func + (a: Point, b: Point) -> Point { Point(x: a.x + b.x, y: a.y + b.y) }
    @inline(__always) public static func - (a: Point, b: Point) -> Point { Point(x: a.x - b.x, y: a.y - b.y) }
    @inline(__always) public static func * (a: Point, s: Float) -> Point { Point(x: a.x * s, y: a.y * s) }
    @inline(__always) public func distance(to other: Point) -> Float {
        let d = self - other
        return (d.x * d.x + d.y * d.y).squareRoot()
    }
    @inline(__always) public func dot(_ other: Point) -> Float { x * other.x + y * other.y }
    @inline(__always) public func rotated(cos c: Float, sin s: Float) -> Point {
        Point(x: c * x - s * y, y: s * x + c * y)
    }
    @inline(__always) public static func midpoint(_ a: Point, _ b: Point) -> Point { (a + b) * 0.5 }
}

/// An axis-aligned box in pixels: the face box as dlib's detector draws it.
public struct FaceBox: Sendable, Equatable {
    public var x: Float
    public var y: Float
    public var width: Float
    public var height: Float

    public init(x: Float, y: Float, width: Float, height: Float) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The square of `side` centred on `centre`.
    public init(centre: Point, side: Float) {
        self.init(x: centre.x - side / 2, y: centre.y - side / 2, width: side, height: side)
    }

    public var centre: Point { Point(x: x + width / 2, y: y + height / 2) }
    public var area: Float { max(0, width) * max(0, height) }

    public func scaled(by factor: Float) -> FaceBox {
        FaceBox(x: x * factor, y: y * factor, width: width * factor, height: height * factor)
    }

    /// Intersection over union, 0 for disjoint boxes.
    public func overlap(with other: FaceBox) -> Float {
        let left = max(x, other.x), right = min(x + width, other.x + other.width)
        let top = max(y, other.y), bottom = min(y + height, other.y + other.height)
        let intersection = max(0, right - left) * max(0, bottom - top)
        let union = area + other.area - intersection
        return union > 0 ? intersection / union : 0
    }

    /// Whether `other` is of this box's size to within a pyramid step and a half: what tells a
    /// detection of a followed face from one of part of it. The detector boxes a face at the level
    /// nearest its size, half a step either way, and a fit's box wanders about that; a detection two
    /// steps smaller inside a face's box is part of it, the near half of a face turned beyond what
    /// the detector finds whole (the woman in profile turned a further 35 degrees: 151 px boxes in
    /// her 216 px face, scored 0.04-0.2). Taken for her, it restarted her fit in a box that size,
    /// shown 28-29 % off, and the search for her once she was dropped looked for a face that size.
    public func isSameSize(as other: FaceBox) -> Bool {
        let ratio = max(width, other.width) / min(width, other.width), step: Float = 6 / 5
        return ratio * ratio < step * step * step
    }
}

/// The 68 landmarks of one face in the iBUG 300-W order, stored inline (no heap).
/// "Left" and "right" are the subject's own: the subject's right eye is on the left of the image.
public typealias Landmarks = InlineArray<68, Point>

/// Indices of the iBUG 68-point scheme.
public enum Landmark {
    public static let count = 68
    public static let jaw = 0...16
    public static let chin = 8
    public static let rightBrow = 17...21
    public static let leftBrow = 22...26
    public static let noseBridgeTop = 27
    public static let noseTip = 30
    public static let rightEye = 36...41
    public static let leftEye = 42...47
    public static let rightEyeOuter = 36
    public static let rightEyeInner = 39
    public static let leftEyeInner = 42
    public static let leftEyeOuter = 45
    public static let outerLips = 48...59
    public static let innerLips = 60...67
    public static let mouthRight = 48
    public static let mouthLeft = 54
}

extension InlineArray where Element == Point, count == 68 {
    public static var zero: Landmarks { Landmarks(repeating: .zero) }

    /// Distance between the outer eye corners: the face's unit of length.
    public var eyeDistance: Float { self[Landmark.rightEyeOuter].distance(to: self[Landmark.leftEyeOuter]) }

    public var centroid: Point {
        var sum = Point.zero
        for i in 0..<68 { sum = sum + self[i] }
        return sum * (1 / 68)
    }

    /// Mean of a range of points.
    public func mean(_ range: ClosedRange<Int>) -> Point {
        var sum = Point.zero
        for i in range { sum = sum + self[i] }
        return sum * (1 / Float(range.count))
    }

    /// In-plane angle of the line from the subject's right eye to the left eye, in radians.
    public var eyeLineAngle: Float {
        let d = mean(Landmark.leftEye) - mean(Landmark.rightEye)
        return atan2f(d.y, d.x)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
