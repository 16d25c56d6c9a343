import FrameKit

/// Whether a new face can have come into view since a scan last looked: the mean brightness of
/// blocks of the frame, against their means when that scan ran, leaving out the blocks where a
/// followed face is now or was then (a followed face moving is no news). A face that walks in, turns
/// to the camera or is uncovered changes its blocks by far more than sensor noise, which averages out
/// over a block: each block is read on every fourth row, 256 pixels of its 1,024, so that a webcam's
/// noise (sigma 8) moves a block's mean by half a grey level (SceneChangeTests: with 16 pixels, by 2,
/// and one block of a 720p frame's 880 passed the threshold on nearly every frame). The coarse and
/// the fine scan each keep their own reference.
///
/// A webcam's automatic gain and white balance change every block at once: the blocks are compared
/// after scaling the reference by the frame's gain, the median of the blocks' ratios (webcam rows
/// of tracking-quality.sh: a gain wandering by 12 % started a whole-frame scan on most checks).
struct SceneChange {
    enum Scan: Int, CaseIterable { case coarse, fine }

    /// Side of a block, in pixels of the frame, and the spacing of the rows read in it.
    static let block = 32, rowStep = 4
    /// Change of a block's mean, in grey levels, that counts.
    static let threshold: Float = 6
    /// The gain is measured on blocks at least this bright (darker ones say little about it), in
    /// steps of 1/256 from 1/2 to 2 (`GainHistogram`), and taken as 1 beyond that.
    static let gainFloor: Float = 16, lowestGain: Float = 0.5
    /// Blocks counted by their ratio of brightness, one slot per gain step. A fixed-size value on the
    /// stack: `withUnsafeTemporaryAllocation` took its 1.5 KB from the heap on every scene check.
    private typealias GainHistogram = InlineArray<384, Int32>
    /// A block with a pixel this bright, then or now, may have clipped at white as the gain moved:
    /// each pixel then moved by the gain or less, toward white, so the block's mean may lie anywhere
    /// between its mean then and that mean times the gain (a face coming in darkens a bright block
    /// below both).
    static let nearWhite: UInt8 = 250

    /// The scene as a scan saw it: block means and where the followed faces were.
    private struct Reference {
        var means: ContiguousArray<Float> = []
        /// The brightest pixel read in each block.
        var brightest: ContiguousArray<UInt8> = []
        var faces: ContiguousArray<FaceBox> = []
        var taken = false
    }

    private var current: ContiguousArray<Float> = []
    private var currentBrightest: ContiguousArray<UInt8> = []
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
            currentBrightest = ContiguousArray(repeating: 0, count: columns * rows)
            for scan in Scan.allCases {
                references[scan.rawValue].means = current
                references[scan.rawValue].brightest = currentBrightest
                references[scan.rawValue].taken = false
            }
        }
        let samples = Float((Self.block / Self.rowStep) * Self.block)
        for row in 0..<rows {
            for column in 0..<columns {
                // A block's row is 32 bytes: two 16-lane loads, summed in 16-bit lanes (at most
                // 8 rows x 2 x 255 each).
                var sums = SIMD16<UInt16>(repeating: 0)
                var brightest = SIMD16<UInt8>(repeating: 0)
                for y in stride(from: row * Self.block, to: (row + 1) * Self.block, by: Self.rowStep) {
                    let line = UnsafeRawPointer(image.base + y * image.stride + column * Self.block)
                    let left = line.loadUnaligned(as: SIMD16<UInt8>.self), right = line.loadUnaligned(fromByteOffset: 16, as: SIMD16<UInt8>.self)
                    sums &+= SIMD16<UInt16>(truncatingIfNeeded: left) &+ SIMD16<UInt16>(truncatingIfNeeded: right)
                    brightest = pointwiseMax(brightest, pointwiseMax(left, right))
                }
                current[row * columns + column] = Float(SIMD16<UInt32>(truncatingIfNeeded: sums).wrappedSum()) / samples
                currentBrightest[row * columns + column] = brightest.max()
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
        references[scan.rawValue].brightest.withUnsafeMutableBufferPointer { brightest in
            currentBrightest.withUnsafeBufferPointer { now in
                for i in brightest.indices { brightest[i] = now[i] }
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

    /// Whether some block away from the faces now (`faces`) and then changed since `scan` last ran,
    /// beyond the change of the whole frame's gain; true before it first ran.
    func changed(since scan: Scan, outside faces: some Sequence<FaceBox>) -> Bool {
        let reference = references[scan.rawValue]
        guard reference.taken else { return true }
        let gain = self.gain(since: reference, outside: faces)
        for row in 0..<rows {
            for column in 0..<columns {
                let index = row * columns + column
                let then = reference.means[index], scaled = min(gain * then, 255)
                let nearWhite = max(currentBrightest[index], reference.brightest[index]) >= Self.nearWhite
                let (lowest, highest) = nearWhite ? (min(then, scaled), max(then, scaled)) : (scaled, scaled)
                guard current[index] < lowest - Self.threshold || current[index] > highest + Self.threshold else { continue }
                if !Self.isFollowed(row: row, column: column, then: reference.faces, now: faces) { return true }
            }
        }
        return false
    }

    /// The median of the blocks' brightness now over then, away from the faces: how much the
    /// camera's gain moved since the reference.
    private func gain(since reference: Reference, outside faces: some Sequence<FaceBox>) -> Float {
        var histogram = GainHistogram(repeating: 0)
        var counted: Int32 = 0
        for row in 0..<rows {
            for column in 0..<columns {
                let index = row * columns + column
                let then = reference.means[index]
                guard then >= Self.gainFloor, !Self.isFollowed(row: row, column: column, then: reference.faces, now: faces) else { continue }
                let step = Int(((current[index] / then - Self.lowestGain) * 256).rounded())
                histogram[min(max(step, 0), histogram.count - 1)] += 1
                counted += 1
            }
        }
        guard counted > 0 else { return 1 }
        var below: Int32 = 0
        for step in histogram.indices {
            below += histogram[step]
            if below * 2 >= counted { return Self.lowestGain + Float(step) / 256 }
        }
        return 1
    }

    private static func isFollowed(row: Int, column: Int, then: ContiguousArray<FaceBox>, now: some Sequence<FaceBox>) -> Bool {
        let block = FaceBox(x: Float(column * Self.block), y: Float(row * Self.block), width: Float(Self.block), height: Float(Self.block))
        return then.contains { $0.intersects(block) } || now.contains { $0.intersects(block) }
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
