/*
 * The rigs players already have (issue 27): the default avatar's shape (made as
 * config/avatar/embody.vrm is, from the anatomical humanoid the solver's tests keep,
 * tests/data/ik: players' rigs are anatomical, while the default humanoid's forearm is the
 * scored data's, short of the wrist, which no rig read by its shape has) written again as
 * plain GLB, its VRM extension removed and its bone nodes named after
 * VRoid, Unreal, Rigify, Character Creator, Daz, CATS/VRChat, MMD, Mixamo and
 * Unity/Blender (and the same through assimp's ASCII FBX exporter); a rig named with its
 * sides swapped; twist bones inside and beside the limbs; anonymous bones found by the
 * skeleton's shape; bone map files. Each must give the avatar the VRM gives: every bone
 * the body drives, at the same place.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <assimp/cexport.h>
#include <assimp/cimport.h>
#include <assimp/scene.h>
#include <cjson/cJSON.h>

#include "avatar/avatar.h"
#include "embody/hand.h"
#include "embody/m_math.h"

#define OUT EMBODY_BINARY_DIR "/tests/avatar/"
#define DEFAULT_AVATAR OUT "rig-base.vrm"
#define ANATOMICAL_HUMANOID EMBODY_SOURCE_DIR "/tests/data/ik/humanoid-solver-tests.json"

/* Writes DEFAULT_AVATAR, the avatar every rig here is made from. */
static int
make_base_avatar(void **state)
{
    (void)state;
    struct sk_skeleton sk;
    struct em_error err = {{0}};
    if (sk_skeleton_load_json(ANATOMICAL_HUMANOID, &sk, &err) != EM_OK) {
        fprintf(stderr, "%s\n", err.message);
        return -1;
    }
    const struct av_make_desc desc = {.skeleton = &sk, .rig = AV_MAKE_VRM1};
    const enum em_result r = av_make_file(&desc, DEFAULT_AVATAR, &err);
    sk_skeleton_fini(&sk);
    if (r != EM_OK)
        fprintf(stderr, "%s\n", err.message);
    return r == EM_OK ? 0 : -1;
}

/* ---- The default avatar's GLB, its JSON rewritten ---- */

struct glb {
    uint8_t *bytes;
    size_t size;
    cJSON *json;
};

static uint32_t
u32_at(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void
glb_read(const char *path, struct glb *g)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    const long size = ftell(f);
    assert_true(size > 20);
    rewind(f);
    g->bytes = malloc((size_t)size);
    assert_non_null(g->bytes);
    assert_int_equal(fread(g->bytes, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    g->size = (size_t)size;
    g->json = cJSON_ParseWithLength((const char *)g->bytes + 20, u32_at(g->bytes + 12));
    assert_non_null(g->json);
}

/* Writes the GLB with its (changed) JSON chunk and the binary chunk as it was. */
static void
glb_write(const struct glb *g, const char *path)
{
    const uint32_t json_len = u32_at(g->bytes + 12);
    char *text = cJSON_PrintUnformatted(g->json);
    assert_non_null(text);
    const size_t len = strlen(text), padded = (len + 3) & ~(size_t)3;
    const size_t rest = g->size - 20 - json_len;
    const size_t total = 20 + padded + rest;
    uint8_t header[20];
    memcpy(header, g->bytes, 20);
    for (int i = 0; i < 4; ++i) {
        header[8 + i] = (uint8_t)(total >> (8 * i));
        header[12 + i] = (uint8_t)(padded >> (8 * i));
    }
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(header, 1, 20, f), 20);
    assert_int_equal(fwrite(text, 1, len, f), len);
    for (size_t i = len; i < padded; ++i)
        fputc(' ', f);
    assert_int_equal(fwrite(g->bytes + 20 + json_len, 1, rest, f), rest);
    fclose(f);
    free(text);
}

static void
glb_fini(struct glb *g)
{
    cJSON_Delete(g->json);
    free(g->bytes);
}

static cJSON *
nodes_of(const struct glb *g)
{
    return cJSON_GetObjectItem(g->json, "nodes");
}

/* The node of VRM bone `bone` in the default avatar (its humanBones), or -1. */
static int
bone_node(const struct glb *g, const char *bone)
{
    const cJSON *hb = cJSON_GetObjectItem(
        cJSON_GetObjectItem(
            cJSON_GetObjectItem(cJSON_GetObjectItem(g->json, "extensions"), "VRMC_vrm"),
            "humanoid"),
        "humanBones");
    const cJSON *node = cJSON_GetObjectItem(cJSON_GetObjectItem(hb, bone), "node");
    return cJSON_IsNumber(node) ? node->valueint : -1;
}

static void
set_name(cJSON *node, const char *name)
{
    cJSON_DeleteItemFromObject(node, "name");
    cJSON_AddStringToObject(node, "name", name);
}

/* Plain glTF: the VRM extension gone; every node renamed "node<i>" except the bones
 * `names` gives (pairs of VRM bone, node name, ending in NULL); then `edit`, if any. */
static void
make_edited_rig(const char *const (*names)[2], void (*edit)(struct glb *), const char *path)
{
    struct glb g;
    glb_read(DEFAULT_AVATAR, &g);
    int named[256]; /* the default avatar's nodes (about 70 with its fingers) */
    for (int i = 0; i < 256; ++i)
        named[i] = 0;
    for (size_t i = 0; names[i][0]; ++i) {
        const int n = bone_node(&g, names[i][0]);
        assert_true(n >= 0 && n < 256);
        set_name(cJSON_GetArrayItem(nodes_of(&g), n), names[i][1]);
        named[n] = 1;
    }
    for (int i = 0; i < cJSON_GetArraySize(nodes_of(&g)); ++i) {
        if (named[i])
            continue;
        char other[32];
        snprintf(other, sizeof other, "node%d", i);
        set_name(cJSON_GetArrayItem(nodes_of(&g), i), other);
    }
    if (edit)
        edit(&g);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(g.json, "extensions"), "VRMC_vrm");
    cJSON *used = cJSON_GetObjectItem(g.json, "extensionsUsed");
    for (int i = cJSON_GetArraySize(used) - 1; i >= 0; --i)
        if (strcmp(cJSON_GetArrayItem(used, i)->valuestring, "VRMC_vrm") == 0)
            cJSON_DeleteItemFromArray(used, i);
    glb_write(&g, path);
    glb_fini(&g);
}

