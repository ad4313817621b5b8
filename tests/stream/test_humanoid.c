/*
 * A humanoid skeleton from a CMU BVH hierarchy: bone lengths as in the clip, the
 * humanoid's rest pose (straight legs, arms straight out, feet on the floor), the
 * humanoid's joint limits, and refusal of a hierarchy that lacks a joint.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embody/skeleton.h"
#include "embody/stream.h"
#include "test_stream.h"

#define CMU_SCALE 0.056444
#define CLIP EMBODY_SOURCE_DIR "/tests/data/mocap/cmu_127_17.bvh"

/* Where each humanoid joint comes from in a CMU clip (written out here, independently of
 * the name map). */
static const struct {
    enum sk_bone bone;
    const char *cmu;
} cmu_source[] = {
    {SK_HIPS, "Hips"},
    {SK_SPINE, "Spine"},
    {SK_CHEST, "Spine1"},
    {SK_NECK, "Neck"},
    {SK_HEAD, "Head"},
    {SK_LEFT_SHOULDER, "LeftShoulder"},
    {SK_LEFT_UPPER_ARM, "LeftArm"},
    {SK_LEFT_LOWER_ARM, "LeftForeArm"},
    {SK_LEFT_HAND, "LeftHand"},
    {SK_LEFT_HAND_END, "LeftFingerBase"},
    {SK_RIGHT_SHOULDER, "RightShoulder"},
    {SK_RIGHT_UPPER_ARM, "RightArm"},
    {SK_RIGHT_LOWER_ARM, "RightForeArm"},
    {SK_RIGHT_HAND, "RightHand"},
    {SK_RIGHT_HAND_END, "RightFingerBase"},
    {SK_LEFT_UPPER_LEG, "LeftUpLeg"},
    {SK_LEFT_LOWER_LEG, "LeftLeg"},
    {SK_LEFT_FOOT, "LeftFoot"},
    {SK_LEFT_TOES, "LeftToeBase"},
    {SK_LEFT_TOES_END, "LeftToeBase_End"},
    {SK_RIGHT_UPPER_LEG, "RightUpLeg"},
    {SK_RIGHT_LOWER_LEG, "RightLeg"},
    {SK_RIGHT_FOOT, "RightFoot"},
    {SK_RIGHT_TOES, "RightToeBase"},
    {SK_RIGHT_TOES_END, "RightToeBase_End"},
};
#define CMU_SOURCE_COUNT ((int)(sizeof cmu_source / sizeof cmu_source[0]))

static const char *
cmu_name(enum sk_bone bone)
{
    for (int i = 0; i < CMU_SOURCE_COUNT; ++i)
        if (cmu_source[i].bone == bone)
            return cmu_source[i].cmu;
    fail_msg("no CMU joint for %s", sk_bone_name(bone));
    return NULL;
}

/* Rest position of a BVH joint: the sum of the offsets from the root. */
static void
bvh_rest(const struct st_bvh *bvh, int j, double *out)
{
    out[0] = out[1] = out[2] = 0.0;
    for (; j >= 0; j = bvh->joints[j].parent)
        for (int k = 0; k < 3; ++k)
            out[k] += bvh->joints[j].offset[k];
}

static void
load_cmu_humanoid(struct st_bvh *bvh, struct sk_skeleton *sk)
{
    struct em_error err = {{0}};
    if (st_bvh_load(CLIP, bvh, &err) != EM_OK)
        fail_msg("%s", err.message);
    if (st_bvh_to_humanoid(bvh, SK_NAMES_CMU, CMU_SCALE, CLIP, sk, &err) != EM_OK)
        fail_msg("%s", err.message);
}

static void
a_cmu_clip_gives_a_humanoid_with_the_clips_bone_lengths(void **state)
{
    (void)state;
    struct st_bvh bvh;
    struct sk_skeleton sk;
    load_cmu_humanoid(&bvh, &sk);
    assert_int_equal(sk.joint_count, CMU_SOURCE_COUNT);
    /* CMU's Head End Site is not the crown. */
    assert_int_equal(sk.bone_joint[SK_HEAD_TOP], -1);
    for (int i = 1; i < sk.joint_count; ++i) {
        const int a = st_bvh_find(&bvh, cmu_name(sk.bone[i]));
        const int b = st_bvh_find(&bvh, cmu_name(sk.bone[sk.parent[i]]));
        assert_true(a >= 0 && b >= 0);
        double pa[3], pb[3];
        bvh_rest(&bvh, a, pa);
        bvh_rest(&bvh, b, pb);
        const double want = CMU_SCALE * sqrt((pa[0] - pb[0]) * (pa[0] - pb[0]) +
                                             (pa[1] - pb[1]) * (pa[1] - pb[1]) +
                                             (pa[2] - pb[2]) * (pa[2] - pb[2]));
        if (fabs((double)sk.length_m[i] - want) > 1e-6)
            fail_msg("%s: length %.7f m, the clip's is %.7f m", sk.name[i],
                     (double)sk.length_m[i], want);
    }
    sk_skeleton_fini(&sk);
    st_bvh_fini(&bvh);
}

static const float *
rest_of(const struct sk_skeleton *sk, enum sk_bone bone)
{
    const int j = sk->bone_joint[bone];
    assert_true(j >= 0);
    return sk->rest_position_m[j];
}

