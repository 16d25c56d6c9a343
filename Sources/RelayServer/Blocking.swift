import Dispatch

/// Runs blocking work (building pipelines, loading a tracker, GStreamer calls) on a Dispatch
/// thread and awaits it, so that it never holds one of Swift concurrency's few shared threads:
/// on a 2-core machine two blocked handlers would stall every other request, nginx-rtmp's
/// notifications included.
func offload<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: body()) }
    }
}
