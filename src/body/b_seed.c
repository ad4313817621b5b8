/*
 * The seed, the source of the fusion (b_fuse.c) that always speaks and is trusted least:
 * the pelvis, heading, torso and feet from the head alone, assumed (a body upright under
 * its head, stepping after it). It reads no other source: what it takes from them (the
 * feet body trackers hold, the floor share, the body's upright frame) the fusion hands it.
 *
 * The pelvis from the head.
 *
 * Heading: the hips face where the head faces, with a dead zone, so looking around does
 * not twist the hips. The hands take no part: a share toward where they work (0.25 of the
 * way to their midpoint's direction) measured the same on the validation subjects (MPJPE
 * 7.09 / 8.46 cm with the learned body, either way) but turned the hips up to 17 degrees
 * when a still player raised one hand above the head (ev_clip_hand_up).
 *
 * Position: the torso hangs upright from the neck, a spine's length below it, so when
 * the head drops (crouching, squatting, sitting) the hips drop with it and sit back a
 * little, and when the head
 * rises above standing height (a step up, a jump) the body rises and the feet leave the
 * floor or the ground under them rises (the feet, below). The spine bends between this pelvis
 * and the head (the solver).
 *
 * Measured against the other models tried (see README, "Body reconstruction"): leaning the
 * torso by the neck's offset from the planted feet, or explaining part of the neck's
 * drop by a forward lean, both did worse on the evaluation (13.8 cm MPJPE upright, 14.4
 * to 16.7 cm with leans), because the feet that would anchor a lean are themselves
 * uncertain.
 *
 * Feet: a planted foot stays where it is. When the body has moved or turned far enough
 * from it, it steps along an arc, one foot at a time, to where it should land.
 *
 * Stepping follows the body's speed as walking does: a foot is planted for a stance
 * phase and swings for a swing phase, and lands ahead of the hips by half of what the
 * hips will travel over its stance, so over its stance it goes from half a stance ahead
 * to half a stance behind. It lifts when it falls that far behind (or the standing
 * threshold, whichever is larger), or when the body has turned away from it.
 */
#include "b_internal.h"
#include "embody/m_math.h"

/* The neck bone's share of the head's turn from upright (neck_from_head: the seed's torso,
 * and the neck its pelvis hangs from). Chosen on
 * ../shared/mocap-train, known body, the learned prior: shares 0.3, 0.5 and 0.7 left the
 * head joint more than 10 degrees from the headset's rotation on 3162, 568 and 362 of
 * 19271 frames (every 4th clip; 896 without a neck target), with MPJPE 8.87, 8.97 and
 * 9.17 cm (upper body 4.11, 4.33, 4.76). */
#define NECK_TURN_SHARE 0.5f

/* Of the neck's drop below standing, the share the hips move back (sitting back). Larger
 * shares made the evaluation worse (0.3: +0.2 cm MPJPE, 0.5: +0.4 cm); this is about
 * neutral there and shows the movement. */
#define SIT_BACK_PER_DROP 0.15f
/* The hips' lowest height as a share of their standing height (a deep squat), and how soft
 * the floor is above it. */
#define LOWEST_HIPS_SHARE 0.50f
#define SOFT_FLOOR_SHARE 0.10f
/* The head may turn this far from the hips before they follow. */
#define HEADING_DEAD_ZONE_RAD (30.0f * M_DEG_TO_RAD)
/* Inside the dead zone the hips drift toward the head: slowly while the head moves
 * (glancing around), faster once it has been still a moment (the body turned). Per
 * second. */
#define HEADING_DRIFT_PER_S 0.5f
#define HEADING_SETTLE_PER_S 2.0f
/* Head yaw speed below which the head counts as still (rad/s). */
#define HEAD_STILL_RAD_S 0.6f

/* The head's facing about +Y, steady however far it pitches: its forward axis's level part
 * shrinks as the head looks down (and flips past straight down), while its up axis tips
 * forward; forward - (forward's height) * up keeps a forward-pointing level part when
 * looking down or up. */
static float
head_facing_yaw(const float *head_rotation, float fallback_rad)
{
    const float ez[3] = {0, 0, 1}, ey[3] = {0, 1, 0};
    float f[3], u[3];
    m_quat_rotate(head_rotation, ez, f);
    m_quat_rotate(head_rotation, ey, u);
    const float x = f[0] - f[1] * u[0], z = f[2] - f[1] * u[2];
    if (x * x + z * z < 1e-6f)
        return fallback_rad;
    return atan2f(x, z);
}

