import FrameKit

/// Whether a new face can have come into view since the fine scan last looked: the mean brightness
/// of blocks of the frame, against their means when the fine scan ran, leaving out the blocks where
/// a followed face is now or was then (a followed face moving is no news). A face that walks in,
/// turns to the camera or is uncovered changes its blocks by far more than sensor noise, which
/// averages out over a block. Each block is sampled on a grid, 16 pixels of its 1,024: about 20 µs
/// for a 720p frame.
struct SceneChange {
    /// Side of a block, in pixels of the frame, and the spacing of the pixels sampled in it.
    static let block = 32, sampleStep = 8
    /// Change of a block's mean, in grey levels, that counts.
    static let threshold: Float = 6

    private var current: ContiguousArray<Float> = []
    private var reference: ContiguousArray<Float> = []
    /// Where the followed faces were when the reference was taken.
    private var referenceFaces: ContiguousArray<FaceBox> = []
    private var columns = 0, rows = 0
    private var hasReference = false

    init(maximumFaces: Int) { referenceFaces.reserveCapacity(maximumFaces) }

    /// Takes the block means of a frame. A new frame size forgets the reference.
    mutating func measure(_ image: Plane) {
        let newColumns = image.width / Self.block, newRows = image.height / Self.block
        if newColumns != columns || newRows != rows {
            columns = newColumns
            rows = newRows
            current = ContiguousArray(repeating: 0, count: columns * rows)
            reference = current
            hasReference = false
        }
        let samples = Float((Self.block / Self.sampleStep) * (Self.block / Self.sampleStep))
        for row in 0..<rows {
            for column in 0..<columns {
                var sum = 0
                for y in stride(from: row * Self.block, to: (row + 1) * Self.block, by: Self.sampleStep) {
                    let line = image.base + y * image.stride + column * Self.block
                    for x in stride(from: 0, to: Self.block, by: Self.sampleStep) { sum += Int(line[x]) }
                }
                current[row * columns + column] = Float(sum) / samples
            }
        }
    }

    /// The fine scan looks at the scene as last measured, with faces at `faces`.
    mutating func markScanned(faces: some Sequence<FaceBox>) {
        reference = current
        referenceFaces.removeAll(keepingCapacity: true)
        for face in faces where referenceFaces.count < referenceFaces.capacity { referenceFaces.append(face) }
        hasReference = true
    }

    /// Whether some block away from the faces now (`faces`) and then changed since the fine scan;
    /// true before the first.
    func changed(outside faces: some Sequence<FaceBox>) -> Bool {
        guard hasReference else { return true }
        for row in 0..<rows {
            for column in 0..<columns where abs(current[row * columns + column] - reference[row * columns + column]) > Self.threshold {
                let block = FaceBox(x: Float(column * Self.block), y: Float(row * Self.block), width: Float(Self.block), height: Float(Self.block))
                if !referenceFaces.contains(where: { $0.intersects(block) }) && !faces.contains(where: { $0.intersects(block) }) {
                    return true
                }
            }
        }
        return false
    }
}

extension FaceBox {
    func intersects(_ other: FaceBox) -> Bool {
        x < other.x + other.width && other.x < x + width && y < other.y + other.height && other.y < y + height
    }

    /// Grown by `fraction` of its size on every side.
    func grown(by fraction: Float) -> FaceBox {
        FaceBox(x: x - width * fraction, y: y - height * fraction, width: width * (1 + 2 * fraction), height: height * (1 + 2 * fraction))
    }
}
