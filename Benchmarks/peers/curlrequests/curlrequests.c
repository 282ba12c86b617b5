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
//
// With `-handoff thread`, each request runs on a second thread, handed to
// it and back through a condition variable, as AuthKit's transport hands a
// transfer from its task to a worker thread and the answer back (the
// caller sleeps, the worker wakes, then the caller): the floor under that
// design, in C. With `-handoff event-loop`, the caller adds the transfer to
// a libcurl multi handle and starts it (the request is sent from the
// caller's thread) and a loop thread, asleep in epoll_wait on the
// transfer's socket, finishes it and wakes the caller: the floor of a
// design that waits on the sockets off the caller's thread without a thread
// per transfer, one wake-up a request above libcurl alone.
#include <curl/curl.h>
#include <pthread.h>
#include <sys/epoll.h>
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

static int get_one(const struct target *t) { return get(t->handle, t->url, t->headers, t->authority); }

static int post_one(const struct target *t) { return exchange(t->handle, t->url, t->headers); }

// -handoff: how a request reaches the thread that waits for its answer.
enum handoff { HANDOFF_NONE, HANDOFF_THREAD, HANDOFF_EVENT_LOOP };
static enum handoff handoff = HANDOFF_NONE;

// HANDOFF_THREAD: the request in flight for the second thread, and its result.
static struct {
    pthread_mutex_t lock;
    pthread_cond_t to_worker, to_caller;
    int (*request)(const struct target *);
    const struct target *target;
    int posted, done, result;
} slot = {.lock = PTHREAD_MUTEX_INITIALIZER, .to_worker = PTHREAD_COND_INITIALIZER,
          .to_caller = PTHREAD_COND_INITIALIZER};

static void *worker(void *unused) {
    (void)unused;
    for (;;) {
        pthread_mutex_lock(&slot.lock);
        while (!slot.posted) pthread_cond_wait(&slot.to_worker, &slot.lock);
        slot.posted = 0;
        pthread_mutex_unlock(&slot.lock);
        int result = slot.request(slot.target);
        pthread_mutex_lock(&slot.lock);
        slot.result = result;
        slot.done = 1;
        pthread_cond_signal(&slot.to_caller);
        pthread_mutex_unlock(&slot.lock);
    }
    return NULL;
}

// HANDOFF_EVENT_LOOP: one multi handle, driven under `lock` by the caller
// (which adds the transfer, so libcurl sends the request on the caller's
// thread) and by a loop thread that sleeps in epoll_wait on the sockets
// libcurl names (CURLMOPT_SOCKETFUNCTION) and finishes the transfer when
// the answer arrives. The caller sleeps until then.
static struct {
    pthread_mutex_t lock;
    pthread_cond_t finished;
    CURLM *multi;
    int epoll;
    int done;
    CURLcode code;
} loop = {.lock = PTHREAD_MUTEX_INITIALIZER, .finished = PTHREAD_COND_INITIALIZER};

static int watch_socket(CURL *easy, curl_socket_t socket, int what, void *unused, void *unused_socket) {
    (void)easy, (void)unused, (void)unused_socket;
    struct epoll_event event = {.data.fd = socket};
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(loop.epoll, EPOLL_CTL_DEL, socket, NULL);
        return 0;
    }
    event.events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
    if (epoll_ctl(loop.epoll, EPOLL_CTL_MOD, socket, &event) != 0) epoll_ctl(loop.epoll, EPOLL_CTL_ADD, socket, &event);
    return 0;
}

// Under loop.lock: a finished transfer wakes its caller.
static void reap(void) {
    CURLMsg *message;
    int left;
    while ((message = curl_multi_info_read(loop.multi, &left)) != NULL) {
        if (message->msg != CURLMSG_DONE) continue;
        loop.code = message->data.result;
        curl_multi_remove_handle(loop.multi, message->easy_handle);
        loop.done = 1;
        pthread_cond_signal(&loop.finished);
    }
}

