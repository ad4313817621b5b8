/*
 * Rotations: the backward pass with limits (each joint turned as a rigid frame toward
 * where the forward pass put its children, twisted so a hinge below can bend onto its
 * target, kept within its limit), orientation targets, the rotations derived from
 * positions when limits are off, and the pole swing of hinge nodes (which the passes in
 * ik_passes.c use too: the dependency goes one way, passes -> rotations).
 */
#include "embody/ik.h"
#include "embody/m_math.h"
#include "ik/ik_internal.h"

/* The pull toward no twist of a joint fitted to several children, relative to theirs. */
#define REST_TWIST_PULL 0.05f
/* A limb outside its limits by less than this (1 - cos of half the turn: about 0.5
 * degree) is left to the limits; beyond, its hinge is swung to where they hold. */
#define SWIVEL_SLACK 1e-5f
#define SWIVEL_STEP_DEG 30.0f
#define SWIVEL_STEPS 6
#define SWIVEL_BISECTIONS 6

/* Moves a hinge node (elbow, knee) into the half-plane of its pole, about the line from
 * its parent to its child, keeping its distances to both. */
void
ik_swing_toward_pole(struct ik_solver *s, int hinge)
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

/* How far the bend about hinge axis h that takes direction f to e lies outside the hinge's
 * range: the sines of the half-angle overshoots (0 inside), the bend taken as a half-angle
 * vector and checked like ik_fast_limit_apply. */
static float
hinge_overshoot(const struct ik_fast_limit *hinge, const float h[3], const float f[3],
                const float e[3])
{
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
    return fmaxf(0.0f, -below) + fmaxf(0.0f, above);
}

/* Turns L by phi about the world direction d (parent_rot is L's parent's world rotation),
 * from cos(phi) and sin(phi) by half-angle formulas, taking the share `take` of the turn. */
