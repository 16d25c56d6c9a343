import FaceStage
import FoundationEssentials
import FrameKit
import JSONTree
import MediaBridge
import StreamPlan
import StreamSession
import Synchronization

/// Where a served stream came from, which decides what ends it and whether it is started again.
public enum StreamOrigin: Sendable, Equatable {
    /// Started by a control `start` request.
    case control
    /// A publish to nginx-rtmp, announced by its `on_publish` notification.
    case rtmpPublish(application: String, key: String)
    /// A configured SRT listener (armed again when its broadcaster leaves).
    case srtListener(index: Int)
}

/// One stream of `serve`: its session running on its own thread, the face stage, and the figures
/// an operator reads.
final class ServedStream: Sendable {
    enum State: String, Sendable {
        case starting, relaying, reconnecting, ended, failed
        /// The publisher left: its return within the grace period continues the same output.
        case awaitingInput = "awaiting_input"
    }

    let id: String
    let input: InputEndpoint
    let outputs: [OutputEndpoint]
    let origin: StreamOrigin
    let stage: FaceTrackingStage
    let session: RelaySession
    let started = ContinuousClock.now

    private struct Live {
        var state = State.starting
        var reason: String?
        /// Frames out at the last meter reading, for the recent rate.
        var meterFrames = 0
        var meterIngestBytes = 0
        var meterAt = ContinuousClock.now
        var fps = 0.0
        var ingestKbps = 0.0
    }

    private let live = Mutex(Live())
    /// Fired once the stream has ended or failed and its output is finalised.
    let finished = AsyncSignal()
    /// Fired once the stream's thread has ended and let go of everything it held.
    let threadFreed = AsyncSignal()
    /// The last thumbnail and when it was made: however many pages watch (the studio asks several
    /// times a second), at most four a second.
    private let lastThumbnail = Mutex<(at: ContinuousClock.Instant, jpeg: [UInt8])?>(nil)
    /// Each output's state at the last `outputChanges`, by number.
    private let outputStates = Mutex<[Int: MediaRelay.OutputStatus.State]>([:])

    init(id: String, input: InputEndpoint, outputs: [OutputEndpoint], origin: StreamOrigin, stage: FaceTrackingStage, session: RelaySession) {
        self.id = id
        self.input = input
        self.outputs = outputs
        self.origin = origin
        self.stage = stage
        self.session = session
    }

    /// The state the relay is in now (not as of the last tick).
    var state: State { current().state }
    var isFinished: Bool { live.withLock { $0.state == .ended || $0.state == .failed } }

    private func current() -> (state: State, reason: String?) {
        let status = session.status
        return live.withLock { live in
            guard live.state != .ended, live.state != .failed else { return (live.state, live.reason) }
            return Self.state(of: status) ?? (live.state, live.reason)
        }
    }

    /// The relay's phase as a stream state and its reason; nil while it drains (the stream is
    /// ended or failed once the session returns).
    private static func state(of status: (phase: RelayLifecycle.Phase, lastOutputError: String?)) -> (state: State, reason: String?)? {
        switch status.phase {
        case .starting: return (.starting, nil)
        case .relaying: return (.relaying, nil)
        case .reconnecting: return (.reconnecting, status.lastOutputError)
        case .awaitingInput: return (.awaitingInput, "the input ended; waiting for the broadcaster to come back")
        case .draining: return nil
        }
    }

    /// The relay entered `phase`: returns the stream's new state and reason, for its event, when
    /// that is a change (told in order, each phase once, by `MediaRelay.observeChanges`).
    func entered(_ phase: RelayLifecycle.Phase, lastOutputError: String?) -> (State, String?)? {
        live.withLock { live in
            guard live.state != .ended, live.state != .failed,
                  let (state, reason) = Self.state(of: (phase, lastOutputError)), state != live.state else { return nil }
            live.state = state
            live.reason = reason
            return (state, reason)
        }
    }

