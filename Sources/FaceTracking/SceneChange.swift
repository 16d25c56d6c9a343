import FrameKit

/// Whether a new face can have come into view since a scan last looked: the mean brightness of
/// blocks of the frame, against their means when that scan ran, leaving out the blocks where a
/// followed face is now or was then (a followed face moving is no news). A face that walks in, turns
/// to the camera or is uncovered changes its blocks by far more than sensor noise, which averages out
/// over a block. Each block is sampled on a grid, 16 pixels of its 1,024: about 20 µs for a 720p
/// frame. The coarse and the fine scan each keep their own reference.
struct SceneChange {
    enum Scan: Int, CaseIterable { case coarse, fine }

    /// Side of a block, in pixels of the frame, and the spacing of the pixels sampled in it.
    static let block = 32, sampleStep = 8
    /// Change of a block's mean, in grey levels, that counts.
    static let threshold: Float = 6

    /// The scene as a scan saw it: block means and where the followed faces were.
    private struct Reference {
        var means: ContiguousArray<Float> = []
        var faces: ContiguousArray<FaceBox> = []
        var taken = false
    }

    private var current: ContiguousArray<Float> = []
    private var references: [Reference]
    private var columns = 0, rows = 0

    init(maximumFaces: Int) {
        var reference = Reference()
        // The faces followed when a scan ran and those it started, which can be more than the most
        // followed at once: a face dropped while the scan ran can be started again where it went.
        reference.faces.reserveCapacity(maximumFaces * 2)
        references = Array(repeating: reference, count: Scan.allCases.count)
    }

    /// Takes the block means of a frame. A new frame size forgets the references.
    mutating func measure(_ image: Plane) {
        let newColumns = image.width / Self.block, newRows = image.height / Self.block
        if newColumns != columns || newRows != rows {
            columns = newColumns
            rows = newRows
            current = ContiguousArray(repeating: 0, count: columns * rows)
            for scan in Scan.allCases {
                references[scan.rawValue].means = current
                references[scan.rawValue].taken = false
            }
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

    /// `scan` looks at the scene as last measured, with faces at `faces`.
    mutating func markScanned(_ scan: Scan, faces: some Sequence<FaceBox>) {
        references[scan.rawValue].means.withUnsafeMutableBufferPointer { means in
            current.withUnsafeBufferPointer { now in
                for i in means.indices { means[i] = now[i] }
            }
        }
        references[scan.rawValue].faces.removeAll(keepingCapacity: true)
        for face in faces { addFace(face, to: scan) }
        references[scan.rawValue].taken = true
    }

    /// Adds a face to where the last `scan` saw faces (within the room kept, not to allocate).
    mutating func addFace(_ face: FaceBox, to scan: Scan) {
        guard references[scan.rawValue].faces.count < references[scan.rawValue].faces.capacity else { return }
        references[scan.rawValue].faces.append(face)
    }

    /// Whether some block away from the faces now (`faces`) and then changed since `scan` last ran;
    /// true before it first ran.
    func changed(since scan: Scan, outside faces: some Sequence<FaceBox>) -> Bool {
        let reference = references[scan.rawValue]
        guard reference.taken else { return true }
        for row in 0..<rows {
            for column in 0..<columns where abs(current[row * columns + column] - reference.means[row * columns + column]) > Self.threshold {
                let block = FaceBox(x: Float(column * Self.block), y: Float(row * Self.block), width: Float(Self.block), height: Float(Self.block))
                if !reference.faces.contains(where: { $0.intersects(block) }) && !faces.contains(where: { $0.intersects(block) }) {
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

    /// The upright box that holds this one turned by `angle` radians about its centre.
    func bounds(turnedBy angle: Float) -> FaceBox {
        let cosine = abs(cosf(angle)), sine = abs(sinf(angle))
        let turnedWidth = width * cosine + height * sine, turnedHeight = width * sine + height * cosine
        return FaceBox(x: x + (width - turnedWidth) / 2, y: y + (height - turnedHeight) / 2, width: turnedWidth, height: turnedHeight)
    }

    /// Grown by `fraction` of its size on every side.
    func grown(by fraction: Float) -> FaceBox {
        FaceBox(x: x - width * fraction, y: y - height * fraction, width: width * (1 + 2 * fraction), height: height * (1 + 2 * fraction))
    }
}

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
