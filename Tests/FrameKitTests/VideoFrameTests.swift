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

    @Test func passThroughStageNeverAsksToDraw() {
        let memory = UnsafeMutablePointer<UInt8>.allocate(capacity: 64)
        defer { memory.deallocate() }
        let plane = Plane(base: memory, stride: 8, width: 8, height: 8)
        let frame = VideoFrame(format: .i420, luma: plane, chromaU: plane, chromaV: plane, pts: 0, duration: 0)
        #expect(PassThroughStage().analyse(frame) == .passThrough)
    }
}
