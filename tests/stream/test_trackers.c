/*
 * Body trackers in streams (PROTOCOL.md section 2b): the reference stream with all eight
 * trackers is reproduced from its clip, tracker columns survive a write and a read, a
 * half-written tracker group is refused, and tracker setups are named and parsed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embody/stream.h"
#include "test_stream.h"

#define CMU_SCALE 0.056444

static double
pose_difference(const struct em_device_pose *a, const struct em_device_pose *b)
{
    double worst = 0.0;
    for (int k = 0; k < 3; ++k)
        worst = fmax(worst, fabs((double)a->pose.position_m[k] - (double)b->pose.position_m[k]));
    for (int k = 0; k < 4; ++k)
        worst = fmax(worst, fabs((double)a->pose.orientation[k] - (double)b->pose.orientation[k]));
    return worst;
}

static void
reference_tracker_stream_is_reproduced_from_its_clip(void **state)
{
    (void)state;
    char path[512];
    struct em_error err = {{0}};
    snprintf(path, sizeof path, "%s/tests/data/mocap/cmu_127_17.bvh", EMBODY_SOURCE_DIR);
    struct st_bvh bvh;
    if (st_bvh_load(path, &bvh, &err) != EM_OK)
        fail_msg("%s", err.message);
    struct st_stream made, reference;
    if (st_mocap_to_stream_trackers(&bvh, CMU_SCALE, ST_SETUP_11, path, &made, &err) != EM_OK)
        fail_msg("%s", err.message);
    st_bvh_fini(&bvh);
    snprintf(path, sizeof path, "%s/tests/data/streams-trackers/cmu_127_17.csv", EMBODY_SOURCE_DIR);
    if (st_stream_load(path, &reference, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(made.frame_count, reference.frame_count);
    double worst = 0.0;
    for (int i = 0; i < made.frame_count; ++i) {
        const struct em_tracking_frame *a = &made.frames[i], *b = &reference.frames[i];
        assert_int_equal(a->tracker_present, EM_TRACKER_ALL);
        assert_int_equal(b->tracker_present, EM_TRACKER_ALL);
        worst = fmax(worst, fabs(a->time_s - b->time_s));
        for (int d = 0; d < EM_DEVICE_COUNT; ++d)
            worst = fmax(worst, pose_difference(&a->device[d], &b->device[d]));
        for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
            assert_int_equal(a->tracker[t].flags, b->tracker[t].flags);
            worst = fmax(worst, pose_difference(&a->tracker[t], &b->tracker[t]));
        }
    }
    if (!(worst <= 1e-5))
        fail_msg("differs from the reference tracker stream by %g", worst);
    st_stream_fini(&made);
    st_stream_fini(&reference);
}

static const char k_header[] =
    "t,head_px,head_py,head_pz,head_qx,head_qy,head_qz,head_qw,head_valid,"
    "left_px,left_py,left_pz,left_qx,left_qy,left_qz,left_qw,left_valid,"
    "right_px,right_py,right_pz,right_qx,right_qy,right_qz,right_qw,right_valid";
static const char k_devices[] = "0,0,1.6,0,0,1,0,0,1,0.3,1,0.2,0,0,0,1,1,-0.3,1,0.2,0,0,0,1,1";

static void
tracker_columns_round_trip_through_the_writer(void **state)
{
    (void)state;
    /* Two trackers, in an order other than the writer's, one of them lost on row 2. */
    char text[2048];
    snprintf(text, sizeof text,
             "%s,left_foot_px,left_foot_py,left_foot_pz,left_foot_qx,left_foot_qy,"
             "left_foot_qz,left_foot_qw,left_foot_valid,pelvis_px,pelvis_py,pelvis_pz,"
             "pelvis_qx,pelvis_qy,pelvis_qz,pelvis_qw,pelvis_valid\n"
             "%s,0.1,0.08,0.05,0,0,0,1,1,0,1.02,-0.1,0,0.0871557,0,0.9961947,1\n"
             "%s,0.125,0.09,0.06,0,0,0,1,0,0,1.03,-0.1,0,0,0,1,1\n",
             k_header, k_devices, k_devices);
    /* Only the t column differs between the rows above; give them increasing times. */
    char *second = strchr(strchr(text, '\n') + 1, '\n') + 1;
    second[0] = '1';
    struct st_stream read_back, again;
    struct em_error err = {{0}};
    if (st_stream_parse(text, "two-trackers.csv", &read_back, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(read_back.frame_count, 2);
    const uint32_t want = EM_TRACKER_BIT(EM_TRACKER_PELVIS) | EM_TRACKER_BIT(EM_TRACKER_LEFT_FOOT);
    assert_int_equal(read_back.frames[0].tracker_present, want);
    const struct em_device_pose *foot = &read_back.frames[1].tracker[EM_TRACKER_LEFT_FOOT];
    assert_int_equal(foot->flags, 0u);
    assert_near(foot->pose.position_m[0], 0.125, 1e-7);
    assert_near(read_back.frames[0].tracker[EM_TRACKER_PELVIS].pose.orientation[1], 0.0871557,
                1e-7);
    char path[512];
    test_scratch_path("trackers", "csv", path, sizeof path);
    if (st_stream_save(path, &read_back, &err) != EM_OK)
        fail_msg("%s", err.message);
    char *written = test_read_file(path);
    /* The writer puts the groups in PROTOCOL order: pelvis before left_foot. */
    assert_non_null(strstr(written, "right_valid,pelvis_px"));
    assert_non_null(strstr(written, "pelvis_valid,left_foot_px"));
    if (st_stream_load(path, &again, &err) != EM_OK)
        fail_msg("%s", err.message);
    for (int i = 0; i < 2; ++i) {
        assert_int_equal(again.frames[i].tracker_present, want);
        for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
            assert_int_equal(again.frames[i].tracker[t].flags,
                             read_back.frames[i].tracker[t].flags);
            assert_true(pose_difference(&again.frames[i].tracker[t],
                                        &read_back.frames[i].tracker[t]) == 0.0);
        }
    }
    free(written);
    remove(path);
    st_stream_fini(&read_back);
    st_stream_fini(&again);
}

