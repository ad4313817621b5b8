/*
 * The FABRIK passes on positions (Aristidou and Lasenby 2011) and the iterations over a
 * group: forward reaching with sub-bases, backward reaching without limits (the limited
 * one is in ik_rotations.c), a plain chain's textbook loop and the prediction of warm
 * starts. The passes call into ik_rotations.c (the limited backward pass, the pole swing
 * of hinge nodes); nothing there calls back.
 */
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

/* A sub-base's chain weight: with the tension rule, the effectors' weight times
 * (distance from the sub-base to the chain's tip / chain length)^8, plus a floor so that
 * chains which are all slack still average. */
static inline float
chain_weight(const struct ik_solver *s, const struct forward_step *step, const float *sub_base)
{
    if (s->desc.sub_base_rule == IK_SUB_BASE_AVERAGE)
        return step->pull_weight;
    const float *tip = s->pos[step->tip];
    const float dx = tip[0] - sub_base[0], dy = tip[1] - sub_base[1], dz = tip[2] - sub_base[2];
    const float t2 = (dx * dx + dy * dy + dz * dz) * step->inv_chain_length_sq;
    const float t4 = t2 * t2;
    return step->pull_weight * (t4 * t4 + 1e-6f);
}

/* OP_KEEP_FOLD: moves the parent's new place (r) away from the hinge's child, along the
 * line between them, to the least distance the hinge's bend allows. */
static void
keep_fold(const struct ik_solver *s, const struct forward_step *step, float *rx, float *ry,
          float *rz)
{
    const float *g = s->pos[step->tip];
    const float vx = *rx - g[0], vy = *ry - g[1], vz = *rz - g[2];
    const float d2 = vx * vx + vy * vy + vz * vz;
    if (d2 >= step->inv_chain_length_sq || d2 < 1e-20f)
        return;
    const float scale = sqrtf(step->inv_chain_length_sq / d2);
    *rx = g[0] + vx * scale;
    *ry = g[1] + vy * scale;
    *rz = g[2] + vz * scale;
}

/* Forward reaching: effectors to their targets, each node pulled toward its child at the
 * bone's length, sub-bases to the weighted average of their chains' requests. Walking up
 * a chain the next step is usually the parent just placed, so its position is carried
 * in registers (c) rather than read back from memory. */
static inline __attribute__((always_inline)) void
reach_forward_with(struct ik_solver *s, const struct ik_group *g, bool folds)
{
    float(*pos)[3] = s->pos;
    float(*acc)[4] = s->acc;
    for (int i = g->sub_base_begin; i < g->sub_base_end; ++i) {
        const int k = s->sub_bases[i];
        const int e = s->effector[k];
        const float w = e >= 0 ? s->desc.effector[e].weight : 0.0f;
        if (e >= 0)
            m_vec3_scale(s->target[e], w, acc[k]);
        else
            m_vec3_set(acc[k], 0, 0, 0);
        acc[k][3] = w;
    }
    const struct forward_step *steps = s->forward_steps;
    float cx = 0.0f, cy = 0.0f, cz = 0.0f;
    int carried = -1;
    for (int i = g->forward_begin; i < g->forward_end; ++i) {
        const struct forward_step *step = &steps[i];
        const int k = step->node;
        const unsigned op = step->op;
        if (op & OP_SET_TARGET) {
            const float *t = s->target[step->effector];
            m_vec3_copy(t, pos[k]);
            cx = t[0], cy = t[1], cz = t[2];
        } else if ((op & OP_SET_AVERAGE) && acc[k][3] > 0.0f) {
            const float inv = 1.0f / acc[k][3];
            cx = pos[k][0] = acc[k][0] * inv;
            cy = pos[k][1] = acc[k][1] * inv;
            cz = pos[k][2] = acc[k][2] * inv;
        } else if (carried != k || (op & OP_SET_AVERAGE)) {
            /* (a sub-base whose chains all weigh 0 stays where it is) */
            cx = pos[k][0], cy = pos[k][1], cz = pos[k][2];
        }
        if (!(op & (OP_PULL_PARENT | OP_ASK_SUB_BASE)))
            continue;
        const int p = step->parent;
        const float dx = pos[p][0] - cx, dy = pos[p][1] - cy, dz = pos[p][2] - cz;
        const float d2 = dx * dx + dy * dy + dz * dz;
        float rx = cx, ry = cy + step->length_m, rz = cz; /* coincident: any direction */
        if (d2 > 1e-20f) {
            const float scale = ik_length_over_sqrt(d2, step->length_m);
            rx = cx + dx * scale;
            ry = cy + dy * scale;
            rz = cz + dz * scale;
        }
        if (folds && (op & OP_KEEP_FOLD))
            keep_fold(s, step, &rx, &ry, &rz);
        if (op & OP_ASK_SUB_BASE) {
            const float w = chain_weight(s, step, pos[p]);
            acc[p][0] += rx * w;
            acc[p][1] += ry * w;
            acc[p][2] += rz * w;
            acc[p][3] += w;
        } else {
            pos[p][0] = cx = rx;
            pos[p][1] = cy = ry;
            pos[p][2] = cz = rz;
            carried = p;
        }
    }
}

