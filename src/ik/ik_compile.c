/*
 * Compiling a solver (see ik_internal.h): the effectors' paths become nodes in the
 * skeleton's depth-first order, with their kinds, chain weights, level orders, groups
 * and the flat step lists the passes run; then targets and poles.
 *
 * Node kinds:
 *   base      the top of an effector's path (the root unless it is free, or the joint
 *             where a chain_length ends): its position is not moved by its chains'
 *             requests, and it does not pull on its own parent.
 *   sub-base  a node with two or more child chains (or an effector that also has child
 *             chains): in the forward pass it goes to the weighted average of what its
 *             chains ask (Aristidou and Lasenby 2011, section 4.3).
 */
#include <stdlib.h>
#include <string.h>

#include "embody/ik.h"
#include "embody/m_math.h"
#include "ik/ik_internal.h"
#include "util/u_log.h"

#define DEFAULT_TOLERANCE_M 1e-3f
#define DEFAULT_MAX_ITERATIONS 20

/* The solver's own settings (not its effectors), in the order they are checked. */
static enum em_result
check_settings(const struct ik_solver_desc *in, struct em_error *err)
{
    const struct sk_skeleton *sk = in->skeleton;
    if (!sk || sk->joint_count <= 0)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "ik: no skeleton");
    if (in->effector_count <= 0 || in->effector_count > IK_MAX_EFFECTORS)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "ik: %d effectors, expected 1 to %d",
                       in->effector_count, IK_MAX_EFFECTORS);
    if (!isfinite(in->tolerance_m) || in->tolerance_m < 0.0f)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "ik: tolerance_m: expected a finite number >= 0");
    if (in->max_iterations < 0)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "ik: max_iterations: expected >= 0");
    if (in->positions_only && !in->ignore_limits)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "ik: positions_only needs ignore_limits (limits act on rotations)");
    if (!isfinite(in->stall_m) || in->stall_m < 0.0f)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "ik: stall_m: expected a finite number >= 0");
    if (in->root_joint < 0 || in->root_joint >= sk->joint_count)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "ik: root_joint: joint %d is not in the skeleton (0..%d)", in->root_joint,
                       sk->joint_count - 1);
    if ((unsigned)in->start > IK_START_LAST)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "ik: start: expected IK_START_GIVEN, _ORIGINAL or _LAST");
    if ((unsigned)in->blend_mode > IK_BLEND_NLERP)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "ik: blend_mode: expected IK_BLEND_LINEAR or IK_BLEND_NLERP");
    if (in->blend_mode == IK_BLEND_NLERP && in->positions_only)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "ik: IK_BLEND_NLERP blends rotations, which positions_only leaves out");
    if ((unsigned)in->method > IK_METHOD_DAMPED_LEAST_SQUARES)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "ik: method: expected IK_METHOD_FABRIK, _CCD, _JACOBIAN_TRANSPOSE or "
                       "_DAMPED_LEAST_SQUARES");
    if (!isfinite(in->damping) || in->damping < 0.0f)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "ik: damping: expected a finite number >= 0");
    if (in->method != IK_METHOD_FABRIK) {
        /* These turn joints: nothing to solve without rotations, no positions to predict,
         * no translation of a root. */
        if (in->positions_only)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "ik: positions_only: only IK_METHOD_FABRIK solves without rotations");
        if (in->predict_warm_start)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "ik: predict_warm_start: only IK_METHOD_FABRIK predicts positions");
        if (in->root_mode == IK_ROOT_FREE)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "ik: IK_ROOT_FREE: only IK_METHOD_FABRIK moves the root");
    }
    return EM_OK;
}

/* Effector e of `out` (the earlier ones checked already): its joint (in the skeleton, no
 * earlier effector's, not a root kept in place), its weight (0 becomes 1), its chain
 * length. */
