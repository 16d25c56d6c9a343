#include "frames_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int si_fail(char *error, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(error, SI_ERROR_SIZE, format, arguments);
    va_end(arguments);
    return -1;
}

int si_check_canvas(si_limits limits, int width, int height, int frames, char *error) {
    if (width < 1 || height < 1 || width > limits.max_side || height > limits.max_side)
        return si_fail(error, "is %dx%d; each side must be 1...%d px", width, height, limits.max_side);
    if (frames > limits.max_frames)
        return si_fail(error, "has %d frames; at most %d are allowed", frames, limits.max_frames);
    if ((int64_t)width * height * (frames < 1 ? 1 : frames) > limits.max_pixels)
        return si_fail(error, "would decode to %d frames of %dx%d, over the limit of %lld pixels; use fewer or smaller frames",
                       frames, width, height, (long long)limits.max_pixels);
    return 0;
}

void si_frames_begin(si_frames *out, int width, int height) {
    memset(out, 0, sizeof *out);
    out->width = width;
    out->height = height;
}

int si_frames_append(si_frames *out, const uint8_t *canvas, int delay_ms, si_limits limits, char *error) {
    if (si_check_canvas(limits, out->width, out->height, out->count + 1, error) != 0) return -1;
    size_t frame_bytes = (size_t)out->width * out->height * 4;
    uint8_t *pixels = realloc(out->pixels, frame_bytes * (out->count + 1));
    if (!pixels) return si_fail(error, "does not fit in memory");
    out->pixels = pixels;
    int *delays = realloc(out->delays_ms, sizeof(int) * (out->count + 1));
    if (!delays) return si_fail(error, "does not fit in memory");
    out->delays_ms = delays;
    memcpy(out->pixels + frame_bytes * out->count, canvas, frame_bytes);
    out->delays_ms[out->count] = delay_ms;
    out->count += 1;
    return 0;
}

int si_shown_delay(int delay_ms) { return delay_ms <= 10 ? 100 : delay_ms; }

void si_compose(uint8_t *canvas, int canvas_width, const uint8_t *source, int x, int y, int w, int h, int over) {
    for (int row = 0; row < h; row++) {
        uint8_t *target = canvas + ((size_t)(y + row) * canvas_width + x) * 4;
        const uint8_t *from = source + (size_t)row * w * 4;
        if (!over) {
            memcpy(target, from, (size_t)w * 4);
            continue;
        }
        for (int column = 0; column < w; column++, target += 4, from += 4) {
            unsigned a = from[3];
            if (a == 255) { memcpy(target, from, 4); continue; }
            if (a == 0) continue;
            // Straight alpha: out = s·as + d·ad·(1 - as), divided by the resulting alpha.
            unsigned below = target[3] * (255 - a);          // ad·(1 - as), scaled by 255²
            unsigned alpha = a * 255 + below;                 // scaled by 255²
            for (int c = 0; c < 3; c++)
                target[c] = (uint8_t)((from[c] * a * 255 + target[c] * below + alpha / 2) / alpha);
            target[3] = (uint8_t)((alpha + 127) / 255);
        }
    }
}

void si_clear(uint8_t *canvas, int canvas_width, int x, int y, int w, int h) {
    for (int row = 0; row < h; row++) memset(canvas + ((size_t)(y + row) * canvas_width + x) * 4, 0, (size_t)w * 4);
}

void si_frames_free(si_frames *frames) {
    free(frames->pixels);
    free(frames->delays_ms);
    memset(frames, 0, sizeof *frames);
}
