/*
 * A small OpenXR 1.0 runtime built only for the tests: the real Khronos loader loads it
 * through XR_RUNTIME_JSON. It serves scripted head and hand poses, session state
 * changes, losses, button presses and interaction profiles (tr_script.c), and checks
 * what the application does against the specification, recording each violation in the
 * report (tests/xr/tr_report.h) besides failing the call.
 *
 *   tr_runtime.c  loader negotiation, function table, instance, system, events, paths
 *   tr_script.c   the script and its pose stream
 *   tr_input.c    action sets, actions, suggested bindings (checked against the
 *                 specification's path lists), action state, spaces, locating
 *   tr_session.c  sessions, the state machine, frames, views, composition layers
 *   tr_gl.c       the OpenGL (Xlib/GLX) binding and swapchains
 *   tr_hand.c     XR_EXT_hand_tracking: hand trackers and their scripted joints, made
 *                 from the hand model (src/hand) in the poses tests/hand knows
 *
 * One instance at a time (as the loader allows). Its internal functions are static or
 * hidden: only the negotiation entry point and the report are exported.
 */
#ifndef EMBODY_TR_RUNTIME_H
#define EMBODY_TR_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <epoxy/gl.h>
#include <epoxy/glx.h>

#include <openxr/openxr.h>
#include <openxr/openxr_platform.h>

#include "../tr_report.h"

#define TR_EXPORT __attribute__((visibility("default")))

/* One lock for the whole runtime (recursive), held for the whole of each call: the layer
 * and the test applications call from several threads at once, and the tests must measure
 * their own thread safety, not the runtime's. TR_LOCKED(); as the first line of a call. */
void tr_lock(void);
void tr_unlock_scope(const int *unused);
#define TR_LOCKED()                                                                                \
    const int tr_locked_ __attribute__((cleanup(tr_unlock_scope), unused)) = (tr_lock(), 0)

#define TR_MAX_ROWS 100000
#define TR_MAX_EVENTS_SCRIPTED 256
#define TR_MAX_PRESSED 32
#define TR_MAX_PATHS 512
#define TR_MAX_OBJECTS 256
#define TR_MAX_ACTIONS 32
#define TR_MAX_BINDINGS 256
#define TR_EVENT_QUEUE 64
#define TR_SWAPCHAIN_IMAGES 3
#define TR_TRACKER_ROLES 8 /* waist, chest, left/right foot, knee, elbow */
#define TR_SYSTEM_ID 1
#define TR_EYE_WIDTH 96
#define TR_EYE_HEIGHT 80

/* ---- Script (tr_script.c) ------------------------------------------------------- */

enum tr_device { TR_HEAD = 0, TR_LEFT = 1, TR_RIGHT = 2, TR_DEVICE_COUNT = 3 };

struct tr_row {
    double t_s;
    XrPosef pose[TR_DEVICE_COUNT];
    bool valid[TR_DEVICE_COUNT];
};

enum tr_event_kind {
    TR_EV_STOP,
    TR_EV_EXIT,
    TR_EV_FOCUS,
    TR_EV_UNFOCUS,
    TR_EV_SESSION_LOSS,  /* LOSS_PENDING; calls keep working until the session is gone */
    TR_EV_SESSION_LOST,  /* LOSS_PENDING and calls fail at once with SESSION_LOST */
    TR_EV_INSTANCE_LOSS, /* loss pending event; calls keep working */
    TR_EV_INSTANCE_LOST, /* loss pending event and calls fail at once */
    TR_EV_PROFILE,
    TR_EV_PRESS,
    TR_EV_RELEASE,
    TR_EV_FLAGS,
    TR_EV_TRACKER_CONNECT,    /* a body tracker (role in `device`) connects */
    TR_EV_TRACKER_DISCONNECT, /* and goes */
    TR_EV_RECENTER,           /* the player recentres: STAGE changes (an event) */
    TR_EV_HAND,               /* hand tracking: hand `device` (0 left, 1 right) shows `flags`
                               * (enum tr_hand_pose) */
    TR_EV_CONTROLLER,         /* the controller of hand `device` is put down (flags 1) or
                               * picked up (flags 0) */
    TR_EV_VALUE,              /* input `path` reads `value` from now on */
    TR_EV_HAND_AT,            /* hand `device`'s tracked grip at `at_m` (flags 1), or back
                               * at its controller's (flags 0) */
};

