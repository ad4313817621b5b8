/*
 * The program with an OpenXR runtime: the real binary against the xr module's scripted
 * test runtime (tests/xr/runtime, loaded by the Khronos loader through XR_RUNTIME_JSON).
 * The runtime serves a stream's rows as the headset and controllers; the program must
 * take them as they come (recorded bit for bit), act on a controller's calibrate button
 * (measuring the player, or in LOCAL space finding the floor), draw the headset view
 * without breaking the specification (the runtime prints any violation), and fall back
 * to the demo, or fail for --openxr, when there is no headset.
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

#include "app_run.h"
#include "embody/body.h"
#include "embody/stream.h"

#define TIMEOUT_MS 60000
#define VIOLATION "test runtime: violation"

static char g_stream[1024];

/* Writes a runtime script serving g_stream plus `directives`; its path goes to `out`. */
static void
write_script(const char *tag, const char *directives, char *out, size_t size)
{
    app_run_scratch_path(tag, "script", out, size);
    FILE *f = fopen(out, "w");
    assert_non_null(f);
    fprintf(f, "poses %s\n%s", g_stream, directives);
    fclose(f);
}

/* Runs the program against the test runtime playing `script`. `extra_env` (may be NULL)
 * is one more environment change. */
static void
run_with_runtime(const char *script, const char *const *args, const char *extra_env,
                 struct app_run_result *r)
{
    char script_env[1200];
    snprintf(script_env, sizeof script_env, "EMBODY_TEST_RUNTIME_SCRIPT=%s", script);
    const char *const env[] = {"XR_RUNTIME_JSON=" EMBODY_TEST_RUNTIME_JSON, script_env, extra_env,
                               NULL};
    app_run(args, env, TIMEOUT_MS, r);
}

static bool
poses_equal(const struct em_tracking_frame *a, const struct em_tracking_frame *b)
{
    for (int d = 0; d < EM_DEVICE_COUNT; ++d)
        if (memcmp(a->device[d].pose.position_m, b->device[d].pose.position_m, sizeof(vec3)) ||
            memcmp(a->device[d].pose.orientation, b->device[d].pose.orientation, sizeof(versor)) ||
            a->device[d].flags != b->device[d].flags)
            return false;
    return true;
}

