/*
 * Hand tracking to the hand model (include/embody/hand.h): XR_EXT_hand_tracking's 26
 * joints, checked one by one, become the model's finger angles.
 *
 * Angles come from the bones' directions only, in a hand frame rebuilt from the wrist and
 * knuckle positions, so neither the player's hand size nor the runtime's idea of the
 * joints' orientations changes them. Each finger is measured against its own metacarpal
 * as tracked (the thumb against the hand frame): a finger's first angle is the turn from
 * that reference to its first bone, split into flexion (towards the palm) and abduction
 * (sideways), and each further flexion is the next bone's turn in the frame of the one
 * before, as the model's forward kinematics composes them.
 */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "embody/m_math.h"
#include "embody/tracking.h"
#include "hand/hd_internal.h"

static const char *const xr_joint_names[HD_XR_JOINT_COUNT] = {
    "palm",
    "wrist",
    "thumb_metacarpal",
    "thumb_proximal",
    "thumb_distal",
    "thumb_tip",
    "index_metacarpal",
    "index_proximal",
    "index_intermediate",
    "index_distal",
    "index_tip",
    "middle_metacarpal",
    "middle_proximal",
    "middle_intermediate",
    "middle_distal",
    "middle_tip",
    "ring_metacarpal",
    "ring_proximal",
    "ring_intermediate",
    "ring_distal",
    "ring_tip",
    "little_metacarpal",
    "little_proximal",
    "little_intermediate",
    "little_distal",
    "little_tip",
};

static const char *const fault_names[HD_JOINT_FAULT_COUNT] = {
    "ok",
    "not tracked",
    "not finite",
    "too far from the wrist",
    "radius out of range",
    "orientation not a unit quaternion",
    "on top of the joint before it",
};

/* How far |q| of a joint flagged with a valid orientation may be from 1. */
#define UNIT_QUAT_TOLERANCE 1e-2f

const char *
hd_xr_joint_name(int joint)
{
    assert(joint >= 0 && joint < HD_XR_JOINT_COUNT);
    return xr_joint_names[joint];
}

const char *
hd_joint_fault_name(enum hd_joint_fault fault)
{
    return fault >= 0 && fault < HD_JOINT_FAULT_COUNT ? fault_names[fault] : "unknown";
}

void
hd_xr_finger_joints(int finger, int *out_first, int *out_count)
{
    *out_first =
        finger == HD_THUMB ? HD_XR_THUMB_METACARPAL : HD_XR_INDEX_METACARPAL + 5 * (finger - 1);
    *out_count = finger == HD_THUMB ? 4 : 5;
}

int
hd_xr_previous_joint(int joint)
{
    if (joint <= HD_XR_WRIST)
        return -1;
    if (joint == HD_XR_THUMB_METACARPAL ||
        (joint >= HD_XR_INDEX_METACARPAL && (joint - HD_XR_INDEX_METACARPAL) % 5 == 0))
        return HD_XR_WRIST;
    return joint - 1;
}

void
hd_tracking_state_init(struct hd_tracking_state *out_state)
{
    memset(out_state, 0, sizeof *out_state);
}

