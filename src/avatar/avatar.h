/*
 * Avatars: VRM and glTF 2.0 humanoids read into an embody skeleton and a skinned mesh.
 *
 * av_avatar_load reads .vrm, .glb and .gltf files (assimp reads the glTF itself; the VRM
 * extension's JSON is read with cJSON). The humanoid bones come from VRM 0.x
 * (`extensions.VRM.humanoid.humanBones`, an array of {bone, node}), VRM 1.0
 * (`extensions.VRMC_vrm.humanoid.humanBones`, an object name -> {node}) or, for plain glTF
 * and FBX, from the node tree with the one humanoid name map (VRoid, Mixamo, Unreal, Rigify,
 * Character Creator, Daz, CATS/VRChat, MMD, Unity/Blender side marks) and, where names
 * fail, the skeleton's shape (sk_rig_find_bones); a player's bone map file overrides both.
 *
 * Everything comes out in embody's frame (include/embody/skeleton.h: metres, +Y up, the body
 * facing +Z, its left at +X): a model facing -Z (VRM 0.x) is turned about +Y. The mesh is
 * baked to that frame at rest (vertices at their bind pose), and each vertex is weighted to
 * at most 4 joints of the avatar's skeleton: a skin joint that is no humanoid bone (a
 * finger, a twist bone, hair) counts as its nearest humanoid ancestor, and a mesh hung
 * under a bone node without a skin moves rigidly with that bone.
 *
 * Skinning needs no bone orientations: embody's joint frames are world-aligned at rest, so
 * a vertex follows its joint by x' = p + R s (x - r) (av_skin_matrices). `rest_rotation`
 * keeps each bone node's own rest orientation for programs that pose the model's nodes
 * (av_bone_rotation).
 */
#ifndef EMBODY_AVATAR_H
#define EMBODY_AVATAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cglm/types.h>

#include "embody/hand.h"
#include "embody/result.h"
#include "embody/skeleton.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AV_MAX_WEIGHTS 4
/* Limits a file must stay within (av_load_desc can lower them, never raise them). */
#define AV_MAX_FILE_BYTES (512u << 20)
#define AV_MAX_TRIANGLES 1000000
#define AV_MAX_VERTICES 1000000
#define AV_MAX_TEXTURE_SIZE 8192         /* pixels on a side */
#define AV_MAX_TEXTURE_PIXELS (64 << 20) /* all textures together */

enum av_format {
    AV_FORMAT_GLTF = 0, /* plain glTF 2.0: bones found by name */
    AV_FORMAT_VRM0 = 1, /* VRM 0.x */
    AV_FORMAT_VRM1 = 2, /* VRM 1.0 */
    AV_FORMAT_FBX = 3,  /* FBX (binary or ASCII): bones found by name, as plain glTF */
};

enum av_alpha_mode {
    AV_ALPHA_OPAQUE = 0,
    AV_ALPHA_MASK = 1,  /* cut out below alpha_cutoff */
    AV_ALPHA_BLEND = 2, /* drawn cut out at alpha_cutoff (no sorting) */
};

enum av_shading {
    AV_SHADING_LIT = 0,
    AV_SHADING_UNLIT = 1, /* KHR_materials_unlit */
    AV_SHADING_TOON = 2,  /* VRM MToon (0.x materialProperties or VRMC_materials_mtoon) */
};

struct av_vertex {
    float position_m[3]; /* embody frame, rest pose */
    float normal[3];
    float uv[2];                   /* glTF convention: (0, 0) is the image's top left */
    uint8_t joint[AV_MAX_WEIGHTS]; /* joints of the avatar's skeleton */
    float weight[AV_MAX_WEIGHTS];  /* sum 1 */
};

struct av_material {
    char name[64];
    float base_color[4]; /* linear RGBA factor */
    int texture;         /* base-colour texture, or -1 */
    enum av_alpha_mode alpha_mode;
    float alpha_cutoff;
    enum av_shading shading;
    bool double_sided;
};

struct av_texture {
    int width;
    int height;
    uint8_t *rgba; /* rows from the top, 4 bytes a pixel (owned) */
};

/* A run of triangles with one material. */
struct av_primitive {
    int material;
    uint32_t first_index;
    uint32_t index_count;
};

/* One hand's fingers as the avatar has them. A finger's three bones are found by name
 * (the one humanoid name map, src/skeleton/sk_fingers.h) or from a VRM's humanBones, each
 * below the one before it and the first below the hand; a finger without all three is
 * left out (its nodes move rigidly with the hand, as before) and said in a warning.
 *
 * Posing: hd_pose_local_rotations gives each joint's rotation in the hand frame,
 * relative to the model's rest (every bone of a finger along model.direction[f]). The
 * rig's rest differs: its hand frame is `rest_frame` (built from its knuckles), and each
 * of its bones points its own way, `align[j]` turning the model's rest direction onto the
 * rig's bone (both in the hand frame). A joint's rotation relative to the hand, in
 * embody's world-aligned rest axes, is then rest_frame * W_j * align[j]^-1 *
 * rest_frame^-1, with W_j the finger's chain of local rotations to joint j: a bone posed
 * so points where the hand model's bone points, whatever the rig's rest. */
