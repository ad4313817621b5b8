/*
 * The one humanoid name map: the names every rig convention embody knows gives the
 * humanoid bones, used by every reader (BVH, glTF/GLB, FBX, VRM without its extension).
 *
 * Names are compared folded (sk_name_fold): whatever comes before the last ':' or '|'
 * dropped ("mixamorig:", "mixamorig1:", "Armature|"), ASCII lower case, and ' ', '_', '.'
 * and '-' dropped, so "J_Bip_L_UpperArm", "j bip l upperarm" and "Armature|J_Bip_L_UpperArm"
 * are one name, as are "DEF-upper_arm.L" and "DEF-upper_arm_L". A convention is a table;
 * a set of names is read with the table that maps most of them (sk_name_map_guess), since
 * conventions disagree ("LeftLeg" is Mixamo's shin and CATS's thigh; "LeftShoulder" is
 * CMU's collar bone and 3ds Max's upper arm). Names no table has are read by their side
 * marks and words (Unity's "LeftUpperArm", Blender's "UpperArm.L", "thigh_l", "L_Hand",
 * "左腕"): sk_bone_from_node_name.
 *
 * Twist and roll bones ("lShldrTwist", "upperarm_twist_01_l", "DEF-upper_arm.L.001",
 * "左腕捩") are in no table: they stay nodes of the limb they hang in, which moves them.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "embody/skeleton.h"
#include "skeleton/sk_fingers.h"

struct name_pair {
    const char *name;
    enum sk_bone bone;
};

/* Both sides of a bone: SIDES(UPPER_ARM, "LeftArm", "RightArm"). */
#define SIDES(bone, left, right) {left, SK_LEFT_##bone}, {right, SK_RIGHT_##bone}

/* VRM's own names (sk_bone_name), end joints included. */
static const struct name_pair vrm_names[] = {
    {"hips", SK_HIPS},
    {"spine", SK_SPINE},
    {"chest", SK_CHEST},
    {"upperChest", SK_UPPER_CHEST},
    {"neck", SK_NECK},
    {"head", SK_HEAD},
    SIDES(SHOULDER, "leftShoulder", "rightShoulder"),
    SIDES(UPPER_ARM, "leftUpperArm", "rightUpperArm"),
    SIDES(LOWER_ARM, "leftLowerArm", "rightLowerArm"),
    SIDES(HAND, "leftHand", "rightHand"),
    SIDES(UPPER_LEG, "leftUpperLeg", "rightUpperLeg"),
    SIDES(LOWER_LEG, "leftLowerLeg", "rightLowerLeg"),
    SIDES(FOOT, "leftFoot", "rightFoot"),
    SIDES(TOES, "leftToes", "rightToes"),
    {"headTop", SK_HEAD_TOP},
    SIDES(HAND_END, "leftHandEnd", "rightHandEnd"),
    SIDES(TOES_END, "leftToesEnd", "rightToesEnd"),
    {NULL, SK_BONE_NONE},
};

/* CMU's ASF/AMC names as converted to BVH. LHipJoint, RHipJoint, LowerBack and Neck1 have
 * no humanoid bone: their offsets fold into the next mapped joint. */
static const struct name_pair cmu_names[] = {
    {"Hips", SK_HIPS},
    {"Spine", SK_SPINE},
    {"Spine1", SK_CHEST},
    {"Neck", SK_NECK},
    {"Head", SK_HEAD},
    SIDES(SHOULDER, "LeftShoulder", "RightShoulder"),
    SIDES(UPPER_ARM, "LeftArm", "RightArm"),
    SIDES(LOWER_ARM, "LeftForeArm", "RightForeArm"),
    SIDES(HAND, "LeftHand", "RightHand"),
    SIDES(HAND_END, "LeftFingerBase", "RightFingerBase"),
    SIDES(UPPER_LEG, "LeftUpLeg", "RightUpLeg"),
    SIDES(LOWER_LEG, "LeftLeg", "RightLeg"),
    SIDES(FOOT, "LeftFoot", "RightFoot"),
    SIDES(TOES, "LeftToeBase", "RightToeBase"),
    {NULL, SK_BONE_NONE},
};

