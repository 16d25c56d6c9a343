internal import CGStreamer
import FrameKit
import Logging
import StreamPlan

/// The frame thread's work: pulls decoded frames from the current input generation's appsink,
/// runs the Swift stage on each and pushes it to the encoder, on the output's timeline. The first
/// frame builds the encoder and the outputs; the first frame of an input that came back continues its timeline.
/// What `run()` changes lives in its own locals.
final class VideoPump: Sendable {
    /// What the frame thread reads from: one generation's appsink, and how its start-up backlog goes.
    private struct Source {
        let sink: UnsafeMutablePointer<GstElement>
        let generation: Int
        /// A live input's start-up backlog, relayed under back-pressure until it is caught up (see `run`).
        var backlog: StartBacklog?
        var relayedAny = false
    }

    /// The two frames a decoded frame is mapped into (read) and copied to (write),
    /// allocated once per run.
    private struct Frames {
        let mapped = UnsafeMutablePointer<GstVideoFrame>.allocate(capacity: 1)
        let drawn = UnsafeMutablePointer<GstVideoFrame>.allocate(capacity: 1)

        func deallocate() {
            mapped.deallocate()
            drawn.deallocate()
        }
    }

    private let stage: FrameStage
    private let input: InputEndpoint
    private let live: Bool
    private let control: RelayControl
    private let generations: IngestGenerations
    /// Notified when an appsink queues a frame, and on every change of the relay.
    private let samples: ChangeSignal
    private let outputs: RelayOutputs
    private let timeline: OutputTimeline
    private let counters: RelayCounters
    private let thumbnails: ThumbnailTap
    private let describer: InputErrorDescriber
    private let logger: Logger

    init(stage: FrameStage, input: InputEndpoint, live: Bool, control: RelayControl, generations: IngestGenerations,
         samples: ChangeSignal, outputs: RelayOutputs, timeline: OutputTimeline, counters: RelayCounters, thumbnails: ThumbnailTap,
         describer: InputErrorDescriber, logger: Logger) {
        self.stage = stage
        self.input = input
        self.live = live
        self.control = control
        self.generations = generations
        self.samples = samples
        self.outputs = outputs
        self.timeline = timeline
        self.counters = counters
        self.thumbnails = thumbnails
        self.logger = logger
        self.describer = describer
    }

    var trackingFigures: TrackingFigures? { stage.trackingFigures }

    /// The frame thread's timestamps: the output's, never going back, and the encoder's stamps,
    /// fixed by the first frame sent.
    private struct OutgoingTimestamps {
        var output = MonotonicTimestamps()
        var encoder: EncoderStamps?
    }

    /// Relays frames until the input ends (and is not awaited) or a stop; then ends the encoder's video.
    ///
    /// The ingest hands over its first frames without dropping any (see IngestPipeline): a live
    /// input catches up on them under back-pressure, then drops the oldest frames again (the
    /// template's `drop`) once its frames come at the input's own pace (`StartBacklog`), so that a
    /// stage that falls behind loses frames rather than delay. Each generation of the input starts so again.
    func run() {
        defer {
            outputs.encoder?.endVideo()
            control.finished(.video)
        }
        let frames = Frames()
        defer { frames.deallocate() }
        var source: Source?
        var timestamps = OutgoingTimestamps()
        while !control.stopRequested {
            let (ingest, generation) = generations.current
            if source?.generation != generation {
                // What the earlier generations' appsinks still held went with their pipelines.
                if let earlier = generations.framesArrived(before: generation) {
                    counters.noteFramesGone(framesArrived: earlier, mayStillWait: 0)
                }
                source = nil
                guard case .found(let sink) = generations.waitForSink(\.videoSink, of: ingest, generation: generation,
                                                                      control: control, videoStarted: { false }) else { continue }
                samples.notify(onSamplesOf: sink)
                source = Source(sink: sink, generation: generation, backlog: live ? StartBacklog() : nil)
            }
            guard var current = source else { continue }
            let goesOn = pullFrame(from: &current, frames: frames, timestamps: &timestamps)
            source = current
            if !goesOn { break }
        }
    }

