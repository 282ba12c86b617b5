// Linux only: SwiftPM builds every target of the package on any host, and
// <link.h>, <sys/prctl.h> and the rest exist only there. Elsewhere this file is empty.
#if defined(__linux__)

// dladdr1, dlinfo(RTLD_DI_SERINFO) and RTLD_DL_LINKMAP are GNU extensions.
#define _GNU_SOURCE
#include "authkit_curl.h"
#include "authkit_loader.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>

// The sonames libcurl4 and its -dev package install, in the order tried.
static const char *const library_names[] = {"libcurl.so.4", "libcurl.so"};

static struct {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *handle);
    void (*easy_reset)(CURL *handle);
    CURLcode (*easy_perform)(CURL *handle);
    const char *(*easy_strerror)(CURLcode code);
    CURLcode (*easy_setopt)(CURL *handle, CURLoption option, ...);
    CURLcode (*easy_getinfo)(CURL *handle, CURLINFO info, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *string);
    void (*slist_free_all)(struct curl_slist *list);
    CURLSH *(*share_init)(void);
    CURLSHcode (*share_setopt)(CURLSH *share, CURLSHoption option, ...);
    CURLSHcode (*share_cleanup)(CURLSH *share);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_cleanup)(CURLM *multi);
    CURLMcode (*multi_setopt)(CURLM *multi, CURLMoption option, ...);
    CURLMcode (*multi_add_handle)(CURLM *multi, CURL *handle);
    CURLMcode (*multi_remove_handle)(CURLM *multi, CURL *handle);
    CURLMcode (*multi_socket_action)(CURLM *multi, curl_socket_t socket, int mask, int *running);
    CURLMsg *(*multi_info_read)(CURLM *multi, int *left);
    CURLMcode (*multi_assign)(CURLM *multi, curl_socket_t socket, void *pointer);
    const char *(*multi_strerror)(CURLMcode code);
} api;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_error[512];
// Set before anything starts the load: authkit_curl_settle waits only then.
static atomic_int load_requested;

static int resolve(void *library, void **slot, const char *name) {
    *slot = dlsym(library, name);
    if (*slot == NULL) {
        snprintf(load_error, sizeof load_error, "libcurl was found but has no %s; install a current libcurl (Debian: apt-get install libcurl4)", name);
        return -1;
    }
    return 0;
}

static void load(void) {
    void *library = authkit_open_library(library_names, sizeof library_names / sizeof *library_names, "libcurl",
                                         "libcurl4", load_error, sizeof load_error);
    if (library == NULL) return;
    if (resolve(library, (void **)&api.global_init, "curl_global_init") ||
        resolve(library, (void **)&api.easy_init, "curl_easy_init") ||
        resolve(library, (void **)&api.easy_cleanup, "curl_easy_cleanup") ||
        resolve(library, (void **)&api.easy_reset, "curl_easy_reset") ||
        resolve(library, (void **)&api.easy_perform, "curl_easy_perform") ||
        resolve(library, (void **)&api.easy_strerror, "curl_easy_strerror") ||
        resolve(library, (void **)&api.easy_setopt, "curl_easy_setopt") ||
        resolve(library, (void **)&api.easy_getinfo, "curl_easy_getinfo") ||
        resolve(library, (void **)&api.slist_append, "curl_slist_append") ||
        resolve(library, (void **)&api.slist_free_all, "curl_slist_free_all") ||
        resolve(library, (void **)&api.share_init, "curl_share_init") ||
        resolve(library, (void **)&api.share_setopt, "curl_share_setopt") ||
        resolve(library, (void **)&api.share_cleanup, "curl_share_cleanup") ||
        resolve(library, (void **)&api.multi_init, "curl_multi_init") ||
        resolve(library, (void **)&api.multi_cleanup, "curl_multi_cleanup") ||
        resolve(library, (void **)&api.multi_setopt, "curl_multi_setopt") ||
        resolve(library, (void **)&api.multi_add_handle, "curl_multi_add_handle") ||
        resolve(library, (void **)&api.multi_remove_handle, "curl_multi_remove_handle") ||
        resolve(library, (void **)&api.multi_socket_action, "curl_multi_socket_action") ||
        resolve(library, (void **)&api.multi_info_read, "curl_multi_info_read") ||
        resolve(library, (void **)&api.multi_assign, "curl_multi_assign") ||
        resolve(library, (void **)&api.multi_strerror, "curl_multi_strerror")) {
        return;
    }
    CURLcode code = api.global_init(CURL_GLOBAL_DEFAULT);
    if (code != CURLE_OK) {
        snprintf(load_error, sizeof load_error, "libcurl did not initialise (%s)", api.easy_strerror(code));
    }
}

