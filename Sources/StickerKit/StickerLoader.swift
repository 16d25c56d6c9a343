import FoundationEssentials
import FrameKit
import Glibc
import JSONTree
import StickerPictures

/// One thing wrong with a sticker package: which file, which field, and what to do.
public struct StickerProblem: Sendable, Equatable, CustomStringConvertible {
    public let file: String
    /// Path of the field inside the JSON (`items[1].scale.pointA.flag`), empty for the whole file.
    public let field: String
    public let message: String

    public init(file: String, field: String, message: String) {
        self.file = file
        self.field = field
        self.message = message
    }

    public var description: String { field.isEmpty ? "\(file): \(message)" : "\(file): \(field): \(message)" }
}

/// Everything wrong with a sticker package; it was not loaded.
public struct StickerLoadError: Error, Sendable, CustomStringConvertible {
    public let directory: String
    public let problems: [StickerProblem]

    public var description: String {
        let count = problems.count == 1 ? "1 problem" : "\(problems.count) problems"
        return "sticker \(directory) is not valid (\(count)); fix the package and load it again:\n"
            + problems.map { "  - \($0)" }.joined(separator: "\n")
    }
}

/// Reads a sticker folder (`sticker.json` and its pictures) and checks all of it: the JSON's
/// shape and values, that every frame exists, decodes within the picture limits and has a sane
/// size, landmark indices, and triggers (known expressions, existing items, no cycles). Either the
/// whole package loads or none of it does, so a bad package can never replace a running one.
public struct StickerLoader: Sendable {
    public static let fileName = "sticker.json"
    public static let maximumItems = 32
    /// Decoded pixels of every frame of every item together: 32 M is 128 MB of RGBA.
    public static let maximumPackagePixels = 32 * 1024 * 1024

    /// The expression names triggers may use.
    public let expressions: [String]
    public let pictures: PictureDecoder

    public var maximumFrames: Int { pictures.limits.maximumFrames }

    public init(expressions: [String], pictures: PictureDecoder = PictureDecoder()) {
        self.expressions = expressions
        self.pictures = pictures
    }

    public func load(directory: String) throws(StickerLoadError) -> StickerPackage {
        let trimmed = directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory
        let name = String(trimmed.split(separator: "/").last ?? Substring(trimmed))
        let checker = Checker(file: trimmed + "/" + Self.fileName)
        let package = parse(directory: trimmed, name: name, checker: checker)
        guard checker.problems.isEmpty, let package else {
            throw StickerLoadError(directory: trimmed, problems: checker.problems)
        }
        return package
    }

