/*
 * The learned body-pose prior in the body (include/embody/prior.h): each 60 Hz sample of
 * the devices goes into the prior's history; its prediction (pelvis, ankles, toes, knees,
 * foot contact) is a source of the frame's fusion (b_fuse.c): the pelvis's rotation, the
 * legs' ankle targets, foot rotations and knee poles, each with its confidence, trusted
 * above the seed's (b_seed.c) and below body trackers.
 *
 * The network's per-frame outputs jitter, so they are smoothed as they come, in the heading
 * frame (a planted foot's more than a swinging one's, smooth_outputs), and the positions
 * then go through One-Euro filters (slow when still, quick when moving). A foot the prior says is
 * in contact is planted where it was when contact began and stays there (no skate) until the
 * contact probability drops, or until the prediction has moved well away from it (a missed lift),
 * or it is out of the leg's reach; then it is released toward its predicted place, the difference
 * fading over RELEASE_S. Holding and letting go blend smoothly with the contact probability (no
 * switch a tiny input change could flip). Knee planes and feet stay within the thigh's twist of the
 * pelvis's facing.
 *
 * PELVIS: the prior predicts the pelvis's position too. Taken as it is, it made things
 * worse (v1 on the validation subjects 02, 07, 35, known body: MPJPE 8.86 cm against 7.74
 * with the procedural one, upright under the neck), and the arms jittered 3 to 4 times
 * the truth's, because a pelvis that is not a spine's length from the head leaves the
 * solver a bent spine to settle differently every frame. So the prior's pelvis is taken
 * at the procedural one's distance from the head (its direction from the head is what
 * the prior knows: a torso leaning over, sitting back) and blended with the procedural
 * pelvis by PELVIS_PRIOR_SHARE (pelvis_estimate; the fusion then keeps it within the
 * spine's reach of the neck, b_fuse.c). The rotation (tilt and yaw) is the prior's, its
 * yaw trusted by agreement with the head's heading when still (YAW_AGREE_RAD).
 */
#include <math.h>
#include <string.h>

#include "b_internal.h"
#include "embody/m_math.h"

/* One-Euro settings of the predicted joints: cutoff at rest (Hz) and speed coefficient.
 * Chosen on the validation subjects (02, 07, 35 of mocap-train), known body: foot beta 6
 * gave MPJPE 7.45 cm and jitter 1118 m/s^3 (3 clips above 1.5x the truth's), 2 with the
 * contact smoothing below 7.49 cm and 994 (none above), 1 7.65 cm and 929. The legs' and
 * the neck's predicted points are filtered as offsets from the head instead of in the
 * room (filter_from_head; three folds of people left out, v5 recipe, known / height only:
 * the legs' MPJPE 10.20 -> 10.12 / 10.79 -> 10.72 cm, clips above 1.5x the truth's jitter
 * 29 -> 25 / 28 -> 23 of 112, skate 0.85 -> 0.89 / 0.88 -> 0.92 cm/frame; the neck's too
 * 10.05 / 10.66). The pelvis's too scored 10.02 / 10.61 but left a hand off its
 * controller on 4.7 % of a public clip's frames (0.4 before) and the height-only skate
 * at 0.500: the pelvis stays filtered in the room. From the head, cutoff 1 Hz and beta 3
 * or 4 scored 10.10 and 10.08 on the legs with two and four more jittery clips. */
#define FOOT_MIN_CUTOFF_HZ 1.5f
#define FOOT_BETA 2.0f
/* However fast a leg moves from the head, its points' cutoff stays at most this: a
 * running leg's swing (3 to 5 m/s from the head) opened the filter to 8 to 11 Hz, where
 * the network's frame-to-frame noise passes (a runner's legs 2 to 2.5 times the
 * person's jerk). Three folds of people left out, v5 recipe, known / height only (MPJPE
 * cm; clips above 1.5x the truth's jitter, of 112; the public run cmu_127_17's jitter x
 * the truth's): no cap 9.957 / 10.577, 22 / 19, 1.81 / 1.86; 10 Hz 9.963 / 10.583, 21 /
 * 17, 1.70 / 1.74; 8 Hz 9.977 / 10.600, 18 / 15, 1.63 / 1.67 (taken); 7 Hz 9.997 /
 * 10.620, 18 / 14, 1.59 / 1.62 (feet lag on the folds 20 -> 21 -> 22 ms). */
#define FOOT_MAX_CUTOFF_HZ 8.0f
/* Contact: a foot is held fully above PLANT_AT, free below LIFT_AT, in between partly.
 * Chosen on three folds of people left out with v5-recipe models (known body, mean MPJPE
 * cm / foot skate cm/frame / feet lag ms, mean clip, per fold): 0.6 and 0.4 10.51 / 0.84
 * / 77, 96, 51; 0.65 and 0.45 10.46 / 0.87 / 65, 89, 50; 0.7 and 0.5 10.40 / 0.90
 * / 61, 45, 47; 0.8 and 0.6 10.36 / 1.00 / 57, 19, 24: a foot let go sooner follows the
 * network sooner (less lag and error) and slides more while planted. A wider span eases
 * the hold in and out over more frames: the foot stopped or started within two or three
 * frames was the legs' jitter on runs (a held foot's jerk twice the network's own on
 * cmu_127_17). Folds' mean MPJPE / skate / clips above 1.5x the truth's jitter (of 112),
 * with the pelvis bounded by the head's reach: 0.65 and 0.45 10.43 / 0.867 / 36; 0.75 and
 * 0.35 10.43 / 0.87 / 34; 0.8 and 0.3 10.40 / 0.867 / 33; 0.85 and 0.3 10.38 / 0.887 / 33;
 * 0.9 and 0.3 10.35 / 0.91 / 32; 0.95 and 0.15 10.40 / 0.89 / 30; 1 and 0 10.48 / 0.89 /
 * 33. With the bound from the seed's neck instead (b_fuse.c, as shipped): 0.8 and 0.3
 * 10.41 / 0.870 / 33; 0.8 and 0.32 10.40 / 0.873; 0.8 and 0.35 10.39 / 0.887; 0.78 and
 * 0.3 10.42 / 0.863 / 34 (taken: the widest span with no more skate than the narrow one's
 * 0.867). (The feet lag here is the old measure's, by position; the eval now times their
 * motion.) */
