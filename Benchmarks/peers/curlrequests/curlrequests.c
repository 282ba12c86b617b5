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
//
// With `-concurrency N` (the 16-at-once rows), N requests are in flight at
// once, each on its own handle and connection. Alone: N threads, each
// blocking in curl_easy_perform, with no hand-off at all (below the
// transport's workers, whose tasks also hand each transfer over and take
// the answer back). With `-handoff event-loop`: one thread drives the N
// handles on one multi handle, waiting in curl_multi_poll; no thread per
// transfer and no hand-off. An op is still a batch of 200 GETs, or one
// exchange: the count printed is the requests done ÷ 200, or the exchanges.
#include <curl/curl.h>
#include <pthread.h>
#include <sys/resource.h>
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

// The options `request` would set, its body counted in `bytes`, then no
// perform: a multi handle drives it.
static void prepare_for_multi(int (*request)(const struct target *), const struct target *t, size_t *bytes) {
    prepare(t->handle, t->url, t->headers);
    if (t->authority != NULL) curl_easy_setopt(t->handle, CURLOPT_CAINFO, t->authority);
    if (request == post_one) {
        curl_easy_setopt(t->handle, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(sizeof exchange_form - 1));
        curl_easy_setopt(t->handle, CURLOPT_COPYPOSTFIELDS, exchange_form);
    }
    curl_easy_setopt(t->handle, CURLOPT_WRITEFUNCTION, count_body);
    *bytes = 0;
    curl_easy_setopt(t->handle, CURLOPT_WRITEDATA, bytes);
}

