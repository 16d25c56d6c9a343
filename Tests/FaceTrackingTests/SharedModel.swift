import FaceVision

/// dlib's landmark model, loaded once for the whole test process and shared as the streams of one
/// relay share it (fitting only reads it: `SharedLandmarkModelTests`). Each load reads and repacks
/// 100 MB of trees, about half a second of CPU, and the tracker's tests make a tracker for every
/// person, sequence and edge they run.
enum SharedModel {
    private static let loaded = Result { try LandmarkModel() }

    static func landmarks() throws -> LandmarkModel { try loaded.get() }
}
