/*
 * Avatar tests: files the tests make themselves (av_make_glb from config/humanoid.json)
 * read back as VRM 1.0, VRM 0.x and plain glTF rigs with the same bones, skinning that
 * follows the pose, the shipped default avatar read through the same path, and every kind
 * of bad file refused with a reason that names the file.
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

#include <cjson/cJSON.h>

#include "avatar/avatar.h"
#include "embody/m_math.h"
#include "osc/osc.h"

#define OUT EMBODY_BINARY_DIR "/tests/avatar/"

static void
load_humanoid(struct sk_skeleton *sk)
{
    struct em_error err = {{0}};
    if (sk_skeleton_load_json(EMBODY_SOURCE_DIR "/config/humanoid.json", sk, &err) != EM_OK)
        fail_msg("%s", err.message);
}

/* Writes the humanoid as `desc` says (its skeleton filled in) to OUT/name. */
static void
make(struct av_make_desc desc, const char *name, char *out_path, size_t size)
{
    struct sk_skeleton sk;
    load_humanoid(&sk);
    desc.skeleton = &sk;
    snprintf(out_path, size, OUT "%s", name);
    struct em_error err = {{0}};
    if (av_make_file(&desc, out_path, &err) != EM_OK)
        fail_msg("%s", err.message);
    sk_skeleton_fini(&sk);
}

static uint8_t *made_bytes(enum av_make_rig rig, size_t *out_size);
static void write_bytes(const char *path, const uint8_t *bytes, size_t size);
static void write_bytes(const char *path, const uint8_t *bytes, size_t size);

static void
load_ok(const char *path, struct av_avatar *av)
{
    struct em_error err = {{0}};
    if (av_avatar_load(path, NULL, av, &err) != EM_OK)
        fail_msg("%s", err.message);
}

/* Loads a file that must be refused; returns the reason. */
static enum em_result
load_bad(const char *path, const struct av_load_desc *desc, char *out_message, size_t size)
{
    struct av_avatar av;
    struct em_error err = {{0}};
    const enum em_result r = av_avatar_load(path, desc, &av, &err);
    snprintf(out_message, size, "%s", err.message);
    assert_true(r < 0);
    assert_null(av.vertices);
    assert_int_equal(av.skeleton.joint_count, 0);
    assert_non_null(strstr(err.message, path));
    return r;
}