static void
the_rest_pose_has_straight_legs_arms_straight_out_and_feet_on_the_floor(void **state)
{
    (void)state;
    struct st_bvh bvh;
    struct sk_skeleton sk;
    load_cmu_humanoid(&bvh, &sk);
    for (int side = 0; side < 2; ++side) {
        const float *hip = rest_of(&sk, side ? SK_RIGHT_UPPER_LEG : SK_LEFT_UPPER_LEG);
        const float *knee = rest_of(&sk, side ? SK_RIGHT_LOWER_LEG : SK_LEFT_LOWER_LEG);
        const float *ankle = rest_of(&sk, side ? SK_RIGHT_FOOT : SK_LEFT_FOOT);
        /* The thigh points straight down; CMU's shin continues the thigh's line. */
        assert_float_equal(knee[0], hip[0], 1e-6);
        assert_float_equal(knee[2], hip[2], 1e-6);
        assert_true(knee[1] < hip[1] - 0.3f);
        assert_float_equal(ankle[0], hip[0], 1e-4);
        assert_float_equal(ankle[2], hip[2], 1e-4);
        const float *shoulder = rest_of(&sk, side ? SK_RIGHT_UPPER_ARM : SK_LEFT_UPPER_ARM);
        const float *elbow = rest_of(&sk, side ? SK_RIGHT_LOWER_ARM : SK_LEFT_LOWER_ARM);
        assert_float_equal(elbow[1], shoulder[1], 1e-6);
        assert_float_equal(elbow[2], shoulder[2], 1e-6);
        assert_true(side ? elbow[0] < shoulder[0] - 0.2f : elbow[0] > shoulder[0] + 0.2f);
    }
    float lowest = INFINITY;
    static const enum sk_bone feet[] = {SK_LEFT_FOOT,  SK_RIGHT_FOOT,    SK_LEFT_TOES,
                                        SK_RIGHT_TOES, SK_LEFT_TOES_END, SK_RIGHT_TOES_END};
    for (size_t i = 0; i < sizeof feet / sizeof feet[0]; ++i)
        lowest = fminf(lowest, rest_of(&sk, feet[i])[1]);
    assert_float_equal(lowest, 0.0, 1e-6);
    /* The humanoid's limits apply: the knee is a hinge, the shoulder a ball. */
    assert_int_equal(sk.limit[sk.bone_joint[SK_LEFT_LOWER_LEG]].kind, SK_LIMIT_HINGE);
    assert_int_equal(sk.limit[sk.bone_joint[SK_RIGHT_UPPER_ARM]].kind, SK_LIMIT_BALL);
    struct em_error err = {{0}};
    assert_int_equal(sk_humanoid_validate(&sk, "cmu", &err), EM_OK);
    sk_skeleton_fini(&sk);
    st_bvh_fini(&bvh);
}

static void
limits_can_come_from_another_humanoid(void **state)
{
    (void)state;
    struct sk_skeleton limits, sk;
    struct st_bvh bvh;
    struct em_error err = {{0}};
    assert_int_equal(sk_skeleton_load_json(EMBODY_SOURCE_DIR "/config/humanoid.json", &limits,
                                           &err),
                     EM_OK);
    limits.limit[limits.bone_joint[SK_LEFT_LOWER_LEG]].max_rad = 1.0f;
    assert_int_equal(st_bvh_load(CLIP, &bvh, &err), EM_OK);
    assert_int_equal(st_bvh_to_humanoid_with_limits(&bvh, SK_NAMES_CMU, CMU_SCALE, &limits,
                                                    CLIP, &sk, &err),
                     EM_OK);
    assert_float_equal(sk.limit[sk.bone_joint[SK_LEFT_LOWER_LEG]].max_rad, 1.0, 1e-9);
    sk_skeleton_fini(&sk);
    sk_skeleton_fini(&limits);
    st_bvh_fini(&bvh);
}

static void
a_hierarchy_missing_required_joints_is_refused_naming_them(void **state)
{
    (void)state;
    char *text = test_read_file(CLIP);
    /* Rename the left knee and the right elbow so the map does not know them. */
    memcpy(strstr(text, "JOINT LeftLeg\n"), "JOINT LeftLeX\n", 14);
    memcpy(strstr(text, "JOINT RightForeArm\n"), "JOINT RightForeArX\n", 19);
    struct st_bvh bvh;
    struct sk_skeleton sk;
    struct em_error err = {{0}};
    assert_int_equal(st_bvh_parse(text, "renamed.bvh", &bvh, &err), EM_OK);
    assert_int_equal(st_bvh_to_humanoid(&bvh, SK_NAMES_CMU, CMU_SCALE, "renamed.bvh", &sk, &err),
                     EM_ERROR_PARSE);
    test_expect_message(err.message, "renamed.bvh", "\"rightLowerArm\"", "\"leftLowerLeg\"",
                        "CMU", (const char *)NULL);
    assert_null(sk.name);
    st_bvh_fini(&bvh);
    free(text);
}

const struct CMUnitTest *
humanoid_tests(size_t *out_count)
{
    static const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_cmu_clip_gives_a_humanoid_with_the_clips_bone_lengths),
        cmocka_unit_test(the_rest_pose_has_straight_legs_arms_straight_out_and_feet_on_the_floor),
        cmocka_unit_test(limits_can_come_from_another_humanoid),
        cmocka_unit_test(a_hierarchy_missing_required_joints_is_refused_naming_them),
    };
    *out_count = sizeof tests / sizeof tests[0];
    return tests;
}
