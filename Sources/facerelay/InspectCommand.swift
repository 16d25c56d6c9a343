import ArgumentParser
import Compositor
import FaceTracking
import FaceVision
import FrameKit
import Glibc
import Logging
import MediaBridge
import StickerKit

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Track the faces in an image or video file and show the landmarks, pose and expressions.",
        discussion: """
        With --json, prints one JSON object per frame on its own line: frame, pts (seconds) and faces, each with
        id, box [x,y,w,h], landmarks (68 [x,y] pairs in the iBUG order, pixels of the input), rawLandmarks (before
        smoothing), pose (yaw, pitch, roll in degrees) and expressions (coefficients 0...1).
        """
    )

    @Argument(help: "Image (PNG, JPEG) or video file.")
    var path: String

    @Flag(help: "Print one JSON object per frame.")
    var json = false

    @Option(help: "Write the frames with the tracking drawn on them: a .png for an image, .mp4/.mkv/.flv/.ts for a video.")
    var annotate: String?

    @Option(help: "What --annotate draws on every face: 'landmarks' (the tracking overlay), a sticker package or its folder. With --json, sticker placements are printed too.")
    var sticker = BuiltInLook.landmarks.rawValue

    @Flag(name: .customLong("show-all"), help: "Show every item of the sticker at once, whatever its trigger (how previews are made).")
    var showAll = false

    @OptionGroup var stickerFolder: StickerFolderOption

    @OptionGroup var tracking: TrackingOptions

    @Flag(help: "Pace a video at its frame rate, as a live stream brings it, instead of as fast as possible: a face detection's result then comes back as many frames later as on a stream, not several more.")
    var realtime = false

    @Option(name: .customLong("stats-json"), help: "Write the tracking cost and face counts to this JSON file.")
    var statsJSON: String?

    @Option(help: "Folder of pipeline templates.")
    var pipelines: String?

    func run() throws {
        let logger = Logger(label: "facerelay")
        try exitingOnFailure(logger) {
            let library = try PipelineLibrary.locate(explicit: pipelines)
            let reader = try FrameFileReader(path: path, library: library)
            let tracker = try makeFaceTracker(settings: try tracking.settings(), landmarkModelPath: tracking.landmarkModel)
            let writer = try annotate.map { output throws(MediaError) in try FrameFileWriter(path: output, library: library) }
            let overlay = TrackingOverlay()
            let ruleCount = tracker.settings.expressions.rules.count
            var renderer: StickerRenderer?
            var scene: StickerScene?
            if sticker != BuiltInLook.landmarks.rawValue {
                let expressions = tracker.settings.expressions.rules.map(\.analyser.name)
                let package = try stickerFolder.load(sticker, expressions: expressions)
                renderer = StickerRenderer(package: package)
                scene = StickerScene(package: package, expressions: expressions, maximumFaces: tracker.settings.maximumFaces)
            }
            var faceFrames = 0
            var stickerNanoseconds: UInt64 = 0
            var startCPUNanoseconds: UInt64 = 0
            var paceFrom: (clock: ContinuousClock.Instant, seconds: Double)?
            try reader.forEachFrame { frame, index throws(MediaError) in
                let seconds = Double(frame.pts) / 1e9
                if realtime {
                    let start = paceFrom ?? (ContinuousClock.now, seconds)
                    paceFrom = start
                    let wait = ContinuousClock.now.duration(to: start.clock + .seconds(seconds - start.seconds))
                    if wait > .zero {
                        var pause = timespec(tv_sec: Int(wait.components.seconds), tv_nsec: Int(wait.components.attoseconds / 1_000_000_000))
                        var left = timespec()
                        while nanosleep(&pause, &left) == -1 && errno == EINTR { pause = left }
                    }
                }
                tracker.process(frame.luma, seconds: seconds)
                if tracker.framesProcessed == TrackingStats.startFrames { startCPUNanoseconds = tracker.cpuNanoseconds }
                faceFrames += tracker.visibleFaceCount
                let start = threadCPUNanoseconds()
                if showAll {
                    scene?.placeEveryItem(faces: tracker.faces)
                } else {
                    scene?.update(faces: tracker.faces, seconds: seconds)
                }
                stickerNanoseconds += threadCPUNanoseconds() - start
                if json {
                    print(FrameReport.json(frame: index, seconds: seconds, faces: tracker.faces, rules: tracker.settings.expressions.rules, scene: scene))
                }
                if let writer {
                    let fps = frame.duration > 0 ? 1e9 / Double(frame.duration) : 30
                    try writer.write(frame, framesPerSecond: fps) { copy in
                        if let renderer, let scene {
                            let start = threadCPUNanoseconds()
                            renderer.draw(scene.placements, on: copy)
                            stickerNanoseconds += threadCPUNanoseconds() - start
                        } else {
                            overlay.draw(tracker.faces, ruleCount: ruleCount, on: copy)
                        }
                    }
                }
            }
            try writer?.finish()
            let frames = tracker.framesProcessed
            let stats = TrackingStats(frames: frames, cpuNanoseconds: tracker.cpuNanoseconds,
                                      steadyCPUNanoseconds: tracker.cpuNanoseconds - startCPUNanoseconds, faceFrames: faceFrames,
                                      stickerNanoseconds: scene == nil ? nil : stickerNanoseconds)
            if let statsJSON { try stats.write(to: statsJSON) }
            logger.info("inspected \(path): \(frames) frames, \(formatted(stats.facesPerFrame, decimals: 2)) faces per frame, \(formatted(stats.trackMillisecondsPerFrame, decimals: 3)) ms tracking CPU per frame (vision code built for AVX2/FMA: \(visionOptimisedForAVX2 ? "yes" : "no, FACERELAY_PORTABLE"))")
            if let last = tracker.lastVisionError {
                logger.warning("\(tracker.visionErrors) face detection(s) or landmark fit(s) failed and were skipped; the last: \(last)")
            }
        }
    }
}