#define PLANT_AT 0.78f
#define LIFT_AT 0.3f
/* Share of each new contact probability taken per 60 Hz frame. It starts from 0 (free)
 * after a start or a restart, not from the first prediction: that one is made from a
 * single sample (no motion yet), which says standing, and held a runner's feet where they
 * were, to be let go with a jump a few frames on (the run cmu_127_17, which starts at 3.4
 * m/s: jitter 2.04 -> 1.81x the truth's, known body). Three folds of people left out, v5
 * recipe, known / height only: MPJPE 10.007 -> 9.957 / 10.630 -> 10.577 cm, clips above
 * 1.5x the truth's jitter 23 -> 22 / 22 -> 19 of 112, skate 0.893 -> 0.917 / 0.913 ->
 * 0.937 cm/frame (the first frames' feet follow the network). A player who starts
 * standing is held within a few frames. */
#define CONTACT_SMOOTHING 0.2f
/* A held foot from DRIFT_START_M to PLANT_MAX_DRIFT_M (horizontally) from where the prior
 * now puts it is let go, fully at the latter. */
#define DRIFT_START_M 0.18f
#define PLANT_MAX_DRIFT_M 0.25f
/* The foot may turn this far from the pelvis's facing (the knee's plane B_B_KNEE_MAX_TURN_RAD,
 * the thigh's twist limit; the foot adds its own 20 degrees). */
#define FOOT_MAX_TURN_RAD (40.0f * M_DEG_TO_RAD)
/* A held foot turned this far from the predicted one is let go, fully at the second: a
 * player who turned on the spot without lifting a foot as far as the prior can tell
 * (turning in small shuffles) faces a new way, and so do the feet. */
#define TURN_START_RAD (30.0f * M_DEG_TO_RAD)
#define TURN_RELEASE_SPAN_RAD (15.0f * M_DEG_TO_RAD)
/* Standing still (the pelvis slower than SETTLE_MAX_SPEED_M_S, the head turning slower
 * than SETTLE_MAX_TURN_RAD_S) from SETTLE_AFTER_S to SETTLE_FULL_S, the turn a held foot
 * is let go at comes down to SETTLE_TURN_RAD. */
#define SETTLE_MAX_SPEED_M_S 0.2f
#define SETTLE_MAX_TURN_RAD_S 0.3f
#define SETTLE_AFTER_S 0.5f
#define SETTLE_FULL_S 1.0f
#define SETTLE_TURN_RAD (5.0f * M_DEG_TO_RAD)
/* Settled, a foot turns at most this far from the pelvis's facing (a stance's toe-out;
 * the seed (b_seed.c) squares a procedural stance to the same). */
#define SETTLED_FOOT_TURN_RAD (10.0f * M_DEG_TO_RAD)
/* Seated (update_seated): both predicted ankles this far above their standing height, the
 * pelvis under this share of its standing height and moving up or down slower than this;
 * the evidence eases in and out with this time constant. The feet's height was chosen on
 * the training clip cmu_14_29 with the v2 model, which lifts feet on a stool's rung less
 * than v1 did (0.10 m found 0 of 496 seated rows; 0.03: 431, and 135 of 766 others; 0.02:
 * 198 others). The pelvis's share on the same clip with v3, whose feet are up on more of
 * the standing rows (feet 0.03 m; others at most a fifth): 0.95 177 of 766 others, 0.92
 * 177, 0.90 154 (427 of 496 seated), 0.89 within (feet 0.04 or 0.05 m: 176, 174).
 * With v4 on the same clip: feet 0.03 and 0.04 m both sit on 347 of 496 seated rows and
 * 134 of 766 others (pelvis share 0.90: 422 and 156, too many others); 0.04 m, because the
 * demo's squat to the floor (no seat) then never says sitting (0.03: 19 frames). With v8,
 * which lifts the feet on a rung less again (cmu_14_29, seated rows and others; in
 * brackets the public stool clip cmu_14_27's seated rows): 0.04 m 288 of 496 and 69 of
 * 766; 0.035 301 and 80 (252 of 605); 0.03 307 and 97 (278 of 605, 18 of 471 others),
 * the demo's squat never sitting (taken); 0.025 312 and 120 (282). */
#define SEATED_FEET_UP_M 0.03f
#define SEATED_MAX_HIPS_SHARE 0.89f
#define SEATED_MAX_VERTICAL_M_S 0.3f
#define SEATED_EASE_S 0.3f
/* A held foot farther from its hip than the first share of the leg's length is let go,
 * fully at the second: no leg holds it there (a bad stretch of input left it behind). */