static void
node_names_of_common_rigs_map_to_humanoid_bones(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        enum sk_bone bone;
    } cases[] = {
        {"hips", SK_HIPS},
        {"leftUpperArm", SK_LEFT_UPPER_ARM},
        {"mixamorig:Hips", SK_HIPS},
        {"mixamorig:Spine1", SK_CHEST},
        {"mixamorig:LeftArm", SK_LEFT_UPPER_ARM},
        {"mixamorig:RightForeArm", SK_RIGHT_LOWER_ARM},
        {"mixamorig:LeftUpLeg", SK_LEFT_UPPER_LEG},
        {"mixamorig:RightLeg", SK_RIGHT_LOWER_LEG},
        {"mixamorig:LeftToeBase", SK_LEFT_TOES},
        {"UpperArm.L", SK_LEFT_UPPER_ARM},
        {"upper_arm.R", SK_RIGHT_UPPER_ARM},
        {"thigh_l", SK_LEFT_UPPER_LEG},
        {"Shin.R", SK_RIGHT_LOWER_LEG},
        {"LeftHand", SK_LEFT_HAND},
        {"L_Foot", SK_LEFT_FOOT},
        {"Neck", SK_NECK},
        {"Chest", SK_CHEST},
        {"UpperChest", SK_UPPER_CHEST},
        /* The issue 27 conventions, their prefixes and spellings. */
        {"J_Bip_L_UpperArm", SK_LEFT_UPPER_ARM},
        {"Armature|J_Bip_R_Foot", SK_RIGHT_FOOT},
        {"mixamorig1:LeftForeArm", SK_LEFT_LOWER_ARM},
        {"upperarm_r", SK_RIGHT_UPPER_ARM},
        {"DEF-forearm.L", SK_LEFT_LOWER_ARM},
        {"DEF-upper_arm_R", SK_RIGHT_UPPER_ARM},
        {"CC_Base_L_Upperarm", SK_LEFT_UPPER_ARM},
        {"lShldrBend", SK_LEFT_UPPER_ARM},
        {"rForearmBend", SK_RIGHT_LOWER_ARM},
        {"Left elbow", SK_LEFT_LOWER_ARM},
        {"Right wrist", SK_RIGHT_HAND},
        {"左ひじ", SK_LEFT_LOWER_ARM},
        {"右足首", SK_RIGHT_FOOT},
        /* Not humanoid bones: fingers, ends, sides missing, other things. */
        {"mixamorig:LeftHandIndex1", SK_BONE_NONE},
        {"Head_end", SK_BONE_NONE},
        {"UpperArm", SK_BONE_NONE},
        {"Armature", SK_BONE_NONE},
        {"lShldrTwist", SK_BONE_NONE},
        {"upperarm_twist_01_l", SK_BONE_NONE},
        {"DEF-upper_arm.L.001", SK_BONE_NONE},
        {"", SK_BONE_NONE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        if (sk_bone_from_node_name(cases[i].name) != cases[i].bone)
            fail_msg("\"%s\" maps to %d, expected %d", cases[i].name,
                     sk_bone_from_node_name(cases[i].name), cases[i].bone);
}

static void
generated_vrm1_has_the_humanoids_bones_at_their_places(void **state)
{
    (void)state;
    char path[512];
    make((struct av_make_desc){.rig = AV_MAKE_VRM1}, "vrm1.vrm", path, sizeof path);
    struct av_avatar av;
    load_ok(path, &av);
    struct sk_skeleton ref;
    load_humanoid(&ref);
    assert_int_equal(av.format, AV_FORMAT_VRM1);
    for (int b = 0; b < SK_HEAD_TOP; ++b) {
        const int j = av.skeleton.bone_joint[b], k = ref.bone_joint[b];
        assert_int_equal(j >= 0, k >= 0);
        if (j < 0)
            continue;
        assert_true(av.from_file[j]);
        if (m_vec3_distance(av.skeleton.rest_position_m[j], ref.rest_position_m[k]) > 1e-3f)
            fail_msg(
                "%s is %.4f m from the humanoid's", sk_bone_name((enum sk_bone)b),
                (double)m_vec3_distance(av.skeleton.rest_position_m[j], ref.rest_position_m[k]));
    }
    /* The crown from the mesh's top: within 2 cm of the humanoid's. */
    assert_float_equal(av.height_m, sk_humanoid_height(&ref), 0.02);
    assert_int_equal(sk_humanoid_validate(&av.skeleton, path, NULL), EM_OK);
    assert_true(av.vertex_count > 1000);
    assert_true(av.index_count % 3 == 0 && av.index_count > 0);
    for (uint32_t i = 0; i < av.index_count; ++i)
        assert_true(av.indices[i] < (uint32_t)av.vertex_count);
    for (int i = 0; i < av.vertex_count; ++i) {
        float sum = 0.0f;
        for (int k = 0; k < AV_MAX_WEIGHTS; ++k) {
            assert_true(av.vertices[i].joint[k] < av.skin_joint_count); /* fingers last */
            sum += av.vertices[i].weight[k];
        }
        assert_float_equal(sum, 1.0, 1e-4);
        assert_true(av.vertices[i].position_m[1] >= -1e-4f);
    }
    sk_skeleton_fini(&ref);
    av_avatar_fini(&av);
}

/* The same mesh with each extension's JSON (and the VRM 0.x model facing -Z, as those
 * are): the same bones, at the same places, after the turn to face +Z. */
static void
vrm0_and_vrm1_files_load_with_the_same_bone_map(void **state)
{
    (void)state;
    char p0[512], p1[512];
    make((struct av_make_desc){.rig = AV_MAKE_VRM0}, "vrm0.vrm", p0, sizeof p0);
    make((struct av_make_desc){.rig = AV_MAKE_VRM1}, "vrm1.vrm", p1, sizeof p1);
    struct av_avatar a0, a1;
    load_ok(p0, &a0);
    load_ok(p1, &a1);
    assert_int_equal(a0.format, AV_FORMAT_VRM0);
    assert_int_equal(a1.format, AV_FORMAT_VRM1);
    assert_int_equal(a0.skeleton.joint_count, a1.skeleton.joint_count);
    for (int b = 0; b < SK_BONE_COUNT; ++b) {
        const int j0 = a0.skeleton.bone_joint[b], j1 = a1.skeleton.bone_joint[b];
        assert_int_equal(j0, j1);
        if (j0 >= 0)
            assert_true(m_vec3_distance(a0.skeleton.rest_position_m[j0],
                                        a1.skeleton.rest_position_m[j1]) < 1e-4f);
    }
    /* The left hand is on the left (+X) in both. */
    assert_true(a0.skeleton.rest_position_m[a0.skeleton.bone_joint[SK_LEFT_HAND]][0] > 0.5f);
    assert_int_equal(a0.vertex_count, a1.vertex_count);
    for (int i = 0; i < a0.vertex_count; i += 97)
        assert_true(m_vec3_distance(a0.vertices[i].position_m, a1.vertices[i].position_m) < 1e-4f);
    av_avatar_fini(&a0);
    av_avatar_fini(&a1);
}

/* The same avatar with every bone node's +Y along its bone (as Blender exports rigs), as
 * VRM 1.0 and as VRM 0.x (turned): the same skeleton and the same mesh at rest, and each
 * joint's retargeting rotation is its node's frame (the forearm's +Y along the arm). */
static void
rigs_with_other_bone_frames_give_the_same_avatar(void **state)
{
    (void)state;
    char path[512];
    struct av_avatar ref;
    make((struct av_make_desc){.rig = AV_MAKE_VRM1}, "vrm1.vrm", path, sizeof path);
    load_ok(path, &ref);
    static const enum av_make_rig rigs[] = {AV_MAKE_VRM1, AV_MAKE_VRM0};
    for (size_t i = 0; i < 2; ++i) {
        make((struct av_make_desc){.rig = rigs[i], .bone_axes = true}, "axes.vrm", path,
             sizeof path);
        struct av_avatar av;
        load_ok(path, &av);
        assert_int_equal(av.skeleton.joint_count, ref.skeleton.joint_count);
        for (int j = 0; j < av.skeleton.joint_count; ++j)
            if (m_vec3_distance(av.skeleton.rest_position_m[j], ref.skeleton.rest_position_m[j]) >
                1e-4f)
                fail_msg("rig %zu: joint %s moved", i, av.skeleton.name[j]);
        assert_int_equal(av.vertex_count, ref.vertex_count);
        for (int v = 0; v < av.vertex_count; ++v)
            if (m_vec3_distance(av.vertices[v].position_m, ref.vertices[v].position_m) > 1e-4f)
                fail_msg("rig %zu: vertex %d moved", i, v);
        const int la = av.skeleton.bone_joint[SK_LEFT_LOWER_ARM];
        const int rl = av.skeleton.bone_joint[SK_RIGHT_UPPER_LEG];
        const float y[3] = {0.0f, 1.0f, 0.0f};
        vec3 axis;
        m_quat_rotate(av.rest_rotation[la], y, axis); /* along the forearm: +X */
        assert_true(axis[0] > 0.999f);
        m_quat_rotate(av.rest_rotation[rl], y, axis); /* along the thigh: down */
        assert_true(axis[1] < -0.99f);
        /* The reference rig's frames are the world's. */
        assert_true(fabsf(ref.rest_rotation[la][3]) > 0.9999f);
        av_avatar_fini(&av);
    }
    av_avatar_fini(&ref);
}

static void
plain_gltf_rigs_are_recognised_by_their_bone_names(void **state)
{
    (void)state;
    static const enum av_make_rig rigs[] = {AV_MAKE_MIXAMO, AV_MAKE_PLAIN};
    struct av_avatar ref;
    char path[512];
    make((struct av_make_desc){.rig = AV_MAKE_VRM1}, "vrm1.vrm", path, sizeof path);
    load_ok(path, &ref);
    for (size_t i = 0; i < 2; ++i) {
        make((struct av_make_desc){.rig = rigs[i]}, i ? "plain.glb" : "mixamo.glb", path,
             sizeof path);
        struct av_avatar av;
        load_ok(path, &av);
        assert_int_equal(av.format, AV_FORMAT_GLTF);
        for (int b = 0; b < SK_BONE_COUNT; ++b)
            assert_int_equal(av.skeleton.bone_joint[b], ref.skeleton.bone_joint[b]);
        av_avatar_fini(&av);
    }
    av_avatar_fini(&ref);
}

/* VRM marks chest, neck and shoulders optional; embody places them between their
 * neighbours. */
static void
optional_vrm_bones_that_are_absent_are_placed(void **state)
{
    (void)state;
    char path[512];
    make((struct av_make_desc){.rig = AV_MAKE_VRM1,
                               .omit_bones = "chest,neck,leftShoulder,rightShoulder,leftToes"},
         "optional.vrm", path, sizeof path);
    struct av_avatar av;
    load_ok(path, &av);
    const struct sk_skeleton *sk = &av.skeleton;
    assert_int_equal(sk_humanoid_validate(sk, path, NULL), EM_OK);
    static const enum sk_bone placed[] = {SK_CHEST, SK_NECK, SK_LEFT_SHOULDER, SK_RIGHT_SHOULDER};
    for (size_t i = 0; i < sizeof placed / sizeof placed[0]; ++i) {
        const int j = sk->bone_joint[placed[i]];
        assert_true(j >= 0);
        assert_false(av.from_file[j]);
        assert_true(sk->length_m[j] > 0.01f);
    }
    assert_int_equal(sk->bone_joint[SK_LEFT_TOES], -1);
    assert_true(sk->bone_joint[SK_LEFT_TOES_END] >= 0);
    /* Nothing is weighted to a placed joint (the finger joints, after the skeleton's, are
     * the file's bones). */
    for (int i = 0; i < av.vertex_count; ++i)
        for (int k = 0; k < AV_MAX_WEIGHTS; ++k)
            if (av.vertices[i].weight[k] > 0.0f && av.vertices[i].joint[k] < sk->joint_count)
                assert_true(av.from_file[av.vertices[i].joint[k]]);
    av_avatar_fini(&av);
}

static int
material_named(const struct av_avatar *av, const char *name)
{
    for (int i = 0; i < av->material_count; ++i)
        if (strcmp(av->materials[i].name, name) == 0)
            return i;
    fail_msg("no material \"%s\"", name);
    return -1;
}

static void
materials_textures_and_rigid_meshes_are_read(void **state)
{
    (void)state;
    char path[512];
    make((struct av_make_desc){.rig = AV_MAKE_VRM0}, "vrm0.vrm", path, sizeof path);
    for (int pass = 0; pass < 2; ++pass) {
        struct av_avatar av;
        load_ok(path, &av);
        const int body = material_named(&av, "Body"), eyes_mat = material_named(&av, "Eyes");
        assert_int_equal(av.texture_count, 1);
        assert_int_equal(av.textures[0].width, 16);
        assert_int_equal(av.materials[body].texture, 0);
        assert_int_equal(av.materials[body].shading, AV_SHADING_LIT);
        assert_int_equal(av.materials[eyes_mat].shading, AV_SHADING_TOON);
        assert_int_equal(av.materials[eyes_mat].alpha_mode, AV_ALPHA_MASK);
        assert_float_equal(av.materials[eyes_mat].alpha_cutoff, 0.25, 1e-6);
        assert_int_equal(av.materials[body].alpha_mode, AV_ALPHA_OPAQUE);
        assert_int_equal(av.materials[material_named(&av, "Left")].texture, -1);
        /* The texture's top rows are the darker stripe: row 0 of the image is v = 0. */
        assert_int_equal(av.textures[0].rgba[0], 246);
        /* The eyes hang under the head node without a skin: weighted 1 to the head. */
        const int head = av.skeleton.bone_joint[SK_HEAD];
        int eyes = 0;
        for (int p = 0; p < av.primitive_count; ++p) {
            if (av.primitives[p].material != eyes_mat)
                continue;
            for (uint32_t i = 0; i < av.primitives[p].index_count; ++i) {
                const struct av_vertex *v =
                    &av.vertices[av.indices[av.primitives[p].first_index + i]];
                assert_int_equal(v->joint[0], head);
                assert_float_equal(v->weight[0], 1.0, 1e-6);
                /* In front of the face (+Z) after the turn. */
                assert_true(v->position_m[2] > av.skeleton.rest_position_m[head][2] + 0.05f);
                ++eyes;
            }
        }
        assert_true(eyes > 0);
        av_avatar_fini(&av);
        make((struct av_make_desc){.rig = AV_MAKE_VRM1}, "vrm1.vrm", path, sizeof path);
    }
}

/* A .gltf beside its .bin and its PNG (split from a GLB the test makes): the same avatar,
 * the texture read from its file. */
static void
gltf_with_external_buffer_and_image_files_loads(void **state)
{
    (void)state;
    size_t size = 0;
    uint8_t *glb = made_bytes(AV_MAKE_VRM1, &size);
    const uint32_t json_len = (uint32_t)glb[12] | (uint32_t)glb[13] << 8 | (uint32_t)glb[14] << 16 |
                              (uint32_t)glb[15] << 24;
    const uint8_t *bin = glb + 20 + json_len + 8;
    const size_t bin_len = size - 20 - json_len - 8;
    cJSON *json = cJSON_ParseWithLength((const char *)glb + 20, json_len);
    assert_non_null(json);
    cJSON *buffer = cJSON_GetArrayItem(cJSON_GetObjectItem(json, "buffers"), 0);
    cJSON_AddStringToObject(buffer, "uri", "split.bin");
    cJSON *image = cJSON_GetArrayItem(cJSON_GetObjectItem(json, "images"), 0);
    const int view = cJSON_GetObjectItem(image, "bufferView")->valueint;
    cJSON *bv = cJSON_GetArrayItem(cJSON_GetObjectItem(json, "bufferViews"), view);
    const size_t png_at = (size_t)cJSON_GetObjectItem(bv, "byteOffset")->valuedouble;
    const size_t png_len = (size_t)cJSON_GetObjectItem(bv, "byteLength")->valuedouble;
    cJSON_DeleteItemFromObject(image, "bufferView");
    cJSON_AddStringToObject(image, "uri", "split-stripes.png");
    char *text = cJSON_Print(json);
    assert_non_null(text);
    write_bytes(OUT "split.gltf", (const uint8_t *)text, strlen(text));
    write_bytes(OUT "split.bin", bin, bin_len);
    write_bytes(OUT "split-stripes.png", bin + png_at, png_len);
    free(text);
    cJSON_Delete(json);
    free(glb);
    struct av_avatar av, ref;
    load_ok(OUT "split.gltf", &av);
    char path[512];
    make((struct av_make_desc){.rig = AV_MAKE_VRM1}, "vrm1.vrm", path, sizeof path);
    load_ok(path, &ref);
    assert_int_equal(av.format, AV_FORMAT_VRM1);
    assert_int_equal(av.vertex_count, ref.vertex_count);
    assert_int_equal(av.texture_count, 1);
    assert_int_equal(av.textures[0].width, 16);
    assert_memory_equal(av.textures[0].rgba, ref.textures[0].rgba, 16 * 16 * 4);
    av_avatar_fini(&av);
    av_avatar_fini(&ref);
}

static void
skinned_vertices_follow_their_joints(void **state)
{
    (void)state;
    char path[512];
    make((struct av_make_desc){.rig = AV_MAKE_VRM1}, "vrm1.vrm", path, sizeof path);
    struct av_avatar av;
    load_ok(path, &av);
    struct sk_skeleton body;
    load_humanoid(&body);
    struct em_error err = {{0}};
    assert_int_equal(sk_humanoid_fit(&body, 1.60f, 0.0f, &err), EM_OK);
    struct av_skin_binding bind;
    assert_int_equal(av_skin_bind(&av, &body, &bind, &err), EM_OK);
    assert_float_equal(bind.scale, 1.60 / av.height_m, 1e-5);
    struct sk_pose pose;
    assert_int_equal(sk_pose_init(&pose, &body), EM_OK);
    sk_pose_set_rest(&pose, &body);
    /* Bend the left elbow 90 degrees and turn the whole body. */
    const float up[3] = {0, 1, 0}, down[3] = {0, -1, 0};
    m_quat_from_axis_angle(up, 0.7f, pose.local_rotation[0]);
    m_quat_from_axis_angle(down, 1.5708f, pose.local_rotation[body.bone_joint[SK_LEFT_LOWER_ARM]]);
    sk_pose_forward_kinematics(&pose, &body);
    mat4 *m = calloc((size_t)bind.joint_count, sizeof *m);
    assert_non_null(m);
    av_skin_matrices(&bind, &pose, m);
    /* Every vertex wholly on the left hand keeps its (scaled) place relative to it. */
    const int ha = av.skeleton.bone_joint[SK_LEFT_HAND], hb = body.bone_joint[SK_LEFT_HAND];
    int checked = 0;
    for (int i = 0; i < av.vertex_count; ++i) {
        const struct av_vertex *v = &av.vertices[i];
        if (v->joint[0] != ha || v->weight[0] < 0.999f)
            continue;
        vec3 x, rel_rest, rel_posed, want;
        av_skin_vertex(v, (const mat4 *)m, x);
        m_vec3_sub(v->position_m, av.skeleton.rest_position_m[ha], rel_rest);
        m_vec3_scale(rel_rest, bind.scale, rel_rest);
        m_quat_rotate(pose.rotation[hb], rel_rest, want);
        m_vec3_sub(x, pose.position_m[hb], rel_posed);
        assert_true(m_vec3_distance(rel_posed, want) < 1e-4f);
        ++checked;
    }
    assert_true(checked > 20);
    /* The retargeting rotation: at rest, the bone's node orientation (identity here). */
    versor q;
    av_bone_rotation(&av, &bind, &pose, ha, q);
    assert_true(fabsf(m_quat_dot(q, pose.rotation[hb])) > 0.9999f);
    free(m);
    sk_pose_fini(&pose);
    av_skin_binding_fini(&bind);
    sk_skeleton_fini(&body);
    av_avatar_fini(&av);
}

static void
shipped_default_avatar_loads_like_any_vrm(void **state)
{
    (void)state;
    struct av_avatar av;
    load_ok(EMBODY_SOURCE_DIR "/config/avatar/embody.vrm", &av);
    assert_int_equal(av.format, AV_FORMAT_VRM1);
    struct sk_skeleton ref;
    load_humanoid(&ref);
    for (int b = 0; b < SK_HEAD_TOP; ++b) {
        const int j = av.skeleton.bone_joint[b], k = ref.bone_joint[b];
        assert_int_equal(j >= 0, k >= 0);
        if (j >= 0)
            assert_true(m_vec3_distance(av.skeleton.rest_position_m[j], ref.rest_position_m[k]) <
                        1e-3f);
    }
    assert_true(av.texture_count == 1 && av.material_count >= 4);
    /* Five fingers of three bones on each hand (issue 44), each bone skinning vertices of
     * its own, the middle finger's knuckle where the humanoid's hand end is. */
    for (int h = 0; h < HD_HAND_COUNT; ++h) {
        assert_int_equal(av.hands[h].finger_count, HD_FINGER_COUNT);
        for (int j = 0; j < HD_JOINT_COUNT; ++j) {
            const int s = av_finger_skin_joint(&av, (enum hd_hand)h, j);
            int n = 0;
            for (int i = 0; i < av.vertex_count; ++i)
                n += av.vertices[i].joint[0] == s;
            assert_true(n > 20);
        }
        const int end = ref.bone_joint[h ? SK_RIGHT_HAND_END : SK_LEFT_HAND_END];
        assert_true(m_vec3_distance(av.hands[h].rest_m[HD_MIDDLE * HD_FINGER_JOINTS],
                                    ref.rest_position_m[end]) < 1e-3f);
    }
    sk_skeleton_fini(&ref);
    av_avatar_fini(&av);
}

/* Whether two loaded avatars are the same model: the same counts, joints, indices and
 * materials, and every float within a rounding's reach (a build that contracts products
 * into FMA, -ffp-contract=fast -mfma, makes the file with other last bits). */
static bool
floats_near(const float *a, const float *b, int n, float tolerance)
{
    for (int i = 0; i < n; ++i)
        if (!(fabsf(a[i] - b[i]) <= tolerance))
            return false;
    return true;
}

static bool
same_avatar(const struct av_avatar *a, const struct av_avatar *b)
{
    if (a->vertex_count != b->vertex_count || a->index_count != b->index_count ||
        a->primitive_count != b->primitive_count || a->material_count != b->material_count ||
        a->texture_count != b->texture_count || a->skeleton.joint_count != b->skeleton.joint_count)
        return false;
    for (int j = 0; j < a->skeleton.joint_count; ++j)
        if (!floats_near(a->skeleton.rest_position_m[j], b->skeleton.rest_position_m[j], 3, 1e-5f))
            return false;
    for (int h = 0; h < HD_HAND_COUNT; ++h) { /* the fingers, where they are */
        if (a->hands[h].finger_count != b->hands[h].finger_count)
            return false;
        for (int j = 0; j < HD_JOINT_COUNT; ++j)
            if (!floats_near(a->hands[h].rest_m[j], b->hands[h].rest_m[j], 3, 1e-5f))
                return false;
    }
    if (memcmp(a->indices, b->indices, a->index_count * sizeof *a->indices) != 0)
        return false;
    for (int v = 0; v < a->vertex_count; ++v) {
        const struct av_vertex *x = &a->vertices[v], *y = &b->vertices[v];
        if (!floats_near(x->position_m, y->position_m, 3, 1e-5f) ||
            !floats_near(x->normal, y->normal, 3, 1e-4f) || !floats_near(x->uv, y->uv, 2, 1e-5f) ||
            !floats_near(x->weight, y->weight, AV_MAX_WEIGHTS, 1e-4f) ||
            memcmp(x->joint, y->joint, sizeof x->joint) != 0)
            return false;
    }
    for (int m = 0; m < a->material_count; ++m)
        if (strcmp(a->materials[m].name, b->materials[m].name) != 0 ||
            a->materials[m].texture != b->materials[m].texture ||
            !floats_near(a->materials[m].base_color, b->materials[m].base_color, 4, 1e-6f))
            return false;
    return true;
}

/* The shipped file is what `embody make-avatar` makes today from config/humanoid.json: the
 * same bytes from a build that rounds as the one that made it, the same model within
 * rounding from any other. */
static void
shipped_default_avatar_is_what_the_generator_makes(void **state)
{
    (void)state;
    size_t size = 0;
    uint8_t *bytes = made_bytes(AV_MAKE_VRM1, &size);
    FILE *f = fopen(EMBODY_SOURCE_DIR "/config/avatar/embody.vrm", "rb");
    assert_non_null(f);
    uint8_t *shipped = malloc(size + 1);
    assert_non_null(shipped);
    const size_t n = fread(shipped, 1, size + 1, f);
    fclose(f);
    if (n != size || memcmp(bytes, shipped, size) != 0) {
        const char *made_path = OUT "made-default.vrm";
        write_bytes(made_path, bytes, size);
        struct av_avatar made, ships;
        load_ok(made_path, &made);
        load_ok(EMBODY_SOURCE_DIR "/config/avatar/embody.vrm", &ships);
        const bool same = same_avatar(&made, &ships);
        av_avatar_fini(&made);
        av_avatar_fini(&ships);
        remove(made_path);
        if (!same)
            fail_msg("config/avatar/embody.vrm is out of date: run embody make-avatar -o "
                     "config/avatar/embody.vrm");
    }
    free(shipped);
    free(bytes);
}

/* A VRM avatar's skeleton (its bones found through humanBones, optional ones placed) goes
 * out over VMC with Unity's humanoid bone names, so a receiver showing the same VRM moves
 * as the mirror does. */
static void
vmc_output_of_a_vrm_avatar_keeps_unity_bone_names(void **state)
{
    (void)state;
    char path[512];
    make((struct av_make_desc){.rig = AV_MAKE_VRM0, .omit_bones = "chest,leftShoulder"}, "vmc.vrm",
         path, sizeof path);
    struct av_avatar av;
    load_ok(path, &av);
    struct sk_pose pose;
    assert_int_equal(sk_pose_init(&pose, &av.skeleton), EM_OK);
    sk_pose_set_rest(&pose, &av.skeleton);
    struct osc_vmc_frame frame;
    osc_vmc_frame_build(&av.skeleton, &pose, 0.0f, &frame);
    int humanoid = 0;
    for (int j = 0; j < av.skeleton.joint_count; ++j)
        humanoid += av.skeleton.bone[j] != SK_BONE_NONE && av.skeleton.bone[j] < SK_HEAD_TOP;
    assert_int_equal(frame.bone_count, humanoid);
    static const struct {
        enum sk_bone bone;
        const char *unity;
    } names[] = {{SK_HIPS, "Hips"},
                 {SK_CHEST, "Chest"},
                 {SK_LEFT_SHOULDER, "LeftShoulder"},
                 {SK_LEFT_UPPER_ARM, "LeftUpperArm"},
                 {SK_RIGHT_LOWER_LEG, "RightLowerLeg"},
                 {SK_HEAD, "Head"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
        bool sent = false;
        for (int k = 0; k < frame.bone_count; ++k)
            sent = sent || frame.bone[k] == names[i].bone;
        assert_true(sent);
        assert_string_equal(osc_unity_bone_name(names[i].bone), names[i].unity);
    }
    sk_pose_fini(&pose);
    av_avatar_fini(&av);
}

/* ---- Bad files ---- */

static uint8_t *
made_bytes(enum av_make_rig rig, size_t *out_size)
{
    struct sk_skeleton sk;
    load_humanoid(&sk);
    uint8_t *bytes = NULL;
    struct em_error err = {{0}};
    if (av_make_glb(&(struct av_make_desc){.skeleton = &sk, .rig = rig}, &bytes, out_size, &err) !=
        EM_OK)
        fail_msg("%s", err.message);
    sk_skeleton_fini(&sk);
    return bytes;
}

static void
write_bytes(const char *path, const uint8_t *bytes, size_t size)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, size, f), size);
    fclose(f);
}

