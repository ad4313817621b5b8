/*
 * FABRIK on trees with sub-bases and joint limits (see include/embody/ik.h).
 *
 * Compilation keeps only the joints on some effector's path ("nodes"), in the skeleton's
 * depth-first order, so that one reverse loop over the nodes is the forward-reaching
 * pass (children before parents: a sub-base has heard from all its chains before it is
 * placed) and one forward loop is the backward-reaching pass (parents first).
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
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "embody/ik.h"
#include "embody/m_math.h"
#include "ik/ik_internal.h"

#define DEFAULT_TOLERANCE_M 1e-3f
#define DEFAULT_MAX_ITERATIONS 20
/* predict_warm_start moves each node on by this fraction of its last motion. Below 1 on
 * purpose: motion along directions no target constrains (an elbow swinging about the
 * shoulder-hand line) is never pulled back by the iterations, so it would coast on for
 * ever at 1 and grow beyond; at 0.8 it dies away within a few frames (0.9 saves a little
 * more here but coasts twice as long). ik_bench, P3_human3_track, mean iterations:
 * 0.5 -> 2.01, 0.8 -> 1.38, 0.9 -> 1.18, 1.0 -> 1.29, 1.1 -> 2.57 (without: 2.88). */
#define PREDICTION_GAIN 0.8f

enum node_flags {
    NODE_BASE = 1u << 0,
    NODE_SUB_BASE = 1u << 1,
    NODE_EFFECTOR = 1u << 2,
    NODE_ROTATION_FIXED = 1u << 3,
    NODE_HINGE_CHILD = 1u << 4, /* its solve child is a hinge with a child of its own */
};

/* One node's work in the forward pass, compiled so the pass is a flat loop. */
enum forward_op {
    OP_SET_TARGET = 1u << 0,   /* an effector: go to the target first */
    OP_SET_AVERAGE = 1u << 1,  /* a sub-base: go to the weighted average first */
    OP_PULL_PARENT = 1u << 2,  /* then pull the parent to the bone's length */
    OP_ASK_SUB_BASE = 1u << 3, /* then add a request to the parent sub-base instead */
};

struct forward_step {
    int node;
    int parent;
    int effector;      /* OP_SET_TARGET */
    int tip;           /* OP_ASK_SUB_BASE: the end of this chain, for its tension */
    float length_m;
    float inv_chain_length_sq; /* OP_ASK_SUB_BASE */
    float pull_weight;
    unsigned op;
};

/* One node placed in the backward pass (nodes with a parent only). */
struct backward_step {
    int node;
    int parent;
    float length_m;
    bool has_pole;
};

/* Nodes that move together. Below a base that does not turn (a fixed root, or any base
 * without limits, where nothing turns), each child's subtree is its own problem: the
 * legs below a pinned pelvis do not depend on the arms. Each group iterates until its own
 * effectors are done. Ranges index the solver's step, node, sub-base and effector lists,
 * which are sorted by group. */
struct ik_group {
    int forward_begin, forward_end;
    int backward_begin, backward_end;
    int node_begin, node_end;
    int sub_base_begin, sub_base_end;
    int effector_begin, effector_end;
};

struct ik_solver {
    struct ik_solver_desc desc;
    const struct sk_skeleton *sk;
    float tolerance_m;
    float stall_m; /* progress per iteration below which a group stops */

    int node_count;
    int *joint;            /* node -> skeleton joint */
    int *parent;           /* node -> parent node, or -1 */
    int *node_of_joint;    /* skeleton joint -> node, or -1 */
    unsigned *flags;
    float *length_m;       /* bone length to the parent joint */
    float *pull_weight;    /* weight of this node's request at its parent */
    int *tip;              /* for a child of a sub-base: the end of its chain */
    float *inv_chain_length_sq; /* for a child of a sub-base: 1 / (its chain's length)^2 */
    int *effector;         /* node -> effector index, or -1 */
    int *solve_child;      /* node whose direction sets this node's rotation, or -1 */
    int *child_start;      /* active children of a node: children[child_start..+count] */
    int *child_count;
    int *children;
    float (*solve_dir)[3]; /* rest direction to solve_child, unit, in the node's frame */
    float (*limit_dir)[3]; /* rest direction of the skeleton's primary bone, unit */
    int *pole;             /* node -> pole slot for hinge nodes, or -1 */
    struct ik_fast_limit *limit; /* node -> its joint's limit, compiled */
    int *forward_order;    /* nodes by height above their chain tips: children first */
    struct forward_step *forward_steps;
    int forward_step_count;
    struct backward_step *backward_steps;
    int backward_step_count;
    int *sub_bases;
    int sub_base_count;
    int *group_of;         /* node -> group, or -1 for a base that never moves */
    int *group_nodes;      /* nodes by group, parents first within a group */
    int *group_effectors;  /* effectors by group */
    struct ik_group *groups;
    int group_count;
    int *backward_order;   /* nodes by depth: parents first */
    int inactive_count;
    int *inactive;         /* joints off every path, parents first: carried along by FK */
    float (*shift)[3];     /* per joint: how far it moved (positions_only) */

