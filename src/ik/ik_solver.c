/*
 * FABRIK on trees with sub-bases and joint limits (see include/embody/ik.h): the solve.
 *
 * Compilation (ik_compile.c) keeps only the joints on some effector's path ("nodes"), in
 * the skeleton's depth-first order, so that one reverse loop over the nodes is the
 * forward-reaching pass (children before parents: a sub-base has heard from all its
 * chains before it is placed) and one forward loop is the backward-reaching pass
 * (parents first). The passes and the iterations are in ik_passes.c, rotations and
 * limits in ik_rotations.c and ik_limits.c, the controls in ik_controls.c; this file
 * loads the pose, solves each group and writes the result back.
 */
#include <string.h>

#include "embody/ik.h"
#include "embody/m_math.h"
#include "ik/ik_internal.h"

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
        if (s->desc.effector[e].weight > 0.0f) /* a switched-off effector is not missed */
            out_stats->max_residual_m =
                r > out_stats->max_residual_m ? r : out_stats->max_residual_m;
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
    if (!s->desc.ignore_limits)
        memset(s->swing_failed, 0, (size_t)s->node_count * sizeof *s->swing_failed);
    const bool continued = s->desc.predict_warm_start && continues_last_result(s);
    s->may_predict = continued && s->has_last_motion;
    const bool limited = !s->desc.ignore_limits;
    int iterations = 0;
    for (int g = 0; g < s->group_count; ++g) {
        const int n = ik_solve_group(s, pose, &s->groups[g]);
        iterations = n > iterations ? n : iterations;
    }
    if (!limited && !s->desc.positions_only && s->desc.method == IK_METHOD_FABRIK)
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