    /// Relays the next frame of `source`, or sees why none came. False once the stream has ended.
    private func pullFrame(from source: inout Source, frames: Frames, timestamps: inout OutgoingTimestamps) -> Bool {
        let seen = samples.current
        if live && source.backlog == nil { counters.noteFramesGone(framesArrived: generations.framesArrived, mayStillWait: counters.videoQueueCapacity) }
        guard let sample = fr_appsink_pull(source.sink, 0) else {
            if generations.hasEnded(source.sink, generation: source.generation) {
                guard control.inputEndIsAwaited else {
                    if input.isLive { logger.info("input ended: \(describer.liveInputEndReason)", metadata: ["input": "\(input)"]) }
                    return false
                }
                generations.waitForNext(after: source.generation, control: control)
                return true
            }
            // Until a frame comes, the input ends, or the relay changes.
            samples.wait(past: seen, until: nil)
            return true
        }
        let pulledAt = ContinuousClock.now
        counters.framesPulled.add(1, ordering: .relaxed)
        let runningTime = UInt64(fr_sample_running_time(sample))
        let resuming = source.generation > 0 && !source.relayedAny ? source.generation : nil
        relay(sample: sample, runningTime: runningTime, from: source.sink, frames: frames, resumingInput: resuming, timestamps: &timestamps)
        source.relayedAny = true
        fr_sample_unref(sample)
        if source.backlog?.relayed(runningTime: runningTime, pulledAt: pulledAt) == true {
            fr_set_bool(source.sink, "drop", 1)
            source.backlog = nil
        }
        return true
    }

    /// `resumingInput`: the generation of an input that came back, on its first frame.
    private func relay(sample: OpaquePointer, runningTime: UInt64, from sink: UnsafeMutablePointer<GstElement>, frames: Frames,
                       resumingInput: Int?, timestamps: inout OutgoingTimestamps) {
        guard let caps = fr_sample_caps(sample), let buffer = fr_sample_buffer(sample), runningTime != UInt64.max else {
            counters.framesDiscarded.add(1, ordering: .relaxed)
            return
        }
        guard let placed = place(caps: caps, buffer: buffer, runningTime: runningTime, sink: sink, resumingInput: resumingInput) else { return }
        // A video frame stamped before the first one (start-up jitter of a live input) is kept,
        // clamped to the origin and then repaired; only audio is trimmed before the origin.
        guard let encoder = placed.encoder, let rebased = placed.timeline.rebase(max(runningTime, placed.timeline.origin ?? runningTime)) else {
            counters.framesDiscarded.add(1, ordering: .relaxed)
            return
        }
        let pts = timestamps.output.next(rebased)
        if pts != rebased {
            counters.timestampsRepaired.add(1, ordering: .relaxed)
            logger.debug("input video timestamp went backwards; moved forward", metadata: ["by_ms": "\(Double(pts - rebased) / 1e6)"])
        }
        let decodedPTS = fr_buffer_pts(buffer) == GstClockTime.max ? nil : UInt64(fr_buffer_pts(buffer))
        let stamps = timestamps.encoder ?? {
            let first = EncoderStamps(firstDecoded: decodedPTS, outputTime: pts)
            encoder.delayTimeline(by: first.offset)
            timestamps.encoder = first
            return first
        }()
        let duration = UInt64(fr_buffer_duration(buffer))
        guard let outgoing = runStage(on: sample, encoder: encoder, frames: frames, pts: pts, duration: duration, decodedPTS: decodedPTS, stamps: stamps) else {
            counters.framesDiscarded.add(1, ordering: .relaxed)
            return
        }
        thumbnails.offer(outgoing, caps: caps)
        timeline.sentVideo(at: pts)
        if encoder.pushVideo(outgoing) {
            counters.framesOut.add(1, ordering: .relaxed)
        } else {
            counters.framesDiscarded.add(1, ordering: .relaxed)
        }
    }

