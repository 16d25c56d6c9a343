// Signal handlers (pad-added, no-more-pads, element-added, SRT caller-connecting), each with a
// release callback so that its owner can disconnect it. Included by shim.h only.
#ifndef FACERELAY_CGSTREAMER_SHIM_SIGNALS_H
#define FACERELAY_CGSTREAMER_SHIM_SIGNALS_H

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

#endif
