import FoundationEssentials

/// Where a stream comes from.
public enum InputEndpoint: Equatable, Sendable, CustomStringConvertible {
    /// Pulled from an RTMP server: rtmp://host[:port]/app/key.
    case rtmp(url: String)
    /// We listen and the broadcaster pushes to us: srt://:PORT (or ?mode=listener).
    case srtListener(uri: String)
    /// We call a remote SRT listener: srt://host:port.
    case srtCaller(uri: String)
    /// A local media file, typefound by GStreamer.
    case file(path: String)

    public var isLive: Bool {
        if case .file = self { return false }
        return true
    }

    public var description: String {
        switch self {
        case .rtmp(let url): return url
        case .srtListener(let uri), .srtCaller(let uri): return maskedAddress(uri)
        case .file(let path): return path
        }
    }

    public init(parsing text: String) throws(EndpointError) {
        if text.hasPrefix("rtmp://") {
            self = .rtmp(url: try Self.validRTMP(text, role: "input"))
        } else if text.hasPrefix("srt://") {
            let srt = try SRTAddress(text, role: "input")
            self = srt.isListener ? .srtListener(uri: srt.uri) : .srtCaller(uri: srt.uri)
        } else if text.contains("://") {
            throw EndpointError(text, role: "input", reason: "unsupported scheme", hint: Self.inputHint)
        } else {
            guard FileManager.default.fileExists(atPath: text) else {
                throw EndpointError(text, role: "input", reason: "no such file", hint: Self.inputHint)
            }
            self = .file(path: text)
        }
    }

    static let inputHint = "use rtmp://host:port/app/key, srt://:PORT (listen), srt://host:port (call) or a media file path"

    static func validRTMP(_ text: String, role: String) throws(EndpointError) -> String {
        let hint = "an RTMP address looks like rtmp://host:port/app/streamkey"
        guard let url = URLComponents(string: text), let host = url.host, !host.isEmpty else {
            throw EndpointError(text, role: role, reason: "no host", hint: hint)
        }
        let parts = url.path.split(separator: "/")
        guard parts.count >= 2 else {
            throw EndpointError(text, role: role, reason: "missing application or stream key", hint: hint)
        }
        return text
    }
}

/// Where the processed stream goes, and the container it is wrapped in.
public enum OutputEndpoint: Equatable, Sendable, CustomStringConvertible {
    case rtmp(url: String)
    case srt(uri: String)
    case file(path: String, container: Container)
    /// Files that rotate: a path with strftime fields (`%Y-%m-%d_%H-%M-%S.mkv`).
    case recording(Recording)

    public enum Container: String, Sendable, CaseIterable {
        case flv, mp4, mkv, ts
    }

    /// Network outputs are rebuilt when the far end goes away; a file output is not.
    public var isNetwork: Bool {
        switch self {
        case .rtmp, .srt: return true
        case .file, .recording: return false
        }
    }

    /// The address with its stream key or passphrase hidden: what logs, replies and errors show.
    public var description: String {
        switch self {
        case .rtmp(let url): return maskedAddress(url)
        case .srt(let uri): return maskedAddress(uri)
        case .file(let path, _): return path
        case .recording(let recording):
            return recording.pattern + "?segment_s=\(recording.segmentSeconds)" + (recording.maxDiskMegabytes.map { "&max_disk_mb=\($0)" } ?? "")
        }
    }

    public init(parsing text: String) throws(EndpointError) {
        if text.hasPrefix("rtmp://") {
            self = .rtmp(url: try InputEndpoint.validRTMP(text, role: "output"))
        } else if text.hasPrefix("srt://") {
            self = .srt(uri: try SRTAddress(text, role: "output").uri)
        } else if text.contains("://") {
            throw EndpointError(text, role: "output", reason: "unsupported scheme", hint: Self.outputHint)
        } else {
            let (path, query) = splitQuery(text)
            let name = path.split(separator: "/").last.map(String.init) ?? path
            let ext = name.contains(".") ? String(name.split(separator: ".").last ?? "").lowercased() : ""
            guard let container = Container(rawValue: ext) else {
                throw EndpointError(text, role: "output", reason: "unknown file type '.\(ext)'", hint: Self.outputHint)
            }
            let directory = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : ""
            if directory.contains("%") {
                throw EndpointError(text, role: "output", reason: "a recording's folder cannot change with time", hint: "put the strftime fields (%Y, %H...) in the file name only")
            }
            guard path.contains("%") else {
                if !query.isEmpty {
                    throw EndpointError(text, role: "output", reason: "segment_s and max_disk_mb are for a recording", hint: "give the file name strftime fields, e.g. show-%Y-%m-%d_%H-%M-%S.mkv")
                }
                if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory + "/.") {
                    throw EndpointError(text, role: "output", reason: "directory \(directory) does not exist", hint: "create it first")
                }
                self = .file(path: path, container: container)
                return
            }
            var recording = Recording(pattern: path, container: container, segmentSeconds: Recording.defaultSegmentSeconds, maxDiskMegabytes: nil)
            let hint = "a recording looks like /folder/show-%Y-%m-%d_%H-%M-%S.mkv?segment_s=600&max_disk_mb=20000"
            for parameter in query.split(separator: "&") where !parameter.isEmpty {
                let pair = parameter.split(separator: "=", maxSplits: 1).map(String.init)
                guard pair.count == 2, let value = Int(pair[1]), value > 0 else {
                    throw EndpointError(text, role: "output", reason: "'\(parameter)' is not NAME=POSITIVE-NUMBER", hint: hint)
                }
                switch pair[0] {
                case "segment_s": recording.segmentSeconds = value
                case "max_disk_mb": recording.maxDiskMegabytes = value
                default: throw EndpointError(text, role: "output", reason: "unknown option '\(pair[0])'", hint: hint)
                }
            }
            self = .recording(recording)
        }
    }

    static let outputHint = "use rtmp://host:port/app/key, srt://host:port, srt://:PORT or a file ending in .flv, .mp4, .mkv or .ts"
}