static void
expect_reason(const char *path, const struct av_load_desc *desc, enum em_result want,
              const char *reason)
{
    char msg[EM_ERROR_MESSAGE_MAX];
    const enum em_result r = load_bad(path, desc, msg, sizeof msg);
    if (r != want || !strstr(msg, reason))
        fail_msg("%s: got %s \"%s\", expected %s with \"%s\"", path, em_result_string(r), msg,
                 em_result_string(want), reason);
}

static void
truncated_and_corrupt_glb_files_are_refused(void **state)
{
    (void)state;
    size_t size = 0;
    uint8_t *bytes = made_bytes(AV_MAKE_VRM1, &size);
    write_bytes(OUT "truncated.vrm", bytes, size / 2);
    expect_reason(OUT "truncated.vrm", NULL, EM_ERROR_PARSE, "truncated GLB");
    write_bytes(OUT "tiny.glb", bytes, 7);
    expect_reason(OUT "tiny.glb", NULL, EM_ERROR_PARSE, "12-byte header");
    uint8_t *bad = malloc(size);
    assert_non_null(bad);
    memcpy(bad, bytes, size);
    bad[0] = 'X';
    write_bytes(OUT "magic.glb", bad, size);
    expect_reason(OUT "magic.glb", NULL, EM_ERROR_PARSE, "not a GLB file");
    memcpy(bad, bytes, size);
    bad[12] = 0xff, bad[13] = 0xff, bad[14] = 0xff; /* the JSON chunk's length */
    write_bytes(OUT "chunk.glb", bad, size);
    expect_reason(OUT "chunk.glb", NULL, EM_ERROR_PARSE, "corrupt GLB");
    memcpy(bad, bytes, size);
    bad[20] = '['; /* the JSON's first brace */
    bad[21] = '}';
    write_bytes(OUT "json.glb", bad, size);
    expect_reason(OUT "json.glb", NULL, EM_ERROR_PARSE, "broken glTF JSON");
    memcpy(bad, bytes, size);
    bad[4] = 1; /* GLB version */
    write_bytes(OUT "version.glb", bad, size);
    expect_reason(OUT "version.glb", NULL, EM_ERROR_UNSUPPORTED, "version 1");
    free(bad);
    free(bytes);
    expect_reason(OUT "no-such-file.vrm", NULL, EM_ERROR_IO, "cannot open");
    expect_reason(OUT "avatar.obj", NULL, EM_ERROR_UNSUPPORTED, ".vrm, .glb, .gltf or .fbx");
}