    /// Reads the recent frame rate and ingest bitrate (over the last second or so).
    func meter(now: ContinuousClock.Instant = .now) {
        let counters = session.counters
        live.withLock { live in
            let seconds = (now - live.meterAt).inSeconds
            guard seconds >= 0.9 else { return }
            live.fps = Double(counters.framesOut - live.meterFrames) / seconds
            live.ingestKbps = Double(counters.ingestBytes - live.meterIngestBytes) * 8 / seconds / 1000
            live.meterFrames = counters.framesOut
            live.meterIngestBytes = counters.ingestBytes
            live.meterAt = now
        }
    }

    func finish(failure: MediaError?) {
        live.withLock { live in
            live.state = failure == nil ? .ended : .failed
            live.reason = failure?.description
        }
        finished.fire()
    }

    /// The outputs whose state changed since the last call (a new output counts as changed once
    /// it is past sending its first packets, so that a start is not announced as a change).
    func outputChanges() -> [MediaRelay.OutputStatus] {
        let outputs = session.outputs
        return outputStates.withLock { seen in
            var changed: [MediaRelay.OutputStatus] = []
            for output in outputs {
                let previous = seen[output.index]
                seen[output.index] = output.state
                if let previous, previous != output.state { changed.append(output) }
                if previous == nil, output.state != .sending { changed.append(output) }
            }
            return changed
        }
    }

    /// A JPEG of the stream's output (stickers drawn), 320 pixels wide, at most one new one a second.
    /// Blocks up to a second for the next frame: call off Swift concurrency's threads.
    func thumbnail(now: ContinuousClock.Instant = .now) -> [UInt8]? {
        if let last = lastThumbnail.withLock({ $0 }), now - last.at < .milliseconds(250) { return last.jpeg }
        guard let jpeg = session.thumbnailJPEG(width: 320, timeoutSeconds: 1) else { return lastThumbnail.withLock { $0?.jpeg } }
        lastThumbnail.withLock { $0 = (now, jpeg) }
        return jpeg
    }

    /// The `streams` entry: every address is masked, as everywhere. `output` is the first output's,
    /// `outputs` lists each with its state and figures; `fps` and `ingest_bitrate_kbps` are over
    /// the last second or so.
    func summary() -> JSONValue {
        let counters = session.counters
        let (state, reason) = current()
        let (fps, ingestKbps) = live.withLock { ($0.fps, $0.ingestKbps) }
        var entry: [String: JSONValue] = [
            "stream": .string(id),
            "input": .string(input.description),
            "output": .string(outputs[0].description),
            "outputs": .array(session.outputs.map(Self.summary(of:))),
            "sticker": .string(stage.lookNow),
            "state": .string(state.rawValue),
            "uptime_s": .rounded((ContinuousClock.now - started).inSeconds, 1),
            "fps": .rounded(fps, 1),
            "faces": .number(Double(stage.facesNow)),
            "frames_in": .number(Double(counters.framesIn)),
            "frames_out": .number(Double(counters.framesOut)),
            "frames_dropped": .number(Double(counters.framesDropped)),
            "ingest_bytes": .number(Double(counters.ingestBytes)),
            "ingest_bitrate_kbps": .rounded(ingestKbps, 0),
        ]
        if let reason { entry["reason"] = .string(reason) }
        return .object(entry)
    }

    static func summary(of output: MediaRelay.OutputStatus) -> JSONValue {
        var entry: [String: JSONValue] = [
            "index": .number(Double(output.index)),
            "address": .string(output.address),
            "state": .string(output.state.rawValue),
            "bytes_sent": .number(Double(output.bytesSent)),
            "frames_sent": .number(Double(output.framesSent)),
            "frames_missed": .number(Double(output.framesMissed)),
            "reconnects": .number(Double(output.reconnects)),
            "connected_s": .rounded(output.connectedSeconds, 1),
        ]
        if let error = output.lastError { entry["last_error"] = .string(error) }
        return .object(entry)
    }
}
