/// A request the service refuses, with a stable code for programs and a message for people.
public struct ControlError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What a reply's `error.code` says. The raw values are the wire names the README documents:
    /// programs match on them, so a name never changes once released.
    public enum Code: String, Sendable, CaseIterable {
        case badJSON = "bad-json"
        case badRequest = "bad-request"
        case missingArgument = "missing-argument"
        case badArgument = "bad-argument"
        case unknownCommand = "unknown-command"
        case unknownStream = "unknown-stream"
        case unknownSticker = "unknown-sticker"
        /// The package fails to load; the message has its problems.
        case brokenSticker = "broken-sticker"
        /// A path or `..` where a package name belongs.
        case badStickerName = "bad-sticker-name"
        case streamExists = "stream-exists"
        case badInput = "bad-input"
        case badOutput = "bad-output"
        case startFailed = "start-failed"
        /// `add-output` of an output the stream already has.
        case duplicateOutput = "duplicate-output"
        /// `remove-output` of an output the stream does not have.
        case unknownOutput = "unknown-output"
        /// `remove-output` of a stream's only output: stop the stream instead.
        case lastOutput = "last-output"
        /// An added output could not start (its pipeline); the stream's other outputs go on.
        case outputFailed = "output-failed"
        /// The face tracker could not be made (the landmark model).
        case vision
        case shuttingDown = "shutting-down"
        case lineTooLong = "line-too-long"
        /// `reload-stickers` found the stickers folder unreadable; the packages loaded before stay.
        case unreadableStickers = "unreadable-stickers"
        /// A stream's figures could not be written as JSON (a fault in FaceRelay).
        case statsFailed = "stats-failed"
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
