import FoundationEssentials
import Glibc
import ServeInputs
import StreamPlan
import Testing

/// The serve configuration: every documented key read, every mistake refused with line and key.
@Suite struct ServeConfigTests {
    static let shipped = Package.root + "/deploy/facerelay.yml"

    @Test func theShippedExampleIsValidAndRoutesAsDocumented() throws {
        let config = try ServeConfig.load(file: Self.shipped)
        #expect(config.http == .init(host: "127.0.0.1", port: 8190))
        #expect(config.defaults.relay.x264Preset == "veryfast")
        #expect(config.defaults.relay.decodeThreads == 1 && config.defaults.relay.encodeThreads == 1)
        #expect(config.defaults.tracking.expressions.rules.first { $0.analyser.name == "smile" }?.threshold == 0.5)
        #expect(config.route(application: "live", key: "carol")?.upstreams == ["rtmp://live.example.com/app/carol"])
        #expect(config.route(application: "live", key: "carol")?.sticker == "sunglasses")
        let restreamed = try ServeConfig.parse("rtmp:\n  applications:\n    live:\n      upstreams: ['rtmp://yt/live2/{key}', 'srt://twitch:9000?streamid={key}']", file: "f.yml")
        #expect(restreamed.route(application: "live", key: "dana")?.upstreams == ["rtmp://yt/live2/dana", "srt://twitch:9000?streamid=dana"])
        #expect(config.route(application: "live", key: "alice")?.upstreams == ["rtmp://live.example.com/app/PLATFORM-KEY-OF-ALICE"])
        #expect(config.route(application: "live", key: "alice")?.sticker == "cat")
        #expect(config.route(application: "live", key: "bob")?.upstreams.count == 2)
        #expect(config.route(application: "live", key: "bob")?.outputs.last == "/var/lib/facerelay/bob/%Y-%m-%d_%H-%M-%S.mkv?segment_s=600&max_disk_mb=20000")
        #expect(config.route(application: "other", key: "alice") == nil)
        #expect(config.srtListeners.first?.stream == "studio")
    }

    /// `serve` bounds each stream to one decoder and one x264 thread unless told otherwise; a
    /// single `run` takes one per core.
    @Test func servedStreamsGetOneDecodeAndOneEncodeThreadUnlessSet() throws {
        let unset = try ServeConfig.parse("defaults:\n  sticker: none", file: "f.yml")
        #expect(unset.defaults.relay.decodeThreads == 1 && unset.defaults.relay.encodeThreads == 1)
        #expect(RelaySettings().decodeThreads == 0 && RelaySettings().encodeThreads == 0)
        let set = try ServeConfig.parse("defaults:\n  threads: { decode: 0, encode: 4 }", file: "f.yml")
        #expect(set.defaults.relay.decodeThreads == 0 && set.defaults.relay.encodeThreads == 4)
    }

    @Test func aKeyTableWithoutTemplateRefusesOtherKeys() throws {
        let config = try ServeConfig.parse("""
            rtmp:
              applications:
                live:
                  keys:
                    alice: { upstream: "rtmp://platform/app/SECRET" }
            """, file: "f.yml")
        #expect(config.route(application: "live", key: "alice") != nil)
        #expect(config.route(application: "live", key: "mallory") == nil)
    }