/* ---- Finger bones, named after each convention ---- */

/* The convention whose finger names make_rig_with_fingers gives (its label). */
static const char *g_finger_label;

/* The node name `label`'s rigs give finger joint `j` of hand `h`, or false (MMD). */
static bool
finger_node_name(const char *label, int h, int j, char *out, size_t size)
{
    static const char *const words[][HD_FINGER_COUNT] = {
        {"Thumb", "Index", "Middle", "Ring", "Little"}, /* vroid */
        {"Thumb", "Index", "Middle", "Ring", "Pinky"},  /* mixamo */
        {"thumb", "index", "middle", "ring", "pinky"},  /* unreal */
        {"thumb", "f_index", "f_middle", "f_ring", "f_pinky"},
        {"Thumb", "Index", "Mid", "Ring", "Pinky"}, /* cc, daz */
        {"Thumb", "IndexFinger", "MiddleFinger", "RingFinger", "LittleFinger"},
        {"thumb", "index", "middle", "ring", "little"}, /* blender */
    };
    const int f = j / HD_FINGER_JOINTS, k = j % HD_FINGER_JOINTS;
    const bool right = h == HD_RIGHT;
    if (strcmp(label, "vroid") == 0)
        snprintf(out, size, "J_Bip_%c_%s%d", right ? 'R' : 'L', words[0][f], k + 1);
    else if (strcmp(label, "mixamo") == 0)
        snprintf(out, size, "mixamorig:%sHand%s%d", right ? "Right" : "Left", words[1][f], k + 1);
    else if (strcmp(label, "unreal") == 0)
        snprintf(out, size, "%s_0%d_%c", words[2][f], k + 1, right ? 'r' : 'l');
    else if (strcmp(label, "rigify") == 0)
        snprintf(out, size, "DEF-%s.0%d.%c", words[3][f], k + 1, right ? 'R' : 'L');
    else if (strcmp(label, "cc") == 0)
        snprintf(out, size, "CC_Base_%c_%s%d", right ? 'R' : 'L', words[4][f], k + 1);
    else if (strcmp(label, "daz") == 0)
        snprintf(out, size, "%c%s%d", right ? 'r' : 'l', words[4][f], k + 1);
    else if (strcmp(label, "cats") == 0)
        snprintf(out, size, "%s%d_%c", words[5][f], f == HD_THUMB ? k : k + 1, right ? 'R' : 'L');
    else if (strcmp(label, "blender") == 0)
        snprintf(out, size, "%s_%s.%c", words[6][f],
                 f == HD_THUMB ? (const char *[]){"metacarpal", "proximal", "distal"}[k]
                               : (const char *[]){"proximal", "intermediate", "distal"}[k],
                 right ? 'R' : 'L');
    else
        return false;
    return true;
}

static void
name_fingers(struct glb *g)
{
    for (int h = 0; h < HD_HAND_COUNT; ++h)
        for (int j = 0; j < HD_JOINT_COUNT; ++j) {
            char name[64];
            if (!finger_node_name(g_finger_label, h, j, name, sizeof name))
                return;
            const int n = bone_node(g, hd_vrm_bone_name((enum hd_hand)h, j));
            assert_true(n >= 0);
            set_name(cJSON_GetArrayItem(nodes_of(g), n), name);
        }
}

/* The plain rig, its fingers named as convention `label` names them ("none": left as
 * "node<i>", as every node the names do not give). */
static void
make_plain_rig(const char *label, const char *const (*names)[2], const char *path)
{
    g_finger_label = label;
    make_edited_rig(names, name_fingers, path);
}

/* Every finger of `av` is found where the VRM has it (within `tol_m`), for conventions
 * whose finger names the map knows. */
static void
expect_same_fingers(const char *label, const struct av_avatar *av, const struct av_avatar *ref,
                    float tol_m)
{
    char name[64];
    if (!finger_node_name(label, 0, 0, name, sizeof name))
        return;
    for (int h = 0; h < HD_HAND_COUNT; ++h) {
        if (av->hands[h].finger_count != HD_FINGER_COUNT)
            fail_msg("%s: hand %d has %d fingers", label, h, av->hands[h].finger_count);
        for (int j = 0; j < HD_JOINT_COUNT; ++j) {
            const float d = m_vec3_distance(av->hands[h].rest_m[j], ref->hands[h].rest_m[j]);
            if (d > tol_m)
                fail_msg("%s: %s is %.1f mm from the VRM's", label,
                         hd_vrm_bone_name((enum hd_hand)h, j), 1000.0 * (double)d);
        }
    }
}

