// Linux only: SwiftPM builds every target of the package on any host, and
// <link.h>, <sys/prctl.h> and the rest exist only there. Elsewhere this file is empty.
#if defined(__linux__)

// What the dlopen-loaded libraries (libcurl, libsecret) share: the check that
// refuses a copy someone placed beside the program. Private to this target.
#ifndef AUTHKIT_LOADER_H
#define AUTHKIT_LOADER_H
#include <stddef.h>

/// SwiftPM links executables with RUNPATH $ORIGIN, so dlopen("libcurl.so.4")
/// looks in the program's own directory before the system's: a library that
/// someone else placed beside the program (a Downloads folder, /tmp) would run
/// its code inside a process that holds client secrets and tokens (CWE-427,
/// uncontrolled search path). Finds a file named as one of `names` in the
/// directory of the object this code is linked into (the program, or a
/// shared library holding AuthKit) when that directory is on its search path,
/// before anything is loaded. Returns 1 and the file's path in `found`, else 0.
/// The dependencies the library loads are not searched there: RUNPATH applies
/// only to the object's own dlopen and DT_NEEDED, not to the library's.
int authkit_planted_library(const char *const *names, size_t count, char *found, size_t size);

/// Opens the first of `names` that loads (RTLD_NOW | RTLD_LOCAL), after
/// refusing a copy planted beside the program. `what` names the library in
/// messages ("libcurl"), `package` the Debian package that installs it.
/// Returns the handle, or NULL with a sentence saying why in `error`.
void *authkit_open_library(const char *const *names, size_t count, const char *what, const char *package,
                           char *error, size_t size);

#endif

#endif // __linux__