static void
openxr_frames_drive_the_program_and_record_exactly(void **state)
{
    (void)state;
    char script[1024], recorded[1024];
    write_script("headless", "", script, sizeof script);
    app_run_scratch_path("openxr-record", "csv", recorded, sizeof recorded);
    struct app_run_result r;
    run_with_runtime(
        script,
        (const char *[]){"--openxr", "--no-window", "--frames", "60", "--record", recorded, NULL},
        NULL, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.out, "60 frames from OpenXR");
    assert_int_equal(app_run_count_text(r.err, VIOLATION), 0);
    app_run_result_fini(&r);

    /* The recording is a run of the served rows, every float as the runtime gave it. */
    struct st_stream served, got;
    struct em_error err = {{0}};
    if (st_stream_load(g_stream, &served, &err) != EM_OK ||
        st_stream_load(recorded, &got, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(got.frame_count, 60);
    int first = -1;
    for (int i = 0; i < served.frame_count && first < 0; ++i)
        if (poses_equal(&served.frames[i], &got.frames[0]))
            first = i;
    if (first < 0)
        fail_msg("the first recorded frame is none of the served rows");
    assert_true(first + got.frame_count <= served.frame_count);
    for (int i = 0; i < got.frame_count; ++i)
        if (!poses_equal(&served.frames[first + i], &got.frames[i]))
            fail_msg("recorded row %d is not served row %d", i, first + i);
    st_stream_fini(&served);
    st_stream_fini(&got);
    remove(recorded);
}

static void
a_controller_button_calibrates(void **state)
{
    (void)state;
    char script[1024];
    write_script("button",
                 "profile /interaction_profiles/valve/index_controller\n"
                 "at 20 press /user/hand/right/input/a/click\n"
                 "at 23 release /user/hand/right/input/a/click\n",
                 script, sizeof script);
    struct app_run_result r;
    run_with_runtime(script, (const char *[]){"--openxr", "--no-window", "--frames", "40", NULL},
                     NULL, &r);
    app_run_expect_exit(&r, 0);
    /* Once per press, with the height measured from the headset. */
    if (app_run_count_text(r.err, "calibrated: height ") != 1)
        fail_msg("expected one calibration, got:\n%s", r.err);
    app_run_result_fini(&r);
}

/* The recorded head height minus the served one, row by row. */
static double
height_offset(const struct st_stream *recorded, const struct st_stream *served, int row)
{
    return (double)recorded->frames[row].device[EM_DEVICE_HEAD].pose.position_m[1] -
           (double)served->frames[row].device[EM_DEVICE_HEAD].pose.position_m[1];
}

static void
without_stage_the_calibrate_button_finds_the_floor(void **state)
{
    (void)state;
    /* LOCAL's origin 1.2 m above the floor; the program first takes it to be 1.6 m. */
    char script[1024], recorded[1024];
    write_script("local",
                 "no_stage\nlocal_origin_y 1.2\n"
                 "profile /interaction_profiles/valve/index_controller\n"
                 "at 10 press /user/hand/left/input/a/click\n"
                 "at 12 release /user/hand/left/input/a/click\n",
                 script, sizeof script);
    app_run_scratch_path("local-record", "csv", recorded, sizeof recorded);
    struct app_run_result r;
    run_with_runtime(
        script,
        (const char *[]){"--openxr", "--no-window", "--frames", "40", "--record", recorded, NULL},
        NULL, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.err, "floor set ");
    app_run_expect_text(r.out, "LOCAL space");
    assert_null(strstr(r.err, "calibrated: height")); /* the player's height is kept */
    app_run_result_fini(&r);

    struct st_stream served, got;
    struct em_error err = {{0}};
    if (st_stream_load(g_stream, &served, &err) != EM_OK ||
        st_stream_load(recorded, &got, &err) != EM_OK)
        fail_msg("%s", err.message);
    /* Rows are served from the first: the head is raised by the assumed floor, 1.6 - 1.2 m,
     * then, from the row after the press, by whatever puts the pressing row's headset at
     * the eye height of a 1.75 m avatar. */
    const double before = height_offset(&got, &served, 0);
    assert_true(fabs(before - 0.4) < 1e-5);
    int change = -1;
    for (int i = 1; i < got.frame_count && change < 0; ++i)
        if (fabs(height_offset(&got, &served, i) - before) > 1e-3)
            change = i;
    assert_true(change > 0);
    const double after = height_offset(&got, &served, change);
    for (int i = change; i < got.frame_count; ++i)
        assert_true(fabs(height_offset(&got, &served, i) - after) < 1e-5);
    const double eye_at_press =
        (double)served.frames[change - 1].device[EM_DEVICE_HEAD].pose.position_m[1] + after;
    if (!(fabs(eye_at_press - (double)body_eye_height_for(1.75f)) < 1e-4))
        fail_msg("the headset was put at %.4f m, expected %.4f m", eye_at_press,
                 (double)body_eye_height_for(1.75f));
    st_stream_fini(&served);
    st_stream_fini(&got);
    remove(recorded);
}

static void
the_headset_view_is_drawn_with_the_window(void **state)
{
    (void)state;
    const char *display = getenv("DISPLAY");
    if (!display || !display[0])
        skip(); /* CI runs this under Xvfb */
    char script[1024], shot[1024];
    write_script("window", "", script, sizeof script);
    app_run_scratch_path("openxr-window", "png", shot, sizeof shot);
    remove(shot);
    struct app_run_result r;
    /* In the sanitizer build: Mesa's driver, unloaded when the window closes, leaves
     * allocations LeakSanitizer reports from an "<unknown module>" (see
     * tests/render/render_check.h); no suppression can name it. The window's path is
     * leak-checked in process by test_app_render, which keeps the driver loaded. */
    run_with_runtime(script,
                     (const char *[]){"--openxr", "--frames", "30", "--screenshot", shot, NULL},
                     "ASAN_OPTIONS=detect_leaks=0", &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.out, "30 frames from OpenXR");
    if (app_run_count_text(r.err, VIOLATION) != 0)
        fail_msg("the runtime saw specification violations:\n%s", r.err);
    size_t size = 0;
    free(app_run_read_file(shot, &size));
    assert_true(size > 1000);
    app_run_result_fini(&r);
    remove(shot);
}

static void
no_headset_sends_the_main_job_to_the_demo_and_fails_openxr(void **state)
{
    (void)state;
    char script[1024];
    write_script("no-hmd", "no_hmd\n", script, sizeof script);
    struct app_run_result r;
    run_with_runtime(script, (const char *[]){"--no-window", "--frames", "10", NULL}, NULL, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.err, "no headset: the OpenXR runtime");
    app_run_expect_text(r.err, "has no headset connected");
    app_run_expect_text(r.out, "10 frames from the demo");
    app_run_result_fini(&r);

    run_with_runtime(script, (const char *[]){"--openxr", "--no-window", "--frames", "10", NULL},
                     NULL, &r);
    app_run_expect_exit(&r, 1);
    app_run_expect_text(r.err, "--openxr: the OpenXR runtime");
    app_run_result_fini(&r);
}

int
main(int argc, char **argv)
{
    if (!app_run_set_program_from_args(argc, argv))
        return 2;
    app_run_source_path("tests/data/streams/cmu_14_04.csv", g_stream, sizeof g_stream);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(openxr_frames_drive_the_program_and_record_exactly),
        cmocka_unit_test(a_controller_button_calibrates),
        cmocka_unit_test(without_stage_the_calibrate_button_finds_the_floor),
        cmocka_unit_test(the_headset_view_is_drawn_with_the_window),
        cmocka_unit_test(no_headset_sends_the_main_job_to_the_demo_and_fails_openxr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