static float
translation(const cJSON *node, int k)
{
    const cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItem(node, "translation"), k);
    return t ? (float)t->valuedouble : 0.0f;
}

static void
set_translation(cJSON *node, const float *t)
{
    cJSON_DeleteItemFromObject(node, "translation");
    cJSON_AddItemToObject(node, "translation", cJSON_CreateFloatArray(t, 3));
}

/* A new node called `name` under node `parent`, at `t` from it; its index. */
static int
add_node(struct glb *g, int parent, const char *name, const float *t)
{
    cJSON *node = cJSON_CreateObject();
    cJSON_AddStringToObject(node, "name", name);
    set_translation(node, t);
    cJSON_AddItemToArray(nodes_of(g), node);
    const int index = cJSON_GetArraySize(nodes_of(g)) - 1;
    cJSON *p = cJSON_GetArrayItem(nodes_of(g), parent);
    cJSON *children = cJSON_GetObjectItem(p, "children");
    if (!children)
        children = cJSON_AddArrayToObject(p, "children");
    cJSON_AddItemToArray(children, cJSON_CreateNumber(index));
    return index;
}

/* Moves node `child` from its parent to under `new_parent`, keeping where it is: its
 * translation loses `shift` (the new parent's offset from the old). */
static void
reparent(struct glb *g, int old_parent, int child, int new_parent, const float *shift)
{
    cJSON *children = cJSON_GetObjectItem(cJSON_GetArrayItem(nodes_of(g), old_parent), "children");
    for (int i = 0; i < cJSON_GetArraySize(children); ++i)
        if (cJSON_GetArrayItem(children, i)->valueint == child) {
            cJSON_DeleteItemFromArray(children, i);
            break;
        }
    cJSON *np = cJSON_GetArrayItem(nodes_of(g), new_parent);
    cJSON *nc = cJSON_GetObjectItem(np, "children");
    if (!nc)
        nc = cJSON_AddArrayToObject(np, "children");
    cJSON_AddItemToArray(nc, cJSON_CreateNumber(child));
    cJSON *c = cJSON_GetArrayItem(nodes_of(g), child);
    const float t[3] = {translation(c, 0) - shift[0], translation(c, 1) - shift[1],
                        translation(c, 2) - shift[2]};
    set_translation(c, t);
}

/* A twist bone called `name` halfway along the bone from VRM bone `upper` to `lower`,
 * inside the chain (`lower` hangs from it), as Daz's lShldrTwist and Rigify's .001. */
static void
insert_twist(struct glb *g, const char *upper, const char *lower, const char *name)
{
    const int u = bone_node(g, upper), l = bone_node(g, lower);
    const cJSON *ln = cJSON_GetArrayItem(nodes_of(g), l);
    const float half[3] = {0.5f * translation(ln, 0), 0.5f * translation(ln, 1),
                           0.5f * translation(ln, 2)};
    const int t = add_node(g, u, name, half);
    reparent(g, u, l, t, half);
}

/* A twist bone beside the chain (Unreal's upperarm_twist_01_l): a leaf under `upper`
 * halfway to `lower`. */
static void
add_side_twist(struct glb *g, const char *upper, const char *lower, const char *name)
{
    const cJSON *ln = cJSON_GetArrayItem(nodes_of(g), bone_node(g, lower));
    const float half[3] = {0.5f * translation(ln, 0), 0.5f * translation(ln, 1),
                           0.5f * translation(ln, 2)};
    add_node(g, bone_node(g, upper), name, half);
}

/* ---- The conventions ---- */

#define SIDED(bone, l, r) {"left" bone, l}, {"right" bone, r}

static const char *const k_vroid[][2] = {
    {"hips", "J_Bip_C_Hips"},           {"spine", "J_Bip_C_Spine"},
    {"chest", "J_Bip_C_Chest"},         {"neck", "J_Bip_C_Neck"},
    {"head", "J_Bip_C_Head"},           SIDED("Shoulder", "J_Bip_L_Shoulder", "J_Bip_R_Shoulder"),
    SIDED("UpperArm", "J_Bip_L_UpperArm", "J_Bip_R_UpperArm"),
    SIDED("LowerArm", "J_Bip_L_LowerArm", "J_Bip_R_LowerArm"),
    SIDED("Hand", "J_Bip_L_Hand", "J_Bip_R_Hand"),
    SIDED("UpperLeg", "J_Bip_L_UpperLeg", "J_Bip_R_UpperLeg"),
    SIDED("LowerLeg", "J_Bip_L_LowerLeg", "J_Bip_R_LowerLeg"),
    SIDED("Foot", "J_Bip_L_Foot", "J_Bip_R_Foot"),
    SIDED("Toes", "J_Bip_L_ToeBase", "J_Bip_R_ToeBase"),
    {NULL, NULL},
};

static const char *const k_unreal[][2] = {
    {"hips", "pelvis"},
    {"spine", "spine_01"},
    {"chest", "spine_02"},
    {"neck", "neck_01"},
    {"head", "head"},
    SIDED("Shoulder", "clavicle_l", "clavicle_r"),
    SIDED("UpperArm", "upperarm_l", "upperarm_r"),
    SIDED("LowerArm", "lowerarm_l", "lowerarm_r"),
    SIDED("Hand", "hand_l", "hand_r"),
    SIDED("UpperLeg", "thigh_l", "thigh_r"),
    SIDED("LowerLeg", "calf_l", "calf_r"),
    SIDED("Foot", "foot_l", "foot_r"),
    SIDED("Toes", "ball_l", "ball_r"),
    {NULL, NULL},
};

