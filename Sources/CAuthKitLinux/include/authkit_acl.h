// Linux only: SwiftPM builds every target of the package on any host, and
// <sys/xattr.h> exists only there. Elsewhere this file is empty.
#if defined(__linux__)

// A file's POSIX access ACL, for FileSystem's "who else can write it".
// Swift's Glibc module does not import <sys/xattr.h>.
#ifndef AUTHKIT_ACL_H
#define AUTHKIT_ACL_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/xattr.h>

/// The `system.posix_acl_access` attribute of `path` (following links) into
/// `buffer`: its size, or -1 with errno set (ENODATA: the file has no ACL
/// beyond its mode bits; ERANGE: more than `size` bytes).
static inline ssize_t authkit_access_acl(const char *path, void *buffer, size_t size) {
    return getxattr(path, "system.posix_acl_access", buffer, size);
}

/// Sets it (what `setfacl` does): tests place a list with it.
static inline int authkit_set_access_acl(const char *path, const void *value, size_t size) {
    return setxattr(path, "system.posix_acl_access", value, size, 0);
}

#endif

#endif // __linux__
