/*
 * The mirror view: an SDL2 window with an OpenGL 3.3 core context that shows the avatar,
 * the floor, the tracked devices and a HUD, and can draw the same scene for a headset's
 * eyes. Everything it draws comes in a `struct render_scene` filled by the program each
 * frame; the renderer keeps no reference to it after the call.
 */
#ifndef EMBODY_RENDER_H
#define EMBODY_RENDER_H

#include <stdbool.h>
#include <stdint.h>

#include <cglm/types.h>

#include "embody/result.h"
#include "embody/skeleton.h"
#include "embody/tracking.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RENDER_MAX_TARGETS 8

/* An IK target and where its effector ended up, drawn side by side when enabled. */
struct render_target {
    vec3 target_m;
    vec3 reached_m;
};

/* Numbers shown on the HUD. Strings may be NULL (not shown). */
struct render_hud {
    float frame_rate_hz;
    float solve_us;
    int iterations;
    int effector_count;
    const char *effector_name[RENDER_MAX_TARGETS];
    float residual_mm[RENDER_MAX_TARGETS];
    const char *source_name; /* "openxr", "replay", "demo" */
    const char *posture;     /* "standing", "crouching", ... */
    const char *stepping;    /* "planted", "stepping left", ... */
    float height_m;
    float arm_span_m;
    bool paused;
    const char *message; /* a transient line, for example "calibrated: 1.78 m" */
};

struct render_scene {
    const struct sk_skeleton *skeleton;
    const struct sk_pose *pose; /* global positions and rotations are used */
    struct em_device_pose device[EM_DEVICE_COUNT]; /* drawn greyed and marked when lost */
    int target_count;
    struct render_target target[RENDER_MAX_TARGETS];
    struct render_hud hud;
};

enum render_camera {
    RENDER_CAMERA_MIRROR = 0, /* facing the player, following them, mirrored */
    RENDER_CAMERA_ORBIT,      /* drag to turn, wheel to zoom */
    RENDER_CAMERA_FRONT,
    RENDER_CAMERA_SIDE,
    RENDER_CAMERA_TOP,
    RENDER_CAMERA_COUNT,
};

struct render_desc {
    int width;          /* default 1280 */
    int height;         /* default 720 */
    const char *title;  /* default "embody" */
    bool hidden;        /* no visible window (headless rendering to a PNG) */
    bool vsync;
    bool show_targets;  /* draw IK targets beside the effectors */
    const char *shader_dir; /* default: found with u_path (shaders/) */
    const char *font_path;  /* default: a Debian DejaVu font */
};

/* Actions the user asked for with keys or the window, for the program to carry out.
 * The renderer handles camera, HUD, help and screenshot keys itself. */
enum render_action {
    RENDER_ACTION_QUIT = 1u << 0,
    RENDER_ACTION_CALIBRATE = 1u << 1,
    RENDER_ACTION_RECENTER = 1u << 2,
    RENDER_ACTION_PAUSE_TOGGLE = 1u << 3,
};

struct render;

/* Opens the window and compiles the shaders. Without a display, fails with a message
 * saying so (EM_ERROR_UNSUPPORTED); a shader that fails to compile is reported with its
 * file and line (EM_ERROR_PARSE). */
enum em_result
render_create(const struct render_desc *desc, struct render **out_render,
              struct em_error *err);

void
render_destroy(struct render **render);

/* Handles window events and keys; returns enum render_action bits. */
uint32_t
render_poll(struct render *render);

/* Draws the scene into the window and presents it. */
void
render_draw(struct render *render, const struct render_scene *scene);

/* Draws the scene (no HUD) into the framebuffer currently bound, for one headset eye:
 * `view` and `projection` are column-major OpenGL matrices, the viewport is w x h. */
void
render_draw_eye(struct render *render, const struct render_scene *scene, const mat4 view,
                const mat4 projection, int width, int height);

/* Makes the window's OpenGL context current on this thread (the headset view needs it). */
void
render_make_current(struct render *render);

/* Writes what the window shows now as a PNG. */
enum em_result
render_screenshot(struct render *render, const char *path, struct em_error *err);

void
render_set_camera(struct render *render, enum render_camera camera);

/* Milliseconds of CPU time the last render_draw took (for the HUD and benchmarks). */
float
render_last_draw_ms(const struct render *render);

#ifdef __cplusplus
}
#endif

#endif
