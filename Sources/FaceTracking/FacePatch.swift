import FrameKit

/// A face's pixels as its last fit saw them, and how far they moved by a later frame: what carries a
/// face's landmarks (and its sticker) on between fits when the face stage fits every second or
/// fourth frame only (`FaceTracker.coast`), and where the next fit starts. Carried on at the speed
/// of the last two fits instead, a sticker overshot wherever the face slowed, and went on the wrong
/// way for three frames where it turned back: a face swaying 150 px, fitted every fourth frame, left
/// its sticker up to 12 px off its nose at 1280x720 after each turn; the corpus's faces swaying and
/// darting lay 75-160 % of their eye distance off (`CoastingTests`).
///
/// The patch is the inner face (the box of the brows, eyes, nose and mouth, where little
/// background shows), kept as the means of its blocks of pixels at three scales: 48 blocks across,
/// 24 of twice the size and 12 of four times. A later frame is searched on the coarsest scale at
/// every whole block within a patch's width of the place predicted (so a face that stopped or turned
/// back is found as surely as one that went on), then matched on the two finer scales by the
/// inverse compositional Lucas-Kanade algorithm for a shift alone (Baker and Matthews, IJCV 2004).
/// Block means take out most of the sensor noise and keep the gradients the match follows.
///
/// Its buffers are allocated with it, once per face: keeping and following allocate nothing.
final class FacePatch {
    /// Blocks across the patch at the fine scale (fewer for a face smaller than that many pixels).
    static let fineCells = 48
    /// Blocks of the later frame read beyond the patch's sides at each scale: the coarse search
    /// reaches a patch's width from the predicted place; each finer match starts within a block or
    /// two of where the coarser one ended.
    static let margins = (coarse: 12, middle: 4, fine: 4)

    /// One scale: the kept patch, its gradients and their sums, and the later frame's blocks around it.
    private final class Scale {
        var cells = 0, block = 1
        let template: UnsafeMutablePointer<Float>, gradientX: UnsafeMutablePointer<Float>, gradientY: UnsafeMutablePointer<Float>
        let image: UnsafeMutablePointer<Float>
        let imageCapacity: Int
        /// The Gauss-Newton matrix of the shift, inverted, and the patch's RMS contrast about its mean.
        var inverse = (xx: Float(0), xy: Float(0), yy: Float(0)), contrast: Float = 0

        init(cells: Int, margin: Int) {
            imageCapacity = (cells + 2 * margin) * (cells + 2 * margin)
            template = .allocate(capacity: cells * cells)
            gradientX = .allocate(capacity: cells * cells)
            gradientY = .allocate(capacity: cells * cells)
            image = .allocate(capacity: imageCapacity)
        }

        deinit {
            template.deallocate()
            gradientX.deallocate()
            gradientY.deallocate()
            image.deallocate()
        }
    }

    private let coarse = Scale(cells: FacePatch.fineCells / 4, margin: FacePatch.margins.coarse)
    private let middle = Scale(cells: FacePatch.fineCells / 2, margin: FacePatch.margins.middle)
    private let fine = Scale(cells: FacePatch.fineCells, margin: FacePatch.margins.fine)
    /// The patch's top left corner on the frame it was kept from, in pixels.
    private var left = 0, top = 0
    /// Whether a patch is kept: not for a face reaching over the frame's edge, too small, or flat.
    private(set) var isKept = false

    /// How well a match must explain the patch to be taken: the RMS of what it leaves (after the
    /// mean, so a change of exposure costs nothing) at most this share of the patch's contrast.
    static let acceptedResidual: Float = 0.5

    init() {}

    /// Keeps the square of `side` pixels centred on `centre` from `grey`.
    func keep(_ grey: Plane, centre: Point, side: Float) {
        isKept = false
        guard side >= 24, side.isFinite, centre.x.isFinite, centre.y.isFinite else { return }
        let block = max(1, Int(side) / Self.fineCells)
        let cells = min(Self.fineCells, Int(side) / block) & ~3
        let extent = cells * block
        left = Int(centre.x.rounded()) - extent / 2
        top = Int(centre.y.rounded()) - extent / 2
        guard left >= 0, top >= 0, left + extent <= grey.width, top + extent <= grey.height else { return }
        fine.cells = cells
        fine.block = block
        middle.cells = cells / 2
        middle.block = 2 * block
        coarse.cells = cells / 4
        coarse.block = 4 * block
        Self.average(grey, left: left, top: top, block: fine.block, cells: fine.cells, rows: fine.cells, into: fine.template)
        Self.average(grey, left: left, top: top, block: middle.block, cells: middle.cells, rows: middle.cells, into: middle.template)
        Self.average(grey, left: left, top: top, block: coarse.block, cells: coarse.cells, rows: coarse.cells, into: coarse.template)
        isKept = Self.prepare(fine) && Self.prepare(middle) && Self.prepare(coarse)
    }

