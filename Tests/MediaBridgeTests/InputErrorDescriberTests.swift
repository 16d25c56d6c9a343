import CGStreamer
@testable import MediaBridge
import Testing

/// Every message a failing input gets, word for word: what went wrong, where, and what to do.
@Suite struct InputErrorDescriberTests {
    let rtmp = InputErrorDescriber(input: .rtmp(url: "rtmp://127.0.0.1:1935/live/key"), inputTimeoutSeconds: 15, idleTimeoutSeconds: 10)
    let listener = InputErrorDescriber(input: .srtListener(uri: "srt://:9000?mode=listener"), inputTimeoutSeconds: 4, idleTimeoutSeconds: 10)
    let caller = InputErrorDescriber(input: .srtCaller(uri: "srt://10.0.0.1:9000"), inputTimeoutSeconds: 15, idleTimeoutSeconds: 10)
    let file = InputErrorDescriber(input: .file(path: "/tmp/in.flv"), inputTimeoutSeconds: 15, idleTimeoutSeconds: 10)

    let dirac = MissingPlugin(description: "decoder for video/x-dirac", decodedMediaType: "video/x-dirac", codecName: "Dirac")
    let unknownAudio = MissingPlugin(description: "decoder for audio/x-unknown", decodedMediaType: "audio/x-unknown", codecName: "audio/x-unknown")
    let notADecoder = MissingPlugin(description: "element rtpdepay")

    func busError(_ domain: BusError.Domain, code: GstStreamError = GST_STREAM_ERROR_FAILED, text: String = "it broke") -> BusError {
        BusError(source: "demux", text: text, debug: "line one\nthe detail", domain: domain, code: Int32(code.rawValue))
    }

    @Test func anRTMPStreamEndedBeforeAnyDataAsksWhetherTheKeyIsPublishing() {
        let error = rtmp.describe(busError(.stream, code: GST_STREAM_ERROR_TYPE_NOT_FOUND), missingPlugin: nil, everStarted: false)
        #expect(error == MediaError(.input, "no video from rtmp://127.0.0.1:1935/live/key: the server ended the stream before any data came; is the stream key publishing?"))
    }

    @Test func somethingThatIsNotMediaSaysWhatToSend() {
        let error = listener.describe(busError(.stream, code: GST_STREAM_ERROR_WRONG_TYPE, text: "not media"), missingPlugin: nil, everStarted: false)
        #expect(error.description == "input srt://:9000?mode=listener is not a media stream GStreamer recognises (not media); send FLV, MP4, MKV or MPEG-TS with H.264 video")
        let later = rtmp.describe(busError(.stream, code: GST_STREAM_ERROR_TYPE_NOT_FOUND, text: "not media"), missingPlugin: nil, everStarted: true)
        #expect(later.description == "input rtmp://127.0.0.1:1935/live/key is not a media stream GStreamer recognises (not media); send FLV, MP4, MKV or MPEG-TS with H.264 video")
    }

    @Test func aMissingPluginIsNamedBeforeTheErrorItCaused() {
        let video = file.describe(busError(.stream), missingPlugin: dirac, everStarted: false)
        #expect(video == MediaError(.input, "input /tmp/in.flv carries Dirac video (video/x-dirac), which GStreamer on this machine cannot decode; have the broadcaster send H.264 or H.265 video, or install a GStreamer plugin that decodes it"))
        let other = file.describe(busError(.other), missingPlugin: notADecoder, everStarted: false)
        #expect(other.description == "input /tmp/in.flv needs a GStreamer plugin that is not installed (element rtpdepay); install gstreamer1.0-libav and gstreamer1.0-plugins-bad, or send H.264 video")
    }

