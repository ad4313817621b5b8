/*
 * The live program: each frame in_source_next -> body_update -> the mirror window (scene,
 * HUD, keys) -> OSC outputs -> recording -> in_source_submit, until the source ends, the
 * frame count is reached, the window is closed or the process is interrupted; then the
 * screenshot and a summary.
 *
 * It is a library function rather than main() so that tests run the very same loop in
 * their own process and look at the final image with the renderer's camera (hooks).
 */
#ifndef EMBODY_APP_LIVE_H
#define EMBODY_APP_LIVE_H

#include <stdbool.h>

#include "app/app_options.h"
#include "embody/body.h"
#include "render/render.h"

struct app_live_hooks {
    /* Called for each frame the source gives, before it is solved and drawn: its index
     * (0 for the first), the frame, and the window, scene and body as the previous frame
     * left them (render NULL without a window). May be NULL. */
    void (*on_frame)(void *user, long index, const struct em_tracking_frame *frame,
                     struct render *render, const struct render_scene *scene,
                     const struct body *body);
    /* Called once after the last frame and the screenshot, before anything is closed:
     * the window (NULL without one), the scene last drawn, the body. */
    void (*at_end)(void *user, struct render *render, const struct render_scene *scene,
                   const struct body *body);
    void *user;
};

/* What a run did, for tests and tools. */
struct app_live_result {
    long frames;             /* frames taken from the source and solved */
    const char *source_kind; /* "openxr", "replay", "demo", or NULL if none was opened */
    bool fell_back_to_demo;  /* the main job found no OpenXR */
    bool had_window;
};

/* Runs the program with `options` (from app_options_parse; not help or version). Sets the
 * log level from options->verbosity, prints errors and, unless quiet, the summary on
 * stdout. `hooks` and `out_result` may be NULL. Returns the exit code (enum app_exit). */
int app_live_run(const struct app_options *options, const struct app_live_hooks *hooks,
                 struct app_live_result *out_result);

#endif