#define RELEASE_FROM_SHARE 1.2f
#define RELEASE_REACH_SHARE 1.5f
/* A lifted foot's offset from its prediction fades with this time constant. */
#define RELEASE_S 0.08f
/* A knee this close to the hip-ankle line says little about its direction. */
#define KNEE_BEND_FULL_M 0.05f
#define KNEE_POLE_DISTANCE_M 0.5f
/* The pelvis (pelvis_estimate): the prior's share. Until this version the share also
 * fell with the disagreement of the prior's pelvis-to-head distance with the spine's (to
 * 1/e at 8 cm): with the pelvis bounded by the seed's neck in the fusion (b_fuse.c) that
 * gate only cost, three folds of people left out with v5-recipe models, known / height
 * only mean MPJPE cm (pelvis error known): gate at 8 cm 10.42 / 11.00 (8.93); at 15 cm
 * 10.29 / -; 25 cm 10.24 / - (8.22); 50 cm 10.21 / - (8.12); none 10.20 / 10.79 (8.08,
 * taken); none with the share 0.9 10.17 / 10.77 (8.02; but lying down on the back a joint
 * then went 1.8 cm under the floor on the way, the floor's target 1 cm) and 1 10.18 /
 * 10.79; the prior's own distance from the head instead of the spine's, share 0.9 10.48.
 * The share was chosen before. On subjects 02, 07, 35 with a v2-recipe model that held them out
 * (known body MPJPE / pelvis cm): share 0 7.42 / 5.74, 0.2 7.45 / 5.96, 0.4 7.58 / 6.40,
 * 0.7 7.85 / 7.34 (0.4 with 0.04 m: 7.57). On people it has not seen, the prior's pelvis
 * (9.3 cm off, cross-validated) is worse than the one upright under the neck, so its
 * share is 0 until a model predicts it better; the rotation is still the prior's.
 * v3 (30 epochs), same subjects with a model that held them out, known / height only
 * MPJPE: share 0 7.13 / 8.50, 0.25 7.09 / 8.49, 0.5 7.14 / 8.55, 1 7.43 / 8.80 (pelvis
 * 5.74, 5.62, 5.88, 7.13 cm known body): 0.25 gains 0.04 cm there, but turning on the
 * spot (test_prior_body) then leaves a foot 47 degrees from the heading: still 0.
 * Those subjects mostly walk, where the pelvis under the neck is hard to beat. With the
 * fusion step and the yaw's trust (below), three folds of people left out, each with a
 * model of the v3 recipe that held them out (`embody train ... --holdout LIST`, the card's
 * command): subjects 05, 127 (dance, runs, crouches), 14, 49 (everyday, climbing,
 * sitting, dance, exercise) and 02, 07, 35 (walks); known / height only MPJPE cm:
 *   share  05,127          14,49           02,07,35       mean
 *   0      14.28 / 15.33   13.88 / 14.78   7.12 / 8.47    11.76 / 12.86
 *   0.5    13.64 / 14.78   13.37 / 14.20   7.12 / 8.52    11.38 / 12.50
 *   0.75   13.46 / 14.66   13.25 / 14.04   7.24 / 8.61    11.32 / 12.44 (taken)
 *   1      13.53 / 14.74   13.27 / 14.03   7.41 / 8.76    11.40 / 12.51
 * (pelvis error 13.38 -> 9.88 cm on 05, 127; clips over 1.5x the truth's jitter 32 -> 34
 * of 51 there, 3 of 38 and 0 of 23 unchanged). */
#define PELVIS_PRIOR_SHARE 0.75f
/* The pelvis's yaw (pelvis_estimate) is the prior's while the body moves; standing still
 * (settled, as the feet: SETTLE_AFTER_S to SETTLE_FULL_S) it is trusted by how well it
 * agrees with the seed's heading (where the head has looked), exp(-(away / this)^2): a
 * still player who raises a hand, or who has turned on the spot, has not turned the hips
 * away from where they look, whatever the network says. Chosen on subjects 02, 07, 35
 * with the v3 model that held them out (known / height only MPJPE cm; the turn-in-place
 * probe from the middle row of each clip, worst foot from the heading): trusted fully
 * 7.09 / 8.47, 128.3 deg; by agreement always, 60 deg 7.11 / 8.47, 25 deg 7.14 / 8.52;
 * settled only, 30 deg 7.09 / 8.47, 23.6 deg; 15 deg 7.09 / 8.46, 23.3 deg. With the
 * seed's heading no longer turned toward the hands (b_seed.c), the hand-up probe (the
 * hips' turn when a still player raises a hand above the head, worst clip): 15 deg 12.1
 * deg, 8 deg 6.2 (taken; MPJPE 7.09 / 8.46), 5 deg 4.2 (the same MPJPE). */
#define YAW_AGREE_RAD (8.0f * M_DEG_TO_RAD)
#define PELVIS_MIN_CUTOFF_HZ 1.5f
#define PELVIS_BETA 2.0f
/* Soft reach (soften_reach): on the validation subjects, known body, no softening gave
 * MPJPE 7.49 cm and jitter 994 m/s^3, 0.95 7.45 and 935, 0.9 7.40 and 932 (knee jitter
 * 2500 -> 1570, truth 1050), 0.85 7.42 and 931. */
#define SOFT_REACH_SHARE 0.9f
/* The neck (torso_estimate): the prior's share of the neck target (the seed's the
 * rest), and its One-Euro settings. Chosen on three folds of people left out, each with a
 * model of the v5 recipe that held them out (MPJPE cm, known body / height only, the mean
 * of the folds 05,127 / 14,49 / 02,07,35):
 *   0    10.59 / 11.37      0.5  10.53 / 11.09 (taken)
 *   0.3  10.52 / 11.19      0.7  10.54 / 11.03
 *   1    known body 12.77 and 12.37 on the first two folds (0: 12.68 and 12.37): the seed's
 *        neck is at the known skeleton's neck length from the head, the network's at an
 *        average person's; only the network's direction, at the skeleton's length, was
 *        worse still (12.92 and 12.57).
 * Above 0 the hands were off their controllers on a few more frames on the walks (5.4 %
 * of frames on the worst clip at 0, 7.3 % at 0.5). The network's shoulders as targets for
 * the torso's solve (weight 0.1 to 0.3 while no hand pulls them) gained 0.02 to 0.04 cm:
 * not used. */
#define NECK_PRIOR_SHARE 0.5f
#define NECK_MIN_CUTOFF_HZ 3.0f
#define NECK_BETA 4.0f
/* The back's bend (torso_estimate, output set 3): the confidence of the chest
 * joint's offset from the straight pelvis-neck line, read off the network's pelvis, spine
 * and chest points (filtered as the neck, from the head). Chosen on three folds of people
 * left out, each with a model of the v6 recipe that held them out (MPJPE cm, known body /
 * height only, folds 05,127 / 14,49 / 02,07,35; upper body on the last two; clips above
 * 1.5x the truth's jitter of 112, known body; the rows at 0.5 and 1 measured with the
 * curve's pelvis filtered in the room, 0.5 now 12.16 11.80 6.01 / 12.88 12.20 6.86, upper
 * 3.59 2.79):
 *   0    12.17 11.85 6.13 / 12.87 12.26 6.91   upper 3.71 3.05   13 + 1
 *   0.5  12.17 11.80 6.03 / 12.89 12.20 6.87   upper 3.59 2.85   12 + 1   (taken)
 *   1    12.18 11.80 6.04 / 12.89 12.21 6.87   upper 3.60 2.85   11 + 1
 * The chest joint's own error on two held-out clips of subject 05 and 127 (bending back,
 * range of motion): 6.88 / 4.62 cm at 0, 6.24 / 4.38 at 0.5. */
