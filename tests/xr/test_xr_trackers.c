/*
 * Body trackers through XR_HTCX_vive_tracker_interaction, served by the test runtime
 * through the real Khronos loader: trackers arrive with their roles and poses, come and go
 * with connection events, and the calls follow the specification (the runtime checks).
 * Runtimes without the extension are the other xr tests' (no tracker directive).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "xr/oxr_common.h"
#include "xr/xr.h"
#include "xr_test_util.h"

#define MAX_CALLS 2000

static struct in_source *g_src;

static int
destroy_leftover_source(void **state)
{
    (void)state;
    in_source_destroy(&g_src);
    return 0;
}

static void
trackers_arrive_with_their_roles_and_come_and_go(void **state)
{
    (void)state;
    enum { N = 30 };
    struct em_tracking_frame rows[N], got[N];
    xt_make_frames(rows, N, 29);
    char script[1024];
    xt_write_script("trackers", rows, N,
                    "tracker waist 0.1 1.0 -0.2\n"
                    "tracker left_foot 0.15 0.08 0.05\n"
                    "tracker left_knee 0.12 0.5 0.1\n"
                    "at 0 tracker_disconnect left_knee\n"
                    "at 10 tracker_disconnect left_foot\n"
                    "at 20 tracker_connect left_knee",
                    script, sizeof script);
    xt_use_runtime(script);
    const struct oxr_desc desc = {.headless = true, .headless_rate_hz = 1000.0f};
    struct em_error err = {{0}};
    if (oxr_source_create(&desc, &g_src, &err) != EM_OK)
        fail_msg("oxr_source_create: %s", err.message);
    assert_int_equal(xt_pull_frames(g_src, got, N, MAX_CALLS, NULL), N);
    const uint32_t waist = EM_TRACKER_BIT(EM_TRACKER_PELVIS);
    const uint32_t foot = EM_TRACKER_BIT(EM_TRACKER_LEFT_FOOT);
    const uint32_t knee = EM_TRACKER_BIT(EM_TRACKER_LEFT_KNEE);
    for (int k = 0; k < N; ++k) {
        const uint32_t want = waist | (k < 10 ? foot : 0u) | (k >= 20 ? knee : 0u);
        if (got[k].tracker_present != want)
            fail_msg("frame %d: trackers 0x%x, expected 0x%x", k, got[k].tracker_present, want);
        const struct em_device_pose *w = &got[k].tracker[EM_TRACKER_PELVIS];
        assert_int_equal(w->flags, EM_POSE_ALL_VALID);
        assert_true(w->pose.position_m[0] == 0.1f && w->pose.position_m[1] == 1.0f &&
                    w->pose.position_m[2] == -0.2f);
        assert_true(w->pose.orientation[3] == 1.0f);
        if (k >= 20)
            assert_true(got[k].tracker[EM_TRACKER_LEFT_KNEE].pose.position_m[1] == 0.5f);
        /* Head and hands as without trackers. */
        assert_int_equal(got[k].device[EM_DEVICE_HEAD].flags, EM_POSE_ALL_VALID);
    }
    struct oxr_status status;
    oxr_source_get_status(g_src, &status);
    assert_true(status.profiles_accepted >= 1);
    xt_assert_no_violations();
    in_source_destroy(&g_src);
}

/* The program and the layer turn a location into a pose alike (oxr_common.c): what is not
 * VALID keeps the last value, without its flags. */
static void
a_location_without_valid_bits_keeps_the_last_pose_without_flags(void **state)
{
    (void)state;
    const struct em_device_pose last = {
        .pose = {.orientation = {0.0f, 0.6f, 0.0f, 0.8f}, .position_m = {0.1f, 1.5f, -0.3f}},
        .flags = EM_POSE_ALL_VALID};
    XrSpaceLocation loc = {
        .type = XR_TYPE_SPACE_LOCATION,
        .locationFlags = XR_SPACE_LOCATION_ORIENTATION_VALID_BIT,
        .pose = {.orientation = {0.0f, 0.0f, 0.0f, 1.0f}, .position = {9.0f, 9.0f, 9.0f}}};
    struct em_device_pose out;
    oxr_location_to_pose(&loc, &last, &out);
    assert_int_equal(out.flags, EM_POSE_ORIENTATION_VALID);
    assert_true(out.pose.orientation[1] == 0.0f && out.pose.orientation[3] == 1.0f);
    assert_true(out.pose.position_m[0] == 0.1f && out.pose.position_m[1] == 1.5f &&
                out.pose.position_m[2] == -0.3f);
    loc.locationFlags = 0;
    oxr_location_to_pose(&loc, NULL, &out); /* nothing known: identity at the origin */
    assert_int_equal(out.flags, 0);
    assert_true(out.pose.orientation[3] == 1.0f && out.pose.position_m[1] == 0.0f);
}

static void
a_valid_location_that_is_not_usable_counts_as_not_valid(void **state)
{
    (void)state;
    const XrSpaceLocationFlags all =
        XR_SPACE_LOCATION_ORIENTATION_VALID_BIT | XR_SPACE_LOCATION_POSITION_VALID_BIT |
        XR_SPACE_LOCATION_ORIENTATION_TRACKED_BIT | XR_SPACE_LOCATION_POSITION_TRACKED_BIT;
    const XrSpaceLocation loc = {
        .type = XR_TYPE_SPACE_LOCATION,
        .locationFlags = all,
        .pose = {.orientation = {0.0f, 0.0f, 0.0f, 0.5f}, .position = {NAN, 1.0f, 0.0f}}};
    struct em_device_pose out;
    oxr_location_to_pose(&loc, NULL, &out);
    assert_int_equal(out.flags, 0);
    assert_true(out.pose.orientation[3] == 1.0f && out.pose.position_m[0] == 0.0f);
}

#define XT_TEST(test) cmocka_unit_test_teardown(test, destroy_leftover_source)

int
main(void)
{
    const struct CMUnitTest tests[] = {
        XT_TEST(trackers_arrive_with_their_roles_and_come_and_go),
        XT_TEST(a_location_without_valid_bits_keeps_the_last_pose_without_flags),
        XT_TEST(a_valid_location_that_is_not_usable_counts_as_not_valid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
