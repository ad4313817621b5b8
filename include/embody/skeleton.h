/*
 * Skeletons and poses.
 *
 * A skeleton is flat arrays indexed by joint, in depth-first order with parents before
 * children (parent[i] < i), so one forward loop is forward kinematics (as ozz-animation).
 * Rest orientations are identity: each joint's rest frame is aligned with the world axes
 * (+Y up, the body facing +Z, its left at +X), so a joint's offset from its parent is
 * expressed in the parent's frame and at rest also in world axes. Lengths are metres.
 *
 * A joint's local rotation turns everything below it, relative to its parent's frame; a
 * joint limit constrains that local rotation (a hinge for elbows and knees, a swing cone
 * and twist range for ball joints).
 *
 * Humanoid skeletons name their joints with the VRM humanoid bone names ("hips",
 * "leftUpperArm", ...), and may carry extra end joints (headTop, hand and toe ends) that
 * give the head's, hands' and feet's extent.
 */
#ifndef EMBODY_SKELETON_H
#define EMBODY_SKELETON_H

#include <stdbool.h>

#include <cglm/types.h>

#include "embody/result.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SK_NAME_MAX 48

/* The VRM humanoid bones embody knows, plus the end joints it uses for extents. */
enum sk_bone {
    SK_BONE_NONE = -1,
    SK_HIPS = 0,
    SK_SPINE,
    SK_CHEST,
    SK_UPPER_CHEST, /* optional */
    SK_NECK,
    SK_HEAD,
    SK_LEFT_SHOULDER,
    SK_LEFT_UPPER_ARM,
    SK_LEFT_LOWER_ARM,
    SK_LEFT_HAND,
    SK_RIGHT_SHOULDER,
    SK_RIGHT_UPPER_ARM,
    SK_RIGHT_LOWER_ARM,
    SK_RIGHT_HAND,
    SK_LEFT_UPPER_LEG,
    SK_LEFT_LOWER_LEG,
    SK_LEFT_FOOT,
    SK_LEFT_TOES,
    SK_RIGHT_UPPER_LEG,
    SK_RIGHT_LOWER_LEG,
    SK_RIGHT_FOOT,
    SK_RIGHT_TOES,
    /* End joints (not VRM bones): the crown, the knuckles, the tips of the toes. */
    SK_HEAD_TOP,
    SK_LEFT_HAND_END,
    SK_RIGHT_HAND_END,
    SK_LEFT_TOES_END,
    SK_RIGHT_TOES_END,
    SK_BONE_COUNT,
};

/* The VRM name of `bone` ("leftUpperArm"), or the end joint's name ("headTop"). */
const char *
sk_bone_name(enum sk_bone bone);

/* The bone called `name` (VRM spelling, case-sensitive), or SK_BONE_NONE. */
enum sk_bone
sk_bone_from_name(const char *name);

/* True for bones every humanoid must have (all but upperChest, the toes and the ends). */
bool
sk_bone_is_required(enum sk_bone bone);

/* The same bone on the other side of the body (leftHand <-> rightHand), or itself. */
enum sk_bone
sk_bone_mirror(enum sk_bone bone);

enum sk_limit_kind {
    SK_LIMIT_NONE = 0,
    SK_LIMIT_BALL = 1,
    SK_LIMIT_HINGE = 2,
};

struct sk_limit {
    enum sk_limit_kind kind;
    /* HINGE: the joint turns only about `axis` (unit, parent frame), by an angle in
     * [min_rad, max_rad]; positive angles turn by the right-hand rule.
     * BALL: the direction of the joint's primary bone stays within `cone_rad` of `axis`
     * (unit, parent frame), and its twist about that bone, measured from the rest pose,
     * stays in [min_rad, max_rad]. */
    vec3 axis;
    float cone_rad;
    float min_rad;
    float max_rad;
};

