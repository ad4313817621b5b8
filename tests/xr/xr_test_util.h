/*
 * Helpers for the xr tests: pose streams and scripts for the test runtime (written into
 * the build tree), pointing the Khronos loader at it, its report, a hidden SDL2 window
 * with an OpenGL 3.3 core context, and running under Xvfb when there is no display.
 */
#ifndef EMBODY_XR_TEST_UTIL_H
#define EMBODY_XR_TEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "embody/input.h"
#include "embody/tracking.h"
#include "tr_report.h"

/* Fills `count` frames with varied, deterministic poses (unit quaternions, all valid),
 * t = k / 60 s. */
void
xt_make_frames(struct em_tracking_frame *frames, int count, unsigned seed);

/* "<build>/tests/xr/tmp/<program>-<name>": unique per test program and name. */
const char *
xt_temp_path(const char *name, char *out, size_t out_size);

/* Writes frames as a 3-point stream CSV, every float printed so it reads back exact. */
void
xt_write_stream(const char *path, const struct em_tracking_frame *frames, int count);

/* Writes a runtime script "<name>.script" with the stream "<name>.csv" (`frames`, may be
 * NULL for none) and the directives in `text`; returns the script's path in `out`. */
const char *
xt_write_script(const char *name, const struct em_tracking_frame *frames, int count,
                const char *text, char *out, size_t out_size);

/* Points the loader at the test runtime and the runtime at `script_path`. */
void
xt_use_runtime(const char *script_path);

/* The runtime's report, or NULL when it is not loaded. */
const struct tr_report *
xt_report(void);

/* Fails the test, listing them, if the runtime caught specification violations. */
void
xt_assert_no_violations(void);

/* Pulls frames until `count` came (EM_OK, submitted) or the source ended or failed or
 * `max_calls` calls were made. Returns the number of frames; `out_last` gets the last
 * result of next(). */
int
xt_pull_frames(struct in_source *src, struct em_tracking_frame *out, int count, int max_calls,
               enum em_result *out_last);

/* True when the poses are equal to the last bit. */
bool
xt_pose_equal(const struct em_pose *a, const struct em_pose *b);

/* Index of the frame in `frames` whose head pose equals `pose` exactly, or -1. */
int
xt_find_row(const struct em_tracking_frame *frames, int count, const struct em_pose *head);

/* A hidden SDL2 window with a current OpenGL 3.3 core context. */
struct xt_gl {
    void *window;
    void *context;
};

void
xt_gl_open(struct xt_gl *gl);

void
xt_gl_close(struct xt_gl *gl);

/* Restarts the program under xvfb-run when there is no display (the GL tests need one;
 * CI already runs every test under Xvfb). */
void
xt_ensure_display(int argc, char **argv);

#endif