/* Mixamo's names, after the "mixamorig:" prefix. */
static const struct name_pair mixamo_names[] = {
    {"Hips", SK_HIPS},
    {"Spine", SK_SPINE},
    {"Spine1", SK_CHEST},
    {"Spine2", SK_UPPER_CHEST},
    {"Neck", SK_NECK},
    {"Head", SK_HEAD},
    {"HeadTop_End", SK_HEAD_TOP},
    SIDES(SHOULDER, "LeftShoulder", "RightShoulder"),
    SIDES(UPPER_ARM, "LeftArm", "RightArm"),
    SIDES(LOWER_ARM, "LeftForeArm", "RightForeArm"),
    SIDES(HAND, "LeftHand", "RightHand"),
    SIDES(HAND_END, "LeftHandMiddle1", "RightHandMiddle1"),
    SIDES(UPPER_LEG, "LeftUpLeg", "RightUpLeg"),
    SIDES(LOWER_LEG, "LeftLeg", "RightLeg"),
    SIDES(FOOT, "LeftFoot", "RightFoot"),
    SIDES(TOES, "LeftToeBase", "RightToeBase"),
    SIDES(TOES_END, "LeftToe_End", "RightToe_End"),
    {NULL, SK_BONE_NONE},
};

/* Daz: the Daz-friendly BVH conversions of CMU (cgspeed's: hip, abdomen, chest, lShldr,
 * lThigh; lButtock folded) and Genesis 8/9 figures (abdomenLower, chestLower,
 * lShldrBend, lThighBend; the *Twist bones, pelvis and abdomenUpper fold into their
 * neighbours). */
static const struct name_pair daz_names[] = {
    {"hip", SK_HIPS},
    {"abdomen", SK_SPINE},
    {"abdomenLower", SK_SPINE},
    {"chest", SK_CHEST},
    {"chestLower", SK_CHEST},
    {"chestUpper", SK_UPPER_CHEST},
    {"neck", SK_NECK},
    {"neckLower", SK_NECK},
    {"head", SK_HEAD},
    SIDES(SHOULDER, "lCollar", "rCollar"),
    SIDES(UPPER_ARM, "lShldr", "rShldr"),
    SIDES(UPPER_ARM, "lShldrBend", "rShldrBend"),
    SIDES(LOWER_ARM, "lForeArm", "rForeArm"),
    SIDES(LOWER_ARM, "lForearmBend", "rForearmBend"),
    SIDES(HAND, "lHand", "rHand"),
    SIDES(HAND_END, "lMid1", "rMid1"),
    SIDES(UPPER_LEG, "lThigh", "rThigh"),
    SIDES(UPPER_LEG, "lThighBend", "rThighBend"),
    SIDES(LOWER_LEG, "lShin", "rShin"),
    SIDES(FOOT, "lFoot", "rFoot"),
    SIDES(TOES, "lToe", "rToe"),
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
    SIDES(SHOULDER, "LeftCollar", "RightCollar"),
    SIDES(UPPER_ARM, "LeftShoulder", "RightShoulder"),
    SIDES(LOWER_ARM, "LeftElbow", "RightElbow"),
    SIDES(HAND, "LeftWrist", "RightWrist"),
    SIDES(HAND_END, "LFingers", "RFingers"),
    SIDES(UPPER_LEG, "LeftHip", "RightHip"),
    SIDES(LOWER_LEG, "LeftKnee", "RightKnee"),
    SIDES(FOOT, "LeftAnkle", "RightAnkle"),
    SIDES(TOES, "LeftToe", "RightToe"),
    {NULL, SK_BONE_NONE},
};

/* Reallusion's Character Creator 3/4 and iClone: CC_Base_ names; CC_Base_Pelvis, the
 * twist and share bones and NeckTwist02 fold into their neighbours. */
