import FrameKit
import StickerPictures

/// A sticker as loaded from its folder: every item checked, every frame decoded.
public struct StickerPackage: Sendable {
    /// The folder name: what `--sticker NAME` selects.
    public let name: String
    /// The human name shown by `facerelay stickers list`.
    public let title: String
    public let directory: String
    /// Items in drawing order: ascending `z`, then the order of the file.
    public let items: [StickerItem]

    public init(name: String, title: String, directory: String, items: [StickerItem]) {
        self.name = name
        self.title = title
        self.directory = directory
        self.items = items
    }

    /// The expressions whose start or end any item waits for.
    public var expressionsUsed: Set<String> {
        Set(items.flatMap { [$0.begin, $0.end].compactMap { $0?.expression } })
    }
}

/// One picture (or animation) of a sticker, placed on one feature of the face.
public struct StickerItem: Sendable {
    public let id: String
    /// The frames of the animation, all the same size: the design space of `placement`.
    public let frames: [RGBAImage]
    /// How long each frame shows, seconds: 1/fps each for a list of frames, the file's own delays
    /// for an animated GIF, APNG or WebP. Unused for a single frame.
    public let frameSeconds: [Double]
    /// The SVG documents the frames were drawn from, one a frame, when they are SVG: drawn again at
    /// the size the item shows at, so that it stays sharp.
    public let drawings: [VectorDrawing]?
    /// Whether the animation starts again after its last frame; a `once` item completes instead.
    public let loop: Bool
    public let z: Int
    public let placement: Placement
    public let begin: Trigger
    public let end: Trigger?
    /// Seconds after its start when the item ends by itself, if any.
    public let duration: Double?
    /// Turns with the head's yaw and pitch (a perspective warp), not only with its roll.
    public let follow3D: Bool

    public init(id: String, frames: [RGBAImage], frameSeconds: [Double], drawings: [VectorDrawing]? = nil, loop: Bool, z: Int,
                placement: Placement, begin: Trigger, end: Trigger?, duration: Double?, follow3D: Bool) {
        precondition(frameSeconds.count == frames.count && (drawings?.count ?? frames.count) == frames.count)
        self.id = id
        self.frames = frames
        self.frameSeconds = frameSeconds
        self.drawings = drawings
        self.loop = loop
        self.z = z
        self.placement = placement
        self.begin = begin
        self.end = end
        self.duration = duration
        self.follow3D = follow3D
    }

    /// Frames shown `fps` times a second.
    public init(id: String, frames: [RGBAImage], fps: Double, loop: Bool, z: Int, placement: Placement,
                begin: Trigger, end: Trigger?, duration: Double?, follow3D: Bool) {
        self.init(id: id, frames: frames, frameSeconds: Array(repeating: fps > 0 ? 1 / fps : 0, count: frames.count), loop: loop, z: z,
                  placement: placement, begin: begin, end: end, duration: duration, follow3D: follow3D)
    }

    public var designWidth: Int { frames[0].width }
    public var designHeight: Int { frames[0].height }
    /// Length of one pass through the frames, seconds (0 for a single frame).
    public var animationSeconds: Double { frames.count > 1 ? frameSeconds.reduce(0, +) : 0 }
    /// Frames per second on average (0 for a single frame).
    public var fps: Double { animationSeconds > 0 ? Double(frames.count) / animationSeconds : 0 }
}

/// Where an item sits on the face.
public enum Placement: Sendable, Equatable {
    /// Seed-style anchoring: a design point pinned to a landmark, scaled by a landmark distance.
    case landmarks(LandmarkAnchor)
    /// A face feature's bounding box, grown by factors and shifted by offsets (per-feature masks).
    case region(RegionAnchor)
}

/// A point of the sticker picture (design pixels) that belongs on a landmark, or on the mean of
/// several (iBUG 68-point indices, 0...67).
public struct LandmarkPoint: Sendable, Equatable {
    public let landmarks: [Int]
    public let x: Double
    public let y: Double

    public init(landmarks: [Int], x: Double, y: Double) {
        self.landmarks = landmarks
        self.x = x
        self.y = y
    }
}

public struct LandmarkAnchor: Sendable, Equatable {
    /// The design point placed exactly on its landmark(s).
    public let position: LandmarkPoint
    /// The point the item turns about when it follows the head in 3D; the position when absent.
    public let rotateCenter: LandmarkPoint?
    /// The two landmarks whose distance (against the distance of their design points) sets the
    /// scale, and whose direction sets the in-plane angle.
    public let pointA: LandmarkPoint
    public let pointB: LandmarkPoint

    public init(position: LandmarkPoint, rotateCenter: LandmarkPoint?, pointA: LandmarkPoint, pointB: LandmarkPoint) {
        self.position = position
        self.rotateCenter = rotateCenter
        self.pointA = pointA
        self.pointB = pointB
    }
}

/// The landmark groups of a region anchor.
public enum FaceFeature: String, Sendable, CaseIterable {
    case leftEye, rightEye, eyes, leftBrow, rightBrow, brows, nose, lips, jaw, face

    /// iBUG 68-point indices of the feature.
    public var landmarks: ClosedRange<Int> {
        switch self {
        case .leftEye: 42...47
        case .rightEye: 36...41
        case .eyes: 36...47
        case .leftBrow: 22...26
        case .rightBrow: 17...21
        case .brows: 17...26
        case .nose: 27...35
        case .lips: 48...67
        case .jaw: 0...16
        case .face: 0...67
        }
    }
}

public struct RegionAnchor: Sendable, Equatable {
    public let feature: FaceFeature
    /// The item's width and height as multiples of the feature's extent along the face's axes.
    public let widthFactor: Double
    public let heightFactor: Double
    /// Shift of the item's centre from the feature's centre, as fractions of the feature's extent
    /// (x towards the image's right on an upright face, y downwards).
    public let offsetX: Double
    public let offsetY: Double

    public init(feature: FaceFeature, widthFactor: Double, heightFactor: Double, offsetX: Double, offsetY: Double) {
        self.feature = feature
        self.widthFactor = widthFactor
        self.heightFactor = heightFactor
        self.offsetX = offsetX
        self.offsetY = offsetY
    }
}

/// What starts or ends an item.
public enum Trigger: Sendable, Equatable, CustomStringConvertible {
    /// From the moment the face is found.
    case always
    /// When the named expression switches on (`mouthOpen`, `smile`, `blinkLeft`...).
    case expressionStarts(String)
    /// When the named expression switches off (`mouthOpen.end`).
    case expressionEnds(String)
    /// When the named item of the same sticker completes (`sticker1.complete`).
    case itemCompletes(String)

    public var expression: String? {
        switch self {
        case .expressionStarts(let name), .expressionEnds(let name): name
        case .always, .itemCompletes: nil
        }
    }

    public var description: String {
        switch self {
        case .always: "always"
        case .expressionStarts(let name): name
        case .expressionEnds(let name): name + ".end"
        case .itemCompletes(let item): item + ".complete"
        }
    }
}
