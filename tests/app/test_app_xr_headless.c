/*
 * The program against the test OpenXR runtime without a window (the headless mode):
 * it calibrates by itself from the first seconds (no focus, so no buttons), logs each
 * kind of OpenXR special success once with -v, and with --openxr ends with status 1 when
 * the runtime goes away for good.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "app_run.h"
#include "embody/stream.h"

#define TIMEOUT_MS 60000
#define VIOLATION "test runtime: violation"

/* Writes a runtime script serving `stream` (a file of tests/data/streams) plus
 * `directives`; its path goes to `out`. */
static void
write_script(const char *tag, const char *stream, const char *directives, char *out, size_t size)
{
    char poses[1024], rel[256];
    snprintf(rel, sizeof rel, "tests/data/streams/%s", stream);
    app_run_source_path(rel, poses, sizeof poses);
    app_run_scratch_path(tag, "script", out, size);
    FILE *f = fopen(out, "w");
    assert_non_null(f);
    fprintf(f, "poses %s\n%s", poses, directives);
    fclose(f);
}

static void
run_with_runtime(const char *script, const char *const *args, struct app_run_result *r)
{
    char script_env[1200];
    snprintf(script_env, sizeof script_env, "EMBODY_TEST_RUNTIME_SCRIPT=%s", script);
    const char *const env[] = {"XR_RUNTIME_JSON=" EMBODY_TEST_RUNTIME_JSON, script_env, NULL};
    app_run(args, env, TIMEOUT_MS, r);
}

/* The number after `key` on the first line holding it, or fails. */
static double
number_after(const char *text, const char *key)
{
    const char *at = strstr(text, key);
    if (!at)
        fail_msg("no \"%s\" in:\n%s", key, text);
    return strtod(at + strlen(key), NULL);
}

static void
headless_openxr_calibrates_the_height_by_itself(void **state)
{
    (void)state;
    /* CMU subject 91, 1.48 m tall, walking, in a session that never gets focus (so no
     * buttons): the avatar must not stay 1.75 m. */
    char script[1024];
    write_script("headless-short", "cmu_91_17.csv", "manual_focus\n", script, sizeof script);
    struct app_run_result r;
    run_with_runtime(script, (const char *[]){"--openxr", "--no-window", "--frames", "240", NULL},
                     &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.err, "calibrating from the headset: the head held still gives");
    const double height = number_after(r.err, "calibrated: height ");
    if (!(height > 1.43 && height < 1.53))
        fail_msg("calibrated to %.2f m, subject 91 is 1.48 m\n%s", height, r.err);
    assert_int_equal(app_run_count_text(r.err, VIOLATION), 0);
    app_run_result_fini(&r);

    /* --height is kept. */
    run_with_runtime(
        script,
        (const char *[]){"--openxr", "--no-window", "--frames", "200", "--height", "1.8", NULL},
        &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.err, "the height stays 1.80 m (--height)");
    app_run_result_fini(&r);
    remove(script);
}

static void
special_successes_are_logged_once_per_kind(void **state)
{
    (void)state;
    char script[1024];
    write_script("headless-verbose", "cmu_14_04.csv", "manual_focus\n", script, sizeof script);
    struct app_run_result r;
    run_with_runtime(script,
                     (const char *[]){"--openxr", "--no-window", "--frames", "60", "-v", NULL}, &r);
    app_run_expect_exit(&r, 0);
    /* A headless session is never focused: every xrSyncActions says so. */
    assert_int_equal(app_run_count_text(r.err, "XR_SESSION_NOT_FOCUSED"), 1);
    assert_true(app_run_count_text(r.err, "XR_EVENT_UNAVAILABLE") <= 1);
    app_run_result_fini(&r);
    remove(script);
}

static void
a_runtime_gone_for_good_ends_openxr_with_status_1(void **state)
{
    (void)state;
    char script[1024];
    write_script("headless-gone", "cmu_14_04.csv",
                 "runtime_unavailable 100000\nat 20 instance_lost\n", script, sizeof script);
    struct app_run_result r;
    run_with_runtime(script, (const char *[]){"--openxr", "--no-window", NULL}, &r);
    app_run_expect_exit(&r, 1);
    app_run_expect_text(r.err, "did not come back");
    app_run_result_fini(&r);

    /* The runtime asking the program to exit is a normal end. */
    write_script("headless-exit", "cmu_14_04.csv", "at 20 exit\n", script, sizeof script);
    run_with_runtime(script, (const char *[]){"--openxr", "--no-window", NULL}, &r);
    app_run_expect_exit(&r, 0);
    app_run_result_fini(&r);
    remove(script);
}

/* The fingers hand tracking gives are recorded (--record) and a replay of the recording
 * gives the same fingers back to the program, which records them again identically. */
static void
recorded_fingers_replay_to_the_same_fingers(void **state)
{
    (void)state;
    char script[1024], first[1024], second[1024];
    write_script("fingers", "cmu_14_04.csv",
                 "at 0 hand right point\nat 60 hand right fist\nat 100 hand left open\n"
                 "at 130 hand right none\n",
                 script, sizeof script);
    app_run_scratch_path("fingers-live", "csv", first, sizeof first);
    app_run_scratch_path("fingers-replayed", "csv", second, sizeof second);
    remove(first);
    remove(second);
    struct app_run_result r;
    run_with_runtime(script,
                     (const char *[]){"--openxr", "--no-window", "--frames", "160", "--record",
                                      first, NULL},
                     &r);
    app_run_expect_exit(&r, 0);
    assert_int_equal(app_run_count_text(r.err, VIOLATION), 0);
    app_run_result_fini(&r);

    struct st_stream live = {0}, replayed = {0};
    struct em_error err = {{0}};
    if (st_stream_load(first, &live, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(live.finger_mask, ST_FINGERS_ALL);
    assert_non_null(live.fingers);
    /* The right hand points (its index straight, the others curled) once tracked. */
    const struct st_fingers *mid = &live.fingers[40];
    assert_true(mid->valid[1]);
    assert_true(fabsf(mid->angle_deg[1][HD_INDEX][1]) < 5.0f);
    assert_true(mid->angle_deg[1][HD_MIDDLE][1] > 60.0f);

    app_run((const char *[]){"--replay", first, "--fast", "--no-window", "--record", second,
                             NULL},
            NULL, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    app_run_result_fini(&r);
    if (st_stream_load(second, &replayed, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(replayed.frame_count, live.frame_count);
    assert_non_null(replayed.fingers);
    for (int k = 0; k < live.frame_count; ++k) {
        for (int h = 0; h < HD_HAND_COUNT; ++h) {
            assert_int_equal(replayed.fingers[k].valid[h], live.fingers[k].valid[h]);
            if (!live.fingers[k].valid[h])
                continue;
            if (memcmp(replayed.fingers[k].angle_deg[h], live.fingers[k].angle_deg[h],
                       sizeof live.fingers[k].angle_deg[h]) != 0)
                fail_msg("frame %d, hand %d: the replayed fingers differ", k, h);
        }
    }
    st_stream_fini(&live);
    st_stream_fini(&replayed);
    remove(first);
    remove(second);
    remove(script);
}

int
main(int argc, char **argv)
{
    if (!app_run_set_program_from_args(argc, argv))
        return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(headless_openxr_calibrates_the_height_by_itself),
        cmocka_unit_test(special_successes_are_logged_once_per_kind),
        cmocka_unit_test(a_runtime_gone_for_good_ends_openxr_with_status_1),
        cmocka_unit_test(recorded_fingers_replay_to_the_same_fingers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
