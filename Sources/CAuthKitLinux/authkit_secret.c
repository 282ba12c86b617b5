// Linux only: SwiftPM builds every target of the package on any host, and
// <link.h>, <sys/prctl.h> and the rest exist only there. Elsewhere this file is empty.
#if defined(__linux__)

// pthread_mutex_clocklock (glibc 2.30).
#define _GNU_SOURCE

// See include/authkit_secret.h.
#include "authkit_secret.h"
#include "authkit_loader.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

// The GLib and libsecret types the calls below use, as GLib 2 and libsecret
// 0.20 declare them (secret-schema.h; the schema is passed by pointer and
// only read, so its reserved tail is zeroed).
typedef struct { uint32_t domain; int code; char *message; } GError;
typedef struct GHashTable GHashTable;
typedef struct GList { void *data; struct GList *next, *prev; } GList;
typedef struct { const char *name; int type; } SecretSchemaAttribute;
typedef struct {
    const char *name;
    int flags;
    SecretSchemaAttribute attributes[32];
    int reserved;
    void *reserved1, *reserved2, *reserved3, *reserved4, *reserved5, *reserved6, *reserved7;
} SecretSchema;
enum { SECRET_SCHEMA_NONE = 0, SECRET_SCHEMA_DONT_MATCH_NAME = 1 << 1, SECRET_SCHEMA_ATTRIBUTE_STRING = 0 };
enum { SECRET_SERVICE_OPEN_SESSION = 1 << 1 };

static const char *const library_names[] = {"libsecret-1.so.0", "libsecret-1.so"};

static struct {
    int (*storev_sync)(const SecretSchema *, GHashTable *, const char *collection, const char *label,
                       const char *password, void *cancellable, GError **);
    char *(*lookupv_sync)(const SecretSchema *, GHashTable *, void *cancellable, GError **);
    int (*clearv_sync)(const SecretSchema *, GHashTable *, void *cancellable, GError **);
    GHashTable *(*retrievable_get_attributes)(void *item);
    void (*password_free)(char *password);
    void *(*service_get_sync)(int flags, void *cancellable, GError **);
    void *(*collection_for_alias_sync)(void *service, const char *alias, int flags, void *cancellable, GError **);
    int (*collection_get_locked)(void *collection);
    int (*service_unlock_sync)(void *service, GList *objects, void *cancellable, GList **unlocked, GError **);
    GHashTable *(*hash_table_new)(unsigned (*hash)(const void *), int (*equal)(const void *, const void *));
    int (*hash_table_insert)(GHashTable *, void *key, void *value);
    void *(*hash_table_lookup)(GHashTable *, const void *key);
    void (*hash_table_unref)(GHashTable *);
    unsigned (*str_hash)(const void *);
    int (*str_equal)(const void *, const void *);
    void (*error_free)(GError *);
    void (*list_free_full)(GList *, void (*free_func)(void *));
    void (*object_unref)(void *);
    void *(*cancellable_new)(void);
    void (*cancellable_cancel)(void *);
    uint32_t (*io_error_quark)(void);
    uint32_t (*dbus_error_quark)(void);
    int (*search_paths_sync)(void *service, const SecretSchema *, GHashTable *, void *cancellable, char ***unlocked,
                             char ***locked, GError **);
    void *(*item_for_path_sync)(void *service, const char *path, int flags, void *cancellable, GError **);
    uint32_t (*secret_error_quark)(void);
    void (*strfreev)(char **);
    char *(*read_alias_path_sync)(void *service, const char *alias, void *cancellable, GError **);
    int (*delete_path_sync)(void *service, const char *path, void *cancellable, GError **);
    void (*g_free)(void *);
    char *(*compute_checksum_for_string)(int checksum_type, const char *text, long length);
} api;
// G_IO_ERROR_CANCELLED in GIO's GIOErrorEnum; G_DBUS_ERROR_UNKNOWN_METHOD in GDBusError.
enum { G_IO_ERROR_CANCELLED = 19, G_DBUS_ERROR_UNKNOWN_METHOD = 19 };
// G_CHECKSUM_MD5 in GLib's GChecksumType.
enum { G_CHECKSUM_MD5 = 0 };
// SECRET_ERROR_NO_SUCH_OBJECT in libsecret's SecretError.
enum { SECRET_ERROR_NO_SUCH_OBJECT = 3 };
// How many times a lookup or delete is made when the item it found was
// deleted before it was read (see vanished), waiting 10, 20, then 40 ms
// between: asked again, the search no longer finds it. Few, as a keyring
// holding an item it cannot load (a damaged keyring file) answers so
// every time.
enum { ATTEMPTS = 4 };

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_error[512];
// libsecret's synchronous calls each run a main loop of their own: one at a time.
static pthread_mutex_t calls = PTHREAD_MUTEX_INITIALIZER;

