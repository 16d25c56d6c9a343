// Pipelines and elements: GStreamer start-up, parsing descriptions, bins, properties. Included by shim.h only.
#ifndef FACERELAY_CGSTREAMER_SHIM_ELEMENTS_H
#define FACERELAY_CGSTREAMER_SHIM_ELEMENTS_H

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

#endif
