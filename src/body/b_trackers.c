/*
 * Body trackers (Vive trackers, Tundra, SlimeVR; PROTOCOL.md section 2b): any subset of
 * pelvis, chest, feet, knees and elbows, coming and going at run time.
 *
 * Each tracker gives the pose of its bone through its mount (the tracker's pose in the
 * bone's frame: bone = tracker * mount^-1), filtered like the headset and controllers.
 * What each one drives:
 *  - pelvis: the hips' position and rotation, and the body's heading (the feet step
 *    after it);
 *  - chest: the chest joint, an effector of weight CHEST_WEIGHT where the spine, the
 *    neck and the arms meet (a second solver with that effector, used while it counts);
 *  - feet: the ankle's position and the foot's full rotation; a tracked foot never
 *    steps;
 *  - knees and elbows: the bend plane of their limb (the pole is the joint itself). With
 *    the limb's two ends placed, a hinge has only that freedom left, so the pole pins the
 *    joint to the tracker's, up to bone lengths.
 * A tracker that is lost blends to the estimate without it over loss_blend_s, and back
 * when it returns, like the hands; a tracker seen on the body's first frame counts at
 * once, one that appears later blends in (the device stage, b_devices.c, tracks them).
 */
#include <stdlib.h>
#include <string.h>

#include "b_internal.h"
#include "embody/m_math.h"

/* The chest effector's pull where the spine, the neck and the arms meet (each of the
 * head and hands pulls 1 there): the tracker decides, the others bend around it. */
#define CHEST_WEIGHT 8.0f
/* Knee and elbow effectors' pull against the foot's or hand's chain below them (1). */
#ifndef LIMB_JOINT_WEIGHT
#define LIMB_JOINT_WEIGHT 4.0f
#endif
/* A calibrated mount further than this from its bone is a tracker on another bone. */
#define MOUNT_MAX_M 0.3f
/* The chest's share of the spine's bend without a chest tracker (estimate_chest).
 * Measured on ../shared/mocap-train, 6-point known body: 0.5, 0.75 and 1 gave MPJPE
 * 3.20, 3.04 and 2.96 cm. */
#define CHEST_BEND_SHARE 1.0f
/* How much a tracked foot's axis decides the knee's bend plane against b_leg_pole's
 * guess. Measured on ../shared/mocap-train, 6-point known body: 0, 0.5 and 1 gave MPJPE
 * 3.00, 2.65 and 2.40 cm, worst clip jitter 3.9, 3.0 and 2.0 times the truth's. */
#define FOOT_POLE_SHARE 1.0f
/* An IMU tracker's heading drifts (degrees a minute); the headset's does not. The pelvis
 * tracker's yaw away from the headset's is followed with this time constant and taken out,
 * so a drifting or turned pelvis tracker does not turn the body, while its quick turns (a
 * twist of the hips, faster than this) still come through. Measured with `embody eval
 * --fault-table` on the public clips (procedural, known body): see issue 28's report. */
#ifndef PELVIS_DRIFT_TAU_S
#define PELVIS_DRIFT_TAU_S 20.0f
#endif

/* PROTOCOL.md section 2b's mount positions, by enum em_tracker. */
static const float k_default_mount_m[EM_TRACKER_COUNT][3] = {
    {0.0f, 0.05f, -0.12f}, {0.0f, 0.0f, 0.10f},   {0.0f, -0.02f, 0.07f}, {0.0f, -0.02f, 0.07f},
    {0.0f, -0.10f, 0.06f}, {0.0f, -0.10f, 0.06f}, {0.0f, 0.0f, -0.05f},  {0.0f, 0.0f, -0.05f},
};


static int
tracker_joint(const struct body *b, int t)
{
    switch ((enum em_tracker)t) {
    case EM_TRACKER_PELVIS: return b->j.hips;
    case EM_TRACKER_CHEST: return b->j.chest;
    case EM_TRACKER_LEFT_FOOT: return b->j.foot[0];
    case EM_TRACKER_RIGHT_FOOT: return b->j.foot[1];
    case EM_TRACKER_LEFT_KNEE: return b->j.lower_leg[0];
    case EM_TRACKER_RIGHT_KNEE: return b->j.lower_leg[1];
    case EM_TRACKER_LEFT_ELBOW: return b->j.lower_arm[0];
    case EM_TRACKER_RIGHT_ELBOW: return b->j.lower_arm[1];
    case EM_TRACKER_COUNT: break;
    }
    return -1;
}

