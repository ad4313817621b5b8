/*
 * The arms on real motion (public CMU clips, each with its own skeleton or the default
 * proportions fitted to its height, and the shipped learned prior): hands on their
 * controllers wherever the shoulder can reach them, arms that do not jump under noise
 * far below any tracker's, elbow trackers that set the elbow without taking the hands
 * off the controllers, and a head that turns with the headset (issue 17).
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
#include "eval/eval.h"
#include "embody/m_math.h"
#include "embody/prior.h"
#include "embody/skeleton.h"

#define CLIP_DIR EMBODY_SOURCE_DIR "/tests/data/mocap/"
#define PRIOR EMBODY_SOURCE_DIR "/config/prior/body-prior-v1.bin"

/* A hand counts as on its controller within this (the bound). */
#define HAND_ON_M 0.002f

struct arm_run {
    int frames;
    int reachable;      /* hand-frames whose target the solved shoulder's arm reaches */
    int reachable_off;  /* of those, hands more than HAND_ON_M off their target */
    int off_2cm;        /* hand-frames more than 2 cm off, reachable from the hips or not */
    double worst_reachable_m;
    double sum_miss_m, hand_frames;
};

static void
load(const char *name, uint32_t trackers, struct ev_clip *clip)
{
    struct em_error err;
    char path[1024];
    snprintf(path, sizeof path, "%s%s", CLIP_DIR, name);
    if (ev_clip_load(path, 0, clip, &err) != EM_OK)
        fail_msg("%s", err.message);
    for (int i = 0; i < clip->stream.frame_count; ++i)
        clip->stream.frames[i].tracker_present &= trackers;
}

static struct body *
make_body(const struct ev_clip *clip, bool known, const struct pr_model *prior)
{
    struct body_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.prior = prior;
    if (known) {
        desc.skeleton = &clip->skeleton;
        ev_trackers_known_mounts(clip, desc.tracker_mount);
    } else {
        desc.height_m = clip->height_m;
    }
    struct body *body = NULL;
    struct em_error err;
    if (body_create(&desc, &body, &err) != EM_OK)
        fail_msg("%s", err.message);
    return body;
}

/* Each hand's distance to its target after every frame, and whether the arm from the
 * solved shoulder (the upper arm joint) could reach it. */
static void
run_hands(const struct ev_clip *clip, bool known, const struct pr_model *prior,
          struct arm_run *out)
{
    memset(out, 0, sizeof *out);
    struct body *body = make_body(clip, known, prior);
    const struct sk_skeleton *sk = body_skeleton(body);
    for (int row = 0; row < clip->stream.frame_count; ++row) {
        body_update(body, &clip->stream.frames[row]);
        const struct sk_pose *pose = body_pose(body);
        struct body_status st;
        body_get_status(body, &st);
        for (int s = 0; s < 2; ++s) {
            const int e = 1 + s; /* body_get_status: head, left hand, right hand */
            const int upper = sk->bone_joint[s ? SK_RIGHT_UPPER_ARM : SK_LEFT_UPPER_ARM];
            const int elbow = sk->bone_joint[s ? SK_RIGHT_LOWER_ARM : SK_LEFT_LOWER_ARM];
            const int hand = sk->bone_joint[s ? SK_RIGHT_HAND : SK_LEFT_HAND];
            const float arm = sk->length_m[elbow] + sk->length_m[hand];
            const float miss = m_vec3_distance(st.target_m[e], st.reached_m[e]);
            out->sum_miss_m += (double)miss;
            out->hand_frames += 1.0;
            if (miss > 0.02f)
                out->off_2cm++;
            if (m_vec3_distance(st.target_m[e], pose->position_m[upper]) <= 0.998f * arm) {
                out->reachable++;
                if (miss > HAND_ON_M)
                    out->reachable_off++;
                out->worst_reachable_m = fmax(out->worst_reachable_m, (double)miss);
            }
        }
        out->frames++;
    }
    body_destroy(&body);
}

static void
load_prior(struct pr_model *model)
{
    struct em_error err;
    if (pr_model_load(PRIOR, model, &err) != EM_OK)
        fail_msg("%s", err.message);
}

/* The dance with the arms held high (cmu_05_04, its own skeleton): every hand the
 * solved shoulder can reach is on its controller to 2 mm, on every frame, and few hands
 * are more than 2 cm off. Before the arms were built in closed form: 9 reachable
 * hand-frames up to 19.9 mm off, 70 of 1200 hand-frames over 2 cm. */
static void
hands_are_on_their_controllers_on_an_arms_high_dance(void **state)
{
    (void)state;
    struct pr_model prior;
    load_prior(&prior);
    struct ev_clip clip;
    load("cmu_05_04.bvh", 0, &clip);
    struct arm_run run;
    run_hands(&clip, true, &prior, &run);
    print_message("%d of %d reachable hand-frames off by more than 2 mm (worst %.2f mm), "
                  "%d of %.0f hand-frames over 2 cm\n",
                  run.reachable_off, run.reachable, 1e3 * run.worst_reachable_m, run.off_2cm,
                  run.hand_frames);
    if (run.reachable_off > 0)
        fail_msg("%d hand-frames within the arm's reach are more than 2 mm off (worst %.1f mm)",
                 run.reachable_off, 1e3 * run.worst_reachable_m);
    if (!(run.off_2cm <= 0.05 * run.hand_frames))
        fail_msg("%d of %.0f hand-frames are more than 2 cm off", run.off_2cm, run.hand_frames);
    ev_clip_fini(&clip);
    pr_model_fini(&prior);
}

