// PNG through libpng, and APNG: Debian's libpng has no APNG support, so each frame's fdAT data is
// put back into a PNG of its own (its IHDR, the shared chunks, its data as IDAT), decoded by
// libpng, and composed on the canvas by the frame's blend and dispose operations.
#include "frames_internal.h"

#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

typedef struct {
    const uint8_t *data;
    size_t size;
    size_t offset;
} reader;

static void read_bytes(png_structp png, png_bytep out, png_size_t count) {
    reader *source = png_get_io_ptr(png);
    if (count > source->size - source->offset) png_error(png, "the file ends in the middle of the picture (truncated)");
    memcpy(out, source->data + source->offset, count);
    source->offset += count;
}

static void on_error(png_structp png, png_const_charp message) {
    si_fail(png_get_error_ptr(png), "does not decode as a PNG: %s", message);
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp message) { (void)png; (void)message; }

/// Decodes one complete PNG held in memory into `rgba`, which holds width x height pixels.
static int decode_still(const uint8_t *data, size_t size, int width, int height, uint8_t *rgba, png_bytep *rows, char *error) {
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, error, on_error, on_warning);
    if (!png) return si_fail(error, "cannot start the PNG decoder");
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_read_struct(&png, NULL, NULL);
        return si_fail(error, "cannot start the PNG decoder");
    }
    reader source = {data, size, 0};
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        return -1;
    }
    png_set_read_fn(png, &source, read_bytes);
    png_set_user_limits(png, (png_uint_32)width, (png_uint_32)height);
    png_set_chunk_malloc_max(png, 8 << 20);
    png_read_info(png, info);
    if ((int)png_get_image_width(png, info) != width || (int)png_get_image_height(png, info) != height)
        png_error(png, "a frame's size differs from what its header says");
    png_set_expand(png);
    png_set_scale_16(png);
    png_set_gray_to_rgb(png);
    png_set_add_alpha(png, 0xFF, PNG_FILLER_AFTER);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)width * 4) png_error(png, "unexpected pixel layout after conversion to RGBA");
    for (int y = 0; y < height; y++) rows[y] = rgba + (size_t)y * width * 4;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    return 0;
}

static uint32_t big_endian(const uint8_t *bytes) {
    return (uint32_t)bytes[0] << 24 | (uint32_t)bytes[1] << 16 | (uint32_t)bytes[2] << 8 | bytes[3];
}

static void put_big_endian(uint8_t *bytes, uint32_t value) {
    bytes[0] = value >> 24; bytes[1] = value >> 16; bytes[2] = value >> 8; bytes[3] = value;
}

/// A growing byte buffer: one frame's PNG as it is put back together.
typedef struct {
    uint8_t *bytes;
    size_t count;
    size_t capacity;
} buffer;

static int append(buffer *to, const void *bytes, size_t count) {
    if (to->count + count > to->capacity) {
        size_t capacity = (to->count + count) * 2;
        uint8_t *grown = realloc(to->bytes, capacity);
        if (!grown) return -1;
        to->bytes = grown;
        to->capacity = capacity;
    }
    memcpy(to->bytes + to->count, bytes, count);
    to->count += count;
    return 0;
}

static int append_chunk(buffer *to, const char *type, const uint8_t *data, uint32_t length) {
    uint8_t header[8], crc_bytes[4];
    put_big_endian(header, length);
    memcpy(header + 4, type, 4);
    // zlib answers its initial value for a null buffer, so an empty chunk (IEND) gets a real one.
    uLong crc = crc32(crc32(0, (const Bytef *)type, 4), data ? data : (const uint8_t *)"", length);
    put_big_endian(crc_bytes, (uint32_t)crc);
    return append(to, header, 8) || append(to, data, length) || append(to, crc_bytes, 4) ? -1 : 0;
}

/// One APNG frame's control chunk.
typedef struct {
    int width, height, x, y, delay_ms, dispose, blend;
} frame_control;

typedef struct {
    si_limits limits;
    si_frames *out;
    char *error;
    uint8_t ihdr[13];
    buffer shared;         // chunks before the first IDAT that every frame's PNG needs (PLTE, tRNS...)
    buffer frame_png;      // the frame being put back together
    uint8_t *canvas, *frame, *saved;
    png_bytep *rows;
    int canvas_width, canvas_height;
} apng;

