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
#include <stddef.h>

#include <cglm/types.h>

#include "embody/export.h"
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
EMBODY_API const char *
sk_bone_name(enum sk_bone bone);

/* The bone called `name` (VRM spelling, case-sensitive), or SK_BONE_NONE. */
EMBODY_API enum sk_bone
sk_bone_from_name(const char *name);

/* True for bones every humanoid must have (all but upperChest, the toes and the ends). */
EMBODY_API bool
sk_bone_is_required(enum sk_bone bone);

/* The same bone on the other side of the body (leftHand <-> rightHand), or itself. */
EMBODY_API enum sk_bone
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
EMBODY_API enum em_result
sk_skeleton_create(const struct sk_joint_desc *joints, int count, const char *source,
                   struct sk_skeleton *out_skeleton, struct em_error *err);

/* Frees a skeleton's arrays; safe on a zeroed struct and twice. */
EMBODY_API void
sk_skeleton_fini(struct sk_skeleton *skeleton);

/* Deep copy. */
EMBODY_API enum em_result
sk_skeleton_copy(const struct sk_skeleton *src, struct sk_skeleton *out_copy);

/* Joint index of `name`, or -1. */
EMBODY_API int
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
EMBODY_API void
sk_skeleton_update_derived(struct sk_skeleton *skeleton);

/* Checks that every required humanoid bone is present and the hierarchy is humanoid
 * (for example leftLowerArm below leftUpperArm). */
EMBODY_API enum em_result
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
EMBODY_API enum em_result
sk_humanoid_check_size(const struct sk_skeleton *skeleton, const char *source,
                       struct em_error *err);

/* The skull base (head joint) sits at this fraction of standing height. */
#define SK_HEAD_JOINT_HEIGHT_RATIO 0.889f

/* Standing height (floor to crown) of a humanoid at rest, metres: from the lowest foot
 * or toe joint up to headTop, or, without headTop, estimated from the head joint's height
 * (SK_HEAD_JOINT_HEIGHT_RATIO). */
EMBODY_API float
sk_humanoid_height(const struct sk_skeleton *skeleton);

/* The floor under a humanoid at rest: the lowest rest height (y, metres) of its foot,
 * toes and toes-end joints, or 0 when it has none. */
EMBODY_API float
sk_humanoid_floor_y(const struct sk_skeleton *skeleton);

/* Arm span at rest (T-pose), metres: between the two hand ends (or hands), along X. */
EMBODY_API float
sk_humanoid_arm_span(const struct sk_skeleton *skeleton);

/* ---- Body proportions (src/skeleton/sk_proportions.c) ---- */

/* What sk_humanoid_proportions measures. Heights are above the floor
 * (sk_humanoid_floor_y); "front" offsets are along +Z (the body faces +Z) from the head
 * joint; lengths are straight lines between joints. Left and right are averaged. */
enum sk_measure {
    SK_MEASURE_HIPS_HEIGHT = 0,
    SK_MEASURE_UPPER_LEG_HEIGHT, /* the hip joints */
    SK_MEASURE_KNEE_HEIGHT,
    SK_MEASURE_ANKLE_HEIGHT,
    SK_MEASURE_CHEST_HEIGHT,
    SK_MEASURE_NECK_HEIGHT,
    SK_MEASURE_UPPER_ARM_HEIGHT, /* the shoulder joints */
    SK_MEASURE_HIP_WIDTH,        /* between the two upper legs */
    SK_MEASURE_THIGH,            /* upper leg to lower leg */
    SK_MEASURE_SHIN,             /* lower leg to foot */
    SK_MEASURE_FOOT,             /* foot to toes */
    SK_MEASURE_SPINE,            /* hips to neck */
    SK_MEASURE_NECK,             /* neck to head */
    SK_MEASURE_SHOULDER_WIDTH,   /* between the two upper arms */
    SK_MEASURE_UPPER_ARM,        /* upper arm to lower arm */
    SK_MEASURE_FOREARM,          /* lower arm to hand */
    SK_MEASURE_NECK_FRONT,       /* the neck's z less the head's */
    SK_MEASURE_UPPER_ARM_FRONT,  /* the upper arms' z less the head's */
    SK_MEASURE_COUNT,
};

