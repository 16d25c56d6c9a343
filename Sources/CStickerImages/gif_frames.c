// GIF through giflib, record by record (not DGifSlurp, which would allocate every frame at the
// size its descriptor claims before anything could check it), composed as browsers show it:
// each frame drawn over the canvas, then disposed of by its Graphic Control Extension.
#include "frames_internal.h"

#include <gif_lib.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const uint8_t *data;
    size_t size;
    size_t offset;
} reader;

static int read_bytes(GifFileType *gif, GifByteType *out, int count) {
    reader *source = gif->UserData;
    size_t left = source->size - source->offset;
    size_t taken = (size_t)count < left ? (size_t)count : left;
    memcpy(out, source->data + source->offset, taken);
    source->offset += taken;
    return (int)taken;
}

static int gif_failure(char *error, const char *what, int code) {
    const char *reason = GifErrorString(code);
    if (code == D_GIF_ERR_READ_FAILED || code == D_GIF_ERR_EOF_TOO_SOON)
        return si_fail(error, "ends in the middle of %s (truncated)", what);
    return si_fail(error, "does not decode as a GIF: %s (%s)", reason ? reason : "unknown error", what);
}

int si_decode_gif(const uint8_t *data, size_t size, si_limits limits, si_frames *out, char *error) {
    si_frames_begin(out, 0, 0);
    if (size < 6 || (memcmp(data, "GIF87a", 6) && memcmp(data, "GIF89a", 6)))
        return si_fail(error, "does not start with a GIF signature (GIF87a or GIF89a)");
    reader source = {data, size, 0};
    int code = 0;
    GifFileType *gif = DGifOpen(&source, read_bytes, &code);
    if (!gif) return gif_failure(error, "its header", code);
    int width = gif->SWidth, height = gif->SHeight, result = -1;
    uint8_t *canvas = NULL, *saved = NULL;
    GifPixelType *line = NULL;
    GraphicsControlBlock control = {.DisposalMode = DISPOSAL_UNSPECIFIED, .DelayTime = 0, .TransparentColor = NO_TRANSPARENT_COLOR};
    // What the previous frame asked to be done with its rectangle once it has been shown.
    int previous_disposal = DISPOSAL_UNSPECIFIED, previous_x = 0, previous_y = 0, previous_w = 0, previous_h = 0;
    if (si_check_canvas(limits, width, height, 1, error) != 0) goto done;
    size_t canvas_bytes = (size_t)width * height * 4;
    canvas = calloc(canvas_bytes, 1);
    saved = malloc(canvas_bytes);
    line = malloc((size_t)width);
    if (!canvas || !saved || !line) { si_fail(error, "does not fit in memory"); goto done; }
    si_frames_begin(out, width, height);
    for (;;) {
        GifRecordType record;
        if (DGifGetRecordType(gif, &record) == GIF_ERROR) { gif_failure(error, "its records", gif->Error); goto done; }
        if (record == TERMINATE_RECORD_TYPE) break;
        if (record == EXTENSION_RECORD_TYPE) {
            int extension_code;
            GifByteType *extension;
            if (DGifGetExtension(gif, &extension_code, &extension) == GIF_ERROR) { gif_failure(error, "an extension", gif->Error); goto done; }
            if (extension_code == GRAPHICS_EXT_FUNC_CODE && extension && extension[0] >= 4)
                DGifExtensionToGCB(extension[0], extension + 1, &control);
            while (extension) {
                if (DGifGetExtensionNext(gif, &extension) == GIF_ERROR) { gif_failure(error, "an extension", gif->Error); goto done; }
            }
            continue;
        }
        if (record != IMAGE_DESC_RECORD_TYPE) continue;
        if (DGifGetImageDesc(gif) == GIF_ERROR) { gif_failure(error, "a frame's descriptor", gif->Error); goto done; }
        GifImageDesc *frame = &gif->Image;
        if (frame->Left < 0 || frame->Top < 0 || frame->Width < 1 || frame->Height < 1
            || frame->Left + frame->Width > width || frame->Top + frame->Height > height) {
            si_fail(error, "has a frame (%dx%d at %d,%d) outside its %dx%d canvas", frame->Width, frame->Height,
                    frame->Left, frame->Top, width, height);
            goto done;
        }
        ColorMapObject *colours = frame->ColorMap ? frame->ColorMap : gif->SColorMap;
        if (!colours) { si_fail(error, "has a frame with no colour table"); goto done; }
        if (si_check_canvas(limits, width, height, out->count + 1, error) != 0) goto done;
        if (previous_disposal == DISPOSE_BACKGROUND) {
            si_clear(canvas, width, previous_x, previous_y, previous_w, previous_h);
        } else if (previous_disposal == DISPOSE_PREVIOUS) {
            memcpy(canvas, saved, canvas_bytes);
        }
        if (control.DisposalMode == DISPOSE_PREVIOUS) memcpy(saved, canvas, canvas_bytes);
        // Interlaced frames store rows in four passes.
        static const int pass_start[] = {0, 4, 2, 1}, pass_step[] = {8, 8, 4, 2};
        int passes = frame->Interlace ? 4 : 1;
        for (int pass = 0; pass < passes; pass++) {
            int start = frame->Interlace ? pass_start[pass] : 0, step = frame->Interlace ? pass_step[pass] : 1;
            for (int row = start; row < frame->Height; row += step) {
                if (DGifGetLine(gif, line, frame->Width) == GIF_ERROR) { gif_failure(error, "a frame's pixels", gif->Error); goto done; }
                uint8_t *target = canvas + ((size_t)(frame->Top + row) * width + frame->Left) * 4;
                for (int column = 0; column < frame->Width; column++, target += 4) {
                    int index = line[column];
                    if (index == control.TransparentColor) continue;
                    if (index >= colours->ColorCount) { target[3] = 0; continue; }
                    target[0] = colours->Colors[index].Red;
                    target[1] = colours->Colors[index].Green;
                    target[2] = colours->Colors[index].Blue;
                    target[3] = 255;
                }
            }
        }
        if (si_frames_append(out, canvas, si_shown_delay(control.DelayTime * 10), limits, error) != 0) goto done;
        previous_disposal = control.DisposalMode;
        previous_x = frame->Left; previous_y = frame->Top; previous_w = frame->Width; previous_h = frame->Height;
        control = (GraphicsControlBlock){.DisposalMode = DISPOSAL_UNSPECIFIED, .DelayTime = 0, .TransparentColor = NO_TRANSPARENT_COLOR};
    }
    if (out->count == 0) { si_fail(error, "holds no picture"); goto done; }
    // A still GIF shows for ever.
    if (out->count == 1) out->delays_ms[0] = 0;
    result = 0;
done:
    DGifCloseFile(gif, &code);
    free(canvas);
    free(saved);
    free(line);
    if (result != 0) si_frames_free(out);
    return result;
}