/* The arm joints' displacement when the stream moves by +-1e-5 m, on the clip whose
 * upper arms moved most (cmu_14_07, reaching and picking up, its own skeleton, whose
 * clavicles start at the neck's base): before, 4010 of 6654 arm joint positions moved
 * more than 1 mm, the worst 147 mm. */
static void
arms_do_not_jump_under_tiny_noise(void **state)
{
    (void)state;
    struct pr_model prior;
    load_prior(&prior);
    struct ev_clip clip;
    load("cmu_14_07.bvh", 0, &clip);
    struct body *clean = make_body(&clip, true, &prior);
    struct body *noisy = make_body(&clip, true, &prior);
    const struct sk_skeleton *sk = body_skeleton(clean);
    const enum sk_bone arm_bones[6] = {SK_LEFT_UPPER_ARM, SK_LEFT_LOWER_ARM, SK_LEFT_HAND,
                                       SK_RIGHT_UPPER_ARM, SK_RIGHT_LOWER_ARM, SK_RIGHT_HAND};
    const int n = clip.stream.frame_count;
    double *moved = calloc((size_t)n * 6, sizeof *moved);
    assert_non_null(moved);
    uint64_t seed = 0x2545F4914F6CDD1DULL;
    for (int row = 0; row < n; ++row) {
        struct em_tracking_frame f = clip.stream.frames[row];
        body_update(clean, &f);
        for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
            struct em_pose *p = &f.device[d].pose;
            for (int k = 0; k < 7; ++k) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                const float u = (float)((double)(seed >> 11) / 9007199254740992.0) * 2.0f - 1.0f;
                if (k < 3)
                    p->position_m[k] += 1e-5f * u;
                else
                    p->orientation[k - 3] += 1e-5f * u;
            }
            m_quat_normalize(p->orientation);
        }
        body_update(noisy, &f);
        for (int b = 0; b < 6; ++b) {
            const int j = sk->bone_joint[arm_bones[b]];
            moved[row * 6 + b] = (double)m_vec3_distance(body_pose(clean)->position_m[j],
                                                        body_pose(noisy)->position_m[j]);
        }
    }
    double worst = 0.0;
    int over_1mm = 0;
    for (int i = 0; i < n * 6; ++i) {
        worst = fmax(worst, moved[i]);
        over_1mm += moved[i] > 0.001;
    }
    print_message("arm joints: %d of %d over 1 mm, worst %.2f mm\n", over_1mm, n * 6,
                  1e3 * worst);
    /* The bounds: the 99th percentile within 1 mm, none beyond 20 mm. */
    if (over_1mm > n * 6 / 100)
        fail_msg("%d of %d arm joint positions moved more than 1 mm", over_1mm, n * 6);
    if (!(worst <= 0.020))
        fail_msg("an arm joint moved %.1f mm", 1e3 * worst);
    free(moved);
    body_destroy(&clean);
    body_destroy(&noisy);
    ev_clip_fini(&clip);
    pr_model_fini(&prior);
}

/* Height only (the default proportions fitted to the clip), elbow trackers besides the
 * headset and controllers: the elbows are the player's, the hands stay on the
 * controllers (before: 36 mm off on average on cmu_91_04, every frame over 2 mm). */
static void
elbow_trackers_leave_the_hands_on_the_controllers(void **state)
{
    (void)state;
    struct pr_model prior;
    load_prior(&prior);
    const char *clips[] = {"cmu_91_04.bvh", "cmu_14_24.bvh"};
    const uint32_t elbows =
        EM_TRACKER_BIT(EM_TRACKER_LEFT_ELBOW) | EM_TRACKER_BIT(EM_TRACKER_RIGHT_ELBOW);
    for (size_t c = 0; c < sizeof clips / sizeof clips[0]; ++c) {
        struct ev_clip clip;
        load(clips[c], elbows, &clip);
        assert_int_equal(clip.stream.frames[0].tracker_present, elbows);
        struct arm_run run;
        run_hands(&clip, false, &prior, &run);
        const double mean_mm = 1e3 * run.sum_miss_m / run.hand_frames;
        print_message("%s: hands %.2f mm off on average, %d of %.0f hand-frames over 2 cm, "
                      "%d of %d reachable over 2 mm\n",
                      clips[c], mean_mm, run.off_2cm, run.hand_frames, run.reachable_off,
                      run.reachable);
        if (run.reachable_off > 0)
            fail_msg("%s: %d reachable hand-frames more than 2 mm off (worst %.1f mm)",
                     clips[c], run.reachable_off, 1e3 * run.worst_reachable_m);
        if (!(mean_mm <= 2.0))
            fail_msg("%s: hands %.2f mm off their controllers on average", clips[c], mean_mm);
        ev_clip_fini(&clip);
    }
    pr_model_fini(&prior);
}

/* The head joint turns with the headset: the sit-to-stand clip (cmu_14_27, its own
 * skeleton), whose player looks down as they sit and rise. The head bone's rotation the
 * headset says is the device's times its offset's inverse (device = bone * offset).
 * Before the neck took its share of the turn: 53 frames more than 10 degrees off, the
 * worst 18.6. */