/* A humanoid's proportions: each measure as a fraction of the head joint's height above
 * the floor, so people of any size compare. */
struct sk_proportions {
    float head_height_m;              /* the head joint above the floor, metres */
    float fraction[SK_MEASURE_COUNT]; /* each measure / head_height_m */
};

/* The measure's name for people ("knees height", "thigh"). */
EMBODY_API const char *
sk_measure_name(enum sk_measure measure);

/* Measures a humanoid in its rest pose (rest_position_m: T-pose, +Y up, facing +Z) into
 * `out` (the caller's). Scaling a skeleton leaves its fractions unchanged. Fails
 * (EM_ERROR_PARSE, naming `source` and the cause) when a joint is missing (hips, chest,
 * neck, head, upper and lower arms, hands, upper and lower legs, feet, toes: the floor is
 * under the toes, a foot joint is the ankle), when the rest pose does not stand on its
 * feet (a foot pointing down more than forward: rigs whose rest pose is no T-pose), or
 * when the head joint is not above the floor. */
EMBODY_API enum em_result
sk_humanoid_proportions(const struct sk_skeleton *skeleton, const char *source,
                        struct sk_proportions *out, struct em_error *err);

/* Scales a humanoid so its standing height is `height_m`; when `arm_span_m` > 0 the arms
 * (shoulder to hand end) are then scaled so the span matches. The root's rest position
 * is scaled too. */
EMBODY_API enum em_result
sk_humanoid_fit(struct sk_skeleton *skeleton, float height_m, float arm_span_m,
                struct em_error *err);

/* Reads a skeleton from an embody JSON skeleton file (see config/humanoid.json). */
EMBODY_API enum em_result
sk_skeleton_load_json(const char *path, struct sk_skeleton *out_skeleton,
                      struct em_error *err);

/* Parses the same format from memory; `source` names it in errors. */
EMBODY_API enum em_result
sk_skeleton_parse_json(const char *text, const char *source, struct sk_skeleton *out_skeleton,
                       struct em_error *err);

/* Copies the joint limits of `from` onto the joints of `to` that have the same humanoid
 * bone (used to give a skeleton read from BVH the humanoid's limits). */
EMBODY_API void
sk_skeleton_copy_limits(const struct sk_skeleton *from, struct sk_skeleton *to);

/* The one humanoid name map (src/skeleton/sk_names.c): the names each rig convention
 * gives the humanoid bones. Every reader (BVH, glTF/GLB, FBX, VRM without its extension)
 * uses it. Names compare folded (sk_name_fold), so case, separators and prefixes such as
 * "mixamorig:" or "Armature|" do not matter. */
enum sk_name_map {
    SK_NAMES_VRM = 0,    /* VRM humanoid names: hips, leftUpperArm, ... */
    SK_NAMES_CMU = 1,    /* CMU mocap BVH: Hips, LeftArm, LeftForeArm, ... */
    SK_NAMES_MIXAMO = 2, /* Mixamo: mixamorig:Hips, mixamorig:LeftArm, ... */
    SK_NAMES_DAZ = 3,    /* Daz BVH and Genesis 8: hip, abdomenLower, lShldrBend, lThigh, ... */
    SK_NAMES_MAX = 4,    /* 3ds Max BVH: Hips, Chest, LeftShoulder (upper arm), LeftHip, ... */
    SK_NAMES_CC3 = 5,    /* Character Creator 3/4, iClone: CC_Base_Hip, CC_Base_L_Thigh, ... */
    SK_NAMES_VROID = 6,  /* VRoid Studio: J_Bip_C_Hips, J_Bip_L_UpperArm, ... */
    SK_NAMES_UNREAL = 7, /* Unreal mannequin: pelvis, spine_01, upperarm_l, calf_l, ball_l */
    SK_NAMES_RIGIFY = 8, /* Blender Rigify deform bones: DEF-spine.001, DEF-upper_arm.L */
    SK_NAMES_CATS = 9,   /* CATS / VRChat: Hips, Left arm, Left elbow, Left wrist, Left knee */
    SK_NAMES_MMD = 10,   /* MikuMikuDance: 下半身, 上半身, 左腕, 左ひじ, 左足首 */
    SK_NAMES_COUNT = 11,
};