static enum em_result
check_effector(struct ik_solver_desc *out, int e, struct em_error *err)
{
    const struct sk_skeleton *sk = out->skeleton;
    struct ik_effector_desc *d = &out->effector[e];
    if (d->joint < 0 || d->joint >= sk->joint_count)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "ik: effector %d: joint %d is not in the skeleton (0..%d)", e, d->joint,
                       sk->joint_count - 1);
    for (int k = 0; k < e; ++k)
        if (out->effector[k].joint == d->joint)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "ik: effectors %d and %d are both joint \"%s\"", k, e,
                           sk->name[d->joint]);
    if (!isfinite(d->weight) || d->weight < 0.0f)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "ik: effector %d: weight: expected a finite number >= 0", e);
    if (d->chain_length < 0)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "ik: effector %d: chain_length: expected >= 0", e);
    if (d->weight == 0.0f)
        d->weight = 1.0f;
    if (d->joint == out->root_joint && out->root_mode != IK_ROOT_FREE)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "ik: effector %d is the root, which this root mode keeps in place", e);
    return EM_OK;
}

static enum em_result
resolve_desc(const struct ik_solver_desc *in, struct ik_solver_desc *out, struct em_error *err)
{
    *out = *in;
    enum em_result r = check_settings(in, err);
    if (r != EM_OK)
        return r;
    if (out->tolerance_m == 0.0f)
        out->tolerance_m = DEFAULT_TOLERANCE_M;
    if (out->max_iterations == 0)
        out->max_iterations = DEFAULT_MAX_ITERATIONS;
    for (int e = 0; e < in->effector_count; ++e)
        if ((r = check_effector(out, e, err)) != EM_OK)
            return r;
    const struct sk_skeleton *sk = in->skeleton;
    int inside = 0;
    for (int e = 0; e < in->effector_count; ++e)
        inside += ik_in_subtree(sk, out->effector[e].joint, in->root_joint);
    if (inside == 0)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "ik: no effector lies in the subtree of root_joint \"%s\"",
                       sk->name[in->root_joint]);
    return EM_OK;
}

/* Warns once, at creation, of each effector outside the solved subtree. */
static void
warn_ignored_effectors(const struct ik_solver_desc *d)
{
    for (int e = 0; e < d->effector_count; ++e)
        if (!ik_in_subtree(d->skeleton, d->effector[e].joint, d->root_joint))
            U_LOG_W("ik: effector %d (joint \"%s\") is outside the subtree of \"%s\" that "
                    "this solver solves: ignored",
                    e, d->skeleton->name[d->effector[e].joint], d->skeleton->name[d->root_joint]);
}

static void *
alloc_zero(size_t count, size_t size, bool *ok)
{
    void *p = calloc(count ? count : 1, size);
    *ok = *ok && p;
    return p;
}

