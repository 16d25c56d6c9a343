import FaceTracking

/// A drawn face in iBUG order: a jaw arc, straight brows, a nose line, six-point eyes and an
/// elliptical mouth, with the parts an expression moves as parameters. Eye distance = 2 * `size` * 0.45.
public struct SyntheticFace {
    public var centre = Point(x: 400, y: 300)
    public var size: Float = 100
    /// Eyelid gap over eye width (0.3 open, 0 shut).
    public var eyeOpenLeft: Float = 0.3
    public var eyeOpenRight: Float = 0.3
    /// Inner-lip gap over mouth width.
    public var mouthGap: Float = 0
    public var mouthWidth: Float = 0.55
    /// Brow height above the eye centres, in units of `size`.
    public var browHeight: Float = 0.18
    public var roll: Float = 0

    public init(centre: Point = Point(x: 400, y: 300), size: Float = 100) {
        self.centre = centre
        self.size = size
    }

    public var landmarks: Landmarks {
        var l = Landmarks.zero
        let s = size
        func put(_ i: Int, _ x: Float, _ y: Float) {
            let c = cosf(roll), n = sinf(roll)
            l[i] = centre + Point(x: x * s, y: y * s).rotated(cos: c, sin: n)
        }
        for i in 0...16 {
            let a = Float.pi * Float(i) / 16
            put(i, -0.8 * cosf(a), 0.1 + 0.8 * sinf(a))
        }
        // Each brow centred over its eye, as on a face.
        for i in 0..<5 { put(17 + i, -0.54 + 0.12 * Float(i), -0.2 - browHeight) }
        for i in 0..<5 { put(22 + i, 0.06 + 0.12 * Float(i), -0.2 - browHeight) }
        for i in 0..<4 { put(27 + i, 0, -0.15 + 0.1 * Float(i)) }
        for i in 0..<5 { put(31 + i, -0.12 + 0.06 * Float(i), 0.3) }
        func eye(_ first: Int, _ outer: Float, _ inner: Float, _ open: Float) {
            let width = abs(inner - outer), half = open * width / 2
            let x = { (t: Float) in outer + (inner - outer) * t }
            put(first, x(0), -0.2)
            put(first + 1, x(1.0 / 3), -0.2 - half)
            put(first + 2, x(2.0 / 3), -0.2 - half)
            put(first + 3, x(1), -0.2)
            put(first + 4, x(2.0 / 3), -0.2 + half)
            put(first + 5, x(1.0 / 3), -0.2 + half)
        }
        eye(36, -0.45, -0.15, eyeOpenRight)
        eye(42, 0.15, 0.45, eyeOpenLeft)
        let half = mouthWidth / 2
        for i in 0..<12 {
            let a = Float.pi * Float(i) / 6
            put(48 + i, -half * cosf(a), 0.5 - (0.08 + mouthGap * half) * sinf(a))
        }
        for i in 0..<8 {
            let a = Float.pi * Float(i) / 4
            put(60 + i, -half * 0.8 * cosf(a), 0.5 - mouthGap * half * 0.8 * sinf(a))
        }
        return l
    }
}

#if canImport(Glibc)
import Glibc
#endif