static const struct name_pair cc_names[] = {
    {"CC_Base_Hip", SK_HIPS},
    {"CC_Base_Waist", SK_SPINE},
    {"CC_Base_Spine01", SK_CHEST},
    {"CC_Base_Spine02", SK_UPPER_CHEST},
    {"CC_Base_NeckTwist01", SK_NECK},
    {"CC_Base_Head", SK_HEAD},
    SIDES(SHOULDER, "CC_Base_L_Clavicle", "CC_Base_R_Clavicle"),
    SIDES(UPPER_ARM, "CC_Base_L_Upperarm", "CC_Base_R_Upperarm"),
    SIDES(LOWER_ARM, "CC_Base_L_Forearm", "CC_Base_R_Forearm"),
    SIDES(HAND, "CC_Base_L_Hand", "CC_Base_R_Hand"),
    SIDES(HAND_END, "CC_Base_L_Mid1", "CC_Base_R_Mid1"),
    SIDES(UPPER_LEG, "CC_Base_L_Thigh", "CC_Base_R_Thigh"),
    SIDES(LOWER_LEG, "CC_Base_L_Calf", "CC_Base_R_Calf"),
    SIDES(FOOT, "CC_Base_L_Foot", "CC_Base_R_Foot"),
    SIDES(TOES, "CC_Base_L_ToeBase", "CC_Base_R_ToeBase"),
    {NULL, SK_BONE_NONE},
};

/* VRoid Studio's VRM (and its exports without the extension): J_Bip_ names. */
static const struct name_pair vroid_names[] = {
    {"J_Bip_C_Hips", SK_HIPS},
    {"J_Bip_C_Spine", SK_SPINE},
    {"J_Bip_C_Chest", SK_CHEST},
    {"J_Bip_C_UpperChest", SK_UPPER_CHEST},
    {"J_Bip_C_Neck", SK_NECK},
    {"J_Bip_C_Head", SK_HEAD},
    {"J_Bip_C_HeadTop_Tip", SK_HEAD_TOP},
    SIDES(SHOULDER, "J_Bip_L_Shoulder", "J_Bip_R_Shoulder"),
    SIDES(UPPER_ARM, "J_Bip_L_UpperArm", "J_Bip_R_UpperArm"),
    SIDES(LOWER_ARM, "J_Bip_L_LowerArm", "J_Bip_R_LowerArm"),
    SIDES(HAND, "J_Bip_L_Hand", "J_Bip_R_Hand"),
    SIDES(UPPER_LEG, "J_Bip_L_UpperLeg", "J_Bip_R_UpperLeg"),
    SIDES(LOWER_LEG, "J_Bip_L_LowerLeg", "J_Bip_R_LowerLeg"),
    SIDES(FOOT, "J_Bip_L_Foot", "J_Bip_R_Foot"),
    SIDES(TOES, "J_Bip_L_ToeBase", "J_Bip_R_ToeBase"),
    SIDES(TOES, "J_Bip_L_Toes", "J_Bip_R_Toes"),
    {NULL, SK_BONE_NONE},
};

/* Unreal's mannequin (UE4; UE5's spine_04/05 and neck_02 fold into their neighbours; the
 * *_twist_01_l bones are side branches). */
static const struct name_pair unreal_names[] = {
    {"pelvis", SK_HIPS},
    {"spine_01", SK_SPINE},
    {"spine_02", SK_CHEST},
    {"spine_03", SK_UPPER_CHEST},
    {"neck_01", SK_NECK},
    {"head", SK_HEAD},
    SIDES(SHOULDER, "clavicle_l", "clavicle_r"),
    SIDES(UPPER_ARM, "upperarm_l", "upperarm_r"),
    SIDES(LOWER_ARM, "lowerarm_l", "lowerarm_r"),
    SIDES(HAND, "hand_l", "hand_r"),
    SIDES(UPPER_LEG, "thigh_l", "thigh_r"),
    SIDES(LOWER_LEG, "calf_l", "calf_r"),
    SIDES(FOOT, "foot_l", "foot_r"),
    SIDES(TOES, "ball_l", "ball_r"),
    {NULL, SK_BONE_NONE},
};