#define BACK_PRIOR_SHARE 0.5f
/* The network's outputs are smoothed exponentially as they come (smooth_outputs), in the
 * heading frame (the head's own motion is not delayed): each prediction keeps this share
 * of the last smoothed one. A leg's share is scaled by its foot's contact probability: a
 * planted foot's prediction is steadied, a swinging one is not made late. Chosen on the
 * validation subjects 02, 07, 35 with a v3 model that held them out, known body (MPJPE
 * cm / jitter m/s^3 / worst clip's jitter x truth / skate cm/frame / feet lag ms):
 *   none                          7.13 / 786 / 1.22 / 0.79 / 23.5
 *   all outputs 0.3               7.15 / 694 / 1.07 / 0.80 / 26.6
 *   all outputs 0.6               7.25 / 625 / 0.98 / 0.83 / 34.3
 *   all outputs 0.7               7.38 / 603 / 0.95 / 0.86 / 40.2
 *   contacts 0.6 only             7.09 / 785 / 1.21 / 0.80 / 24.2
 *   contacts 0.8 only             7.05 / 789 / 1.23 / 0.84 / 26.1
 *   legs 0.9 x contact            7.13 / 697 / 1.09 / 0.79 / 24.8
 *   legs 0.95 x contact, contacts 0.3  7.09 / 702 / 1.13 / 0.79 / 25.1 (taken)
 * The pelvis's outputs: 0.6 changed nothing (only its rotation is used, eased in decode). */
#define OUTPUT_SMOOTHING_LEGS 0.95f
#define OUTPUT_SMOOTHING_CONTACT 0.3f
/* While the history fills after a start or a restart (its first FRESH_HISTORY_FRAMES
 * samples, 0.6 s), the window is padded with its first sample: the predictions swing as
 * it fills (the first, from one sample, says standing; the next, with one step of motion,
 * a runner's stride). The pelvis's and the legs' outputs keep at least this share of the
 * last times the share of those samples still missing (0.9 x 35/36 at the second). Three
 * folds of people left out, v5 recipe (known / height only: MPJPE cm; clips above 1.5x
 * the truth's jitter, of 112), chosen by the fewest such clips over both modes: none
 * 9.987 / 10.610, 17 / 14; 0.95 over 12 samples 10.027 / 10.643, 17 / 14; 0.9 over 24
 * 10.043 / 10.667, 16 / 12; 0.8 over 36 10.040 / 10.660, 15 / 12; 0.9 over 36 (taken)
 * 10.063 / 10.683, 14 / 11; 0.95 over 36 10.080 / 10.700, 15 / 12; 0.9 over 48 10.087 /
 * 10.703, 14 / 12. The cost is at clips' starts (a fold clip begins mid-motion; a
 * player's session does once). */
#define FRESH_HISTORY_KEEP 0.9f
#define FRESH_HISTORY_FRAMES 36

void
b_prior_reset(struct body *b)
{
    memset(&b->prior, 0, sizeof b->prior);
    pr_history_reset(&b->prior.history);
}

void
b_prior_move(struct body *b, const float *offset_m)
{
    struct b_prior_state *p = &b->prior;
    struct pr_history *h = &p->history;
    for (int i = 0; i < h->count; ++i) {
        const int k = (h->newest - i + PR_HISTORY_FRAMES) % PR_HISTORY_FRAMES;
        m_vec3_add(h->sample[k].head_position_m, offset_m, h->sample[k].head_position_m);
        for (int s = 0; s < 2; ++s)
            m_vec3_add(h->sample[k].grip_position_m[s], offset_m, h->sample[k].grip_position_m[s]);
    }
    m_vec3_add(p->head_m, offset_m, p->head_m);
    m_vec3_add(p->hips_m, offset_m, p->hips_m);
    m_vec3_add(p->filter_hips.value, offset_m, p->filter_hips.value);
    m_vec3_add(p->neck_m, offset_m, p->neck_m);
    m_vec3_add(p->back_m[0], offset_m, p->back_m[0]);
    m_vec3_add(p->back_m[1], offset_m, p->back_m[1]);
    m_vec3_add(p->back_pelvis_m, offset_m, p->back_pelvis_m);
    for (int s = 0; s < 2; ++s) {
        float *points[] = {p->ankle_m[s], p->toes_m[s], p->knee_m[s], p->foot_ankle_m[s],
                           p->foot_toes_m[s]}; /* (their filters hold offsets from the head) */
        for (size_t i = 0; i < sizeof points / sizeof points[0]; ++i)
            m_vec3_add(points[i], offset_m, points[i]);
    }
}

/* The network's outputs (heading frame) into p->outputs, smoothed per output group (see
 * OUTPUT_SMOOTHING_LEGS and FRESH_HISTORY_KEEP); started afresh after a reset
 * (p->predicted false). */
static void
smooth_outputs(const struct body *b, struct b_prior_state *p, const float *out)
{
    const float fresh =
        FRESH_HISTORY_KEEP * (1.0f - fminf(1.0f, (float)p->history.count / FRESH_HISTORY_FRAMES));
    const float legs_keep = b->desc.stages_off & BODY_STAGE_SMOOTHING ? 0.0f
                                                                       : OUTPUT_SMOOTHING_LEGS;
    for (int i = 0; i < PR_OUTPUT_COUNT; ++i) {
        float keep = 0.0f; /* the torso's outputs */
        if (i >= PR_OUT_CONTACT && i < PR_OUT_CONTACT + 2)
            keep = OUTPUT_SMOOTHING_CONTACT;
        else if (i >= PR_OUT_LEG && i < PR_OUT_CONTACT) {
            const float contact = p->contact[(i - PR_OUT_LEG) / PR_OUT_PER_LEG];
            keep = fmaxf(fresh, legs_keep * m_clampf(contact, 0.0f, 1.0f));
        }
        else if (i < PR_OUT_LEG)
            keep = fresh; /* the pelvis's */
        p->outputs[i] = p->predicted ? keep * p->outputs[i] + (1.0f - keep) * out[i] : out[i];
    }
}

