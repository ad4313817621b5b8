/*
 * Internals of the ik module, shared by its files and its tests: the compiled solver
 * (ik_compile.c builds it; ik_passes.c, ik_rotations.c and ik_solver.c run it; ik_joints.c,
 * ik_ccd.c and ik_jacobian.c run the other methods on it) and joint
 * limits compiled for the solver's hot path (ik_limits.c). The public ik_limit_apply() is the
 * reference (clear, with trigonometry); the compiled form gives the same results without
 * trigonometry, using half-angle vectors: a rotation by angle a about an axis has quaternion (axis
 * sin(a/2), cos(a/2)), so with w >= 0 its half-angle lies in (-90, 90] degrees and comparing it
 * with a bound b/2 is the sign of sin(a/2 - b/2) = s cos(b/2) - w sin(b/2).
 */
#ifndef EMBODY_IK_INTERNAL_H
#define EMBODY_IK_INTERNAL_H

#include <math.h>
#include <stdbool.h>

#include "embody/ik.h"
#include "embody/m_math.h"
#include "embody/skeleton.h"

struct ik_fast_limit {
    enum sk_limit_kind kind;
    float axis[3];     /* hinge axis, or cone axis */
    float rest_dir[3]; /* the joint's primary bone at rest, unit */
    float cos_cone, sin_cone;
    float cone_rad, cos_far; /* beyond cos_far the clamp turns toward the axis */
    /* Half-angles of the range's ends (hinge angle or twist): sine and cosine. */
    float lo_sin, lo_cos, hi_sin, hi_cos;
};

/* Compiles a limit for a joint whose primary bone points along unit `rest_dir`. */
void
ik_fast_limit_init(struct ik_fast_limit *out, const struct sk_limit *limit, const float *rest_dir);

/* How far from a cone's axis a bone direction `angle_rad` from it ends when clamped: the
 * rim while the direction is nearer the rim than the point opposite the axis, then
 * linearly down to the axis itself at the opposite point. Nearest-point clamping would
 * jump from one side of the rim to the other as a direction crosses the point opposite
 * the axis; this never jumps. */
float
ik_cone_swing(float cone_rad, float angle_rad);

/* The same as ik_limit_apply() on the compiled limit; returns whether q changed. */
bool
ik_fast_limit_apply(const struct ik_fast_limit *limit, float *q);

/* ---- The compiled solver ------------------------------------------------------------ */

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
    /* With OP_PULL_PARENT at a hinge, limits on: the parent stays at least as far from the
     * hinge's child (`tip`) as the hinge's largest bend allows (`inv_chain_length_sq`
     * holds that distance squared), so the pass does not ask for a fold the hinge cannot
     * make. */
    OP_KEEP_FOLD = 1u << 4,
};

struct forward_step {
    int node;
    int parent;
    int effector; /* OP_SET_TARGET */
    int tip;      /* OP_ASK_SUB_BASE: the end of this chain, for its tension; OP_KEEP_FOLD:
                   * the hinge's child */
    float length_m;
    float inv_chain_length_sq; /* OP_ASK_SUB_BASE; OP_KEEP_FOLD: least distance squared */
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
    /* Without limits, a plain chain (one effector at its end, no sub-base, no hinge, each
     * node the parent of the next): the passes run as a textbook FABRIK loop on the
     * nodes, without the step lists. */
    bool plain_chain;
};

struct ik_solver {
    struct ik_solver_desc desc;
    const struct sk_skeleton *sk;
    float tolerance_m;
    float stall_m; /* progress per iteration below which a group stops */

