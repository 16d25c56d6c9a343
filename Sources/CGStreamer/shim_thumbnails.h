// A frame as a JPEG, for the dashboard's thumbnails. Included by shim.h only.
#ifndef FACERELAY_CGSTREAMER_SHIM_THUMBNAILS_H
#define FACERELAY_CGSTREAMER_SHIM_THUMBNAILS_H

/// The frame in `sample` as a width x height JPEG; NULL and a message the caller frees with g_free
/// on failure or time-out.
static inline GstBuffer *fr_sample_to_jpeg(GstSample *sample, gint width, gint height, GstClockTime timeout, char **error_message) {
    GstCaps *caps = gst_caps_new_simple("image/jpeg", "width", G_TYPE_INT, width, "height", G_TYPE_INT, height,
                                        "pixel-aspect-ratio", GST_TYPE_FRACTION, 1, 1, NULL);
    GError *error = NULL;
    GstSample *converted = gst_video_convert_sample(sample, caps, timeout, &error);
    gst_caps_unref(caps);
    if (converted == NULL) {
        *error_message = g_strdup(error != NULL ? error->message : "conversion timed out");
        if (error != NULL) g_error_free(error);
        return NULL;
    }
    GstBuffer *buffer = gst_buffer_ref(gst_sample_get_buffer(converted));
    gst_sample_unref(converted);
    return buffer;
}

#endif