/* What a tracked hand shows (XR_EXT_hand_tracking): not tracked, one of the poses of
 * tests/hand/hand_poses.h, or a fist with absurd joints (one joint each far away, NaN, of
 * a bad radius, on top of its neighbour), to be refused joint by joint. */
enum tr_hand_pose {
    TR_HAND_NONE = -1,
    TR_HAND_POINT = 0,
    TR_HAND_PINCH,
    TR_HAND_FIST,
    TR_HAND_OPEN,
    TR_HAND_THUMBS_UP,
    TR_HAND_ABSURD,
};

#define TR_MAX_VALUES 32

struct tr_scripted_event {
    long frame;
    enum tr_event_kind kind;
    char path[XR_MAX_PATH_LENGTH]; /* profile, press, release */
    int device;                    /* flags */
    XrSpaceLocationFlags flags;    /* flags; hand: the pose; controller: 1 off */
    float value;                   /* value */
    float at_m[3];                 /* hand_at */
};

struct tr_script {
    char path[1024];
    int row_count;
    struct tr_row *rows;
    char profile[XR_MAX_PATH_LENGTH];
    char hidden_extension[4][XR_MAX_EXTENSION_NAME_SIZE];
    int hidden_count;
    bool no_hmd;
    bool no_stage;
    bool manual_focus;
    float local_origin_y_m;
    int system_unavailable;  /* xrGetSystem failures after a session loss */
    int runtime_unavailable; /* xrCreateInstance failures after an instance loss */
    int event_count;
    struct tr_scripted_event events[TR_MAX_EVENTS_SCRIPTED];
    /* Body trackers (XR_HTCX_vive_tracker_interaction), by role (TR_TRACKER_ROLES order):
     * position (identity orientation) and whether each is connected from the start. */
    float tracker_position_m[TR_TRACKER_ROLES][3];
    unsigned trackers_at_start;
    bool vive_trackers; /* any tracker directive: XR_HTCX_vive_tracker_interaction offered */
    bool hand_tracking; /* "hand_tracking" or any hand event: XR_EXT_hand_tracking offered */
    bool meta_touch;    /* a meta/ profile named: the Touch Pro and Plus extensions offered */
};

/* Loads the script named by $EMBODY_TEST_RUNTIME_SCRIPT (again only when it changed).
 * Returns false (and records why) when it is missing or malformed. */
bool
tr_script_ensure_loaded(void);

/* ---- Objects ----------------------------------------------------------------------- */

enum tr_kind {
    TR_KIND_INSTANCE = 1,
    TR_KIND_SESSION,
    TR_KIND_SPACE,
    TR_KIND_ACTION_SET,
    TR_KIND_ACTION,
    TR_KIND_SWAPCHAIN,
    TR_KIND_HAND_TRACKER,
};

/* Extensions that add controller profiles, newer than Debian's OpenXR headers. */
#define TR_TOUCH_PRO_EXTENSION "XR_FB_touch_controller_pro"
#define TR_TOUCH_PLUS_EXTENSION "XR_META_touch_controller_plus"

/* Every handle points at one of these (first member of each object). */
struct tr_object {
    enum tr_kind kind;
    struct tr_object *parent;
};

struct tr_instance {
    struct tr_object obj;
    bool gl_enabled;
    bool headless_enabled;
    bool timespec_enabled;
    bool hp_enabled;
    bool vive_tracker_enabled;
    bool hand_tracking_enabled;
    bool touch_pro_enabled;  /* TR_TOUCH_PRO_EXTENSION */
    bool touch_plus_enabled; /* TR_TOUCH_PLUS_EXTENSION */
    bool gl_requirements_called;
    bool attached_any; /* some session has had action sets attached */
};

struct tr_action_set {
    struct tr_object obj;
    char name[XR_MAX_ACTION_SET_NAME_SIZE];
    bool attached;
};