struct av_hand {
    bool has_finger[HD_FINGER_COUNT];
    int finger_count;      /* fingers present */
    struct hd_model model; /* sized by the avatar's own finger bones */
    versor rest_frame;     /* the hand frame's axes in embody's frame at rest */
    versor align[HD_JOINT_COUNT];
    vec3 rest_m[HD_JOINT_COUNT]; /* each finger joint's rest position (embody frame) */
    vec3 tip_m[HD_FINGER_COUNT]; /* each fingertip at rest (the distal's child node, or
                                    the distal bone continued) */
    /* The pose set last (av_set_hand_pose): each joint's rotation relative to the hand
     * joint, in embody's world-aligned rest axes. */
    versor rotation[HD_JOINT_COUNT];
};

struct av_avatar {
    char source[256]; /* the file, for messages */
    enum av_format format;
    /* Humanoid skeleton in T-pose rest: the humanoid bones found, the ones embody requires
     * and the file lacks placed between their neighbours, and the end joints (headTop,
     * hand and toe ends). No joint limits (copy them with sk_skeleton_copy_limits). */
    struct sk_skeleton skeleton;
    versor *rest_rotation; /* per joint: the bone node's rest orientation (its frame to
                              embody's world axes); identity for placed joints */
    bool *from_file;       /* per joint: a bone node of the file (not placed or an end) */
    float height_m;        /* floor (lowest vertex or foot) to crown */
    /* The rig as found: each bone's node name ("" where placed or absent), in the form of
     * a bone map file (--print-rig), and how each was found. */
    struct sk_bone_map rig;
    enum sk_rig_found rig_found[SK_BONE_COUNT];
    enum sk_name_map rig_names; /* the convention node names were read in */
    bool rig_sides_swapped;     /* named left on the body's right, swapped */
    /* The fingers. The mesh is skinned to skin_joint_count joints: the skeleton's, then
     * HD_JOINT_COUNT per hand (av_finger_skin_joint), whether the hand has them or not (a
     * missing finger's joints follow the hand). */
    struct av_hand hands[HD_HAND_COUNT];
    int skin_joint_count;

    struct av_vertex *vertices;
    int vertex_count;
    uint32_t *indices;
    uint32_t index_count;
    struct av_primitive *primitives;
    int primitive_count;
    struct av_material *materials;
    int material_count;
    struct av_texture *textures;
    int texture_count;
};

/* Zero means default. */
struct av_load_desc {
    int max_triangles; /* default and most AV_MAX_TRIANGLES */
    int max_vertices;  /* default and most AV_MAX_VERTICES */
    /* The player's bone map (humanoid bone -> node name), over the file's own: NULL for
     * none. A node it names that the file lacks is refused. */
    const struct sk_bone_map *bone_map;
};

/* Reads `path` (.vrm, .glb or .gltf). `desc` may be NULL. Refuses, with a reason naming the
 * file: a missing or unreadable file (EM_ERROR_IO); a truncated or corrupt GLB, broken
 * JSON, or a file assimp cannot read (EM_ERROR_PARSE); glTF other than 2.x or a VRM
 * specVersion this reader does not know (EM_ERROR_UNSUPPORTED); no humanoid skeleton, or
 * one missing required bones (hips, spine, head, upper and lower arms, hands, upper and
 * lower legs, feet), listed by name (EM_ERROR_PARSE); more triangles, vertices, bytes or
 * texture pixels than the limits (EM_ERROR_LIMIT). On success the caller owns
 * *out_avatar (av_avatar_fini). */
enum em_result av_avatar_load(const char *path, const struct av_load_desc *desc,
                              struct av_avatar *out_avatar, struct em_error *err);

/* Frees everything; safe on a zeroed struct and twice. */
void av_avatar_fini(struct av_avatar *avatar);

/* ---- Fingers ---- */

/* The skin joint of finger joint `joint` (f * 3 + j) of `hand`. */
static inline int
av_finger_skin_joint(const struct av_avatar *avatar, enum hd_hand hand, int joint)
{
    return avatar->skeleton.joint_count + (int)hand * HD_JOINT_COUNT + joint;
}

