/*
 * What CCD and the Jacobian methods share (include/embody/ik.h, enum ik_method): both turn
 * joints, so the pose is always forward kinematics of local rotations kept within their
 * limits; this file holds their state and the iterations over a group with FABRIK's
 * stopping rules. One iteration of each is in ik_ccd.c and ik_jacobian.c; the steps both
 * take (forward kinematics, per-step constraints, the pole swivel) in ik_joint_steps.c, so
 * that calls run one way: ik_joints -> ik_ccd, ik_jacobian -> ik_joint_steps.
 */
#include <stdlib.h>

#include "embody/ik.h"
#include "embody/m_math.h"
#include "ik/ik_internal.h"

/* lambda as a share of the reach of the joints solved together (ik_solver_desc.damping).
 * ik_bench --solver dls --damping X (the benchmark's problems, not the evaluation clips),
 * P3_human3 cold without limits, mean iterations and converged: 0.3 -> 99, 5 %; 0.1 -> 43,
 * 96 %; 0.03 -> 8.0, 100 %; 0.01 -> 6.0, 100 % (P3_human5: 24 and 7.8 iterations at 0.03
 * and 0.01). Tracking (P3_human3_track) moves no joint further between solves at 0.01
 * than at 0.03: the damping is still enough near straight limbs. */
#define DEFAULT_DAMPING 0.01f
#define DAMPING_GROWTH 4.0f

/* Which effectors each node turns for: its effectors' paths, chain_length bones up. */
static void
mark_chains(struct ik_solver *s)
{
    for (int e = 0; e < s->desc.effector_count; ++e) {
        int k = s->effector_node[e];
        if (k < 0)
            continue; /* outside the solved subtree */
        const int limit = s->desc.effector[e].chain_length;
        for (int bones = 0; s->parent[k] >= 0 && (limit == 0 || bones < limit); ++bones) {
            k = s->parent[k];
            s->chain_mask[k] |= 1u << e;
        }
    }
    for (int k = 0; k < s->node_count; ++k)
        if (s->flags[k] & NODE_ROTATION_FIXED)
            s->chain_mask[k] = 0;
}

bool
ik_joints_init(struct ik_solver *s)
{
    s->damping = s->desc.damping > 0.0f ? s->desc.damping : DEFAULT_DAMPING;
    s->desc.damping = s->damping;
    const size_t nn = (size_t)(s->node_count > 0 ? s->node_count : 1);
    s->chain_mask = calloc(nn, sizeof *s->chain_mask);
    if (!s->chain_mask)
        return false;
    mark_chains(s);
    if (s->desc.method == IK_METHOD_JACOBIAN_TRANSPOSE ||
        s->desc.method == IK_METHOD_DAMPED_LEAST_SQUARES) {
        const size_t rows = 3 * (size_t)s->desc.effector_count;
        s->dof_capacity = 3 * (int)nn;
        const size_t dofs = (size_t)s->dof_capacity;
        s->dof_node = calloc(dofs, sizeof *s->dof_node);
        s->dof_axis = calloc(dofs, sizeof *s->dof_axis);
        s->dof_step = calloc(dofs, sizeof *s->dof_step);
        s->jacobian = calloc(rows * dofs, sizeof *s->jacobian);
        s->jjt = calloc(rows * rows, sizeof *s->jjt);
        s->row_work = calloc(2 * rows, sizeof *s->row_work);
        if (!s->dof_node || !s->dof_axis || !s->dof_step || !s->jacobian || !s->jjt || !s->row_work)
            return false;
    }
    return true;
}

void
ik_joints_fini(struct ik_solver *s)
{
    free(s->chain_mask);
    free(s->dof_node);
    free(s->dof_axis);
    free(s->dof_step);
    free(s->jacobian);
    free(s->jjt);
    free(s->row_work);
}

enum em_result
ik_solver_set_damping(struct ik_solver *s, float damping)
{
    if (!isfinite(damping) || !(damping > 0.0f))
        return EM_ERROR_INVALID_ARGUMENT;
    s->damping = damping;
    s->desc.damping = damping;
    return EM_OK;
}

/* Clamps every turning node of group g into its limit (the pose handed in may not be):
 * after a solve every joint is within its limit, also when the targets were met. */
static void
constrain_group(struct ik_solver *s, const struct ik_group *g)
{
    if (s->desc.ignore_limits)
        return;
    for (int i = g->node_begin; i < g->node_end; ++i) {
        const int k = s->group_nodes[i];
        if (!(s->flags[k] & NODE_ROTATION_FIXED))
            ik_fast_limit_apply(&s->limit[k], s->local[k]);
    }
}

static float
worst_residual(const struct ik_solver *s, const struct ik_group *g)
{
    float worst = 0.0f;
    for (int i = g->effector_begin; i < g->effector_end; ++i) {
        const int e = s->group_effectors[i];
        worst = fmaxf(worst, m_vec3_distance(s->pos[s->effector_node[e]], s->target[e]));
    }
    return worst;
}

int
ik_solve_group_by_joints(struct ik_solver *s, const struct sk_pose *pose, const struct ik_group *g)
{
    constrain_group(s, g);
    ik_group_forward_kinematics(s, pose, g);
    float worst = worst_residual(s, g), best = worst;
    int iterations = 0, stalled = 0;
    s->damping_scale = 1.0f;
    while (worst > s->tolerance_m && iterations < s->desc.max_iterations) {
        if (s->desc.method == IK_METHOD_CCD)
            ik_ccd_iterate(s, pose, g);
        else
            ik_jacobian_iterate(s, pose, g);
        ik_group_forward_kinematics(s, pose, g);
        ++iterations;
        const float before = worst;
        worst = worst_residual(s, g);
        /* Damped least squares, as Levenberg-Marquardt: a step that made things worse
         * (overshoot near a straight or singular pose) damps the next ones more, a step
         * that helped relaxes the damping back toward its setting; the transpose shortens
         * its step the same way. Unreachable P1_chain10 targets (ik_bench --side-by-side):
         * dls pointed up to 5 degrees off, oscillating, without this. */
        s->damping_scale = worst > before ? fminf(s->damping_scale * DAMPING_GROWTH, 1e4f)
                                          : fmaxf(1.0f, s->damping_scale * 0.5f);
        if (s->stall_m > 0.0f) { /* as FABRIK's (ik_passes.c) */
            stalled = worst > best - s->stall_m ? stalled + 1 : 0;
            best = fminf(worst, best);
            if (stalled >= 2)
                break;
        }
    }
    return iterations;
}
