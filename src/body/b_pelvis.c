/*
 * The pelvis from the head: the body's heading (which way the hips face) follows the
 * head's yaw with a dead zone, so looking around does not twist the hips; the pelvis
 * hangs below the neck along the vertical, and drops with the head when it drops.
 */
#include "b_internal.h"
#include "embody/m_math.h"

/* The head may turn this far from the hips before they follow. */
#define HEADING_DEAD_ZONE_RAD (30.0f * M_DEG_TO_RAD)
/* Inside the dead zone the hips still drift toward the head, slowly (per second). */
#define HEADING_DRIFT_PER_S 0.5f

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

void
b_pelvis_update(struct body *b, float dt_s)
{
    update_heading(b, dt_s);
    float yaw_rot[4];
    b_quat_from_yaw(b->heading_rad, yaw_rot);
    /* The neck, from the head's pose and the head's rest offset above it. */
    float neck[3], off[3];
    m_quat_rotate(b->head_rotation, b->m.head_from_neck_m, off);
    m_vec3_sub(b->head_position_m, off, neck);
    /* At rest the hips sit a little behind or ahead of the neck. */
    const float *rest_hips = b->skeleton.rest_position_m[b->j.hips];
    const float *rest_neck = b->skeleton.rest_position_m[b->j.neck];
    float rest_delta[3] = {rest_hips[0] - rest_neck[0], 0.0f, rest_hips[2] - rest_neck[2]};
    m_quat_rotate(yaw_rot, rest_delta, rest_delta);
    float hips[3] = {neck[0] + rest_delta[0], neck[1] - b->m.hips_to_neck_m,
                     neck[2] + rest_delta[2]};
    const float standing = b->desc.floor_height_m + b->m.hips_height_m;
    if (hips[1] > standing)
        hips[1] = standing;
    if (b->pelvis_started && dt_s > 0.0f) {
        float v[3];
        m_vec3_sub(hips, b->hips_position_m, v);
        m_vec3_scale(v, 1.0f / dt_s, v);
        m_vec3_lerp(b->body_velocity_m_s, v, fminf(1.0f, 10.0f * dt_s), b->body_velocity_m_s);
    }
    m_vec3_copy(hips, b->hips_position_m);
    m_quat_copy(yaw_rot, b->hips_rotation);
    b->pelvis_started = true;
}