static int resolve(void *library, void **slot, const char *name) {
    *slot = dlsym(library, name);
    if (*slot == NULL) {
        snprintf(load_error, sizeof load_error,
                 "libsecret was found but has no %s; install libsecret 0.20 or later (Debian: apt-get install libsecret-1-0)",
                 name);
        return -1;
    }
    return 0;
}

static void load(void) {
    void *library = authkit_open_library(library_names, sizeof library_names / sizeof *library_names, "libsecret",
                                         "libsecret-1-0", load_error, sizeof load_error);
    if (library == NULL) return;
    // GLib's functions are found through libsecret's handle: dlsym searches
    // the libraries it loaded with it.
    if (resolve(library, (void **)&api.storev_sync, "secret_password_storev_sync") ||
        resolve(library, (void **)&api.lookupv_sync, "secret_password_lookupv_sync") ||
        resolve(library, (void **)&api.clearv_sync, "secret_password_clearv_sync") ||
        resolve(library, (void **)&api.retrievable_get_attributes, "secret_retrievable_get_attributes") ||
        resolve(library, (void **)&api.password_free, "secret_password_free") ||
        resolve(library, (void **)&api.service_get_sync, "secret_service_get_sync") ||
        resolve(library, (void **)&api.collection_for_alias_sync, "secret_collection_for_alias_sync") ||
        resolve(library, (void **)&api.collection_get_locked, "secret_collection_get_locked") ||
        resolve(library, (void **)&api.service_unlock_sync, "secret_service_unlock_sync") ||
        resolve(library, (void **)&api.hash_table_new, "g_hash_table_new") ||
        resolve(library, (void **)&api.hash_table_insert, "g_hash_table_insert") ||
        resolve(library, (void **)&api.hash_table_lookup, "g_hash_table_lookup") ||
        resolve(library, (void **)&api.hash_table_unref, "g_hash_table_unref") ||
        resolve(library, (void **)&api.str_hash, "g_str_hash") ||
        resolve(library, (void **)&api.str_equal, "g_str_equal") ||
        resolve(library, (void **)&api.error_free, "g_error_free") ||
        resolve(library, (void **)&api.list_free_full, "g_list_free_full") ||
        resolve(library, (void **)&api.object_unref, "g_object_unref") ||
        resolve(library, (void **)&api.cancellable_new, "g_cancellable_new") ||
        resolve(library, (void **)&api.cancellable_cancel, "g_cancellable_cancel") ||
        resolve(library, (void **)&api.io_error_quark, "g_io_error_quark") ||
        resolve(library, (void **)&api.dbus_error_quark, "g_dbus_error_quark") ||
        resolve(library, (void **)&api.search_paths_sync, "secret_service_search_for_dbus_paths_sync") ||
        resolve(library, (void **)&api.item_for_path_sync, "secret_item_new_for_dbus_path_sync") ||
        resolve(library, (void **)&api.secret_error_quark, "secret_error_get_quark") ||
        resolve(library, (void **)&api.strfreev, "g_strfreev") ||
        resolve(library, (void **)&api.read_alias_path_sync, "secret_service_read_alias_dbus_path_sync") ||
        resolve(library, (void **)&api.delete_path_sync, "secret_service_delete_item_dbus_path_sync") ||
        resolve(library, (void **)&api.g_free, "g_free") ||
        resolve(library, (void **)&api.compute_checksum_for_string, "g_compute_checksum_for_string")) {
        return;
    }
}

// Whether a session bus is there to ask: DBUS_SESSION_BUS_ADDRESS, else
// the socket $XDG_RUNTIME_DIR/bus (where GLib looks next). Without either,
// GLib autolaunches `dbus-launch`, which inherits this process's whole
// environment (an AUTHKIT_<ID>_CLIENT_SECRET with it) and may stay running:
// refused before libsecret is asked, and said as the reason.
static int session_bus_missing(char *error, size_t size) {
    const char *address = getenv("DBUS_SESSION_BUS_ADDRESS");
    // An `autolaunch:` element (alone, or after others GLib tries first,
    // separated by `;`) is GLib's autolaunch too.
    for (const char *element = address; element != NULL && element[0] != '\0';) {
        while (*element == ';') element++;
        if (strncmp(element, "autolaunch:", strlen("autolaunch:")) == 0) {
            if (error != NULL && size > 0) {
                snprintf(error, size, "DBUS_SESSION_BUS_ADDRESS names an autolaunch: address, which would start "
                                      "dbus-launch with this process's environment; give the session bus's own "
                                      "address");
            }
            return -1;
        }
        element = strchr(element, ';');
    }
    if (address != NULL && address[0] != '\0') return 0;
    const char *runtime = getenv("XDG_RUNTIME_DIR");
    if (runtime != NULL && runtime[0] == '/') {
        char path[PATH_MAX];
        struct stat status;
        int length = snprintf(path, sizeof path, "%s/bus", runtime);
        if (length > 0 && (size_t)length < sizeof path && stat(path, &status) == 0 && S_ISSOCK(status.st_mode)) {
            return 0;
        }
    }
    if (error != NULL && size > 0) {
        snprintf(error, size, "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set, and there is no "
                              "$XDG_RUNTIME_DIR/bus)");
    }
    return -1;
}

