/*
 * Hand module tests: poses made by one hand and tracked come back as the same angles on
 * another; controllers make the curls players expect, per profile; absurd tracked joints
 * are refused one by one with the finger keeping its last good pose; blends do not jump;
 * no curls put a finger through the palm or a neighbour; nothing is allocated per frame.
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

#include "common/alloc_count.h"

#include "embody/hand.h"
#include "embody/m_math.h"
#include "embody/tracking.h"
#include "hand_poses.h"

/* ---- Helpers ----------------------------------------------------------------------- */

#define RAD_TO_DEG_D (180.0 / 3.14159265358979323846)

static void
default_model(enum hd_hand hand, struct hd_model *out)
{
    struct em_error err = {{0}};
    const struct hd_model_desc desc = {.hand = hand};
    if (hd_model_init(&desc, out, &err) != EM_OK)
        fail_msg("%s", err.message);
}

/* The largest difference of any flexion or abduction, degrees. */
static double
worst_angle_deg(const struct hd_pose *a, const struct hd_pose *b)
{
    double worst = 0.0;
    for (int f = 0; f < HD_FINGER_COUNT; ++f) {
        for (int j = 0; j < HD_FINGER_JOINTS; ++j)
            worst = fmax(worst, fabs((double)a->flex_rad[f][j] - (double)b->flex_rad[f][j]));
        worst = fmax(worst, fabs((double)a->abduct_rad[f] - (double)b->abduct_rad[f]));
    }
    return worst * RAD_TO_DEG_D;
}

/* Angle errors of a pose made on hands of other sizes, tracked (with `noise_m` on every
 * joint) and converted on the default hand, over both hands: the worst and the mean of
 * every joint's angles, degrees, and the shortest bone seen (for the noise's bound). */
struct round_trip {
    double worst_deg;
    double mean_deg;
    float shortest_bone_m;
};

static struct round_trip
round_trip_error(int pose, float noise_m, int trials)
{
    struct round_trip rt = {0.0, 0.0, INFINITY};
    long n = 0;
    for (int h = 0; h < HD_HAND_COUNT; ++h) {
        struct hd_model player, model;
        default_model((enum hd_hand)h, &model);
        for (int t = 0; t < trials; ++t) {
            test_other_hand((enum hd_hand)h, 0.16f + 0.01f * (float)(t % 5), 17u + (unsigned)t,
                            &player);
            for (int f = 0; f < HD_FINGER_COUNT; ++f)
                for (int j = 0; j < HD_FINGER_JOINTS; ++j)
                    rt.shortest_bone_m = fminf(rt.shortest_bone_m, player.bone_m[f][j]);
            struct hd_pose made, got;
            test_pose_make(&player, pose, &made);
            float wrist[3], q[4];
            test_wrist_placement(101u + (unsigned)t, wrist, q);
            struct hd_xr_hand tracked;
            hd_pose_to_tracking(&player, &made, wrist, q, &tracked);
            if (noise_m > 0.0f)
                test_add_noise(&tracked, noise_m, 7u + (unsigned)t);
            struct hd_tracking_state state;
            hd_tracking_state_init(&state);
            struct hd_tracking_report report;
            hd_pose_from_tracking(&model, &tracked, &state, &got, &report);
            assert_int_equal(report.refused_count, 0);
            assert_int_equal(report.fallback_mask, 0);
            rt.worst_deg = fmax(rt.worst_deg, worst_angle_deg(&made, &got));
            for (int f = 0; f < HD_FINGER_COUNT; ++f) {
                for (int j = 0; j < HD_FINGER_JOINTS; ++j)
                    rt.mean_deg += fabs((double)made.flex_rad[f][j] - (double)got.flex_rad[f][j]);
                rt.mean_deg += fabs((double)made.abduct_rad[f] - (double)got.abduct_rad[f]);
                n += HD_FINGER_JOINTS + 1;
            }
        }
    }
    rt.mean_deg = rt.mean_deg / (double)n * RAD_TO_DEG_D;
    return rt;
}

/* ---- Tracking round trip ----------------------------------------------------------- */

/* On exact joints the conversion must give the angles back: float rounding, well under a
 * degree, except where the default hand cannot hold what the player's hand did: a fist's
 * thumb lies on the index of the player's hand, and on the default hand's (other bones,
 * other knuckles) the same angles would press into it, so the contact check opens the
 * thumb by up to 2 degrees. With noise of up to `n` per axis on every joint, a bone of length l
 * turns by at most atan(2 sqrt(3) n / l) and a joint's angle is the turn between two bones, so 2
 * atan(2 sqrt(3) n / l_shortest) bounds it: that checks the conversion adds nothing to the noise
 * and never blows up (the table shows what it costs). */
#define EXACT_BOUND_DEG 2.5
#define NOISE_M 0.001f

