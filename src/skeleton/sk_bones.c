/*
 * Humanoid bone names and the maps from other skeleton conventions (CMU mocap, Mixamo)
 * to them.
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

struct name_pair {
    const char *name;
    enum sk_bone bone;
};

/* CMU's ASF/AMC names as converted to BVH. LHipJoint, RHipJoint, LowerBack and Neck1 have
 * no humanoid bone: their offsets fold into the next mapped joint. */
static const struct name_pair cmu_names[] = {
    {"Hips", SK_HIPS},
    {"Spine", SK_SPINE},
    {"Spine1", SK_CHEST},
    {"Neck", SK_NECK},
    {"Head", SK_HEAD},
    {"LeftShoulder", SK_LEFT_SHOULDER},
    {"LeftArm", SK_LEFT_UPPER_ARM},
    {"LeftForeArm", SK_LEFT_LOWER_ARM},
    {"LeftHand", SK_LEFT_HAND},
    {"LeftFingerBase", SK_LEFT_HAND_END},
    {"RightShoulder", SK_RIGHT_SHOULDER},
    {"RightArm", SK_RIGHT_UPPER_ARM},
    {"RightForeArm", SK_RIGHT_LOWER_ARM},
    {"RightHand", SK_RIGHT_HAND},
    {"RightFingerBase", SK_RIGHT_HAND_END},
    {"LeftUpLeg", SK_LEFT_UPPER_LEG},
    {"LeftLeg", SK_LEFT_LOWER_LEG},
    {"LeftFoot", SK_LEFT_FOOT},
    {"LeftToeBase", SK_LEFT_TOES},
    {"RightUpLeg", SK_RIGHT_UPPER_LEG},
    {"RightLeg", SK_RIGHT_LOWER_LEG},
    {"RightFoot", SK_RIGHT_FOOT},
    {"RightToeBase", SK_RIGHT_TOES},
    {NULL, SK_BONE_NONE},
};

/* Mixamo's names, after any "prefix:" (mixamorig:Hips). */
static const struct name_pair mixamo_names[] = {
    {"Hips", SK_HIPS},
    {"Spine", SK_SPINE},
    {"Spine1", SK_CHEST},
    {"Spine2", SK_UPPER_CHEST},
    {"Neck", SK_NECK},
    {"Head", SK_HEAD},
    {"HeadTop_End", SK_HEAD_TOP},
    {"LeftShoulder", SK_LEFT_SHOULDER},
    {"LeftArm", SK_LEFT_UPPER_ARM},
    {"LeftForeArm", SK_LEFT_LOWER_ARM},
    {"LeftHand", SK_LEFT_HAND},
    {"LeftHandMiddle1", SK_LEFT_HAND_END},
    {"RightShoulder", SK_RIGHT_SHOULDER},
    {"RightArm", SK_RIGHT_UPPER_ARM},
    {"RightForeArm", SK_RIGHT_LOWER_ARM},
    {"RightHand", SK_RIGHT_HAND},
    {"RightHandMiddle1", SK_RIGHT_HAND_END},
    {"LeftUpLeg", SK_LEFT_UPPER_LEG},
    {"LeftLeg", SK_LEFT_LOWER_LEG},
    {"LeftFoot", SK_LEFT_FOOT},
    {"LeftToeBase", SK_LEFT_TOES},
    {"LeftToe_End", SK_LEFT_TOES_END},
    {"RightUpLeg", SK_RIGHT_UPPER_LEG},
    {"RightLeg", SK_RIGHT_LOWER_LEG},
    {"RightFoot", SK_RIGHT_FOOT},
    {"RightToeBase", SK_RIGHT_TOES},
    {"RightToe_End", SK_RIGHT_TOES_END},
    {NULL, SK_BONE_NONE},
};

/* Daz-friendly conversions of CMU (cgspeed's; hip, abdomen, chest, lShldr, lThigh ...):
 * no toe joints, lButtock between hip and thigh (folded). */
static const struct name_pair daz_names[] = {
    {"hip", SK_HIPS},
    {"abdomen", SK_SPINE},
    {"chest", SK_CHEST},
    {"neck", SK_NECK},
    {"head", SK_HEAD},
    {"lCollar", SK_LEFT_SHOULDER},
    {"lShldr", SK_LEFT_UPPER_ARM},
    {"lForeArm", SK_LEFT_LOWER_ARM},
    {"lHand", SK_LEFT_HAND},
    {"lMid1", SK_LEFT_HAND_END},
    {"rCollar", SK_RIGHT_SHOULDER},
    {"rShldr", SK_RIGHT_UPPER_ARM},
    {"rForeArm", SK_RIGHT_LOWER_ARM},
    {"rHand", SK_RIGHT_HAND},
    {"rMid1", SK_RIGHT_HAND_END},
    {"lThigh", SK_LEFT_UPPER_LEG},
    {"lShin", SK_LEFT_LOWER_LEG},
    {"lFoot", SK_LEFT_FOOT},
    {"rThigh", SK_RIGHT_UPPER_LEG},
    {"rShin", SK_RIGHT_LOWER_LEG},
    {"rFoot", SK_RIGHT_FOOT},
    {NULL, SK_BONE_NONE},
};

/* 3ds Max conversions of CMU (LeftHip is the thigh, LeftShoulder the upper arm, LeftCollar
 * the shoulder; Chest, Chest2; LFingers the knuckles). */
