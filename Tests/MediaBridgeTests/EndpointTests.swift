import Foundation
import MediaBridge
import StreamPlan
import Testing

@Suite struct EndpointTests {
    @Test func rtmpInputKeepsItsAddress() throws {
        #expect(try InputEndpoint(parsing: "rtmp://127.0.0.1:1935/live/key") == .rtmp(url: "rtmp://127.0.0.1:1935/live/key"))
    }

    @Test func rtmpWithoutStreamKeyIsRejectedWithAHint() {
        #expect {
            try InputEndpoint(parsing: "rtmp://host/live")
        } throws: { error in
            "\(error)".contains("missing application or stream key") && "\(error)".contains("rtmp://host:port/app/streamkey")
        }
    }

    @Test func srtWithoutHostListensAndWithHostCalls() throws {
        #expect(try InputEndpoint(parsing: "srt://:7001") == .srtListener(uri: "srt://:7001?mode=listener"))
        #expect(try InputEndpoint(parsing: "srt://10.0.0.2:7001") == .srtCaller(uri: "srt://10.0.0.2:7001?mode=caller"))
        #expect(try InputEndpoint(parsing: "srt://127.0.0.1:7001?mode=listener&latency=200")
            == .srtListener(uri: "srt://127.0.0.1:7001?mode=listener&latency=200"))
    }

    @Test func srtNeedsAValidPortAndMode() {
        #expect(throws: EndpointError.self) { try InputEndpoint(parsing: "srt://host") }
        #expect(throws: EndpointError.self) { try InputEndpoint(parsing: "srt://:99999") }
        #expect(throws: EndpointError.self) { try InputEndpoint(parsing: "srt://:7001?mode=broadcast") }
    }

    @Test func missingInputFileAndUnknownSchemeAreRejected() {
        #expect(throws: EndpointError.self) { try InputEndpoint(parsing: "/nonexistent/stream.flv") }
        #expect(throws: EndpointError.self) { try InputEndpoint(parsing: "http://example.org/stream.flv") }
    }

    @Test func outputFileContainerComesFromItsExtension() throws {
        let directory = FileManager.default.temporaryDirectory.path
        #expect(try OutputEndpoint(parsing: directory + "/out.MP4") == .file(path: directory + "/out.MP4", container: .mp4))
        #expect(try OutputEndpoint(parsing: "out.mkv") == .file(path: "out.mkv", container: .mkv))
        #expect {
            try OutputEndpoint(parsing: "out.avi")
        } throws: { "\($0)".contains("unknown file type '.avi'") }
        #expect {
            try OutputEndpoint(parsing: "/no/such/dir/out.flv")
        } throws: { "\($0)".contains("directory /no/such/dir does not exist") }
    }

    /// A file name with strftime fields records in segments; its options come after `?`.
    @Test func aFileNameWithTimeFieldsIsARecording() throws {
        let recording = OutputEndpoint.Recording(pattern: "/rec/show-%Y%m%d-%H%M%S.mkv", container: .mkv, segmentSeconds: 60, maxDiskMegabytes: 500)
        #expect(try OutputEndpoint(parsing: "/rec/show-%Y%m%d-%H%M%S.mkv?segment_s=60&max_disk_mb=500") == .recording(recording))
        #expect(try OutputEndpoint(parsing: "rec-%H.ts") == .recording(.init(pattern: "rec-%H.ts", container: .ts, segmentSeconds: 600, maxDiskMegabytes: nil)))
        let hourly = try OutputEndpoint(parsing: "rec-%H.ts")
        #expect(recording.directory == "/rec" && !hourly.isNetwork)
        // 2024-03-05 06:07:08 UTC, named in local time; a name already taken gets -1, -2...
        let moment = 1_709_618_828
        let name = recording.path(at: moment) { _ in false }
        let expectedLength = "/rec/show-20240305-060708.mkv".count
        #expect(name.hasPrefix("/rec/show-2024030") && name.hasSuffix(".mkv") && name.count == expectedLength)
        let second: String = recording.path(at: moment) { $0 == name }
        #expect(second == String(name.dropLast(4)) + "-1.mkv")
        for (text, problem) in [("/rec/%Y/show.mkv", "a recording's folder cannot change with time"), ("show.mkv?segment_s=5", "segment_s and max_disk_mb are for a recording"),
                                ("show-%H.mkv?segment_s=-1", "'segment_s=-1' is not NAME=POSITIVE-NUMBER"), ("show-%H.mkv?keep=3", "unknown option 'keep'")] {
            #expect { try OutputEndpoint(parsing: text) } throws: { "\($0)".contains(problem) }
        }
    }

    /// A recording past its disk limit loses its oldest files first, never the one it is told to
    /// keep nor a file of another name; a folder it cannot read is an error that names it, not a
    /// limit silently not kept.
    @Test func aRecordingPastItsDiskLimitLosesItsOldestFiles() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("disk-limit-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let megabyte = Data(count: 1_048_576)
        let names = ["show-1.mkv", "show-2.mkv", "show-3.mkv", "show-4.mkv", "other.mkv"]
        for (age, name) in names.enumerated() {
            let path = folder + "/" + name
            try megabyte.write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: Double(age - 10) * 60)], ofItemAtPath: path)
        }
        let recording = OutputEndpoint.Recording(pattern: folder + "/show-%H.mkv", container: .mkv, maxDiskMegabytes: 2)
        try recording.deleteOldestFiles(keeping: [folder + "/show-1.mkv"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["other.mkv", "show-1.mkv", "show-4.mkv"])

        let unreadable = OutputEndpoint.Recording(pattern: folder + "/other.mkv/show-%H.mkv", container: .mkv, maxDiskMegabytes: 2)
        #expect {
            try unreadable.deleteOldestFiles(keeping: [])
        } throws: { "\($0)".contains("the recordings in \(folder)/other.mkv are not kept within 2 MB: the folder cannot be read") }
    }

    @Test func networkOutputsAreReconnectedFilesAreNot() throws {
        #expect(try OutputEndpoint(parsing: "rtmp://a.example/live/k").isNetwork)
        #expect(try OutputEndpoint(parsing: "srt://a.example:9000").isNetwork)
        #expect(try OutputEndpoint(parsing: "x.flv").isNetwork == false)
    }
}