int authkit_secret_load(char *error, size_t size) {
    if (session_bus_missing(error, size) != 0) return -1;
    pthread_once(&load_once, load);
    if (load_error[0] == '\0') return 0;
    if (error != NULL && size > 0) snprintf(error, size, "%s", load_error);
    return -1;
}

// A time limit on one call. libsecret's synchronous calls wait for the
// service without end once a request is on its way: an unlock prompt shown
// where nobody sees it (an SSH session into a desktop, a locked screen) is
// never answered. A watch is a thread that cancels the call's GCancellable
// when the limit passes before the call returns; libsecret then dismisses a
// prompt it waits on, and the call returns G_IO_ERROR_CANCELLED. Started
// before the one-at-a-time lock is taken, so the wait for that lock counts.
struct watch {
    pthread_mutex_t lock;
    pthread_cond_t ended;
    struct timespec deadline; // CLOCK_MONOTONIC
    int done, fired, started;
    void *cancellable;
    pthread_t thread;
};

static void *watch_run(void *argument) {
    struct watch *watch = argument;
    pthread_mutex_lock(&watch->lock);
    while (!watch->done) {
        if (pthread_cond_timedwait(&watch->ended, &watch->lock, &watch->deadline) == ETIMEDOUT && !watch->done) {
            watch->fired = 1;
            api.cancellable_cancel(watch->cancellable);
            break;
        }
    }
    pthread_mutex_unlock(&watch->lock);
    return NULL;
}

// Begins the watch of one call; with no limit (milliseconds <= 0) or no
// thread to spare, the call runs without one, as it did before.
static void watch_begin(struct watch *watch, long milliseconds) {
    memset(watch, 0, sizeof *watch);
    if (milliseconds <= 0) return;
    clock_gettime(CLOCK_MONOTONIC, &watch->deadline);
    watch->deadline.tv_sec += milliseconds / 1000;
    watch->deadline.tv_nsec += (milliseconds % 1000) * 1000000L;
    if (watch->deadline.tv_nsec >= 1000000000L) {
        watch->deadline.tv_sec += 1;
        watch->deadline.tv_nsec -= 1000000000L;
    }
    watch->cancellable = api.cancellable_new();
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_cond_init(&watch->ended, &attributes);
    pthread_condattr_destroy(&attributes);
    pthread_mutex_init(&watch->lock, NULL);
    watch->started = pthread_create(&watch->thread, NULL, watch_run, watch) == 0;
}

// Takes the one-at-a-time lock, waiting no longer than the watch's limit:
// a call that never returned (a daemon that hangs in a prompt even once
// dismissed) holds it, and every later call would wait for it without end.
// 0, or -1 when the limit passed first (nothing was called).
static int lock_calls(struct watch *watch) {
    if (watch->cancellable == NULL) return pthread_mutex_lock(&calls) == 0 ? 0 : -1;
    return pthread_mutex_clocklock(&calls, CLOCK_MONOTONIC, &watch->deadline) == 0 ? 0 : -1;
}

// Ends the watch; 1 when the limit passed and the call was cancelled.
static int watch_end(struct watch *watch) {
    if (watch->cancellable == NULL) return 0;
    pthread_mutex_lock(&watch->lock);
    watch->done = 1;
    pthread_cond_signal(&watch->ended);
    pthread_mutex_unlock(&watch->lock);
    if (watch->started) pthread_join(watch->thread, NULL);
    pthread_cond_destroy(&watch->ended);
    pthread_mutex_destroy(&watch->lock);
    api.object_unref(watch->cancellable);
    return watch->fired;
}

static int fail(GError *failure, const char *fallback, int timed_out, long milliseconds, char *error, size_t size);

// Whether the watch has cancelled the call already (it may still fire later).
static int watch_fired(struct watch *watch) {
    if (watch->cancellable == NULL) return 0;
    pthread_mutex_lock(&watch->lock);
    int fired = watch->fired;
    pthread_mutex_unlock(&watch->lock);
    return fired;
}

// Begins the watch of a call and takes the one-at-a-time lock for it: 0,
// or -1 with the time limit said in `error` when the lock was not free in time.
static int enter(struct watch *watch, long milliseconds, char *error, size_t size) {
    watch_begin(watch, milliseconds);
    if (lock_calls(watch) == 0) return 0;
    watch_end(watch);
    return fail(NULL, "", 1, milliseconds, error, size);
}

// Releases the lock and ends the watch; 1 when the limit cancelled the call.
static int leave(struct watch *watch) {
    pthread_mutex_unlock(&calls);
    return watch_end(watch);
}

