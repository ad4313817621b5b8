/*
 * Internals of embody's OpenXR API layer (XR_APILAYER_EMBODY_body_tracking): the
 * application's calls pass through it to the layer below (another layer or the runtime),
 * and it answers XR_FB_body_tracking and XR_META_body_tracking_full_body itself with
 * embody's reconstruction from the headset and the controllers.
 *
 *   lyr_layer.c    negotiation with the loader, xrCreateApiLayerInstance, the dispatch
 *                  table, xrGetInstanceProcAddr, instance and session bookkeeping, events
 *   lyr_input.c    the layer's own action set: bindings merged into the application's,
 *                  attached and synced with its sets; the spaces it locates devices with;
 *                  the controllers' finger inputs
 *   lyr_tracker.c  xrCreateBodyTrackerFB, xrLocateBodyJointsFB, xrGetBodySkeletonFB,
 *                  xrDestroyBodyTrackerFB; calibration
 *   lyr_settings.c the settings: config/layer.json, the environment, the body's data
 *   lyr_joints.c   embody's skeleton -> the FB / META joint sets, the relaxed hand or the
 *                  hand model's pose (hand tracking, the controllers' inputs)
 *   lyr_joint_frames.c  the joints' axes each API's apps expect (Meta's for FB / META)
 *   lyr_bd.c       XR_BD_body_tracking on top of a META full-body tracker, in the frames
 *                  its specification gives
 *
 * Calls run one way: layer -> bd -> tracker -> input, joints, settings; joints ->
 * joint_frames; those call nothing of the others; lyr_records.c is below them all.
 *
 * Threads: the specification lets an application call xrLocateBodyJointsFB,
 * xrGetBodySkeletonFB, xrCreateBodyTrackerFB, xrSyncActions, xrPollEvent, xrLocateSpace
 * and the rest from any threads at once; only the handle a destroy call takes
 * (xrDestroyBodyTrackerFB, xrDestroySpace, xrDestroySession, xrDestroyInstance) is
 * externally synchronized. So each session has a lock, held for the whole of every call
 * that touches the session's state: a tracker's body update, calibration and skeleton
 * read, recalibration on a recentre, tracker creation and destruction, the lazy attach
 * and space creation, the floor's placement (which replaces the reference space: every
 * user of it holds the lock), the sync's flag, the hands' interaction profiles (marked
 * stale by the application's xrPollEvent, read again by the next finger read). A handle the layer owns is destroyed only
 * under that lock. The records (lyr_records.c) have their own lock, taken before a
 * session's, never after; each instance's lock guards only the profiles the application
 * suggested. The hand trackers (lyr_session::hand_tracker) and each body tracker's
 * hand state (lyr_tracker.c: model, last good finger poses, handover weight) are the
 * session's state like the rest: created, used and destroyed under its lock. Calls the
 * application makes through the layer to the runtime (its own
 * xrSyncActions) run outside the session's lock. lyr_bd.c's table lock and a BD
 * tracker's lock are taken before the records' and a session's, never under them
 * (session_free marks a session's BD trackers before it takes the session's lock).
 */
#ifndef EMBODY_LYR_INTERNAL_H
#define EMBODY_LYR_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <openxr/openxr.h>

#include "embody/body.h"
#include "embody/hand.h"
#include "embody/input.h"
#include "embody/openxr_ext.h"
#include "embody/prior.h"
#include "embody/skeleton.h"

#define LYR_LAYER_NAME "XR_APILAYER_EMBODY_body_tracking"
#define LYR_HAND_COUNT 2
#define LYR_MAX_PROFILES 16
#define LYR_MAX_SESSIONS 4
#define LYR_MAX_TRACKERS 8
#define LYR_MAX_SETS 64 /* action sets in one attach or sync, the layer's included */

/* The layer's finger actions, bound per profile from oxr_finger_inputs. */
enum lyr_finger_action {
    LYR_FINGER_TRIGGER = 0,   /* float */
    LYR_FINGER_TRIGGER_TOUCH, /* boolean */
    LYR_FINGER_SQUEEZE,       /* float */
    LYR_FINGER_SQUEEZE_FORCE, /* float */
    LYR_FINGER_TRIGGER_CURL,  /* float: 0 pointed away .. 1 flat on the trigger */
    LYR_FINGER_THUMB_TOUCH,   /* boolean, every thumb sensor of the profile (last) */
    LYR_FINGER_ACTION_COUNT,
};

