import FaceTestSupport
import FaceTracking
import FrameKit
import StickerKit
import Testing

/// Triggers played from recorded expression sequences: one character per 30 fps frame, '#' while
/// the expression is on. An item's track shows the animation frame it draws, '.' when it is off.
@Suite struct TimelineTests {
    static func item(_ id: String, frames: Int = 1, fps: Double = 0, loop: Bool = true, begin: Trigger = .always,
                     end: Trigger? = nil, duration: Double? = nil) -> StickerItem {
        let picture = RGBAImage(width: 4, height: 4, red: 255, green: 0, blue: 0, alpha: 255)
        let anchor = LandmarkAnchor(position: LandmarkPoint(landmarks: [27], x: 2, y: 2), rotateCenter: nil,
                                    pointA: LandmarkPoint(landmarks: [36], x: 0, y: 2), pointB: LandmarkPoint(landmarks: [45], x: 4, y: 2))
        return StickerItem(id: id, frames: Array(repeating: picture, count: frames), fps: fps, loop: loop, z: 0,
                           placement: .landmarks(anchor), begin: begin, end: end, duration: duration, follow3D: false)
    }

    /// Plays `items` through the recorded `expressions` and returns each item's track.
    func play(_ items: [StickerItem], _ expressions: [String: String]) -> [String: String] {
        let package = StickerPackage(name: "test", title: "Test", directory: "/", items: items)
        var timeline = StickerTimeline(package: package, expressions: Support.expressions)
        let length = expressions.values.map(\.count).max() ?? 0
        var tracks = Dictionary(uniqueKeysWithValues: items.map { ($0.id, "") })
        for frame in 0..<length {
            let active = ContiguousArray(Support.expressions.map { name in
                expressions[name].map { Array($0)[frame] == "#" } ?? false
            })
            let seconds = Double(frame) / 30
            timeline.advance(to: seconds, active: active)
            for (index, item) in items.enumerated() {
                tracks[item.id]! += timeline.frame(of: index, at: seconds).map(String.init) ?? "."
            }
        }
        return tracks
    }

    @Test func aLoopRunsFromItsExpressionUntilTheExpressionEnds() {
        // 3 frames at 7 fps: a new picture every 4 or 5 video frames.
        let flames = Self.item("flames", frames: 3, fps: 7, begin: .expressionStarts("mouthOpen"), end: .expressionEnds("mouthOpen"))
        let tracks = play([flames], ["mouthOpen": "..##########......#####......"])
        #expect(tracks["flames"] == "..0000011112......00000......")
    }

    @Test func aCompletedItemStartsTheNextAndEndsAnother() {
        // pop: 2 frames at 7 fps, once: 2/7 s, 9 video frames. confetti: 0.25 s, 8 frames.
        let items = [
            Self.item("ring", begin: .expressionStarts("mouthOpen"), end: .itemCompletes("confetti")),
            Self.item("pop", frames: 2, fps: 7, loop: false, begin: .expressionStarts("mouthOpen")),
            Self.item("confetti", loop: false, begin: .itemCompletes("pop"), duration: 0.25),
        ]
        let tracks = play(items, ["mouthOpen": "..#......................"])
        #expect(tracks["pop"] == "..000001111..............")
        #expect(tracks["confetti"] == "...........00000000......")
        #expect(tracks["ring"] == "..00000000000000000......")
    }

    @Test func aOnceItemIgnoresItsTriggerWhilePlayingAndRestartsAfter() {
        let stars = Self.item("stars", frames: 2, fps: 7, loop: false, begin: .expressionStarts("blinkLeft"))
        let tracks = play([stars], ["blinkLeft": "#.#..........#.........", "blinkRight": "....#.................."])
        #expect(tracks["stars"] == "000001111....000001111.")
    }

    @Test func alwaysStartsWithTheFaceAndAnExpressionHeldFromTheStartCounts() {
        let items = [Self.item("hat"), Self.item("hearts", begin: .expressionStarts("smile"), end: .expressionEnds("smile"))]
        let tracks = play(items, ["smile": "####...."])
        #expect(tracks["hat"] == "00000000")
        #expect(tracks["hearts"] == "0000....")
    }