    int node_count;
    int *joint;         /* node -> skeleton joint */
    int *parent;        /* node -> parent node, or -1 */
    int *node_of_joint; /* skeleton joint -> node, or -1 */
    unsigned *flags;
    float *length_m;            /* bone length to the parent joint */
    float *pull_weight;         /* weight of this node's request at its parent */
    int *tip;                   /* for a child of a sub-base: the end of its chain */
    float *inv_chain_length_sq; /* for a child of a sub-base: 1 / (its chain's length)^2 */
    int *effector;              /* node -> effector index, or -1 */
    int *solve_child;           /* node whose direction sets this node's rotation, or -1 */
    int *child_start;           /* active children of a node: children[child_start..+count] */
    int *child_count;
    int *children;
    float (*solve_dir)[3]; /* rest direction to solve_child, unit, in the node's frame */
    float (*limit_dir)[3]; /* rest direction of the skeleton's primary bone, unit */
    /* For a node whose only child takes an orientation target (a neck): the share of the
     * child's twist it takes, from the two joints' twist ranges; 0 for other nodes. */
    float *twist_share;
    int *pole;                   /* node -> pole slot for hinge nodes, or -1 */
    struct ik_fast_limit *limit; /* node -> its joint's limit, compiled */
    int *forward_order;          /* nodes by height above their chain tips: children first */
    struct forward_step *forward_steps;
    int forward_step_count;
    struct backward_step *backward_steps;
    int backward_step_count;
    int *sub_bases;
    int sub_base_count;
    int *group_of;        /* node -> group, or -1 for a base that never moves */
    int *group_nodes;     /* nodes by group, parents first within a group */
    int *group_effectors; /* effectors by group */
    struct ik_group *groups;
    int group_count;
    int *backward_order; /* nodes by depth: parents first */
    int inactive_count;
    int *inactive;     /* joints off every path, parents first: carried along by FK */
    float (*shift)[3]; /* per joint: how far it moved (positions_only) */

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

    /* Controls (ik_controls.c). */
    float (*original_local)[4]; /* per joint: the original pose's local rotations */
    float (*original_pos)[3];   /* per joint: its positions (positions_only) */
    float (*last_local)[4];     /* per node: the last result's local rotations */
    float (*last_pos)[3];       /* per node: its positions */
    bool has_last;
    float blend[IK_MAX_EFFECTORS];
    bool blending;             /* some effector's blend is below 1 */
    unsigned *effectors_below; /* per node: bit e for each effector at or below it */
    float *stiffness;          /* per node */
    unsigned *lock;            /* per node: enum ik_axis_lock bits */
    bool rotation_controls;    /* some node has a stiffness or a lock */
    float *max_stretch;        /* per node, for the bone to its parent */
    float *stretch_stiffness;  /* per node */
    bool stretching;           /* some bone may stretch */
    float *length_scale;       /* per node: this solve's stretch of its bone */
    float *rest_length_m;      /* per node: its bone's own length */
    bool *swing_failed;        /* per node: its limb swing found no angle in this solve */

