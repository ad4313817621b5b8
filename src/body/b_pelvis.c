/*
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
 * floor or the ground under them rises (b_feet.c). The spine bends between this pelvis
 * and the head (the solver).
 *
 * Measured against the other models tried (see README, "Body reconstruction"): leaning the
 * torso by the neck's offset from the planted feet, or explaining part of the neck's
 * drop by a forward lean, both did worse on the evaluation (13.8 cm MPJPE upright, 14.4
 * to 16.7 cm with leans), because the feet that would anchor a lean are themselves
 * uncertain.
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
b_pelvis_estimate(struct body *b, float dt_s, struct b_pelvis_estimate *out)
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
b_torso_estimate(const struct body *b, struct b_torso_estimate *out)
{
    float upright[4];
    b_floor_upright(b, upright);
    neck_from_head(b, upright, out->neck_m);
    out->neck_confidence = 1.0f;
}