/* Blender's Rigify deform bones (the DEF- layer glTF and FBX exports keep). Each limb
 * bone's ".001" half is its twist bone; DEF-spine.005 is the upper neck. */
static const struct name_pair rigify_names[] = {
    {"DEF-spine", SK_HIPS},
    {"DEF-spine.001", SK_SPINE},
    {"DEF-spine.002", SK_CHEST},
    {"DEF-spine.003", SK_UPPER_CHEST},
    {"DEF-spine.004", SK_NECK},
    {"DEF-spine.006", SK_HEAD},
    SIDES(SHOULDER, "DEF-shoulder.L", "DEF-shoulder.R"),
    SIDES(UPPER_ARM, "DEF-upper_arm.L", "DEF-upper_arm.R"),
    SIDES(LOWER_ARM, "DEF-forearm.L", "DEF-forearm.R"),
    SIDES(HAND, "DEF-hand.L", "DEF-hand.R"),
    SIDES(UPPER_LEG, "DEF-thigh.L", "DEF-thigh.R"),
    SIDES(LOWER_LEG, "DEF-shin.L", "DEF-shin.R"),
    SIDES(FOOT, "DEF-foot.L", "DEF-foot.R"),
    SIDES(TOES, "DEF-toe.L", "DEF-toe.R"),
    {NULL, SK_BONE_NONE},
};

/* CATS (the Blender plugin most VRChat avatars went through) and MMD models converted to
 * English names: "Left arm" is the upper arm, "Left leg" the thigh. */
static const struct name_pair cats_names[] = {
    {"Hips", SK_HIPS},
    {"Spine", SK_SPINE},
    {"Chest", SK_CHEST},
    {"Upper Chest", SK_UPPER_CHEST},
    {"Neck", SK_NECK},
    {"Head", SK_HEAD},
    SIDES(SHOULDER, "Left shoulder", "Right shoulder"),
    SIDES(UPPER_ARM, "Left arm", "Right arm"),
    SIDES(LOWER_ARM, "Left elbow", "Right elbow"),
    SIDES(HAND, "Left wrist", "Right wrist"),
    SIDES(UPPER_LEG, "Left leg", "Right leg"),
    SIDES(LOWER_LEG, "Left knee", "Right knee"),
    SIDES(FOOT, "Left ankle", "Right ankle"),
    SIDES(TOES, "Left toe", "Right toe"),
    SIDES(SHOULDER, "Shoulder_L", "Shoulder_R"),
    SIDES(UPPER_ARM, "Arm_L", "Arm_R"),
    SIDES(LOWER_ARM, "Elbow_L", "Elbow_R"),
    SIDES(HAND, "Wrist_L", "Wrist_R"),
    SIDES(UPPER_LEG, "Leg_L", "Leg_R"),
    SIDES(LOWER_LEG, "Knee_L", "Knee_R"),
    SIDES(FOOT, "Ankle_L", "Ankle_R"),
    SIDES(TOES, "Toe_L", "Toe_R"),
    {NULL, SK_BONE_NONE},
};

/* MikuMikuDance (PMX) Japanese names. 下半身 (lower body) and 上半身 (upper body) are
 * siblings in most models: sk_rig_find_bones then takes their common parent as the hips.
 * 腕捩 and 手捩 are twist bones, 足ＩＫ the IK targets (neither mapped). */
static const struct name_pair mmd_names[] = {
    {"下半身", SK_HIPS},
    {"上半身", SK_SPINE},
    {"上半身2", SK_CHEST},
    {"上半身3", SK_UPPER_CHEST},
    {"首", SK_NECK},
    {"頭", SK_HEAD},
    SIDES(SHOULDER, "左肩", "右肩"),
    SIDES(UPPER_ARM, "左腕", "右腕"),
    SIDES(LOWER_ARM, "左ひじ", "右ひじ"),
    SIDES(HAND, "左手首", "右手首"),
    SIDES(UPPER_LEG, "左足", "右足"),
    SIDES(LOWER_LEG, "左ひざ", "右ひざ"),
    SIDES(FOOT, "左足首", "右足首"),
    SIDES(TOES, "左つま先", "右つま先"),
    {NULL, SK_BONE_NONE},
};

