/*
 * Floor postures and what the status says (issue 25): synthetic streams of a player lying
 * on the back, the side and the front and sitting on the floor (src/eval/ev_postures.c, made
 * from key poses), through the default humanoid and a real clip's skeleton, procedural and
 * with the shipped learned prior: the head joint where the headset says, the hands on the
 * controllers, the pelvis down on the floor, no joint under it, and the posture named. A
 * squat is not sitting; a foot its tracker holds never "steps".
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

#include "embody/body.h"
#include "eval/eval.h"
#include "embody/prior.h"

#define CLIPS EMBODY_SOURCE_DIR "/tests/data/mocap"
#define SHIPPED EMBODY_SOURCE_DIR "/" PR_DEFAULT_MODEL
#define DEMO EMBODY_SOURCE_DIR "/config/demo/demo.csv"

static void
load_prior(struct pr_model *model)
{
    struct em_error err = {{0}};
    if (pr_model_load(SHIPPED, model, &err) != EM_OK)
        fail_msg("%s", err.message);
}

/* What each floor posture must be shown as. */
static enum body_posture
expected_posture(enum ev_posture p)
{
    switch (p) {
    case EV_POSTURE_LIE_BACK: return BODY_LYING_ON_BACK;
    case EV_POSTURE_LIE_SIDE: return BODY_LYING_ON_SIDE;
    case EV_POSTURE_LIE_FRONT: return BODY_LYING_ON_FRONT;
    default: return BODY_SITTING_ON_FLOOR;
    }
}

/* Every posture through `desc`'s body meets the targets over its hold: the head joint at
 * the headset, the hands at the controllers; no joint under the floor over the whole
 * stream; lying or sitting on the floor, the pelvis down on it and the posture named. */
static void
assert_postures(const char *what, const struct body_desc *desc)
{
    for (int p = 0; p < EV_POSTURE_COUNT; ++p) {
        const bool on_floor = ev_posture_on_floor((enum ev_posture)p);
        struct body *body = NULL;
        struct em_error err = {{0}};
        if (body_create(desc, &body, &err) != EM_OK)
            fail_msg("%s", err.message);
        struct ev_posture_result r;
        assert_int_equal(ev_posture_run(body, (enum ev_posture)p, &r, &err), EM_OK);
        body_destroy(&body);
        const char *name = ev_posture_name((enum ev_posture)p);
        print_message("%s, %s: head %.1f cm, hands %.1f cm (standing %.1f), pelvis %.1f cm, "
                      "lowest joint %.1f cm (hold) %.1f cm (stream), shown %s\n",
                      what, name, r.head_off_cm, r.hands_off_cm, r.hands_standing_cm,
                      100.0 * r.pelvis_m, 100.0 * r.lowest_hold_m, 100.0 * r.lowest_joint_m,
                      body_posture_name((enum body_posture)r.shown));
        assert_true(r.hold_frames >= 50); /* the squat holds 1 s, the others 3 to 4 */
        if (!(r.head_off_cm <= EV_POSTURE_HEAD_TARGET_CM))
            fail_msg("%s, %s: the head joint %.1f cm from the headset's", what, name,
                     r.head_off_cm);
        if (!(r.hands_off_cm <= r.hands_standing_cm + EV_POSTURE_HANDS_TARGET_CM))
            fail_msg("%s, %s: a hand %.1f cm from its controller (%.1f standing)", what, name,
                     r.hands_off_cm, r.hands_standing_cm);
        /* Over the whole stream, the way down and up too (a leg's floor passes once
         * folded a foot 17 cm under the floor for a frame on the way to sitting
         * cross-legged: b_limbs.c, keep_foot_above_floor). */
        if (!(r.lowest_joint_m >= -EV_FLOOR_DEPTH_TARGET_M))
            fail_msg("%s, %s: a joint %.1f cm under the floor", what, name,
                     -100.0 * r.lowest_joint_m);
        if (!on_floor)
            continue;
        if (!(r.pelvis_m <= EV_POSTURE_PELVIS_TARGET_M))
            fail_msg("%s, %s: the pelvis %.1f cm above the floor", what, name, 100.0 * r.pelvis_m);
        if (r.shown != (int)expected_posture((enum ev_posture)p) || r.shown_share < 0.9)
            fail_msg("%s, %s: shown as %s on %.0f%% of the hold", what, name,
                     body_posture_name((enum body_posture)r.shown), 100.0 * r.shown_share);
    }
}

/* The default humanoid at 1.75 m, procedural and with the shipped prior (the plank in the
 * air: the pelvis at 51 cm, the head 60 to 108 cm from the headset lying down; in the squat
 * the head 8.6 cm short, the pelvis sat back beyond the spine's reach of it). */
static void
the_default_humanoid_takes_every_posture(void **state)
{
    (void)state;
    struct body_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.height_m = 1.75f;
    assert_postures("default humanoid, procedural", &desc);
    struct pr_model model;
    load_prior(&model);
    desc.prior = &model;
    assert_postures("default humanoid, prior", &desc);
    pr_model_fini(&model);
}

/* A real clip's skeleton (its own proportions, the stream scaled to its height), with the
 * shipped prior and without. */
