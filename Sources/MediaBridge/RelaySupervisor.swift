internal import CGStreamer
import Glibc
import Logging
import StreamPlan

/// Watches a relay's buses (the ingest's, the encoder's and each output's) and carries out its
/// lifecycle's decisions: input errors and ends, output failures and reconnects (each output on its
/// own), the input grace period, time-outs and the drain. Between events it sleeps in poll(2) on
/// every bus and on the relay's `ChangeSignal`, until the lifecycle's next deadline.
final class RelaySupervisor: Sendable {
    /// What the supervisor keeps from one wake-up to the next; only its own thread touches it.
    private struct Watch {
        /// The missing plugin that matters most so far (see `InputErrorDescriber.keeping`).
        var missingPlugin: MissingPlugin?
    }

    private let input: InputEndpoint
    private let control: RelayControl
    private let generations: IngestGenerations
    private let outputs: RelayOutputs
    private let counters: RelayCounters
    private let describer: InputErrorDescriber
    private let logger: Logger

    init(input: InputEndpoint, control: RelayControl, generations: IngestGenerations,
         outputs: RelayOutputs, counters: RelayCounters, describer: InputErrorDescriber, logger: Logger) {
        self.input = input
        self.control = control
        self.generations = generations
        self.outputs = outputs
        self.counters = counters
        self.describer = describer
        self.logger = logger
    }

    /// Supervises until both pumps have finished and every output is finalised (or would not finish
    /// in time); then stops every pipeline. Throws what failed.
    func run() throws(MediaError) {
        var watch = Watch()
        while true {
            // Cleared first: whatever changes from here on wakes the poll below.
            control.changes.clearDescriptor()
            let ingest = generations.ingest
            while let event = GStreamer.popBus(ingest.pipeline, timeoutNanoseconds: 0) { handle(ingestEvent: event, watch: &watch) }
            checkStreams(of: ingest, watch: &watch)
            if let encoder = outputs.encoder {
                while let event = GStreamer.popBus(encoder.pipeline, timeoutNanoseconds: 0) { handle(encoderEvent: event, watch: &watch) }
            }
            for segment in outputs.closing {
                // A recording's rotated-out segment: its end (or a failure while finishing) lets it go.
                while let event = GStreamer.popBus(segment.pipeline, timeoutNanoseconds: 0) {
                    switch event {
                    case .endOfStream: outputs.closed(segment)
                    case .error(let error):
                        logger.warning("a recording segment did not finish cleanly: \(error.summary)")
                        outputs.closed(segment)
                    case .warning, .missingPlugin: break
                    }
                }
            }
            for (index, output) in outputs.running {
                // Only while it is the output's pipeline: once taken down, its last messages are not the output's.
                while outputs.isRunning(index, output), let event = GStreamer.popBus(output.pipeline, timeoutNanoseconds: 0) {
                    handle(outputEvent: event, of: index, watch: &watch)
                }
            }
            let now = ContinuousClock.now
            let snapshot = control.drainIfEnded(at: now)
            if snapshot.pumpsFinished, outputs.allFinished { break }
            guard carryOut(snapshot.lifecycle.decide(at: now), snapshot: snapshot) else { break }
            waitForEvent(ingest: generations.ingest, until: control.withLifecycle { $0.nextDeadline(after: now) })
        }
        try finish()
    }

    /// Sleeps until a message waits on a bus, a thread changed something, or `deadline`.
    private func waitForEvent(ingest: IngestPipeline, until deadline: ContinuousClock.Instant?) {
        let pipelines = [ingest.pipeline, outputs.encoder?.pipeline].compactMap { $0 } + outputs.running.map(\.pipeline.pipeline)
            + outputs.closing.map(\.pipeline)
        var descriptors = pipelines.map { pollfd(fd: fr_bus_pollfd($0), events: Int16(POLLIN), revents: 0) }
        descriptors.append(pollfd(fd: control.changes.descriptor ?? -1, events: Int16(POLLIN), revents: 0))
        // Rounded up, and a millisecond more: woken before its deadline, the supervisor would
        // find nothing to do and sleep again for nothing.
        let timeout = deadline.map { Int32(clamping: max(0, Int(((($0 - .now).inSeconds) * 1000).rounded(.up)) + 1)) } ?? -1
        _ = poll(&descriptors, nfds_t(descriptors.count), timeout)
    }