struct convention {
    const char *label;
    const struct name_pair *names;
};

static const struct convention k_conventions[SK_NAMES_COUNT] = {
    [SK_NAMES_VRM] = {"VRM", vrm_names},
    [SK_NAMES_CMU] = {"CMU", cmu_names},
    [SK_NAMES_MIXAMO] = {"Mixamo", mixamo_names},
    [SK_NAMES_DAZ] = {"Daz", daz_names},
    [SK_NAMES_MAX] = {"3ds Max", max_names},
    [SK_NAMES_CC3] = {"Character Creator", cc_names},
    [SK_NAMES_VROID] = {"VRoid", vroid_names},
    [SK_NAMES_UNREAL] = {"Unreal", unreal_names},
    [SK_NAMES_RIGIFY] = {"Rigify", rigify_names},
    [SK_NAMES_CATS] = {"CATS/VRChat", cats_names},
    [SK_NAMES_MMD] = {"MMD", mmd_names},
};

static bool
is_separator(char c)
{
    return c == '_' || c == '.' || c == '-' || c == ' ';
}

void
sk_name_fold(const char *name, char *out, size_t out_size)
{
    if (!out || out_size == 0)
        return;
    const char *start = name ? name : "";
    for (const char *c = start; *c; ++c)
        if (*c == ':' || *c == '|')
            start = c + 1;
    size_t n = 0;
    for (const char *c = start; *c && n + 1 < out_size; ++c)
        if (!is_separator(*c))
            out[n++] = (char)tolower((unsigned char)*c);
    out[n] = '\0';
}

static bool
valid_map(enum sk_name_map map)
{
    return map >= 0 && map < SK_NAMES_COUNT;
}

const char *
sk_name_map_label(enum sk_name_map map)
{
    return valid_map(map) ? k_conventions[map].label : "unknown";
}

/* The bone `folded` (a folded name) is in `table`, or SK_BONE_NONE. */
static enum sk_bone
lookup_folded(const struct name_pair *table, const char *folded)
{
    char key[SK_NAME_MAX * 2];
    for (const struct name_pair *p = table; p->name; ++p) {
        sk_name_fold(p->name, key, sizeof key);
        if (strcmp(key, folded) == 0)
            return p->bone;
    }
    return SK_BONE_NONE;
}

enum sk_bone
sk_bone_from_mapped_name(enum sk_name_map map, const char *name)
{
    if (!valid_map(map) || !name)
        return SK_BONE_NONE;
    char folded[SK_NAME_MAX * 2];
    sk_name_fold(name, folded, sizeof folded);
    if (!folded[0])
        return SK_BONE_NONE;
    return lookup_folded(k_conventions[map].names, folded);
}

const char *
sk_mapped_name(enum sk_name_map map, enum sk_bone bone)
{
    if (!valid_map(map))
        return NULL;
    for (const struct name_pair *p = k_conventions[map].names; p->name; ++p)
        if (p->bone == bone)
            return p->name;
    return NULL;
}

enum sk_name_map
sk_name_map_guess(const char *const *names, int count)
{
    enum sk_name_map best = SK_NAMES_VRM;
    int best_hits = -1;
    for (int m = 0; m < SK_NAMES_COUNT; ++m) {
        int hits = 0;
        for (int i = 0; i < count; ++i)
            hits += sk_bone_from_mapped_name((enum sk_name_map)m, names[i]) != SK_BONE_NONE;
        /* CMU and Mixamo share most names; Mixamo's Spine2 or CMU's FingerBase tells them
         * apart. A tie keeps the earlier map. */
        if (hits > best_hits) {
            best_hits = hits;
            best = (enum sk_name_map)m;
        }
    }
    return best;
}