    func forget() { isKept = false }

    /// How far the kept patch moved by `grey`, in pixels, searched around `guess`; nil when it cannot
    /// be told (no patch kept, the patch left the frame, or no match explains it).
    func follow(_ grey: Plane, guess: Point) -> Point? {
        guard isKept, let searched = search(grey, around: guess),
              let refined = refine(grey, scale: middle, margin: Self.margins.middle, from: searched),
              let shift = refine(grey, scale: fine, margin: Self.margins.fine, from: refined.shift),
              shift.residual <= Self.acceptedResidual * fine.contrast
        else { return nil }
        return shift.shift
    }

    /// The coarse scale's best whole-block shift within its margin of `guess` (least squared
    /// difference), refined to part of a block by a parabola through its neighbours.
    private func search(_ grey: Plane, around guess: Point) -> Point? {
        let scale = coarse, c = scale.block, n = scale.cells, reach = Self.margins.coarse
        var originX = left + Int((guess.x / Float(c)).rounded()) * c - reach * c
        var originY = top + Int((guess.y / Float(c)).rounded()) * c - reach * c
        guard let side = read(grey, scale: scale, originX: &originX, originY: &originY, margin: reach) else { return nil }
        let positions = 2 * reach + 1
        var best = (x: 0, y: 0, cost: Float.infinity)
        /// The squared difference at (`ox`, `oy`), or some sum over `bound` once past it.
        func cost(_ ox: Int, _ oy: Int, bound: Float = .infinity) -> Float {
            var sum: Float = 0
            for y in 0..<n {
                let row = scale.image + (oy + y) * side + ox, template = scale.template + y * n
                for x in 0..<n {
                    let d = row[x] - template[x]
                    sum += d * d
                }
                if sum > bound { break }
            }
            return sum
        }
        for oy in 0..<positions {
            for ox in 0..<positions {
                let value = cost(ox, oy, bound: best.cost)
                if value < best.cost { best = (ox, oy, value) }
            }
        }
        func vertex(_ before: Float, _ at: Float, _ after: Float) -> Float {
            let curve = before - 2 * at + after
            return curve > 0 ? max(-0.5, min(0.5, (before - after) / (2 * curve))) : 0
        }
        var x = Float(best.x), y = Float(best.y)
        if best.x > 0 && best.x < positions - 1 { x += vertex(cost(best.x - 1, best.y), best.cost, cost(best.x + 1, best.y)) }
        if best.y > 0 && best.y < positions - 1 { y += vertex(cost(best.x, best.y - 1), best.cost, cost(best.x, best.y + 1)) }
        return Point(x: Float(originX) + x * Float(c) - Float(left), y: Float(originY) + y * Float(c) - Float(top))
    }

    /// The shift matched on `scale`, started from `start` (pixels) and read `margin` blocks around it.
    private func refine(_ grey: Plane, scale: Scale, margin: Int, from start: Point) -> (shift: Point, residual: Float)? {
        let b = scale.block
        var originX = left + Int((start.x / Float(b)).rounded()) * b - margin * b
        var originY = top + Int((start.y / Float(b)).rounded()) * b - margin * b
        guard let side = read(grey, scale: scale, originX: &originX, originY: &originY, margin: margin) else { return nil }
        let at = Point(x: (Float(left) + start.x - Float(originX)) / Float(b), y: (Float(top) + start.y - Float(originY)) / Float(b))
        guard let match = Self.match(scale, imageSide: side, from: at) else { return nil }
        return (Point(x: Float(originX) + match.at.x * Float(b) - Float(left), y: Float(originY) + match.at.y * Float(b) - Float(top)), match.residual)
    }

    /// Reads the frame's blocks of `scale` from (`originX`, `originY`), the patch's cells and
    /// `margin` more on each side, moved inside the frame where they reach over its edge (the
    /// origin is updated); nil on a frame too small for them.
    private func read(_ grey: Plane, scale: Scale, originX: inout Int, originY: inout Int, margin: Int) -> Int? {
        let side = scale.cells + 2 * margin, extent = side * scale.block
        guard extent <= grey.width, extent <= grey.height, side * side <= scale.imageCapacity else { return nil }
        originX = min(max(0, originX), grey.width - extent)
        originY = min(max(0, originY), grey.height - extent)
        Self.average(grey, left: originX, top: originY, block: scale.block, cells: side, rows: side, into: scale.image)
        return side
    }

