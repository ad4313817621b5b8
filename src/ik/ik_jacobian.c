/*
 * The Jacobian methods on the compiled chains and trees (include/embody/ik.h):
 * IK_METHOD_JACOBIAN_TRANSPOSE (Wolovich and Elliott, "A computational technique for
 * inverse kinematics", IEEE CDC 1984) and IK_METHOD_DAMPED_LEAST_SQUARES (Wampler 1986;
 * Nakamura and Hanafusa 1986), as surveyed by Buss, "Introduction to inverse kinematics
 * with Jacobian transpose, pseudoinverse and damped least squares methods", 2004.
 *
 * Degrees of freedom: each node that turns for some effector has three (small rotations
 * about the world axes) or, a hinge with limits, one (its axis). Rows: three per effector
 * of the group, scaled by the square root of its weight (weighted least squares). The
 * column of a rotation about axis a at node k for effector e is a x (p_e - p_k) when k
 * turns for e. Every node moves by its step at once (its rotation vector, taken in its
 * parent's frame as it was), then is kept within its stiffness, limit and axis lock:
 * "clamped after each step". All arrays are sized at creation.
 */
#include "embody/ik.h"
#include "embody/m_math.h"
#include "ik/ik_internal.h"

/* No node turns by more than this in one step (the whole step is scaled down together,
 * so it stays the same direction): the linearisation holds only for small turns. */
#define MAX_STEP_RAD 0.5f
/* An effector's error counts at most this share of the group's reach in one step (Buss
 * 2004: clamping the error keeps the linearisation honest far from the target). A target
 * far beyond reach otherwise drives the chain into a zigzag whose tip lies on the line to
 * the target, where the gradient vanishes: ik_bench --side-by-side, unreachable P1_chain10
 * targets, dls (damping 0.1 then, before the adaptive damping of ik_joints.c) worst
 * pointing error 8.4 degrees unclamped, 5.0 at 0.2; P1_chain10 and P3_human3 cold take the
 * same iterations at 0.2 (0.05: three times as many on P1). With both, 3.9 degrees, and
 * 93 % of those solves within 1 degree. */
#define MAX_ERROR_SHARE 0.2f

static int
add_dof(struct ik_solver *s, int n, int k, const float *axis)
{
    s->dof_node[n] = k;
    m_vec3_copy(axis, s->dof_axis[n]);
    return n + 1;
}

/* Lists group g's degrees of freedom with their world axes; returns how many, and the
 * reach (summed bone lengths) of the group in `out_reach_m`. */
