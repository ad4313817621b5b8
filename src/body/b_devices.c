/*
 * The device stage, the frame's first: every device's sample (headset, controllers, body
 * trackers) checked, screened for jumps, filtered and turned into its bone's pose, with
 * its state (tracked, lost, returning) and its blend; what happens when a device is lost:
 * its values are not trusted; the limb blends (over loss_blend_s) to a plausible pose (a
 * hand hangs at the side, or where an elbow tracker puts it; the head holds where it was;
 * a body tracker gives way to the estimate without it) and blends back when the device
 * returns. The headset's and controllers' samples coast over a glitch of a frame or two; a
 * headset that jumps and stays is a teleport, and every history moves with it.
 */
#include <string.h>

#include "b_internal.h"
#include "embody/m_math.h"

/* Trackers are filtered like the headset but with this many times its cutoff at rest:
 * optical and lighthouse trackers are steady to a millimetre or so, and lag costs more
 * than noise. Measured on ../shared/mocap-train (eval --trackers all): factors 1, 3 and
 * 10 gave 6-point MPJPE 3.41, 3.30 and 3.15 cm, foot skate 0.27 to 0.29 cm/frame. */
#define TRACKER_MIN_CUTOFF_FACTOR 10.0f

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

void
b_bone_from_device(const float *device_pos, const float *device_rot, const float *off_pos,
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

/* ---- jumps of the headset: glitches, teleports, recentres -------------------------- */

static void
move_point(float *point_m, const float *offset_m)
{
    m_vec3_add(point_m, offset_m, point_m);
}

static void
move_track(struct b_device_track *t, struct b_one_euro *filter, const float *offset_m)
{
    move_point(t->last_position_m, offset_m);
    move_point(t->device_position_m, offset_m);
    move_point(t->device_now_m, offset_m);
    move_point(filter->value, offset_m);
}

/* The play space moved by `offset_m` (a teleport, a recentre): every history starts over
 * at the new place, moved with the space: the devices' filters and last samples, the
 * pelvis, the feet and their steps, the body trackers'; the prior's history and its
 * filtered pose too, but the prior is a source, above this stage, so the move is reported
 * (body->space_moved, space_offset_m) and body_update applies it before the fusion. Nothing of the old place is left to pull the body back, and the body goes
 * on as it would have had the player always been there. */
static void
restart_at(struct body *b, const float *offset_m)
{
    for (int d = 0; d < EM_DEVICE_COUNT; ++d)
        move_track(&b->track[d], &b->filter_position[d], offset_m);
    for (int k = 0; k < EM_TRACKER_COUNT; ++k) {
        move_track(&b->trackers.track[k], &b->trackers.filter_position[k], offset_m);
        move_point(b->trackers.bone_position_m[k], offset_m);
    }
    move_point(b->head_position_m, offset_m);
    move_point(b->hips_position_m, offset_m);
    move_point(b->seed_hips_m, offset_m);
    move_point(b->floor.head_m, offset_m);
    move_point(b->floor.down_from_m, offset_m);
    for (int s = 0; s < 2; ++s) {
        move_point(b->legs.ankle_m[s], offset_m);
        move_point(b->legs.knee_pole_m[s], offset_m);
        move_point(b->hand_position_m[s], offset_m);
        move_point(b->elbow_pole_m[s], offset_m);
        struct b_foot *f = &b->foot[s];
        move_point(f->planted_m, offset_m);
        move_point(f->position_m, offset_m);
        move_point(f->step_from_m, offset_m);
        move_point(f->step_to_m, offset_m);
    }
    for (int j = 0; j < b->pose.joint_count; ++j)
        move_point(b->pose.position_m[j], offset_m);
    b->space_moved = true;
    m_vec3_copy(offset_m, b->space_offset_m);
    b->jump_suspect = false;
}

/* This frame without the samples that jumped with the suspect head: each device whose
 * sample is farther than a person moves from where the body has it is lost here (it
 * coasts, and the prior's history takes the coast). */
static void
drop_jumped(const struct body *b, struct em_tracking_frame *frame, float dt_s)
{
    for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
        struct em_device_pose *dev = &frame->device[d];
        if (!b_device_sample_ok(dev) || !b->track[d].seen)
            continue;
        const float moved = m_vec3_distance(dev->pose.position_m, b->track[d].device_now_m);
        if (d == EM_DEVICE_HEAD || moved > B_TELEPORT_MIN_M + B_TELEPORT_SPEED_M_S * dt_s)
            dev->flags = 0;
    }
    /* A body tracker that jumped holds its last pose (it has no coast, and a loss would
     * blend it out and back in over loss_blend_s). */
    for (int k = 0; k < EM_TRACKER_COUNT; ++k) {
        struct em_device_pose *dev = &frame->tracker[k];
        const struct b_device_track *t = &b->trackers.track[k];
        if (!(frame->tracker_present & EM_TRACKER_BIT(k)) || !b_device_sample_ok(dev) || !t->seen)
            continue;
        if (m_vec3_distance(dev->pose.position_m, t->last_position_m) >
            B_TELEPORT_MIN_M + B_TELEPORT_SPEED_M_S * dt_s) {
            m_vec3_copy(t->last_position_m, dev->pose.position_m);
            m_quat_copy(t->last_rotation, dev->pose.orientation);
        }
    }
}

