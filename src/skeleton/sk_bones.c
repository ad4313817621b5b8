/*
 * Humanoid bone names (VRM's), which are required, and their mirrors. The names other
 * rigs give them are in sk_names.c.
 */
#include <string.h>

#include "embody/skeleton.h"

static const char *const bone_names[SK_BONE_COUNT] = {
    [SK_HIPS] = "hips",
    [SK_SPINE] = "spine",
    [SK_CHEST] = "chest",
    [SK_UPPER_CHEST] = "upperChest",
    [SK_NECK] = "neck",
    [SK_HEAD] = "head",
    [SK_LEFT_SHOULDER] = "leftShoulder",
    [SK_LEFT_UPPER_ARM] = "leftUpperArm",
    [SK_LEFT_LOWER_ARM] = "leftLowerArm",
    [SK_LEFT_HAND] = "leftHand",
    [SK_RIGHT_SHOULDER] = "rightShoulder",
    [SK_RIGHT_UPPER_ARM] = "rightUpperArm",
    [SK_RIGHT_LOWER_ARM] = "rightLowerArm",
    [SK_RIGHT_HAND] = "rightHand",
    [SK_LEFT_UPPER_LEG] = "leftUpperLeg",
    [SK_LEFT_LOWER_LEG] = "leftLowerLeg",
    [SK_LEFT_FOOT] = "leftFoot",
    [SK_LEFT_TOES] = "leftToes",
    [SK_RIGHT_UPPER_LEG] = "rightUpperLeg",
    [SK_RIGHT_LOWER_LEG] = "rightLowerLeg",
    [SK_RIGHT_FOOT] = "rightFoot",
    [SK_RIGHT_TOES] = "rightToes",
    [SK_HEAD_TOP] = "headTop",
    [SK_LEFT_HAND_END] = "leftHandEnd",
    [SK_RIGHT_HAND_END] = "rightHandEnd",
    [SK_LEFT_TOES_END] = "leftToesEnd",
    [SK_RIGHT_TOES_END] = "rightToesEnd",
};

const char *
sk_bone_name(enum sk_bone bone)
{
    if (bone < 0 || bone >= SK_BONE_COUNT)
        return "none";
    return bone_names[bone];
}

enum sk_bone
sk_bone_from_name(const char *name)
{
    for (int b = 0; b < SK_BONE_COUNT; ++b)
        if (strcmp(bone_names[b], name) == 0)
            return (enum sk_bone)b;
    return SK_BONE_NONE;
}

bool
sk_bone_is_required(enum sk_bone bone)
{
    switch (bone) {
    case SK_UPPER_CHEST:
    case SK_LEFT_TOES:
    case SK_RIGHT_TOES:
    case SK_HEAD_TOP:
    case SK_LEFT_HAND_END:
    case SK_RIGHT_HAND_END:
    case SK_LEFT_TOES_END:
    case SK_RIGHT_TOES_END:
    case SK_BONE_NONE:
    case SK_BONE_COUNT: return false;
    default: return true;
    }
}

enum sk_bone
sk_bone_mirror(enum sk_bone bone)
{
    static const enum sk_bone pairs[][2] = {
        {SK_LEFT_SHOULDER, SK_RIGHT_SHOULDER},   {SK_LEFT_UPPER_ARM, SK_RIGHT_UPPER_ARM},
        {SK_LEFT_LOWER_ARM, SK_RIGHT_LOWER_ARM}, {SK_LEFT_HAND, SK_RIGHT_HAND},
        {SK_LEFT_UPPER_LEG, SK_RIGHT_UPPER_LEG}, {SK_LEFT_LOWER_LEG, SK_RIGHT_LOWER_LEG},
        {SK_LEFT_FOOT, SK_RIGHT_FOOT},           {SK_LEFT_TOES, SK_RIGHT_TOES},
        {SK_LEFT_HAND_END, SK_RIGHT_HAND_END},   {SK_LEFT_TOES_END, SK_RIGHT_TOES_END},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; ++i) {
        if (pairs[i][0] == bone)
            return pairs[i][1];
        if (pairs[i][1] == bone)
            return pairs[i][0];
    }
    return bone;
}

bool
sk_bone_is_needed_in_file(enum sk_bone bone)
{
    switch (bone) {
    case SK_CHEST:
    case SK_NECK:
    case SK_LEFT_SHOULDER:
    case SK_RIGHT_SHOULDER: return false;
    default: return sk_bone_is_required(bone);
    }
}
