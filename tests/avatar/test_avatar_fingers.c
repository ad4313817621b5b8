/*
 * Avatar fingers (issue 44): rigs the tests make (av_make_glb: VRM 1.0, VRM 0.x facing -Z,
 * Mixamo names, Blender-style bone frames) have five fingers of three bones on each hand,
 * found and sized; posed with the hand model's test poses (point, fist, open, thumbs-up),
 * every finger bone points where the hand model (hd_pose_positions) says, turned by the
 * body's hand joint; a rig without fingers still loads and poses; broken finger bones are
 * left out, never a crash.
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

#include "avatar/avatar.h"
#include "embody/hand.h"
#include "embody/m_math.h"
#include "skeleton/sk_fingers.h"
#include "../hand/hand_poses.h"

#define OUT EMBODY_BINARY_DIR "/tests/avatar/"
#define PI_F 3.14159265f
/* A posed bone's direction against the hand model's: the rigs here rest their fingers as
 * the model does, so what is left is float rounding through two quaternion chains. */
#define MAX_BONE_ERROR_DEG 1.0f

static void
load_humanoid(struct sk_skeleton *sk)
{
    struct em_error err = {{0}};
    if (sk_skeleton_load_json(EMBODY_SOURCE_DIR "/config/humanoid.json", sk, &err) != EM_OK)
        fail_msg("%s", err.message);
}

static void
make_and_load(struct av_make_desc desc, const char *name, struct av_avatar *out)
{
    struct sk_skeleton sk;
    load_humanoid(&sk);
    desc.skeleton = &sk;
    char path[1024];
    snprintf(path, sizeof path, OUT "%s", name);
    struct em_error err = {{0}};
    if (av_make_file(&desc, path, &err) != EM_OK)
        fail_msg("%s", err.message);
    sk_skeleton_fini(&sk);
    if (av_avatar_load(path, NULL, out, &err) != EM_OK)
        fail_msg("%s", err.message);
}

static const struct {
    const char *file;
    struct av_make_desc desc;
} k_rigs[] = {
    {"fingers_vrm1.vrm", {.rig = AV_MAKE_VRM1}},
    {"fingers_vrm0.vrm", {.rig = AV_MAKE_VRM0}},
    {"fingers_mixamo.glb", {.rig = AV_MAKE_MIXAMO}},
    {"fingers_plain.glb", {.rig = AV_MAKE_PLAIN}},
    {"fingers_bone_axes.glb", {.rig = AV_MAKE_MIXAMO, .bone_axes = true}},
    /* Fingers resting bent and palms turned (not the model's rest): the rig's own frames
     * must be undone for the bones to point where the model's do. */
    {"fingers_curled.vrm",
     {.rig = AV_MAKE_VRM1, .finger_rest_curl_rad = 0.3f, .hand_rest_turn_rad = 0.5f}},
    {"fingers_curled_vrm0.vrm",
     {.rig = AV_MAKE_VRM0, .finger_rest_curl_rad = 0.25f, .hand_rest_turn_rad = -0.6f}},
};
#define RIG_COUNT ((int)(sizeof k_rigs / sizeof k_rigs[0]))