int authkit_curl_load(char *error, size_t size) {
    atomic_store(&load_requested, 1);
    pthread_once(&load_once, load);
    if (load_error[0] == '\0') return 0;
    if (error != NULL && size > 0) snprintf(error, size, "%s", load_error);
    return -1;
}

static pthread_once_t preload_once = PTHREAD_ONCE_INIT;

static void *preload_thread(void *unused) {
    (void)unused;
    pthread_once(&load_once, load);
    return NULL;
}

static void start_preload(void) {
    pthread_attr_t attributes;
    pthread_t thread;
    if (pthread_attr_init(&attributes) != 0) return;
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    // Without a thread, the first request loads the library itself.
    (void)pthread_create(&thread, &attributes, preload_thread, NULL);
    pthread_attr_destroy(&attributes);
}

void authkit_curl_preload(void) {
    atomic_store(&load_requested, 1);
    pthread_once(&preload_once, start_preload);
}

// pthread_once returns only once the load (run here, or on the thread that
// began it) is complete.
void authkit_curl_settle(void) {
    if (atomic_load(&load_requested)) pthread_once(&load_once, load);
}

void authkit_curl_name_thread(const char *name) { (void)prctl(PR_SET_NAME, name, 0, 0, 0); }

int authkit_curl_schedule_as_batch(void) {
    struct sched_param param = {.sched_priority = 0};
    return pthread_setschedparam(pthread_self(), SCHED_BATCH, &param);
}

CURL *authkit_curl_easy_init(void) { return api.easy_init(); }
void authkit_curl_easy_cleanup(CURL *handle) { api.easy_cleanup(handle); }
void authkit_curl_easy_reset(CURL *handle) { api.easy_reset(handle); }
CURLcode authkit_curl_easy_perform(CURL *handle) { return api.easy_perform(handle); }
const char *authkit_curl_easy_strerror(CURLcode code) { return api.easy_strerror(code); }
const char *authkit_curl_multi_strerror(CURLMcode code) { return api.multi_strerror(code); }
struct curl_slist *authkit_curl_slist_append(struct curl_slist *list, const char *string) { return api.slist_append(list, string); }
void authkit_curl_slist_free_all(struct curl_slist *list) { api.slist_free_all(list); }

CURLcode authkit_curl_set_long(CURL *handle, CURLoption option, long value) { return api.easy_setopt(handle, option, value); }
CURLcode authkit_curl_set_pointer(CURL *handle, CURLoption option, const void *value) { return api.easy_setopt(handle, option, value); }
CURLcode authkit_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) { return api.easy_setopt(handle, option, value); }
CURLcode authkit_curl_set_data_callback(CURL *handle, CURLoption option, authkit_curl_data_callback value) { return api.easy_setopt(handle, option, value); }
CURLcode authkit_curl_set_progress_callback(CURL *handle, authkit_curl_progress_callback value) { return api.easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value); }
CURLcode authkit_curl_set_prereq_callback(CURL *handle, authkit_curl_prereq_callback value) { return api.easy_setopt(handle, CURLOPT_PREREQFUNCTION, value); }
CURLcode authkit_curl_get_long(CURL *handle, CURLINFO info, long *value) { return api.easy_getinfo(handle, info, value); }