    /* Working state, sized once. */
    float (*pos)[3];
    float (*acc)[4];
    float (*rot)[4];   /* global rotations */
    float (*local)[4]; /* local rotations */

    /* predict_warm_start: the last result's node positions and how far each node moved
     * in that solve (valid when that solve itself continued from the one before). */
    float (*last_result)[3];
    float (*last_motion)[3];
    bool has_last_result;
    bool has_last_motion;
    bool may_predict; /* this solve continues the last, whose motion is known */

    float target[IK_MAX_EFFECTORS][3];
    float target_rotation[IK_MAX_EFFECTORS][4];
    bool has_target_rotation[IK_MAX_EFFECTORS];
    int effector_node[IK_MAX_EFFECTORS];

    int pole_joint[IK_MAX_POLES];
    float pole_position[IK_MAX_POLES][3]; /* a point, or a direction when pole_is_direction */
    bool pole_set[IK_MAX_POLES];
    bool pole_is_direction[IK_MAX_POLES];
    int pole_count;
};

/* ---- Compilation ------------------------------------------------------------------ */

static enum em_result
resolve_desc(const struct ik_solver_desc *in, struct ik_solver_desc *out, struct em_error *err)
{
    *out = *in;
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
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "ik: stall_m: expected a finite number >= 0");
    if (out->tolerance_m == 0.0f)
        out->tolerance_m = DEFAULT_TOLERANCE_M;
    if (out->max_iterations == 0)
        out->max_iterations = DEFAULT_MAX_ITERATIONS;
    for (int e = 0; e < in->effector_count; ++e) {
        struct ik_effector_desc *d = &out->effector[e];
        if (d->joint < 0 || d->joint >= sk->joint_count)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "ik: effector %d: joint %d is not in the skeleton (0..%d)", e,
                           d->joint, sk->joint_count - 1);
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
        if (d->joint == 0 && in->root_mode != IK_ROOT_FREE)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "ik: effector %d is the root, which this root mode keeps in place",
                           e);
    }
    return EM_OK;
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
    free(s);
    *solver = NULL;
}

/* Marks the joints each effector may move (`moves`) and the tops of their paths
 * (`on_path`); returns the number of joints on any path. */
