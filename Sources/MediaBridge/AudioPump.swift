import CGStreamer
import Logging
import StreamPlan

/// The audio thread's work: moves AAC packets from the current input generation's appsink to the
/// egress, rebased on the timeline the video set, so that audio keeps its offset to the video.
final class AudioPump: Sendable {
    /// How far the video may run ahead of the last audio packet before the input's audio counts
    /// as stopped. Below the egress queue's 3 s, which a muxer waiting for audio would fill.
    static let audioStoppedAfter: UInt64 = 2_000_000_000

    private struct Source {
        let sink: UnsafeMutablePointer<GstElement>
        let generation: Int
    }

    /// What the audio thread keeps from packet to packet.
    private struct Progress {
        /// The egress and generation the audio caps were last set for.
        var capsSetOn: (egress: ObjectIdentifier, generation: Int)?
        var lastAudioTime: UInt64 = 0
        /// The egress whose audio was ended because the input's audio stopped.
        var audioEndedOn: ObjectIdentifier?
    }

    /// What happened when the pump looked for a generation's audio.
    private enum Attachment {
        case source(Source)
        /// Look again: a stop, another generation, or this one ended and the next has come.
        case retry
        /// The input has no audio and will not come back: the pump is done.
        case done
    }

    private let input: InputEndpoint
    private let control: RelayControl
    private let generations: IngestGenerations
    private let builder: EgressBuilder
    private let timeline: OutputTimeline
    private let counters: RelayCounters
    private let logger: Logger

    init(input: InputEndpoint, control: RelayControl, generations: IngestGenerations, builder: EgressBuilder,
         timeline: OutputTimeline, counters: RelayCounters, logger: Logger) {
        self.input = input
        self.control = control
        self.generations = generations
        self.builder = builder
        self.timeline = timeline
        self.counters = counters
        self.logger = logger
    }

    /// Moves packets until the input ends (and is not awaited), its audio stops with its video, or a stop.
    func run() {
        defer {
            builder.current?.endAudio()
            control.finished(.audio)
        }
        var source: Source?
        var progress = Progress()
        while !control.stopRequested {
            let (ingest, generation) = generations.current
            if source?.generation != generation {
                source = nil
                switch attach(to: ingest, generation: generation) {
                case .source(let found): source = found
                case .retry: continue
                case .done: return
                }
            }
            guard let current = source else { continue }
            guard let sample = fr_appsink_pull(current.sink, 100_000_000) else {
                if !noPacket(from: current, progress: &progress) { break }
                continue
            }
            forward(sample, from: current, progress: &progress)
            fr_sample_unref(sample)
        }
    }

    /// Finds generation `generation`'s audio appsink and waits until its video has placed it on the timeline.
    private func attach(to ingest: IngestPipeline, generation: Int) -> Attachment {
        switch generations.waitForSink(\.audioSink, of: ingest, generation: generation, control: control,
                                       videoStarted: { builder.streamInfo != nil }) {
        case .found(let sink):
            // Audio is not pulled until this input's first video frame has fixed its place on the
            // timeline: the appsink holds it meanwhile, and packets from just before that frame
            // are trimmed in `forward`.
            _ = generations.changes.wait(until: nil) {
                let placed = timeline.current
                return control.stopRequested || generations.generation != generation
                    || builder.streamInfo != nil && placed.origin != nil && placed.generation == generation
            }
            return .source(Source(sink: sink, generation: generation))
        case .absent:
            guard control.inputEndIsAwaited else { return .done }
            generations.waitForNext(after: generation, control: control)
            return .retry
        case .superseded:
            return .retry
        }
    }

    /// No packet came within the pull's time-out. False when the pump is done.
    private func noPacket(from source: Source, progress: inout Progress) -> Bool {
        if generations.hasEnded(source.sink, generation: source.generation) {
            guard control.inputEndIsAwaited else { return false }
            generations.waitForNext(after: source.generation, control: control)
            return true
        }
        // An audio stream can stop without an end (an MPEG-TS program that drops it): once
        // the video has ended, or gone on too far without it, the muxer must not wait for it.
        if control.videoFinished { return false }
        if let egress = builder.current, egress.hasAudio, progress.audioEndedOn != ObjectIdentifier(egress),
           timeline.latestVideo > progress.lastAudioTime + Self.audioStoppedAfter {
            logger.warning("the input's audio stopped at \(formatted(Double(progress.lastAudioTime) / 1e9, decimals: 2)) s while its video goes on; relaying the video alone", metadata: ["input": "\(input)"])
            egress.endAudio()
            progress.audioEndedOn = ObjectIdentifier(egress)
        }
        return true
    }

    /// Sends one packet on, rebased on the shared timeline; drops it before the first video frame,
    /// while the output reconnects, and once the output's audio was ended.
    private func forward(_ sample: OpaquePointer, from source: Source, progress: inout Progress) {
        let placed = timeline.current
        guard let egress = builder.current, egress.hasAudio, progress.audioEndedOn != ObjectIdentifier(egress),
              placed.generation == source.generation,
              let pts = placed.rebase(UInt64(fr_sample_running_time(sample))),
              let caps = fr_sample_caps(sample), let buffer = fr_sample_take_buffer(sample) else { return }
        if progress.capsSetOn?.egress != ObjectIdentifier(egress) || progress.capsSetOn?.generation != source.generation {
            egress.setAudioCaps(caps)
            progress.capsSetOn = (ObjectIdentifier(egress), source.generation)
        }
        fr_buffer_set_timing(buffer, GstClockTime(pts), fr_buffer_duration(buffer))
        timeline.sentAudio(at: pts)
        progress.lastAudioTime = pts
        if egress.pushAudio(buffer) { counters.audioPacketsOut.add(1, ordering: .relaxed) }
    }
}
