import FaceTracking

/// One item of a sticker to draw on this frame: which picture, which of its frames, and where.
public struct StickerPlacement: Sendable {
    public var faceID: Int
    /// Index into the package's items.
    public var item: Int
    /// Index into the item's frames.
    public var frame: Int
    /// Design pixels to frame pixels.
    public var transform: Homography

    public init(faceID: Int, item: Int, frame: Int, transform: Homography) {
        self.faceID = faceID
        self.item = item
        self.frame = frame
        self.transform = transform
    }
}

/// A sticker on every tracked face: one timeline per face, started when the face appears and
/// dropped when it goes, and the list of placements to draw for the current frame. After the
/// faces have appeared, `update` allocates nothing: timelines sit in fixed slots and the placement
/// list keeps its capacity.
public final class StickerScene {
    public let package: StickerPackage
    public let expressions: [String]
    /// Placements of the last `update`, in drawing order (face by face, items by z).
    public private(set) var placements: ContiguousArray<StickerPlacement> = []
    /// Called with the face id and item id of every item that completes.
    public var onCompleted: ((Int, String) -> Void)?

    private var faceIDs: ContiguousArray<Int>
    private var timelines: ContiguousArray<StickerTimeline>
    private let template: StickerTimeline

    public init(package: StickerPackage, expressions: [String], maximumFaces: Int) {
        self.package = package
        self.expressions = expressions
        template = StickerTimeline(package: package, expressions: expressions)
        faceIDs = ContiguousArray(repeating: -1, count: maximumFaces)
        timelines = ContiguousArray(repeating: template, count: maximumFaces)
        placements.reserveCapacity(maximumFaces * package.items.count)
    }

    /// The timeline of a face on screen, nil when there is none.
    public func timeline(ofFace id: Int) -> StickerTimeline? {
        faceIDs.firstIndex(of: id).map { timelines[$0] }
    }

    public func update(faces: ContiguousArray<TrackedFace>, seconds: Double) {
        placements.removeAll(keepingCapacity: true)
        // A face that is gone ends its instance; its slot is free for the next face.
        for slot in faceIDs.indices where faceIDs[slot] >= 0 && !faces.contains(where: { $0.id == faceIDs[slot] }) {
            faceIDs[slot] = -1
        }
        for face in faces {
            var slot = faceIDs.firstIndex(of: face.id)
            if slot == nil, let free = faceIDs.firstIndex(of: -1) {
                faceIDs[free] = face.id
                timelines[free] = template
                slot = free
            }
            guard let slot else { continue }
            let id = face.id
            timelines[slot].advance(to: seconds, active: face.expressions.active) { item in
                self.onCompleted?(id, self.package.items[item].id)
            }
            guard face.isShown else { continue }
            for (index, item) in package.items.enumerated() {
                guard let frame = timelines[slot].frame(of: index, at: seconds),
                      let transform = StickerGeometry.transform(for: item, landmarks: face.landmarks, pose: face.pose) else { continue }
                placements.append(StickerPlacement(faceID: id, item: index, frame: frame, transform: transform))
            }
        }
    }

    /// Starts every item on every face at once, ignoring triggers: how previews show a whole sticker.
    public func placeEveryItem(faces: ContiguousArray<TrackedFace>) {
        placements.removeAll(keepingCapacity: true)
        for face in faces where face.isShown {
            for (index, item) in package.items.enumerated() {
                guard let transform = StickerGeometry.transform(for: item, landmarks: face.landmarks, pose: face.pose) else { continue }
                placements.append(StickerPlacement(faceID: face.id, item: index, frame: item.frames.count / 2, transform: transform))
            }
        }
    }
}
