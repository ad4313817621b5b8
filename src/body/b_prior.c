/*
 * The learned body-pose prior in the body (include/embody/prior.h): each 60 Hz sample of
 * the devices goes into the prior's history; its prediction (pelvis, ankles, toes, knees,
 * foot contact) replaces the procedural pelvis rotation and feet of b_pelvis.c and
 * b_feet.c, and becomes the legs' ankle targets, foot rotations and knee poles.
 *
 * The network's per-frame outputs jitter, so positions go through One-Euro filters (slow
 * when still, quick when moving). A foot the prior says is in contact is planted where it
 * was when contact began and stays there (no skate) until the contact probability drops,
 * or until the prediction has moved well away from it (a missed lift); then it is
 * released toward its predicted place, the difference fading over RELEASE_S. Holding and
 * letting go blend smoothly with the contact probability (no switch a tiny input change
 * could flip). Knee planes and feet stay within the thigh's twist of the pelvis's facing.
 *
 * PELVIS: the prior predicts the pelvis's position too, but on the validation subjects
 * (02, 07, 35 of mocap-train, known body) taking it made things worse: MPJPE 8.86 cm with
 * its position against 7.74 with the procedural one (upright under the neck), and the arms
 * jittered 3 to 4 times the truth's, because a pelvis that is not a spine's length under
 * the neck leaves the solver a bent spine to settle differently every frame. So the
 * pelvis keeps the procedural position and takes the prior's rotation (tilt and yaw:
 * 7.74 against 7.85 cm without it).
 */
#include <math.h>
#include <string.h>

#include "b_internal.h"
#include "embody/m_math.h"

/* One-Euro settings of the predicted joints: cutoff at rest (Hz) and speed coefficient.
 * Chosen on the validation subjects (02, 07, 35 of mocap-train), known body: foot beta 6
 * gave MPJPE 7.45 cm and jitter 1118 m/s^3 (3 clips above 1.5x the truth's), 2 with the
 * contact smoothing below 7.49 cm and 994 (none above), 1 7.65 cm and 929. */
#define FOOT_MIN_CUTOFF_HZ 1.5f
#define FOOT_BETA 2.0f
/* Contact: a foot is held fully above PLANT_AT, free below LIFT_AT, in between partly. */
#define PLANT_AT 0.6f
#define LIFT_AT 0.4f
/* Share of each new contact probability taken per 60 Hz frame. */
#define CONTACT_SMOOTHING 0.2f
/* A held foot from DRIFT_START_M to PLANT_MAX_DRIFT_M (horizontally) from where the prior
 * now puts it is let go, fully at the latter. */
#define DRIFT_START_M 0.18f
#define PLANT_MAX_DRIFT_M 0.25f
/* The knee's plane and the foot may turn this far from the pelvis's facing (the thigh's
 * twist limit, as the procedural poles in b_arms.c; the foot adds its own 20 degrees). */
#define KNEE_MAX_TURN_RAD (22.0f * M_DEG_TO_RAD)
#define FOOT_MAX_TURN_RAD (40.0f * M_DEG_TO_RAD)
/* A lifted foot's offset from its prediction fades with this time constant. */
#define RELEASE_S 0.08f
/* A knee this close to the hip-ankle line says little about its direction. */
#define KNEE_BEND_FULL_M 0.05f
#define KNEE_POLE_DISTANCE_M 0.5f
/* Soft reach (soften_reach): on the validation subjects, known body, no softening gave
 * MPJPE 7.49 cm and jitter 994 m/s^3, 0.95 7.45 and 935, 0.9 7.40 and 932 (knee jitter
 * 2500 -> 1570, truth 1050), 0.85 7.42 and 931. */
#define SOFT_REACH_SHARE 0.9f

void
b_prior_reset(struct body *b)
{
    memset(&b->prior, 0, sizeof b->prior);
    pr_history_reset(&b->prior.history);
}

static void
predict(struct body *b)
{
    struct b_prior_state *p = &b->prior;
    float features[PR_FEATURE_COUNT];
    pr_features(&p->history, b->desc.height_m, b->desc.floor_height_m, features, &p->yaw_rad);
    m_vec3_copy(p->history.sample[p->history.newest].head_position_m, p->head_m);
    float out[PR_OUTPUT_COUNT];
    pr_model_infer(b->desc.prior, features, out);
    bool finite = true;
    for (int i = 0; i < PR_OUTPUT_COUNT; ++i)
        finite = finite && isfinite(out[i]);
    if (finite) /* else the last prediction stands (or none: procedural) */
        memcpy(p->outputs, out, sizeof out);
    else
        b->prior_dropped++; /* said by the program (body_status.prior_dropped) */
    p->predicted = p->predicted || finite;
}

