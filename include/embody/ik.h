/*
 * Inverse kinematics: FABRIK on trees (Aristidou and Lasenby, "FABRIK: A fast, iterative
 * solver for the Inverse Kinematics problem", Graphical Models 73(5), 2011; the
 * multiple-end-effector case), with joint limits applied inside the iterations, plus the
 * two specialised solvers engines offer beside it: an exact two-bone solver and a
 * one-bone look-at. The same solver object can instead iterate by cyclic coordinate
 * descent or a Jacobian method (transpose or damped least squares) on the same compiled
 * joints, limits, targets and controls (ik_solver_desc.method, enum ik_method).
 *
 * The skeleton and its effector set are compiled once into the joints the solver may
 * move. Each iteration reaches forward from every effector toward the root: a joint where
 * the paths of two or more effectors meet (a sub-base, like the chest) is set to the
 * weighted average of the positions its child chains ask for; then it reaches backward
 * from the root, where, unless limits are ignored, each joint is turned as a rigid frame
 * (all its bones move together) and its local rotation is kept within its limit: hinges
 * bend only their anatomical way (toward a pole when one is set), ball joints stay within
 * their swing cone and twist range. With limits every rotation is derived afresh from the
 * positions, in its parent's frame: the shortest turn from the bone's rest direction,
 * then the twist that the joints below ask for (a hinge's bend plane, the other children
 * of a branching joint with a slight pull toward no twist, a share of an orientation
 * target's twist for its parent), clamped to the joint's twist range (measured by
 * swing-twist about the bone). Nothing of the rotations handed in carries over, so twist
 * cannot wind up over a long motion, and every joint is within its limit after every
 * solve, also when the targets were already met (one backward pass is always made).
 *
 * A solve allocates nothing, logs nothing and does no I/O; the same inputs give the same
 * output. It starts from the pose it is given (warm start from the last solution, or the
 * rest pose for a cold start; ik_solver_desc.start can choose the original pose or the
 * last result instead) and writes the result into it: global positions, global
 * and local rotations of every joint, joints off the effectors' paths carried along
 * rigidly.
 */
#ifndef EMBODY_IK_H
#define EMBODY_IK_H

#include <stdbool.h>

#include <cglm/types.h>

#include "embody/export.h"
#include "embody/result.h"
#include "embody/skeleton.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IK_MAX_EFFECTORS 16
#define IK_MAX_POLES 8

/* How a sub-base (a joint where chains meet) is placed in the forward pass. Both put it
 * at a weighted average of the positions its chains ask for. */
enum ik_sub_base_rule {
    /* Each chain's weight is its effectors' weight times its tension to the 8th power:
     * the distance from the sub-base to the chain's end over the chain's length. A
     * chain with slack can reach from almost anywhere and barely pulls; a nearly
     * straight one decides. About half the iterations of the plain rule (ik_bench). */
    IK_SUB_BASE_TENSION = 0,
    /* The chains' weights are their effectors' weights alone (Aristidou and Lasenby
     * 2011, section 4.3). */
    IK_SUB_BASE_AVERAGE = 1,
};

enum ik_root_mode {
    IK_ROOT_PINNED = 0, /* the root stays where the pose puts it; its rotation is solved */
    IK_ROOT_FIXED = 1,  /* the root's position and rotation both stay */
    IK_ROOT_FREE = 2,   /* the root moves to the weighted average of what its chains ask */
};

/* Where a solve starts (ik_solver_desc.start). */
enum ik_start {
    /* From the pose handed to ik_solver_solve(): a warm start when that is the last
     * result, a cold start when it is the rest pose or the caller's animation. */
    IK_START_GIVEN = 0,
    /* From the original pose every time (the rest pose unless the caller set another
     * with ik_solver_set_original_pose(), an animation frame say): the result depends on
     * the targets alone, never on earlier solves. */
    IK_START_ORIGINAL = 1,
    /* From this solver's last result (continuity), whatever the pose handed in holds;
     * the original pose before the first solve. */
    IK_START_LAST = 2,
};

