// GStreamer for Swift: the headers, plus small static-inline wrappers for what Swift cannot call
// directly (macros, casts between GObject types, variadic functions). No logic lives here.
#ifndef FACERELAY_CGSTREAMER_SHIM_H
#define FACERELAY_CGSTREAMER_SHIM_H

#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>
#include <gst/pbutils/pbutils.h>
#include <gio/gio.h>
#include <sys/prctl.h>
#include <malloc.h>
#include <sys/eventfd.h>
#include <unistd.h>

static inline gboolean fr_gst_init(char **error_message) {
    GError *error = NULL;
    gboolean ok = gst_init_check(NULL, NULL, &error);
    if (!ok && error != NULL) {
        *error_message = g_strdup(error->message);
        g_error_free(error);
    }
    return ok;
}

/// Parses a gst-launch description. On failure returns NULL and a message the caller frees with g_free.
static inline GstElement *fr_parse_launch(const char *description, char **error_message) {
    GError *error = NULL;
    GstElement *element = gst_parse_launch_full(description, NULL, GST_PARSE_FLAG_FATAL_ERRORS, &error);
    if (error != NULL) {
        *error_message = g_strdup(error->message);
        g_error_free(error);
        if (element != NULL) gst_object_unref(element);
        return NULL;
    }
    return element;
}

/// Parses a description into a bin whose unlinked pads are ghosted (a branch to attach at run time).
static inline GstElement *fr_parse_bin(const char *description, char **error_message) {
    GError *error = NULL;
    GstElement *bin = gst_parse_bin_from_description_full(description, TRUE, NULL, GST_PARSE_FLAG_FATAL_ERRORS, &error);
    if (error != NULL) {
        *error_message = g_strdup(error->message);
        g_error_free(error);
        if (bin != NULL) gst_object_unref(bin);
        return NULL;
    }
    return bin;
}

static inline GstElement *fr_bin_get(GstElement *bin, const char *name) {
    return gst_bin_get_by_name(GST_BIN(bin), name);
}

static inline gboolean fr_bin_add(GstElement *bin, GstElement *element) {
    return gst_bin_add(GST_BIN(bin), element);
}

static inline void fr_unref(gpointer object) { if (object != NULL) gst_object_unref(object); }

static inline void fr_set_bool(GstElement *element, const char *name, gboolean value) {
    g_object_set(element, name, value, NULL);
}
static inline void fr_set_int(GstElement *element, const char *name, gint value) {
    g_object_set(element, name, value, NULL);
}
static inline void fr_set_uint(GstElement *element, const char *name, guint value) {
    g_object_set(element, name, value, NULL);
}
static inline void fr_set_uint64(GstElement *element, const char *name, guint64 value) {
    g_object_set(element, name, value, NULL);
}
static inline void fr_set_caps_property(GstElement *element, const char *name, GstCaps *caps) {
    g_object_set(element, name, caps, NULL);
}

static inline gboolean fr_get_bool(GstElement *element, const char *name) {
    gboolean value = FALSE;
    g_object_get(element, name, &value, NULL);
    return value;
}

static inline gboolean fr_element_has_property(GstElement *element, const char *name) {
    return g_object_class_find_property(G_OBJECT_GET_CLASS(element), name) != NULL;
}

static inline const char *fr_element_factory_name(GstElement *element) {
    GstElementFactory *factory = gst_element_get_factory(element);
    return factory != NULL ? GST_OBJECT_NAME(factory) : "";
}

static inline const char *fr_object_name(gpointer object) {
    return object != NULL ? GST_OBJECT_NAME(object) : "";
}

// MARK: signals

typedef void (*fr_pad_added_callback)(GstElement *element, GstPad *pad, gpointer user_data);
typedef void (*fr_no_more_pads_callback)(GstElement *element, gpointer user_data);
typedef void (*fr_element_added_callback)(GstBin *bin, GstBin *sub_bin, GstElement *element, gpointer user_data);