/* ---- Names no table has: read by side marks and words ---- */

enum side { SIDE_NONE, SIDE_LEFT, SIDE_RIGHT };

struct spelling {
    const char *folded;
    enum sk_bone left; /* the bone for the left side, or the centre bone */
    bool sided;        /* needs a side (the right bone is the mirror of `left`) */
};

/* Words, folded and with the side removed: Unity's and Blender's names and the words of
 * the tables above. */
static const struct spelling k_words[] = {
    {"hips", SK_HIPS, false},       {"pelvis", SK_HIPS, false},
    {"spine", SK_SPINE, false},     {"spine1", SK_CHEST, false},
    {"chest", SK_CHEST, false},     {"spine2", SK_UPPER_CHEST, false},
    {"upperchest", SK_UPPER_CHEST, false},
    {"neck", SK_NECK, false},       {"head", SK_HEAD, false},
    {"shoulder", SK_LEFT_SHOULDER, true},  {"clavicle", SK_LEFT_SHOULDER, true},
    {"collar", SK_LEFT_SHOULDER, true},    {"upperarm", SK_LEFT_UPPER_ARM, true},
    {"arm", SK_LEFT_UPPER_ARM, true},      {"lowerarm", SK_LEFT_LOWER_ARM, true},
    {"forearm", SK_LEFT_LOWER_ARM, true},  {"elbow", SK_LEFT_LOWER_ARM, true},
    {"hand", SK_LEFT_HAND, true},          {"wrist", SK_LEFT_HAND, true},
    {"upperleg", SK_LEFT_UPPER_LEG, true}, {"upleg", SK_LEFT_UPPER_LEG, true},
    {"thigh", SK_LEFT_UPPER_LEG, true},    {"lowerleg", SK_LEFT_LOWER_LEG, true},
    {"leg", SK_LEFT_LOWER_LEG, true},      {"shin", SK_LEFT_LOWER_LEG, true},
    {"calf", SK_LEFT_LOWER_LEG, true},     {"knee", SK_LEFT_LOWER_LEG, true},
    {"foot", SK_LEFT_FOOT, true},          {"ankle", SK_LEFT_FOOT, true},
    {"toes", SK_LEFT_TOES, true},          {"toe", SK_LEFT_TOES, true},
    {"toebase", SK_LEFT_TOES, true},
};

/* Removes `word` from `s` (in place) if found; true when it was there. */
static bool
remove_word(char *s, const char *word)
{
    char *at = strstr(s, word);
    if (!at)
        return false;
    const size_t n = strlen(word);
    memmove(at, at + n, strlen(at + n) + 1);
    return true;
}

/* Reads and removes an "l"/"r" token at either end of `s` (separators still in). */
static enum side
take_side_letter(char *s)
{
    const size_t n = strlen(s);
    if (n >= 3 && is_separator(s[n - 2]) && (s[n - 1] == 'l' || s[n - 1] == 'r')) {
        const enum side side = s[n - 1] == 'l' ? SIDE_LEFT : SIDE_RIGHT;
        s[n - 2] = '\0';
        return side;
    }
    if (n >= 3 && is_separator(s[1]) && (s[0] == 'l' || s[0] == 'r')) {
        const enum side side = s[0] == 'l' ? SIDE_LEFT : SIDE_RIGHT;
        memmove(s, s + 2, n - 1);
        return side;
    }
    return SIDE_NONE;
}

bool
sk_name_is_twist(const char *name)
{
    char s[SK_NAME_MAX * 2];
    sk_name_fold(name, s, sizeof s);
    return strstr(s, "twist") || strstr(s, "roll") || strstr(s, "share") || strstr(s, "捩");
}

/* By side marks and words (Unity "LeftUpperArm", Blender "UpperArm.L", "thigh_l",
 * "L_Hand", "左腕"): the bone or SK_BONE_NONE. */
