import ArgumentParser
import CAllocationCounter
import Compositor
import FaceTracking
import FaceVision
import FrameKit
import Glibc
import MediaBridge
import StickerKit

@main
struct Benchmarks: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "facerelay-bench",
        abstract: "FaceRelay benchmarks.",
        subcommands: [StickerBenchmark.self, LandmarkMemory.self, HOGFeatures.self, SeparableFilter.self],
        defaultSubcommand: StickerBenchmark.self
    )
}

/// Compositing cost and heap allocations per frame, each case side by side with the cost of the
/// frame copy the draw path makes anyway. Cases run in interleaved rounds so that load from
/// elsewhere on the machine hits them all alike; the figures are medians over rounds.
struct StickerBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stickers",
        abstract: "Sticker compositing benchmark: ms of CPU and heap allocations per frame."
    )

    @Option(help: "Face photo to track for the package cases (a portrait from Tests/Fixtures/portraits.py).")
    var photo: String

    @Option(help: "Folder of sticker packages.")
    var stickers: String

    @Option(help: "Folder of pipeline templates.")
    var pipelines: String

    @Option(help: "Rounds; each round times every case.")
    var rounds = 7

    @Option(help: "Frames per case and round.")
    var frames = 200

    @Option(help: "Run only the cases whose name contains this text.")
    var only: String?

    func run() throws {
        let library = PipelineLibrary(directory: pipelines)
        let loader = StickerLoader(expressions: ExpressionSettings.defaultRules.map(\.analyser.name))
        let (faces, tracker, photoFrame) = try trackedPhoto(library: library)
        let disc = StickerLayer(Self.disc(side: 300))
        let hd = FrameBuffer(width: 1280, height: 720, format: .i420)
        let hdCopy = FrameBuffer(width: 1280, height: 720, format: .i420)
        let nv12 = FrameBuffer(width: 1280, height: 720, format: .nv12)
        let fullHD = FrameBuffer(width: 1920, height: 1080, format: .i420)
        let fullHDCopy = FrameBuffer(width: 1920, height: 1080, format: .i420)
        let roll = Self.placement(centreX: 640, centreY: 360, roll: 10)
        let turned = Self.placement(centreX: 640, centreY: 360, roll: 10, yaw: 30, pitch: 10)
        let four = [(320.0, 200.0), (960.0, 200.0), (320.0, 520.0), (960.0, 520.0)].map { Self.placement(centreX: $0.0, centreY: $0.1, roll: -8) }

        var cases: [(name: String, run: () -> Int)] = [
            ("baseline: copy a 720p I420 frame", { hdCopy.copy(from: hd); return 0 }),
            ("baseline: copy a 1080p I420 frame", { fullHDCopy.copy(from: fullHD); return 0 }),
            ("300x300 sticker, roll 10, 720p I420", { StickerBlender.blend(disc, transform: roll, onto: hd.frame) }),
            ("300x300 sticker, roll 10, 1080p I420", { StickerBlender.blend(disc, transform: roll, onto: fullHD.frame) }),
            ("300x300 sticker, roll 10, 720p NV12", { StickerBlender.blend(disc, transform: roll, onto: nv12.frame) }),
            ("300x300 sticker, yaw 30 pitch 10 (3D), 720p", { StickerBlender.blend(disc, transform: turned, onto: hd.frame) }),
            ("four faces, 300x300 each, 720p", { four.reduce(0) { $0 + StickerBlender.blend(disc, transform: $1, onto: hd.frame) } }),
        ]
        var trackedSeconds = 1.0
        cases.append(("tracking the photo's face: fit, checks, smoothing, pose, expressions", {
            // Detection runs on this thread when due, as it does for a single image.
            trackedSeconds += 1.0 / 30
            tracker.process(photoFrame.frame.luma, seconds: trackedSeconds)
            return 0
        }))
        for name in ["sunglasses", "cat", "carnival", "flames"] {
            let package = try loader.load(directory: stickers + "/" + name)
            let renderer = StickerRenderer(package: package)
            let scene = StickerScene(package: package, expressions: ExpressionSettings.defaultRules.map(\.analyser.name), maximumFaces: 4)
            var seconds = 0.0
            cases.append(("\(name) package on a tracked face: timeline, placement, blend", {
                seconds += 1.0 / 30
                if name == "flames" { scene.placeEveryItem(faces: faces) } else { scene.update(faces: faces, seconds: seconds) }
                return renderer.draw(scene.placements, on: hd.frame)
            }))
        }

        if let only { cases = cases.filter { $0.name.contains(only) } }
        var milliseconds = Array(repeating: [Double](), count: cases.count)
        var allocations = Array(repeating: UInt64(0), count: cases.count)
        var covered = Array(repeating: 0, count: cases.count)
        for index in cases.indices { for _ in 0..<20 { _ = cases[index].run() } } // warm-up
        for _ in 0..<rounds {
            for index in cases.indices {
                let run = cases[index].run
                let allocationsBefore = fr_allocation_count()
                let start = threadCPUNanoseconds()
                var pixels = 0
                for _ in 0..<frames { pixels = run() }
                let elapsed = threadCPUNanoseconds() - start
                allocations[index] += fr_allocation_count() - allocationsBefore
                milliseconds[index].append(Double(elapsed) / 1e6 / Double(frames))
                covered[index] = pixels
            }
        }
        print("median over \(rounds) rounds of \(frames) frames each; CPU time of this thread; allocations on this thread")
        print(pad("case", 62) + pad("ms/frame", 10) + pad("pixels", 9) + "allocations/frame")
        for index in cases.indices {
            let sorted = milliseconds[index].sorted()
            let median = sorted[sorted.count / 2]
            let perFrame = Double(allocations[index]) / Double(rounds * frames)
            print(pad(cases[index].name, 62) + pad(formatted(median, decimals: 4), 10) + pad(String(covered[index]), 9) + formatted(perFrame, decimals: 2))
        }
    }

    /// The faces FaceRelay tracks on the photo (a 1280x720 frame), the tracker that found them and
    /// the photo's grey plane, for it to go on tracking.
    func trackedPhoto(library: PipelineLibrary) throws -> (ContiguousArray<TrackedFace>, FaceTracker, FrameBuffer) {
        var settings = FaceTracker.Settings()
        settings.synchronousDetection = true
        let tracker = try makeFaceTracker(settings: settings, landmarkModelPath: defaultLandmarkModelPath)
        let reader = try FrameFileReader(path: photo, library: library)
        var copy: FrameBuffer?
        try reader.forEachFrame { frame, _ in
            for second in 0..<3 { tracker.process(frame.luma, seconds: Double(second) / 30) }
            let buffer = FrameBuffer(width: frame.luma.width, height: frame.luma.height, format: .i420)
            for row in 0..<frame.luma.height {
                (buffer.frame.luma.base + row * buffer.frame.luma.stride).update(from: frame.luma.base + row * frame.luma.stride, count: frame.luma.width)
            }
            copy = buffer
        }
        guard !tracker.faces.isEmpty, let copy else { throw ValidationError("no face found on \(photo)") }
        return (tracker.faces, tracker, copy)
    }

    /// A 300x300 round sticker with a soft edge and a see-through ring: mixed alpha, as real art.
    static func disc(side: Int) -> RGBAImage {
        var pixels = [UInt8](repeating: 0, count: side * side * 4)
        let centre = Double(side) / 2
        for y in 0..<side {
            for x in 0..<side {
                let r = ((Double(x) - centre) * (Double(x) - centre) + (Double(y) - centre) * (Double(y) - centre)).squareRoot()
                let alpha = r < centre * 0.6 ? 255.0 : r < centre * 0.8 ? 128.0 : r < centre * 0.95 ? 255.0 : 0
                let p = (y * side + x) * 4
                pixels[p] = UInt8(x * 255 / side)
                pixels[p + 1] = UInt8(y * 255 / side)
                pixels[p + 2] = 180
                pixels[p + 3] = UInt8(alpha)
            }
        }
        return RGBAImage(width: side, height: side, pixels: pixels)
    }

    /// A 300x300 design square centred on (x, y), turned in the plane and, optionally, in 3D.
    static func placement(centreX: Double, centreY: Double, roll: Double, yaw: Double = 0, pitch: Double = 0) -> Homography {
        let f = 7.0 * 150, y = yaw * .pi / 180, p = pitch * .pi / 180
        let turn = Homography(f * cos(y), -f * sin(p) * sin(y), 0, 0, f * cos(p), 0, sin(y), sin(p) * cos(y), f)
        return .translation(centreX, centreY) * .rotation(roll * .pi / 180) * turn * .translation(-150, -150)
    }
}

