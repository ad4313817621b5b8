/*
 * The controls animators expect of an IK solver (include/embody/ik.h): where a solve
 * starts (the original pose, or the last result), blend weights per effector, stiffness
 * and axis locks per joint, and stretchy bones. Each costs nothing unless it is used: a
 * flag set by its setter gates it in the solve.
 */
#include <stdlib.h>
#include <string.h>

#include "embody/ik.h"
#include "embody/m_math.h"
#include "ik/ik_internal.h"

bool
ik_controls_init(struct ik_solver *s)
{
    const size_t nn = (size_t)(s->node_count > 0 ? s->node_count : 1);
    const size_t nj = (size_t)s->sk->joint_count;
    s->original_local = calloc(nj, sizeof *s->original_local);
    s->original_pos = calloc(nj, sizeof *s->original_pos);
    s->last_local = calloc(nn, sizeof *s->last_local);
    s->last_pos = calloc(nn, sizeof *s->last_pos);
    s->effectors_below = calloc(nn, sizeof *s->effectors_below);
    s->stiffness = calloc(nn, sizeof *s->stiffness);
    s->lock = calloc(nn, sizeof *s->lock);
    s->max_stretch = calloc(nn, sizeof *s->max_stretch);
    s->stretch_stiffness = calloc(nn, sizeof *s->stretch_stiffness);
    s->length_scale = calloc(nn, sizeof *s->length_scale);
    s->rest_length_m = calloc(nn, sizeof *s->rest_length_m);
    s->swing_failed = calloc(nn, sizeof *s->swing_failed);
    if (!s->original_local || !s->original_pos || !s->last_local || !s->last_pos ||
        !s->effectors_below || !s->stiffness || !s->lock || !s->max_stretch ||
        !s->stretch_stiffness || !s->length_scale || !s->rest_length_m)
        return false;
    for (size_t j = 0; j < nj; ++j) {
        m_quat_identity(s->original_local[j]);
        m_vec3_copy(s->sk->rest_position_m[j], s->original_pos[j]);
    }
    for (int e = 0; e < s->desc.effector_count; ++e) {
        s->blend[e] = 1.0f;
        for (int k = s->effector_node[e]; k >= 0; k = s->parent[k])
            s->effectors_below[k] |= 1u << e;
    }
    for (int k = 0; k < s->node_count; ++k) {
        s->length_scale[k] = 1.0f;
        s->rest_length_m[k] = s->length_m[k];
    }
    return true;
}

void
ik_controls_fini(struct ik_solver *s)
{
    free(s->original_local);
    free(s->original_pos);
    free(s->last_local);
    free(s->last_pos);
    free(s->effectors_below);
    free(s->stiffness);
    free(s->lock);
    free(s->max_stretch);
    free(s->stretch_stiffness);
    free(s->length_scale);
    free(s->rest_length_m);
    free(s->swing_failed);
}

/* ---- Setters ------------------------------------------------------------------------ */

void
ik_solver_set_original_pose(struct ik_solver *s, const struct sk_pose *pose)
{
    for (int j = 0; j < s->sk->joint_count; ++j) {
        m_quat_copy(pose->local_rotation[j], s->original_local[j]);
        m_quat_normalize(s->original_local[j]);
        m_vec3_copy(pose->position_m[j], s->original_pos[j]);
    }
}

enum em_result
ik_solver_set_blend(struct ik_solver *s, int effector, float weight)
{
    if (effector < 0 || effector >= s->desc.effector_count || !isfinite(weight) || weight < 0.0f ||
        weight > 1.0f)
        return EM_ERROR_INVALID_ARGUMENT;
    s->blend[effector] = weight;
    s->blending = false;
    for (int e = 0; e < s->desc.effector_count; ++e)
        s->blending = s->blending || s->blend[e] < 1.0f;
    return EM_OK;
}

