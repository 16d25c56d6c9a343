import FrameKit
#if canImport(Glibc)
import Glibc
#endif

/// Which levels of the detector's pyramid a detection looks at: the finest few (for small faces), the
/// rest, or all of them.
enum DetectionScan { case fine, coarse, whole }

/// A rectangle of a frame's pixels.
struct PixelRegion: Equatable {
    var x, y, width, height: Int

    func clamped(toWidth frameWidth: Int, height frameHeight: Int) -> PixelRegion {
        let left = min(max(x, 0), frameWidth), top = min(max(y, 0), frameHeight)
        return PixelRegion(x: left, y: top, width: max(0, min(x + width, frameWidth) - left), height: max(0, min(y + height, frameHeight) - top))
    }
}

/// Runs face detection on its own thread so that no frame waits for it. The frame thread copies the
/// frame's grey plane into `image` while the worker is idle, submits it, and picks the boxes up
/// on a later frame. One job at a time; the image buffer grows to the largest job's and stays.
///
/// `@unchecked Sendable` because its thread is started with a raw pointer to it, and it shares the
/// detector, `image` and `boxes`, none of them Sendable, between two threads. They take turns, handed
/// over under `mutex`: the frame thread touches them only while `phase` is `.idle` (or `.done`, to
/// read the boxes in `takeResult`, which sets `.idle`), and the worker only from `submit` (which sets
/// `.working`) until it sets `.done`. `detectNow` runs on the frame thread and only while idle.
final class DetectionWorker: @unchecked Sendable {
    enum Phase { case idle, working, done }
    /// A job's faces, or what the detector threw.
    typealias Outcome = Result<UnsafeMutableBufferPointer<FaceSighting>, any Error>

    private let detector: FaceDetector
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let wake = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var thread = pthread_t()
    /// False when the system would not start the thread (out of threads or memory): the tracker
    /// then detects on the frame thread (`detectNow`), slower frames rather than no faces.
    /// Set once, in `init`, before the frame thread can see the worker.
    private(set) var hasThread = false
    // Guarded by mutex.
    private var phase = Phase.idle
    private var stopping = false
    private var found = 0
    private var failure: (any Error)?
    private var cpuNanoseconds: UInt64 = 0
    // Written by the frame thread while idle, read by the worker while working.
    private(set) var image: Plane
    /// The scan the job makes, and the pyramid levels of `image` it looks at.
    private(set) var scan = DetectionScan.whole
    private(set) var levels = PyramidLevels.all
    /// Where `image` lies on the frame it was copied from.
    private var origin: (x: Float, y: Float) = (0, 0)
    private var storage: UnsafeMutablePointer<UInt8>
    private var storageCapacity = 1
    private let boxes: UnsafeMutableBufferPointer<FaceSighting>
    private(set) var submittedFrame = 0

    init(detector: FaceDetector, capacity: Int) {
        self.detector = detector
        storage = .allocate(capacity: 1)
        storage.initialize(to: 0)
        image = Plane(base: storage, stride: 1, width: 0, height: 0)
        boxes = .allocate(capacity: capacity)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(wake, nil)
        let context = Unmanaged.passUnretained(self).toOpaque()
        hasThread = pthread_create(&thread, nil, { context in
            Unmanaged<DetectionWorker>.fromOpaque(context!).takeUnretainedValue().loop()
            return nil
        }, context) == 0
    }

    /// Stops the thread; call before dropping the last reference.
    func shutDown() {
        pthread_mutex_lock(mutex)
        stopping = true
        pthread_cond_broadcast(wake)
        pthread_mutex_unlock(mutex)
        if hasThread { pthread_join(thread, nil) }
        storage.deallocate()
        boxes.deallocate()
        pthread_cond_destroy(wake)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        wake.deallocate()
    }

    var currentPhase: Phase {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return phase
    }

    /// Thread CPU time the worker's own thread has spent detecting (not `detectNow`'s, which the
    /// calling thread's time already holds).
    var cpuTime: UInt64 {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return cpuNanoseconds
    }

    /// Copies `grey` into the image for the next job, a `scan` of `levels`; only while idle. Allocates
    /// only when the image is larger than any before. `region`: only that part of `grey` (clamped to
    /// it), the boxes found then given in `grey`'s coordinates.
    func prepare(copying grey: Plane, scan: DetectionScan, levels: PyramidLevels, region: PixelRegion? = nil) {
        self.scan = scan
        self.levels = levels
        let part = (region ?? PixelRegion(x: 0, y: 0, width: grey.width, height: grey.height)).clamped(toWidth: grey.width, height: grey.height)
        origin = (Float(part.x), Float(part.y))
        let (width, height) = (part.width, part.height)
        if width * height > storageCapacity {
            storage.deallocate()
            storageCapacity = width * height
            storage = .allocate(capacity: storageCapacity)
            storage.initialize(repeating: 0, count: storageCapacity)
        }
        image = Plane(base: storage, stride: width, width: width, height: height)
        let first = grey.base + part.y * grey.stride + part.x
        for row in 0..<height { (storage + row * width).update(from: first + row * grey.stride, count: width) }
    }

    func submit(frame: Int) {
        submittedFrame = frame
        pthread_mutex_lock(mutex)
        phase = .working
        pthread_cond_broadcast(wake)
        pthread_mutex_unlock(mutex)
    }

    /// Detects on the calling thread (for single images and reproducible runs); its CPU time is the
    /// calling thread's, not added to `cpuTime`.
    func detectNow(frame: Int) -> Outcome {
        submittedFrame = frame
        let (count, failure) = detect()
        return outcome(count, failure)
    }

    /// Returns once the job submitted is done (at once when none is working): for runs that take each
    /// detection on the frame after the one it looked at, as a detection thread that finishes within a
    /// frame does, whatever the machine's load (tests).
    func waitUntilDone() {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while phase == .working { pthread_cond_wait(wake, mutex) }
    }

    /// What the finished job found, and the worker goes back to idle; nil while working or idle.
    func takeResult() -> Outcome? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        guard phase == .done else { return nil }
        phase = .idle
        defer { failure = nil }
        return outcome(found, failure)
    }

    private func detect() -> (count: Int, failure: (any Error)?) {
        do {
            let count = try detector.detect(image, levels: levels, into: boxes)
            for index in 0..<count {
                boxes[index].box.x += origin.x
                boxes[index].box.y += origin.y
            }
            return (count, nil)
        } catch {
            return (0, error)
        }
    }

    private func outcome(_ count: Int, _ failure: (any Error)?) -> Outcome {
        if let failure { return .failure(failure) }
        return .success(UnsafeMutableBufferPointer(rebasing: boxes[0..<count]))
    }

    private func loop() {
        pthread_mutex_lock(mutex)
        while true {
            while phase != .working && !stopping { pthread_cond_wait(wake, mutex) }
            if stopping { break }
            pthread_mutex_unlock(mutex)
            let started = threadCPUNanoseconds()
            let (count, failure) = detect()
            let spent = threadCPUNanoseconds() &- started
            pthread_mutex_lock(mutex)
            found = count
            self.failure = failure
            cpuNanoseconds &+= spent
            phase = .done
            pthread_cond_broadcast(wake)
        }
        pthread_mutex_unlock(mutex)
    }
}
