@testable import FaceTracking
import FrameKit
import Testing

/// A face's life as pure transitions: no frames, no detector. Each test says what goes wrong on a
/// stream without the rule it checks.
@Suite struct FaceLifeTests {
    let doubtful: Float = 0.25, detection: Float = 0.5, dropAfter = 4

    func scored(_ life: FaceLife, _ confidence: Float) -> FaceLife? {
        life.scored(confidence, doubtfulConfidence: doubtful, detectionConfidence: detection, dropAfter: dropAfter)
    }

    /// Without it a fit that landed on a face-like patch of background (scored between the doubtful
    /// level and the detector's own threshold) would be drawn on as soon as it was started.
    @Test func aNewFaceIsShownOnlyFromTheDetectorsOwnThreshold() throws {
        let found = FaceLife.started(scoredByScan: false)
        #expect(!found.isShown && found.awaitsFit && found.framesLost == 0)
        let unsure = try #require(scored(found, 0.4))
        #expect(unsure == .tracked(.new(lowScores: 1)) && !unsure.isShown)
        #expect(scored(unsure, 0.5) == .tracked(.shown))
    }

    /// Without it a face coming back in through the edge is drawn on from its first fit, started from
    /// the detector's box of the cut face (`ReturningFaceTests`: grace_hopper's first frame back
    /// through the left edge, 13.9 % off). Only that fit waits: the next is shown, a low score still
    /// counts, and a face shown before, or one the edge does not cut, is shown at once.
    @Test func aNewFaceComingBackCutByTheEdgeIsShownFromItsSecondFit() throws {
        let found = FaceLife.started(scoredByScan: false)
        let first = try #require(found.scored(0.6, doubtfulConfidence: doubtful, detectionConfidence: detection, dropAfter: dropAfter, returningCut: true))
        #expect(first == .tracked(.new(lowScores: 0)) && !first.isShown)
        #expect(first.scored(0.6, doubtfulConfidence: doubtful, detectionConfidence: detection, dropAfter: dropAfter, returningCut: true) == .tracked(.shown))
        #expect(found.scored(0.4, doubtfulConfidence: doubtful, detectionConfidence: detection, dropAfter: dropAfter, returningCut: true) == .tracked(.new(lowScores: 1)))
        #expect(scored(found, 0.6) == .tracked(.shown), "not cut: shown at once")
        let back = FaceLife.lost(frames: 3, .shown).restarted
        #expect(back.scored(0.6, doubtfulConfidence: doubtful, detectionConfidence: detection, dropAfter: dropAfter, returningCut: true) == .tracked(.shown))
    }

    /// Without it a face turning away would blink on and off around the detector's threshold; with
    /// a single level it would either be hidden on every uncertain frame or shown on background.
    @Test func aShownFaceStaysShownDownToTheDoubtfulLevelThenMustScoreAsADetectionAgain() throws {
        #expect(scored(.tracked(.shown), 0.3) == .tracked(.shown))
        let doubted = try #require(scored(.tracked(.shown), 0.2))
        #expect(doubted == .tracked(.doubted(lowScores: 1)) && !doubted.isShown && doubted.standing.wasShown)
        #expect(scored(doubted, 0.3) == .tracked(.doubted(lowScores: 2)), "0.3 keeps a shown face, not a doubted one")
        #expect(scored(doubted, 0.5) == .tracked(.shown))
    }

    /// Without it a fit stuck on background after the face left would be followed for ever, hidden.
    @Test func lowScoresInARowDropTheFace() {
        var life: FaceLife? = .tracked(.shown)
        var fits = 0
        while let current = life, fits < 10 {
            life = scored(current, 0.1)
            fits += 1
        }
        #expect(life == nil && fits == dropAfter)
        #expect(scored(.tracked(.new(lowScores: dropAfter - 2)), 0.1) == .tracked(.new(lowScores: dropAfter - 1)))
        #expect(scored(.tracked(.new(lowScores: dropAfter - 1)), 0.1) == nil)
    }

    /// Without the hold a face the fit misses for a frame (a hand passing, motion blur) would get a
    /// new id; without the limit a face that left would be kept for ever.
    @Test func aMissedFitHoldsTheFaceForHoldFramesThenDropsIt() {
        var life: FaceLife? = .tracked(.shown)
        var frames = 0
        while let current = life {
            #expect(!current.isShown || frames == 0)
            life = current.fitMissed(holdFrames: 6, dropAfter: 4)
            frames += 1
        }
        #expect(frames == 7, "6 frames held, dropped on the 7th miss")
        #expect(FaceLife.lost(frames: 3, .shown).standing == .shown, "a lost face keeps its standing")
    }