    @Test(arguments: [
        ("htpp: 127.0.0.1:1", 1, "htpp", "unknown key"),
        ("http: localhost", 1, "http", "'localhost' is not ADDRESS:PORT"),
        ("defaults:\n  encoder:\n    x264_preset: turbo", 3, "defaults.encoder.x264_preset", "unknown preset 'turbo'"),
        ("defaults:\n  threads:\n    encode: 99", 3, "defaults.threads.encode", "must be a whole number in 0...64"),
        ("defaults:\n  threads:\n    audio: 1", 3, "defaults.threads.audio", "unknown key"),
        ("defaults:\n  tracking:\n    max_faces: 99", 3, "defaults.tracking.max_faces", "must be a whole number in 1...16"),
        ("defaults:\n  tracking:\n    expression_thresholds: { grin: 0.5 }", 3, "defaults.tracking.expression_thresholds.grin", "unknown expression"),
        ("rtmp:\n  applications:\n    live: { sticker: cat }", 3, "rtmp.applications.live", "has no route"),
        ("rtmp:\n  applications:\n    live: { upstream: /tmp/out.flv }", 3, "rtmp.applications.live.upstream", "an upstream is a network address"),
        ("rtmp:\n  applications:\n    live: { upstream: rtmp://p/app/k, upstreams: [rtmp://q/app/k] }", 3, "rtmp.applications.live", "give upstream (one address) or upstreams (a list), not both"),
        ("rtmp:\n  applications:\n    live: { upstreams: [] }", 3, "rtmp.applications.live.upstreams", "must be a list of one or more addresses"),
        ("rtmp:\n  applications:\n    live:\n      upstreams:\n        - rtmp://p/app/{key}\n        - rtmp://p/app/{key}", 6, "rtmp.applications.live.upstreams[1]", "'rtmp://p/app/****' is listed twice"),
        ("rtmp:\n  applications:\n    live:\n      upstreams: [rtmp://p/app/k, /tmp/o.flv]", 4, "rtmp.applications.live.upstreams[1]", "an upstream is a network address"),
        ("webhooks:\n  - url: ftp://user:pw@x/y\n    secret: s", 2, "webhooks[0].url", "'ftp://****@x/y' is not an http:// or https:// address"),
        ("webhooks:\n  - url: http://x/y", 2, "webhooks[0]", "needs url (http://... or https://...) and secret"),
        ("webhooks:\n  - url: http://x/y\n    secret: s\n    events: [smiles]", 4, "webhooks[0].events[0]", "unknown event class 'smiles'"),
        ("rtmp:\n  applications:\n    live: { upstream: rtmp://p/app/k, record: /tmp/show.mkv }", 3, "rtmp.applications.live.record", "a recording's file name needs strftime fields"),
        ("rtmp:\n  applications:\n    live: { upstream: rtmp://p/app/k, record: '/tmp/%Y.mkv?segment_s=0' }", 3, "rtmp.applications.live.record", "invalid output '/tmp/%Y.mkv?segment_s=0': 'segment_s=0' is not NAME=POSITIVE-NUMBER"),
        ("rtmp:\n  ingest: http://x", 2, "rtmp.ingest", "'http://x' is not an RTMP server address"),
        ("srt:\n  - listen: srt://host:9000\n    upstream: rtmp://p/app/k", 2, "srt[0].listen", "'srt://host:9000' calls out; a listener has no host"),
        ("rtmp: [", nil, "", "is not valid YAML"),
    ] as [(String, Int?, String, String)])
    func mistakesAreRefusedWithLineKeyAndWhatToDo(yaml: String, line: Int?, key: String, message: String) {
        do {
            _ = try ServeConfig.parse(yaml, file: "f.yml")
            Issue.record("accepted: \(yaml)")
        } catch {
            #expect(error.file == "f.yml" && error.line == line && error.key == key, "\(error)")
            #expect(error.message.hasPrefix(message), "\(error)")
        }
    }

    @Test func aTokenFileThatCannotBeReadOrIsEmptyIsRefused() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("facerelay-empty-token-\(getpid())").path
        _ = FileManager.default.createFile(atPath: empty, contents: Data("\n".utf8))
        defer { try? FileManager.default.removeItem(atPath: empty) }
        for (path, message) in [("/nonexistent/token", "cannot read a token from '/nonexistent/token' ("),
                                (empty, "cannot read a token from '\(empty)': it is empty")] {
            do {
                _ = try ServeConfig.parse("http_token_file: \(path)", file: "f.yml")
                Issue.record("accepted \(path)")
            } catch {
                #expect(error.line == 1 && error.key == "http_token_file" && error.message.hasPrefix(message), "\(error)")
            }
        }
    }

    @Test func theMessageNamesFileLineAndKey() {
        #expect(ConfigError(file: "f.yml", line: 3, key: "defaults.sticker", message: "must be a non-empty text value").description
            == "f.yml:3: defaults.sticker: must be a non-empty text value")
        #expect(ConfigError(file: "f.yml", line: nil, key: "", message: "is not UTF-8 text").description == "f.yml: is not UTF-8 text")
        #expect(ConfigError(file: "the command line", line: nil, key: "http", message: "needs a token").description
            == "the command line: http: needs a token")
    }

    @Test func aMissingFileSaysSo() {
        do {
            _ = try ServeConfig.load(file: "/nonexistent/facerelay.yml")
            Issue.record("loaded a missing file")
        } catch {
            #expect(error.file == "/nonexistent/facerelay.yml" && error.line == nil && error.key == "")
            #expect(error.description == "/nonexistent/facerelay.yml: no such file; give the path of a YAML file (see deploy/facerelay.yml)")
        }
    }

    @Test func streamKeysAndPassphrasesAreMasked() throws {
        #expect(maskedAddress("rtmp://live.example.com/app/SECRET") == "rtmp://live.example.com/app/****")
        #expect(maskedAddress("rtmp://live.example.com:1935/app/SECRET?token=abc") == "rtmp://live.example.com:1935/app/****?****")
        #expect(maskedAddress("srt://host:9000?mode=caller&passphrase=hunter2hunter2&streamid=KEY") == "srt://host:9000?mode=caller&passphrase=****&streamid=****")
        #expect(maskedAddress("/tmp/out.flv") == "/tmp/out.flv")
        #expect(try OutputEndpoint(parsing: "rtmp://p.example/app/SECRET").description == "rtmp://p.example/app/****")
        do {
            _ = try OutputEndpoint(parsing: "rtmp://p.example/SECRET")
            Issue.record("an RTMP address without an application was accepted")
        } catch {
            #expect(!error.description.contains("SECRET"), "\(error.description)")
        }
    }
}

enum Package {
    static let root: String = {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path
    }()
}
