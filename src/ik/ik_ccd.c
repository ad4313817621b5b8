/*
 * Cyclic coordinate descent on the compiled chains and trees (include/embody/ik.h,
 * IK_METHOD_CCD; Wang and Chen, "A combined optimization method for solving the inverse
 * kinematics problem of mechanical manipulators", IEEE Trans. Robotics and Automation
 * 7(4), 1991; Kenwright, "Inverse kinematics - cyclic coordinate descent", Journal of
 * Graphics Tools 16(4), 2012). One iteration visits the nodes from the tips toward the root
 * (the reverse of the parents-first order) and turns each, as a rigid frame about its own
 * position, by the rotation that brings the effectors below it closest to their targets,
 * kept within its constraints at once. Only the effectors' positions are carried along
 * between steps (a node's own position and frame depend only on the nodes above it, which
 * have not turned yet in this iteration); ik_joints.c redoes the forward kinematics after.
 */
#include "embody/ik.h"
#include "embody/m_math.h"
#include "ik/ik_internal.h"

/* Turns node k by the world rotation `turn`, as far as its constraints let it, and the
 * effectors below it with it. */
static void
turn_node(struct ik_solver *s, const struct sk_pose *pose, int k, const float *turn)
{
    const float *parent_rot = ik_parent_rotation(s, pose, k);
    float previous[4], wanted[4], new_rot[4], old_conj[4], actual[4];
    m_quat_copy(s->local[k], previous);
    m_quat_mul(turn, s->rot[k], wanted);
    m_quat_mul_conj_first(parent_rot, wanted, s->local[k]);
    ik_constrain_local(s, k, previous, s->local[k]);
    m_quat_mul(parent_rot, s->local[k], new_rot);
    m_quat_conjugate(s->rot[k], old_conj);
    m_quat_mul(new_rot, old_conj, actual); /* the turn the constraints left */
    m_quat_copy(new_rot, s->rot[k]);
    for (unsigned bits = s->effectors_below[k]; bits; bits &= bits - 1) {
        const int e = __builtin_ctz(bits);
        float v[3];
        m_vec3_sub(s->eff_pos[e], s->pos[k], v);
        m_quat_rotate(actual, v, v);
        m_vec3_add(s->pos[k], v, s->eff_pos[e]);
    }
}

/* A hinge's parent first swings the limb about the line to the hinge's child, so the
 * hinge bends toward its pole (that line, and the effector at its end, stay). */
static void
swing_toward_pole(struct ik_solver *s, const struct sk_pose *pose, int k)
{
    const int c = s->solve_child[k];
    if (c < 0 || s->pole[c] < 0)
        return;
    const int g = s->solve_child[c];
    if (g < 0)
        return;
    /* The hinge's frame is current (it turned before k in this iteration); its child's
     * position follows from it. */
    float end[3], off[3], turn[4];
    m_quat_rotate(s->rot[c], s->sk->offset_m[s->joint[g]], off);
    m_vec3_muladd(s->pos[c], off, s->length_scale[g], end);
    if (ik_pole_swivel(s, k, end, turn))
        turn_node(s, pose, k, turn);
}

/* The rotation about node k that brings the effectors in `mask` toward their targets:
 * for one, the shortest arc from it to its target as seen from k; for several (a
 * sub-base), the weighted average of theirs. False when none says anything. */
static bool
wanted_turn(const struct ik_solver *s, int k, unsigned mask, float *out_turn)
{
    float sum[4] = {0, 0, 0, 0};
    bool any = false;
    for (unsigned bits = mask; bits; bits &= bits - 1) {
        const int e = __builtin_ctz(bits);
        float v[3], t[3], q[4];
        m_vec3_sub(s->eff_pos[e], s->pos[k], v);
        m_vec3_sub(s->target[e], s->pos[k], t);
        const float lv = m_vec3_normalize_or(v, v, v), lt = m_vec3_normalize_or(t, t, t);
        if (!(lv > M_TINY) || !(lt > M_TINY))
            continue;
        m_quat_from_to(v, t, q);
        /* Weighted by the lever (|v| |t|), as the least-squares rotation weighs them: a far
         * effector's direction says more about this joint's turn than a near one's. */
        const float w =
            (m_quat_dot(sum, q) < 0.0f ? -1.0f : 1.0f) * s->desc.effector[e].weight * lv * lt;
        for (int i = 0; i < 4; ++i)
            sum[i] += w * q[i];
        any = true;
    }
    if (!any || !(m_quat_dot(sum, sum) > 1e-20f))
        return false;
    m_quat_copy(sum, out_turn);
    m_quat_normalize(out_turn);
    return true;
}

void
ik_ccd_iterate(struct ik_solver *s, const struct sk_pose *pose, const struct ik_group *g)
{
    for (int i = g->effector_begin; i < g->effector_end; ++i) {
        const int e = s->group_effectors[i];
        m_vec3_copy(s->pos[s->effector_node[e]], s->eff_pos[e]);
    }
    for (int i = g->node_end - 1; i >= g->node_begin; --i) { /* tips first */
        const int k = s->group_nodes[i];
        const unsigned mask = s->chain_mask[k];
        if (!mask)
            continue;
        if (s->pole_count > 0)
            swing_toward_pole(s, pose, k);
        float turn[4];
        if (wanted_turn(s, k, mask, turn))
            turn_node(s, pose, k, turn);
    }
}