static void
tracked_poses_come_back_as_the_same_angles_on_another_hand(void **state)
{
    (void)state;
    printf("| pose      | exact joints: worst (deg) | 1 mm noise: worst (deg) | mean (deg) |\n");
    printf("|-----------|---------------------------|-------------------------|------------|\n");
    for (int pose = 0; pose < POSE_COUNT; ++pose) {
        const struct round_trip exact = round_trip_error(pose, 0.0f, 20);
        const struct round_trip noisy = round_trip_error(pose, NOISE_M, 20);
        printf("| %-9s | %25.3f | %23.2f | %10.2f |\n", test_pose_name(pose), exact.worst_deg,
               noisy.worst_deg, noisy.mean_deg);
        const double noise_bound =
            2.0 * atan(2.0 * sqrt(3.0) * (double)NOISE_M / (double)noisy.shortest_bone_m) *
            RAD_TO_DEG_D;
        if (exact.worst_deg > EXACT_BOUND_DEG || noisy.worst_deg > noise_bound)
            fail_msg("%s: worst error %.3f deg exact, %.2f deg with noise; expected within "
                     "%.1f and %.1f",
                     test_pose_name(pose), exact.worst_deg, noisy.worst_deg, EXACT_BOUND_DEG,
                     noise_bound);
    }
}

/* A fist's joints, converted, read as curls near 1; an open hand's near 0. */
static void
tracked_fist_and_open_hand_read_as_their_curls(void **state)
{
    (void)state;
    struct hd_model model;
    default_model(HD_RIGHT, &model);
    const int poses[2] = {POSE_FIST, POSE_OPEN};
    for (int i = 0; i < 2; ++i) {
        struct hd_pose made, got;
        test_pose_make(&model, poses[i], &made);
        const float wrist[3] = {0.3f, 1.1f, -0.2f}, q[4] = {0.0f, 0.0f, 0.0f, 1.0f};
        struct hd_xr_hand tracked;
        hd_pose_to_tracking(&model, &made, wrist, q, &tracked);
        struct hd_tracking_state st;
        hd_tracking_state_init(&st);
        hd_pose_from_tracking(&model, &tracked, &st, &got, NULL);
        struct hd_curls c;
        hd_curls_from_pose(&model, &got, &c);
        for (int f = HD_INDEX; f <= HD_LITTLE; ++f) {
            if (poses[i] == POSE_FIST && c.curl[f] < 0.9f)
                fail_msg("fist: %s curl %.2f, expected at least 0.9", hd_finger_name(f),
                         (double)c.curl[f]);
            if (poses[i] == POSE_OPEN && c.curl[f] > 0.05f)
                fail_msg("open: %s curl %.2f, expected at most 0.05", hd_finger_name(f),
                         (double)c.curl[f]);
        }
    }
}

/* Why a recording keeps the angles (PROTOCOL.md section 1b): poses made from curls come
 * back from their curls, but a tracked pinch, whose joints do not bend in a curl's
 * shares, does not. */
static void
curls_hold_a_controllers_pose_but_not_a_pinch(void **state)
{
    (void)state;
    struct hd_model model;
    default_model(HD_LEFT, &model);
    for (int pose = 0; pose < POSE_COUNT; ++pose) {
        struct hd_pose made, back;
        struct hd_curls c;
        test_pose_make(&model, pose, &made);
        hd_curls_from_pose(&model, &made, &c);
        hd_pose_from_curls(&model, &c, &back);
        const double loss = worst_angle_deg(&made, &back);
        printf("%-9s through curls: worst joint %.2f deg\n", test_pose_name(pose), loss);
        if (pose == POSE_PINCH)
            assert_true(loss > 10.0);
        else
            assert_true(loss < 0.01);
    }
}

/* ---- Refusing absurd joints -------------------------------------------------------- */

struct bad_case {
    const char *what;
    int joint;
    enum hd_joint_fault fault;
};

static void
spoil(struct hd_xr_hand *hand, int which)
{
    struct hd_xr_joint_location *j;
    switch (which) {
    case 0: /* a NaN in the index tip's position */
        hand->joint[HD_XR_INDEX_TIP].position_m[1] = NAN;
        break;
    case 1: /* the ring's distal joint half a metre away */
        hand->joint[HD_XR_RING_DISTAL].position_m[0] += 0.5f;
        break;
    case 2: /* a zero radius on the little finger's knuckle-to-be-intermediate */
        hand->joint[HD_XR_LITTLE_INTERMEDIATE].radius_m = 0.0f;
        break;
    case 3: /* a 6 cm radius on the thumb's distal joint */
        hand->joint[HD_XR_THUMB_DISTAL].radius_m = 0.06f;
        break;
    case 4: /* a non-unit orientation flagged valid on the middle's distal joint */
        j = &hand->joint[HD_XR_MIDDLE_DISTAL];
        j->orientation[0] = 0.5f;
        j->orientation[1] = 0.5f;
        j->orientation[2] = 0.5f;
        j->orientation[3] = 0.9f;
        break;
    case 5: /* the index's intermediate on top of its knuckle */
        memcpy(hand->joint[HD_XR_INDEX_INTERMEDIATE].position_m,
               hand->joint[HD_XR_INDEX_PROXIMAL].position_m, sizeof(float[3]));
        break;
    case 6: /* the thumb tip lost */ hand->joint[HD_XR_THUMB_TIP].flags = 0; break;
    default: fail();
    }
}