static bool
alloc_nodes(struct ik_solver *s, int joint_count, int n)
{
    bool ok = true;
    const size_t nn = (size_t)n;
    s->joint = alloc_zero(nn, sizeof *s->joint, &ok);
    s->parent = alloc_zero(nn, sizeof *s->parent, &ok);
    s->node_of_joint = alloc_zero((size_t)joint_count, sizeof *s->node_of_joint, &ok);
    s->flags = alloc_zero(nn, sizeof *s->flags, &ok);
    s->length_m = alloc_zero(nn, sizeof *s->length_m, &ok);
    s->pull_weight = alloc_zero(nn, sizeof *s->pull_weight, &ok);
    s->tip = alloc_zero(nn, sizeof *s->tip, &ok);
    s->inv_chain_length_sq = alloc_zero(nn, sizeof *s->inv_chain_length_sq, &ok);
    s->effector = alloc_zero(nn, sizeof *s->effector, &ok);
    s->solve_child = alloc_zero(nn, sizeof *s->solve_child, &ok);
    s->child_start = alloc_zero(nn, sizeof *s->child_start, &ok);
    s->child_count = alloc_zero(nn, sizeof *s->child_count, &ok);
    s->children = alloc_zero(nn, sizeof *s->children, &ok);
    s->solve_dir = alloc_zero(nn, sizeof *s->solve_dir, &ok);
    s->limit_dir = alloc_zero(nn, sizeof *s->limit_dir, &ok);
    s->twist_share = alloc_zero(nn, sizeof *s->twist_share, &ok);
    s->pole = alloc_zero(nn, sizeof *s->pole, &ok);
    s->limit = alloc_zero(nn, sizeof *s->limit, &ok);
    s->forward_order = alloc_zero(nn, sizeof *s->forward_order, &ok);
    s->forward_steps = alloc_zero(nn, sizeof *s->forward_steps, &ok);
    s->backward_steps = alloc_zero(nn, sizeof *s->backward_steps, &ok);
    s->sub_bases = alloc_zero(nn, sizeof *s->sub_bases, &ok);
    s->group_of = alloc_zero(nn, sizeof *s->group_of, &ok);
    s->group_nodes = alloc_zero(nn, sizeof *s->group_nodes, &ok);
    s->group_effectors = alloc_zero(IK_MAX_EFFECTORS, sizeof *s->group_effectors, &ok);
    s->groups = alloc_zero(nn, sizeof *s->groups, &ok);
    s->backward_order = alloc_zero(nn, sizeof *s->backward_order, &ok);
    s->inactive = alloc_zero((size_t)joint_count, sizeof *s->inactive, &ok);
    s->shift = alloc_zero((size_t)joint_count, sizeof *s->shift, &ok);
    s->pos = alloc_zero(nn, sizeof *s->pos, &ok);
    s->acc = alloc_zero(nn, sizeof *s->acc, &ok);
    s->rot = alloc_zero(nn, sizeof *s->rot, &ok);
    s->local = alloc_zero(nn, sizeof *s->local, &ok);
    s->last_result = alloc_zero(nn, sizeof *s->last_result, &ok);
    s->last_motion = alloc_zero(nn, sizeof *s->last_motion, &ok);
    return ok;
}

void
ik_solver_destroy(struct ik_solver **solver)
{
    if (!solver || !*solver)
        return;
    struct ik_solver *s = *solver;
    free(s->joint);
    free(s->parent);
    free(s->node_of_joint);
    free(s->flags);
    free(s->length_m);
    free(s->pull_weight);
    free(s->tip);
    free(s->inv_chain_length_sq);
    free(s->effector);
    free(s->solve_child);
    free(s->child_start);
    free(s->child_count);
    free(s->children);
    free(s->solve_dir);
    free(s->limit_dir);
    free(s->twist_share);
    free(s->pole);
    free(s->limit);
    free(s->forward_order);
    free(s->forward_steps);
    free(s->backward_steps);
    free(s->sub_bases);
    free(s->group_of);
    free(s->group_nodes);
    free(s->group_effectors);
    free(s->groups);
    free(s->backward_order);
    free(s->inactive);
    free(s->shift);
    free(s->pos);
    free(s->acc);
    free(s->rot);
    free(s->local);
    free(s->last_result);
    free(s->last_motion);
    ik_controls_fini(s);
    ik_joints_fini(s);
    free(s);
    *solver = NULL;
}

/* Marks the joints each effector may move (`moves`) and the tops of their paths
 * (`on_path`); returns the number of joints on any path. */
static int
mark_paths(const struct ik_solver_desc *d, unsigned char *moves, unsigned char *on_path)
{
    const struct sk_skeleton *sk = d->skeleton;
    const int root = d->root_joint;
    for (int e = 0; e < d->effector_count; ++e) {
        int j = d->effector[e].joint;
        const int limit = d->effector[e].chain_length;
        if (!ik_in_subtree(sk, j, root))
            continue;
        on_path[j] = 1;
        for (int bones = 0; j != root && (limit == 0 || bones < limit); ++bones) {
            moves[j] = 1;
            j = sk->parent[j];
            on_path[j] = 1;
        }
    }
    if (d->root_mode == IK_ROOT_FREE && on_path[root])
        moves[root] = 1;
    int n = 0;
    for (int j = 0; j < sk->joint_count; ++j)
        n += on_path[j];
    return n;
}

static void
unit_offset(const struct sk_skeleton *sk, int child, float *out)
{
    const float up[3] = {0, 1, 0};
    m_vec3_normalize_or(sk->offset_m[child], up, out);
}