static enum sk_bone
bone_from_words(const char *name)
{
    const char *start = name;
    for (const char *c = name; *c; ++c)
        if (*c == ':' || *c == '|')
            start = c + 1;
    char s[SK_NAME_MAX * 2];
    size_t n = 0;
    for (const char *c = start; *c && n + 1 < sizeof s; ++c)
        s[n++] = (char)tolower((unsigned char)*c);
    s[n] = '\0';

    enum side side = SIDE_NONE;
    if (remove_word(s, "left") || remove_word(s, "左"))
        side = SIDE_LEFT;
    else if (remove_word(s, "right") || remove_word(s, "右"))
        side = SIDE_RIGHT;
    else
        side = take_side_letter(s);

    char folded[sizeof s];
    sk_name_fold(s, folded, sizeof folded);
    for (size_t i = 0; i < sizeof k_words / sizeof k_words[0]; ++i) {
        const struct spelling *sp = &k_words[i];
        if (strcmp(folded, sp->folded) != 0)
            continue;
        if (!sp->sided)
            return side == SIDE_NONE ? sp->left : SK_BONE_NONE;
        if (side == SIDE_NONE)
            return SK_BONE_NONE;
        return side == SIDE_LEFT ? sp->left : sk_bone_mirror(sp->left);
    }
    return SK_BONE_NONE;
}

enum sk_bone
sk_bone_from_node_name_in(enum sk_name_map map, const char *name)
{
    if (!name || !name[0])
        return SK_BONE_NONE;
    const enum sk_bone b = sk_bone_from_mapped_name(map, name);
    if (b != SK_BONE_NONE) /* a table's word first: CC_Base_NeckTwist01 is CC's neck */
        return b >= SK_HEAD_TOP ? SK_BONE_NONE : b;
    if (sk_name_is_twist(name))
        return SK_BONE_NONE;
    const enum sk_bone w = bone_from_words(name);
    return w >= SK_HEAD_TOP ? SK_BONE_NONE : w;
}

enum sk_bone
sk_bone_from_node_name(const char *name)
{
    const char *one[1] = {name};
    return sk_bone_from_node_name_in(sk_name_map_guess(one, name ? 1 : 0), name);
}

/* ---- Finger bones (src/skeleton/sk_fingers.h) ---- */

/* Each convention's finger bone names, as a pattern: the side's word, the finger's word
 * and the joint's (0 to 2). VRM 1.0's and Unity's (VRM 0.x's) are the hand module's tables
 * (hd_vrm_bone_name, hd_unity_bone_name); the others are here. Names compare folded. */
struct finger_convention {
    const char *format; /* printf: side, finger, joint (all strings) */
    const char *side[2];
    const char *finger[HD_FINGER_COUNT];
    const char *joint[HD_FINGER_COUNT][HD_FINGER_JOINTS]; /* per finger (the thumb differs) */
};

/* clang-format off */
#define SAME_JOINTS(a, b, c) {{a, b, c}, {a, b, c}, {a, b, c}, {a, b, c}, {a, b, c}}
/* clang-format on */