static void
absurd_joints_are_refused_one_by_one_and_their_finger_keeps_its_last_pose(void **state)
{
    (void)state;
    static const struct bad_case cases[] = {
        {"NaN", HD_XR_INDEX_TIP, HD_JOINT_NOT_FINITE},
        {"too far", HD_XR_RING_DISTAL, HD_JOINT_TOO_FAR},
        {"zero radius", HD_XR_LITTLE_INTERMEDIATE, HD_JOINT_BAD_RADIUS},
        {"huge radius", HD_XR_THUMB_DISTAL, HD_JOINT_BAD_RADIUS},
        {"non-unit orientation", HD_XR_MIDDLE_DISTAL, HD_JOINT_BAD_ROTATION},
        {"coincident", HD_XR_INDEX_INTERMEDIATE, HD_JOINT_COINCIDENT},
        {"lost", HD_XR_THUMB_TIP, HD_JOINT_NOT_TRACKED},
    };
    struct hd_model model;
    default_model(HD_LEFT, &model);
    struct hd_pose fist, open, got;
    test_pose_make(&model, POSE_FIST, &fist);
    test_pose_make(&model, POSE_OPEN, &open);
    const float wrist[3] = {-0.2f, 1.3f, -0.3f};
    float q[4];
    const float axis[3] = {0.0f, 1.0f, 0.0f};
    m_quat_from_axis_angle(axis, 0.7f, q);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        struct hd_tracking_state st;
        hd_tracking_state_init(&st);
        struct hd_xr_hand tracked;
        struct hd_tracking_report report;
        /* A good fist, then an open hand with one absurd joint. */
        hd_pose_to_tracking(&model, &fist, wrist, q, &tracked);
        hd_pose_from_tracking(&model, &tracked, &st, &got, &report);
        assert_int_equal(report.refused_count, 0);
        hd_pose_to_tracking(&model, &open, wrist, q, &tracked);
        spoil(&tracked, (int)i);
        hd_pose_from_tracking(&model, &tracked, &st, &got, &report);
        const int finger = cases[i].joint < HD_XR_INDEX_METACARPAL
                               ? HD_THUMB
                               : 1 + (cases[i].joint - HD_XR_INDEX_METACARPAL) / 5;
        if (report.fault[cases[i].joint] != cases[i].fault)
            fail_msg("%s: joint %s reported \"%s\", expected \"%s\"", cases[i].what,
                     hd_xr_joint_name(cases[i].joint),
                     hd_joint_fault_name((enum hd_joint_fault)report.fault[cases[i].joint]),
                     hd_joint_fault_name(cases[i].fault));
        assert_int_equal(report.refused_count, 1);
        assert_int_equal(report.fallback_mask, 1u << finger);
        for (int f = 0; f < HD_FINGER_COUNT; ++f) {
            /* The spoilt finger stays in its fist (the last good pose, as constrained
             * with the open fingers beside it); the others open. */
            const struct hd_pose *expect = f == finger ? &fist : &open;
            for (int j = 0; j < HD_FINGER_JOINTS; ++j)
                if (fabsf(got.flex_rad[f][j] - expect->flex_rad[f][j]) > 0.5f * M_DEG_TO_RAD)
                    fail_msg("%s: %s joint %d at %.1f deg, expected %.1f (%s)", cases[i].what,
                             hd_finger_name(f), j, (double)(got.flex_rad[f][j] * M_RAD_TO_DEG),
                             (double)(expect->flex_rad[f][j] * M_RAD_TO_DEG),
                             f == finger ? "its last good pose" : "tracked");
        }
    }
}

static void
a_finger_never_seen_good_takes_the_relaxed_pose_and_a_bad_wrist_holds_them_all(void **state)
{
    (void)state;
    struct hd_model model;
    default_model(HD_RIGHT, &model);
    struct hd_pose fist, relaxed, got;
    test_pose_make(&model, POSE_FIST, &fist);
    hd_pose_relaxed(&model, &relaxed);
    const float wrist[3] = {0.1f, 1.0f, 0.0f}, q[4] = {0.0f, 0.0f, 0.0f, 1.0f};
    struct hd_xr_hand tracked;
    hd_pose_to_tracking(&model, &fist, wrist, q, &tracked);
    tracked.joint[HD_XR_MIDDLE_TIP].position_m[2] = INFINITY;
    struct hd_tracking_state st;
    hd_tracking_state_init(&st);
    struct hd_tracking_report report;
    hd_pose_from_tracking(&model, &tracked, &st, &got, &report);
    assert_int_equal(report.fallback_mask, 1u << HD_MIDDLE);
    for (int j = 0; j < HD_FINGER_JOINTS; ++j)
        assert_float_equal(got.flex_rad[HD_MIDDLE][j], relaxed.flex_rad[HD_MIDDLE][j], 1e-3);

    /* A good fist, then a NaN wrist: every finger keeps the fist. */
    hd_pose_to_tracking(&model, &fist, wrist, q, &tracked);
    hd_pose_from_tracking(&model, &tracked, &st, &got, &report);
    tracked.joint[HD_XR_WRIST].position_m[0] = NAN;
    hd_pose_from_tracking(&model, &tracked, &st, &got, &report);
    assert_int_equal(report.fault[HD_XR_WRIST], HD_JOINT_NOT_FINITE);
    assert_int_equal(report.fallback_mask, (1u << HD_FINGER_COUNT) - 1u);
    assert_true(worst_angle_deg(&got, &fist) < 0.5);

    /* A hand the runtime says is not active: every joint not tracked. */
    tracked.active = false;
    hd_pose_from_tracking(&model, &tracked, &st, &got, &report);
    assert_int_equal(report.refused_count, HD_XR_JOINT_COUNT);
    assert_int_equal(report.fault[HD_XR_PALM], HD_JOINT_NOT_TRACKED);
}