static bool
finite3(const float *v)
{
    return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

/* The joint's own values, without the wrist. */
static enum hd_joint_fault
check_alone(const struct hd_xr_hand *hand, int joint)
{
    const struct hd_xr_joint_location *j = &hand->joint[joint];
    if (!hand->active || !(j->flags & EM_POSE_POSITION_VALID))
        return HD_JOINT_NOT_TRACKED;
    const bool orientation_valid = (j->flags & EM_POSE_ORIENTATION_VALID) != 0;
    if (!finite3(j->position_m) || !isfinite(j->radius_m) ||
        (orientation_valid && !m_quat_is_finite(j->orientation)))
        return HD_JOINT_NOT_FINITE;
    if (!(j->radius_m > 0.0f) || j->radius_m > HD_MAX_JOINT_RADIUS_M)
        return HD_JOINT_BAD_RADIUS;
    if (orientation_valid) {
        const float n = sqrtf(m_quat_dot(j->orientation, j->orientation));
        if (fabsf(n - 1.0f) > UNIT_QUAT_TOLERANCE)
            return HD_JOINT_BAD_ROTATION;
    }
    return HD_JOINT_OK;
}

enum hd_joint_fault
hd_check_joint(const struct hd_xr_hand *hand, int joint)
{
    const enum hd_joint_fault own = check_alone(hand, joint);
    if (own != HD_JOINT_OK || joint == HD_XR_WRIST || check_alone(hand, HD_XR_WRIST) != HD_JOINT_OK)
        return own;
    const float *w = hand->joint[HD_XR_WRIST].position_m;
    const float *p = hand->joint[joint].position_m;
    if (m_vec3_distance(p, w) > HD_MAX_JOINT_DISTANCE_M)
        return HD_JOINT_TOO_FAR;
    const int before = hd_xr_previous_joint(joint);
    if (before >= 0 && check_alone(hand, before) == HD_JOINT_OK &&
        m_vec3_distance(p, hand->joint[before].position_m) < HD_MIN_BONE_M)
        return HD_JOINT_COINCIDENT;
    return HD_JOINT_OK;
}

bool
hd_hand_frame(enum hd_hand hand, const float *wrist, const float *index_knuckle,
              const float *middle_knuckle, const float *little_knuckle, float *out_x, float *out_y,
              float *out_z)
{
    float across[3];
    m_vec3_sub(wrist, middle_knuckle, out_z);
    const float zl = m_vec3_length(out_z);
    m_vec3_sub(index_knuckle, little_knuckle, across);
    m_vec3_scale(across, hd_thumb_side_sign(hand), across);
    if (zl < HD_MIN_BONE_M)
        return false;
    m_vec3_scale(out_z, 1.0f / zl, out_z);
    m_vec3_muladd(across, out_z, -m_vec3_dot(across, out_z), out_x);
    const float xl = m_vec3_length(out_x);
    if (xl < HD_MIN_BONE_M)
        return false;
    m_vec3_scale(out_x, 1.0f / xl, out_x);
    m_vec3_cross(out_z, out_x, out_y);
    return true;
}

/* The tracked hand's frame, with its origin at the wrist. */
struct frame {
    float origin[3];
    float axis[3][3]; /* x, y, z */
};

static bool
frame_of(enum hd_hand which, const struct hd_xr_hand *hand, struct frame *out)
{
    const struct hd_xr_joint_location *j = hand->joint;
    m_vec3_copy(j[HD_XR_WRIST].position_m, out->origin);
    return hd_hand_frame(which, j[HD_XR_WRIST].position_m, j[HD_XR_INDEX_PROXIMAL].position_m,
                         j[HD_XR_MIDDLE_PROXIMAL].position_m, j[HD_XR_LITTLE_PROXIMAL].position_m,
                         out->axis[0], out->axis[1], out->axis[2]);
}

static void
to_hand(const struct frame *fr, const float *p, float *out)
{
    float d[3];
    m_vec3_sub(p, fr->origin, d);
    for (int i = 0; i < 3; ++i)
        out[i] = m_vec3_dot(d, fr->axis[i]);
}

/* The unit direction from tracked joint a to b, in the hand frame. */
static void
bone_direction(const struct frame *fr, const struct hd_xr_hand *hand, int a, int b, float *out)
{
    float pa[3], pb[3];
    to_hand(fr, hand->joint[a].position_m, pa);
    to_hand(fr, hand->joint[b].position_m, pb);
    m_vec3_sub(pb, pa, out);
    static const float fallback[3] = {0.0f, 0.0f, -1.0f};
    m_vec3_normalize_or(out, fallback, out);
}

/* The angle of `v` from `d` towards `p` (both unit, perpendicular). */
static float
angle_towards(const float *v, const float *d, const float *p)
{
    return atan2f(m_vec3_dot(v, p), m_vec3_dot(v, d));
}

/* A finger's abduction, from two readings weighted by how well each is seen: the first
 * bone's heading in the palm (exact for a straight finger, lost as it turns to 90 degrees:
 * its weight is cos^2 of the flexion), and the plane the bent finger moves in, whose
 * normal is the abducted flexion axis (seen as well as the bones bend: its weight is the
 * squared sum of the bends' sines). A fist's abduction comes from its plane, an open
 * hand's from its first bones. */
static float
measure_abduction(const float (*u)[3], const float *d, const float *s, const float *flex_axis)
{
    const float ud = m_vec3_dot(u[0], d), us = m_vec3_dot(u[0], s);
    const float heading_weight = ud * ud + us * us;
    const float by_heading = atan2f(us, ud);
    /* n = k (s cos(abduct) - d sin(abduct)) (a_s = +-1, the flexion axis's side), with
     * k the bends' sines, negative when the finger bends backwards. */
    float n[3], c[3];
    m_vec3_cross(u[0], u[1], n);
    m_vec3_cross(u[1], u[2], c);
    m_vec3_add(n, c, n);
    const float a_s = m_vec3_dot(flex_axis, s) >= 0.0f ? 1.0f : -1.0f;
    float k_cos = a_s * m_vec3_dot(n, s), k_sin = -a_s * m_vec3_dot(n, d);
    if (k_cos < 0.0f) { /* abduction is within +-90 degrees: cos > 0 gives k's sign */
        k_cos = -k_cos;
        k_sin = -k_sin;
    }
    const float plane_weight = k_cos * k_cos + k_sin * k_sin;
    const float by_plane = atan2f(k_sin, k_cos);
    const float total = heading_weight + plane_weight;
    return total > M_TINY ? (heading_weight * by_heading + plane_weight * by_plane) / total
                          : by_heading;
}

/* One finger's angles from its tracked joints. */
static void
measure_finger(const struct hd_model *model, const struct frame *fr, const struct hd_xr_hand *hand,
               int f, struct hd_pose *out)
{
    int first, count;
    hd_xr_finger_joints(f, &first, &count);
    /* The finger's rest frame, turned onto its tracked metacarpal (the thumb's is the
     * model's: its metacarpal is the first bone measured). */
    float turn[4];
    m_quat_identity(turn);
    if (f != HD_THUMB) {
        float tracked[3];
        bone_direction(fr, hand, first, first + 1, tracked);
        m_quat_from_to(model->direction[f], tracked, turn);
        first += 1; /* the first joint measured is the knuckle */
    }
    float d[3], p[3], s[3], flex_axis[3], abduct_axis[3];
    m_quat_rotate(turn, model->direction[f], d);
    m_quat_rotate(turn, model->palmar[f], p);
    m_quat_rotate(turn, model->side[f], s);
    m_vec3_cross(d, p, flex_axis);
    m_vec3_cross(d, s, abduct_axis);

    float u[HD_FINGER_JOINTS][3];
    for (int j = 0; j < HD_FINGER_JOINTS; ++j)
        bone_direction(fr, hand, first + j, first + j + 1, u[j]);
    const float abduct = measure_abduction((const float(*)[3])u, d, s, flex_axis);
    /* u0 = cos(flex) h + sin(flex) p, h the abducted rest direction. */
    float h[3];
    m_vec3_scale(d, cosf(abduct), h);
    m_vec3_muladd(h, s, sinf(abduct), h);
    const float flex0 = atan2f(m_vec3_dot(u[0], p), m_vec3_dot(u[0], h));
    out->flex_rad[f][0] = flex0;
    out->abduct_rad[f] = abduct;
    float world[4], qa[4], qf[4];
    m_quat_from_axis_angle(abduct_axis, abduct, qa);
    m_quat_from_axis_angle(flex_axis, flex0, qf);
    m_quat_mul(qa, qf, world);
    for (int j = 1; j < HD_FINGER_JOINTS; ++j) {
        float v[3];
        m_quat_rotate_inv(world, u[j], v); /* the bone in its parent's rest axes */
        const float flex = angle_towards(v, d, p);
        out->flex_rad[f][j] = flex;
        float step[4], next[4];
        m_quat_from_axis_angle(flex_axis, flex, step);
        m_quat_mul(world, step, next);
        m_quat_copy(next, world);
    }
}

static void
report_faults(const struct hd_xr_hand *hand, struct hd_tracking_report *r)
{
    r->refused_count = 0;
    for (int j = 0; j < HD_XR_JOINT_COUNT; ++j) {
        r->fault[j] = (uint8_t)hd_check_joint(hand, j);
        r->refused_count += r->fault[j] != HD_JOINT_OK;
    }
}

void
hd_pose_from_tracking(const struct hd_model *model, const struct hd_xr_hand *hand,
                      struct hd_tracking_state *state, struct hd_pose *out_pose,
                      struct hd_tracking_report *out_report)
{
    struct hd_tracking_report local_report;
    struct hd_tracking_report *r = out_report ? out_report : &local_report;
    report_faults(hand, r);
    r->fallback_mask = 0;

    static const int frame_joints[] = {HD_XR_WRIST, HD_XR_INDEX_PROXIMAL, HD_XR_MIDDLE_PROXIMAL,
                                       HD_XR_LITTLE_PROXIMAL};
    bool frame_good = true;
    for (size_t i = 0; i < sizeof frame_joints / sizeof frame_joints[0]; ++i)
        frame_good = frame_good && r->fault[frame_joints[i]] == HD_JOINT_OK;
    struct frame fr;
    frame_good = frame_good && frame_of(model->hand, hand, &fr);

    struct hd_pose relaxed, measured;
    bool have_relaxed = false; /* made only when a finger needs it */
    bool good[HD_FINGER_COUNT];
    for (int f = 0; f < HD_FINGER_COUNT; ++f) {
        int first, count;
        hd_xr_finger_joints(f, &first, &count);
        good[f] = frame_good;
        for (int k = 0; k < count; ++k)
            good[f] = good[f] && r->fault[first + k] == HD_JOINT_OK;
        if (good[f]) {
            measure_finger(model, &fr, hand, f, &measured);
        } else {
            if (!state->has_last_good[f] && !have_relaxed) {
                hd_pose_relaxed(model, &relaxed);
                have_relaxed = true;
            }
            const struct hd_pose *keep = state->has_last_good[f] ? &state->last_good : &relaxed;
            memcpy(measured.flex_rad[f], keep->flex_rad[f], sizeof measured.flex_rad[f]);
            measured.abduct_rad[f] = keep->abduct_rad[f];
            r->fallback_mask |= 1u << f;
        }
    }
    hd_pose_constrain(model, &measured);
    for (int f = 0; f < HD_FINGER_COUNT; ++f) {
        if (!good[f])
            continue;
        memcpy(state->last_good.flex_rad[f], measured.flex_rad[f], sizeof measured.flex_rad[f]);
        state->last_good.abduct_rad[f] = measured.abduct_rad[f];
        state->has_last_good[f] = true;
    }
    *out_pose = measured;
}

/* ---- Sizing to a tracked hand, and the model as tracked joints ----------------------- */

enum em_result
hd_model_fit(struct hd_model *model, const struct hd_xr_hand *hand, struct em_error *err)
{
    for (int j = 0; j < HD_XR_JOINT_COUNT; ++j) {
        const enum hd_joint_fault fault = hd_check_joint(hand, j);
        if (fault != HD_JOINT_OK)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "hand model: tracked joint %s is %s; cannot size the hand from it",
                           hd_xr_joint_name(j), hd_joint_fault_name(fault));
    }
    struct frame fr;
    if (!frame_of(model->hand, hand, &fr))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "hand model: the wrist and knuckles are on one line; cannot size the "
                       "hand from them");
    struct hd_model m = *model;
    for (int f = 0; f < HD_FINGER_COUNT; ++f) {
        int first, count;
        hd_xr_finger_joints(f, &first, &count);
        const int base = f == HD_THUMB ? first : first + 1;
        to_hand(&fr, hand->joint[first].position_m, m.metacarpal_m[f]);
        to_hand(&fr, hand->joint[base].position_m, m.base_m[f]);
        for (int j = 0; j < HD_FINGER_JOINTS; ++j)
            m.bone_m[f][j] = m_vec3_distance(hand->joint[base + j].position_m,
                                             hand->joint[base + j + 1].position_m);
        for (int j = 0; j <= HD_FINGER_JOINTS; ++j)
            m.radius_m[f][j] = hand->joint[base + j].radius_m;
        if (f == HD_THUMB)
            continue;
        /* The knuckle seen from the metacarpal is the finger's rest direction, which its
         * angles are measured from; it must point mostly forward (-Z) in the hand frame.
         * Its knuckle flexes up to flex_max (90 degrees) from it: a rest direction tilted
         * half of that (45 degrees) or more from forward would leave the relaxed finger
         * half-way to its limit against the palm and the fully flexed one pointing back at
         * the wrist, so it is no hand's (the default hand's widest, the little finger's, is
         * 18 degrees). Within it the frame's palmar and side vectors keep at least
         * cos 45 = 0.71 of their length before normalising; along the palm's normal or
         * straight sideways they would be zero. */
        float d[3];
        m_vec3_sub(m.base_m[f], m.metacarpal_m[f], d);
        const float max_tilt = 0.5f * m.flex_max_rad[f][0];
        const float len = m_vec3_length(d);
        if (!(-d[2] > len * cosf(max_tilt)))
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "hand model: the tracked %s finger's knuckle (%s) is %.1f degrees "
                           "from the hand's forward axis, seen from its metacarpal (%s); "
                           "expected within %.1f; cannot size the hand from it",
                           hd_finger_name((enum hd_finger)f), hd_xr_joint_name(base),
                           len > 0.0f ? (double)(acosf(m_clampf(-d[2] / len, -1.0f, 1.0f)) *
                                                 M_RAD_TO_DEG)
                                      : 0.0,
                           hd_xr_joint_name(first), (double)(max_tilt * M_RAD_TO_DEG));
        m_vec3_copy(d, m.direction[f]);
        if (!hd_finger_frame_from_direction(&m, f))
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "hand model: the tracked %s finger's rest direction gives no "
                           "frame; cannot size the hand from it",
                           hd_finger_name((enum hd_finger)f));
    }
    const float length = -m.base_m[HD_MIDDLE][2] + m.bone_m[HD_MIDDLE][0] + m.bone_m[HD_MIDDLE][1] +
                         m.bone_m[HD_MIDDLE][2];
    if (!(length >= HD_MIN_HAND_LENGTH_M && length <= HD_MAX_HAND_LENGTH_M))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "hand model: the tracked hand is %.3f m from the wrist to the middle "
                       "fingertip; expected %g to %g m",
                       (double)length, (double)HD_MIN_HAND_LENGTH_M, (double)HD_MAX_HAND_LENGTH_M);
    m.palm_half_thickness_m = model->palm_half_thickness_m * length / model->hand_length_m;
    m.hand_length_m = length;
    *model = m;
    return EM_OK;
}