/* Decodes the last prediction and filters it. */
static void
decode(struct body *b, float dt_s)
{
    struct b_prior_state *p = &b->prior;
    struct pr_truth pose;
    float contact[2];
    pr_decode_outputs(p->outputs, p->head_m, p->yaw_rad, b->desc.height_m, b->desc.floor_height_m,
                      &pose, contact);
    const float filter_dt = p->started ? dt_s : 0.0f;
    if (p->started)
        m_quat_slerp(p->hips_rotation, pose.hips_rotation, fminf(1.0f, 10.0f * dt_s),
                     p->hips_rotation);
    else
        m_quat_copy(pose.hips_rotation, p->hips_rotation);
    m_quat_normalize(p->hips_rotation);
    for (int s = 0; s < 2; ++s) {
        b_filter_position(&p->filter_ankle[s], pose.ankle_m[s], filter_dt, FOOT_MIN_CUTOFF_HZ,
                          FOOT_BETA);
        b_filter_position(&p->filter_toes[s], pose.toes_m[s], filter_dt, FOOT_MIN_CUTOFF_HZ,
                          FOOT_BETA);
        b_filter_position(&p->filter_knee[s], pose.knee_m[s], filter_dt, FOOT_MIN_CUTOFF_HZ,
                          FOOT_BETA);
        m_vec3_copy(pose.ankle_m[s], p->ankle_m[s]);
        m_vec3_copy(pose.toes_m[s], p->toes_m[s]);
        m_vec3_copy(pose.knee_m[s], p->knee_m[s]);
        p->contact[s] = p->started
                            ? p->contact[s] + CONTACT_SMOOTHING * (contact[s] - p->contact[s])
                            : contact[s];
    }
}

static float
horizontal_distance(const float *a, const float *c)
{
    const float dx = a[0] - c[0], dz = a[2] - c[2];
    return sqrtf(dx * dx + dz * dz);
}

static float
smoothstep(float edge0, float edge1, float x)
{
    const float t = m_clampf((x - edge0) / (edge1 - edge0), 0.0f, 1.0f);
    return t * t * (3.0f - 2.0f * t);
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
    const float lifted = 1.0f - smoothstep(LIFT_AT, PLANT_AT, p->contact[s]);
    const float drift = smoothstep(DRIFT_START_M, PLANT_MAX_DRIFT_M,
                                   horizontal_distance(p->foot_ankle_m[s], p->ankle_m[s]));
    const float follow = fmaxf(lifted, drift);
    const float keep = expf(-dt_s / RELEASE_S);
    blend_point(p->ankle_m[s], p->foot_ankle_m[s], p->release_offset_m[s], follow, keep);
    blend_point(p->toes_m[s], p->foot_toes_m[s], p->release_toes_offset_m[s], follow, keep);
    p->planted[s] = follow < 0.5f;
}

/* Near full extension a small change of the hip-ankle distance swings the knee far, so an
 * ankle target near the edge of the leg's reach is pulled in smoothly (soft IK): up to
 * SOFT_REACH_SHARE of the leg's length it is kept, beyond that the distance approaches
 * the full length exponentially and never reaches it. */
static void
soften_reach(const struct body *b, int s, float *ankle)
{
    float hip[3], d[3];
    m_quat_rotate(b->hips_rotation, b->m.hip_offset_m[s], hip);
    m_vec3_add(hip, b->hips_position_m, hip);
    m_vec3_sub(ankle, hip, d);
    const float dist = m_vec3_length(d), leg = b->m.leg_length_m;
    const float soft = SOFT_REACH_SHARE * leg, rest = leg - soft;
    if (dist <= soft || rest <= 0.0f)
        return;
    const float reach = soft + rest * (1.0f - expf(-(dist - soft) / rest));
    m_vec3_muladd(hip, d, reach / dist, ankle);
}

