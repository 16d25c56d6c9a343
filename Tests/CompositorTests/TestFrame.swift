import FrameKit

/// An I420 or NV12 frame in memory owned by the test, filled with one colour.
final class TestFrame {
    let frame: VideoFrame
    private let memory: UnsafeMutablePointer<UInt8>

    init(width: Int, height: Int, format: PixelFormat = .i420, y: UInt8 = 128, u: UInt8 = 128, v: UInt8 = 128) {
        let chroma = VideoFrame.chromaSize(width: width, height: height)
        memory = .allocate(capacity: width * height + 2 * chroma.width * chroma.height)
        memory.initialize(repeating: y, count: width * height)
        let base = memory + width * height
        switch format {
        case .i420:
            base.initialize(repeating: u, count: chroma.width * chroma.height)
            (base + chroma.width * chroma.height).initialize(repeating: v, count: chroma.width * chroma.height)
            frame = VideoFrame(format: .i420, luma: Plane(base: memory, stride: width, width: width, height: height),
                               chromaU: Plane(base: base, stride: chroma.width, width: chroma.width, height: chroma.height),
                               chromaV: Plane(base: base + chroma.width * chroma.height, stride: chroma.width, width: chroma.width, height: chroma.height),
                               pts: 0, duration: 0)
        case .nv12:
            for i in 0..<(chroma.width * chroma.height) {
                base[2 * i] = u
                base[2 * i + 1] = v
            }
            let uv = Plane(base: base, stride: chroma.width * 2, width: chroma.width * 2, height: chroma.height)
            frame = VideoFrame(format: .nv12, luma: Plane(base: memory, stride: width, width: width, height: height),
                               chromaU: uv, chromaV: uv, pts: 0, duration: 0)
        }
    }

    deinit { memory.deallocate() }

    func u(_ x: Int, _ y: Int) -> UInt8 { frame.format == .nv12 ? frame.chromaU[2 * x, y] : frame.chromaU[x, y] }
    func v(_ x: Int, _ y: Int) -> UInt8 { frame.format == .nv12 ? frame.chromaU[2 * x + 1, y] : frame.chromaV[x, y] }
}
