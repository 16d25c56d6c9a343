#ifndef FACERELAY_WEBHOOK_TRANSPORT_H
#define FACERELAY_WEBHOOK_TRANSPORT_H
// A webhook's POST (libcurl, with the system's TLS and certificates) and its signature (GLib's
// HMAC-SHA256), behind plain C types.
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    /// The response's HTTP status; 0 when none came.
    long http_status;
    /// Empty when a response came; otherwise what went wrong, in libcurl's words.
    char error[256];
} webhook_post_result;

/// Asked about once a second and on every progress while a POST waits: nonzero ends it at once.
typedef int (*webhook_should_stop)(void *context);

/// POSTs `body` to `url` (http:// or https://, redirects followed up to 5 times, to http and https
/// only) with each of `headers` ("Name: value"), waiting at most `timeout_ms` for the whole
/// exchange; the response's body is read and dropped (past 64 KiB, left unread). Safe to call from
/// several threads at once. Returns 0 when a response came (whatever its status), -1 otherwise,
/// with `result->error` saying why.
int webhook_post(const char *url, const char *const *headers, size_t header_count,
                 const uint8_t *body, size_t body_length, long timeout_ms,
                 webhook_should_stop should_stop, void *context, webhook_post_result *result);

/// HMAC-SHA256 of `data` with `key`, as 64 lowercase hex digits and a NUL, into `hex`.
void webhook_hmac_sha256_hex(const uint8_t *key, size_t key_length, const uint8_t *data, size_t length,
                             char hex[65]);

#ifdef __cplusplus
}
#endif
#endif