    @Test func eachErrorClassGetsItsOwnAdvice() {
        #expect(file.describe(busError(.stream, code: GST_STREAM_ERROR_CODEC_NOT_FOUND, text: "no codec"), missingPlugin: nil, everStarted: false).description
                == "input /tmp/in.flv uses a codec this machine cannot decode: no codec; send H.264 video")
        #expect(rtmp.describe(busError(.resource, text: "Could not connect"), missingPlugin: nil, everStarted: false).description
                == "cannot read input rtmp://127.0.0.1:1935/live/key: Could not connect (demux: the detail); check the address and that the server is up")
        #expect(file.describe(busError(.stream), missingPlugin: nil, everStarted: true).description
                == "input /tmp/in.flv is damaged or unsupported: it broke (demux: the detail)")
        #expect(file.describe(busError(.other), missingPlugin: nil, everStarted: true).description
                == "input /tmp/in.flv failed: it broke (demux: the detail)")
    }

    @Test func anInputWithoutVideoSaysSo() {
        var streams = IngestPipeline.Streams()
        streams.allPadsKnown = true
        #expect(file.noVideoStream(streams, missingPlugin: nil).description == "input /tmp/in.flv has no video stream; FaceRelay needs a video stream")
        #expect(file.noVideoStream(streams, missingPlugin: unknownAudio).description == "input /tmp/in.flv has no video stream; FaceRelay needs a video stream")
        #expect(file.noVideoStream(streams, missingPlugin: dirac).description.hasPrefix("input /tmp/in.flv carries Dirac video (video/x-dirac)"))
        #expect(file.endedWithoutVideo == MediaError(.input, "input /tmp/in.flv ended without a single video frame; it needs a video stream"))
    }

    @Test func noFirstFrameInTimeSaysWhatToCheckForEachKindOfInput() {
        let nothing = IngestPipeline.Streams()
        #expect(rtmp.noMedia(nothing, lastSRTRefusal: nil).description
                == "no video from rtmp://127.0.0.1:1935/live/key within 15 s: is the stream key publishing? (raise --input-timeout to wait longer)")
        #expect(listener.noMedia(nothing, lastSRTRefusal: nil).description
                == "no broadcaster sent video to srt://:9000?mode=listener within 4 s (raise --input-timeout, or 0 to wait forever)")
        let refusal = SRTRefusal(caller: "127.0.0.1:5000", reason: .wrongPassphrase)
        #expect(listener.noMedia(nothing, lastSRTRefusal: refusal).description
                == "no broadcaster sent video to srt://:9000?mode=listener within 4 s (raise --input-timeout, or 0 to wait forever); the last caller was refused: SRT caller 127.0.0.1:5000 refused: wrong passphrase (it does not match this listener's); give the broadcaster the listener's passphrase")
        #expect(caller.noMedia(nothing, lastSRTRefusal: nil).description
                == "no video from srt://10.0.0.1:9000 within 15 s: is the SRT listener up? (raise --input-timeout to wait longer)")
        #expect(file.noMedia(nothing, lastSRTRefusal: nil) == MediaError(.input, "no video decoded from /tmp/in.flv within 15 s"))
    }

    @Test func audioAloneIsTheBroadcastersMistake() {
        var demuxedAudio = IngestPipeline.Streams()
        demuxedAudio.demuxedKinds = ["audio"]
        #expect(rtmp.noMedia(demuxedAudio, lastSRTRefusal: nil).description
                == "input rtmp://127.0.0.1:1935/live/key has no video stream (only audio for 15 s); FaceRelay needs a video stream: check the broadcaster's video source and encoder")
        demuxedAudio.demuxedKinds = ["audio", "video"]
        #expect(rtmp.noMedia(demuxedAudio, lastSRTRefusal: nil).description.hasPrefix("no video from rtmp://"))
    }

    @Test func onlyASecondaryStreamLostToAMissingDecoderIsAWarning() {
        #expect(rtmp.streamLeftOut(unknownAudio)
                == "input rtmp://127.0.0.1:1935/live/key carries audio in a codec GStreamer does not know (audio/x-unknown), which GStreamer on this machine cannot decode; relaying without it")
        #expect(rtmp.streamLeftOut(dirac) == nil)
        #expect(rtmp.streamLeftOut(notADecoder) == nil)
    }

    @Test func aVideoDecoderOnceMissingStaysTheOneNamed() {
        #expect(InputErrorDescriber.keeping(unknownAudio, over: nil)?.description == unknownAudio.description)
        #expect(InputErrorDescriber.keeping(dirac, over: unknownAudio)?.description == dirac.description)
        #expect(InputErrorDescriber.keeping(unknownAudio, over: dirac)?.description == dirac.description)
    }

    @Test func aLiveInputsEndIsExplained() {
        #expect(rtmp.liveInputEndReason == "the publisher stopped, or sent nothing for 10 s")
        #expect(InputErrorDescriber(input: .rtmp(url: "rtmp://h/a/k"), inputTimeoutSeconds: 15, idleTimeoutSeconds: 0).liveInputEndReason == "the broadcaster stopped")
        #expect(listener.liveInputEndReason == "the broadcaster stopped")
        #expect(file.formatChanged(to: "video/x-raw, width=(int)640").description
                == "input /tmp/in.flv changed its picture size or format mid-stream (now video/x-raw, width=(int)640); restart the relay for the new format")
    }
}
