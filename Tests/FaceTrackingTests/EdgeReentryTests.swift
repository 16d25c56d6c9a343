import CDlibReference
import FaceTracking
import FaceVision
import Foundation
import FrameKit
import Testing
import TestFixtures

/// Faces of the corpus leaving through each edge of the frame and coming back: found again where
/// they come back in, by the search where they left, for every person.
@Suite(.serialized) struct EdgeReentryTests {
    enum Edge: String, CaseIterable, Sendable { case left, right, top, bottom }

    /// Each person's largest face dlib's stock detector finds, zoomed to a 130 px box on a 480x480
    /// frame under sigma-6 sensor noise, slides out through `edge` at 16 px a frame, stays out for
    /// five frames and slides back to where it started. No detection after the first frames ever
    /// finishes (`GatedDetector`): the face coming back is found by the search where it left alone,
    /// within 10 frames of dlib's stock detector seeing it again wholly in view.
    /// A face leaving is fitted on what is left of it, and those fits slide along the edge and turn
    /// (`FaceTracker.lostRegion`): looked for around the last of them, at its angle, biden through
    /// the top and t1 through the left edge were never found again in one run, tflite_portrait_large
    /// through the left and biden through the top in another.
    @Test(arguments: Edge.allCases)
    func everyFaceLeavingThroughAnEdgeIsFoundAgainWhereItComesBack(edge: Edge) throws {
        let corpus = try FaceCorpus.shared.get()
        let model = try LandmarkModel()
        // dlib's warp draws a square frame.
        let (width, height, side, speed) = (480, 480, Float(130), Float(16))
        let frame = UnsafeMutablePointer<UInt8>.allocate(capacity: width * height)
        defer { frame.deallocate() }
        let plane = Plane(base: frame, stride: width, width: width, height: height)
        var noise = GaussianNoise(sigma: 6)
        var error: UnsafeMutablePointer<CChar>?
        var people = 0, compared = 0, delays: [String] = []
        // Out until the box is a frame's step past the edge; the way back is the same path reversed.
        let home = Point(x: Float(width) / 2, y: Float(height) / 2)
        let (direction, outAt): (Point, Float) = switch edge {
        case .left: (Point(x: -1, y: 0), home.x + side / 2 + speed)
        case .right: (Point(x: 1, y: 0), Float(width) - home.x + side / 2 + speed)
        case .top: (Point(x: 0, y: -1), home.y + side / 2 + speed)
        case .bottom: (Point(x: 0, y: 1), Float(height) - home.y + side / 2 + speed)
        }
        let steps = Int((outAt / speed).rounded(.up))
        var distances = (0...steps).map { Float($0) * speed }
        distances += Array(repeating: distances.last!, count: 5) + distances.reversed()
        for photo in corpus.photos {
            guard let face = try photo.stockDetections().max(by: { $0.width < $1.width }) else { continue }
            // A face the photo cuts off (obama_partial_face2) comes back as cut as it left, scored
            // about the detector's threshold, found or not as the noise falls: not what is tested here.
            // dlib's box reaches a little past a face, so a tenth of it may lie beyond the photo.
            let margin = face.width / 10
            guard face.x >= -margin, face.y >= -margin, face.x + face.width <= Float(photo.width) + margin,
                  face.y + face.height <= Float(photo.height) + margin else {
                delays.append("\(photo.name) cut by the photo")
                continue
            }
            people += 1
            let detector = try GatedDetector()
            let tracker = FaceTracker(settings: FaceTracker.Settings(), landmarker: try DlibLandmarker(model: model),
                                      detector: detector, poseSolver: try PnPPoseSolver())
            // Before the tracker goes, whose detection thread waits at the gate.
            defer { detector.openForGood() }
            let scale = Double(side / face.width)
            let (fx, fy) = (Double(face.x + face.width / 2), Double(face.y + face.height / 2))
            var wasOut = false, wholeAgainAt: Int?, foundAgainAt: Int?
            for (index, distance) in distances.enumerated() {
                let centre = home + Point(x: direction.x * distance, y: direction.y * distance)
                let forward = [scale, 0, Double(centre.x) - scale * fx, 0, scale, Double(centre.y) - scale * fy]
                #expect(dr_warp_affine(photo.pixels, photo.width, photo.height, photo.width, forward, frame, Int32(width), &error) == 0)
                noise.add(to: frame, count: width * height)
                tracker.process(plane, seconds: Double(index) / 30)
                let whole = centre.x - side / 2 >= 0 && centre.y - side / 2 >= 0
                    && centre.x + side / 2 <= Float(width) && centre.y + side / 2 <= Float(height)
                if distance >= outAt { wasOut = true }
                guard wasOut else { continue }
                if whole && wholeAgainAt == nil {
                    var found = [dr_detection](repeating: dr_detection(), count: 16)
                    let count = Int(dr_detect(frame, Int32(width), Int32(height), Int32(width), 0, &found, 16, &error))
                    let seen = found.prefix(max(0, count)).contains {
                        $0.width >= 80 && $0.centre.distance(to: centre) < side * 0.3
                    }
                    if seen { wholeAgainAt = index }
                }
                // The group photos' other faces come and go with it: only a face shown on this one counts.
                let shown = tracker.faces.contains { $0.isShown && $0.box.centre.distance(to: centre) < side * 0.3 }
                if wholeAgainAt != nil && foundAgainAt == nil && shown { foundAgainAt = index }
            }
            // The face is back once dlib's stock detector finds it again.
            guard let wholeAgain = wholeAgainAt else {
                delays.append("\(photo.name) unseen by dlib")
                continue
            }
            compared += 1
            let delay = foundAgainAt.map { $0 - wholeAgain }
            delays.append("\(photo.name) \(delay.map(String.init) ?? "never")")
            #expect(delay.map { $0 <= 10 } == true,
                    "\(photo.name), out through the \(edge) edge: found again \(delay.map { "\($0) frames" } ?? "never") after being whole again")
        }
        #expect(people >= 10 && compared >= people - 2, "\(people) people, \(compared) seen again by dlib")
        print("\(edge): frames from whole again to found: \(delays.joined(separator: ", "))")
    }
}
