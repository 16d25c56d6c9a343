import FaceTracking
import Testing

/// The tuning constants a benchmark changes by name (`inspect --tracker-setting`) to measure what
/// each rule earns: every numeric one is reachable, and a value it cannot take is refused.
struct TrackerSettingsTests {
    @Test func everyTuningConstantIsSetByItsName() {
        var settings = FaceTracker.Settings()
        #expect(FaceTracker.Settings.names.count == 30)
        let watch = settings.set("lostWatchFrames", to: 0)
        let cycles = settings.set("coarseRescanCycles", to: 1_000_000)
        let drift = settings.set("sizeDrift", to: 2.5)
        #expect(watch && settings.lostWatchFrames == 0)
        #expect(cycles && settings.coarseRescanCycles == 1_000_000)
        #expect(drift && settings.sizeDrift == 2.5)
        for name in FaceTracker.Settings.names {
            var copy = FaceTracker.Settings()
            let taken = copy.set(name, to: 7)
            #expect(taken, "\(name)")
        }
    }

    @Test func aValueASettingCannotTakeIsRefused() {
        var settings = FaceTracker.Settings()
        let refused = [
            settings.set("holdFrames", to: 1.5), settings.set("holdFrames", to: -1),
            settings.set("sizeDrift", to: .nan), settings.set("noSuchSetting", to: 1),
        ]
        #expect(refused == [false, false, false, false])
        #expect(settings.holdFrames == FaceTracker.Settings().holdFrames && settings.sizeDrift == FaceTracker.Settings().sizeDrift)
    }
}