/* ---- Controllers ------------------------------------------------------------------- */

enum gesture { POINT, FIST, THUMBS_UP, OPEN, GESTURE_COUNT };

/* What a player does with the controller for each gesture, with every sensor a profile
 * might have (the profile's table decides which it reads). */
static void
gesture_input(enum gesture g, struct hd_controller_input *in)
{
    memset(in, 0, sizeof *in);
    const bool gripping = g != OPEN;
    in->squeeze = gripping ? 1.0f : 0.0f;
    in->squeeze_force = gripping ? 0.8f : 0.0f;
    in->trigger = g == FIST || g == THUMBS_UP ? 1.0f : 0.0f;
    in->trigger_touch = g == FIST || g == THUMBS_UP;
    in->trigger_curl = g == POINT || g == OPEN ? 1.0f : 0.0f;
    /* the thumb on the controller: on whatever it has there */
    const bool thumb_on = g == POINT || g == FIST;
    in->buttons_touch = thumb_on;
    in->thumbstick_touch = thumb_on;
    in->trackpad_touch = thumb_on;
    in->thumbrest_touch = false;
    const float others = gripping ? 1.0f : 0.0f;
    in->finger_curl[HD_INDEX] = g == FIST || g == THUMBS_UP ? 1.0f : 0.0f;
    for (int f = HD_MIDDLE; f <= HD_LITTLE; ++f)
        in->finger_curl[f] = others;
}

static void
controllers_make_the_gestures_their_sensors_allow(void **state)
{
    (void)state;
    struct hd_curls relaxed;
    hd_curls_relaxed(&relaxed);
    assert_true(hd_profile_count() >= 10);
    for (int i = 0; i < hd_profile_count(); ++i) {
        const struct hd_profile *p = hd_profile_at(i);
        assert_ptr_equal(hd_profile_find(p->path), p);
        const bool trigger_touch = p->inputs & (HD_IN_TRIGGER_TOUCH | HD_IN_FINGER_CURL);
        const bool thumb_sense = p->inputs & HD_IN_THUMB_TOUCHES;
        const bool squeeze = p->inputs & (HD_IN_SQUEEZE_VALUE | HD_IN_SQUEEZE_CLICK |
                                          HD_IN_SQUEEZE_FORCE | HD_IN_FINGER_CURL);
        const bool trigger = p->inputs & (HD_IN_TRIGGER_VALUE | HD_IN_SELECT_CLICK);
        for (int g = 0; g < GESTURE_COUNT; ++g) {
            struct hd_controller_input in;
            gesture_input((enum gesture)g, &in);
            struct hd_curls c;
            hd_curls_from_controller(p, &in, &c);
            char why[160];
            snprintf(why, sizeof why, "%s, gesture %d: curls %.2f %.2f %.2f %.2f %.2f", p->name, g,
                     (double)c.curl[0], (double)c.curl[1], (double)c.curl[2], (double)c.curl[3],
                     (double)c.curl[4]);
            for (int f = 0; f < HD_FINGER_COUNT; ++f)
                if (!(c.curl[f] >= 0.0f && c.curl[f] <= 1.0f))
                    fail_msg("%s: out of [0, 1]", why);
            if (squeeze && g != OPEN)
                for (int f = HD_MIDDLE; f <= HD_LITTLE; ++f)
                    if (c.curl[f] < 0.95f)
                        fail_msg("%s: gripping, expected middle to little closed", why);
            if (trigger && (g == FIST || g == THUMBS_UP) && c.curl[HD_INDEX] < 0.95f)
                fail_msg("%s: trigger pulled, expected the index closed", why);
            if (g == POINT) {
                /* Pointing needs a sensor that says the finger left the trigger. */
                if (trigger_touch ? c.curl[HD_INDEX] > 0.05f
                                  : fabsf(c.curl[HD_INDEX] - relaxed.curl[HD_INDEX]) > 1e-6f)
                    fail_msg("%s: point, expected the index %s", why,
                             trigger_touch ? "straight" : "relaxed (no trigger sensor)");
            }
            if (g == THUMBS_UP && thumb_sense && c.curl[HD_THUMB] > 0.05f)
                fail_msg("%s: thumbs-up, expected the thumb straight", why);
            if ((g == FIST || g == POINT) && thumb_sense && c.curl[HD_THUMB] < 0.4f)
                fail_msg("%s: thumb on the buttons, expected it resting (0.5)", why);
            if (g == OPEN && (trigger_touch || thumb_sense)) {
                /* A sensor says the hand is off the controller: open, but the index only
                 * where a sensor says it is off the trigger. */
                for (int f = trigger_touch ? HD_INDEX : HD_MIDDLE; f <= HD_LITTLE; ++f)
                    if (c.curl[f] > 0.05f)
                        fail_msg("%s: open, expected straight fingers", why);
                if (c.splay < 0.3f)
                    fail_msg("%s: open, splay %.2f, expected spread fingers", why, (double)c.splay);
            }
        }
    }
    /* An unknown profile, and garbage values, give the relaxed hand or clamped curls. */
    struct hd_controller_input in;
    gesture_input(FIST, &in);
    struct hd_curls c;
    hd_curls_from_controller(hd_profile_find("/interaction_profiles/acme/unknown"), &in, &c);
    for (int f = 0; f < HD_FINGER_COUNT; ++f)
        assert_float_equal(c.curl[f], relaxed.curl[f], 1e-6);
    in.trigger = NAN;
    in.squeeze = 7.0f;
    hd_curls_from_controller(hd_profile_find("/interaction_profiles/oculus/touch_controller"), &in,
                             &c);
    assert_float_equal(c.curl[HD_INDEX], 0.35f, 1e-6); /* touched, NaN read as released */
    assert_float_equal(c.curl[HD_RING], 1.0f, 1e-6);   /* squeeze clamped to 1 */
}

