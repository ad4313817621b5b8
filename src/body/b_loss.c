/*
 * From devices to bone targets, and what happens when a device is lost: its values are
 * not trusted; the limb blends (over loss_blend_s) to a plausible pose (a hand hangs at
 * the side, the head holds where it was) and blends back when the device returns.
 */
#include "b_internal.h"
#include "embody/m_math.h"

bool
b_device_sample_ok(const struct em_device_pose *d)
{
    if (!em_device_pose_usable(d) || !m_vec3_is_finite(d->pose.position_m) ||
        !m_quat_is_finite(d->pose.orientation))
        return false;
    /* A runtime's quaternions are unit to float precision and a CSV's to its digits; one
     * far from unit is garbage, not a rotation to normalise. */
    const float norm2 = m_quat_dot(d->pose.orientation, d->pose.orientation);
    if (fabsf(norm2 - 1.0f) > B_MAX_QUAT_NORM2_ERROR)
        return false;
    const float *p = d->pose.position_m;
    return p[0] * p[0] + p[1] * p[1] + p[2] * p[2] <= B_MAX_DEVICE_DISTANCE_M * B_MAX_DEVICE_DISTANCE_M;
}

/* Bone pose from device pose: device = bone * offset, so bone = device * offset^-1. */
static void
bone_from_device(const float *device_pos, const float *device_rot, const float *off_pos,
                 const float *off_rot, float *out_pos, float *out_rot)
{
    float off[3];
    m_quat_mul(device_rot, (const float[4]){-off_rot[0], -off_rot[1], -off_rot[2], off_rot[3]},
               out_rot);
    m_quat_normalize(out_rot);
    m_quat_rotate(out_rot, off_pos, off);
    m_vec3_sub(device_pos, off, out_pos);
}

static void
grip_offset(const struct body *b, int side, float *out)
{
    const struct body_device_offsets *o = &b->desc.offsets;
    const int end = b->j.hand_end[side];
    if (end >= 0)
        m_vec3_scale(b->skeleton.offset_m[end], o->grip_palm_fraction, out);
    else
        m_vec3_set(out, 0, 0, 0);
    m_vec3_add(out, o->grip_offset_m[side], out);
}

/* A hand hanging at the side, palm in. */
static void
fallback_hand(const struct body *b, int side, float *out_pos, float *out_rot)
{
    float yaw_rot[4], off[3];
    b_quat_from_yaw(b->heading_rad, yaw_rot);
    const float sign = side == 0 ? 1.0f : -1.0f;
    const float *hip = b->m.hip_offset_m[side];
    m_vec3_set(off, hip[0] + sign * 0.1f, 0.0f, 0.0f);
    const float arm = b->m.upper_arm_m + b->m.lower_arm_m;
    const float shoulder_y = b->hips_position_m[1] + (b->m.neck_height_m - b->m.hips_height_m) * 0.9f;
    m_quat_rotate(yaw_rot, off, off);
    out_pos[0] = b->hips_position_m[0] + off[0];
    out_pos[1] = shoulder_y - 0.95f * arm;
    out_pos[2] = b->hips_position_m[2] + off[2];
    const float z[3] = {0, 0, 1};
    float down[4];
    m_quat_from_axis_angle(z, -sign * 0.5f * M_PI_F, down);
    m_quat_mul(yaw_rot, down, out_rot);
}

/* A usable sample of the device: its velocity since the last one (over any coast). */
static void
remember_sample(struct b_device_track *t, const float *p, const float *q, float dt_s)
{
    const float span = dt_s + t->coast_s;
    if (t->seen && span > 0.0f && !t->coast_reset) {
        float v[3];
        m_vec3_sub(p, t->device_position_m, v);
        m_vec3_scale(v, 1.0f / span, t->device_velocity_m_s);
    } else {
        m_vec3_set(t->device_velocity_m_s, 0, 0, 0);
    }
    t->coast_reset = false;
    t->coast_s = 0.0f;
    m_vec3_copy(p, t->device_position_m);
    m_quat_copy(q, t->device_rotation);
}

/* A controller's sample farther from where the hand was (its last sample, or its coast)
 * than a person moves in the time, while the headset did not jump (body.c screens the
 * devices that jump with it): a tracking glitch of that controller alone, a lost sample
 * (the hand coasts), never a place the arm is thrown to. Samples that stay away for
 * B_TELEPORT_CONFIRM_S are taken: the controller was found again elsewhere. */
static bool
hand_jumped(struct b_device_track *t, const struct em_device_pose *dev, float dt_s)
{
    const bool following =
        t->seen && dt_s > 0.0f && (t->state == BODY_DEVICE_TRACKED || t->coasted);
    if (!following || m_vec3_distance(dev->pose.position_m, t->device_now_m) <=
                          B_TELEPORT_MIN_M + B_TELEPORT_SPEED_M_S * dt_s) {
        t->jump_s = 0.0f;
        return false;
    }
    t->jump_s += dt_s;
    return t->jump_s < B_TELEPORT_CONFIRM_S;
}