/* Orders the passes level by level, so that the chains of a tree, which do not depend on
 * each other, are interleaved and the processor overlaps their work: the forward pass
 * by height (a node after all its children), the backward pass by depth (a node after
 * its parent). A single chain keeps its own order either way. */
static void
order_by_levels(struct ik_solver *s)
{
    const int n = s->node_count;
    int *level = calloc(n > 0 ? (size_t)n : 1, sizeof *level);
    if (!level) {
        for (int k = 0; k < n; ++k) {
            s->forward_order[k] = n - 1 - k;
            s->backward_order[k] = k;
        }
        return;
    }
    int max_level = 0;
    for (int k = n - 1; k >= 0; --k) { /* height: children have larger indices */
        level[k] = 0;
        for (int i = 0; i < s->child_count[k]; ++i) {
            const int h = level[s->children[s->child_start[k] + i]] + 1;
            level[k] = h > level[k] ? h : level[k];
        }
        max_level = level[k] > max_level ? level[k] : max_level;
    }
    int m = 0;
    for (int h = 0; h <= max_level; ++h)
        for (int k = n - 1; k >= 0; --k)
            if (level[k] == h)
                s->forward_order[m++] = k;
    max_level = 0;
    for (int k = 0; k < n; ++k) { /* depth: parents have smaller indices */
        level[k] = s->parent[k] >= 0 ? level[s->parent[k]] + 1 : 0;
        max_level = level[k] > max_level ? level[k] : max_level;
    }
    m = 0;
    for (int d = 0; d <= max_level; ++d)
        for (int k = 0; k < n; ++k)
            if (level[k] == d)
                s->backward_order[m++] = k;
    free(level);
}

/* Splits the nodes into groups that can be solved apart (see struct ik_group). */
static void
assign_groups(struct ik_solver *s)
{
    /* CCD and the Jacobian methods turn every base but a fixed root, limits or not. */
    const bool turns = !s->desc.ignore_limits || s->desc.method != IK_METHOD_FABRIK;
    s->group_count = 0;
    for (int k = 0; k < s->node_count; ++k) {
        const int p = s->parent[k];
        const bool still_base =
            (s->flags[k] & NODE_BASE) && (!turns || (s->flags[k] & NODE_ROTATION_FIXED));
        if (p < 0)
            s->group_of[k] = still_base ? -1 : s->group_count++;
        else if (s->group_of[p] < 0)
            s->group_of[k] = s->group_count++;
        else
            s->group_of[k] = s->group_of[p];
    }
}

/* Stable partition of `items` (count entries of `size` bytes) by group, using `group_of_item`
 * to read each item's group; writes each group's range through `set_range`. */
#define PARTITION_BY_GROUP(items, count, type, group_expr, begin_field, end_field)                 \
    do {                                                                                           \
        type *sorted_ = malloc((size_t)((count) > 0 ? (count) : 1) * sizeof(type));                \
        int n_ = 0;                                                                                \
        for (int g_ = 0; g_ < s->group_count; ++g_) {                                              \
            s->groups[g_].begin_field = n_;                                                        \
            for (int i_ = 0; i_ < (count); ++i_) {                                                 \
                const type item = (items)[i_];                                                     \
                if ((group_expr) == g_ && sorted_)                                                 \
                    sorted_[n_++] = item;                                                          \
            }                                                                                      \
            s->groups[g_].end_field = n_;                                                          \
        }                                                                                          \
        if (sorted_)                                                                               \
            memcpy((items), sorted_, (size_t)n_ * sizeof(type));                                   \
        free(sorted_);                                                                             \
        (count) = n_;                                                                              \
    } while (0)

/* For a hinge node k (an elbow) pulling its parent: the least distance between the
 * parent and k's child that the hinge's largest bend leaves (law of cosines). */
static void
keep_fold(const struct ik_solver *s, int k, struct forward_step *step)
{
    const struct sk_limit *limit = &s->sk->limit[s->joint[k]];
    const int g = s->solve_child[k];
    if (limit->kind != SK_LIMIT_HINGE || g < 0)
        return;
    const float bend = fminf(fmaxf(fabsf(limit->min_rad), fabsf(limit->max_rad)), M_PI_F);
    const float a = s->length_m[k], b = s->length_m[g];
    const float least_sq = a * a + b * b + 2.0f * a * b * cosf(bend);
    if (!(least_sq > (a - b) * (a - b) + 1e-12f))
        return; /* it folds flat */
    step->op |= OP_KEEP_FOLD;
    step->tip = g;
    step->inv_chain_length_sq = least_sq;
}