static int
list_dofs(struct ik_solver *s, const struct sk_pose *pose, const struct ik_group *g,
          float *out_reach_m)
{
    static const float world[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    int n = 0;
    float reach = 0.0f;
    for (int i = g->node_begin; i < g->node_end; ++i) {
        const int k = s->group_nodes[i];
        if (s->parent[k] >= 0)
            reach += s->length_m[k];
        if (!s->chain_mask[k])
            continue;
        if (!s->desc.ignore_limits && s->limit[k].kind == SK_LIMIT_HINGE) {
            float axis[3];
            m_quat_rotate(ik_parent_rotation(s, pose, k), s->limit[k].axis, axis);
            n = add_dof(s, n, k, axis);
        } else {
            for (int a = 0; a < 3; ++a)
                n = add_dof(s, n, k, world[a]);
        }
    }
    *out_reach_m = reach;
    return n;
}

/* Fills the Jacobian (rows x dofs, row-major with stride dof_capacity) and the weighted
 * errors; returns the number of rows. */
static int
fill_jacobian(struct ik_solver *s, const struct ik_group *g, int dofs, float *err)
{
    const int stride = s->dof_capacity;
    int rows = 0;
    for (int i = g->effector_begin; i < g->effector_end; ++i, rows += 3) {
        const int e = s->group_effectors[i];
        const float *p = s->pos[s->effector_node[e]];
        const float w = sqrtf(s->desc.effector[e].weight);
        float d[3];
        m_vec3_sub(s->target[e], p, d);
        const float dl = m_vec3_length(d);
        const float most = MAX_ERROR_SHARE * s->group_reach_m;
        if (dl > most) /* Buss 2004, section 6: clamp the error */
            m_vec3_scale(d, most / dl, d);
        for (int r = 0; r < 3; ++r)
            err[rows + r] = w * d[r];
        float *row = &s->jacobian[(size_t)rows * (size_t)stride];
        for (int c = 0; c < dofs; ++c) {
            const int k = s->dof_node[c];
            float col[3] = {0, 0, 0};
            if (s->chain_mask[k] & (1u << e)) {
                float lever[3];
                m_vec3_sub(p, s->pos[k], lever);
                m_vec3_cross(s->dof_axis[c], lever, col);
            }
            for (int r = 0; r < 3; ++r)
                row[(size_t)r * (size_t)stride + (size_t)c] = w * col[r];
        }
    }
    return rows;
}

/* out[c] = (J^T v)[c] */
static void
multiply_transposed(const struct ik_solver *s, int rows, int dofs, const float *v, float *out)
{
    for (int c = 0; c < dofs; ++c)
        out[c] = 0.0f;
    for (int r = 0; r < rows; ++r) {
        const float *row = &s->jacobian[(size_t)r * (size_t)s->dof_capacity];
        for (int c = 0; c < dofs; ++c)
            out[c] += row[c] * v[r];
    }
}

/* Jacobian transpose: J^T e scaled by the step that minimises the error along it if J
 * were exact (Buss 2004, section 4): alpha = <e, J J^T e> / <J J^T e, J J^T e>. */
static void
transpose_step(struct ik_solver *s, int rows, int dofs, const float *err)
{
    float *jjte = s->row_work + rows;
    multiply_transposed(s, rows, dofs, err, s->dof_step);
    float num = 0.0f, den = 0.0f;
    for (int r = 0; r < rows; ++r) {
        const float *row = &s->jacobian[(size_t)r * (size_t)s->dof_capacity];
        float v = 0.0f;
        for (int c = 0; c < dofs; ++c)
            v += row[c] * s->dof_step[c];
        jjte[r] = v;
        num += err[r] * v;
        den += v * v;
    }
    /* Shortened after steps that made things worse, as the damping (ik_joints.c). */
    const float alpha = den > 1e-30f ? num / den / s->damping_scale : 0.0f;
    for (int c = 0; c < dofs; ++c)
        s->dof_step[c] *= alpha;
}

/* Damped least squares: J^T (J J^T + lambda^2 I)^-1 e, the symmetric positive definite
 * system solved by Cholesky (rows <= 3 * IK_MAX_EFFECTORS). */
static void
damped_step(struct ik_solver *s, int rows, int dofs, float *err, float lambda)
{
    float *a = s->jjt;
    const size_t stride = (size_t)s->dof_capacity;
    for (int r = 0; r < rows; ++r) {
        const float *ri = &s->jacobian[(size_t)r * stride];
        for (int q = 0; q <= r; ++q) {
            const float *rq = &s->jacobian[(size_t)q * stride];
            float v = 0.0f;
            for (int c = 0; c < dofs; ++c)
                v += ri[c] * rq[c];
            a[r * rows + q] = v + (r == q ? lambda * lambda : 0.0f);
        }
    }
    /* Cholesky: a = L L^T, L in the lower triangle. */
    for (int j = 0; j < rows; ++j) {
        float d = a[j * rows + j];
        for (int q = 0; q < j; ++q)
            d -= a[j * rows + q] * a[j * rows + q];
        d = sqrtf(fmaxf(d, 1e-30f));
        a[j * rows + j] = d;
        for (int i = j + 1; i < rows; ++i) {
            float v = a[i * rows + j];
            for (int q = 0; q < j; ++q)
                v -= a[i * rows + q] * a[j * rows + q];
            a[i * rows + j] = v / d;
        }
    }
    float *y = err; /* solved in place: L y = e, then L^T x = y */
    for (int i = 0; i < rows; ++i) {
        float v = y[i];
        for (int q = 0; q < i; ++q)
            v -= a[i * rows + q] * y[q];
        y[i] = v / a[i * rows + i];
    }
    for (int i = rows - 1; i >= 0; --i) {
        float v = y[i];
        for (int q = i + 1; q < rows; ++q)
            v -= a[q * rows + i] * y[q];
        y[i] = v / a[i * rows + i];
    }
    multiply_transposed(s, rows, dofs, y, s->dof_step);
}

/* Turns every node by its step (one node's dofs are listed together), the largest turn
 * at most MAX_STEP_RAD, each kept within its constraints. */
static void
apply_steps(struct ik_solver *s, const struct sk_pose *pose, int dofs)
{
    float largest = 0.0f;
    for (int c = 0; c < dofs;) {
        const int k = s->dof_node[c];
        float omega[3] = {0, 0, 0};
        for (; c < dofs && s->dof_node[c] == k; ++c)
            m_vec3_muladd(omega, s->dof_axis[c], s->dof_step[c], omega);
        largest = fmaxf(largest, m_vec3_length(omega));
    }
    const float scale = largest > MAX_STEP_RAD ? MAX_STEP_RAD / largest : 1.0f;
    for (int c = 0; c < dofs;) {
        const int k = s->dof_node[c];
        float omega[3] = {0, 0, 0};
        for (; c < dofs && s->dof_node[c] == k; ++c)
            m_vec3_muladd(omega, s->dof_axis[c], s->dof_step[c] * scale, omega);
        float local_omega[3], axis[3], turn[4], previous[4];
        /* The parent's frame before this step (no frame changes until the forward
         * kinematics that follows). */
        m_quat_rotate_inv(ik_parent_rotation(s, pose, k), omega, local_omega);
        const float angle = m_vec3_normalize_or(local_omega, local_omega, axis);
        if (!(angle > 1e-12f))
            continue;
        m_quat_from_axis_angle(axis, angle, turn);
        m_quat_copy(s->local[k], previous);
        m_quat_mul(turn, s->local[k], s->local[k]);
        ik_constrain_local(s, k, previous, s->local[k]);
    }
}

/* Swings each limb with a pole about the line from its top to its hinge's child, so the
 * hinge bends toward the pole (that line's end, the effector, stays), as CCD does before
 * turning a hinge's parent; the step that follows starts from the pole's side. */
static void
swing_toward_poles(struct ik_solver *s, const struct sk_pose *pose, const struct ik_group *g)
{
    for (int i = g->node_begin; i < g->node_end; ++i) {
        const int k = s->group_nodes[i];
        const int c = s->solve_child[k];
        if (!s->chain_mask[k] || c < 0 || s->pole[c] < 0 || s->solve_child[c] < 0)
            continue;
        float turn[4], wanted[4], previous[4];
        if (!ik_pole_swivel(s, k, s->pos[s->solve_child[c]], turn))
            continue;
        m_quat_copy(s->local[k], previous);
        m_quat_mul(turn, s->rot[k], wanted);
        m_quat_mul_conj_first(ik_parent_rotation(s, pose, k), wanted, s->local[k]);
        ik_constrain_local(s, k, previous, s->local[k]);
        ik_group_forward_kinematics(s, pose, g);
    }
}

void
ik_jacobian_iterate(struct ik_solver *s, const struct sk_pose *pose, const struct ik_group *g)
{
    if (s->pole_count > 0)
        swing_toward_poles(s, pose, g);
    float reach = 0.0f;
    const int dofs = list_dofs(s, pose, g, &reach);
    s->group_reach_m = reach;
    if (dofs == 0)
        return;
    float *err = s->row_work;
    const int rows = fill_jacobian(s, g, dofs, err);
    if (s->desc.method == IK_METHOD_JACOBIAN_TRANSPOSE)
        transpose_step(s, rows, dofs, err);
    else
        damped_step(s, rows, dofs, err, s->damping * s->damping_scale * reach);
    apply_steps(s, pose, dofs);
}