/* Bytes changed at random (seeded: the same every run), in the JSON or anywhere: the reader
 * either reads a whole avatar or refuses the file with its name, and never crashes (the
 * sanitizer build runs this too). */
static void
randomly_corrupted_files_are_read_or_refused_never_crash(void **state)
{
    (void)state;
    size_t size = 0;
    uint8_t *bytes = made_bytes(AV_MAKE_VRM1, &size);
    uint8_t *bad = malloc(size);
    assert_non_null(bad);
    int read = 0, refused = 0;
    unsigned seed = 12345u;
    for (int run = 0; run < 100; ++run) {
        memcpy(bad, bytes, size);
        const int flips = 1 + run % 8;
        for (int k = 0; k < flips; ++k) {
            seed = seed * 1103515245u + 12345u;
            const size_t at = run % 2 ? 20 + (seed >> 8) % 4000 : (seed >> 8) % size;
            seed = seed * 1103515245u + 12345u;
            bad[at] = (uint8_t)(seed >> 16);
        }
        write_bytes(OUT "corrupt.vrm", bad, size);
        struct av_avatar av;
        struct em_error err = {{0}};
        if (av_avatar_load(OUT "corrupt.vrm", NULL, &av, &err) == EM_OK) {
            assert_int_equal(sk_humanoid_validate(&av.skeleton, "corrupt", NULL), EM_OK);
            for (uint32_t i = 0; i < av.index_count; ++i)
                assert_true(av.indices[i] < (uint32_t)av.vertex_count);
            ++read;
            av_avatar_fini(&av);
        } else {
            assert_non_null(strstr(err.message, OUT "corrupt.vrm"));
            ++refused;
        }
    }
    assert_true(refused > 0);
    free(bad);
    free(bytes);
}