static void
turn_about(const float *parent_rot, const float d[3], float cos_phi, float sin_phi, float take,
           float *L)
{
    float d_local[3];
    m_quat_rotate_inv(parent_rot, d, d_local);
    const float half_cos = sqrtf(fmaxf(0.0f, 0.5f * (1.0f + cos_phi)));
    float half_sin = sqrtf(fmaxf(0.0f, 0.5f * (1.0f - cos_phi)));
    if (sin_phi < 0.0f)
        half_sin = -half_sin;
    float turn[4] = {d_local[0] * half_sin * take, d_local[1] * half_sin * take,
                     d_local[2] * half_sin * take, half_cos * take + (1.0f - take)};
    if (take < 1.0f)
        m_quat_normalize(turn);
    m_quat_mul(turn, L, L);
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
 * Everything is done with those cosines and sines, without trigonometric calls.
 *
 * A limb that is nearly straight has no plane to follow: the turn fades out (nlerp toward
 * no turn) as the bend goes below about 2 degrees, so that L keeps the zero twist it
 * starts with and a small change of the bend never makes the twist jump. With a pole the
 * pole swing keeps a small bend toward the pole, whose plane is followed down to a
 * straight limb.
 *
 * Returns how far the hinge must still bend beyond its range (the sine of half the
 * overshoot; 0 when the bend is within it). */
static float
align_hinge_plane(const struct ik_solver *s, int k, const float *parent_rot, float *L)
{
    const int c = s->solve_child[k];
    const int g = s->solve_child[c];
    const struct ik_fast_limit *hinge = &s->limit[c];
    float d[3], e[3];
    m_vec3_sub(s->pos[c], s->pos[k], d);
    m_vec3_sub(s->pos[g], s->pos[c], e);
    if (!(m_vec3_normalize_or(d, d, d) > M_TINY) || !(m_vec3_normalize_or(e, e, e) > M_TINY))
        return 0.0f;
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
    if (R2 < 1e-16f)
        return 0.0f;
    /* How much of the turn to take: R is about the sine of the bend. */
    const int slot = s->pole[c];
    const float full_turn_r = slot >= 0 && s->pole_set[slot] ? 1e-5f : 0.03f;
    const float inv_r = 1.0f / sqrtf(R2);
    const float take = fminf(1.0f, R2 * inv_r / full_turn_r);
    const float cb = A * inv_r, sb = B * inv_r;
    const float cs = m_clampf(C * inv_r, -1.0f, 1.0f);
    const float ss = sqrtf(fmaxf(0.0f, 1.0f - cs * cs));
    /* f0 across and along d, to turn it by phi without quaternions. */
    const float fd = m_vec3_dot(f0, d);
    float f_perp[3], dxf[3];
    m_vec3_muladd(f0, d, -fd, f_perp);
    m_vec3_cross(d, f_perp, dxf);
    float best_cos = 1.0f, best_sin = 0.0f, best_cost = INFINITY, best_outside = 0.0f;
    for (int side = 0; side < 2; ++side) {
        const float sgn = side ? -1.0f : 1.0f;
        const float cp = cb * cs - sgn * sb * ss; /* cos(base + sgn * spread) */
        const float sp = sb * cs + sgn * cb * ss; /* sin(base + sgn * spread) */
        float h[3], f[3];
        for (int i = 0; i < 3; ++i) {
            h[i] = d[i] * hd + h_perp[i] * cp + dxh[i] * sp;
            f[i] = d[i] * fd + f_perp[i] * cp + dxf[i] * sp;
        }
        /* Plus a little for the size of the twist, so that between equals the smaller
         * twist wins. */
        const float outside = hinge_overshoot(hinge, h, f, e);
        const float cost = outside + 1e-3f * (1.0f - cp);
        if (cost < best_cost) {
            best_cost = cost;
            best_outside = outside;
            best_cos = cp;
            best_sin = sp;
        }
    }
    turn_about(parent_rot, d, best_cos, best_sin, take, L);
    return best_outside;
}

/* Turns L about its bone so its other children point where the forward pass put them
 * (weighted least squares about the bone's axis), with a slight pull toward no twist:
 * where the targets leave the twist free (a chest between two hands and a head turned
 * the other way by the neck), warm starts would otherwise let it wander from solve to
 * solve and wind up. */
static void
fit_twist_to_children(const struct ik_solver *s, int k, const float *parent_rot, float *L)
{
    const int main_child = s->solve_child[k];
    float w[4], axis[3];
    m_quat_mul(parent_rot, L, w);
    m_vec3_sub(s->pos[main_child], s->pos[k], axis);
    if (!(m_vec3_normalize_or(axis, axis, axis) > M_TINY))
        return;
    float sin_sum = 0.0f, cos_sum = 0.0f, size_sum = 0.0f;
    for (int i = 0; i < s->child_count[k]; ++i) {
        const int c = s->children[s->child_start[k] + i];
        if (c == main_child)
            continue;
        float now[3], want[3], cr[3];
        m_quat_rotate(w, s->sk->offset_m[s->joint[c]], now);
        m_vec3_sub(s->pos[c], s->pos[k], want);
        const int g = s->solve_child[c];
        if (g >= 0 && s->rotation_controls && s->stiffness[c] >= 1.0f) {
            /* A child that keeps its rotation (stiff) is rigid with k down to its own
             * child (a clavicle to its upper arm), which then says k's twist too: a
             * child that starts on k's bone line (a CMU clavicle at the neck's base) says
             * nothing of it by itself. */
            float below[4], reach[3];
            m_quat_mul(w, s->local[c], below);
            m_quat_rotate(below, s->sk->offset_m[s->joint[g]], reach);
            m_vec3_add(now, reach, now);
            m_vec3_sub(s->pos[g], s->pos[k], want);
        }
        m_vec3_muladd(now, axis, -m_vec3_dot(now, axis), now);
        m_vec3_muladd(want, axis, -m_vec3_dot(want, axis), want);
        m_vec3_cross(now, want, cr);
        sin_sum += s->pull_weight[c] * m_vec3_dot(cr, axis);
        cos_sum += s->pull_weight[c] * m_vec3_dot(now, want);
        size_sum += s->pull_weight[c] * m_vec3_dot(now, now);
    }
    cos_sum += REST_TWIST_PULL * size_sum;
    if (!(sin_sum * sin_sum + cos_sum * cos_sum > 1e-20f))
        return;
    float axis_local[3], turn[4];
    m_quat_rotate_inv(parent_rot, axis, axis_local);
    m_quat_from_axis_angle(axis_local, atan2f(sin_sum, cos_sum), turn);
    m_quat_mul(turn, L, L);
}

/* Gives node k, whose only child takes an orientation target, its share of the twist
 * that target asks of the child about k's bone (a neck turning with the head), so that
 * the two joints' twist ranges add up. */
static void
share_child_twist(const struct ik_solver *s, int k, const float *parent_rot, float *L)
{
    const int e = s->effector[s->solve_child[k]];
    if (e < 0 || !s->has_target_rotation[e])
        return;
    /* The child's local rotation if k kept L: (parent_rot L)^-1 target. */
    float w[4], child[4];
    m_quat_mul(parent_rot, L, w);
    m_quat_mul_conj_first(w, s->target_rotation[e], child);
    const float *axis = s->solve_dir[k];
    float ts = m_vec3_dot(child, axis), tw = child[3];
    if (tw < 0.0f) {
        ts = -ts;
        tw = -tw;
    }
    if (!(ts * ts + tw * tw > 1e-12f))
        return;
    float twist[4];
    m_quat_from_axis_angle(axis, 2.0f * atan2f(ts, tw) * s->twist_share[k], twist);
    m_quat_mul(L, twist, L);
}

/* How far `L` is outside `limit`: 1 - |cos| of half the turn that brings it within. */
static float
limit_violation(const struct ik_fast_limit *limit, const float *L)
{
    float q[4];
    m_quat_copy(L, q);
    if (!ik_fast_limit_apply(limit, q))
        return 0.0f;
    return 1.0f - fabsf(m_quat_dot(q, L));
}

/* The local rotation of hinge parent k with its child (the hinge, an elbow) at `elbow`,
 * and how far that leaves k and the hinge outside their limits. */
static float
limb_rotation(struct ik_solver *s, int k, const float *parent_rot, const float *elbow, float *L)
{
    const int c = s->solve_child[k];
    float d[3], d_local[3];
    m_vec3_sub(elbow, s->pos[k], d);
    if (!(m_vec3_normalize_or(d, d, d) > M_TINY))
        return INFINITY;
    m_vec3_copy(elbow, s->pos[c]);
    m_quat_rotate_inv(parent_rot, d, d_local);
    m_quat_from_to(s->solve_dir[k], d_local, L);
    const float outside = align_hinge_plane(s, k, parent_rot, L);
    return outside + limit_violation(&s->limit[k], L);
}

/* The circle a hinge node may swing on about the line from its parent to its child. */
struct swivel {
    float center[3], along[3], perp[3], side[3];
};

static void
swivel_point(const struct swivel *sw, float angle, float *out)
{
    const float cs = cosf(angle), sn = sinf(angle);
    for (int j = 0; j < 3; ++j)
        out[j] = sw->center[j] + sw->along[j] + sw->perp[j] * cs + sw->side[j] * sn;
}

/* A limb (k, its hinge child c, and c's child g) whose bend plane would take k or the
 * hinge beyond its limits: the hinge node is swung about the line from k to g (which
 * keeps both its distances, so g stays where the forward pass wants it) to the nearest
 * angle where both are within their limits, or failing that where they are least
 * outside. FABRIK alone would leave the limb pulled against the limit, the end short of
 * its target, iteration after iteration. Candidates every SWIVEL_STEP_DEG both ways, then
 * bisection to the edge. A limb with a pole keeps the pole's side (the limits clamp): a
 * choice of side could jump between two solves with nearly the same targets. */
static void
swivel_into_limits(struct ik_solver *s, int k, const float *parent_rot, float *L)
{
    const int c = s->solve_child[k];
    const int g = s->solve_child[c];
    const int slot = s->pole[c];
    if (slot >= 0 && s->pole_set[slot])
        return; /* the pole decides the side: the limits clamp */
    if (s->swing_failed[k])
        return; /* found no angle earlier in this solve: not again on every pass */
    float axis[3], r[3];
    m_vec3_sub(s->pos[g], s->pos[k], axis);
    if (!(m_vec3_normalize_or(axis, axis, axis) > M_TINY))
        return;
    struct swivel sw;
    m_vec3_copy(s->pos[k], sw.center);
    m_vec3_sub(s->pos[c], s->pos[k], r);
    m_vec3_scale(axis, m_vec3_dot(r, axis), sw.along);
    m_vec3_sub(r, sw.along, sw.perp);
    m_vec3_cross(axis, sw.perp, sw.side);
    float best_L[4], best_elbow[3], best = INFINITY, best_angle = 0.0f;
    m_quat_copy(L, best_L);
    m_vec3_copy(s->pos[c], best_elbow);
    const float step = SWIVEL_STEP_DEG * M_DEG_TO_RAD;
    for (int i = 1; i <= 2 * SWIVEL_STEPS; ++i) {
        const float angle = (float)((i + 1) / 2) * step * (i & 1 ? 1.0f : -1.0f);
        float elbow[3], q[4];
        swivel_point(&sw, angle, elbow);
        const float violation = limb_rotation(s, k, parent_rot, elbow, q);
        if (violation < best) {
            best = violation;
            best_angle = angle;
            m_quat_copy(q, best_L);
            m_vec3_copy(elbow, best_elbow);
            if (violation <= SWIVEL_SLACK)
                break;
        }
    }
    s->swing_failed[k] = best > SWIVEL_SLACK;
    if (best <= SWIVEL_SLACK) {
        /* Bisect back toward the start to the edge of where the limits hold, so the
         * angle moves smoothly with the targets rather than in steps. */
        float inside = best_angle;
        float outside = best_angle - (best_angle > 0.0f ? step : -step);
        for (int i = 0; i < SWIVEL_BISECTIONS; ++i) {
            const float mid = 0.5f * (inside + outside);
            float elbow[3], q[4];
            swivel_point(&sw, mid, elbow);
            if (limb_rotation(s, k, parent_rot, elbow, q) <= SWIVEL_SLACK) {
                inside = mid;
                m_quat_copy(q, best_L);
                m_vec3_copy(elbow, best_elbow);
            } else {
                outside = mid;
            }
        }
    }
    m_quat_copy(best_L, L);
    m_vec3_copy(best_elbow, s->pos[c]);
}

/* The local rotation that points node k's bone where the forward pass put its child,
 * derived afresh from the positions in the parent's frame (the shortest turn from the
 * bone's rest direction, so no twist), then twisted to fit the other children, the
 * hinge plane below, or a share of the child's orientation target. Nothing of the
 * rotation the node had carries over, so twist cannot accumulate from solve to solve. */
static void
solve_node_rotation(struct ik_solver *s, int k, const float *parent_rot, float *L)
{
    const int c = s->solve_child[k];
    if (c < 0)
        return; /* a leaf keeps its rotation */
    if (s->flags[k] & NODE_HINGE_CHILD)
        ik_swing_toward_pole(s, c);
    float d[3], d_local[3];
    m_vec3_sub(s->pos[c], s->pos[k], d);
    if (!(m_vec3_normalize_or(d, d, d) > M_TINY))
        return;
    m_quat_rotate_inv(parent_rot, d, d_local);
    m_quat_from_to(s->solve_dir[k], d_local, L);
    if (s->child_count[k] > 1)
        fit_twist_to_children(s, k, parent_rot, L);
    if (s->flags[k] & NODE_HINGE_CHILD) {
        const float outside = align_hinge_plane(s, k, parent_rot, L);
        if (outside + limit_violation(&s->limit[k], L) > SWIVEL_SLACK)
            swivel_into_limits(s, k, parent_rot, L);
    } else if (s->twist_share[k] > 0.0f) {
        share_child_twist(s, k, parent_rot, L);
    }
    m_quat_normalize(L);
}

/* Backward reaching with limits: from the root outward, each node is turned as a rigid
 * frame toward where the forward pass put its children, its local rotation kept within
 * its limit, and its children placed rigidly from it. */
void
ik_reach_backward_limited(struct ik_solver *s, const struct sk_pose *pose, const struct ik_group *g)
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
            m_vec3_muladd(s->pos[p], off, s->length_scale[k], s->pos[k]);
        }
        const float *parent_rot = ik_parent_rotation(s, pose, k);
        float *L = s->local[k];
        if (!(f & NODE_ROTATION_FIXED)) {
            float previous[4];
            if (s->rotation_controls)
                m_quat_copy(L, previous);
            const int e = s->effector[k];
            if (e >= 0 && s->has_target_rotation[e])
                m_quat_mul_conj_first(parent_rot, s->target_rotation[e], L);
            else
                solve_node_rotation(s, k, parent_rot, L);
            if (s->rotation_controls)
                ik_apply_rotation_controls(s, k, previous, L);
            ik_fast_limit_apply(&s->limit[k], L);
            if (s->rotation_controls)
                ik_apply_axis_lock(s, k, L);
        }
        m_quat_mul(parent_rot, L, s->rot[k]);
        for (int c_i = 0; c_i < s->child_count[k]; ++c_i) {
            const int c = s->children[s->child_start[k] + c_i];
            float off[3];
            m_quat_rotate(s->rot[k], sk->offset_m[s->joint[c]], off);
            m_vec3_muladd(s->pos[k], off, s->length_scale[c], s->pos[c]);
        }
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
        const float inv = ik_inv_sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2] + w * w);
        m_quat_set(q, c[0] * inv, c[1] * inv, c[2] * inv, w * inv);
    }
    m_quat_mul(q, rot, rot);
    const float n2 = m_quat_dot(rot, rot);
    const float inv_n = ik_inv_sqrt(n2);
    for (int i = 0; i < 4; ++i)
        rot[i] *= inv_n;
}