// Each returns the handler's id, for g_signal_handler_disconnect (0 if the signal does not exist);
// GLib calls `release` with `user_data` once the handler is gone (disconnected, or its instance
// finalized) and no emission is running it any more.
static inline gulong fr_connect_pad_added(GstElement *element, fr_pad_added_callback callback, gpointer user_data, GClosureNotify release) {
    return g_signal_connect_data(element, "pad-added", G_CALLBACK(callback), user_data, release, (GConnectFlags)0);
}
static inline gulong fr_connect_no_more_pads(GstElement *element, fr_no_more_pads_callback callback, gpointer user_data, GClosureNotify release) {
    return g_signal_connect_data(element, "no-more-pads", G_CALLBACK(callback), user_data, release, (GConnectFlags)0);
}
static inline gulong fr_connect_deep_element_added(GstElement *bin, fr_element_added_callback callback, gpointer user_data, GClosureNotify release) {
    return g_signal_connect_data(bin, "deep-element-added", G_CALLBACK(callback), user_data, release, (GConnectFlags)0);
}

/// srtsrc's "caller-connecting": return TRUE to let the handshake go on (libsrt may still refuse it).
typedef gboolean (*fr_caller_connecting_callback)(GstElement *element, GSocketAddress *address, const gchar *stream_id, gpointer user_data);
static inline void fr_connect_caller_connecting(GstElement *element, fr_caller_connecting_callback callback, gpointer user_data) {
    g_signal_connect(element, "caller-connecting", G_CALLBACK(callback), user_data);
}

/// "host:port" of an IP socket address, for the caller to g_free; NULL for another kind.
static inline char *fr_socket_address_string(GSocketAddress *address) {
    if (address == NULL || !G_IS_INET_SOCKET_ADDRESS(address)) return NULL;
    GInetSocketAddress *inet = G_INET_SOCKET_ADDRESS(address);
    char *host = g_inet_address_to_string(g_inet_socket_address_get_address(inet));
    char *text = g_strdup_printf("%s:%u", host, (unsigned) g_inet_socket_address_get_port(inet));
    g_free(host);
    return text;
}

/// The first element of a bin (searched recursively) made by the named factory, with a reference; or NULL.
static inline GstElement *fr_bin_find_by_factory(GstElement *bin, const char *factory_name) {
    GstIterator *iterator = gst_bin_iterate_all_by_element_factory_name(GST_BIN(bin), factory_name);
    if (iterator == NULL) return NULL;
    GValue item = G_VALUE_INIT;
    GstElement *found = NULL;
    if (gst_iterator_next(iterator, &item) == GST_ITERATOR_OK) found = GST_ELEMENT(g_value_dup_object(&item));
    g_value_unset(&item);
    gst_iterator_free(iterator);
    return found;
}

// MARK: pads and caps

/// The media type of a pad's current caps ("video/x-raw", "audio/mpeg"...), or "" when not negotiated.
static inline const char *fr_pad_media_type(GstPad *pad) {
    GstCaps *caps = gst_pad_get_current_caps(pad);
    if (caps == NULL) caps = gst_pad_query_caps(pad, NULL);
    const char *name = "";
    if (caps != NULL && gst_caps_get_size(caps) > 0) {
        name = g_intern_string(gst_structure_get_name(gst_caps_get_structure(caps, 0)));
    }
    if (caps != NULL) gst_caps_unref(caps);
    return name;
}

/// Caps of a pad as a string the caller frees with g_free.
static inline char *fr_pad_caps_string(GstPad *pad) {
    GstCaps *caps = gst_pad_get_current_caps(pad);
    if (caps == NULL) caps = gst_pad_query_caps(pad, NULL);
    char *text = caps != NULL ? gst_caps_to_string(caps) : g_strdup("");
    if (caps != NULL) gst_caps_unref(caps);
    return text;
}

static inline gboolean fr_link_pad_to_element(GstPad *pad, GstElement *element) {
    GstPad *sink = gst_element_get_static_pad(element, "sink");
    if (sink == NULL) return FALSE;
    gboolean ok = gst_pad_link(pad, sink) == GST_PAD_LINK_OK;
    gst_object_unref(sink);
    return ok;
}

/// Moves an element's sink pad from whatever feeds it to `pad` (a demuxer's new pad for the same
/// stream, after a program change).
static inline gboolean fr_relink_pad_to_element(GstPad *pad, GstElement *element) {
    GstPad *sink = gst_element_get_static_pad(element, "sink");
    if (sink == NULL) return FALSE;
    GstPad *previous = gst_pad_get_peer(sink);
    if (previous != NULL) {
        gst_pad_unlink(previous, sink);
        gst_object_unref(previous);
    }
    gboolean ok = gst_pad_link(pad, sink) == GST_PAD_LINK_OK;
    gst_object_unref(sink);
    return ok;
}

