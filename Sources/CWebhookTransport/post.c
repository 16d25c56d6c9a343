// One webhook POST with libcurl's easy interface: a handle of its own per call, so calls on
// several threads never share state.
#include "webhook_transport.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum { response_body_limit = 64 * 1024 };

static pthread_once_t curl_ready = PTHREAD_ONCE_INIT;
static CURLcode curl_global_status = CURLE_FAILED_INIT;

// curl_global_init is not safe to call while another thread uses libcurl: once, before any handle.
static void initialise_curl(void) { curl_global_status = curl_global_init(CURL_GLOBAL_DEFAULT); }

typedef struct {
    webhook_should_stop should_stop;
    void *context;
    size_t body_read;
    int over_limit;
} transfer_state;

static size_t drop_body(char *data, size_t size, size_t count, void *user) {
    (void)data;
    transfer_state *state = user;
    state->body_read += size * count;
    if (state->body_read > response_body_limit) {
        state->over_limit = 1;
        return 0;  // ends the transfer; the status line has been read
    }
    return size * count;
}

static int check_stop(void *user, curl_off_t download_total, curl_off_t downloaded, curl_off_t upload_total,
                      curl_off_t uploaded) {
    (void)download_total, (void)downloaded, (void)upload_total, (void)uploaded;
    transfer_state *state = user;
    return state->should_stop != NULL && state->should_stop(state->context) ? 1 : 0;
}

static int fail(webhook_post_result *result, const char *message) {
    snprintf(result->error, sizeof result->error, "%s", message);
    return -1;
}

int webhook_post(const char *url, const char *const *headers, size_t header_count,
                 const uint8_t *body, size_t body_length, long timeout_ms,
                 webhook_should_stop should_stop, void *context, webhook_post_result *result) {
    result->http_status = 0;
    result->error[0] = '\0';
    pthread_once(&curl_ready, initialise_curl);
    if (curl_global_status != CURLE_OK) return fail(result, curl_easy_strerror(curl_global_status));
    CURL *curl = curl_easy_init();
    if (curl == NULL) return fail(result, "libcurl could not make a handle (out of memory?)");

    struct curl_slist *header_list = NULL;
    // Without this libcurl asks for "100 Continue" before a body of over 1 KiB and waits a second
    // for a receiver that does not answer it.
    int headers_ok = (header_list = curl_slist_append(header_list, "Expect:")) != NULL;
    for (size_t index = 0; headers_ok && index < header_count; index++) {
        struct curl_slist *longer = curl_slist_append(header_list, headers[index]);
        headers_ok = longer != NULL;
        if (headers_ok) header_list = longer;
    }
    if (!headers_ok) {
        curl_slist_free_all(header_list);
        curl_easy_cleanup(curl);
        return fail(result, "libcurl could not hold the headers (out of memory?)");
    }

    transfer_state state = {should_stop, context, 0, 0};
    char detail[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(curl, CURLOPT_POSTREDIR, (long)CURL_REDIR_POST_ALL);  // a redirected POST stays a POST
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, header_list);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, (const char *)body);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_length);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM for name look-ups in a threaded process
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, drop_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &state);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, check_stop);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &state);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, detail);

    CURLcode code = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result->http_status);
    curl_slist_free_all(header_list);
    curl_easy_cleanup(curl);
    if (code == CURLE_OK || (code == CURLE_WRITE_ERROR && state.over_limit && result->http_status != 0)) return 0;
    result->http_status = 0;
    if (code == CURLE_ABORTED_BY_CALLBACK) return fail(result, "stopped: the service is shutting down");
    return fail(result, detail[0] != '\0' ? detail : curl_easy_strerror(code));
}
