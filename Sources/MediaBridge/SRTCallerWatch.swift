internal import CGStreamer
import Glibc
import Synchronization

/// An SRT caller that a listener refused during the handshake, and why.
public struct SRTRefusal: Sendable, Equatable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable {
        /// Both sides have a passphrase and they differ.
        case wrongPassphrase
        /// The listener has a passphrase and the caller sent none.
        case passphraseMissing
        /// The caller encrypts and the listener has no passphrase.
        case passphraseUnexpected
        /// Another handshake refusal: libsrt's code and words.
        case other(code: Int, text: String)
    }

    /// What libsrt logs when its listener refuses a handshake, before the code and its words.
    static let libsrtMarker = "rsp(REJECT): "

    /// The reason in libsrt's log line of a refused handshake
    /// ("processConnectRequest: rsp(REJECT): 1010 - Incorrect passphrase"); nil for other lines.
    public static func reason(inLibsrtMessage text: String, listenerHasPassphrase: Bool) -> Reason? {
        guard let marker = text.firstRange(of: libsrtMarker) else { return nil }
        let rest = text[marker.upperBound...]
        guard let code = Int(rest.prefix { $0.isNumber }) else { return nil }
        switch code {
        case 1010: return .wrongPassphrase // SRT_REJ_BADSECRET
        case 1011: return listenerHasPassphrase ? .passphraseMissing : .passphraseUnexpected // SRT_REJ_UNSECURE
        default: return .other(code: code, text: rest.firstRange(of: " - ").map { String(rest[$0.upperBound...]) } ?? String(rest))
        }
    }

    public init(caller: String?, reason: Reason) {
        self.caller = caller
        self.reason = reason
    }

    /// "host:port" of the caller, when libsrt's thread told us who was calling.
    public let caller: String?
    public let reason: Reason

    /// What happened and what the broadcaster (or the operator) should do.
    public var description: String {
        let who = "SRT caller \(caller ?? "(address unknown)")"
        switch reason {
        case .wrongPassphrase:
            return "\(who) refused: wrong passphrase (it does not match this listener's); give the broadcaster the listener's passphrase"
        case .passphraseMissing:
            return "\(who) refused: it sent no passphrase and this listener requires one; the broadcaster must add passphrase=... to its srt:// address"
        case .passphraseUnexpected:
            return "\(who) refused: it encrypts with a passphrase but this listener has none; add ?passphrase=... to the listener's address or remove it from the caller's"
        case .other(let code, let text):
            return "\(who) refused by libsrt: \(text) (code \(code))"
        }
    }
}

/// Tells each SRT listener of the callers it refuses.
///
/// libsrt decides a handshake (a wrong passphrase included) inside its own receive thread, and
/// says so only in its log, which GStreamer's srt plugin forwards to the "srtlib" debug category
/// (libsrt warnings at GStreamer's INFO level); srtsrc itself posts nothing and keeps listening.
/// So this raises that category to INFO, reads its messages in a GStreamer log function, and
/// passes on everything else to GStreamer's default log function only as far as GST_DEBUG asked.
/// srtsrc's "caller-connecting" signal, emitted on that same libsrt thread just before the
/// passphrase is checked, tells which listener and which caller the refusal belongs to.
final class SRTCallerWatch: Sendable {
    static let shared = SRTCallerWatch()

    typealias Refused = @Sendable (SRTRefusal) -> Void

    private struct Listener {
        let hasPassphrase: Bool
        let onRefused: Refused
    }

    private struct State {
        var listeners: [Int: Listener] = [:]
        var nextID = 1
        /// The handshake each libsrt thread is in: listener id and caller address.
        var handshakes: [pthread_t: (listener: Int, caller: String?)] = [:]
        var logFunctionInstalled = false
    }
    private let state = Mutex(State())

