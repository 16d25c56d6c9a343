/// A JSON document as a tree: the sticker loader checks every field of one and reports every
/// problem at once instead of stopping at the first mismatch, as Codable does; the control protocol
/// reads requests and writes replies with it.
public enum JSONValue: Codable, Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var values: [JSONValue] = []
            while !array.isAtEnd { values.append(try array.decode(JSONValue.self)) }
            self = .array(values)
        } else if let object = try? decoder.container(keyedBy: AnyKey.self) {
            var values: [String: JSONValue] = [:]
            for key in object.allKeys { values[key.stringValue] = try object.decode(JSONValue.self, forKey: key) }
            self = .object(values)
        } else {
            let value = try decoder.singleValueContainer()
            if value.decodeNil() {
                self = .null
            } else if let bool = try? value.decode(Bool.self) {
                self = .bool(bool)
            } else if let number = try? value.decode(Double.self) {
                self = .number(number)
            } else {
                self = .string(try value.decode(String.self))
            }
        }
    }

    public func encode(to encoder: Encoder) throws {
        switch self {
        case .null:
            var value = encoder.singleValueContainer()
            try value.encodeNil()
        case .bool(let bool):
            var value = encoder.singleValueContainer()
            try value.encode(bool)
        case .number(let number):
            var value = encoder.singleValueContainer()
            // Whole numbers are written as integers: ids and counters read back as they were sent.
            // A number that is not finite has no JSON form: it is written as null, as `rounded` does.
            if !number.isFinite {
                try value.encodeNil()
            } else if number.rounded() == number, abs(number) < 9.007e15 {
                try value.encode(Int64(number))
            } else {
                try value.encode(number)
            }
        case .string(let string):
            var value = encoder.singleValueContainer()
            try value.encode(string)
        case .array(let values):
            var array = encoder.unkeyedContainer()
            for element in values { try array.encode(element) }
        case .object(let values):
            var object = encoder.container(keyedBy: AnyKey.self)
            for (key, value) in values { try object.encode(value, forKey: AnyKey(stringValue: key)) }
        }
    }

    /// How the value is called in an error message.
    public var kind: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(Dictionary(elements) { $1 }) }
    public init(nilLiteral: ()) { self = .null }

    /// A number rounded to `decimals` places, or null when it is not finite.
    public static func rounded(_ value: Double, _ decimals: Int = 3) -> JSONValue {
        guard value.isFinite else { return .null }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        return .number((value * scale).rounded() / scale)
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let values) = self { return values[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }
}
