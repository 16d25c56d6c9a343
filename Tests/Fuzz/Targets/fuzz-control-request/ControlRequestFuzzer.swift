import FoundationEssentials
import FuzzSupport
import JSONTree
import ServeInputs

// One control-socket request line, as the server hands it over: bytes decoded as UTF-8 (invalid
// sequences repaired), without its newline. Whatever the line, parsing answers with a request or
// a refusal, and the reply line built from it is one line of valid JSON that echoes the id.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzControlRequest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let line = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let reply: JSONValue
    switch ControlRequest.parse(line) {
    case .success(let request):
        reply = ControlRequest.success(id: request.id, ["command": .string("\(request.command)")])
    case .failure(let refusal):
        FuzzSupport.require(!refusal.error.message.isEmpty, "a refusal without a message: \(refusal)")
        reply = ControlRequest.failure(id: refusal.id, refusal.error)
    }
    let wire = ControlRequest.line(reply)
    FuzzSupport.require(wire.hasSuffix("\n") && !wire.dropLast().contains("\n"), "the reply is not one line: \(wire)")
    let parsed = try? JSONDecoder().decode(JSONValue.self, from: Data(wire.utf8))
    FuzzSupport.require(parsed == reply, "the reply line does not read back as the reply: \(wire)")
    return 0
}
