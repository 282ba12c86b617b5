// Linux only: SwiftPM builds every target of the package on any host, and
// <link.h>, <sys/prctl.h> and the rest exist only there. Elsewhere this file is empty.
#if defined(__linux__)

// dladdr1, dlinfo(RTLD_DI_SERINFO) and RTLD_DL_LINKMAP are GNU extensions.
#define _GNU_SOURCE
#include "authkit_loader.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

// See authkit_loader.h.
int authkit_planted_library(const char *const *names, size_t count, char *found, size_t size) {
#if defined(__GLIBC__)
    Dl_info info;
    struct link_map *map = NULL;
    if (dladdr1((void *)authkit_planted_library, &info, (void **)&map, RTLD_DL_LINKMAP) == 0 || map == NULL) return 0;
    char own[PATH_MAX];
    // The program's own map has an empty name.
    const char *own_path = map->l_name[0] != '\0' ? map->l_name : "/proc/self/exe";
    if (realpath(own_path, own) == NULL) return 0;
    char *slash = strrchr(own, '/');
    if (slash == NULL) return 0;
    *(slash == own ? slash + 1 : slash) = '\0';

    // The search path dlopen would use for this object ($ORIGIN expanded).
    // glibc's dlopen handles are its link maps, so the map serves as one.
    Dl_serinfo sizes;
    if (dlinfo(map, RTLD_DI_SERINFOSIZE, &sizes) != 0) return 0;
    Dl_serinfo *paths = malloc(sizes.dls_size);
    if (paths == NULL) return 0;
    int planted = 0;
    if (dlinfo(map, RTLD_DI_SERINFOSIZE, paths) == 0 && dlinfo(map, RTLD_DI_SERINFO, paths) == 0) {
        for (unsigned int i = 0; i < paths->dls_cnt && !planted; i++) {
            char directory[PATH_MAX];
            if (realpath(paths->dls_serpath[i].dls_name, directory) == NULL || strcmp(directory, own) != 0) continue;
            for (size_t j = 0; j < count && !planted; j++) {
                // stat, not lstat: a dangling link is skipped by the loader too.
                struct stat status;
                snprintf(found, size, "%s/%s", strcmp(own, "/") == 0 ? "" : own, names[j]);
                planted = stat(found, &status) == 0;
            }
        }
    }
    free(paths);
    return planted;
#else
    (void)names;
    (void)count;
    (void)found;
    (void)size;
    return 0;
#endif
}

void *authkit_open_library(const char *const *names, size_t count, const char *what, const char *package,
                           char *error, size_t size) {
    char planted[PATH_MAX + 32];
    if (authkit_planted_library(names, count, planted, sizeof planted)) {
        snprintf(error, size,
                 "refusing to load %s: a %s beside the program would be loaded instead of the system's, with access "
                 "to your secrets. Remove it if you did not put it there; a build made with "
                 "`swift build --disable-local-rpath` does not look beside itself", planted, what);
        return NULL;
    }
    void *library = NULL;
    char first[256] = "";
    for (size_t i = 0; i < count && library == NULL; i++) {
        library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (library == NULL && first[0] == '\0') {
            const char *reason = dlerror();
            snprintf(first, sizeof first, "%s", reason ? reason : names[i]);
        }
    }
    if (library == NULL) {
        snprintf(error, size, "%s could not be loaded (%s); install it (Debian: apt-get install %s)", what, first, package);
    }
    return library;
}

#endif // __linux__
