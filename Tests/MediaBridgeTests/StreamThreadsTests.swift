import CGStreamer
@testable import MediaBridge
import Testing

@Suite struct StreamThreadsTests {
    /// A pipeline whose streaming threads were named takes its elements with it when it is released.
    /// The handler that names them drops the stream-status messages it takes, and a message kept
    /// alive keeps its task, its pad and the element that owns them: every rebuilt output (the
    /// upstream lost and back) would leave its appsrcs and queues behind.
    @Test func aPipelineWithNamedThreadsIsFreedWhole() throws {
        try GStreamer.initialize()
        let pipeline = try GStreamer.parse("fakesrc num-buffers=20 ! queue name=queue ! fakesink sync=false", files: ["test pipeline"])
        let queue = try GStreamer.element("queue", in: pipeline, files: ["test pipeline"])
        let alive = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        defer { alive.deallocate() }
        fr_watch_finalize(queue, alive)
        fr_unref(queue)
        TaskNamer.install(on: pipeline, tag: .unique()) { _ in .mux }
        _ = fr_set_state(pipeline, GST_STATE_PLAYING)
        var ended = false
        let deadline = ContinuousClock.now + .seconds(5)
        while !ended && ContinuousClock.now < deadline {
            if case .endOfStream = GStreamer.popBus(pipeline, timeoutNanoseconds: 100_000_000) { ended = true }
        }
        #expect(ended, "the pipeline ran to its end")
        _ = fr_set_state(pipeline, GST_STATE_NULL)
        fr_unref(pipeline)
        #expect(alive.pointee == 0, "the queue outlived its pipeline")
    }
}