// Whether an item a call found was deleted (by another process: a `token
// delete`, another app) before libsecret read it. A search answers paths,
// then each item is loaded on its own; of one gone meanwhile libsecret says
// "No such secret item at path" (G_DBUS_ERROR_UNKNOWN_METHOD), or the
// service's NoSuchObject.
static int is_gone(const GError *failure) {
    if (failure == NULL) return 0;
    return (failure->domain == api.dbus_error_quark() && failure->code == G_DBUS_ERROR_UNKNOWN_METHOD) ||
           (failure->domain == api.secret_error_quark() && failure->code == SECRET_ERROR_NO_SUCH_OBJECT);
}

// Whether a lookup or delete that failed so is made again (after a pause),
// the error freed: it fails the whole call, and asked again the search no
// longer finds the item. `attempts` is how many were made.
static int vanished(GError **failure, int attempts, struct watch *watch) {
    if (*failure == NULL || attempts >= ATTEMPTS || watch_fired(watch)) return 0;
    if (!is_gone(*failure)) return 0;
    api.error_free(*failure);
    *failure = NULL;
    long pause = 10L << (attempts - 1);
    struct timespec wait = {0, pause * 1000000L};
    while (nanosleep(&wait, &wait) != 0 && errno == EINTR) {
    }
    return !watch_fired(watch);
}

// Copies the GError's message (or `fallback`) to `error` and frees it; a
// call the watch cancelled (a cancellation error, or none) says that the
// time limit passed instead. An error of its own, come just before the
// limit, is said as it is.
static int fail(GError *failure, const char *fallback, int timed_out, long milliseconds, char *error, size_t size) {
    if (timed_out && failure != NULL &&
        (failure->domain != api.io_error_quark() || failure->code != G_IO_ERROR_CANCELLED)) {
        timed_out = 0;
    }
    if (error != NULL && size > 0) {
        if (timed_out) {
            snprintf(error, size,
                     "the Secret Service did not answer within %ld s (an unlock prompt no one answered, or a keyring "
                     "service that hangs)",
                     (milliseconds + 999) / 1000);
        } else {
            snprintf(error, size, "%s", failure && failure->message ? failure->message : fallback);
        }
    }
    if (failure) api.error_free(failure);
    return -1;
}

static void make_schema(SecretSchema *schema, const char *name, const char *const *names, size_t count) {
    memset(schema, 0, sizeof *schema);
    schema->name = name;
    schema->flags = SECRET_SCHEMA_NONE;
    for (size_t i = 0; i < count && i < 31; i++) {
        schema->attributes[i].name = names[i];
        schema->attributes[i].type = SECRET_SCHEMA_ATTRIBUTE_STRING;
    }
}

// The strings are borrowed: the table lives only for one call.
static GHashTable *make_attributes(const char *const *names, const char *const *values, size_t count) {
    GHashTable *table = api.hash_table_new(api.str_hash, api.str_equal);
    for (size_t i = 0; i < count; i++) api.hash_table_insert(table, (void *)names[i], (void *)values[i]);
    return table;
}

int authkit_secret_probe(long milliseconds, char *error, size_t size) {
    if (authkit_secret_load(error, size) != 0) return -1;
    GError *failure = NULL;
    struct watch watch;
    if (enter(&watch, milliseconds, error, size) != 0) return -1;
    void *service = api.service_get_sync(SECRET_SERVICE_OPEN_SESSION, watch.cancellable, &failure);
    int timed_out = leave(&watch);
    if (service == NULL) return fail(failure, "the Secret Service did not answer", timed_out, milliseconds, error, size);
    api.object_unref(service);
    return 0;
}

static int fail_locked(char *error, size_t size);

int authkit_secret_check_writable(long milliseconds, char *error, size_t size) {
    if (authkit_secret_load(error, size) != 0) return -1;
    GError *failure = NULL;
    struct watch watch;
    if (enter(&watch, milliseconds, error, size) != 0) return -1;
    void *service = api.service_get_sync(SECRET_SERVICE_OPEN_SESSION, watch.cancellable, &failure);
    void *collection = NULL;
    int no_default = 0, locked = 0;
    if (service != NULL) {
        collection = api.collection_for_alias_sync(service, "default", 0, watch.cancellable, &failure);
        no_default = collection == NULL && failure == NULL;
        // Unlocked now, while the user is at the terminal, or refused: the
        // prompt otherwise came at the save, after the provider's consent.
        if (collection != NULL && api.collection_get_locked(collection)) {
            GList one = {collection, NULL, NULL};
            GList *unlocked = NULL;
            int count = api.service_unlock_sync(service, &one, watch.cancellable, &unlocked, &failure);
            if (unlocked) api.list_free_full(unlocked, api.object_unref);
            locked = count < 1 && failure == NULL;
        }
    }
    int timed_out = leave(&watch);
    if (collection) api.object_unref(collection);
    if (service) api.object_unref(service);
    if (failure != NULL || (timed_out && (service == NULL || collection == NULL))) {
        return fail(failure, "the Secret Service did not answer", timed_out, milliseconds, error, size);
    }
    if (service == NULL) return fail(NULL, "the Secret Service did not answer", timed_out, milliseconds, error, size);
    if (no_default) {
        snprintf(error, size,
                 "the Secret Service has no default keyring to store in; make one the default (Seahorse: a "
                 "keyring's \"Set as default\"; a session without a desktop login: start gnome-keyring-daemon with "
                 "--unlock)");
        return -1;
    }
    if (locked) return fail_locked(error, size);
    return 0;
}