/* Without limits the rotations follow from the positions: each node turns minimally from
 * its starting rotation to point at its solve child. */
void
ik_derive_rotations(struct ik_solver *s, const struct sk_pose *pose)
{
    for (int k = 0; k < s->node_count; ++k) {
        const int e = s->effector[k];
        const int c = s->solve_child[k];
        const float *parent_rot = ik_parent_rotation(s, pose, k);
        float *rot = s->rot[k];
        if (e >= 0 && s->has_target_rotation[e]) {
            m_quat_copy(s->target_rotation[e], rot);
        } else if (c >= 0) {
            float d[3], now[3];
            m_vec3_sub(s->pos[c], s->pos[k], d);
            const float d2 = m_vec3_dot(d, d);
            if (d2 > 1e-20f) {
                m_vec3_scale(d, ik_inv_sqrt(d2), d);
                m_quat_rotate(rot, s->solve_dir[k], now);
                turn_toward(rot, now, d);
            }
        } else {
            /* A node with nothing to point at keeps its local rotation as it is: deriving
             * it back from the world rotation would round it once more on every solve, a
             * drift that shrank a foot carried over 200 solves by 3e-6. */
            m_quat_mul(parent_rot, s->local[k], rot);
            continue;
        }
        /* Parents come first, so the parent's rotation is already final here. */
        m_quat_mul_conj_first(parent_rot, rot, s->local[k]);
    }
}
