/*
 * Joint limits on local rotations: hinges (one axis, a range of angles) and ball joints
 * (a swing cone for the bone's direction and a twist range about the bone).
 */
#include <stddef.h>

#include "embody/ik.h"
#include "embody/m_math.h"
#include "ik/ik_internal.h"

/* Signed angle of the turn about unit `axis` that takes `from` to `to` (both roughly
 * perpendicular to axis). */
static float
angle_about(const float *axis, const float *from, const float *to)
{
    float c[3];
    m_vec3_cross(from, to, c);
    return atan2f(m_vec3_dot(c, axis), m_vec3_dot(from, to));
}

static bool
apply_hinge(const struct sk_limit *limit, const float *rest_dir, float *q)
{
    const float *h = limit->axis;
    float d[3], v[3], r[3];
    m_quat_rotate(q, rest_dir, d);
    m_vec3_muladd(d, h, -m_vec3_dot(h, d), v);
    m_vec3_muladd(rest_dir, h, -m_vec3_dot(h, rest_dir), r);
    float angle;
    if (m_vec3_dot(v, v) < 1e-10f || m_vec3_dot(r, r) < 1e-10f) {
        /* The bone lies along the hinge axis: only the rotation's own turn about the
         * axis says how far it is bent. */
        angle = m_quat_swing_twist(q, h, NULL, NULL);
    } else {
        angle = angle_about(h, r, v);
    }
    const float clamped = m_angle_clamp_nearest(angle, limit->min_rad, limit->max_rad);
    float out[4];
    m_quat_from_axis_angle(h, clamped, out);
    const bool changed = fabsf(m_quat_dot(out, q)) < 1.0f - 1e-7f;
    m_quat_copy(out, q);
    return changed;
}

float
ik_cone_swing(float cone_rad, float angle_rad)
{
    const float far = 0.5f * (cone_rad + M_PI_F);
    if (angle_rad <= far)
        return cone_rad;
    return cone_rad * (M_PI_F - angle_rad) / (M_PI_F - far);
}

/* Turns q so its bone direction lies within the cone; returns whether it had to. */
static bool
clamp_cone(const struct sk_limit *limit, const float *rest_dir, float *q)
{
    float d[3];
    m_quat_rotate(q, rest_dir, d);
    const float *a = limit->axis;
    const float cos_cone = cosf(limit->cone_rad);
    const float c = m_vec3_dot(a, d);
    if (c >= cos_cone)
        return false;
    /* The closest direction on the cone's rim, in the plane of the axis and d. */
    float w[3], fallback[3], dn[3];
    m_vec3_muladd(d, a, -c, w);
    const float ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0};
    m_vec3_cross(a, fabsf(a[0]) < 0.9f ? ex : ey, fallback);
    m_vec3_normalize_or(fallback, ey, fallback);
    m_vec3_normalize_or(w, fallback, w);
    const float swing = ik_cone_swing(limit->cone_rad, acosf(m_clampf(c, -1.0f, 1.0f)));
    m_vec3_scale(a, cosf(swing), dn);
    m_vec3_muladd(dn, w, sinf(swing), dn);
    float turn[4];
    m_quat_from_to(d, dn, turn);
    m_quat_mul(turn, q, q);
    m_quat_normalize(q);
    return true;
}

static bool
clamp_twist(const struct sk_limit *limit, const float *rest_dir, float *q)
{
    float swing[4], twist[4];
    const float angle = m_quat_swing_twist(q, rest_dir, swing, twist);
    if (angle >= limit->min_rad && angle <= limit->max_rad)
        return false;
    /* Out of range: go to the nearer end, measured around the circle. */
    const float to_min = fabsf(m_angle_wrap(angle - limit->min_rad));
    const float to_max = fabsf(m_angle_wrap(angle - limit->max_rad));
    const float clamped = to_min < to_max ? limit->min_rad : limit->max_rad;
    m_quat_from_axis_angle(rest_dir, clamped, twist);
    m_quat_mul(swing, twist, q);
    m_quat_normalize(q);
    return true;
}

