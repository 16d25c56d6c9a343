/// A configuration the service refuses to start with: where, which key, and what to do.
public struct ConfigError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The configuration file, or what stands for one ("the command line"); empty when unknown.
    public let file: String
    /// The line in `file` (from 1), when the mistake has one.
    public let line: Int?
    /// The key as a dotted path (`defaults.encoder.x264_preset`); empty for the file as a whole.
    public let key: String
    /// What is wrong and what to do.
    public let message: String

    public init(file: String, line: Int?, key: String, message: String) {
        self.file = file
        self.line = line
        self.key = key
        self.message = message
    }

    /// "FILE:LINE: KEY: MESSAGE", leaving out what is unknown.
    public var description: String {
        let place = line.map { "\(file):\($0)" } ?? file
        return (place.isEmpty ? "" : place + ": ") + (key.isEmpty ? message : "\(key): \(message)")
    }
}