static const char *const k_rigify[][2] = {
    {"hips", "DEF-spine"},
    {"spine", "DEF-spine.001"},
    {"chest", "DEF-spine.002"},
    {"neck", "DEF-spine.004"},
    {"head", "DEF-spine.006"},
    SIDED("Shoulder", "DEF-shoulder.L", "DEF-shoulder.R"),
    SIDED("UpperArm", "DEF-upper_arm.L", "DEF-upper_arm.R"),
    SIDED("LowerArm", "DEF-forearm.L", "DEF-forearm.R"),
    SIDED("Hand", "DEF-hand.L", "DEF-hand.R"),
    SIDED("UpperLeg", "DEF-thigh.L", "DEF-thigh.R"),
    SIDED("LowerLeg", "DEF-shin.L", "DEF-shin.R"),
    SIDED("Foot", "DEF-foot.L", "DEF-foot.R"),
    SIDED("Toes", "DEF-toe.L", "DEF-toe.R"),
    {NULL, NULL},
};

static const char *const k_cc[][2] = {
    {"hips", "CC_Base_Hip"},
    {"spine", "CC_Base_Waist"},
    {"chest", "CC_Base_Spine01"},
    {"neck", "CC_Base_NeckTwist01"},
    {"head", "CC_Base_Head"},
    SIDED("Shoulder", "CC_Base_L_Clavicle", "CC_Base_R_Clavicle"),
    SIDED("UpperArm", "CC_Base_L_Upperarm", "CC_Base_R_Upperarm"),
    SIDED("LowerArm", "CC_Base_L_Forearm", "CC_Base_R_Forearm"),
    SIDED("Hand", "CC_Base_L_Hand", "CC_Base_R_Hand"),
    SIDED("UpperLeg", "CC_Base_L_Thigh", "CC_Base_R_Thigh"),
    SIDED("LowerLeg", "CC_Base_L_Calf", "CC_Base_R_Calf"),
    SIDED("Foot", "CC_Base_L_Foot", "CC_Base_R_Foot"),
    SIDED("Toes", "CC_Base_L_ToeBase", "CC_Base_R_ToeBase"),
    {NULL, NULL},
};

static const char *const k_daz[][2] = {
    {"hips", "hip"},
    {"spine", "abdomenLower"},
    {"chest", "chestLower"},
    {"neck", "neckLower"},
    {"head", "head"},
    SIDED("Shoulder", "lCollar", "rCollar"),
    SIDED("UpperArm", "lShldrBend", "rShldrBend"),
    SIDED("LowerArm", "lForearmBend", "rForearmBend"),
    SIDED("Hand", "lHand", "rHand"),
    SIDED("UpperLeg", "lThighBend", "rThighBend"),
    SIDED("LowerLeg", "lShin", "rShin"),
    SIDED("Foot", "lFoot", "rFoot"),
    SIDED("Toes", "lToe", "rToe"),
    {NULL, NULL},
};

static const char *const k_cats[][2] = {
    {"hips", "Hips"},
    {"spine", "Spine"},
    {"chest", "Chest"},
    {"neck", "Neck"},
    {"head", "Head"},
    SIDED("Shoulder", "Left shoulder", "Right shoulder"),
    SIDED("UpperArm", "Left arm", "Right arm"),
    SIDED("LowerArm", "Left elbow", "Right elbow"),
    SIDED("Hand", "Left wrist", "Right wrist"),
    SIDED("UpperLeg", "Left leg", "Right leg"),
    SIDED("LowerLeg", "Left knee", "Right knee"),
    SIDED("Foot", "Left ankle", "Right ankle"),
    SIDED("Toes", "Left toe", "Right toe"),
    {NULL, NULL},
};

static const char *const k_mmd[][2] = {
    {"hips", "下半身"},
    {"spine", "上半身"},
    {"chest", "上半身2"},
    {"neck", "首"},
    {"head", "頭"},
    SIDED("Shoulder", "左肩", "右肩"),
    SIDED("UpperArm", "左腕", "右腕"),
    SIDED("LowerArm", "左ひじ", "右ひじ"),
    SIDED("Hand", "左手首", "右手首"),
    SIDED("UpperLeg", "左足", "右足"),
    SIDED("LowerLeg", "左ひざ", "右ひざ"),
    SIDED("Foot", "左足首", "右足首"),
    SIDED("Toes", "左つま先", "右つま先"),
    {NULL, NULL},
};

static const char *const k_mixamo[][2] = {
    {"hips", "mixamorig1:Hips"},
    {"spine", "mixamorig1:Spine"},
    {"chest", "mixamorig1:Spine1"},
    {"neck", "mixamorig1:Neck"},
    {"head", "mixamorig1:Head"},
    SIDED("Shoulder", "mixamorig1:LeftShoulder", "mixamorig1:RightShoulder"),
    SIDED("UpperArm", "mixamorig1:LeftArm", "mixamorig1:RightArm"),
    SIDED("LowerArm", "mixamorig1:LeftForeArm", "mixamorig1:RightForeArm"),
    SIDED("Hand", "mixamorig1:LeftHand", "mixamorig1:RightHand"),
    SIDED("UpperLeg", "mixamorig1:LeftUpLeg", "mixamorig1:RightUpLeg"),
    SIDED("LowerLeg", "mixamorig1:LeftLeg", "mixamorig1:RightLeg"),
    SIDED("Foot", "mixamorig1:LeftFoot", "mixamorig1:RightFoot"),
    SIDED("Toes", "mixamorig1:LeftToeBase", "mixamorig1:RightToeBase"),
    {NULL, NULL},
};