static void
a_tracker_the_header_has_but_a_frame_lacks_is_written_as_lost(void **state)
{
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, "%s\n%s\n", k_header, k_devices);
    struct st_stream s;
    struct em_error err = {{0}};
    if (st_stream_parse(text, "plain.csv", &s, &err) != EM_OK)
        fail_msg("%s", err.message);
    char path[512];
    test_scratch_path("tracker-mask", "csv", path, sizeof path);
    struct st_stream_writer w;
    assert_int_equal(st_stream_writer_open(path, &w, &err), EM_OK);
    w.tracker_mask = EM_TRACKER_BIT(EM_TRACKER_CHEST);
    assert_int_equal(st_stream_writer_write(&w, &s.frames[0], &err), EM_OK);
    assert_int_equal(st_stream_writer_close(&w, &err), EM_OK);
    struct st_stream back;
    if (st_stream_load(path, &back, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(back.frames[0].tracker_present, EM_TRACKER_BIT(EM_TRACKER_CHEST));
    assert_int_equal(back.frames[0].tracker[EM_TRACKER_CHEST].flags, 0u);
    remove(path);
    st_stream_fini(&s);
    st_stream_fini(&back);
}

static void
a_half_written_tracker_group_is_refused_by_name(void **state)
{
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, "%s,chest_px,chest_py,chest_pz,chest_valid\n%s,0,1,0,1\n", k_header,
             k_devices);
    struct st_stream s;
    struct em_error err = {{0}};
    assert_int_equal(st_stream_parse(text, "half.csv", &s, &err), EM_ERROR_PARSE);
    test_expect_message(err.message, "half.csv:1", "chest", "chest_qx", "chest_qw", NULL);
    assert_int_equal(s.frame_count, 0);
}

static void
unknown_groups_are_still_ignored_beside_trackers(void **state)
{
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, "%s,hip_px,left_toe_valid\n%s,5,1\n", k_header, k_devices);
    struct st_stream s;
    struct em_error err = {{0}};
    if (st_stream_parse(text, "other.csv", &s, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(s.frames[0].tracker_present, 0u);
    st_stream_fini(&s);
}

static void
tracker_setups_are_parsed_by_number_and_by_list(void **state)
{
    (void)state;
    uint32_t mask = 99;
    struct em_error err = {{0}};
    assert_int_equal(st_tracker_setup_parse("3", &mask, &err), EM_OK);
    assert_int_equal(mask, 0u);
    assert_int_equal(st_tracker_setup_parse("6", &mask, &err), EM_OK);
    assert_int_equal(mask, EM_TRACKER_BIT(EM_TRACKER_PELVIS) |
                               EM_TRACKER_BIT(EM_TRACKER_LEFT_FOOT) |
                               EM_TRACKER_BIT(EM_TRACKER_RIGHT_FOOT));
    assert_int_equal(st_tracker_setup_parse("11", &mask, &err), EM_OK);
    assert_int_equal(mask, EM_TRACKER_ALL);
    assert_int_equal(st_tracker_setup_parse("chest,right_elbow", &mask, &err), EM_OK);
    assert_int_equal(mask,
                     EM_TRACKER_BIT(EM_TRACKER_CHEST) | EM_TRACKER_BIT(EM_TRACKER_RIGHT_ELBOW));
    char name[128];
    st_tracker_setup_name(mask, name, sizeof name);
    assert_string_equal(name, "chest,right_elbow");
    st_tracker_setup_name(ST_SETUP_8, name, sizeof name);
    assert_string_equal(name, "8");
    assert_int_equal(st_tracker_setup_parse("pelvis,left_hip", &mask, &err),
                     EM_ERROR_INVALID_ARGUMENT);
    test_expect_message(err.message, "left_hip", "left_knee", NULL);
    assert_int_equal(st_tracker_setup_parse("5", &mask, &err), EM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(st_tracker_setup_parse("pelvis,", &mask, &err), EM_ERROR_INVALID_ARGUMENT);
}

static const struct CMUnitTest k_tests[] = {
    cmocka_unit_test(reference_tracker_stream_is_reproduced_from_its_clip),
    cmocka_unit_test(tracker_columns_round_trip_through_the_writer),
    cmocka_unit_test(a_tracker_the_header_has_but_a_frame_lacks_is_written_as_lost),
    cmocka_unit_test(a_half_written_tracker_group_is_refused_by_name),
    cmocka_unit_test(unknown_groups_are_still_ignored_beside_trackers),
    cmocka_unit_test(tracker_setups_are_parsed_by_number_and_by_list),
};

const struct CMUnitTest *
tracker_stream_tests(size_t *out_count)
{
    *out_count = sizeof k_tests / sizeof k_tests[0];
    return k_tests;
}
