import CGStreamer
import Glibc
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
        let finalized = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
        sem_init(finalized, 0, 0)
        fr_watch_finalize(queue, finalized)
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
        // The last reference may go a moment later, on another thread: read right after the
        // release, the queue was still there in 2 of 25 runs on a busy machine. Leaked, it never goes.
        var giveUpAt = timespec()
        clock_gettime(CLOCK_REALTIME, &giveUpAt)
        giveUpAt.tv_sec += 5
        var waited = sem_timedwait(finalized, &giveUpAt)
        while waited != 0 && errno == EINTR { waited = sem_timedwait(finalized, &giveUpAt) }
        #expect(waited == 0, "the queue outlived its pipeline by 5 s")
        // A queue never finalized would post to the semaphore later: it is freed only once posted.
        if waited == 0 {
            sem_destroy(finalized)
            finalized.deallocate()
        }
    }
}
