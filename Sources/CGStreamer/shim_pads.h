// Pads: linking, and the pad probes that count bytes and buffers and decide whether an FLV carries
// audio. Included by shim.h only.
#ifndef FACERELAY_CGSTREAMER_SHIM_PADS_H
#define FACERELAY_CGSTREAMER_SHIM_PADS_H

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

#endif