static void
files_without_a_humanoid_skeleton_are_refused(void **state)
{
    (void)state;
    char path[512];
    /* Two bones: neither names nor shape make a humanoid of them. */
    FILE *f = fopen(OUT "bones.gltf", "w");
    assert_non_null(f);
    fputs("{\"asset\": {\"version\": \"2.0\"}, \"nodes\": [{\"name\": \"bone0\", "
          "\"children\": [1]}, {\"name\": \"bone1\", \"translation\": [0, 1, 0]}], "
          "\"scenes\": [{\"nodes\": [0]}]}",
          f);
    fclose(f);
    expect_reason(OUT "bones.gltf", NULL, EM_ERROR_PARSE, "no humanoid skeleton");
    expect_reason(OUT "bones.gltf", NULL, EM_ERROR_PARSE, "--bone-map");
    make((struct av_make_desc){.rig = AV_MAKE_VRM1, .omit_bones = "leftLowerArm,rightFoot"},
         "missing.vrm", path, sizeof path);
    expect_reason(path, NULL, EM_ERROR_PARSE,
                  "lacks required humanoid bones: leftLowerArm, rightFoot");
    make((struct av_make_desc){.rig = AV_MAKE_VRM0, .omit_bones = "hips"}, "nohips.vrm", path,
         sizeof path);
    expect_reason(path, NULL, EM_ERROR_PARSE, "hips");
}