void
b_prior_update(struct body *b, const struct em_tracking_frame *frame, float dt_s)
{
    if (!b->desc.prior)
        return;
    struct b_prior_state *p = &b->prior;
    if (dt_s == 0.0f && p->started) {
        /* A gap (body_update restarted its filters): start the history over too. */
        b_prior_reset(b);
    }
    if (pr_history_push(&p->history, frame))
        predict(b);
    if (!p->predicted)
        return;
    decode(b, dt_s);
    for (int s = 0; s < 2; ++s)
        place_foot(b, s, p->started ? dt_s : 0.0f);
    p->started = true;
    /* The pelvis keeps the procedural position (upright under the neck, b_pelvis.c) and
     * takes the prior's rotation: see PELVIS above. */
    m_quat_copy(p->hips_rotation, b->hips_rotation);
    const float hips_yaw = b_yaw_of(b->hips_rotation, b->heading_rad);
    for (int s = 0; s < 2; ++s) {
        m_vec3_copy(p->foot_ankle_m[s], b->foot[s].position_m);
        soften_reach(b, s, b->foot[s].position_m);
        const float dx = p->foot_toes_m[s][0] - p->foot_ankle_m[s][0];
        const float dz = p->foot_toes_m[s][2] - p->foot_ankle_m[s][2];
        if (dx * dx + dz * dz > 1e-6f) {
            const float turn = m_angle_wrap(atan2f(dx, dz) - hips_yaw);
            b->foot[s].yaw_rad = hips_yaw + m_clampf(turn, -FOOT_MAX_TURN_RAD, FOOT_MAX_TURN_RAD);
        }
    }
}

void
b_prior_leg_targets(const struct body *b, int s, float *io_foot_rotation, float *io_knee_pole)
{
    if (!b->desc.prior || !b->prior.started)
        return;
    const struct b_prior_state *p = &b->prior;
    /* The foot: its rest direction (ankle to toes) turned to the predicted one, about the
     * vertical first (yaw), then the rest (pitch). */
    const int toes = b->j.toes[s], foot = b->j.foot[s];
    if (toes >= 0) {
        float rest[3], want[3], turned[3], pitch[4], yaw[4];
        m_vec3_sub(b->skeleton.rest_position_m[toes], b->skeleton.rest_position_m[foot], rest);
        m_vec3_sub(p->foot_toes_m[s], p->foot_ankle_m[s], want);
        const float rest_len = m_vec3_length(rest), want_len = m_vec3_length(want);
        if (rest_len > 1e-4f && want_len > 1e-4f) {
            m_vec3_scale(rest, 1.0f / rest_len, rest);
            m_vec3_scale(want, 1.0f / want_len, want);
            b_quat_from_yaw(b->foot[s].yaw_rad - atan2f(rest[0], rest[2]), yaw);
            m_quat_rotate(yaw, rest, turned);
            m_quat_from_to(turned, want, pitch);
            m_quat_mul(pitch, yaw, io_foot_rotation);
            m_quat_normalize(io_foot_rotation);
        }
    }
    /* The knee pole: from the middle of the hip-ankle line through the predicted knee;
     * when the predicted leg is nearly straight, toward the procedural pole instead. */
    const float *hip = b->pose.position_m[b->j.upper_leg[s]];
    float mid[3], bend[3], procedural[3], dir[3];
    m_vec3_lerp(hip, p->foot_ankle_m[s], 0.5f, mid);
    m_vec3_sub(p->knee_m[s], mid, bend);
    m_vec3_sub(io_knee_pole, mid, procedural);
    const float bend_len = m_vec3_length(bend), proc_len = m_vec3_length(procedural);
    if (proc_len < 1e-4f || bend_len < 1e-4f)
        return;
    const float w = m_clampf(bend_len / KNEE_BEND_FULL_M, 0.0f, 1.0f);
    for (int k = 0; k < 3; ++k)
        dir[k] = w * bend[k] / bend_len + (1.0f - w) * procedural[k] / proc_len;
    /* Its level part within KNEE_MAX_TURN_RAD of the pelvis's facing: a knee plane turned
     * further would twist the thigh past its limit. */
    const float level = sqrtf(dir[0] * dir[0] + dir[2] * dir[2]);
    const float hips_yaw = b_yaw_of(b->hips_rotation, b->heading_rad);
    const float turn = level > 1e-4f ? m_angle_wrap(atan2f(dir[0], dir[2]) - hips_yaw) : 0.0f;
    const float yaw = hips_yaw + m_clampf(turn, -KNEE_MAX_TURN_RAD, KNEE_MAX_TURN_RAD);
    /* Level, as the procedural pole: a pole with a large vertical part lies nearly along
     * a leg that reaches forward, and the knee plane it leaves turns freely (the thigh
     * twisted up to 140 degrees on the validation subjects). */
    dir[0] = sinf(yaw);
    dir[1] = 0.0f;
    dir[2] = cosf(yaw);
    m_vec3_muladd(mid, dir, KNEE_POLE_DISTANCE_M, io_knee_pole);
}