static void
finger_names_of_every_convention_are_read(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        enum sk_finger_names names;
        int side, joint;
    } cases[] = {
        {"leftThumbMetacarpal", SK_FINGER_NAMES_VRM1, HD_LEFT, 0},
        {"leftThumbProximal", SK_FINGER_NAMES_VRM1, HD_LEFT, 1},
        {"leftThumbProximal", SK_FINGER_NAMES_UNITY, HD_LEFT, 0},
        {"RightLittleDistal", SK_FINGER_NAMES_UNITY, HD_RIGHT, 14},
        {"J_Bip_L_Index1", SK_FINGER_NAMES_UNITY, HD_LEFT, 3},
        {"mixamorig:RightHandPinky2", SK_FINGER_NAMES_UNITY, HD_RIGHT, 13},
        {"middle_03_l", SK_FINGER_NAMES_UNITY, HD_LEFT, 8},
        {"DEF-f_ring.01.R", SK_FINGER_NAMES_UNITY, HD_RIGHT, 9},
        {"DEF-thumb.02.L", SK_FINGER_NAMES_UNITY, HD_LEFT, 1},
        {"CC_Base_R_Mid1", SK_FINGER_NAMES_UNITY, HD_RIGHT, 6},
        {"lPinky3", SK_FINGER_NAMES_UNITY, HD_LEFT, 14},
        {"Thumb0_L", SK_FINGER_NAMES_UNITY, HD_LEFT, 0},
        {"IndexFinger3_R", SK_FINGER_NAMES_UNITY, HD_RIGHT, 5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        int side = -1;
        const int j = sk_finger_from_node_name(cases[i].name, cases[i].names, &side);
        if (j != cases[i].joint || side != cases[i].side)
            fail_msg("%s: joint %d side %d, expected %d %d", cases[i].name, j, side, cases[i].joint,
                     cases[i].side);
    }
    int side = 0;
    assert_int_equal(sk_finger_from_node_name("LeftHand", SK_FINGER_NAMES_UNITY, &side), -1);
    assert_int_equal(sk_finger_from_node_name("LeftUpperArm", SK_FINGER_NAMES_VRM1, &side), -1);
    assert_int_equal(sk_finger_from_node_name("", SK_FINGER_NAMES_VRM1, &side), -1);
    const char *vrm1[] = {"hips", "leftThumbMetacarpal"}, *unity[] = {"Hips", "LeftThumbProximal"};
    assert_int_equal(sk_finger_names_guess(vrm1, 2), SK_FINGER_NAMES_VRM1);
    assert_int_equal(sk_finger_names_guess(unity, 2), SK_FINGER_NAMES_UNITY);
}

static void
made_rigs_have_five_fingers_sized_by_their_bones(void **state)
{
    (void)state;
    for (int r = 0; r < RIG_COUNT; ++r) {
        struct av_avatar av;
        make_and_load(k_rigs[r].desc, k_rigs[r].file, &av);
        for (int h = 0; h < HD_HAND_COUNT; ++h) {
            const struct av_hand *H = &av.hands[h];
            if (H->finger_count != HD_FINGER_COUNT)
                fail_msg("%s: hand %d has %d fingers", k_rigs[r].file, h, H->finger_count);
            const struct hd_model *model = av_hand_model(&av, (enum hd_hand)h);
            assert_non_null(model);
            for (int f = 0; f < HD_FINGER_COUNT; ++f)
                for (int k = 0; k < HD_FINGER_JOINTS; ++k) {
                    const int j = f * HD_FINGER_JOINTS + k;
                    const float len =
                        m_vec3_distance(H->rest_m[j], k < 2 ? H->rest_m[j + 1] : H->tip_m[f]);
                    assert_float_equal(model->bone_m[f][k], len, 1e-4);
                }
        }
        assert_int_equal(av.skin_joint_count, av.skeleton.joint_count + 2 * HD_JOINT_COUNT);
        /* Every finger joint skins some vertices. */
        for (int h = 0; h < HD_HAND_COUNT; ++h)
            for (int j = 0; j < HD_JOINT_COUNT; ++j) {
                const int s = av_finger_skin_joint(&av, (enum hd_hand)h, j);
                int n = 0;
                for (int i = 0; i < av.vertex_count; ++i)
                    n += av.vertices[i].joint[0] == s && av.vertices[i].weight[0] > 0.5f;
                if (n < 10)
                    fail_msg("%s: %s skins %d vertices", k_rigs[r].file,
                             hd_vrm_bone_name((enum hd_hand)h, j), n);
            }
        av_avatar_fini(&av);
    }
}

/* M v, with M the turn from the hand frame to the humanoid's T-pose frame
 * (hd_humanoid_rotation_from_hand gives M q M^-1: the axis of a rotation about v turns
 * to M v). */
static void
hand_to_humanoid(enum hd_hand hand, const float *v, float *out)
{
    versor q, mq;
    vec3 axis;
    m_vec3_normalize_or(v, (vec3){0.0f, 0.0f, -1.0f}, axis);
    m_quat_from_axis_angle(axis, 1.0f, q);
    hd_humanoid_rotation_from_hand(hand, q, mq);
    vec3 out_axis = {mq[0], mq[1], mq[2]};
    m_vec3_normalize_or(out_axis, axis, out_axis);
    m_vec3_scale(out_axis, m_vec3_length(v), out);
}

