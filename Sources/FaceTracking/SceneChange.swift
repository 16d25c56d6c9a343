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
/// Each check also compares the frame with the one the check before measured (`motionSinceLastCheck`),
/// to tell a cut (most of the scene new at once: the stream switched scenes, a camera came on) from
/// motion, a scene that settled from one still moving, and a fade from a pan: a fade or a dissolve
/// moves every block's mean toward the next scene's by about as much at each check, while a camera
/// that moves changes a block by what its texture brings in, another amount each time. How much of a
/// settled scene is new since the coarse scan tells whether a transition ended (`changedShare(since:)`),
/// and a region of it that changed and is still now (`SceneMotion.regionSettled`)
/// may hold a face that came into view while the rest of the scene kept changing (a wipe uncovering
/// a camera, a person who walked in and sat down in front of a game).
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
    /// A block changed steadily when it moved by more than `steadyThreshold` grey levels since the
    /// last check, and by within `steadyRatio` times as much, the same way, at each of the
    /// `steadyChecks` checks before (`SceneMotion.steady`). Noise moves a block's mean by about half
    /// a grey level between checks (sigma 6), so the smaller threshold still leaves it out, and a
    /// slow or faint fade's changes, a few grey levels a check, count.
    static let steadyThreshold: Float = 2, steadyRatio: Float = 1.4, steadyChecks: UInt8 = 2
    /// A region settled when every block of a square this many blocks wide settled (changed by more
    /// than `threshold` at one check and by `steadyThreshold` or less at the next) within as many
    /// checks, one at this one: 64 px, within a face of the smallest size detected (80 px) and the
    /// head around it, where a single block settles now and then wherever something moved and
    /// stopped.
    static let settledRegionSide = 2
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
    /// The scene at the last check.
    private var lastCheck = Reference()
    /// Each block's change at the last check, beyond the gain's; 0 where it moved by `steadyThreshold`
    /// or less or a face covered it.
    private var lastCheckChanges: ContiguousArray<Float> = []
    /// For how many checks in a row each block changed as at the check before.
    private var steadyRuns: ContiguousArray<UInt8> = []
    /// For each block, the checks since it settled (changed by more than `threshold` at the check
    /// before one it was still at), counting the check it settled at as 1, up to `settledRegionSide`;
    /// 0 where it did not settle or changes again.
    private var settledAges: ContiguousArray<UInt8> = []
    /// Scratch for one comparison: the blocks a face covers, then or now.
    private var followedBlocks: ContiguousArray<Bool> = []
    private var columns = 0, rows = 0

    init(maximumFaces: Int) {
        var reference = Reference()
        // The faces followed when a scan ran and those it started, which can be more than the most
        // followed at once: a face dropped while the scan ran can be started again where it went.
        reference.faces.reserveCapacity(maximumFaces * 2)
        references = Array(repeating: reference, count: Scan.allCases.count)
        lastCheck = reference
    }

    /// Takes the block means of a frame. A new frame size forgets the references.
    mutating func measure(_ image: Plane) {
        let newColumns = image.width / Self.block, newRows = image.height / Self.block
        if newColumns != columns || newRows != rows {
            columns = newColumns
            rows = newRows
            current = ContiguousArray(repeating: 0, count: columns * rows)
            currentBrightest = ContiguousArray(repeating: 0, count: columns * rows)
            followedBlocks = ContiguousArray(repeating: false, count: columns * rows)
            lastCheckChanges = ContiguousArray(repeating: 0, count: columns * rows)
            steadyRuns = ContiguousArray(repeating: 0, count: columns * rows)
            settledAges = ContiguousArray(repeating: 0, count: columns * rows)
            for scan in Scan.allCases { Self.forget(&references[scan.rawValue], size: current.count) }
            Self.forget(&lastCheck, size: current.count)
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

    private static func forget(_ reference: inout Reference, size: Int) {
        reference.means = ContiguousArray(repeating: 0, count: size)
        reference.brightest = ContiguousArray(repeating: 0, count: size)
        reference.taken = false
    }

    /// `scan` looks at the scene as last measured, with faces at `faces`.
    mutating func markScanned(_ scan: Scan, faces: some Sequence<FaceBox>) {
        Self.take(current, currentBrightest, into: &references[scan.rawValue], faces: faces)
    }

    /// The scene as last measured (`current`, `currentBrightest`) becomes `reference`, with faces at
    /// `faces` (within the room kept, not to allocate). Static, and handed the arrays it reads: a
    /// method reading `self` while a reference kept in `self` is written copied `self`, so the
    /// reference's arrays were shared and written by copying them (three allocations a check).
    private static func take(_ current: ContiguousArray<Float>, _ currentBrightest: ContiguousArray<UInt8>, into reference: inout Reference,
                             faces: some Sequence<FaceBox>) {
        reference.means.withUnsafeMutableBufferPointer { means in
            current.withUnsafeBufferPointer { now in
                for i in means.indices { means[i] = now[i] }
            }
        }
        reference.brightest.withUnsafeMutableBufferPointer { brightest in
            currentBrightest.withUnsafeBufferPointer { now in
                for i in brightest.indices { brightest[i] = now[i] }
            }
        }
        reference.faces.removeAll(keepingCapacity: true)
        for face in faces { Self.add(face, to: &reference) }
        reference.taken = true
    }

    /// How the blocks away from the faces now (`faces`) and at the last check changed since that
    /// check, beyond the change of the whole frame's gain (nothing on the first check); the scene as
    /// last measured becomes the last check.
    mutating func motionSinceLastCheck(outside faces: some Sequence<FaceBox>) -> SceneMotion {
        var changed = 0, steady = 0, counted = 0
        if lastCheck.taken {
            markFollowedBlocks(then: lastCheck.faces, now: faces)
            let gain = self.gain(since: lastCheck)
            for index in followedBlocks.indices {
                let before = lastCheckChanges[index], run = steadyRuns[index], age = settledAges[index]
                lastCheckChanges[index] = 0
                steadyRuns[index] = 0
                settledAges[index] = 0
                guard !followedBlocks[index] else { continue }
                counted += 1
                guard let change = change(of: index, since: lastCheck, gain: gain, beyond: Self.steadyThreshold) else {
                    settledAges[index] = abs(before) > Self.threshold ? 1 : age > 0 && age < Self.settledRegionSide ? age + 1 : 0
                    continue
                }
                if abs(change) > Self.threshold { changed += 1 }
                lastCheckChanges[index] = change
                let ratio = change / before
                guard ratio >= 1 / Self.steadyRatio && ratio <= Self.steadyRatio else { continue }
                steadyRuns[index] = min(run, Self.steadyChecks - 1) + 1
                if steadyRuns[index] >= Self.steadyChecks { steady += 1 }
            }
        }
        Self.take(current, currentBrightest, into: &lastCheck, faces: faces)
        return SceneMotion(changed: Self.share((changed, counted)), steady: Self.share((steady, counted)), regionSettled: anySettledRegion())
    }

    /// Whether some square of `settledRegionSide` blocks settled with this check: each of its blocks
    /// settled within the last `settledRegionSide` checks, one of them at this one. The edge of a
    /// wipe slower than the square a check (a 1.5 s wipe over 720 rows moves 41 px) settles the rows
    /// of blocks it passed one at a time, and no square settles at one check but where the grid
    /// happens to fall within a check's strip; an edge sweeping a block a check or faster settles
    /// every square it passed within this window (`SceneCutTests`' wipes from below).
    private func anySettledRegion() -> Bool {
        let side = Self.settledRegionSide
        guard columns >= side, rows >= side else { return false }
        return settledAges.withUnsafeBufferPointer { ages in
            for row in 0...(rows - side) {
                for column in 0...(columns - side) where ages[row * columns + column] > 0 {
                    var square = true, settledNow = false
                    for y in row..<(row + side) {
                        for x in column..<(column + side) {
                            let age = ages[y * columns + x]
                            if age == 0 { square = false }
                            if age == 1 { settledNow = true }
                        }
                    }
                    if square && settledNow { return true }
                }
            }
            return false
        }
    }

    /// The share of the blocks away from the faces now (`faces`) and then that changed since `scan`
    /// last ran, beyond the change of the whole frame's gain; 1 before it first ran.
    mutating func changedShare(since scan: Scan, outside faces: some Sequence<FaceBox>) -> Float {
        let reference = references[scan.rawValue]
        guard reference.taken else { return 1 }
        let blocks = changedBlocks(since: reference, outside: faces, firstOnly: false)
        return Self.share((blocks.changed, blocks.counted))
    }

    private static func share(_ blocks: (changed: Int, counted: Int)) -> Float {
        blocks.counted > 0 ? Float(blocks.changed) / Float(blocks.counted) : 0
    }

    /// Adds a face to where the last `scan` saw faces (within the room kept, not to allocate).
    mutating func addFace(_ face: FaceBox, to scan: Scan) { Self.add(face, to: &references[scan.rawValue]) }

    private static func add(_ face: FaceBox, to reference: inout Reference) {
        guard reference.faces.count < reference.faces.capacity else { return }
        reference.faces.append(face)
    }

    /// Whether some block away from the faces now (`faces`) and then changed since `scan` last ran,
    /// beyond the change of the whole frame's gain; true before it first ran.
    mutating func changed(since scan: Scan, outside faces: some Sequence<FaceBox>) -> Bool {
        let reference = references[scan.rawValue]
        guard reference.taken else { return true }
        return changedBlocks(since: reference, outside: faces, firstOnly: true).changed > 0
    }

    /// The pixels spanned by the blocks away from the faces now (`faces`) and then that changed since
    /// `scan` last ran; nil when none did (or it never ran).
    mutating func changedRegion(since scan: Scan, outside faces: some Sequence<FaceBox>) -> PixelRegion? {
        let reference = references[scan.rawValue]
        guard reference.taken else { return nil }
        let blocks = changedBlocks(since: reference, outside: faces, firstOnly: false)
        guard blocks.changed > 0 else { return nil }
        let (left, top, right, bottom) = blocks.bounds
        return PixelRegion(x: left * Self.block, y: top * Self.block, width: (right - left + 1) * Self.block,
                           height: (bottom - top + 1) * Self.block)
    }

    /// The blocks away from the faces now and then that changed since `reference`, how many blocks
    /// lie away from them, and the columns and rows the changed ones span; `firstOnly`: only whether
    /// one changed (the count stops there).
    private mutating func changedBlocks(since reference: Reference, outside faces: some Sequence<FaceBox>, firstOnly: Bool)
        -> (changed: Int, counted: Int, bounds: (left: Int, top: Int, right: Int, bottom: Int)) {
        markFollowedBlocks(then: reference.faces, now: faces)
        let gain = self.gain(since: reference)
        var changed = 0, counted = 0
        var bounds = (left: Int.max, top: Int.max, right: -1, bottom: -1)
        for index in followedBlocks.indices where !followedBlocks[index] {
            counted += 1
            guard change(of: index, since: reference, gain: gain, beyond: Self.threshold) != nil else { continue }
            changed += 1
            let (column, row) = (index % columns, index / columns)
            bounds = (min(bounds.left, column), min(bounds.top, row), max(bounds.right, column), max(bounds.bottom, row))
            if firstOnly { break }
        }
        return (changed, counted, bounds)
    }

    /// How far block `index`'s mean moved from `reference`'s, scaled by the frame's `gain`, where it
    /// moved beyond `threshold` grey levels (nil where it did not): a block that may have clipped at
    /// white may lie anywhere between its mean then and that mean times the gain.
    private func change(of index: Int, since reference: Reference, gain: Float, beyond threshold: Float) -> Float? {
        let then = reference.means[index], scaled = min(gain * then, 255)
        let nearWhite = max(currentBrightest[index], reference.brightest[index]) >= Self.nearWhite
        let (lowest, highest) = nearWhite ? (min(then, scaled), max(then, scaled)) : (scaled, scaled)
        let now = current[index]
        if now < lowest - threshold { return now - lowest }
        if now > highest + threshold { return now - highest }
        return nil
    }

    /// The median of the blocks' brightness now over then, away from the faces: how much the
    /// camera's gain moved since the reference.
    private func gain(since reference: Reference) -> Float {
        var histogram = GainHistogram(repeating: 0)
        var counted: Int32 = 0
        for index in followedBlocks.indices where !followedBlocks[index] && reference.means[index] >= Self.gainFloor {
            let step = Int(((current[index] / reference.means[index] - Self.lowestGain) * 256).rounded())
            histogram[min(max(step, 0), histogram.count - 1)] += 1
            counted += 1
        }
        guard counted > 0 else { return 1 }
        var below: Int32 = 0
        for step in histogram.indices {
            below += histogram[step]
            if below * 2 >= counted { return Self.lowestGain + Float(step) / 256 }
        }
        return 1
    }

    /// Marks in `followedBlocks` the blocks the faces then and now cover, each face once (its box, as
    /// the tracker draws it round the face, is worked out once per comparison, not per block).
    private mutating func markFollowedBlocks(then: ContiguousArray<FaceBox>, now: some Sequence<FaceBox>) {
        let (columns, rows) = (columns, rows)
        followedBlocks.withUnsafeMutableBufferPointer { blocks in
            for i in blocks.indices { blocks[i] = false }
            // A block [c, c + 1) blocks wide overlaps a box from x to x + width where c >= floor(x)
            // and c < x + width, in blocks.
            // In blocks, clamped to the frame before they become integers (a box far outside, or
            // not a number, covers nothing).
            func span(_ start: Float, _ length: Float, _ count: Int) -> Range<Int> {
                let side = Float(Self.block), limit = Float(count)
                guard start.isFinite, length.isFinite else { return 0..<0 }
                let first = Int(min(max((start / side).rounded(.down), 0), limit))
                let last = Int(min(max(((start + length) / side).rounded(.up), 0), limit))
                return first..<max(first, last)
            }
            func mark(_ box: FaceBox) {
                let columnSpan = span(box.x, box.width, columns), rowSpan = span(box.y, box.height, rows)
                for row in rowSpan {
                    for column in columnSpan { blocks[row * columns + column] = true }
                }
            }
            for box in then { mark(box) }
            for box in now { mark(box) }
        }
    }
}

/// How the scene away from the faces changed between two scene checks.
struct SceneMotion: Equatable {
    /// The share of the blocks that changed.
    var changed: Float
    /// The share of the blocks that changed as they did at the check before: the same way, by within
    /// `SceneChange.steadyRatio` times as much (`SceneChange.steadyThreshold`).
    var steady: Float = 0
    /// A region at least `SceneChange.settledRegionSide` blocks square changed and is still now: each
    /// of its blocks settled within as many checks, one at this one.
    var regionSettled = false
}

extension FaceBox {
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
