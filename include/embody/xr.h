/*
 * Live tracking from an OpenXR runtime, as an input source (include/embody/input.h):
 * head (VIEW space) and both hands (grip poses) located in STAGE space (or LOCAL with
 * the floor from calibration) at the predicted display time, plus calibrate and recenter
 * buttons. In the normal mode it also draws the scene for both eyes through a callback
 * and submits a projection layer; in the headless mode (XR_MND_headless) it only tracks.
 */
#ifndef EMBODY_XR_H
#define EMBODY_XR_H

#include <stdbool.h>
#include <stdint.h>

#include <cglm/types.h>

#include "embody/input.h"
#include "embody/result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One eye's view, for drawing into the swapchain image that is bound when called. */
struct oxr_eye_view {
    int eye; /* 0 left, 1 right */
    mat4 view;
    mat4 projection;
    int width;
    int height;
};

struct oxr_desc {
    const char *app_name;  /* default "embody" */
    bool headless;         /* tracking only, no rendering (needs XR_MND_headless) */
    /* Called between xrBeginFrame and xrEndFrame for each eye, with the window's OpenGL
     * context current and the eye's framebuffer bound. NULL in headless mode. */
    void (*draw_eye)(void *user, const struct oxr_eye_view *eye);
    void *user;
    float floor_height_m; /* for LOCAL space: the floor's height below the origin */
};

/* Creates the OpenXR source. Fails with EM_ERROR_UNSUPPORTED and a one-line reason in
 * `err` when there is no runtime, no headset, or a needed extension is missing, so the
 * program can fall back to the demo; other failures are EM_ERROR_RUNTIME. In the normal
 * mode the window's OpenGL context must be current. */
enum em_result
oxr_source_create(const struct oxr_desc *desc, struct in_source **out_source,
                  struct em_error *err);

#ifdef __cplusplus
}
#endif

#endif