    private func handle(ingestEvent event: GStreamer.BusEvent, watch: inout Watch) {
        switch event {
        case .error(let error):
            let everStarted = outputs.streamInfo != nil
            if awaitInput(ended: error.summary, cleanly: false) { return }
            if everStarted, case .rtmp = input, error.domain == .resource {
                // Once media has flowed, a read error of an RTMP pull (the idle time-out
                // included) means the publisher has gone: the end of its stream.
                logger.info("input ended: \(error.summary)", metadata: ["input": "\(input)"])
                control.requestStop()
            } else {
                control.fail(describer.describe(error, missingPlugin: watch.missingPlugin, everStarted: everStarted))
            }
        case .missingPlugin(let missing):
            note(missing, watch: &watch)
        case .warning(let source, let text):
            logger.warning("input: \(text)", metadata: ["element": "\(source)"])
        case .endOfStream:
            // The appsinks see it too: without a grace period, the pumps finish the stream.
            _ = awaitInput(ended: describer.liveInputEndReason, cleanly: true)
        }
    }

    private func note(_ missing: MissingPlugin, watch: inout Watch) {
        watch.missingPlugin = InputErrorDescriber.keeping(missing, over: watch.missingPlugin)
        if let warning = describer.streamLeftOut(missing) { logger.warning("\(warning)", metadata: ["input": "\(input)"]) }
    }

    /// Fails the stream when the ingest could not link a stream, or found every stream and no video.
    private func checkStreams(of ingest: IngestPipeline, watch: inout Watch) {
        let streams = ingest.snapshot
        if let failure = streams.failure { control.fail(failure) }
        guard streams.allPadsKnown, streams.videoSink == nil else { return }
        // decodebin tells of a video it cannot decode before it announces its last pad, but that
        // message may still wait on the bus: read it, so that the error names the codec.
        while let event = GStreamer.popBus(ingest.pipeline, timeoutNanoseconds: 0) {
            if case .missingPlugin(let missing) = event { note(missing, watch: &watch) }
        }
        control.fail(describer.noVideoStream(streams, missingPlugin: watch.missingPlugin))
    }

    /// With a grace period, a live input that ended is awaited: listened to again rather than
    /// ending the stream; while awaited, another end of a restarted input is one more attempt.
    /// False when the end is the stream's end.
    private func awaitInput(ended reason: String, cleanly: Bool) -> Bool {
        generations.endCurrent()
        let (awaited, newlyLost) = control.inputEnded(cleanly: cleanly, at: .now)
        if newlyLost {
            let grace = control.withLifecycle { $0.policy.inputGrace }.map { formatted($0.inSeconds, decimals: 1) } ?? "0"
            logger.warning("input ended (\(reason)); waiting up to \(grace) s for it to come back, the output stays open", metadata: ["input": "\(input)"])
        }
        return awaited
    }

    private func handle(encoderEvent event: GStreamer.BusEvent, watch: inout Watch) {
        switch event {
        case .error(let error):
            control.fail(MediaError(.output, "the encoder failed: \(error.summary)"))
        case .warning(let source, let text):
            logger.warning("encoder: \(text)", metadata: ["element": "\(source)"])
        case .missingPlugin(let missing):
            control.fail(MediaError(.setup, "the encoder needs a GStreamer plugin that is missing: \(missing.description)"))
        case .endOfStream:
            break
        }
    }

    private func handle(outputEvent event: GStreamer.BusEvent, of index: Int, watch: inout Watch) {
        guard let output = outputs.endpoint(index) else { return }
        if outputs.wasRemoved(index) {
            // Taken out of the stream: its end (or a failure while finishing) lets it go.
            switch event {
            case .endOfStream, .error: outputs.finished(index)
            case .warning, .missingPlugin: break
            }
            return
        }
        switch event {
        case .endOfStream:
            outputs.finished(index)
        case .error(let error):
            if output.isNetwork, !control.stopRequested {
                // A dead upstream: this output misses frames (counted) until it is rebuilt after
                // the lifecycle's pause; the encoder and the other outputs go on.
                logger.warning("output failed, reconnecting", metadata: ["output": "\(output)", "error": "\(error.summary)"])
                outputs.takeDown(index, error: error.summary)
                control.withLifecycle { $0.outputFailed(index, error.summary, at: .now) }
                ThreadCPUAccounting.shared.sampleNow()
            } else {
                giveUp(index, MediaError(.output, "output \(output) failed: \(error.summary)"))
            }
        case .warning(let source, let text):
            logger.warning("output: \(text)", metadata: ["element": "\(source)", "output": "\(output)"])
        case .missingPlugin(let missing):
            control.fail(MediaError(.setup, "output needs a GStreamer plugin that is missing: \(missing.description)"))
        }
    }