static void
predict(struct body *b)
{
    struct b_prior_state *p = &b->prior;
    float features[PR_FEATURE_COUNT];
    pr_features(&p->history, b->desc.height_m, b->desc.floor_height_m, features, &p->yaw_rad);
    m_vec3_copy(p->history.sample[p->history.newest].head_position_m, p->head_m);
    float out[PR_OUTPUT_COUNT] = {0}; /* a model of output set 1 fills no torso */
    pr_model_infer(b->desc.prior, features, out);
    bool finite = true;
    for (int i = 0; i < b->desc.prior->output_count; ++i)
        finite = finite && isfinite(out[i]);
    if (finite) /* else the last prediction stands (or none: procedural) */
        smooth_outputs(b, p, out);
    else
        b->prior_dropped++; /* said by the program (body_status.prior_dropped) */
    p->predicted = p->predicted || finite;
}

/* A predicted point filtered as an offset from the head, not in the room: a runner's
 * feet move at the body's speed in the room, which opens the One-Euro filter there (the
 * swing's noise passes) and delays what it does smooth by the body's travel; from the
 * head only the body's own motion counts. */
static void
filter_from_head(struct b_one_euro *f, const float *head_m, float dt_s, float min_cutoff_hz,
                 float beta, float max_cutoff_hz, float *io_point)
{
    float offset[3];
    m_vec3_sub(io_point, head_m, offset);
    b_filter_position_capped(f, offset, dt_s, min_cutoff_hz, beta, max_cutoff_hz);
    m_vec3_add(head_m, offset, io_point);
}

/* Leg s's predicted points, filtered from the head. */
static void
filter_leg(struct b_prior_state *p, int s, float dt_s, struct pr_truth *io_pose)
{
    filter_from_head(&p->filter_ankle[s], p->head_m, dt_s, FOOT_MIN_CUTOFF_HZ, FOOT_BETA,
                     FOOT_MAX_CUTOFF_HZ, io_pose->ankle_m[s]);
    filter_from_head(&p->filter_toes[s], p->head_m, dt_s, FOOT_MIN_CUTOFF_HZ, FOOT_BETA,
                     FOOT_MAX_CUTOFF_HZ, io_pose->toes_m[s]);
    filter_from_head(&p->filter_knee[s], p->head_m, dt_s, FOOT_MIN_CUTOFF_HZ, FOOT_BETA,
                     FOOT_MAX_CUTOFF_HZ, io_pose->knee_m[s]);
}

/* Decodes the last prediction and filters it. */
static void
decode(struct body *b, float dt_s)
{
    struct b_prior_state *p = &b->prior;
    struct pr_truth pose;
    float contact[2];
    pr_decode_outputs(p->outputs, b->desc.prior->output_count, p->head_m, p->yaw_rad,
                      b->desc.height_m, b->desc.floor_height_m, &pose, contact);
    const float filter_dt = p->started ? dt_s : 0.0f;
    if (p->started)
        m_quat_slerp(p->hips_rotation, pose.hips_rotation, fminf(1.0f, 10.0f * dt_s),
                     p->hips_rotation);
    else
        m_quat_copy(pose.hips_rotation, p->hips_rotation);
    m_quat_normalize(p->hips_rotation);
    if (pose.has_back) { /* the back's pelvis, before the pelvis's own filter */
        m_vec3_copy(pose.hips_m, p->back_pelvis_m);
        filter_from_head(&p->filter_back[2], p->head_m, filter_dt, NECK_MIN_CUTOFF_HZ, NECK_BETA,
                         INFINITY, p->back_pelvis_m);
    }
    b_filter_position(&p->filter_hips, pose.hips_m, filter_dt, PELVIS_MIN_CUTOFF_HZ, PELVIS_BETA);
    m_vec3_copy(pose.hips_m, p->hips_m);
    p->has_torso = pose.has_torso;
    if (pose.has_torso) {
        filter_from_head(&p->filter_neck, p->head_m, filter_dt, NECK_MIN_CUTOFF_HZ, NECK_BETA,
                         INFINITY, pose.neck_m);
        m_vec3_copy(pose.neck_m, p->neck_m);
    }
    p->has_back = pose.has_back;
    for (int k = 0; k < 2 && pose.has_back; ++k) {
        filter_from_head(&p->filter_back[k], p->head_m, filter_dt, NECK_MIN_CUTOFF_HZ, NECK_BETA,
                         INFINITY, pose.back_m[k]);
        m_vec3_copy(pose.back_m[k], p->back_m[k]);
    }
    const bool legs_filtered = !(b->desc.stages_off & BODY_STAGE_FILTERS);
    for (int s = 0; s < 2; ++s) {
        if (legs_filtered)
            filter_leg(p, s, filter_dt, &pose);
        m_vec3_copy(pose.ankle_m[s], p->ankle_m[s]);
        m_vec3_copy(pose.toes_m[s], p->toes_m[s]);
        m_vec3_copy(pose.knee_m[s], p->knee_m[s]);
        p->contact[s] = p->started
                            ? p->contact[s] + CONTACT_SMOOTHING * (contact[s] - p->contact[s])
                            : 0.0f;
    }
}

static float
horizontal_distance(const float *a, const float *c)
{
    const float dx = a[0] - c[0], dz = a[2] - c[2];
    return sqrtf(dx * dx + dz * dz);
}


/* One point of a foot (ankle or toes): `held` keeps it where it was last frame, `decayed`
 * lets it go to the prediction; `follow` (0 to 1) blends the two. */
static void
blend_point(const float *predicted, float *io_point, float *io_offset, float follow, float keep)
{
    float held[3], decayed[3];
    m_vec3_sub(io_point, predicted, held);
    m_vec3_scale(io_offset, keep, decayed);
    m_vec3_lerp(held, decayed, follow, io_offset);
    m_vec3_add(predicted, io_offset, io_point);
}

/* The hip joint of side s where the pelvis is this frame. */
static void
hip_position(const struct body *b, int s, float *out)
{
    m_quat_rotate(b->hips_rotation, b->m.hip_offset_m[s], out);
    m_vec3_add(out, b->hips_position_m, out);
}

static float
distance_from_hip(const struct body *b, int s, const float *point)
{
    float hip[3];
    hip_position(b, s, hip);
    return m_vec3_distance(hip, point);
}

