// swift-tools-version:6.0
import PackageDescription

// dlib's detector and shape predictor are header templates: these flags decide their speed (the
// landmark fit is 2.5x faster with AVX2/FMA). FACERELAY_PORTABLE=1 builds for any x86-64 CPU.
let portable = Context.environment["FACERELAY_PORTABLE"] == "1"
let visionFlags = ["-O3", "-I/usr/include/opencv4"] + (portable ? [] : ["-mavx2", "-mfma"])
// The modules that touch every pixel of every frame are optimised in debug builds too: unoptimised,
// the tests' debug relays track and draw several times slower than real time, and tests wait on them.
let perPixel: [SwiftSetting] = [.unsafeFlags(["-O"])]
// The include folders of GLib and GStreamer (Debian's libglib2.0-dev, libgstreamer1.0-dev), named
// here rather than read from pkg-config, whose -pthread SwiftPM refuses with a warning on every build.
let glibIncludes = ["/usr/include/glib-2.0", "/usr/lib/x86_64-linux-gnu/glib-2.0/include"]
let gstreamerHeaders: [SwiftSetting] = [.unsafeFlags((["/usr/include/gstreamer-1.0"] + glibIncludes).flatMap { ["-Xcc", "-I" + $0] })]

let package = Package(
    name: "FaceRelay",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "facerelay", targets: ["facerelay"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.25.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.10.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.0.0"),
        .package(url: "https://github.com/vapor/multipart-kit", from: "4.7.0"),
    ],
    targets: [
        // GStreamer's C API plus static-inline wrappers for its macros and variadic calls. Its headers
        // are found with `gstreamerHeaders` (given below to every module that loads them); its
        // libraries are linked by its module map.
        .systemLibrary(name: "CGStreamer"),
        // dlib (faces, 68 landmarks) and OpenCV (pose, resizing) behind a pure-C header.
        .target(
            name: "CFaceVision",
            cxxSettings: [
                .define("DLIB_DISABLE_ASSERTS"),
                .define("NDEBUG"),
                .unsafeFlags(visionFlags),
            ],
            linkerSettings: [
                .linkedLibrary("dlib"), .linkedLibrary("opencv_calib3d"), .linkedLibrary("opencv_imgproc"),
                .linkedLibrary("opencv_core"), .linkedLibrary("lapack"), .linkedLibrary("blas"),
            ]
        ),
        // Sticker pictures (PNG, APNG, GIF, WebP, SVG) decoded to RGBA frames with Debian's libpng,
        // giflib, libwebp and librsvg, behind a pure-C header.
        .target(
            name: "CStickerImages",
            cSettings: [.unsafeFlags((["/usr/include/librsvg-2.0", "/usr/include/gdk-pixbuf-2.0", "/usr/include/cairo"] + glibIncludes).map { "-I" + $0 })],
            linkerSettings: [
                .linkedLibrary("rsvg-2"), .linkedLibrary("cairo"), .linkedLibrary("gobject-2.0"), .linkedLibrary("glib-2.0"),
                .linkedLibrary("gif"), .linkedLibrary("webpdemux"), .linkedLibrary("webp"), .linkedLibrary("png16"), .linkedLibrary("z"),
            ]
        ),
        // Sticker pictures read from files within limits, with their frame delays; SVG checked and drawn.
        .target(name: "StickerPictures", dependencies: ["CStickerImages", "FrameKit"], swiftSettings: perPixel),
        // Pixel-level frame views and timing, with no C imports: what every stage works on.
        .target(name: "FrameKit", swiftSettings: perPixel),
        // A JSON document as a tree: what the sticker loader checks field by field, and what the
        // control protocol reads and writes.
        .target(name: "JSONTree"),
        // What one relay is asked to do, as plain values: its input, its output, its encoder and
        // timing settings. No GStreamer, so that the serve configuration can read them without it.
        .target(name: "StreamPlan"),
        // Tracks, smoothing, head pose and expressions over a landmarker protocol: no C imports.
        .target(name: "FaceTracking", dependencies: ["FrameKit"], swiftSettings: perPixel),
        // The dlib/OpenCV landmarker, detector and pose solver behind FaceTracking's protocols.
        .target(name: "FaceVision", dependencies: ["CFaceVision", "FaceTracking", "FrameKit"]),
        // Sticker packages: loading and checking, triggers and timelines, placement on a face. No pixels.
        .target(name: "StickerKit", dependencies: ["FaceTracking", "FrameKit", "JSONTree", "StickerPictures"]),
        // Drawing on YUV frames: sticker blending and the tracking overlay.
        .target(name: "Compositor", dependencies: ["FaceTracking", "FrameKit", "StickerKit", "StickerPictures"], swiftSettings: perPixel),
        // The only module that touches GStreamer: pipelines from Pipelines/, appsink/appsrc, bus.
        .target(
            name: "MediaBridge",
            dependencies: [
                "CGStreamer", "FrameKit", "StreamPlan",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // One stream from start to finish, as `run` and each stream of `serve` relay it: the media
        // relay, its stats line and file, and its figures (CPU by stage, process memory).
        .target(
            name: "StreamSession",
            dependencies: [
                "FrameKit", "MediaBridge", "StreamPlan",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The frame stage that tracks faces, draws stickers, swaps them live and reports expressions.
        .target(name: "FaceStage", dependencies: ["FrameKit", "FaceTracking", "Compositor", "StickerKit"], swiftSettings: perPixel),
        // What serve reads from outside (the YAML configuration, control request lines), parsed and
        // checked with no networking: apart from RelayServer so the fuzz targets link it alone, and
        // without GStreamer or dlib.
        .target(
            name: "ServeInputs",
            dependencies: [
                "FaceTracking", "JSONTree", "StreamPlan",
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        // A webhook's POST with Debian's libcurl (TLS and certificates from the system, patched with
        // it) and its HMAC-SHA256 signature with GLib, behind a pure-C header.
        .target(
            name: "CWebhookTransport",
            cSettings: [.unsafeFlags(glibIncludes.map { "-I" + $0 })],
            linkerSettings: [.linkedLibrary("curl"), .linkedLibrary("glib-2.0")]
        ),
        // The service around many stream sessions: the registry of streams, the control socket,
        // events, the HTTP hooks nginx-rtmp calls, metrics and the dashboard (re-exporting ServeInputs).
        .target(
            name: "RelayServer",
            dependencies: [
                "ServeInputs", "StreamSession", "StreamPlan", "MediaBridge", "FrameKit", "FaceTracking", "FaceStage", "Compositor",
                "StickerKit", "StickerPictures", "JSONTree", "CWebhookTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "facerelay",
            dependencies: [
                "RelayServer", "StreamSession", "StreamPlan", "FaceStage", "MediaBridge", "FrameKit", "FaceTracking", "FaceVision",
                "Compositor", "StickerKit", "JSONTree",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Interposes the allocator to count heap allocations; linked into the benchmark only.
        .target(name: "CAllocationCounter"),
        .executableTarget(
            name: "facerelay-bench",
            dependencies: [
                "CAllocationCounter", "CDlibReference", "CFaceVision", "Compositor", "StickerKit", "FaceTracking", "FaceVision", "FrameKit",
                "MediaBridge",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "FrameKitTests", dependencies: ["FrameKit"]),
        // dlib's stock detector and shape predictor and OpenCV's warpAffine, unchanged, behind a
        // pure-C header: the originals the tests compare CFaceVision's faster versions with.
        .target(
            name: "CDlibReference",
            path: "Tests/DlibReference",
            cxxSettings: [.define("DLIB_DISABLE_ASSERTS"), .define("NDEBUG"), .unsafeFlags(visionFlags)],
            linkerSettings: [
                .linkedLibrary("dlib"), .linkedLibrary("opencv_imgproc"), .linkedLibrary("opencv_core"),
                .linkedLibrary("lapack"), .linkedLibrary("blas"),
            ]
        ),
        // Synthetic faces and a fake vision back end for tests of the tracker and of stickers.
        .target(name: "FaceTestSupport", dependencies: ["FaceTracking", "FrameKit"], path: "Tests/FaceTestSupport"),
        // The fixture folder both the tracker and the integration tests read, made once per test
        // process, and the sanitizer and fuzzer builds it starts in the background.
        .target(name: "TestFixtures", path: "Tests/TestFixtures"),
        // FaceVision and MediaBridge for the real model on a real photo, beside the fakes.
        // CAllocationCounter counts heap allocations for the steady-state tests of the vision shim
        // (CFaceVision, called directly); it interposes the allocator for the whole test process and
        // forwards every call to glibc's.
        // Optimised even in a debug build: the tests make noisy frames and compare pixels by the
        // hundred million, which unoptimised Swift takes half a minute over.
        .testTarget(name: "FaceTrackingTests", dependencies: ["CAllocationCounter", "CDlibReference", "CFaceVision", "FaceTestSupport", "FaceTracking", "FaceVision", "FrameKit", "MediaBridge", "TestFixtures"],
                    swiftSettings: [.unsafeFlags(["-O"])]),
        .testTarget(name: "StickerTests", dependencies: ["FaceTestSupport", "StickerKit", "FaceTracking", "FrameKit", "MediaBridge"]),
        .testTarget(name: "StickerPicturesTests", dependencies: ["StickerPictures", "FrameKit"]),
        .testTarget(name: "CompositorTests", dependencies: ["Compositor", "StickerKit", "StickerPictures", "FrameKit"]),
        .testTarget(name: "FaceStageTests", dependencies: ["FaceStage", "FaceTestSupport", "Compositor", "FaceTracking", "FrameKit", "StickerKit"]),
        .testTarget(name: "MediaBridgeTests", dependencies: ["MediaBridge", "StreamPlan", "CGStreamer"]),
        .testTarget(name: "StreamSessionTests", dependencies: ["StreamSession", "MediaBridge", "FrameKit"]),
        .testTarget(name: "ServeInputsTests", dependencies: ["ServeInputs", "StreamPlan", "JSONTree"]),
        .testTarget(name: "RelayServerTests", dependencies: ["RelayServer", "MediaBridge", "FaceTracking", "FaceStage", "Compositor", "StickerKit", "JSONTree", .product(name: "Logging", package: "swift-log"), .product(name: "NIOCore", package: "swift-nio"),
                                                               .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")]),
        .testTarget(name: "RelayIntegrationTests", dependencies: ["FrameKit", "MediaBridge", "StreamPlan", "StreamSession", "TestFixtures"],
                    exclude: ["Support/chromium.py", "Support/dashboard.py", "Support/studio.py", "Support/webhook_receiver.py"],
                    swiftSettings: [.unsafeFlags(["-O"])]),
    ],
    cxxLanguageStandard: .cxx17
)

// A module that imports MediaBridge, directly or through another module, loads CGStreamer's headers
// too (MediaBridge is not built for library evolution, so its clients load even what it imports
// internally): each such module is given their folders.
let targetsByName = Dictionary(uniqueKeysWithValues: package.targets.map { ($0.name, $0) })
@MainActor func loadsGStreamer(_ target: Target) -> Bool {
    target.dependencies.contains {
        switch $0 {
        case .targetItem(let name, _), .byNameItem(let name, _):
            name == "CGStreamer" || targetsByName[name].map(loadsGStreamer) == true
        default:
            false
        }
    }
}
for target in package.targets where target.type != .system && loadsGStreamer(target) {
    target.swiftSettings = (target.swiftSettings ?? []) + gstreamerHeaders
}

// libFuzzer targets, declared only when Tests/Fuzz/fuzz.sh builds them (FACERELAY_FUZZ=1, with
// --sanitize=fuzzer): libFuzzer supplies their main, so a plain `swift build` could not link them.
if Context.environment["FACERELAY_FUZZ"] == "1" {
    let fuzzTargets: [(name: String, dependencies: [Target.Dependency])] = [
        ("fuzz-sticker-json", ["FaceTracking", "FrameKit", "StickerKit"]),
        ("fuzz-sticker-picture", ["FrameKit", "StickerPictures"]),
        ("fuzz-control-request", ["ServeInputs", "JSONTree"]),
        ("fuzz-serve-config", ["ServeInputs"]),
    ]
    package.targets.append(.target(name: "FuzzSupport", path: "Tests/Fuzz/Targets/FuzzSupport"))
    for target in fuzzTargets {
        package.targets.append(.executableTarget(name: target.name, dependencies: target.dependencies + ["FuzzSupport"],
                                                 path: "Tests/Fuzz/Targets/\(target.name)"))
    }
}