void
b_trackers_resolve_mounts(struct body_desc *desc)
{
    for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
        struct body_tracker_mount *m = &desc->tracker_mount[t];
        const bool zero = m->position_m[0] == 0.0f && m->position_m[1] == 0.0f &&
                          m->position_m[2] == 0.0f && m->rotation[0] == 0.0f &&
                          m->rotation[1] == 0.0f && m->rotation[2] == 0.0f &&
                          m->rotation[3] == 0.0f;
        if (zero) {
            m_vec3_copy(k_default_mount_m[t], m->position_m);
            m_quat_identity(m->rotation);
        } else if (!m_quat_is_finite(m->rotation) || m_quat_dot(m->rotation, m->rotation) < 0.25f) {
            m_quat_identity(m->rotation);
        }
        m_quat_normalize(m->rotation);
    }
}

/* ---- the chest solver ------------------------------------------------------------- */

enum em_result
b_trackers_setup(struct body *b, struct em_error *err)
{
    b_trackers_fini(b);
    struct ik_solver_desc d;
    ik_solver_get_desc(b->ik, &d);
    /* The legs are not in the solver (they are built after it, b_limbs.c): knee trackers
     * act through the knee poles only. */
    if (d.effector_count + 2 > IK_MAX_EFFECTORS)
        return EM_OK; /* no room: chest and elbow trackers give poles only */
    for (int e = 0; e < d.effector_count; ++e) {
        const int j = d.effector[e].joint;
        if (e != b->effector_back &&
            (j == b->j.chest || j == b->j.lower_arm[0] || j == b->j.lower_arm[1]))
            return EM_OK;
    }
    /* The back's chest effector becomes the chest tracker's here (set_targets leaves it
     * to b_trackers_set_targets while this solver is in use). */
    struct b_trackers *T = &b->trackers;
    T->effector_chest = b->effector_back;
    d.effector[T->effector_chest] =
        (struct ik_effector_desc){.joint = b->j.chest, .weight = CHEST_WEIGHT, .orientation = true};
    for (int s = 0; s < 2; ++s) {
        T->effector_elbow[s] = d.effector_count;
        d.effector[d.effector_count++] =
            (struct ik_effector_desc){.joint = b->j.lower_arm[s], .weight = LIMB_JOINT_WEIGHT};
    }
    const enum em_result r = ik_solver_create(&d, &T->spare_ik, err);
    return r == EM_OK ? b_torso_controls(b, T->spare_ik, err) : r;
}

void
b_trackers_fini(struct body *b)
{
    ik_solver_destroy(&b->trackers.spare_ik);
}

void
b_trackers_reset(struct body *b)
{
    struct b_trackers *T = &b->trackers;
    T->present = 0;
    T->pelvis_yaw_bias_rad = 0.0f;
    memset(T->filter_position, 0, sizeof T->filter_position);
    memset(T->filter_rotation, 0, sizeof T->filter_rotation);
    memset(T->track, 0, sizeof T->track);
    memset(T->weight, 0, sizeof T->weight);
    for (int t = 0; t < EM_TRACKER_COUNT; ++t)
        T->track[t].state = BODY_DEVICE_LOST;
}

/* ---- pelvis ------------------------------------------------------------------------ */

/* Takes the pelvis tracker's heading drift out of its bone pose: the yaw the tracker has
 * away from the headset's (b->head_yaw_rad, this frame's), followed with
 * PELVIS_DRIFT_TAU_S while it is tracked, turned back about +Y before the mount. */
