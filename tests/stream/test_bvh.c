/*
 * Reading BVH: the hierarchy with End Sites and channels in any order, forward kinematics
 * in the channels' file order, the unit guess, and the rejection of bad files with the
 * file, the line and what was wrong.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embody/m_math.h"
#include "embody/stream.h"
#include "test_stream.h"

/* Line numbers matter: the bad-file tests name them. */
static const char *const good_bvh =
    "HIERARCHY\n"                                                                  /* 1 */
    "ROOT root\n"                                                                  /* 2 */
    "{\n"                                                                          /* 3 */
    "\tOFFSET 1 2 3\n"                                                             /* 4 */
    "\tCHANNELS 6 Xposition Yposition Zposition Xrotation Yrotation Zrotation\n"   /* 5 */
    "\tJOINT arm\n"                                                                /* 6 */
    "\t{\n"                                                                        /* 7 */
    "\t\tOFFSET 0 0 1\n"                                                           /* 8 */
    "\t\tCHANNELS 3 Xrotation Yrotation Zrotation\n"                               /* 9 */
    "\t\tEnd Site\n"                                                               /* 10 */
    "\t\t{\n"                                                                      /* 11 */
    "\t\t\tOFFSET 0 0 1\n"                                                         /* 12 */
    "\t\t}\n"                                                                      /* 13 */
    "\t}\n"                                                                        /* 14 */
    "\tJOINT leg\n"                                                                /* 15 */
    "\t{\n"                                                                        /* 16 */
    "\t\tOFFSET 0 -1 0\n"                                                          /* 17 */
    "\t\tCHANNELS 2 Yrotation Xrotation\n"                                         /* 18 */
    "\t\tEnd Site\n"                                                               /* 19 */
    "\t\t{\n"                                                                      /* 20 */
    "\t\t\tOFFSET 0 -1 0\n"                                                        /* 21 */
    "\t\t}\n"                                                                      /* 22 */
    "\t}\n"                                                                        /* 23 */
    "}\n"                                                                          /* 24 */
    "MOTION\n"                                                                     /* 25 */
    "Frames: 3\n"                                                                  /* 26 */
    "Frame Time: 0.5\n"                                                            /* 27 */
    "0 0 0 0 0 0 0 0 0 0 0\n"                                                      /* 28 */
    "10 20 30 0 0 0 90 90 0 0 90\n"                                                /* 29 */
    "0 0 0 0 0 90 0 0 0 0 0\n";                                                    /* 30 */

/* `text` with the first `old` replaced by `new` (new allocation). */
static char *
replaced(const char *text, const char *old, const char *new)
{
    const char *at = strstr(text, old);
    if (!at)
        fail_msg("test text lacks \"%s\"", old);
    const size_t head = (size_t)(at - text), old_len = strlen(old), new_len = strlen(new);
    char *out = malloc(strlen(text) - old_len + new_len + 1);
    assert_non_null(out);
    memcpy(out, text, head);
    memcpy(out + head, new, new_len);
    strcpy(out + head + new_len, at + old_len);
    return out;
}

static enum em_result
parse(const char *text, struct st_bvh *out, struct em_error *err)
{
    char *copy = strdup(text);
    assert_non_null(copy);
    const enum em_result r = st_bvh_parse(copy, "bad.bvh", out, err);
    free(copy);
    return r;
}

static void
expect_rejected(char *text, const char *first, const char *second, const char *third)
{
    struct st_bvh bvh;
    struct em_error err = {{0}};
    const enum em_result r = parse(text, &bvh, &err);
    if (r == EM_OK) {
        st_bvh_fini(&bvh);
        fail_msg("accepted:\n%s", text);
    }
    assert_null(bvh.joints);
    assert_null(bvh.motion);
    test_expect_message(err.message, "bad.bvh", first, second, third, (const char *)NULL);
    free(text);
}

static void
expect_near3(const double *p, double x, double y, double z)
{
    if (fabs(p[0] - x) > 1e-9 || fabs(p[1] - y) > 1e-9 || fabs(p[2] - z) > 1e-9)
        fail_msg("(%g, %g, %g) != (%g, %g, %g)", p[0], p[1], p[2], x, y, z);
}

