/// How far one face's fit changes in size and roll beyond what its motion predicted, frame to frame,
/// when nothing happened: the fit's own noise, learnt per face. A fit whose size or roll changes
/// further than that is a surprise (the face leant in, turned or was lost), and the detector looks at
/// once. A fit that moved further than the floor always is: a search is what finds a face that jumped.
///
/// One fixed threshold cannot serve every face: a sharp face's fit changes size and roll by 0.2-0.5 %
/// (of its box, and in radians) from frame to frame, a soft grey one's (`grace_hopper`) by 1-2 %. At
/// a fixed 2 % a third of that face's frames were searched for a jump that never happened, each
/// search costing three times a check.
struct FitNoise {
    /// How far the fit landed from the prediction: its box's centre (in box widths), its size
    /// (relative) and its roll (radians).
    struct Residual {
        var move: Float, size: Float, angle: Float

        init(fitted: FitRegion, predicted: FitRegion) {
            move = fitted.box.centre.distance(to: predicted.box.centre) / predicted.box.width
            size = fitted.box.width / predicted.box.width - 1
            angle = fitted.angle - predicted.angle
        }
    }

    /// Mean squares of the size and roll residuals on frames that held no surprise.
    private var size, angle: Float
    private let floor, margin, rate: Float

    /// Starts out taking `floor` for `margin` times the noise, so a face's first frames are judged
    /// by the floor alone (as every frame is with a margin of 0); `frames` is about how many frames
    /// the estimate remembers.
    init(floor: Float, margin: Float, frames: Int) {
        self.floor = floor
        self.margin = margin
        rate = 1 / Float(max(1, frames))
        size = Self.startingMeanSquare(floor: floor, margin: margin)
        angle = size
    }

    private static func startingMeanSquare(floor: Float, margin: Float) -> Float {
        margin > 0 ? (floor / margin) * (floor / margin) : 0
    }

    /// The same, having learnt nothing: what judges a face by the floor alone.
    var unlearnt: FitNoise {
        var fresh = self
        fresh.size = Self.startingMeanSquare(floor: floor, margin: margin)
        fresh.angle = fresh.size
        return fresh
    }

    private func beyond(_ value: Float, _ meanSquare: Float) -> Bool {
        abs(value) > max(floor, margin * meanSquare.squareRoot())
    }

    /// Whether the fit's size is a surprise: the fit may have left the face's scale.
    func sizeIsUnexpected(_ r: Residual) -> Bool { beyond(r.size, size) }

    /// Whether the fit moved further than the floor: the face may have jumped.
    func moveIsUnexpected(_ r: Residual) -> Bool { r.move > floor }

    /// Whether the fit moved further than the floor, or its size or roll changed beyond its noise.
    func isUnexpected(_ r: Residual) -> Bool { moveIsUnexpected(r) || sizeIsUnexpected(r) || beyond(r.angle, angle) }

    /// Whether a face predicted at `region` is where it was at `start`, within the fit's own noise:
    /// what a fit from either box could not tell apart.
    func isNoise(from start: FitRegion, to region: FitRegion) -> Bool { !isUnexpected(Residual(fitted: region, predicted: start)) }

    /// Learns from a frame that held no surprise. Surprises are left out, so that a jump does not
    /// raise the bar for the next; the bar still rises to a noisier fit's noise, as each frame below
    /// it pulls the estimate up towards that noise's spread. A fit so noisy that nearly every frame
    /// is beyond the floor learns nothing, and is judged by the floor alone, as every face was
    /// before the noise was learnt.
    mutating func learn(_ r: Residual) {
        size += (r.size * r.size - size) * rate
        angle += (r.angle * r.angle - angle) * rate
    }
}
