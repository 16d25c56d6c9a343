import FaceTracking
import FrameKit

/// Faces the fake detector and landmarker see: each a synthetic face the test moves around.
public final class Scene: @unchecked Sendable {
    public var faces: [SyntheticFace] = []
    /// Faces the detector no longer reports (the landmarker still fits them).
    public var hiddenFromDetector: Set<Int> = []
    /// Faces that score as background (the landmarker still fits them): a fit gone off the face.
    public var notFaceLike: Set<Int> = []
    /// Scores of faces the detector is less sure of than a clear face's 2 (a face turning away).
    public var scores: [Int: Float] = [:]
    /// Scores of faces after the detector's first look around them (a face at the frame's edge:
    /// the search that finds it centres on it, later checks around its fitted box read past the edge).
    public var laterScores: [Int: Float] = [:]
    var lookedAround: Set<Int> = []
    /// The detector's next look around each face is a first one again (`laterScores`).
    public func forgetLooks() { lookedAround.removeAll() }
    /// When set, every detection throws it, as a back end that fails.
    public var detectorFailure: SceneFailure?
    /// When set, every landmark fit throws it.
    public var landmarkerFailure: SceneFailure?
    /// A background that changes on every frame (a game behind a face cam).
    public var busyBackground = false
    /// Each face painted on a square photo this many times its size on a side, turned with its roll,
    /// as a photo of a head turned in-plane; none when 0.
    public var photoSide: Float = 0
    /// Coarse scans (every scale from the largest down) and fine ones (a few of the smallest scales)
    /// the fake detector ran.
    public internal(set) var coarseScans = 0, fineScans = 0
    /// Looks of the detector around a box (checks of a fit, searches where a face was lost).
    public internal(set) var looksAround = 0
    /// Those of them that reached beyond the box (searches for a face that jumped or was lost).
    public internal(set) var searches = 0
    /// Those of them that reached as far as the default `FaceTracker.Settings.searchReach` (half a box).
    public internal(set) var farSearches = 0
    public let width = 1280, height = 720
    /// How far each fit leans from the face towards the centre of the box it starts from, as a share
    /// of their distance (0: the fit lands on the face wherever its box is), and up to how many
    /// pixels it scatters about that either way, new on every fit: a real fit under sensor noise.
    public var fitLean: Float = 0, fitScatter: Float = 0
    var fitRandom = SplitMix64(seed: 68)

    public init() {}

    /// The picture a camera would take of the scene, which the tracker looks at to decide whether a
    /// scan can find anything new: each face a bright square on a dark background, and with
    /// `busyBackground` a corner whose brightness changes every frame.
    public func paint(_ plane: Plane, frame: Int) {
        func fill(_ box: FaceBox, _ value: UInt8) {
            let left = max(0, Int(box.x)), right = min(plane.width, Int(box.x + box.width))
            guard left < right else { return }
            for y in max(0, Int(box.y))..<max(max(0, Int(box.y)), min(plane.height, Int(box.y + box.height))) {
                (plane.base + y * plane.stride + left).update(repeating: value, count: right - left)
            }
        }
        fill(FaceBox(x: 0, y: 0, width: Float(plane.width), height: Float(plane.height)), 20)
        if photoSide > 0 { for face in faces { paintPhoto(of: face, plane) } }
        for face in faces { fill(Scene.box(face.landmarks), 200) }
        if busyBackground { fill(FaceBox(x: 0, y: 0, width: 160, height: 160), frame % 2 == 0 ? 60 : 120) }
    }

    private func paintPhoto(of face: SyntheticFace, _ plane: Plane) {
        let half = photoSide * face.size / 2, reach = half * 1.5
        let cosine = cosf(face.roll), sine = sinf(face.roll)
        for y in max(0, Int(face.centre.y - reach))..<min(plane.height, Int(face.centre.y + reach)) {
            for x in max(0, Int(face.centre.x - reach))..<min(plane.width, Int(face.centre.x + reach)) {
                let dx = Float(x) - face.centre.x, dy = Float(y) - face.centre.y
                // The pixel in the photo's own upright frame.
                if abs(dx * cosine + dy * sine) <= half && abs(-dx * sine + dy * cosine) <= half { plane.base[y * plane.stride + x] = 90 }
            }
        }
    }