enum em_result
ik_solver_set_weight(struct ik_solver *s, int effector, float weight)
{
    if (effector < 0 || effector >= s->desc.effector_count || !isfinite(weight) || weight < 0.0f)
        return EM_ERROR_INVALID_ARGUMENT;
    s->desc.effector[effector].weight = weight;
    /* Each node on the effector's path pulls with the summed weight of the effectors
     * below it (summed afresh, so repeated changes do not drift), and the forward steps
     * carry a copy of it. */
    for (int k = s->effector_node[effector]; k >= 0; k = s->parent[k]) {
        float sum = 0.0f;
        for (unsigned bits = s->effectors_below[k]; bits; bits &= bits - 1)
            sum += s->desc.effector[__builtin_ctz(bits)].weight;
        s->pull_weight[k] = sum;
    }
    for (int i = 0; i < s->forward_step_count; ++i)
        s->forward_steps[i].pull_weight = s->pull_weight[s->forward_steps[i].node];
    return EM_OK;
}

/* The node of skeleton joint `joint`, -1 when it is off every path (a valid joint the
 * solver never moves), or -2 when `joint` is out of range. */
static int
node_of(const struct ik_solver *s, int joint)
{
    if (joint < 0 || joint >= s->sk->joint_count)
        return -2;
    return s->node_of_joint[joint];
}

static void
update_rotation_controls(struct ik_solver *s)
{
    s->rotation_controls = false;
    for (int k = 0; k < s->node_count; ++k)
        s->rotation_controls = s->rotation_controls || s->stiffness[k] > 0.0f || s->lock[k];
}

enum em_result
ik_solver_set_stiffness(struct ik_solver *s, int joint, float stiffness)
{
    const int k = node_of(s, joint);
    if (k == -2 || !isfinite(stiffness) || stiffness < 0.0f || stiffness > 1.0f)
        return EM_ERROR_INVALID_ARGUMENT;
    if (k >= 0)
        s->stiffness[k] = stiffness;
    update_rotation_controls(s);
    return EM_OK;
}

enum em_result
ik_solver_set_axis_lock(struct ik_solver *s, int joint, unsigned axes)
{
    const int k = node_of(s, joint);
    if (k == -2 || (axes & ~(unsigned)(IK_LOCK_X | IK_LOCK_Y | IK_LOCK_Z)))
        return EM_ERROR_INVALID_ARGUMENT;
    if (k >= 0)
        s->lock[k] = axes;
    update_rotation_controls(s);
    return EM_OK;
}

/* Writes the passes' bone lengths from the rest lengths and this solve's stretch. */
static void
apply_length_scale(struct ik_solver *s)
{
    for (int k = 0; k < s->node_count; ++k)
        s->length_m[k] = s->rest_length_m[k] * s->length_scale[k];
    for (int i = 0; i < s->forward_step_count; ++i)
        s->forward_steps[i].length_m = s->length_m[s->forward_steps[i].node];
    for (int i = 0; i < s->backward_step_count; ++i)
        s->backward_steps[i].length_m = s->length_m[s->backward_steps[i].node];
}

enum em_result
ik_solver_set_stretch(struct ik_solver *s, int joint, float max_stretch, float stiffness)
{
    const int k = node_of(s, joint);
    if (k == -2 || !isfinite(max_stretch) || max_stretch < 0.0f || !isfinite(stiffness) ||
        stiffness < 0.0f || stiffness > 1.0f)
        return EM_ERROR_INVALID_ARGUMENT;
    if (k >= 0) {
        s->max_stretch[k] = max_stretch;
        s->stretch_stiffness[k] = stiffness;
    }
    s->stretching = false;
    for (int n = 0; n < s->node_count; ++n)
        s->stretching = s->stretching || s->max_stretch[n] > 0.0f;
    if (!s->stretching) { /* back to the skeleton's own lengths */
        for (int n = 0; n < s->node_count; ++n)
            s->length_scale[n] = 1.0f;
        apply_length_scale(s);
    }
    return EM_OK;
}

/* ---- During a solve ----------------------------------------------------------------- */

