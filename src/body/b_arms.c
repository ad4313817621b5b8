/*
 * Where elbows and knees point. An elbow is predicted from how the hand is held (the
 * forearm leaves the wrist along the hand's own axis when the wrist is straight), blended
 * with an anatomical default (down, back and out from the shoulder). A knee points over
 * its foot.
 */
#include "b_internal.h"
#include "embody/m_math.h"

/* How far out to the side of straight ahead a knee's pole sits (the body's left is +X). */
#define KNEE_OUTWARD_M 0.12f

/* How much the hand's orientation decides the elbow, against the anatomical default. */
#define HAND_CUE_WEIGHT 0.8f

void
b_arm_pole(const struct body *b, int side, float *out_pole_m)
{
    const struct sk_skeleton *sk = &b->skeleton;
    float forearm[3], from_hand[3];
    /* The wrist's rest offset from the elbow, turned as the hand is turned. */
    m_quat_rotate(b->hand_rotation[side], sk->offset_m[b->j.hand[side]], forearm);
    m_vec3_sub(b->hand_position_m[side], forearm, from_hand);
    float yaw_rot[4], anatomical[3];
    b_quat_from_yaw(b->heading_rad, yaw_rot);
    const float sign = side == 0 ? 1.0f : -1.0f;
    const float local[3] = {sign * 0.25f, -0.45f, -0.2f};
    m_quat_rotate(yaw_rot, local, anatomical);
    m_vec3_add(b->pose.position_m[b->j.upper_arm[side]], anatomical, anatomical);
    m_vec3_lerp(anatomical, from_hand, HAND_CUE_WEIGHT, out_pole_m);
}

void
b_leg_pole(const struct body *b, int side, float *out_pole_m)
{
    /* Ahead of the foot, and a little out to its side: knees track over the toes and
     * spread when they bend deeply, rather than fold in across each other. */
    float yaw_rot[4], ahead[3];
    b_quat_from_yaw(b->foot[side].yaw_rad, yaw_rot);
    const float out = side == 0 ? KNEE_OUTWARD_M : -KNEE_OUTWARD_M;
    const float local[3] = {out, 0.0f, 0.5f};
    m_quat_rotate(yaw_rot, local, ahead);
    float mid[3];
    m_vec3_lerp(b->pose.position_m[b->j.upper_leg[side]], b->foot[side].position_m, 0.5f, mid);
    m_vec3_add(mid, ahead, out_pole_m);
}
