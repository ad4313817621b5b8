/*
 * The bundled demo (include/embody/input.h): config/demo/demo.csv, a stream made from cuts of
 * CMU motion capture clips (see config/demo/README.md), replayed in real time, looping.
 */
#include <stdio.h>

#include "embody/input.h"
#include "util/u_path.h"

#define DEMO_STREAM "config/demo/demo.csv"

const char *
in_demo_path(void)
{
    static char path[4096];
    return u_path_find_data(DEMO_STREAM, path, sizeof path) ? path : NULL;
}

enum em_result
in_demo_create(bool as_fast_as_possible, struct in_source **out_source, struct em_error *err)
{
    *out_source = NULL;
    char path[4096];
    if (!u_path_find_data(DEMO_STREAM, path, sizeof path))
        return em_fail(err, EM_ERROR_IO, "cannot find the demo stream %s (tried %s)",
                       DEMO_STREAM, path);
    const struct in_replay_desc desc = {
        .path = path,
        .as_fast_as_possible = as_fast_as_possible,
        .loop = true,
        .name = "demo",
    };
    return in_replay_create(&desc, out_source, err);
}