    /// Output `index` is given up: the stream goes on to its other outputs, and fails with
    /// `error` when none is left.
    private func giveUp(_ index: Int, _ error: MediaError) {
        outputs.giveUp(index, error: error.description)
        control.withLifecycle { $0.outputRemoved(index) }
        if outputs.activeCount == 0 {
            control.fail(error)
        } else {
            logger.error("\(error.description); the other outputs go on")
        }
    }

    /// Carries out what the lifecycle decided. False when supervising is over: the output did not
    /// finish in time after the pumps had.
    private func carryOut(_ decision: RelayLifecycle.Decision, snapshot: RelayControl.Snapshot) -> Bool {
        let lifecycle = snapshot.lifecycle
        switch decision {
        case .wait:
            break
        case .retryOutput(let index):
            retryOutput(index)
        case .outputAccepted(let index):
            control.withLifecycle { $0.outputAccepted(index) }
            outputs.accepted(index)
            counters.outputReconnects.add(1, ordering: .relaxed)
            logger.info("output reconnected", metadata: ["output": "\(outputs.endpoint(index).map { "\($0)" } ?? "")"])
        case .failNoInput:
            let ingest = generations.ingest
            control.fail(describer.noMedia(ingest.snapshot, lastSRTRefusal: ingest.lastSRTRefusal))
        case .giveUpOutput(let index):
            let seconds = lifecycle.policy.giveUpAfter.map { "\($0.components.seconds) s" } ?? ""
            let address = outputs.endpoint(index).map { "\($0)" } ?? ""
            giveUp(index, MediaError(.output, "output \(address) unreachable for \(seconds), giving up; last error: \(lifecycle.outages[index]?.lastError ?? "none")"))
        case .restartInput:
            restartInput()
        case .endAwaitedInput:
            let grace = lifecycle.policy.inputGrace.map { formatted($0.inSeconds, decimals: 1) } ?? "0"
            logger.info("the input did not come back within its grace period of \(grace) s; ending the stream", metadata: ["input": "\(input)"])
            control.requestStop()
        case .stopDraining:
            guard snapshot.pumpsFinished else { break }
            logger.warning("an output did not finish within \(lifecycle.policy.drainTimeout) of end-of-stream; closing it anyway",
                           metadata: ["outputs": "\(outputs.statuses.filter { $0.state == .sending }.map(\.address).joined(separator: ", "))"])
            return false
        }
        return true
    }

    private func retryOutput(_ index: Int) {
        do {
            try outputs.rebuild(index)
            control.withLifecycle { $0.outputRebuilt(index, at: .now) }
        } catch {
            logger.warning("output reconnect failed: \(error)", metadata: ["output": "\(outputs.endpoint(index).map { "\($0)" } ?? "")"])
            control.withLifecycle { $0.outputRebuildFailed(index, error.description, at: .now) }
        }
    }

    /// Listens to the awaited input again, at the size the output was opened with.
    private func restartInput() {
        do {
            try generations.restart(keeping: outputs.streamInfo)
            control.withLifecycle { $0.inputRestarted() }
            logger.debug("listening to the input again", metadata: ["input": "\(input)"])
        } catch {
            logger.debug("cannot listen to the input again yet: \(error)", metadata: ["input": "\(input)"])
            control.withLifecycle { $0.inputRestartFailed(at: .now) }
        }
    }

    /// Stops every pipeline and says how the stream ended.
    private func finish() throws(MediaError) {
        // The streaming threads end with their pipelines: what they spent since the last sample
        // is read first.
        ThreadCPUAccounting.shared.sampleNow()
        fr_set_state(generations.ingest.pipeline, GST_STATE_NULL)
        outputs.stopAll()
        if let failure = control.failure { throw failure }
        if outputs.streamInfo == nil, !control.stopRequested { throw describer.endedWithoutVideo }
    }
}
