internal import CGStreamer
import Logging
import StreamPlan

/// The audio thread's work: moves AAC packets from the current input generation's appsink to
/// every output, rebased on the timeline the video set, so that audio keeps its offset to the video.
final class AudioPump: Sendable {
    /// How far the video may run ahead of the last audio packet before the input's audio counts
    /// as stopped. Below an output queue's 3 s, which a muxer waiting for audio would fill.
    static let audioStoppedAfter: UInt64 = 2_000_000_000

    private struct Source {
        let sink: UnsafeMutablePointer<GstElement>
        let generation: Int
    }

    /// What the audio thread keeps from packet to packet.
    private struct Progress {
        var lastAudioTime: UInt64 = 0
        /// The outputs a packet goes to, reused from packet to packet.
        var targets: [OutputPipeline] = []
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
    /// Notified when an appsink queues a packet or a frame (the video's progress tells when the
    /// audio stopped), and on every change of the relay.
    private let samples: ChangeSignal
    private let outputs: RelayOutputs
    private let timeline: OutputTimeline
    private let counters: RelayCounters
    private let logger: Logger

    init(input: InputEndpoint, control: RelayControl, generations: IngestGenerations, samples: ChangeSignal, outputs: RelayOutputs,
         timeline: OutputTimeline, counters: RelayCounters, logger: Logger) {
        self.input = input
        self.control = control
        self.generations = generations
        self.samples = samples
        self.outputs = outputs
        self.timeline = timeline
        self.counters = counters
        self.logger = logger
    }

    /// Moves packets until the input ends (and is not awaited), its audio stops with its video, or a stop.
    func run() {
        defer {
            outputs.endAudio(stopped: false)
            control.finished(.audio)
        }
        var source: Source?
        var progress = Progress()
        progress.targets.reserveCapacity(16)
        while !control.stopRequested {
            let (ingest, generation) = generations.current
            if source?.generation != generation {
                source = nil
                switch attach(to: ingest, generation: generation) {
                case .source(let found):
                    source = found
                    // A returning input's audio is late only once its own video has gone on
                    // without it: the pause between the two inputs is no silence of the audio.
                    progress.lastAudioTime = max(progress.lastAudioTime, timeline.current.originOutputTime)
                case .retry: continue
                case .done: return
                }
            }
            guard let current = source else { continue }
            let seen = samples.current
            guard let sample = fr_appsink_pull(current.sink, 0) else {
                if !noPacket(from: current, progress: &progress) { break }
                samples.wait(past: seen, until: nil)
                continue
            }
            forward(sample, from: current, progress: &progress)
            fr_sample_unref(sample)
        }
    }

    /// Finds generation `generation`'s audio appsink and waits until its video has placed it on the timeline.
    private func attach(to ingest: IngestPipeline, generation: Int) -> Attachment {
        switch generations.waitForSink(\.audioSink, of: ingest, generation: generation, control: control,
                                       videoStarted: { outputs.streamInfo != nil }) {
        case .found(let sink):
            // Audio is not pulled until this input's first video frame has fixed its place on the
            // timeline: the appsink holds it meanwhile, and packets from just before that frame
            // are trimmed in `forward`.
            _ = generations.changes.wait(until: nil) {
                let placed = timeline.current
                return control.stopRequested || generations.generation != generation
                    || outputs.streamInfo != nil && placed.origin != nil && placed.generation == generation
            }
            samples.notify(onSamplesOf: sink)
            return .source(Source(sink: sink, generation: generation))
        case .absent:
            guard control.inputEndIsAwaited else { return .done }
            generations.waitForNext(after: generation, control: control)
            return .retry
        case .superseded:
            return .retry
        }
    }

    /// No packet waits. False when the pump is done.
    private func noPacket(from source: Source, progress: inout Progress) -> Bool {
        if generations.hasEnded(source.sink, generation: source.generation) {
            guard control.inputEndIsAwaited else { return false }
            generations.waitForNext(after: source.generation, control: control)
            return true
        }
        // An audio stream can stop without an end (an MPEG-TS program that drops it): once
        // the video has ended, or gone on too far without it, the muxer must not wait for it.
        if control.videoFinished { return false }
        if outputs.streamInfo?.hasAudio == true, !outputs.audioStopped, timeline.latestVideo > progress.lastAudioTime + Self.audioStoppedAfter {
            logger.warning("the input's audio stopped at \(formatted(Double(progress.lastAudioTime) / 1e9, decimals: 2)) s while its video goes on; relaying the video alone", metadata: ["input": "\(input)"])
            outputs.endAudio(stopped: true)
        }
        return true
    }

    /// Sends one packet on, rebased on the shared timeline; drops it before the first video frame
    /// and once the input's audio was given up; an output gets it once its video has started.
    private func forward(_ sample: OpaquePointer, from source: Source, progress: inout Progress) {
        let placed = timeline.current
        guard placed.generation == source.generation,
              let pts = placed.rebase(UInt64(fr_sample_running_time(sample))),
              let caps = fr_sample_caps(sample), let buffer = fr_sample_take_buffer(sample) else { return }
        fr_buffer_set_timing(buffer, GstClockTime(pts), fr_buffer_duration(buffer))
        timeline.sentAudio(at: pts)
        progress.lastAudioTime = pts
        if outputs.send(audio: buffer, caps: caps, generation: source.generation, targets: &progress.targets) {
            counters.audioPacketsOut.add(1, ordering: .relaxed)
        }
    }
}
