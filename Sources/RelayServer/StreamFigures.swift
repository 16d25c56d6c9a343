import FaceStage
import FoundationEssentials
import JSONTree
import StreamSession

// What the streams of `serve` tell: thumbnails, faces, `/metrics` readings, the `streams` and
// `stats` replies, and the events: expressions and stickers, state and output changes, figures.
extension StreamRegistry {
    /// A JPEG of a stream's output, or nil for an unknown stream or one with no frame yet.
    public func thumbnail(stream id: String) async -> [UInt8]? {
        guard let stream = stream(id) else { return nil }
        return await offload { stream.thumbnail() }
    }

    /// The face the studio places a sticker on: the first face shown on the stream's last frame.
    public func face(stream id: String) -> FaceSnapshot? {
        stream(id)?.stage.faceNow
    }

    /// What `/metrics` shows of one stream.
    struct MetricReading {
        let id: String
        let stats: StreamStats
        let faces: Int
        let sticker: String
        let upstreamUp: Bool
    }

    func metricReadings(usage: ProcessUsage) -> [MetricReading] {
        streams.map { stream in
            MetricReading(id: stream.id, stats: stream.session.statsSoFar(usage: usage), faces: stream.stage.facesNow,
                          sticker: stream.stage.lookNow, upstreamUp: stream.state == .relaying || stream.state == .awaitingInput)
        }
    }

    /// The `streams` reply.
    public func summaries() -> JSONValue {
        .array(streams.map { $0.summary() })
    }

    /// The `stats` reply: the whole-stream figures of one stream or all, and the process's.
    public func stats(of id: String?) throws(ControlError) -> JSONValue {
        let chosen: [ServedStream]
        if let id {
            guard let stream = stream(id) else { throw unknownStream(id) }
            chosen = [stream]
        } else {
            chosen = streams
        }
        let usage = ProcessUsage.now()
        var entries: [JSONValue] = []
        for stream in chosen {
            var figures: JSONValue
            do {
                figures = try Self.jsonValue(of: stream.session.statsSoFar(usage: usage))
            } catch {
                // Only a figure that is not a finite number fails here: a fault in FaceRelay that
                // must show, not an empty set of figures that looks like a stream doing nothing.
                throw ControlError(.statsFailed, "the figures of stream '\(stream.id)' cannot be written as JSON (\(error)); this is a fault in FaceRelay: please report it")
            }
            figures = figures.adding("stream", .string(stream.id)).adding("state", .string(stream.state.rawValue))
                .adding("sticker", .string(stream.stage.lookNow)).adding("faces", .number(Double(stream.stage.facesNow)))
            entries.append(figures)
        }
        let totals = events.totals
        let hooks: [JSONValue] = webhooks.summary.map { hook in
            var entry: [String: JSONValue] = ["url": .string(hook.address), "delivered": .number(Double(hook.figures.delivered)),
                                              "failed": .number(Double(hook.figures.failed))]
            if let error = hook.figures.lastError { entry["last_error"] = .string(error) }
            return .object(entry)
        }
        return ["streams": .array(entries),
                "process": ["cpu_s": .rounded(usage.cpuSeconds), "rss_mb": .rounded(usage.residentMegabytes, 1),
                            "peak_rss_mb": .rounded(usage.peakResidentMegabytes, 1), "streams": .number(Double(chosen.count)),
                            "subscribers": .number(Double(events.subscriberCount)),
                            "events_published": .number(Double(totals.published)), "events_dropped": .number(Double(totals.dropped)),
                            "webhooks": .array(hooks)]]
    }

    static func jsonValue(of stats: StreamStats) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: try JSONEncoder().encode(stats))
    }

    /// A face stage's event as the control protocol's event line.
    static func publish(_ event: FaceStageEvent, of stream: String, to events: EventHub) {
        switch event {
        case .expression(let face, let expression, let started, let seconds):
            events.publish(.expression, ["event": "expression", "stream": .string(stream), "face": .number(Double(face)),
                                         "expression": .string(expression), "state": started ? "start" : "end",
                                         "pts": .rounded(seconds)])
        case .lookChanged(let name, let seconds):
            events.publish(.sticker, ["event": "sticker", "stream": .string(stream), "sticker": .string(name), "pts": .rounded(seconds)])
        }
    }

    /// Reads every stream's rates; publishes output changes not yet published, and the figures
    /// when `withStats`.
    public func tick(withStats: Bool) {
        for stream in streams {
            stream.meter()
            publishOutputChanges(of: stream)
            if withStats, case .object(var fields) = stream.summary() {
                fields["event"] = "stats"
                if let figures = stream.stage.trackingFigures, figures.frames > 0 {
                    fields["track_ms_per_frame"] = .rounded(Double(figures.cpuNanoseconds) / 1e6 / Double(figures.frames))
                }
                events.publish(.stats, .object(fields))
            }
        }
    }

    /// Publishes each change of a stream's relay as it happens, until the server stops: every
    /// state the stream enters, in order, and its outputs' changes.
    public func publishChangesAsTheyHappen() async {
        for await (id, change) in changedStreams.stream {
            guard let stream = stream(id) else { continue }
            switch change {
            case .phase(let phase, let lastOutputError):
                guard let (state, reason) = stream.entered(phase, lastOutputError: lastOutputError) else { continue }
                var event: JSONValue = ["event": "stream", "stream": .string(stream.id)]
                switch state {
                case .relaying: event = event.adding("state", "started")
                case .reconnecting: event = event.adding("state", "reconnecting")
                case .awaitingInput: event = event.adding("state", "awaiting_input")
                case .starting, .ended, .failed: continue // ended and failed are published when the session returns
                }
                if let reason { event = event.adding("reason", .string(reason)) }
                events.publish(.stream, event)
            case .other:
                publishOutputChanges(of: stream)
            }
        }
    }

    /// The outputs' states that changed since they were last published (on a change of the relay,
    /// and at every tick): each change is published once.
    private func publishOutputChanges(of stream: ServedStream) {
        for output in stream.outputChanges() {
            var event: JSONValue = ["event": "output", "stream": .string(stream.id), "output": .number(Double(output.index)),
                                    "address": .string(output.address), "state": .string(output.state.rawValue)]
            if output.state != .sending, let error = output.lastError { event = event.adding("reason", .string(error)) }
            events.publish(.output, event)
        }
    }
}

extension JSONValue {
    /// The object with one more field.
    func adding(_ key: String, _ value: JSONValue) -> JSONValue {
        guard case .object(var fields) = self else { return self }
        fields[key] = value
        return .object(fields)
    }
}
