/*
 * The mirror view: an SDL2 window with an OpenGL 3.3 core context that shows the avatar,
 * the floor, the tracked devices and a HUD, and can draw the same scene for a headset's
 * eyes. Everything it draws comes in a `struct render_scene` filled by the program each
 * frame; the renderer keeps no reference to it after the call.
 *
 * World frame: the tracking (STAGE) space, right-handed, metres, +Y up, floor at y = 0.
 * Pixel coordinates (render_project, render_read_pixels, screenshots) are drawable pixels
 * (high-DPI displays have more of them than window points), origin at the top left, +y
 * down, as in the PNG files.
 *
 * Keys (render_poll): F1 help, Tab / Shift+Tab next / previous camera, 1-5 a camera, H the
 * HUD, T the IK targets, B the capsule figure over the avatar, G the ghost (the truth
 * beside the avatar), S a screenshot (embody-YYYYmmdd-HHMMSS.png in the current directory)
 * are handled here; C calibrate, R recenter, Space pause, K the next tracker setup, P the
 * other body (learned prior or procedural) and Esc (or closing the window) quit are
 * returned to the program as enum render_action bits.
 */
#ifndef EMBODY_RENDER_H
#define EMBODY_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cglm/types.h>

#include "embody/hand.h"
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

/* One line of errors on the HUD: a reconstruction against the truth (a replayed clip), in
 * centimetres per joint group (all, upper, lower, hands, feet: the evaluation's groups),
 * this frame and the mean over the frames played so far. */
#define RENDER_ERROR_GROUPS 5
#define RENDER_MAX_LANES 2
struct render_hud_lane {
    const char *label; /* "6 points · learned prior"; NULL: no line */
    bool has_error;    /* false: no truth to compare with (a recording) */
    float error_cm[RENDER_ERROR_GROUPS];
    float mean_cm[RENDER_ERROR_GROUPS];
    long mean_frames;
};

/* Numbers shown on the HUD. Strings may be NULL (not shown); negative or zero numbers
 * that cannot be zero (frame rate, height, arm span) are shown as "-". */
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
    bool recording; /* a REC badge while the session is being recorded */
    /* What the body does about each device beyond its tracking flags, for example "hand
     * at rest" while it is lost or "blending back" when it returns; NULL for nothing. */
    const char *device_note[EM_DEVICE_COUNT];
    const char *tracker_note[EM_TRACKER_COUNT]; /* "blending in", ... NULL: nothing */
    const char *message; /* a transient line, for example "calibrated: 1.78 m" */
    /* The avatars' errors against the truth, or their setups without one (--compare). */
    int lane_count;
    struct render_hud_lane lane[RENDER_MAX_LANES];
};

/* A translucent stick figure of the truth: a replayed clip's own skeleton posed by the
 * clip, drawn where the avatar is (G shows or hides it). */
#define RENDER_MAX_GHOSTS 2
struct render_ghost {
    int joint_count;              /* 0: none */
    const float (*position_m)[3]; /* each joint, world */
    const int *parent;            /* parent[i] < i; -1 for a root */
};

/* A second avatar beside the first (--compare), drawn as the first is (the same skinned
 * mesh, whose binding fits it, or capsules), with its own body trackers. */
struct render_figure {
    const struct sk_skeleton *skeleton; /* NULL: none */
    const struct sk_pose *pose;
    uint32_t tracker_present;
    struct em_device_pose tracker[EM_TRACKER_COUNT];
};

struct av_avatar;
struct av_skin_binding;

struct render_scene {
    const struct sk_skeleton *skeleton; /* NULL: no avatar */
    const struct sk_pose *pose;         /* global positions and rotations are used */
    /* A skinned avatar (src/avatar/avatar.h) drawn at `pose`, bound to `skeleton` with
     * av_skin_bind; NULL for the capsule figure alone. The renderer uploads the mesh the
     * first time it sees it and again when the pointer changes. */
    const struct av_avatar *avatar;
    const struct av_skin_binding *avatar_binding;
    /* The capsule figure's fingers (hand.h's angles, enum hd_hand order), NULL for the
     * relaxed hand. A skinned avatar's fingers are posed on it (av_set_hand_pose). */
    const struct hd_pose *hand_pose[HD_HAND_COUNT];
    /* Drawn at their poses; a device that is not usable (em_device_pose_usable) is drawn
     * grey with a red cross at the pose it last had. */
    struct em_device_pose device[EM_DEVICE_COUNT];
    uint32_t hidden_devices; /* bit (1 << enum em_device) set: that device is not drawn */
    /* Body trackers (EM_TRACKER_BIT each present), drawn as pucks like the devices; the
     * HUD lists each present one's state. */
    uint32_t tracker_present;
    struct em_device_pose tracker[EM_TRACKER_COUNT];
    int target_count;
    struct render_target target[RENDER_MAX_TARGETS];
    struct render_hud hud;
    int ghost_count;
    struct render_ghost ghost[RENDER_MAX_GHOSTS];
    struct render_figure second; /* the camera frames both avatars when there is one */
};