/* How far the play space moved: from where the head would be now had nothing moved (its
 * last place, sample or coast, carried on at its velocity over this frame's step) to the
 * sample `now`. From the last place alone, the frame's own motion (2 cm at a walk) went
 * into the offset too: the history, moved by it, stood still for a frame, and the
 * network read a stall (a walk's legs 8.5 cm off the clean run 0.1 s after a teleport,
 * 0.27 cm with the step taken out; 3.5 -> 1.9 cm after a recentre). The velocity is
 * carried only over a frame's step (at most B_MAX_GAP_S) from a head that was followed
 * (tracked or coasting): after a pause or a loss it is stale. */
static void
space_offset(const struct body *b, const float *now, float dt_s, float *out_offset_m)
{
    const struct b_device_track *t = &b->track[EM_DEVICE_HEAD];
    const bool followed =
        (t->state == BODY_DEVICE_TRACKED || t->coasted) && !t->coast_reset && dt_s > 0.0f;
    float expected[3];
    m_vec3_copy(t->device_now_m, expected);
    if (followed && dt_s <= B_MAX_GAP_S)
        m_vec3_muladd(expected, t->device_velocity_m_s, dt_s, expected);
    m_vec3_sub(now, expected, out_offset_m);
}

/* A head sample farther and faster than a person can move from the last one kept (a
 * tracking glitch, a teleport, a replay that looped) is first suspect: the devices that
 * jumped with it are lost (they coast) for up to B_TELEPORT_CONFIRM_S. A sample back near
 * the path before the jump ends it: it was a glitch, and nothing moved. Samples that stay
 * at the new place that long are a teleport: every history restarts there (restart_at).
 * After body_recenter the first head sample is the new place at once. Returns the frame to
 * use: `frame` itself, or its copy in out_screened without the samples that jumped. */
