/*
 * Faults in the evaluation (src/eval/eval.h, src/fault/fault.h), on a clip of
 * tests/data/mocap: `--fault` changes the table by the fault's cost and the table says which
 * fault it ran; a fault naming a tracker the setup lacks is refused; a pelvis tracker that
 * drifted 30 degrees does not turn the whole body; a lost tracker falls back to the estimate
 * without it within 0.3 s.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "eval/eval.h"
#include "fault/fault.h"

#ifndef EMBODY_SOURCE_DIR
#define EMBODY_SOURCE_DIR "."
#endif
#define CLIP_DIR EMBODY_SOURCE_DIR "/tests/data/mocap"
#define WALK_CLIP CLIP_DIR "/cmu_05_04.bvh"

static double
known_mpjpe(const char *fault, unsigned modes, char *printed, size_t printed_size)
{
    struct ev_options o = {
        .clip_dir = CLIP_DIR,
        .json_path = "-",
        .modes = modes,
        .frame_limit = 300,
        .quiet = true,
        .trackers = ST_SETUP_6,
        .subjects = "05",
    };
    struct em_error err = {{0}};
    if (fault)
        assert_int_equal(flt_set_add(&o.faults, fault, "--fault", &err), EM_OK);
    struct ev_report r;
    assert_int_equal(ev_run(&o, &r, &err), EM_OK);
    assert_int_equal(r.failed_count, 0);
    const double mpjpe = r.means.scores[EV_KNOWN_BODY].mpjpe_cm[EV_GROUP_ALL];
    if (printed) {
        FILE *f = fmemopen(printed, printed_size, "w");
        assert_non_null(f);
        ev_report_print(&r, f);
        fclose(f);
    }
    ev_report_fini(&r);
    return mpjpe;
}

static void
the_eval_table_shows_a_faults_cost(void **state)
{
    (void)state;
    static char printed[1 << 16];
    const double clean = known_mpjpe(NULL, EV_MODE_KNOWN_BODY, NULL, 0);
    const double late = known_mpjpe("latency:all:150", EV_MODE_KNOWN_BODY, printed,
                                    sizeof printed);
    assert_true(isfinite(clean));
    /* 150 ms late on every device: the body is where the player was 150 ms ago */
    assert_true(late > clean + 0.3);
    assert_non_null(strstr(printed, "faults: latency:all:150 (seed 0)"));
}

static void
a_fault_on_a_tracker_the_setup_lacks_is_refused(void **state)
{
    (void)state;
    char *argv[] = {"eval", CLIP_DIR, "--fault", "drift:pelvis:30", "--json", "-", "--quiet"};
    struct ev_options o;
    bool help = false;
    struct em_error err = {{0}};
    assert_int_equal(ev_parse_options(7, argv, &o, &help, &err), EM_OK);
    assert_int_equal(o.faults.count, 1);
    assert_int_equal(ev_faults_check_setup(&o, &err), EM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "--fault drift:pelvis:30"));
    assert_non_null(strstr(err.message, "--trackers"));
    char *bad[] = {"eval", "--fault", "drift:pelvis"};
    assert_int_equal(ev_parse_options(3, bad, &o, &help, &err), EM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "--fault"));
    char *seed[] = {"eval", "--seed", "-3"};
    assert_int_equal(ev_parse_options(3, seed, &o, &help, &err), EM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "--seed"));
}

static void
a_drifting_pelvis_tracker_does_not_turn_the_whole_body(void **state)
{
    (void)state;
    struct ev_clip clip;
    struct em_error err = {{0}};
    assert_int_equal(ev_clip_load(WALK_CLIP, 0, &clip, &err), EM_OK);
    const uint32_t setups[1] = {ST_SETUP_4}; /* the table checks 6 and 11 too */
    for (int s = 0; s < 1; ++s) {
        /* the walk played back and forth for 5 minutes, the pelvis tracker drifting 6 deg a
         * minute: 30 deg off at the end */
        double hips = (double)NAN, shoulders = (double)NAN;
        assert_int_equal(ev_faults_drift_turn(&clip, setups[s], NULL, &hips, &shoulders, &err),
                         EM_OK);
        if (!(hips <= EV_DRIFT_TURN_TARGET_DEG && shoulders <= EV_DRIFT_TURN_TARGET_DEG))
            fail_msg("setup %s: a pelvis tracker 30 deg off turned the hips %.1f deg, the "
                     "shoulders %.1f deg",
                     "4", hips, shoulders);
    }
    ev_clip_fini(&clip);
}

static void
a_lost_pelvis_tracker_falls_back_to_the_three_point_estimate_within_0_3_s(void **state)
{
    (void)state;
    const char *clips[2] = {WALK_CLIP, CLIP_DIR "/cmu_127_31.bvh"};
    for (int c = 0; c < 2; ++c) {
        struct ev_clip clip;
        struct em_error err = {{0}};
        assert_int_equal(ev_clip_load(clips[c], 0, &clip, &err), EM_OK);
        double seconds = (double)NAN;
        assert_int_equal(ev_faults_fallback_s(&clip, ST_SETUP_4, ST_SETUP_4, NULL, &seconds, &err),
                         EM_OK);
        if (!(seconds <= EV_FALLBACK_TARGET_S))
            fail_msg("%s: the hips took %.2f s to come within %.0f cm of the 3-point estimate",
                     clips[c], seconds, EV_FALLBACK_NEAR_CM);
        ev_clip_fini(&clip);
    }
}

static void
the_back_and_forth_stream_is_continuous_and_keeps_the_setup(void **state)
{
    (void)state;
    struct ev_clip clip;
    struct em_error err = {{0}};
    assert_int_equal(ev_clip_load(WALK_CLIP, 120, &clip, &err), EM_OK);
    struct st_stream s;
    assert_int_equal(ev_stream_back_and_forth(&clip.stream, 10.0, ST_SETUP_4, &s, &err), EM_OK);
    const double step_s = (clip.stream.frames[119].time_s - clip.stream.frames[0].time_s) / 119;
    assert_int_equal(s.frame_count, (int)ceil(10.0 / step_s - 1e-6) + 1);
    for (int i = 1; i < s.frame_count; ++i) {
        assert_true(fabs(s.frames[i].time_s - s.frames[i - 1].time_s - step_s) < 1e-9);
        const float *p = s.frames[i].device[0].pose.position_m;
        const float *q = s.frames[i - 1].device[0].pose.position_m;
        assert_true(fabsf(p[0] - q[0]) + fabsf(p[2] - q[2]) < 0.1f); /* no jump at a turn */
        assert_int_equal(s.frames[i].tracker_present, ST_SETUP_4);
    }
    /* back at the start after one period */
    assert_memory_equal(s.frames[238].device, clip.stream.frames[0].device,
                        sizeof s.frames[0].device);
    st_stream_fini(&s);
    ev_clip_fini(&clip);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_eval_table_shows_a_faults_cost),
        cmocka_unit_test(a_fault_on_a_tracker_the_setup_lacks_is_refused),
        cmocka_unit_test(a_drifting_pelvis_tracker_does_not_turn_the_whole_body),
        cmocka_unit_test(a_lost_pelvis_tracker_falls_back_to_the_three_point_estimate_within_0_3_s),
        cmocka_unit_test(the_back_and_forth_stream_is_continuous_and_keeps_the_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
