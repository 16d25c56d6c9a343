// Samples, buffers, mapped video frames and the encoder's buffer pool. Included by shim.h only.
#ifndef FACERELAY_CGSTREAMER_SHIM_BUFFERS_H
#define FACERELAY_CGSTREAMER_SHIM_BUFFERS_H

static inline GstBuffer *fr_sample_buffer(GstSample *sample) { return gst_sample_get_buffer(sample); }
static inline GstCaps *fr_sample_caps(GstSample *sample) { return gst_sample_get_caps(sample); }
static inline void fr_sample_unref(GstSample *sample) { gst_sample_unref(sample); }

/// The running time of a sample's buffer (its PTS on the pipeline's timeline), or GST_CLOCK_TIME_NONE.
static inline GstClockTime fr_sample_running_time(GstSample *sample) {
    GstBuffer *buffer = gst_sample_get_buffer(sample);
    GstSegment *segment = gst_sample_get_segment(sample);
    if (buffer == NULL || !GST_BUFFER_PTS_IS_VALID(buffer)) return GST_CLOCK_TIME_NONE;
    if (segment == NULL || segment->format != GST_FORMAT_TIME) return GST_BUFFER_PTS(buffer);
    return gst_segment_to_running_time(segment, GST_FORMAT_TIME, GST_BUFFER_PTS(buffer));
}

static inline GstClockTime fr_buffer_duration(GstBuffer *buffer) { return GST_BUFFER_DURATION(buffer); }
static inline GstClockTime fr_buffer_pts(GstBuffer *buffer) { return GST_BUFFER_PTS(buffer); }

/// Takes a reference to a sample's buffer that may be retimed: copies only the buffer's metadata
/// when someone else still holds it, never its memory.
static inline GstBuffer *fr_sample_take_buffer(GstSample *sample) {
    GstBuffer *buffer = gst_buffer_ref(gst_sample_get_buffer(sample));
    return gst_buffer_make_writable(buffer);
}

/// A sample's buffer, writable (its metadata copied, never its memory), with its PTS and DTS
/// moved onto the running time: what another pipeline's appsrc, starting its own segment at zero,
/// takes. (x264enc shifts its output segment by 1000 hours so that no DTS is negative.)
static inline GstBuffer *fr_sample_take_buffer_in_running_time(GstSample *sample) {
    GstBuffer *buffer = gst_buffer_make_writable(gst_buffer_ref(gst_sample_get_buffer(sample)));
    GstSegment *segment = gst_sample_get_segment(sample);
    if (segment == NULL || segment->format != GST_FORMAT_TIME) return buffer;
    if (GST_BUFFER_PTS_IS_VALID(buffer))
        GST_BUFFER_PTS(buffer) = gst_segment_to_running_time(segment, GST_FORMAT_TIME, GST_BUFFER_PTS(buffer));
    if (GST_BUFFER_DTS_IS_VALID(buffer))
        GST_BUFFER_DTS(buffer) = gst_segment_to_running_time(segment, GST_FORMAT_TIME, GST_BUFFER_DTS(buffer));
    return buffer;
}

static inline void fr_buffer_set_timing(GstBuffer *buffer, GstClockTime pts, GstClockTime duration) {
    GST_BUFFER_PTS(buffer) = pts;
    GST_BUFFER_DTS(buffer) = GST_CLOCK_TIME_NONE;
    GST_BUFFER_DURATION(buffer) = duration;
}

static inline void fr_buffer_unref(GstBuffer *buffer) { gst_buffer_unref(buffer); }
static inline gboolean fr_caps_is_fixed(GstCaps *caps) { return caps != NULL && gst_caps_is_fixed(caps); }
static inline char *fr_caps_string(GstCaps *caps) { return gst_caps_to_string(caps); }

// MARK: video frames

static inline guint8 *fr_video_frame_plane(GstVideoFrame *frame, guint plane) {
    return (guint8 *)GST_VIDEO_FRAME_PLANE_DATA(frame, plane);
}
static inline gint fr_video_frame_stride(GstVideoFrame *frame, guint plane) {
    return GST_VIDEO_FRAME_PLANE_STRIDE(frame, plane);
}
static inline gint fr_video_frame_width(GstVideoFrame *frame) { return GST_VIDEO_FRAME_WIDTH(frame); }
static inline gint fr_video_frame_height(GstVideoFrame *frame) { return GST_VIDEO_FRAME_HEIGHT(frame); }
static inline gint fr_video_info_width(const GstVideoInfo *info) { return GST_VIDEO_INFO_WIDTH(info); }
static inline gint fr_video_info_height(const GstVideoInfo *info) { return GST_VIDEO_INFO_HEIGHT(info); }
static inline gint fr_video_info_fps_n(const GstVideoInfo *info) { return GST_VIDEO_INFO_FPS_N(info); }
static inline gint fr_video_info_fps_d(const GstVideoInfo *info) { return GST_VIDEO_INFO_FPS_D(info); }
static inline void fr_video_info_set_fps(GstVideoInfo *info, gint numerator, gint denominator) {
    GST_VIDEO_INFO_FPS_N(info) = numerator;
    GST_VIDEO_INFO_FPS_D(info) = denominator;
}
static inline gsize fr_video_info_size(const GstVideoInfo *info) { return GST_VIDEO_INFO_SIZE(info); }
static inline GstVideoFormat fr_video_info_format(const GstVideoInfo *info) { return GST_VIDEO_INFO_FORMAT(info); }

// MARK: buffer pool

static inline GstBufferPool *fr_video_pool_new(GstCaps *caps, guint size, guint min_buffers, guint max_buffers) {
    GstBufferPool *pool = gst_video_buffer_pool_new();
    GstStructure *config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, caps, size, min_buffers, max_buffers);
    if (!gst_buffer_pool_set_config(pool, config) || !gst_buffer_pool_set_active(pool, TRUE)) {
        gst_object_unref(pool);
        return NULL;
    }
    return pool;
}

static inline GstBuffer *fr_pool_acquire(GstBufferPool *pool) {
    GstBuffer *buffer = NULL;
    if (gst_buffer_pool_acquire_buffer(pool, &buffer, NULL) != GST_FLOW_OK) return NULL;
    return buffer;
}

static inline void fr_pool_release(GstBufferPool *pool) {
    gst_buffer_pool_set_active(pool, FALSE);
    gst_object_unref(pool);
}

static inline GstSample *fr_sample_new(GstBuffer *buffer, GstCaps *caps) { return gst_sample_new(buffer, caps, NULL, NULL); }
static inline GstBuffer *fr_buffer_ref(GstBuffer *buffer) { return gst_buffer_ref(buffer); }
/* Gives `copy` the flags and the metadata of `original` that outlive a copy of its pixels: closed
 * captions, SEI user data, timecodes, interlacing flags, as an element copying a frame would.
 * Metadata about the memory itself (strides, offsets) stays `copy`'s own. */
static inline gboolean fr_buffer_copy_metadata(GstBuffer *copy, GstBuffer *original) {
    return gst_buffer_copy_into(copy, original, GST_BUFFER_COPY_FLAGS | GST_BUFFER_COPY_META, 0, -1);
}
static inline gsize fr_buffer_extract_all(GstBuffer *buffer, guint8 *destination, gsize size) {
    return gst_buffer_extract(buffer, 0, destination, size);
}
static inline gsize fr_buffer_size(GstBuffer *buffer) { return gst_buffer_get_size(buffer); }

#endif
