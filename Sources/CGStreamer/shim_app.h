// appsink and appsrc: the frames' and packets' way in and out of Swift. Included by shim.h only.
#ifndef FACERELAY_CGSTREAMER_SHIM_APP_H
#define FACERELAY_CGSTREAMER_SHIM_APP_H

static inline GstSample *fr_appsink_pull(GstElement *sink, GstClockTime timeout) {
    return gst_app_sink_try_pull_sample(GST_APP_SINK(sink), timeout);
}
static inline gboolean fr_appsink_is_eos(GstElement *sink) { return gst_app_sink_is_eos(GST_APP_SINK(sink)); }

/// What an appsink calls on its streaming thread when it queues a sample or reaches end-of-stream
/// (see fr_appsink_wake_on_samples).
typedef struct {
    void (*wake)(void *context);
    void (*release)(void *context);
    void *context;
} FRAppSinkWaker;

static inline GstFlowReturn fr_appsink_waker_sample(GstAppSink *sink, gpointer data) {
    (void)sink;
    FRAppSinkWaker *waker = (FRAppSinkWaker *)data;
    waker->wake(waker->context);
    return GST_FLOW_OK;
}

static inline void fr_appsink_waker_eos(GstAppSink *sink, gpointer data) {
    (void)fr_appsink_waker_sample(sink, data);
}

static inline void fr_appsink_waker_free(gpointer data) {
    FRAppSinkWaker *waker = (FRAppSinkWaker *)data;
    waker->release(waker->context);
    g_free(waker);
}

/// Has `sink` call `wake(context)` whenever it queues a sample or sees end-of-stream, so that its
/// reader can sleep until there is something to pull instead of pulling with a time-out. The
/// samples stay queued for the reader; `release(context)` runs once the callbacks are replaced or
/// the sink is finalised.
static inline void fr_appsink_wake_on_samples(GstElement *sink, void (*wake)(void *), void (*release)(void *), void *context) {
    FRAppSinkWaker *waker = g_new0(FRAppSinkWaker, 1);
    waker->wake = wake;
    waker->release = release;
    waker->context = context;
    GstAppSinkCallbacks callbacks = {0};
    callbacks.eos = fr_appsink_waker_eos;
    callbacks.new_sample = fr_appsink_waker_sample;
    gst_app_sink_set_callbacks(GST_APP_SINK(sink), &callbacks, waker, fr_appsink_waker_free);
}

static inline void fr_appsrc_set_caps(GstElement *src, GstCaps *caps) { gst_app_src_set_caps(GST_APP_SRC(src), caps); }
/// Pushes a buffer, taking ownership of it.
static inline GstFlowReturn fr_appsrc_push(GstElement *src, GstBuffer *buffer) {
    return gst_app_src_push_buffer(GST_APP_SRC(src), buffer);
}
static inline GstFlowReturn fr_appsrc_end_of_stream(GstElement *src) {
    return gst_app_src_end_of_stream(GST_APP_SRC(src));
}
/// Runs an element's source pad `offset` nanoseconds behind the timestamps of the buffers it
/// pushes (a negative pad offset): downstream, a buffer stamped `offset + t` has running time t.
static inline void fr_element_delay_source(GstElement *element, guint64 offset) {
    GstPad *pad = gst_element_get_static_pad(element, "src");
    if (pad == NULL) return;
    gst_pad_set_offset(pad, -(gint64)offset);
    gst_object_unref(pad);
}
/// Time queued in an appsrc (by its buffers' timestamps): how far an output lags behind.
static inline guint64 fr_appsrc_queued_time(GstElement *src) {
    return gst_app_src_get_current_level_time(GST_APP_SRC(src));
}
/// A buffer that decodes on its own: an output can start from it.
static inline gboolean fr_buffer_is_keyframe(GstBuffer *buffer) {
    return !GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT);
}
/// Asks the encoder upstream of `sink` for a keyframe (with its SPS and PPS) as soon as it can.
static inline gboolean fr_request_keyframe(GstElement *sink) {
    return gst_element_send_event(sink, gst_video_event_new_upstream_force_key_unit(GST_CLOCK_TIME_NONE, TRUE, 0));
}

#endif