static void
the_head_turns_with_the_headset_when_looking_down(void **state)
{
    (void)state;
    struct pr_model prior;
    load_prior(&prior);
    struct ev_clip clip;
    load("cmu_14_27.bvh", 0, &clip);
    struct body *body = make_body(&clip, true, &prior);
    struct body_desc desc;
    body_get_desc(body, &desc);
    const int head = body_skeleton(body)->bone_joint[SK_HEAD];
    int off = 0;
    float worst = 0.0f;
    for (int row = 0; row < clip.stream.frame_count; ++row) {
        const struct em_tracking_frame *f = &clip.stream.frames[row];
        body_update(body, f);
        float want[4], diff[4];
        const float *device = f->device[EM_DEVICE_HEAD].pose.orientation;
        float offset_inv[4];
        m_quat_conjugate(desc.offsets.head_rotation, offset_inv);
        m_quat_mul(device, offset_inv, want);
        m_quat_mul_conj_first(want, body_pose(body)->rotation[head], diff);
        const float deg = m_quat_angle(diff) / M_DEG_TO_RAD;
        worst = fmaxf(worst, deg);
        off += deg > 10.0f;
    }
    print_message("head: %d of %d frames more than 10 degrees from the headset, worst %.1f\n",
                  off, clip.stream.frame_count, (double)worst);
    if (off > 0)
        fail_msg("%d frames with the head more than 10 degrees from the headset (worst %.1f)",
                 off, (double)worst);
    body_destroy(&body);
    ev_clip_fini(&clip);
    pr_model_fini(&prior);
}

/* Issue 27: an avatar whose arm span is 0.85 times its player's (the clip's person), on
 * the arms-high dance. Its own arms leave hands centimetres short; allowed to stretch by
 * 25 % (body_desc.arm_stretch_max), a third as many hands are off, and no arm ever grows
 * past the limit. With arms 1.15 times as
 * long, the hands are on the controllers with the elbows bent. (1045 of 1200 hand-frames
 * off without stretching, 271 with.) */
static void
short_arms_stretch_within_their_limit_to_the_controllers(void **state)
{
    (void)state;
    struct ev_clip clip;
    load("cmu_05_04.bvh", 0, &clip);
    const float span = sk_humanoid_arm_span(&clip.skeleton);
    const float ratios[] = {0.85f, 0.85f, 1.15f};
    const float stretch[] = {0.0f, 0.25f, 0.0f};
    int over_2mm[3] = {0, 0, 0}, locked[3] = {0, 0, 0}, hand_frames = 0;
    for (int c = 0; c < 3; ++c) {
        struct sk_skeleton sk;
        struct em_error err = {{0}};
        assert_int_equal(sk_skeleton_copy(&clip.skeleton, &sk), EM_OK);
        if (sk_humanoid_fit(&sk, clip.height_m, ratios[c] * span, &err) != EM_OK)
            fail_msg("%s", err.message);
        struct body_desc desc = {.skeleton = &sk, .arm_stretch_max = stretch[c]};
        struct body *body = NULL;
        if (body_create(&desc, &body, &err) != EM_OK)
            fail_msg("%s", err.message);
        const struct sk_skeleton *bsk = body_skeleton(body);
        hand_frames = 0;
        for (int row = 0; row < clip.stream.frame_count; ++row) {
            body_update(body, &clip.stream.frames[row]);
            struct body_status st;
            body_get_status(body, &st);
            const struct sk_pose *pose = body_pose(body);
            for (int s = 0; s < 2; ++s) {
                const int upper = bsk->bone_joint[s ? SK_RIGHT_UPPER_ARM : SK_LEFT_UPPER_ARM];
                const int elbow = bsk->bone_joint[s ? SK_RIGHT_LOWER_ARM : SK_LEFT_LOWER_ARM];
                const int hand = bsk->bone_joint[s ? SK_RIGHT_HAND : SK_LEFT_HAND];
                over_2mm[c] += m_vec3_distance(st.target_m[1 + s], st.reached_m[1 + s]) > HAND_ON_M;
                ++hand_frames;
                const float ua = m_vec3_distance(pose->position_m[upper], pose->position_m[elbow]);
                const float fa = m_vec3_distance(pose->position_m[elbow], pose->position_m[hand]);
                const float limit = 1.0f + stretch[c] + 1e-3f;
                if (ua > limit * bsk->length_m[elbow] || fa > limit * bsk->length_m[hand])
                    fail_msg("ratio %.2f: an arm stretched past %.0f %%: %.3f of %.3f m, %.3f of "
                             "%.3f m",
                             (double)ratios[c], 100.0 * (double)stretch[c], (double)ua,
                             (double)bsk->length_m[elbow], (double)fa, (double)bsk->length_m[hand]);
                float a[3], b[3];
                m_vec3_sub(pose->position_m[upper], pose->position_m[elbow], a);
                m_vec3_sub(pose->position_m[hand], pose->position_m[elbow], b);
                locked[c] += m_vec3_dot(a, b) < -0.996f * m_vec3_length(a) * m_vec3_length(b);
            }
        }
        body_destroy(&body);
        sk_skeleton_fini(&sk);
    }
    print_message("hand-frames off their controllers by > 2 mm of %d: short arms %d, "
                  "stretching %d, long arms %d; elbows locked straight: %d, %d, %d\n",
                  hand_frames, over_2mm[0], over_2mm[1], over_2mm[2], locked[0], locked[1],
                  locked[2]);
    assert_true(over_2mm[0] > hand_frames / 10);   /* short arms alone fall short */
    /* Stretching, most reach (the dance holds the hands high, often beyond even 25 %). */
    assert_true(over_2mm[1] < over_2mm[0] / 3);
    assert_true(over_2mm[2] <= hand_frames / 100);
    assert_true(locked[2] <= hand_frames / 100); /* long arms bend their elbows */
    ev_clip_fini(&clip);
}