/* A name folded for comparison: what comes before the last ':' or '|' dropped, ASCII
 * letters lower case, ' ', '_', '.' and '-' dropped ("Armature|J_Bip_L_UpperArm" ->
 * "jbiplupperarm"). Writes at most out_size bytes, always terminated. */
EMBODY_API void
sk_name_fold(const char *name, char *out, size_t out_size);

/* The convention's name for people ("VRoid", "Unreal"), or "unknown". */
EMBODY_API const char *
sk_name_map_label(enum sk_name_map map);

/* The humanoid bone a joint called `name` is in `map` (folded names), or SK_BONE_NONE. */
EMBODY_API enum sk_bone
sk_bone_from_mapped_name(enum sk_name_map map, const char *name);

/* The name `map` gives `bone` (the first, where several do), or NULL. */
EMBODY_API const char *
sk_mapped_name(enum sk_name_map map, enum sk_bone bone);

/* Guesses the convention of a set of joint names (the one that maps most of them; a tie
 * keeps the lower enum value). */
EMBODY_API enum sk_name_map
sk_name_map_guess(const char *const *names, int count);

/* True for twist, roll and share bones ("lShldrTwist", "upperarm_twist_01_l", "左腕捩"):
 * parts of a limb that no humanoid bone names. */
EMBODY_API bool
sk_name_is_twist(const char *name);

/* The humanoid bone (no end joints) a node called `name` is in a rig of convention `map`:
 * the map's table, else the name's side marks and words (Unity "LeftUpperArm", Blender
 * "UpperArm.L", "thigh_l", "L_Hand", "左腕"); twist bones and unknown names give
 * SK_BONE_NONE. */
EMBODY_API enum sk_bone
sk_bone_from_node_name_in(enum sk_name_map map, const char *name);

/* The same for a name alone, its convention guessed from it. */
EMBODY_API enum sk_bone
sk_bone_from_node_name(const char *name);

/* Bones a rig file must have for embody to take it as a humanoid: hips, spine, head,
 * upper and lower arms, hands, upper and lower legs, feet. The other required bones
 * (chest, neck, shoulders) a reader can place between their neighbours. */
EMBODY_API bool
sk_bone_is_needed_in_file(enum sk_bone bone);

/* ---- Finding the humanoid bones of a rig (src/skeleton/sk_rig.c) ---- */

/* One node of a rig's tree as a file gives it. */
struct sk_rig_node {
    const char *name;
    int parent;        /* < this node's index; -1 for a root */
    vec3 position;     /* rest position, the file's frame (+Y up) and unit */
};

/* How a bone's node was found. */
enum sk_rig_found {
    SK_RIG_ABSENT = 0,
    SK_RIG_BY_EXTENSION = 1, /* the file's humanoid description (VRM humanBones) */
    SK_RIG_BY_BONE_MAP = 2,  /* the player's bone map file (--bone-map) */
    SK_RIG_BY_NAME = 3,      /* the humanoid name map */
    SK_RIG_BY_SHAPE = 4,     /* guessed from the skeleton's shape */
};

#define SK_BONE_MAP_NODE_MAX 128

/* A bone map: the node of each humanoid bone, by name. A file of it is one JSON object,
 * humanoid bone -> node name ({"hips": "CC_Base_Hip", "leftUpperArm": "arm.L"}); bones
 * left out are found as usual. */
struct sk_bone_map {
    char source[256];                               /* the file, for messages */
    char node[SK_BONE_COUNT][SK_BONE_MAP_NODE_MAX]; /* "" where not given */
};

