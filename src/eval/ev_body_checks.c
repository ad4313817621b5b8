/*
 * What a player sees of the body in every frame, measured (src/eval/eval.h,
 * struct ev_body_checks): the head joint turned as the headset is, and no joint or foot
 * under the floor. Per frame, from the body and the frame it was given; the checks that
 * rerun a clip (recovery, turning in place) are in ev_probes.c.
 */
#include <math.h>
#include <string.h>

#include "embody/body.h"
#include "eval/eval.h"
#include "embody/m_math.h"

void
ev_body_checks_init(struct ev_body_checks *c)
{
    memset(c, 0, sizeof *c);
    c->recovery_m = c->recovery_lower_m = (double)NAN;
    c->turn_feet_deg = c->turn_person_deg = (double)NAN;
    c->turn_row = -1;
    c->hand_up_hips_deg = (double)NAN;
}

/* The angle between the head joint's world rotation and the head bone's rotation the
 * headset gives (device = bone * offset, so bone = device * offset^-1), degrees; negative
 * when the headset's sample is not usable. */
static double
head_angle_deg(const struct body *body, const struct em_tracking_frame *frame)
{
    const struct em_device_pose *head = &frame->device[EM_DEVICE_HEAD];
    if (!em_device_pose_usable(head) || !m_quat_is_finite(head->pose.orientation))
        return -1.0;
    const float *q = head->pose.orientation;
    if (fabsf(m_quat_dot(q, q) - 1.0f) > 0.01f)
        return -1.0;
    struct body_desc desc;
    body_get_desc(body, &desc);
    float device[4], offset_inv[4], want[4], diff[4];
    m_quat_copy(q, device);
    m_quat_normalize(device);
    m_quat_conjugate(desc.offsets.head_rotation, offset_inv);
    m_quat_mul(device, offset_inv, want);
    const struct sk_skeleton *sk = body_skeleton(body);
    const int joint = sk->bone_joint[SK_HEAD];
    if (joint < 0)
        return -1.0;
    m_quat_mul_conj_first(body_pose(body)->rotation[joint], want, diff);
    m_quat_normalize(diff);
    return (double)(m_quat_angle(diff) * M_RAD_TO_DEG);
}

static bool
is_foot_part(enum sk_bone bone)
{
    return bone == SK_LEFT_FOOT || bone == SK_RIGHT_FOOT || bone == SK_LEFT_TOES ||
           bone == SK_RIGHT_TOES || bone == SK_LEFT_TOES_END || bone == SK_RIGHT_TOES_END;
}

void
ev_body_checks_add_frame(struct ev_body_checks *c, const struct body *body,
                         const struct em_tracking_frame *frame)
{
    const double angle = head_angle_deg(body, frame);
    if (angle >= 0.0) {
        int bin = (int)(angle / EV_HEAD_ANGLE_BIN_DEG);
        bin = bin < EV_HEAD_ANGLE_BINS ? bin : EV_HEAD_ANGLE_BINS - 1;
        c->head_angle_count[bin]++;
        c->head_frames++;
        c->head_angle_max_deg = fmax(c->head_angle_max_deg, angle);
        if (angle > EV_HEAD_ANGLE_TARGET_DEG)
            c->head_angle_over_share += 1.0; /* a count until ev_body_checks_finish */
    }
    struct body_desc desc;
    body_get_desc(body, &desc);
    const struct sk_skeleton *sk = body_skeleton(body);
    const struct sk_pose *pose = body_pose(body);
    for (int j = 0; j < sk->joint_count; ++j) {
        const double depth = (double)(desc.floor_height_m - pose->position_m[j][1]);
        c->floor_depth_m = fmax(c->floor_depth_m, depth);
        if (is_foot_part(sk->bone[j]))
            c->foot_floor_depth_m = fmax(c->foot_floor_depth_m, depth);
    }
}

void
ev_body_checks_finish(struct ev_body_checks *c)
{
    c->head_angle_over_share =
        c->head_frames > 0 ? c->head_angle_over_share / (double)c->head_frames : 0.0;
}

double
ev_body_checks_head_percentile(const struct ev_body_checks *c, double fraction)
{
    if (c->head_frames <= 0)
        return (double)NAN;
    long rank = (long)ceil(fraction * (double)c->head_frames);
    rank = rank < 1 ? 1 : rank;
    long seen = 0;
    for (int b = 0; b < EV_HEAD_ANGLE_BINS; ++b) {
        seen += c->head_angle_count[b];
        if (seen >= rank)
            return fmin((b + 1) * EV_HEAD_ANGLE_BIN_DEG, c->head_angle_max_deg);
    }
    return c->head_angle_max_deg;
}
