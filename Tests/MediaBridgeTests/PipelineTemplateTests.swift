import Foundation
import MediaBridge
import StreamPlan
import Testing

@Suite struct PipelineTemplateTests {
    static let pipelines = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Pipelines").path

    @Test func commentsAreDroppedAndLinesJoined() {
        let template = PipelineTemplate(path: "t.gst", text: "# a comment\nfilesrc location=\"{location}\"\n  ! fakesink\n")
        #expect(template.body == "filesrc location=\"{location}\"   ! fakesink")
        #expect(template.placeholders == ["location"])
    }

    @Test func fillingReplacesEveryUse() throws {
        let template = PipelineTemplate(path: "t.gst", text: "a={x} b={y} c={x}")
        #expect(try template.filled(["x": "1", "y": "2"]) == "a=1 b=2 c=1")
    }

    @Test func anUnknownPlaceholderNamesTheFileAndWhatIsFilled() {
        let template = PipelineTemplate(path: "/p/sink-rtmp.gst", text: "rtmp2sink location={locaton}")
        #expect(throws: PipelineTemplateError.unknownPlaceholders(path: "/p/sink-rtmp.gst", names: ["locaton"], known: ["location"])) {
            try template.filled(["location": "rtmp://x/a/b"])
        }
        let message = "\(PipelineTemplateError.unknownPlaceholders(path: "/p/sink-rtmp.gst", names: ["locaton"], known: ["location"]))"
        #expect(message.contains("/p/sink-rtmp.gst") && message.contains("{locaton}") && message.contains("{location}"))
    }

    @Test func quotedValuesCannotEndTheirQuotes() {
        #expect(PipelineTemplate.quoted(#"my "show" \ 1.flv"#) == #"my \"show\" \\ 1.flv"#)
    }

    @Test func shippedTemplatesFillForEveryEndpoint() throws {
        let library = PipelineLibrary(directory: Self.pipelines)
        let settings = RelaySettings()
        let inputs: [InputEndpoint] = [.rtmp(url: "rtmp://h/a/k"), .srtListener(uri: "srt://:1?mode=listener"), .file(path: "/tmp/x.flv")]
        for input in inputs {
            let description = try library.ingestDescription(for: input, settings: settings)
            #expect(description.contains("decodebin name=decode"))
            #expect(!description.contains("{"))
        }
        let outputs: [OutputEndpoint] = [.rtmp(url: "rtmp://h/a/k"), .srt(uri: "srt://h:1?mode=caller")]
            + OutputEndpoint.Container.allCases.map { .file(path: "/tmp/o.\($0.rawValue)", container: $0) }
        for output in outputs {
            let description = try library.outputDescription(for: output, withAudio: true, live: true)
            #expect(description.contains("is-live=true") && !description.contains("is-live=false"))
            #expect(description.contains("appsrc name=video_in") && description.contains("appsrc name=audio_in"))
            #expect(description.contains("block=false") && description.contains("name=mux"))
        }
        let silent = try library.outputDescription(for: outputs[0], withAudio: false, live: false)
        #expect(silent.contains("is-live=false") && silent.contains("block=true"))
        #expect(!silent.contains("audio_in"))
        let encoder = try library.encoderDescription(framesPerSecond: 25, live: false, settings: settings)
        #expect(encoder.contains("is-live=false") && encoder.contains("key-int-max=50") && encoder.contains("appsink name=encoded"))
    }

    @Test func encoderSettingsReachTheEncoder() throws {
        var settings = RelaySettings()
        settings.x264Preset = "ultrafast"
        settings.bitrateKbps = 4000
        settings.keyframeIntervalSeconds = 1
        settings.encodeThreads = 3
        let description = try PipelineLibrary(directory: Self.pipelines).encoderDescription(framesPerSecond: 29.97, live: false, settings: settings)
        #expect(description.contains("speed-preset=ultrafast") && description.contains("bitrate=4000") && description.contains("key-int-max=30"))
        #expect(description.contains(" threads=3 "))
    }

    @Test func anExplicitFolderWithoutTemplatesIsAnError() {
        #expect(throws: PipelineTemplateError.directoryNotFound(searched: ["/nonexistent"])) {
            try PipelineLibrary.locate(explicit: "/nonexistent")
        }
    }
}