// Whether a finished transfer got a 200 with a body; says why not.
static int answered(const struct target *t, CURLcode code, size_t bytes) {
    long status = 0;
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

// A request through the loop: prepared here as the direct one is, added and
// started here, its answer awaited.
static int run_on_loop(int (*request)(const struct target *), const struct target *t) {
    size_t bytes = 0;
    prepare_for_multi(request, t, &bytes);
    int running;
    pthread_mutex_lock(&loop.lock);
    loop.done = 0;
    curl_multi_add_handle(loop.multi, t->handle);
    curl_multi_socket_action(loop.multi, CURL_SOCKET_TIMEOUT, 0, &running);
    reap();
    while (!loop.done) pthread_cond_wait(&loop.finished, &loop.lock);
    CURLcode code = loop.code;
    pthread_mutex_unlock(&loop.lock);
    return answered(t, code, bytes);
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

// The process's user plus system time so far, every thread (getrusage),
// as the other sides measure theirs.
static double cpu_seconds(void) {
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
    return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// Warms up for 200 ms (not counted, as every other side's), then runs op
// until `seconds` have passed and prints the line, with the CPU time the
// timed loop took; 1 when an op failed.
static int measure(int (*op)(const struct target *), const struct target *t, double seconds) {
    double start = now();
    while (now() - start < 0.2) {
        if (op(t) != 0) return 1;
    }
    long ops = 0;
    double cpu = cpu_seconds();
    start = now();
    do {
        if (op(t) != 0) return 1;
        ops++;
    } while (now() - start < seconds);
    double elapsed = now() - start;
    printf("{\"ops\": %ld, \"seconds\": %.6f, \"cpu_seconds\": %.6f}\n", ops, elapsed, cpu_seconds() - cpu);
    return 0;
}

// -concurrency N: the window every thread (or the loop) counts in, after
// the same 200 ms warm-up as `measure`.
static double warm_until, count_until;

// -concurrency N without -handoff: one of the N threads, its own handle.
struct runner {
    struct target t;
    int (*one)(const struct target *);
    long done;
    int failed;
};

static void *run_alone(void *context) {
    struct runner *r = context;
    double at;
    while ((at = now()) < count_until) {
        if (r->one(&r->t) != 0) {
            r->failed = 1;
            return NULL;
        }
        if (at >= warm_until) r->done++;
    }
    return NULL;
}

// -concurrency N -handoff event-loop: the N handles on one multi handle,
// driven from this thread; each finished transfer is prepared and added
// again until the window ends. Returns the requests counted, or -1.
static long run_multi(struct runner *runners, int n) {
    CURLM *multi = curl_multi_init();
    size_t *bytes = calloc((size_t)n, sizeof *bytes);
    if (multi == NULL || bytes == NULL) return -1;
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, (long)n);
    for (int i = 0; i < n; i++) {
        prepare_for_multi(runners[i].one, &runners[i].t, &bytes[i]);
        curl_easy_setopt(runners[i].t.handle, CURLOPT_PRIVATE, (void *)&runners[i]);
        curl_multi_add_handle(multi, runners[i].t.handle);
    }
    long done = 0;
    int running = n, failed = 0;
    while (running > 0 && !failed) {
        curl_multi_perform(multi, &running);
        CURLMsg *message;
        int left;
        while ((message = curl_multi_info_read(multi, &left)) != NULL) {
            if (message->msg != CURLMSG_DONE) continue;
            struct runner *r;
            curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, (char **)&r);
            int i = (int)(r - runners);
            curl_multi_remove_handle(multi, r->t.handle);
            if (answered(&r->t, message->data.result, bytes[i]) != 0) failed = 1;
            double at = now();
            if (at >= warm_until && at < count_until) done++;
            if (at < count_until && !failed) {
                prepare_for_multi(r->one, &r->t, &bytes[i]);
                curl_easy_setopt(r->t.handle, CURLOPT_PRIVATE, (void *)r);
                curl_multi_add_handle(multi, r->t.handle);
                running++;
            }
        }
        if (running > 0) curl_multi_poll(multi, NULL, 0, 100, NULL);
    }
    curl_multi_cleanup(multi);
    free(bytes);
    return failed ? -1 : done;
}

// N requests at once (see the top), each runner's target a copy of `t`
// with a handle of its own. Prints the line; 1 when a request failed.
static int measure_concurrently(int (*one)(const struct target *), const struct target *t, int n, double seconds,
                                double per_op) {
    struct runner *runners = calloc((size_t)n, sizeof *runners);
    pthread_t *threads = calloc((size_t)n, sizeof *threads);
    if (runners == NULL || threads == NULL) return 1;
    for (int i = 0; i < n; i++) {
        runners[i].t = *t;
        runners[i].t.handle = curl_easy_init();
        runners[i].one = one;
        if (runners[i].t.handle == NULL) return 1;
    }
    warm_until = now() + 0.2;
    count_until = warm_until + seconds;
    long done = 0;
    int failed = 0;
    if (handoff == HANDOFF_EVENT_LOOP) {
        done = run_multi(runners, n);
        failed = done < 0;
    } else {
        for (int i = 0; i < n; i++) {
            if (pthread_create(&threads[i], NULL, run_alone, &runners[i]) != 0) return 1;
        }
        for (int i = 0; i < n; i++) {
            pthread_join(threads[i], NULL);
            done += runners[i].done;
            failed |= runners[i].failed;
        }
    }
    for (int i = 0; i < n; i++) curl_easy_cleanup(runners[i].t.handle);
    free(runners);
    free(threads);
    if (failed) return 1;
    printf("{\"ops\": %.3f, \"seconds\": %.6f}\n", (double)done / per_op, seconds);
    return 0;
}

int main(int argc, char **argv) {
    const char *base = NULL, *token_url = NULL;
    double seconds = 2;
    int concurrency = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-base") == 0) base = argv[i + 1];
        else if (strcmp(argv[i], "-exchange") == 0) token_url = argv[i + 1];
        else if (strcmp(argv[i], "-seconds") == 0) seconds = atof(argv[i + 1]);
        else if (strcmp(argv[i], "-concurrency") == 0) concurrency = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-handoff") == 0) {
            if (strcmp(argv[i + 1], "thread") == 0) handoff = HANDOFF_THREAD;
            else if (strcmp(argv[i + 1], "event-loop") == 0) handoff = HANDOFF_EVENT_LOOP;
            else seconds = -1; // the usage
        }
    }
    if ((base == NULL) == (token_url == NULL) || seconds <= 0 || concurrency < 1 ||
        (concurrency > 1 && handoff == HANDOFF_THREAD)) {
        fprintf(stderr, "usage: curlrequests -base https://127.0.0.1:PORT -seconds S [-handoff thread|event-loop]\n"
                        "       curlrequests -exchange http://127.0.0.1:PORT/token -seconds S [-handoff …]\n"
                        "       either with -concurrency N [-handoff event-loop]\n");
        return 1;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    pthread_t second;
    if (handoff == HANDOFF_THREAD && pthread_create(&second, NULL, worker, NULL) != 0) return 1;
    if (handoff == HANDOFF_EVENT_LOOP && concurrency == 1) {
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
        failed = concurrency > 1 ? measure_concurrently(post_one, &t, concurrency, seconds, 1)
                                 : measure(post_exchange, &t, seconds);
    } else {
        snprintf(url, sizeof url, "%s/me", base);
        t.authority = getenv("SSL_CERT_FILE");
        t.headers = curl_slist_append(NULL, "Authorization: Bearer bench-access");
        if (t.handle == NULL || t.headers == NULL) return 1;
        failed = concurrency > 1 ? measure_concurrently(get_one, &t, concurrency, seconds, 200)
                                 : measure(get_batch, &t, seconds);
    }
    curl_slist_free_all(t.headers);
    curl_easy_cleanup(t.handle);
    return failed;
}
