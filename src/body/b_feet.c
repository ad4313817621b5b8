/*
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
/* A foot whose lowest part is this far above the ground is in the air, whatever holds it
 * (the HUD says "planted" only of a foot on the ground). */
#define PLANTED_MAX_LIFT_M 0.06f
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
b_feet_reset(struct body *b)
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

static void
update_steps(struct body *b, float dt_s)
{
    if (!b->feet_started) {
        b_feet_reset(b);
        b->feet_started = true;
        return;
    }
    float need[2] = {0, 0}, home[2][3];
    for (int s = 0; s < 2; ++s) {
        home_position(b, s, home[s]);
        struct b_foot *f = &b->foot[s];
        if (b_trackers_hold_foot(b, s))
            continue; /* a tracked foot goes where its tracker is */
        if (b_floor_share(b) > 0.5f) {
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
b_feet_estimate(struct body *b, float dt_s, struct b_feet_estimate *out)
{
    update_steps(b, dt_s);
    for (int s = 0; s < 2; ++s) {
        const struct b_foot *f = &b->foot[s];
        m_vec3_copy(f->position_m, out->at.ankle_m[s]);
        b_quat_from_yaw(f->yaw_rad, out->at.foot_rotation[s]);
        b_leg_pole(b, s, f->position_m, f->yaw_rad, out->at.knee_pole_m[s]);
        out->ankle_confidence[s] = out->rotation_confidence[s] = 1.0f;
        out->knee_pole_confidence[s] = 1.0f;
    }
}

/* Whether joint j belongs to foot s (the foot, its toes, their ends). */
static bool
in_foot(const struct body *b, int s, int j)
{
    const int parent = b->skeleton.parent[j];
    return j == b->j.foot[s] || parent == b->j.foot[s] ||
           (b->j.toes[s] >= 0 && parent == b->j.toes[s]);
}

bool
b_foot_planted(const struct body *b, int s)
{
    const bool held = b->desc.prior && b->prior.started ? b->prior.planted[s] : !b->foot[s].stepping;
    /* How far its least lifted part (ankle, toes or their end: a heel lifted before a step
     * still stands on the toes) is above where it is with the rest pose's foot flat on the
     * ground, its lowest point touching. */
    const float(*rest)[3] = (const float(*)[3])b->skeleton.rest_position_m;
    float rest_lowest = INFINITY, lift = INFINITY;
    for (int j = b->j.foot[s]; j < b->pose.joint_count; ++j)
        if (in_foot(b, s, j))
            rest_lowest = fminf(rest_lowest, rest[j][1]);
    for (int j = b->j.foot[s]; j < b->pose.joint_count; ++j)
        if (in_foot(b, s, j))
            lift = fminf(lift, b->pose.position_m[j][1] - (b->ground_height_m + rest[j][1] - rest_lowest));
    return held && lift <= PLANTED_MAX_LIFT_M;
}