bool
ik_limit_apply(const struct sk_limit *limit, const float *rest_dir, float *local_rotation)
{
    switch (limit->kind) {
    case SK_LIMIT_HINGE: return apply_hinge(limit, rest_dir, local_rotation);
    case SK_LIMIT_BALL: {
        const bool cone = clamp_cone(limit, rest_dir, local_rotation);
        const bool twist = clamp_twist(limit, rest_dir, local_rotation);
        return cone || twist;
    }
    case SK_LIMIT_NONE: break;
    }
    return false;
}

bool
ik_limit_check(const struct sk_limit *limit, const float *rest_dir, const float *local_rotation,
               float slack_rad)
{
    float q[4];
    m_quat_copy(local_rotation, q);
    ik_limit_apply(limit, rest_dir, q);
    float diff[4];
    m_quat_mul_conj_first(q, local_rotation, diff);
    return m_quat_angle(diff) <= slack_rad;
}

/* ---- Compiled limits (ik_internal.h) ------------------------------------------------ */

void
ik_fast_limit_init(struct ik_fast_limit *out, const struct sk_limit *limit,
                   const float *rest_dir)
{
    out->kind = limit->kind;
    m_vec3_copy(limit->axis, out->axis);
    m_vec3_copy(rest_dir, out->rest_dir);
    out->cos_cone = cosf(limit->cone_rad);
    out->sin_cone = sinf(limit->cone_rad);
    out->cone_rad = limit->cone_rad;
    out->cos_far = cosf(0.5f * (limit->cone_rad + M_PI_F));
    out->lo_sin = sinf(0.5f * limit->min_rad);
    out->lo_cos = cosf(0.5f * limit->min_rad);
    out->hi_sin = sinf(0.5f * limit->max_rad);
    out->hi_cos = cosf(0.5f * limit->max_rad);
}

/* Keeps the rotation (axis * s, w), w >= 0, within the compiled range's half-angles:
 * writes the clamped (s, w) and returns whether it changed. */
static bool
clamp_half_angle(const struct ik_fast_limit *lim, float *s, float *w)
{
    const bool above_lo = *s * lim->lo_cos - *w * lim->lo_sin >= 0.0f;
    const bool below_hi = *s * lim->hi_cos - *w * lim->hi_sin <= 0.0f;
    if (above_lo && below_hi)
        return false;
    /* The nearer end around the circle of full angles: for half-angle vectors u, b the
     * full angles differ by 2 * angle(u, b), whose cosine 2 (u . b)^2 - 1 grows with
     * (u . b)^2. */
    const float to_lo = *s * lim->lo_sin + *w * lim->lo_cos;
    const float to_hi = *s * lim->hi_sin + *w * lim->hi_cos;
    if (to_lo * to_lo >= to_hi * to_hi) {
        *s = lim->lo_sin;
        *w = lim->lo_cos;
    } else {
        *s = lim->hi_sin;
        *w = lim->hi_cos;
    }
    return true;
}