/* How an effector's blend weight below 1 mixes the pose handed in with the solution
 * (ik_solver_set_blend()). */
enum ik_blend_mode {
    /* Joint positions on a line between the two (rotations by nlerp): the effector moves
     * on a straight line toward its solution, and bones between joints of different
     * weights are shorter in between. */
    IK_BLEND_LINEAR = 0,
    /* Local rotations by nlerp, then forward kinematics: the chain turns about its
     * sub-base (the next joint up where chains meet, or its base) and sweeps in an arc,
     * every bone keeping its length. Needs rotations (not positions_only). */
    IK_BLEND_NLERP = 1,
};

/* Which iterative method solves (ik_solver_desc.method). All four run on the same compiled
 * chains and trees, take the same targets (positions, orientation targets of effectors
 * made with `orientation`), poles, effector weights, stiffness, axis locks, stretch,
 * blend weights and start modes, and stop by the same rules (tolerance_m, stall_m,
 * max_iterations). With limits every joint is within its limit after every solve. */
enum ik_method {
    /* Forward and backward reaching on positions (see the top of this file). */
    IK_METHOD_FABRIK = 0,
    /* Cyclic coordinate descent (Wang and Chen 1991; Kenwright 2012): each iteration visits
     * the joints from the tips toward the root and turns each one, as a rigid frame, by the
     * rotation that brings the effectors below it (within their chain_length) closest to
     * their targets (a sub-base: the weighted average of the effectors' rotations), then
     * keeps it within its limit, stiffness and axis lock before the next joint. A hinge's
     * parent first swings the limb toward the hinge's pole. Cheap per iteration and never
     * out of its limits, but it turns the joints nearest the tips most and needs many
     * iterations where the whole chain should bend a little. Converged within 100
     * iterations, cold (ik_bench --side-by-side, 10,000 solves): P1_chain10 86 %,
     * P3_human3 81 % (74 % with limits); tracking (P3_human3_track, warm) 98 % (97 %). */
    IK_METHOD_CCD = 1,
    /* Jacobian transpose (Wolovich and Elliott 1984; step length of Buss 2004): every
     * joint's rotation (3 angles about the world axes; a hinge: its one axis) moves at
     * once by alpha J^T e, e the effectors' errors (scaled by sqrt of their weights), then
     * each joint is kept within its limit ("clamped after each step"). Smooth, slow:
     * converged within 100 iterations, cold, P1_chain10 86 %, P3_human3 6 % (3 % with
     * limits); P3_human3_track 78 % (75 %). */
    IK_METHOD_JACOBIAN_TRANSPOSE = 2,
    /* Damped least squares (Wampler 1986; Nakamura and Hanafusa 1986; Buss 2004):
     * J^T (J J^T + lambda^2 I)^-1 e, lambda = damping times the reach of the joints being
     * solved, raised as in Levenberg-Marquardt after a step that made things worse: near
     * a straight or singular pose the step stays small instead of exploding. Limits
     * clamped after each step, as the transpose. Converged within 100 iterations, cold:
     * P1_chain10 100 %, P3_human3 100 % (100 % with limits), P3_human5 100 % (99.5 %);
     * P3_human3_track 100 % (99.3 %). */
    IK_METHOD_DAMPED_LEAST_SQUARES = 3,
};

/* Axis locks (ik_solver_set_axis_lock()): local axes of a joint's own frame. */
enum ik_axis_lock {
    IK_LOCK_X = 1u << 0,
    IK_LOCK_Y = 1u << 1,
    IK_LOCK_Z = 1u << 2,
};

struct ik_effector_desc {
    int joint;        /* the skeleton joint that should reach the target */
    float weight;     /* its pull where chains meet; 0 means 1 */
    int chain_length; /* bones above the joint the solver may move; 0 = up to the root */
    bool orientation; /* the joint also takes an orientation target (hands, head) */
};

