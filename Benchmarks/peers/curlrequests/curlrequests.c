// curlrequests: the floor under AuthKit's default transport in the
// tls-requests-sequential row. libcurl alone, from C, doing what
// CurlHTTPClient asks of it per request: one easy handle kept (so its
// connection is reused), reset and given its options again before each GET,
// the body read through a write callback. What AuthKit adds above this is
// its own; what this costs is the chosen dependency's.
//
//   curlrequests -base https://127.0.0.1:PORT -seconds S
//
// Trusts the authority SSL_CERT_FILE names (libcurl does not read the
// variable itself; AuthKit sets CURLOPT_CAINFO from it the same way).
// Prints {"ops": N, "seconds": S}, an op being a batch of 200 GETs of /me.
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static size_t count_body(char *buffer, size_t size, size_t count, void *context) {
    (void)buffer;
    *(size_t *)context += size * count;
    return size * count;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int get(CURL *handle, const char *url, struct curl_slist *headers, const char *authority) {
    size_t bytes = 0;
    long status = 0;
    curl_easy_reset(handle);
    curl_easy_setopt(handle, CURLOPT_URL, url);
    curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
    if (authority != NULL) curl_easy_setopt(handle, CURLOPT_CAINFO, authority);
    curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(handle, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(handle, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, count_body);
    curl_easy_setopt(handle, CURLOPT_WRITEDATA, &bytes);
    CURLcode code = curl_easy_perform(handle);
    if (code != CURLE_OK) {
        fprintf(stderr, "curlrequests: %s: %s\n", url, curl_easy_strerror(code));
        return -1;
    }
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200 || bytes == 0) {
        fprintf(stderr, "curlrequests: %s answered %ld with %zu bytes\n", url, status, bytes);
        return -1;
    }
    return 0;
}

static int batch(CURL *handle, const char *url, struct curl_slist *headers, const char *authority) {
    for (int i = 0; i < 200; i++) {
        if (get(handle, url, headers, authority) != 0) return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *base = NULL;
    double seconds = 2;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-base") == 0) base = argv[i + 1];
        else if (strcmp(argv[i], "-seconds") == 0) seconds = atof(argv[i + 1]);
    }
    if (base == NULL || seconds <= 0) {
        fprintf(stderr, "usage: curlrequests -base https://127.0.0.1:PORT -seconds S\n");
        return 1;
    }
    char url[512];
    snprintf(url, sizeof url, "%s/me", base);
    const char *authority = getenv("SSL_CERT_FILE");
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURL *handle = curl_easy_init();
    struct curl_slist *headers = curl_slist_append(NULL, "Authorization: Bearer bench-access");
    if (handle == NULL || headers == NULL) return 1;

    // Warm-up, as every other side's: 200 ms not counted.
    double start = now();
    while (now() - start < 0.2) {
        if (batch(handle, url, headers, authority) != 0) return 1;
    }
    long ops = 0;
    start = now();
    do {
        if (batch(handle, url, headers, authority) != 0) return 1;
        ops++;
    } while (now() - start < seconds);
    printf("{\"ops\": %ld, \"seconds\": %.6f}\n", ops, now() - start);
    curl_slist_free_all(headers);
    curl_easy_cleanup(handle);
    return 0;
}
