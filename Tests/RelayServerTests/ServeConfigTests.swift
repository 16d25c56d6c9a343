import MediaBridge
import RelayServer
import Testing

/// The serve configuration: every documented key read, every mistake refused with line and key.
@Suite struct ServeConfigTests {
    static let shipped = Package.root + "/deploy/facerelay.yml"

    @Test func theShippedExampleIsValidAndRoutesAsDocumented() throws {
        let config = try ServeConfig.load(file: Self.shipped)
        #expect(config.http == .init(host: "127.0.0.1", port: 8190))
        #expect(config.defaults.relay.x264Preset == "veryfast")
        #expect(config.defaults.tracking.expressions.rules.first { $0.analyser.name == "smile" }?.threshold == 0.5)
        #expect(config.route(application: "live", key: "carol")?.upstream == "rtmp://live.example.com/app/carol")
        #expect(config.route(application: "live", key: "carol")?.sticker == "sunglasses")
        #expect(config.route(application: "live", key: "alice")?.upstream == "rtmp://live.example.com/app/PLATFORM-KEY-OF-ALICE")
        #expect(config.route(application: "live", key: "alice")?.sticker == "cat")
        #expect(config.route(application: "other", key: "alice") == nil)
        #expect(config.srtListeners.first?.stream == "studio")
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
        ("htpp: 127.0.0.1:1", "f.yml:1: htpp: unknown key"),
        ("http: localhost", "f.yml:1: http: 'localhost' is not ADDRESS:PORT"),
        ("defaults:\n  encoder:\n    x264_preset: turbo", "f.yml:3: defaults.encoder.x264_preset: unknown preset 'turbo'"),
        ("defaults:\n  tracking:\n    max_faces: 99", "f.yml:3: defaults.tracking.max_faces: must be a whole number in 1...16"),
        ("defaults:\n  tracking:\n    expression_thresholds: { grin: 0.5 }", "defaults.tracking.expression_thresholds.grin: unknown expression"),
        ("rtmp:\n  applications:\n    live: { sticker: cat }", "f.yml:3: rtmp.applications.live: has no route"),
        ("rtmp:\n  applications:\n    live: { upstream: /tmp/out.flv }", "rtmp.applications.live.upstream: an upstream is a network address"),
        ("rtmp:\n  ingest: http://x", "f.yml:2: rtmp.ingest: 'http://x' is not an RTMP server address"),
        ("srt:\n  - listen: srt://host:9000\n    upstream: rtmp://p/app/k", "f.yml:2: srt[0].listen: 'srt://host:9000' calls out; a listener has no host"),
        ("rtmp: [", "f.yml: is not valid YAML"),
    ])
    func mistakesAreRefusedWithLineKeyAndWhatToDo(yaml: String, expected: String) {
        #expect(throws: ConfigError.self) { try ServeConfig.parse(yaml, file: "f.yml") }
        do {
            _ = try ServeConfig.parse(yaml, file: "f.yml")
        } catch {
            #expect(error.description.contains(expected), "\(error.description)")
        }
    }

    @Test func aMissingFileSaysSo() {
        do {
            _ = try ServeConfig.load(file: "/nonexistent/facerelay.yml")
            Issue.record("loaded a missing file")
        } catch {
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
