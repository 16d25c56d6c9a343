import CDlibReference
import FaceTracking
import FrameKit
import TestFixtures

extension dr_detection {
    /// The centre of the box dlib's stock detector drew: where a face it found is matched with the
    /// tracker's.
    var centre: Point { Point(x: x + width / 2, y: y + height / 2) }
}

/// What dlib's stock detector (`get_frontal_face_detector()`, at its own threshold) finds on `plane`:
/// its windows, at most `capacity`, most confident first.
func stockDetections(in plane: Plane, capacity: Int = 16) throws(FixtureError) -> [dr_detection] {
    var found = [dr_detection](repeating: dr_detection(), count: capacity)
    var error: UnsafeMutablePointer<CChar>?
    defer { dr_free_error(error) }
    let count = dr_detect(plane.base, Int32(plane.width), Int32(plane.height), Int32(plane.stride), 0, &found, Int32(capacity), &error)
    guard count >= 0 else { throw FixtureError(description: "dlib's stock detector failed: \(error.map { String(cString: $0) } ?? "no message")") }
    return Array(found.prefix(Int(count)))
}
