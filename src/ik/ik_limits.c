/*
 * Joint limits on local rotations: hinges (one axis, a range of angles) and ball joints
 * (a swing cone for the bone's direction and a twist range about the bone).
 */
#include <stddef.h>

#include "embody/ik.h"
#include "embody/m_math.h"

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
    const float clamped = m_clampf(angle, limit->min_rad, limit->max_rad);
    float out[4];
    m_quat_from_axis_angle(h, clamped, out);
    const bool changed = fabsf(m_quat_dot(out, q)) < 1.0f - 1e-7f;
    m_quat_copy(out, q);
    return changed;
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
    const float s = sinf(limit->cone_rad);
    m_vec3_scale(a, cos_cone, dn);
    m_vec3_muladd(dn, w, s, dn);
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