    public static func box(_ landmarks: Landmarks) -> FaceBox {
        var minX = Float.infinity, maxX = -Float.infinity, minY = Float.infinity, maxY = -Float.infinity
        for i in 0..<68 {
            minX = min(minX, landmarks[i].x); maxX = max(maxX, landmarks[i].x)
            minY = min(minY, landmarks[i].y); maxY = max(maxY, landmarks[i].y)
        }
        return FaceBox(x: minX, y: minY, width: maxX - minX, height: maxY - minY)
    }
}

/// A failure of the fake vision back end.
public struct SceneFailure: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

public final class SceneDetector: FaceDetector {
    let scene: Scene
    public init(_ scene: Scene) { self.scene = scene }

    /// A scan to the smallest level is a coarse one, a scan from level 0 a fine one: a whole scan is both.
    public func detect(_ grey: Plane, levels: PyramidLevels, into boxes: UnsafeMutableBufferPointer<FaceSighting>) throws(SceneFailure) -> Int {
        if levels.count == nil { scene.coarseScans += 1 }
        if levels.first == 0 { scene.fineScans += 1 }
        if let failure = scene.detectorFailure { throw failure }
        let scale = Float(grey.width) / Float(scene.width)
        var count = 0
        for (index, face) in scene.faces.enumerated() where !scene.hiddenFromDetector.contains(index) && count < boxes.count {
            let box = Scene.box(face.landmarks)
            guard box.centre.x >= 0, box.centre.x < Float(scene.width) else { continue }
            // Scored as the detector's look around it scores it first.
            let score = scene.notFaceLike.contains(index) ? -2 : scene.scores[index] ?? 2
            boxes[count] = FaceSighting(box: box.scaled(by: scale), score: score)
            count += 1
        }
        return count
    }
}

public final class SceneLandmarker: FaceLandmarker {
    let scene: Scene
    public init(_ scene: Scene) { self.scene = scene }

    public func fit(_ grey: Plane, in box: FaceBox, angle: Float) throws(SceneFailure) -> Landmarks? {
        if let failure = scene.landmarkerFailure { throw failure }
        let best = scene.faces.map(\.landmarks).max { Scene.box($0).overlap(with: box) < Scene.box($1).overlap(with: box) }
        guard var best, Scene.box(best).overlap(with: box) > 0.2 else { return nil }
        if scene.fitLean > 0 || scene.fitScatter > 0 {
            let lean = (box.centre - Scene.box(best).centre) * scene.fitLean
            let scatter = Point(x: scene.fitRandom.uniform(-scene.fitScatter, scene.fitScatter),
                                y: scene.fitRandom.uniform(-scene.fitScatter, scene.fitScatter))
            for i in 0..<68 { best[i] = best[i] + lean + scatter }
        }
        return best
    }

    /// A face's own box scoring 2 (a clear face, or its `scores` entry) when the box searched overlaps it, else the box
    /// searched scoring -2 (background); faces in `notFaceLike` score as background.
    public func locateFace(_ grey: Plane, around box: FaceBox, angle: Float, reach: Float) throws(SceneFailure) -> FaceSighting {
        if let failure = scene.landmarkerFailure { throw failure }
        scene.looksAround += 1
        if reach > 0 { scene.searches += 1 }
        if reach >= FaceTracker.Settings().searchReach { scene.farSearches += 1 }
        for (index, face) in scene.faces.enumerated() where !scene.notFaceLike.contains(index) {
            let own = Scene.box(face.landmarks)
            if own.overlap(with: box) > 0.3 {
                let later = scene.lookedAround.contains(index)
                scene.lookedAround.insert(index)
                return FaceSighting(box: own, score: (later ? scene.laterScores[index] : nil) ?? scene.scores[index] ?? 2)
            }
        }
        return FaceSighting(box: box, score: -2)
    }
}

public final class NoPose: PoseSolver {
    public init() {}
    public func solve(_ landmarks: Landmarks, frameWidth: Int, frameHeight: Int, previous: HeadPose?) -> HeadPose? { nil }
}


#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