static void
track_device(struct body *b, int d, const struct em_device_pose *dev, float dt_s, float *pos,
             float *rot)
{
    struct b_device_track *t = &b->track[d];
    const float step = b->desc.loss_blend_s > 0.0f ? dt_s / b->desc.loss_blend_s : 1.0f;
    /* A sample that came too soon after the last one is not used either: its velocity
     * would be noise over a tiny step (the first frame has no step). */
    const bool in_time = !b->frame_too_soon;
    const bool good =
        in_time && b_device_sample_ok(dev) && !(d != EM_DEVICE_HEAD && hand_jumped(t, dev, dt_s));
    /* One or two bad samples in a stream that was moving: the device coasts on at its last
     * velocity, through the filter as if it had been seen there, so the body does not
     * lurch (held still, the pelvis and the steps fell out of time with the clean stream's
     * for a second). The bad sample itself is never used; the state says lost. */
    const bool coasting = !good && in_time && t->seen &&
                          (t->state == BODY_DEVICE_TRACKED || t->coasted) &&
                          t->coast_s + dt_s <= B_COAST_MAX_S && dt_s > 0.0f;
    if (good || coasting) {
        float p[3], q[4];
        if (good) {
            m_vec3_copy(dev->pose.position_m, p);
            m_quat_copy(dev->pose.orientation, q);
            m_quat_normalize(q);
            remember_sample(t, p, q, dt_s);
        } else {
            t->coast_s += dt_s;
            m_vec3_muladd(t->device_position_m, t->device_velocity_m_s, t->coast_s, p);
            m_quat_copy(t->device_rotation, q);
        }
        m_vec3_copy(p, t->device_now_m);
        m_quat_copy(q, t->device_now_rotation);
        b_filter_position(&b->filter_position[d], p, dt_s, b->desc.filter_min_cutoff_hz,
                          b->desc.filter_beta);
        b_filter_rotation(&b->filter_rotation[d], q, dt_s, b->desc.filter_min_cutoff_hz,
                          b->desc.filter_beta);
        if (d == EM_DEVICE_HEAD)
            bone_from_device(p, q, b->desc.offsets.head_position_m,
                             b->desc.offsets.head_rotation, pos, rot);
        else {
            float off[3];
            const int side = d - EM_DEVICE_LEFT_HAND;
            grip_offset(b, side, off);
            bone_from_device(p, q, off, b->desc.offsets.grip_rotation[side], pos, rot);
        }
        if (coasting) {
            m_vec3_copy(pos, t->last_position_m);
            m_quat_copy(rot, t->last_rotation);
            t->state = BODY_DEVICE_LOST; /* for this frame; tracked again with the next */
            t->coasted = true;
            return;
        }
        if (t->coasted && t->state == BODY_DEVICE_LOST)
            t->state = BODY_DEVICE_TRACKED; /* back after a coast: nothing to blend */
        t->coasted = false;
        if (!t->seen) {
            t->blend = 1.0f;
            t->state = BODY_DEVICE_TRACKED;
        } else if (t->state == BODY_DEVICE_LOST) {
            t->state = BODY_DEVICE_RETURNING;
        }
        t->seen = true;
        if (t->state == BODY_DEVICE_RETURNING) {
            t->blend = fminf(1.0f, t->blend + step);
            if (t->blend >= 1.0f)
                t->state = BODY_DEVICE_TRACKED;
        }
        m_vec3_copy(pos, t->last_position_m);
        m_quat_copy(rot, t->last_rotation);
    } else {
        t->state = BODY_DEVICE_LOST;
        t->coasted = false;
        if (in_time) {
            t->coast_reset = true;
            t->coast_s = 0.0f;
        }
        t->blend = fmaxf(0.0f, t->blend - step);
        /* Start the filter afresh when the device comes back (not after a sample that only
         * came too soon: the device is still where the filter has it). */
        if (in_time) {
            b->filter_position[d].started = false;
            b->filter_rotation[d].started = false;
        }
        if (t->seen) {
            m_vec3_copy(t->last_position_m, pos);
            m_quat_copy(t->last_rotation, rot);
        }
    }
}

void
b_loss_update(struct body *b, const struct em_tracking_frame *frame, float dt_s)
{
    /* Head: a lost head holds its last pose. */
    float pos[3], rot[4];
    m_vec3_copy(b->head_position_m, pos);
    m_quat_copy(b->head_rotation, rot);
    track_device(b, EM_DEVICE_HEAD, &frame->device[EM_DEVICE_HEAD], dt_s, pos, rot);
    m_vec3_copy(pos, b->head_position_m);
    m_quat_copy(rot, b->head_rotation);
    /* Hands: blend between the tracked pose and the hand at the side. */
    for (int s = 0; s < 2; ++s) {
        const int d = EM_DEVICE_LEFT_HAND + s;
        float tracked[3], tracked_rot[4], rest[3], rest_rot[4];
        m_vec3_copy(b->hand_position_m[s], tracked);
        m_quat_copy(b->hand_rotation[s], tracked_rot);
        track_device(b, d, &frame->device[d], dt_s, tracked, tracked_rot);
        fallback_hand(b, s, rest, rest_rot);
        const float w = b->track[d].blend;
        const float ease = m_ease(w);
        m_vec3_lerp(rest, tracked, ease, b->hand_position_m[s]);
        m_quat_slerp(rest_rot, tracked_rot, ease, b->hand_rotation[s]);
    }
}
