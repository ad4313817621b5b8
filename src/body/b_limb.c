/*
 * The limb builder the arms (b_arms.c) and the legs (b_limbs.c) share: a two-bone limb
 * (upper joint, middle hinge, end joint) built in closed form toward its end's target
 * (b_limb_build), and the poles that point a limb's middle joint (a knee's over its foot),
 * which the sources use too. A helper under the limbs' stage: it calls no other file of
 * the body, so the arms and the legs both build on it without calling each other back.
 */
#include "b_internal.h"
#include "embody/m_math.h"

/* How far out to the side of straight ahead a knee's pole sits (the body's left is +X). */
#define KNEE_OUTWARD_M 0.12f

/* ---- the two-bone limb ------------------------------------------------------------ */

/* The rotation taking the frame of (unit `from_dir`, `from_side`) to that of (unit
 * `to_dir`, `to_side`): the directions exactly, the sides as nearly as the directions
 * allow (their parts square to the directions). */
static void
rotation_between_frames(const float *from_dir, const float *from_side, const float *to_dir,
                        const float *to_side, float *out_q)
{
    float e2[3], e3[3], f2[3], f3[3], qe[4], qf[4];
    m_vec3_muladd(from_side, from_dir, -m_vec3_dot(from_side, from_dir), e2);
    m_vec3_normalize_or(e2, from_side, e2);
    m_vec3_cross(from_dir, e2, e3);
    m_vec3_muladd(to_side, to_dir, -m_vec3_dot(to_side, to_dir), f2);
    m_vec3_normalize_or(f2, to_side, f2);
    m_vec3_cross(to_dir, f2, f3);
    m_quat_from_columns(from_dir, e2, e3, qe);
    m_quat_from_columns(to_dir, f2, f3, qf);
    float qe_inv[4];
    m_quat_conjugate(qe, qe_inv);
    m_quat_mul(qf, qe_inv, out_q);
    m_quat_normalize(out_q);
}

float
b_limb_angle_about(const float *axis, const float *a, const float *b)
{
    float pa[3], pb[3], c[3];
    m_vec3_muladd(a, axis, -m_vec3_dot(a, axis), pa);
    m_vec3_muladd(b, axis, -m_vec3_dot(b, axis), pb);
    m_vec3_cross(pa, pb, c);
    return atan2f(m_vec3_dot(c, axis), m_vec3_dot(pa, pb));
}

static void
unit_offset(const struct sk_skeleton *sk, int joint, float *out)
{
    const float down[3] = {0, -1, 0};
    m_vec3_normalize_or(sk->offset_m[joint], down, out);
}

/* Keeps the twist of `local` about the unit bone direction `bone` within a ball limit's
 * twist range (its swing is left alone, so the limb still points where it must); returns
 * whether it changed. The middle joint then bends in the plane the clamped twist gives,
 * so the end may fall short of a target that would need more twist. */
static bool
clamp_twist(const struct sk_limit *limit, const float *bone, float *local)
{
    if (limit->kind != SK_LIMIT_BALL)
        return false;
    float swing[4], twist[4];
    const float angle = m_quat_swing_twist(local, bone, swing, twist);
    const float clamped = m_clampf(angle, limit->min_rad, limit->max_rad);
    if (clamped == angle)
        return false;
    m_quat_from_axis_angle(bone, clamped, twist);
    m_quat_mul(swing, twist, local);
    m_quat_normalize(local);
    return true;
}

/* What b_limb_build's upper joint leaves for the middle and end joints. */
struct limb_upper {
    float rotation[4]; /* the upper joint's, in the world */
    float v[3];        /* the lower bone's direction, world */
    float rest_axis[3];
};

/* The upper joint of the limb b_limb_build builds: its local rotation set, the rest in
 * `out` for limb_lower. `known_mid_m` and `known_end_m`, when given, are the two-bone
 * positions for this target and side, already found by the caller. */
