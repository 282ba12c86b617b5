// Linux only: SwiftPM builds every target of the package on any host, and
// <link.h>, <sys/prctl.h> and the rest exist only there. Elsewhere this file is empty.
#if defined(__linux__)

// libcurl for AuthKit's Linux transport (CurlHTTPClient), loaded with dlopen
// on first use instead of linked.
//
// Linked, libcurl and the thirty or so libraries Debian builds it with (GnuTLS,
// OpenSSL, Kerberos, LDAP, RTMP, SSH2, …) are mapped and relocated before
// main() of every program that uses AuthKit: about 8 ms of each `authkit` start
// on the CI machine, whether or not the command sends a request. Loaded here,
// only a process that sends one pays, and authkit_curl_preload() lets that
// cost overlap with the work that comes before the first request.
//
// <curl/curl.h> (libcurl4-openssl-dev) supplies the types and constants; the
// functions below stand in for the libcurl functions of the same name.
// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot
// call, so each argument type gets a typed function.
#ifndef AUTHKIT_CURL_H
#define AUTHKIT_CURL_H
#include <curl/curl.h>
#include <stddef.h>

typedef size_t (*authkit_curl_data_callback)(char *buffer, size_t size, size_t count, void *context);
typedef int (*authkit_curl_progress_callback)(void *context, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);
/// CURLOPT_PREREQFUNCTION's: called once connected, before the request is
/// sent; 1 (CURL_PREREQFUNC_ABORT) stops the transfer there.
typedef int (*authkit_curl_prereq_callback)(void *context, char *primary_ip, char *local_ip, int primary_port, int local_port);

/// Loads libcurl and runs curl_global_init, once per process; later calls wait
/// for the first. Returns 0, or -1 with a sentence saying why in `error`.
int authkit_curl_load(char *error, size_t size);
/// Starts authkit_curl_load on a thread of its own and returns at once (once
/// per process; later calls do nothing).
void authkit_curl_preload(void);
/// Waits until a load that was started (by either function above) has
/// finished; returns at once when none was. A process must not exit while
/// the library loads on another thread: exit() and dlopen() can deadlock on
/// the loader's lock, and exit's handlers can tear down what the library's
/// constructors are still setting up (a Ctrl-C at that moment crashed authkit).
void authkit_curl_settle(void);

/// Names the calling thread (at most 15 bytes show), so that `top -H`, `ps -L`
/// and a debugger tell a transfer's thread from the rest. Swift's Glibc module
/// offers neither pthread_setname_np nor prctl.
void authkit_curl_name_thread(const char *name);

/// Gives the calling thread Linux's SCHED_BATCH policy (same priority and
/// share of the CPU; unprivileged): woken while the cores are busy, it
/// waits for the running thread's turn to end instead of preempting it.
/// Returns 0 or pthread_setschedparam's error. See CurlWorkers for why.
int authkit_curl_schedule_as_batch(void);

// Valid only after authkit_curl_load returned 0.
CURL *authkit_curl_easy_init(void);
void authkit_curl_easy_cleanup(CURL *handle);
void authkit_curl_easy_reset(CURL *handle);
CURLcode authkit_curl_easy_perform(CURL *handle);
const char *authkit_curl_easy_strerror(CURLcode code);
const char *authkit_curl_multi_strerror(CURLMcode code);
struct curl_slist *authkit_curl_slist_append(struct curl_slist *list, const char *string);
void authkit_curl_slist_free_all(struct curl_slist *list);
CURLcode authkit_curl_set_long(CURL *handle, CURLoption option, long value);
CURLcode authkit_curl_set_pointer(CURL *handle, CURLoption option, const void *value);
CURLcode authkit_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value);
CURLcode authkit_curl_set_data_callback(CURL *handle, CURLoption option, authkit_curl_data_callback value);
CURLcode authkit_curl_set_progress_callback(CURL *handle, authkit_curl_progress_callback value);
/// Sets CURLOPT_PREREQFUNCTION (libcurl 7.80 and later; an older one answers CURLE_UNKNOWN_OPTION).
CURLcode authkit_curl_set_prereq_callback(CURL *handle, authkit_curl_prereq_callback value);
CURLcode authkit_curl_get_long(CURL *handle, CURLINFO info, long *value);

/// The caches a pool's easy handles share (TLS sessions, DNS; not
/// connections, which libcurl does not support sharing across threads), with
/// the locks libcurl needs for that; NULL when this libcurl cannot share TLS
/// sessions. Freed only once no easy handle uses it.
struct authkit_curl_share;
struct authkit_curl_share *authkit_curl_share_new(void);
void authkit_curl_share_free(struct authkit_curl_share *shared);
/// CURLOPT_SHARE (set again after each curl_easy_reset, which clears it).
CURLcode authkit_curl_use_share(CURL *handle, struct authkit_curl_share *shared);

// An event loop: one thread, asleep in epoll_wait on the sockets of every
// transfer added to it, driving a libcurl multi handle (its socket
// interface). A transfer is added, and its request sent, on the caller's
// thread; the loop thread reads the answers, and calls `done` for each
// transfer that has ended. One lock guards the multi handle: libcurl's
// callbacks for a transfer run under it, on whichever of the two threads
// drives the transfer at the time.

/// One transfer's easy handle, kept by the loop from one transfer to the
/// next (reset between them) and never freed, so a stale cancel finds it.
struct authkit_curl_job {
    /// Configure it between authkit_curl_loop_take and authkit_curl_loop_add only.
    CURL *easy;
    void *context;
    int state;
    /// How the transfer ended, for `done`.
    CURLcode code;
    struct authkit_curl_job *next;
};
typedef void (*authkit_curl_done_callback)(void *context, CURLcode code);
struct authkit_curl_loop;
/// NULL when no epoll, eventfd, multi handle or thread could be made (the
/// caller then sends through its workers, which say what they lack). `done` is called once for each transfer added
/// that was not cancelled first, outside the lock, on the loop's thread or
/// the one that added it. Never freed: it lives as long as the process.
struct authkit_curl_loop *authkit_curl_loop_new(long keptConnections, authkit_curl_done_callback done,
                                                const char *threadName);
/// A job whose easy handle is fresh or reset: NULL out of memory, and its
/// `easy` NULL when libcurl made none (hand it back).
struct authkit_curl_job *authkit_curl_loop_take(struct authkit_curl_loop *loop);
/// Starts the job's transfer: its request is written before this returns
/// (when a connection is ready). Not CURLM_OK: not added, no `done`.
CURLMcode authkit_curl_loop_add(struct authkit_curl_loop *loop, struct authkit_curl_job *job, void *context);
/// Stops the job's transfer if it is still that of `context` and has not
/// ended: 1 when stopped (no `done` follows), 0 otherwise. Called from a
/// libcurl callback of the transfers, it stops nothing (0): the callback
/// then returns the abort.
int authkit_curl_loop_cancel(struct authkit_curl_loop *loop, struct authkit_curl_job *job, void *context);
/// Hands the job back once its `done` has run or its cancel returned 1.
void authkit_curl_loop_give(struct authkit_curl_loop *loop, struct authkit_curl_job *job);
#endif

#endif // __linux__