/// A frame's memory, owned by the benchmark.
final class FrameBuffer {
    let frame: VideoFrame
    private let memory: UnsafeMutablePointer<UInt8>
    private let size: Int

    init(width: Int, height: Int, format: PixelFormat) {
        let chroma = VideoFrame.chromaSize(width: width, height: height)
        size = width * height + 2 * chroma.width * chroma.height
        memory = .allocate(capacity: size)
        for i in 0..<size { memory[i] = UInt8(truncatingIfNeeded: i &* 7 >> 3) }
        let luma = Plane(base: memory, stride: width, width: width, height: height)
        let chromaBase = memory + width * height
        switch format {
        case .i420:
            frame = VideoFrame(format: .i420, luma: luma,
                               chromaU: Plane(base: chromaBase, stride: chroma.width, width: chroma.width, height: chroma.height),
                               chromaV: Plane(base: chromaBase + chroma.width * chroma.height, stride: chroma.width, width: chroma.width, height: chroma.height),
                               pts: 0, duration: 0)
        case .nv12:
            let uv = Plane(base: chromaBase, stride: chroma.width * 2, width: chroma.width * 2, height: chroma.height)
            frame = VideoFrame(format: .nv12, luma: luma, chromaU: uv, chromaV: uv, pts: 0, duration: 0)
        }
    }

    deinit { memory.deallocate() }

    func copy(from other: FrameBuffer) {
        memory.update(from: other.memory, count: min(size, other.size))
    }
}

func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(1, width - text.count)) }