// What every call by attributes needs: the schema naming them (all strings)
// and the table of their values. begin loads libsecret first.
struct call {
    SecretSchema schema;
    GHashTable *attributes;
};

static int begin(struct call *call, const char *name, const char *const *names, const char *const *values,
                 size_t count, char *error, size_t size) {
    if (authkit_secret_load(error, size) != 0) return -1;
    make_schema(&call->schema, name, names, count);
    call->attributes = make_attributes(names, values, count);
    return 0;
}

static void end(struct call *call) { api.hash_table_unref(call->attributes); }

// Deletes the copies of a just-stored item that are in keyrings other than
// the default one. A store replaces an item with the same attributes in the
// default keyring only, and a lookup answers with whichever match the
// service lists first: once the user made another keyring the default
// (Seahorse's "Set as default", another KeePassXC database), a save left the
// old item where it was, and a later read could hand back that older copy,
// its spent refresh token with it (the provider then refuses it, or takes
// it for a stolen one and revokes the grant). The save is done either way:
// a copy that cannot be deleted here (in a locked keyring, or the call
// failing) is left, as it would have been.
static void delete_other_copies(struct call *call, void *cancellable) {
    GError *failure = NULL;
    void *service = api.service_get_sync(0, cancellable, &failure);
    char *keyring = service ? api.read_alias_path_sync(service, "default", cancellable, &failure) : NULL;
    char **paths[2] = {NULL, NULL};
    if (keyring != NULL &&
        api.search_paths_sync(service, &call->schema, call->attributes, cancellable, &paths[0], &paths[1], &failure)) {
        size_t length = strlen(keyring);
        // The unlocked ones: a locked item cannot be deleted without an unlock.
        for (char **path = paths[0]; path != NULL && *path != NULL; path++) {
            if (strncmp(*path, keyring, length) == 0 && (*path)[length] == '/') continue;
            GError *refused = NULL;
            api.delete_path_sync(service, *path, cancellable, &refused);
            if (refused) api.error_free(refused);
        }
    }
    for (int list = 0; list < 2; list++) api.strfreev(paths[list]);
    if (keyring) api.g_free(keyring);
    if (service) api.object_unref(service);
    if (failure) api.error_free(failure);
}

int authkit_secret_store(const char *name, const char *const *names, const char *const *values, size_t count,
                         const char *collection, const char *label, const char *secret, long milliseconds,
                         char *error, size_t size) {
    struct call call;
    if (begin(&call, name, names, values, count, error, size) != 0) return -1;
    GError *failure = NULL;
    struct watch watch;
    if (enter(&watch, milliseconds, error, size) != 0) {
        end(&call);
        return -1;
    }
    int stored =
        api.storev_sync(&call.schema, call.attributes, collection, label, secret, watch.cancellable, &failure);
    if (stored && collection == NULL && !watch_fired(&watch)) delete_other_copies(&call, watch.cancellable);
    // Refused at once (not the time limit): the usual cause is a keyring
    // service with no default collection (a gnome-keyring started without a
    // desktop login: its "default" alias is unset, and the error only names
    // a missing "login" object), where nothing can be stored until one is
    // made. Asked under the same watch, and said with what to do.
    int no_default = 0;
    if (!stored && failure != NULL && !watch_fired(&watch)) {
        // The service first: libsecret asserts on a NULL one (and returned
        // no collection, no error: "no default" said of a locked one).
        GError *asked = NULL;
        void *service = api.service_get_sync(SECRET_SERVICE_OPEN_SESSION, watch.cancellable, &asked);
        if (service != NULL) {
            void *collection = api.collection_for_alias_sync(service, "default", 0, watch.cancellable, &asked);
            no_default = collection == NULL && asked == NULL;
            if (collection) api.object_unref(collection);
            api.object_unref(service);
        }
        if (asked) api.error_free(asked);
    }
    int timed_out = leave(&watch);
    end(&call);
    if (stored) return 0;
    if (no_default && !timed_out) {
        // libsecret's own words follow, in case another cause was behind them.
        snprintf(error, size,
                 "the Secret Service has no default keyring to store in; make one the default (Seahorse: a "
                 "keyring's \"Set as default\"; a session without a desktop login: start gnome-keyring-daemon with "
                 "--unlock) (libsecret: %s)",
                 failure && failure->message ? failure->message : "no message");
        if (failure) api.error_free(failure);
        return -1;
    }
    return fail(failure, "the Secret Service did not store the item", timed_out, milliseconds, error, size);
}