    /// Where a frame goes: the encoder and the timeline. The first frame builds the encoder and the
    /// outputs; the first of an input that came back continues the timeline; a frame of another
    /// size or format ends the stream. Nil: the frame goes nowhere, the stream is failing.
    private func place(caps: UnsafeMutablePointer<GstCaps>, buffer: UnsafeMutablePointer<GstBuffer>, runningTime: UInt64,
                       sink: UnsafeMutablePointer<GstElement>, resumingInput: Int?) -> (encoder: EncoderPipeline?, timeline: SharedTimeline)? {
        let (encoder, knownCaps) = outputs.encoderWithCaps
        guard let knownCaps else {
            guard let started = startOutput(caps: caps, runningTime: runningTime, videoSink: sink) else { return nil }
            noteMissedStart(firstTimestamp: fr_buffer_pts(buffer), frameDuration: fr_buffer_duration(buffer))
            return (started, timeline.current)
        }
        if let generation = resumingInput {
            return (encoder, continueTimeline(at: runningTime, frameDuration: UInt64(fr_buffer_duration(buffer)), generation: generation))
        }
        if knownCaps != caps, gst_caps_is_equal(knownCaps, caps) == 0, !Self.sameGeometry(knownCaps, caps) {
            control.fail(describer.formatChanged(to: GStreamer.takeString(fr_caps_string(caps)) ?? ""))
            return nil
        }
        return (encoder, timeline.current)
    }

    /// The stage reads the frame and may draw; returns the buffer to send, stamped for the
    /// encoder, or nil when the frame cannot be read: the decoded frame itself when nothing is
    /// drawn on it and it carries its stamp already, otherwise a copy of it from the encoder's pool,
    /// drawn on or not (see `EncoderStamps`). The decoded frame is never drawn on: the appsink
    /// holds it too, so it is not writable.
    private func runStage(on sample: OpaquePointer, encoder: EncoderPipeline, frames: Frames,
                          pts: UInt64, duration: UInt64, decodedPTS: UInt64?, stamps: EncoderStamps) -> UnsafeMutablePointer<GstBuffer>? {
        guard let decoded = fr_sample_buffer(sample),
              gst_video_frame_map(frames.mapped, encoder.videoInfo, decoded, GST_MAP_READ) != 0 else { return nil }
        defer { gst_video_frame_unmap(frames.mapped) }
        // A live input's queue drops frames once full: the stage is told how full it is, so that
        // it can lighten its work first. A file's queue is meant to fill.
        stage.noteBacklog(queued: counters.framesQueued(framesArrived: generations.framesArrived), capacity: live ? counters.videoQueueCapacity : 0)
        let draws = measuringStage { stage.analyse(videoFrame(frames.mapped, pts: pts, duration: duration)) == .draw }
        if !draws, stamps.carries(decoded: decodedPTS, output: pts) {
            return fr_buffer_ref(decoded)
        }
        let outgoing = encoder.acquireFrameBuffer().flatMap {
            copy(into: $0, frames: frames, encoder: encoder, drawing: draws, pts: pts, duration: duration)
        } ?? fr_sample_take_buffer(sample)
        fr_buffer_set_timing(outgoing, GstClockTime(stamps.stamp(output: pts)), GstClockTime(duration))
        return outgoing
    }

