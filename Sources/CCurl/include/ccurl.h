#ifndef CCURL_H
#define CCURL_H

#include <curl/curl.h>

// libcurl through dlopen: the library (with its TLS stack and their dependencies, about twenty objects) is
// mapped by the first request, not at start-up. Each function below calls the libcurl function of the same
// name after `ccurl_load` succeeded; calling one before is a programming error.

// Loads libcurl.so.4 once (thread-safe); NULL when it is loaded, else why it could not be (dlerror's text).
const char *ccurl_load(void);

CURLcode ccurl_global_init(long flags);
CURLM *ccurl_multi_init(void);
CURLMcode ccurl_multi_add_handle(CURLM *multi, CURL *easy);
CURLMcode ccurl_multi_remove_handle(CURLM *multi, CURL *easy);
CURLMcode ccurl_multi_perform(CURLM *multi, int *running);
CURLMcode ccurl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned count, int timeout_ms, int *ready);
CURLMcode ccurl_multi_wakeup(CURLM *multi);
CURLMsg *ccurl_multi_info_read(CURLM *multi, int *left);
CURL *ccurl_easy_init(void);
void ccurl_easy_cleanup(CURL *easy);
void ccurl_easy_reset(CURL *easy);
struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *line);
void ccurl_slist_free_all(struct curl_slist *list);

// curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic, which Swift cannot call: one typed
// function per argument kind.
CURLcode ccurl_setopt_long(CURL *easy, CURLoption option, long value);
CURLcode ccurl_setopt_pointer(CURL *easy, CURLoption option, const void *value);
CURLcode ccurl_setopt_string(CURL *easy, CURLoption option, const char *value);
CURLcode ccurl_setopt_write(CURL *easy, CURLoption option, curl_write_callback callback);
// CURLOPT_SOCKOPTFUNCTION (called with each socket libcurl makes, before it connects) and
// CURLOPT_CLOSESOCKETFUNCTION (called to close each socket the former saw).
CURLcode ccurl_setopt_sockopt(CURL *easy, curl_sockopt_callback callback);
CURLcode ccurl_setopt_closesocket(CURL *easy, curl_closesocket_callback callback);
CURLcode ccurl_getinfo_long(CURL *easy, CURLINFO info, long *value);
CURLMcode ccurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);
CURLMcode ccurl_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value);
CURLMcode ccurl_multi_setopt_socket(CURLM *multi, curl_socket_callback callback);
CURLMcode ccurl_multi_setopt_timer(CURLM *multi, curl_multi_timer_callback callback);

// The multi handle driven by its caller's event loop (curl_multi_socket_action, "libcurl-multi"): the socket
// callback says which descriptors to wait on, the timer callback when to call again with CURL_SOCKET_TIMEOUT.
CURLMcode ccurl_multi_socket_action(CURLM *multi, curl_socket_t socket, int events, int *running);

#endif