/// Decodes the frame put back together in `frame_png` and composes it on the canvas.
static int finish_frame(apng *state, const buffer *data, frame_control control) {
    uint8_t ihdr[13];
    memcpy(ihdr, state->ihdr, 13);
    put_big_endian(ihdr, (uint32_t)control.width);
    put_big_endian(ihdr + 4, (uint32_t)control.height);
    buffer *png = &state->frame_png;
    png->count = 0;
    if (append(png, signature, 8) || append_chunk(png, "IHDR", ihdr, 13) || append(png, state->shared.bytes, state->shared.count)
        || append_chunk(png, "IDAT", data->bytes, (uint32_t)data->count) || append_chunk(png, "IEND", NULL, 0))
        return si_fail(state->error, "does not fit in memory");
    if (decode_still(png->bytes, png->count, control.width, control.height, state->frame, state->rows, state->error) != 0) return -1;
    int width = state->canvas_width;
    if (control.dispose == 2) {
        for (int row = 0; row < control.height; row++)
            memcpy(state->saved + (size_t)row * control.width * 4,
                   state->canvas + ((size_t)(control.y + row) * width + control.x) * 4, (size_t)control.width * 4);
    }
    si_compose(state->canvas, width, state->frame, control.x, control.y, control.width, control.height, control.blend == 1);
    if (si_frames_append(state->out, state->canvas, si_shown_delay(control.delay_ms), state->limits, state->error) != 0) return -1;
    if (control.dispose == 1) si_clear(state->canvas, width, control.x, control.y, control.width, control.height);
    if (control.dispose == 2) si_compose(state->canvas, width, state->saved, control.x, control.y, control.width, control.height, 0);
    return 0;
}

static int decode_apng(const uint8_t *data, size_t size, si_limits limits, si_frames *out, char *error) {
    apng state = {.limits = limits, .out = out, .error = error};
    buffer frame_data = {0};
    frame_control control = {0};
    int have_control = 0, declared_frames = -1, seen_idat = 0, sequence = 0, result = -1;
    size_t offset = 8;
    si_frames_begin(out, 0, 0);
    for (;;) {
        if (size - offset < 12) { si_fail(error, "ends before its IEND chunk (truncated)"); goto done; }
        uint32_t length = big_endian(data + offset);
        const uint8_t *type = data + offset + 4, *body = data + offset + 8;
        if (length > size - offset - 12) { si_fail(error, "ends in the middle of a chunk (truncated)"); goto done; }
        if ((uint32_t)crc32(crc32(0, type, 4), body, length) != big_endian(body + length)) {
            si_fail(error, "has a damaged %.4s chunk (its checksum does not match)", type);
            goto done;
        }
        offset += 12 + (size_t)length;
        if (!memcmp(type, "IHDR", 4)) {
            // A second header would resize a canvas already allocated at the first one's size.
            if (body != data + 16) { si_fail(error, "has a second IHDR chunk; a PNG has one header"); goto done; }
            if (length != 13) { si_fail(error, "has a malformed IHDR chunk"); goto done; }
            memcpy(state.ihdr, body, 13);
            state.canvas_width = (int)big_endian(body);
            state.canvas_height = (int)big_endian(body + 4);
            if (big_endian(body) > (uint32_t)limits.max_side || big_endian(body + 4) > (uint32_t)limits.max_side) {
                si_fail(error, "is %ux%u; each side must be 1...%d px", big_endian(body), big_endian(body + 4), limits.max_side);
                goto done;
            }
        } else if (!memcmp(type, "acTL", 4)) {
            if (length != 8) { si_fail(error, "has a malformed acTL chunk"); goto done; }
            if (declared_frames >= 0) { si_fail(error, "has a second acTL chunk; an animated PNG has one"); goto done; }
            declared_frames = (int)(big_endian(body) > 0x7FFFFFFF ? 0x7FFFFFFF : big_endian(body));
            if (si_check_canvas(limits, state.canvas_width, state.canvas_height, declared_frames, error) != 0) goto done;
            size_t canvas_bytes = (size_t)state.canvas_width * state.canvas_height * 4;
            state.canvas = calloc(canvas_bytes, 1);
            state.frame = malloc(canvas_bytes);
            state.saved = malloc(canvas_bytes);
            state.rows = malloc(sizeof(png_bytep) * state.canvas_height);
            if (!state.canvas || !state.frame || !state.saved || !state.rows) { si_fail(error, "does not fit in memory"); goto done; }
            si_frames_begin(out, state.canvas_width, state.canvas_height);
        } else if (!memcmp(type, "fcTL", 4) || !memcmp(type, "IEND", 4)) {
            if (have_control && frame_data.count > 0) {
                if (finish_frame(&state, &frame_data, control) != 0) goto done;
                frame_data.count = 0;
            } else if (have_control) {
                si_fail(error, "has an animation frame without picture data");
                goto done;
            }
            if (!memcmp(type, "IEND", 4)) break;
            if (length != 26 || declared_frames < 0) { si_fail(error, "has a malformed fcTL chunk, or one before acTL"); goto done; }
            if ((int)big_endian(body) != sequence++) { si_fail(error, "has its animation chunks out of order"); goto done; }
            control.width = (int)big_endian(body + 4);
            control.height = (int)big_endian(body + 8);
            control.x = (int)big_endian(body + 12);
            control.y = (int)big_endian(body + 16);
            int numerator = body[20] << 8 | body[21], denominator = body[22] << 8 | body[23];
            control.delay_ms = numerator * 1000 / (denominator ? denominator : 100);
            control.dispose = body[24];
            control.blend = body[25];
            if (big_endian(body + 4) == 0 || big_endian(body + 8) == 0 || big_endian(body + 12) > (uint32_t)state.canvas_width
                || big_endian(body + 16) > (uint32_t)state.canvas_height
                || big_endian(body + 4) > (uint32_t)(state.canvas_width - control.x)
                || big_endian(body + 8) > (uint32_t)(state.canvas_height - control.y)
                || control.dispose > 2 || control.blend > 1) {
                si_fail(error, "has an animation frame outside its canvas or with unknown operations");
                goto done;
            }
            // The first frame has nothing before it to go back to.
            if (out->count == 0 && control.dispose == 2) control.dispose = 1;
            have_control = 1;
        } else if (!memcmp(type, "IDAT", 4)) {
            seen_idat = 1;
            // The default picture is the first frame only when an fcTL came before it.
            if (have_control && append(&frame_data, body, length) != 0) { si_fail(error, "does not fit in memory"); goto done; }
        } else if (!memcmp(type, "fdAT", 4)) {
            if (!have_control || length < 4) { si_fail(error, "has picture data for no frame"); goto done; }
            if ((int)big_endian(body) != sequence++) { si_fail(error, "has its animation chunks out of order"); goto done; }
            if (append(&frame_data, body + 4, length - 4) != 0) { si_fail(error, "does not fit in memory"); goto done; }
        } else if (!seen_idat && append(&state.shared, data + offset - 12 - length, 12 + (size_t)length) != 0) {
            si_fail(error, "does not fit in memory");
            goto done;
        }
    }
    if (out->count != declared_frames) {
        si_fail(error, "says it has %d animation frames but holds %d", declared_frames, out->count);
        goto done;
    }
    result = 0;
done:
    free(frame_data.bytes);
    free(state.shared.bytes);
    free(state.frame_png.bytes);
    free(state.canvas);
    free(state.frame);
    free(state.saved);
    free(state.rows);
    if (result != 0) si_frames_free(out);
    return result;
}

