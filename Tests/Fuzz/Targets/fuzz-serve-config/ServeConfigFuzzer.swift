import FoundationEssentials
import FuzzSupport
import ServeInputs

// The YAML of `facerelay serve --config`, as ServeConfig.load reads it: text that is refused with
// a message naming the file, or a configuration whose routes and checks can be asked for.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzServeConfig(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let text = String(validating: UnsafeBufferPointer(start: data, count: size), as: UTF8.self) else {
        return -1  // load refuses text that is not UTF-8 before parsing: nothing to learn here
    }
    do {
        let config = try ServeConfig.parse(text, file: "fuzz.yml")
        _ = config.stickerChoices
        _ = try? config.checkHTTPAccess(source: "fuzz.yml")
        for (application, settings) in config.applications {
            _ = config.route(application: application, key: "fuzz")
            for key in settings.keys.keys {
                FuzzSupport.require(config.route(application: application, key: key) != nil, "key \(key) of \(application) has no route")
            }
        }
    } catch {
        FuzzSupport.require(error.description.hasPrefix("fuzz.yml"), "an error that does not name the file: \(error)")
    }
    return 0
}