/* A foot's offset from its prediction is never longer than a leg: whatever put it
 * farther (a bad stretch of input) fades from there within RELEASE_S's few multiples
 * instead of from wherever it was. */
static void
cap_offset(float *io_offset, float max_m, const float *predicted, float *out_point)
{
    const float len = m_vec3_length(io_offset);
    if (!(len <= max_m)) {
        if (isfinite(len) && len > 0.0f)
            m_vec3_scale(io_offset, max_m / len, io_offset);
        else
            m_vec3_set(io_offset, 0, 0, 0);
        m_vec3_add(predicted, io_offset, out_point);
    }
}

/* Yaw of the floor direction from `from` to `to`; `fallback` when they are level-close. */
static float
floor_yaw(const float *from, const float *to, float fallback)
{
    const float dx = to[0] - from[0], dz = to[2] - from[2];
    return dx * dx + dz * dz > 1e-6f ? atan2f(dx, dz) : fallback;
}

/* How far held foot s (heel to toes) is turned from where the prediction points it, rad. */
static float
turned_from_prediction(const struct b_prior_state *p, int s)
{
    const float predicted = floor_yaw(p->ankle_m[s], p->toes_m[s], 0.0f);
    const float held = floor_yaw(p->foot_ankle_m[s], p->foot_toes_m[s], predicted);
    return fabsf(m_angle_wrap(held - predicted));
}

/* Foot s this frame. In contact it stays where it is (its offset from the prediction
 * absorbs the prediction's motion); out of contact it goes to the prediction, the offset
 * fading over RELEASE_S; a prediction that has drifted far from a held foot pulls it too
 * (a missed lift). Everything is a smooth function of the contact probability and the
 * drift, with no thresholds: a tiny change of the input can only change the foot a
 * little (a planted/lifted switch could move it by a stride). */
static void
place_foot(struct body *b, int s, float dt_s)
{
    struct b_prior_state *p = &b->prior;
    if (!p->started) {
        m_vec3_copy(p->ankle_m[s], p->foot_ankle_m[s]);
        m_vec3_copy(p->toes_m[s], p->foot_toes_m[s]);
        m_vec3_set(p->release_offset_m[s], 0, 0, 0);
        m_vec3_set(p->release_toes_offset_m[s], 0, 0, 0);
        return;
    }
    const float lifted = 1.0f - m_smoothstep(LIFT_AT, PLANT_AT, p->contact[s]);
    const float drift = m_smoothstep(DRIFT_START_M, PLANT_MAX_DRIFT_M,
                                     horizontal_distance(p->foot_ankle_m[s], p->ankle_m[s]));
    const float out_of_reach = m_smoothstep(RELEASE_FROM_SHARE * b->m.leg_length_m,
                                            RELEASE_REACH_SHARE * b->m.leg_length_m,
                                            distance_from_hip(b, s, p->foot_ankle_m[s]));
    /* Standing still a while, a smaller turn is settled (as the seed, b_seed.c, squares a stance). */
    const float settled = m_smoothstep(SETTLE_AFTER_S, SETTLE_FULL_S, p->still_s);
    const float turn_start = TURN_START_RAD + settled * (SETTLE_TURN_RAD - TURN_START_RAD);
    const float turned =
        m_smoothstep(turn_start, turn_start + TURN_RELEASE_SPAN_RAD, turned_from_prediction(p, s));
        const bool holds = !(b->desc.stages_off & BODY_STAGE_PLANTING);
    const float follow = holds ? fmaxf(fmaxf(lifted, drift), fmaxf(out_of_reach, turned)) : 1.0f;
    const float keep = expf(-dt_s / RELEASE_S);
    blend_point(p->ankle_m[s], p->foot_ankle_m[s], p->release_offset_m[s], follow, keep);
    blend_point(p->toes_m[s], p->foot_toes_m[s], p->release_toes_offset_m[s], follow, keep);
    cap_offset(p->release_offset_m[s], b->m.leg_length_m, p->ankle_m[s], p->foot_ankle_m[s]);
    cap_offset(p->release_toes_offset_m[s], b->m.leg_length_m, p->toes_m[s], p->foot_toes_m[s]);
    p->planted[s] = follow < 0.5f;
}

/* The prior's pelvis: its rotation, and its position taken at the seed's distance from
 * the head, with PELVIS_PRIOR_SHARE (see PELVIS above). */
static void
pelvis_estimate(const struct body *b, const struct b_pelvis_estimate *seed,
                struct b_pelvis_estimate *out)
{
    float from_head[3], prior[3];
    m_vec3_sub(seed->position_m, b->head_position_m, from_head);
    m_vec3_sub(b->prior.hips_m, b->head_position_m, prior);
    const float spine = m_vec3_length(from_head), reach = m_vec3_length(prior);
    m_quat_copy(b->prior.hips_rotation, out->rotation);
    out->tilt_confidence = 1.0f;
    /* Its yaw: see YAW_AGREE_RAD. */
    const float away =
        m_angle_wrap(b_yaw_of(out->rotation, seed->heading_rad) - seed->heading_rad) / YAW_AGREE_RAD;
    const float settled = m_smoothstep(SETTLE_AFTER_S, SETTLE_FULL_S, b->prior.still_s);
    out->yaw_confidence = 1.0f - settled * (1.0f - expf(-away * away));
    if (reach > 1e-3f) {
        m_vec3_muladd(b->head_position_m, prior, spine / reach, out->position_m);
        out->position_confidence = PELVIS_PRIOR_SHARE;
    }
}

/* Near full extension a small change of the hip-ankle distance swings the knee far, so an
 * ankle target near the edge of the leg's reach is pulled in smoothly (soft IK): up to
 * SOFT_REACH_SHARE of the leg's length it is kept, beyond that the distance approaches
 * the full length exponentially and never reaches it. */
static void
soften_reach(const struct body *b, int s, float *ankle)
{
    float hip[3], d[3];
    hip_position(b, s, hip);
    m_vec3_sub(ankle, hip, d);
    const float dist = m_vec3_length(d), leg = b->m.leg_length_m;
    const float soft = SOFT_REACH_SHARE * leg, rest = leg - soft;
    if (dist <= soft || rest <= 0.0f || (b->desc.stages_off & BODY_STAGE_REACH))
        return;
    const float reach = soft + rest * (1.0f - expf(-(dist - soft) / rest));
    m_vec3_muladd(hip, d, reach / dist, ankle);
}

