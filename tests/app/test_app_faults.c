/*
 * The tracker bench in the live program (issue 28): `embody --fault KIND:DEVICE:AMOUNT`
 * puts a real tracker's fault into the frames of whatever source plays, so the body (and a
 * recording of what it was given) sees a lost, late or drifting tracker; a bad fault is
 * refused naming the option and what was expected; `--replay CLIP.bvh --trackers SETUP`
 * plays the stream made from a motion capture clip, the protocol's own.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "app_run.h"
#include "embody/stream.h"

#define TIMEOUT_MS 120000

static const char *const k_env[] = {"XR_RUNTIME_JSON=/nonexistent/runtime.json", NULL};

static void
a_replay_with_a_dropout_window_records_the_tracker_lost_in_it(void **state)
{
    (void)state;
    char stream[1024], out[1024];
    app_run_source_path("tests/data/streams-trackers/cmu_127_17.csv", stream, sizeof stream);
    app_run_scratch_path("faults", "csv", out, sizeof out);
    const char *args[] = {"--replay",
                          stream,
                          "--fast",
                          "--no-window",
                          "--quiet",
                          "--fault",
                          "dropout:pelvis:1-2s",
                          "--fault",
                          "noise:left_foot:5",
                          "--record",
                          out,
                          NULL};
    struct app_run_result r;
    app_run(args, k_env, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    app_run_result_fini(&r);
    struct st_stream played, original;
    struct em_error err = {{0}};
    assert_int_equal(st_stream_load(out, &played, &err), EM_OK);
    assert_int_equal(st_stream_load(stream, &original, &err), EM_OK);
    assert_int_equal(played.frame_count, original.frame_count);
    const double t0 = played.frames[0].time_s;
    int lost = 0, moved = 0;
    for (int i = 0; i < played.frame_count; ++i) {
        const struct em_tracking_frame *f = &played.frames[i];
        const double t = f->time_s - t0;
        const bool inside = t >= 1.0 + 1e-6 && t < 2.0 - 1e-6;
        const bool valid = em_device_pose_usable(&f->tracker[EM_TRACKER_PELVIS]);
        if (inside)
            assert_false(valid);
        if (t < 1.0 - 1e-6 || t >= 2.0 + 1e-6)
            assert_true(valid);
        lost += !valid;
        const float *p = f->tracker[EM_TRACKER_LEFT_FOOT].pose.position_m;
        const float *q = original.frames[i].tracker[EM_TRACKER_LEFT_FOOT].pose.position_m;
        moved += fabsf(p[0] - q[0]) > 1e-4f;
        /* the head is untouched */
        assert_true(fabsf(f->device[EM_DEVICE_HEAD].pose.position_m[1] -
                          original.frames[i].device[EM_DEVICE_HEAD].pose.position_m[1]) < 1e-5f);
    }
    assert_true(lost >= 55 && lost <= 62); /* one second of 60 Hz rows */
    assert_true(moved > played.frame_count * 3 / 4);
    st_stream_fini(&played);
    st_stream_fini(&original);
    unlink(out);
}

static void
a_bad_fault_is_refused_naming_the_option(void **state)
{
    (void)state;
    const char *args[] = {"--demo", "--no-window", "--fault", "latency:pelvis:soon", NULL};
    struct app_run_result r;
    app_run(args, k_env, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 2);
    app_run_expect_text(r.err, "--fault \"latency:pelvis:soon\"");
    app_run_expect_text(r.err, "latency in ms");
    app_run_result_fini(&r);
}

static void
a_clip_replays_as_the_protocols_stream_with_its_setups_trackers(void **state)
{
    (void)state;
    char clip[1024], reference[1024], out[1024];
    app_run_source_path("tests/data/mocap/cmu_05_04.bvh", clip, sizeof clip);
    app_run_source_path("tests/data/streams/cmu_05_04.csv", reference, sizeof reference);
    app_run_scratch_path("clip", "csv", out, sizeof out);
    const char *args[] = {"--replay",    clip,      "--trackers", "6", "--fast",
                          "--no-window", "--quiet", "--record",   out, NULL};
    struct app_run_result r;
    app_run(args, k_env, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    app_run_result_fini(&r);
    struct st_stream played, expected;
    struct em_error err = {{0}};
    assert_int_equal(st_stream_load(out, &played, &err), EM_OK);
    assert_int_equal(st_stream_load(reference, &expected, &err), EM_OK);
    assert_int_equal(played.frame_count, expected.frame_count);
    for (int i = 0; i < played.frame_count; ++i) {
        assert_int_equal(played.frames[i].tracker_present, ST_SETUP_6);
        for (int d = 0; d < EM_DEVICE_COUNT; ++d)
            for (int k = 0; k < 3; ++k)
                assert_true(fabsf(played.frames[i].device[d].pose.position_m[k] -
                                  expected.frames[i].device[d].pose.position_m[k]) < 1e-4f);
    }
    st_stream_fini(&played);
    st_stream_fini(&expected);
    unlink(out);
    /* another rig's clip plays too (CMU's bones under 3ds Max names; 3 points) */
    app_run_source_path("tests/data/mocap-extra/cmu_131_03.bvh", clip, sizeof clip);
    const char *other[] = {"--replay", clip, "--fast", "--no-window", "--frames", "60", NULL};
    app_run(other, k_env, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.out, "60 frames from replay");
    app_run_result_fini(&r);
    /* --trackers belongs to a clip */
    const char *bad[] = {"--replay", reference, "--trackers", "6", "--no-window", NULL};
    app_run(bad, k_env, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 2);
    app_run_expect_text(r.err, "--trackers: only with --replay CLIP.bvh");
    app_run_result_fini(&r);
}

int
main(int argc, char **argv)
{
    if (!app_run_set_program_from_args(argc, argv))
        return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_replay_with_a_dropout_window_records_the_tracker_lost_in_it),
        cmocka_unit_test(a_bad_fault_is_refused_naming_the_option),
        cmocka_unit_test(a_clip_replays_as_the_protocols_stream_with_its_setups_trackers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