static const struct em_tracking_frame *
screen_jump(struct body *b, const struct em_tracking_frame *frame, float dt_s,
            struct em_tracking_frame *out_screened)
{
    const struct em_device_pose *head = &frame->device[EM_DEVICE_HEAD];
    if (!b_device_sample_ok(head))
        return frame;
    const float *now = head->pose.position_m;
    if (b->head_device_seen && b->recentre_pending) {
        float offset[3];
        space_offset(b, now, dt_s, offset);
        restart_at(b, offset);
    } else if (b->head_device_seen) {
        const float since = b->jump_suspect ? b->suspect_s + dt_s : dt_s;
        const float moved = m_vec3_distance(now, b->last_head_device_m);
        const bool jumped = moved > B_TELEPORT_MIN_M && moved > B_TELEPORT_SPEED_M_S * since;
        if (jumped) {
            const bool stayed =
                b->jump_suspect && m_vec3_distance(now, b->suspect_head_m) <=
                                       B_TELEPORT_MIN_M + B_TELEPORT_SPEED_M_S * dt_s;
            b->suspect_s = stayed ? b->suspect_s + dt_s : 0.0f;
            b->jump_suspect = true;
            m_vec3_copy(now, b->suspect_head_m);
            if (b->suspect_s < B_TELEPORT_CONFIRM_S) {
                *out_screened = *frame; /* copied only here: most frames pass as they are */
                drop_jumped(b, out_screened, dt_s);
                return out_screened;
            }
            float offset[3];
            space_offset(b, now, dt_s, offset);
            restart_at(b, offset);
        }
        b->jump_suspect = false; /* back on the path (a glitch), or moved there */
    }
    b->recentre_pending = false;
    m_vec3_copy(now, b->last_head_device_m);
    b->head_device_seen = true;
    return frame;
}

/* ---- the lost / returning / blend state machine, every device's ------------------- */

/* How far a blend moves over dt_s: the whole way over loss_blend_s. */
static float
blend_step(const struct body *b, float dt_s)
{
    return b->desc.loss_blend_s > 0.0f ? dt_s / b->desc.loss_blend_s : 1.0f;
}

/* A device with a usable sample: `at_once` it counts fully (a first sample), else a lost
 * one starts returning, and a returning one blends in by `step`, tracked once fully in. */
