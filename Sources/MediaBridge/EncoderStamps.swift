/// What the frames going into the encoder are stamped with.
///
/// The appsink that hands the relay a decoded frame keeps a reference to it until the next pull,
/// so the relay never holds a decoded frame alone: changing its timestamps means a second buffer
/// that shares its memory, and the decoder's pool then throws the frame away instead of reusing
/// it (a fresh 1.4 MB mapping, faulted in, for every 720p frame). So the encoder's source runs
/// `offset` behind the timestamps of the frames it takes (a pad offset set once, at the first
/// frame), and a decoded frame whose own timestamp already is `offset` plus its place on the output
/// goes to the encoder as it is, neither copied nor retimed: every frame of an input that keeps
/// its clock, when nothing is drawn on it. A frame drawn on, repaired, or from an input that came
/// back with a clock of its own goes out as a copy stamped `stamp(output:)`.
public struct EncoderStamps: Sendable, Equatable {
    /// The encoder's input timestamp minus the output time, for every frame.
    public let offset: UInt64

    /// Fixed by the first frame, stamped `decoded` by the input (nil: no timestamp) and placed at
    /// `outputTime`: the offset that lets it go out with its own timestamp.
    public init(firstDecoded decoded: UInt64?, outputTime: UInt64) {
        guard let decoded, decoded >= outputTime else {
            offset = 0
            return
        }
        offset = decoded - outputTime
    }

    /// The timestamp a frame shown at `outputTime` carries into the encoder.
    public func stamp(output outputTime: UInt64) -> UInt64 { offset + outputTime }

    /// Whether a decoded frame stamped `decoded` already carries the stamp for `outputTime`.
    public func carries(decoded: UInt64?, output outputTime: UInt64) -> Bool {
        decoded == stamp(output: outputTime)
    }
}
