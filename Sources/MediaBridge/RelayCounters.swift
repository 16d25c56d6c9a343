import FrameKit
import Synchronization

extension MediaRelay {
    public struct Counters: Sendable, Equatable {
        /// Decoded frames that reached the relay.
        public var framesIn = 0
        /// Frames handed to the encoder.
        public var framesOut = 0
        /// Frames that reached the relay but not the encoder (a live input outrunning the stage).
        /// What an output misses while it reconnects is its own `OutputStatus.framesMissed`.
        public var framesDropped = 0
        /// Thread CPU time spent in the Swift stage (analyse, draw), all frames together.
        public var stageCPUNanoseconds: UInt64 = 0
        public var audioPacketsOut = 0
        public var outputReconnects = 0
        /// Video frames whose input timestamp went backwards and was moved forward.
        public var timestampsRepaired = 0
        /// Frames of a live input that went by before the relay was listening: estimated from the
        /// first frame's own timestamp (a stream's timestamps start at 0 when its publisher starts).
        public var framesMissedAtStart = 0
        /// The stage's face-tracking totals, when it tracks faces.
        public var tracking: TrackingFigures?
        /// CPU nanoseconds of the relay's threads, by what they do (see `ThreadRole`).
        public var threadCPUNanoseconds: [ThreadRole: UInt64] = [:]
        /// Frames the stage drew on.
        public var framesDrawn = 0
        /// Frames sent as copies from the pool of outgoing frames rather than as decoded: those
        /// drawn on, and those whose own timestamp is not their place on the output (`EncoderStamps`).
        public var framesCopied = 0
        /// Decoded frames the relay can hold at once: the ingest's queue and the encoder's input queue.
        public var frameQueueCapacity = 0
        /// Frames the relay can hold at once in its pool of outgoing copies.
        public var framePoolCapacity = Int(EncoderPipeline.poolBuffers)
        /// Each output's state and figures.
        public var outputs: [OutputStatus] = []
        /// Bytes of the input's stream read, container and all (every generation of the input).
        public var ingestBytes = 0

        public init() {}

        init(framesIn: Int, framesOut: Int, framesDropped: Int, stageCPUNanoseconds: UInt64, audioPacketsOut: Int, outputReconnects: Int, timestampsRepaired: Int) {
            self.framesIn = framesIn
            self.framesOut = framesOut
            self.framesDropped = framesDropped
            self.stageCPUNanoseconds = stageCPUNanoseconds
            self.audioPacketsOut = audioPacketsOut
            self.outputReconnects = outputReconnects
            self.timestampsRepaired = timestampsRepaired
        }
    }
}

/// A relay's running counts: bumped by the pumps and the supervisor without locks (each an
/// Atomic of its own, none read together with another to decide anything), gathered by `snapshot`.
final class RelayCounters: Sendable {
    let framesPulled = Atomic<Int>(0)
    let framesOut = Atomic<Int>(0)
    /// Frames the relay itself let go (no egress, unusable timing, refused by the egress).
    let framesDiscarded = Atomic<Int>(0)
    let audioPacketsOut = Atomic<Int>(0)
    let outputReconnects = Atomic<Int>(0)
    let timestampsRepaired = Atomic<Int>(0)
    let framesMissedAtStart = Atomic<Int>(0)
    let framesDrawn = Atomic<Int>(0)
    let framesCopied = Atomic<Int>(0)
    /// Frames relayed as decoded (without stickers) because they could not be copied into the pool.
    let copiesFailed = Atomic<Int>(0)
    let stageCPU = Atomic<UInt64>(0)
    /// A high-water mark of the frames the ingest's appsinks dropped or left behind (`noteFramesGone`).
    private let framesDroppedByIngest = Atomic<Int>(0)
    /// Decoded frames the ingest's appsink holds before it drops the oldest.
    let videoQueueCapacity: Int

    init(live: Bool) {
        videoQueueCapacity = PipelineLibrary.videoQueueCapacity(live: live)
    }

    /// Of `framesArrived`, the frames neither pulled nor among the `mayStillWait` the appsink can
    /// still hold are gone. Called by the frame thread: just before a pull from a live input's
    /// appsink that drops the oldest frame once it holds its capacity, with the capacity (whenever
    /// it dropped a frame its queue is full at the next pull, so the count is exact; taken between
    /// pulls it only bounds it, by up to the capacity); and with 0 for the generations of an input
    /// that was restarted, whose appsinks' frames went with their pipelines. A frame is counted
    /// arriving by a pad probe just before the appsink queues it: one in between, at a full queue,
    /// is counted gone even if the pull makes room for it, so the count can be one over, never under.
    func noteFramesGone(framesArrived: Int, mayStillWait: Int) {
        framesDroppedByIngest.max(framesArrived - framesPulled.load(ordering: .relaxed) - mayStillWait, ordering: .relaxed)
    }

    /// Frames waiting in the ingest's appsink: those that arrived, less those pulled and those it
    /// dropped (which are never pulled, so they must not count as waiting).
    func framesQueued(framesArrived: Int) -> Int {
        max(0, framesArrived - framesPulled.load(ordering: .relaxed) - framesDroppedByIngest.load(ordering: .relaxed))
    }

    /// The counts now. `framesArrived`: decoded frames that reached the appsinks of every input
    /// generation so far.
    func snapshot(framesArrived: Int) -> MediaRelay.Counters {
        let arrived = max(framesArrived, framesPulled.load(ordering: .relaxed))
        let dropped = framesDroppedByIngest.load(ordering: .relaxed)
        var counters = MediaRelay.Counters(
            framesIn: arrived,
            framesOut: framesOut.load(ordering: .relaxed),
            framesDropped: dropped + framesDiscarded.load(ordering: .relaxed),
            stageCPUNanoseconds: stageCPU.load(ordering: .relaxed),
            audioPacketsOut: audioPacketsOut.load(ordering: .relaxed),
            outputReconnects: outputReconnects.load(ordering: .relaxed),
            timestampsRepaired: timestampsRepaired.load(ordering: .relaxed))
        counters.framesMissedAtStart = framesMissedAtStart.load(ordering: .relaxed)
        counters.framesDrawn = framesDrawn.load(ordering: .relaxed)
        counters.framesCopied = framesCopied.load(ordering: .relaxed)
        counters.frameQueueCapacity = videoQueueCapacity + PipelineLibrary.encoderQueueCapacity
        return counters
    }
}