/* Zero means default for every field; ik_solver_get_desc() reads the resolved values. */
struct ik_solver_desc {
    const struct sk_skeleton *skeleton; /* must outlive the solver */
    int effector_count;
    struct ik_effector_desc effector[IK_MAX_EFFECTORS];
    float tolerance_m;  /* an effector closer than this to its target is done; 0 = 1 mm */
    int max_iterations; /* 0 = 20 */
    /* When > 0, a group of joints also stops when its worst residual has not improved by
     * this much for two iterations (an unreachable target, or a pose held by limits),
     * rather than iterating to the cap; 0 = never (classic FABRIK). */
    float stall_m;
    /* FABRIK: plain positional FABRIK, free joints, bones move independently; the other
     * methods: joints turn without limits. */
    bool ignore_limits;
    /* With ignore_limits only: skip deriving rotations, as purely positional solvers do;
     * only the positions of the joints on the effectors' paths are written. */
    bool positions_only;
    enum ik_root_mode root_mode;
    enum ik_sub_base_rule sub_base_rule;
    /* Warm start with prediction: when the pose handed to a solve is this solver's last
     * result, unchanged, and its effectors are not already within tolerance, the joints
     * on their paths start moved on by 0.8 of how far they moved in that last solve (a
     * smooth trajectory keeps going); at least one iteration then follows, which restores
     * the bones' lengths. On 90 Hz tracking this halves the iterations (ik_bench). A pose
     * changed by the caller starts where it is, as without the option. */
    bool predict_warm_start;
    enum ik_start start;
    enum ik_blend_mode blend_mode;
    /* Solve only the subtree of this joint (0, the skeleton's root, = all): chains end
     * there at the latest, root_mode applies to it, and effectors outside the subtree
     * are ignored (a warning at creation; their residual reads 0). */
    int root_joint;
    /* The iterative method (IK_METHOD_FABRIK, the default, is 0). CCD and the Jacobian
     * methods turn joints, so they refuse positions_only, predict_warm_start and
     * IK_ROOT_FREE (a root that moves, not turns), and they solve a pinned root's
     * rotation with or without limits. */
    enum ik_method method;
    /* IK_METHOD_DAMPED_LEAST_SQUARES: lambda as a share of the reach (the summed bone
     * lengths) of the joints solved together; 0 = 0.01 (the default; see
     * ik_solver_set_damping()). Other methods ignore it. */
    float damping;
};

struct ik_stats {
    int iterations;     /* forward-backward passes made (0 when already within tolerance,
                         * at least 1 after a predicted start) */
    bool converged;     /* every effector within tolerance */
    float max_residual_m;
    float residual_m[IK_MAX_EFFECTORS]; /* distance of each effector to its target */
};

struct ik_solver;

/* Compiles `desc` into a solver. Rejects (EM_ERROR_INVALID_ARGUMENT, with a reason in
 * `err`): no skeleton, no effectors or more than IK_MAX_EFFECTORS, an effector joint out
 * of range or given twice, a negative weight or chain length, a non-finite tolerance, a
 * root_joint out of range, an unknown start or blend mode, IK_BLEND_NLERP with
 * positions_only, no effector inside root_joint's subtree. */
EMBODY_API enum em_result
ik_solver_create(const struct ik_solver_desc *desc, struct ik_solver **out_solver,
                 struct em_error *err);

/* Frees the solver (NULL is fine) and clears the caller's pointer. */
EMBODY_API void
ik_solver_destroy(struct ik_solver **solver);

/* The description with every default resolved. */
EMBODY_API void
ik_solver_get_desc(const struct ik_solver *solver, struct ik_solver_desc *out_desc);

/* Sets effector `effector`'s target: a position in metres (world frame) and, for an
 * effector created with `orientation`, a global rotation (NULL keeps the joint's own).
 * Non-finite values are refused (EM_ERROR_INVALID_ARGUMENT) and the old target kept. */
