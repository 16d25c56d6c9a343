/// One plane of a planar image: `height` rows of `width` bytes, `stride` bytes apart.
///
/// `@unchecked Sendable` because it is a bare pointer and its geometry, immutable: sending one shares
/// no Swift state, only the address. Who writes the bytes, and when, is up to their owner: a frame's
/// planes belong to the one stage call they were mapped for, a tracker's detection image is handed
/// between its threads by `DetectionWorker`.
public struct Plane: @unchecked Sendable {
    public let base: UnsafeMutablePointer<UInt8>
    public let stride: Int
    public let width: Int
    public let height: Int

    public init(base: UnsafeMutablePointer<UInt8>, stride: Int, width: Int, height: Int) {
        self.base = base
        self.stride = stride
        self.width = width
        self.height = height
    }

    @inline(__always)
    public func row(_ y: Int) -> UnsafeMutablePointer<UInt8> { base + y * stride }

    @inline(__always)
    public subscript(x: Int, y: Int) -> UInt8 {
        get { base[y * stride + x] }
        nonmutating set { base[y * stride + x] = newValue }
    }
}

public enum PixelFormat: String, Sendable {
    /// Y, then U and V at half width and half height.
    case i420
    /// Y, then interleaved UV at half width and half height.
    case nv12
}

/// A view of one decoded video frame in memory someone else owns (a GStreamer buffer mapped for the
/// duration of one stage call). It never copies or allocates; it must not outlive that call.
public struct VideoFrame: Sendable {
    public let format: PixelFormat
    public let luma: Plane
    /// U for I420, interleaved UV for NV12 (its `width` counts bytes, two per chroma sample).
    public let chromaU: Plane
    /// V for I420; the same plane as `chromaU` for NV12.
    public let chromaV: Plane
    /// Presentation time in nanoseconds on the stream's shared audio/video timeline.
    public let pts: Int64
    /// Duration in nanoseconds, or 0 when unknown.
    public let duration: Int64

    public var width: Int { luma.width }
    public var height: Int { luma.height }

    public init(format: PixelFormat, luma: Plane, chromaU: Plane, chromaV: Plane, pts: Int64, duration: Int64) {
        self.format = format
        self.luma = luma
        self.chromaU = chromaU
        self.chromaV = chromaV
        self.pts = pts
        self.duration = duration
    }

    /// Chroma planes are subsampled by two in both directions, rounding up for odd sizes.
    public static func chromaSize(width: Int, height: Int) -> (width: Int, height: Int) {
        ((width + 1) / 2, (height + 1) / 2)
    }
}
