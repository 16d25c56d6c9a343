import MediaBridge
import Testing

@Suite struct EncoderStampsTests {
    private let ms: UInt64 = 1_000_000

    /// An input whose clock starts at 1.47 s (MPEG-TS): its frames keep their own timestamps, and
    /// a copy is stamped on the same clock.
    @Test func theFirstFrameSetsTheOffsetSoThatItsClockIsKept() {
        let stamps = EncoderStamps(firstDecoded: 1_467 * ms, outputTime: 0)
        #expect(stamps.offset == 1_467 * ms)
        #expect(stamps.carries(decoded: 1_467 * ms, output: 0))
        #expect(stamps.carries(decoded: 1_500 * ms, output: 33 * ms))
        #expect(stamps.stamp(output: 33 * ms) == 1_500 * ms)
    }

    /// A frame moved on the output (a repaired timestamp, an input that came back with a clock of
    /// its own) does not carry its stamp: it goes out as a copy, stamped on the encoder's clock.
    @Test func aFrameMovedOnTheOutputDoesNotCarryItsStamp() {
        let stamps = EncoderStamps(firstDecoded: 67 * ms, outputTime: 0)
        #expect(!stamps.carries(decoded: 100 * ms, output: 34 * ms))
        #expect(!stamps.carries(decoded: 0, output: 12_000 * ms))
        #expect(stamps.stamp(output: 12_000 * ms) == 12_067 * ms)
    }

    /// Without a timestamp, or one before its output time, the first frame leaves the encoder's
    /// clock on the output's, and no frame without a timestamp carries one.
    @Test func aFirstFrameWithoutAUsableTimestampLeavesNoOffset() {
        #expect(EncoderStamps(firstDecoded: nil, outputTime: 0).offset == 0)
        #expect(EncoderStamps(firstDecoded: 10 * ms, outputTime: 20 * ms).offset == 0)
        #expect(!EncoderStamps(firstDecoded: nil, outputTime: 0).carries(decoded: nil, output: 0))
    }
}
