internal import CGStreamer
import StreamPlan
import Synchronization

/// The packets' way through `RelayOutputs`: the packet thread hands each encoded frame to every
/// output that is up, the audio thread each audio packet; both under the outputs' one lock, and
/// both push outside it.
extension RelayOutputs {
    /// The packet thread's work: waits for the encoder, then hands each encoded frame to every
    /// output until the encoder's end of stream (or its stop); then ends every output's video.
    func relayEncodedPackets(control: RelayControl) {
        _ = changes.wait(until: nil) { encoder != nil || control.videoFinished }
        guard let encoder else { return }
        var targets: [OutputPipeline] = []
        targets.reserveCapacity(16)
        while let sample = encoder.nextEncoded() {
            if fr_sample_buffer(sample) != nil, let caps = fr_sample_caps(sample), let buffer = fr_sample_take_buffer_in_running_time(sample) {
                send(video: buffer, caps: caps, targets: &targets)
                fr_buffer_unref(buffer)
            }
            fr_sample_unref(sample)
        }
        let outputs = state.withLock { state in
            state.videoEnded = true
            return state.slots.indices.compactMap { index in
                state.slots[index].videoEnded = true
                return state.slots[index].pipeline
            }
        }
        for output in outputs { output.endVideo() }
    }

    /// One encoded frame to every output that takes it. The pushes happen outside the lock: a
    /// file output relayed as fast as possible blocks while it is full, and the audio thread must
    /// still reach the others.
    private func send(video buffer: UnsafeMutablePointer<GstBuffer>, caps: UnsafeMutablePointer<GstCaps>, targets: inout [OutputPipeline]) {
        let keyframe = fr_buffer_is_keyframe(buffer) != 0
        let size = Int(fr_buffer_size(buffer))
        let pts = UInt64(fr_buffer_pts(buffer))
        if keyframe, hasRecordings.load(ordering: .relaxed) { rotateRecordings(at: pts) }
        targets.removeAll(keepingCapacity: true)
        state.withLock { state in
            if state.videoCaps?.pointer.pointer != caps, state.videoCaps.map({ gst_caps_is_equal($0.pointer.pointer, caps) == 0 }) ?? true {
                Self.replace(&state.videoCaps, with: caps)
            }
            for index in state.slots.indices {
                if let output = state.slots[index].takeVideo(keyframe: keyframe, pts: pts, size: size, caps: state.videoCaps, live: live,
                                                             maximumBacklog: Self.maximumBacklog) {
                    targets.append(output)
                }
            }
        }
        for output in targets { _ = output.pushVideo(fr_buffer_ref(buffer)) }
    }

    /// `caps`, with a reference of its own, in place of `current` (its reference released), one
    /// version on: every output gets them before its next packet.
    private static func replace(_ current: inout (pointer: CapsPointer, version: Int)?, with caps: UnsafeMutablePointer<GstCaps>) {
        if let old = current { gst_caps_unref(old.pointer.pointer) }
        gst_caps_ref(caps)
        current = (CapsPointer(pointer: caps), (current?.version ?? 0) + 1)
    }

    /// One AAC packet (owned) to every output that is up. `generation`: the input
    /// generation it came from, whose caps it carries. False when no output took it.
    @discardableResult
    func send(audio buffer: UnsafeMutablePointer<GstBuffer>, caps: UnsafeMutablePointer<GstCaps>, generation: Int,
              targets: inout [OutputPipeline]) -> Bool {
        let size = Int(fr_buffer_size(buffer))
        targets.removeAll(keepingCapacity: true)
        state.withLock { state in
            guard state.info?.hasAudio == true, !state.audioStopped else { return }
            if state.audioCaps == nil || state.audioCapsGeneration != generation {
                Self.replace(&state.audioCaps, with: caps)
                state.audioCapsGeneration = generation
            }
            for index in state.slots.indices {
                if let output = state.slots[index].takeAudio(size: size, caps: state.audioCaps) { targets.append(output) }
            }
        }
        for output in targets { _ = output.pushAudio(fr_buffer_ref(buffer)) }
        fr_buffer_unref(buffer)
        return !targets.isEmpty
    }

    /// The input's audio stopped while its video goes on (or the audio pump is done): every output
    /// ends its audio, so that no muxer waits for it, and an output built later starts without.
    func endAudio(stopped: Bool) {
        let outputs = state.withLock { state in
            if stopped { state.audioStopped = true } else { state.audioFinished = true }
            return state.slots.indices.compactMap { index -> OutputPipeline? in
                guard !state.slots[index].audioEnded, let pipeline = state.slots[index].pipeline else { return nil }
                state.slots[index].audioEnded = true
                return pipeline
            }
        }
        for output in outputs { output.endAudio() }
    }

    var audioStopped: Bool { state.withLock { $0.audioStopped } }
}
