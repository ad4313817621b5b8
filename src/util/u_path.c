/* Locating data files (u_path.h). */
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

bool
u_path_find_data(const char *relative, char *out, size_t out_size)
{
    char exe_dir[PATH_MAX];
    executable_dir(exe_dir, sizeof exe_dir);
    const char *env = getenv("EMBODY_DATA_DIR");
    const char *roots[5] = {env, NULL, NULL, NULL, EMBODY_SOURCE_DIR};
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
    for (int i = 0; i < 5; ++i) {
        if (!roots[i] || !roots[i][0])
            continue;
        char candidate[PATH_MAX * 2];
        snprintf(candidate, sizeof candidate, "%s/%s", roots[i], relative);
        if (u_path_exists(candidate)) {
            snprintf(out, out_size, "%s", candidate);
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