static void
unwind_pelvis_drift(struct body *b, float dt_s)
{
    struct b_trackers *T = &b->trackers;
    const int t = EM_TRACKER_PELVIS;
    struct b_device_track *k = &T->track[t];
    if (k->state != BODY_DEVICE_LOST && dt_s > 0.0f) {
        const float yaw = b_yaw_of(k->last_rotation, b->head_yaw_rad);
        const float away = m_angle_wrap(yaw - b->head_yaw_rad - T->pelvis_yaw_bias_rad);
        T->pelvis_yaw_bias_rad = m_angle_wrap(T->pelvis_yaw_bias_rad +
                                              away * fminf(1.0f, dt_s / PELVIS_DRIFT_TAU_S));
    }
    float unwind[4], q[4];
    b_quat_from_yaw(-T->pelvis_yaw_bias_rad, unwind);
    m_quat_mul(unwind, k->last_rotation, q);
    const struct body_tracker_mount *m = &b->desc.tracker_mount[t];
    b_bone_from_device(k->last_position_m, q, m->position_m, m->rotation, T->bone_position_m[t],
                       T->bone_rotation[t]);
}

void
b_trackers_estimate_pelvis(struct body *b, float dt_s, struct b_pelvis_estimate *out)
{
    struct b_trackers *T = &b->trackers;
    const float w = T->weight[EM_TRACKER_PELVIS];
    memset(out, 0, sizeof *out);
    if (w <= 0.0f)
        return;
    unwind_pelvis_drift(b, dt_s);
    m_vec3_copy(T->bone_position_m[EM_TRACKER_PELVIS], out->position_m);
    m_quat_copy(T->bone_rotation[EM_TRACKER_PELVIS], out->rotation);
    out->heading_rad = b_yaw_of(out->rotation, b->heading_rad);
    out->position_confidence = out->yaw_confidence = out->tilt_confidence = w;
    out->heading_confidence = w;
}

/* The ankle a knee tracker implies: its tracker gives the shin's pose, the ankle hangs at
 * the end of the shin. */
static void
ankle_from_knee(const struct body *b, int side, float *out_m)
{
    const struct b_trackers *T = &b->trackers;
    const int t = EM_TRACKER_LEFT_KNEE + side;
    m_quat_rotate(T->bone_rotation[t], b->skeleton.offset_m[b->j.foot[side]], out_m);
    m_vec3_add(T->bone_position_m[t], out_m, out_m);
}

/* A foot held by a tracker that fully counts: the ankle where the foot tracker is, turned
 * as it is, or (no foot tracker) where a knee tracker's shin ends. */
static void
held_foot(const struct body *b, int side, struct b_held_foot *out)
{
    const int t = EM_TRACKER_LEFT_FOOT + side, knee = EM_TRACKER_LEFT_KNEE + side;
    const struct b_trackers *T = &b->trackers;
    memset(out, 0, sizeof *out);
    if (T->track[t].state == BODY_DEVICE_TRACKED && T->weight[t] >= 1.0f) {
        m_vec3_copy(T->bone_position_m[t], out->ankle_m);
        m_quat_copy(T->bone_rotation[t], out->rotation);
        out->held = out->turned = true;
    } else if (T->track[knee].state == BODY_DEVICE_TRACKED && T->weight[knee] >= 1.0f) {
        ankle_from_knee(b, side, out->ankle_m);
        out->held = true;
    }
}

/* The knee's plane a tracked foot says: the knee bends about the ankle's left-right axis
 * (an ankle flexes about that axis too), so the knee goes forward of the hip-ankle line,
 * square to the foot's +X. False when the leg lies along that axis. */
static bool
pole_from_foot(const struct body *b, int s, float *out_pole)
{
    const struct b_trackers *T = &b->trackers;
    const int t = EM_TRACKER_LEFT_FOOT + s;
    const float *hip = b->pose.position_m[b->j.upper_leg[s]];
    const float *foot = T->bone_position_m[t];
    float axis[3], down[3], ahead[3], mid[3];
    const float x[3] = {1, 0, 0};
    m_quat_rotate(T->bone_rotation[t], x, axis);
    m_vec3_sub(foot, hip, down);
    m_vec3_cross(down, axis, ahead);
    m_vec3_lerp(hip, foot, 0.5f, mid);
    if (m_vec3_normalize_or(ahead, ahead, ahead) <= 1e-4f)
        return false;
    m_vec3_muladd(mid, ahead, B_POLE_DISTANCE_M, out_pole);
    return true;
}

