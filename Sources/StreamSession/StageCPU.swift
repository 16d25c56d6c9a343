import MediaBridge

/// A stream's CPU time split by stage, from what its threads and its stage measured.
///
/// - decode: the ingest's streaming threads (network input, demuxing, decoding, scaling) and the
///   decoder's own threads, which inherit their names.
/// - track: face tracking, on the frame thread and on the detection thread.
/// - composite: the rest of the Swift stage: sticker timelines, placement and blending.
/// - relay: the rest of the frame and audio threads: pulling from the ingest, copying each frame
///   into the egress's pool, pushing to the egress.
/// - encode: x264 on the encoder's streaming thread and x264's own threads.
/// - mux: the muxer, the sink (network or file) and the audio branch of the egress.
/// Not in any stage: rtmp2src's and rtmp2sink's network loops (their threads cannot be told
/// apart), the control socket, HTTP, and loading models; `ProcessCPUCheck` reports them.
public struct StageCPU: Sendable, Equatable {
    public enum Stage: String, CaseIterable, Sendable {
        case decode, track, composite, relay, encode, mux
    }

    public var decode: UInt64 = 0
    public var track: UInt64 = 0
    public var composite: UInt64 = 0
    public var relay: UInt64 = 0
    public var encode: UInt64 = 0
    public var mux: UInt64 = 0

    public init(_ counters: MediaRelay.Counters) {
        let threads = counters.threadCPUNanoseconds
        decode = threads[.decode] ?? 0
        encode = threads[.encode] ?? 0
        mux = (threads[.mux] ?? 0) &+ (threads[.audio] ?? 0)
        track = counters.tracking?.cpuNanoseconds ?? 0
        let trackingOnFrameThread = track - min(track, counters.tracking?.detectionCPUNanoseconds ?? 0)
        composite = counters.stageCPUNanoseconds - min(counters.stageCPUNanoseconds, trackingOnFrameThread)
        let frameThread = threads[.frame] ?? 0
        relay = frameThread - min(frameThread, counters.stageCPUNanoseconds)
    }

    init() {}

    public var byStage: [(Stage, UInt64)] {
        [(.decode, decode), (.track, track), (.composite, composite), (.relay, relay), (.encode, encode), (.mux, mux)]
    }

    public var total: UInt64 { decode &+ track &+ composite &+ relay &+ encode &+ mux }

    /// The CPU spent between `earlier` and this, stage by stage (never negative).
    public func minus(_ earlier: StageCPU) -> StageCPU {
        var difference = StageCPU()
        difference.decode = decode - min(decode, earlier.decode)
        difference.track = track - min(track, earlier.track)
        difference.composite = composite - min(composite, earlier.composite)
        difference.relay = relay - min(relay, earlier.relay)
        difference.encode = encode - min(encode, earlier.encode)
        difference.mux = mux - min(mux, earlier.mux)
        return difference
    }
}