static void
the_hierarchy_is_read_with_end_sites_and_channels_in_file_order(void **state)
{
    (void)state;
    struct st_bvh bvh;
    struct em_error err = {{0}};
    if (parse(good_bvh, &bvh, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(bvh.joint_count, 5);
    assert_int_equal(bvh.channel_count, 11);
    assert_int_equal(bvh.frame_count, 3);
    assert_true(bvh.frame_time_s == 0.5);
    assert_int_equal(st_bvh_find(&bvh, "root"), 0);
    const int arm = st_bvh_find(&bvh, "arm"), arm_end = st_bvh_find(&bvh, "arm_End");
    const int leg = st_bvh_find(&bvh, "leg"), leg_end = st_bvh_find(&bvh, "leg_End");
    assert_true(arm == 1 && arm_end == 2 && leg == 3 && leg_end == 4);
    assert_int_equal(st_bvh_find(&bvh, "nobody"), -1);
    assert_true(bvh.joints[arm_end].is_end_site);
    assert_int_equal(bvh.joints[arm_end].channel_count, 0);
    assert_int_equal(bvh.joints[arm_end].parent, arm);
    assert_int_equal(bvh.joints[leg].parent, 0);
    assert_int_equal(bvh.joints[leg].first_channel, 9);
    assert_int_equal(bvh.joints[leg].channel[0], ST_BVH_YROT);
    assert_int_equal(bvh.joints[leg].channel[1], ST_BVH_XROT);
    assert_true(bvh.motion[1 * 11 + 10] == 90.0);
    st_bvh_fini(&bvh);
}

static void
forward_kinematics_applies_channel_rotations_in_file_order(void **state)
{
    (void)state;
    struct st_bvh bvh;
    struct em_error err = {{0}};
    assert_int_equal(parse(good_bvh, &bvh, &err), EM_OK);
    double p[5][3], q[5][4];
    /* Frame 1: the root moves by (10, 20, 30) from its offset; the arm's local rotation
     * is Rx(90) * Ry(90), which turns +Z into +X (Ry(90) * Rx(90) would give -Y); the
     * leg's is Rx(90) (its channels are Y then X), turning -Y into -Z. */
    st_bvh_frame_pose(&bvh, 1, p, q);
    expect_near3(p[0], 11, 22, 33);
    expect_near3(p[1], 11, 22, 34);
    expect_near3(p[2], 12, 22, 34);
    expect_near3(p[3], 11, 21, 33);
    expect_near3(p[4], 11, 21, 32);
    const float z_axis[3] = {0, 0, 1};
    const float arm_q[4] = {(float)q[1][0], (float)q[1][1], (float)q[1][2], (float)q[1][3]};
    float turned[3];
    m_quat_rotate(arm_q, z_axis, turned);
    assert_float_equal(turned[0], 1.0, 1e-6);
    /* Frame 2: the root turns 90 degrees about Z, carrying both children. */
    st_bvh_frame_pose(&bvh, 2, p, q);
    expect_near3(p[0], 1, 2, 3);
    expect_near3(p[2], 1, 2, 5);
    expect_near3(p[3], 2, 2, 3);
    expect_near3(p[4], 3, 2, 3);
    st_bvh_fini(&bvh);
}

static void
a_root_with_three_channels_stays_at_its_offset(void **state)
{
    (void)state;
    char *text = replaced(good_bvh, "CHANNELS 6 Xposition Yposition Zposition Xrotation",
                          "CHANNELS 3 Xrotation");
    char *rows = replaced(text, "10 20 30 0 0 0 90", "0 0 0 90");
    free(text);
    text = replaced(rows, "0 0 0 0 0 0 0 0 0 0 0\n", "0 0 0 0 0 0 0 0\n");
    free(rows);
    rows = replaced(text, "0 0 0 0 0 90 0 0 0 0 0\n", "0 0 90 0 0 0 0 0\n");
    free(text);
    struct st_bvh bvh;
    struct em_error err = {{0}};
    if (parse(rows, &bvh, &err) != EM_OK)
        fail_msg("%s", err.message);
    free(rows);
    double p[5][3], q[5][4];
    st_bvh_frame_pose(&bvh, 2, p, q);
    expect_near3(p[0], 1, 2, 3);
    expect_near3(p[3], 2, 2, 3);
    st_bvh_fini(&bvh);
}

static void
a_cmu_clip_keeps_its_bone_lengths_in_every_frame(void **state)
{
    (void)state;
    struct st_bvh bvh;
    struct em_error err = {{0}};
    if (st_bvh_load(EMBODY_SOURCE_DIR "/tests/data/mocap/cmu_127_17.bvh", &bvh, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(bvh.joint_count, 31 + 7); /* 31 joints and 7 End Sites */
    assert_int_equal(bvh.frame_count, 381);
    double(*p)[3] = malloc((size_t)bvh.joint_count * sizeof *p);
    double(*q)[4] = malloc((size_t)bvh.joint_count * sizeof *q);
    double lowest_toe_m = (double)INFINITY;
    const int toe = st_bvh_find(&bvh, "LeftToeBase");
    for (int f = 0; f < bvh.frame_count; ++f) {
        st_bvh_frame_pose(&bvh, f, p, q);
        for (int j = 1; j < bvh.joint_count; ++j) {
            const double *o = bvh.joints[j].offset;
            const int pa = bvh.joints[j].parent;
            const double want = sqrt(o[0] * o[0] + o[1] * o[1] + o[2] * o[2]);
            const double got = sqrt((p[j][0] - p[pa][0]) * (p[j][0] - p[pa][0]) +
                                    (p[j][1] - p[pa][1]) * (p[j][1] - p[pa][1]) +
                                    (p[j][2] - p[pa][2]) * (p[j][2] - p[pa][2]));
            assert_near(got, want, 1e-9);
        }
        lowest_toe_m = fmin(lowest_toe_m, p[toe][1] * 0.056444);
    }
    /* The clips stand on the floor (within a few centimetres). */
    assert_true(lowest_toe_m > -0.05 && lowest_toe_m < 0.1);
    free(p);
    free(q);
    st_bvh_fini(&bvh);
}

static void
the_unit_guess_tells_cmu_units_centimetres_and_metres_apart(void **state)
{
    (void)state;
    struct st_bvh bvh;
    struct em_error err = {{0}};
    assert_int_equal(st_bvh_load(EMBODY_SOURCE_DIR "/tests/data/mocap/cmu_49_03.bvh", &bvh,
                                 &err),
                     EM_OK);
    assert_true(st_bvh_guess_unit_scale(&bvh) == 0.056444);
    st_bvh_fini(&bvh);
    /* A body about 2 long, in metres and in centimetres. */
    char *m = replaced(good_bvh, "OFFSET 0 -1 0\n\t\tCHANNELS", "OFFSET 0 1.7 0\n\t\tCHANNELS");
    assert_int_equal(parse(m, &bvh, &err), EM_OK);
    assert_true(st_bvh_guess_unit_scale(&bvh) == 1.0);
    st_bvh_fini(&bvh);
    char *cm = replaced(m, "OFFSET 0 1.7 0", "OFFSET 0 170 0");
    assert_int_equal(parse(cm, &bvh, &err), EM_OK);
    assert_true(st_bvh_guess_unit_scale(&bvh) == 0.01);
    st_bvh_fini(&bvh);
    free(m);
    free(cm);
}

static void
a_bvh_without_its_sections_is_rejected(void **state)
{
    (void)state;
    expect_rejected(strdup(""), "empty file", "HIERARCHY", NULL);
    expect_rejected(replaced(good_bvh, "HIERARCHY\n", "\n"), "bad.bvh:2",
                    "expected HIERARCHY at the start", "got \"ROOT\"");
    char *cut = strdup(good_bvh);
    *strstr(cut, "MOTION") = '\0';
    expect_rejected(cut, "missing MOTION", NULL, NULL);
    expect_rejected(replaced(good_bvh, "MOTION", "MOTOIN"), "bad.bvh:25",
                    "expected MOTION after the hierarchy, got \"MOTOIN\"", NULL);
}

static void
unbalanced_braces_are_rejected_with_the_line(void **state)
{
    (void)state;
    expect_rejected(replaced(good_bvh, "\t}\n}\nMOTION", "\t}\nMOTION"), "bad.bvh:24",
                    "MOTION inside the block of joint \"root\" opened on line 3",
                    "unbalanced braces");
    expect_rejected(replaced(good_bvh, "}\nMOTION", "}\n}\nMOTION"), "bad.bvh:25",
                    "} with no open block", NULL);
    expect_rejected(replaced(good_bvh, "\tJOINT leg\n\t{", "\tJOINT leg\n"), "bad.bvh:17",
                    "expected { after JOINT \"leg\"", NULL);
}

static void
unknown_channels_and_bad_offsets_are_rejected_with_the_line(void **state)
{
    (void)state;
    expect_rejected(replaced(good_bvh, "Yrotation Xrotation", "Yrotation Wrotation"),
                    "bad.bvh:18", "joint \"leg\": unknown channel \"Wrotation\"", NULL);
    expect_rejected(replaced(good_bvh, "CHANNELS 2", "CHANNELS 7"), "bad.bvh:18",
                    "CHANNELS of joint \"leg\"", "got \"7\"");
    expect_rejected(replaced(good_bvh, "OFFSET 1 2 3", "OFFSET 1 2 x"), "bad.bvh:4",
                    "OFFSET of joint \"root\"", "expected a finite number, got \"x\"");
    expect_rejected(
        replaced(good_bvh, "OFFSET 0 0 1\n\t\tCHANNELS", "OFFSET 0 nan 1\n\t\tCHANNELS"),
        "bad.bvh:8", "OFFSET of joint \"arm\"", "got \"nan\"");
    expect_rejected(replaced(good_bvh, "\t\t\tOFFSET 0 0 1\n",
                             "\t\t\tOFFSET 0 0 1\n\t\t\tCHANNELS 1 Xrotation\n"),
                    "bad.bvh:13", "unexpected \"CHANNELS\" in joint \"arm_End\"", NULL);
    expect_rejected(replaced(good_bvh, "JOINT leg", "JOINT arm"), "bad.bvh:15",
                    "joint \"arm\" is defined twice", NULL);
}

static void
motion_rows_that_do_not_fit_the_hierarchy_are_rejected_with_the_line(void **state)
{
    (void)state;
    expect_rejected(replaced(good_bvh, "0 0 0 0 0 0 0 0 0 0 0\n", "0 0 0 0 0 0 0 0 0 0\n"),
                    "bad.bvh:28", "row 1 has 10 values, expected 11", NULL);
    expect_rejected(replaced(good_bvh, "0 0 0 0 0 0 0 0 0 0 0\n", "0 0 0 0 0 0 0 0 0 0 0 0\n"),
                    "bad.bvh:28", "row 1 has more than 11 values", NULL);
    expect_rejected(replaced(good_bvh, "10 20 30", "10 20 nan"), "bad.bvh:29",
                    "row 2, value 3", "expected a finite number, got \"nan\"");
    expect_rejected(replaced(good_bvh, "10 20 30", "10 20 3O"), "bad.bvh:29", "row 2, value 3",
                    "got \"3O\"");
    expect_rejected(replaced(good_bvh, "Frames: 3", "Frames: 4"), "bad.bvh:30",
                    "\"Frames: 4\" (line 26) but the file ends after 3 rows", "truncated");
    expect_rejected(replaced(good_bvh, "Frames: 3", "Frames: 2"), "bad.bvh:30",
                    "more rows than \"Frames: 2\" (line 26)", NULL);
    expect_rejected(replaced(good_bvh, "Frames: 3", "Frames: three"), "bad.bvh:26",
                    "Frames: expected a count of frames, got \"three\"", NULL);
    expect_rejected(replaced(good_bvh, "Frame Time: 0.5", "Frame Time: 0"), "bad.bvh:27",
                    "Frame Time: expected a positive number of seconds, got \"0\"", NULL);
    expect_rejected(replaced(good_bvh, "Frame Time: 0.5", "Frame Time: -0.01"), "bad.bvh:27",
                    "positive number of seconds", NULL);
}

static void
a_truncated_file_is_rejected_as_truncated(void **state)
{
    (void)state;
    /* Cut in the middle of the last row. */
    char *cut = strdup(good_bvh);
    *strstr(cut, " 90 0 0 0 0 0\n") = '\0';
    expect_rejected(cut, "bad.bvh:30", "row 3 has 5 values, expected 11", "truncated file?");
    /* Cut in the hierarchy. */
    cut = strdup(good_bvh);
    *strstr(cut, "\t\tCHANNELS 2") = '\0';
    expect_rejected(cut, "unexpected end of file in the block of joint \"leg\" opened on line 16",
                    NULL, NULL);
}

/* Issue 20: a root OFFSET of 1e300 was accepted (any other joint's refused), and Frame
 * Times of 1e300 or 1e-9 s became streams with absurd times. */
static void
absurd_offsets_on_any_joint_and_frame_times_are_rejected(void **state)
{
    (void)state;
    expect_rejected(replaced(good_bvh, "\tOFFSET 1 2 3\n", "\tOFFSET 1e300 2 3\n"), "bad.bvh:4",
                    "joint \"root\"", "beyond");
    expect_rejected(replaced(good_bvh, "\t\tOFFSET 0 -1 0\n", "\t\tOFFSET 0 -2e6 0\n"),
                    "bad.bvh:17", "joint \"leg\"", "beyond");
    expect_rejected(replaced(good_bvh, "Frame Time: 0.5", "Frame Time: 1e300"), "bad.bvh:27",
                    "Frame Time", "0.0001 to 1 seconds");
    expect_rejected(replaced(good_bvh, "Frame Time: 0.5", "Frame Time: 1e-09"), "bad.bvh:27",
                    "Frame Time", "0.0001 to 1 seconds");
    /* The writer writes no frame time the reader would refuse. */
    struct sk_skeleton sk;
    struct em_error err = {{0}};
    if (sk_skeleton_load_json(EMBODY_SOURCE_DIR "/config/humanoid.json", &sk, &err) != EM_OK)
        fail_msg("%s", err.message);
    struct st_bvh_writer w;
    char path[512];
    test_scratch_path("frame-time", "bvh", path, sizeof path);
    assert_int_equal(st_bvh_writer_open(path, &sk, 1e-9, &w, &err), EM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(st_bvh_writer_open(path, &sk, 1e290, &w, &err), EM_ERROR_INVALID_ARGUMENT);
    sk_skeleton_fini(&sk);
}

const struct CMUnitTest *
bvh_tests(size_t *out_count)
{
    static const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_hierarchy_is_read_with_end_sites_and_channels_in_file_order),
        cmocka_unit_test(forward_kinematics_applies_channel_rotations_in_file_order),
        cmocka_unit_test(a_root_with_three_channels_stays_at_its_offset),
        cmocka_unit_test(a_cmu_clip_keeps_its_bone_lengths_in_every_frame),
        cmocka_unit_test(the_unit_guess_tells_cmu_units_centimetres_and_metres_apart),
        cmocka_unit_test(a_bvh_without_its_sections_is_rejected),
        cmocka_unit_test(unbalanced_braces_are_rejected_with_the_line),
        cmocka_unit_test(unknown_channels_and_bad_offsets_are_rejected_with_the_line),
        cmocka_unit_test(motion_rows_that_do_not_fit_the_hierarchy_are_rejected_with_the_line),
        cmocka_unit_test(a_truncated_file_is_rejected_as_truncated),
        cmocka_unit_test(absurd_offsets_on_any_joint_and_frame_times_are_rejected),
    };
    *out_count = sizeof tests / sizeof tests[0];
    return tests;
}