/* Foot s as its trackers say: the ankle where the foot tracker is, or (no foot tracker)
 * where a knee tracker's shin ends; the foot's turn from its tracker; the knee's plane
 * through a knee tracker, or from the foot tracker's axis. */
static void
foot_estimate(struct body *b, int s, struct b_feet_estimate *out)
{
    const struct b_trackers *T = &b->trackers;
    const int t = EM_TRACKER_LEFT_FOOT + s, knee = EM_TRACKER_LEFT_KNEE + s;
    const float wf = T->weight[t], wk = T->weight[knee] * (1.0f - wf);
    if (wf + wk > 0.0f) {
        float ankle[3];
        ankle_from_knee(b, s, ankle);
        m_vec3_lerp(ankle, T->bone_position_m[t], wf / (wf + wk), out->at.ankle_m[s]);
        out->ankle_confidence[s] = wf + wk;
    }
    if (wf > 0.0f) {
        m_quat_copy(T->bone_rotation[t], out->at.foot_rotation[s]);
        out->rotation_confidence[s] = wf;
    }
    float *pole = out->at.knee_pole_m[s];
    const float from_foot = wf > 0.0f && pole_from_foot(b, s, pole) ? FOOT_POLE_SHARE * wf : 0.0f;
    const float from_knee = T->weight[knee];
    if (from_knee > 0.0f && from_foot > 0.0f)
        b_blend_pole(b->pose.position_m[b->j.upper_leg[s]], out->at.ankle_m[s], pole,
                     T->bone_position_m[knee], from_knee, pole);
    else if (from_knee > 0.0f)
        m_vec3_copy(T->bone_position_m[knee], pole);
    out->knee_pole_confidence[s] = from_foot + from_knee - from_foot * from_knee;
}

void
b_trackers_estimate_feet(struct body *b, struct b_feet_estimate *out,
                         struct b_held_foot *out_held)
{
    memset(out, 0, sizeof *out);
    for (int s = 0; s < 2; ++s) {
        held_foot(b, s, &out_held[s]);
        foot_estimate(b, s, out);
    }
}

/* ---- targets ----------------------------------------------------------------------- */

/* Without a chest tracker but with the hips known (a pelvis tracker), the chest from the
 * hips and the neck below the head: the spine bends evenly between them, so the chest
 * takes CHEST_BEND_SHARE of the turn from the hips' rest spine to the hips-neck line and
 * sits along the spine turned by half as much. Left to the solver alone, the chest goes
 * wherever the arms pull it and the shoulders flip from frame to frame. */
static void
estimate_chest(const struct body *b, float *out_position, float *out_rotation)
{
    const float(*rest)[3] = (const float(*)[3])b->skeleton.rest_position_m;
    float yaw_rot[4], mid[4], off[3], neck[3], v_rest[3], v_now[3], bend[4], full[4], half[4];
    b_quat_from_yaw(b->heading_rad, yaw_rot);
    m_quat_slerp(yaw_rot, b->head_rotation, 0.5f, mid);
    m_quat_rotate(mid, b->m.head_from_neck_m, off);
    m_vec3_sub(b->head_position_m, off, neck);
    m_vec3_sub(rest[b->j.neck], rest[b->j.hips], v_rest);
    m_quat_rotate(b->hips_rotation, v_rest, v_rest);
    m_vec3_sub(neck, b->hips_position_m, v_now);
    const float up[3] = {0, 1, 0};
    m_vec3_normalize_or(v_rest, up, v_rest);
    m_vec3_normalize_or(v_now, v_rest, v_now);
    m_quat_from_to(v_rest, v_now, bend);
    m_quat_mul(bend, b->hips_rotation, full);
    m_quat_slerp(b->hips_rotation, full, CHEST_BEND_SHARE, out_rotation);
    m_quat_normalize(out_rotation);
    m_quat_slerp(b->hips_rotation, full, 0.5f * CHEST_BEND_SHARE, half);
    m_vec3_sub(rest[b->j.chest], rest[b->j.hips], off);
    m_quat_rotate(half, off, off);
    m_vec3_add(b->hips_position_m, off, out_position);
}