    private func parse(directory: String, name: String, checker: Checker) -> StickerPackage? {
        // An empty file is refused before it is read: FoundationEssentials' contents(atPath:) loses
        // a 4 KiB buffer on every empty file it reads (LeakSanitizer, Swift 6.3).
        var status = stat()
        if stat(checker.file, &status) == 0, status.st_size == 0 {
            checker.report("", "is empty; it needs a JSON object with \"items\" (see Stickers/README.md)")
            return nil
        }
        guard let data = FileManager.default.contents(atPath: checker.file) else {
            checker.report("", FileManager.default.fileExists(atPath: directory)
                ? "missing or unreadable; every sticker folder needs a \(Self.fileName)"
                : "no such sticker folder")
            return nil
        }
        let root: JSONValue
        do {
            root = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            checker.report("", "is not valid JSON (\(Self.reason(error))); check brackets, commas and quotes")
            return nil
        }
        guard let top = checker.object(root, at: "") else { return nil }
        checker.unknownKeys(top, at: "", known: ["title", "version", "description", "items"])
        let title = checker.string(top, "title", at: "", default: name) ?? name
        if let version = checker.number(top, "version", at: "", default: 1), version != 1 {
            checker.report("version", "is \(version) but this FaceRelay reads version 1")
        }
        _ = checker.string(top, "description", at: "", default: "")
        guard let itemValues = checker.array(top, "items", at: "") else { return nil }
        if itemValues.isEmpty { checker.report("items", "is empty; a sticker needs at least one item") }
        if itemValues.count > Self.maximumItems { checker.report("items", "has \(itemValues.count) items; at most \(Self.maximumItems) are allowed") }

        var items: [StickerItem] = []
        var ids: [String] = []
        for (index, value) in itemValues.enumerated() {
            let path = "items[\(index)]"
            let id = checker.object(value, at: path).flatMap { checker.string($0, "id", at: path) }
            if let id {
                if ids.contains(id) { checker.report(path + ".id", "'\(id)' is used by an earlier item; ids must be unique") }
                if id.isEmpty || !id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) {
                    checker.report(path + ".id", "'\(id)' must be letters, digits, '_' or '-'")
                }
            }
            ids.append(id ?? "")
        }
        for (index, value) in itemValues.enumerated() {
            if let item = parseItem(value, at: "items[\(index)]", ids: ids, directory: directory, checker: checker) { items.append(item) }
        }
        let pixels = items.reduce(0) { $0 + $1.frames.count * $1.designWidth * $1.designHeight }
        if pixels > Self.maximumPackagePixels {
            checker.report("items", "decode to \(pixels / 1_048_576) M pixels together, over the limit of \(Self.maximumPackagePixels / 1_048_576) M; use fewer or smaller frames")
        }
        checkCycles(items: items, checker: checker)
        let ordered = items.enumerated().sorted { ($0.element.z, $0.offset) < ($1.element.z, $1.offset) }.map(\.element)
        return StickerPackage(name: name, title: title, directory: directory, items: ordered)
    }

    private func parseItem(_ value: JSONValue, at path: String, ids: [String], directory: String, checker: Checker) -> StickerItem? {
        guard let item = checker.object(value, at: path) else { return nil }
        checker.unknownKeys(item, at: path, known: ["id", "frames", "fps", "loop", "z", "position", "rotateCenter", "scale",
                                                    "region", "begin", "end", "duration", "follow3D"])
        let id = checker.string(item, "id", at: path)
        let frames = parseFrames(item, at: path, directory: directory, checker: checker)
        let fps = checker.number(item, "fps", at: path, default: 0, range: 0...120)
        if let frames, frames.delays != nil, item["fps"] != nil {
            checker.report(path + ".fps", "is for a list of frames; an animated picture shows its frames for its own delays, leave fps out")
        } else if let frames, frames.images.count > 1, frames.delays == nil, fps == 0 {
            checker.report(path + ".fps", "is needed for an item with \(frames.images.count) frames: give the frames per second (1...120)")
        }
        let loop = checker.bool(item, "loop", at: path, default: true)
        let z = checker.integer(item, "z", at: path, default: 0, range: -1000...1000)
        let follow3D = checker.bool(item, "follow3D", at: path, default: false)
        let duration = item["duration"] == nil ? nil : checker.number(item, "duration", at: path, range: 0.01...3600)
        let begin = item["begin"] == nil ? .always : parseTrigger(item, "begin", at: path, id: id, ids: ids, checker: checker)
        let end = item["end"] == nil ? nil : parseTrigger(item, "end", at: path, id: id, ids: ids, checker: checker)
        let size = frames?.images.first.map { (Double($0.width), Double($0.height)) }
        let placement = parsePlacement(item, at: path, designSize: size, checker: checker)
        if let frames, frames.images.count == 1, loop == false, fps == 0, duration == nil {
            checker.report(path + ".loop", "is false on a single picture without fps or duration, so it would show for one frame; give a duration in seconds")
        }
        guard let id, let frames, let fps, let loop, let z, let follow3D, let placement, let begin else { return nil }
        let seconds = frames.delays ?? Array(repeating: fps > 0 ? 1 / fps : 0, count: frames.images.count)
        return StickerItem(id: id, frames: frames.images, frameSeconds: seconds, drawings: frames.drawings, loop: loop, z: z,
                           placement: placement, begin: begin, end: end, duration: duration, follow3D: follow3D)
    }

    /// An item's frames: the pictures listed, or the frames of its one animated picture.
    private struct Frames {
        var images: [RGBAImage] = []
        /// The animated picture's own delays, seconds.
        var delays: [Double]?
        /// The SVG documents, when every frame is one.
        var drawings: [VectorDrawing]? = []
    }

    private func parseFrames(_ item: [String: JSONValue], at path: String, directory: String, checker: Checker) -> Frames? {
        guard let names = checker.array(item, "frames", at: path) else { return nil }
        let field = path + ".frames"
        let formats = "PNG, APNG, GIF, WebP or SVG"
        guard !names.isEmpty else {
            checker.report(field, "is empty; list the item's picture files, e.g. [\"glasses.png\"] (\(formats))")
            return nil
        }
        guard names.count <= maximumFrames else {
            checker.report(field, "has \(names.count) frames; at most \(maximumFrames) are allowed")
            return nil
        }
        var frames = Frames()
        var decoded = 0
        for (index, value) in names.enumerated() {
            let framePath = "\(field)[\(index)]"
            guard case .string(let name) = value else {
                checker.report(framePath, "must be a picture file name, not \(value.kind)")
                continue
            }
            guard !name.hasPrefix("/"), !name.split(separator: "/").contains(".."), let named = PictureFormat.named(name) else {
                checker.report(framePath, "'\(name)' must be a \(formats) file inside the sticker folder")
                continue
            }
            let file = directory + "/" + name
            guard FileManager.default.fileExists(atPath: file) else {
                checker.report(framePath, "'\(name)' does not exist in \(directory)")
                continue
            }
            let picture: Picture
            do {
                picture = try pictures.decode(file: file)
            } catch {
                checker.report(framePath, "'\(name)' \(error.message)")
                continue
            }
            guard picture.format == named else {
                checker.report(framePath, "'\(name)' holds a \(picture.format.rawValue.uppercased()) picture; name it .\(picture.format.fileExtensions[0])")
                continue
            }
            if picture.frames.count > 1, names.count > 1 {
                checker.report(framePath, "'\(name)' is animated (\(picture.frames.count) frames); an animated picture must be the item's only frame")
                continue
            }
            let (width, height) = (picture.frames[0].width, picture.frames[0].height)
            if let first = frames.images.first, first.width != width || first.height != height {
                checker.report(framePath, "'\(name)' is \(width)x\(height) but the first frame is \(first.width)x\(first.height); all frames of an item share one size")
                continue
            }
            if picture.frames.allSatisfy(\.isBlank) { checker.report(framePath, "'\(name)' is fully transparent; it would never show") }
            frames.images += picture.frames
            frames.delays = picture.delays
            if let drawing = picture.drawing { frames.drawings?.append(drawing) } else { frames.drawings = nil }
            decoded += 1
        }
        return decoded == names.count ? frames : nil
    }

    private func parsePlacement(_ item: [String: JSONValue], at path: String, designSize: (Double, Double)?, checker: Checker) -> Placement? {
        let anchored = item["position"] != nil || item["scale"] != nil || item["rotateCenter"] != nil
        if anchored == (item["region"] != nil) {
            checker.report(path, anchored
                ? "has both landmark anchoring (position/scale) and a region; use one of them"
                : "says nowhere where it goes: give position and scale (landmark anchoring) or a region")
            return nil
        }
        if let region = item["region"] {
            let field = path + ".region"
            guard let object = checker.object(region, at: field) else { return nil }
            checker.unknownKeys(object, at: field, known: ["feature", "widthFactor", "heightFactor", "offsetX", "offsetY"])
            var feature: FaceFeature?
            if let name = checker.string(object, "feature", at: field) {
                feature = FaceFeature(rawValue: name)
                if feature == nil {
                    checker.report(field + ".feature", "'\(name)' is not a face feature; use one of \(FaceFeature.allCases.map(\.rawValue).joined(separator: ", "))")
                }
            }
            let width = checker.number(object, "widthFactor", at: field, default: 1, range: 0.05...10)
            let height = checker.number(object, "heightFactor", at: field, default: 1, range: 0.05...10)
            let offsetX = checker.number(object, "offsetX", at: field, default: 0, range: -5...5)
            let offsetY = checker.number(object, "offsetY", at: field, default: 0, range: -5...5)
            guard let feature, let width, let height, let offsetX, let offsetY else { return nil }
            return .region(RegionAnchor(feature: feature, widthFactor: width, heightFactor: height, offsetX: offsetX, offsetY: offsetY))
        }
        let position = item["position"].flatMap { parsePoint($0, at: path + ".position", designSize: designSize, checker: checker) }
        if item["position"] == nil { checker.report(path + ".position", "is missing: the design point that sits on a landmark, e.g. {\"flag\": 27, \"x\": 150, \"y\": 40}") }
        var rotateCenter: LandmarkPoint?
        if let value = item["rotateCenter"] {
            // The seed format gives a list of points; their mean is the centre.
            let field = path + ".rotateCenter"
            let list: [JSONValue]? = if case .array(let list) = value { list } else { nil }
            let values = list ?? [value]
            if values.isEmpty { checker.report(field, "is empty; give one point or leave it out") }
            let points = values.enumerated().compactMap { index, point in
                parsePoint(point, at: list == nil ? field : "\(field)[\(index)]", designSize: designSize, checker: checker)
            }
            if !points.isEmpty, points.count == values.count {
                let count = Double(points.count)
                rotateCenter = LandmarkPoint(landmarks: points.flatMap(\.landmarks), x: points.map(\.x).reduce(0, +) / count,
                                             y: points.map(\.y).reduce(0, +) / count)
            }
        }
        guard let scale = checker.object(item, "scale", at: path) else { return nil }
        let field = path + ".scale"
        checker.unknownKeys(scale, at: field, known: ["pointA", "pointB"])
        let a = checker.value(scale, "pointA", at: field).flatMap { parsePoint($0, at: field + ".pointA", designSize: designSize, checker: checker) }
        let b = checker.value(scale, "pointB", at: field).flatMap { parsePoint($0, at: field + ".pointB", designSize: designSize, checker: checker) }
        guard let position, let a, let b else { return nil }
        if ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot() < 1 {
            checker.report(field, "pointA and pointB are less than 1 design pixel apart; the scale needs two distinct points")
            return nil
        }
        if Set(a.landmarks) == Set(b.landmarks) {
            checker.report(field, "pointA and pointB name the same landmarks; the scale needs two different ones")
            return nil
        }
        return .landmarks(LandmarkAnchor(position: position, rotateCenter: rotateCenter, pointA: a, pointB: b))
    }

    private func parsePoint(_ value: JSONValue, at path: String, designSize: (Double, Double)?, checker: Checker) -> LandmarkPoint? {
        guard let object = checker.object(value, at: path) else { return nil }
        checker.unknownKeys(object, at: path, known: ["flag", "x", "y"])
        var landmarks: [Int]?
        switch object["flag"] {
        case nil:
            checker.report(path + ".flag", "is missing: the landmark index (0...67, iBUG order) or a list of them")
        case .number(let number)?:
            landmarks = checker.landmarkIndex(number, at: path + ".flag").map { [$0] }
        case .array(let list)?:
            let indices = list.enumerated().compactMap { index, entry -> Int? in
                guard case .number(let number) = entry else {
                    checker.report("\(path).flag[\(index)]", "must be a landmark index, not \(entry.kind)")
                    return nil
                }
                return checker.landmarkIndex(number, at: "\(path).flag[\(index)]")
            }
            if list.isEmpty { checker.report(path + ".flag", "is an empty list; name at least one landmark") }
            landmarks = indices.count == list.count && !list.isEmpty ? indices : nil
        case let other?:
            checker.report(path + ".flag", "must be a landmark index or a list of them, not \(other.kind)")
        }
        let (width, height) = designSize ?? (1, 1)
        // Design points may lie outside the picture (a crown anchored on the brows), but not absurdly far.
        let x = checker.number(object, "x", at: path, range: designSize == nil ? nil : (-4 * width)...(5 * width))
        let y = checker.number(object, "y", at: path, range: designSize == nil ? nil : (-4 * height)...(5 * height))
        guard let landmarks, let x, let y else { return nil }
        return LandmarkPoint(landmarks: landmarks, x: x, y: y)
    }

    private func parseTrigger(_ item: [String: JSONValue], _ key: String, at path: String, id: String?, ids: [String], checker: Checker) -> Trigger? {
        guard let text = checker.string(item, key, at: path) else { return nil }
        let field = path + "." + key
        let known = expressions.joined(separator: ", ")
        if text == "always" {
            if key == "end" { checker.report(field, "cannot be 'always'; leave 'end' out for an item that stays") }
            return key == "end" ? nil : .always
        }
        if text.hasSuffix(".complete") {
            let other = String(text.dropLast(".complete".count))
            guard ids.contains(other) else {
                checker.report(field, "'\(text)' names no item of this sticker; items are \(ids.filter { !$0.isEmpty }.joined(separator: ", "))")
                return nil
            }
            if other == id { checker.report(field, "'\(text)' waits for the item itself, which can never happen"); return nil }
            return .itemCompletes(other)
        }
        if text.hasSuffix(".end") {
            let name = String(text.dropLast(".end".count))
            guard expressions.contains(name) else {
                checker.report(field, "'\(text)': '\(name)' is not an expression; use one of \(known)")
                return nil
            }
            return .expressionEnds(name)
        }
        guard expressions.contains(text) else {
            checker.report(field, "'\(text)' is not a trigger; use 'always', an expression (\(known)), EXPRESSION.end or ITEM.complete")
            return nil
        }
        return .expressionStarts(text)
    }

    /// Items waiting on each other's completion in a ring would never start, or restart each
    /// other for ever: reject any cycle.
    private func checkCycles(items: [StickerItem], checker: Checker) {
        var waitsOn: [String: [String]] = [:]
        for item in items {
            for trigger in [item.begin, item.end] {
                if case .itemCompletes(let other)? = trigger { waitsOn[item.id, default: []].append(other) }
            }
        }
        var reported = Set<String>()
        for (start, item) in items.enumerated() {
            var path = [item.id]
            func visit(_ id: String) -> Bool {
                for next in waitsOn[id] ?? [] {
                    if next == item.id { path.append(next); return true }
                    if path.contains(next) { continue }
                    path.append(next)
                    if visit(next) { return true }
                    path.removeLast()
                }
                return false
            }
            if visit(item.id), reported.isDisjoint(with: path) {
                reported.formUnion(path)
                checker.report("items[\(start)]", "trigger cycle \(path.joined(separator: " waits for ")); break the ring with 'always' or an expression")
            }
        }
    }

    static func reason(_ error: Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error {
            let underlying = (context.underlyingError as? CustomStringConvertible)?.description ?? context.debugDescription
            return underlying
        }
        return "\(error)"
    }
}