static void
update_heading(struct body *b, float dt_s)
{
    const float head_yaw = head_facing_yaw(b->head_rotation, b->seed_heading_rad);
    if (!b->pelvis_started) {
        b->seed_heading_rad = head_yaw;
        b->head_yaw_rad = head_yaw;
        b->head_yaw_speed = 0.0f;
        return;
    }
    if (dt_s > 0.0f) {
        const float speed = fabsf(m_angle_wrap(head_yaw - b->head_yaw_rad)) / dt_s;
        b->head_yaw_speed += (speed - b->head_yaw_speed) * fminf(1.0f, 8.0f * dt_s);
    }
    b->head_yaw_rad = head_yaw;
    float diff = m_angle_wrap(head_yaw - b->seed_heading_rad);
    if (diff > HEADING_DEAD_ZONE_RAD)
        b->seed_heading_rad += diff - HEADING_DEAD_ZONE_RAD;
    else if (diff < -HEADING_DEAD_ZONE_RAD)
        b->seed_heading_rad += diff + HEADING_DEAD_ZONE_RAD;
    diff = m_angle_wrap(head_yaw - b->seed_heading_rad);
    const float still = expf(-b->head_yaw_speed / HEAD_STILL_RAD_S);
    const float rate = HEADING_DRIFT_PER_S + (HEADING_SETTLE_PER_S - HEADING_DRIFT_PER_S) * still;
    b->seed_heading_rad += diff * fminf(1.0f, rate * dt_s);
    b->seed_heading_rad = m_angle_wrap(b->seed_heading_rad);
}

/* The neck joint from the head joint: its rest offset turned NECK_TURN_SHARE of the way
 * from the body's upright frame `upright` to the head's own rotation (the neck bends part
 * of the head's tilt). The seed's pelvis hangs below it, and the seed's torso is it. */
static void
neck_from_head(const struct body *b, const float *upright, float *out)
{
    float turn[4], off[3];
    m_quat_slerp(upright, b->head_rotation, NECK_TURN_SHARE, turn);
    m_quat_rotate(turn, b->m.head_from_neck_m, off);
    m_vec3_sub(b->head_position_m, off, out);
}

void
b_seed_estimate_pelvis(struct body *b, float dt_s, struct b_pelvis_estimate *out)
{
    update_heading(b, dt_s);
    float yaw_rot[4];
    b_quat_from_yaw(b->seed_heading_rad, yaw_rot);
    float neck[3];
    neck_from_head(b, yaw_rot, neck);
    /* Upright below the neck, with the rest pose's small offset between the two. */
    const float *rest_hips = b->skeleton.rest_position_m[b->j.hips];
    const float *rest_neck = b->skeleton.rest_position_m[b->j.neck];
    float rest_delta[3] = {rest_hips[0] - rest_neck[0], 0.0f, rest_hips[2] - rest_neck[2]};
    m_quat_rotate(yaw_rot, rest_delta, rest_delta);
    float hips[3] = {neck[0] + rest_delta[0], neck[1] - b->m.hips_to_neck_m,
                     neck[2] + rest_delta[2]};
    /* A body lowering itself sits back: the hips go behind the line below the neck by a
     * share of the drop, as in a squat or sitting down, to keep the weight over the feet. */
    const float standing_neck = b->ground_height_m + b->m.neck_height_m;
    const float drop = fmaxf(0.0f, standing_neck - neck[1]);
    const float back = SIT_BACK_PER_DROP * drop;
    hips[0] -= sinf(b->seed_heading_rad) * back;
    hips[2] -= cosf(b->seed_heading_rad) * back;
    /* Below a deep squat the hips go no lower: a head lower still is a torso bending
     * forward over them (ducking, reaching down), so the hips go back to keep the
     * spine's length (a smooth floor, so the change of model does not jump). */
    const float lowest = b->ground_height_m + LOWEST_HIPS_SHARE * b->m.hips_height_m;
    const float soft = SOFT_FLOOR_SHARE * b->m.hips_height_m;
    const float depth = lowest + soft - hips[1];
    if (depth > 0.0f) {
        /* A softplus-like floor: hips[1] -> lowest as the neck drops without end. */
        const float raised = lowest + soft * soft / (soft + depth);
        const float rise = raised - hips[1];
        const float below = neck[1] - raised;
        const float lean = sqrtf(fmaxf(0.0f, b->m.hips_to_neck_m * b->m.hips_to_neck_m -
                                                 below * below)) -
                           sqrtf(fmaxf(0.0f, b->m.hips_to_neck_m * b->m.hips_to_neck_m -
                                                 (below + rise) * (below + rise)));
        hips[1] = raised;
        hips[0] -= sinf(b->seed_heading_rad) * lean;
        hips[2] -= cosf(b->seed_heading_rad) * lean;
    }
    m_vec3_copy(hips, out->position_m);
    m_quat_copy(yaw_rot, out->rotation);
    out->heading_rad = b->seed_heading_rad;
    out->position_confidence = out->yaw_confidence = out->tilt_confidence = 1.0f;
    out->heading_confidence = 1.0f;
}