/* Poses one hand's fingers: `pose` in the hand model's angles (hd_pose_*), NULL for the
 * relaxed pose (hd_pose_relaxed on the avatar's own hand model). A pose with an angle that
 * is not finite is taken as relaxed. Takes effect in the next av_skin_matrices; a hand
 * without fingers ignores it. Allocates nothing: called every frame. */
void av_set_hand_pose(struct av_avatar *avatar, enum hd_hand hand, const struct hd_pose *pose);

/* The hand model sized by the avatar's fingers, or NULL when the hand has none. */
const struct hd_model *av_hand_model(const struct av_avatar *avatar, enum hd_hand hand);

/* ---- Skinning ---- */

/* Which joint of a body's skeleton moves each avatar joint: the joint with the same bone,
 * or the nearest ancestor's (an upperChest the body lacks follows its chest). */
struct av_skin_binding {
    const struct av_avatar *avatar; /* bound (its finger pose is read each frame) */
    int joint_count;                /* the avatar's skin joints (skin_joint_count) */
    int *body_joint; /* per avatar joint: the body skeleton's joint that moves it */
    vec3 *anchor_m;  /* per avatar joint: avatar rest position that body joint carries */
    float scale;     /* body height / avatar height: the mesh is scaled by it */
};

/* Binds `avatar` to `body_skeleton` (a humanoid, fitted or not). */
enum em_result av_skin_bind(const struct av_avatar *avatar, const struct sk_skeleton *body_skeleton,
                            struct av_skin_binding *out_binding, struct em_error *err);

void av_skin_binding_fini(struct av_skin_binding *binding);

/* Joint matrices (column-major, cglm) for a pose of the body's skeleton: avatar rest
 * position x to posed world position p + s R (x - anchor); the finger joints follow their
 * hand's joint and the fingers' pose (av_set_hand_pose). out_matrices has
 * binding->joint_count entries. */
void av_skin_matrices(const struct av_skin_binding *binding, const struct sk_pose *body_pose,
                      mat4 *out_matrices);

/* The posed world position of vertex `v` (CPU skinning, for checks and benchmarks). */
void av_skin_vertex(const struct av_vertex *v, const mat4 *matrices, vec3 out_m);

/* The global orientation of avatar joint `joint`'s bone node in `body_pose`: the body
 * joint's rotation times the node's rest orientation (the retargeting rotation). */
void av_bone_rotation(const struct av_avatar *avatar, const struct av_skin_binding *binding,
                      const struct sk_pose *body_pose, int joint, versor out_rotation);

/* ---- Making avatars ---- */

/* How av_make_glb names and describes the bones. */
enum av_make_rig {
    AV_MAKE_VRM1 = 0,   /* VRMC_vrm 1.0, VRoid-like node names (J_Bip_C_Hips) */
    AV_MAKE_VRM0 = 1,   /* VRM 0.x, the model facing -Z as VRM 0.x models do */
    AV_MAKE_MIXAMO = 2, /* plain glTF, Mixamo names (mixamorig:Hips) */
    AV_MAKE_PLAIN = 3,  /* plain glTF, VRM bone names as node names */
};

/* Zero means default. */
struct av_make_desc {
    const struct sk_skeleton *skeleton; /* humanoid at rest (config/humanoid.json) */
    enum av_make_rig rig;
    int detail;        /* sides of each limb's tube; default 12, at least 6 */
    const char *title; /* VRM meta title; default "embody" */
    /* For tests: bones left out of the VRM humanBones, comma separated ("leftLowerArm"),
     * a specVersion to write instead of the rig's, and node names to use for every bone
     * ("bone%d"), to make the files a reader must refuse. */
    const char *omit_bones;
    const char *spec_version;
    bool anonymous_nodes;
    /* Each bone node's +Y along its bone (as Blender exports rigs) instead of frames
     * aligned with the world: the same avatar, in other node frames. */
    bool bone_axes;
    /* For tests: the fingers at rest bent at every joint by this (radians) and the whole
     * hand turned about the forearm by that (positive turns the left palm back and the
     * right palm forward), as rigs that do not rest their hands flat have them. */
    float finger_rest_curl_rad;
    float hand_rest_turn_rad;
};

/* Builds a small skinned humanoid as GLB bytes (malloc'ed, the caller frees): every body
 * part a capsule weighted to its bone (blending into the next bone at joints), eyes as a
 * rigid mesh under the head node, a striped base-colour texture on the shirt, MToon eyes.
 * Returns EM_ERROR_INVALID_ARGUMENT for a skeleton that is not a humanoid. */
enum em_result av_make_glb(const struct av_make_desc *desc, uint8_t **out_bytes, size_t *out_size,
                           struct em_error *err);

/* av_make_glb written to `path`. */
enum em_result av_make_file(const struct av_make_desc *desc, const char *path,
                            struct em_error *err);

#ifdef __cplusplus
}
#endif

#endif
