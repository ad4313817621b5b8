/*
 * Feet: a planted foot stays where it is; when the body moves or turns far enough from
 * it, it steps (one foot at a time) along an arc to where it should stand, a little
 * ahead in the direction the body is moving.
 */
#include "b_internal.h"
#include "embody/m_math.h"

#define STEP_DISTANCE_M 0.18f
#define STEP_TURN_RAD (35.0f * M_DEG_TO_RAD)
#define STEP_HEIGHT_M 0.08f
#define STEP_MIN_S 0.22f
#define STEP_MAX_S 0.40f

/* Where foot s would stand under the body now. */
static void
home_position(const struct body *b, int s, float *out)
{
    float yaw_rot[4], off[3];
    b_quat_from_yaw(b->heading_rad, yaw_rot);
    m_vec3_set(off, b->m.ankle_offset_m[s][0], 0.0f, b->m.ankle_offset_m[s][2]);
    m_quat_rotate(yaw_rot, off, off);
    out[0] = b->hips_position_m[0] + off[0];
    out[1] = b->desc.floor_height_m + b->m.ankle_height_m;
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
    }
    b->last_stepped = 1;
}

static float
horizontal_distance(const float *a, const float *b)
{
    const float dx = a[0] - b[0], dz = a[2] - b[2];
    return sqrtf(dx * dx + dz * dz);
}

static void
start_step(struct body *b, int s, const float *home)
{
    struct b_foot *f = &b->foot[s];
    const float speed = sqrtf(b->body_velocity_m_s[0] * b->body_velocity_m_s[0] +
                              b->body_velocity_m_s[2] * b->body_velocity_m_s[2]);
    f->step_duration_s = m_clampf(STEP_MAX_S - 0.1f * speed, STEP_MIN_S, STEP_MAX_S);
    m_vec3_copy(f->planted_m, f->step_from_m);
    /* Land ahead of where the body will be when the foot comes down. */
    f->step_to_m[0] = home[0] + b->body_velocity_m_s[0] * 0.5f * f->step_duration_s;
    f->step_to_m[1] = home[1];
    f->step_to_m[2] = home[2] + b->body_velocity_m_s[2] * 0.5f * f->step_duration_s;
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
    const float ease = t * t * (3.0f - 2.0f * t);
    m_vec3_lerp(f->step_from_m, f->step_to_m, ease, f->position_m);
    f->position_m[1] += STEP_HEIGHT_M * sinf(M_PI_F * t);
    f->yaw_rad = f->step_from_yaw_rad + m_angle_wrap(f->step_to_yaw_rad - f->step_from_yaw_rad) * ease;
    if (t >= 1.0f) {
        f->stepping = false;
        m_vec3_copy(f->step_to_m, f->planted_m);
        m_vec3_copy(f->step_to_m, f->position_m);
        f->planted_yaw_rad = f->yaw_rad = f->step_to_yaw_rad;
    }
}

void
b_feet_update(struct body *b, float dt_s)
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
        if (f->stepping) {
            advance_step(f, dt_s);
            continue;
        }
        const float off = horizontal_distance(f->planted_m, home[s]) / STEP_DISTANCE_M;
        const float turn = fabsf(m_angle_wrap(b->heading_rad - f->planted_yaw_rad)) / STEP_TURN_RAD;
        need[s] = fmaxf(off, turn);
    }
    if (b->foot[0].stepping || b->foot[1].stepping)
        return;
    /* The foot that needs it more steps; on a tie, the one that did not step last. */
    int s = need[0] > need[1] ? 0 : (need[1] > need[0] ? 1 : 1 - b->last_stepped);
    if (need[s] >= 1.0f)
        start_step(b, s, home[s]);
}