/* ---- Blends, limits and contacts ---------------------------------------------------- */

static void
a_blend_moves_every_angle_evenly_with_no_jump(void **state)
{
    (void)state;
    struct hd_model model;
    default_model(HD_LEFT, &model);
    struct hd_pose a, b, prev, cur;
    test_pose_make(&model, POSE_OPEN, &a);
    test_pose_make(&model, POSE_FIST, &b);
    const double whole = worst_angle_deg(&a, &b);
    assert_true(whole > 60.0);
    hd_pose_blend(&a, &b, 0.0f, &prev);
    assert_true(worst_angle_deg(&prev, &a) == 0.0);
    const int steps = 100;
    for (int i = 1; i <= steps; ++i) {
        hd_pose_blend(&a, &b, (float)i / (float)steps, &cur);
        /* No joint moves more than its share of the way in one step. */
        const double step = worst_angle_deg(&prev, &cur);
        if (step > whole / steps + 1e-3)
            fail_msg("step %d moved %.3f deg, expected at most %.3f", i, step, whole / steps);
        prev = cur;
    }
    assert_true(worst_angle_deg(&cur, &b) < 1e-4);
    hd_pose_blend(&a, &b, NAN, &cur); /* a broken weight is the target, not NaN */
    assert_true(worst_angle_deg(&cur, &b) == 0.0);
    hd_pose_blend(&a, &b, 0.5f, &a); /* aliasing */
    assert_true(worst_angle_deg(&a, &b) < 0.5 * whole + 1e-3);
}

/* The test's own geometry: spheres along each bone (a sphere every 3 mm, of the bone's
 * radius: the mean of its joints', as the module's capsules), the palm a box between the
 * knuckles and the wrist. */
struct spheres {
    int count;
    float center[64][3];
    float radius[64];
};

static void
finger_spheres(const struct hd_model *m, const float (*p)[3], int f, struct spheres *out)
{
    out->count = 0;
    for (int k = 0; k < HD_FINGER_JOINTS; ++k) {
        const int n = 1 + (int)(m_vec3_distance(p[k], p[k + 1]) / 0.003f);
        for (int i = 0; i <= n && out->count < 64; ++i) {
            const float t = (float)i / (float)n;
            m_vec3_lerp(p[k], p[k + 1], t, out->center[out->count]);
            out->radius[out->count] = 0.5f * (m->radius_m[f][k] + m->radius_m[f][k + 1]);
            ++out->count;
        }
    }
}

static float
spheres_gap(const struct spheres *a, const struct spheres *b)
{
    float gap = INFINITY;
    for (int i = 0; i < a->count; ++i)
        for (int k = 0; k < b->count; ++k)
            gap = fminf(gap,
                        m_vec3_distance(a->center[i], b->center[k]) - a->radius[i] - b->radius[k]);
    return gap;
}

/* How deep a sphere is in the palm's box (0 when outside). */
static float
palm_depth(const struct hd_model *m, const float *c, float r)
{
    float z_knuckles = 0.0f;
    for (int f = HD_INDEX; f <= HD_LITTLE; ++f)
        z_knuckles += 0.25f * m->base_m[f][2];
    const float x0 = fminf(m->base_m[HD_INDEX][0], m->base_m[HD_LITTLE][0]);
    const float x1 = fmaxf(m->base_m[HD_INDEX][0], m->base_m[HD_LITTLE][0]);
    const float h = m->palm_half_thickness_m;
    if (c[0] < x0 || c[0] > x1 || c[2] < z_knuckles || c[2] > 0.0f)
        return 0.0f; /* beside the palm: the neighbour checks cover it */
    return fmaxf(0.0f, h + r - fabsf(c[1]));
}

