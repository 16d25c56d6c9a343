internal import CGStreamer
import Glibc
import Synchronization

/// What a thread of a stream does, as its name says: `fr7.decode` is a decoding thread of the
/// process's seventh relay. Linux names are at most 15 characters, so tags stay short.
///
/// Each pipeline of a relay renames its streaming threads (`TaskNamer`), so every one carries its
/// stream and role; threads that codecs start from a streaming thread (libav's decoding threads,
/// x264's) inherit its name. rtmp2src and rtmp2sink run their network loops in tasks that announce nothing; those
/// threads keep GStreamer's `taskN` names and count as unattributed.
public enum ThreadRole: String, Sendable, CaseIterable {
    /// The ingest's threads: network input, demuxing, decoding, scaling.
    case decode
    /// x264 and the parser after it.
    case encode
    /// The muxer, the network or file sink, and the audio parser.
    case mux
    /// The relay's frame thread: pulls decoded frames, runs the Swift stage, pushes to the encoder.
    case frame
    /// The relay's audio thread: pulls AAC, pushes it to the muxer.
    case audio
}

/// A relay's thread-name prefix, unique in the process.
public struct ThreadTag: Sendable, Hashable, CustomStringConvertible {
    private static let next = Atomic<Int>(1)
    public let description: String

    public static func unique() -> ThreadTag {
        ThreadTag(description: "fr\(next.add(1, ordering: .relaxed).oldValue)")
    }

    func name(_ role: ThreadRole) -> String { description + "." + role.rawValue }
}

/// Names a pipeline's streaming threads after their stream and role.
///
/// GStreamer names a streaming thread after its task (`video_in:src`) as the thread starts, just
/// after posting the stream-status ENTER message from it; so the name is changed on the task's
/// first data instead, which comes before any caps and so before a codec opens and starts threads
/// of its own (x264's, libav's), which inherit the name.
enum TaskNamer {
    /// `roleOf` gets the name of the element that owns the task.
    static func install(on pipeline: UnsafeMutablePointer<GstElement>, tag: ThreadTag, roleOf: @escaping @Sendable (String) -> ThreadRole) {
        let naming = Naming(tag: tag, roleOf: roleOf)
        fr_set_bus_sync_handler(pipeline, { _, message, context in
            guard let message, let context else { return GST_BUS_PASS }
            var owner: UnsafeMutablePointer<GstElement>?
            guard let pad = fr_entering_task_pad(message, &owner) else { return GST_BUS_PASS }
            let naming = Unmanaged<Naming>.fromOpaque(context).takeUnretainedValue()
            let name = naming.tag.name(naming.roleOf(owner.map { String(cString: fr_object_name($0)) } ?? ""))
            fr_pad_probe_task_data(pad, { _, _, name in
                if let name { fr_name_current_thread(name.assumingMemoryBound(to: CChar.self)) }
                return GST_PAD_PROBE_REMOVE
            }, strdup(name), { free($0) })
            // A sync handler that drops a message owns it: unreleased, the message would keep its
            // task, its pad and the element that owns them (an appsrc, a queue, the muxer) alive
            // for good, every time a pipeline is built.
            fr_message_unref(message)
            return GST_BUS_DROP
        }, Unmanaged.passRetained(naming).toOpaque(), { context in
            if let context { Unmanaged<Naming>.fromOpaque(context).release() }
        })
    }

    private final class Naming: Sendable {
        let tag: ThreadTag
        let roleOf: @Sendable (String) -> ThreadRole

        init(tag: ThreadTag, roleOf: @escaping @Sendable (String) -> ThreadRole) {
            self.tag = tag
            self.roleOf = roleOf
        }
    }
}

/// Names the calling thread (what `top -H`, `ps -L` and the accounting below read).
func nameCurrentThread(_ name: String) {
    fr_name_current_thread(name)
}

/// CPU time of every thread of the process, attributed to the name each thread had when it spent
/// it. Sampled on demand and at least every second, so that a thread that ends (an output rebuilt,
/// a stream stopped) loses at most its last second, and a pooled thread that GStreamer hands from
/// one stream's task to another's is charged to each for its own time.
public final class ThreadCPUAccounting: Sendable {
    public static let shared = ThreadCPUAccounting()

    private struct State {
        var lastByThread: [Int32: (name: String, nanoseconds: UInt64)] = [:]
        var totalsByName: [String: UInt64] = [:]
    }
    private let state = Mutex(State())
    private let timer = Mutex<LoopThread?>(nil)

    /// CPU nanoseconds spent so far by the threads of `tag`, by role.
    public func totals(for tag: ThreadTag) -> [ThreadRole: UInt64] {
        startSampling()
        let byName = sample()
        var totals: [ThreadRole: UInt64] = [:]
        for role in ThreadRole.allCases { totals[role] = byName[tag.name(role)] ?? 0 }
        return totals
    }

    /// CPU nanoseconds by thread name, every thread of the process since sampling began.
    public func totalsByName() -> [String: UInt64] {
        startSampling()
        return sample()
    }

    /// Reads every thread now: before threads end (a pipeline torn down), so that their last
    /// moments are counted.
    func sampleNow() { _ = sample() }

    /// Starts the once-a-second sampling, if it has not started yet.
    func startSampling() {
        timer.withLock { timer in
            guard timer == nil else { return }
            // A thread the system refuses leaves `timer` nil, to be tried again on the next call;
            // meanwhile the figures stay right, sampled on demand (`totals`, `sampleNow`), only a
            // pooled thread's time may be charged to the stream it serves last.
            timer = try? LoopThread(starting: "the thread CPU sampler", detached: true) { [self] in
                nameCurrentThread("fr-cpu-sampler")
                while true {
                    sleep(seconds: 1)
                    _ = sample()
                }
            }
        }
    }

    private func sample() -> [String: UInt64] {
        let threads = Self.readThreads()
        return state.withLock { state in
            var seen: [Int32: (name: String, nanoseconds: UInt64)] = [:]
            seen.reserveCapacity(threads.count)
            for thread in threads {
                let previous = state.lastByThread[thread.id]
                // A thread id the kernel reused starts again from zero.
                let spent = previous.map { thread.nanoseconds >= $0.nanoseconds ? thread.nanoseconds - $0.nanoseconds : thread.nanoseconds }
                    ?? thread.nanoseconds
                state.totalsByName[thread.name, default: 0] &+= spent
                seen[thread.id] = (thread.name, thread.nanoseconds)
            }
            state.lastByThread = seen
            return state.totalsByName
        }
    }

    /// Every thread's id, name and CPU nanoseconds, from /proc/self/task/*/{comm,schedstat}.
    private static func readThreads() -> [(id: Int32, name: String, nanoseconds: UInt64)] {
        guard let directory = opendir("/proc/self/task") else { return [] }
        defer { closedir(directory) }
        var threads: [(id: Int32, name: String, nanoseconds: UInt64)] = []
        while let entry = readdir(directory) {
            let idText = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let id = Int32(idText) else { continue }
            guard let name = readSmallFile("/proc/self/task/\(id)/comm"),
                  let schedstat = readSmallFile("/proc/self/task/\(id)/schedstat"),
                  let nanoseconds = schedstat.split(separator: " ").first.flatMap({ UInt64($0) }) else { continue }
            threads.append((id, name.hasSuffix("\n") ? String(name.dropLast()) : name, nanoseconds))
        }
        return threads
    }

    private static func readSmallFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 128)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, 128) }
        guard count > 0 else { return nil }
        return String(decoding: bytes[0..<count], as: UTF8.self)
    }
}