static void
track_found(struct b_device_track *t, bool at_once, float step)
{
    if (at_once) {
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
}

/* A device without one: lost, its blend going out by `step`. */
static void
track_lost(struct b_device_track *t, float step)
{
    t->state = BODY_DEVICE_LOST;
    t->blend = fmaxf(0.0f, t->blend - step);
}

/* ---- headset and controllers --------------------------------------------------------- */

/* Whether this frame's sample of device d is used: usable, in time (a sample that came
 * too soon after the last one is not used either: its velocity would be noise over a tiny
 * step; the first frame has no step) and, for a controller, not a jump of its own. */
static bool
sample_good(struct body *b, int d, const struct em_device_pose *dev, float dt_s)
{
    return !b->frame_too_soon && b_device_sample_ok(dev) &&
           !(d != EM_DEVICE_HEAD && hand_jumped(&b->track[d], dev, dt_s));
}

/* One or two bad samples in a stream that was moving: the device coasts on at its last
 * velocity, through the filter as if it had been seen there, so the body does not lurch
 * (held still, the pelvis and the steps fell out of time with the clean stream's for a
 * second). The bad sample itself is never used; the state says lost. */
static bool
may_coast(const struct body *b, const struct b_device_track *t, float dt_s)
{
    return !b->frame_too_soon && t->seen && (t->state == BODY_DEVICE_TRACKED || t->coasted) &&
           t->coast_s + dt_s <= B_COAST_MAX_S && dt_s > 0.0f;
}

/* Where the device is this frame: its sample (remembered, with its velocity), or its
 * coast from the last one. */
static void
device_now(struct b_device_track *t, const struct em_device_pose *dev, bool good, float dt_s,
           float *out_p, float *out_q)
{
    if (good) {
        m_vec3_copy(dev->pose.position_m, out_p);
        m_quat_copy(dev->pose.orientation, out_q);
        m_quat_normalize(out_q);
        remember_sample(t, out_p, out_q, dt_s);
    } else {
        t->coast_s += dt_s;
        m_vec3_muladd(t->device_position_m, t->device_velocity_m_s, t->coast_s, out_p);
        m_quat_copy(t->device_rotation, out_q);
    }
    m_vec3_copy(out_p, t->device_now_m);
    m_quat_copy(out_q, t->device_now_rotation);
}

/* The device's pose filtered, then its bone's (the head's, or the hand's from its grip). */
static void
bone_target(struct body *b, int d, float *p, float *q, float dt_s, float *out_pos, float *out_rot)
{
    b_filter_position(&b->filter_position[d], p, dt_s, b->desc.filter_min_cutoff_hz,
                      b->desc.filter_beta);
    b_filter_rotation(&b->filter_rotation[d], q, dt_s, b->desc.filter_min_cutoff_hz,
                      b->desc.filter_beta);
    if (d == EM_DEVICE_HEAD) {
        b_bone_from_device(p, q, b->desc.offsets.head_position_m, b->desc.offsets.head_rotation,
                           out_pos, out_rot);
    } else {
        float off[3];
        const int side = d - EM_DEVICE_LEFT_HAND;
        grip_offset(b, side, off);
        b_bone_from_device(p, q, off, b->desc.offsets.grip_rotation[side], out_pos, out_rot);
    }
}

/* Device d's state and its bone's pose in `pos`, `rot` (left as they are, the last pose,
 * while a device never seen is lost). */
static void
track_device(struct body *b, int d, const struct em_device_pose *dev, float dt_s, float *pos,
             float *rot)
{
    struct b_device_track *t = &b->track[d];
    const float step = blend_step(b, dt_s);
    const bool in_time = !b->frame_too_soon;
    const bool good = sample_good(b, d, dev, dt_s);
    const bool coasting = !good && may_coast(b, t, dt_s);
    if (good || coasting) {
        float p[3], q[4];
        device_now(t, dev, good, dt_s, p, q);
        bone_target(b, d, p, q, dt_s, pos, rot);
        m_vec3_copy(pos, t->last_position_m);
        m_quat_copy(rot, t->last_rotation);
        if (coasting) {
            t->state = BODY_DEVICE_LOST; /* for this frame; tracked again with the next */
            t->coasted = true;
            return;
        }
        if (t->coasted && t->state == BODY_DEVICE_LOST)
            t->state = BODY_DEVICE_TRACKED; /* back after a coast: nothing to blend */
        t->coasted = false;
        track_found(t, !t->seen, step);
    } else {
        track_lost(t, step);
        t->coasted = false;
        /* Start the coast and the filter afresh when the device comes back (not after a
         * sample that only came too soon: the device is still where the filter has it). */
        if (in_time) {
            t->coast_reset = true;
            t->coast_s = 0.0f;
            b->filter_position[d].started = false;
            b->filter_rotation[d].started = false;
        }
        if (t->seen) {
            m_vec3_copy(t->last_position_m, pos);
            m_quat_copy(t->last_rotation, rot);
        }
    }
}

/* The head's and hands' bone targets: a lost head holds its last pose; a hand blends
 * between the tracked pose and the hand at the side. */
static void
track_head_and_hands(struct body *b, const struct em_tracking_frame *frame, float dt_s)
{
    float pos[3], rot[4];
    m_vec3_copy(b->head_position_m, pos);
    m_quat_copy(b->head_rotation, rot);
    track_device(b, EM_DEVICE_HEAD, &frame->device[EM_DEVICE_HEAD], dt_s, pos, rot);
    m_vec3_copy(pos, b->head_position_m);
    m_quat_copy(rot, b->head_rotation);
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

/* ---- body trackers ------------------------------------------------------------------ */

/* Tracker t's state, filtered pose and weight, and its bone's pose through its mount. A
 * tracker seen on the body's first frame counts at once; one that appears later blends
 * in. */
static void
track_tracker(struct body *b, int t, const struct em_device_pose *dev, bool carried, float dt_s)
{
    struct b_trackers *T = &b->trackers;
    struct b_device_track *k = &T->track[t];
    const float step = blend_step(b, dt_s);
    if (carried && b_device_sample_ok(dev)) {
        float p[3], q[4];
        m_vec3_copy(dev->pose.position_m, p);
        m_quat_copy(dev->pose.orientation, q);
        m_quat_normalize(q);
        b_filter_position(&T->filter_position[t], p, dt_s,
                          TRACKER_MIN_CUTOFF_FACTOR * b->desc.filter_min_cutoff_hz,
                          b->desc.filter_beta);
        b_filter_rotation(&T->filter_rotation[t], q, dt_s,
                          TRACKER_MIN_CUTOFF_FACTOR * b->desc.filter_min_cutoff_hz,
                          b->desc.filter_beta);
        track_found(k, !k->seen && !b->pelvis_started, step);
        m_vec3_copy(p, k->last_position_m);
        m_quat_copy(q, k->last_rotation);
    } else {
        track_lost(k, step);
        T->filter_position[t].started = false;
        T->filter_rotation[t].started = false;
    }
    T->weight[t] = k->seen ? m_ease(k->blend) : 0.0f;
    if (k->seen) {
        const struct body_tracker_mount *m = &b->desc.tracker_mount[t];
        b_bone_from_device(k->last_position_m, k->last_rotation, m->position_m, m->rotation,
                           T->bone_position_m[t], T->bone_rotation[t]);
    }
}

/* A lost controller's hand blends to where an elbow tracker puts it (at the end of the
 * forearm the tracker gives) instead of hanging at the side. */
static void
hands_from_elbows(struct body *b)
{
    const struct b_trackers *T = &b->trackers;
    for (int s = 0; s < 2; ++s) {
        const int t = EM_TRACKER_LEFT_ELBOW + s;
        const struct b_device_track *hand = &b->track[EM_DEVICE_LEFT_HAND + s];
        const float we = T->weight[t];
        const float wh = hand->seen ? m_ease(hand->blend) : 0.0f;
        if (we <= 0.0f || wh >= 1.0f)
            continue;
        float wrist[3], rot[4];
        m_quat_rotate(T->bone_rotation[t], b->skeleton.offset_m[b->j.hand[s]], wrist);
        m_vec3_add(T->bone_position_m[t], wrist, wrist);
        m_quat_copy(T->bone_rotation[t], rot);
        if (hand->seen) {
            m_vec3_lerp(wrist, hand->last_position_m, wh, wrist);
            m_quat_slerp(rot, hand->last_rotation, wh, rot);
        }
        m_vec3_lerp(b->hand_position_m[s], wrist, we, b->hand_position_m[s]);
        m_quat_slerp(b->hand_rotation[s], rot, we, b->hand_rotation[s]);
        m_quat_normalize(b->hand_rotation[s]);
    }
}

/* ---- the stage -------------------------------------------------------------------- */

const struct em_tracking_frame *
b_devices_update(struct body *b, const struct em_tracking_frame *frame,
                 struct em_tracking_frame *out_screened, float *out_dt_s)
{
    const double step_s = b->started ? frame->time_s - b->time_s : 0.0;
    b->frame_too_soon = b->started && step_s < (double)B_MIN_FRAME_STEP_S;
    float dt = b->frame_too_soon ? 0.0f : (float)step_s;
    b->space_moved = false; /* until screen_jump finds the space moved this frame */
    if (dt > B_MAX_GAP_S) {
        /* A long gap: start the filters over rather than smooth across it. */
        memset(b->filter_position, 0, sizeof b->filter_position);
        memset(b->filter_rotation, 0, sizeof b->filter_rotation);
        dt = 0.0f;
    }
    if (!b->frame_too_soon)
        frame = screen_jump(b, frame, (float)step_s, out_screened);
    b->started = true;
    b->time_s = frame->time_s;
    track_head_and_hands(b, frame, dt);
    struct b_trackers *T = &b->trackers;
    T->present = frame->tracker_present & EM_TRACKER_ALL;
    for (int t = 0; t < EM_TRACKER_COUNT; ++t)
        track_tracker(b, t, &frame->tracker[t], (T->present & EM_TRACKER_BIT(t)) != 0, dt);
    hands_from_elbows(b);
    *out_dt_s = dt;
    return frame;
}