/* Whether group g is a plain chain (ik_group.plain_chain). */
static bool
is_plain_chain(const struct ik_solver *s, const struct ik_group *g)
{
    if (!s->desc.ignore_limits || g->sub_base_end != g->sub_base_begin ||
        g->effector_end - g->effector_begin != 1 || g->node_end - g->node_begin < 1)
        return false;
    const int first = s->group_nodes[g->node_begin];
    if (s->parent[first] < 0)
        return false; /* a free root: no base to hang from */
    for (int i = g->node_begin; i < g->node_end; ++i) {
        const int k = s->group_nodes[i];
        if (k != first + (i - g->node_begin) || (i > g->node_begin && s->parent[k] != k - 1) ||
            s->sk->limit[s->joint[k]].kind == SK_LIMIT_HINGE)
            return false;
    }
    const int tip = first + (g->node_end - g->node_begin) - 1;
    return s->effector[tip] == s->group_effectors[g->effector_begin] && s->child_count[tip] == 0;
}

/* Turns the node orders into the flat step lists the passes run, grouped. */
static void
compile_steps(struct ik_solver *s)
{
    s->forward_step_count = s->backward_step_count = s->sub_base_count = 0;
    for (int i = 0; i < s->node_count; ++i) {
        const int k = s->forward_order[i];
        const unsigned f = s->flags[k];
        const int p = s->parent[k];
        struct forward_step step = {.node = k,
                                    .parent = p,
                                    .effector = s->effector[k],
                                    .tip = s->tip[k],
                                    .length_m = s->length_m[k],
                                    .inv_chain_length_sq = s->inv_chain_length_sq[k],
                                    .pull_weight = s->pull_weight[k]};
        if (f & NODE_SUB_BASE)
            step.op |= OP_SET_AVERAGE;
        else if ((f & NODE_EFFECTOR) && !(f & NODE_BASE))
            step.op |= OP_SET_TARGET;
        if (p >= 0 && !(f & NODE_BASE) && !(s->flags[p] & NODE_BASE))
            step.op |= (s->flags[p] & NODE_SUB_BASE) ? OP_ASK_SUB_BASE : OP_PULL_PARENT;
        if ((step.op & OP_PULL_PARENT) && !s->desc.ignore_limits)
            keep_fold(s, k, &step);
        if (step.op)
            s->forward_steps[s->forward_step_count++] = step;
        if (f & NODE_SUB_BASE)
            s->sub_bases[s->sub_base_count++] = k;
    }
    for (int i = 0; i < s->node_count; ++i) {
        const int k = s->backward_order[i];
        if (s->parent[k] < 0)
            continue;
        s->backward_steps[s->backward_step_count++] =
            (struct backward_step){.node = k,
                                   .parent = s->parent[k],
                                   .length_m = s->length_m[k],
                                   .has_pole = s->pole[k] >= 0};
    }
    assign_groups(s);
    PARTITION_BY_GROUP(s->forward_steps, s->forward_step_count, struct forward_step,
                       s->group_of[item.node], forward_begin, forward_end);
    PARTITION_BY_GROUP(s->backward_steps, s->backward_step_count, struct backward_step,
                       s->group_of[item.node], backward_begin, backward_end);
    PARTITION_BY_GROUP(s->sub_bases, s->sub_base_count, int, s->group_of[item], sub_base_begin,
                       sub_base_end);
    int node_count = 0;
    for (int k = 0; k < s->node_count; ++k)
        s->group_nodes[node_count++] = k;
    PARTITION_BY_GROUP(s->group_nodes, node_count, int, s->group_of[item], node_begin, node_end);
    int effector_count = s->desc.effector_count;
    for (int e = 0; e < effector_count; ++e)
        s->group_effectors[e] = e;
    PARTITION_BY_GROUP(s->group_effectors, effector_count, int,
                       (s->effector_node[item] >= 0 ? s->group_of[s->effector_node[item]] : -1),
                       effector_begin, effector_end);
    for (int g = 0; g < s->group_count; ++g)
        s->groups[g].plain_chain = is_plain_chain(s, &s->groups[g]);
}