/* Where the neck joint goes: below the head target along the head's rest offset from
 * it, turned by NECK_TURN_SHARE of the way from upright (facing the heading; on the floor,
 * the torso's frame there) to the headset's rotation. The neck bone so takes that share
 * of the head's pitch and roll and the head joint the rest, within its range, and the
 * spine below bends to bring the neck there: the head turns with the headset at any pitch
 * rather than stopping at its own limit with the body upright. */
void
b_seed_estimate_torso(const struct body *b, const float *upright, struct b_torso_estimate *out)
{
    neck_from_head(b, upright, out->neck_m);
    out->neck_confidence = 1.0f;
}

/* ---- feet ------------------------------------------------------------------------ */

/* Standing still, a foot this far from where it should be steps. */
#define STEP_DISTANCE_M 0.15f
#define STEP_TURN_RAD (35.0f * M_DEG_TO_RAD)
#define STEP_HEIGHT_M 0.08f
/* Swing time: slower steps when slow, quicker when fast (walking to running). */
#define SWING_SLOW_S 0.40f
#define SWING_FAST_S 0.25f
#define SWING_FAST_SPEED_M_S 3.0f
/* Stance lasts this many swings (walking: stance 60 %, swing 40 % of a cycle). */
#define STANCE_PER_SWING 1.5f
/* Standing still this long, a foot turned this much from the body's heading steps to
 * square up. */
#define SETTLE_AFTER_S 1.5f
#define SETTLE_MAX_SPEED_M_S 0.2f
#define SETTLE_TURN_RAD (20.0f * M_DEG_TO_RAD)
/* One foot's need to step must exceed the other's by this much to be chosen over the
 * foot whose turn it is. */
#define STEP_CHOICE_MARGIN 0.1f
/* The other foot waits this long after a landing (double support). */
#define DOUBLE_SUPPORT_S 0.05f

/* Where foot s would stand under the body now. */
static void
home_position(const struct body *b, int s, float *out)
{
    float yaw_rot[4], off[3];
    b_quat_from_yaw(b->heading_rad, yaw_rot);
    m_vec3_set(off, b->m.ankle_offset_m[s][0], 0.0f, b->m.ankle_offset_m[s][2]);
    m_quat_rotate(yaw_rot, off, off);
    out[0] = b->hips_position_m[0] + off[0];
    out[1] = b->ground_height_m + b->m.ankle_height_m;
    out[2] = b->hips_position_m[2] + off[2];
}

void
b_seed_feet_reset(struct body *b)
{
    for (int s = 0; s < 2; ++s) {
        struct b_foot *f = &b->foot[s];
        home_position(b, s, f->planted_m);
        m_vec3_copy(f->planted_m, f->position_m);
        f->planted_yaw_rad = f->yaw_rad = b->heading_rad;
        f->stepping = false;
        f->step_time_s = 1.0f;
    }
    b->last_stepped = 1;
}

static float
ground_speed(const struct body *b)
{
    const float *v = b->body_velocity_m_s;
    return sqrtf(v[0] * v[0] + v[2] * v[2]);
}

static float
swing_time(const struct body *b)
{
    const float t = m_clampf(ground_speed(b) / SWING_FAST_SPEED_M_S, 0.0f, 1.0f);
    return SWING_SLOW_S + (SWING_FAST_S - SWING_SLOW_S) * t;
}

static void
start_step(struct body *b, int s, const float *home)
{
    struct b_foot *f = &b->foot[s];
    const float swing = swing_time(b);
    f->step_duration_s = swing;
    m_vec3_copy(f->planted_m, f->step_from_m);
    /* Land where the hips will be when it comes down, plus half a stance ahead. */
    const float lead_s = swing + 0.5f * STANCE_PER_SWING * swing;
    f->step_to_m[0] = home[0] + b->body_velocity_m_s[0] * lead_s;
    f->step_to_m[1] = home[1];
    f->step_to_m[2] = home[2] + b->body_velocity_m_s[2] * lead_s;
    f->step_from_yaw_rad = f->planted_yaw_rad;
    f->step_to_yaw_rad = b->heading_rad;
    f->step_time_s = 0.0f;
    f->stepping = true;
    b->last_stepped = s;
}

static void
advance_step(struct b_foot *f, float dt_s)
{
    f->step_time_s += dt_s;
    const float t = m_clampf(f->step_time_s / f->step_duration_s, 0.0f, 1.0f);
    const float ease = m_ease(t);
    m_vec3_lerp(f->step_from_m, f->step_to_m, ease, f->position_m);
    f->position_m[1] += STEP_HEIGHT_M * sinf(M_PI_F * t);
    f->yaw_rad = f->step_from_yaw_rad +
                 m_angle_wrap(f->step_to_yaw_rad - f->step_from_yaw_rad) * ease;
    if (t >= 1.0f) {
        f->stepping = false;
        f->step_time_s = 0.0f; /* now counts time since landing */
        m_vec3_copy(f->step_to_m, f->planted_m);
        m_vec3_copy(f->step_to_m, f->position_m);
        f->planted_yaw_rad = f->yaw_rad = f->step_to_yaw_rad;
    }
}