static bool
fast_hinge(const struct ik_fast_limit *lim, float *q)
{
    const float *h = lim->axis;
    float d[3], v[3], r[3];
    m_quat_rotate(q, lim->rest_dir, d);
    m_vec3_muladd(d, h, -m_vec3_dot(h, d), v);
    m_vec3_muladd(lim->rest_dir, h, -m_vec3_dot(h, lim->rest_dir), r);
    float s, w;
    const float vv = m_vec3_dot(v, v), rr = m_vec3_dot(r, r);
    if (vv < 1e-10f || rr < 1e-10f) {
        /* The bone lies along the axis: q's own turn about the axis is the bend. */
        s = m_vec3_dot(q, h);
        w = q[3];
    } else {
        /* The turn about h taking r to v: (r x v . h, |r||v| + r . v), the half-angle
         * vector of that turn once normalized. */
        float c[3];
        m_vec3_cross(r, v, c);
        s = m_vec3_dot(c, h);
        w = sqrtf(rr * vv) + m_vec3_dot(r, v);
    }
    if (w < 0.0f) {
        s = -s;
        w = -w;
    }
    const float n2 = s * s + w * w;
    if (n2 < 1e-20f) { /* half a turn: pick an end */
        s = 1.0f;
        w = 0.0f;
    } else {
        const float inv = ik_inv_sqrt(n2);
        s *= inv;
        w *= inv;
    }
    clamp_half_angle(lim, &s, &w);
    const float out[4] = {h[0] * s, h[1] * s, h[2] * s, w};
    const bool changed = fabsf(m_quat_dot(out, q)) < 1.0f - 1e-7f;
    m_quat_copy(out, q);
    return changed;
}

static bool
fast_cone(const struct ik_fast_limit *lim, float *q)
{
    float d[3];
    m_quat_rotate(q, lim->rest_dir, d);
    const float *a = lim->axis;
    const float c = m_vec3_dot(a, d);
    if (c >= lim->cos_cone)
        return false;
    float w[3];
    m_vec3_muladd(d, a, -c, w);
    const float ww = m_vec3_dot(w, w);
    if (ww < 1e-12f) { /* opposite the axis: any side of the rim */
        const float ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0};
        m_vec3_cross(a, fabsf(a[0]) < 0.9f ? ex : ey, w);
        m_vec3_normalize_or(w, ey, w);
    } else {
        m_vec3_scale(w, ik_inv_sqrt(ww), w);
    }
    float dn[3], turn[4];
    if (c >= lim->cos_far) {
        m_vec3_scale(a, lim->cos_cone, dn);
        m_vec3_muladd(dn, w, lim->sin_cone, dn);
    } else { /* far outside: toward the axis, continuously (ik_cone_swing) */
        const float swing = ik_cone_swing(lim->cone_rad, acosf(m_clampf(c, -1.0f, 1.0f)));
        m_vec3_scale(a, cosf(swing), dn);
        m_vec3_muladd(dn, w, sinf(swing), dn);
    }
    m_quat_from_to(d, dn, turn);
    m_quat_mul(turn, q, q);
    m_quat_normalize(q);
    return true;
}

static bool
fast_twist(const struct ik_fast_limit *lim, float *q)
{
    const float *axis = lim->rest_dir;
    float s = m_vec3_dot(q, axis), w = q[3];
    const float n2 = s * s + w * w;
    if (n2 < 1e-12f)
        return false; /* half a turn of swing: twist undefined, keep */
    const float sign = w < 0.0f ? -1.0f : 1.0f;
    const float inv = sign * ik_inv_sqrt(n2);
    float ts = s * inv, tw = w * inv;
    if (!clamp_half_angle(lim, &ts, &tw))
        return false;
    /* q = swing * twist: replace the twist. swing = q * conj(twist_old). */
    const float old[4] = {axis[0] * s * inv, axis[1] * s * inv, axis[2] * s * inv, w * inv};
    float swing[4], oc[4];
    m_quat_conjugate(old, oc);
    m_quat_mul(q, oc, swing);
    const float twist[4] = {axis[0] * ts, axis[1] * ts, axis[2] * ts, tw};
    m_quat_mul(swing, twist, q);
    m_quat_normalize(q);
    return true;
}

bool
ik_fast_limit_apply(const struct ik_fast_limit *lim, float *q)
{
    switch (lim->kind) {
    case SK_LIMIT_HINGE: return fast_hinge(lim, q);
    case SK_LIMIT_BALL: {
        const bool cone = fast_cone(lim, q);
        const bool twist = fast_twist(lim, q);
        return cone || twist;
    }
    case SK_LIMIT_NONE: break;
    }
    return false;
}