/* ---- Reaching high and far, and a controller's glitch (issue 25) ------------------- */

#define SHIPPED_PRIOR EMBODY_SOURCE_DIR "/" PR_DEFAULT_MODEL

static void
load_shipped_prior(struct pr_model *model)
{
    struct em_error err;
    if (pr_model_load(SHIPPED_PRIOR, model, &err) != EM_OK)
        fail_msg("%s", err.message);
}

/* The default humanoid with `prior`, its resolved settings in `out_desc`. */
static struct body *
make_default_body(const struct pr_model *prior, struct body_desc *out_desc)
{
    memset(out_desc, 0, sizeof *out_desc);
    out_desc->prior = prior;
    struct body *body = NULL;
    struct em_error err;
    if (body_create(out_desc, &body, &err) != EM_OK)
        fail_msg("%s", err.message);
    body_get_desc(body, out_desc);
    return body;
}

/* The share of frames with a hand more than 2 cm from its controller's target (what
 * embody eval prints as "hands off"). */
static double
hands_off_share(const struct ev_clip *clip, bool known, const struct pr_model *prior)
{
    struct body *body = make_body(clip, known, prior);
    int off = 0;
    for (int row = 0; row < clip->stream.frame_count; ++row) {
        body_update(body, &clip->stream.frames[row]);
        struct body_status st;
        body_get_status(body, &st);
        bool any = false;
        for (int e = 1; e <= 2; ++e)
            any = any || m_vec3_distance(st.target_m[e], st.reached_m[e]) > 0.02f;
        off += any;
    }
    body_destroy(&body);
    return (double)off / clip->stream.frame_count;
}

/* Reaching up for things (cmu_14_07: the hands held up to 0.7 m above the neck), its own
 * skeleton and the default proportions, the default learned body: the shoulders rise and
 * the torso gives what the arms lack. Before (the clavicles stopped 35 degrees above
 * level, the torso pulled by the whole arm's chain in the solve): 9.1 % and 7.7 % of
 * frames with a hand more than 2 cm off. */
static void
hands_held_high_reach_their_controllers_on_a_real_clip(void **state)
{
    (void)state;
    struct pr_model prior;
    load_shipped_prior(&prior);
    struct ev_clip clip;
    load("cmu_14_07.bvh", 0, &clip);
    const double known = hands_off_share(&clip, true, &prior);
    const double height = hands_off_share(&clip, false, &prior);
    print_message("frames with a hand more than 2 cm off: own skeleton %.2f %%, height only "
                  "%.2f %%\n",
                  100.0 * known, 100.0 * height);
    if (!(known <= 0.05 && height <= 0.06))
        fail_msg("hands more than 2 cm off on %.2f %% (own skeleton) and %.2f %% (height only) "
                 "of frames",
                 100.0 * known, 100.0 * height);
    ev_clip_fini(&clip);
    pr_model_fini(&prior);
}

/* A real clip with `trackers` (its own skeleton, or the default proportions fitted to its
 * height: `known` false; the default learned body): a hand more than 2 cm from its
 * controller on at most 1 % of frames (embody eval's "hands off" target). */
static void
expect_hands_on_their_controllers(const char *clip_name, uint32_t trackers, bool known)
{
    struct pr_model prior;
    load_shipped_prior(&prior);
    struct ev_clip clip;
    load(clip_name, trackers, &clip);
    const double share = hands_off_share(&clip, known, &prior);
    print_message("%s (%s): frames with a hand more than 2 cm off: %.2f %%\n", clip_name,
                  known ? "own skeleton" : "height only", 100.0 * share);
    if (!(share <= 0.01))
        fail_msg("%s (%s): hands more than 2 cm off on %.2f %% of frames", clip_name,
                 known ? "own skeleton" : "height only", 100.0 * share);
    ev_clip_fini(&clip);
    pr_model_fini(&prior);
}

/* Waving with a pelvis tracker (cmu_14_24, its own skeleton, the default learned body):
 * a hand forward and below the shoulder, a little beyond the arm, brings the shoulder
 * forward to it. Before, the clavicle turned only a quarter of the way toward a target
 * square to its line: hands more than 2 cm off on 4.89 % of frames. */
static void
a_hand_forward_and_low_brings_the_shoulder_with_a_pelvis_tracker(void **state)
{
    (void)state;
    expect_hands_on_their_controllers("cmu_14_24.bvh", ST_SETUP_4, true);
}

/* The dance cmu_05_04 (its own skeleton, the default learned body): an arm held out to
 * the side, straight, its controller a few cm beyond the shoulder's reach from where the
 * neck target alone put the torso. The hands draw the neck toward them (b_fuse.c), so
 * the torso leans out as the dancer's does. Before: hands more than 2 cm off on 2.83 %
 * of frames. */
static void
an_arm_held_out_to_the_side_leans_the_torso_out_to_its_controller(void **state)
{
    (void)state;
    expect_hands_on_their_controllers("cmu_05_04.bvh", 0, true);
}

/* A person on a stool reaching down and forward (cmu_14_27, the default proportions
 * fitted to the height, the default learned body): the default arm falls a few cm short
 * of the controller from where the torso can bend; the shoulder girdle comes forward and
 * down to it (its cone 40 degrees, config/humanoid.json). With the cone at 30 degrees:
 * hands more than 2 cm off on 1.39 % of frames. */