void
ik_load_start(struct ik_solver *s, const struct sk_pose *pose)
{
    const bool original = s->desc.start == IK_START_ORIGINAL || !s->has_last;
    const struct sk_skeleton *sk = s->sk;
    for (int k = 0; k < s->node_count; ++k) {
        const int j = s->joint[k];
        const int p = s->parent[k];
        if (s->desc.positions_only) {
            /* Positions only: the original's offsets, translated with the path's top. */
            if (p < 0) {
                m_vec3_copy(pose->position_m[j], s->pos[k]);
            } else if (original) {
                float off[3];
                m_vec3_sub(s->original_pos[j], s->original_pos[s->joint[p]], off);
                m_vec3_add(s->pos[p], off, s->pos[k]);
            } else {
                float off[3];
                m_vec3_sub(s->last_pos[k], s->last_pos[p], off);
                m_vec3_add(s->pos[p], off, s->pos[k]);
            }
            continue;
        }
        m_quat_copy(original ? s->original_local[j] : s->last_local[k], s->local[k]);
        const float *parent_rot = ik_parent_rotation(s, pose, k);
        m_quat_mul(parent_rot, s->local[k], s->rot[k]);
        if (p < 0) {
            m_vec3_copy(pose->position_m[j], s->pos[k]);
        } else {
            float off[3];
            m_quat_rotate(s->rot[p], sk->offset_m[j], off);
            m_vec3_muladd(s->pos[p], off, s->length_scale[k], s->pos[k]);
        }
    }
}

void
ik_remember_last(struct ik_solver *s)
{
    for (int k = 0; k < s->node_count; ++k) {
        m_quat_copy(s->local[k], s->last_local[k]);
        m_vec3_copy(s->pos[k], s->last_pos[k]);
    }
    s->has_last = true;
}

/* The top of effector e's path: the first node up from it without a parent node or that
 * does not move. */
static int
path_top(const struct ik_solver *s, int k)
{
    while (s->parent[k] >= 0 && !(s->flags[k] & NODE_BASE))
        k = s->parent[k];
    return k;
}

/* About the length the effector's path takes up by bending off the line from its top to
 * the target: a joint at h from that line shortens its bone's span along it by about
 * h^2 / (2 length). FABRIK moves a chain on that line only along it, and bends a chain
 * close to it only slowly, so this is what slack it can absorb soon. */
static float
path_bend_take_up_m(const struct ik_solver *s, int tip, int top, const float *target)
{
    float axis[3];
    m_vec3_sub(target, s->pos[top], axis);
    const float axis_length = m_vec3_length(axis);
    if (!(axis_length > 0.0f))
        return 0.0f;
    float take_up = 0.0f;
    for (int k = tip; k != top; k = s->parent[k]) {
        float d[3], across[3];
        m_vec3_sub(s->pos[k], s->pos[top], d);
        m_vec3_cross(d, axis, across);
        const float h = m_vec3_length(across) / axis_length;
        if (s->rest_length_m[k] > 0.0f)
            take_up += h * h / (2.0f * s->rest_length_m[k]);
    }
    return take_up;
}

void
ik_prepare_stretch(struct ik_solver *s)
{
    for (int k = 0; k < s->node_count; ++k)
        s->length_scale[k] = 1.0f;
    for (int e = 0; e < s->desc.effector_count; ++e) {
        const int tip = s->effector_node[e];
        if (tip < 0)
            continue;
        const int top = path_top(s, tip);
        float reach = 0.0f, give = 0.0f;
        for (int k = tip; k != top; k = s->parent[k]) {
            reach += s->rest_length_m[k];
            if (s->max_stretch[k] > 0.0f)
                give += (1.0f - s->stretch_stiffness[k]) * s->rest_length_m[k];
        }
        const float beyond = m_vec3_distance(s->target[e], s->pos[top]) - reach;
        if (!(beyond > 0.0f) || !(give > 0.0f))
            continue; /* within reach, or nothing may stretch */
        /* A little more than the target needs (1 % of the reach): at exactly its length the chain
         * would be straight, where FABRIK only creeps toward the target. But no more than
         * the path's bend takes up: a chain on the target's line (an arm reaching straight
         * out) cannot bend to take up slack and would overshoot by all of it. */
        const float slack = fminf(fmaxf(s->tolerance_m, 0.01f * reach),
                                  path_bend_take_up_m(s, tip, top, s->target[e]));
        const float extra = beyond + slack;
        /* Each stretchy bone takes extra * (1 - stiffness) * length / give, up to its
         * allowance; a bone shared with another effector's path keeps the larger. */
        for (int k = tip; k != top; k = s->parent[k]) {
            if (!(s->max_stretch[k] > 0.0f))
                continue;
            const float share = extra * (1.0f - s->stretch_stiffness[k]) / give;
            const float scale = 1.0f + fminf(share, s->max_stretch[k]);
            s->length_scale[k] = fmaxf(s->length_scale[k], scale);
        }
    }
    apply_length_scale(s);
}