/// Counts buffers that reach an element's sink pad (including ones it later drops).
static GstPadProbeReturn fr_count_buffer_probe(GstPad *pad, GstPadProbeInfo *info, gpointer counter) {
    (void)pad; (void)info;
    __atomic_fetch_add((guint64 *)counter, 1, __ATOMIC_RELAXED);
    return GST_PAD_PROBE_OK;
}
static inline void fr_count_buffers_into(GstElement *element, guint64 *counter) {
    GstPad *sink = gst_element_get_static_pad(element, "sink");
    if (sink == NULL) return;
    gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_BUFFER, fr_count_buffer_probe, counter, NULL);
    gst_object_unref(sink);
}

/// Adds up the bytes of the buffers (and buffer lists) that reach an element's sink pad: the
/// compressed stream as it comes off the network or the file, before any demuxing.
static GstPadProbeReturn fr_count_bytes_probe(GstPad *pad, GstPadProbeInfo *info, gpointer counter) {
    (void)pad;
    guint64 bytes = 0;
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
        bytes = gst_buffer_get_size(GST_PAD_PROBE_INFO_BUFFER(info));
    } else if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
        bytes = gst_buffer_list_calculate_size(GST_PAD_PROBE_INFO_BUFFER_LIST(info));
    }
    __atomic_fetch_add((guint64 *)counter, bytes, __ATOMIC_RELAXED);
    return GST_PAD_PROBE_OK;
}
/// Returns 0 when the element has no sink pad to count on.
static inline int fr_count_bytes_into(GstElement *element, guint64 *counter) {
    GstPad *sink = gst_element_get_static_pad(element, "sink");
    if (sink == NULL) return 0;
    gulong id = gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST, fr_count_bytes_probe, counter, NULL);
    gst_object_unref(sink);
    return id != 0;
}
static inline guint64 fr_atomic_get64(guint64 *counter) { return __atomic_load_n(counter, __ATOMIC_RELAXED); }

/// Decides early whether a live FLV stream (rtmp2src: one tag per buffer) carries audio.
/// flvdemux trusts no FLV header: without audio it waits for 6 s of video before saying no more
/// streams are coming, and decodebin holds every stream until then, so a video-only broadcast
/// would start 6 s late. Once `wait` of video (tag time) went by without an audio tag, the
/// demuxer is told to stop waiting, and audio tags that come later are dropped before it sees
/// them (a pad added after that would make decodebin block the video for a new group), with a
/// warning on the bus. A buffer that is not one whole tag leaves the demuxer to decide.
typedef struct { GstElement *demuxer; guint32 wait_ms; gint64 first_video_ms; gboolean without_audio; gboolean warned; } FrAudioDecision;
static void fr_audio_decision_free(gpointer data) {
    FrAudioDecision *state = data;
    gst_object_unref(state->demuxer);
    g_free(state);
}
static GstPadProbeReturn fr_audio_decision_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    (void)pad;
    FrAudioDecision *state = data;
    GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
    guint8 tag[11];
    gsize size = gst_buffer_get_size(buffer);
    if (size >= 3 && gst_buffer_extract(buffer, 0, tag, 3) == 3 && memcmp(tag, "FLV", 3) == 0) return GST_PAD_PROBE_OK;
    if (size < 15 || gst_buffer_extract(buffer, 0, tag, 11) != 11) return GST_PAD_PROBE_REMOVE;
    guint32 data_size = ((guint32)tag[1] << 16) | ((guint32)tag[2] << 8) | tag[3];
    if (size != 11 + (gsize)data_size + 4) return GST_PAD_PROBE_REMOVE;
    guint8 type = tag[0] & 0x1f;
    guint32 time_ms = ((guint32)tag[7] << 24) | ((guint32)tag[4] << 16) | ((guint32)tag[5] << 8) | tag[6];
    if (type == 8) {
        if (!state->without_audio) return GST_PAD_PROBE_REMOVE;
        if (!state->warned) {
            state->warned = TRUE;
            GST_ELEMENT_WARNING(state->demuxer, STREAM, DEMUX,
                ("audio appeared in the input after %u ms of video alone; the output was opened without audio, relaying the video alone", state->wait_ms), (NULL));
        }
        return GST_PAD_PROBE_DROP;
    }
    if (type != 9 || state->without_audio) return GST_PAD_PROBE_OK;
    if (state->first_video_ms < 0) state->first_video_ms = time_ms;
    if ((gint64)time_ms >= state->first_video_ms + state->wait_ms) {
        state->without_audio = TRUE;
        gst_element_no_more_pads(state->demuxer);
    }
    return GST_PAD_PROBE_OK;
}
static inline void fr_decide_flv_audio_within(GstElement *demuxer, guint32 wait_ms) {
    GstPad *sink = gst_element_get_static_pad(demuxer, "sink");
    if (sink == NULL) return;
    FrAudioDecision *state = g_new0(FrAudioDecision, 1);
    state->demuxer = gst_object_ref(demuxer);
    state->wait_ms = wait_ms;
    state->first_video_ms = -1;
    gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_BUFFER, fr_audio_decision_probe, state, fr_audio_decision_free);
    gst_object_unref(sink);
}