static void
unsupported_versions_are_refused(void **state)
{
    (void)state;
    char path[512];
    make((struct av_make_desc){.rig = AV_MAKE_VRM1, .spec_version = "2.0"}, "vrm2.vrm", path,
         sizeof path);
    expect_reason(path, NULL, EM_ERROR_UNSUPPORTED, "specVersion \"2.0\"");
    make((struct av_make_desc){.rig = AV_MAKE_VRM1, .spec_version = "1.0-beta"}, "beta.vrm", path,
         sizeof path);
    expect_reason(path, NULL, EM_ERROR_UNSUPPORTED, "pre-release");
    make((struct av_make_desc){.rig = AV_MAKE_VRM0, .spec_version = "1.0"}, "vrm0v1.vrm", path,
         sizeof path);
    expect_reason(path, NULL, EM_ERROR_UNSUPPORTED, "VRM specVersion");
    /* A glTF 1.0 document (as a .gltf text file). */
    FILE *f = fopen(OUT "old.gltf", "w");
    assert_non_null(f);
    fputs("{\"asset\": {\"version\": \"1.0\"}, \"nodes\": {}}\n", f);
    fclose(f);
    expect_reason(OUT "old.gltf", NULL, EM_ERROR_UNSUPPORTED, "glTF version \"1.0\"");
}