void
ik_apply_axis_lock(const struct ik_solver *s, int k, float *L)
{
    const unsigned lock = s->lock[k];
    if (!lock)
        return;
    const unsigned free_axes = ~lock & (IK_LOCK_X | IK_LOCK_Y | IK_LOCK_Z);
    if (free_axes == 0) {
        m_quat_identity(L);
        return;
    }
    if (free_axes == IK_LOCK_X || free_axes == IK_LOCK_Y || free_axes == IK_LOCK_Z) {
        /* One axis free: only the twist about it stays. */
        const int a = free_axes == IK_LOCK_X ? 0 : free_axes == IK_LOCK_Y ? 1 : 2;
        float q[4] = {0, 0, 0, L[3]};
        q[a] = L[a];
        if (!(m_quat_dot(q, q) > 1e-12f))
            m_quat_identity(q);
        m_quat_normalize(q);
        m_quat_copy(q, L);
        return;
    }
    /* One axis locked: the swing about it stays, its twist goes (L = swing * twist). */
    const int a = lock == IK_LOCK_X ? 0 : lock == IK_LOCK_Y ? 1 : 2;
    float twist[4] = {0, 0, 0, L[3]};
    twist[a] = L[a];
    if (!(m_quat_dot(twist, twist) > 1e-12f))
        return; /* a half turn of swing: no twist to speak of */
    m_quat_normalize(twist);
    float conj[4];
    m_quat_conjugate(twist, conj);
    m_quat_mul(L, conj, L);
    L[a] = 0.0f; /* zero up to rounding: make it exact */
    m_quat_normalize(L);
}

/* nlerp from a to b by t, along the shorter way. */
static void
quat_nlerp(const float *a, const float *b, float t, float *out)
{
    const float sign = m_quat_dot(a, b) < 0.0f ? -1.0f : 1.0f;
    for (int i = 0; i < 4; ++i)
        out[i] = a[i] + (sign * b[i] - a[i]) * t;
    if (!(m_quat_dot(out, out) > 1e-12f))
        m_quat_copy(b, out);
    m_quat_normalize(out);
}

void
ik_apply_rotation_controls(const struct ik_solver *s, int k, const float *previous, float *L)
{
    if (s->stiffness[k] > 0.0f)
        quat_nlerp(previous, L, 1.0f - s->stiffness[k], L);
    ik_apply_axis_lock(s, k, L);
}

/* A node's blend weight: the largest of the effectors' at or below it. */
static float
node_blend(const struct ik_solver *s, int k)
{
    float w = 0.0f;
    for (unsigned bits = s->effectors_below[k]; bits; bits &= bits - 1)
        w = fmaxf(w, s->blend[__builtin_ctz(bits)]);
    return w;
}

void
ik_blend_with_input(struct ik_solver *s, const struct sk_pose *pose)
{
    const struct sk_skeleton *sk = s->sk;
    const bool nlerp = s->desc.blend_mode == IK_BLEND_NLERP;
    for (int k = 0; k < s->node_count; ++k) { /* parents first */
        const int j = s->joint[k];
        const int p = s->parent[k];
        const float w = node_blend(s, k);
        if (w >= 1.0f && (p < 0 || node_blend(s, p) >= 1.0f))
            continue; /* this node and its frame are the solution's */
        if (s->desc.positions_only) {
            m_vec3_lerp(pose->position_m[j], s->pos[k], w, s->pos[k]);
            continue;
        }
        const float *parent_rot = ik_parent_rotation(s, pose, k);
        if (nlerp) {
            quat_nlerp(pose->local_rotation[j], s->local[k], w, s->local[k]);
            m_quat_mul(parent_rot, s->local[k], s->rot[k]);
            if (p >= 0) {
                float off[3];
                m_quat_rotate(s->rot[p], sk->offset_m[j], off);
                m_vec3_muladd(s->pos[p], off, s->length_scale[k], s->pos[k]);
            } else {
                m_vec3_lerp(pose->position_m[j], s->pos[k], w, s->pos[k]);
            }
        } else {
            m_vec3_lerp(pose->position_m[j], s->pos[k], w, s->pos[k]);
            quat_nlerp(pose->rotation[j], s->rot[k], w, s->rot[k]);
            m_quat_mul_conj_first(parent_rot, s->rot[k], s->local[k]);
        }
    }
}