static float
horizontal_distance(const float *a, const float *b)
{
    const float dx = a[0] - b[0], dz = a[2] - b[2];
    return sqrtf(dx * dx + dz * dz);
}

/* How urgently foot s needs to step: >= 1 means now. */
static float
step_need(const struct body *b, int s, const float *home)
{
    const struct b_foot *f = &b->foot[s];
    const float threshold =
        fmaxf(STEP_DISTANCE_M, 0.5f * STANCE_PER_SWING * swing_time(b) * ground_speed(b));
    const float off = horizontal_distance(f->planted_m, home) / threshold;
    const float turned = fabsf(m_angle_wrap(b->heading_rad - f->planted_yaw_rad));
    /* A body that has stood still a while squares its feet to where it faces (people
     * settle their stance after turning): a smaller turn than a step is taken for at once
     * is settled after a pause. */
    const bool settled = f->step_time_s > SETTLE_AFTER_S && ground_speed(b) < SETTLE_MAX_SPEED_M_S;
    return fmaxf(off, turned / (settled ? SETTLE_TURN_RAD : STEP_TURN_RAD));
}

/* A foot body trackers hold: where they say, turned as a foot tracker is, planted. */
static void
hold_foot(struct b_foot *f, const struct b_held_foot *held)
{
    m_vec3_copy(held->ankle_m, f->position_m);
    if (held->turned)
        f->yaw_rad = b_yaw_of(held->rotation, f->yaw_rad);
    m_vec3_copy(f->position_m, f->planted_m);
    f->planted_yaw_rad = f->yaw_rad;
    f->stepping = false;
    f->step_time_s = 1.0f; /* long on the ground: the other foot may step */
}

/* The seed's feet this frame: a foot trackers hold stands where they say, a body on the
 * floor (`floor_share` over a half) takes no steps, and otherwise a foot steps when it
 * needs to, one at a time. */
static void
update_steps(struct body *b, float dt_s, const struct b_held_foot *held, float floor_share)
{
    if (!b->feet_started) {
        b_seed_feet_reset(b);
        b->feet_started = true;
        return;
    }
    float need[2] = {0, 0}, home[2][3];
    for (int s = 0; s < 2; ++s) {
        home_position(b, s, home[s]);
        struct b_foot *f = &b->foot[s];
        if (held[s].held) {
            hold_foot(f, &held[s]);
            continue; /* a tracked foot goes where its tracker is */
        }
        if (floor_share > 0.5f) {
            /* On the floor the legs lie or fold (b_floor.c): no steps; the feet are under the
             * body when it gets up. */
            home_position(b, s, f->planted_m);
            m_vec3_copy(f->planted_m, f->position_m);
            f->planted_yaw_rad = f->yaw_rad = b->heading_rad;
            f->stepping = false;
            f->step_time_s = 0.0f;
            continue;
        }
        if (f->stepping) {
            advance_step(f, dt_s);
            continue;
        }
        f->step_time_s += dt_s;
        need[s] = step_need(b, s, home[s]);
    }
    for (int s = 0; s < 2; ++s)
        if (b->foot[s].stepping || b->foot[s].step_time_s < DOUBLE_SUPPORT_S)
            return;
    /* The foot that needs it clearly more steps; when the two are close (a body at rest
     * is symmetric, so they often are), the one that did not step last: a tiny change of
     * the input must not decide which foot steps, or the two gaits would stay a stride
     * apart for the rest of the walk. */
    const int s = need[0] > need[1] + STEP_CHOICE_MARGIN   ? 0
                  : need[1] > need[0] + STEP_CHOICE_MARGIN ? 1
                                                           : 1 - b->last_stepped;
    if (need[s] >= 1.0f)
        start_step(b, s, home[s]);
}

void
b_seed_estimate_feet(struct body *b, float dt_s, const struct b_held_foot *held, float floor_share,
                     struct b_feet_estimate *out)
{
    update_steps(b, dt_s, held, floor_share);
    for (int s = 0; s < 2; ++s) {
        const struct b_foot *f = &b->foot[s];
        m_vec3_copy(f->position_m, out->at.ankle_m[s]);
        b_quat_from_yaw(f->yaw_rad, out->at.foot_rotation[s]);
        b_leg_pole(b, s, f->position_m, f->yaw_rad, out->at.knee_pole_m[s]);
        out->ankle_confidence[s] = out->rotation_confidence[s] = 1.0f;
        out->knee_pole_confidence[s] = 1.0f;
    }
}
