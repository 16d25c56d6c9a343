import FoundationEssentials
import JSONTree
import ServeInputs
import Testing

/// Request lines read without a service, and the reply lines written for them.
@Suite struct ControlRequestTests {
    /// The parse alone, as the fuzz target drives it: each command with its arguments, or the
    /// refusal with the id it read.
    @Test func aRequestLineParsesToItsCommandOrARefusalWithItsId() throws {
        #expect(try ControlRequest.parse(#"{"id": 3, "command": "start", "input": "a.mp4", "output": "b.flv", "stream": null}"#).get()
            == ControlRequest(id: 3, command: .start(input: "a.mp4", outputs: ["b.flv"], sticker: nil, stream: nil)))
        #expect(try ControlRequest.parse(#"{"command": "subscribe", "events": []}"#).get().command == .subscribe(Set(EventClass.allCases)))
        #expect(try ControlRequest.parse(#"{"id": "x", "command": "stats"}"#).get() == ControlRequest(id: "x", command: .stats(stream: nil)))
        for (line, id, code) in [(#"{"id": [1], "command": "stop", "stream": ""}"#, JSONValue.array([1]), ControlError.Code.badArgument),
                                 (#"{"id": 2, "command": "subscribe", "events": "all"}"#, 2, .badArgument),
                                 ("\u{0}", .null, .badJSON)] {
            guard case .failure(let refusal) = ControlRequest.parse(line) else {
                Issue.record("\(line) parsed")
                continue
            }
            #expect(refusal.id == id && refusal.error.code == code, "\(line) -> \(refusal)")
        }
    }

    /// A number with no JSON form (a figure gone wrong) is written as null; the line stays valid.
    @Test func aNumberThatIsNotFiniteIsWrittenAsNull() {
        #expect(ControlRequest.line(["x": .number(.nan), "y": .number(.infinity), "z": 1]) == #"{"x":null,"y":null,"z":1}"# + "\n")
    }

    /// Programs match on the codes: the ones a reply can carry are exactly the ones the README lists.
    @Test func everyErrorCodeIsDocumented() throws {
        let readme = try String(contentsOfFile: Package.root + "/README.md", encoding: .utf8)
        guard let start = readme.range(of: "Error codes: "), let end = readme[start.upperBound...].range(of: "\n\n") else {
            throw TestFailure("the README has no \"Error codes:\" paragraph")
        }
        let paragraph = readme[start.upperBound..<end.lowerBound]
        let documented = paragraph.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
            .filter { !$0.contains(" ") && $0 != ".." }
        #expect(Set(documented) == Set(ControlError.Code.allCases.map(\.rawValue)))
    }
}

/// A test that cannot go on, with why.
struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
