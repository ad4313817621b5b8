/*
 * The body on the shipped prior with real motion and the clip's own skeleton (issue 17):
 * a bad sample is forgotten, feet face the heading after turning on the spot, a person
 * sitting down counts as sitting, and no foot goes under the floor.
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

#include "embody/body.h"
#include "embody/eval.h"
#include "embody/m_math.h"
#include "embody/prior.h"

#define CLIPS EMBODY_SOURCE_DIR "/tests/data/mocap"
#define SHIPPED EMBODY_SOURCE_DIR "/" PR_DEFAULT_MODEL

static void
load_prior(struct pr_model *model)
{
    struct em_error err = {{0}};
    if (pr_model_load(SHIPPED, model, &err) != EM_OK)
        fail_msg("%s", err.message);
}

/* A clip of head and hands only (no body trackers). */
static void
load_clip(const char *path, struct ev_clip *clip)
{
    struct em_error err = {{0}};
    if (ev_clip_load(path, 0, clip, &err) != EM_OK || ev_trackers_select(clip, 0, &err) != EM_OK)
        fail_msg("%s", err.message);
}

static double
largest_joint_distance(const struct ev_motion *a, const struct ev_motion *b, int row)
{
    double worst = 0.0;
    for (int j = 0; j < EV_JOINT_COUNT; ++j) {
        const double *p = a->position_m[row][j], *q = b->position_m[row][j];
        worst = fmax(worst, sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) +
                                 (p[2] - q[2]) * (p[2] - q[2])));
    }
    return worst;
}

/* One head sample at 1e20 m in a real walk: the body is back to the clean stream's pose
 * within 0.5 s and stays there (the prior kept it in its history for a second, and the
 * feet held 1.2 m to the side for good). */
static void
an_absurd_head_sample_in_a_real_walk_is_forgotten_within_half_a_second(void **state)
{
    (void)state;
    struct pr_model model;
    load_prior(&model);
    struct ev_clip clip;
    load_clip(CLIPS "/cmu_91_04.bvh", &clip);
    struct em_error err = {{0}};
    struct ev_motion clean, bad;
    assert_int_equal(ev_clip_reconstruct_prior(&clip, EV_KNOWN_BODY, &model, &clean, NULL, &err),
                     EM_OK);
    const int bad_row = clip.stream.frame_count / 2, half_s = 30;
    struct em_tracking_frame kept = clip.stream.frames[bad_row];
    clip.stream.frames[bad_row].device[EM_DEVICE_HEAD].pose.position_m[0] = 1e20f;
    assert_int_equal(ev_clip_reconstruct_stream(&clip, &clip.stream, EV_KNOWN_BODY, &model, &bad,
                                                NULL, NULL, &err),
                     EM_OK);
    clip.stream.frames[bad_row] = kept;
    for (int row = bad_row + half_s; row < bad_row + 4 * half_s; ++row) {
        const double off = largest_joint_distance(&clean, &bad, row);
        if (off > 0.05)
            fail_msg("row %d (%.2f s after the bad sample): a joint %.1f cm from the clean run",
                     row, (row - bad_row) / 60.0, 100.0 * off);
    }
    ev_motion_fini(&clean);
    ev_motion_fini(&bad);
    ev_clip_fini(&clip);
    pr_model_fini(&model);
}

/* A player standing still in a real clip (its own skeleton) turns on the spot, five
 * quarter turns at 90 deg/s each way, then stands 3 s: both feet end within 20 degrees of
 * where the head looks (they were left up to 100 degrees behind, turned with the prior's
 * held feet). */
static void
after_turning_on_the_spot_the_feet_face_the_heading(void **state)
{
    (void)state;
    struct pr_model model;
    load_prior(&model);
    static const char *const clips[] = {CLIPS "/cmu_91_04.bvh", CLIPS "/cmu_14_04.bvh"};
    for (size_t c = 0; c < sizeof clips / sizeof clips[0]; ++c) {
        struct ev_clip clip;
        load_clip(clips[c], &clip);
        struct ev_body_checks checks;
        ev_body_checks_init(&checks);
        struct em_error err = {{0}};
        assert_int_equal(ev_clip_turn_in_place(&clip, EV_KNOWN_BODY, &model, &checks, &err),
                         EM_OK);
        if (!(checks.turn_feet_deg <= 20.0))
            fail_msg("%s, from row %d: a foot %.1f degrees from the heading", clips[c],
                     checks.turn_row, checks.turn_feet_deg);
        ev_clip_fini(&clip);
    }
    pr_model_fini(&model);
}

/* The kneeling boxer of cmu_17_10 (its own skeleton, the prior): no foot part goes under
 * the floor by more than 1 cm on any frame (the toes went 16 cm through it at row 1068),
 * and no other joint either. */
static void
a_kneeling_boxer_keeps_the_feet_above_the_floor(void **state)
{
    (void)state;
    struct pr_model model;
    load_prior(&model);
    struct ev_clip clip;
    load_clip(CLIPS "/cmu_17_10.bvh", &clip);
    struct ev_checks checks;
    ev_checks_init(&checks);
    struct ev_motion ours;
    struct em_error err = {{0}};
    assert_int_equal(ev_clip_reconstruct_stream(&clip, &clip.stream, EV_KNOWN_BODY, &model, &ours,
                                                NULL, &checks, &err),
                     EM_OK);
    if (!(checks.body.foot_floor_depth_m <= 0.01 && checks.body.floor_depth_m <= 0.01))
        fail_msg("a foot %.1f cm and a joint %.1f cm under the floor",
                 100.0 * checks.body.foot_floor_depth_m, 100.0 * checks.body.floor_depth_m);
    ev_motion_fini(&ours);
    ev_clip_fini(&clip);
    pr_model_fini(&model);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_absurd_head_sample_in_a_real_walk_is_forgotten_within_half_a_second),
        cmocka_unit_test(after_turning_on_the_spot_the_feet_face_the_heading),
        cmocka_unit_test(a_kneeling_boxer_keeps_the_feet_above_the_floor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
