/*
 * Internals of the OpenXR input source, shared by the files of src/xr:
 *
 *   oxr_result.c    the one checking function every XrResult goes through, names
 *   oxr_common.c    profiles, tracker roles, XrSpaceLocation -> em_device_pose: the facts
 *                   the OpenXR layer (src/layer) uses too (oxr_common.h)
 *   oxr_instance.c  extensions, instance, system (phase 1)
 *   oxr_actions.c   action set, suggested bindings, per-frame action state (phase 2)
 *   oxr_trackers.c  body trackers (XR_HTCX_vive_tracker_interaction)
 *   oxr_hands.c     hand tracking (XR_EXT_hand_tracking) and each hand's fingers and
 *                   wrist: which source drives them, and the handovers
 *   oxr_session.c   session, reference spaces, events and the session state machine
 *   oxr_view.c      the headset view: GLX binding, swapchains, eye matrices, layer
 *   oxr_frame.c     next()/submit(): frame timing, locating, reconnecting
 *   oxr_source.c    the public functions of xr/xr.h
 *
 * Calls run one way, down this order (a file calls only those below it):
 *   source -> frame -> session -> instance -> actions, trackers, hands, view -> common,
 *   result
 *
 * Compiled with XR_USE_PLATFORM_XLIB, XR_USE_GRAPHICS_API_OPENGL and XR_USE_TIMESPEC.
 */
#ifndef EMBODY_OXR_INTERNAL_H
#define EMBODY_OXR_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <epoxy/gl.h>
#include <epoxy/glx.h>

#include <openxr/openxr.h>
#include <openxr/openxr_platform.h>

#include "embody/hand.h"
#include "embody/stream.h"
#include "xr/oxr_common.h"
#include "xr/xr.h"

#define OXR_HAND_COUNT 2
#define OXR_EYE_COUNT 2
#define OXR_MAX_SWAPCHAIN_IMAGES 8

/* ---- Checking results (oxr_result.c) -------------------------------------------- */

struct oxr_source;

/* Every OpenXR call goes through one of these. A failure is logged with the call's text,
 * the result's name and file:line, and remembered in ox->last_failure (for error
 * messages); a lost session or instance is noted in ox->session_lost/instance_lost.
 * OXR_CHECK logs failures as errors; OXR_TRY logs them at debug level, for calls whose
 * failure is an answer the caller handles (no runtime, no headset, an unknown profile). */
#define OXR_CHECK(ox, call) oxr_check((ox), (call), false, #call, __FILE__, __LINE__)
#define OXR_TRY(ox, call) oxr_check((ox), (call), true, #call, __FILE__, __LINE__)

XrResult
oxr_check(struct oxr_source *ox, XrResult result, bool quiet, const char *call,
          const char *file, int line);

/* "XR_ERROR_SESSION_LOST"; never NULL. */
const char *
oxr_result_name(XrResult result);

/* "FOCUSED"; never NULL. */
const char *
oxr_session_state_name(XrSessionState state);

/* ---- The source ------------------------------------------------------------------ */

/* How far the connection to the runtime reaches. */
enum oxr_link {
    OXR_LINK_NONE = 0, /* no instance: the runtime went away; reconnecting */
    OXR_LINK_INSTANCE, /* instance, system and actions, no session: recreating it */
    OXR_LINK_SESSION,  /* a session exists (running or not) */
    OXR_LINK_ENDED,    /* the runtime asked us to exit, or reconnecting gave up */
};

struct oxr_extensions {
    bool opengl;        /* XR_KHR_opengl_enable */
    bool headless;      /* XR_MND_headless */
    bool timespec;      /* XR_KHR_convert_timespec_time */
    /* Bit i: the runtime offers oxr_controller_profiles[i]'s extension (core profiles
     * always set). */
    uint32_t controller_profiles;
    bool vive_tracker;  /* XR_HTCX_vive_tracker_interaction */
    bool hand_tracking; /* XR_EXT_hand_tracking */
};