static float
angle_deg(const float *a, const float *b)
{
    const float c = m_vec3_dot(a, b) / (m_vec3_length(a) * m_vec3_length(b));
    return acosf(m_clampf(c, -1.0f, 1.0f)) * 180.0f / PI_F;
}

static void
posed_point(const mat4 *m, int joint, const float *rest, float *out)
{
    const struct av_vertex v = {
        .position_m = {rest[0], rest[1], rest[2]}, .joint = {(uint8_t)joint}, .weight = {1.0f}};
    av_skin_vertex(&v, m, out);
}

static const int k_poses[] = {POSE_POINT, POSE_FIST, POSE_OPEN, POSE_THUMBS_UP};
#define TESTED_POSES ((int)(sizeof k_poses / sizeof k_poses[0]))

/* The worst angle of any finger bone of `av` posed with each test pose (both hands, the
 * body at rest and turned with its elbows bent), against the hand model's bones. */
static void
worst_bone_errors(struct av_avatar *av, float hand_turn_rad, float out_worst_deg[TESTED_POSES])
{
    struct sk_skeleton body;
    load_humanoid(&body);
    struct em_error err = {{0}};
    assert_int_equal(sk_humanoid_fit(&body, 1.60f, 0.0f, &err), EM_OK);
    struct av_skin_binding bind;
    assert_int_equal(av_skin_bind(av, &body, &bind, &err), EM_OK);
    struct sk_pose pose;
    assert_int_equal(sk_pose_init(&pose, &body), EM_OK);
    mat4 *m = calloc((size_t)bind.joint_count, sizeof *m);
    assert_non_null(m);
    for (int p = 0; p < TESTED_POSES; ++p) {
        out_worst_deg[p] = 0.0f;
        for (int turned = 0; turned < 2; ++turned) {
            sk_pose_set_rest(&pose, &body);
            if (turned) {
                const float up[3] = {0, 1, 0}, down[3] = {0, -1, 0}, fwd[3] = {0.3f, 0.2f, 1};
                m_quat_from_axis_angle(up, 0.7f, pose.local_rotation[0]);
                m_quat_from_axis_angle(down, 1.2f,
                                       pose.local_rotation[body.bone_joint[SK_LEFT_LOWER_ARM]]);
                vec3 axis;
                m_vec3_normalize_or(fwd, up, axis);
                m_quat_from_axis_angle(axis, 0.9f,
                                       pose.local_rotation[body.bone_joint[SK_RIGHT_HAND]]);
                sk_pose_forward_kinematics(&pose, &body);
            }
            struct hd_pose hp[HD_HAND_COUNT];
            for (int h = 0; h < HD_HAND_COUNT; ++h) {
                test_pose_make(av_hand_model(av, (enum hd_hand)h), k_poses[p], &hp[h]);
                av_set_hand_pose(av, (enum hd_hand)h, &hp[h]);
            }
            av_skin_matrices(&bind, &pose, m);
            for (int h = 0; h < HD_HAND_COUNT; ++h) {
                const struct av_hand *H = &av->hands[h];
                float model_at[HD_POINT_COUNT][3];
                hd_pose_positions(&H->model, &hp[h], model_at);
                const float *hand_q =
                    pose.rotation[body.bone_joint[h ? SK_RIGHT_HAND : SK_LEFT_HAND]];
                for (int f = 0; f < HD_FINGER_COUNT; ++f)
                    for (int k = 0; k < HD_FINGER_JOINTS && H->has_finger[f]; ++k) {
                        const int j = f * HD_FINGER_JOINTS + k;
                        const int s = av_finger_skin_joint(av, (enum hd_hand)h, j);
                        vec3 a, b, got, want;
                        posed_point((const mat4 *)m, s, H->rest_m[j], a);
                        posed_point((const mat4 *)m, s, k < 2 ? H->rest_m[j + 1] : H->tip_m[f], b);
                        m_vec3_sub(b, a, got);
                        vec3 d;
                        m_vec3_sub(model_at[f * 4 + k + 1], model_at[f * 4 + k], d);
                        hand_to_humanoid((enum hd_hand)h, d, want);
                        /* The rig's hand rests turned about its forearm. */
                        versor turn;
                        const vec3 arm = {h == HD_RIGHT ? -1.0f : 1.0f, 0.0f, 0.0f};
                        m_quat_from_axis_angle(arm, hand_turn_rad, turn);
                        m_quat_rotate(turn, want, want);
                        m_quat_rotate(hand_q, want, want);
                        out_worst_deg[p] = fmaxf(out_worst_deg[p], angle_deg(got, want));
                        if (k > 0) { /* the joint sits at the end of the bone before it */
                            vec3 end;
                            const int up = av_finger_skin_joint(av, (enum hd_hand)h, j - 1);
                            posed_point((const mat4 *)m, up, H->rest_m[j], end);
                            assert_true(m_vec3_distance(end, a) < 1e-4f);
                        }
                    }
            }
        }
    }
    free(m);
    sk_pose_fini(&pose);
    av_skin_binding_fini(&bind);
    sk_skeleton_fini(&body);
}

