import ArgumentParser
import CAllocationCounter
import FaceTracking
import FaceVision
import FrameKit
import Glibc
import MediaBridge

/// What one more stream costs in memory when every stream's tracker shares one landmark model:
/// the process's resident memory after loading the model, after each fitter on it (each fitting a
/// real face once, so that its scratch memory is touched), and after a whole tracker. A second model,
/// which every stream loaded before models were shared, comes last for comparison.
struct LandmarkMemory: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "landmark-memory",
        abstract: "Resident memory of one shared landmark model, of each fitter on it, and of one tracker."
    )

    @Option(help: "Face photo to fit on (a portrait from Tests/Fixtures/portraits.py).")
    var photo: String

    @Option(help: "Folder of pipeline templates.")
    var pipelines: String

    @Option(help: "Fitters to create on the one model.")
    var fitters = 3

    @Option(name: .customLong("landmark-model"), help: "dlib 68-point shape predictor file.")
    var landmarkModel = defaultLandmarkModelPath

    func run() throws {
        // The photo and its face box first, so that decoding and detection are not counted below.
        let image = try GreyImage(path: photo, library: PipelineLibrary(directory: pipelines))
        let detector = try DlibFaceDetector()
        let boxes = UnsafeMutableBufferPointer<FaceSighting>.allocate(capacity: 4)
        defer { boxes.deallocate() }
        guard try detector.detect(image.plane, into: boxes) > 0 else { throw ValidationError("no face found on \(photo)") }
        let box = boxes[0].box

        var last = residentKilobytes()
        print(pad("process resident memory", 44) + pad("total MB", 10) + "added KB")
        print(pad("photo decoded, face detected", 44) + pad(megabytes(last), 10))
        func report(_ step: String) {
            let now = residentKilobytes()
            print(pad(step, 44) + pad(megabytes(now), 10) + String(now - last))
            last = now
        }
        let model = try LandmarkModel(path: landmarkModel)
        report("landmark model loaded")
        var landmarkers: [DlibLandmarker] = []
        for count in 1...max(1, fitters) {
            let landmarker = try DlibLandmarker(model: model)
            _ = try landmarker.fit(image.plane, in: box)
            landmarkers.append(landmarker)
            report("model + \(count) fitter\(count == 1 ? "" : "s")")
        }

        // The fitter's claim: after its first fit, fitting allocates nothing.
        let landmarker = landmarkers[0]
        let fits = 200
        let allocationsBefore = fr_allocation_count()
        for _ in 0..<fits { _ = try landmarker.fit(image.plane, in: box) }
        let fitAllocations = Double(fr_allocation_count() - allocationsBefore) / Double(fits)
        // The detector's check of a fit (dlib's scanner allocates its own scratch on every scan).
        _ = try landmarker.locateFace(image.plane, around: box, angle: 0, reach: 0.5)
        let checksBefore = fr_allocation_count()
        for _ in 0..<fits { _ = try landmarker.locateFace(image.plane, around: box, angle: 0, reach: 0.5) }
        let checkAllocations = Double(fr_allocation_count() - checksBefore) / Double(fits)

        // The detection thread's scans, each counted on the calling thread: a 720p frame with the
        // photo on it, scanned as the coarse and the fine scan look at it at the default settings.
        let frame = UnsafeMutablePointer<UInt8>.allocate(capacity: 1280 * 720)
        defer { frame.deallocate() }
        frame.update(repeating: 96, count: 1280 * 720)
        for row in 0..<min(image.plane.height, 720) {
            (frame + row * 1280 + 300).update(from: image.plane.base + row * image.plane.stride, count: min(image.plane.width, 980))
        }
        let frame720 = Plane(base: frame, stride: 1280, width: 1280, height: 720)
        func perCall(_ count: Int, _ body: () throws -> Void) rethrows -> Double {
            try body()
            let before = fr_allocation_count()
            for _ in 0..<count { try body() }
            return Double(fr_allocation_count() - before) / Double(count)
        }
        var scans: [(String, Double)] = []
        for (name, levels) in [("coarse", PyramidLevels(first: 3, count: nil)), ("fine", PyramidLevels(first: 0, count: 3))] {
            scans.append(("\(name) scan", try perCall(5) { _ = try detector.detect(frame720, levels: levels, into: boxes) }))
        }

        let tracker = try makeFaceTracker(settings: FaceTracker.Settings(), model: model)
        for frame in 0..<30 { tracker.process(image.plane, seconds: Double(frame) / 30) }
        report("+ 1 tracker (fitter, detector, pose, thread)")
        // Detection runs on the tracker's own thread, which the allocation count (per thread) leaves
        // out: what is counted is the frame thread, as in a stream.
        let frames = 200
        let trackAllocationsBefore = fr_allocation_count()
        for frame in 30..<(30 + frames) { tracker.process(image.plane, seconds: Double(frame) / 30) }
        let trackAllocations = Double(fr_allocation_count() - trackAllocationsBefore) / Double(frames)
        // Under load the face stage fits every fourth frame and coasts through the three between,
        // following the face's pixels from the fit (`FaceTracker.coast`): each kind of frame's
        // allocations and frame-thread CPU.
        tracker.keepsPatches = true
        tracker.process(image.plane, seconds: Double(30 + frames) / 30)  // the face's patch, allocated once
        var fitted = (allocations: 0, nanoseconds: UInt64(0), count: 0), coasted = fitted
        for frame in (31 + frames)..<(31 + 3 * frames) {
            let seconds = Double(frame) / 30
            let allocationsBefore = fr_allocation_count(), cpuBefore = threadCPUNanoseconds()
            if frame % 4 == 0 { tracker.process(image.plane, seconds: seconds) } else { tracker.coast(image.plane, to: seconds) }
            let allocated = Int(fr_allocation_count() - allocationsBefore), spent = threadCPUNanoseconds() &- cpuBefore
            if frame % 4 == 0 { fitted = (fitted.allocations + allocated, fitted.nanoseconds + spent, fitted.count + 1) }
            else { coasted = (coasted.allocations + allocated, coasted.nanoseconds + spent, coasted.count + 1) }
        }

        let second = try LandmarkModel(path: landmarkModel)
        report("a second model (each stream, unshared)")
        withExtendedLifetime((landmarkers, tracker, second)) {}
        print("allocations per call after the first: " + scans.map { "\($0.0) \(formatted($0.1, decimals: 2))" }.joined(separator: "; "))
        print("under load, fitting every fourth frame: per fitted frame \(formatted(Double(fitted.allocations) / Double(fitted.count), decimals: 2)) allocations, \(formatted(Double(fitted.nanoseconds) / Double(fitted.count) / 1e6, decimals: 3)) ms CPU; per coasted frame (the face's pixels followed) \(formatted(Double(coasted.allocations) / Double(coasted.count), decimals: 2)) allocations, \(formatted(Double(coasted.nanoseconds) / Double(coasted.count) / 1e6, decimals: 3)) ms CPU")
        print("allocations per fit after the first: \(formatted(fitAllocations, decimals: 2)); per detector check of a fit: \(formatted(checkAllocations, decimals: 2)); per tracked frame on the frame thread (fit, pose, expressions): \(formatted(trackAllocations, decimals: 2)); vision errors: \(tracker.visionErrors)")
    }
}

