/*
 * `embody eval --stages` (src/eval/ev_stages.c): the network's raw joints against the body's
 * final ones on a real clip (tests/data/hdm05: a person the shipped prior never saw). The
 * network's error is finite and sane, it is the network's alone (the same whichever body
 * runs beside it), and the body's column is the evaluation's own score of that clip.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "embody/prior.h"
#include "eval/eval.h"

#define CLIP EMBODY_SOURCE_DIR "/tests/data/hdm05/hdm05_bd_jogLeftCircle4StepsRstart_001.bvh"
#define SHIPPED EMBODY_SOURCE_DIR "/" PR_DEFAULT_MODEL

/* Generous: on this jog (the head moving, so the frame the outputs are decoded in matters)
 * the shipped model's hips are 9.2 cm off and its neck 8.0 (this person's HDM05 clips: 7
 * to 13 cm, the neck 6 to 8, lying down aside); decoded about the oldest head sample and
 * a heading half a radian off, 41 and 44 cm. */
#define HIPS_MAX_CM 15.0
#define NECK_MAX_CM 12.0

/* cmocka's assert_float_equal compares floats; these are doubles. */
#define assert_near(a, b, eps) assert_true(fabs((a) - (b)) <= (eps))

struct fixture {
    struct ev_clip clip;
    struct pr_model model;
};

static int
setup(void **state)
{
    static struct fixture f;
    struct em_error err = {{0}};
    if (ev_clip_load(CLIP, 0, &f.clip, &err) != EM_OK ||
        ev_trackers_select(&f.clip, 0, &err) != EM_OK ||
        pr_model_load(SHIPPED, &f.model, &err) != EM_OK) {
        fprintf(stderr, "%s\n", err.message);
        return -1;
    }
    *state = &f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;
    ev_clip_fini(&f->clip);
    pr_model_fini(&f->model);
    return 0;
}

static void
groups_are_the_predicted_joints(void **state)
{
    (void)state;
    assert_int_equal(ev_stage_group_of(EV_HIPS), EV_STAGE_HIPS);
    assert_int_equal(ev_stage_group_of(EV_LEFT_LOWER_LEG), EV_STAGE_KNEES);
    assert_int_equal(ev_stage_group_of(EV_RIGHT_FOOT), EV_STAGE_ANKLES);
    assert_int_equal(ev_stage_group_of(EV_LEFT_TOES), EV_STAGE_TOES);
    assert_int_equal(ev_stage_group_of(EV_NECK), EV_STAGE_NECK);
    assert_int_equal(ev_stage_group_of(EV_RIGHT_UPPER_ARM), EV_STAGE_SHOULDERS);
    assert_int_equal(ev_stage_group_of(EV_LEFT_LOWER_ARM), EV_STAGE_ELBOWS);
    assert_int_equal(ev_stage_group_of(EV_RIGHT_HAND), -1); /* the controller's */
    assert_int_equal(ev_stage_group_of(EV_LEFT_UPPER_LEG), -1); /* the hip joint: not predicted */
    assert_int_equal(ev_stage_group_of(EV_HEAD), -1);
    assert_string_equal(ev_stage_group_name(EV_STAGE_PREDICTED), "all predicted");
}

static void
network_error_is_finite_and_sane(void **state)
{
    struct fixture *f = *state;
    struct ev_stage_result r;
    struct em_error err = {{0}};
    assert_int_equal(ev_stage_run(&f->clip, EV_KNOWN_BODY, &f->model, &r, &err), EM_OK);
    assert_int_equal(r.rows, f->clip.truth.frame_count); /* every row, as the body */
    assert_int_equal(r.dropped, 0);
    for (int g = 0; g < EV_STAGE_COUNT; ++g) /* the shipped model predicts every group */
        assert_true(r.has_group[g]);
    for (int g = 0; g < EV_STAGE_COUNT; ++g) {
        assert_true(isfinite(r.network_cm[g]) && r.network_cm[g] > 0.0);
        assert_true(isfinite(r.body_cm[g]) && r.body_cm[g] > 0.0);
    }
    assert_true(r.network_cm[EV_STAGE_HIPS] < HIPS_MAX_CM);
    assert_true(r.network_cm[EV_STAGE_NECK] < NECK_MAX_CM);
    assert_true(r.network_cm[EV_STAGE_SHOULDERS] < NECK_MAX_CM);
    assert_true(r.network_cm[EV_STAGE_PREDICTED] < 2.0 * HIPS_MAX_CM);
}

/* The network sees the stream, the height and the floor: the same in both modes here. */
static void
network_column_does_not_depend_on_the_body(void **state)
{
    struct fixture *f = *state;
    struct ev_stage_result known, height;
    struct em_error err = {{0}};
    assert_int_equal(ev_stage_run(&f->clip, EV_KNOWN_BODY, &f->model, &known, &err), EM_OK);
    assert_int_equal(ev_stage_run(&f->clip, EV_HEIGHT_ONLY, &f->model, &height, &err), EM_OK);
    for (int g = 0; g < EV_STAGE_COUNT; ++g)
        assert_near(known.network_cm[g], height.network_cm[g], 1e-9);
    assert_true(fabs(known.body_mpjpe_cm - height.body_mpjpe_cm) > 1e-6);
}

/* The body's column is the evaluation's reconstruction of the clip (ev_run's path). */
static void
body_column_is_the_evaluations_score(void **state)
{
    struct fixture *f = *state;
    struct ev_stage_result r;
    struct em_error err = {{0}};
    assert_int_equal(ev_stage_run(&f->clip, EV_KNOWN_BODY, &f->model, &r, &err), EM_OK);
    struct ev_motion ours = {0};
    assert_int_equal(
        ev_clip_reconstruct_prior(&f->clip, EV_KNOWN_BODY, &f->model, &ours, NULL, &err), EM_OK);
    double group_cm[EV_GROUP_COUNT], joint_cm[EV_JOINT_COUNT];
    ev_mpjpe_cm(&ours, &f->clip.truth, group_cm, joint_cm);
    ev_motion_fini(&ours);
    assert_near(r.body_mpjpe_cm, group_cm[EV_GROUP_ALL], 1e-9);
    assert_near(r.body_cm[EV_STAGE_HIPS], joint_cm[EV_HIPS], 1e-9);
    assert_near(r.body_cm[EV_STAGE_KNEES],
                       0.5 * (joint_cm[EV_LEFT_LOWER_LEG] + joint_cm[EV_RIGHT_LOWER_LEG]), 1e-9);
    assert_near(r.body_cm[EV_STAGE_NECK], joint_cm[EV_NECK], 1e-9);
}

static void
refuses_a_run_without_a_network(void **state)
{
    struct fixture *f = *state;
    struct ev_stage_result r;
    struct em_error err = {{0}};
    assert_int_equal(ev_stage_run(&f->clip, EV_KNOWN_BODY, NULL, &r, &err),
                     EM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "prior"));
    assert_int_equal(ev_stage_run(&f->clip, EV_DO_NOTHING, &f->model, &r, &err),
                     EM_ERROR_INVALID_ARGUMENT);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(groups_are_the_predicted_joints),
        cmocka_unit_test(network_error_is_finite_and_sane),
        cmocka_unit_test(network_column_does_not_depend_on_the_body),
        cmocka_unit_test(body_column_is_the_evaluations_score),
        cmocka_unit_test(refuses_a_run_without_a_network),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