struct sk_skeleton {
    int joint_count;
    char (*name)[SK_NAME_MAX];
    int *parent;              /* parent[i] < i; -1 for the root, which is joint 0 */
    vec3 *offset_m;           /* rest offset from the parent, parent frame */
    struct sk_limit *limit;   /* per joint; kind NONE where free */
    int *primary_child;       /* child whose bone gives the joint's direction, or -1 */
    enum sk_bone *bone;       /* humanoid bone of each joint, or SK_BONE_NONE */
    int bone_joint[SK_BONE_COUNT]; /* joint of each bone, or -1 when absent */
    /* Derived by sk_skeleton_update_derived(): */
    vec3 *rest_position_m; /* global rest positions (root's offset is its rest position) */
    float *length_m;       /* |offset_m[i]|; 0 for the root */
    int *child_count;
};

/* One joint in a skeleton description. `parent` is a joint name, or NULL for the root.
 * Joints may be given in any order; creation sorts them parents first. */
struct sk_joint_desc {
    const char *name;
    const char *parent;
    vec3 offset_m;
    struct sk_limit limit;
};

/* The most joints a skeleton may have: far more than any avatar's (a VRM humanoid with
 * fingers has about 55, a rigged character with face bones a few hundred). */
#define SK_MAX_JOINTS 1024

/* Builds a skeleton from `count` joint descriptions (at most SK_MAX_JOINTS, else
 * EM_ERROR_LIMIT), in time O(n log n). `source` names where they came from
 * (a file path) for error messages. Rejects: no joints, more than one root, empty or
 * duplicate names, unknown parents, cycles, non-finite offsets, zero-length bones (under
 * 1e-6 m), malformed limits. Joints named after humanoid bones get their bone set. */
enum em_result
sk_skeleton_create(const struct sk_joint_desc *joints, int count, const char *source,
                   struct sk_skeleton *out_skeleton, struct em_error *err);

/* Frees a skeleton's arrays; safe on a zeroed struct and twice. */
void
sk_skeleton_fini(struct sk_skeleton *skeleton);

/* Deep copy. */
enum em_result
sk_skeleton_copy(const struct sk_skeleton *src, struct sk_skeleton *out_copy);

/* Joint index of `name`, or -1. */
int
sk_skeleton_find(const struct sk_skeleton *skeleton, const char *name);

/* Joint index of `bone`, or -1. */
static inline int
sk_skeleton_bone_joint(const struct sk_skeleton *skeleton, enum sk_bone bone)
{
    return bone >= 0 && bone < SK_BONE_COUNT ? skeleton->bone_joint[bone] : -1;
}

/* Recomputes rest positions, lengths, child counts and primary children after offsets
 * change. The primary child of a joint with several children is the one on the humanoid
 * main path (spine, neck, head) or else the first. */
void
sk_skeleton_update_derived(struct sk_skeleton *skeleton);

/* Checks that every required humanoid bone is present and the hierarchy is humanoid
 * (for example leftLowerArm below leftUpperArm). */
enum em_result
sk_humanoid_validate(const struct sk_skeleton *skeleton, const char *source,
                     struct em_error *err);

/* The sizes a humanoid avatar may have, standing (floor to crown). */
#define SK_HUMANOID_MIN_HEIGHT_M 0.5f
#define SK_HUMANOID_MAX_HEIGHT_M 3.0f

/* Checks that a humanoid (sk_humanoid_validate'd) has a person's size and proportions:
 * every offset finite, a standing height from SK_HUMANOID_MIN_HEIGHT_M to
 * SK_HUMANOID_MAX_HEIGHT_M, no bone longer than the body is tall, and upper arms,
 * forearms, thighs and shins each within 0.4 to 2.5 times their usual share of the
 * height (Drillis and Contini 1966: 0.186, 0.146, 0.245, 0.246), which admits stylised
 * avatars but not a wrong unit. Errors say what was found: "avatar.json: the avatar is
 * 1003.2 m tall; a humanoid is 0.5 to 3 m (are the lengths in metres?)". */
enum em_result
sk_humanoid_check_size(const struct sk_skeleton *skeleton, const char *source,
                       struct em_error *err);

/* The skull base (head joint) sits at this fraction of standing height. */
#define SK_HEAD_JOINT_HEIGHT_RATIO 0.889f

/* Standing height (floor to crown) of a humanoid at rest, metres: from the lowest foot
 * or toe joint up to headTop, or, without headTop, estimated from the head joint's height
 * (SK_HEAD_JOINT_HEIGHT_RATIO). */