/* The made VRM 1.0 with humanBones.hips.node set to `value` (JSON number text), written
 * as a GLB to `path`. */
static void
write_vrm_with_hips_node(const char *value, const char *path)
{
    size_t size = 0;
    uint8_t *glb = made_bytes(AV_MAKE_VRM1, &size);
    const uint32_t json_len = (uint32_t)glb[12] | (uint32_t)glb[13] << 8 | (uint32_t)glb[14] << 16 |
                              (uint32_t)glb[15] << 24;
    cJSON *json = cJSON_ParseWithLength((const char *)glb + 20, json_len);
    assert_non_null(json);
    cJSON *bones = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(json, "extensions"), "VRMC_vrm"),
                            "humanoid"),
        "humanBones");
    cJSON *hips = cJSON_GetObjectItem(bones, "hips");
    assert_non_null(hips);
    cJSON_DeleteItemFromObject(hips, "node");
    cJSON_AddItemToObject(hips, "node", cJSON_CreateRaw(value));
    char *text = cJSON_PrintUnformatted(json);
    assert_non_null(text);
    const size_t len = strlen(text), padded = (len + 3) & ~(size_t)3;
    const size_t rest = size - 20 - json_len; /* the BIN chunk, as it was */
    const size_t total = 20 + padded + rest;
    uint8_t *out = malloc(total);
    assert_non_null(out);
    memcpy(out, glb, 12);
    for (int i = 0; i < 4; ++i) {
        out[8 + i] = (uint8_t)(total >> (8 * i));
        out[12 + i] = (uint8_t)(padded >> (8 * i));
    }
    memcpy(out + 16, glb + 16, 4);
    memcpy(out + 20, text, len);
    memset(out + 20 + len, ' ', padded - len);
    memcpy(out + 20 + padded, glb + 20 + json_len, rest);
    write_bytes(path, out, total);
    free(out);
    free(text);
    cJSON_Delete(json);
    free(glb);
}

