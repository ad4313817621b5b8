/*
 * FABRIK on trees with sub-bases and joint limits (see include/embody/ik.h): the solve.
 *
 * Compilation (ik_compile.c) keeps only the joints on some effector's path ("nodes"), in
 * the skeleton's depth-first order, so that one reverse loop over the nodes is the
 * forward-reaching pass (children before parents: a sub-base has heard from all its
 * chains before it is placed) and one forward loop is the backward-reaching pass
 * (parents first). The passes are in ik_passes.c, rotations and limits in
 * ik_rotations.c and ik_limits.c; this file loads the pose, iterates each group and
 * writes the result back.
 */
#include <string.h>

#include "embody/ik.h"
#include "embody/m_math.h"
#include "ik/ik_internal.h"

/* predict_warm_start moves each node on by this fraction of its last motion. Below 1 on
 * purpose: motion along directions no target constrains (an elbow swinging about the
 * shoulder-hand line) is never pulled back by the iterations, so it would coast on for
 * ever at 1 and grow beyond; at 0.8 it dies away within a few frames (0.9 saves a little
 * more here but coasts twice as long). ik_bench, P3_human3_track, mean iterations:
 * 0.5 -> 2.01, 0.8 -> 1.38, 0.9 -> 1.18, 1.0 -> 1.29, 1.1 -> 2.57 (without: 2.88). */
#define PREDICTION_GAIN 0.8f

/* ---- Solve ------------------------------------------------------------------------ */

static void
load_state(struct ik_solver *s, const struct sk_pose *pose)
{
    if (s->desc.positions_only) {
        for (int k = 0; k < s->node_count; ++k)
            m_vec3_copy(pose->position_m[s->joint[k]], s->pos[k]);
        return;
    }
    for (int k = 0; k < s->node_count; ++k) {
        const int j = s->joint[k];
        m_vec3_copy(pose->position_m[j], s->pos[k]);
        m_quat_copy(pose->rotation[j], s->rot[k]);
        m_quat_copy(pose->local_rotation[j], s->local[k]);
    }
}

/* The worst squared distance of a group's effector to its target. */
static float
worst_residual_sq(const struct ik_solver *s, const struct ik_group *g)
{
    float worst = 0.0f;
    for (int i = g->effector_begin; i < g->effector_end; ++i) {
        const int e = s->group_effectors[i];
        const float *p = s->pos[s->effector_node[e]], *t = s->target[e];
        const float dx = p[0] - t[0], dy = p[1] - t[1], dz = p[2] - t[2];
        const float d2 = dx * dx + dy * dy + dz * dz;
        worst = d2 > worst ? d2 : worst;
    }
    return worst;
}

/* Writes the nodes back and carries every joint off the paths along with its parent
 * (positions_only: only the nodes' positions). */
static void
store_state(struct ik_solver *s, struct sk_pose *pose)
{
    const struct sk_skeleton *sk = s->sk;
    if (s->desc.positions_only) {
        /* Without rotations, joints off the paths move with their parent by translation,
         * which keeps their bones' lengths. */
        for (int k = 0; k < s->node_count; ++k) {
            const int j = s->joint[k];
            m_vec3_sub(s->pos[k], pose->position_m[j], s->shift[j]);
            m_vec3_copy(s->pos[k], pose->position_m[j]);
        }
        for (int i = 0; i < s->inactive_count; ++i) {
            const int j = s->inactive[i];
            const int p = sk->parent[j];
            if (p < 0)
                continue;
            m_vec3_copy(s->shift[p], s->shift[j]);
            m_vec3_add(pose->position_m[j], s->shift[j], pose->position_m[j]);
        }
        return;
    }
    for (int k = 0; k < s->node_count; ++k) {
        const int j = s->joint[k];
        m_vec3_copy(s->pos[k], pose->position_m[j]);
        m_quat_copy(s->rot[k], pose->rotation[j]);
        m_quat_copy(s->local[k], pose->local_rotation[j]);
    }
    /* Started from the original pose (or the last result, which leaves these joints as
     * the original has them): so do the joints off the paths. */
    const bool original = s->desc.start != IK_START_GIVEN;
    for (int i = 0; i < s->inactive_count; ++i) {
        const int j = s->inactive[i];
        const int p = sk->parent[j];
        if (p < 0)
            continue;
        if (original)
            m_quat_copy(s->original_local[j], pose->local_rotation[j]);
        float off[3];
        m_quat_mul(pose->rotation[p], pose->local_rotation[j], pose->rotation[j]);
        m_quat_rotate(pose->rotation[p], sk->offset_m[j], off);
        m_vec3_add(pose->position_m[p], off, pose->position_m[j]);
    }
}

/* Moves a group's nodes on by PREDICTION_GAIN times their motion in the last solve. */
static void
predict_group(struct ik_solver *s, const struct ik_group *g)
{
    for (int i = g->node_begin; i < g->node_end; ++i) {
        const int k = s->group_nodes[i];
        m_vec3_muladd(s->pos[k], s->last_motion[k], PREDICTION_GAIN, s->pos[k]);
    }
}