static void
a_hand_low_from_a_stool_brings_the_shoulder_down_to_it(void **state)
{
    (void)state;
    expect_hands_on_their_controllers("cmu_14_27.bvh", 0, false);
}

/* The elbow's side: its unit offset from the shoulder-hand line; false when it is within
 * 3 cm of the line (a nearly straight arm, whose side says little). */
static bool
elbow_side_of(double pos[EV_JOINT_COUNT][3], enum ev_joint shoulder, enum ev_joint elbow,
              enum ev_joint hand, double out[3])
{
    double line[3], off[3], len = 0.0, dot = 0.0, n = 0.0;
    for (int k = 0; k < 3; ++k) {
        line[k] = pos[hand][k] - pos[shoulder][k];
        len += line[k] * line[k];
    }
    len = sqrt(len);
    for (int k = 0; k < 3; ++k) {
        line[k] /= len;
        dot += (pos[elbow][k] - pos[shoulder][k]) * line[k];
    }
    for (int k = 0; k < 3; ++k) {
        off[k] = pos[elbow][k] - pos[shoulder][k] - dot * line[k];
        n += off[k] * off[k];
    }
    n = sqrt(n);
    for (int k = 0; k < 3; ++k)
        out[k] = off[k] / n;
    return n >= 0.03;
}

/* A runner ducking (cmu_127_31, the default proportions, the default learned body): the
 * hand's cue for the elbow swings across the shoulder-hand line within a frame as the hand
 * turns, and the side it prefers crosses the arc the upper arm's twist forbids; the elbow
 * must not whip round with either: a bent elbow's side never turns more than 20 degrees
 * from one 60 Hz frame to the next (the swivel's cap, 8 rad/s, is 7.6). Before the side
 * was eased it turned 141 degrees in one frame; eased but not capped, 72 (going round
 * the allowed arc at 57 degrees a frame, the forearm's jerk 9 times the truth's). */
static void
a_fast_turning_hand_does_not_whip_the_elbow_round(void **state)
{
    (void)state;
    struct pr_model prior;
    load_shipped_prior(&prior);
    struct ev_clip clip;
    load("cmu_127_31.bvh", 0, &clip);
    struct body *body = make_body(&clip, false, &prior);
    static const enum ev_joint arm[2][3] = {
        {EV_LEFT_UPPER_ARM, EV_LEFT_LOWER_ARM, EV_LEFT_HAND},
        {EV_RIGHT_UPPER_ARM, EV_RIGHT_LOWER_ARM, EV_RIGHT_HAND}};
    double last[2][3];
    bool had[2] = {false, false};
    double worst = 0.0;
    for (int row = 0; row < clip.stream.frame_count; ++row) {
        body_update(body, &clip.stream.frames[row]);
        double pos[EV_JOINT_COUNT][3];
        struct em_error err = {{0}};
        assert_int_equal(ev_body_scored_positions(body, pos, &err), EM_OK);
        for (int s = 0; s < 2; ++s) {
            double side[3];
            const bool bent = elbow_side_of(pos, arm[s][0], arm[s][1], arm[s][2], side);
            if (bent && had[s]) {
                const double c = side[0] * last[s][0] + side[1] * last[s][1] + side[2] * last[s][2];
                worst = fmax(worst, acos(fmax(-1.0, fmin(1.0, c))) * (double)M_RAD_TO_DEG);
            }
            had[s] = bent;
            memcpy(last[s], side, sizeof side);
        }
    }
    body_destroy(&body);
    print_message("a bent elbow's side turned at most %.1f degrees in a frame\n", worst);
    if (!(worst <= 20.0))
        fail_msg("a bent elbow's side turned %.1f degrees in one frame", worst);
    ev_clip_fini(&clip);
    pr_model_fini(&prior);
}

/* Jitter (m/s^3, as ev_jitter_m_s3) of one scored joint. */
static double
joint_jitter_m_s3(const struct ev_motion *m, enum ev_joint j)
{
    double sum = 0.0;
    for (int f = 3; f < m->frame_count; ++f) {
        double d2 = 0.0;
        for (int k = 0; k < 3; ++k) {
            const double d = m->position_m[f][j][k] - 3.0 * m->position_m[f - 1][j][k] +
                             3.0 * m->position_m[f - 2][j][k] - m->position_m[f - 3][j][k];
            d2 += d * d;
        }
        sum += sqrt(d2);
    }
    return sum / (m->frame_count - 3) * m->fps * m->fps * m->fps;
}

/* A run that starts at full speed and stops (cmu_127_17, its own skeleton, the default
 * learned body): each elbow jitters at most 1.6 times the person's. Swivelling at its
 * cap and no faster, the right elbow went round at full speed and reversed within a
 * frame (2.17 times the person's); it now speeds up and slows down (b_arms.c,
 * swivel_move). */