/* Issue 20: 1e30, -1e30 and 2^31 as a bone's node were converted to int before the range
 * check (undefined behaviour: the sanitizer build aborted). */
static void
node_indices_out_of_any_int_range_are_refused(void **state)
{
    (void)state;
    const char *values[] = {"1e30", "-1e30", "2147483648", "1e300", "-1", "0.5"};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; ++i) {
        write_vrm_with_hips_node(values[i], OUT "bad-node.vrm");
        expect_reason(OUT "bad-node.vrm", NULL, EM_ERROR_PARSE, "expected a node index below");
    }
}

static void
enormous_meshes_are_refused_with_the_limit(void **state)
{
    (void)state;
    char path[512];
    make((struct av_make_desc){.rig = AV_MAKE_VRM1}, "vrm1.vrm", path, sizeof path);
    const struct av_load_desc small = {.max_triangles = 1000};
    expect_reason(path, &small, EM_ERROR_LIMIT, "more than the 1000 an avatar may have");
    const struct av_load_desc few = {.max_vertices = 500};
    expect_reason(path, &few, EM_ERROR_LIMIT, "vertices");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(node_names_of_common_rigs_map_to_humanoid_bones),
        cmocka_unit_test(generated_vrm1_has_the_humanoids_bones_at_their_places),
        cmocka_unit_test(vrm0_and_vrm1_files_load_with_the_same_bone_map),
        cmocka_unit_test(rigs_with_other_bone_frames_give_the_same_avatar),
        cmocka_unit_test(plain_gltf_rigs_are_recognised_by_their_bone_names),
        cmocka_unit_test(optional_vrm_bones_that_are_absent_are_placed),
        cmocka_unit_test(materials_textures_and_rigid_meshes_are_read),
        cmocka_unit_test(gltf_with_external_buffer_and_image_files_loads),
        cmocka_unit_test(skinned_vertices_follow_their_joints),
        cmocka_unit_test(shipped_default_avatar_loads_like_any_vrm),
        cmocka_unit_test(shipped_default_avatar_is_what_the_generator_makes),
        cmocka_unit_test(vmc_output_of_a_vrm_avatar_keeps_unity_bone_names),
        cmocka_unit_test(truncated_and_corrupt_glb_files_are_refused),
        cmocka_unit_test(randomly_corrupted_files_are_read_or_refused_never_crash),
        cmocka_unit_test(files_without_a_humanoid_skeleton_are_refused),
        cmocka_unit_test(unsupported_versions_are_refused),
        cmocka_unit_test(enormous_meshes_are_refused_with_the_limit),
        cmocka_unit_test(node_indices_out_of_any_int_range_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