/* Blender's own side marks, behind an armature's name. */
static const char *const k_blender[][2] = {
    {"hips", "Armature|Hips"},
    {"spine", "Armature|Spine"},
    {"chest", "Armature|Chest"},
    {"neck", "Armature|Neck"},
    {"head", "Armature|Head"},
    SIDED("Shoulder", "Armature|Shoulder.L", "Armature|Shoulder.R"),
    SIDED("UpperArm", "Armature|UpperArm.L", "Armature|UpperArm.R"),
    SIDED("LowerArm", "Armature|LowerArm.L", "Armature|LowerArm.R"),
    SIDED("Hand", "Armature|Hand.L", "Armature|Hand.R"),
    SIDED("UpperLeg", "Armature|UpperLeg.L", "Armature|UpperLeg.R"),
    SIDED("LowerLeg", "Armature|LowerLeg.L", "Armature|LowerLeg.R"),
    SIDED("Foot", "Armature|Foot.L", "Armature|Foot.R"),
    SIDED("Toes", "Armature|Toes.L", "Armature|Toes.R"),
    {NULL, NULL},
};

struct convention {
    const char *label;
    const char *const (*names)[2];
};

static const struct convention k_conventions[] = {
    {"vroid", k_vroid},   {"unreal", k_unreal}, {"rigify", k_rigify},
    {"cc", k_cc},         {"daz", k_daz},       {"cats", k_cats},
    {"mmd", k_mmd},       {"mixamo", k_mixamo}, {"blender", k_blender},
};

/* ---- Checks ---- */

static void
load_ok(const char *path, const struct av_load_desc *desc, struct av_avatar *av)
{
    struct em_error err = {{0}};
    if (av_avatar_load(path, desc, av, &err) != EM_OK)
        fail_msg("%s", err.message);
}

/* Every bone the body drives (config/humanoid.json's) is in `av`, and each bone of the
 * reference (the VRM) is at the same place within `tol_m`; the bones `names` gives came
 * from the file by the way `how` says. */
static void
expect_same_rig(const char *label, const struct av_avatar *av, const struct av_avatar *ref,
                const char *const (*names)[2], enum sk_rig_found how, float tol_m)
{
    struct sk_skeleton body;
    struct em_error err = {{0}};
    if (sk_skeleton_load_json(EMBODY_SOURCE_DIR "/config/humanoid.json", &body, &err) != EM_OK)
        fail_msg("%s", err.message);
    for (int b = 0; b < SK_BONE_COUNT; ++b)
        if (body.bone_joint[b] >= 0 && av->skeleton.bone_joint[b] < 0)
            fail_msg("%s: no %s, which the body drives", label, sk_bone_name((enum sk_bone)b));
    sk_skeleton_fini(&body);
    for (int b = 0; b < SK_BONE_COUNT; ++b) {
        const int j = av->skeleton.bone_joint[b], k = ref->skeleton.bone_joint[b];
        if (k < 0)
            continue;
        if (j < 0)
            fail_msg("%s: no %s", label, sk_bone_name((enum sk_bone)b));
        const float d =
            m_vec3_distance(av->skeleton.rest_position_m[j], ref->skeleton.rest_position_m[k]);
        if (d > tol_m)
            fail_msg("%s: %s is %.1f mm from the VRM's", label, sk_bone_name((enum sk_bone)b),
                     1000.0 * (double)d);
    }
    for (size_t i = 0; names && names[i][0]; ++i) {
        const enum sk_bone b = sk_bone_from_name(names[i][0]);
        const int j = av->skeleton.bone_joint[b];
        if (!av->from_file[j] || av->rig_found[b] != how)
            fail_msg("%s: %s found %s (node \"%s\"), expected %s", label, names[i][0],
                     sk_rig_found_label(av->rig_found[b]), av->rig.node[b],
                     sk_rig_found_label(how));
        if (how != SK_RIG_BY_SHAPE && strcmp(av->rig.node[b], names[i][1]) != 0)
            fail_msg("%s: %s is node \"%s\", expected \"%s\"", label, names[i][0],
                     av->rig.node[b], names[i][1]);
    }
}

static void
every_conventions_glb_loads_as_the_vrm_does(void **state)
{
    (void)state;
    struct av_avatar ref;
    load_ok(DEFAULT_AVATAR, NULL, &ref);
    for (size_t c = 0; c < sizeof k_conventions / sizeof k_conventions[0]; ++c) {
        char path[512];
        snprintf(path, sizeof path, OUT "rig-%s.glb", k_conventions[c].label);
        make_plain_rig(k_conventions[c].label, k_conventions[c].names, path);
        struct av_avatar av;
        load_ok(path, NULL, &av);
        assert_int_equal(av.format, AV_FORMAT_GLTF);
        assert_false(av.rig_sides_swapped);
        expect_same_rig(k_conventions[c].label, &av, &ref, k_conventions[c].names,
                        SK_RIG_BY_NAME, 1e-4f);
        expect_same_fingers(k_conventions[c].label, &av, &ref, 1e-4f);
        av_avatar_fini(&av);
    }
    av_avatar_fini(&ref);
}