// Whether an item with the call's attributes is there and locked. The
// lookup unlocks what it finds, and when the unlock prompt could not be
// shown or was dismissed it returns nothing and no error; the clear deletes
// only unlocked items, and says it deleted none. Both read as "nothing
// stored" (a command said so and exited 0; a delete deleted nothing). A
// search that does not unlock still sees the item, and whether it is locked:
// only then is it said to be (an unlocked item whose secret is not text, or
// one stored between the two calls, is not).
//
// items_left: what is left of the call's items, asked without unlocking
// anything: ITEMS_NONE, ITEMS_LOCKED (at least one is in a locked
// collection), ITEMS_UNLOCKED (some are left, none locked), or
// ITEMS_UNKNOWN (the search failed, asked ATTEMPTS times; its message in
// `error`). The keyring's own SearchItems answer says which paths are
// locked: no item is loaded. (libsecret's item search loaded each item
// and read its Locked property; under load that search failed, was taken
// for "none left", and a delete that left a locked copy said "Deleted".)
//
// The locked ones are searched for by attributes alone, not the schema's
// name: gnome-keyring, once it has read a locked keyring back from its file
// (after a restart, or on its own, as it did under CI's load), knows that
// keyring's items only by hashed attributes, and its `xdg:schema` then
// reads "org.freedesktop.Secret.Generic". The attributes still match (it
// compares their hashes), the schema's name does not: the locked copy was
// missed, and the delete said "Deleted". Another application's locked item
// with the same attribute names and values would be taken for one of ours:
// said locked, never deleted, until it is unlocked and the search can tell.
enum { ITEMS_NONE = 0, ITEMS_LOCKED = 1, ITEMS_UNLOCKED = 2, ITEMS_UNKNOWN = 3 };

static int items_left(struct call *call, struct watch *watch, char *error, size_t size) {
    SecretSchema nameless = call->schema;
    nameless.flags |= SECRET_SCHEMA_DONT_MATCH_NAME;
    for (int attempts = 1;; attempts++) {
        GError *failure = NULL;
        void *service = api.service_get_sync(0, watch->cancellable, &failure);
        // [0] unlocked and [1] locked of ours; [2] unlocked (unused) and [3]
        // locked of anyone's with these attributes.
        char **paths[4] = {NULL, NULL, NULL, NULL};
        int searched = service != NULL &&
                       api.search_paths_sync(service, &call->schema, call->attributes, watch->cancellable, &paths[0],
                                             &paths[1], &failure) &&
                       api.search_paths_sync(service, &nameless, call->attributes, watch->cancellable, &paths[2],
                                             &paths[3], &failure);
        int state = ITEMS_UNKNOWN;
        if (searched) {
            int locked = (paths[1] != NULL && paths[1][0] != NULL) || (paths[3] != NULL && paths[3][0] != NULL);
            int unlocked = paths[0] != NULL && paths[0][0] != NULL;
            state = locked ? ITEMS_LOCKED : unlocked ? ITEMS_UNLOCKED : ITEMS_NONE;
        }
        for (int list = 0; list < 4; list++) api.strfreev(paths[list]);
        if (service) api.object_unref(service);
        if (state == ITEMS_UNKNOWN && error != NULL && size > 0) {
            snprintf(error, size, "%s", failure != NULL ? failure->message : "the Secret Service did not answer");
        }
        if (failure) api.error_free(failure);
        if (state != ITEMS_UNKNOWN || attempts >= ATTEMPTS || watch_fired(watch)) return state;
        long pause = 10L << (attempts - 1);
        struct timespec wait = {0, pause * 1000000L};
        while (nanosleep(&wait, &wait) != 0 && errno == EINTR) {
        }
    }
}

// A search that failed says not locked here: the lookup found nothing,
// and says so, as it did before it asked.
static int found_locked(struct call *call, struct watch *watch) {
    return items_left(call, watch, NULL, 0) == ITEMS_LOCKED;
}

// -2, not -1: a locked keyring is a state of its own, which the caller says
// as "unlock it and try again" (StoreProblem.locked), not as a failure.
static int fail_locked(char *error, size_t size) {
    if (error != NULL && size > 0) {
        snprintf(error, size,
                 "the keyring holding it is locked and was not unlocked (no unlock prompt could be shown, or it was "
                 "dismissed); unlock it (Seahorse; in a session without a desktop: gnome-keyring-daemon --unlock), "
                 "or set AUTHKIT_STORE=file");
    }
    return -2;
}

