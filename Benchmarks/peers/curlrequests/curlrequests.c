// curlrequests: the floor under AuthKit's default transport in the
// tls-requests-sequential and exchanges-sequential rows. libcurl alone, from
// C, doing what CurlHTTPClient asks of it per request: one easy handle kept
// (so its connection is reused), reset and given its options again before
// each request, the body read through a write callback. What AuthKit adds
// above this is its own; what this costs is the chosen dependency's.
//
//   curlrequests -base https://127.0.0.1:PORT -seconds S
//   curlrequests -exchange http://127.0.0.1:PORT/token -seconds S
//
// The first: an op is a batch of 200 GETs of /me with a bearer token. It
// trusts the authority SSL_CERT_FILE names (libcurl does not read the
// variable itself; AuthKit sets CURLOPT_CAINFO from it the same way).
// The second: an op is one code exchange's POST, the form every side sends
// (grant_type, code, redirect_uri, client_id, client_secret, a 43-character
// code_verifier), its JSON answer read; no state, PKCE or JSON parsing.
// Prints {"ops": N, "seconds": S}.
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

// The options every request starts from, after the reset.
static void prepare(CURL *handle, const char *url, struct curl_slist *headers) {
    curl_easy_reset(handle);
    curl_easy_setopt(handle, CURLOPT_URL, url);
    curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(handle, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(handle, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
}

// Runs the prepared request, its body counted; 0 for a 200 with a body.
static int perform(CURL *handle, const char *url) {
    size_t bytes = 0;
    long status = 0;
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

static int get(CURL *handle, const char *url, struct curl_slist *headers, const char *authority) {
    prepare(handle, url, headers);
    if (authority != NULL) curl_easy_setopt(handle, CURLOPT_CAINFO, authority);
    return perform(handle, url);
}

static int batch(CURL *handle, const char *url, struct curl_slist *headers, const char *authority) {
    for (int i = 0; i < 200; i++) {
        if (get(handle, url, headers, authority) != 0) return -1;
    }
    return 0;
}

static const char exchange_form[] =
    "grant_type=authorization_code&code=bench-code&redirect_uri=http%3A%2F%2F127.0.0.1%3A8765%2Fcallback"
    "&client_id=bench-client&client_secret=bench-secret"
    "&code_verifier=dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

static int exchange(CURL *handle, const char *url, struct curl_slist *headers) {
    prepare(handle, url, headers);
    curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(sizeof exchange_form - 1));
    curl_easy_setopt(handle, CURLOPT_COPYPOSTFIELDS, exchange_form);
    return perform(handle, url);
}

// What an op runs against: the kept handle, the URL, the headers.
struct target {
    CURL *handle;
    const char *url;
    struct curl_slist *headers;
    const char *authority;
};

static int get_batch(const struct target *t) { return batch(t->handle, t->url, t->headers, t->authority); }

static int post_exchange(const struct target *t) { return exchange(t->handle, t->url, t->headers); }

// Warms up for 200 ms (not counted, as every other side's), then runs op
// until `seconds` have passed and prints the line; 1 when an op failed.
static int measure(int (*op)(const struct target *), const struct target *t, double seconds) {
    double start = now();
    while (now() - start < 0.2) {
        if (op(t) != 0) return 1;
    }
    long ops = 0;
    start = now();
    do {
        if (op(t) != 0) return 1;
        ops++;
    } while (now() - start < seconds);
    printf("{\"ops\": %ld, \"seconds\": %.6f}\n", ops, now() - start);
    return 0;
}

int main(int argc, char **argv) {
    const char *base = NULL, *token_url = NULL;
    double seconds = 2;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-base") == 0) base = argv[i + 1];
        else if (strcmp(argv[i], "-exchange") == 0) token_url = argv[i + 1];
        else if (strcmp(argv[i], "-seconds") == 0) seconds = atof(argv[i + 1]);
    }
    if ((base == NULL) == (token_url == NULL) || seconds <= 0) {
        fprintf(stderr, "usage: curlrequests -base https://127.0.0.1:PORT -seconds S\n"
                        "       curlrequests -exchange http://127.0.0.1:PORT/token -seconds S\n");
        return 1;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    char url[512];
    struct target t = {curl_easy_init(), url, NULL, NULL};
    int failed;
    if (token_url != NULL) {
        snprintf(url, sizeof url, "%s", token_url);
        t.headers = curl_slist_append(NULL, "Accept: application/json");
        t.headers = curl_slist_append(t.headers, "Content-Type: application/x-www-form-urlencoded");
        t.headers = curl_slist_append(t.headers, "Expect:");
        if (t.handle == NULL || t.headers == NULL) return 1;
        failed = measure(post_exchange, &t, seconds);
    } else {
        snprintf(url, sizeof url, "%s/me", base);
        t.authority = getenv("SSL_CERT_FILE");
        t.headers = curl_slist_append(NULL, "Authorization: Bearer bench-access");
        if (t.handle == NULL || t.headers == NULL) return 1;
        failed = measure(get_batch, &t, seconds);
    }
    curl_slist_free_all(t.headers);
    curl_easy_cleanup(t.handle);
    return failed;
}
