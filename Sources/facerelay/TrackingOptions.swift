import ArgumentParser
import FaceTracking
import FaceVision

/// Face-tracking options shared by `run` and `inspect`.
struct TrackingOptions: ParsableArguments {
    @Option(name: .customLong("max-faces"), help: "Most faces followed at once.")
    var maxFaces = FaceTracker.Settings().maximumFaces

    @Option(name: .customLong("detection-interval"), help: "Frames between face detections while every face is found.")
    var detectionInterval = FaceTracker.Settings().detectionInterval

    @Option(name: .customLong("min-face-size"), help: "Smallest face to detect, in pixels of the frame (larger is cheaper).")
    var minFaceSize = FaceTracker.Settings().minimumFaceSize

    @Option(help: "Landmark smoothing: \(Smoothing.allCases.map(\.rawValue).joined(separator: ", ")).")
    var smoothing = FaceTracker.Settings().smoothing.rawValue

    @Option(name: .customLong("landmark-model"), help: "dlib 68-point shape predictor file.")
    var landmarkModel = defaultLandmarkModelPath

    @Option(name: .customLong("expression-threshold"), help: "NAME=VALUE: when an expression counts as on, 0...1 (repeatable; e.g. smile=0.5).")
    var expressionThresholds: [String] = []

    @Option(name: .customLong("tracker-setting"), help: ArgumentHelp(
        "NAME=VALUE: set one of the tracker's tuning constants (repeatable), to measure what it earns; names: \(FaceTracker.Settings.names.joined(separator: ", ")).",
        visibility: .hidden))
    var trackerSettings: [String] = []

    func validate() throws {
        guard (1...16).contains(maxFaces) else { throw ValidationError("--max-faces \(maxFaces) is out of range: use 1...16") }
        guard (1...600).contains(detectionInterval) else { throw ValidationError("--detection-interval must be 1...600 frames") }
        guard (80...4000).contains(minFaceSize) else { throw ValidationError("--min-face-size must be 80...4000 pixels") }
        guard Smoothing(rawValue: smoothing) != nil else {
            throw ValidationError("unknown --smoothing '\(smoothing)'; use one of \(Smoothing.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        _ = try settings()
    }

    func settings() throws -> FaceTracker.Settings {
        var settings = FaceTracker.Settings()
        settings.maximumFaces = maxFaces
        settings.detectionInterval = detectionInterval
        settings.minimumFaceSize = minFaceSize
        settings.smoothing = Smoothing(rawValue: smoothing) ?? settings.smoothing
        for pair in trackerSettings {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let value = Double(parts[1]), settings.set(parts[0], to: value) else {
                throw ValidationError("--tracker-setting '\(pair)' is not NAME=VALUE with a known name and a value it takes; names: \(FaceTracker.Settings.names.joined(separator: ", "))")
            }
        }
        for pair in expressionThresholds {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            let names = settings.expressions.rules.map(\.analyser.name)
            guard parts.count == 2, let value = Float(parts[1]), (0...1).contains(value) else {
                throw ValidationError("--expression-threshold '\(pair)' is not NAME=VALUE with VALUE in 0...1 (e.g. smile=0.5)")
            }
            guard settings.expressions.setThreshold(value, for: parts[0]) else {
                throw ValidationError("--expression-threshold: unknown expression '\(parts[0])'; known: \(names.joined(separator: ", "))")
            }
        }
        return settings
    }
}
