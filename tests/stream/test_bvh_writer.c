/*
 * Writing a humanoid's motion as BVH: read back with the BVH reader, forward kinematics
 * gives the poses' joint positions (also near gimbal lock), and the hierarchy gives the
 * same humanoid again.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embody/m_math.h"
#include "embody/skeleton.h"
#include "embody/stream.h"
#include "test_stream.h"

static void
load_default_humanoid(struct sk_skeleton *sk)
{
    struct em_error err = {{0}};
    if (sk_skeleton_load_json(EMBODY_SOURCE_DIR "/config/humanoid.json", sk, &err) != EM_OK)
        fail_msg("%s", err.message);
}

static float
random_in(float lo, float hi)
{
    return lo + (hi - lo) * (float)rand() / (float)RAND_MAX;
}

static void
random_rotation(float *q)
{
    float axis[3] = {random_in(-1, 1), random_in(-1, 1), random_in(-1, 1)};
    const float fallback[3] = {0, 1, 0};
    m_vec3_normalize_or(axis, fallback, axis);
    m_quat_from_axis_angle(axis, random_in(-M_PI_F, M_PI_F), q);
}

/* Rz(z) * Rx(x) * Ry(y): with x = +-90 degrees this is the gimbal lock of the writer's
 * Z, X, Y angles. */
static void
zxy_rotation(float z, float x, float y, float *q)
{
    const float ez[3] = {0, 0, 1}, ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0};
    float qz[4], qx[4], qy[4];
    m_quat_from_axis_angle(ez, z, qz);
    m_quat_from_axis_angle(ex, x, qx);
    m_quat_from_axis_angle(ey, y, qy);
    m_quat_mul(qz, qx, q);
    m_quat_mul(q, qy, q);
}

/* The BVH joint that stands for skeleton joint j: its name, or its parent's End Site. */
static int
bvh_joint_of(const struct st_bvh *bvh, const struct sk_skeleton *sk, int j)
{
    int b = st_bvh_find(bvh, sk->name[j]);
    if (b < 0 && sk->parent[j] >= 0) {
        char end[SK_NAME_MAX + 8];
        snprintf(end, sizeof end, "%s_End", sk->name[sk->parent[j]]);
        b = st_bvh_find(bvh, end);
    }
    if (b < 0)
        fail_msg("joint %s is not in the file", sk->name[j]);
    return b;
}

