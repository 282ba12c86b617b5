// Linux only: SwiftPM builds every target of the package on any host, and
// <link.h>, <sys/prctl.h> and the rest exist only there. Elsewhere this file is empty.
#if defined(__linux__)

// getrandom(2) for AuthKit's SecureRandom on Linux. Swift's Glibc module does
// not import <sys/random.h>, and arc4random_buf only exists from glibc 2.36,
// so this header is the portable way to reach the kernel's CSPRNG in one call.
#ifndef AUTHKIT_RANDOM_H
#define AUTHKIT_RANDOM_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/random.h>

/// Up to `count` random bytes into `buffer`; the number written, or -1 with errno set.
static inline ssize_t authkit_getrandom(void *buffer, size_t count) {
    return getrandom(buffer, count, 0);
}

#endif

#endif // __linux__