/// An SRT address, normalised so that GStreamer's srtsrc/srtsink get an explicit mode.
struct SRTAddress {
    let uri: String
    let isListener: Bool

    init(_ text: String, role: String) throws(EndpointError) {
        let hint = "an SRT address looks like srt://:PORT (listen) or srt://host:PORT (call)"
        // URLComponents rejects an empty host, so parse "srt://[host]:port[?query]" by hand.
        let rest = text.dropFirst("srt://".count)
        let hostPort = rest.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let query = rest.count > hostPort.count ? String(rest.dropFirst(hostPort.count + 1)) : ""
        guard let colon = hostPort.lastIndex(of: ":"), let port = Int(hostPort[hostPort.index(after: colon)...]),
              (1...65535).contains(port)
        else {
            throw EndpointError(text, role: role, reason: "missing or invalid port", hint: hint)
        }
        let host = hostPort[..<colon]
        var parameters = query.split(separator: "&").map(String.init)
        let mode = parameters.first { $0.hasPrefix("mode=") }.map { String($0.dropFirst(5)) }
        if let mode, !["listener", "caller", "rendezvous"].contains(mode) {
            throw EndpointError(text, role: role, reason: "unknown SRT mode '\(mode)'", hint: hint)
        }
        isListener = mode == "listener" || (mode == nil && host.isEmpty)
        if mode == nil { parameters.append(isListener ? "mode=listener" : "mode=caller") }
        uri = "srt://\(host):\(port)?" + parameters.joined(separator: "&")
    }
}

public struct EndpointError: Error, CustomStringConvertible, Equatable {
    public let description: String

    init(_ text: String, role: String, reason: String, hint: String) {
        description = "invalid \(role) '\(maskedAddress(text))': \(reason); \(hint)"
    }
}

/// Hides the secrets of a network address: an RTMP stream key (the last path segment, which a
/// platform treats as a password) and SRT `passphrase` and `streamid` values. Anything else,
/// file paths included, is returned as it is.
public func maskedAddress(_ text: String) -> String {
    let hidden = "****"
    if text.hasPrefix("rtmp://") || text.hasPrefix("rtmps://") {
        let (address, query) = splitQuery(text)
        let schemeEnd = address.firstRange(of: "://")!.upperBound
        guard let lastSlash = address[schemeEnd...].lastIndex(of: "/") else { return address + (query.isEmpty ? "" : "?" + hidden) }
        let masked = address[address.index(after: lastSlash)...].isEmpty ? address : String(address[...lastSlash]) + hidden
        return masked + (query.isEmpty ? "" : "?" + hidden)
    }
    if text.hasPrefix("srt://") {
        let (address, query) = splitQuery(text)
        guard !query.isEmpty else { return address }
        let parameters = query.split(separator: "&").map { parameter -> String in
            let name = parameter.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            return ["passphrase", "streamid"].contains(name.lowercased()) ? name + "=" + hidden : String(parameter)
        }
        return address + "?" + parameters.joined(separator: "&")
    }
    return text
}

private func splitQuery(_ text: String) -> (String, String) {
    guard let mark = text.firstIndex(of: "?") else { return (text, "") }
    return (String(text[..<mark]), String(text[text.index(after: mark)...]))
}

/// A webhook receiver's address as logs and replies show it: credentials (`user:password@`) and
/// the query (where tokens go) hidden, scheme, host, port and path kept.
public func maskedWebhookURL(_ text: String) -> String {
    guard var components = URLComponents(string: text) else { return "****" }
    if components.user != nil || components.password != nil {
        components.user = "****"
        components.password = nil
    }
    if components.query != nil { components.query = "****" }
    components.fragment = nil
    return components.string ?? "****"
}