static void
limb_upper(struct body *b, int upper, const float *end_target, const float *side,
           bool keep_twist_limit, const float *known_mid_m, const float *known_end_m,
           struct limb_upper *out)
{
    const struct sk_skeleton *sk = &b->skeleton;
    struct sk_pose *pose = &b->pose;
    const int mid = sk->primary_child[upper], end = sk->primary_child[mid];
    const float *upper_m = pose->position_m[upper];
    const float *parent_rot = pose->rotation[sk->parent[upper]];
    /* The exact two-bone positions on the given side of the line to the target. */
    float line[3], mid_m[3], end_m[3];
    m_vec3_sub(end_target, upper_m, line);
    m_vec3_normalize_or(line, side, line);
    if (known_mid_m && known_end_m) {
        m_vec3_copy(known_mid_m, mid_m);
        m_vec3_copy(known_end_m, end_m);
    } else {
        ik_two_bone_positions(upper_m, sk->length_m[mid], sk->length_m[end], end_target, side,
                              mid_m, end_m);
    }
    /* The hinge axis in the world: square to the limb's plane, on the side that bends the
     * middle joint out by a positive angle (rotating the upper bone's direction u by a
     * positive angle about axis a gives v with u x v along +a). */
    float axis_w[3], u[3];
    m_vec3_cross(side, line, axis_w);
    const struct sk_limit *hinge = &sk->limit[mid];
    if (hinge->kind == SK_LIMIT_HINGE && hinge->max_rad + hinge->min_rad < 0.0f)
        m_vec3_scale(axis_w, -1.0f, axis_w);
    m_vec3_sub(mid_m, upper_m, u);
    m_vec3_normalize_or(u, line, u);
    m_vec3_sub(end_m, mid_m, out->v);
    m_vec3_normalize_or(out->v, u, out->v);
    /* Upper bone: toward the middle joint, the middle joint's hinge axis to axis_w. */
    float upper_dir[3];
    unit_offset(sk, mid, upper_dir);
    if (hinge->kind == SK_LIMIT_HINGE)
        m_vec3_copy(hinge->axis, out->rest_axis);
    else
        m_vec3_set(out->rest_axis, 1, 0, 0);
    float parent_inv[4];
    rotation_between_frames(upper_dir, out->rest_axis, u, axis_w, out->rotation);
    m_quat_conjugate(parent_rot, parent_inv);
    m_quat_mul(parent_inv, out->rotation, pose->local_rotation[upper]);
    if (keep_twist_limit &&
        clamp_twist(&sk->limit[upper], upper_dir, pose->local_rotation[upper]))
        m_quat_mul(parent_rot, pose->local_rotation[upper], out->rotation);
}

/* The middle and end joints of the limb whose upper joint limb_upper set. */
static void
limb_lower(struct body *b, int upper, const float *end_rotation, const struct limb_upper *up)
{
    const struct sk_skeleton *sk = &b->skeleton;
    struct sk_pose *pose = &b->pose;
    const int mid = sk->primary_child[upper], end = sk->primary_child[mid];
    const struct sk_limit *hinge = &sk->limit[mid];
    /* Middle: about its hinge, from the lower bone's rest direction to v. */
    float lower_dir[3], v_upper[3];
    unit_offset(sk, end, lower_dir);
    m_quat_rotate_inv(up->rotation, up->v, v_upper);
    float bend_rad = b_limb_angle_about(up->rest_axis, lower_dir, v_upper);
    /* A knee folded past its limit by more than the turn's wrap at half a turn (a rest
     * pose whose shin leans back from the thigh, folded to kneel or sit on the heels)
     * reads as bent backwards: clamped to the near end around the circle, not straight
     * (the foot was thrown 0.9 m for a frame, lying down, hdm05_tr_lieDownFloor_020).
     * Lying down, four HDM05 folds summed: jitter 11.44 -> 9.77x the person's, the rest
     * as it was. */
    if (hinge->kind == SK_LIMIT_HINGE)
        bend_rad = m_angle_clamp_nearest(bend_rad, hinge->min_rad, hinge->max_rad);
    m_quat_from_axis_angle(up->rest_axis, bend_rad, pose->local_rotation[mid]);
    /* End: turned to its target, kept within its limit. */
    float lower_rot[4], end_local[4], end_dir[3];
    m_quat_mul(up->rotation, pose->local_rotation[mid], lower_rot);
    m_quat_mul_conj_first(lower_rot, end_rotation, end_local);
    const int tip = sk->primary_child[end];
    if (tip >= 0) {
        unit_offset(sk, tip, end_dir);
        ik_limit_apply(&sk->limit[end], end_dir, end_local);
    }
    m_quat_copy(end_local, pose->local_rotation[end]);
}

