// Linux only: SwiftPM builds every target of the package on any host, and
// <link.h>, <sys/prctl.h> and the rest exist only there. Elsewhere this file is empty.
#if defined(__linux__)

// libsecret (the freedesktop.org Secret Service: GNOME Keyring, KeePassXC,
// KWallet's bridge) for SecretServiceCredentialStore, loaded with dlopen when
// a command first uses the keyring rather than linked: libsecret brings GLib,
// GIO and libgcrypt, which every other start of a program would map for
// nothing. Its own headers are not needed (nor GLib's): the few types used
// are declared in authkit_secret.c, as libsecret 0.20 defines them.
//
// Items are found by string attributes under one schema name; each function
// takes them as `count` name/value pairs. The calls are synchronous D-Bus
// round trips (and may show the desktop's unlock prompt): call them off any
// thread that must stay responsive. Each takes a time limit in milliseconds
// (0: none); past it the call is cancelled (a prompt it waits on dismissed)
// and fails, its error saying so.
#ifndef AUTHKIT_SECRET_H
#define AUTHKIT_SECRET_H
#include <stddef.h>

/// Loads libsecret (libsecret-1.so.0), once per process. Returns 0, or -1 with
/// a sentence saying why in `error`.
int authkit_secret_load(char *error, size_t size);

/// Connects to the Secret Service and opens a session with it. Returns 0, or
/// -1 with the service's reason in `error` (no D-Bus session, no service).
int authkit_secret_probe(long milliseconds, char *error, size_t size);

/// As the probe, then: the service has a default collection to store in,
/// and it is unlocked (asked now, with the desktop's prompt, where it is
/// locked). Returns 0, -2 when it is locked and was not unlocked, or -1
/// with what is wrong and what to do in `error` (in both).
int authkit_secret_check_writable(long milliseconds, char *error, size_t size);

/// Stores `secret` (text) in the default collection under the attributes,
/// replacing an item with the same attributes there, and deletes the
/// item's copies in the other unlocked collections. With a `collection`
/// (its D-Bus path), stores there and leaves any other copy: how a test
/// sets up an account held in two keyrings. Returns 0, or -1 with `error`.
int authkit_secret_store(const char *schema, const char *const *names, const char *const *values, size_t count,
                         const char *collection, const char *label, const char *secret, long milliseconds,
                         char *error, size_t size);

/// Looks up the secret of the item with these attributes. Returns 1 and a
/// copy in `secret` (release it with authkit_secret_free, which wipes it), 0
/// when there is none, -2 when it is in a keyring that is locked and was not
/// unlocked, or -1 with `error` (in both).
int authkit_secret_lookup(const char *schema, const char *const *names, const char *const *values, size_t count,
                          char **secret, long milliseconds, char *error, size_t size);

/// Deletes the items with these attributes. Returns 1 when one was deleted,
/// 0 when there was none, -2 when one is in a locked keyring that was not
/// unlocked, or -1 with `error` (in both). -1 too when a copy is left in a
/// locked keyring beside one deleted, or the keyring did not answer whether
/// one is: never 1 or 0 while a copy could remain.
int authkit_secret_clear(const char *schema, const char *const *names, const char *const *values, size_t count,
                         long milliseconds, char *error, size_t size);

/// Calls `each` with the value of the attribute `wanted` of every item of the
/// schema (locked ones too: attributes are readable without unlocking, the
/// secrets are not); an item deleted by another process while the list is
/// made is left out. Returns the number of items listed, -2 when items of
/// the schema are in a locked keyring whose attributes cannot be read until
/// it is unlocked (gnome-keyring's, read back from its file), or -1 with
/// `error` (in both).
long authkit_secret_search(const char *schema, const char *wanted_first, const char *wanted_second,
                           void (*each)(void *context, const char *first, const char *second), void *context,
                           long milliseconds, char *error, size_t size);

/// Wipes and frees a secret from authkit_secret_lookup.
void authkit_secret_free(char *secret);

#endif

#endif // __linux__