/* The frame as the prior may see it: a sample the body treats as lost (b_device_sample_ok)
 * is marked lost, so the history repeats the device's last good sample instead of taking
 * it (or, over a glitch of a frame or two, the body's own coast, b_devices.c) (one head sample at 1e20
 * m would otherwise sit in the history, and in every prediction, for a whole second). Before the
 * history has a good head sample there is nothing to repeat: false, the frame is not pushed; a hand
 * without one is put at the head until it comes. */
static bool
clean_frame(const struct body *b, const struct em_tracking_frame *frame,
            struct em_tracking_frame *out)
{
    *out = *frame;
    for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
        struct em_device_pose *dev = &out->device[d];
        if (b->track[d].coasted) { /* the body's coast over it (b_devices.c), not the sample */
            m_vec3_copy(b->track[d].device_now_m, dev->pose.position_m);
            m_quat_copy(b->track[d].device_now_rotation, dev->pose.orientation);
            dev->flags = EM_POSE_ALL_VALID;
        } else if (!b_device_sample_ok(dev)) {
            dev->flags = 0;
        }
    }
    if (b->prior.history.count > 0)
        return true;
    const struct em_device_pose *head = &out->device[EM_DEVICE_HEAD];
    if (head->flags == 0)
        return false;
    for (int d = EM_DEVICE_LEFT_HAND; d <= EM_DEVICE_RIGHT_HAND; ++d)
        if (out->device[d].flags == 0)
            out->device[d].pose = head->pose;
    return true;
}

/* Sitting: the prior puts both feet well off the floor while the pelvis is lower than
 * standing and not moving up or down (no jump), for a while: something holds the body up.
 * p->seated eases toward 1 while that holds, toward 0 when not. */
static void
update_seated(struct body *b, float dt_s)
{
    struct b_prior_state *p = &b->prior;
    const float floor_y = b->desc.floor_height_m + b->m.ankle_height_m;
    const bool feet_up = fminf(p->ankle_m[0][1], p->ankle_m[1][1]) > floor_y + SEATED_FEET_UP_M;
    /* The seed's pelvis (the head's drop), as the thresholds were chosen on. */
    const bool lowered =
        b->seed_hips_m[1] - b->desc.floor_height_m < SEATED_MAX_HIPS_SHARE * b->m.hips_height_m;
    const bool steady = fabsf(b->seed_velocity_m_s[1]) < SEATED_MAX_VERTICAL_M_S;
    const float want = feet_up && lowered && steady ? 1.0f : 0.0f;
    p->seated += (want - p->seated) * fminf(1.0f, dt_s / SEATED_EASE_S);
}

float
b_prior_seated(const struct body *b)
{
    return b->desc.prior ? b->prior.seated : 0.0f;
}

/* The foot's rotation: its rest direction (ankle to toes) turned to the predicted one,
 * about the vertical first (to `yaw_rad`), then the rest (pitch). */
static void
foot_rotation(const struct body *b, int s, float yaw_rad, float *out)
{
    const struct b_prior_state *p = &b->prior;
    b_quat_from_yaw(yaw_rad, out);
    const int toes = b->j.toes[s], foot = b->j.foot[s];
    if (toes >= 0) {
        float rest[3], want[3], turned[3], pitch[4], yaw[4];
        m_vec3_sub(b->skeleton.rest_position_m[toes], b->skeleton.rest_position_m[foot], rest);
        m_vec3_sub(p->foot_toes_m[s], p->foot_ankle_m[s], want);
        const float rest_len = m_vec3_length(rest), want_len = m_vec3_length(want);
        if (rest_len > 1e-4f && want_len > 1e-4f) {
            m_vec3_scale(rest, 1.0f / rest_len, rest);
            m_vec3_scale(want, 1.0f / want_len, want);
            b_quat_from_yaw(yaw_rad - atan2f(rest[0], rest[2]), yaw);
            m_quat_rotate(yaw, rest, turned);
            /* The pitch only: the predicted direction's slope, in the vertical plane of the
             * turned foot (its yaw is yaw_rad, kept within the pelvis's reach). */
            const float level = sqrtf(turned[0] * turned[0] + turned[2] * turned[2]);
            const float want_level = sqrtf(want[0] * want[0] + want[2] * want[2]);
            if (level > 1e-4f)
                m_vec3_set(want, turned[0] / level * want_level, want[1],
                           turned[2] / level * want_level);
            m_quat_from_to(turned, want, pitch);
            m_quat_mul(pitch, yaw, out);
            m_quat_normalize(out);
        }
    }
}

/* The knee pole: from the middle of the hip-ankle line through the predicted knee; when
 * the predicted leg is nearly straight, toward the procedural pole (b_leg_pole for the
 * prior's foot at `ankle_m` turned to `yaw_rad`) instead. */
static void
knee_pole(const struct body *b, int s, const float *ankle_m, float yaw_rad, float *out_pole)
{
    const struct b_prior_state *p = &b->prior;
    b_leg_pole(b, s, ankle_m, yaw_rad, out_pole);
    const float *hip = b->pose.position_m[b->j.upper_leg[s]];
    float mid[3], bend[3], procedural[3], dir[3];
    m_vec3_lerp(hip, p->foot_ankle_m[s], 0.5f, mid);
    m_vec3_sub(p->knee_m[s], mid, bend);
    m_vec3_sub(out_pole, mid, procedural);
    const float bend_len = m_vec3_length(bend), proc_len = m_vec3_length(procedural);
    if (proc_len < 1e-4f || bend_len < 1e-4f)
        return;
    const float w = m_clampf(bend_len / KNEE_BEND_FULL_M, 0.0f, 1.0f);
    for (int k = 0; k < 3; ++k)
        dir[k] = w * bend[k] / bend_len + (1.0f - w) * procedural[k] / proc_len;
    /* Its level part within B_KNEE_MAX_TURN_RAD of the pelvis's facing: a knee plane turned
     * further would twist the thigh past its limit. */
    const float level = sqrtf(dir[0] * dir[0] + dir[2] * dir[2]);
    const float hips_yaw = b_yaw_of(b->hips_rotation, b->heading_rad);
    const float turn = level > 1e-4f ? m_angle_wrap(atan2f(dir[0], dir[2]) - hips_yaw) : 0.0f;
    const float yaw = hips_yaw + m_clampf(turn, -B_KNEE_MAX_TURN_RAD, B_KNEE_MAX_TURN_RAD);
    /* Level, as the procedural pole: a pole with a large vertical part lies nearly along
     * a leg that reaches forward, and the knee plane it leaves turns freely (the thigh
     * twisted up to 140 degrees on the validation subjects). */
    dir[0] = sinf(yaw);
    dir[1] = 0.0f;
    dir[2] = cosf(yaw);
    m_vec3_muladd(mid, dir, KNEE_POLE_DISTANCE_M, out_pole);
}

