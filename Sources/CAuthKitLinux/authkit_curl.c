// Linux only: SwiftPM builds every target of the package on any host, and
// <link.h>, <sys/prctl.h> and the rest exist only there. Elsewhere this file is empty.
#if defined(__linux__)

// dladdr1, dlinfo(RTLD_DI_SERINFO) and RTLD_DL_LINKMAP are GNU extensions.
#define _GNU_SOURCE
#include "authkit_curl.h"
#include "authkit_loader.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

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
        resolve(library, (void **)&api.share_cleanup, "curl_share_cleanup")) {
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

CURL *authkit_curl_easy_init(void) { return api.easy_init(); }
void authkit_curl_easy_cleanup(CURL *handle) { api.easy_cleanup(handle); }
void authkit_curl_easy_reset(CURL *handle) { api.easy_reset(handle); }
CURLcode authkit_curl_easy_perform(CURL *handle) { return api.easy_perform(handle); }
const char *authkit_curl_easy_strerror(CURLcode code) { return api.easy_strerror(code); }
struct curl_slist *authkit_curl_slist_append(struct curl_slist *list, const char *string) { return api.slist_append(list, string); }
void authkit_curl_slist_free_all(struct curl_slist *list) { api.slist_free_all(list); }

CURLcode authkit_curl_set_long(CURL *handle, CURLoption option, long value) { return api.easy_setopt(handle, option, value); }
CURLcode authkit_curl_set_pointer(CURL *handle, CURLoption option, const void *value) { return api.easy_setopt(handle, option, value); }
CURLcode authkit_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) { return api.easy_setopt(handle, option, value); }
CURLcode authkit_curl_set_data_callback(CURL *handle, CURLoption option, authkit_curl_data_callback value) { return api.easy_setopt(handle, option, value); }
CURLcode authkit_curl_set_progress_callback(CURL *handle, authkit_curl_progress_callback value) { return api.easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value); }
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

#endif // __linux__
