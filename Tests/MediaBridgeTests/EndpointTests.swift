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

    @Test func networkOutputsAreReconnectedFilesAreNot() throws {
        #expect(try OutputEndpoint(parsing: "rtmp://a.example/live/k").isNetwork)
        #expect(try OutputEndpoint(parsing: "srt://a.example:9000").isNetwork)
        #expect(try OutputEndpoint(parsing: "x.flv").isNetwork == false)
    }
}