/* Without limits there are no folds to keep (OP_KEEP_FOLD): a loop without the test. */
static void
reach_forward(struct ik_solver *s, const struct ik_group *g)
{
    if (s->desc.ignore_limits)
        reach_forward_with(s, g, false);
    else
        reach_forward_with(s, g, true);
}

/* Backward reaching without limits: each node back at its bone's length from its
 * parent, toward where the forward pass put it. The parent is usually the node just
 * placed, kept in registers (b). */
static void
reach_backward_free(struct ik_solver *s, const struct ik_group *g)
{
    float(*pos)[3] = s->pos;
    const struct backward_step *steps = s->backward_steps;
    float bx = 0.0f, by = 0.0f, bz = 0.0f;
    int placed = -1;
    for (int i = g->backward_begin; i < g->backward_end; ++i) {
        const struct backward_step *step = &steps[i];
        const int k = step->node, p = step->parent;
        if (step->has_pole)
            ik_swing_toward_pole(s, k);
        if (p != placed)
            bx = pos[p][0], by = pos[p][1], bz = pos[p][2];
        const float dx = pos[k][0] - bx, dy = pos[k][1] - by, dz = pos[k][2] - bz;
        const float d2 = dx * dx + dy * dy + dz * dz;
        if (d2 > 1e-20f) {
            const float scale = ik_length_over_sqrt(d2, step->length_m);
            bx += dx * scale;
            by += dy * scale;
            bz += dz * scale;
        } else {
            by += step->length_m;
        }
        pos[k][0] = bx;
        pos[k][1] = by;
        pos[k][2] = bz;
        placed = k;
    }
}

static void
reach_chain(struct ik_solver *s, const struct ik_group *g)
{
    float(*pos)[3] = s->pos;
    const float *len = s->length_m;
    const int first = s->group_nodes[g->node_begin];
    const int tip = first + (g->node_end - g->node_begin) - 1;
    const float *t = s->target[s->effector[tip]];
    /* Forward: the tip to its target, each parent pulled to its bone's length. */
    float cx = t[0], cy = t[1], cz = t[2];
    pos[tip][0] = cx, pos[tip][1] = cy, pos[tip][2] = cz;
    for (int k = tip; k > first; --k) {
        float *p = pos[k - 1];
        const float dx = p[0] - cx, dy = p[1] - cy, dz = p[2] - cz;
        const float d2 = dx * dx + dy * dy + dz * dz;
        if (d2 > 1e-20f) {
            const float scale = ik_length_over_sqrt(d2, len[k]);
            cx += dx * scale, cy += dy * scale, cz += dz * scale;
        } else {
            cy += len[k];
        }
        p[0] = cx, p[1] = cy, p[2] = cz;
    }
    /* Backward: from the base, each node back at its bone's length toward where the
     * forward pass put it. */
    const float *b = pos[s->parent[first]];
    float bx = b[0], by = b[1], bz = b[2];
    for (int k = first; k <= tip; ++k) {
        float *q = pos[k];
        const float dx = q[0] - bx, dy = q[1] - by, dz = q[2] - bz;
        const float d2 = dx * dx + dy * dy + dz * dz;
        if (d2 > 1e-20f) {
            const float scale = ik_length_over_sqrt(d2, len[k]);
            bx += dx * scale, by += dy * scale, bz += dz * scale;
        } else {
            by += len[k];
        }
        q[0] = bx, q[1] = by, q[2] = bz;
    }
}

/* The worst squared distance of a group's effector to its target, an effector weighing
 * less than 1 counted at that share of its distance (0: not at all). An effector faded in
 * by its weight (ik_solver_set_weight) so starts the iterations at a residual that grows
 * from 0 with it, not at once: a solve continuous in the inputs. */
static float
worst_residual_sq(const struct ik_solver *s, const struct ik_group *g)
{
    float worst = 0.0f;
    for (int i = g->effector_begin; i < g->effector_end; ++i) {
        const int e = s->group_effectors[i];
        const float w = s->desc.effector[e].weight;
        const float *p = s->pos[s->effector_node[e]], *t = s->target[e];
        const float dx = p[0] - t[0], dy = p[1] - t[1], dz = p[2] - t[2];
        const float d2 = (dx * dx + dy * dy + dz * dz) * (w < 1.0f ? w * w : 1.0f);
        worst = d2 > worst ? d2 : worst;
    }
    return worst;
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
int
ik_solve_group(struct ik_solver *s, const struct sk_pose *pose, const struct ik_group *g)
{
    if (s->desc.method != IK_METHOD_FABRIK)
        return ik_solve_group_by_joints(s, pose, g);
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
        if (g->plain_chain) {
            reach_chain(s, g);
        } else {
            reach_forward(s, g);
            if (limited)
                ik_reach_backward_limited(s, pose, g);
            else
                reach_backward_free(s, g);
        }
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
