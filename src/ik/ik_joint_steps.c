/*
 * The steps CCD and the Jacobian methods share (ik_joints.c drives them): forward
 * kinematics of a group's local rotations, the per-step constraints in FABRIK's order
 * (stiffness, limit, axis lock), and the swivel that turns a limb's bend toward its pole.
 */
#include "embody/ik.h"
#include "embody/m_math.h"
#include "ik/ik_internal.h"

void
ik_constrain_local(const struct ik_solver *s, int k, const float *previous, float *L)
{
    m_quat_normalize(L);
    if (s->rotation_controls) /* as the FABRIK pass: stiffness and lock, limit, lock */
        ik_apply_rotation_controls(s, k, previous, L);
    if (!s->desc.ignore_limits)
        ik_fast_limit_apply(&s->limit[k], L);
    if (s->rotation_controls)
        ik_apply_axis_lock(s, k, L);
}

void
ik_group_forward_kinematics(struct ik_solver *s, const struct sk_pose *pose,
                            const struct ik_group *g)
{
    const struct sk_skeleton *sk = s->sk;
    for (int i = g->node_begin; i < g->node_end; ++i) {
        const int k = s->group_nodes[i];
        const int p = s->parent[k];
        const float *parent_rot = ik_parent_rotation(s, pose, k);
        const int e = s->effector[k];
        if (e >= 0 && s->has_target_rotation[e] && !(s->flags[k] & NODE_ROTATION_FIXED)) {
            float previous[4];
            m_quat_copy(s->local[k], previous);
            m_quat_mul_conj_first(parent_rot, s->target_rotation[e], s->local[k]);
            ik_constrain_local(s, k, previous, s->local[k]);
        }
        m_quat_mul(parent_rot, s->local[k], s->rot[k]);
        if (p >= 0) {
            float off[3];
            m_quat_rotate(s->rot[p], sk->offset_m[s->joint[k]], off);
            m_vec3_muladd(s->pos[p], off, s->length_scale[k], s->pos[k]);
        }
    }
}

bool
ik_pole_swivel(const struct ik_solver *s, int k, const float *end_m, float *out_turn)
{
    const int c = s->solve_child[k];
    if (c < 0 || s->solve_child[c] < 0)
        return false;
    const int slot = s->pole[c];
    if (slot < 0 || !s->pole_set[slot])
        return false;
    float axis[3], rel[3], pole[3];
    m_vec3_sub(end_m, s->pos[k], axis);
    if (!(m_vec3_normalize_or(axis, axis, axis) > M_TINY))
        return false;
    m_vec3_sub(s->pos[c], s->pos[k], rel);
    m_vec3_muladd(rel, axis, -m_vec3_dot(rel, axis), rel);
    if (s->pole_is_direction[slot])
        m_vec3_copy(s->pole_position[slot], pole);
    else
        m_vec3_sub(s->pole_position[slot], s->pos[k], pole);
    m_vec3_muladd(pole, axis, -m_vec3_dot(pole, axis), pole);
    /* A straight limb has no bend plane to swing: the limits and the next steps decide. */
    if (!(m_vec3_normalize_or(rel, rel, rel) > 1e-4f * s->length_m[c]) ||
        !(m_vec3_normalize_or(pole, pole, pole) > M_TINY))
        return false;
    m_quat_from_to(rel, pole, out_turn);
    return true;
}