/* assimp's FBX exporter writes glTF's metres but declares FBX's default unit, the
 * centimetre (UnitScaleFactor 1): the unit is declared as metres here, as an exporter
 * that converts would write it. */
static void
declare_metres(const char *fbx)
{
    FILE *f = fopen(fbx, "rb");
    assert_non_null(f);
    static char text[4 << 20];
    const size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    const char *key = "\"UnitScaleFactor\", \"double\", \"Number\", \"\", 1\n";
    char *at = strstr(text, key);
    assert_non_null(at);
    f = fopen(fbx, "wb");
    assert_non_null(f);
    fwrite(text, 1, (size_t)(at - text), f);
    fputs("\"UnitScaleFactor\", \"double\", \"Number\", \"\", 100\n", f);
    fputs(at + strlen(key), f);
    fclose(f);
}

/* The same rigs through assimp's ASCII FBX exporter (as `assimp export a.glb a.fbx -ffbxa`):
 * the FBX reader finds the same bones. */
static void
every_conventions_fbx_loads_as_the_vrm_does(void **state)
{
    (void)state;
    struct av_avatar ref;
    load_ok(DEFAULT_AVATAR, NULL, &ref);
    for (size_t c = 0; c < sizeof k_conventions / sizeof k_conventions[0]; ++c) {
        char glb[512], fbx[512];
        snprintf(glb, sizeof glb, OUT "rig-%s.glb", k_conventions[c].label);
        snprintf(fbx, sizeof fbx, OUT "rig-%s.fbx", k_conventions[c].label);
        make_plain_rig(k_conventions[c].label, k_conventions[c].names, glb);
        const struct aiScene *scene = aiImportFile(glb, 0);
        assert_non_null(scene);
        if (aiExportScene(scene, "fbxa", fbx, 0) != aiReturn_SUCCESS)
            fail_msg("%s: assimp's FBX exporter: %s", glb, aiGetErrorString());
        aiReleaseImport(scene);
        declare_metres(fbx);
        struct av_avatar av;
        load_ok(fbx, NULL, &av);
        assert_int_equal(av.format, AV_FORMAT_FBX);
        expect_same_rig(fbx, &av, &ref, NULL, SK_RIG_BY_NAME, 2e-3f);
        expect_same_fingers(k_conventions[c].label, &av, &ref, 2e-3f);
        for (size_t i = 0; k_conventions[c].names[i][0]; ++i) {
            const enum sk_bone b = sk_bone_from_name(k_conventions[c].names[i][0]);
            assert_int_equal(av.rig_found[b], SK_RIG_BY_NAME);
        }
        av_avatar_fini(&av);
    }
    av_avatar_fini(&ref);
}

/* An exporter that mirrored the names: "Left" bones on the figure's right (the toes say
 * which way it faces). The bones are swapped back, and the figure is not turned. */
static void
rigs_named_with_sides_swapped_are_read_by_their_rest_pose(void **state)
{
    (void)state;
    const char *swapped[sizeof k_mixamo / sizeof k_mixamo[0]][2];
    for (size_t i = 0; i < sizeof k_mixamo / sizeof k_mixamo[0]; ++i) {
        swapped[i][0] = k_mixamo[i][0];
        swapped[i][1] = k_mixamo[i][1];
        const enum sk_bone b = k_mixamo[i][0] ? sk_bone_from_name(k_mixamo[i][0]) : SK_HIPS;
        if (sk_bone_mirror(b) != b) /* the other side's name: the next entry, or the last */
            swapped[i][1] = k_mixamo[b < sk_bone_mirror(b) ? i + 1 : i - 1][1];
    }
    make_plain_rig("none", (const char *const(*)[2])swapped, OUT "rig-swapped.glb");
    struct av_avatar ref, av;
    load_ok(DEFAULT_AVATAR, NULL, &ref);
    load_ok(OUT "rig-swapped.glb", NULL, &av);
    assert_true(av.rig_sides_swapped);
    expect_same_rig("swapped", &av, &ref, NULL, SK_RIG_BY_NAME, 1e-4f);
    assert_string_equal(av.rig.node[SK_LEFT_UPPER_ARM], "mixamorig1:RightArm");
    assert_string_equal(av.rig.node[SK_RIGHT_FOOT], "mixamorig1:LeftFoot");
    /* Facing +Z with its left at +X, toes in front. */
    const int lh = av.skeleton.bone_joint[SK_LEFT_HAND], lf = av.skeleton.bone_joint[SK_LEFT_FOOT];
    const int lt = av.skeleton.bone_joint[SK_LEFT_TOES];
    assert_true(av.skeleton.rest_position_m[lh][0] > 0.3f);
    assert_true(av.skeleton.rest_position_m[lt][2] > av.skeleton.rest_position_m[lf][2]);
    av_avatar_fini(&av);
    av_avatar_fini(&ref);
}

static void
daz_twists(struct glb *g)
{
    insert_twist(g, "leftUpperArm", "leftLowerArm", "lShldrTwist");
    insert_twist(g, "rightUpperArm", "rightLowerArm", "rShldrTwist");
    insert_twist(g, "leftLowerArm", "leftHand", "lForearmTwist");
    insert_twist(g, "rightLowerArm", "rightHand", "rForearmTwist");
    insert_twist(g, "leftUpperLeg", "leftLowerLeg", "lThighTwist");
    insert_twist(g, "rightUpperLeg", "rightLowerLeg", "rThighTwist");
}