/* Iterates one group until its effectors are within tolerance, progress stalls, or the
 * iteration cap; returns the iterations made. */
static int
solve_group(struct ik_solver *s, const struct sk_pose *pose, const struct ik_group *g)
{
    const bool limited = !s->desc.ignore_limits;
    const float tolerance_sq = s->tolerance_m * s->tolerance_m;
    int iterations = 0, stalled = 0;
    float worst_sq = worst_residual_sq(s, g);
    /* Predicts only a group that has work to do; the prediction moves the nodes
     * independently, off their bones' lengths, so at least one iteration must follow. */
    bool must_iterate = s->may_predict && worst_sq > tolerance_sq;
    if (must_iterate) {
        predict_group(s, g);
        worst_sq = worst_residual_sq(s, g);
    }
    if (limited && !must_iterate && worst_sq <= tolerance_sq) {
        /* Already there: one backward pass still derives every rotation afresh from the
         * positions and keeps it within its limit, whatever the pose handed in carried
         * (twist left by an earlier solve or by the caller). It may move the effectors;
         * the iterations below then take over. */
        ik_reach_backward_limited(s, pose, g);
        worst_sq = worst_residual_sq(s, g);
    }
    float best = s->stall_m > 0.0f ? sqrtf(worst_sq) : 0.0f;
    while ((worst_sq > tolerance_sq || must_iterate) && iterations < s->desc.max_iterations) {
        must_iterate = false;
        ik_reach_forward(s, g);
        if (limited)
            ik_reach_backward_limited(s, pose, g);
        else
            ik_reach_backward_free(s, g);
        ++iterations;
        worst_sq = worst_residual_sq(s, g);
        if (s->stall_m > 0.0f) {
            /* Stop when the worst residual has not improved on its best for two
             * iterations (an unreachable target, or a pose held by limits); one that goes
             * back a little, as sub-bases settle, is not a stall. */
            const float now = sqrtf(worst_sq);
            stalled = now > best - s->stall_m ? stalled + 1 : 0;
            best = now < best ? now : best;
            if (stalled >= 2)
                break;
        }
    }
    return iterations;
}

/* predict_warm_start: whether the pose handed in is the last result, unchanged. */
static bool
continues_last_result(const struct ik_solver *s)
{
    const size_t bytes = (size_t)s->node_count * sizeof *s->pos;
    return s->has_last_result && memcmp(s->pos, s->last_result, bytes) == 0;
}

/* Keeps this result, and how far the nodes moved since the last one when this solve
 * continued it. */
static void
remember_result(struct ik_solver *s, bool continued)
{
    for (int k = 0; k < s->node_count; ++k) {
        if (continued)
            m_vec3_sub(s->pos[k], s->last_result[k], s->last_motion[k]);
        m_vec3_copy(s->pos[k], s->last_result[k]);
    }
    s->has_last_result = true;
    s->has_last_motion = continued;
}

/* Every effector's blend weight is 0: the pose stays as it was handed in. */
static bool
nothing_to_blend_in(const struct ik_solver *s)
{
    for (int e = 0; e < s->desc.effector_count; ++e)
        if (s->blend[e] > 0.0f)
            return false;
    return true;
}

static void
fill_stats(const struct ik_solver *s, const struct sk_pose *pose, int iterations,
           struct ik_stats *out_stats)
{
    out_stats->iterations = iterations;
    out_stats->max_residual_m = 0.0f;
    for (int e = 0; e < s->desc.effector_count; ++e) {
        const int k = s->effector_node[e];
        const float r = k < 0 ? 0.0f : m_vec3_distance(pose->position_m[s->joint[k]], s->target[e]);
        out_stats->residual_m[e] = r;
        out_stats->max_residual_m = r > out_stats->max_residual_m ? r : out_stats->max_residual_m;
    }
    out_stats->converged = out_stats->max_residual_m <= s->tolerance_m;
}

void
ik_solver_solve(struct ik_solver *s, struct sk_pose *pose, struct ik_stats *out_stats)
{
    if (s->blending && nothing_to_blend_in(s)) {
        if (out_stats)
            fill_stats(s, pose, 0, out_stats);
        return;
    }
    if (s->desc.start == IK_START_GIVEN)
        load_state(s, pose);
    else
        ik_load_start(s, pose);
    if (s->stretching)
        ik_prepare_stretch(s);
    const bool continued = s->desc.predict_warm_start && continues_last_result(s);
    s->may_predict = continued && s->has_last_motion;
    const bool limited = !s->desc.ignore_limits;
    int iterations = 0;
    for (int g = 0; g < s->group_count; ++g) {
        const int n = solve_group(s, pose, &s->groups[g]);
        iterations = n > iterations ? n : iterations;
    }
    if (!limited && !s->desc.positions_only)
        ik_derive_rotations(s, pose);
    if (s->blending)
        ik_blend_with_input(s, pose);
    store_state(s, pose);
    if (s->desc.predict_warm_start)
        remember_result(s, continued);
    if (s->desc.start == IK_START_LAST)
        ik_remember_last(s);
    if (out_stats)
        fill_stats(s, pose, iterations, out_stats);
}