struct oxr_actions {
    XrActionSet set;
    XrAction grip;      /* pose, per hand */
    XrAction aim;       /* pose, per hand */
    XrAction calibrate; /* boolean, either hand */
    XrAction recenter;  /* boolean, either hand */
    XrPath hand[OXR_HAND_COUNT]; /* /user/hand/left, /user/hand/right */
    int profiles_accepted;
    /* Body trackers (XR_HTCX_vive_tracker_interaction, oxr_trackers.c): a pose action
     * with one subaction path per role, by enum em_tracker; none without the extension. */
    bool trackers;
    XrAction tracker;
    XrPath tracker_role[EM_TRACKER_COUNT];
    /* The fingers' inputs (oxr_finger_inputs), per hand. */
    XrAction finger_trigger;       /* float */
    XrAction finger_trigger_touch; /* boolean */
    XrAction finger_squeeze;       /* float */
    XrAction finger_squeeze_force; /* float */
    XrAction finger_thumb_touch;   /* boolean: any thumb sensor */
    XrAction finger_trigger_curl;  /* float: 0 pointed away .. 1 flat on the trigger */
};

/* What drives a hand's fingers or its wrist. */
enum oxr_hand_source {
    OXR_HAND_NONE = 0,   /* fingers: the relaxed hand; wrist: lost (flags 0, last pose) */
    OXR_HAND_CONTROLLER, /* the controller's inputs (fingers) or grip pose (wrist) */
    OXR_HAND_TRACKING,   /* XR_EXT_hand_tracking's joints */
};

/* One hand's state (oxr_hands.c). */
struct oxr_hand {
    XrHandTrackerEXT tracker; /* XR_NULL_HANDLE without the extension */
    struct hd_model model;
    struct hd_tracking_state tracking;
    struct hd_tracking_report report; /* of the last frame located */
    bool active;                      /* the runtime tracked the hand last frame */
    /* Fingers: the source, the pose given, and the blend from the last source's. */
    enum oxr_hand_source finger_source;
    struct hd_pose pose;
    struct hd_pose blend_from;
    double finger_blend_start_s;
    bool finger_blending;
    /* Wrist: the source, the grip pose given last, and the handover's offset (the last
     * pose given less the new source's, faded out over HD_HANDOVER_S). */
    enum oxr_hand_source wrist_source;
    struct em_device_pose given;
    bool given_valid;
    struct em_device_pose last_tracked;    /* last frame's grip from hand tracking */
    struct em_device_pose last_controller; /* last frame's controller grip (flags 0: none) */
    float handover_offset_m[3];
    float handover_rotation[4];
    double handover_start_s;
    bool handing_over;
    /* A controller put down: where it lies still since when; idle once it has lain still
     * while the tracked hand was elsewhere, until it moves again. */
    float still_at_m[3];
    double still_since_s;
    bool still_known;
    bool idle;
    int64_t update_ns; /* the last frame's cost, without locating the joints */
};

/* One frame's controller for a hand, as oxr_actions reads it. */
struct oxr_hand_controller {
    bool grip_active;    /* its grip pose action is active */
    bool fingers_active; /* its finger inputs are bound and active */
    struct hd_controller_input input;
};

/* One eye's swapchain and the framebuffer that draws into it. */
struct oxr_eye_target {
    XrSwapchain swapchain;
    int32_t width;
    int32_t height;
    uint32_t image_count;
    GLuint image[OXR_MAX_SWAPCHAIN_IMAGES];
    GLuint framebuffer;
    GLuint depth; /* renderbuffer, ours */
};

/* The headset view (normal mode only). */
struct oxr_view {
    Display *display;
    GLXContext context;
    GLXDrawable drawable;
    XrViewConfigurationView config[OXR_EYE_COUNT];
    XrEnvironmentBlendMode blend_mode;
    int64_t color_format;
    struct oxr_eye_target eye[OXR_EYE_COUNT];
    bool warned_no_context; /* said once that the context was not current */
};

struct oxr_source {
    struct in_source base;

    /* Settings, resolved from the desc. */
    char app_name[XR_MAX_APPLICATION_NAME_SIZE];
    bool headless;
    void (*draw_eye)(void *user, const struct oxr_eye_view *eye);
    void *user;
    float floor_height_m;
    int64_t headless_period_ns;
    int64_t reconnect_timeout_ns; /* < 0: do not reconnect */

    /* Instance level. */
    XrInstance instance;
    XrSystemId system;
    struct oxr_extensions ext;
    PFN_xrGetOpenGLGraphicsRequirementsKHR get_gl_requirements;
    PFN_xrConvertTimespecTimeToTimeKHR convert_timespec;
    char runtime_name[XR_MAX_RUNTIME_NAME_SIZE];
    char system_name[XR_MAX_SYSTEM_NAME_SIZE];
    struct oxr_actions actions;

