/// A random number generator that gives the same numbers on every run (SplitMix64), so that a test
/// with wavering or noisy input fails or passes the same way each time.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in `low...high`.
    public mutating func uniform(_ low: Float, _ high: Float) -> Float { Float.random(in: low...high, using: &self) }
}