static void
set_joint(struct hd_xr_joint_location *j, const float *position_m, const float *wrist_m,
          const float *wrist_q, const float *local_q, float radius_m)
{
    float p[3];
    m_quat_rotate(wrist_q, position_m, p);
    m_vec3_add(wrist_m, p, j->position_m);
    m_quat_mul(wrist_q, local_q, j->orientation);
    j->radius_m = radius_m;
    j->flags = EM_POSE_ALL_VALID;
}

void
hd_pose_to_tracking(const struct hd_model *model, const struct hd_pose *pose,
                    const float *wrist_position_m, const float *wrist_orientation,
                    struct hd_xr_hand *out_hand)
{
    memset(out_hand, 0, sizeof *out_hand);
    out_hand->active = true;
    float identity[4], origin[3] = {0.0f, 0.0f, 0.0f}, palm[3];
    m_quat_identity(identity);
    const float k = model->hand_length_m / HD_DEFAULT_HAND_LENGTH_M;
    set_joint(&out_hand->joint[HD_XR_WRIST], origin, wrist_position_m, wrist_orientation, identity,
              0.02f * k);
    m_vec3_lerp(model->metacarpal_m[HD_MIDDLE], model->base_m[HD_MIDDLE], 0.5f, palm);
    set_joint(&out_hand->joint[HD_XR_PALM], palm, wrist_position_m, wrist_orientation, identity,
              0.02f * k);
    for (int f = 0; f < HD_FINGER_COUNT; ++f) {
        float pts[HD_FINGER_JOINTS + 1][3], world[HD_FINGER_JOINTS][4];
        hd_finger_fk(model, pose, f, pts, world);
        int first, count;
        hd_xr_finger_joints(f, &first, &count);
        int j = first;
        if (f != HD_THUMB)
            set_joint(&out_hand->joint[j++], model->metacarpal_m[f], wrist_position_m,
                      wrist_orientation, identity, model->radius_m[f][0]);
        for (int k2 = 0; k2 <= HD_FINGER_JOINTS; ++k2)
            set_joint(&out_hand->joint[j++], pts[k2], wrist_position_m, wrist_orientation,
                      world[k2 < HD_FINGER_JOINTS ? k2 : HD_FINGER_JOINTS - 1],
                      model->radius_m[f][k2]);
    }
}