    /* Session level. */
    XrSession session;
    XrSessionState state;
    bool running;
    bool stage;
    XrSpace base_space; /* STAGE, or LOCAL lowered to the floor */
    bool base_space_stale; /* the floor height changed: remake it before the next frame */
    XrSpace view_space;
    XrSpace grip_space[OXR_HAND_COUNT];
    XrSpace aim_space[OXR_HAND_COUNT];
    XrSpace tracker_space[EM_TRACKER_COUNT]; /* XR_NULL_HANDLE without the extension */
    struct oxr_hand hand[OXR_HAND_COUNT];
    PFN_xrCreateHandTrackerEXT create_hand_tracker; /* NULL without XR_EXT_hand_tracking */
    PFN_xrDestroyHandTrackerEXT destroy_hand_tracker;
    PFN_xrLocateHandJointsEXT locate_hand_joints;
    bool hand_tracking; /* the system supports it and the functions are loaded */
    uint32_t trackers_connected; /* EM_TRACKER_BIT per role, from the runtime's events */
    struct oxr_view view;

    /* Losses and reconnecting. */
    enum oxr_link link;
    bool session_lost;  /* a call returned XR_ERROR_SESSION_LOST */
    bool instance_lost; /* a call returned XR_ERROR_INSTANCE_LOST */
    int64_t lost_at_ns;
    int64_t retry_at_ns;
    char last_failure[256]; /* the last failed call, for messages */
    bool runtime_gone;      /* the stream ended because the runtime went away for good */

    /* The special successes already logged (XR_SESSION_NOT_FOCUSED, ...): each kind is
     * logged once, not every frame. */
    XrResult specials_logged[16];
    int specials_logged_count;

    /* The frame in flight (between next() and submit()). */
    bool frame_open;
    XrFrameState frame_state;
    XrTime frame_time; /* the time the frame's poses were located at */
    int64_t headless_next_ns;

    /* Frame times in seconds: the runtime's clock from its first frame, continued across
     * reconnections (a new instance may count time from elsewhere). */
    bool time_anchored;
    XrTime anchor_xr;
    double anchor_s;
    double last_time_s;
    int64_t last_frame_wall_ns;

    /* The last frame, whose values stay for devices that lose tracking. */
    struct em_tracking_frame last;
    struct st_fingers fingers; /* the last frame's (in_source_fingers) */
    struct em_device_pose aim[OXR_HAND_COUNT];
    char hand_profile[OXR_HAND_COUNT][XR_MAX_PATH_LENGTH];

    int instances_created;
    int sessions_created;
};

/* ---- Phases ------------------------------------------------------------------------ */

/* Checks the runtime's extensions, creates the instance, finds the headset and sets up
 * the actions: link becomes OXR_LINK_INSTANCE. EM_ERROR_UNSUPPORTED: no runtime, no
 * headset, a missing extension. */
enum em_result
oxr_instance_connect(struct oxr_source *ox, struct em_error *err);

/* Finds the head-mounted system (again, after a session loss). */
enum em_result
oxr_system_find(struct oxr_source *ox, struct em_error *err);

/* Destroys the instance and what lives in it (actions, paths): link becomes
 * OXR_LINK_NONE. The session must be destroyed first (oxr_session_destroy). */
void
oxr_instance_disconnect(struct oxr_source *ox);

enum em_result
oxr_actions_create(struct oxr_source *ox, struct em_error *err);

enum em_result
oxr_actions_attach(struct oxr_source *ox, struct em_error *err);

/* Syncs the actions and returns the button presses of this frame (enum em_frame_events);
 * a failure (other than an unfocused session) returns false. */
bool
oxr_actions_sync(struct oxr_source *ox, uint32_t *out_events);

/* True when the pose action is active for `hand` this frame. */
bool
oxr_actions_pose_active(struct oxr_source *ox, XrAction action, int hand);

/* Reads the finger inputs of `hand` this frame into `out` (its fingers_active and
 * input); false when a call failed. */
bool
oxr_actions_read_fingers(struct oxr_source *ox, int hand, struct oxr_hand_controller *out);

/* Reads and logs the current interaction profile of each hand. */
void
oxr_actions_report_profiles(struct oxr_source *ox);

/* Creates the session, its spaces and (normal mode) swapchains: link becomes
 * OXR_LINK_SESSION. */