    /// Watches `source` (an srtsrc in listener mode) until `stopWatching` is called with the id.
    func watch(_ source: UnsafeMutablePointer<GstElement>, hasPassphrase: Bool, onRefused: @escaping Refused) -> Int {
        installLogFunction()
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            state.listeners[state.nextID] = Listener(hasPassphrase: hasPassphrase, onRefused: onRefused)
            return state.nextID
        }
        // srtsrc emits "caller-connecting" only with its authentication on, and in GStreamer 1.22
        // it is off until set, although reading the property says true; the handler admits
        // every caller.
        fr_set_bool(source, "authentication", 1)
        fr_connect_caller_connecting(source, { _, address, _, userData in
            let caller = GStreamer.takeString(fr_socket_address_string(address))
            SRTCallerWatch.shared.handshakeStarted(listener: Int(bitPattern: userData), caller: caller)
            return 1
        }, UnsafeMutableRawPointer(bitPattern: id))
        return id
    }

    func stopWatching(_ id: Int) {
        state.withLock { state in
            state.listeners[id] = nil
            state.handshakes = state.handshakes.filter { $0.value.listener != id }
        }
    }

    private func handshakeStarted(listener: Int, caller: String?) {
        state.withLock { $0.handshakes[pthread_self()] = (listener, caller) }
    }

    /// A message of libsrt's, on the thread that logged it.
    fileprivate func libsrtSaid(_ text: String) {
        guard text.contains(SRTRefusal.libsrtMarker) else { return }
        let found: (Listener, String?)? = state.withLock { state in
            guard let handshake = state.handshakes.removeValue(forKey: pthread_self()),
                  let listener = state.listeners[handshake.listener] else { return nil }
            return (listener, handshake.caller)
        }
        guard let (listener, caller) = found,
              let reason = SRTRefusal.reason(inLibsrtMessage: text, listenerHasPassphrase: listener.hasPassphrase) else { return }
        listener.onRefused(SRTRefusal(caller: caller, reason: reason))
    }

    private func installLogFunction() {
        let install = state.withLock { state in
            defer { state.logFunctionInstalled = true }
            return !state.logFunctionInstalled
        }
        // The category exists once the srt plugin is loaded, which building an srtsrc did
        // (_gst_debug_get_category is what the GST_DEBUG_CATEGORY_GET macro calls).
        guard install, let category = _gst_debug_get_category("srtlib") else { return }
        let asked = gst_debug_category_get_threshold(category)
        if asked.rawValue < GST_LEVEL_INFO.rawValue { gst_debug_category_set_threshold(category, GST_LEVEL_INFO) }
        // GStreamer's default log function would now print libsrt's INFO lines on stderr: it is
        // replaced by ours, which forwards to it what GST_DEBUG asked for. With GST_DEBUG_FILE
        // the default function writes to a file only it holds, so it stays, and the file also
        // gets libsrt's INFO lines.
        let replacesDefault = getenv("GST_DEBUG_FILE") == nil && gst_debug_remove_log_function(gst_debug_log_default) > 0
        let context = LogContext(srtlib: UInt(bitPattern: category), asked: asked, forwardsToDefault: replacesDefault)
        gst_debug_add_log_function({ category, level, file, function, line, object, message, userData in
            guard let userData else { return }
            let context = Unmanaged<LogContext>.fromOpaque(userData).takeUnretainedValue()
            if UInt(bitPattern: category) == context.srtlib {
                if level.rawValue <= GST_LEVEL_INFO.rawValue, let text = gst_debug_message_get(message) {
                    SRTCallerWatch.shared.libsrtSaid(String(cString: text))
                }
                if level.rawValue > context.asked.rawValue { return }
            }
            if context.forwardsToDefault { gst_debug_log_default(category, level, file, function, line, object, message, nil) }
        }, Unmanaged.passRetained(context).toOpaque(), nil)
    }
}

/// What the log function needs, fixed when it is installed.
private final class LogContext: Sendable {
    /// The "srtlib" category's address.
    let srtlib: UInt
    /// The threshold GST_DEBUG gave it.
    let asked: GstDebugLevel
    let forwardsToDefault: Bool

    init(srtlib: UInt, asked: GstDebugLevel, forwardsToDefault: Bool) {
        self.srtlib = srtlib
        self.asked = asked
        self.forwardsToDefault = forwardsToDefault
    }
}