EMBODY_API enum em_result
ik_solver_set_target(struct ik_solver *solver, int effector, const float *position_m,
                     const float *orientation);

/* Sets where the hinge joint `joint` (an elbow or knee) should point: its bend plane is
 * turned to contain `position_m` (world frame). NULL clears it. Refuses a joint without a
 * hinge limit, non-finite values, and more than IK_MAX_POLES poles. */
EMBODY_API enum em_result
ik_solver_set_pole(struct ik_solver *solver, int joint, const float *position_m);

/* The same with a pole direction (world frame, any length): the bend plane is turned
 * toward `direction` from the limb's root, as for a pole far away that way. It replaces
 * a pole position set for the joint, and the other way round. */
EMBODY_API enum em_result
ik_solver_set_pole_direction(struct ik_solver *solver, int joint, const float *direction);

/* Solves, starting from `pose` (which must be consistent: from forward kinematics or an
 * earlier solve) and writing the result into it. `out_stats` may be NULL. */
EMBODY_API void
ik_solver_solve(struct ik_solver *solver, struct sk_pose *pose, struct ik_stats *out_stats);

/* Sets IK_METHOD_DAMPED_LEAST_SQUARES's damping (ik_solver_desc.damping) between solves:
 * larger is smoother and slower to converge, smaller converges faster but steps further
 * near straight chains. Refuses a value not finite or not > 0. */
EMBODY_API enum em_result
ik_solver_set_damping(struct ik_solver *solver, float damping);

/* ---- Controls animators expect ------------------------------------------------------ */

/* The per-joint setters below refuse a joint out of the skeleton's range and values out
 * of range (EM_ERROR_INVALID_ARGUMENT); a joint on no effector's path is accepted and has
 * no effect. Setters may be called between solves at any time; none allocates. */

/* The original pose that IK_START_ORIGINAL starts from (and IK_START_LAST before its
 * first solve): the local rotations of `pose` (with positions_only, its positions). The
 * solver keeps a copy. Before any call: the rest pose. */
EMBODY_API void
ik_solver_set_original_pose(struct ik_solver *solver, const struct sk_pose *pose);

/* Blend weight of effector `effector` in [0, 1] (default 1): 0 leaves the joints it
 * alone pulls as the pose handed in had them (all effectors at 0: the pose is returned
 * bit for bit), 1 gives the full solution, values between mix the two per
 * ik_solver_desc.blend_mode. A joint shared by several effectors (a sub-base and above)
 * takes the largest of their weights. Separate from ik_effector_desc.weight, which is an
 * effector's pull where chains meet. Refuses a weight outside [0, 1] or not finite. */
EMBODY_API enum em_result
ik_solver_set_blend(struct ik_solver *solver, int effector, float weight);

/* Changes effector `effector`'s pull where chains meet (ik_effector_desc.weight) between
 * solves: any finite weight >= 0. 0 switches the effector off until a weight > 0 comes
 * back: it pulls nothing, its residual does not keep a group iterating nor counts in
 * ik_stats.max_residual_m / converged (residual_m still reports its distance), and a
 * sub-base all of whose chains weigh 0 stays where the pose has it. Below 1, its
 * residual counts toward the tolerance and stall tests at the weight's share, so an
 * effector faded in from 0 starts the iterations gradually (a solve continuous in its
 * inputs). A body reaching only
 * sometimes (a shoulder pulled toward a hand out of the arm's reach) so costs nothing the
 * rest of the time. ik_solver_get_desc() reads the weights as last set. */
EMBODY_API enum em_result
ik_solver_set_weight(struct ik_solver *solver, int effector, float weight);

