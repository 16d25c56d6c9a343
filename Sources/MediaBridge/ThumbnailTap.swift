internal import CGStreamer
import Logging
import Synchronization

/// Hands a frame going out (stickers drawn) to a thumbnail request, and makes the JPEG on the
/// requesting thread: the frame thread only checks a flag per frame and, when asked, hands over a
/// reference to the frame.
final class ThumbnailTap: Sendable {
    /// Set by a request: the frame thread hands the next frame out to `slot`.
    private let wanted = Atomic<Bool>(false)
    private let slot = Mutex<SampleReference?>(nil)
    /// Notified when a frame is put in `slot`.
    private let handedOver: ChangeSignal

    init() throws(MediaError) {
        handedOver = try ChangeSignal(pollable: false)
    }

    deinit {
        if let sample = slot.withLock({ $0 }) { fr_sample_unref(sample.pointer) }
    }

    /// On the frame thread, for every frame going out: hands this one over if a request waits.
    /// Allocates only then.
    func offer(_ buffer: UnsafeMutablePointer<GstBuffer>, caps: UnsafeMutablePointer<GstCaps>) {
        guard wanted.load(ordering: .relaxed), wanted.exchange(false, ordering: .relaxed) else { return }
        // The sample holds its own reference: the buffer returns to its pool once converted.
        let sample = SampleReference(pointer: fr_sample_new(buffer, caps))
        if let previous = slot.withLock({ slot in defer { slot = sample }; return slot }) { fr_sample_unref(previous.pointer) }
        handedOver.notify()
    }

    /// The next frame out as a JPEG `width` pixels wide, the height keeping the shape of `info`'s
    /// picture (16:9 before the first frame), or nil when no frame comes within `timeoutSeconds`
    /// or it cannot be encoded. Blocks the calling thread, never the frame thread.
    func jpeg(width: Int, timeoutSeconds: Double, info: MediaRelay.StreamInfo?, logger: Logger) -> [UInt8]? {
        wanted.store(true, ordering: .relaxed)
        let deadline = ContinuousClock.now + .milliseconds(Int(timeoutSeconds * 1000))
        var taken: SampleReference?
        _ = handedOver.wait(until: deadline) {
            taken = slot.withLock { slot in defer { slot = nil }; return slot }
            return taken != nil
        }
        guard let sample = taken?.pointer else { return nil }
        defer { fr_sample_unref(sample) }
        var message: UnsafeMutablePointer<CChar>?
        // Even sizes: the encoder's chroma planes are half the picture's.
        let height = info.map { max(2, Int((Double(width) * Double($0.height) / Double(max($0.width, 1)) / 2).rounded()) * 2) } ?? width * 9 / 16
        guard let jpeg = fr_sample_to_jpeg(sample, gint(width), gint(height), GstClockTime(1_000_000_000), &message) else {
            logger.warning("cannot make a thumbnail: \(GStreamer.takeString(message) ?? "unknown error")")
            return nil
        }
        defer { fr_buffer_unref(jpeg) }
        var bytes = [UInt8](repeating: 0, count: Int(fr_buffer_size(jpeg)))
        _ = bytes.withUnsafeMutableBufferPointer { fr_buffer_extract_all(jpeg, $0.baseAddress, gsize($0.count)) }
        return bytes
    }
}

/// One reference to a GstSample, handed from the frame thread to a thumbnail request.
/// `@unchecked Sendable`: a GstSample is immutable once made and its reference count is atomic;
/// the value carries the one reference it owns from thread to thread, and its receiver unrefs it.
private struct SampleReference: @unchecked Sendable {
    let pointer: OpaquePointer
}
