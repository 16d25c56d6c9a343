import FoundationEssentials
import Glibc

extension OutputEndpoint {
    /// A recording in segments: a new file from the first keyframe `segmentSeconds` of stream time
    /// after the current one began, the oldest deleted once the recording's files take more than
    /// `maxDiskMegabytes`.
    public struct Recording: Equatable, Sendable {
        /// A path with strftime fields, expanded (local time) when each segment starts.
        public var pattern: String
        public var container: Container
        public var segmentSeconds: Int
        /// Nil: no limit.
        public var maxDiskMegabytes: Int?

        public static let defaultSegmentSeconds = 600

        public init(pattern: String, container: Container, segmentSeconds: Int = defaultSegmentSeconds, maxDiskMegabytes: Int? = nil) {
            self.pattern = pattern
            self.container = container
            self.segmentSeconds = segmentSeconds
            self.maxDiskMegabytes = maxDiskMegabytes
        }

        /// The folder of every segment (the pattern's, which has no strftime field).
        public var directory: String {
            pattern.contains("/") ? String(pattern[..<pattern.lastIndex(of: "/")!]) : "."
        }

        /// The file the segment starting at `date` (seconds since 1970) goes to; `taken` says
        /// whether a name is already used (two segments in the same second get -1, -2...).
        public func path(at date: Int, taken: (String) -> Bool) -> String {
            var time = time_t(date)
            var parts = tm()
            localtime_r(&time, &parts)
            var buffer = [CChar](repeating: 0, count: 4096)
            let length = strftime(&buffer, buffer.count, pattern, &parts)
            let name = length > 0 ? String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : pattern
            guard taken(name) else { return name }
            let stem = String(name.dropLast(container.rawValue.count + 1))
            var number = 1
            while taken("\(stem)-\(number).\(container.rawValue)") { number += 1 }
            return "\(stem)-\(number).\(container.rawValue)"
        }

        /// Deletes the recording's oldest files while they take more than its disk limit; never
        /// `keeping`. Its files are those in its folder whose names fit its pattern (each strftime
        /// field any text), an earlier run's included. Throws when the folder cannot be read or a
        /// file cannot be deleted (the others are still deleted): the limit is then not kept, and
        /// the disk fills.
        public func deleteOldestFiles(keeping: [String]) throws(DiskLimitError) {
            guard let limit = maxDiskMegabytes else { return }
            let name = pattern.split(separator: "/").last.map(String.init) ?? pattern
            let stem = String(name.dropLast(container.rawValue.count + 1))
            var glob = ""
            var escaped = false
            for character in stem {
                if escaped {
                    glob += "*"
                    escaped = false
                } else if character == "%" {
                    escaped = true
                } else {
                    glob.append(character)
                }
            }
            glob += "*." + container.rawValue
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: directory)
            } catch {
                throw DiskLimitError(folder: directory, limit: limit, reason: "the folder cannot be read: \(error)")
            }
            let files = names
                .filter { fnmatch(glob, $0, 0) == 0 }
                .map { directory + "/" + $0 }
                .compactMap { path -> (path: String, size: Int, modified: Date)? in
                    // A file gone between the listing and here takes no room.
                    guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }
                    return (path, (attributes[.size] as? Int) ?? 0, (attributes[.modificationDate] as? Date) ?? .distantPast)
                }
                .sorted { $0.modified < $1.modified }
            var total = files.reduce(0) { $0 + $1.size }
            var undeletable: [String] = []
            for file in files where total > limit * 1_048_576 && !keeping.contains(file.path) {
                do {
                    try FileManager.default.removeItem(atPath: file.path)
                    total -= file.size
                } catch {
                    undeletable.append("\(file.path) (\(error))")
                }
            }
            guard undeletable.isEmpty else {
                throw DiskLimitError(folder: directory, limit: limit, reason: "cannot delete \(undeletable.joined(separator: ", "))")
            }
        }
    }

    /// A recording's oldest files could not be deleted to keep it within its disk limit.
    public struct DiskLimitError: Error, Equatable, CustomStringConvertible {
        public let folder: String
        public let limit: Int
        public let reason: String

        public var description: String {
            "the recordings in \(folder) are not kept within \(limit) MB: \(reason); check the folder's permissions"
        }
    }
}
