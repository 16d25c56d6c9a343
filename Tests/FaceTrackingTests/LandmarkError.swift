import FaceTracking

extension Landmarks {
    /// Mean distance of the points from `truth`'s, in outer-eye distances (`eyes`, by default
    /// `truth`'s own): how far a fit lies from where the face is. `visible`: only the points marked,
    /// the hidden side of a turned face left out.
    func meanError(to truth: Landmarks, visible: [Bool]? = nil, eyes: Float? = nil) -> Float {
        var sum: Float = 0, count: Float = 0
        for i in 0..<68 where visible?[i] ?? true {
            sum += self[i].distance(to: truth[i])
            count += 1
        }
        return sum / count / (eyes ?? truth.eyeDistance)
    }
}