int authkit_secret_lookup(const char *name, const char *const *names, const char *const *values, size_t count,
                          char **secret, long milliseconds, char *error, size_t size) {
    *secret = NULL;
    struct call call;
    if (begin(&call, name, names, values, count, error, size) != 0) return -1;
    GError *failure = NULL;
    struct watch watch;
    if (enter(&watch, milliseconds, error, size) != 0) {
        end(&call);
        return -1;
    }
    char *found = NULL;
    int attempts = 0;
    do {
        found = api.lookupv_sync(&call.schema, call.attributes, watch.cancellable, &failure);
    } while (vanished(&failure, ++attempts, &watch));
    int locked = found == NULL && failure == NULL && !watch_fired(&watch) && found_locked(&call, &watch);
    int timed_out = leave(&watch);
    end(&call);
    if (locked && !timed_out) return fail_locked(error, size);
    // Cancelled, some libsecret versions return no secret and no error:
    // that is the time limit, not "no such item".
    if (failure != NULL || (timed_out && found == NULL)) {
        if (found) api.password_free(found);
        return fail(failure, "", timed_out, milliseconds, error, size);
    }
    *secret = found;
    return found != NULL;
}

int authkit_secret_clear(const char *name, const char *const *names, const char *const *values, size_t count,
                         long milliseconds, char *error, size_t size) {
    struct call call;
    if (begin(&call, name, names, values, count, error, size) != 0) return -1;
    GError *failure = NULL;
    struct watch watch;
    if (enter(&watch, milliseconds, error, size) != 0) {
        end(&call);
        return -1;
    }
    // A clear that failed on an item gone meanwhile may have deleted the
    // others it found (libsecret reports the error alone), and the item is
    // gone either way: said deleted, not "there was nothing".
    int cleared = 0;
    int attempts = 0;
    do {
        cleared = api.clearv_sync(&call.schema, call.attributes, watch.cancellable, &failure) || cleared;
        cleared = cleared || is_gone(failure);
    } while (vanished(&failure, ++attempts, &watch));
    // Asked after a clear that deleted something too: a second copy in a
    // locked collection (the default keyring changed since it was stored)
    // stays, and "deleted" would sign the user back in once it is unlocked.
    // A copy left unlocked is one whose collection the keyring unlocked
    // while the clear ran (the lookup before it asked for the item, and
    // gnome-keyring unlocked `login` on its own, after the clear's search):
    // cleared again, once, rather than said deleted while it stays. (A
    // search that still lists a copy just deleted costs one more clear.)
    char unanswered[256] = "";
    int left = failure == NULL && !watch_fired(&watch) ? items_left(&call, &watch, unanswered, sizeof unanswered)
                                                       : ITEMS_NONE;
    if (left == ITEMS_UNLOCKED) {
        cleared = api.clearv_sync(&call.schema, call.attributes, watch.cancellable, &failure) || cleared;
        // Gone meanwhile (another process deleted it): what was asked.
        if (is_gone(failure)) {
            api.error_free(failure);
            failure = NULL;
        }
        left = failure == NULL && !watch_fired(&watch) ? items_left(&call, &watch, unanswered, sizeof unanswered)
                                                       : ITEMS_NONE;
    }
    int locked = left == ITEMS_LOCKED;
    int timed_out = leave(&watch);
    end(&call);
    if (locked && !timed_out && cleared) {
        if (error != NULL && size > 0) {
            snprintf(error, size,
                     "a copy in an unlocked keyring was deleted, but another is in a keyring that is locked and was "
                     "not unlocked (no unlock prompt could be shown, or it was dismissed); unlock it (Seahorse; in a "
                     "session without a desktop: gnome-keyring-daemon --unlock) and delete it again");
        }
        return -1;
    }
    // Not said deleted, nor "there was none", while a copy in a locked
    // keyring could be left: the search that would tell failed.
    if (left == ITEMS_UNKNOWN && !timed_out) {
        if (error != NULL && size > 0) {
            snprintf(error, size,
                     "%s, but the keyring did not answer whether a copy is left in a locked keyring (%s); delete it "
                     "again",
                     cleared ? "a copy was deleted" : "no copy was found to delete", unanswered);
        }
        return -1;
    }
    if (locked && !timed_out) return fail_locked(error, size);
    if (failure != NULL || (timed_out && !cleared)) return fail(failure, "", timed_out, milliseconds, error, size);
    return cleared ? 1 : 0;
}

