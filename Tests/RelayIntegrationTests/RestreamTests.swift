import Foundation
import Testing

/// One broadcast to several platforms: one encode for all of them, and a platform that goes away
/// neither stalls nor costs frames to another.
@Suite(.serialized) struct RestreamTests {
    @Test func everyPlatformGetsTheSameEncodeAndADeadOneCostsTheOtherNothing() throws {
        let ingest = try NginxRTMP()
        let steady = try NginxRTMP()
        var flaky: NginxRTMP? = try NginxRTMP()
        let flakyPort = flaky!.port
        let directory = try Package.temporaryDirectory("restream")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try Fixtures.path("face_720p_bench.mp4")
        let relay = try ChildProcess(Package.facerelay, ["run", "--input", ingest.url("in"), "--sticker", "sunglasses",
                                                          "--output", steady.recordedURL("steady"), "--output", flaky!.recordedURL("flaky"),
                                                          "--stats-json", directory + "/stats.json"],
                                     logDirectory: directory, name: "relay")
        Thread.sleep(forTimeInterval: 0.5)
        let publisher = try ChildProcess("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-re", "-i", input, "-c", "copy", "-f", "flv", ingest.url("in")],
                                         logDirectory: directory, name: "publisher")
        let published = Date()
        // One platform is away for 8 s, from 3 s into the 20 s broadcast.
        Thread.sleep(forTimeInterval: 3)
        flaky!.kill()
        flaky = nil
        Thread.sleep(forTimeInterval: 8)
        let back = Date()
        flaky = try NginxRTMP(port: flakyPort)
        #expect(publisher.wait(seconds: 60) == 0, "publisher: \(publisher.stderr)")
        #expect(relay.wait(seconds: 30) == 0, "facerelay: \(relay.stderr)")
        #expect(relay.stderr.contains("output failed, reconnecting") && relay.stderr.contains("output reconnected"), "\(relay.stderr)")

        // The steady platform has every frame the relay sent, in order: a gap only where the relay
        // itself let a frame go (a stage that fell behind), never for the other platform.
        let stats = try RelayStatsFile(directory + "/stats.json")
        let whole = try MediaReport(try steady.recording("steady"))
        let indices = whole.frames.compactMap(\.index)
        #expect(indices.count == whole.frames.count && indices.count == stats.frames_out && stats.frames_out >= 400,
                "\(indices.count) frames on the steady platform, \(stats.frames_out) sent")
        #expect(zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 })
        #expect(Self.gaps(indices).count <= stats.frames_dropped, "gaps on the steady platform: \(Self.gaps(indices)), \(stats.frames_dropped) dropped")
        #expect(whole.audio?.codec == "aac")

        // The returning platform is sent to again within 5 s, from a keyframe: its first frame decodes.
        let resumed = try MediaReport(try flaky!.recording("flaky"))
        let resumedIndices = resumed.frames.compactMap(\.index)
        let frameAtReturn = Int(back.timeIntervalSince(published) * 30)
        #expect((resumedIndices.first ?? .max) <= frameAtReturn + 150, "back at frame \(resumedIndices.first ?? -1), returned at about \(frameAtReturn)")
        #expect(resumed.frames.first?.index != nil, "the returning platform's recording starts with a whole picture")
        #expect(resumedIndices.count >= 100, "\(resumedIndices.count) frames after the platform came back")
        #expect(Self.gaps(resumedIndices).count <= stats.frames_dropped, "gaps after the return: \(Self.gaps(resumedIndices))")
        #expect(resumed.audio?.codec == "aac")

        // One encode: the same frame is the same picture, sticker and all, on both platforms.
        let steadyFrames = Dictionary(whole.frames.compactMap { frame in frame.index.map { ($0, frame.pixels) } }) { first, _ in first }
        let shared = resumed.frames.filter { $0.index.map { steadyFrames[$0] != nil } ?? false }
        #expect(shared.count >= 100)
        #expect(shared.allSatisfy { steadyFrames[$0.index!] == $0.pixels }, "the platforms got different pictures of the same frames")

        let outputs = stats.outputs ?? []
        #expect(outputs.count == 2)
        if outputs.count == 2 {
            #expect(outputs[0].frames_missed == 0 && outputs[0].reconnects == 0 && outputs[0].frames_sent == stats.frames_out)
            #expect(outputs[1].reconnects == 1 && outputs[1].frames_missed >= 200, "\(outputs[1])")
            #expect(outputs[1].frames_sent + outputs[1].frames_missed == outputs[0].frames_sent)
            #expect(outputs.allSatisfy { !$0.address.contains("steady") && !$0.address.contains("flaky") }, "addresses are masked: \(outputs)")
        }
    }

    static func gaps(_ indices: [Int]) -> [String] {
        zip(indices, indices.dropFirst()).filter { $1 != $0 + 1 }.map { "\($0)->\($1)" }
    }
}
