/*
 * The bundled demo stream's recipe (demo_recipe.c): used by make_demo, which wrote
 * config/demo/demo.csv, and by the stream test that checks the file is still what it makes.
 */
#ifndef EMBODY_TESTS_DEMO_RECIPE_H
#define EMBODY_TESTS_DEMO_RECIPE_H

#include "embody/stream.h"

/* One cut: clip `clip` (tests/data/mocap/<clip>.bvh) from start_s to end_s (its seconds). */
struct demo_cut {
    const char *clip;
    double start_s, end_s;
};

/* The cuts, in order. */
const struct demo_cut *demo_cuts(int *out_count);

/* Makes the demo stream from the clips in `clip_dir` (60 Hz, times from 0). `out` is the
 * caller's to st_stream_fini on success. */
enum em_result demo_make(const char *clip_dir, struct st_stream *out, struct em_error *err);

#endif