static void
a_runners_elbows_swivel_without_jerks(void **state)
{
    (void)state;
    struct pr_model prior;
    load_shipped_prior(&prior);
    struct ev_clip clip;
    load("cmu_127_17.bvh", 0, &clip);
    struct ev_motion ours;
    struct em_error err = {{0}};
    assert_int_equal(ev_clip_reconstruct_prior(&clip, EV_KNOWN_BODY, &prior, &ours, NULL, &err),
                     EM_OK);
    static const enum ev_joint elbows[2] = {EV_LEFT_LOWER_ARM, EV_RIGHT_LOWER_ARM};
    for (int s = 0; s < 2; ++s) {
        const double ratio =
            joint_jitter_m_s3(&ours, elbows[s]) / joint_jitter_m_s3(&clip.truth, elbows[s]);
        print_message("%s elbow: jitter %.2f x the person's\n", s ? "right" : "left", ratio);
        if (!(ratio <= 1.6))
            fail_msg("the %s elbow jitters %.2f x the person's (at most 1.6)",
                     s ? "right" : "left", ratio);
    }
    ev_motion_fini(&ours);
    ev_clip_fini(&clip);
    pr_model_fini(&prior);
}

/* A device at `position_m` turned by `rotation`, valid and tracked. */
static void
set_device(struct em_device_pose *d, const float *position_m, const float *rotation)
{
    m_vec3_copy(position_m, d->pose.position_m);
    m_quat_copy(rotation, d->pose.orientation);
    d->flags = EM_POSE_ALL_VALID;
}

/* A player of the default avatar's size (1.75 m, the default learned body) stands still,
 * head level, and raises the right controller straight up above the right shoulder, as
 * high as the arm reaches with the shoulder raised (the hand's target 7 cm beyond the
 * arm's length above the shoulder's rest): after two seconds held there the hand is on
 * its controller (to 2 mm) and the head on the headset. Before, the clavicle stopped 35
 * degrees above level and the torso did not give: the hand 3.5 mm short (17 mm now and
 * 22 mm before with the controller 2 cm higher still). */
static void
a_hand_raised_above_the_head_reaches_its_controller(void **state)
{
    (void)state;
    struct pr_model prior;
    load_shipped_prior(&prior);
    struct body_desc desc;
    struct body *body = make_default_body(&prior, &desc);
    const struct sk_skeleton *sk = body_skeleton(body);
    const int upper = sk->bone_joint[SK_RIGHT_UPPER_ARM];
    const float arm = sk->length_m[sk->bone_joint[SK_RIGHT_LOWER_ARM]] +
                      sk->length_m[sk->bone_joint[SK_RIGHT_HAND]];
    const float *shoulder = sk->rest_position_m[upper];
    /* The head faces +Z (the headset's own offset turns it); hands as a bone turned by
     * `bone` holds them (device = bone * grip offset). */
    const float eye = body_eye_height_for(desc.height_m);
    const float head_pos[3] = {0.0f, eye, 0.0f};
    const float up_turn_axis[3] = {0, 0, 1};
    float right_up[4], left_rot[4], right_down[4], right_rot[4];
    m_quat_from_axis_angle(up_turn_axis, -0.5f * M_PI_F, right_up); /* -X (right) to +Y */
    m_quat_from_axis_angle(up_turn_axis, 0.5f * M_PI_F, right_down); /* -X to -Y */
    float left_down[4];
    m_quat_from_axis_angle(up_turn_axis, -0.5f * M_PI_F, left_down); /* +X to -Y */
    m_quat_mul(left_down, desc.offsets.grip_rotation[0], left_rot);
    const float left_pos[3] = {0.2f, eye - 0.75f, 0.0f};
    const float high[3] = {shoulder[0], shoulder[1] + arm + 0.12f, shoulder[2]};
    const float low[3] = {-0.2f, eye - 0.75f, 0.0f};
    const double rate_hz = 90.0;
    const int rows = (int)(4.0 * rate_hz);
    for (int row = 0; row < rows; ++row) {
        struct em_tracking_frame f;
        memset(&f, 0, sizeof f);
        f.time_s = row / rate_hz;
        set_device(&f.device[EM_DEVICE_HEAD], head_pos, desc.offsets.head_rotation);
        set_device(&f.device[EM_DEVICE_LEFT_HAND], left_pos, left_rot);
        /* Down at the side for a second, up over a second, then held up for two. */
        const float t = m_clampf((float)(f.time_s - 1.0), 0.0f, 1.0f);
        const float ease = t * t * (3.0f - 2.0f * t);
        float pos[3], bone[4];
        m_vec3_lerp(low, high, ease, pos);
        m_quat_slerp(right_down, right_up, ease, bone);
        m_quat_mul(bone, desc.offsets.grip_rotation[1], right_rot);
        set_device(&f.device[EM_DEVICE_RIGHT_HAND], pos, right_rot);
        body_update(body, &f);
    }
    struct body_status st;
    body_get_status(body, &st);
    const float hand_off = m_vec3_distance(st.target_m[2], st.reached_m[2]);
    const float head_off = m_vec3_distance(st.target_m[0], st.reached_m[0]);
    print_message("raised hand %.1f mm from its controller's target (%.3f m above the "
                  "shoulder's rest, arm %.3f m), head %.1f mm from the headset's\n",
                  1e3 * (double)hand_off, (double)(st.target_m[2][1] - shoulder[1]), (double)arm,
                  1e3 * (double)head_off);
    if (!(hand_off <= HAND_ON_M))
        fail_msg("the raised hand is %.1f mm from its controller's target", 1e3 * (double)hand_off);
    if (!(head_off <= 0.005f))
        fail_msg("the head is %.1f mm from the headset's target", 1e3 * (double)head_off);
    body_destroy(&body);
    pr_model_fini(&prior);
}

/* A smooth pseudo-random value in -1..1 at time t: three sines whose frequencies (0.3 to
 * 3 Hz) and phases come from `seed` and `channel`. */