static void
set_arm_targets(struct body *b, int s)
{
    const struct b_trackers *T = &b->trackers;
    const int t = EM_TRACKER_LEFT_ELBOW + s;
    const float w = T->weight[t];
    if (w <= 0.0f && !T->full_solver_in_use)
        return;
    float pole[3];
    const float *shoulder = b->pose.position_m[b->j.upper_arm[s]];
    m_vec3_copy(b->elbow_pole_m[s], pole);
    if (w > 0.0f) {
        b_blend_pole(shoulder, b->hand_position_m[s], pole, T->bone_position_m[t], w, pole);
        ik_solver_set_pole(b->ik, b->j.lower_arm[s], pole);
        m_vec3_copy(pole, b->elbow_pole_m[s]);
    }
    if (T->full_solver_in_use) {
        /* The elbow: its tracker, or (not worn) the two-bone answer toward the pole. */
        float mid[3], bend[3], elbow[3], end[3];
        m_vec3_lerp(shoulder, b->hand_position_m[s], 0.5f, mid);
        m_vec3_sub(pole, mid, bend);
        ik_two_bone_positions(shoulder, b->m.upper_arm_m, b->m.lower_arm_m, b->hand_position_m[s],
                              bend, elbow, end);
        m_vec3_lerp(elbow, T->bone_position_m[t], w, elbow);
        ik_solver_set_target(b->ik, T->effector_elbow[s], elbow, NULL);
    }
}

void
b_trackers_set_targets(struct body *b)
{
    const struct b_trackers *T = &b->trackers;
    if (T->full_solver_in_use) {
        float chest[3], chest_rot[4];
        const float w = T->weight[EM_TRACKER_CHEST];
        estimate_chest(b, chest, chest_rot);
        /* the back's bend (b_fuse.c, fuse_back), as in the body's own solver: with a
         * pelvis tracker, folds of people left out (4 points, known body) 4.99 / 9.87 /
         * 10.14 -> 4.92 / 9.81 / 10.06 cm */
        m_vec3_lerp(chest, b->back_target_m, b->back_weight, chest);
        m_vec3_lerp(chest, T->bone_position_m[EM_TRACKER_CHEST], w, chest);
        m_quat_slerp(chest_rot, T->bone_rotation[EM_TRACKER_CHEST], w, chest_rot);
        m_quat_normalize(chest_rot);
        ik_solver_set_target(b->ik, T->effector_chest, chest, chest_rot);
    }
    for (int s = 0; s < 2; ++s)
        set_arm_targets(b, s);
}

/* ---- status and calibration ----------------------------------------------------- */

void
body_get_trackers(const struct body *b, struct body_tracker_status *out)
{
    const struct b_trackers *T = &b->trackers;
    for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
        struct body_tracker_status *o = &out[t];
        memset(o, 0, sizeof *o);
        o->present = (T->present & EM_TRACKER_BIT(t)) != 0;
        o->state = T->track[t].state;
        o->weight = T->weight[t];
        m_vec3_copy(T->track[t].last_position_m, o->position_m);
        m_quat_copy(T->track[t].last_rotation, o->rotation);
        if (!T->track[t].seen)
            m_quat_identity(o->rotation);
        m_vec3_copy(T->bone_position_m[t], o->bone_m);
    }
}

/* The same hygiene as the headset's and controllers' samples (b_device_sample_ok): a
 * tracker sample 5 km away or with a quaternion far from unit is a loss, not a pose. */
static bool
pose_ok(const struct em_device_pose *d)
{
    return b_device_sample_ok(d);
}

/* The avatar standing straight under the headset: the rest pose turned to the head's
 * facing and moved so the head joint is where the headset says; arms reach for tracked
 * controllers (two-bone, the elbows toward their trackers when worn). */
