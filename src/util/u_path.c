/* Locating data files (u_path.h). */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/u_path.h"

#ifndef EMBODY_SOURCE_DIR
#define EMBODY_SOURCE_DIR "."
#endif
/* Set by the build (cmake/EmbodyInstall.cmake): the installed data relative to the
 * installed library, and where the configured prefix puts it. */
#ifndef EMBODY_DATA_FROM_LIBDIR
#define EMBODY_DATA_FROM_LIBDIR "../share/embody"
#endif
#ifndef EMBODY_DATA_INSTALL_DIR
#define EMBODY_DATA_INSTALL_DIR ""
#endif

bool
u_path_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Directory of the running executable, or "" when unknown. */
static void
executable_dir(char *out, size_t out_size)
{
    char exe[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    out[0] = '\0';
    if (n <= 0)
        return;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    snprintf(out, out_size, "%s", exe);
}

/* Installed data seen from the shared library this code is in (libembody.so, in a
 * prefix that may have moved), or "" when unknown. Linked statically, that is the
 * executable, already covered. */
static void
library_data_dir(char *out, size_t out_size)
{
    static const char anchor = 0;
    Dl_info info;
    out[0] = '\0';
    if (!dladdr(&anchor, &info) || !info.dli_fname || !strchr(info.dli_fname, '/'))
        return;
    const int dir_len = (int)(strrchr(info.dli_fname, '/') - info.dli_fname);
    char joined[PATH_MAX * 2], resolved[PATH_MAX];
    snprintf(joined, sizeof joined, "%.*s/%s", dir_len, info.dli_fname, EMBODY_DATA_FROM_LIBDIR);
    if (realpath(joined, resolved)) /* a plain path for messages; fails when absent */
        snprintf(out, out_size, "%s", resolved);
}

bool
u_path_find_data(const char *relative, char *out, size_t out_size)
{
    char exe_dir[PATH_MAX];
    executable_dir(exe_dir, sizeof exe_dir);
    const char *env = getenv("EMBODY_DATA_DIR");
    char library[PATH_MAX + 64];
    library_data_dir(library, sizeof library);
    const char *roots[7] = {
        env, NULL, NULL, NULL, library, EMBODY_SOURCE_DIR, EMBODY_DATA_INSTALL_DIR};
    char beside[PATH_MAX + 16], share[PATH_MAX + 32], up[PATH_MAX + 8];
    if (exe_dir[0]) {
        snprintf(beside, sizeof beside, "%s", exe_dir);
        snprintf(share, sizeof share, "%s/../share/embody", exe_dir);
        snprintf(up, sizeof up, "%s/..", exe_dir);
        roots[1] = beside;
        roots[2] = share;
        roots[3] = up;
    }
    char tried[1024] = "";
    size_t used = 0;
    for (int i = 0; i < 7; ++i) {
        if (!roots[i] || !roots[i][0])
            continue;
        char candidate[PATH_MAX * 2];
        snprintf(candidate, sizeof candidate, "%s/%s", roots[i], relative);
        if (u_path_exists(candidate)) {
            /* As messages show it: "/src/config/x", not "/src/build/../config/x". */
            char resolved[PATH_MAX];
            snprintf(out, out_size, "%s", realpath(candidate, resolved) ? resolved : candidate);
            return true;
        }
        if (used < sizeof tried) {
            const int w = snprintf(tried + used, sizeof tried - used, "%s%s",
                                   used ? ", " : "", candidate);
            used += w > 0 ? (size_t)w : 0;
        }
    }
    snprintf(out, out_size, "%s", tried);
    return false;
}