float
sk_humanoid_height(const struct sk_skeleton *skeleton);

/* Arm span at rest (T-pose), metres: between the two hand ends (or hands), along X. */
float
sk_humanoid_arm_span(const struct sk_skeleton *skeleton);

/* Scales a humanoid so its standing height is `height_m`; when `arm_span_m` > 0 the arms
 * (shoulder to hand end) are then scaled so the span matches. The root's rest position
 * is scaled too. */
enum em_result
sk_humanoid_fit(struct sk_skeleton *skeleton, float height_m, float arm_span_m,
                struct em_error *err);

/* Reads a skeleton from an embody JSON skeleton file (see config/humanoid.json). */
enum em_result
sk_skeleton_load_json(const char *path, struct sk_skeleton *out_skeleton,
                      struct em_error *err);

/* Parses the same format from memory; `source` names it in errors. */
enum em_result
sk_skeleton_parse_json(const char *text, const char *source, struct sk_skeleton *out_skeleton,
                       struct em_error *err);

/* Copies the joint limits of `from` onto the joints of `to` that have the same humanoid
 * bone (used to give a skeleton read from BVH the humanoid's limits). */
void
sk_skeleton_copy_limits(const struct sk_skeleton *from, struct sk_skeleton *to);

/* Name maps from other skeleton conventions to the humanoid bones. */
enum sk_name_map {
    SK_NAMES_VRM = 0,   /* VRM humanoid names: hips, leftUpperArm, ... */
    SK_NAMES_CMU = 1,   /* CMU mocap BVH: Hips, LeftArm, LeftForeArm, ... */
    SK_NAMES_MIXAMO = 2, /* Mixamo: mixamorig:Hips, mixamorig:LeftArm, ... */
    SK_NAMES_DAZ = 3,    /* Daz-friendly BVH: hip, abdomen, chest, lShldr, lThigh, ... */
    SK_NAMES_MAX = 4,    /* 3ds Max BVH: Hips, Chest, LeftShoulder (upper arm), LeftHip, ... */
    SK_NAMES_CC3 = 5,    /* Character Creator 3 / iClone: CC_Base_Hip, CC_Base_L_Thigh, ... */
};

/* The humanoid bone a joint called `name` is in `map`, or SK_BONE_NONE. */
enum sk_bone
sk_bone_from_mapped_name(enum sk_name_map map, const char *name);

/* The name `map` gives `bone` (the first, where several do), or NULL. */
const char *
sk_mapped_name(enum sk_name_map map, enum sk_bone bone);

/* Guesses the convention of a set of joint names (the one that maps most of them). */
enum sk_name_map
sk_name_map_guess(const char *const *names, int count);

/* A pose of a skeleton: global positions and rotations, and local rotations. */
struct sk_pose {
    int joint_count;
    vec3 *position_m;       /* global */
    versor *rotation;       /* global: maps the joint's frame to world axes */
    versor *local_rotation; /* relative to the parent's frame (the root's is global) */
};

enum em_result
sk_pose_init(struct sk_pose *pose, const struct sk_skeleton *skeleton);

void
sk_pose_fini(struct sk_pose *pose);

/* Sets the rest pose (identity rotations, rest positions). */
void
sk_pose_set_rest(struct sk_pose *pose, const struct sk_skeleton *skeleton);

/* From the root position (position_m[0]) and every local rotation, computes the global
 * rotations and positions. */
void
sk_pose_forward_kinematics(struct sk_pose *pose, const struct sk_skeleton *skeleton);

/* The same for the joints below `top` only (exclusive: its own global rotation and
 * position are taken as set), as after turning one joint. */
void
sk_pose_forward_kinematics_below(struct sk_pose *pose, const struct sk_skeleton *skeleton,
                                 int top);

/* From global rotations, computes local rotations. */
void
sk_pose_update_local(struct sk_pose *pose, const struct sk_skeleton *skeleton);

/* Copies a pose of the same joint count. */
void
sk_pose_copy(const struct sk_pose *src, struct sk_pose *dst);

#ifdef __cplusplus
}
#endif

#endif