    /// Copies the mapped frame, its pixels and then its metadata, into `pooled` and, when `drawing`,
    /// has the stage draw on the copy. Nil, `pooled` released, when the copy cannot be made: the
    /// frame then goes out as decoded.
    private func copy(into pooled: UnsafeMutablePointer<GstBuffer>, frames: Frames, encoder: EncoderPipeline,
                      drawing: Bool, pts: UInt64, duration: UInt64) -> UnsafeMutablePointer<GstBuffer>? {
        guard gst_video_frame_map(frames.drawn, encoder.videoInfo, pooled, GST_MAP_WRITE) != 0 else {
            fr_buffer_unref(pooled)
            return nil
        }
        let copied = gst_video_frame_copy(frames.drawn, frames.mapped) != 0
        if copied && drawing {
            measuringStage { stage.draw(on: videoFrame(frames.drawn, pts: pts, duration: duration)) }
            counters.framesDrawn.add(1, ordering: .relaxed)
        }
        gst_video_frame_unmap(frames.drawn)
        // Once unmapped (a mapped frame holds a reference, so `pooled` is not writable before), the
        // copy takes the decoded frame's captions and flags: a drawn frame carries what an undrawn
        // one sent uncopied does.
        guard copied, fr_buffer_copy_metadata(pooled, frames.mapped.pointee.buffer) != 0 else {
            fr_buffer_unref(pooled)
            noteCopyFailed()
            return nil
        }
        counters.framesCopied.add(1, ordering: .relaxed)
        return pooled
    }

    /// Runs part of the stage, counting its thread CPU time as the stage's: a frame's copy counts
    /// as the relay's.
    private func measuringStage<Result>(_ work: () -> Result) -> Result {
        let before = threadCPUNanoseconds()
        defer { counters.stageCPU.add(threadCPUNanoseconds() - before, ordering: .relaxed) }
        return work()
    }

    private func noteCopyFailed() {
        let failures = counters.copiesFailed.add(1, ordering: .relaxed).newValue
        // The first and then every thousandth: a format that never copies must not flood the log.
        if failures == 1 || failures % 1000 == 0 {
            logger.warning("cannot copy a decoded frame into the output's frame pool (\(failures) so far); those frames go out without stickers: report the input's video format",
                           metadata: ["input": "\(input)"])
        }
    }

    /// The first frame decides the encoder and the outputs: its caps, and whether an audio stream
    /// is there to carry. An output that cannot start goes to the supervisor to be retried.
    private func startOutput(caps: UnsafeMutablePointer<GstCaps>, runningTime: UInt64, videoSink: UnsafeMutablePointer<GstElement>) -> EncoderPipeline? {
        // Building the encoder takes a moment (x264 start-up) while a live input keeps coming: hold
        // the frames (back-pressure) instead of letting the appsink drop them, then restore.
        let dropsFrames = fr_get_bool(videoSink, "drop")
        fr_set_bool(videoSink, "drop", 0)
        defer { fr_set_bool(videoSink, "drop", dropsFrames) }
        let ingest = generations.ingest
        let withAudio = waitForAudioPad(of: ingest)
        do {
            let info = try MediaRelay.StreamInfo(caps: caps, withAudio: withAudio)
            let (encoder, failed) = try outputs.build(videoCaps: caps, info: info)
            timeline.start(at: runningTime)
            control.withLifecycle { $0.firstFrame() }
            for (index, error) in failed {
                // A network output is retried like one that failed later; a file that cannot be
                // written is given up. Both leave the other outputs running.
                guard let endpoint = outputs.endpoint(index) else { continue }
                if endpoint.isNetwork {
                    logger.warning("output \(index) could not start, retrying: \(error)", metadata: ["output": "\(endpoint)"])
                    outputs.takeDown(index, error: error.description)
                    control.withLifecycle { $0.outputFailed(index, error.description, at: .now) }
                } else {
                    logger.error("output \(index) could not start, given up: \(error)", metadata: ["output": "\(endpoint)"])
                    outputs.giveUp(index, error: error.description)
                    control.withLifecycle { $0.outputRemoved(index) }
                }
            }
            ingest.lockVideoSize(width: info.width, height: info.height)
            if !withAudio { ingest.refuseAudio() }
            logger.info("relaying", metadata: [
                "input": "\(input)", "outputs": "\(outputs.statuses.map(\.address).joined(separator: ", "))",
                "video": "\(info.width)x\(info.height) @ \(formatted(info.framesPerSecond, decimals: 2)) fps",
                "audio": "\(withAudio ? (ingest.snapshot.audioIsPassThrough ? "AAC kept as is" : "encoded to AAC") : "none")",
            ])
            return encoder
        } catch {
            control.fail(error)
            return nil
        }
    }