    /* CCD and the Jacobian methods (ik_joints.c, ik_ccd.c, ik_jacobian.c). */
    unsigned *chain_mask; /* per node: bit e when the node turns for effector e */
    float damping;        /* IK_METHOD_DAMPED_LEAST_SQUARES, resolved */
    float group_reach_m;  /* the reach of the group being solved */
    float damping_scale;  /* this solve's adaptation of the damping (ik_joints.c) */
    float eff_pos[IK_MAX_EFFECTORS][3]; /* effectors' positions as the joints turn */
    int dof_capacity;                   /* 3 per node */
    int *dof_node;                      /* per degree of freedom: its node */
    float (*dof_axis)[3];               /* its world axis this iteration */
    float *dof_step;                    /* its angle this iteration */
    float *jacobian;                    /* rows (3 per effector) x dof_capacity */
    float *jjt;                         /* rows x rows: J J^T (+ lambda^2 I) */
    float *row_work;                    /* rows: the errors, then solutions */

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

/* ---- Shared helpers of the passes ----------------------------------------------------- */

/* 1/sqrt(x) and length/sqrt(d2) by IEEE square root and division, which every x86-64
 * processor rounds the same way. The hardware estimate (rsqrtss) with a Newton step was a
 * few cycles shorter, but its bits differ between Intel's and AMD's processors, and a
 * solve is chaotic in the last bit: the same build converged on 34 % of the limited test
 * cases on one and 28 % on the other, and its always-low error shrank carried-over
 * rotations by 6e-6 (docs/testing.md, "Results that hold on every machine"). */
static inline float
ik_inv_sqrt(float x)
{
    return 1.0f / sqrtf(x);
}

static inline float
ik_length_over_sqrt(float d2, float length)
{
    return length / sqrtf(d2);
}

/* The world rotation of node k's parent frame. */
static inline const float *
ik_parent_rotation(const struct ik_solver *s, const struct sk_pose *pose, int k)
{
    static const float identity[4] = {0, 0, 0, 1};
    const int p = s->parent[k];
    if (p >= 0)
        return s->rot[p];
    const int pj = s->sk->parent[s->joint[k]];
    return pj >= 0 ? pose->rotation[pj] : identity;
}

/* Whether joint j is `root` or below it. */
static inline bool
ik_in_subtree(const struct sk_skeleton *sk, int j, int root)
{
    while (j > root)
        j = sk->parent[j];
    return j == root;
}

/* ---- The passes (ik_passes.c) --------------------------------------------------------- */

/* Iterates group g until its effectors are within tolerance, progress stalls, or the
 * iteration cap (the forward and backward passes, the prediction); returns the
 * iterations made. */
int
ik_solve_group(struct ik_solver *s, const struct sk_pose *pose, const struct ik_group *g);

/* ---- CCD and the Jacobian methods (ik_joints.c, ik_ccd.c, ik_jacobian.c) ------------- */

/* Allocates their state (chain masks, the Jacobian's arrays) and resolves the damping;
 * false when out of memory. */
bool
ik_joints_init(struct ik_solver *s);

void
ik_joints_fini(struct ik_solver *s);

/* Iterates group g by CCD or a Jacobian method (desc.method) until its effectors are
 * within tolerance, progress stalls, or the iteration cap; returns the iterations made. */
int
ik_solve_group_by_joints(struct ik_solver *s, const struct sk_pose *pose,
                         const struct ik_group *g);

/* Forward kinematics of group g's nodes from their local rotations, parents first;
 * effectors with an orientation target take it (within their limit). */
void
ik_group_forward_kinematics(struct ik_solver *s, const struct sk_pose *pose,
                            const struct ik_group *g);

/* Keeps node k's new local rotation L within its stiffness (`previous`: the one before
 * this step), limit (unless ignore_limits) and axis lock. */
void
ik_constrain_local(const struct ik_solver *s, int k, const float *previous, float *L);

/* The world rotation about the line from node k to its hinge child's child that swings
 * the hinge (an elbow) into its pole's half-plane; false when no pole applies. */
bool
ik_pole_swivel(const struct ik_solver *s, int k, const float *end_m, float *out_turn);

/* One CCD iteration over group g (ik_ccd.c). */
void
ik_ccd_iterate(struct ik_solver *s, const struct sk_pose *pose, const struct ik_group *g);

/* One Jacobian iteration over group g, transpose or damped (ik_jacobian.c). */
void
ik_jacobian_iterate(struct ik_solver *s, const struct sk_pose *pose, const struct ik_group *g);

/* ---- Rotations (ik_rotations.c; the passes call them, never the other way) ---------- */

/* Moves hinge node `hinge` into the half-plane of its pole (when one is set). */
void
ik_swing_toward_pole(struct ik_solver *s, int hinge);

/* Backward reaching with limits: each node turned as a rigid frame, within its limit. */
void
ik_reach_backward_limited(struct ik_solver *s, const struct sk_pose *pose,
                          const struct ik_group *g);

/* Without limits: every node's rotations from the solved positions. */
void
ik_derive_rotations(struct ik_solver *s, const struct sk_pose *pose);

/* ---- Controls (ik_controls.c) --------------------------------------------------------- */

/* Allocates and resets the controls' state; false when out of memory. */
bool
ik_controls_init(struct ik_solver *s);

void
ik_controls_fini(struct ik_solver *s);

/* Loads the nodes from the original pose or the last result (desc.start), their tops
 * where `pose` has them. */
void
ik_load_start(struct ik_solver *s, const struct sk_pose *pose);

/* Stretches the bones this solve's targets ask for and updates the passes' lengths. */
void
ik_prepare_stretch(struct ik_solver *s);

/* Stiffness and axis locks of node k on its new local rotation L, `previous` the one the
 * last pass left (limits on). */
void
ik_apply_rotation_controls(const struct ik_solver *s, int k, const float *previous, float *L);

/* Removes rotation about the locked axes of node k from L. */
void
ik_apply_axis_lock(const struct ik_solver *s, int k, float *L);

/* Mixes the solution with the pose handed in, by the effectors' blend weights. */
void
ik_blend_with_input(struct ik_solver *s, const struct sk_pose *pose);

/* Keeps this result for IK_START_LAST. */
void
ik_remember_last(struct ik_solver *s);

#endif
