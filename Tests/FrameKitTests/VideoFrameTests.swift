import FrameKit
import Testing

@Suite struct VideoFrameTests {
    @Test func chromaPlanesRoundUpForOddSizes() {
        #expect(VideoFrame.chromaSize(width: 1280, height: 720) == (640, 360))
        #expect(VideoFrame.chromaSize(width: 1281, height: 721) == (641, 361))
        #expect(VideoFrame.chromaSize(width: 1, height: 1) == (1, 1))
    }

    @Test func planeAddressesRowsByStride() {
        let stride = 8
        let memory = UnsafeMutablePointer<UInt8>.allocate(capacity: stride * 3)
        defer { memory.deallocate() }
        memory.initialize(repeating: 0, count: stride * 3)
        let plane = Plane(base: memory, stride: stride, width: 5, height: 3)
        plane[4, 2] = 200
        #expect(memory[2 * stride + 4] == 200)
        #expect(plane.row(1) == memory + stride)
    }

    /// Whatever the frame's format and pixels, and however many frames queue behind it, the stage of
    /// a relay without stickers asks for no copy, leaves the frame as decoded and tracks no faces.
    @Test func passThroughStageNeverAsksToDraw() {
        let stage: any FrameStage = PassThroughStage()
        let width = 64, height = 48
        let chroma = VideoFrame.chromaSize(width: width, height: height)
        let count = width * height + 2 * chroma.width * chroma.height
        let memory = UnsafeMutablePointer<UInt8>.allocate(capacity: count)
        defer { memory.deallocate() }
        memory.initialize(repeating: 0, count: count)
        let luma = Plane(base: memory, stride: width, width: width, height: height)
        let u = Plane(base: memory + width * height, stride: chroma.width, width: chroma.width, height: chroma.height)
        let v = Plane(base: u.base + chroma.width * chroma.height, stride: chroma.width, width: chroma.width, height: chroma.height)
        let uv = Plane(base: u.base, stride: 2 * chroma.width, width: 2 * chroma.width, height: chroma.height)
        let frames = [VideoFrame(format: .i420, luma: luma, chromaU: u, chromaV: v, pts: 0, duration: 33_333_333),
                      VideoFrame(format: .nv12, luma: luma, chromaU: uv, chromaV: uv, pts: 33_333_333, duration: 0)]
        for (index, frame) in frames.enumerated() {
            for seed in 0..<3 {
                let pixels = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* (seed * 2 + 1) &+ seed * 85) }
                for (offset, value) in pixels.enumerated() { memory[offset] = value }
                stage.noteBacklog(queued: seed * 4, capacity: 10)
                #expect(stage.analyse(frame) == .passThrough, "\(frame.format) frame \(index), pixels \(seed)")
                stage.draw(on: frame)
                #expect(Array(UnsafeBufferPointer(start: memory, count: count)) == pixels, "\(frame.format) frame \(index) changed")
            }
        }
        #expect(stage.trackingFigures == nil)
    }
}
