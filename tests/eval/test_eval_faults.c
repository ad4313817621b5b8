/*
 * Faults in the evaluation (include/embody/eval.h, include/embody/fault.h), on a clip of
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

#include "embody/eval.h"
#include "embody/fault.h"

#ifndef EMBODY_SOURCE_DIR
#define EMBODY_SOURCE_DIR "."
#endif
#define CLIP_DIR EMBODY_SOURCE_DIR "/tests/data/mocap"
#define WALK_CLIP CLIP_DIR "/cmu_05_04.bvh"
#define PI_D 3.14159265358979323846

static double
known_mpjpe(const char *fault, unsigned modes, char *printed, size_t printed_size)
{
    struct ev_options o = {
        .clip_dir = CLIP_DIR,
        .json_path = "-",
        .modes = modes,
        .frame_limit = 600,
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
    const double noisy = known_mpjpe("noise:trackers:30mm", EV_MODE_KNOWN_BODY, printed,
                                     sizeof printed);
    const double late = known_mpjpe("latency:all:150", EV_MODE_KNOWN_BODY, NULL, 0);
    assert_true(isfinite(clean));
    assert_true(noisy > clean + 0.3);
    assert_true(late > clean + 0.3);
    assert_non_null(strstr(printed, "faults: noise:trackers:30mm (seed 0)"));
    /* the same fault and seed: the same figure */
    assert_true(known_mpjpe("noise:trackers:30mm", EV_MODE_KNOWN_BODY, NULL, 0) == noisy);
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

#ifdef EMBODY_DEGRADES_GRACEFULLY
/* The clip with setup `mask`, its stream given `faults`, reconstructed (known body). */
static void
reconstruct(const struct ev_clip *clip, uint32_t mask, const struct flt_set *faults,
            struct ev_motion *out)
{
    struct st_stream s = clip->stream;
    s.frames = aligned_alloc(16, (size_t)s.frame_count * sizeof *s.frames);
    assert_non_null(s.frames);
    memcpy(s.frames, clip->stream.frames, (size_t)s.frame_count * sizeof *s.frames);
    for (int i = 0; i < s.frame_count; ++i)
        s.frames[i].tracker_present &= mask;
    struct em_error err = {{0}};
    assert_int_equal(flt_apply_frames(faults, s.frames, s.frame_count, &err), EM_OK);
    assert_int_equal(ev_clip_reconstruct_stream(clip, &s, EV_KNOWN_BODY, NULL, out, NULL, NULL,
                                                &err),
                     EM_OK);
    free(s.frames);
}

static double
heading_deg(const struct ev_motion *m, int f, enum ev_joint a, enum ev_joint b)
{
    const double *pa = m->position_m[f][a], *pb = m->position_m[f][b];
    return atan2(pa[2] - pb[2], pa[0] - pb[0]) * 180.0 / PI_D;
}

static double
turn_deg(const struct ev_motion *a, const struct ev_motion *b, int f, enum ev_joint l,
         enum ev_joint r)
{
    double d = fmod(fabs(heading_deg(a, f, l, r) - heading_deg(b, f, l, r)), 360.0);
    return d > 180.0 ? 360.0 - d : d;
}

static void
a_drifting_pelvis_tracker_does_not_turn_the_whole_body(void **state)
{
    (void)state;
    struct ev_clip clip;
    struct em_error err = {{0}};
    assert_int_equal(ev_clip_load(WALK_CLIP, 0, &clip, &err), EM_OK);
    const int n = clip.stream.frame_count;
    const double duration_s = clip.stream.frames[n - 1].time_s - clip.stream.frames[0].time_s;
    struct flt_set drift = {0};
    char text[64];
    snprintf(text, sizeof text, "drift:pelvis:%.3f", 30.0 * 60.0 / duration_s);
    assert_int_equal(flt_set_add(&drift, text, "--fault", &err), EM_OK);
    const struct flt_set none = {0};
    const uint32_t setups[2] = {ST_SETUP_4, ST_SETUP_6};
    for (int s = 0; s < 2; ++s) {
        struct ev_motion clean, drifted;
        reconstruct(&clip, setups[s], &none, &clean);
        reconstruct(&clip, setups[s], &drift, &drifted);
        /* at the end the tracker is 30 degrees off; the body's hips and shoulders and its
         * feet turn a third of that at most */
        double hips = 0.0, shoulders = 0.0;
        for (int f = n - 15; f < n; ++f) {
            hips += turn_deg(&drifted, &clean, f, EV_LEFT_UPPER_LEG, EV_RIGHT_UPPER_LEG) / 15;
            shoulders +=
                turn_deg(&drifted, &clean, f, EV_LEFT_UPPER_ARM, EV_RIGHT_UPPER_ARM) / 15;
        }
        if (!(hips < 10.0 && shoulders < 10.0))
            fail_msg("setup %s: a pelvis tracker 30 deg off turned the hips %.1f deg, the "
                     "shoulders %.1f deg",
                     s == 0 ? "4" : "6", hips, shoulders);
        ev_motion_fini(&clean);
        ev_motion_fini(&drifted);
    }
    ev_clip_fini(&clip);
}

static void
a_lost_pelvis_tracker_falls_back_to_the_three_point_estimate_within_0_3_s(void **state)
{
    (void)state;
    struct ev_clip clip;
    struct em_error err = {{0}};
    assert_int_equal(ev_clip_load(WALK_CLIP, 0, &clip, &err), EM_OK);
    const int n = clip.stream.frame_count, from = n / 2;
    struct flt_set lose = {0};
    char text[64];
    snprintf(text, sizeof text, "dropout:pelvis:%.4f-100000s",
             clip.stream.frames[from].time_s - clip.stream.frames[0].time_s - 1e-4);
    assert_int_equal(flt_set_add(&lose, text, "--fault", &err), EM_OK);
    const struct flt_set none = {0};
    struct ev_motion lost, three;
    reconstruct(&clip, ST_SETUP_4, &lose, &lost);
    reconstruct(&clip, ST_SETUP_3, &none, &three);
    const int after = from + (int)(0.3 * clip.truth.fps);
    for (int f = after; f < n; ++f) {
        double sum = 0.0;
        for (int j = 0; j < EV_JOINT_COUNT; ++j) {
            const double *p = lost.position_m[f][j], *q = three.position_m[f][j];
            sum += sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) +
                        (p[2] - q[2]) * (p[2] - q[2]));
        }
        if (100.0 * sum / EV_JOINT_COUNT > 1.0)
            fail_msg("frame %d (%.2f s after the loss): %.2f cm from the 3-point estimate", f,
                     (f - from) / clip.truth.fps, 100.0 * sum / EV_JOINT_COUNT);
    }
    ev_motion_fini(&lost);
    ev_motion_fini(&three);
    ev_clip_fini(&clip);
}

#endif

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_eval_table_shows_a_faults_cost),
        cmocka_unit_test(a_fault_on_a_tracker_the_setup_lacks_is_refused),
#ifdef EMBODY_DEGRADES_GRACEFULLY
        cmocka_unit_test(a_drifting_pelvis_tracker_does_not_turn_the_whole_body),
        cmocka_unit_test(a_lost_pelvis_tracker_falls_back_to_the_three_point_estimate_within_0_3_s),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
