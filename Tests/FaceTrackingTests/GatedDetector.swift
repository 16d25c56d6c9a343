import FaceTracking
import FaceVision
import Foundation
import FrameKit
import Synchronization

/// dlib's detector, whose results the test lets through one at a time: the detection thread as
/// late as the test likes. The calls of the tracker's synchronous first frame (its coarse and its
/// fine scan) are not held.
final class GatedDetector: FaceDetector {
    private let inner: DlibFaceDetector
    private let gate = DispatchSemaphore(value: 0)
    private let calls = Atomic<Int>(0)
    private let waiting = Atomic<Int>(0)

    init() throws { inner = try DlibFaceDetector() }

    var detections: Int { calls.load(ordering: .relaxed) }

    /// Lets the detection waiting at the gate finish, once one is there (waiting up to 5 s for a
    /// busy machine's detection thread to get there): each call ends one late detection, however
    /// the threads are scheduled.
    func letOneThrough() {
        let deadline = Date().addingTimeInterval(5)
        while waiting.load(ordering: .acquiring) == 0, Date() < deadline { usleep(1000) }
        gate.signal()
    }

    /// Lets every pending and future detection through, so that the tracker can shut down.
    func openForGood() { for _ in 0..<1000 { gate.signal() } }

    func detect(_ grey: Plane, levels: PyramidLevels, into boxes: UnsafeMutableBufferPointer<FaceSighting>) throws -> Int {
        let found = try inner.detect(grey, levels: levels, into: boxes)
        if calls.add(1, ordering: .relaxed).newValue > 2 {
            waiting.add(1, ordering: .releasing)
            gate.wait()
            waiting.subtract(1, ordering: .releasing)
        }
        return found
    }
}