static void
worst_bone_errors_present(struct av_avatar *av, float out_worst_deg[TESTED_POSES])
{
    worst_bone_errors(av, 0.0f, out_worst_deg);
}

static void
posed_finger_bones_point_where_the_hand_model_says(void **state)
{
    (void)state;
    for (int r = 0; r < RIG_COUNT; ++r) {
        struct av_avatar av;
        make_and_load(k_rigs[r].desc, k_rigs[r].file, &av);
        float worst[TESTED_POSES];
        worst_bone_errors(&av, k_rigs[r].desc.hand_rest_turn_rad, worst);
        for (int p = 0; p < TESTED_POSES; ++p) {
            printf("# %-22s %-10s worst finger bone %.4f deg\n", k_rigs[r].file,
                   test_pose_name(k_poses[p]), (double)worst[p]);
            if (!(worst[p] < MAX_BONE_ERROR_DEG))
                fail_msg("%s %s: a finger bone %.3f degrees off the hand model's", k_rigs[r].file,
                         test_pose_name(k_poses[p]), (double)worst[p]);
        }
        av_avatar_fini(&av);
    }
}

/* The fist and the open hand put the fingertips in different places (the test above
 * would pass for fingers that never move if the model's poses were all alike). */
static void
fist_and_open_hand_move_the_fingertips(void **state)
{
    (void)state;
    struct av_avatar av;
    make_and_load(k_rigs[0].desc, k_rigs[0].file, &av);
    struct sk_skeleton body;
    load_humanoid(&body);
    struct em_error err = {{0}};
    struct av_skin_binding bind;
    assert_int_equal(av_skin_bind(&av, &body, &bind, &err), EM_OK);
    struct sk_pose pose;
    assert_int_equal(sk_pose_init(&pose, &body), EM_OK);
    sk_pose_set_rest(&pose, &body);
    mat4 *m = calloc((size_t)bind.joint_count, sizeof *m);
    assert_non_null(m);
    vec3 tip[2];
    for (int p = 0; p < 2; ++p) {
        struct hd_pose hp;
        test_pose_make(av_hand_model(&av, HD_LEFT), p ? POSE_FIST : POSE_OPEN, &hp);
        av_set_hand_pose(&av, HD_LEFT, &hp);
        av_skin_matrices(&bind, &pose, m);
        posed_point((const mat4 *)m, av_finger_skin_joint(&av, HD_LEFT, HD_INDEX * 3 + 2),
                    av.hands[HD_LEFT].tip_m[HD_INDEX], tip[p]);
    }
    assert_true(m_vec3_distance(tip[0], tip[1]) > 0.04f);
    /* NULL is the relaxed pose, and a pose that is not finite is taken as relaxed. */
    struct hd_pose relaxed, bad;
    hd_pose_relaxed(av_hand_model(&av, HD_LEFT), &relaxed);
    av_set_hand_pose(&av, HD_LEFT, &relaxed);
    versor want;
    m_quat_copy(av.hands[HD_LEFT].rotation[4], want);
    memset(&bad, 0, sizeof bad);
    bad.flex_rad[1][1] = NAN;
    av_set_hand_pose(&av, HD_LEFT, &bad);
    assert_true(fabsf(m_quat_dot(av.hands[HD_LEFT].rotation[4], want)) > 0.99999f);
    av_set_hand_pose(&av, HD_LEFT, NULL);
    assert_true(fabsf(m_quat_dot(av.hands[HD_LEFT].rotation[4], want)) > 0.99999f);
    free(m);
    sk_pose_fini(&pose);
    av_skin_binding_fini(&bind);
    sk_skeleton_fini(&body);
    av_avatar_fini(&av);
}