long authkit_secret_search(const char *name, const char *wanted_first, const char *wanted_second,
                           void (*each)(void *context, const char *first, const char *second), void *context,
                           long milliseconds, char *error, size_t size) {
    if (authkit_secret_load(error, size) != 0) return -1;
    const char *names[] = {wanted_first, wanted_second};
    SecretSchema schema;
    make_schema(&schema, name, names, 2);
    GHashTable *none = make_attributes(names, names, 0);
    GError *failure = NULL;
    struct watch watch;
    if (enter(&watch, milliseconds, error, size) != 0) {
        api.hash_table_unref(none);
        return -1;
    }
    // The items' paths first, then each item read on its own. libsecret's
    // search reads them all at once, and one deleted by another process
    // meanwhile failed the whole search (printing a GLib-GIO-CRITICAL on
    // stderr besides: its completion then answered twice). An item gone
    // between the two steps is not listed; any other failure is said.
    char **paths[2] = {NULL, NULL};
    // Set when a call returned nothing and said nothing (cancelled, with
    // some libsecret versions): the list would be short of what is there.
    int incomplete = 0;
    void *service = api.service_get_sync(0, watch.cancellable, &failure);
    incomplete = service == NULL && failure == NULL;
    if (service != NULL &&
        !api.search_paths_sync(service, &schema, none, watch.cancellable, &paths[0], &paths[1], &failure)) {
        incomplete = failure == NULL;
    }
    long found = 0;
    // The paths of items that could not be read, taken for deleted: asked
    // again below, as libsecret says the same of an item whose properties
    // did not load for another reason (a damaged keyring file, a call the
    // time limit cancelled).
    const char *skipped[64];
    int skips = 0;
    for (int list = 0; list < 2 && failure == NULL && !incomplete; list++) {
        for (char **path = paths[list]; path != NULL && *path != NULL && failure == NULL && !incomplete; path++) {
            void *item = api.item_for_path_sync(service, *path, 0, watch.cancellable, &failure);
            if (item == NULL) {
                if (is_gone(failure) && !watch_fired(&watch) && skips < 64) {
                    api.error_free(failure);
                    failure = NULL;
                    skipped[skips++] = *path;
                } else if (failure == NULL) {
                    incomplete = 1;
                }
                continue;
            }
            GHashTable *attributes = api.retrievable_get_attributes(item);
            if (attributes != NULL) {
                each(context, api.hash_table_lookup(attributes, wanted_first),
                     api.hash_table_lookup(attributes, wanted_second));
                api.hash_table_unref(attributes);
                found++;
            }
            api.object_unref(item);
        }
    }
    // Still listed, a skipped item was not deleted: the list would be short.
    char *unreadable = NULL;
    if (skips > 0 && failure == NULL && !incomplete) {
        char **again[2] = {NULL, NULL};
        if (!api.search_paths_sync(service, &schema, none, watch.cancellable, &again[0], &again[1], &failure)) {
            incomplete = failure == NULL;
        }
        for (int list = 0; list < 2 && unreadable == NULL; list++) {
            for (char **path = again[list]; path != NULL && *path != NULL && unreadable == NULL; path++) {
                for (int i = 0; i < skips; i++) {
                    if (strcmp(*path, skipped[i]) == 0) unreadable = strdup(*path);
                }
            }
        }
        for (int list = 0; list < 2; list++) api.strfreev(again[list]);
    }
    // Locked items of the schema that the search by its name cannot see:
    // gnome-keyring, once it has read a locked keyring back from its file,
    // knows its items by hashed attributes only, `xdg:schema` among them
    // (see items_left), and matches a search against those hashes. Such an
    // item's provider and label cannot be read until its keyring is
    // unlocked: the list is said to be locked, as a read of a locked item
    // is, rather than left short of it ("no stored credentials"). Asked
    // with no schema: libsecret refuses attributes its schema does not name.
    int hidden = 0;
    if (failure == NULL && !incomplete && unreadable == NULL && !watch_fired(&watch)) {
        const char *hashed_name[] = {"gkr:compat:hashed:xdg:schema"};
        char *digest = api.compute_checksum_for_string(G_CHECKSUM_MD5, name, -1);
        const char *digests[] = {digest};
        GHashTable *hashed = make_attributes(hashed_name, digests, 1);
        char **found_hashed[2] = {NULL, NULL};
        if (digest != NULL && api.search_paths_sync(service, NULL, hashed, watch.cancellable, &found_hashed[0],
                                                    &found_hashed[1], &failure)) {
            hidden = found_hashed[1] != NULL && found_hashed[1][0] != NULL;
        }
        for (int list = 0; list < 2; list++) api.strfreev(found_hashed[list]);
        api.hash_table_unref(hashed);
        api.g_free(digest);
    }
    int timed_out = leave(&watch);
    api.hash_table_unref(none);
    for (int list = 0; list < 2; list++) api.strfreev(paths[list]);
    if (service) api.object_unref(service);
    if (failure != NULL || incomplete) {
        free(unreadable);
        return fail(failure, "the Secret Service did not answer", timed_out, milliseconds, error, size);
    }
    if (hidden && !timed_out) {
        free(unreadable);
        return fail_locked(error, size);
    }
    if (unreadable != NULL) {
        snprintf(error, size, "the keyring lists the item %s but cannot read it", unreadable);
        free(unreadable);
        return -1;
    }
    return found;
}

void authkit_secret_free(char *secret) {
    if (secret != NULL) api.password_free(secret);
}

#endif // __linux__