static void
rigify_twists(struct glb *g)
{
    insert_twist(g, "leftUpperArm", "leftLowerArm", "DEF-upper_arm.L.001");
    insert_twist(g, "rightUpperArm", "rightLowerArm", "DEF-upper_arm.R.001");
    insert_twist(g, "leftLowerArm", "leftHand", "DEF-forearm.L.001");
    insert_twist(g, "rightUpperLeg", "rightLowerLeg", "DEF-thigh.R.001");
}

static void
unreal_twists(struct glb *g)
{
    add_side_twist(g, "leftUpperArm", "leftLowerArm", "upperarm_twist_01_l");
    add_side_twist(g, "rightUpperArm", "rightLowerArm", "upperarm_twist_01_r");
    add_side_twist(g, "leftLowerArm", "leftHand", "lowerarm_twist_01_l");
    add_side_twist(g, "leftUpperLeg", "leftLowerLeg", "thigh_twist_01_l");
}

/* Twist bones inside the limb (Daz, Rigify) and beside it (Unreal) stay part of their
 * limb: the elbow is the forearm bone, not the twist bone halfway up the upper arm. */
static void
twist_bones_stay_part_of_their_limb(void **state)
{
    (void)state;
    const struct {
        const char *label;
        const char *const (*names)[2];
        void (*edit)(struct glb *);
    } cases[] = {
        {"daz-twist", k_daz, daz_twists},
        {"rigify-twist", k_rigify, rigify_twists},
        {"unreal-twist", k_unreal, unreal_twists},
    };
    struct av_avatar ref;
    load_ok(DEFAULT_AVATAR, NULL, &ref);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        char path[512];
        snprintf(path, sizeof path, OUT "rig-%s.glb", cases[c].label);
        make_edited_rig(cases[c].names, cases[c].edit, path);
        struct av_avatar av;
        load_ok(path, NULL, &av);
        expect_same_rig(cases[c].label, &av, &ref, cases[c].names, SK_RIG_BY_NAME, 1e-4f);
        av_avatar_fini(&av);
    }
    av_avatar_fini(&ref);
}

/* MMD: 下半身 (lower body, the legs' parent) and 上半身 (upper body) side by side under a
 * centre bone, which is then the hips. */
static void
mmd_layout(struct glb *g)
{
    const int hips = bone_node(g, "hips");
    set_name(cJSON_GetArrayItem(nodes_of(g), hips), "センター");
    const float down[3] = {0.0f, -0.05f, 0.0f};
    const int lower = add_node(g, hips, "下半身", down);
    reparent(g, hips, bone_node(g, "leftUpperLeg"), lower, down);
    reparent(g, hips, bone_node(g, "rightUpperLeg"), lower, down);
}

static void
mmd_rigs_with_lower_and_upper_body_side_by_side_load(void **state)
{
    (void)state;
    make_edited_rig(k_mmd + 1, mmd_layout, OUT "rig-mmd-centre.glb");
    struct av_avatar ref, av;
    load_ok(DEFAULT_AVATAR, NULL, &ref);
    load_ok(OUT "rig-mmd-centre.glb", NULL, &av);
    expect_same_rig("mmd-centre", &av, &ref, k_mmd + 1, SK_RIG_BY_NAME, 1e-4f);
    assert_string_equal(av.rig.node[SK_HIPS], "センター");
    av_avatar_fini(&av);
    av_avatar_fini(&ref);
}

/* No name a convention knows: the bones come from the skeleton's shape, and say so. */
static void
rigs_without_known_names_are_read_from_their_shape(void **state)
{
    (void)state;
    static const char *const none[][2] = {{NULL, NULL}};
    make_plain_rig("none", none, OUT "rig-anonymous.glb");
    struct av_avatar ref, av;
    load_ok(DEFAULT_AVATAR, NULL, &ref);
    load_ok(OUT "rig-anonymous.glb", NULL, &av);
    expect_same_rig("anonymous", &av, &ref, k_vroid, SK_RIG_BY_SHAPE, 1e-4f);
    av_avatar_fini(&av);
    av_avatar_fini(&ref);
}

/* 3ds Max Biped names, which no table has: a bone map file names every bone. */
static const char *const k_biped[][2] = {
    {"hips", "Bip01 Pelvis"},
    {"spine", "Bip01 Spine"},
    {"chest", "Bip01 Spine1"},
    {"neck", "Bip01 Neck"},
    {"head", "Bip01 Head"},
    SIDED("Shoulder", "Bip01 L Clavicle", "Bip01 R Clavicle"),
    SIDED("UpperArm", "Bip01 L UpperArm", "Bip01 R UpperArm"),
    SIDED("LowerArm", "Bip01 L Forearm", "Bip01 R Forearm"),
    SIDED("Hand", "Bip01 L Hand", "Bip01 R Hand"),
    SIDED("UpperLeg", "Bip01 L Thigh", "Bip01 R Thigh"),
    SIDED("LowerLeg", "Bip01 L Calf", "Bip01 R Calf"),
    SIDED("Foot", "Bip01 L Foot", "Bip01 R Foot"),
    SIDED("Toes", "Bip01 L Toe0", "Bip01 R Toe0"),
    {NULL, NULL},
};

