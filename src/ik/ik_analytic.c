/*
 * The specialised solvers beside FABRIK: exact two-bone IK (law of cosines) and a
 * one-bone look-at, on positions and on poses.
 */
#include "embody/ik.h"
#include "embody/m_math.h"

/* A unit vector perpendicular to unit `u`, as close as possible to `hint`. */
static void
perpendicular_toward(const float *u, const float *hint, float *out)
{
    float p[3];
    m_vec3_muladd(hint, u, -m_vec3_dot(hint, u), p);
    if (m_vec3_normalize_or(p, p, out) > 1e-6f)
        return;
    const float ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0};
    m_vec3_cross(u, fabsf(u[0]) < 0.9f ? ex : ey, p);
    m_vec3_normalize_or(p, ey, out);
}

void
ik_two_bone_positions(const float *root_m, float upper_m, float lower_m, const float *target_m,
                      const float *bend_dir, float *out_mid_m, float *out_end_m)
{
    float d[3], u[3], p[3];
    m_vec3_sub(target_m, root_m, d);
    const float fallback[3] = {0, -1, 0};
    float dist = m_vec3_normalize_or(d, fallback, u);
    const float reach_max = upper_m + lower_m;
    const float reach_min = fabsf(upper_m - lower_m);
    dist = m_clampf(dist, reach_min, reach_max);
    perpendicular_toward(u, bend_dir, p);
    /* Law of cosines: how far along root->target the middle joint sits, and how far
     * out to the side. */
    float along, side;
    if (dist >= reach_max) { /* straight: no sideways part to lose to rounding */
        along = upper_m;
        side = 0.0f;
    } else if (dist <= reach_min) { /* folded back on itself */
        along = upper_m >= lower_m ? upper_m : -upper_m;
        side = 0.0f;
    } else {
        along = (upper_m * upper_m - lower_m * lower_m + dist * dist) / (2.0f * dist);
        side = sqrtf(fmaxf(0.0f, upper_m * upper_m - along * along));
    }
    for (int i = 0; i < 3; ++i) {
        out_mid_m[i] = root_m[i] + u[i] * along + p[i] * side;
        out_end_m[i] = root_m[i] + u[i] * dist;
    }
}

static const float *
rotation_of_parent(const struct sk_skeleton *sk, const struct sk_pose *pose, int j)
{
    static const float identity[4] = {0, 0, 0, 1};
    return sk->parent[j] >= 0 ? pose->rotation[sk->parent[j]] : identity;
}

/* Turns joint j's global rotation minimally so that the direction `from` (world) becomes
 * `to`, and updates its local rotation. */
static void
turn_joint(const struct sk_skeleton *sk, struct sk_pose *pose, int j, const float *from,
           const float *to)
{
    float a[3], b[3], q[4];
    const float up[3] = {0, 1, 0};
    if (!(m_vec3_normalize_or(from, up, a) > M_TINY) || !(m_vec3_normalize_or(to, up, b) > M_TINY))
        return;
    m_quat_from_to(a, b, q);
    m_quat_mul(q, pose->rotation[j], pose->rotation[j]);
    m_quat_normalize(pose->rotation[j]);
    m_quat_mul_conj_first(rotation_of_parent(sk, pose, j), pose->rotation[j],
                          pose->local_rotation[j]);
}

void
ik_two_bone_solve(const struct sk_skeleton *sk, struct sk_pose *pose, int end_joint,
                  const float *target_m, const float *pole_m, const float *end_orientation)
{
    const int mid = sk->parent[end_joint];
    const int upper = mid >= 0 ? sk->parent[mid] : -1;
    if (upper < 0)
        return;
    const float *root = pose->position_m[upper];
    float bend[3], new_mid[3], new_end[3];
    if (pole_m) {
        m_vec3_sub(pole_m, root, bend);
    } else {
        m_vec3_sub(pose->position_m[mid], root, bend);
        float line[3], u[3];
        m_vec3_sub(pose->position_m[end_joint], root, line);
        m_vec3_normalize_or(line, line, u);
        m_vec3_muladd(bend, u, -m_vec3_dot(bend, u), bend);
        if (m_vec3_length(bend) < 1e-5f * sk->length_m[mid] &&
            sk->limit[mid].kind == SK_LIMIT_HINGE) {
            /* Straight limb: bend the way the hinge allows. The middle joint moves
             * against the direction the lower bone turns, -(axis x bone). */
            float axis_w[3], bone_w[3];
            m_quat_rotate(pose->rotation[mid], sk->limit[mid].axis, axis_w);
            m_vec3_sub(pose->position_m[end_joint], pose->position_m[mid], bone_w);
            m_vec3_cross(bone_w, axis_w, bend);
            if (sk->limit[mid].max_rad + sk->limit[mid].min_rad < 0.0f)
                m_vec3_scale(bend, -1.0f, bend);
        }
    }
    ik_two_bone_positions(root, sk->length_m[mid], sk->length_m[end_joint], target_m, bend,
                          new_mid, new_end);
    float from[3], to[3];
    m_vec3_sub(pose->position_m[mid], root, from);
    m_vec3_sub(new_mid, root, to);
    turn_joint(sk, pose, upper, from, to);
    sk_pose_forward_kinematics_below(pose, sk, upper);
    m_vec3_sub(pose->position_m[end_joint], pose->position_m[mid], from);
    m_vec3_sub(new_end, pose->position_m[mid], to);
    turn_joint(sk, pose, mid, from, to);
    if (end_orientation) {
        m_quat_copy(end_orientation, pose->rotation[end_joint]);
        m_quat_normalize(pose->rotation[end_joint]);
        m_quat_mul_conj_first(pose->rotation[mid], pose->rotation[end_joint],
                              pose->local_rotation[end_joint]);
    }
    sk_pose_forward_kinematics_below(pose, sk, mid);
}

void
ik_look_at(const struct sk_skeleton *sk, struct sk_pose *pose, int joint, const float *target_m,
           bool apply_limit)
{
    const int child = sk->primary_child[joint];
    if (child < 0)
        return;
    float rest_dir[3], from[3], to[3];
    const float up[3] = {0, 1, 0};
    m_vec3_normalize_or(sk->offset_m[child], up, rest_dir);
    m_quat_rotate(pose->rotation[joint], rest_dir, from);
    m_vec3_sub(target_m, pose->position_m[joint], to);
    turn_joint(sk, pose, joint, from, to);
    if (apply_limit) {
        ik_limit_apply(&sk->limit[joint], rest_dir, pose->local_rotation[joint]);
        m_quat_mul(rotation_of_parent(sk, pose, joint), pose->local_rotation[joint],
                   pose->rotation[joint]);
    }
    sk_pose_forward_kinematics_below(pose, sk, joint);
}
