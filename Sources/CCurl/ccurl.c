#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include "ccurl.h"

// The libcurl functions used, bound by ccurl_load.
static struct {
    CURLcode (*global_init)(long);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_add_handle)(CURLM *, CURL *);
    CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
    CURLMcode (*multi_perform)(CURLM *, int *);
    CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd *, unsigned, int, int *);
    CURLMcode (*multi_wakeup)(CURLM *);
    CURLMsg *(*multi_info_read)(CURLM *, int *);
    CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
    CURLMcode (*multi_socket_action)(CURLM *, curl_socket_t, int, int *);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    void (*easy_reset)(CURL *);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} curl;

static char load_error[512];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(load_error, sizeof load_error, "%s", dlerror());
        return;
    }
    // A missing symbol (a libcurl older than 7.68, which has no curl_multi_poll/wakeup) is reported by name.
#define BIND(field, name)                                                                    \
    if ((*(void **)&curl.field = dlsym(library, name)) == NULL) {                            \
        snprintf(load_error, sizeof load_error, "libcurl.so.4 has no %s (libcurl 7.68 or later is needed)", name); \
        return;                                                                              \
    }
    BIND(global_init, "curl_global_init")
    BIND(multi_init, "curl_multi_init")
    BIND(multi_add_handle, "curl_multi_add_handle")
    BIND(multi_remove_handle, "curl_multi_remove_handle")
    BIND(multi_perform, "curl_multi_perform")
    BIND(multi_poll, "curl_multi_poll")
    BIND(multi_wakeup, "curl_multi_wakeup")
    BIND(multi_info_read, "curl_multi_info_read")
    BIND(multi_setopt, "curl_multi_setopt")
    BIND(multi_socket_action, "curl_multi_socket_action")
    BIND(easy_init, "curl_easy_init")
    BIND(easy_cleanup, "curl_easy_cleanup")
    BIND(easy_reset, "curl_easy_reset")
    BIND(easy_setopt, "curl_easy_setopt")
    BIND(easy_getinfo, "curl_easy_getinfo")
    BIND(slist_append, "curl_slist_append")
    BIND(slist_free_all, "curl_slist_free_all")
#undef BIND
}

const char *ccurl_load(void) {
    pthread_once(&load_once, load);
    return load_error[0] ? load_error : NULL;
}

CURLcode ccurl_global_init(long flags) { return curl.global_init(flags); }
CURLM *ccurl_multi_init(void) { return curl.multi_init(); }
CURLMcode ccurl_multi_add_handle(CURLM *multi, CURL *easy) { return curl.multi_add_handle(multi, easy); }
CURLMcode ccurl_multi_remove_handle(CURLM *multi, CURL *easy) { return curl.multi_remove_handle(multi, easy); }
CURLMcode ccurl_multi_perform(CURLM *multi, int *running) { return curl.multi_perform(multi, running); }
CURLMcode ccurl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned count, int timeout_ms, int *ready) {
    return curl.multi_poll(multi, extra, count, timeout_ms, ready);
}
CURLMcode ccurl_multi_wakeup(CURLM *multi) { return curl.multi_wakeup(multi); }
CURLMsg *ccurl_multi_info_read(CURLM *multi, int *left) { return curl.multi_info_read(multi, left); }
CURL *ccurl_easy_init(void) { return curl.easy_init(); }
void ccurl_easy_cleanup(CURL *easy) { curl.easy_cleanup(easy); }
void ccurl_easy_reset(CURL *easy) { curl.easy_reset(easy); }
struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *line) { return curl.slist_append(list, line); }
void ccurl_slist_free_all(struct curl_slist *list) { curl.slist_free_all(list); }

CURLcode ccurl_setopt_long(CURL *easy, CURLoption option, long value) { return curl.easy_setopt(easy, option, value); }
CURLcode ccurl_setopt_pointer(CURL *easy, CURLoption option, const void *value) { return curl.easy_setopt(easy, option, value); }
CURLcode ccurl_setopt_string(CURL *easy, CURLoption option, const char *value) { return curl.easy_setopt(easy, option, value); }
CURLcode ccurl_setopt_write(CURL *easy, CURLoption option, curl_write_callback callback) {
    return curl.easy_setopt(easy, option, callback);
}
CURLcode ccurl_setopt_sockopt(CURL *easy, curl_sockopt_callback callback) {
    return curl.easy_setopt(easy, CURLOPT_SOCKOPTFUNCTION, callback);
}
CURLcode ccurl_setopt_closesocket(CURL *easy, curl_closesocket_callback callback) {
    return curl.easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, callback);
}
CURLcode ccurl_getinfo_long(CURL *easy, CURLINFO info, long *value) { return curl.easy_getinfo(easy, info, value); }
CURLMcode ccurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) { return curl.multi_setopt(multi, option, value); }
CURLMcode ccurl_multi_socket_action(CURLM *multi, curl_socket_t socket, int events, int *running) {
    return curl.multi_socket_action(multi, socket, events, running);
}
CURLMcode ccurl_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value) { return curl.multi_setopt(multi, option, value); }
CURLMcode ccurl_multi_setopt_socket(CURLM *multi, curl_socket_callback callback) {
    return curl.multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, callback);
}
CURLMcode ccurl_multi_setopt_timer(CURLM *multi, curl_multi_timer_callback callback) {
    return curl.multi_setopt(multi, CURLMOPT_TIMERFUNCTION, callback);
}