static float
wander(uint32_t seed, int channel, double t)
{
    uint32_t x = seed * 2654435761u + (uint32_t)channel * 40503u + 1u;
    double sum = 0.0;
    for (int k = 0; k < 3; ++k) {
        x = x * 1664525u + 1013904223u;
        const double hz = 0.3 + 2.7 * (double)(x >> 8) / 16777216.0;
        x = x * 1664525u + 1013904223u;
        const double phase = 2.0 * (double)M_PI_F * (double)(x >> 8) / 16777216.0;
        sum += sin(2.0 * (double)M_PI_F * hz * t + phase);
    }
    return (float)(sum / 3.0);
}

/* Arms flailing (the default avatar, the default learned body, the head still): each
 * controller wanders within the arm's reach of its shoulder while spinning about a
 * wandering axis at up to 3 turns a second, so the elbow's preferred side sweeps round
 * and across the arc the upper arm's twist forbids, 20 runs of 10 s. No upper arm or
 * forearm is ever twisted beyond its range (embody eval's check, 1 degree; where no
 * swivel keeps it in range the range wins over the hand). Before, a capped swivel whose
 * ways round were both blocked left the upper arm at the last swivel tried (a forbidden
 * one), and a capped swivel could itself lie in an arc that had moved under the last
 * side. */
static void
flailing_arms_never_twist_beyond_their_range(void **state)
{
    (void)state;
    struct pr_model prior;
    load_shipped_prior(&prior);
    struct body_desc desc;
    struct body *body = make_default_body(&prior, &desc);
    const struct sk_skeleton *sk = body_skeleton(body);
    const float eye = body_eye_height_for(desc.height_m);
    const float head_pos[3] = {0.0f, eye, 0.0f};
    const double rate_hz = 60.0;
    const int rows = (int)(10.0 * rate_hz);
    double worst_twist = 0.0;
    for (uint32_t run = 0; run < 20; ++run) {
        body_reset(body);
        struct ev_checks checks;
        ev_checks_init(&checks);
        float spin[2][4] = {{0, 0, 0, 1}, {0, 0, 0, 1}};
        for (int row = 0; row < rows; ++row) {
            const double t = row / rate_hz;
            struct em_tracking_frame f;
            memset(&f, 0, sizeof f);
            f.time_s = 100.0 * run + t;
            set_device(&f.device[EM_DEVICE_HEAD], head_pos, desc.offsets.head_rotation);
            for (int s = 0; s < 2; ++s) {
                const int upper = sk->bone_joint[s == 0 ? SK_LEFT_UPPER_ARM : SK_RIGHT_UPPER_ARM];
                const int lower = sk->primary_child[upper], hand = sk->primary_child[lower];
                const float arm = sk->length_m[lower] + sk->length_m[hand];
                float dir[3] = {wander(run, 6 * s, t), wander(run, 6 * s + 1, t),
                                wander(run, 6 * s + 2, t)};
                m_vec3_normalize_or(dir, (const float[3]){0, -1, 0}, dir);
                float pos[3], axis[3] = {wander(run, 6 * s + 3, t), wander(run, 6 * s + 4, t),
                                         wander(run, 6 * s + 5, t)};
                m_vec3_muladd(sk->rest_position_m[upper], dir,
                              arm * (0.62f + 0.28f * wander(run, 20 + s, t)), pos);
                m_vec3_normalize_or(axis, (const float[3]){0, 0, 1}, axis);
                float step[4], rot[4];
                m_quat_from_axis_angle(axis, (float)(2.0 * (double)M_PI_F * 3.0 / rate_hz) *
                                                 (0.5f + 0.5f * wander(run, 30 + s, t)),
                                       step);
                m_quat_mul(step, spin[s], spin[s]);
                m_quat_normalize(spin[s]);
                m_quat_mul(spin[s], desc.offsets.grip_rotation[s], rot);
                set_device(&f.device[EM_DEVICE_LEFT_HAND + s], pos, rot);
            }
            body_update(body, &f);
            ev_checks_add_frame(&checks, body);
        }
        ev_checks_finish(&checks, rows);
        worst_twist = fmax(worst_twist, checks.twist_excess_deg);
    }
    print_message("twist beyond a limb's range at most %.2f degrees\n", worst_twist);
    if (!(worst_twist <= 1.0))
        fail_msg("a limb twisted %.2f degrees beyond its range", worst_twist);
    body_destroy(&body);
    pr_model_fini(&prior);
}

/* The largest distance between a joint of `a` and the same joint of `b`, kept in
 * *io_worst with the row it came at when larger. */
static void
keep_worst_joint_apart(const struct sk_pose *a, const struct sk_pose *b, int row,
                       double *io_worst, int *io_row)
{
    for (int j = 0; j < a->joint_count; ++j) {
        const double d = (double)m_vec3_distance(a->position_m[j], b->position_m[j]);
        if (d > *io_worst) {
            *io_worst = d;
            *io_row = row;
        }
    }
}

/* Every device's sample lost for two frames in a row in a real walk (cmu_91_04, its own
 * skeleton, the default learned body): the body coasts over both (B_COAST_MAX_S is 0.05
 * s) as it does over one, every joint within COAST_MAX_OFF_M of the clean run's on every
 * frame (1.7 cm when this was written, during the coast: a swinging hand is not where its
 * last velocity carries it). Before, the second lost sample was not coasted (the first had
 * marked the device lost): the prior's history stood still for a frame, 4.3 cm. */