/* The predicted back as a curve from the pelvis through the spine and chest points (a
 * third and two thirds of the way along it) to the neck; the chest joint's bend is the
 * curve's offset, at the avatar's own share of its back, from the straight line. */
static void
back_bend(const struct body *b, struct b_torso_estimate *out)
{
    const struct b_prior_state *p = &b->prior;
    const float *curve[4] = {p->back_pelvis_m, p->back_m[0], p->back_m[1], p->neck_m};
    const float t = m_clampf(b->m.chest_fraction, 0.0f, 1.0f);
    const int seg = t < 1.0f / 3.0f ? 0 : (t < 2.0f / 3.0f ? 1 : 2);
    float on_curve[3], on_line[3];
    m_vec3_lerp(curve[seg], curve[seg + 1], 3.0f * t - (float)seg, on_curve);
    m_vec3_lerp(p->back_pelvis_m, p->neck_m, t, on_line);
    m_vec3_sub(on_curve, on_line, out->back_bend_m);
    out->back_bend_confidence = BACK_PRIOR_SHARE;
}

/* Its neck and back's bend, from this frame's prediction (a model of output set 2 or 3;
 * confidence 0 otherwise). */
static void
torso_estimate(const struct body *b, struct b_torso_estimate *out)
{
    memset(out, 0, sizeof *out);
    const struct b_prior_state *p = &b->prior;
    if (!b->desc.prior || !p->predicted || !p->has_torso)
        return;
    m_vec3_copy(p->neck_m, out->neck_m);
    out->neck_confidence = NECK_PRIOR_SHARE;
    if (p->has_back)
        back_bend(b, out);
}

void
b_prior_estimate_pelvis(struct body *b, const struct em_tracking_frame *frame, float dt_s,
                        const struct b_pelvis_estimate *seed, struct b_pelvis_estimate *out,
                        struct b_torso_estimate *out_torso)
{
    memset(out, 0, sizeof *out);
    memset(out_torso, 0, sizeof *out_torso);
    if (!b->desc.prior)
        return;
    struct b_prior_state *p = &b->prior;
    if (dt_s == 0.0f && p->started) {
        /* A gap (body_update restarted its filters): start the history over too. */
        b_prior_reset(b);
    }
    struct em_tracking_frame clean;
    if (clean_frame(b, frame, &clean) && pr_history_push(&p->history, &clean))
        predict(b);
    if (!p->predicted)
        return;
    decode(b, dt_s);
    pelvis_estimate(b, seed, out);
    torso_estimate(b, out_torso);
}

/* Foot s's ankle and turn: where place_foot holds it, softened within reach, turned
 * about `facing` by at most `max_turn`. */
static void
foot_estimate(const struct body *b, int s, float facing, float max_turn,
              struct b_feet_estimate *out)
{
    const struct b_prior_state *p = &b->prior;
    float *ankle = out->at.ankle_m[s];
    m_vec3_copy(p->foot_ankle_m[s], ankle);
    soften_reach(b, s, ankle);
    const float dx = p->foot_toes_m[s][0] - p->foot_ankle_m[s][0];
    const float dz = p->foot_toes_m[s][2] - p->foot_ankle_m[s][2];
    float yaw = facing;
    if (dx * dx + dz * dz > 1e-6f)
        yaw = facing + m_clampf(m_angle_wrap(atan2f(dx, dz) - facing), -max_turn, max_turn);
    foot_rotation(b, s, yaw, out->at.foot_rotation[s]);
    knee_pole(b, s, ankle, yaw, out->at.knee_pole_m[s]);
    out->ankle_confidence[s] = out->rotation_confidence[s] = 1.0f;
    out->knee_pole_confidence[s] = 1.0f;
}

void
b_prior_estimate_feet(struct body *b, float dt_s, struct b_feet_estimate *out)
{
    memset(out, 0, sizeof *out);
    struct b_prior_state *p = &b->prior;
    if (!b->desc.prior || !p->predicted)
        return;
    const float *v = b->seed_velocity_m_s; /* not the fused pelvis: the prior's own moves */
    const bool still = v[0] * v[0] + v[2] * v[2] < SETTLE_MAX_SPEED_M_S * SETTLE_MAX_SPEED_M_S &&
                       fabsf(b->head_yaw_speed) < SETTLE_MAX_TURN_RAD_S;
    p->still_s = still ? p->still_s + dt_s : 0.0f;
    for (int s = 0; s < 2; ++s)
        place_foot(b, s, p->started ? dt_s : 0.0f);
    p->started = true;
    const float hips_yaw = b_yaw_of(b->hips_rotation, b->heading_rad);
    const float settled = m_smoothstep(SETTLE_AFTER_S, SETTLE_FULL_S, p->still_s);
    const float max_turn =
        FOOT_MAX_TURN_RAD + settled * (SETTLED_FOOT_TURN_RAD - FOOT_MAX_TURN_RAD);
    /* The feet turn about the pelvis's facing; settled, about the body's heading (where
     * the head has looked, b_seed.c), which a stance squares up to. */
    const float facing = hips_yaw + settled * m_angle_wrap(b->heading_rad - hips_yaw);
    update_seated(b, dt_s);
    for (int s = 0; s < 2; ++s)
        foot_estimate(b, s, facing, max_turn, out);
}