static const struct finger_convention k_finger_conventions[] = {
    /* VRoid: J_Bip_L_Index1 */
    {"J_Bip_%s_%s%s",
     {"L", "R"},
     {"Thumb", "Index", "Middle", "Ring", "Little"},
     SAME_JOINTS("1", "2", "3")},
    /* Mixamo: mixamorig:LeftHandIndex1 */
    {"%sHand%s%s",
     {"Left", "Right"},
     {"Thumb", "Index", "Middle", "Ring", "Pinky"},
     SAME_JOINTS("1", "2", "3")},
    /* Unreal mannequin: index_01_l */
    {"%2$s_%3$s_%1$s",
     {"l", "r"},
     {"thumb", "index", "middle", "ring", "pinky"},
     SAME_JOINTS("01", "02", "03")},
    /* Blender Rigify deform bones: DEF-f_index.01.L, DEF-thumb.01.L */
    {"DEF-%2$s.%3$s.%1$s",
     {"L", "R"},
     {"thumb", "f_index", "f_middle", "f_ring", "f_pinky"},
     SAME_JOINTS("01", "02", "03")},
    /* Character Creator 3/4: CC_Base_L_Index1 */
    {"CC_Base_%s_%s%s",
     {"L", "R"},
     {"Thumb", "Index", "Mid", "Ring", "Pinky"},
     SAME_JOINTS("1", "2", "3")},
    /* Daz Genesis 8: lIndex1 */
    {"%s%s%s", {"l", "r"}, {"Thumb", "Index", "Mid", "Ring", "Pinky"}, SAME_JOINTS("1", "2", "3")},
    /* CATS / VRChat: Thumb0_L, IndexFinger1_L */
    {"%2$s%3$s_%1$s",
     {"L", "R"},
     {"Thumb", "IndexFinger", "MiddleFinger", "RingFinger", "LittleFinger"},
     {{"0", "1", "2"}, {"1", "2", "3"}, {"1", "2", "3"}, {"1", "2", "3"}, {"1", "2", "3"}}},
    /* Blender side marks on Unity-like words: index_proximal.L, thumb_metacarpal.L */
    {"%2$s_%3$s.%1$s",
     {"L", "R"},
     {"thumb", "index", "middle", "ring", "little"},
     {{"metacarpal", "proximal", "distal"},
      {"proximal", "intermediate", "distal"},
      {"proximal", "intermediate", "distal"},
      {"proximal", "intermediate", "distal"},
      {"proximal", "intermediate", "distal"}}},
};

#define FINGER_CONVENTION_COUNT                                                                    \
    ((int)(sizeof k_finger_conventions / sizeof k_finger_conventions[0]))

static bool
folded_equal(const char *name, const char *folded)
{
    char key[SK_NAME_MAX * 2];
    sk_name_fold(name, key, sizeof key);
    return strcmp(key, folded) == 0;
}

int
sk_finger_from_node_name(const char *name, enum sk_finger_names names, int *out_side)
{
    char folded[SK_NAME_MAX * 2];
    sk_name_fold(name, folded, sizeof folded);
    if (!folded[0])
        return -1;
    for (int side = 0; side < HD_HAND_COUNT; ++side)
        for (int j = 0; j < HD_JOINT_COUNT; ++j) {
            const char *own = names == SK_FINGER_NAMES_VRM1
                                  ? hd_vrm_bone_name((enum hd_hand)side, j)
                                  : hd_unity_bone_name((enum hd_hand)side, j);
            if (folded_equal(own, folded)) {
                *out_side = side;
                return j;
            }
        }
    for (int c = 0; c < FINGER_CONVENTION_COUNT; ++c) {
        const struct finger_convention *fc = &k_finger_conventions[c];
        for (int side = 0; side < HD_HAND_COUNT; ++side)
            for (int f = 0; f < HD_FINGER_COUNT; ++f)
                for (int k = 0; k < HD_FINGER_JOINTS; ++k) {
                    char candidate[SK_NAME_MAX * 2];
                    snprintf(candidate, sizeof candidate, fc->format, fc->side[side], fc->finger[f],
                             fc->joint[f][k]);
                    if (folded_equal(candidate, folded)) {
                        *out_side = side;
                        return f * HD_FINGER_JOINTS + k;
                    }
                }
    }
    return -1;
}

enum sk_finger_names
sk_finger_names_guess(const char *const *names, int count)
{
    /* VRM 1.0 names the thumb's first bone metacarpal; Unity (and VRM 0.x) does not. */
    for (int i = 0; i < count; ++i) {
        char folded[SK_NAME_MAX * 2];
        sk_name_fold(names[i], folded, sizeof folded);
        if (strstr(folded, "thumbmetacarpal"))
            return SK_FINGER_NAMES_VRM1;
    }
    return SK_FINGER_NAMES_UNITY;
}