/* Stiffness of joint `joint` in [0, 1] (default 0): the share of each correction the
 * joint refuses, inside the iterations: each pass turns it only (1 - stiffness) of the
 * way from where the last pass left it, so its neighbours take up more of the motion
 * (with every joint stiff the solve just converges more slowly); 1 keeps it as it
 * started. FABRIK: with limits only (rotations are turned joint by joint there; ignored
 * with ignore_limits); CCD and the Jacobian methods: always, on every joint's step. */
EMBODY_API enum em_result
ik_solver_set_stiffness(struct ik_solver *solver, int joint, float stiffness);

/* Locks rotation about the joint's local axes in `axes` (IK_LOCK_X | ...; 0 unlocks):
 * after every turn inside the iterations, the rotation about a locked axis is removed
 * (swing-twist), so the joint shows none about it. As stiffness: FABRIK with limits
 * only, the other methods always. */
EMBODY_API enum em_result
ik_solver_set_axis_lock(struct ik_solver *solver, int joint, unsigned axes);

/* Lets the bone from `joint`'s parent to `joint` lengthen by up to `max_stretch` of its
 * length (0.1: 10 %; 0, the default, never) when an effector's target lies beyond the
 * reach of its chain; `stiffness` in [0, 1] is how much it resists, compared with the
 * other stretchy bones of the chain (they share the extra length in proportion to
 * (1 - stiffness) times their length; 1 does not stretch). A target within reach
 * stretches nothing. Stretched lengths show in the output positions (forward kinematics
 * of the local rotations gives the skeleton's own lengths). */
EMBODY_API enum em_result
ik_solver_set_stretch(struct ik_solver *solver, int joint, float max_stretch, float stiffness);

/* ---- Specialised solvers ---------------------------------------------------------- */

/* Exact two-bone IK in positions: from the fixed `root_m`, bones of `upper_m` and
 * `lower_m`, finds the middle joint so that the end lands on `target_m`, or as close as
 * the bones allow (straight toward it when too far, folded when too near). The middle
 * joint goes to the side of `bend_dir` (any vector not parallel to root->target; it is
 * the direction the middle joint should move away from the root->target line). */
EMBODY_API void
ik_two_bone_positions(const float *root_m, float upper_m, float lower_m, const float *target_m,
                      const float *bend_dir, float *out_mid_m, float *out_end_m);

/* Two-bone IK on a pose: turns `end_joint`'s parent (the middle, for example the elbow)
 * and grandparent (the upper joint, the shoulder) so `end_joint` reaches `target_m`, with
 * the middle joint toward `pole_m` (NULL: keep the current bend plane). Then sets the end
 * joint's global rotation to `end_orientation` when not NULL. Joint limits are not
 * applied. Updates global and local rotations and positions of the whole subtree. */
EMBODY_API void
ik_two_bone_solve(const struct sk_skeleton *skeleton, struct sk_pose *pose, int end_joint,
                  const float *target_m, const float *pole_m, const float *end_orientation);

/* One-bone look-at: turns `joint` (minimally, keeping its twist) so its primary bone
 * points at `target_m`, within its limit when `apply_limit`. Updates the subtree. */
EMBODY_API void
ik_look_at(const struct sk_skeleton *skeleton, struct sk_pose *pose, int joint,
           const float *target_m, bool apply_limit);

/* Keeps a local rotation within a joint's limit (the skeleton's rest direction of the
 * joint's primary bone is `rest_dir`, unit). Used by the solver; exposed for tests and
 * the body. Returns true when the rotation had to change. A bone direction outside a
 * cone goes to the nearest point of the rim while it is nearer the rim than the point
 * opposite the axis, and from there toward the axis (continuous everywhere: no jump
 * from one side of the rim to the other). */
EMBODY_API bool
ik_limit_apply(const struct sk_limit *limit, const float *rest_dir, float *local_rotation);

/* True when `local_rotation` is within `limit` up to `slack_rad`. */
EMBODY_API bool
ik_limit_check(const struct sk_limit *limit, const float *rest_dir, const float *local_rotation,
               float slack_rad);

#ifdef __cplusplus
}
#endif

#endif
