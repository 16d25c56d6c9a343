import FaceTracking
import FoundationEssentials
import JSONTree
import Logging
import MediaBridge
import RelayServer
import StickerKit
import Testing

/// The control protocol without a socket: request lines in, reply lines out.
@Suite struct ControlProtocolTests {
    let control: ControlProtocol
    let registry: StreamRegistry

    init() throws {
        let pipelines = PipelineLibrary(directory: Package.root + "/Pipelines")
        let loader = StickerLoader(expressions: ExpressionSettings.defaultRules.map(\.analyser.name))
        let catalog = StickerCatalog(library: StickerLibrary(directory: Package.root + "/Stickers"), loader: loader)
        try catalog.reload()
        registry = StreamRegistry(config: ServeConfig(), catalog: catalog, events: EventHub(), library: pipelines,
                                  makeTracker: { _ in throw ControlError(.vision, "no tracker in this test") }, logger: .init(label: "test"))
        control = ControlProtocol(registry: registry)
    }

    func reply(_ line: String) throws -> JSONValue {
        guard case .reply(let reply) = control.handle(line) else { throw TestFailure("not a plain reply") }
        // What goes on the wire parses back to the same reply, on one line.
        let wire = ControlProtocol.line(reply)
        #expect(wire.hasSuffix("\n") && wire.dropLast().allSatisfy { $0 != "\n" })
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data(wire.utf8)) == reply)
        return reply
    }

    func errorCode(_ line: String) throws -> String? {
        let reply = try reply(line)
        #expect(reply["ok"] == false, "\(line) -> \(reply)")
        #expect(reply["error"]?["message"]?.stringValue?.isEmpty == false)
        return reply["error"]?["code"]?.stringValue
    }

    @Test func aReplyEchoesTheRequestIdWhateverItsType() throws {
        for id in [#"7"#, #""abc""#, #"{"n": [1, 2]}"#, #"null"#, #"2.5"#] {
            let reply = try reply(#"{"id": \#(id), "command": "streams"}"#)
            #expect(reply["id"] == (try JSONDecoder().decode(JSONValue.self, from: Data(id.utf8))))
            #expect(reply["ok"] == true && reply["result"]?["streams"] == .array([]))
        }
    }

    @Test func badRequestsGetSpecificErrors() throws {
        #expect(try errorCode("{not json") == "bad-json")
        #expect(try errorCode("[1, 2]") == "bad-request")
        #expect(try errorCode(#"{"id": 1}"#) == "missing-argument")
        #expect(try errorCode(#"{"id": 1, "command": 5}"#) == "bad-argument")
        #expect(try errorCode(#"{"id": 1, "command": "dance"}"#) == "unknown-command")
        #expect(try errorCode(#"{"id": 1, "command": "set-sticker", "stream": "a"}"#) == "missing-argument")
        #expect(try errorCode(#"{"id": 1, "command": "set-sticker", "stream": 3, "sticker": "cat"}"#) == "bad-argument")
        #expect(try errorCode(#"{"id": 1, "command": "set-sticker", "stream": "nobody", "sticker": "cat"}"#) == "unknown-stream")
        #expect(try errorCode(#"{"id": 1, "command": "stop", "stream": "nobody"}"#) == "unknown-stream")
        #expect(try errorCode(#"{"id": 1, "command": "stats", "stream": "nobody"}"#) == "unknown-stream")
        #expect(try errorCode(#"{"id": 1, "command": "start", "input": "/no/such.mp4", "output": "/tmp/x.flv"}"#) == "bad-input")
        #expect(try errorCode(#"{"id": 1, "command": "start", "input": "rtmp://h/app/k", "output": "ftp://x"}"#) == "bad-output")
        #expect(try errorCode(#"{"id": 1, "command": "start", "input": "rtmp://h/app/k", "output": "rtmp://p/app/k", "sticker": "../x"}"#) == "bad-sticker-name")
        #expect(try errorCode(#"{"id": 1, "command": "start", "input": "rtmp://h/app/k", "output": "rtmp://p/app/k", "sticker": "nope"}"#) == "unknown-sticker")
        #expect(try errorCode(#"{"id": 1, "command": "subscribe", "events": ["gossip"]}"#) == "bad-argument")
    }

    @Test func stickerNamesCannotLeaveTheStickersFolder() throws {
        for name in ["../x", "/etc", "a/b", ".hidden", "..", ""] {
            #expect(throws: StickerChoiceError.self, "\(name)") { try registry.catalog.look(named: name) }
        }
        #expect(throws: Never.self) { try registry.catalog.look(named: "sunglasses") }
    }

    @Test func stickersListsEveryPackageWithItsTriggers() throws {
        let result = try reply(#"{"id": 1, "command": "stickers"}"#)["result"]
        guard case .array(let packages)? = result?["stickers"] else { throw TestFailure("no stickers list") }
        let names = packages.compactMap { $0["name"]?.stringValue }
        #expect(names.contains("sunglasses") && names.contains("flames") && names.count >= 11)
        let flames = packages.first { $0["name"] == "flames" }
        #expect(flames?["triggers"] == ["mouthOpen"])
    }

    @Test func subscribeNamesItsClasses() {
        guard case .subscribe(let reply, let classes) = control.handle(#"{"id": 4, "command": "subscribe", "events": ["expression"]}"#) else {
            Issue.record("subscribe gave a plain reply")
            return
        }
        #expect(classes == [.expression])
        #expect(reply["id"] == 4 && reply["result"]?["events"] == ["expression"])
        guard case .subscribe(_, let all) = control.handle(#"{"id": 5, "command": "subscribe"}"#) else {
            Issue.record("subscribe without events gave a plain reply")
            return
        }
        #expect(all == Set(EventClass.allCases))
    }
}

/// Events: a slow subscriber loses events, never blocks the publisher, and is told how many.
@Suite struct EventHubTests {
    @Test func aFullQueueDropsCountsAndTells() async {
        let hub = EventHub(queueCapacity: 4)
        let slow = hub.subscribe(to: [.expression])
        let other = hub.subscribe(to: [.stream])
        for index in 0..<10 { hub.publish(.expression, ["event": "expression", "n": .number(Double(index))]) }
        hub.publish(.stream, ["event": "stream"])
        #expect(hub.totals.published == 11 && hub.totals.dropped == 6)
        var received: [JSONValue] = []
        var iterator = slow.events.makeAsyncIterator()
        for _ in 0..<4 { if let event = await iterator.next() { received.append(event) } }
        #expect(received.map { $0["n"] } == [0, 1, 2, 3])
        // The next event that fits is preceded by how many were missed.
        hub.publish(.expression, ["event": "expression", "n": 10])
        let notice = await iterator.next(), next = await iterator.next()
        #expect(notice == ["event": "missed", "count": 6])
        #expect(next?["n"] == 10)
        var others = other.events.makeAsyncIterator()
        #expect(await others.next() == ["event": "stream"])
        hub.unsubscribe(slow.id)
        hub.unsubscribe(other.id)
        #expect(hub.subscriberCount == 0)
    }

    /// Without the drop a subscriber whose stream ended without `unsubscribe` (its reader cancelled)
    /// would stay in the hub for good and count every later event of its classes as dropped.
    @Test func aSubscriberWhoseStreamEndedIsDroppedAtTheNextEvent() async {
        let hub = EventHub()
        let kept = hub.subscribe(to: [.expression])
        do { _ = hub.subscribe(to: [.expression]) }  // its stream is released unread: it terminates
        #expect(hub.subscriberCount == 2)
        hub.publish(.expression, ["event": "expression"])
        #expect(hub.subscriberCount == 1 && hub.totals.dropped == 0)
        var iterator = kept.events.makeAsyncIterator()
        #expect(await iterator.next() == ["event": "expression"])
        hub.unsubscribe(kept.id)
        #expect(hub.subscriberCount == 0)
    }
}
