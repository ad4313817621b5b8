/*
 * The humanoid's tree: the parent of each bone (include/embody/skeleton.h's enum
 * sk_bone), written once for the skeleton's check (sk_humanoid_validate, sk_skeleton.c)
 * and the avatar loader's (src/avatar/av_load.c), which builds its skeleton by it.
 *
 * Inline, a table inside a function: nothing here is a symbol of the core library, so the
 * avatar module reads it whatever the library exports.
 */
#ifndef EMBODY_SK_HUMANOID_TREE_H
#define EMBODY_SK_HUMANOID_TREE_H

#include "embody/skeleton.h"

/* The parent of `bone` in a full humanoid (SK_BONE_NONE for the hips). Optional bones
 * (upperChest, the toes: !sk_bone_is_required) may be missing; a bone's parent in a
 * skeleton is then the nearest ancestor it has: the neck and shoulders hang from the
 * chest without an upperChest, the toes' end from the foot without toes. */
static inline enum sk_bone
sk_humanoid_parent(enum sk_bone bone)
{
    static const enum sk_bone parent[SK_BONE_COUNT] = {
        [SK_HIPS] = SK_BONE_NONE,
        [SK_SPINE] = SK_HIPS,
        [SK_CHEST] = SK_SPINE,
        [SK_UPPER_CHEST] = SK_CHEST,
        [SK_NECK] = SK_UPPER_CHEST,
        [SK_HEAD] = SK_NECK,
        [SK_LEFT_SHOULDER] = SK_UPPER_CHEST,
        [SK_LEFT_UPPER_ARM] = SK_LEFT_SHOULDER,
        [SK_LEFT_LOWER_ARM] = SK_LEFT_UPPER_ARM,
        [SK_LEFT_HAND] = SK_LEFT_LOWER_ARM,
        [SK_RIGHT_SHOULDER] = SK_UPPER_CHEST,
        [SK_RIGHT_UPPER_ARM] = SK_RIGHT_SHOULDER,
        [SK_RIGHT_LOWER_ARM] = SK_RIGHT_UPPER_ARM,
        [SK_RIGHT_HAND] = SK_RIGHT_LOWER_ARM,
        [SK_LEFT_UPPER_LEG] = SK_HIPS,
        [SK_LEFT_LOWER_LEG] = SK_LEFT_UPPER_LEG,
        [SK_LEFT_FOOT] = SK_LEFT_LOWER_LEG,
        [SK_LEFT_TOES] = SK_LEFT_FOOT,
        [SK_RIGHT_UPPER_LEG] = SK_HIPS,
        [SK_RIGHT_LOWER_LEG] = SK_RIGHT_UPPER_LEG,
        [SK_RIGHT_FOOT] = SK_RIGHT_LOWER_LEG,
        [SK_RIGHT_TOES] = SK_RIGHT_FOOT,
        [SK_HEAD_TOP] = SK_HEAD,
        [SK_LEFT_HAND_END] = SK_LEFT_HAND,
        [SK_RIGHT_HAND_END] = SK_RIGHT_HAND,
        [SK_LEFT_TOES_END] = SK_LEFT_TOES,
        [SK_RIGHT_TOES_END] = SK_RIGHT_TOES,
    };
    return bone >= 0 && bone < SK_BONE_COUNT ? parent[bone] : SK_BONE_NONE;
}

/* The parent of `bone` among the bones `have` marks (indexed by enum sk_bone): the
 * nearest ancestor present, or SK_BONE_NONE. */
static inline enum sk_bone
sk_humanoid_parent_among(enum sk_bone bone, const bool *have)
{
    enum sk_bone p = sk_humanoid_parent(bone);
    while (p != SK_BONE_NONE && !have[p])
        p = sk_humanoid_parent(p);
    return p;
}

#endif