static void
no_curls_put_a_finger_through_the_palm_or_a_neighbour(void **state)
{
    (void)state;
    const int n = 4; /* curls 0, 0.25, ... 1 for each finger */
    for (int h = 0; h < HD_HAND_COUNT; ++h) {
        struct hd_model m;
        default_model((enum hd_hand)h, &m);
        float worst_gap = INFINITY, worst_palm = 0.0f;
        long poses = 0;
        for (int code = 0; code < 5 * 5 * 5 * 5 * 5 * 3; ++code) {
            struct hd_curls c;
            int rest = code;
            for (int f = 0; f < HD_FINGER_COUNT; ++f) {
                c.curl[f] = (float)(rest % (n + 1)) / (float)n;
                rest /= n + 1;
            }
            c.splay = 0.5f * (float)rest;
            struct hd_pose pose;
            hd_pose_from_curls(&m, &c, &pose);
            for (int f = 0; f < HD_FINGER_COUNT; ++f) {
                for (int j = 0; j < HD_FINGER_JOINTS; ++j)
                    assert_true(pose.flex_rad[f][j] >= m.flex_min_rad[f][j] &&
                                pose.flex_rad[f][j] <= m.flex_max_rad[f][j]);
                assert_true(pose.abduct_rad[f] >= m.abduct_min_rad[f] &&
                            pose.abduct_rad[f] <= m.abduct_max_rad[f]);
            }
            float pts[HD_POINT_COUNT][3];
            hd_pose_positions(&m, &pose, pts);
            struct spheres s[HD_FINGER_COUNT];
            for (int f = 0; f < HD_FINGER_COUNT; ++f)
                finger_spheres(&m, (const float(*)[3])pts + f * 4, f, &s[f]);
            /* neighbours, and the thumb against index and middle */
            for (int f = HD_INDEX; f < HD_LITTLE; ++f)
                worst_gap = fminf(worst_gap, spheres_gap(&s[f], &s[f + 1]));
            worst_gap = fminf(worst_gap, spheres_gap(&s[HD_THUMB], &s[HD_INDEX]));
            worst_gap = fminf(worst_gap, spheres_gap(&s[HD_THUMB], &s[HD_MIDDLE]));
            /* outer joints and tips against the palm */
            for (int f = 0; f < HD_FINGER_COUNT; ++f)
                for (int k = 1; k <= HD_FINGER_JOINTS; ++k)
                    worst_palm =
                        fmaxf(worst_palm, palm_depth(&m, pts[f * 4 + k], m.radius_m[f][k]));
            ++poses;
        }
        printf("%s hand: %ld curl combinations, smallest gap between fingers %.2f mm, deepest "
               "in the palm %.2f mm\n",
               h == HD_LEFT ? "left" : "right", poses, (double)worst_gap * 1e3,
               (double)worst_palm * 1e3);
        /* The spheres lie inside the module's capsules: only rounding may overlap. */
        if (worst_gap < -0.01e-3f || worst_palm > 0.01e-3f)
            fail_msg("fingers overlap by %.2f mm or reach %.2f mm into the palm",
                     (double)-worst_gap * 1e3, (double)worst_palm * 1e3);
    }
}

/* ---- The model, names, frames ------------------------------------------------------- */

static void
the_model_refuses_absurd_sizes_and_fits_a_tracked_hand(void **state)
{
    (void)state;
    struct hd_model m;
    struct em_error err = {{0}};
    const float bad[] = {0.05f, 0.5f, NAN, INFINITY, -0.19f};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        const struct hd_model_desc desc = {.hand = HD_LEFT, .hand_length_m = bad[i]};
        assert_int_equal(hd_model_init(&desc, &m, &err), EM_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(err.message, "hand_length_m"));
    }
    const struct hd_model_desc wrong_hand = {.hand = (enum hd_hand)5};
    assert_int_equal(hd_model_init(&wrong_hand, &m, &err), EM_ERROR_INVALID_ARGUMENT);

    /* An avatar's own finger bones: taken where given, refused by name where absurd. */
    struct hd_model_desc avatar = {.hand = HD_RIGHT, .hand_length_m = 0.18f};
    avatar.bone_m[HD_RING][1] = 0.031f;
    assert_int_equal(hd_model_init(&avatar, &m, &err), EM_OK);
    assert_float_equal(m.bone_m[HD_RING][1], 0.031f, 0.0);
    assert_float_equal(m.bone_m[HD_RING][0], 0.043f * 0.18f / 0.19f, 1e-6);
    const float absurd[] = {NAN, -0.02f, 0.5f, 0.001f};
    for (size_t i = 0; i < sizeof absurd / sizeof absurd[0]; ++i) {
        avatar.bone_m[HD_THUMB][2] = absurd[i];
        assert_int_equal(hd_model_init(&avatar, &m, &err), EM_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(err.message, "bone_m[0][2] (rightThumbDistal)"));
    }

    /* Fit the default hand to another player's tracked hand: their bone lengths. */
    struct hd_model player;
    test_other_hand(HD_RIGHT, 0.17f, 5u, &player);
    struct hd_pose pose;
    test_pose_make(&player, POSE_OPEN, &pose);
    const float wrist[3] = {0.0f, 1.0f, 0.0f}, q[4] = {0.0f, 0.0f, 0.0f, 1.0f};
    struct hd_xr_hand tracked;
    hd_pose_to_tracking(&player, &pose, wrist, q, &tracked);
    default_model(HD_RIGHT, &m);
    assert_int_equal(hd_model_fit(&m, &tracked, &err), EM_OK);
    for (int f = 0; f < HD_FINGER_COUNT; ++f)
        for (int j = 0; j < HD_FINGER_JOINTS; ++j)
            assert_float_equal(m.bone_m[f][j], player.bone_m[f][j], 1e-5);
    assert_true(fabsf(m.hand_length_m - 0.17f) < 0.02f);

    /* A tracked hand with one absurd joint is refused, naming it. */
    struct hd_model before = m;
    tracked.joint[HD_XR_RING_TIP].radius_m = -1.0f;
    assert_int_equal(hd_model_fit(&m, &tracked, &err), EM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "ring_tip"));
    assert_non_null(strstr(err.message, "radius out of range"));
    assert_memory_equal(&m, &before, sizeof m);
}