// A share: one connection cache (and TLS session and DNS caches) for all the
// easy handles of a pool, so a connection another worker left open is
// reused, and a new one resumes a TLS session. libcurl locks each kind of
// shared data through the callbacks below, one mutex per kind.
struct authkit_curl_share {
    CURLSH *share;
    pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
};

static void share_lock(CURL *handle, curl_lock_data data, curl_lock_access access, void *user) {
    (void)handle;
    (void)access;
    pthread_mutex_lock(&((struct authkit_curl_share *)user)->locks[data]);
}

static void share_unlock(CURL *handle, curl_lock_data data, void *user) {
    (void)handle;
    pthread_mutex_unlock(&((struct authkit_curl_share *)user)->locks[data]);
}

struct authkit_curl_share *authkit_curl_share_new(void) {
    struct authkit_curl_share *shared = calloc(1, sizeof *shared);
    if (shared == NULL) return NULL;
    shared->share = api.share_init();
    if (shared->share == NULL) {
        free(shared);
        return NULL;
    }
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_init(&shared->locks[i], NULL);
    api.share_setopt(shared->share, CURLSHOPT_LOCKFUNC, share_lock);
    api.share_setopt(shared->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
    api.share_setopt(shared->share, CURLSHOPT_USERDATA, shared);
    // TLS sessions (a new connection resumes one instead of a full
    // handshake) and DNS answers. Not the connection cache: libcurl does
    // not support sharing connections between threads (CURLSHOPT_SHARE:
    // "It is not supported to share connections between multiple concurrent
    // threads"; curl issues 4915, 9404), and a race checker saw one thread
    // read a connection another was writing. Each worker's handle keeps its
    // own connections; transfers go to the worker that last spoke to their
    // origin (CurlWorkers).
    if (api.share_setopt(shared->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) != CURLSHE_OK) {
        authkit_curl_share_free(shared);
        return NULL;
    }
    (void)api.share_setopt(shared->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    return shared;
}

void authkit_curl_share_free(struct authkit_curl_share *shared) {
    if (shared == NULL) return;
    api.share_cleanup(shared->share);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_destroy(&shared->locks[i]);
    free(shared);
}

CURLcode authkit_curl_use_share(CURL *handle, struct authkit_curl_share *shared) {
    return api.easy_setopt(handle, CURLOPT_SHARE, shared == NULL ? NULL : shared->share);
}

// MARK: - The event loop

enum { JOB_IDLE, JOB_ACTIVE, JOB_ENDED };

// Handles kept with their jobs for the next transfers; past this many idle
// ones, a handed-back job keeps no handle (its connections are the multi's).
enum { KEPT_IDLE_HANDLES = 32 };
// While transfers run, and for five seconds after the last one ended, the
// loop wakes at least once a second: a transfer added then (the next token
// call of a busy process) finds it waking soon enough for libcurl's timers
// (the low-speed check, a transfer's timeout), and needs no wake-up of its
// own. Idle longer, it sleeps until a transfer comes.
enum { LINGER_MS = 1000, LINGER_SPAN_MS = 5000 };
static const long long NEVER = -1;

struct authkit_curl_loop {
    pthread_mutex_t lock;
    CURLM *multi;
    int epoll;
    int wake;
    pthread_t thread;
    authkit_curl_done_callback done;
    // When libcurl asked to be called for its timers (NEVER: not at all),
    // and when the loop will wake by itself.
    long long timer_due;
    long long planned_wake;
    int active;
    // When a transfer last started or ended.
    long long last_active;
    struct authkit_curl_job *idle;
    int idle_handles;
    // Jobs ended in the current call, their `done` still to run.
    struct authkit_curl_job *ended;
    // Sockets libcurl let go of since the loop last began to wait (all of
    // them, past `removed_overflow`): an event epoll reports for such a
    // number may be the closed socket's, and the number a new socket's
    // now. Skipped, as epoll (level-triggered) reports a live one again.
    curl_socket_t removed[16];
    int removed_count;
    int removed_overflow;
};

// Set while this thread is inside a libcurl call on a loop's multi handle
// (its callbacks run then, under the lock).
static __thread int driving_here;

static long long now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static void wake_loop(struct authkit_curl_loop *loop) {
    uint64_t one = 1;
    (void)!write(loop->wake, &one, sizeof one);
}

// libcurl's CURLMOPT_SOCKETFUNCTION: which sockets the loop waits on, for what.
static int on_socket(CURL *easy, curl_socket_t socket, int what, void *user, void *assigned) {
    (void)easy;
    struct authkit_curl_loop *loop = user;
    if (what == CURL_POLL_REMOVE) {
        (void)epoll_ctl(loop->epoll, EPOLL_CTL_DEL, socket, NULL);
        api.multi_assign(loop->multi, socket, NULL);
        if (loop->removed_count < (int)(sizeof loop->removed / sizeof loop->removed[0])) {
            loop->removed[loop->removed_count++] = socket;
        } else {
            loop->removed_overflow = 1;
        }
        return 0;
    }
    struct epoll_event event = {0};
    event.events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
    event.data.fd = socket;
    if (assigned != NULL) {
        if (epoll_ctl(loop->epoll, EPOLL_CTL_MOD, socket, &event) == 0) return 0;
    }
    if (epoll_ctl(loop->epoll, EPOLL_CTL_ADD, socket, &event) != 0 && errno == EEXIST) {
        (void)epoll_ctl(loop->epoll, EPOLL_CTL_MOD, socket, &event);
    }
    api.multi_assign(loop->multi, socket, (void *)1);
    return 0;
}

// Whether `socket` was let go of since the loop began to wait (see `removed`).
static int was_removed(const struct authkit_curl_loop *loop, curl_socket_t socket) {
    if (loop->removed_overflow) return 1;
    for (int i = 0; i < loop->removed_count; i++) {
        if (loop->removed[i] == socket) return 1;
    }
    return 0;
}

// libcurl's CURLMOPT_TIMERFUNCTION: when to call it for its timers.
static int on_timer(CURLM *multi, long timeout, void *user) {
    (void)multi;
    struct authkit_curl_loop *loop = user;
    loop->timer_due = timeout < 0 ? NEVER : now_ms() + timeout;
    return 0;
}

// Under the lock, on a thread other than the loop's, after a libcurl call:
// a timer libcurl set sooner than the loop wakes by itself wakes it now.
static void wake_for_timer(struct authkit_curl_loop *loop) {
    if (loop->timer_due != NEVER && (loop->planned_wake == NEVER || loop->timer_due < loop->planned_wake)) {
        loop->planned_wake = loop->timer_due;
        wake_loop(loop);
    }
}

// Under the lock, after a libcurl call: each transfer that ended leaves the
// multi handle and waits for its `done`.
static void reap(struct authkit_curl_loop *loop) {
    CURLMsg *message;
    int left;
    while ((message = api.multi_info_read(loop->multi, &left)) != NULL) {
        if (message->msg != CURLMSG_DONE) continue;
        CURL *easy = message->easy_handle;
        CURLcode code = message->data.result;
        struct authkit_curl_job *job = NULL;
        api.easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&job);
        api.multi_remove_handle(loop->multi, easy);
        loop->active -= 1;
        loop->last_active = now_ms();
        if (job == NULL) continue;
        job->state = JOB_ENDED;
        job->code = code;
        job->next = loop->ended;
        loop->ended = job;
    }
}

static struct authkit_curl_job *take_ended(struct authkit_curl_loop *loop) {
    struct authkit_curl_job *ended = loop->ended;
    loop->ended = NULL;
    return ended;
}

// Outside the lock: runs `done` for the transfers reap() collected (each
// `done` may hand its job back, so the next one is read first).
static void finish_ended(struct authkit_curl_loop *loop, struct authkit_curl_job *ended) {
    while (ended != NULL) {
        struct authkit_curl_job *job = ended;
        ended = job->next;
        job->next = NULL;
        loop->done(job->context, job->code);
    }
}

// Under the lock: lets libcurl act on a socket (or on its timers), then
// collects the transfers that ended.
static void drive(struct authkit_curl_loop *loop, curl_socket_t socket, int mask) {
    int running;
    driving_here = 1;
    api.multi_socket_action(loop->multi, socket, mask, &running);
    driving_here = 0;
    reap(loop);
}

// Under the lock: adds the job's handle to the multi handle; libcurl asks
// for its timer at once, and the caller drives it.
static CURLMcode start_job(struct authkit_curl_loop *loop, struct authkit_curl_job *job) {
    api.easy_setopt(job->easy, CURLOPT_PRIVATE, job);
    CURLMcode added = api.multi_add_handle(loop->multi, job->easy);
    if (added == CURLM_OK) {
        job->state = JOB_ACTIVE;
        loop->active += 1;
        loop->last_active = now_ms();
    }
    return added;
}

static void *run_loop(void *raw) {
    struct authkit_curl_loop *loop = raw;
    struct epoll_event events[16];
    int ready = -1;
    for (;;) {
        pthread_mutex_lock(&loop->lock);
        long long now = now_ms();
        // libcurl's timers when due, and once a second while transfers
        // run whatever it said (a timer it did not report is not missed).
        if ((loop->timer_due != NEVER && loop->timer_due <= now) || (ready == 0 && loop->active > 0)) {
            loop->timer_due = NEVER;
            drive(loop, CURL_SOCKET_TIMEOUT, 0);
            now = now_ms();
        }
        long long wake = loop->timer_due;
        if (loop->active > 0 || now - loop->last_active < LINGER_SPAN_MS) {
            if (wake == NEVER || wake > now + LINGER_MS) wake = now + LINGER_MS;
        }
        loop->planned_wake = wake;
        loop->removed_count = 0;
        loop->removed_overflow = 0;
        struct authkit_curl_job *ended = take_ended(loop);
        pthread_mutex_unlock(&loop->lock);
        finish_ended(loop, ended);

        int timeout = wake == NEVER ? -1 : (int)(wake > now ? wake - now : 0);
        ready = epoll_wait(loop->epoll, events, 16, timeout);

        pthread_mutex_lock(&loop->lock);
        for (int i = 0; i < ready; i++) {
            if (events[i].data.fd == loop->wake) {
                uint64_t count;
                (void)!read(loop->wake, &count, sizeof count);
                continue;
            }
            if (was_removed(loop, events[i].data.fd)) continue;
            int mask = (events[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
                       (events[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
                       (events[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
            drive(loop, events[i].data.fd, mask);
        }
        pthread_mutex_unlock(&loop->lock);
    }
    return NULL;
}

struct authkit_curl_loop *authkit_curl_loop_new(long keptConnections, authkit_curl_done_callback done,
                                                const char *threadName) {
    struct authkit_curl_loop *loop = calloc(1, sizeof *loop);
    if (loop == NULL) return NULL;
    loop->done = done;
    loop->timer_due = NEVER;
    loop->planned_wake = NEVER;
    loop->epoll = epoll_create1(EPOLL_CLOEXEC);
    loop->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    loop->multi = api.multi_init();
    if (loop->epoll < 0 || loop->wake < 0 || loop->multi == NULL) goto failed;
    struct epoll_event event = {.events = EPOLLIN, .data.fd = loop->wake};
    if (epoll_ctl(loop->epoll, EPOLL_CTL_ADD, loop->wake, &event) != 0) goto failed;
    api.multi_setopt(loop->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    api.multi_setopt(loop->multi, CURLMOPT_SOCKETDATA, loop);
    api.multi_setopt(loop->multi, CURLMOPT_TIMERFUNCTION, on_timer);
    api.multi_setopt(loop->multi, CURLMOPT_TIMERDATA, loop);
    api.multi_setopt(loop->multi, CURLMOPT_MAXCONNECTS, keptConnections);
    pthread_mutex_init(&loop->lock, NULL);
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    int started = pthread_create(&loop->thread, &attributes, run_loop, loop);
    pthread_attr_destroy(&attributes);
    if (started != 0) {
        pthread_mutex_destroy(&loop->lock);
        goto failed;
    }
    (void)pthread_setname_np(loop->thread, threadName);
    return loop;
failed:
    if (loop->multi != NULL) api.multi_cleanup(loop->multi);
    if (loop->epoll >= 0) close(loop->epoll);
    if (loop->wake >= 0) close(loop->wake);
    free(loop);
    return NULL;
}

struct authkit_curl_job *authkit_curl_loop_take(struct authkit_curl_loop *loop) {
    // A stale cancel may still read a reused job's state and context (and
    // find neither its own): they change under the lock only.
    pthread_mutex_lock(&loop->lock);
    struct authkit_curl_job *job = loop->idle;
    if (job != NULL) {
        loop->idle = job->next;
        job->next = NULL;
        if (job->easy != NULL) loop->idle_handles -= 1;
    }
    pthread_mutex_unlock(&loop->lock);
    if (job == NULL) {
        job = calloc(1, sizeof *job);
        if (job == NULL) return NULL;
    }
    if (job->easy == NULL) job->easy = api.easy_init();
    return job;
}

CURLMcode authkit_curl_loop_add(struct authkit_curl_loop *loop, struct authkit_curl_job *job, void *context) {
    // The lock is held by the loop's thread only while it reads what has
    // arrived: a caller waits at most that long.
    pthread_mutex_lock(&loop->lock);
    job->context = context;
    CURLMcode added = start_job(loop, job);
    if (added == CURLM_OK) {
        // Started here: libcurl asked for its timer at once (0 ms). A
        // transfer that asks again at once (one step of its state machine
        // after another) is driven on here a few times rather than waking
        // the loop's thread for it.
        drive(loop, CURL_SOCKET_TIMEOUT, 0);
        for (int again = 0; again < 3 && loop->timer_due != NEVER && loop->timer_due <= now_ms(); again++) {
            drive(loop, CURL_SOCKET_TIMEOUT, 0);
        }
        wake_for_timer(loop);
    }
    struct authkit_curl_job *ended = take_ended(loop);
    pthread_mutex_unlock(&loop->lock);
    finish_ended(loop, ended);
    return added;
}

int authkit_curl_loop_cancel(struct authkit_curl_loop *loop, struct authkit_curl_job *job, void *context) {
    // Inside a callback, with the lock held: libcurl forbids removing a handle there.
    if (driving_here) return 0;
    pthread_mutex_lock(&loop->lock);
    int stopped = 0;
    if (job->state == JOB_ACTIVE && job->context == context) {
        api.multi_remove_handle(loop->multi, job->easy);
        loop->active -= 1;
        loop->last_active = now_ms();
        job->state = JOB_ENDED;
        stopped = 1;
        wake_for_timer(loop);
    }
    pthread_mutex_unlock(&loop->lock);
    return stopped;
}

void authkit_curl_loop_give(struct authkit_curl_loop *loop, struct authkit_curl_job *job) {
    if (job->easy != NULL) api.easy_reset(job->easy);
    pthread_mutex_lock(&loop->lock);
    job->context = NULL;
    job->state = JOB_IDLE;
    CURL *dropped = NULL;
    if (job->easy != NULL) {
        if (loop->idle_handles < KEPT_IDLE_HANDLES) {
            loop->idle_handles += 1;
        } else {
            dropped = job->easy;
            job->easy = NULL;
        }
    }
    job->next = loop->idle;
    loop->idle = job;
    pthread_mutex_unlock(&loop->lock);
    if (dropped != NULL) api.easy_cleanup(dropped);
}

#endif // __linux__