/// Whether the PNG's chunks before its first IDAT include acTL: an animated PNG.
static int is_animated(const uint8_t *data, size_t size) {
    size_t offset = 8;
    while (size - offset >= 12) {
        uint32_t length = big_endian(data + offset);
        const uint8_t *type = data + offset + 4;
        if (!memcmp(type, "acTL", 4)) return 1;
        if (!memcmp(type, "IDAT", 4) || length > size - offset - 12) return 0;
        offset += 12 + (size_t)length;
    }
    return 0;
}

int si_decode_png(const uint8_t *data, size_t size, si_limits limits, si_frames *out, char *error) {
    si_frames_begin(out, 0, 0);
    if (size < 24 || memcmp(data, signature, 8) || memcmp(data + 12, "IHDR", 4))
        return si_fail(error, "does not start with PNG's signature and header; save the picture as PNG");
    if (is_animated(data, size)) return decode_apng(data, size, limits, out, error);
    uint32_t width = big_endian(data + 16), height = big_endian(data + 20);
    if (width > (uint32_t)limits.max_side || height > (uint32_t)limits.max_side || width == 0 || height == 0)
        return si_fail(error, "is %ux%u; each side must be 1...%d px", width, height, limits.max_side);
    uint8_t *rgba = malloc((size_t)width * height * 4);
    png_bytep *rows = malloc(sizeof(png_bytep) * height);
    int result = -1;
    if (!rgba || !rows) {
        si_fail(error, "does not fit in memory");
    } else if (decode_still(data, size, (int)width, (int)height, rgba, rows, error) == 0) {
        si_frames_begin(out, (int)width, (int)height);
        result = si_frames_append(out, rgba, 0, limits, error);
    }
    free(rgba);
    free(rows);
    return result;
}