static void
standing_pose(const struct body *b, const struct em_tracking_frame *frame, struct sk_pose *pose)
{
    const struct body_device_offsets *o = &b->desc.offsets;
    const struct em_device_pose *head = &frame->device[EM_DEVICE_HEAD];
    float head_p[3], head_q[4], off[3];
    m_quat_mul(head->pose.orientation,
               (const float[4]){-o->head_rotation[0], -o->head_rotation[1], -o->head_rotation[2],
                                o->head_rotation[3]},
               head_q);
    m_quat_normalize(head_q);
    m_quat_rotate(head_q, o->head_position_m, off);
    m_vec3_sub(head->pose.position_m, off, head_p);
    sk_pose_set_rest(pose, &b->skeleton);
    const int root = 0; /* parents come first: joint 0 is the root */
    b_quat_from_yaw(b_yaw_of(head_q, 0.0f), pose->local_rotation[root]);
    sk_pose_forward_kinematics(pose, &b->skeleton);
    float shift[3];
    m_vec3_sub(head_p, pose->position_m[b->j.head], shift);
    m_vec3_add(pose->position_m[root], shift, pose->position_m[root]);
    sk_pose_forward_kinematics(pose, &b->skeleton);
    for (int s = 0; s < 2; ++s) {
        const struct em_device_pose *grip = &frame->device[EM_DEVICE_LEFT_HAND + s];
        if (!pose_ok(grip))
            continue;
        /* The wrist from the grip, as b_devices.c takes it (grip offset in the hand's frame). */
        float hand_q[4], grip_off[3], hand_p[3];
        const float *gr = o->grip_rotation[s];
        m_quat_mul(grip->pose.orientation, (const float[4]){-gr[0], -gr[1], -gr[2], gr[3]}, hand_q);
        m_quat_normalize(hand_q);
        const int end = b->j.hand_end[s];
        if (end >= 0)
            m_vec3_scale(b->skeleton.offset_m[end], o->grip_palm_fraction, grip_off);
        else
            m_vec3_set(grip_off, 0, 0, 0);
        m_vec3_add(grip_off, o->grip_offset_m[s], grip_off);
        m_quat_rotate(hand_q, grip_off, grip_off);
        m_vec3_sub(grip->pose.position_m, grip_off, hand_p);
        const struct em_device_pose *elbow = &frame->tracker[EM_TRACKER_LEFT_ELBOW + s];
        const bool elbow_ok =
            (frame->tracker_present & EM_TRACKER_BIT(EM_TRACKER_LEFT_ELBOW + s)) && pose_ok(elbow);
        ik_two_bone_solve(&b->skeleton, pose, b->j.hand[s], hand_p,
                          elbow_ok ? elbow->pose.position_m : NULL, hand_q);
    }
}

enum em_result
body_calibrate_trackers(struct body *b, const struct em_tracking_frame *frame,
                        uint32_t *out_calibrated, struct em_error *err)
{
    if (out_calibrated)
        *out_calibrated = 0;
    if (!pose_ok(&frame->device[EM_DEVICE_HEAD]))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "calibrate trackers: the headset is not tracked; stand straight and try "
                       "again");
    struct sk_pose pose;
    if (sk_pose_init(&pose, &b->skeleton) != EM_OK)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "calibrate trackers: out of memory");
    standing_pose(b, frame, &pose);
    uint32_t done = 0;
    for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
        const struct em_device_pose *d = &frame->tracker[t];
        if (!(frame->tracker_present & EM_TRACKER_BIT(t)) || !pose_ok(d))
            continue;
        const int j = tracker_joint(b, t);
        float q[4], rel[3], mount_p[3], mount_q[4];
        m_quat_copy(d->pose.orientation, q);
        m_quat_normalize(q);
        m_vec3_sub(d->pose.position_m, pose.position_m[j], rel);
        m_quat_rotate_inv(pose.rotation[j], rel, mount_p);
        if (m_vec3_length(mount_p) > MOUNT_MAX_M)
            continue;
        m_quat_mul_conj_first(pose.rotation[j], q, mount_q);
        m_quat_normalize(mount_q);
        m_vec3_copy(mount_p, b->desc.tracker_mount[t].position_m);
        m_quat_copy(mount_q, b->desc.tracker_mount[t].rotation);
        done |= EM_TRACKER_BIT(t);
    }
    sk_pose_fini(&pose);
    if (out_calibrated)
        *out_calibrated = done;
    return EM_OK;
}
