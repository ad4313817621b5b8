/*
 * Hands: one hand model (five fingers of three joints, with limits), and what drives it:
 * hand tracking (XR_EXT_hand_tracking's 26 joints, given in our own struct: the core needs
 * no OpenXR), the controllers' buttons and touch sensors (per interaction profile), or
 * nothing (the relaxed pose). docs/hands.md says why it is built this way.
 *
 * The hand frame. Every position and rotation here is in one frame per hand, the axes of
 * XR_EXT_hand_tracking's wrist joint: origin at the wrist, -Z from the wrist towards the
 * middle finger's knuckle, +Y out of the back of the hand, +X = Y x Z (towards the thumb
 * on the left hand, towards the little finger on the right). Lengths in metres, angles in
 * radians, quaternions x, y, z, w.
 *
 * A finger pose is angles: three flexions per finger (positive closes the finger towards
 * the palm) and one abduction at its first joint (positive turns it away from the middle
 * finger; the middle finger's towards the thumb; the thumb's away from the palm). The
 * joints' local rotations follow from them (hd_pose_local_rotations), rest-relative: at
 * rest every joint's frame is the hand frame, a child's rest offset points along its
 * finger's rest direction, and a rotation turns everything below the joint.
 *
 * Nothing here allocates; every per-frame function is a pure function of its arguments
 * (and of the caller-owned tracking state).
 */
#ifndef EMBODY_HAND_H
#define EMBODY_HAND_H

#include <stdbool.h>
#include <stdint.h>

#include "embody/export.h"
#include "embody/result.h"

