import CGStreamer
import Glibc
import Logging
import StreamPlan

/// Watches a relay's two buses (the ingest's and the egress's) and carries out its lifecycle's
/// decisions: input errors and ends, output failures and reconnects, the input grace period,
/// time-outs and the drain. Between events it sleeps in poll(2) on both buses and on the relay's
/// `ChangeSignal`, until the lifecycle's next deadline.
final class RelaySupervisor: Sendable {
    /// What the supervisor keeps from one wake-up to the next; only its own thread touches it.
    private struct Watch {
        /// The missing plugin that matters most so far (see `InputErrorDescriber.keeping`).
        var missingPlugin: MissingPlugin?
        var egressFinished = false
    }

    private let input: InputEndpoint
    private let output: OutputEndpoint
    private let control: RelayControl
    private let generations: IngestGenerations
    private let builder: EgressBuilder
    private let counters: RelayCounters
    private let describer: InputErrorDescriber
    private let logger: Logger

    init(input: InputEndpoint, output: OutputEndpoint, control: RelayControl, generations: IngestGenerations,
         builder: EgressBuilder, counters: RelayCounters, describer: InputErrorDescriber, logger: Logger) {
        self.input = input
        self.output = output
        self.control = control
        self.generations = generations
        self.builder = builder
        self.counters = counters
        self.describer = describer
        self.logger = logger
    }

    /// Supervises until both pumps have finished and the output is finalised (or would not finish
    /// in time); then stops both pipelines. Throws what failed.
    func run() throws(MediaError) {
        var watch = Watch()
        while true {
            // Cleared first: whatever changes from here on wakes the poll below.
            control.changes.clearDescriptor()
            let ingest = generations.ingest
            while let event = GStreamer.popBus(ingest.pipeline, timeoutNanoseconds: 0) { handle(ingestEvent: event, watch: &watch) }
            checkStreams(of: ingest, watch: &watch)
            let egress = builder.current
            if let egress {
                // Only while it is the output: once given up, its last messages are not this output's.
                while builder.current === egress, let event = GStreamer.popBus(egress.pipeline, timeoutNanoseconds: 0) {
                    handle(egressEvent: event, of: egress, watch: &watch)
                }
            }
            let now = ContinuousClock.now
            let snapshot = control.drainIfEnded(at: now)
            if snapshot.pumpsFinished, builder.current == nil || watch.egressFinished { break }
            guard carryOut(snapshot.lifecycle.decide(at: now), snapshot: snapshot) else { break }
            waitForEvent(ingest: generations.ingest, egress: builder.current,
                  until: control.withLifecycle { $0.nextDeadline(after: now) })
        }
        try finish()
    }

    /// Sleeps until a message waits on either bus, a thread changed something, or `deadline`.
    private func waitForEvent(ingest: IngestPipeline, egress: EgressPipeline?, until deadline: ContinuousClock.Instant?) {
        var descriptors = [ingest.pipeline, egress?.pipeline].map { pipeline in
            pollfd(fd: pipeline.map { fr_bus_pollfd($0) } ?? -1, events: Int16(POLLIN), revents: 0)
        }
        descriptors.append(pollfd(fd: control.changes.descriptor ?? -1, events: Int16(POLLIN), revents: 0))
        // Rounded up, and a millisecond more: woken before its deadline, the supervisor would
        // find nothing to do and sleep again for nothing.
        let timeout = deadline.map { Int32(clamping: max(0, Int(((($0 - .now).inSeconds) * 1000).rounded(.up)) + 1)) } ?? -1
        _ = poll(&descriptors, nfds_t(descriptors.count), timeout)
    }