/* The functions of the layer below that the layer calls or wraps. */
struct lyr_next {
    PFN_xrGetInstanceProcAddr get_instance_proc_addr;
    PFN_xrDestroyInstance destroy_instance;
    PFN_xrGetSystemProperties get_system_properties;
    PFN_xrPollEvent poll_event;
    PFN_xrStringToPath string_to_path;
    PFN_xrCreateSession create_session;
    PFN_xrDestroySession destroy_session;
    PFN_xrCreateActionSet create_action_set;
    PFN_xrDestroyActionSet destroy_action_set;
    PFN_xrCreateAction create_action;
    PFN_xrSuggestInteractionProfileBindings suggest_bindings;
    PFN_xrAttachSessionActionSets attach_action_sets;
    PFN_xrSyncActions sync_actions;
    PFN_xrEnumerateReferenceSpaces enumerate_reference_spaces;
    PFN_xrCreateReferenceSpace create_reference_space;
    PFN_xrCreateActionSpace create_action_space;
    PFN_xrDestroySpace destroy_space;
    PFN_xrLocateSpace locate_space;
    PFN_xrGetActionStateFloat get_action_state_float;
    PFN_xrGetActionStateBoolean get_action_state_boolean;
    PFN_xrGetCurrentInteractionProfile get_current_interaction_profile;
    /* XR_EXT_hand_tracking, when the instance below has it (lyr_instance::hands). */
    PFN_xrCreateHandTrackerEXT create_hand_tracker;
    PFN_xrDestroyHandTrackerEXT destroy_hand_tracker;
    PFN_xrLocateHandJointsEXT locate_hand_joints;
};

struct lyr_tracker;

/* Every field but instance and handle (fixed at creation) is read and written only with
 * `lock` held. */
struct lyr_session {
    struct lyr_instance *instance;
    XrSession handle;
    pthread_mutex_t lock;
    XrSessionState state;
    bool attached;  /* the layer's action set is attached to the session */
    bool app_syncs; /* the application syncs actions (ours ride along) */
    bool spaces_made;
    XrSpace reference; /* the body's own space: STAGE, else LOCAL lowered to the floor */
    bool local;        /* no STAGE: the floor is estimated from the headset */
    bool floor_known;
    float floor_local_m; /* the floor's y in LOCAL */
    XrSpace view;
    XrSpace grip[LYR_HAND_COUNT];
    XrSpace body_tracker[EM_TRACKER_COUNT]; /* XR_NULL_HANDLE without trackers */
    struct lyr_tracker *trackers[LYR_MAX_TRACKERS];
    /* The layer's own hand trackers (lyr_instance::hands), made with the spaces and
     * destroyed with them; XR_NULL_HANDLE without. Indexed by enum hd_hand. */
    XrHandTrackerEXT hand_tracker[LYR_HAND_COUNT];
    /* Each hand's interaction profile as an index in oxr_controller_profiles (-1: none
     * or one the layer does not know), read again after an interaction profile change
     * (profiles_known false). */
    bool profiles_known;
    int hand_profile[LYR_HAND_COUNT];
};

/* The body's settings, resolved once per instance from the environment and the data. */
struct lyr_settings {
    struct sk_skeleton skeleton; /* config/humanoid.json */
    struct body_desc body;       /* the body settings file (lyr_settings.c) */
    struct pr_model prior;
    bool has_prior;
    float fixed_height_m; /* the settings' height, or 0: estimated from the headset */
};

struct lyr_instance {
    XrInstance handle;
    struct lyr_next next;
    bool serving;   /* the layer answers body tracking (the app enabled it, the runtime
                       does not have it) */
    bool full_body; /* XR_META_body_tracking_full_body enabled */
    /* Body trackers (XR_HTCX_vive_tracker_interaction): enabled below, by the application
     * or by the layer for itself when the runtime offers it. */
    bool trackers;
    bool app_trackers; /* the application enabled it: it sees the tracker events */
    /* XR_EXT_hand_tracking below (the application's, or enabled by the layer for itself):
     * the fingers come from the hand model fitted to the tracked joints. */
    bool hands;
    struct lyr_settings settings;
    bool settings_loaded;