/* A rig whose finger nodes have no names the map knows loads as before: no fingers, a
 * hand pose is ignored, and the finger skin joints follow the hand. A finger missing one
 * of its bones in the VRM's humanBones is left out; the others are kept. */
static void
rigs_without_fingers_or_with_broken_ones_still_load_and_pose(void **state)
{
    (void)state;
    struct av_avatar av;
    make_and_load((struct av_make_desc){.rig = AV_MAKE_PLAIN, .anonymous_nodes = true},
                  "fingers_none.glb", &av);
    for (int h = 0; h < HD_HAND_COUNT; ++h) {
        assert_int_equal(av.hands[h].finger_count, 0);
        assert_null(av_hand_model(&av, (enum hd_hand)h));
    }
    struct hd_pose fist;
    struct hd_model model;
    struct em_error err = {{0}};
    assert_int_equal(hd_model_init(&(struct hd_model_desc){0}, &model, &err), EM_OK);
    test_pose_make(&model, POSE_FIST, &fist);
    av_set_hand_pose(&av, HD_LEFT, &fist); /* ignored */
    struct sk_skeleton body;
    load_humanoid(&body);
    struct av_skin_binding bind;
    assert_int_equal(av_skin_bind(&av, &body, &bind, &err), EM_OK);
    struct sk_pose pose;
    assert_int_equal(sk_pose_init(&pose, &body), EM_OK);
    sk_pose_set_rest(&pose, &body);
    const float up[3] = {0, 1, 0};
    m_quat_from_axis_angle(up, 0.7f, pose.local_rotation[0]);
    sk_pose_forward_kinematics(&pose, &body);
    mat4 *m = calloc((size_t)bind.joint_count, sizeof *m);
    assert_non_null(m);
    av_skin_matrices(&bind, &pose, m);
    const int hand = av.skeleton.bone_joint[SK_LEFT_HAND];
    for (int j = 0; j < HD_JOINT_COUNT; ++j) {
        const float *a = (const float *)m[hand],
                    *b = (const float *)m[av_finger_skin_joint(&av, HD_LEFT, j)];
        for (int i = 0; i < 16; ++i)
            assert_float_equal(a[i], b[i], 1e-6);
    }
    free(m);
    sk_pose_fini(&pose);
    av_skin_binding_fini(&bind);
    sk_skeleton_fini(&body);
    av_avatar_fini(&av);

    make_and_load((struct av_make_desc){.rig = AV_MAKE_VRM1, .omit_bones = "leftIndexIntermediate"},
                  "fingers_broken.vrm", &av);
    assert_false(av.hands[HD_LEFT].has_finger[HD_INDEX]);
    assert_int_equal(av.hands[HD_LEFT].finger_count, HD_FINGER_COUNT - 1);
    assert_int_equal(av.hands[HD_RIGHT].finger_count, HD_FINGER_COUNT);
    float worst[TESTED_POSES];
    worst_bone_errors_present(&av, worst);
    for (int p = 0; p < TESTED_POSES; ++p)
        assert_true(worst[p] < MAX_BONE_ERROR_DEG);
    av_avatar_fini(&av);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(finger_names_of_every_convention_are_read),
        cmocka_unit_test(made_rigs_have_five_fingers_sized_by_their_bones),
        cmocka_unit_test(posed_finger_bones_point_where_the_hand_model_says),
        cmocka_unit_test(fist_and_open_hand_move_the_fingertips),
        cmocka_unit_test(rigs_without_fingers_or_with_broken_ones_still_load_and_pose),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
