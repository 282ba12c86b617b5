// libcurl for Swift: curl_easy_setopt and curl_easy_getinfo are variadic,
// which Swift cannot call, so each argument type gets a typed wrapper.
#ifndef AUTHKIT_CCURL_SHIM_H
#define AUTHKIT_CCURL_SHIM_H
#include <curl/curl.h>

typedef size_t (*authkit_curl_data_callback)(char *buffer, size_t size, size_t count, void *context);
typedef int (*authkit_curl_progress_callback)(void *context, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);

static inline CURLcode authkit_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode authkit_curl_set_pointer(CURL *handle, CURLoption option, const void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode authkit_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode authkit_curl_set_data_callback(CURL *handle, CURLoption option, authkit_curl_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode authkit_curl_set_progress_callback(CURL *handle, authkit_curl_progress_callback value) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}
static inline CURLcode authkit_curl_get_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
#endif