/* Every vector of a model finite: the fuzz target's check (tests/fuzz). */
static bool
model_is_finite(const struct hd_model *m)
{
    for (int f = 0; f < HD_FINGER_COUNT; ++f) {
        for (int k = 0; k < 3; ++k)
            if (!isfinite(m->base_m[f][k]) || !isfinite(m->metacarpal_m[f][k]) ||
                !isfinite(m->direction[f][k]) || !isfinite(m->palmar[f][k]) ||
                !isfinite(m->side[f][k]))
                return false;
        for (int j = 0; j < HD_FINGER_JOINTS; ++j)
            if (!isfinite(m->bone_m[f][j]))
                return false;
    }
    return isfinite(m->hand_length_m) && isfinite(m->palm_half_thickness_m);
}

/* A tracked finger whose knuckle lies along the palm's normal from its metacarpal passes
 * every joint check, but has no rest frame: hd_model_fit refuses it, naming the finger,
 * and leaves the model as it was (nothing NaN). A finger tilted less than the threshold
 * still fits. */
static void
a_tracked_knuckle_off_the_palms_forward_axis_is_refused(void **state)
{
    (void)state;
    /* Upright (the knuckle exactly above its metacarpal: before the fix a zero vector
     * normalised, NaN frames) and turned anyhow (within rounding of it). */
    for (int c = 0; c < 2 * HD_HAND_COUNT; ++c) {
        const int h = c % HD_HAND_COUNT;
        struct hd_model m;
        default_model((enum hd_hand)h, &m);
        struct hd_pose pose;
        hd_pose_relaxed(&m, &pose);
        const float wrist[3] = {0.3f, 1.1f, -0.2f};
        const float axis[3] = {0.36f, 0.48f, 0.8f};
        float q[4];
        m_quat_from_axis_angle(axis, c < HD_HAND_COUNT ? 0.0f : 1.1f, q);
        struct hd_xr_hand tracked;
        hd_pose_to_tracking(&m, &pose, wrist, q, &tracked);
        struct hd_model fitted = m;
        struct em_error err = {{0}};
        assert_int_equal(hd_model_fit(&fitted, &tracked, &err), EM_OK);
        assert_true(model_is_finite(&fitted));

        /* The ring metacarpal moved to proximal - 0.03 y (the hand frame's y). */
        const float y_hand[3] = {0.0f, 1.0f, 0.0f};
        float y[3];
        m_quat_rotate(q, y_hand, y);
        struct hd_xr_hand bad = tracked;
        m_vec3_muladd(bad.joint[HD_XR_RING_PROXIMAL].position_m, y, -0.03f,
                      bad.joint[HD_XR_RING_METACARPAL].position_m);
        struct hd_tracking_state ts;
        struct hd_tracking_report report;
        struct hd_pose out;
        hd_tracking_state_init(&ts);
        hd_pose_from_tracking(&m, &bad, &ts, &out, &report);
        assert_int_equal(report.refused_count, 0); /* every joint passes its checks */
        for (int f = 0; f < HD_FINGER_COUNT; ++f) {
            for (int j = 0; j < HD_FINGER_JOINTS; ++j)
                assert_true(isfinite(out.flex_rad[f][j]));
            assert_true(isfinite(out.abduct_rad[f]));
        }
        struct hd_model before = m;
        assert_int_equal(hd_model_fit(&m, &bad, &err), EM_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(err.message, "ring finger"));
        assert_non_null(strstr(err.message, "ring_proximal"));
        assert_memory_equal(&m, &before, sizeof m);
        assert_true(model_is_finite(&m));

        /* Straight out to the side (no forward part) is refused too. */
        const float x_hand[3] = {1.0f, 0.0f, 0.0f};
        float x[3];
        m_quat_rotate(q, x_hand, x);
        bad = tracked;
        m_vec3_muladd(bad.joint[HD_XR_INDEX_PROXIMAL].position_m, x, -0.03f,
                      bad.joint[HD_XR_INDEX_METACARPAL].position_m);
        assert_int_equal(hd_model_fit(&m, &bad, &err), EM_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(err.message, "index finger"));
        assert_memory_equal(&m, &before, sizeof m);

        /* Tilted 30 degrees towards the back of the hand: a hand, and it fits. */
        const float z_hand[3] = {0.0f, 0.0f, 1.0f};
        float z[3], back[3];
        m_quat_rotate(q, z_hand, z);
        m_vec3_scale(z, 0.03f * cosf(30.0f * M_DEG_TO_RAD), back);
        m_vec3_muladd(back, y, -0.03f * sinf(30.0f * M_DEG_TO_RAD), back);
        bad = tracked;
        m_vec3_add(bad.joint[HD_XR_RING_PROXIMAL].position_m, back,
                   bad.joint[HD_XR_RING_METACARPAL].position_m);
        fitted = m;
        if (hd_model_fit(&fitted, &bad, &err) != EM_OK)
            fail_msg("%s", err.message);
        assert_true(model_is_finite(&fitted));
    }
}

