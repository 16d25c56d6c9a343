// A webhook body's signature with GLib's HMAC (already loaded by GStreamer and librsvg).
#include "webhook_transport.h"

#include <glib.h>
#include <string.h>

void webhook_hmac_sha256_hex(const uint8_t *key, size_t key_length, const uint8_t *data, size_t length,
                             char hex[65]) {
    gchar *digest = g_compute_hmac_for_data(G_CHECKSUM_SHA256, key, key_length, data, length);
    // G_CHECKSUM_SHA256 gives 64 lowercase hex digits; GLib returns NULL only for a digest it lacks.
    if (digest != NULL && strlen(digest) == 64) memcpy(hex, digest, 65);
    else hex[0] = '\0';
    g_free(digest);
}