static void
a_real_skeleton_takes_every_posture(void **state)
{
    (void)state;
    struct ev_clip clip;
    struct em_error err = {{0}};
    if (ev_clip_load(CLIPS "/cmu_91_04.bvh", 8, &clip, &err) != EM_OK)
        fail_msg("%s", err.message);
    struct body_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.skeleton = &clip.skeleton;
    assert_postures("cmu_91_04's skeleton, procedural", &desc);
    struct pr_model model;
    load_prior(&model);
    desc.prior = &model;
    assert_postures("cmu_91_04's skeleton, prior", &desc);
    pr_model_fini(&model);
    ev_clip_fini(&clip);
}

/* The demo (a walk, a reach, a squat to the floor and back; no seat, no kneel anywhere)
 * never says sitting or kneeling, with either body (the squat said "sitting" for 63
 * frames, then "kneeling" for 64 on its way down and up), and the synthetic squat is
 * crouching while a chair is sitting. */
static void
a_squat_is_neither_sitting_nor_kneeling(void **state)
{
    (void)state;
    struct st_stream demo;
    struct em_error err = {{0}};
    if (st_stream_load(DEMO, &demo, &err) != EM_OK)
        fail_msg("%s", err.message);
    struct pr_model model;
    load_prior(&model);
    for (int with_prior = 0; with_prior < 2; ++with_prior) {
        struct body_desc desc;
        memset(&desc, 0, sizeof desc);
        desc.prior = with_prior ? &model : NULL;
        struct body *body = NULL;
        assert_int_equal(body_create(&desc, &body, &err), EM_OK);
        int sitting = 0, crouching = 0, kneeling = 0;
        for (int row = 0; row < demo.frame_count; ++row) {
            body_update(body, &demo.frames[row]);
            struct body_status st;
            body_get_status(body, &st);
            sitting += st.posture == BODY_SITTING || st.posture == BODY_SITTING_ON_FLOOR;
            crouching += st.posture == BODY_CROUCHING;
            kneeling += st.posture == BODY_KNEELING;
        }
        body_destroy(&body);
        print_message("demo, %s: sitting on %d frames, crouching on %d, kneeling on %d\n",
                      with_prior ? "prior" : "procedural", sitting, crouching, kneeling);
        if (sitting > 0 || kneeling > 0)
            fail_msg("demo, %s: sitting on %d frames, kneeling on %d",
                     with_prior ? "prior" : "procedural", sitting, kneeling);
        assert_true(crouching > 30);
        desc.height_m = 1.75f;
        static const enum ev_posture seat[2] = {EV_POSTURE_SQUAT, EV_POSTURE_SIT_CHAIR};
        for (int k = 0; k < 2; ++k) {
            assert_int_equal(body_create(&desc, &body, &err), EM_OK);
            struct ev_posture_result r;
            assert_int_equal(ev_posture_run(body, seat[k], &r, &err), EM_OK);
            body_destroy(&body);
            const enum body_posture want = k == 0 ? BODY_CROUCHING : BODY_SITTING;
            if (r.shown != (int)want || r.shown_share < 0.9)
                fail_msg("%s (%s): shown as %s on %.0f%% of the hold", ev_posture_name(seat[k]),
                         with_prior ? "prior" : "procedural",
                         body_posture_name((enum body_posture)r.shown), 100.0 * r.shown_share);
        }
    }
    pr_model_fini(&model);
    st_stream_fini(&demo);
}

/* A running player with foot trackers (cmu_127_17, its skeleton, setup 6: pelvis and feet):
 * the status never says a tracked foot steps (it did, while the tracker held it), and calls
 * it tracked. */
static void
a_tracked_foot_never_steps(void **state)
{
    (void)state;
    struct ev_clip clip;
    struct em_error err = {{0}};
    if (ev_clip_load(CLIPS "/cmu_127_17.bvh", 0, &clip, &err) != EM_OK ||
        ev_trackers_select(&clip, ST_SETUP_6, &err) != EM_OK)
        fail_msg("%s", err.message);
    struct body *body = NULL;
    assert_int_equal(ev_clip_make_body(&clip, EV_KNOWN_BODY, NULL, &body, &err), EM_OK);
    int tracked = 0;
    for (int row = 0; row < clip.stream.frame_count; ++row) {
        body_update(body, &clip.stream.frames[row]);
        struct body_status st;
        body_get_status(body, &st);
        for (int s = 0; s < 2; ++s) {
            if (st.foot[s] == BODY_FOOT_STEPPING)
                fail_msg("row %d: the %s foot, held by its tracker, is shown stepping", row,
                         s ? "right" : "left");
            tracked += st.foot[s] == BODY_FOOT_TRACKED;
        }
    }
    assert_true(tracked > clip.stream.frame_count);
    body_destroy(&body);
    ev_clip_fini(&clip);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_default_humanoid_takes_every_posture),
        cmocka_unit_test(a_real_skeleton_takes_every_posture),
        cmocka_unit_test(a_squat_is_neither_sitting_nor_kneeling),
        cmocka_unit_test(a_tracked_foot_never_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
