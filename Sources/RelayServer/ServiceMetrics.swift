import CoreMetrics
import MediaBridge
import Prometheus
import StreamSession
import Synchronization

/// The service's figures for Prometheus (`GET /metrics`), through swift-metrics handles backed by
/// swift-prometheus. Figures are read from the streams when scraped: counters advance by what
/// happened since the last scrape, so they never go back, and a stream's series go away with it.
/// Labels are bounded: a stream's id (as `streams` and `start` use it), an output's number in its
/// stream, a stage, a direction, an event class, a sticker package name; never an address or a key.
public final class ServiceMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let streams: StreamRegistry

    private struct Tracked<Handle> {
        let handle: Handle
        var last: Double
    }

    private struct StreamSeries {
        var frames: [String: Tracked<CoreMetrics.Counter>] = [:]
        var cpu: [String: Tracked<CoreMetrics.FloatingPointCounter>] = [:]
        var reconnects: Tracked<CoreMetrics.Counter>
        /// Bytes of the broadcaster's stream read (the container as it arrives).
        var ingestBytes: Tracked<CoreMetrics.Counter>
        let memory: CoreMetrics.Gauge
        let faces: CoreMetrics.Gauge
        let overhead: CoreMetrics.Gauge
        let upstreamUp: CoreMetrics.Gauge
        var sticker: (name: String, gauge: CoreMetrics.Gauge)
        var outputs: [Int: OutputSeries] = [:]
    }

    /// One output of a stream, labelled with its number (`output`), never its address.
    private struct OutputSeries {
        var bytes: Tracked<CoreMetrics.Counter>
        var missed: Tracked<CoreMetrics.Counter>
        var reconnects: Tracked<CoreMetrics.Counter>
        let up: CoreMetrics.Gauge

        func destroy() {
            [bytes.handle, missed.handle, reconnects.handle].forEach { $0.destroy() }
            up.destroy()
        }
    }

    private struct State {
        var streams: [String: StreamSeries] = [:]
        var events: [String: Tracked<CoreMetrics.Counter>] = [:]
        var eventsDropped: Tracked<CoreMetrics.Counter>
        var processCPU: Tracked<CoreMetrics.FloatingPointCounter>
    }
    private let state: Mutex<State>
    private let streamCount: CoreMetrics.Gauge
    private let subscribers: CoreMetrics.Gauge
    private let residentMemory: CoreMetrics.Gauge

    /// `sharedMemoryBytes`: what every stream shares, by part, reported once.
    public init(streams: StreamRegistry, version: String, build: String, sharedMemoryBytes: [String: Double] = [:]) {
        self.streams = streams
        factory = PrometheusMetricsFactory(registry: registry)
        CoreMetrics.Gauge(label: "facerelay_info", dimensions: [("version", version), ("build", build)], factory: factory).record(1)
        for (part, bytes) in sharedMemoryBytes {
            CoreMetrics.Gauge(label: "facerelay_shared_memory_bytes", dimensions: [("part", part)], factory: factory).record(bytes)
        }
        streamCount = CoreMetrics.Gauge(label: "facerelay_streams", factory: factory)
        subscribers = CoreMetrics.Gauge(label: "facerelay_subscribers", factory: factory)
        residentMemory = CoreMetrics.Gauge(label: "facerelay_process_resident_memory_bytes", factory: factory)
        state = Mutex(State(
            eventsDropped: Tracked(handle: CoreMetrics.Counter(label: "facerelay_subscriber_events_dropped_total", factory: factory), last: 0),
            processCPU: Tracked(handle: CoreMetrics.FloatingPointCounter(label: "facerelay_process_cpu_seconds_total", factory: factory), last: 0)))
    }

    /// Every metric now, in Prometheus' text format.
    public func render() -> String {
        update()
        return registry.emitToString()
    }

    private func update() {
        let usage = ProcessUsage.now()
        let current = streams.metricReadings(usage: usage)
        let events = streams.events
        streamCount.record(current.count)
        subscribers.record(events.subscriberCount)
        residentMemory.record(usage.residentMegabytes * 1_048_576)
        state.withLock { state in
            Self.advance(&state.processCPU, to: usage.cpuSeconds)
            Self.advance(&state.eventsDropped, to: Double(events.totals.dropped))
            for (kind, count) in events.publishedByClass {
                if state.events[kind.rawValue] == nil {
                    state.events[kind.rawValue] = Tracked(handle: CoreMetrics.Counter(label: "facerelay_events_total", dimensions: [("class", kind.rawValue)], factory: factory), last: 0)
                }
                Self.advance(&state.events[kind.rawValue]!, to: Double(count))
            }
            for reading in current {
                var series = state.streams[reading.id] ?? makeSeries(reading)
                for (direction, count) in [("in", reading.stats.framesIn), ("out", reading.stats.framesOut), ("dropped", reading.stats.framesDropped)] {
                    if series.frames[direction] == nil {
                        series.frames[direction] = Tracked(handle: CoreMetrics.Counter(label: "facerelay_stream_frames_total", dimensions: [("stream", reading.id), ("direction", direction)], factory: factory), last: 0)
                    }
                    Self.advance(&series.frames[direction]!, to: Double(count))
                }
                for stage in StageCPU.Stage.allCases {
                    if series.cpu[stage.rawValue] == nil {
                        series.cpu[stage.rawValue] = Tracked(handle: CoreMetrics.FloatingPointCounter(label: "facerelay_stream_cpu_seconds_total", dimensions: [("stream", reading.id), ("stage", stage.rawValue)], factory: factory), last: 0)
                    }
                    Self.advance(&series.cpu[stage.rawValue]!, to: reading.stats.stages[stage.rawValue]?.cpuSeconds ?? 0)
                }
                Self.advance(&series.reconnects, to: Double(reading.stats.outputReconnects))
                Self.advance(&series.ingestBytes, to: Double(reading.stats.ingestBytes))
                series.memory.record(reading.stats.streamMemoryMb * 1_048_576)
                series.faces.record(reading.faces)
                series.overhead.record(reading.stats.stickerOverhead.ratioToTranscode)
                series.upstreamUp.record(reading.upstreamUp ? 1 : 0)
                for output in reading.stats.outputs {
                    var outputSeries = series.outputs[output.index] ?? makeOutputSeries(stream: reading.id, output: output.index)
                    Self.advance(&outputSeries.bytes, to: Double(output.bytesSent))
                    Self.advance(&outputSeries.missed, to: Double(output.framesMissed))
                    Self.advance(&outputSeries.reconnects, to: Double(output.reconnects))
                    outputSeries.up.record(output.state == MediaRelay.OutputStatus.State.sending.rawValue ? 1 : 0)
                    series.outputs[output.index] = outputSeries
                }
                if series.sticker.name != reading.sticker {
                    series.sticker.gauge.destroy()
                    series.sticker = (reading.sticker, stickerGauge(stream: reading.id, sticker: reading.sticker))
                }
                state.streams[reading.id] = series
            }
            let gone = Set(state.streams.keys).subtracting(current.map(\.id))
            for id in gone {
                guard let series = state.streams.removeValue(forKey: id) else { continue }
                series.frames.values.forEach { $0.handle.destroy() }
                series.cpu.values.forEach { $0.handle.destroy() }
                series.reconnects.handle.destroy()
                series.ingestBytes.handle.destroy()
                [series.memory, series.faces, series.overhead, series.upstreamUp, series.sticker.gauge].forEach { $0.destroy() }
                series.outputs.values.forEach { $0.destroy() }
            }
        }
    }

    private func makeSeries(_ reading: StreamRegistry.MetricReading) -> StreamSeries {
        let stream = [("stream", reading.id)]
        return StreamSeries(
            reconnects: Tracked(handle: CoreMetrics.Counter(label: "facerelay_stream_upstream_reconnects_total", dimensions: stream, factory: factory), last: 0),
            ingestBytes: Tracked(handle: CoreMetrics.Counter(label: "facerelay_stream_ingest_bytes_total", dimensions: stream, factory: factory), last: 0),
            memory: CoreMetrics.Gauge(label: "facerelay_stream_memory_bytes", dimensions: stream, factory: factory),
            faces: CoreMetrics.Gauge(label: "facerelay_stream_faces", dimensions: stream, factory: factory),
            overhead: CoreMetrics.Gauge(label: "facerelay_stream_sticker_overhead_ratio", dimensions: stream, factory: factory),
            upstreamUp: CoreMetrics.Gauge(label: "facerelay_stream_upstream_up", dimensions: stream, factory: factory),
            sticker: (reading.sticker, stickerGauge(stream: reading.id, sticker: reading.sticker)))
    }

    private func makeOutputSeries(stream: String, output: Int) -> OutputSeries {
        let labels = [("stream", stream), ("output", String(output))]
        func counter(_ label: String) -> Tracked<CoreMetrics.Counter> {
            Tracked(handle: CoreMetrics.Counter(label: label, dimensions: labels, factory: factory), last: 0)
        }
        return OutputSeries(bytes: counter("facerelay_stream_output_bytes_total"),
                            missed: counter("facerelay_stream_output_frames_missed_total"),
                            reconnects: counter("facerelay_stream_output_reconnects_total"),
                            up: CoreMetrics.Gauge(label: "facerelay_stream_output_up", dimensions: labels, factory: factory))
    }

    private func stickerGauge(stream: String, sticker: String) -> CoreMetrics.Gauge {
        let gauge = CoreMetrics.Gauge(label: "facerelay_stream_sticker_info", dimensions: [("stream", stream), ("sticker", sticker)], factory: factory)
        gauge.record(1)
        return gauge
    }

    private static func advance(_ tracked: inout Tracked<CoreMetrics.Counter>, to value: Double) {
        if value > tracked.last { tracked.handle.increment(by: Int64(value - tracked.last)) }
        tracked.last = max(tracked.last, value)
    }

    private static func advance(_ tracked: inout Tracked<CoreMetrics.FloatingPointCounter>, to value: Double) {
        if value > tracked.last { tracked.handle.increment(by: value - tracked.last) }
        tracked.last = max(tracked.last, value)
    }
}
