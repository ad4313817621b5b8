/*
 * Body trackers in the program, run as the real binary: `embody mocap2stream --trackers`
 * reproduces the reference tracker stream, tracker columns survive --replay and --record
 * unchanged, and a bad setup is refused by name.
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
#include "embody/stream.h"

#define TIMEOUT_MS 120000

static char g_tracker_stream[1024]; /* tests/data/streams-trackers/cmu_127_17.csv */
static char g_clip[1024];           /* tests/data/mocap/cmu_127_17.bvh */

static void
run_ok(const char *const *args, struct app_run_result *r)
{
    app_run(args, (const char *const[]){"XR_RUNTIME_JSON=/nonexistent/runtime.json", NULL},
            TIMEOUT_MS, r);
    app_run_expect_exit(r, 0);
}

static void
load_stream(const char *path, struct st_stream *out)
{
    struct em_error err = {{0}};
    if (st_stream_load(path, out, &err) != EM_OK)
        fail_msg("%s", err.message);
}

static bool
same_pose(const struct em_device_pose *x, const struct em_device_pose *y)
{
    return memcmp(x->pose.position_m, y->pose.position_m, sizeof(vec3)) == 0 &&
           memcmp(x->pose.orientation, y->pose.orientation, sizeof(versor)) == 0 &&
           x->flags == y->flags;
}

static void
mocap2stream_with_trackers_reproduces_the_reference(void **state)
{
    (void)state;
    char out[1024];
    app_run_scratch_path("trackers-11", "csv", out, sizeof out);
    struct app_run_result r;
    run_ok((const char *[]){"mocap2stream", g_clip, "--trackers", "11", "-o", out, "-q", NULL}, &r);
    app_run_result_fini(&r);
    struct st_stream made, reference;
    load_stream(out, &made);
    load_stream(g_tracker_stream, &reference);
    assert_int_equal(made.frame_count, reference.frame_count);
    double worst = 0.0;
    for (int i = 0; i < made.frame_count; ++i) {
        assert_int_equal(made.frames[i].tracker_present, EM_TRACKER_ALL);
        for (int t = 0; t < EM_TRACKER_COUNT; ++t)
            for (int k = 0; k < 3; ++k)
                worst =
                    fmax(worst, fabs((double)made.frames[i].tracker[t].pose.position_m[k] -
                                     (double)reference.frames[i].tracker[t].pose.position_m[k]));
    }
    if (!(worst <= 1e-5))
        fail_msg("tracker positions differ from the reference by %g m", worst);
    st_stream_fini(&made);
    st_stream_fini(&reference);

    /* A named subset writes only its groups. */
    run_ok((const char *[]){"mocap2stream", g_clip, "--trackers", "pelvis,chest", "-o", out, "-q",
                            NULL},
           &r);
    app_run_result_fini(&r);
    size_t size;
    char *text = app_run_read_file(out, &size);
    app_run_expect_text(text, "right_valid,pelvis_px");
    app_run_expect_text(text, "pelvis_valid,chest_px");
    assert_null(strstr(text, "left_foot"));
    free(text);
    remove(out);
}

static void
mocap2stream_refuses_an_unknown_tracker_setup(void **state)
{
    (void)state;
    struct app_run_result r;
    app_run((const char *[]){"mocap2stream", g_clip, "--trackers", "pelvis,tail", NULL}, NULL,
            TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 2);
    app_run_expect_text(r.err, "--trackers");
    app_run_expect_text(r.err, "\"tail\"");
    app_run_result_fini(&r);
}

static void
tracker_columns_round_trip_through_replay_and_record(void **state)
{
    (void)state;
    char b[1024];
    app_run_scratch_path("trackers-record", "csv", b, sizeof b);
    struct app_run_result r;
    run_ok((const char *[]){"--replay", g_tracker_stream, "--fast", "--no-window", "--record", b,
                            NULL},
           &r);
    app_run_result_fini(&r);
    struct st_stream sa, sb;
    load_stream(g_tracker_stream, &sa);
    load_stream(b, &sb);
    assert_int_equal(sa.frame_count, sb.frame_count);
    for (int i = 0; i < sa.frame_count; ++i) {
        assert_int_equal(sb.frames[i].tracker_present, EM_TRACKER_ALL);
        for (int t = 0; t < EM_TRACKER_COUNT; ++t)
            if (!same_pose(&sa.frames[i].tracker[t], &sb.frames[i].tracker[t]))
                fail_msg("row %d, %s: the recorded tracker differs from the file's", i + 2,
                         em_tracker_name((enum em_tracker)t));
    }
    st_stream_fini(&sa);
    st_stream_fini(&sb);
    remove(b);
}

int
main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH/TO/embody\n", argv[0]);
        return 2;
    }
    app_run_set_program(argv[1]);
    app_run_source_path("tests/data/streams-trackers/cmu_127_17.csv", g_tracker_stream,
                        sizeof g_tracker_stream);
    app_run_source_path("tests/data/mocap/cmu_127_17.bvh", g_clip, sizeof g_clip);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mocap2stream_with_trackers_reproduces_the_reference),
        cmocka_unit_test(mocap2stream_refuses_an_unknown_tracker_setup),
        cmocka_unit_test(tracker_columns_round_trip_through_replay_and_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