    /* The layer's own input (lyr_input.c). */
    XrActionSet set;
    XrAction grip;
    XrPath hand[LYR_HAND_COUNT];
    XrAction finger[LYR_FINGER_ACTION_COUNT]; /* enum lyr_finger_action, both hands */
    XrAction tracker;                         /* pose, one subaction path per role */
    XrPath tracker_role[EM_TRACKER_COUNT];
    pthread_mutex_t profiles_lock;         /* guards the two below */
    XrPath app_profiles[LYR_MAX_PROFILES]; /* profiles the application suggested */
    int app_profile_count;

    struct lyr_session *sessions[LYR_MAX_SESSIONS];
};

/* ---- lyr_records.c -------------------------------------------------------------- */

/* The instance record of a handle, or NULL. An instance lives until xrDestroyInstance,
 * which no other call may overlap (external synchronization with its children). */
struct lyr_instance *lyr_instance_find(XrInstance handle);
/* Registers `inst`; false when MAX_INSTANCES are live. After removal no call finds it or
 * its sessions. */
bool lyr_instance_add(struct lyr_instance *inst);
void lyr_instance_remove(const struct lyr_instance *inst);
/* Registers the session (its lock initialised); false when LYR_MAX_SESSIONS are live. */
bool lyr_session_add(struct lyr_instance *inst, struct lyr_session *s);
/* Takes the session of `handle` out of the records (no call finds it afterwards) and
 * returns it, or NULL. Its lock may still be held by one call that found it before: take
 * the lock before freeing it. */
struct lyr_session *lyr_session_take(XrSession handle);
/* The session of `handle` with its lock held, or NULL: lyr_session_unlock when done. */
struct lyr_session *lyr_session_lock(XrSession handle);
/* The session holding the tracker `handle`, locked, and the tracker; NULL (and NULL
 * there) for a handle that is not a live tracker. */
struct lyr_session *lyr_tracker_lock(XrBodyTrackerFB handle, struct lyr_tracker **out_tracker);
void lyr_session_unlock(struct lyr_session *s);
/* The layer below of some live instance, for a session the layer keeps no record of (one
 * past LYR_MAX_SESSIONS, or not a session at all): the call goes down as it came, and
 * what is below answers it. NULL when there is no instance. */
const struct lyr_next *lyr_any_next(void);

/* ---- lyr_input.c ----------------------------------------------------------------- */

/* Creates the layer's action set, grip and finger actions (after the instance is made). */
XrResult lyr_input_create(struct lyr_instance *inst);

/* The application's suggestion, with the layer's grip and finger bindings added for the
 * controller profiles it knows; other profiles pass unchanged. */
XrResult lyr_input_suggest(struct lyr_instance *inst,
                           const XrInteractionProfileSuggestedBinding *suggested);

/* The functions below that take a session are called with its lock held. */

/* Attaches the application's sets and the layer's (suggesting the layer's bindings for
 * the common profiles first when the application suggested none). */
XrResult lyr_input_attach(struct lyr_session *s, const XrSessionActionSetsAttachInfo *info);

/* The application's sync with the layer's set added, built in `buffer` (or `info` itself
 * when the layer adds nothing); notes that the application syncs. The caller passes it
 * down after unlocking. */
struct lyr_sync_buffer {
    XrActiveActionSet active[LYR_MAX_SETS];
    XrActionsSyncInfo info;
};
const XrActionsSyncInfo *lyr_input_sync_info(struct lyr_session *s, const XrActionsSyncInfo *info,
                                             struct lyr_sync_buffer *buffer);

/* Makes sure the layer's set is attached and its spaces exist (for an application that
 * never attached its own); false when that cannot be done now. */
bool lyr_input_ready(struct lyr_session *s);

/* Syncs the layer's set alone, for applications that never sync (no actions of theirs). */
void lyr_input_sync_own(struct lyr_session *s);

/* The head (VIEW), the grips and any body trackers located in the layer's reference space
 * at `time`, as a tracking frame (time_s left to the caller). What the runtime does not
 * give as valid keeps its values from `last` (the previous frame; NULL: none) with its
 * flags cleared (oxr_location_to_pose). */