void
b_limb_build_through(struct body *b, int upper, const float *end_target,
                     const float *end_rotation, const float *side, bool keep_twist_limit,
                     const float *mid_m, const float *end_m)
{
    struct limb_upper up;
    limb_upper(b, upper, end_target, side, keep_twist_limit, mid_m, end_m, &up);
    limb_lower(b, upper, end_rotation, &up);
}

void
b_limb_build(struct body *b, int upper, const float *end_target, const float *end_rotation,
             const float *side, bool keep_twist_limit)
{
    b_limb_build_through(b, upper, end_target, end_rotation, side, keep_twist_limit, NULL, NULL);
}

void
b_limb_turn_upper(struct body *b, int upper, const float *end_target, const float *side)
{
    struct limb_upper up;
    limb_upper(b, upper, end_target, side, false, NULL, NULL, &up);
}

void
b_limb_swivel(const float *line, const float *side, float angle, float *out)
{
    float turn[4];
    m_quat_from_axis_angle(line, angle, turn);
    m_quat_rotate(turn, side, out);
}

float
b_limb_twist_excess(const struct body *b, int upper)
{
    const struct sk_skeleton *sk = &b->skeleton;
    const struct sk_limit *limit = &sk->limit[upper];
    if (limit->kind != SK_LIMIT_BALL)
        return 0.0f;
    float bone[3];
    unit_offset(sk, sk->primary_child[upper], bone);
    const float twist = m_quat_swing_twist(b->pose.local_rotation[upper], bone, NULL, NULL);
    if (twist >= limit->min_rad && twist <= limit->max_rad)
        return 0.0f;
    const float over = m_angle_wrap(twist - limit->max_rad);
    const float under = m_angle_wrap(limit->min_rad - twist);
    if (over > 0.0f && (under <= 0.0f || over <= under))
        return over;
    return -under;
}

/* ---- poles ----------------------------------------------------------------------- */

void
b_blend_pole(const float *root, const float *end, const float *from_pole, const float *to_pole,
             float w, float *out_pole)
{
    float mid[3], from[3], to[3], d[3];
    const float up[3] = {0, 1, 0};
    m_vec3_lerp(root, end, 0.5f, mid);
    m_vec3_sub(from_pole, mid, from);
    m_vec3_sub(to_pole, mid, to);
    m_vec3_normalize_or(from, up, from);
    m_vec3_normalize_or(to, from, to);
    m_vec3_lerp(from, to, w, d);
    m_vec3_normalize_or(d, to, d);
    m_vec3_muladd(mid, d, B_POLE_DISTANCE_M, out_pole);
}

void
b_leg_pole(const struct body *b, int side, const float *ankle_m, float foot_yaw_rad,
           float *out_pole_m)
{
    /* Ahead of the foot, and a little out to its side: knees track over the toes and
     * spread when they bend deeply, rather than fold in across each other. */
    float yaw_rot[4], ahead[3];
    /* Over the foot, but never turned from the hips by more than the thigh can twist:
     * the foot's own turn makes up the rest (a planted foot may be left 35 degrees from
     * where the body faces before it steps). */
    const float from_hips = m_angle_wrap(foot_yaw_rad - b->heading_rad);
    const float turn = m_clampf(from_hips, -B_KNEE_MAX_TURN_RAD, B_KNEE_MAX_TURN_RAD);
    b_quat_from_yaw(b->heading_rad + turn, yaw_rot);
    const float out = side == 0 ? KNEE_OUTWARD_M : -KNEE_OUTWARD_M;
    const float local[3] = {out, 0.0f, 0.5f};
    m_quat_rotate(yaw_rot, local, ahead);
    float mid[3];
    m_vec3_lerp(b->pose.position_m[b->j.upper_leg[side]], ankle_m, 0.5f, mid);
    m_vec3_add(mid, ahead, out_pole_m);
}