#ifdef __cplusplus
extern "C" {
#endif

enum hd_hand {
    HD_LEFT = 0,
    HD_RIGHT = 1,
    HD_HAND_COUNT = 2,
};

enum hd_finger {
    HD_THUMB = 0,
    HD_INDEX,
    HD_MIDDLE,
    HD_RING,
    HD_LITTLE,
    HD_FINGER_COUNT,
};

/* Three joints per finger, VRM 1.0's finger bones: thumb metacarpal, proximal, distal;
 * the others proximal, intermediate, distal. Joint j of finger f is index f * 3 + j. */
#define HD_FINGER_JOINTS 3
#define HD_JOINT_COUNT (HD_FINGER_COUNT * HD_FINGER_JOINTS)

/* "thumb", "index", "middle", "ring", "little". */
EMBODY_API const char *hd_finger_name(enum hd_finger finger);

/* VRM 1.0's humanoid bone name of a finger joint ("leftThumbMetacarpal", ...
 * "rightLittleDistal"); `joint` in [0, HD_JOINT_COUNT). */
EMBODY_API const char *hd_vrm_bone_name(enum hd_hand hand, int joint);

/* Unity's HumanBodyBones name of the same bone, as VMC sends it ("LeftThumbProximal" for
 * VRM's leftThumbMetacarpal: Unity names the thumb's bones one step further out). */
EMBODY_API const char *hd_unity_bone_name(enum hd_hand hand, int joint);

/* ---- The model ----------------------------------------------------------------------- */

#define HD_DEFAULT_HAND_LENGTH_M 0.19f /* wrist to the middle fingertip, an adult's */
#define HD_MIN_HAND_LENGTH_M 0.08f
#define HD_MAX_HAND_LENGTH_M 0.30f

/* Zero means default. */
struct hd_model_desc {
    enum hd_hand hand;
    float hand_length_m; /* 0: HD_DEFAULT_HAND_LENGTH_M; else within the min and max */
    /* Each finger bone's length as an avatar has it (joint to next joint, the last to the
     * tip); 0 keeps the sized default's. Within HD_MIN_BONE_LENGTH_M to
     * HD_MAX_BONE_LENGTH_M. */
    float bone_m[HD_FINGER_COUNT][HD_FINGER_JOINTS];
};

#define HD_MIN_BONE_LENGTH_M 0.005f
#define HD_MAX_BONE_LENGTH_M 0.12f

/* A sized hand: where each finger starts, its bones and limits, in the hand frame. */
struct hd_model {
    enum hd_hand hand;
    float hand_length_m;
    float base_m[HD_FINGER_COUNT][3];                /* the finger's first joint */
    float metacarpal_m[HD_FINGER_COUNT][3];          /* XR's metacarpal joint (the thumb's: base) */
    float bone_m[HD_FINGER_COUNT][HD_FINGER_JOINTS]; /* joint to next joint, last to tip */
    float radius_m[HD_FINGER_COUNT][HD_FINGER_JOINTS + 1]; /* at each joint and the tip */
    /* Each finger's rest frame: direction along the finger, palmar (where flexion turns
     * it) and side (where abduction turns it); orthonormal. */
    float direction[HD_FINGER_COUNT][3];
    float palmar[HD_FINGER_COUNT][3];
    float side[HD_FINGER_COUNT][3];
    float flex_min_rad[HD_FINGER_COUNT][HD_FINGER_JOINTS];
    float flex_max_rad[HD_FINGER_COUNT][HD_FINGER_JOINTS];
    float abduct_min_rad[HD_FINGER_COUNT];
    float abduct_max_rad[HD_FINGER_COUNT];
    float fist_rad[HD_FINGER_COUNT][HD_FINGER_JOINTS]; /* flexions at curl 1 */
    float fist_abduct_rad[HD_FINGER_COUNT];            /* abduction at curl 1 */
    float spread_rad[HD_FINGER_COUNT];                 /* abduction at curl 0, splay 1 */
    float palm_half_thickness_m;
};

/* Every model's joint limits, degrees: flexion of joint `joint` (0 to 2) or, for joint 3,
 * the abduction of finger `finger` (the table in docs/hands.md). */
EMBODY_API void hd_joint_limits_deg(int finger, int joint, float *out_min_deg, float *out_max_deg);

/* Sizes the default hand to `desc->hand_length_m` (all lengths in proportion), then takes
 * the bone lengths `desc->bone_m` gives. Fails, naming the field, on a hand length or a
 * bone length out of range or not finite. */
EMBODY_API enum em_result hd_model_init(const struct hd_model_desc *desc, struct hd_model *out_model,
                             struct em_error *err);

/* ---- Finger poses -------------------------------------------------------------------- */

struct hd_pose {
    float flex_rad[HD_FINGER_COUNT][HD_FINGER_JOINTS];
    float abduct_rad[HD_FINGER_COUNT];
};

/* The few numbers a controller gives: per finger 0 (straight) to 1 (a fist), and how far
 * the fingers spread, 0 (together) to 1 (wide). */
struct hd_curls {
    float curl[HD_FINGER_COUNT];
    float splay;
};

/* The pose of a hand nobody drives: slightly curled, the little finger most. */
EMBODY_API void hd_curls_relaxed(struct hd_curls *out_curls);
EMBODY_API void hd_pose_relaxed(const struct hd_model *model, struct hd_pose *out_pose);

/* The pose for `curls` (each clamped to [0, 1]; a non-finite value is taken as relaxed):
 * every flexion a share of the fist's, abduction the spread's, narrowing as the finger
 * closes; then held within the limits and out of the palm and the other fingers. */
EMBODY_API void hd_pose_from_curls(const struct hd_model *model, const struct hd_curls *curls,
                        struct hd_pose *out_pose);

/* The curls a pose is closest to: each finger's mean share of the fist, the splay the
 * mean share of the spread. */
EMBODY_API void hd_curls_from_pose(const struct hd_model *model, const struct hd_pose *pose,
                        struct hd_curls *out_curls);

/* Holds every angle within its limits (a non-finite angle becomes the relaxed pose's),
 * keeps neighbouring fingers from crossing, and opens a finger (the thumb first) where it
 * would pass through the palm or another finger. `pose` is changed in place. */
EMBODY_API void hd_pose_constrain(const struct hd_model *model, struct hd_pose *pose);

/* Blends two poses: weight 0 is `from`, 1 is `to` (clamped), angle by angle, so the
 * joints move straight and evenly from one to the other. `out` may alias either. Used
 * over HD_HANDOVER_S when the hand's source changes (hand tracking lost, the controller
 * picked up), so the fingers never jump. */
#define HD_HANDOVER_S 0.2f
EMBODY_API void hd_pose_blend(const struct hd_pose *from, const struct hd_pose *to, float weight,
                   struct hd_pose *out_pose);

/* The joints' local rotations (rest-relative, hand-frame axes): index f * 3 + j. */
EMBODY_API void hd_pose_local_rotations(const struct hd_model *model, const struct hd_pose *pose,
                             float (*out_rotation)[4]);

/* Forward kinematics: each finger's three joints and its tip, in the hand frame:
 * out_position_m[f * 4 + k], k = 0..2 the joints, 3 the tip. */
#define HD_POINT_COUNT (HD_FINGER_COUNT * (HD_FINGER_JOINTS + 1))
EMBODY_API void hd_pose_positions(const struct hd_model *model, const struct hd_pose *pose,
                       float (*out_position_m)[3]);

/* The smallest clearance (metres, negative where they overlap) between the fingers' bones
 * (capsules of the joints' radii), neighbouring fingers and thumb against index and
 * middle, and between the palm (a slab of palm_half_thickness_m from the wrist to the
 * knuckles) and the fingers' outer joints and tips. */
EMBODY_API float hd_pose_clearance(const struct hd_model *model, const struct hd_pose *pose);

/* A hand-frame rotation as our humanoid's (include/embody/skeleton.h: rest frames the
 * world's, the T-pose's left hand pointing +X with its palm down): M q M^-1 with M the
 * turn from the hand frame to that hand's T-pose frame. */
EMBODY_API void hd_humanoid_rotation_from_hand(enum hd_hand hand, const float *q, float *out_q);

/* The pose as our humanoid's finger bones: each joint's local rotation (rest-relative,
 * hd_humanoid_rotation_from_hand) and its rest offset from its parent bone (the hand for
 * each finger's first joint), metres, in the humanoid's axes. Index f * 3 + j. What an
 * avatar, the VMC output (osc_sender_set_fingers) and a BVH writer take. */
EMBODY_API void hd_pose_humanoid_locals(const struct hd_model *model, const struct hd_pose *pose,
                             float (*out_rotation)[4], float (*out_offset_m)[3]);

/* ---- Hand tracking (XR_EXT_hand_tracking) ------------------------------------------- */

/* XrHandJointEXT's order. */
enum hd_xr_joint {
    HD_XR_PALM = 0,
    HD_XR_WRIST,
    HD_XR_THUMB_METACARPAL,
    HD_XR_THUMB_PROXIMAL,
    HD_XR_THUMB_DISTAL,
    HD_XR_THUMB_TIP,
    HD_XR_INDEX_METACARPAL,
    HD_XR_INDEX_PROXIMAL,
    HD_XR_INDEX_INTERMEDIATE,
    HD_XR_INDEX_DISTAL,
    HD_XR_INDEX_TIP,
    HD_XR_MIDDLE_METACARPAL,
    HD_XR_MIDDLE_PROXIMAL,
    HD_XR_MIDDLE_INTERMEDIATE,
    HD_XR_MIDDLE_DISTAL,
    HD_XR_MIDDLE_TIP,
    HD_XR_RING_METACARPAL,
    HD_XR_RING_PROXIMAL,
    HD_XR_RING_INTERMEDIATE,
    HD_XR_RING_DISTAL,
    HD_XR_RING_TIP,
    HD_XR_LITTLE_METACARPAL,
    HD_XR_LITTLE_PROXIMAL,
    HD_XR_LITTLE_INTERMEDIATE,
    HD_XR_LITTLE_DISTAL,
    HD_XR_LITTLE_TIP,
    HD_XR_JOINT_COUNT,
};

/* "palm", "wrist", "thumb_metacarpal", ... "little_tip". */
EMBODY_API const char *hd_xr_joint_name(int joint);

/* One joint as XrHandJointLocationEXT gives it, in any one space for the whole hand. */
struct hd_xr_joint_location {
    uint32_t flags; /* enum em_pose_flags (XrSpaceLocationFlags' bits) */
    float position_m[3];
    float orientation[4];
    float radius_m;
};

struct hd_xr_hand {
    bool active; /* XrHandJointLocationsEXT::isActive */
    struct hd_xr_joint_location joint[HD_XR_JOINT_COUNT];
};

/* What a joint can be: a valid position within HD_MAX_JOINT_DISTANCE_M of the wrist, a
 * radius in (0, HD_MAX_JOINT_RADIUS_M], a unit orientation when it is flagged valid, and
 * at least HD_MIN_BONE_M from the joint before it. */
#define HD_MAX_JOINT_DISTANCE_M 0.3f
#define HD_MAX_JOINT_RADIUS_M 0.05f
#define HD_MIN_BONE_M 0.001f

/* Why a joint was refused. */
enum hd_joint_fault {
    HD_JOINT_OK = 0,
    HD_JOINT_NOT_TRACKED,  /* position not flagged valid (or the hand not active) */
    HD_JOINT_NOT_FINITE,   /* NaN or infinity in position, orientation or radius */
    HD_JOINT_TOO_FAR,      /* more than HD_MAX_JOINT_DISTANCE_M from the wrist */
    HD_JOINT_BAD_RADIUS,   /* radius <= 0 or > HD_MAX_JOINT_RADIUS_M */
    HD_JOINT_BAD_ROTATION, /* orientation flagged valid but not a unit quaternion */
    HD_JOINT_COINCIDENT,   /* closer than HD_MIN_BONE_M to the joint before it */
    HD_JOINT_FAULT_COUNT,
};

/* "ok", "not tracked", "not finite", "too far from the wrist", "radius out of range",
 * "orientation not a unit quaternion", "on top of the joint before it". */
EMBODY_API const char *hd_joint_fault_name(enum hd_joint_fault fault);

/* Carried from frame to frame by the caller: each finger's last good pose. Zero it, or
 * hd_tracking_state_init, before the first frame. */
struct hd_tracking_state {
    struct hd_pose last_good;
    bool has_last_good[HD_FINGER_COUNT];
};

EMBODY_API void hd_tracking_state_init(struct hd_tracking_state *out_state);

/* What one frame's conversion found. */
struct hd_tracking_report {
    uint8_t fault[HD_XR_JOINT_COUNT]; /* enum hd_joint_fault per joint */
    int refused_count;                /* joints not OK */
    uint32_t fallback_mask;           /* fingers (1 << f) that kept their last good pose
                                       * (or took the relaxed one) this frame */
};

/* Converts tracked joints to the model's finger pose. The hand frame is built from the
 * joints' positions (wrist, and the index, middle and little knuckles), so the runtime's
 * joint orientations are checked but not needed. Each finger's angles are measured from
 * its bones' directions (so a hand of another size gives the same angles), then held by
 * hd_pose_constrain. A finger with any joint refused keeps its last good pose from
 * `state` (the relaxed one when there is none); if the wrist or a knuckle that defines the
 * frame is refused (or they lie on one line), every finger does. `state` is updated with
 * the good fingers. `out_report` may be NULL. Allocates nothing. */
EMBODY_API void hd_pose_from_tracking(const struct hd_model *model, const struct hd_xr_hand *hand,
                           struct hd_tracking_state *state, struct hd_pose *out_pose,
                           struct hd_tracking_report *out_report);

/* Sizes `model` to a tracked hand: bone lengths, knuckles and metacarpals, the thumb's base
 * and radii from the joints (in any pose: only distances and the palm's rigid part are
 * read). Fails, naming the first refused joint and why, a finger whose knuckle is not
 * mostly forward of its metacarpal (within half the knuckle's flexion limit, 45 degrees,
 * of the hand frame's -Z), or a hand length out of range; then `model` is unchanged. */
EMBODY_API enum em_result hd_model_fit(struct hd_model *model, const struct hd_xr_hand *hand,
                            struct em_error *err);

/* The model's own forward kinematics as 26 tracked joints (every joint flagged valid, the
 * orientations the bones' frames), placed by `wrist_position_m` and `wrist_orientation`
 * (the hand frame in the target space). For tests, benchmarks and a synthetic source. */
EMBODY_API void hd_pose_to_tracking(const struct hd_model *model, const struct hd_pose *pose,
                         const float *wrist_position_m, const float *wrist_orientation,
                         struct hd_xr_hand *out_hand);

/* ---- Controllers --------------------------------------------------------------------- */

/* Inputs an interaction profile has, that say something about the fingers. */
enum hd_input {
    HD_IN_TRIGGER_VALUE = 1u << 0,
    HD_IN_TRIGGER_TOUCH = 1u << 1,
    HD_IN_TRIGGER_CURL = 1u << 2, /* index finger's distance from the trigger (Touch Pro) */
    HD_IN_SQUEEZE_VALUE = 1u << 3,
    HD_IN_SQUEEZE_CLICK = 1u << 4, /* a squeeze that is a button, 0 or 1 */
    HD_IN_SQUEEZE_FORCE = 1u << 5,
    HD_IN_SELECT_CLICK = 1u << 6, /* the simple controller's only finger input */
    HD_IN_THUMBSTICK_TOUCH = 1u << 7,
    HD_IN_TRACKPAD_TOUCH = 1u << 8,
    HD_IN_BUTTONS_TOUCH = 1u << 9, /* A/B/X/Y touch */
    HD_IN_THUMBREST_TOUCH = 1u << 10,
    HD_IN_FINGER_CURL = 1u << 11, /* per-finger curl (Index's finger tracking) */
};

#define HD_IN_THUMB_TOUCHES                                                                        \
    (HD_IN_THUMBSTICK_TOUCH | HD_IN_TRACKPAD_TOUCH | HD_IN_BUTTONS_TOUCH | HD_IN_THUMBREST_TOUCH)

struct hd_profile {
    const char *path; /* "/interaction_profiles/oculus/touch_controller" */
    const char *name; /* "Oculus Touch" */
    uint32_t inputs;  /* enum hd_input */
};

/* The profile with this path, or NULL (then hd_curls_from_controller gives the relaxed
 * hand). */
EMBODY_API const struct hd_profile *hd_profile_find(const char *path);

/* The table, for listing and tests: `index` in [0, hd_profile_count()). */
EMBODY_API int hd_profile_count(void);
EMBODY_API const struct hd_profile *hd_profile_at(int index);

/* One frame's input values, as the actions read them; only those the profile has are
 * used. Values are clamped to [0, 1] and a non-finite one is taken as 0 (released). */
struct hd_controller_input {
    float trigger; /* trigger value, or the select click as 0/1 */
    bool trigger_touch;
    float trigger_curl; /* 0 on the trigger .. 1 far from it */
    float squeeze;      /* squeeze value, or its click as 0/1 */
    float squeeze_force;
    bool thumbstick_touch;
    bool trackpad_touch;
    bool buttons_touch;
    bool thumbrest_touch;
    float finger_curl[HD_FINGER_COUNT]; /* with HD_IN_FINGER_CURL */
};

/* The curls the controller's inputs say, as players know them from SteamVR's skeletal
 * input: the index follows the trigger and points (curl 0) when its touch sensor says it
 * is off the trigger; middle, ring and little follow the squeeze; the thumb rests on the
 * controller (0.5) when a thumb sensor is touched and stands up (0) when none is; a
 * profile with sensors and nothing touched or pressed is an open hand, one without
 * sensors a relaxed one. `profile` NULL gives the relaxed curls. */
EMBODY_API void hd_curls_from_controller(const struct hd_profile *profile,
                              const struct hd_controller_input *in, struct hd_curls *out_curls);

#ifdef __cplusplus
}
#endif

#endif
