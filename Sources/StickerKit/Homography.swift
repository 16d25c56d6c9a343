#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A plane-to-plane projective map, row-major 3x3: (x, y) goes to
/// ((a x + b y + c) / w, (d x + e y + f) / w) with w = g x + h y + i. Affine when g = h = 0.
public struct Homography: Sendable, Equatable {
    public var a, b, c, d, e, f, g, h, i: Double

    public init(_ a: Double, _ b: Double, _ c: Double, _ d: Double, _ e: Double, _ f: Double,
                _ g: Double = 0, _ h: Double = 0, _ i: Double = 1) {
        (self.a, self.b, self.c, self.d, self.e, self.f, self.g, self.h, self.i) = (a, b, c, d, e, f, g, h, i)
    }

    public static let identity = Homography(1, 0, 0, 0, 1, 0)

    public static func translation(_ x: Double, _ y: Double) -> Homography { Homography(1, 0, x, 0, 1, y) }
    public static func scale(_ x: Double, _ y: Double) -> Homography { Homography(x, 0, 0, 0, y, 0) }
    public static func rotation(_ radians: Double) -> Homography {
        let c = cos(radians), s = sin(radians)
        return Homography(c, -s, 0, s, c, 0)
    }

    public var isAffine: Bool { g == 0 && h == 0 }

    /// The point `(x, y)` maps to; nil when it maps to infinity or behind the viewer.
    public func apply(_ x: Double, _ y: Double) -> (x: Double, y: Double)? {
        let w = g * x + h * y + i
        guard w > 1e-9 else { return nil }
        return ((a * x + b * y + c) / w, (d * x + e * y + f) / w)
    }

    /// `self` after `other`: first `other`, then `self`.
    public static func * (m: Homography, n: Homography) -> Homography {
        Homography(
            m.a * n.a + m.b * n.d + m.c * n.g, m.a * n.b + m.b * n.e + m.c * n.h, m.a * n.c + m.b * n.f + m.c * n.i,
            m.d * n.a + m.e * n.d + m.f * n.g, m.d * n.b + m.e * n.e + m.f * n.h, m.d * n.c + m.e * n.f + m.f * n.i,
            m.g * n.a + m.h * n.d + m.i * n.g, m.g * n.b + m.h * n.e + m.i * n.h, m.g * n.c + m.h * n.f + m.i * n.i)
    }

    /// The inverse map, scaled so that `i` is positive; nil when the map is singular.
    public var inverse: Homography? {
        let ca = e * i - f * h, cb = -(d * i - f * g), cc = d * h - e * g
        let determinant = a * ca + b * cb + c * cc
        guard abs(determinant) > 1e-12 else { return nil }
        let r = 1 / determinant
        return Homography(
            ca * r, -(b * i - c * h) * r, (b * f - c * e) * r,
            cb * r, (a * i - c * g) * r, -(a * f - c * d) * r,
            cc * r, -(a * h - b * g) * r, (a * e - b * d) * r)
    }
}