static int
mark_paths(const struct ik_solver_desc *d, unsigned char *moves, unsigned char *on_path)
{
    const struct sk_skeleton *sk = d->skeleton;
    for (int e = 0; e < d->effector_count; ++e) {
        int j = d->effector[e].joint;
        const int limit = d->effector[e].chain_length;
        on_path[j] = 1;
        for (int bones = 0; sk->parent[j] >= 0 && (limit == 0 || bones < limit); ++bones) {
            moves[j] = 1;
            j = sk->parent[j];
            on_path[j] = 1;
        }
    }
    if (d->root_mode == IK_ROOT_FREE && on_path[0])
        moves[0] = 1;
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
    int *level = calloc((size_t)n, sizeof *level);
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
    const bool turns = !s->desc.ignore_limits;
    s->group_count = 0;
    for (int k = 0; k < s->node_count; ++k) {
        const int p = s->parent[k];
        const bool still_base = (s->flags[k] & NODE_BASE) &&
                                (!turns || (s->flags[k] & NODE_ROTATION_FIXED));
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
#define PARTITION_BY_GROUP(items, count, type, group_expr, begin_field, end_field)            \
    do {                                                                                     \
        type *sorted_ = malloc((size_t)((count) > 0 ? (count) : 1) * sizeof(type));           \
        int n_ = 0;                                                                          \
        for (int g_ = 0; g_ < s->group_count; ++g_) {                                        \
            s->groups[g_].begin_field = n_;                                                  \
            for (int i_ = 0; i_ < (count); ++i_) {                                           \
                const type item = (items)[i_];                                               \
                if ((group_expr) == g_ && sorted_)                                           \
                    sorted_[n_++] = item;                                                    \
            }                                                                                \
            s->groups[g_].end_field = n_;                                                    \
        }                                                                                    \
        if (sorted_)                                                                         \
            memcpy((items), sorted_, (size_t)n_ * sizeof(type));                             \
        free(sorted_);                                                                       \
        (count) = n_;                                                                        \
    } while (0)

/* Turns the node orders into the flat step lists the passes run, grouped. */
static void
compile_steps(struct ik_solver *s)
{
    s->forward_step_count = s->backward_step_count = s->sub_base_count = 0;
    for (int i = 0; i < s->node_count; ++i) {
        const int k = s->forward_order[i];
        const unsigned f = s->flags[k];
        const int p = s->parent[k];
        struct forward_step step = {.node = k, .parent = p, .effector = s->effector[k],
                                    .tip = s->tip[k], .length_m = s->length_m[k],
                                    .inv_chain_length_sq = s->inv_chain_length_sq[k],
                                    .pull_weight = s->pull_weight[k]};
        if (f & NODE_SUB_BASE)
            step.op |= OP_SET_AVERAGE;
        else if ((f & NODE_EFFECTOR) && !(f & NODE_BASE))
            step.op |= OP_SET_TARGET;
        if (p >= 0 && !(f & NODE_BASE) && !(s->flags[p] & NODE_BASE))
            step.op |= (s->flags[p] & NODE_SUB_BASE) ? OP_ASK_SUB_BASE : OP_PULL_PARENT;
        if (step.op)
            s->forward_steps[s->forward_step_count++] = step;
        if (f & NODE_SUB_BASE)
            s->sub_bases[s->sub_base_count++] = k;
    }
    for (int i = 0; i < s->node_count; ++i) {
        const int k = s->backward_order[i];
        if (s->parent[k] < 0)
            continue;
        s->backward_steps[s->backward_step_count++] = (struct backward_step){
            .node = k, .parent = s->parent[k], .length_m = s->length_m[k],
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
    PARTITION_BY_GROUP(s->group_nodes, node_count, int, s->group_of[item], node_begin,
                       node_end);
    int effector_count = s->desc.effector_count;
    for (int e = 0; e < effector_count; ++e)
        s->group_effectors[e] = e;
    PARTITION_BY_GROUP(s->group_effectors, effector_count, int,
                       s->group_of[s->effector_node[item]], effector_begin, effector_end);
}

/* Fills node topology: parents, children lists, flags, weights, directions. */
static void
build_nodes(struct ik_solver *s, const unsigned char *moves, const unsigned char *on_path)
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
        if (j == 0 && d->root_mode == IK_ROOT_FIXED)
            s->flags[n] |= NODE_ROTATION_FIXED;
        ++n;
    }
    s->node_count = n;
    for (int e = 0; e < d->effector_count; ++e) {
        const int k = s->node_of_joint[d->effector[e].joint];
        s->effector[k] = e;
        s->effector_node[e] = k;
        s->flags[k] |= NODE_EFFECTOR;
        /* A node pulls its parent with the weight of the effectors below it. */
        for (int a = k; a >= 0; a = s->parent[a])
            s->pull_weight[a] += d->effector[e].weight;
    }
    /* Children lists: a node's children follow it, so count then fill in order. */
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
    for (int k = 0; k < n; ++k) {
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
    for (int k = 0; k < n; ++k) {
        const int c = s->solve_child[k];
        if (c >= 0 && sk->limit[s->joint[c]].kind == SK_LIMIT_HINGE && s->solve_child[c] >= 0)
            s->flags[k] |= NODE_HINGE_CHILD;
    }
    /* A chain below a sub-base runs down single children to an effector or the next
     * sub-base: its tip and length give its tension. */
    for (int k = 0; k < n; ++k) {
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
    order_by_levels(s);
    compile_steps(s);
    s->inactive_count = 0;
    for (int j = 0; j < sk->joint_count; ++j) {
        if (s->node_of_joint[j] >= 0)
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
    free(marks);
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
    if (joint < 0 || joint >= s->sk->joint_count ||
        s->sk->limit[joint].kind != SK_LIMIT_HINGE)
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

/* ---- The passes ------------------------------------------------------------------- */

/* 1/sqrt(x) to about 2e-7 relative: the hardware estimate and one Newton step, which is
 * shorter than sqrt then divide on the passes' critical path. */
static inline float
inv_sqrt(float x)
{
#if defined(__SSE__)
    const float y = _mm_cvtss_f32(_mm_rsqrt_ss(_mm_set_ss(x)));
    return y * (1.5f - 0.5f * x * y * y);
#else
    return 1.0f / sqrtf(x);
#endif
}

/* length / sqrt(d2): the same Newton step, arranged so that the products that do not
 * wait for each other (length * y, d2 / 2 * y) run side by side. */
static inline float
length_over_sqrt(float d2, float length)
{
#if defined(__SSE__)
    const float half_d2 = 0.5f * d2;
    const float y = _mm_cvtss_f32(_mm_rsqrt_ss(_mm_set_ss(d2)));
    const float ly = length * y;
    const float hy = half_d2 * y;
    return ly * (1.5f - hy * y);
#else
    return length / sqrtf(d2);
#endif
}

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

/* Forward reaching: effectors to their targets, each node pulled toward its child at the
 * bone's length, sub-bases to the weighted average of their chains' requests. Walking up
 * a chain the next step is usually the parent just placed, so its position is carried
 * in registers (c) rather than read back from memory. */
static void
reach_forward(struct ik_solver *s, const struct ik_group *g)
{
    float (*pos)[3] = s->pos;
    float (*acc)[4] = s->acc;
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
        } else if (op & OP_SET_AVERAGE) {
            const float inv = 1.0f / acc[k][3];
            cx = pos[k][0] = acc[k][0] * inv;
            cy = pos[k][1] = acc[k][1] * inv;
            cz = pos[k][2] = acc[k][2] * inv;
        } else if (carried != k) {
            cx = pos[k][0], cy = pos[k][1], cz = pos[k][2];
        }
        if (!(op & (OP_PULL_PARENT | OP_ASK_SUB_BASE)))
            continue;
        const int p = step->parent;
        const float dx = pos[p][0] - cx, dy = pos[p][1] - cy, dz = pos[p][2] - cz;
        const float d2 = dx * dx + dy * dy + dz * dz;
        float rx = cx, ry = cy + step->length_m, rz = cz; /* coincident: any direction */
        if (d2 > 1e-20f) {
            const float scale = length_over_sqrt(d2, step->length_m);
            rx = cx + dx * scale;
            ry = cy + dy * scale;
            rz = cz + dz * scale;
        }
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

/* Moves a hinge node (elbow, knee) into the half-plane of its pole, about the line from
 * its parent to its child, keeping its distances to both. */
static void
swing_toward_pole(struct ik_solver *s, int hinge)
{
    const int slot = s->pole[hinge];
    if (slot < 0 || !s->pole_set[slot] || s->parent[hinge] < 0 || s->solve_child[hinge] < 0)
        return;
    const float *a = s->pos[s->parent[hinge]];
    const float *b = s->pos[s->solve_child[hinge]];
    float axis[3], rel[3], along[3], off[3], pole_off[3];
    m_vec3_sub(b, a, axis);
    if (!(m_vec3_normalize_or(axis, axis, axis) > M_TINY))
        return;
    m_vec3_sub(s->pos[hinge], a, rel);
    m_vec3_scale(axis, m_vec3_dot(rel, axis), along);
    m_vec3_sub(rel, along, off);
    if (s->pole_is_direction[slot])
        m_vec3_copy(s->pole_position[slot], pole_off);
    else
        m_vec3_sub(s->pole_position[slot], a, pole_off);
    m_vec3_muladd(pole_off, axis, -m_vec3_dot(pole_off, axis), pole_off);
    const float radius = m_vec3_length(off);
    if (!(m_vec3_normalize_or(pole_off, pole_off, pole_off) > M_TINY))
        return;
    /* A straight limb keeps a small bend toward the pole, so it knows its side. */
    const float r = radius > 1e-4f * s->length_m[hinge] ? radius : 1e-4f * s->length_m[hinge];
    for (int i = 0; i < 3; ++i)
        s->pos[hinge][i] = a[i] + along[i] + pole_off[i] * r;
}

/* Backward reaching without limits: each node back at its bone's length from its
 * parent, toward where the forward pass put it. The parent is usually the node just
 * placed, kept in registers (b). */
static void
reach_backward_free(struct ik_solver *s, const struct ik_group *g)
{
    float (*pos)[3] = s->pos;
    const struct backward_step *steps = s->backward_steps;
    float bx = 0.0f, by = 0.0f, bz = 0.0f;
    int placed = -1;
    for (int i = g->backward_begin; i < g->backward_end; ++i) {
        const struct backward_step *step = &steps[i];
        const int k = step->node, p = step->parent;
        if (step->has_pole)
            swing_toward_pole(s, k);
        if (p != placed)
            bx = pos[p][0], by = pos[p][1], bz = pos[p][2];
        const float dx = pos[k][0] - bx, dy = pos[k][1] - by, dz = pos[k][2] - bz;
        const float d2 = dx * dx + dy * dy + dz * dz;
        if (d2 > 1e-20f) {
            const float scale = length_over_sqrt(d2, step->length_m);
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

/* The world rotation of node k's parent frame. */
static const float *
parent_rotation(const struct ik_solver *s, const struct sk_pose *pose, int k)
{
    static const float identity[4] = {0, 0, 0, 1};
    const int p = s->parent[k];
    if (p >= 0)
        return s->rot[p];
    const int pj = s->sk->parent[s->joint[k]];
    return pj >= 0 ? pose->rotation[pj] : identity;
}

/* Twists node k (turning L about its bone, world direction d) so that its child, a hinge,
 * can bend onto the direction e the forward pass asks of the hinge's own bone.
 *
 * A turn about the hinge axis h keeps every direction's angle to h, so the hinge's bone,
 * which starts at f0 (its direction at hinge angle 0), can reach e only where
 * h . e = h . f0. Twisting by phi about d moves h; with h = h_par + h_perp (along and
 * across d), that condition reads A cos(phi) + B sin(phi) = C, with A = h_perp . e,
 * B = (d x h_perp) . e, C = h . f0 - (h . d)(d . e): phi = base +- spread, where
 * (cos, sin)(base) = (A, B) / R and cos(spread) = C / R. Of the two, the one whose bend
 * lies in the hinge's range is kept (the anatomical side), else the one nearer to it.
 * Everything is done with those cosines and sines, without trigonometric calls. A
 * straight limb (no plane to follow) keeps its twist. */
static void
align_hinge_plane(const struct ik_solver *s, int k, const float *parent_rot, float *L)
{
    const int c = s->solve_child[k];
    const int g = s->solve_child[c];
    const struct ik_fast_limit *hinge = &s->limit[c];
    float d[3], e[3];
    m_vec3_sub(s->pos[c], s->pos[k], d);
    m_vec3_sub(s->pos[g], s->pos[c], e);
    if (!(m_vec3_normalize_or(d, d, d) > M_TINY) || !(m_vec3_normalize_or(e, e, e) > M_TINY))
        return;
    float w[4], h0[3], f0[3];
    m_quat_mul(parent_rot, L, w);
    m_quat_rotate(w, hinge->axis, h0);
    m_quat_rotate(w, s->solve_dir[c], f0);
    const float hd = m_vec3_dot(h0, d);
    float h_perp[3], dxh[3];
    m_vec3_muladd(h0, d, -hd, h_perp);
    m_vec3_cross(d, h_perp, dxh);
    const float A = m_vec3_dot(h_perp, e), B = m_vec3_dot(dxh, e);
    const float C = m_vec3_dot(h0, f0) - hd * m_vec3_dot(d, e);
    const float R2 = A * A + B * B;
    if (R2 < 1e-8f)
        return;
    const float inv_r = 1.0f / sqrtf(R2);
    const float cb = A * inv_r, sb = B * inv_r;
    const float cs = m_clampf(C * inv_r, -1.0f, 1.0f);
    const float ss = sqrtf(fmaxf(0.0f, 1.0f - cs * cs));
    /* f0 across and along d, to turn it by phi without quaternions. */
    const float fd = m_vec3_dot(f0, d);
    float f_perp[3], dxf[3];
    m_vec3_muladd(f0, d, -fd, f_perp);
    m_vec3_cross(d, f_perp, dxf);
    float best_cos = 1.0f, best_sin = 0.0f, best_cost = INFINITY;
    for (int side = 0; side < 2; ++side) {
        const float sgn = side ? -1.0f : 1.0f;
        const float cp = cb * cs - sgn * sb * ss; /* cos(base + sgn * spread) */
        const float sp = sb * cs + sgn * cb * ss; /* sin(base + sgn * spread) */
        float h[3], f[3];
        for (int i = 0; i < 3; ++i) {
            h[i] = d[i] * hd + h_perp[i] * cp + dxh[i] * sp;
            f[i] = d[i] * fd + f_perp[i] * cp + dxf[i] * sp;
        }
        /* The bend about h from f to e, as a half-angle vector, checked against the
         * hinge's range like ik_fast_limit_apply. */
        float fp[3], ep[3], cr[3];
        m_vec3_muladd(f, h, -m_vec3_dot(f, h), fp);
        m_vec3_muladd(e, h, -m_vec3_dot(e, h), ep);
        m_vec3_cross(fp, ep, cr);
        float hs = m_vec3_dot(cr, h);
        float hw = sqrtf(m_vec3_dot(fp, fp) * m_vec3_dot(ep, ep)) + m_vec3_dot(fp, ep);
        if (hw < 0.0f) {
            hs = -hs;
            hw = -hw;
        }
        const float n = sqrtf(hs * hs + hw * hw);
        if (n > 1e-12f) {
            hs /= n;
            hw /= n;
        }
        const float below = hs * hinge->lo_cos - hw * hinge->lo_sin; /* >= 0 inside */
        const float above = hs * hinge->hi_cos - hw * hinge->hi_sin; /* <= 0 inside */
        /* Outside by how much (sines of half-angle overshoots), plus a little for the
         * size of the twist, so that between equals the smaller twist wins. */
        const float cost = fmaxf(0.0f, -below) + fmaxf(0.0f, above) + 1e-3f * (1.0f - cp);
        if (cost < best_cost) {
            best_cost = cost;
            best_cos = cp;
            best_sin = sp;
        }
    }
    /* The turn by phi about d, from cos(phi) and sin(phi) by half-angle formulas. */
    float d_local[3];
    m_quat_rotate_inv(parent_rot, d, d_local);
    const float half_cos = sqrtf(fmaxf(0.0f, 0.5f * (1.0f + best_cos)));
    float half_sin = sqrtf(fmaxf(0.0f, 0.5f * (1.0f - best_cos)));
    if (best_sin < 0.0f)
        half_sin = -half_sin;
    const float turn[4] = {d_local[0] * half_sin, d_local[1] * half_sin, d_local[2] * half_sin,
                           half_cos};
    m_quat_mul(turn, L, L);
}

/* Turns L about its bone so its other children point where the forward pass put them
 * (weighted least squares about the bone's axis). */
static void
fit_twist_to_children(const struct ik_solver *s, int k, const float *parent_rot, float *L)
{
    const int main_child = s->solve_child[k];
    float w[4], axis[3];
    m_quat_mul(parent_rot, L, w);
    m_vec3_sub(s->pos[main_child], s->pos[k], axis);
    if (!(m_vec3_normalize_or(axis, axis, axis) > M_TINY))
        return;
    float sin_sum = 0.0f, cos_sum = 0.0f;
    for (int i = 0; i < s->child_count[k]; ++i) {
        const int c = s->children[s->child_start[k] + i];
        if (c == main_child)
            continue;
        float now[3], want[3], cr[3];
        m_quat_rotate(w, s->sk->offset_m[s->joint[c]], now);
        m_vec3_sub(s->pos[c], s->pos[k], want);
        m_vec3_muladd(now, axis, -m_vec3_dot(now, axis), now);
        m_vec3_muladd(want, axis, -m_vec3_dot(want, axis), want);
        m_vec3_cross(now, want, cr);
        sin_sum += s->pull_weight[c] * m_vec3_dot(cr, axis);
        cos_sum += s->pull_weight[c] * m_vec3_dot(now, want);
    }
    if (!(sin_sum * sin_sum + cos_sum * cos_sum > 1e-20f))
        return;
    float axis_local[3], turn[4];
    m_quat_rotate_inv(parent_rot, axis, axis_local);
    m_quat_from_axis_angle(axis_local, atan2f(sin_sum, cos_sum), turn);
    m_quat_mul(turn, L, L);
}

/* The local rotation that points node k's bone where the forward pass put its child,
 * changing the previous rotation minimally (so twist carries over), then fitting the
 * other children and the hinge plane below. */
static void
solve_node_rotation(struct ik_solver *s, int k, const float *parent_rot, float *L)
{
    const int c = s->solve_child[k];
    if (c < 0)
        return; /* a leaf keeps its rotation */
    if (s->flags[k] & NODE_HINGE_CHILD)
        swing_toward_pole(s, c);
    float d[3], d_local[3], now[3], turn[4];
    m_vec3_sub(s->pos[c], s->pos[k], d);
    if (!(m_vec3_normalize_or(d, d, d) > M_TINY))
        return;
    m_quat_rotate_inv(parent_rot, d, d_local);
    m_quat_rotate(L, s->solve_dir[k], now);
    m_quat_from_to(now, d_local, turn);
    m_quat_mul(turn, L, L);
    if (s->child_count[k] > 1)
        fit_twist_to_children(s, k, parent_rot, L);
    if (s->flags[k] & NODE_HINGE_CHILD)
        align_hinge_plane(s, k, parent_rot, L);
    m_quat_normalize(L);
}

/* Backward reaching with limits: from the root outward, each node is turned as a rigid
 * frame toward where the forward pass put its children, its local rotation kept within
 * its limit, and its children placed rigidly from it. */
static void
reach_backward_limited(struct ik_solver *s, const struct sk_pose *pose, const struct ik_group *g)
{
    const struct sk_skeleton *sk = s->sk;
    for (int i = g->node_begin; i < g->node_end; ++i) {
        const int k = s->group_nodes[i];
        const unsigned f = s->flags[k];
        const int p = s->parent[k];
        if (p >= 0 && s->group_of[p] != s->group_of[k]) {
            /* The group's top hangs from a base that does not move or turn. */
            float off[3];
            m_quat_rotate(s->rot[p], sk->offset_m[s->joint[k]], off);
            m_vec3_add(s->pos[p], off, s->pos[k]);
        }
        const float *parent_rot = parent_rotation(s, pose, k);
        float *L = s->local[k];
        if (!(f & NODE_ROTATION_FIXED)) {
            const int e = s->effector[k];
            if (e >= 0 && s->has_target_rotation[e])
                m_quat_mul_conj_first(parent_rot, s->target_rotation[e], L);
            else
                solve_node_rotation(s, k, parent_rot, L);
            ik_fast_limit_apply(&s->limit[k], L);
        }
        m_quat_mul(parent_rot, L, s->rot[k]);
        for (int c_i = 0; c_i < s->child_count[k]; ++c_i) {
            const int c = s->children[s->child_start[k] + c_i];
            float off[3];
            m_quat_rotate(s->rot[k], sk->offset_m[s->joint[c]], off);
            m_vec3_add(s->pos[k], off, s->pos[c]);
        }
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

/* When the positions need no iteration, orientation targets still apply: a leaf effector
 * takes its target rotation (within its limit); one with chains below it gets a full
 * backward pass so its children follow. */
static void
apply_orientation_targets(struct ik_solver *s, const struct sk_pose *pose, const struct ik_group *g)
{
    for (int i = g->effector_begin; i < g->effector_end; ++i) {
        const int e = s->group_effectors[i];
        const int k = s->effector_node[e];
        if (!s->has_target_rotation[e] || (s->flags[k] & NODE_ROTATION_FIXED))
            continue;
        if (s->child_count[k] > 0) {
            reach_backward_limited(s, pose, g);
            return;
        }
        const float *parent_rot = parent_rotation(s, pose, k);
        m_quat_mul_conj_first(parent_rot, s->target_rotation[e], s->local[k]);
        ik_fast_limit_apply(&s->limit[k], s->local[k]);
        m_quat_mul(parent_rot, s->local[k], s->rot[k]);
    }
}

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

/* Turns the rotation `rot` by the shortest arc from unit `from` to unit `to`, then
 * renormalizes it (cheaply: the product of unit quaternions is unit but for rounding). */
static inline void
turn_toward(float *rot, const float *from, const float *to)
{
    float c[3], q[4];
    const float d = m_vec3_dot(from, to);
    if (d < -0.9999f) {
        m_quat_from_to(from, to, q);
    } else {
        m_vec3_cross(from, to, c);
        const float w = 1.0f + d;
        const float inv = inv_sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2] + w * w);
        m_quat_set(q, c[0] * inv, c[1] * inv, c[2] * inv, w * inv);
    }
    m_quat_mul(q, rot, rot);
    const float n2 = m_quat_dot(rot, rot);
    const float inv_n = inv_sqrt(n2);
    for (int i = 0; i < 4; ++i)
        rot[i] *= inv_n;
}

/* Without limits the rotations follow from the positions: each node turns minimally from
 * its starting rotation to point at its solve child. */
static void
derive_rotations(struct ik_solver *s, const struct sk_pose *pose)
{
    for (int k = 0; k < s->node_count; ++k) {
        const int e = s->effector[k];
        const int c = s->solve_child[k];
        const float *parent_rot = parent_rotation(s, pose, k);
        float *rot = s->rot[k];
        if (e >= 0 && s->has_target_rotation[e]) {
            m_quat_copy(s->target_rotation[e], rot);
        } else if (c >= 0) {
            float d[3], now[3];
            m_vec3_sub(s->pos[c], s->pos[k], d);
            const float d2 = m_vec3_dot(d, d);
            if (d2 > 1e-20f) {
                m_vec3_scale(d, inv_sqrt(d2), d);
                m_quat_rotate(rot, s->solve_dir[k], now);
                turn_toward(rot, now, d);
            }
        } else {
            m_quat_mul(parent_rot, s->local[k], rot);
        }
        /* Parents come first, so the parent's rotation is already final here. */
        m_quat_mul_conj_first(parent_rot, rot, s->local[k]);
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
    for (int i = 0; i < s->inactive_count; ++i) {
        const int j = s->inactive[i];
        const int p = sk->parent[j];
        if (p < 0)
            continue;
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
    float best = s->stall_m > 0.0f ? sqrtf(worst_sq) : 0.0f;
    while ((worst_sq > tolerance_sq || must_iterate) && iterations < s->desc.max_iterations) {
        must_iterate = false;
        reach_forward(s, g);
        if (limited)
            reach_backward_limited(s, pose, g);
        else
            reach_backward_free(s, g);
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
    if (limited && iterations == 0)
        apply_orientation_targets(s, pose, g);
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

void
ik_solver_solve(struct ik_solver *s, struct sk_pose *pose, struct ik_stats *out_stats)
{
    load_state(s, pose);
    const bool continued = s->desc.predict_warm_start && continues_last_result(s);
    s->may_predict = continued && s->has_last_motion;
    const bool limited = !s->desc.ignore_limits;
    int iterations = 0;
    for (int g = 0; g < s->group_count; ++g) {
        const int n = solve_group(s, pose, &s->groups[g]);
        iterations = n > iterations ? n : iterations;
    }
    if (!limited && !s->desc.positions_only)
        derive_rotations(s, pose);
    store_state(s, pose);
    if (s->desc.predict_warm_start)
        remember_result(s, continued);
    if (out_stats) {
        out_stats->iterations = iterations;
        out_stats->max_residual_m = 0.0f;
        for (int e = 0; e < s->desc.effector_count; ++e) {
            const float r = m_vec3_distance(s->pos[s->effector_node[e]], s->target[e]);
            out_stats->residual_m[e] = r;
            out_stats->max_residual_m = r > out_stats->max_residual_m ? r : out_stats->max_residual_m;
        }
        out_stats->converged = out_stats->max_residual_m <= s->tolerance_m;
    }
}