    /// The mean of each of `cells` x `rows` blocks of `block` pixels from (`left`, `top`), read on
    /// every `block / 4`-th row and column: 16 pixels or more a block, enough to average out sensor
    /// noise, where reading every pixel of a large face's coarse search (blocks of 20 pixels) cost
    /// as much as the rest of the follow.
    private static func average(_ grey: Plane, left: Int, top: Int, block: Int, cells: Int, rows: Int, into out: UnsafeMutablePointer<Float>) {
        let step = max(1, block / 4), samples = (block + step - 1) / step
        let scale = 1 / Float(samples * samples)
        for row in 0..<rows {
            let cellsOut = out + row * cells
            for cell in 0..<cells { cellsOut[cell] = 0 }
            for y in Swift.stride(from: top + row * block, to: top + row * block + block, by: step) {
                let line = grey.row(y) + left
                for cell in 0..<cells {
                    var sum = 0
                    let start = cell * block
                    for x in Swift.stride(from: start, to: start + block, by: step) { sum &+= Int(line[x]) }
                    cellsOut[cell] += Float(sum)
                }
            }
            for cell in 0..<cells { cellsOut[cell] *= scale }
        }
    }

    /// The template's gradients and the inverse of their Gauss-Newton matrix; false for a flat patch.
    private static func prepare(_ scale: Scale) -> Bool {
        let n = scale.cells, t = scale.template
        var xx: Float = 0, xy: Float = 0, yy: Float = 0, sum: Float = 0, squares: Float = 0
        for y in 0..<n {
            for x in 0..<n {
                let i = y * n + x
                let gx = x == 0 ? t[i + 1] - t[i] : x == n - 1 ? t[i] - t[i - 1] : (t[i + 1] - t[i - 1]) / 2
                let gy = y == 0 ? t[i + n] - t[i] : y == n - 1 ? t[i] - t[i - n] : (t[i + n] - t[i - n]) / 2
                scale.gradientX[i] = gx
                scale.gradientY[i] = gy
                xx += gx * gx
                xy += gx * gy
                yy += gy * gy
                sum += t[i]
                squares += t[i] * t[i]
            }
        }
        let count = Float(n * n), mean = sum / count
        scale.contrast = max(0, squares / count - mean * mean).squareRoot()
        let determinant = xx * yy - xy * xy
        // A patch without texture in one direction cannot tell a shift along it.
        guard scale.contrast >= 2, determinant > 1e-3 * (xx + yy) * (xx + yy) else { return false }
        scale.inverse = (yy / determinant, -xy / determinant, xx / determinant)
        return true
    }

    /// Inverse compositional Lucas-Kanade for a shift: where in the read blocks (`imageSide` across)
    /// the template's top left corner lies, started at `start`, and the RMS of what the match leaves
    /// after the mean (at the last step's start, within a hundredth of a block of the end); nil
    /// when it leaves the read blocks or does not settle.
    private static func match(_ scale: Scale, imageSide: Int, from start: Point) -> (at: Point, residual: Float)? {
        var px = start.x, py = start.y
        let limit = Float(imageSide - scale.cells - 1)
        for _ in 0..<30 {
            guard px >= 0, py >= 0, px <= limit, py <= limit else { return nil }
            let found = compare(scale, imageSide: imageSide, at: px, py)
            let dx = scale.inverse.xx * found.bx + scale.inverse.xy * found.by
            let dy = scale.inverse.xy * found.bx + scale.inverse.yy * found.by
            // Inverse compositional: the template's step, taken back on the image.
            px -= dx
            py -= dy
            if dx * dx + dy * dy < 1e-4 { return (Point(x: px, y: py), found.residual) }
        }
        return nil
    }

    /// The template against the read blocks sampled (bilinearly) with its top left corner at
    /// (`px`, `py`): the sums of its gradients times the differences, and the RMS of the
    /// differences after their mean.
    private static func compare(_ scale: Scale, imageSide: Int, at px: Float, _ py: Float) -> (bx: Float, by: Float, residual: Float) {
        let n = scale.cells, t = scale.template, image = scale.image
        let ix = Int(px), iy = Int(py)
        let ax = px - Float(ix), ay = py - Float(iy)
        let w00 = (1 - ax) * (1 - ay), w01 = ax * (1 - ay), w10 = (1 - ax) * ay, w11 = ax * ay
        var bx: Float = 0, by: Float = 0, sum: Float = 0, squares: Float = 0
        for y in 0..<n {
            let row0 = image + (iy + y) * imageSide + ix, row1 = row0 + imageSide
            let base = y * n
            for x in 0..<n {
                let error = row0[x] * w00 + row0[x + 1] * w01 + row1[x] * w10 + row1[x + 1] * w11 - t[base + x]
                bx += scale.gradientX[base + x] * error
                by += scale.gradientY[base + x] * error
                sum += error
                squares += error * error
            }
        }
        let count = Float(n * n), mean = sum / count
        return (bx, by, max(0, squares / count - mean * mean).squareRoot())
    }
}
