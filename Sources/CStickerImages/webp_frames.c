// WebP, still or animated, through libwebp's animation decoder, which composes the frames. The
// canvas and frame count are read with the demuxer first: the decoder allocates its canvas at once.
#include "frames_internal.h"

#include <string.h>
#include <webp/decode.h>
#include <webp/demux.h>

int si_decode_webp(const uint8_t *data, size_t size, si_limits limits, si_frames *out, char *error) {
    si_frames_begin(out, 0, 0);
    if (size < 12 || memcmp(data, "RIFF", 4) || memcmp(data + 8, "WEBP", 4))
        return si_fail(error, "does not start with a WebP header (RIFF....WEBP)");
    WebPData bytes = {data, size};
    WebPDemuxer *demuxer = WebPDemux(&bytes);
    if (!demuxer) return si_fail(error, "does not decode as a WebP: its container is damaged or truncated");
    int width = (int)WebPDemuxGetI(demuxer, WEBP_FF_CANVAS_WIDTH), height = (int)WebPDemuxGetI(demuxer, WEBP_FF_CANVAS_HEIGHT);
    int frames = (int)WebPDemuxGetI(demuxer, WEBP_FF_FRAME_COUNT);
    WebPDemuxDelete(demuxer);
    if (si_check_canvas(limits, width, height, frames, error) != 0) return -1;
    WebPAnimDecoderOptions options;
    if (!WebPAnimDecoderOptionsInit(&options)) return si_fail(error, "cannot start the WebP decoder");
    options.color_mode = MODE_RGBA;
    options.use_threads = 0;
    WebPAnimDecoder *decoder = WebPAnimDecoderNew(&bytes, &options);
    if (!decoder) return si_fail(error, "does not decode as a WebP: its data is damaged or truncated");
    si_frames_begin(out, width, height);
    int result = -1, previous = 0;
    while (WebPAnimDecoderHasMoreFrames(decoder)) {
        uint8_t *canvas;
        int timestamp;
        if (!WebPAnimDecoderGetNext(decoder, &canvas, &timestamp)) {
            si_fail(error, "does not decode as a WebP: frame %d is damaged or truncated", out->count + 1);
            goto done;
        }
        if (si_frames_append(out, canvas, si_shown_delay(timestamp - previous), limits, error) != 0) goto done;
        previous = timestamp;
    }
    if (out->count == 0) { si_fail(error, "holds no picture"); goto done; }
    if (out->count == 1) out->delays_ms[0] = 0;
    result = 0;
done:
    WebPAnimDecoderDelete(decoder);
    if (result != 0) si_frames_free(out);
    return result;
}
