/*
 * Where elbows and knees point. An elbow is predicted from how the hand is held (the
 * forearm leaves the wrist along the hand's own axis when the wrist is straight), blended
 * with an anatomical default (down, back and out from the shoulder). A knee points over
 * its foot. After the solve, the forearm takes half of the hand's twist (pronation), so a
 * skinned forearm turns along its length instead of at the wrist alone.
 */
#include <stddef.h>

#include "b_internal.h"
#include "embody/m_math.h"

/* How far out to the side of straight ahead a knee's pole sits (the body's left is +X). */
#define KNEE_OUTWARD_M 0.12f

/* How far a knee may point from where the hips face (the thigh's twist range is 40). */
#define KNEE_MAX_TURN_RAD (22.0f * M_DEG_TO_RAD)

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
    /* Over the foot, but never turned from the hips by more than the thigh can twist:
     * the foot's own turn makes up the rest (a planted foot may be left 35 degrees from
     * where the body faces before it steps). */
    const float from_hips = m_angle_wrap(b->foot[side].yaw_rad - b->heading_rad);
    b_quat_from_yaw(b->heading_rad + m_clampf(from_hips, -KNEE_MAX_TURN_RAD, KNEE_MAX_TURN_RAD),
                    yaw_rot);
    const float out = side == 0 ? KNEE_OUTWARD_M : -KNEE_OUTWARD_M;
    const float local[3] = {out, 0.0f, 0.5f};
    m_quat_rotate(yaw_rot, local, ahead);
    float mid[3];
    m_vec3_lerp(b->pose.position_m[b->j.upper_leg[side]], b->foot[side].position_m, 0.5f, mid);
    m_vec3_add(mid, ahead, out_pole_m);
}

/* Of the hand's twist about the forearm, the share the forearm takes. */
#define FOREARM_TWIST_SHARE 0.5f

void
b_spread_forearm_twist(struct body *b)
{
    const struct sk_skeleton *sk = &b->skeleton;
    struct sk_pose *pose = &b->pose;
    for (int s = 0; s < 2; ++s) {
        const int elbow = b->j.lower_arm[s], hand = b->j.hand[s];
        float axis[3], part[4], part_conj[4], swing[4], held[4];
        const float fallback[3] = {1, 0, 0};
        /* The forearm's axis, elbow to wrist, in the forearm's frame (= the hand's rest
         * frame, where its twist is measured). */
        m_vec3_normalize_or(sk->offset_m[hand], fallback, axis);
        /* Whatever twist the forearm still holds (a solve that needed no iteration keeps
         * the last frame's) goes back to the hand first, so the split is of the total. */
        m_quat_swing_twist(pose->local_rotation[elbow], axis, swing, held);
        m_quat_copy(swing, pose->local_rotation[elbow]);
        m_quat_mul(held, pose->local_rotation[hand], pose->local_rotation[hand]);
        const float angle = m_quat_swing_twist(pose->local_rotation[hand], axis, NULL, NULL);
        m_quat_from_axis_angle(axis, FOREARM_TWIST_SHARE * angle, part);
        /* Turning the forearm about its own axis leaves the wrist where it is; the hand
         * turns back by as much, so its rotation in the world is unchanged. */
        m_quat_mul(pose->local_rotation[elbow], part, pose->local_rotation[elbow]);
        m_quat_mul(pose->rotation[sk->parent[elbow]], pose->local_rotation[elbow],
                   pose->rotation[elbow]);
        m_quat_conjugate(part, part_conj);
        m_quat_mul(part_conj, pose->local_rotation[hand], pose->local_rotation[hand]);
    }
}