    @Test func aDurationEndsAnItemAndReportsItsCompletion() {
        let package = StickerPackage(name: "t", title: "t", directory: "/", items: [Self.item("yes", loop: false, begin: .expressionStarts("nod"), duration: 0.5)])
        var timeline = StickerTimeline(package: package, expressions: Support.expressions)
        let nod = Support.expressions.firstIndex(of: "nod")!
        var completed: [(Int, Int)] = []
        for frame in 0..<40 {
            var active = ContiguousArray(repeating: false, count: Support.expressions.count)
            active[nod] = frame == 3
            timeline.advance(to: Double(frame) / 30, active: active) { completed.append((frame, $0)) }
        }
        // Started on frame 3; 0.5 s later is frame 18.
        #expect(completed.map(\.0) == [18] && completed.map(\.1) == [0])
    }
}

/// One timeline per tracked face: an expression on one face plays only there, and a face that
/// goes ends its instance.
@Suite struct StickerSceneTests {
    let pixels = UnsafeMutablePointer<UInt8>.allocate(capacity: 1280 * 720)

    @Test func eachFaceHasItsOwnTimeline() {
        let scene = Scene()
        scene.faces = [SyntheticFace(centre: Point(x: 300, y: 360)), SyntheticFace(centre: Point(x: 900, y: 360))]
        var settings = FaceTracker.Settings()
        settings.synchronousDetection = true
        settings.smoothing = .none
        settings.holdFrames = 2
        settings.detectionInterval = 10
        let tracker = FaceTracker(settings: settings, landmarker: SceneLandmarker(scene), detector: SceneDetector(scene), poseSolver: NoPose())
        let package = StickerPackage(name: "t", title: "t", directory: "/", items: [
            TimelineTests.item("glasses"),
            TimelineTests.item("flames", frames: 3, fps: 7, begin: .expressionStarts("mouthOpen"), end: .expressionEnds("mouthOpen")),
        ])
        let stickers = StickerScene(package: package, expressions: Support.expressions, maximumFaces: 4)
        var completed: [(Int, String)] = []
        stickers.onCompleted = { completed.append(($0, $1)) }
        func step(_ frame: Int) -> [String] {
            tracker.process(Plane(base: pixels, stride: 1280, width: 1280, height: 720), seconds: Double(frame) / 30)
            stickers.update(faces: tracker.faces, seconds: Double(frame) / 30)
            return stickers.placements.map { "\($0.faceID):\(package.items[$0.item].id)" }.sorted()
        }
        for frame in 0..<5 { #expect(step(frame) == ["1:glasses", "2:glasses"], "frame \(frame)") }
        scene.faces[1].mouthGap = 0.4
        #expect(step(5) == ["1:glasses", "2:flames", "2:glasses"])
        scene.faces[1].mouthGap = 0
        #expect(step(6) == ["1:glasses", "2:glasses"])
        #expect(completed.count == 1 && completed[0] == (2, "flames"))

        // The right face leaves: held for two frames without drawing, then dropped with its instance.
        scene.faces.removeLast()
        for frame in 7..<12 { _ = step(frame) }
        #expect(step(12) == ["1:glasses"])
        #expect(stickers.timeline(ofFace: 2) == nil)
        // A new face starts from the beginning of its own timeline.
        scene.faces.append(SyntheticFace(centre: Point(x: 900, y: 360)))
        scene.faces[1].mouthGap = 0.4
        var seen: [String] = []
        for frame in 13..<30 { seen = step(frame) }
        #expect(seen == ["1:glasses", "3:flames", "3:glasses"])
    }

    @Test func placementsFollowTheLandmarks() {
        let face = SyntheticFace(centre: Point(x: 500, y: 300), size: 100)
        let item = TimelineTests.item("glasses")
        let landmarks = face.landmarks
        let transform = StickerGeometry.transform(for: item, landmarks: landmarks, pose: nil)!
        // The design position (2, 2) lands on landmark 27; the design eye line spans the eye corners.
        let position = transform.apply(2, 2)!
        #expect(abs(position.x - Double(landmarks[27].x)) < 1e-3 && abs(position.y - Double(landmarks[27].y)) < 1e-3)
        let a = transform.apply(0, 2)!, b = transform.apply(4, 2)!
        let width = ((b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y)).squareRoot()
        #expect(abs(width - Double(landmarks.eyeDistance)) < 1e-3)
    }
}
