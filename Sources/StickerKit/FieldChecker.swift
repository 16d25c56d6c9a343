import JSONTree
/// Reads typed fields out of a JSON tree, recording a problem (file, field path, what to do) for
/// every missing or mistyped value instead of stopping.
final class Checker {
    let file: String
    private(set) var problems: [StickerProblem] = []

    init(file: String) { self.file = file }

    func report(_ field: String, _ message: String) {
        problems.append(StickerProblem(file: file, field: field, message: message))
    }

    private func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : path + "." + key }

    func object(_ value: JSONValue, at path: String) -> [String: JSONValue]? {
        guard case .object(let fields) = value else {
            report(path, "must be an object ({...}), not \(value.kind)")
            return nil
        }
        return fields
    }

    func unknownKeys(_ object: [String: JSONValue], at path: String, known: [String]) {
        for key in object.keys.sorted() where !known.contains(key) {
            report(join(path, key), "is not a known field; known here: \(known.joined(separator: ", "))")
        }
    }

    func value(_ object: [String: JSONValue], _ key: String, at path: String) -> JSONValue? {
        guard let value = object[key] else {
            report(join(path, key), "is missing")
            return nil
        }
        return value
    }

    func object(_ object: [String: JSONValue], _ key: String, at path: String) -> [String: JSONValue]? {
        value(object, key, at: path).flatMap { self.object($0, at: join(path, key)) }
    }

    func array(_ object: [String: JSONValue], _ key: String, at path: String) -> [JSONValue]? {
        guard let value = value(object, key, at: path) else { return nil }
        guard case .array(let values) = value else {
            report(join(path, key), "must be an array ([...]), not \(value.kind)")
            return nil
        }
        return values
    }

    func string(_ object: [String: JSONValue], _ key: String, at path: String, default fallback: String? = nil) -> String? {
        guard let value = object[key] else {
            if fallback == nil { report(join(path, key), "is missing") }
            return fallback
        }
        guard case .string(let text) = value else {
            report(join(path, key), "must be a string, not \(value.kind)")
            return nil
        }
        return text
    }

    func bool(_ object: [String: JSONValue], _ key: String, at path: String, default fallback: Bool) -> Bool? {
        guard let value = object[key] else { return fallback }
        guard case .bool(let flag) = value else {
            report(join(path, key), "must be true or false, not \(value.kind)")
            return nil
        }
        return flag
    }

    func number(_ object: [String: JSONValue], _ key: String, at path: String, default fallback: Double? = nil,
                range: ClosedRange<Double>? = nil) -> Double? {
        guard let value = object[key] else {
            if fallback == nil { report(join(path, key), "is missing") }
            return fallback
        }
        guard case .number(let number) = value, number.isFinite else {
            report(join(path, key), "must be a number, not \(value.kind)")
            return nil
        }
        if let range, !range.contains(number) {
            report(join(path, key), "is \(Self.text(number)); it must lie in \(Self.text(range.lowerBound))...\(Self.text(range.upperBound))")
            return nil
        }
        return number
    }

    func integer(_ object: [String: JSONValue], _ key: String, at path: String, default fallback: Int, range: ClosedRange<Int>) -> Int? {
        guard let number = number(object, key, at: path, default: Double(fallback),
                                  range: Double(range.lowerBound)...Double(range.upperBound)) else { return nil }
        guard number == number.rounded() else {
            report(join(path, key), "is \(Self.text(number)); it must be a whole number")
            return nil
        }
        return Int(number)
    }

    func landmarkIndex(_ number: Double, at path: String) -> Int? {
        guard number == number.rounded(), (0...67).contains(number) else {
            report(path, "is \(Self.text(number)); landmark indices are whole numbers 0...67 (iBUG 68-point order)")
            return nil
        }
        return Int(number)
    }

    static func text(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }
}
