/*
 * The pelvis from the head.
 *
 * Heading: the hips face where the head faces, with a dead zone, so looking around does
 * not twist the hips.
 *
 * Position: the torso is a segment of the spine's length from the hips to the neck. How
 * the neck got where it is decides the pelvis: a body keeps its weight over its feet, so
 * a neck ahead of the feet means the torso leans forward about the hips, and the hips go
 * back by a share of that lean (the upper body's weight ahead is balanced by the pelvis
 * behind); what the lean does not explain of the neck's drop is a crouch, which lowers
 * the hips. Sideways the same, with less lean. A neck higher than standing allows lifts
 * the whole body (stepping up, jumping): the legs straighten and the feet leave the floor
 * or the ground under them rises (b_feet.c).
 *
 * The pelvis itself tilts with part of the lean; the spine bends the rest (the solver).
 */
#include "b_internal.h"
#include "embody/m_math.h"

/* The head may turn this far from the hips before they follow. */
#define HEADING_DEAD_ZONE_RAD (30.0f * M_DEG_TO_RAD)
/* Inside the dead zone the hips still drift toward the head, slowly (per second). */
#define HEADING_DRIFT_PER_S 0.5f
/* Of a torso lean, the share the hips move back to keep the weight over the feet. */
#define BALANCE_SHARE 0.4f
/* The pelvis tilts with this share of the torso's lean; the spine bends the rest. */
#define PELVIS_TILT_SHARE 0.6f
/* Limits of the lean, forward and backward, and sideways. */
#define LEAN_BACKWARD_MAX_RAD (25.0f * M_DEG_TO_RAD)
#define LEAN_SIDE_MAX_RAD (30.0f * M_DEG_TO_RAD)

static void
update_heading(struct body *b, float dt_s)
{
    const float head_yaw = b_yaw_of(b->head_rotation, b->heading_rad);
    if (!b->pelvis_started) {
        b->heading_rad = head_yaw;
        return;
    }
    float diff = m_angle_wrap(head_yaw - b->heading_rad);
    if (diff > HEADING_DEAD_ZONE_RAD)
        b->heading_rad += diff - HEADING_DEAD_ZONE_RAD;
    else if (diff < -HEADING_DEAD_ZONE_RAD)
        b->heading_rad += diff + HEADING_DEAD_ZONE_RAD;
    diff = m_angle_wrap(head_yaw - b->heading_rad);
    b->heading_rad += diff * fminf(1.0f, HEADING_DRIFT_PER_S * dt_s);
    b->heading_rad = m_angle_wrap(b->heading_rad);
}

/* The neck joint from the head joint: its rest offset turned halfway between the body's
 * upright heading and the head's own rotation (the neck bends part of the head's tilt). */
static void
neck_from_head(const struct body *b, const float *yaw_rot, float *out)
{
    float mid[4], off[3];
    m_quat_slerp(yaw_rot, b->head_rotation, 0.5f, mid);
    m_quat_rotate(mid, b->m.head_from_neck_m, off);
    m_vec3_sub(b->head_position_m, off, out);
}

/* The middle of the feet on the ground, or under the neck before the feet are placed. */
static void
support_center(const struct body *b, const float *neck, float *out)
{
    if (!b->feet_started) {
        m_vec3_copy(neck, out);
        return;
    }
    m_vec3_lerp(b->foot[0].planted_m, b->foot[1].planted_m, 0.5f, out);
}

void
b_pelvis_update(struct body *b, float dt_s)
{
    update_heading(b, dt_s);
    float yaw_rot[4];
    b_quat_from_yaw(b->heading_rad, yaw_rot);
    const float forward[3] = {sinf(b->heading_rad), 0.0f, cosf(b->heading_rad)};
    const float left[3] = {forward[2], 0.0f, -forward[0]};
    float neck[3], support[3];
    neck_from_head(b, yaw_rot, neck);
    support_center(b, neck, support);
    const float length = b->m.hips_to_neck_m;
    /* Lean from the neck's offset over the support: the neck leads the hips by
     * (1 - BALANCE_SHARE) of the torso's horizontal extent. */
    float rel[3];
    m_vec3_sub(neck, support, rel);
    const float reach = (1.0f - BALANCE_SHARE) * length;
    float lean_fwd = m_clampf(m_vec3_dot(rel, forward) / reach, -sinf(LEAN_BACKWARD_MAX_RAD), 1.0f);
    float lean_side = m_clampf(m_vec3_dot(rel, left) / reach, -sinf(LEAN_SIDE_MAX_RAD),
                               sinf(LEAN_SIDE_MAX_RAD));
    /* A lean lowers the neck: it can only be as large as the neck's drop below standing
     * allows (the hips do not rise above standing to make room for it). */
    const float standing_neck = b->ground_height_m + b->m.neck_height_m;
    const float drop = fmaxf(0.0f, standing_neck - neck[1]);
    const float max_cos = m_clampf(1.0f - drop / length, -1.0f, 1.0f);
    const float max_sin = sqrtf(fmaxf(0.0f, 1.0f - max_cos * max_cos));
    const float lean = sqrtf(lean_fwd * lean_fwd + lean_side * lean_side);
    if (lean > max_sin) {
        const float k = max_sin / lean;
        lean_fwd *= k;
        lean_side *= k;
    }
    const float pitch_clamped = asinf(m_clampf(lean_fwd, -1.0f, 1.0f));
    const float roll = asinf(m_clampf(lean_side, -1.0f, 1.0f));
    /* The torso's direction from hips to neck. */
    const float up = sqrtf(fmaxf(0.0f, 1.0f - lean_fwd * lean_fwd - lean_side * lean_side));
    float torso[3];
    for (int i = 0; i < 3; ++i)
        torso[i] = forward[i] * lean_fwd + left[i] * lean_side;
    torso[1] += up;
    float hips[3];
    m_vec3_muladd(neck, torso, -length, hips);
    /* At rest the hips sit a little behind or ahead of the neck line. */
    const float *rest_hips = b->skeleton.rest_position_m[b->j.hips];
    const float *rest_neck = b->skeleton.rest_position_m[b->j.neck];
    float rest_delta[3] = {rest_hips[0] - rest_neck[0], 0.0f, rest_hips[2] - rest_neck[2]};
    m_quat_rotate(yaw_rot, rest_delta, rest_delta);
    m_vec3_add(hips, rest_delta, hips);
    if (b->pelvis_started && dt_s > 0.0f) {
        float v[3];
        m_vec3_sub(hips, b->hips_position_m, v);
        m_vec3_scale(v, 1.0f / dt_s, v);
        m_vec3_lerp(b->body_velocity_m_s, v, fminf(1.0f, 10.0f * dt_s), b->body_velocity_m_s);
    }
    m_vec3_copy(hips, b->hips_position_m);
    /* The pelvis tilts with part of the lean. */
    /* A turn about the body's left axis takes up toward forward (a forward lean); one
     * about the forward axis by a negative angle takes up toward the left. */
    float tilt[4], pitch_rot[4], roll_rot[4];
    m_quat_from_axis_angle(left, PELVIS_TILT_SHARE * pitch_clamped, pitch_rot);
    m_quat_from_axis_angle(forward, -PELVIS_TILT_SHARE * roll, roll_rot);
    m_quat_mul(pitch_rot, roll_rot, tilt);
    m_quat_mul(tilt, yaw_rot, b->hips_rotation);
    b->pelvis_started = true;
}
