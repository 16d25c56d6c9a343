internal import CGStreamer

// The C pointers the relay's threads hand each other. Each wrapper says why its own pointer may
// cross threads, so that the types holding them (in a Mutex, or as a `let`) are checked Sendable.

/// A GstElement (a pipeline, a bin, an appsink, a demuxer) seen from several threads. It holds no
/// reference of its own: whoever stores one says which reference it stands for.
///
/// `@unchecked Sendable` because the pointer is immutable and a GstElement is a GstObject: its
/// reference count is atomic, and its properties, pads, children and state are guarded by
/// GStreamer's own locks, so the calls made through a shared one (state changes, getting and
/// setting properties, appsink pulls, appsrc pushes, caps and levels, adding to a bin, linking
/// pads, connecting and disconnecting signal handlers, bus pops) are thread-safe by GStreamer's
/// contract.
struct ElementPointer: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<GstElement>
}

/// Caps the relay's threads share (the video caps an egress is built for). It holds no reference
/// of its own: whoever stores one says which reference it stands for.
///
/// `@unchecked Sendable` because the pointer is immutable and the caps are only ever read once
/// shared (compared, read into a GstVideoInfo, handed to an appsrc or a buffer pool, which take
/// references of their own): nothing writes to them, and their reference count is atomic.
struct CapsPointer: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<GstCaps>
}

/// A count that a pad probe adds to on a streaming thread while other threads read it (buffers
/// that reached an appsink, bytes that reached the decoder).
///
/// `@unchecked Sendable` because the pointer is immutable and the count is only ever touched
/// with the compiler's atomics: `__atomic_fetch_add` in the probes (`fr_count_buffers_into`,
/// `fr_count_bytes_into`), and `__atomic_load_n` here. Its owner allocates and frees it.
struct AtomicCountPointer: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<guint64>

    static func allocate() -> AtomicCountPointer {
        let pointer = UnsafeMutablePointer<guint64>.allocate(capacity: 1)
        pointer.initialize(to: 0)
        return AtomicCountPointer(pointer: pointer)
    }

    var value: Int { Int(fr_atomic_get64(pointer)) }
}
