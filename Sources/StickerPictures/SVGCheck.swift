/// What an SVG sticker may not contain, refused with an error that names it before librsvg sees
/// the document: anything that runs (scripts, event attributes), anything that reaches outside the
/// document (a reference that is not `#id`, CSS `@import`, embedded or linked pictures, foreign
/// content), and XML entities (a few lines of them can expand to gigabytes).
public enum SVGCheck {
    /// Whether the bytes are text whose first element is `<svg`.
    static func startsAsSVG(_ bytes: [UInt8]) -> Bool {
        let text = Array(lowercased(bytes.prefix(4096)))
        var index = text.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while index < text.count {
            while index < text.count, text[index] == 0x20 || text[index] == 0x0A || text[index] == 0x0D || text[index] == 0x09 { index += 1 }
            guard index < text.count, text[index] == UInt8(ascii: "<") else { return false }
            let rest = text[index...]
            if rest.starts(with: Array("<svg".utf8)) { return true }
            // Skip an XML declaration, a comment or a DOCTYPE (whose internal subset holds '>').
            let firstClose = find(Array(">".utf8), in: text, from: index) ?? text.count
            let subset = rest.starts(with: Array("<!doctype".utf8)) && (find(Array("[".utf8), in: text, from: index) ?? text.count) < firstClose
            let closing: [UInt8] = rest.starts(with: Array("<!--".utf8)) ? Array("-->".utf8) : subset ? Array("]>".utf8) : Array(">".utf8)
            guard rest.starts(with: Array("<?".utf8)) || rest.starts(with: Array("<!".utf8)),
                  let end = find(closing, in: text, from: index + 2) else { return false }
            index = end + closing.count
        }
        return false
    }

    static func check(_ bytes: [UInt8]) throws(PictureError) {
        let text = lowercased(bytes)
        let forbidden: [(String, String)] = [
            ("<!entity", "declares XML entities (<!ENTITY>), which can expand without bound; remove them"),
            ("<script", "contains a <script>; a sticker cannot run code, remove it"),
            ("<foreignobject", "contains <foreignObject>; draw it with SVG shapes instead"),
            ("<image", "embeds or links a picture (<image>); draw it with SVG shapes, or use a PNG frame"),
            ("<feimage", "embeds or links a picture (<feImage>); draw it with SVG shapes, or use a PNG frame"),
            ("@import", "imports a style sheet (@import); put the styles in the document"),
        ]
        for (needle, message) in forbidden where find(Array(needle.utf8), in: text, from: 0) != nil {
            throw PictureError(message)
        }
        if let attribute = eventAttribute(in: text) {
            throw PictureError("has an event attribute (\(attribute)=) that would run code; remove it")
        }
        for (needle, isURL) in [("href", false), ("url(", true)] {
            var from = 0
            while let found = find(Array(needle.utf8), in: text, from: from) {
                from = found + needle.utf8.count
                guard let target = isURL ? urlTarget(in: text, at: from) : attributeValue(in: text, at: from) else { continue }
                if !target.hasPrefix("#") {
                    throw PictureError("refers to '\(target.prefix(80))' outside the document; only references inside it (#id) are allowed")
                }
            }
        }
    }

    /// `name="value"` after an attribute name ending at `index`: the value, nil when this is not one.
    private static func attributeValue(in text: [UInt8], at index: Int) -> String? {
        var index = skipSpaces(text, index)
        guard index < text.count, text[index] == UInt8(ascii: "=") else { return nil }
        index = skipSpaces(text, index + 1)
        guard index < text.count, text[index] == UInt8(ascii: "\"") || text[index] == UInt8(ascii: "'") else { return nil }
        let quote = text[index]
        let end = text[(index + 1)...].firstIndex(of: quote) ?? text.count
        return String(decoding: text[(index + 1)..<end], as: UTF8.self).trimmingSpaces()
    }

    /// The target of `url(...)`, with its quotes taken off.
    private static func urlTarget(in text: [UInt8], at index: Int) -> String? {
        let end = text[index...].firstIndex(of: UInt8(ascii: ")")) ?? text.count
        var target = String(decoding: text[index..<end], as: UTF8.self).trimmingSpaces()
        if let first = target.first, first == "\"" || first == "'" { target = String(target.dropFirst()) }
        if let last = target.last, last == "\"" || last == "'" { target = String(target.dropLast()) }
        return target.trimmingSpaces()
    }

    /// An attribute such as `onload=`: `on` and letters after a space, then `=`.
    private static func eventAttribute(in text: [UInt8]) -> String? {
        var index = 1
        while index + 2 < text.count {
            defer { index += 1 }
            guard text[index] == UInt8(ascii: "o"), text[index + 1] == UInt8(ascii: "n"),
                  text[index - 1] == 0x20 || text[index - 1] == 0x0A || text[index - 1] == 0x09 || text[index - 1] == 0x0D else { continue }
            var end = index + 2
            while end < text.count, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(text[end]) { end += 1 }
            guard end > index + 2, skipSpaces(text, end) < text.count, text[skipSpaces(text, end)] == UInt8(ascii: "=") else { continue }
            return String(decoding: text[index..<end], as: UTF8.self)
        }
        return nil
    }

    private static func skipSpaces(_ text: [UInt8], _ index: Int) -> Int {
        var index = index
        while index < text.count, text[index] == 0x20 || text[index] == 0x0A || text[index] == 0x0D || text[index] == 0x09 { index += 1 }
        return index
    }

    private static func lowercased(_ bytes: some Collection<UInt8>) -> [UInt8] {
        bytes.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 + 32 : $0 }
    }

    private static func find(_ needle: [UInt8], in text: [UInt8], from start: Int) -> Int? {
        guard let first = needle.first, text.count >= needle.count else { return nil }
        var index = start
        while index <= text.count - needle.count {
            if text[index] == first, text[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice = slice.dropFirst() }
        while let last = slice.last, last.isWhitespace { slice = slice.dropLast() }
        return String(slice)
    }
}