static void
names_are_vrm_and_unity_finger_bones(void **state)
{
    (void)state;
    assert_string_equal(hd_vrm_bone_name(HD_LEFT, 0), "leftThumbMetacarpal");
    assert_string_equal(hd_unity_bone_name(HD_LEFT, 0), "LeftThumbProximal");
    assert_string_equal(hd_vrm_bone_name(HD_RIGHT, HD_JOINT_COUNT - 1), "rightLittleDistal");
    assert_string_equal(hd_unity_bone_name(HD_RIGHT, HD_JOINT_COUNT - 1), "RightLittleDistal");
    /* Every name distinct, and the Unity name the VRM name capitalised where not a thumb. */
    for (int h = 0; h < HD_HAND_COUNT; ++h)
        for (int j = 0; j < HD_JOINT_COUNT; ++j) {
            const char *vrm = hd_vrm_bone_name((enum hd_hand)h, j);
            const char *unity = hd_unity_bone_name((enum hd_hand)h, j);
            if (j >= HD_FINGER_JOINTS)
                assert_true(strcmp(vrm + 1, unity + 1) == 0 && vrm[0] + 'A' - 'a' == unity[0]);
            for (int k = 0; k < j; ++k)
                assert_true(strcmp(vrm, hd_vrm_bone_name((enum hd_hand)h, k)) != 0);
        }
    assert_string_equal(hd_xr_joint_name(HD_XR_LITTLE_TIP), "little_tip");
    assert_string_equal(hd_joint_fault_name(HD_JOINT_TOO_FAR), "too far from the wrist");
}

/* Curling a finger in the T-pose turns its tip down, for both hands: the hand frame
 * meets the humanoid's the right way round. */
static void
a_curled_finger_points_down_in_the_humanoid_t_pose(void **state)
{
    (void)state;
    for (int h = 0; h < HD_HAND_COUNT; ++h) {
        struct hd_model m;
        default_model((enum hd_hand)h, &m);
        struct hd_pose pose;
        memset(&pose, 0, sizeof pose);
        pose.flex_rad[HD_INDEX][0] = 0.5f * M_PI_F;
        float rot[HD_JOINT_COUNT][4], q[4], v[3];
        hd_pose_local_rotations(&m, &pose, rot);
        hd_humanoid_rotation_from_hand((enum hd_hand)h, rot[HD_INDEX * 3], q);
        /* The index points along +X (left) or -X (right) in the T-pose. */
        const float along[3] = {h == HD_LEFT ? 1.0f : -1.0f, 0.0f, 0.0f};
        m_quat_rotate(q, along, v);
        assert_true(v[1] < -0.95f);
        /* and spreading the index (towards the thumb) turns it forward (+Z) */
        memset(&pose, 0, sizeof pose);
        pose.abduct_rad[HD_INDEX] = 0.3f;
        hd_pose_local_rotations(&m, &pose, rot);
        hd_humanoid_rotation_from_hand((enum hd_hand)h, rot[HD_INDEX * 3], q);
        m_quat_rotate(q, along, v);
        assert_true(v[2] > 0.25f);
    }
}

static void
converting_a_frame_allocates_nothing(void **state)
{
    (void)state;
    struct hd_model m;
    default_model(HD_LEFT, &m);
    struct hd_pose pose, got;
    test_pose_make(&m, POSE_PINCH, &pose);
    const float wrist[3] = {0.0f, 1.0f, 0.0f}, q[4] = {0.0f, 0.0f, 0.0f, 1.0f};
    struct hd_xr_hand tracked;
    hd_pose_to_tracking(&m, &pose, wrist, q, &tracked);
    struct hd_tracking_state st;
    hd_tracking_state_init(&st);
    struct hd_controller_input in;
    gesture_input(POINT, &in);
    const struct hd_profile *p = hd_profile_find("/interaction_profiles/valve/index_controller");
    const long before = alloc_count();
    for (int i = 0; i < 100; ++i) {
        struct hd_curls c;
        float rot[HD_JOINT_COUNT][4];
        hd_pose_from_tracking(&m, &tracked, &st, &got, NULL);
        hd_curls_from_controller(p, &in, &c);
        hd_pose_from_curls(&m, &c, &pose);
        hd_pose_blend(&pose, &got, 0.5f, &pose);
        hd_pose_local_rotations(&m, &pose, rot);
    }
    assert_int_equal(alloc_count(), before);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tracked_poses_come_back_as_the_same_angles_on_another_hand),
        cmocka_unit_test(tracked_fist_and_open_hand_read_as_their_curls),
        cmocka_unit_test(curls_hold_a_controllers_pose_but_not_a_pinch),
        cmocka_unit_test(absurd_joints_are_refused_one_by_one_and_their_finger_keeps_its_last_pose),
        cmocka_unit_test(
            a_finger_never_seen_good_takes_the_relaxed_pose_and_a_bad_wrist_holds_them_all),
        cmocka_unit_test(controllers_make_the_gestures_their_sensors_allow),
        cmocka_unit_test(a_blend_moves_every_angle_evenly_with_no_jump),
        cmocka_unit_test(no_curls_put_a_finger_through_the_palm_or_a_neighbour),
        cmocka_unit_test(the_model_refuses_absurd_sizes_and_fits_a_tracked_hand),
        cmocka_unit_test(a_tracked_knuckle_off_the_palms_forward_axis_is_refused),
        cmocka_unit_test(names_are_vrm_and_unity_finger_bones),
        cmocka_unit_test(a_curled_finger_points_down_in_the_humanoid_t_pose),
        cmocka_unit_test(converting_a_frame_allocates_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