/* The share of a child's twist its parent takes: in proportion to their twist ranges
 * (half each when either turns freely, none when the parent is a hinge). */
static float
twist_share(const struct sk_limit *parent, const struct sk_limit *child)
{
    if (parent->kind == SK_LIMIT_HINGE)
        return 0.0f;
    if (parent->kind != SK_LIMIT_BALL || child->kind != SK_LIMIT_BALL)
        return 0.5f;
    const float a = parent->max_rad - parent->min_rad, b = child->max_rad - child->min_rad;
    return a + b > 1e-6f ? a / (a + b) : 0.0f;
}

/* A node per joint on a path, parents first: its joint, parent, length, base and root
 * flags. */
static void
add_nodes(struct ik_solver *s, const unsigned char *moves, const unsigned char *on_path)
{
    const struct sk_skeleton *sk = s->sk;
    const struct ik_solver_desc *d = &s->desc;
    int n = 0;
    for (int j = 0; j < sk->joint_count; ++j) {
        s->node_of_joint[j] = -1;
        if (!on_path[j])
            continue;
        s->node_of_joint[j] = n;
        s->joint[n] = j;
        const int pj = sk->parent[j];
        s->parent[n] = pj >= 0 ? s->node_of_joint[pj] : -1;
        s->length_m[n] = sk->length_m[j];
        s->effector[n] = -1;
        s->solve_child[n] = -1;
        s->pole[n] = -1;
        if (!moves[j])
            s->flags[n] |= NODE_BASE;
        if (j == d->root_joint && d->root_mode == IK_ROOT_FIXED)
            s->flags[n] |= NODE_ROTATION_FIXED;
        ++n;
    }
    s->node_count = n;
}

/* Each effector's node, and the weight each node pulls its parent with: that of the
 * effectors below it. */
static void
attach_effectors(struct ik_solver *s)
{
    const struct ik_solver_desc *d = &s->desc;
    for (int e = 0; e < d->effector_count; ++e) {
        const int k = s->node_of_joint[d->effector[e].joint];
        s->effector_node[e] = k;
        if (k < 0)
            continue; /* outside the subtree: ignored */
        s->effector[k] = e;
        s->flags[k] |= NODE_EFFECTOR;
        for (int a = k; a >= 0; a = s->parent[a])
            s->pull_weight[a] += d->effector[e].weight;
    }
}

/* Children lists: a node's children follow it, so count then fill in order. */
static void
link_children(struct ik_solver *s)
{
    const int n = s->node_count;
    for (int k = 0; k < n; ++k)
        if (s->parent[k] >= 0)
            s->child_count[s->parent[k]]++;
    int start = 0;
    for (int k = 0; k < n; ++k) {
        s->child_start[k] = start;
        start += s->child_count[k];
        s->child_count[k] = 0;
    }
    for (int k = 0; k < n; ++k) {
        const int p = s->parent[k];
        if (p >= 0)
            s->children[s->child_start[p] + s->child_count[p]++] = k;
    }
}

/* Sub-bases (where two sources meet), the bone that sets each node's rotation, and its
 * limit's frame. */
