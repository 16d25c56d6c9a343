// SVG through librsvg and cairo. Documents come as bytes with no base address, so librsvg resolves
// no reference to another file or the network; the Swift side refuses scripts, entities and
// external references before a document gets here, with an error that names them.
#include "frames_internal.h"

#include <cairo.h>
#include <librsvg/rsvg.h>
#include <stdlib.h>
#include <string.h>

static RsvgHandle *open_document(const uint8_t *data, size_t size, char *error) {
    GError *failure = NULL;
    RsvgHandle *handle = rsvg_handle_new_from_data(data, size, &failure);
    if (!handle) {
        si_fail(error, "does not parse as SVG: %s", failure ? failure->message : "unknown error");
        if (failure) g_error_free(failure);
    }
    return handle;
}

static int document_size(RsvgHandle *handle, double *width, double *height, char *error) {
    if (rsvg_handle_get_intrinsic_size_in_pixels(handle, width, height)) return 0;
    gboolean has_width, has_height, has_box;
    RsvgLength w, h;
    RsvgRectangle box;
    rsvg_handle_get_intrinsic_dimensions(handle, &has_width, &w, &has_height, &h, &has_box, &box);
    if (has_box && box.width > 0 && box.height > 0) {
        *width = box.width;
        *height = box.height;
        return 0;
    }
    return si_fail(error, "has no size: give the <svg> element width and height in px, or a viewBox");
}

int si_svg_size(const uint8_t *data, size_t size, double *width, double *height, char *error) {
    RsvgHandle *handle = open_document(data, size, error);
    if (!handle) return -1;
    int result = document_size(handle, width, height, error);
    g_object_unref(handle);
    return result;
}

int si_render_svg(const uint8_t *data, size_t size, int width, int height, si_frames *out, char *error) {
    si_frames_begin(out, 0, 0);
    RsvgHandle *handle = open_document(data, size, error);
    if (!handle) return -1;
    int result = -1;
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
    cairo_t *cairo = cairo_create(surface);
    GError *failure = NULL;
    RsvgRectangle viewport = {0, 0, width, height};
    if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
        si_fail(error, "cannot be drawn at %dx%d: %s", width, height, cairo_status_to_string(cairo_surface_status(surface)));
    } else if (!rsvg_handle_render_document(handle, cairo, &viewport, &failure)) {
        si_fail(error, "cannot be drawn: %s", failure ? failure->message : "unknown error");
        if (failure) g_error_free(failure);
    } else {
        cairo_surface_flush(surface);
        const uint8_t *pixels = cairo_image_surface_get_data(surface);
        int stride = cairo_image_surface_get_stride(surface);
        si_frames_begin(out, width, height);
        si_limits one = {.max_side = width > height ? width : height, .max_frames = 1, .max_pixels = (int64_t)width * height};
        uint8_t *rgba = malloc((size_t)width * height * 4);
        if (!rgba) {
            si_fail(error, "does not fit in memory");
        } else {
            // cairo's ARGB32 is premultiplied, one native-endian 32-bit word a pixel.
            for (int y = 0; y < height; y++) {
                const uint32_t *row = (const uint32_t *)(pixels + (size_t)y * stride);
                uint8_t *target = rgba + (size_t)y * width * 4;
                for (int x = 0; x < width; x++, target += 4) {
                    uint32_t pixel = row[x];
                    unsigned a = pixel >> 24, r = (pixel >> 16) & 0xFF, g = (pixel >> 8) & 0xFF, b = pixel & 0xFF;
                    target[3] = (uint8_t)a;
                    target[0] = a ? (uint8_t)((r * 255 + a / 2) / a) : 0;
                    target[1] = a ? (uint8_t)((g * 255 + a / 2) / a) : 0;
                    target[2] = a ? (uint8_t)((b * 255 + a / 2) / a) : 0;
                }
            }
            result = si_frames_append(out, rgba, 0, one, error);
            free(rgba);
        }
    }
    cairo_destroy(cairo);
    cairo_surface_destroy(surface);
    g_object_unref(handle);
    if (result != 0) si_frames_free(out);
    return result;
}