    /// decodebin announces audio and video pads separately: the audio pad gets a moment (a second
    /// at most) before the output is built with or without audio.
    private func waitForAudioPad(of ingest: IngestPipeline) -> Bool {
        let started = ContinuousClock.now
        _ = generations.changes.wait(until: started + .seconds(1)) {
            let streams = ingest.snapshot
            return streams.allPadsKnown || streams.audioSink != nil || control.stopRequested
        }
        let withAudio = ingest.snapshot.audioSink != nil
        logger.debug("encoder start: waited for the audio pad", metadata: ["seconds": "\(ContinuousClock.now - started)", "audio": "\(withAudio)"])
        return withAudio
    }

    /// A live input joined late (a player of nginx-rtmp gets a running stream from its next
    /// keyframe on) starts with a timestamp past zero: say how much of the broadcast was missed.
    private func noteMissedStart(firstTimestamp: GstClockTime, frameDuration: GstClockTime) {
        // Only RTMP stamps a broadcast from zero at its start: MPEG-TS (over SRT) carries the
        // encoder's clock, which starts anywhere (1.4 s is ffmpeg's habit).
        guard case .rtmp = input, firstTimestamp != GstClockTime.max, frameDuration > 0, frameDuration != GstClockTime.max else { return }
        let missed = Int((firstTimestamp + frameDuration / 2) / frameDuration)
        // B-frames put a broadcast's first picture a few frames past zero (0.067 s is common):
        // only more than a quarter of a second counts as missed; over a minute is not a start.
        guard firstTimestamp > 250_000_000, firstTimestamp < 60_000_000_000 else { return }
        counters.framesMissedAtStart.store(missed, ordering: .relaxed)
        logger.warning("joined the input \(formatted(Double(firstTimestamp) / 1e9, decimals: 2)) s after it started: about \(missed) frames were missed before the relay was listening", metadata: ["input": "\(input)"])
    }

    /// The first frame of an input that came back: the output goes on where it is (see
    /// `OutputTimeline.resume`).
    private func continueTimeline(at runningTime: UInt64, frameDuration: UInt64, generation: Int) -> SharedTimeline {
        let away = control.withLifecycle { $0.inputResumed(at: .now) } ?? .zero
        let resumed = timeline.resume(at: runningTime, frameDuration: frameDuration, generation: generation)
        logger.info("input back after \(formatted(away.inSeconds, decimals: 1)) s; continuing the same output", metadata: [
            "input": "\(input)", "at_s": "\(formatted(Double(resumed.rebase(runningTime) ?? 0) / 1e9, decimals: 2))",
        ])
        return resumed
    }

    private static func sameGeometry(_ a: UnsafeMutablePointer<GstCaps>, _ b: UnsafeMutablePointer<GstCaps>) -> Bool {
        let first = UnsafeMutablePointer<GstVideoInfo>.allocate(capacity: 2)
        defer { first.deallocate() }
        gst_video_info_init(first)
        gst_video_info_init(first + 1)
        guard gst_video_info_from_caps(first, a) != 0, gst_video_info_from_caps(first + 1, b) != 0 else { return false }
        return fr_video_info_width(first) == fr_video_info_width(first + 1)
            && fr_video_info_height(first) == fr_video_info_height(first + 1)
            && fr_video_info_format(first) == fr_video_info_format(first + 1)
    }
}