    /// A face hidden for doubt whose fit now lands (scored low), now misses, as a fit on the
    /// background does, is dropped on its fourth frame hidden. Without the misses counting as low
    /// scores each kept fit restarted the hold and only the kept fits counted: dropped on the seventh
    /// frame here, and with a fit kept every seventh frame, on the twenty-second.
    @Test func aDoubtedFaceWhoseFitLandsOnlyNowAndThenIsDroppedAsAlwaysDoubted() {
        var life: FaceLife? = .tracked(.shown)
        var frames = 0
        while let current = life {
            life = frames % 2 == 0 ? scored(current, 0.1) : current.fitMissed(holdFrames: 6, dropAfter: 4)
            frames += 1
        }
        #expect(frames == 4, "dropped after \(frames) frames hidden")
        #expect(FaceLife.tracked(.shown).fitMissed(holdFrames: 6, dropAfter: 4) == .lost(frames: 1, .shown), "a shown face is only held")
        #expect(FaceLife.tracked(.new(lowScores: 3)).fitMissed(holdFrames: 6, dropAfter: 4) == nil)
    }

    /// A lost face found again keeps what it had earned: a shown one is shown again from the doubtful
    /// level (without it, a face lost for a frame would wait for a detection-level score to come
    /// back); a new one still has to score as a detection.
    @Test func aFaceFittedAgainAfterBeingLostKeepsItsStanding() {
        #expect(scored(.lost(frames: 2, .shown), 0.3) == .tracked(.shown))
        #expect(scored(.lost(frames: 2, .new(lowScores: 0)), 0.3) == .tracked(.new(lowScores: 1)))
        #expect(scored(.lost(frames: 2, .doubted(lowScores: 2)), 0.3) == .tracked(.doubted(lowScores: 3)))
    }

    /// Without clearing, a face a detection found again would be dropped on its next low score for
    /// the low scores it had before it was found.
    @Test func aDetectionFindingAHiddenFaceClearsItsLowScoresAndKeepsItsStanding() {
        #expect(FaceLife.tracked(.doubted(lowScores: 3)).restarted == .found(.doubted(lowScores: 0), scoredByScan: false))
        #expect(FaceLife.lost(frames: 4, .shown).restarted == .found(.shown, scoredByScan: false))
        #expect(FaceLife.tracked(.new(lowScores: 2)).restarted.awaitsFit)
        #expect(FaceLife.found(.shown, scoredByScan: false).fitMissed(holdFrames: 6, dropAfter: 4) == .lost(frames: 1, .shown))
    }

    /// Without `leaving`, a face cut by the edge of a close-up face cam would count as gone through
    /// it, and a face gone through it would be looked for over the whole frame.
    @Test func edgeContactTellsACutFaceFromOneLeaving() {
        let inside = FaceBox(x: 100, y: 100, width: 200, height: 200)
        let cut = FaceBox(x: 1180, y: 100, width: 200, height: 200)
        #expect(EdgeContact(inside, moving: Point(x: 30, y: 0), width: 1280, height: 720) == .inside)
        #expect(EdgeContact(cut, moving: Point(x: 1, y: 0), width: 1280, height: 720) == .cutByEdge, "1 px a frame is under 1 % of the box")
        #expect(EdgeContact(cut, moving: Point(x: 3, y: 0), width: 1280, height: 720) == .leaving)
        #expect(EdgeContact(cut, moving: Point(x: -3, y: 0), width: 1280, height: 720) == .cutByEdge, "moving back in")
        #expect(EdgeContact(FaceBox(x: 100, y: -20, width: 200, height: 200), moving: Point(x: 0, y: -5), width: 1280, height: 720) == .leaving)
    }

    /// Where a face a scan saw cut by the edge is looked for: where it is once it has come wholly in.
    @Test func aBoxCutByTheEdgeMovesTheLeastThatPutsItOnTheFrame() {
        #expect(FaceBox(x: -54, y: 95, width: 167, height: 150).movedInside(width: 1280, height: 720)
            == FaceBox(x: 0, y: 95, width: 167, height: 150))
        #expect(FaceBox(x: 1200, y: 650, width: 150, height: 150).movedInside(width: 1280, height: 720)
            == FaceBox(x: 1130, y: 570, width: 150, height: 150))
        let inside = FaceBox(x: 100, y: 100, width: 200, height: 200)
        #expect(inside.movedInside(width: 1280, height: 720) == inside)
        // Larger than the frame on an axis: centred on it.
        #expect(FaceBox(x: -30, y: 10, width: 300, height: 300).movedInside(width: 240, height: 480)
            == FaceBox(x: -30, y: 10, width: 300, height: 300))
        #expect(FaceBox(x: -90, y: 10, width: 300, height: 300).movedInside(width: 240, height: 480)
            == FaceBox(x: -30, y: 10, width: 300, height: 300))
    }
}