static void
set_solve_bones(struct ik_solver *s)
{
    const struct sk_skeleton *sk = s->sk;
    for (int k = 0; k < s->node_count; ++k) {
        const int j = s->joint[k];
        const int sources = s->child_count[k] + (s->effector[k] >= 0 ? 1 : 0);
        if (sources >= 2 && !(s->flags[k] & NODE_BASE))
            s->flags[k] |= NODE_SUB_BASE;
        /* The bone that sets the node's rotation: the skeleton's primary child when it is
         * on a path, else the first child on a path. */
        if (s->child_count[k] > 0) {
            int c = s->children[s->child_start[k]];
            for (int i = 0; i < s->child_count[k]; ++i)
                if (s->joint[s->children[s->child_start[k] + i]] == sk->primary_child[j])
                    c = s->children[s->child_start[k] + i];
            s->solve_child[k] = c;
            unit_offset(sk, s->joint[c], s->solve_dir[k]);
        }
        if (sk->primary_child[j] >= 0)
            unit_offset(sk, sk->primary_child[j], s->limit_dir[k]);
        else
            m_vec3_set(s->limit_dir[k], 0, 1, 0);
        ik_fast_limit_init(&s->limit[k], &sk->limit[j], s->limit_dir[k]);
    }
}

/* Nodes whose solve child is a hinge with a child of its own, and the share of a
 * rotation effector's twist a single-child parent takes. */
static void
set_twist_shares(struct ik_solver *s)
{
    const struct sk_skeleton *sk = s->sk;
    const struct ik_solver_desc *d = &s->desc;
    for (int k = 0; k < s->node_count; ++k) {
        const int c = s->solve_child[k];
        if (c >= 0 && sk->limit[s->joint[c]].kind == SK_LIMIT_HINGE && s->solve_child[c] >= 0)
            s->flags[k] |= NODE_HINGE_CHILD;
        if (c < 0 || s->child_count[k] != 1 || (s->flags[k] & NODE_HINGE_CHILD))
            continue;
        const struct sk_limit *lk = &sk->limit[s->joint[k]], *lc = &sk->limit[s->joint[c]];
        if ((s->flags[c] & NODE_EFFECTOR) && d->effector[s->effector[c]].orientation)
            s->twist_share[k] = twist_share(lk, lc);
    }
}

/* A chain below a sub-base runs down single children to an effector or the next
 * sub-base: its tip and length give its tension. */
static void
measure_chains(struct ik_solver *s)
{
    for (int k = 0; k < s->node_count; ++k) {
        const int p = s->parent[k];
        s->tip[k] = -1;
        if (p < 0 || !(s->flags[p] & NODE_SUB_BASE))
            continue;
        int t = k;
        float length = s->length_m[k];
        while (!(s->flags[t] & (NODE_EFFECTOR | NODE_SUB_BASE)) && s->child_count[t] == 1) {
            t = s->children[s->child_start[t]];
            length += s->length_m[t];
        }
        s->tip[k] = t;
        s->inv_chain_length_sq[k] = 1.0f / (length * length);
    }
}

/* The joints of the subtree that are not nodes but move with them (carried along). */
static void
list_inactive(struct ik_solver *s)
{
    const struct sk_skeleton *sk = s->sk;
    const struct ik_solver_desc *d = &s->desc;
    s->inactive_count = 0;
    for (int j = 0; j < sk->joint_count; ++j) {
        if (s->node_of_joint[j] >= 0 || !ik_in_subtree(sk, j, d->root_joint))
            continue;
        /* With positions only, a subtree hanging from a base that never moves (a pinned
         * root, without rotations) stays where it is: no need to carry it. */
        if (s->desc.positions_only) {
            int a = sk->parent[j];
            while (a >= 0 && s->node_of_joint[a] < 0)
                a = sk->parent[a];
            if (a < 0 || (s->flags[s->node_of_joint[a]] & NODE_BASE))
                continue;
        }
        s->inactive[s->inactive_count++] = j;
    }
}

/* Fills node topology: parents, children lists, flags, weights, directions, then the
 * levels and steps the passes run. */
static void
build_nodes(struct ik_solver *s, const unsigned char *moves, const unsigned char *on_path)
{
    add_nodes(s, moves, on_path);
    attach_effectors(s);
    link_children(s);
    set_solve_bones(s);
    set_twist_shares(s);
    measure_chains(s);
    order_by_levels(s);
    compile_steps(s);
    list_inactive(s);
}