// MARK: samples and buffers

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

// MARK: appsink and appsrc

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

// MARK: bus

static inline GstMessage *fr_bus_pop(GstElement *pipeline, GstClockTime timeout) {
    GstBus *bus = gst_element_get_bus(pipeline);
    GstMessage *message = gst_bus_timed_pop_filtered(bus, timeout,
        (GstMessageType)(GST_MESSAGE_ERROR | GST_MESSAGE_EOS | GST_MESSAGE_WARNING | GST_MESSAGE_ELEMENT));
    gst_object_unref(bus);
    return message;
}
/// The descriptor that poll(2) sees readable while messages wait on the pipeline's bus; -1 when
/// the bus has none. Only to wait on: messages are read with `fr_bus_pop`. Valid while the bus is.
static inline int fr_bus_pollfd(GstElement *pipeline) {
    GstBus *bus = gst_element_get_bus(pipeline);
    GPollFD pollfd = { -1, 0, 0 };
    gst_bus_get_pollfd(bus, &pollfd);
    gst_object_unref(bus);
    return pollfd.fd;
}
static inline GstMessageType fr_message_type(GstMessage *message) { return GST_MESSAGE_TYPE(message); }
static inline const char *fr_message_source_name(GstMessage *message) {
    return GST_MESSAGE_SRC(message) != NULL ? GST_OBJECT_NAME(GST_MESSAGE_SRC(message)) : "";
}
static inline void fr_message_unref(GstMessage *message) { gst_message_unref(message); }

/// The text of an error or warning message and its debug detail; both freed by the caller with g_free.
static inline void fr_message_parse(GstMessage *message, char **text, char **debug, gint *domain_code, GQuark *domain) {
    GError *error = NULL;
    if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) gst_message_parse_error(message, &error, debug);
    else gst_message_parse_warning(message, &error, debug);
    *text = g_strdup(error != NULL ? error->message : "unknown error");
    *domain_code = error != NULL ? error->code : 0;
    *domain = error != NULL ? error->domain : 0;
    if (error != NULL) g_error_free(error);
}

/// For "missing-plugin" element messages: a description of what is missing ("H.265 decoder"), else NULL.
static inline char *fr_message_missing_plugin(GstMessage *message) {
    const GstStructure *structure = gst_message_get_structure(message);
    if (structure == NULL || !gst_structure_has_name(structure, "missing-plugin")) return NULL;
    const GValue *detail = gst_structure_get_value(structure, "detail");
    const gchar *kind = gst_structure_get_string(structure, "type");
    char *caps_text = NULL;
    if (detail != NULL && G_VALUE_HOLDS(detail, GST_TYPE_CAPS)) caps_text = gst_caps_to_string(gst_value_get_caps(detail));
    char *text = g_strdup_printf("%s for %s", kind != NULL ? kind : "element", caps_text != NULL ? caps_text : "unknown media");
    g_free(caps_text);
    return text;
}