    private func handle(ingestEvent event: GStreamer.BusEvent, watch: inout Watch) {
        switch event {
        case .error(let error):
            let everStarted = builder.streamInfo != nil
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

    private func handle(egressEvent event: GStreamer.BusEvent, of egress: EgressPipeline, watch: inout Watch) {
        switch event {
        case .endOfStream:
            watch.egressFinished = true
        case .error(let error):
            if output.isNetwork, !control.stopRequested {
                // A dead upstream: stop feeding this egress (frames are dropped and counted
                // meanwhile) and rebuild it after the lifecycle's pause.
                logger.warning("output failed, reconnecting", metadata: ["output": "\(output)", "error": "\(error.summary)"])
                _ = builder.detach()
                control.withLifecycle { $0.outputFailed(error.summary, at: .now) }
                ThreadCPUAccounting.shared.sampleNow()
                fr_set_state(egress.pipeline, GST_STATE_NULL)
            } else {
                control.fail(MediaError(.output, "output \(output) failed: \(error.summary)"))
                watch.egressFinished = true
            }
        case .warning(let source, let text):
            logger.warning("output: \(text)", metadata: ["element": "\(source)"])
        case .missingPlugin(let missing):
            control.fail(MediaError(.setup, "output needs a GStreamer plugin that is missing: \(missing.description)"))
        }
    }

    /// Carries out what the lifecycle decided. False when supervising is over: the output did not
    /// finish in time after the pumps had.
    private func carryOut(_ decision: RelayLifecycle.Decision, snapshot: RelayControl.Snapshot) -> Bool {
        let lifecycle = snapshot.lifecycle
        switch decision {
        case .wait:
            break
        case .retryOutput:
            retryOutput()
        case .outputAccepted:
            control.withLifecycle { $0.outputAccepted() }
            counters.outputReconnects.add(1, ordering: .relaxed)
            logger.info("output reconnected", metadata: ["output": "\(output)"])
        case .failNoInput:
            let ingest = generations.ingest
            control.fail(describer.noMedia(ingest.snapshot, lastSRTRefusal: ingest.lastSRTRefusal))
        case .failOutputUnreachable:
            let seconds = lifecycle.policy.giveUpAfter.map { "\($0.components.seconds) s" } ?? ""
            control.fail(MediaError(.output, "output \(output) unreachable for \(seconds), giving up; last error: \(lifecycle.lastOutputError ?? "none")"))
        case .restartInput:
            restartInput()
        case .endAwaitedInput:
            let grace = lifecycle.policy.inputGrace.map { formatted($0.inSeconds, decimals: 1) } ?? "0"
            logger.info("the input did not come back within its grace period of \(grace) s; ending the stream", metadata: ["input": "\(input)"])
            control.requestStop()
        case .stopDraining:
            guard snapshot.pumpsFinished else { break }
            logger.warning("output did not finish within \(lifecycle.policy.drainTimeout) of end-of-stream; closing it anyway", metadata: ["output": "\(output)"])
            return false
        }
        return true
    }

    private func retryOutput() {
        do {
            try builder.rebuild()
            control.withLifecycle { $0.outputRebuilt(at: .now) }
        } catch {
            logger.warning("output reconnect failed: \(error)", metadata: ["output": "\(output)"])
            control.withLifecycle { $0.outputRebuildFailed(error.description, at: .now) }
        }
    }

    /// Listens to the awaited input again, at the size the output was opened with.
    private func restartInput() {
        do {
            try generations.restart(keeping: builder.streamInfo)
            control.withLifecycle { $0.inputRestarted() }
            logger.debug("listening to the input again", metadata: ["input": "\(input)"])
        } catch {
            logger.debug("cannot listen to the input again yet: \(error)", metadata: ["input": "\(input)"])
            control.withLifecycle { $0.inputRestartFailed(at: .now) }
        }
    }

    /// Stops both pipelines and says how the stream ended.
    private func finish() throws(MediaError) {
        // The streaming threads end with their pipelines: what they spent since the last sample
        // is read first.
        ThreadCPUAccounting.shared.sampleNow()
        fr_set_state(generations.ingest.pipeline, GST_STATE_NULL)
        if let egress = builder.detach() { fr_set_state(egress.pipeline, GST_STATE_NULL) }
        if let failure = control.failure { throw failure }
        if builder.streamInfo == nil, !control.stopRequested { throw describer.endedWithoutVideo }
    }
}