static const struct name_pair max_names[] = {
    {"Hips", SK_HIPS},
    {"Chest", SK_SPINE},
    {"Chest2", SK_CHEST},
    {"Neck", SK_NECK},
    {"Head", SK_HEAD},
    {"LeftCollar", SK_LEFT_SHOULDER},
    {"LeftShoulder", SK_LEFT_UPPER_ARM},
    {"LeftElbow", SK_LEFT_LOWER_ARM},
    {"LeftWrist", SK_LEFT_HAND},
    {"LFingers", SK_LEFT_HAND_END},
    {"RightCollar", SK_RIGHT_SHOULDER},
    {"RightShoulder", SK_RIGHT_UPPER_ARM},
    {"RightElbow", SK_RIGHT_LOWER_ARM},
    {"RightWrist", SK_RIGHT_HAND},
    {"RFingers", SK_RIGHT_HAND_END},
    {"LeftHip", SK_LEFT_UPPER_LEG},
    {"LeftKnee", SK_LEFT_LOWER_LEG},
    {"LeftAnkle", SK_LEFT_FOOT},
    {"LeftToe", SK_LEFT_TOES},
    {"RightHip", SK_RIGHT_UPPER_LEG},
    {"RightKnee", SK_RIGHT_LOWER_LEG},
    {"RightAnkle", SK_RIGHT_FOOT},
    {"RightToe", SK_RIGHT_TOES},
    {NULL, SK_BONE_NONE},
};

/* Reallusion's Character Creator 3 rig (iClone exports): CC_Base_ names, the pelvis and
 * twist bones unmapped. */
static const struct name_pair cc3_names[] = {
    {"CC_Base_Hip", SK_HIPS},
    {"CC_Base_Waist", SK_SPINE},
    {"CC_Base_Spine01", SK_CHEST},
    {"CC_Base_Spine02", SK_UPPER_CHEST},
    {"CC_Base_NeckTwist01", SK_NECK},
    {"CC_Base_Head", SK_HEAD},
    {"CC_Base_L_Clavicle", SK_LEFT_SHOULDER},
    {"CC_Base_L_Upperarm", SK_LEFT_UPPER_ARM},
    {"CC_Base_L_Forearm", SK_LEFT_LOWER_ARM},
    {"CC_Base_L_Hand", SK_LEFT_HAND},
    {"CC_Base_L_Mid1", SK_LEFT_HAND_END},
    {"CC_Base_R_Clavicle", SK_RIGHT_SHOULDER},
    {"CC_Base_R_Upperarm", SK_RIGHT_UPPER_ARM},
    {"CC_Base_R_Forearm", SK_RIGHT_LOWER_ARM},
    {"CC_Base_R_Hand", SK_RIGHT_HAND},
    {"CC_Base_R_Mid1", SK_RIGHT_HAND_END},
    {"CC_Base_L_Thigh", SK_LEFT_UPPER_LEG},
    {"CC_Base_L_Calf", SK_LEFT_LOWER_LEG},
    {"CC_Base_L_Foot", SK_LEFT_FOOT},
    {"CC_Base_L_ToeBase", SK_LEFT_TOES},
    {"CC_Base_R_Thigh", SK_RIGHT_UPPER_LEG},
    {"CC_Base_R_Calf", SK_RIGHT_LOWER_LEG},
    {"CC_Base_R_Foot", SK_RIGHT_FOOT},
    {"CC_Base_R_ToeBase", SK_RIGHT_TOES},
    {NULL, SK_BONE_NONE},
};

static enum sk_bone
lookup(const struct name_pair *table, const char *name)
{
    for (const struct name_pair *p = table; p->name; ++p)
        if (strcmp(p->name, name) == 0)
            return p->bone;
    return SK_BONE_NONE;
}

enum sk_bone
sk_bone_from_mapped_name(enum sk_name_map map, const char *name)
{
    switch (map) {
    case SK_NAMES_VRM: return sk_bone_from_name(name);
    case SK_NAMES_CMU: return lookup(cmu_names, name);
    case SK_NAMES_MIXAMO: {
        const char *colon = strrchr(name, ':');
        return lookup(mixamo_names, colon ? colon + 1 : name);
    }
    case SK_NAMES_DAZ: return lookup(daz_names, name);
    case SK_NAMES_MAX: return lookup(max_names, name);
    case SK_NAMES_CC3: return lookup(cc3_names, name);
    }
    return SK_BONE_NONE;
}

const char *
sk_mapped_name(enum sk_name_map map, enum sk_bone bone)
{
    const struct name_pair *table = NULL;
    switch (map) {
    case SK_NAMES_VRM: return bone >= 0 && bone < SK_BONE_COUNT ? sk_bone_name(bone) : NULL;
    case SK_NAMES_CMU: table = cmu_names; break;
    case SK_NAMES_MIXAMO: table = mixamo_names; break;
    case SK_NAMES_DAZ: table = daz_names; break;
    case SK_NAMES_MAX: table = max_names; break;
    case SK_NAMES_CC3: table = cc3_names; break;
    }
    for (const struct name_pair *p = table; p && p->name; ++p)
        if (p->bone == bone)
            return p->name;
    return NULL;
}

enum sk_name_map
sk_name_map_guess(const char *const *names, int count)
{
    static const enum sk_name_map maps[] = {SK_NAMES_VRM, SK_NAMES_CMU, SK_NAMES_MIXAMO,
                                            SK_NAMES_DAZ, SK_NAMES_MAX, SK_NAMES_CC3};
    enum sk_name_map best = SK_NAMES_VRM;
    int best_hits = -1;
    for (size_t m = 0; m < sizeof maps / sizeof maps[0]; ++m) {
        int hits = 0;
        for (int i = 0; i < count; ++i)
            hits += sk_bone_from_mapped_name(maps[m], names[i]) != SK_BONE_NONE;
        /* CMU and Mixamo share most names; Mixamo's prefix or Spine2 tells them apart,
         * CMU's FingerBase too. A tie keeps the earlier map. */
        if (hits > best_hits) {
            best_hits = hits;
            best = maps[m];
        }
    }
    return best;
}
