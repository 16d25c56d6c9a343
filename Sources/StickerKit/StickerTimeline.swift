/// The playback of one sticker on one face: which items run, since when, and which frame shows.
/// Each face has its own, created when the face appears; `advance` allocates nothing.
public struct StickerTimeline {
    /// A trigger resolved against the expression rules and the item list.
    enum Cue: Equatable {
        case always, starts(Int), ends(Int), completes(Int), never
    }

    private let begins: ContiguousArray<Cue>
    private let ends: ContiguousArray<Cue?>
    private let loops: ContiguousArray<Bool>
    private let animationSeconds: ContiguousArray<Double>
    private let durations: ContiguousArray<Double>
    /// Each item's frame end times within one pass through its frames, seconds.
    private let frameEnds: ContiguousArray<ContiguousArray<Double>>
    /// Start time of each running item, NaN for an item that is not running.
    private var startedAt: ContiguousArray<Double>
    private var completedNow: ContiguousArray<Bool>
    private var previous: ContiguousArray<Bool>
    private var started = false

    /// `expressions` are the tracker's rule names, in rule order.
    public init(package: StickerPackage, expressions: [String]) {
        let ids = package.items.map(\.id)
        func cue(_ trigger: Trigger) -> Cue {
            switch trigger {
            case .always: .always
            case .expressionStarts(let name): expressions.firstIndex(of: name).map(Cue.starts) ?? .never
            case .expressionEnds(let name): expressions.firstIndex(of: name).map(Cue.ends) ?? .never
            case .itemCompletes(let id): ids.firstIndex(of: id).map(Cue.completes) ?? .never
            }
        }
        let items = package.items
        begins = ContiguousArray(items.map { cue($0.begin) })
        ends = ContiguousArray(items.map { $0.end.map(cue) })
        loops = ContiguousArray(items.map(\.loop))
        animationSeconds = ContiguousArray(items.map(\.animationSeconds))
        durations = ContiguousArray(items.map { $0.duration ?? .infinity })
        frameEnds = ContiguousArray(items.map { item in
            var end = 0.0
            return ContiguousArray(item.frameSeconds.map { seconds in end += seconds; return end })
        })
        startedAt = ContiguousArray(repeating: .nan, count: items.count)
        completedNow = ContiguousArray(repeating: false, count: items.count)
        previous = ContiguousArray(repeating: false, count: expressions.count)
    }

    public func isRunning(_ item: Int) -> Bool { !startedAt[item].isNaN }

    /// The frame of a running item to show at `seconds`, nil when the item is not running.
    public func frame(of item: Int, at seconds: Double) -> Int? {
        let start = startedAt[item]
        guard !start.isNaN else { return nil }
        let ends = frameEnds[item]
        let total = animationSeconds[item]
        guard ends.count > 1, total > 0 else { return 0 }
        var time = max(0, seconds - start)
        if loops[item] { time = time.truncatingRemainder(dividingBy: total) }
        // The first frame that ends after `time` (binary search: frames may have their own delays).
        var low = 0, high = ends.count - 1
        while low < high {
            let middle = (low + high) / 2
            if ends[middle] > time { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// Moves to the frame at `seconds`, whose expression rules are on or off as in `active`
    /// (rule order). Calls `completed` for each item that completes on this frame.
    public mutating func advance(to seconds: Double, active: ContiguousArray<Bool>, completed: (Int) -> Void = { _ in }) {
        let first = !started
        started = true
        for item in completedNow.indices { completedNow[item] = false }
        func happened(_ cue: Cue?) -> Bool {
            switch cue {
            case .always?: first
            case .starts(let rule)?: active[rule] && !previous[rule]
            case .ends(let rule)?: !active[rule] && previous[rule]
            case .completes?, .never?, nil: false
            }
        }
        for item in begins.indices {
            let start = startedAt[item]
            if !start.isNaN {
                let elapsed = seconds - start
                // A still picture that plays once lasts its duration; an animation its frames.
                let finished = (!loops[item] && animationSeconds[item] > 0 && elapsed >= animationSeconds[item]) || elapsed >= durations[item]
                if finished || happened(ends[item]) { stop(item) }
            } else if happened(begins[item]) {
                startedAt[item] = seconds
            }
        }
        // One item's completion may start or end others; without cycles this settles within one
        // pass per item.
        var changed = true
        var passes = 0
        while changed && passes <= begins.count {
            changed = false
            passes += 1
            for item in begins.indices {
                if startedAt[item].isNaN, case .completes(let other) = begins[item], completedNow[other] {
                    startedAt[item] = seconds
                    changed = true
                } else if !startedAt[item].isNaN, case .completes(let other)? = ends[item], completedNow[other], !completedNow[item] {
                    stop(item)
                    changed = true
                }
            }
        }
        for rule in previous.indices { previous[rule] = active[rule] }
        for item in completedNow.indices where completedNow[item] { completed(item) }
    }

    private mutating func stop(_ item: Int) {
        startedAt[item] = .nan
        completedNow[item] = true
    }
}
