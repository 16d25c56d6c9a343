// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "FaceRelay",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "facerelay", targets: ["facerelay"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        // GStreamer's C API plus static-inline wrappers for its macros and variadic calls.
        .systemLibrary(
            name: "CGStreamer",
            pkgConfig: "gstreamer-video-1.0",
            providers: [.apt(["libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev"])]
        ),
        // Pixel-level frame views and timing, with no C imports: what every stage works on.
        .target(name: "FrameKit"),
        // The only module that touches GStreamer: pipelines from Pipelines/, appsink/appsrc, bus.
        .target(
            name: "MediaBridge",
            dependencies: [
                "CGStreamer", "FrameKit",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Stream sessions: wires ingest, the frame stage and egress, and keeps the stats.
        .target(
            name: "RelayServer",
            dependencies: [
                "MediaBridge", "FrameKit",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "facerelay",
            dependencies: [
                "RelayServer", "MediaBridge", "FrameKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "FrameKitTests", dependencies: ["FrameKit"]),
        .testTarget(name: "MediaBridgeTests", dependencies: ["MediaBridge", "FrameKit"]),
        .testTarget(name: "RelayServerTests", dependencies: ["RelayServer", "MediaBridge"]),
        .testTarget(name: "RelayIntegrationTests", dependencies: ["FrameKit", "MediaBridge"]),
    ]
)