struct tr_action {
    struct tr_object obj;
    struct tr_action_set *set;
    char name[XR_MAX_ACTION_NAME_SIZE];
    XrActionType type;
    unsigned subaction_mask; /* bit 0 left, bit 1 right; 0 = none given */
    bool state[2];           /* per hand, as of the last sync */
    bool changed[2];
    bool combined;
    bool combined_changed;
    bool active[2];
    float value[2]; /* float actions, as of the last sync */
};

struct tr_binding {
    char profile[XR_MAX_PATH_LENGTH];
    struct tr_action *action;
    char path[XR_MAX_PATH_LENGTH];
};

enum tr_space_kind { TR_SPACE_VIEW, TR_SPACE_LOCAL, TR_SPACE_STAGE, TR_SPACE_ACTION };

struct tr_space {
    struct tr_object obj;
    enum tr_space_kind kind;
    XrPosef offset;
    struct tr_action *action;
    int hand; /* for action spaces: 0, 1, or -1 (no subaction path) */
};

struct tr_swapchain {
    struct tr_object obj;
    int64_t format;
    uint32_t width;
    uint32_t height;
    GLuint texture[TR_SWAPCHAIN_IMAGES];
    int acquired[TR_SWAPCHAIN_IMAGES]; /* order of acquisition, in a queue */
    int acquired_count;
    int next_image;
    bool waited;            /* the oldest acquired image has been waited for */
    bool released_this_frame;
    int last_released;
    uint8_t released_center[4];
};

struct tr_session {
    struct tr_object obj;
    struct tr_instance *instance;
    bool headless;
    XrGraphicsBindingOpenGLXlibKHR gl;
    XrSessionState state; /* the last state queued */
    bool running;
    bool exit_pending;
    bool lost; /* calls fail with XR_ERROR_SESSION_LOST */
    bool attached;
    int frames_ended;
    bool frame_waited; /* a frame was waited for and not yet begun */
    bool frame_begun;
    XrTime predicted;
    XrView located[2]; /* what xrLocateViews gave for the current frame */
    bool views_located;
};

/* ---- Global state (tr_runtime.c) --------------------------------------------------- */

struct tr_state {
    struct tr_script script;
    struct tr_report report;
    struct tr_object *objects[TR_MAX_OBJECTS];
    int object_count;
    char paths[TR_MAX_PATHS][XR_MAX_PATH_LENGTH];
    int path_count;
    struct tr_instance *instance;
    bool instance_lost; /* calls fail with XR_ERROR_INSTANCE_LOST */
    int runtime_unavailable_left;
    int system_unavailable_left;
    long frame;              /* the current frame number, -1 before the first */
    int next_event;          /* index into script.events */
    char profile[XR_MAX_PATH_LENGTH]; /* the controllers' profile now */
    char pressed[TR_MAX_PRESSED][XR_MAX_PATH_LENGTH];
    int pressed_count;
    XrSpaceLocationFlags flags_override[TR_DEVICE_COUNT]; /* 0 = from the stream */
    struct tr_binding bindings[TR_MAX_BINDINGS];
    int binding_count;
    unsigned trackers_connected;                            /* bit per role */
    XrViveTrackerPathsHTCX tracker_paths[TR_TRACKER_ROLES]; /* what connection events point at */
    int hand_pose[2];       /* enum tr_hand_pose per hand */
    bool controller_off[2]; /* the hand's controller is put down: its actions inactive */
    bool hand_placed[2];    /* the tracked hand is at hand_at_m, not at its controller */
    float hand_at_m[2][3];
    char value_path[TR_MAX_VALUES][XR_MAX_PATH_LENGTH];
    float value[TR_MAX_VALUES];
    int value_count;
    XrEventDataBuffer queue[TR_EVENT_QUEUE];
    int queue_head;
    int queue_count;
};

extern struct tr_state tr;