enum render_camera {
    RENDER_CAMERA_MIRROR = 0, /* facing the player, following them, mirrored */
    RENDER_CAMERA_ORBIT,      /* drag to turn, wheel to zoom */
    RENDER_CAMERA_FRONT,      /* from +Z looking at the player's front (not mirrored) */
    RENDER_CAMERA_SIDE,       /* from +X, the player's left side */
    RENDER_CAMERA_TOP,        /* from above, the player's front towards the bottom */
    RENDER_CAMERA_COUNT,
};

/* Zero means default for every field. */
struct render_desc {
    int width;         /* window points; default 1280 */
    int height;        /* window points; default 720 */
    const char *title; /* default "embody" */
    bool hidden;       /* no visible window (headless rendering to a PNG) */
    bool vsync;
    bool show_targets;      /* draw IK targets beside the effectors (T toggles) */
    bool hide_hud;          /* start with the HUD off (H toggles) */
    bool show_figure;       /* the capsule figure over a skinned avatar (B toggles) */
    bool hide_ghost;        /* start with the scene's ghosts hidden (G toggles) */
    int msaa_samples;       /* anti-aliasing samples per pixel, 1 turns it off; default 4,
                               or 1 on a software renderer (llvmpipe) where it is costly */
    const char *shader_dir; /* default: shaders/ found with u_path_find_data, else the
                               copies built into the program */
    const char *font_path;  /* default: Debian's DejaVu Sans */
};

/* Actions the user asked for with keys or the window, for the program to carry out.
 * The renderer handles camera, HUD, help and screenshot keys itself. */
enum render_action {
    RENDER_ACTION_QUIT = 1u << 0,
    RENDER_ACTION_CALIBRATE = 1u << 1,
    RENDER_ACTION_RECENTER = 1u << 2,
    RENDER_ACTION_PAUSE_TOGGLE = 1u << 3,
    RENDER_ACTION_RECORD_TOGGLE = 1u << 4, /* F9: start or stop recording the session */
    RENDER_ACTION_NEXT_SETUP = 1u << 5,    /* K: the next tracker setup (3, 4, 6, 8, 11) */
    RENDER_ACTION_NEXT_BODY = 1u << 6,     /* P: the other body (prior or procedural) */
};

struct render;

/* Opens the window, creates the OpenGL 3.3 core context and compiles the shaders.
 * Without a display, fails with a message saying so (EM_ERROR_UNSUPPORTED); a shader that
 * fails to compile or link is reported with its file and line (EM_ERROR_PARSE); a missing
 * font or shader file names the places tried (EM_ERROR_IO). `desc` may be NULL (all
 * defaults); its strings are copied. On success the caller owns *out_render. */
enum em_result render_create(const struct render_desc *desc, struct render **out_render,
                             struct em_error *err);

/* Closes the window and frees everything; takes NULL and clears the caller's pointer. */
void render_destroy(struct render **render);

/* Handles window events and keys; returns enum render_action bits. Never blocks. */
uint32_t render_poll(struct render *render);

/* Draws the scene with the current camera into the window and presents it. */
void render_draw(struct render *render, const struct render_scene *scene);

/* Draws the scene (no HUD, no mirroring) into the framebuffer currently bound, for one
 * headset eye: `view` (world to eye) and `projection` are column-major OpenGL matrices,
 * the viewport is width x height pixels. Uses none of the window's state (camera, size,
 * HUD); the window's context (render_make_current) must be current. */
void render_draw_eye(struct render *render, const struct render_scene *scene, const mat4 view,
                     const mat4 projection, int width, int height);

/* Makes the window's OpenGL context current on this thread (the headset view needs it). */
void render_make_current(struct render *render);

/* Writes what the window shows now (the last render_draw, HUD included) as a PNG. */
enum em_result render_screenshot(struct render *render, const char *path, struct em_error *err);

/* Size of the image render_draw makes, in drawable pixels. */
void render_get_size(const struct render *render, int *out_width, int *out_height);

/* Copies the last render_draw's image into `out_rgba` (width * height * 4 bytes, rows
 * from the top, as render_get_size gives). Returns false if `size` is too small. */
bool render_read_pixels(struct render *render, uint8_t *out_rgba, size_t size);

/* Where the world point `world_m` lands in the last render_draw's image (pixels from the
 * top left, mirroring included). Returns false when the point is behind the camera. */
bool render_project(const struct render *render, const vec3 world_m, float out_pixel_xy[2]);

void render_set_camera(struct render *render, enum render_camera camera);

enum render_camera render_get_camera(const struct render *render);

/* The camera's name ("mirror", "orbit", "front", "side", "top"). */
const char *render_camera_name(enum render_camera camera);

/* Shows or hides the scene's ghosts (as G does), and says whether they are shown. */
void render_set_ghost_visible(struct render *render, bool visible);

bool render_ghost_visible(const struct render *render);

/* Milliseconds of CPU time the last render_draw took (for the HUD and benchmarks). */
float render_last_draw_ms(const struct render *render);

#ifdef __cplusplus
}
#endif

#endif