static void
write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void
bone_map_files_name_the_nodes_of_any_rig(void **state)
{
    (void)state;
    make_plain_rig("none", k_biped, OUT "rig-biped.glb");
    /* The map as JSON, bone -> node. */
    cJSON *json = cJSON_CreateObject();
    for (size_t i = 0; k_biped[i][0]; ++i)
        cJSON_AddStringToObject(json, k_biped[i][0], k_biped[i][1]);
    char *text = cJSON_Print(json);
    write_text(OUT "biped-map.json", text);
    free(text);
    cJSON_Delete(json);

    struct sk_bone_map map;
    struct em_error err = {{0}};
    if (sk_bone_map_load(OUT "biped-map.json", &map, &err) != EM_OK)
        fail_msg("%s", err.message);
    struct av_avatar ref, av;
    load_ok(DEFAULT_AVATAR, NULL, &ref);
    load_ok(OUT "rig-biped.glb", &(struct av_load_desc){.bone_map = &map}, &av);
    expect_same_rig("biped", &av, &ref, k_biped, SK_RIG_BY_BONE_MAP, 1e-4f);

    /* --print-rig's text reads back as the same map. */
    char printed[4096];
    const int n = sk_bone_map_format(&av.rig, printed, sizeof printed);
    assert_true(n > 0 && (size_t)n < sizeof printed);
    struct sk_bone_map back;
    if (sk_bone_map_parse(printed, (size_t)n, "printed", &back, &err) != EM_OK)
        fail_msg("%s\n%s", err.message, printed);
    for (int b = 0; b < SK_HEAD_TOP; ++b)
        assert_string_equal(back.node[b], map.node[b]);
    av_avatar_fini(&av);

    /* A bone embody does not know, and a node the rig lacks: refused, naming both. */
    write_text(OUT "bad-bone-map.json", "{\"hips\": \"Bip01 Pelvis\", \"leftElbow\": \"x\"}");
    assert_int_equal(sk_bone_map_load(OUT "bad-bone-map.json", &map, &err), EM_ERROR_PARSE);
    assert_non_null(strstr(err.message, OUT "bad-bone-map.json"));
    assert_non_null(strstr(err.message, "\"leftElbow\": not a humanoid bone"));
    write_text(OUT "bad-node-map.json",
               "{\"hips\": \"Bip01 Pelvis\", \"leftHand\": \"Bip01 L Palm\"}");
    if (sk_bone_map_load(OUT "bad-node-map.json", &map, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_not_equal(
        av_avatar_load(OUT "rig-biped.glb", &(struct av_load_desc){.bone_map = &map}, &av, &err),
        EM_OK);
    assert_non_null(strstr(err.message, OUT "bad-node-map.json"));
    assert_non_null(strstr(err.message, "\"leftHand\": no node called \"Bip01 L Palm\""));
    av_avatar_fini(&ref);
}

/* Broken finger bones in a VRM's humanBones (a node index out of range, a finger bone
 * that is not below the one before it) leave that finger out, with a warning naming it;
 * the avatar loads and keeps its other fingers. */
static void
broken_finger_bones_leave_their_finger_out(void **state)
{
    (void)state;
    struct glb g;
    glb_read(DEFAULT_AVATAR, &g);
    cJSON *hb = cJSON_GetObjectItem(
        cJSON_GetObjectItem(
            cJSON_GetObjectItem(cJSON_GetObjectItem(g.json, "extensions"), "VRMC_vrm"),
            "humanoid"),
        "humanBones");
    assert_non_null(hb);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(hb, "leftIndexDistal"), "node",
                              cJSON_CreateNumber(1e9));
    /* The right middle finger's second bone on the left hand's little finger. */
    const int elsewhere = bone_node(&g, "leftLittleIntermediate");
    assert_true(elsewhere >= 0);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(hb, "rightMiddleIntermediate"), "node",
                              cJSON_CreateNumber(elsewhere));
    char path[1024];
    snprintf(path, sizeof path, "%s", EMBODY_BINARY_DIR "/tests/avatar/broken_fingers.vrm");
    glb_write(&g, path);
    glb_fini(&g);
    struct av_avatar av;
    load_ok(path, NULL, &av);
    assert_false(av.hands[HD_LEFT].has_finger[HD_INDEX]);
    assert_false(av.hands[HD_RIGHT].has_finger[HD_MIDDLE]);
    assert_int_equal(av.hands[HD_LEFT].finger_count, HD_FINGER_COUNT - 1);
    assert_int_equal(av.hands[HD_RIGHT].finger_count, HD_FINGER_COUNT - 1);
    assert_true(av.hands[HD_LEFT].has_finger[HD_LITTLE]);
    av_set_hand_pose(&av, HD_RIGHT, NULL);
    av_avatar_fini(&av);
    remove(path);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_conventions_glb_loads_as_the_vrm_does),
        cmocka_unit_test(every_conventions_fbx_loads_as_the_vrm_does),
        cmocka_unit_test(rigs_named_with_sides_swapped_are_read_by_their_rest_pose),
        cmocka_unit_test(twist_bones_stay_part_of_their_limb),
        cmocka_unit_test(mmd_rigs_with_lower_and_upper_body_side_by_side_load),
        cmocka_unit_test(rigs_without_known_names_are_read_from_their_shape),
        cmocka_unit_test(bone_map_files_name_the_nodes_of_any_rig),
        cmocka_unit_test(broken_finger_bones_leave_their_finger_out),
    };
    return cmocka_run_group_tests(tests, make_base_avatar, NULL);
}
