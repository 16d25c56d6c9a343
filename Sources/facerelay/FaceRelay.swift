import ArgumentParser

@main
struct FaceRelay: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "facerelay",
        abstract: "Live-stream face sticker relay: RTMP/SRT in, stickers on every face, RTMP/SRT out.",
        subcommands: [Run.self, Inspect.self]
    )
}
