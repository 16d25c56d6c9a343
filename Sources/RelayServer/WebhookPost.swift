import CWebhookTransport
import Glibc
import Synchronization

/// One webhook POST through libcurl, which blocks the calling thread: `WebhookSender` gives each
/// receiver a thread of its own for it.
enum WebhookPost {
    /// Why a POST got no response, in libcurl's words ("Failed to connect to 127.0.0.1 port 9
    /// after 0 ms: Couldn't connect to server", "Operation timed out after 5000 milliseconds...").
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Raised to end the POSTs under way: libcurl asks about once a second while one waits.
    final class StopSignal: Sendable {
        let raised = Atomic<Bool>(false)
    }

    /// POSTs `body` to `url` with `headers` ("Name: value"), waiting at most `timeout`: the
    /// response's HTTP status, whatever it is, or why none came.
    static func send(_ body: [UInt8], to url: String, headers: [String], timeout: Duration,
                     stopping: StopSignal) throws(Failure) -> Int {
        var result = webhook_post_result()
        let cHeaders = headers.map { strdup($0) }
        defer { cHeaders.forEach { free($0) } }
        let milliseconds = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
        let status = withExtendedLifetime(stopping) {
            cHeaders.map { UnsafePointer($0) }.withUnsafeBufferPointer { headerPointers in
                webhook_post(url, headerPointers.baseAddress, headerPointers.count, body, body.count, Int(milliseconds),
                             { context in
                                 Unmanaged<StopSignal>.fromOpaque(context!).takeUnretainedValue().raised.load(ordering: .relaxed) ? 1 : 0
                             },
                             Unmanaged.passUnretained(stopping).toOpaque(), &result)
            }
        }
        guard status == 0 else {
            throw Failure(description: withUnsafeBytes(of: result.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) })
        }
        return result.http_status
    }
}