enum em_result
oxr_session_create(struct oxr_source *ox, struct em_error *err);

/* Destroys the session and its children: link becomes OXR_LINK_INSTANCE. */
void
oxr_session_destroy(struct oxr_source *ox);

/* (Re)creates the base space for the current floor height. */
enum em_result
oxr_session_create_base_space(struct oxr_source *ox, struct em_error *err);

/* Reads all pending events and drives the state machine (begin on READY, end on
 * STOPPING, destroy on EXITING/LOSS_PENDING, disconnect on instance loss). */
void
oxr_session_poll_events(struct oxr_source *ox);

/* Handles losses noted by oxr_check since the last call: tears down what was lost. */
void
oxr_session_handle_losses(struct oxr_source *ox);

/* Checks the view configuration and blend modes of the system (normal mode). */
enum em_result
oxr_view_check_system(struct oxr_source *ox, struct em_error *err);

/* Fills the Xlib/GLX graphics binding from the current OpenGL context. */
enum em_result
oxr_view_binding(struct oxr_source *ox, XrGraphicsBindingOpenGLXlibKHR *out_binding,
                 struct em_error *err);

enum em_result
oxr_view_create_swapchains(struct oxr_source *ox, struct em_error *err);

void
oxr_view_destroy_swapchains(struct oxr_source *ox);

/* Draws both eyes for the open frame and fills the projection layer; returns false when
 * there is nothing to show (views not valid) and a negative result on failure. */
enum em_result
oxr_view_render(struct oxr_source *ox, XrCompositionLayerProjection *out_layer,
                XrCompositionLayerProjectionView out_views[OXR_EYE_COUNT], bool *out_drawn);

/* OpenGL projection for an asymmetric field of view (tangents of the four half-angles),
 * and the view matrix (inverse of the eye's pose). Exposed for the tests. */
void
oxr_projection_from_fov(const XrFovf *fov, float near_m, float far_m, mat4 out);

void
oxr_view_from_pose(const XrPosef *eye_pose, mat4 out);

enum em_result
oxr_frame_next(struct in_source *src, struct em_tracking_frame *out_frame);

enum em_result
oxr_frame_submit(struct in_source *src);

/* Ends an open frame with no layers (the app skipped submit, or the frame is dropped). */
void
oxr_frame_end_empty(struct oxr_source *ox);

/* ---- Body trackers (oxr_trackers.c) ------------------------------------------------ */

/* With the extension: the tracker pose action (one subaction path per role) and the
 * suggested bindings of /interaction_profiles/htc/vive_tracker_htcx. Call after the other
 * actions are made, before attaching. */
enum em_result oxr_trackers_create_actions(struct oxr_source *ox, struct em_error *err);

/* The action spaces of the roles (after the session is made), and their end. */
enum em_result oxr_trackers_create_spaces(struct oxr_source *ox, struct em_error *err);

void oxr_trackers_destroy_spaces(struct oxr_source *ox);

/* XrEventDataViveTrackerConnectedHTCX: logs the tracker's role. */
void oxr_trackers_on_connected(struct oxr_source *ox, const XrEventDataBuffer *event);

/* Locates every role whose pose action is active: tracker_present and poses in `f`. */
bool oxr_trackers_locate(struct oxr_source *ox, struct em_tracking_frame *f);

/* ---- Hands (oxr_hands.c) ---------------------------------------------------------- */

/* Sizes both hands' models and relaxes them (once, when the source is made). */
void oxr_hands_init(struct oxr_source *ox);

/* After the instance and system: loads XR_EXT_hand_tracking's functions and asks the
 * system whether it tracks hands (when the runtime offers the extension). */
enum em_result oxr_hands_load(struct oxr_source *ox, struct em_error *err);

/* A hand tracker per hand (after the session is made), and their end. */
enum em_result oxr_hands_create_trackers(struct oxr_source *ox, struct em_error *err);

void oxr_hands_destroy_trackers(struct oxr_source *ox);

/* One frame of hand `hand` at `time_s`: locates its joints (with a tracker), chooses what
 * drives its fingers and its wrist, and writes the fingers into ox->fingers and the
 * hand's grip pose into `inout_grip` (the controller's, located, on the way in). False
 * when a call failed. */
bool oxr_hands_update(struct oxr_source *ox, int hand, double time_s,
                      const struct oxr_hand_controller *controller,
                      struct em_device_pose *inout_grip);

#endif
