/*
 * Live tracking from an OpenXR runtime, as an input source (include/embody/input.h):
 * head (VIEW space) and both hands (grip poses) located in STAGE space (or LOCAL with
 * the floor from calibration) at the predicted display time, plus calibrate and recenter
 * buttons. In the normal mode it also draws the scene for both eyes through a callback
 * and submits a projection layer; in the headless mode (XR_MND_headless) it only tracks.
 *
 * The source survives what a runtime does during a session: it begins and ends the
 * session as the runtime asks, recreates a lost session, reconnects after the runtime
 * itself went away (for a while), and ends the stream (EM_END_OF_STREAM) when the runtime
 * asks the application to exit.
 *
 * Fingers and hands: with XR_EXT_hand_tracking (when the runtime offers it and the headset
 * tracks hands) both hands' joints are read each frame; the controllers' finger inputs
 * (trigger, its touch, squeeze, the thumb's touch sensors, per interaction profile) are
 * bound too. Each hand's fingers come from hand tracking while it tracks the hand, else
 * from the controller, else relaxed, blended over HD_HANDOVER_S on a change; a hand's
 * wrist (the frame's hand pose) comes from hand tracking while its controller is away or
 * put down. in_source_fingers (embody/input.h) gives each frame's fingers.
 *
 * Buttons (suggested bindings; both hands unless a hand is named):
 *
 *     interaction profile              calibrate               recenter
 *     khr/simple_controller            select/click            menu/click
 *     valve/index_controller           a/click                 b/click
 *     oculus/touch_controller          left x, right a/click   left y, right b/click
 *     htc/vive_controller              menu/click              squeeze/click
 *     microsoft/motion_controller      menu/click              squeeze/click
 *     hp/mixed_reality_controller      left x, right a/click   left y, right b/click
 *       (only when the runtime offers XR_EXT_hp_mixed_reality_controller)
 */
#ifndef EMBODY_XR_H
#define EMBODY_XR_H

#include <stdbool.h>
#include <stdint.h>

#include <cglm/types.h>

#include "embody/hand.h"
#include "embody/input.h"
#include "embody/result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One eye's view, for drawing into the swapchain image that is bound when called.
 * `view` takes STAGE coordinates (metres, +Y up, floor at y = 0) to the eye's
 * coordinates (-Z forward); `projection` is an OpenGL clip-space projection (near
 * 0.05 m, far 100 m) for the eye's asymmetric field of view. Both column-major. */
struct oxr_eye_view {
    int eye; /* 0 left, 1 right */
    mat4 view;
    mat4 projection;
    int width;  /* pixels; the viewport is already set to width x height */
    int height;
};

struct oxr_desc {
    const char *app_name; /* default "embody" */
    bool headless;        /* tracking only, no rendering (needs XR_MND_headless and
                           * XR_KHR_convert_timespec_time) */
    /* Called between xrBeginFrame and xrEndFrame for each eye, with the window's OpenGL
     * context current and the eye's framebuffer (colour + depth) bound. Required unless
     * headless; it must leave the framebuffer binding alone. */
    void (*draw_eye)(void *user, const struct oxr_eye_view *eye);
    void *user;
    /* For LOCAL space (runtimes without STAGE): the floor's height below LOCAL's origin
     * in metres. Default (0) 1.6 m; calibration changes it with oxr_source_set_floor. */
    float floor_height_m;
    /* Frames per second in the headless mode, where the runtime sets no pace. Default
     * (0) 60, the stream files' rate. */
    float headless_rate_hz;
    /* After the runtime went away (instance lost): how long to keep trying to reconnect
     * before ending the stream. Default (0) 10 s; negative: end at once. */
    float reconnect_timeout_s;
};

/* Creates the OpenXR source (the returned source is owned by the caller: destroy it with
 * in_source_destroy). Fails with EM_ERROR_UNSUPPORTED and a one-line reason in `err`
 * when there is no runtime, no headset, or a needed extension is missing, so the program
 * can fall back to the demo; EM_ERROR_INVALID_ARGUMENT for a bad `desc`; other failures
 * are EM_ERROR_RUNTIME, with the call and the runtime's result in the message. In the
 * normal mode the window's OpenGL context must be current (through GLX on X11), and it
 * must be current again whenever in_source_next/submit/destroy are called. */
enum em_result
oxr_source_create(const struct oxr_desc *desc, struct in_source **out_source,
                  struct em_error *err);

/* True when `src` was made by oxr_source_create. */
bool
oxr_source_is_openxr(const struct in_source *src);

/* Sets the floor's height below LOCAL's origin (metres, 0 to 3) after calibration; the
 * frames from the next in_source_next on use it. Has no effect on the poses when the
 * runtime offers STAGE (its floor is at y = 0 already). */
enum em_result
oxr_source_set_floor(struct in_source *src, float floor_height_m, struct em_error *err);

/* What the source knows about the runtime and the session, for the HUD, logs and tests.
 * Strings are copies: the struct stays valid after the source changes or goes away. */
struct oxr_status {
    char runtime_name[128];  /* "" before the first instance */
    char system_name[256];
    char session_state[32];  /* "IDLE", "READY", "FOCUSED", ... or "NONE" without one */
    char hand_profile[2][256]; /* current interaction profile per hand, "" when none */
    bool running;            /* the session is running (between begin and end) */
    bool headless;
    bool stage_space;        /* poses are in STAGE; false: LOCAL raised by the floor */
    int instances_created;   /* > 1 after reconnecting to the runtime */
    int sessions_created;    /* > 1 after a lost session was recreated */
    int profiles_accepted;   /* interaction profiles whose bindings the runtime accepted */
    bool runtime_gone;       /* the stream ended because the runtime went away and did not
                                come back (not because it asked the program to exit) */
    bool trackers;           /* body trackers bound (XR_HTCX_vive_tracker_interaction) */
    /* Aim poses (pointing rays: -Z forward) of the last frame, same space and flags as
     * the grip poses in the frame. Index 0 left, 1 right. */
    struct em_device_pose aim[2];
    bool hand_tracking; /* XR_EXT_hand_tracking in use (hand trackers made) */
    /* Each hand (0 left) as of the last frame. */
    struct {
        bool tracked;              /* hand tracking saw the hand */
        const char *finger_source; /* "hand tracking", "controller" or "none" (relaxed) */
        const char *wrist_source;  /* "controller", "hand tracking" or "none" (lost) */
        bool controller_idle;      /* its controller was put down */
        int refused_joints;        /* of hand tracking's 26 (enum hd_joint_fault each) */
        uint32_t fallback_fingers; /* fingers (1 << f) that kept their last good pose */
        uint8_t joint_fault[HD_XR_JOINT_COUNT];
        struct hd_pose pose; /* the fingers given (as in_source_fingers) */
        float update_us;     /* the last frame's cost of choosing and converting (the
                                runtime's xrLocateHandJointsEXT not counted) */
    } hand[2];
};

void
oxr_source_get_status(const struct in_source *src, struct oxr_status *out_status);

#ifdef __cplusplus
}
#endif

#endif