enum em_result
ik_solver_create(const struct ik_solver_desc *desc, struct ik_solver **out_solver,
                 struct em_error *err)
{
    *out_solver = NULL;
    struct ik_solver_desc resolved;
    enum em_result r = resolve_desc(desc, &resolved, err);
    if (r != EM_OK)
        return r;
    const struct sk_skeleton *sk = resolved.skeleton;
    unsigned char *marks = calloc(2 * (size_t)sk->joint_count, 1);
    struct ik_solver *s = calloc(1, sizeof *s);
    if (!marks || !s) {
        free(marks);
        free(s);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "ik: out of memory");
    }
    s->desc = resolved;
    s->sk = sk;
    s->tolerance_m = resolved.tolerance_m;
    s->stall_m = resolved.stall_m;
    const int n = mark_paths(&resolved, marks, marks + sk->joint_count);
    if (!alloc_nodes(s, sk->joint_count, n)) {
        free(marks);
        ik_solver_destroy(&s);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "ik: out of memory");
    }
    build_nodes(s, marks, marks + sk->joint_count);
    warn_ignored_effectors(&resolved);
    free(marks);
    if (!ik_controls_init(s) || !ik_joints_init(s)) {
        ik_solver_destroy(&s);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "ik: out of memory");
    }
    for (int e = 0; e < resolved.effector_count; ++e) {
        m_vec3_copy(sk->rest_position_m[resolved.effector[e].joint], s->target[e]);
        m_quat_identity(s->target_rotation[e]);
    }
    *out_solver = s;
    return EM_OK;
}

void
ik_solver_get_desc(const struct ik_solver *s, struct ik_solver_desc *out_desc)
{
    *out_desc = s->desc;
}

enum em_result
ik_solver_set_target(struct ik_solver *s, int effector, const float *position_m,
                     const float *orientation)
{
    if (effector < 0 || effector >= s->desc.effector_count)
        return EM_ERROR_INVALID_ARGUMENT;
    if (!position_m || !m_vec3_is_finite(position_m))
        return EM_ERROR_INVALID_ARGUMENT;
    if (orientation) {
        if (!m_quat_is_finite(orientation) || !(m_quat_dot(orientation, orientation) > 0.5f))
            return EM_ERROR_INVALID_ARGUMENT;
    }
    m_vec3_copy(position_m, s->target[effector]);
    s->has_target_rotation[effector] = false;
    if (orientation && s->desc.effector[effector].orientation) {
        m_quat_copy(orientation, s->target_rotation[effector]);
        m_quat_normalize(s->target_rotation[effector]);
        s->has_target_rotation[effector] = true;
    }
    return EM_OK;
}

static enum em_result
set_pole(struct ik_solver *s, int joint, const float *value, bool is_direction)
{
    if (joint < 0 || joint >= s->sk->joint_count || s->sk->limit[joint].kind != SK_LIMIT_HINGE)
        return EM_ERROR_INVALID_ARGUMENT;
    const int k = s->node_of_joint[joint];
    int slot = -1;
    for (int i = 0; i < s->pole_count; ++i)
        if (s->pole_joint[i] == joint)
            slot = i;
    if (!value) {
        if (slot >= 0)
            s->pole_set[slot] = false;
        return EM_OK;
    }
    if (!m_vec3_is_finite(value) || (is_direction && !(m_vec3_dot(value, value) > 1e-12f)))
        return EM_ERROR_INVALID_ARGUMENT;
    if (slot < 0) {
        if (s->pole_count >= IK_MAX_POLES)
            return EM_ERROR_LIMIT;
        slot = s->pole_count++;
        s->pole_joint[slot] = joint;
        if (k >= 0) {
            s->pole[k] = slot;
            for (int i = 0; i < s->backward_step_count; ++i)
                if (s->backward_steps[i].node == k)
                    s->backward_steps[i].has_pole = true;
        }
    }
    m_vec3_copy(value, s->pole_position[slot]);
    s->pole_is_direction[slot] = is_direction;
    s->pole_set[slot] = true;
    return EM_OK;
}

enum em_result
ik_solver_set_pole(struct ik_solver *s, int joint, const float *position_m)
{
    return set_pole(s, joint, position_m, false);
}

enum em_result
ik_solver_set_pole_direction(struct ik_solver *s, int joint, const float *direction)
{
    return set_pole(s, joint, direction, true);
}
