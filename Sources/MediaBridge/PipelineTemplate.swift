import FoundationEssentials

/// A gst-launch description read from a file in `Pipelines/`, with `{placeholders}` filled at run
/// time. Lines starting with `#` are comments for the operator.
public struct PipelineTemplate: Sendable {
    public let path: String
    public let body: String

    public init(path: String) throws(PipelineTemplateError) {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw .unreadable(path: path)
        }
        self.init(path: path, text: text)
    }

    public init(path: String, text: String) {
        self.path = path
        body = text.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.drop(while: \.isWhitespace).hasPrefix("#") }
            .joined(separator: " ")
            .trimmed
    }

    /// The placeholder names the template uses, in order of first use.
    public var placeholders: [String] {
        var names: [String] = []
        var rest = body[...]
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            let name = String(rest[rest.index(after: open)..<close])
            if !names.contains(name) { names.append(name) }
            rest = rest[rest.index(after: close)...]
        }
        return names
    }

    /// Fills every placeholder. Values are inserted verbatim: quote them in the template where they
    /// may hold spaces (`location="{location}"`); `quoted` escapes what would end such a quote.
    public func filled(_ values: [String: String]) throws(PipelineTemplateError) -> String {
        let missing = placeholders.filter { values[$0] == nil }
        guard missing.isEmpty else { throw .unknownPlaceholders(path: path, names: missing, known: values.keys.sorted()) }
        var result = body
        for (name, value) in values { result = result.replacing("{\(name)}", with: value) }
        return result
    }

    /// Escapes a value for use inside double quotes in a gst-launch description.
    public static func quoted(_ value: String) -> String {
        value.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"")
    }
}

public enum PipelineTemplateError: Error, CustomStringConvertible, Equatable {
    case unreadable(path: String)
    case unknownPlaceholders(path: String, names: [String], known: [String])
    case directoryNotFound(searched: [String])

    public var description: String {
        switch self {
        case .unreadable(let path):
            return "cannot read pipeline template \(path): check that it exists and is UTF-8 text"
        case .unknownPlaceholders(let path, let names, let known):
            let list = names.map { "{\($0)}" }.joined(separator: ", ")
            return "pipeline template \(path) uses \(list), which facerelay does not fill here; it fills: "
                + known.map { "{\($0)}" }.joined(separator: ", ")
        case .directoryNotFound(let searched):
            return "no Pipelines/ directory found (looked in \(searched.joined(separator: ", "))); pass --pipelines DIR or set FACERELAY_PIPELINES"
        }
    }
}

extension String {
    var trimmed: String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
