#ifndef STICKER_IMAGES_H
#define STICKER_IMAGES_H
// Sticker pictures decoded to RGBA frames: PNG and APNG (libpng), GIF (giflib), WebP (libwebp),
// SVG (librsvg). Pure C; every failure returns -1 with a sentence in `error` saying what is wrong.
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What a picture may declare, checked before anything of its size is allocated.
typedef struct {
    int max_side;            // canvas and every frame, pixels
    int max_frames;
    int64_t max_pixels;      // canvas pixels times frames: the decoded size
} si_limits;

/// A picture's frames, all of the canvas's size: straight-alpha RGBA bytes, frame after frame,
/// row after row. `delays_ms[i]`: how long frame i shows (0 for a still picture).
typedef struct {
    int width;
    int height;
    int count;
    uint8_t *pixels;
    int *delays_ms;
} si_frames;

#define SI_ERROR_SIZE 256

/// PNG, or APNG with its frames composed as the APNG specification says.
int si_decode_png(const uint8_t *data, size_t size, si_limits limits, si_frames *out, char *error);
/// GIF, still or animated, frames composed with their disposal methods.
int si_decode_gif(const uint8_t *data, size_t size, si_limits limits, si_frames *out, char *error);
/// WebP, still or animated.
int si_decode_webp(const uint8_t *data, size_t size, si_limits limits, si_frames *out, char *error);
/// The size an SVG document is drawn at, from its width and height (or its viewBox), in pixels.
int si_svg_size(const uint8_t *data, size_t size, double *width, double *height, char *error);
/// The SVG document drawn to fill `width` x `height` pixels: one frame.
int si_render_svg(const uint8_t *data, size_t size, int width, int height, si_frames *out, char *error);

void si_frames_free(si_frames *frames);

#ifdef __cplusplus
}
#endif
#endif
