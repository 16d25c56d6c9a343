// Bus messages, element states, and the streaming threads: their names, wake-ups (eventfd) and
// malloc tuning. Included by shim.h only.
#ifndef FACERELAY_CGSTREAMER_SHIM_BUS_H
#define FACERELAY_CGSTREAMER_SHIM_BUS_H

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

static void fr_post_finalized(gpointer finalized, GObject *gone) { (void)gone; sem_post((sem_t *)finalized); }

/// Posts `finalized` when `object` is finalized, on whichever thread drops its last reference:
/// whether a pipeline, once released, took all of its elements with it.
static inline void fr_watch_finalize(gpointer object, sem_t *finalized) {
    g_object_weak_ref(G_OBJECT(object), fr_post_finalized, finalized);
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

#endif
