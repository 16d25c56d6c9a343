/// Every failure the media bridge reports: what went wrong, where, and what to do about it.
public struct MediaError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// GStreamer itself or one of its plugins is missing.
        case setup
        /// A file in Pipelines/ does not parse or names an element that does not exist.
        case pipelineTemplate
        /// The input is unreachable, silent, not media, or in a codec nobody here decodes.
        case input
        /// The output could not be written or reached.
        case output
    }

    public let kind: Kind
    public let description: String

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}