/* Reads a bone map file. Refuses, naming the file and the field: broken JSON (with its
 * line), not an object, an unknown humanoid bone (listing the names), a value that is
 * not a non-empty string or is longer than SK_BONE_MAP_NODE_MAX - 1 bytes, two bones
 * given the same node. */
EMBODY_API enum em_result
sk_bone_map_load(const char *path, struct sk_bone_map *out_map, struct em_error *err);

/* The same from `len` bytes of text; `source` names it in errors. */
EMBODY_API enum em_result
sk_bone_map_parse(const char *text, size_t len, const char *source, struct sk_bone_map *out_map,
                  struct em_error *err);

/* Writes `map` as a bone map file's JSON (one bone a line, in bone order) to `out`
 * (snprintf's rules); returns the length the whole text needs. */
EMBODY_API int
sk_bone_map_format(const struct sk_bone_map *map, char *out, size_t out_size);

struct sk_rig_desc {
    const struct sk_rig_node *nodes;
    int node_count;
    const int *known_node;              /* per bone from the file's extension, or NULL */
    const struct sk_bone_map *bone_map; /* the player's, or NULL */
    const char *source;                 /* the file, for messages */
};

struct sk_rig_map {
    int node[SK_BONE_COUNT]; /* node of each bone (no end joints), or -1 */
    enum sk_rig_found found[SK_BONE_COUNT];
    enum sk_name_map names;  /* the convention names were read in */
    bool sides_swapped;      /* named left on the body's right (from the rest pose) */
    bool hips_moved;         /* the named hips had the spine beside it, not below (MMD) */
};

/* Finds the humanoid bones of a rig: those of the extension, then the bone map's, then
 * (without an extension) by the name map, then, while a bone the file must have
 * (sk_bone_is_needed_in_file) is missing, by the skeleton's shape: the hips where the two
 * legs (the lowest ends) and the head (the highest) meet, the chest where the arms (the
 * ends farthest out on each side) branch off, the limb joints along each chain from
 * human proportions. Names read as left that lie on the body's right (facing taken from
 * the feet: toes in front) are swapped. Refuses, naming what was found, what is missing
 * and the closest names seen, and pointing at --bone-map; or a bone map naming a node the
 * rig lacks. */
EMBODY_API enum em_result
sk_rig_find_bones(const struct sk_rig_desc *desc, struct sk_rig_map *out_map,
                  struct em_error *err);

/* What sk_rig_found says, for people ("by name", "guessed from the shape"). */
EMBODY_API const char *
sk_rig_found_label(enum sk_rig_found found);

/* A pose of a skeleton: global positions and rotations, and local rotations. */
struct sk_pose {
    int joint_count;
    vec3 *position_m;       /* global */
    versor *rotation;       /* global: maps the joint's frame to world axes */
    versor *local_rotation; /* relative to the parent's frame (the root's is global) */
};

EMBODY_API enum em_result
sk_pose_init(struct sk_pose *pose, const struct sk_skeleton *skeleton);

EMBODY_API void
sk_pose_fini(struct sk_pose *pose);

/* Sets the rest pose (identity rotations, rest positions). */
EMBODY_API void
sk_pose_set_rest(struct sk_pose *pose, const struct sk_skeleton *skeleton);

/* From the root position (position_m[0]) and every local rotation, computes the global
 * rotations and positions. */
EMBODY_API void
sk_pose_forward_kinematics(struct sk_pose *pose, const struct sk_skeleton *skeleton);

/* The same for the joints below `top` only (exclusive: its own global rotation and
 * position are taken as set), as after turning one joint. */
EMBODY_API void
sk_pose_forward_kinematics_below(struct sk_pose *pose, const struct sk_skeleton *skeleton,
                                 int top);

/* From global rotations, computes local rotations. */
EMBODY_API void
sk_pose_update_local(struct sk_pose *pose, const struct sk_skeleton *skeleton);

/* Copies a pose of the same joint count. */
EMBODY_API void
sk_pose_copy(const struct sk_pose *src, struct sk_pose *dst);

#ifdef __cplusplus
}
#endif

#endif
