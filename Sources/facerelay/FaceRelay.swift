import ArgumentParser
import FaceVision
import Logging
import MediaBridge
import StickerKit

@main
struct FaceRelay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "facerelay",
        abstract: "Live-stream face sticker relay: RTMP/SRT in, stickers on every face, RTMP/SRT out.",
        subcommands: [Run.self, Serve.self, Ctl.self, Inspect.self, Stickers.self]
    )

    static func main() async {
        tuneMallocForThreadChurn()
        await main(nil)
    }
}

/// Runs a command's work. A failure FaceRelay describes itself (bad input, a broken template, a
/// missing model, a bad sticker) is logged as it is and ends the process with status 1; anything else, usage errors
/// included, goes on to ArgumentParser.
func exitingOnFailure(_ logger: Logger, _ body: () throws -> Void) throws {
    do {
        try body()
    } catch {
        guard error is MediaError || error is PipelineTemplateError || error is VisionError
            || error is StickerLoadError || error is StickerLibraryError else { throw error }
        logger.error("\(error)")
        throw ExitCode(1)
    }
}