/// For a missing-plugin message about a decoder: the caps' media type ("video/x-dirac") and
/// GStreamer's name for the codec ("Dirac"), each for the caller to g_free; FALSE otherwise.
static inline gboolean fr_message_missing_decoder(GstMessage *message, char **media_type, char **codec_name) {
    const GstStructure *structure = gst_message_get_structure(message);
    if (structure == NULL || !gst_structure_has_name(structure, "missing-plugin")) return FALSE;
    const GValue *detail = gst_structure_get_value(structure, "detail");
    if (g_strcmp0(gst_structure_get_string(structure, "type"), "decoder") != 0 || detail == NULL || !G_VALUE_HOLDS(detail, GST_TYPE_CAPS)) return FALSE;
    const GstCaps *caps = gst_value_get_caps(detail);
    if (caps == NULL || gst_caps_get_size(caps) == 0) return FALSE;
    *media_type = g_strdup(gst_structure_get_name(gst_caps_get_structure(caps, 0)));
    *codec_name = gst_pb_utils_get_codec_description(caps);
    return TRUE;
}

static inline gboolean fr_is_stream_error(GQuark domain) { return domain == GST_STREAM_ERROR; }
static inline gboolean fr_is_resource_error(GQuark domain) { return domain == GST_RESOURCE_ERROR; }

static inline GstStateChangeReturn fr_set_state(GstElement *element, GstState state) {
    return gst_element_set_state(element, state);
}
static inline gboolean fr_sync_state_with_parent(GstElement *element) {
    return gst_element_sync_state_with_parent(element);
}
static inline gboolean fr_send_eos(GstElement *element) { return gst_element_send_event(element, gst_event_new_eos()); }

// MARK: streaming threads

typedef GstBusSyncReply (*fr_bus_sync_callback)(GstBus *bus, GstMessage *message, gpointer user_data);

/// Calls `callback` on the posting thread for every message of the pipeline, before it is queued.
static inline void fr_set_bus_sync_handler(GstElement *pipeline, fr_bus_sync_callback callback, gpointer user_data, GDestroyNotify notify) {
    GstBus *bus = gst_element_get_bus(pipeline);
    gst_bus_set_sync_handler(bus, callback, user_data, notify);
    gst_object_unref(bus);
}

/// For a stream-status ENTER message, posted on a new streaming thread itself: the pad whose task
/// it is, and the element that owns it; NULL for any other message or source.
static inline GstPad *fr_entering_task_pad(GstMessage *message, GstElement **owner) {
    if (GST_MESSAGE_TYPE(message) != GST_MESSAGE_STREAM_STATUS) return NULL;
    GstStreamStatusType type;
    gst_message_parse_stream_status(message, &type, owner);
    if (type != GST_STREAM_STATUS_TYPE_ENTER || !GST_IS_PAD(GST_MESSAGE_SRC(message))) return NULL;
    return GST_PAD(GST_MESSAGE_SRC(message));
}

/// Calls `callback` on the first data a pad's own task moves: pushed out of a source pad, pulled
/// through a sink pad.
static inline void fr_pad_probe_task_data(GstPad *pad, GstPadProbeCallback callback, gpointer user_data, GDestroyNotify notify) {
    GstPadProbeType mask = GST_PAD_IS_SRC(pad) ? GST_PAD_PROBE_TYPE_DATA_DOWNSTREAM
        : (GstPadProbeType)(GST_PAD_PROBE_TYPE_PULL | GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST);
    gst_pad_add_probe(pad, mask, callback, user_data, notify);
}

static void fr_clear_alive_flag(gpointer alive, GObject *gone) { (void)gone; *(int *)alive = 0; }

/// Sets `*alive` to 1 now and to 0 when `object` is finalized: whether a pipeline, once released,
/// took all of its elements with it.
static inline void fr_watch_finalize(gpointer object, int *alive) {
    *alive = 1;
    g_object_weak_ref(G_OBJECT(object), fr_clear_alive_flag, alive);
}

/// At most `count` glibc malloc arenas for the whole process, and every block of at least
/// `mmap_threshold` bytes in a mapping of its own (see tuneMallocForThreadChurn).
static inline void fr_tune_malloc(int count, int mmap_threshold) {
    mallopt(M_ARENA_MAX, count);
    mallopt(M_MMAP_THRESHOLD, mmap_threshold);
}

/// Names the calling thread (Linux keeps the first 15 characters).
/// An eventfd that poll(2) sees readable once signalled, until cleared; -1 on failure (errno set).
static inline int fr_eventfd_new(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
static inline void fr_eventfd_signal(int fd) { uint64_t one = 1; (void)!write(fd, &one, sizeof one); }
static inline void fr_eventfd_clear(int fd) { uint64_t count; (void)!read(fd, &count, sizeof count); }
static inline void fr_name_current_thread(const char *name) { prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0); }


// MARK: thumbnails

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
