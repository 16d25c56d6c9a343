// Shared by the decoders: frame storage within the limits, errors, composition.
#ifndef STICKER_IMAGES_INTERNAL_H
#define STICKER_IMAGES_INTERNAL_H
#include "sticker_images.h"

/// Writes a message into `error` (SI_ERROR_SIZE bytes) and returns -1.
int si_fail(char *error, const char *format, ...) __attribute__((format(printf, 2, 3)));

/// Checks a canvas against the limits for `frames` frames; -1 with the reason when over.
int si_check_canvas(si_limits limits, int width, int height, int frames, char *error);

/// Starts `out` empty for a canvas of that size.
void si_frames_begin(si_frames *out, int width, int height);

/// Appends a copy of `canvas` (width * height * 4 bytes) as the next frame, within the limits.
int si_frames_append(si_frames *out, const uint8_t *canvas, int delay_ms, si_limits limits, char *error);

/// A frame's delay as browsers show it: 10 ms or less means 100 ms (animations written for old
/// players count on it).
int si_shown_delay(int delay_ms);

/// Draws `source` (w x h, straight RGBA) at (x, y) on the canvas: replacing, or over what is there.
void si_compose(uint8_t *canvas, int canvas_width, const uint8_t *source, int x, int y, int w, int h, int over);

/// Clears a rectangle of the canvas to transparent.
void si_clear(uint8_t *canvas, int canvas_width, int x, int y, int w, int h);

#endif