XrResult lyr_input_locate(struct lyr_session *s, XrTime time, const struct em_tracking_frame *last,
                          struct em_tracking_frame *out);

/* LOCAL only: puts the reference space's origin on the floor, `floor_local_m` in LOCAL
 * (a new space replaces the old one, destroyed: every user of it holds the lock). */
XrResult lyr_input_set_floor(struct lyr_session *s, float floor_local_m);

/* Locates hand `h`'s 26 joints in the layer's reference space at `time` (the session's
 * lock held); false when the session has no hand tracker or the call failed. */
bool lyr_input_locate_hand(struct lyr_session *s, int h, XrTime time, struct hd_xr_hand *out);
/* Hand `h`'s finger inputs as the last sync left them, and its controller's profile.
 * False when there are none to use: the inputs not active (no controller, nothing bound,
 * the session not focused) or a profile src/hand does not know. */
bool lyr_input_read_fingers(struct lyr_session *s, int h, struct hd_controller_input *out,
                            const struct hd_profile **out_profile);
/* Destroys the layer's spaces of the session (before the session goes). */
void lyr_input_destroy_spaces(struct lyr_session *s);

/* ---- lyr_tracker.c, lyr_settings.c ----------------------------------------------- */

XrResult XRAPI_CALL lyr_create_body_tracker(XrSession session,
                                            const XrBodyTrackerCreateInfoFB *info,
                                            XrBodyTrackerFB *out_tracker);
XrResult XRAPI_CALL lyr_destroy_body_tracker(XrBodyTrackerFB tracker);
XrResult XRAPI_CALL lyr_locate_body_joints(XrBodyTrackerFB tracker,
                                           const XrBodyJointsLocateInfoFB *info,
                                           XrBodyJointLocationsFB *locations);
XrResult XRAPI_CALL lyr_get_body_skeleton(XrBodyTrackerFB tracker, XrBodySkeletonFB *skeleton);

/* Frees a tracker (the session's end, the instance's end; the session's lock held). */
void lyr_tracker_free(struct lyr_tracker *t);

/* The player recentred (XrEventDataReferenceSpaceChangePending): every tracker of the
 * session forgets its history and calibrates again (the session's lock held). */
void lyr_trackers_recalibrate(struct lyr_session *s);

/* Reads the settings (skeleton, body settings, prior, height) for an instance. */
bool lyr_settings_load(struct lyr_settings *settings);
void lyr_settings_fini(struct lyr_settings *settings);

/* ---- lyr_joints.c ---------------------------------------------------------------- */

/* The joint count of a set: 70 (DEFAULT_FB), 84 (FULL_BODY_META), or 0 for another. */
uint32_t lyr_joint_count(XrBodyJointSetFB set);

/* Poses of the `count` joints of a set (lyr_joint_count) in the body's space, from a pose
 * of embody's skeleton: the root on the floor (y = floor_y_m) under the hips, turned by
 * heading_rad about +Y. */
struct lyr_joint_pose {
    vec3 position_m;
    versor rotation;
};
/* A hand's fingers from the hand model (src/hand) instead of the relaxed hand: `pose` in
 * `model`, weighted by `weight` (0 the relaxed hand, 1 the pose; between, each joint is
 * interpolated, so a handover never jumps). The pose's wrist is put at the body's wrist. */
struct lyr_hand_shape {
    const struct hd_model *model;
    const struct hd_pose *pose;
    float weight;
};
/* `hands` (NULL: both relaxed) is indexed by enum hd_hand. */
void lyr_joints_from_pose(const struct sk_skeleton *skeleton, const struct sk_pose *pose,
                          float heading_rad, float floor_y_m, uint32_t count,
                          const struct lyr_hand_shape *hands, struct lyr_joint_pose *out);

/* The parent of each joint of the set (XR_BODY_JOINT_NONE_FB for the root). */
int32_t lyr_joint_parent(uint32_t joint);

/* Per joint: 0 inferred, 1 the head device, 2 the left controller, 3 the right. */
int lyr_joint_driver(uint32_t joint);

/* The joint a body tracker (enum em_tracker) holds: hips, upper spine (chest), ankles,
 * lower legs (knees), lower arms (elbows); -1 when it is not in a set of `count` joints. */
int lyr_tracker_joint(int tracker, uint32_t count);

#endif