#define COAST_MAX_OFF_M 0.025
static void
two_lost_samples_in_a_row_are_coasted_over(void **state)
{
    (void)state;
    struct pr_model prior;
    load_shipped_prior(&prior);
    struct ev_clip clip;
    load("cmu_91_04.bvh", 0, &clip);
    const int rows = clip.stream.frame_count, bad_row = rows / 2;
    struct body *clean = make_body(&clip, true, &prior);
    struct body *lost = make_body(&clip, true, &prior);
    double worst = 0.0;
    int worst_row = -1;
    for (int row = 0; row < rows; ++row) {
        struct em_tracking_frame f = clip.stream.frames[row];
        body_update(clean, &f);
        if (row == bad_row || row == bad_row + 1)
            for (int d = 0; d < EM_DEVICE_COUNT; ++d)
                f.device[d].flags = 0;
        body_update(lost, &f);
        keep_worst_joint_apart(body_pose(clean), body_pose(lost), row, &worst, &worst_row);
    }
    print_message("two lost samples at rows %d and %d: a joint at most %.1f mm from the clean "
                  "run's (row %d)\n",
                  bad_row, bad_row + 1, 1e3 * worst, worst_row);
    if (!(worst <= COAST_MAX_OFF_M))
        fail_msg("two lost samples threw a joint %.1f cm from the clean run's (row %d)",
                 100.0 * worst, worst_row);
    body_destroy(&clean);
    body_destroy(&lost);
    ev_clip_fini(&clip);
    pr_model_fini(&prior);
}

/* One right controller sample 50 m away in a real walk (cmu_91_04, its own skeleton, the
 * default learned body), the headset steady: a lost sample. The arm is never thrown
 * toward it (the hand within 10 cm of the clean run's on every frame), and from 0.1 s
 * after it every joint is within 5 cm of the clean run's. Before, the hand went straight
 * into the body: the arm pointed at the sample, and the hand's filter carried it on. */
static void
a_50_m_controller_glitch_never_throws_the_arm(void **state)
{
    (void)state;
    struct pr_model prior;
    load_shipped_prior(&prior);
    struct ev_clip clip;
    load("cmu_91_04.bvh", 0, &clip);
    const int rows = clip.stream.frame_count, bad_row = rows / 2;
    struct body *clean = make_body(&clip, true, &prior);
    struct body *glitch = make_body(&clip, true, &prior);
    const struct sk_skeleton *sk = body_skeleton(clean);
    const int hand = sk->bone_joint[SK_RIGHT_HAND];
    double hand_worst = 0.0, after_worst = 0.0;
    int after_row = -1;
    for (int row = 0; row < rows; ++row) {
        struct em_tracking_frame f = clip.stream.frames[row];
        body_update(clean, &f);
        if (row == bad_row)
            f.device[EM_DEVICE_RIGHT_HAND].pose.position_m[0] += 50.0f;
        body_update(glitch, &f);
        const struct sk_pose *a = body_pose(clean), *b = body_pose(glitch);
        hand_worst =
            fmax(hand_worst, (double)m_vec3_distance(a->position_m[hand], b->position_m[hand]));
        if (row >= bad_row + 6) /* 0.1 s at the clip's 60 Hz */
            keep_worst_joint_apart(a, b, row, &after_worst, &after_row);
    }
    print_message("50 m right controller glitch at row %d: the hand at most %.1f mm from the "
                  "clean run's; from 0.1 s after, a joint at most %.1f mm (row %d)\n",
                  bad_row, 1e3 * hand_worst, 1e3 * after_worst, after_row);
    if (!(hand_worst <= 0.10))
        fail_msg("the arm was thrown: the hand %.2f m from the clean run's", hand_worst);
    if (!(after_worst <= 0.05))
        fail_msg("0.1 s after the glitch a joint is %.1f cm from the clean run's (row %d)",
                 100.0 * after_worst, after_row);
    body_destroy(&clean);
    body_destroy(&glitch);
    ev_clip_fini(&clip);
    pr_model_fini(&prior);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hands_are_on_their_controllers_on_an_arms_high_dance),
        cmocka_unit_test(short_arms_stretch_within_their_limit_to_the_controllers),
        cmocka_unit_test(arms_do_not_jump_under_tiny_noise),
        cmocka_unit_test(elbow_trackers_leave_the_hands_on_the_controllers),
        cmocka_unit_test(the_head_turns_with_the_headset_when_looking_down),
        cmocka_unit_test(hands_held_high_reach_their_controllers_on_a_real_clip),
        cmocka_unit_test(a_hand_forward_and_low_brings_the_shoulder_with_a_pelvis_tracker),
        cmocka_unit_test(an_arm_held_out_to_the_side_leans_the_torso_out_to_its_controller),
        cmocka_unit_test(a_hand_low_from_a_stool_brings_the_shoulder_down_to_it),
        cmocka_unit_test(a_fast_turning_hand_does_not_whip_the_elbow_round),
        cmocka_unit_test(a_runners_elbows_swivel_without_jerks),
        cmocka_unit_test(a_hand_raised_above_the_head_reaches_its_controller),
        cmocka_unit_test(flailing_arms_never_twist_beyond_their_range),
        cmocka_unit_test(a_50_m_controller_glitch_never_throws_the_arm),
        cmocka_unit_test(two_lost_samples_in_a_row_are_coasted_over),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
