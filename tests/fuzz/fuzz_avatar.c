/* libFuzzer target: the avatar reader (av_avatar_load: our GLB/VRM checks, then assimp)
 * on a file holding the bytes. Small limits keep each run quick. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "avatar/avatar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[128];
    if (!path[0]) {
        const char *dir = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/embody-fuzz-avatar-%ld.vrm", dir ? dir : "/tmp",
                 (long)getpid());
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    const struct av_load_desc limits = {.max_triangles = 200000, .max_vertices = 200000};
    struct av_avatar av;
    struct em_error err;
    if (av_avatar_load(path, &limits, &av, &err) == EM_OK)
        av_avatar_fini(&av);
    remove(path);
    return 0;
}