/// The luma of the first frame of an image file, copied out of the decoder.
final class GreyImage {
    let plane: Plane

    init(path: String, library: PipelineLibrary) throws {
        let reader = try FrameFileReader(path: path, library: library)
        var copied: Plane?
        try reader.forEachFrame { frame, index in
            guard index == 0 else { return }
            let luma = frame.luma
            let memory = UnsafeMutablePointer<UInt8>.allocate(capacity: luma.width * luma.height)
            for row in 0..<luma.height {
                (memory + row * luma.width).update(from: luma.base + row * luma.stride, count: luma.width)
            }
            copied = Plane(base: memory, stride: luma.width, width: luma.width, height: luma.height)
        }
        guard let copied else { throw ValidationError("no picture in \(path)") }
        plane = copied
    }

    deinit { plane.base.deallocate() }
}

/// This process's resident set, from /proc/self/statm (pages, second field).
func residentKilobytes() -> Int {
    let file = open("/proc/self/statm", O_RDONLY)
    guard file >= 0 else { return 0 }
    defer { close(file) }
    var bytes = [UInt8](repeating: 0, count: 128)
    let count = bytes.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
    guard count > 0 else { return 0 }
    let fields = bytes[0..<count].split(separator: UInt8(ascii: " "))
    guard fields.count > 1, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return 0 }
    return pages * sysconf(Int32(_SC_PAGESIZE)) / 1024
}

func megabytes(_ kilobytes: Int) -> String { formatted(Double(kilobytes) / 1024, decimals: 1) }