/* Records a violation of the specification by the application and returns `result`. */
XrResult
tr_violation(XrResult result, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void
tr_register(struct tr_object *obj, enum tr_kind kind, struct tr_object *parent);

/* The object behind a handle, or NULL when it is not a live object of that kind. */
void *
tr_lookup(const void *handle, enum tr_kind kind);

/* Destroys an object and everything made from it. */
void
tr_destroy_object(struct tr_object *obj);

/* The string of a path, or NULL for an unknown path. */
const char *
tr_path_string(XrPath path);

XrPath
tr_path_intern(const char *text);

void
tr_queue_event(const void *event, size_t size);

/* XR_ERROR_INSTANCE_LOST after an abrupt loss, else XR_SUCCESS. */
XrResult
tr_instance_check(XrInstance handle, struct tr_instance **out);

/* ---- Script time -------------------------------------------------------------------- */

/* The stream row of the current frame. */
const struct tr_row *
tr_current_row(void);

/* XrTime of frame `frame`: from the stream's t, continuing at 60 Hz past its end. */
XrTime
tr_frame_time(long frame);

/* Advances to the next frame and fires the events scripted for it. */
void
tr_advance_frame(void);

/* ---- Input (tr_input.c) ------------------------------------------------------------- */

/* The role name of tracker role `r` ("waist" ... "right_elbow"), or -1 for a name. */
const char *tr_tracker_role_name(int r);
int tr_tracker_role_find(const char *name);

/* Connects or disconnects role `r`; a connection queues XrEventDataViveTrackerConnectedHTCX
 * when the instance enabled the extension. */
void tr_tracker_set_connected(int r, bool connected);

PFN_xrVoidFunction
tr_input_function(const char *name);

/* The profile the runtime binds now: the controllers' own if the application suggested
 * bindings for it, else khr/simple_controller if suggested, else "" (none). */
const char *
tr_effective_profile(void);

/* Pose of a space in STAGE at the current frame, with its location flags. */
XrSpaceLocationFlags
tr_space_pose(const struct tr_space *space, XrPosef *out_pose);

/* a^-1 * b */
XrPosef
tr_pose_relative(const XrPosef *a, const XrPosef *b);

XrPosef
tr_pose_compose(const XrPosef *a, const XrPosef *b);

bool
tr_pose_is_unit(const XrPosef *pose);

/* Queues an interaction profile change for every session with attached actions. */
void
tr_input_profile_changed(void);

/* The scripted value of input `path` (/user/hand/right/input/trigger/value), or -1 when
 * none was scripted. */
float tr_scripted_value(const char *path);

/* ---- Hand tracking (tr_hand.c) ------------------------------------------------------ */

PFN_xrVoidFunction
tr_hand_function(const char *name);

/* Fills XrSystemHandTrackingPropertiesEXT when it is chained to `props`. */
void
tr_hand_system_properties(XrSystemProperties *props);

/* ---- Session (tr_session.c) ---------------------------------------------------------- */

PFN_xrVoidFunction
tr_session_function(const char *name);

/* The live session (there is at most one), or NULL. */
struct tr_session *
tr_current_session(void);

void
tr_session_queue_state(struct tr_session *s, XrSessionState state);

/* Applies a scripted session event to the live session. */
void
tr_session_scripted(enum tr_event_kind kind);

/* XR_ERROR_SESSION_LOST / XR_ERROR_INSTANCE_LOST / XR_ERROR_HANDLE_INVALID or success. */
XrResult
tr_session_check(XrSession handle, struct tr_session **out);

/* ---- OpenGL (tr_gl.c) ------------------------------------------------------------ */

PFN_xrVoidFunction
tr_gl_function(const char *name);

/* Checks the Xlib binding against the current GLX state. */
XrResult
tr_gl_check_binding(const XrGraphicsBindingOpenGLXlibKHR *binding);

/* Validates the swapchains of a projection layer view (rect, release) for xrEndFrame. */
XrResult
tr_gl_check_view(struct tr_session *s, const XrCompositionLayerProjectionView *view, int index);

/* Starts a new frame for every swapchain (clears "released this frame"). */
void
tr_gl_frame_done(struct tr_session *s);

void
tr_gl_destroy_swapchain(struct tr_swapchain *sc);

#endif