static void
written_motion_reads_back_with_the_poses_joint_positions(void **state)
{
    (void)state;
    srand(11);
    struct sk_skeleton sk;
    load_default_humanoid(&sk);
    struct sk_pose pose;
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    enum { FRAMES = 40 };
    const int n = sk.joint_count;
    float(*want)[3] = malloc((size_t)(FRAMES * n) * sizeof *want);
    char path[512];
    test_scratch_path("motion", "bvh", path, sizeof path);
    struct st_bvh_writer w;
    struct em_error err = {{0}};
    assert_int_equal(st_bvh_writer_open(path, &sk, 1.0 / 60.0, &w, &err), EM_OK);
    for (int f = 0; f < FRAMES; ++f) {
        m_vec3_set(pose.position_m[0], random_in(-2, 2), random_in(0.5f, 1.5f),
                   random_in(-2, 2));
        for (int j = 0; j < n; ++j) {
            if (f % 4 == 3) /* gimbal lock, both ways, and next to it */
                zxy_rotation(random_in(-3, 3), (j % 2 ? 1.0f : -1.0f) * M_PI_F / 2.0f *
                                                   (j % 3 ? 1.0f : 0.99999f),
                             random_in(-3, 3), pose.local_rotation[j]);
            else
                random_rotation(pose.local_rotation[j]);
        }
        sk_pose_forward_kinematics(&pose, &sk);
        memcpy(want[f * n], pose.position_m, (size_t)n * sizeof *want);
        assert_int_equal(st_bvh_writer_write(&w, &pose, &err), EM_OK);
    }
    assert_int_equal(st_bvh_writer_close(&w, &err), EM_OK);

    char *text = test_read_file(path);
    assert_non_null(
        strstr(text, "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation"));
    assert_non_null(strstr(text, "JOINT leftLowerArm"));
    assert_non_null(strstr(text, "CHANNELS 3 Zrotation Xrotation Yrotation"));
    free(text);
    struct st_bvh bvh;
    if (st_bvh_load(path, &bvh, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(bvh.frame_count, FRAMES);
    assert_true(bvh.frame_time_s == 1.0 / 60.0);
    double(*p)[3] = malloc((size_t)bvh.joint_count * sizeof *p);
    double(*q)[4] = malloc((size_t)bvh.joint_count * sizeof *q);
    for (int f = 0; f < FRAMES; ++f) {
        st_bvh_frame_pose(&bvh, f, p, q);
        for (int j = 0; j < n; ++j) {
            const int b = bvh_joint_of(&bvh, &sk, j);
            for (int k = 0; k < 3; ++k)
                if (fabs(p[b][k] - (double)want[f * n + j][k]) > 1e-5)
                    fail_msg("frame %d, %s: %.7f read back, %.7f written (axis %d)", f,
                             sk.name[j], p[b][k], (double)want[f * n + j][k], k);
        }
    }
    free(p);
    free(q);
    free(want);
    st_bvh_fini(&bvh);
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
    remove(path);
}

static void
a_written_hierarchy_reads_back_as_the_same_humanoid(void **state)
{
    (void)state;
    struct sk_skeleton sk, back;
    load_default_humanoid(&sk);
    struct sk_pose pose;
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    char path[512];
    test_scratch_path("hierarchy", "bvh", path, sizeof path);
    struct st_bvh_writer w;
    struct em_error err = {{0}};
    assert_int_equal(st_bvh_writer_open(path, &sk, 0.01, &w, &err), EM_OK);
    assert_int_equal(st_bvh_writer_write(&w, &pose, &err), EM_OK);
    assert_int_equal(st_bvh_writer_close(&w, &err), EM_OK);
    struct st_bvh bvh;
    assert_int_equal(st_bvh_load(path, &bvh, &err), EM_OK);
    if (st_bvh_to_humanoid(&bvh, SK_NAMES_VRM, 1.0, path, &back, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(back.joint_count, sk.joint_count);
    for (int j = 0; j < sk.joint_count; ++j) {
        const int b = sk_skeleton_find(&back, sk.name[j]);
        assert_true(b >= 0);
        for (int k = 0; k < 3; ++k)
            assert_float_equal(back.rest_position_m[b][k], sk.rest_position_m[j][k], 1e-6);
    }
    sk_skeleton_fini(&back);
    st_bvh_fini(&bvh);
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
    remove(path);
}

static void
a_humanoid_bone_that_is_a_leaf_keeps_its_name(void **state)
{
    (void)state;
    /* A humanoid from a CMU clip has no headTop: its head is a leaf. */
    struct st_bvh clip, bvh;
    struct sk_skeleton sk;
    struct em_error err = {{0}};
    const char *clip_path = EMBODY_SOURCE_DIR "/tests/data/mocap/cmu_127_31.bvh";
    assert_int_equal(st_bvh_load(clip_path, &clip, &err), EM_OK);
    assert_int_equal(st_bvh_to_humanoid(&clip, SK_NAMES_CMU, 0.056444, clip_path, &sk, &err),
                     EM_OK);
    struct sk_pose pose;
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    char path[512];
    test_scratch_path("leaf", "bvh", path, sizeof path);
    struct st_bvh_writer w;
    assert_int_equal(st_bvh_writer_open(path, &sk, 1.0 / 60.0, &w, &err), EM_OK);
    assert_int_equal(st_bvh_writer_write(&w, &pose, &err), EM_OK);
    assert_int_equal(st_bvh_writer_close(&w, &err), EM_OK);
    assert_int_equal(st_bvh_load(path, &bvh, &err), EM_OK);
    const int head = st_bvh_find(&bvh, "head");
    assert_true(head >= 0);
    assert_int_equal(bvh.joints[head].channel_count, 3);
    assert_true(st_bvh_find(&bvh, "leftToes_End") >= 0); /* leftToesEnd, an End Site */
    st_bvh_fini(&bvh);
    st_bvh_fini(&clip);
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
    remove(path);
}

static void
the_writer_refuses_what_it_cannot_write(void **state)
{
    (void)state;
    struct sk_skeleton sk;
    load_default_humanoid(&sk);
    struct sk_pose pose;
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    char path[512];
    test_scratch_path("refuse", "bvh", path, sizeof path);
    struct st_bvh_writer w;
    struct em_error err = {{0}};
    assert_int_equal(st_bvh_writer_open(path, &sk, 0.0, &w, &err), EM_ERROR_INVALID_ARGUMENT);
    test_expect_message(err.message, path, "frame time", (const char *)NULL);
    assert_int_equal(st_bvh_writer_open(path, &sk, 0.5, &w, &err), EM_OK);
    pose.local_rotation[3][0] = NAN;
    assert_int_equal(st_bvh_writer_write(&w, &pose, &err), EM_ERROR_INVALID_ARGUMENT);
    test_expect_message(err.message, "frame 0", sk.name[3], "not finite", (const char *)NULL);
    assert_int_equal(st_bvh_writer_close(&w, &err), EM_OK);
    assert_int_equal(st_bvh_writer_open("/nonexistent/dir/out.bvh", &sk, 0.5, &w, &err),
                     EM_ERROR_IO);
    test_expect_message(err.message, "/nonexistent/dir/out.bvh", "cannot write",
                        (const char *)NULL);
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
    remove(path);
}

const struct CMUnitTest *
bvh_writer_tests(size_t *out_count)
{
    static const struct CMUnitTest tests[] = {
        cmocka_unit_test(written_motion_reads_back_with_the_poses_joint_positions),
        cmocka_unit_test(a_written_hierarchy_reads_back_as_the_same_humanoid),
        cmocka_unit_test(a_humanoid_bone_that_is_a_leaf_keeps_its_name),
        cmocka_unit_test(the_writer_refuses_what_it_cannot_write),
    };
    *out_count = sizeof tests / sizeof tests[0];
    return tests;
}
