import CDlibReference
import FaceTracking

extension dr_detection {
    /// The centre of the box dlib's stock detector drew: where a face it found is matched with the
    /// tracker's.
    var centre: Point { Point(x: x + width / 2, y: y + height / 2) }
}