static void *event_loop(void *unused) {
    (void)unused;
    struct epoll_event events[8];
    for (;;) {
        // Timers (libcurl's timeouts) are looked at every 10 ms at most: no
        // transfer here waits on one.
        int ready = epoll_wait(loop.epoll, events, 8, 10);
        int running;
        pthread_mutex_lock(&loop.lock);
        if (ready <= 0) curl_multi_socket_action(loop.multi, CURL_SOCKET_TIMEOUT, 0, &running);
        for (int i = 0; i < ready; i++) {
            int flags = (events[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
                        (events[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
                        (events[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
            curl_multi_socket_action(loop.multi, events[i].data.fd, flags, &running);
        }
        reap();
        pthread_mutex_unlock(&loop.lock);
    }
    return NULL;
}

// A request through the loop: prepared here as the direct one is, added and
// started here, its answer awaited.
static int run_on_loop(int (*request)(const struct target *), const struct target *t) {
    size_t bytes = 0;
    long status = 0;
    // The options `request` would set, then no perform: the loop drives it.
    prepare(t->handle, t->url, t->headers);
    if (t->authority != NULL) curl_easy_setopt(t->handle, CURLOPT_CAINFO, t->authority);
    if (request == post_one) {
        curl_easy_setopt(t->handle, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(sizeof exchange_form - 1));
        curl_easy_setopt(t->handle, CURLOPT_COPYPOSTFIELDS, exchange_form);
    }
    curl_easy_setopt(t->handle, CURLOPT_WRITEFUNCTION, count_body);
    curl_easy_setopt(t->handle, CURLOPT_WRITEDATA, &bytes);
    int running;
    pthread_mutex_lock(&loop.lock);
    loop.done = 0;
    curl_multi_add_handle(loop.multi, t->handle);
    curl_multi_socket_action(loop.multi, CURL_SOCKET_TIMEOUT, 0, &running);
    reap();
    while (!loop.done) pthread_cond_wait(&loop.finished, &loop.lock);
    CURLcode code = loop.code;
    pthread_mutex_unlock(&loop.lock);
    if (code != CURLE_OK) {
        fprintf(stderr, "curlrequests: %s: %s\n", t->url, curl_easy_strerror(code));
        return -1;
    }
    curl_easy_getinfo(t->handle, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200 || bytes == 0) {
        fprintf(stderr, "curlrequests: %s answered %ld with %zu bytes\n", t->url, status, bytes);
        return -1;
    }
    return 0;
}

// Runs one request here, on the second thread, or through the event loop.
static int run(int (*request)(const struct target *), const struct target *t) {
    if (handoff == HANDOFF_NONE) return request(t);
    if (handoff == HANDOFF_EVENT_LOOP) return run_on_loop(request, t);
    pthread_mutex_lock(&slot.lock);
    slot.request = request;
    slot.target = t;
    slot.done = 0;
    slot.posted = 1;
    pthread_cond_signal(&slot.to_worker);
    while (!slot.done) pthread_cond_wait(&slot.to_caller, &slot.lock);
    int result = slot.result;
    pthread_mutex_unlock(&slot.lock);
    return result;
}

static int get_batch(const struct target *t) {
    for (int i = 0; i < 200; i++) {
        if (run(get_one, t) != 0) return -1;
    }
    return 0;
}

static int post_exchange(const struct target *t) { return run(post_one, t); }

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
        else if (strcmp(argv[i], "-handoff") == 0) {
            if (strcmp(argv[i + 1], "thread") == 0) handoff = HANDOFF_THREAD;
            else if (strcmp(argv[i + 1], "event-loop") == 0) handoff = HANDOFF_EVENT_LOOP;
            else seconds = -1; // the usage
        }
    }
    if ((base == NULL) == (token_url == NULL) || seconds <= 0) {
        fprintf(stderr, "usage: curlrequests -base https://127.0.0.1:PORT -seconds S [-handoff thread|event-loop]\n"
                        "       curlrequests -exchange http://127.0.0.1:PORT/token -seconds S [-handoff …]\n");
        return 1;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    pthread_t second;
    if (handoff == HANDOFF_THREAD && pthread_create(&second, NULL, worker, NULL) != 0) return 1;
    if (handoff == HANDOFF_EVENT_LOOP) {
        loop.multi = curl_multi_init();
        loop.epoll = epoll_create1(EPOLL_CLOEXEC);
        if (loop.multi == NULL || loop.epoll < 0) return 1;
        curl_multi_setopt(loop.multi, CURLMOPT_SOCKETFUNCTION, watch_socket);
        if (pthread_create(&second, NULL, event_loop, NULL) != 0) return 1;
    }
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
