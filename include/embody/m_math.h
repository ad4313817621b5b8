/*
 * Small math on top of cglm: the few vector and quaternion operations the solver and the
 * body need, written const-correct and inline so the per-frame paths stay fast, plus
 * swing-twist decomposition and rotation-matrix conversion, which cglm lacks.
 *
 * Quaternions are x, y, z, w (cglm's versor, OpenXR's XrQuaternionf) and unit length.
 * Everything is float; angles are radians.
 */
#ifndef EMBODY_M_MATH_H
#define EMBODY_M_MATH_H

#include <math.h>
#include <stdbool.h>

#include <cglm/types.h>

#include "embody/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define M_PI_F 3.14159265358979323846f
#define M_DEG_TO_RAD (M_PI_F / 180.0f)
#define M_RAD_TO_DEG (180.0f / M_PI_F)

/* Below this length a vector has no usable direction (Debian's cglm 0.8.8 only guards
 * exact zero, so coincident joints are guarded here). */
#define M_TINY 1e-9f

static inline void
m_vec3_set(float *out, float x, float y, float z)
{
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

static inline void
m_vec3_copy(const float *a, float *out)
{
    out[0] = a[0];
    out[1] = a[1];
    out[2] = a[2];
}

static inline void
m_vec3_sub(const float *a, const float *b, float *out)
{
    out[0] = a[0] - b[0];
    out[1] = a[1] - b[1];
    out[2] = a[2] - b[2];
}

static inline void
m_vec3_add(const float *a, const float *b, float *out)
{
    out[0] = a[0] + b[0];
    out[1] = a[1] + b[1];
    out[2] = a[2] + b[2];
}

/* out = a + b * s */
static inline void
m_vec3_muladd(const float *a, const float *b, float s, float *out)
{
    out[0] = a[0] + b[0] * s;
    out[1] = a[1] + b[1] * s;
    out[2] = a[2] + b[2] * s;
}

static inline void
m_vec3_scale(const float *a, float s, float *out)
{
    out[0] = a[0] * s;
    out[1] = a[1] * s;
    out[2] = a[2] * s;
}

static inline float
m_vec3_dot(const float *a, const float *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static inline void
m_vec3_cross(const float *a, const float *b, float *out)
{
    const float x = a[1] * b[2] - a[2] * b[1];
    const float y = a[2] * b[0] - a[0] * b[2];
    const float z = a[0] * b[1] - a[1] * b[0];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

static inline float
m_vec3_length(const float *a)
{
    return sqrtf(m_vec3_dot(a, a));
}

static inline float
m_vec3_distance(const float *a, const float *b)
{
    float d[3];
    m_vec3_sub(a, b, d);
    return m_vec3_length(d);
}

/* out = a + (b - a) * t */
static inline void
m_vec3_lerp(const float *a, const float *b, float t, float *out)
{
    out[0] = a[0] + (b[0] - a[0]) * t;
    out[1] = a[1] + (b[1] - a[1]) * t;
    out[2] = a[2] + (b[2] - a[2]) * t;
}

/* Normalizes `v` into `out` and returns the original length; when `v` is shorter than
 * M_TINY, `out` becomes `fallback` (a unit vector) and 0 is returned. */
static inline float
m_vec3_normalize_or(const float *v, const float *fallback, float *out)
{
    const float len = m_vec3_length(v);
    if (!(len > M_TINY)) {
        m_vec3_copy(fallback, out);
        return 0.0f;
    }
    m_vec3_scale(v, 1.0f / len, out);
    return len;
}

static inline bool
m_vec3_is_finite(const float *v)
{
    return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

static inline void
m_quat_identity(float *out)
{
    out[0] = out[1] = out[2] = 0.0f;
    out[3] = 1.0f;
}

static inline void
m_quat_copy(const float *q, float *out)
{
    out[0] = q[0];
    out[1] = q[1];
    out[2] = q[2];
    out[3] = q[3];
}

static inline void
m_quat_set(float *out, float x, float y, float z, float w)
{
    out[0] = x;
    out[1] = y;
    out[2] = z;
    out[3] = w;
}

static inline void
m_quat_conjugate(const float *q, float *out)
{
    out[0] = -q[0];
    out[1] = -q[1];
    out[2] = -q[2];
    out[3] = q[3];
}

/* out = a * b (apply b first, then a); out may alias a or b. */
static inline void
m_quat_mul(const float *a, const float *b, float *out)
{
    const float x = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
    const float y = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
    const float z = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
    const float w = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
    out[0] = x;
    out[1] = y;
    out[2] = z;
    out[3] = w;
}

/* out = conj(a) * b: b expressed in a's frame. */
static inline void
m_quat_mul_conj_first(const float *a, const float *b, float *out)
{
    float ac[4];
    m_quat_conjugate(a, ac);
    m_quat_mul(ac, b, out);
}

/* out = q v q*; out may alias v. */
static inline void
m_quat_rotate(const float *q, const float *v, float *out)
{
    const float tx = 2.0f * (q[1] * v[2] - q[2] * v[1]);
    const float ty = 2.0f * (q[2] * v[0] - q[0] * v[2]);
    const float tz = 2.0f * (q[0] * v[1] - q[1] * v[0]);
    const float x = v[0] + q[3] * tx + q[1] * tz - q[2] * ty;
    const float y = v[1] + q[3] * ty + q[2] * tx - q[0] * tz;
    const float z = v[2] + q[3] * tz + q[0] * ty - q[1] * tx;
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

/* out = q* v q (rotate by the inverse); out may alias v. */
static inline void
m_quat_rotate_inv(const float *q, const float *v, float *out)
{
    float qc[4];
    m_quat_conjugate(q, qc);
    m_quat_rotate(qc, v, out);
}

static inline float
m_quat_dot(const float *a, const float *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
}

/* Normalizes q in place; a degenerate q becomes identity. */
static inline void
m_quat_normalize(float *q)
{
    const float n2 = m_quat_dot(q, q);
    if (!(n2 > M_TINY)) {
        m_quat_identity(q);
        return;
    }
    const float inv = 1.0f / sqrtf(n2);
    q[0] *= inv;
    q[1] *= inv;
    q[2] *= inv;
    q[3] *= inv;
}

static inline bool
m_quat_is_finite(const float *q)
{
    return isfinite(q[0]) && isfinite(q[1]) && isfinite(q[2]) && isfinite(q[3]);
}

/* Rotation of `angle_rad` about the unit `axis`. */
static inline void
m_quat_from_axis_angle(const float *axis, float angle_rad, float *out)
{
    const float s = sinf(0.5f * angle_rad);
    out[0] = axis[0] * s;
    out[1] = axis[1] * s;
    out[2] = axis[2] * s;
    out[3] = cosf(0.5f * angle_rad);
}

/* The shortest rotation taking unit vector `from` to unit vector `to`. Opposite vectors
 * turn half a circle about an axis perpendicular to `from`. */
EMBODY_API void
m_quat_from_to(const float *from, const float *to, float *out);

/* Splits q = swing * twist, where twist turns about the unit `axis` and swing turns
 * `axis` to where q takes it. Returns the twist angle in (-pi, pi]. */
EMBODY_API float
m_quat_swing_twist(const float *q, const float *axis, float *out_swing, float *out_twist);

/* Rotation angle of q in [0, pi]. */
EMBODY_API float
m_quat_angle(const float *q);

/* Shortest-path spherical interpolation, t in [0, 1]. */
EMBODY_API void
m_quat_slerp(const float *a, const float *b, float t, float *out);

/* The quaternion of a rotation matrix given by its columns (the images of +X, +Y, +Z).
 * Uses the trace/largest-diagonal branches (Shepperd), so the sign of the result is that
 * of the largest of w, x, y, z being positive. */
EMBODY_API void
m_quat_from_columns(const float *x_col, const float *y_col, const float *z_col, float *out);

/* Columns of q's rotation matrix. */
EMBODY_API void
m_quat_to_columns(const float *q, float *out_x, float *out_y, float *out_z);

/* Wraps an angle into (-pi, pi]. */
EMBODY_API float
m_angle_wrap(float rad);

/* An angle kept within [lo, hi] (lo <= hi, both within [-pi, pi]); out of range, the
 * nearer end around the circle: a joint bent far past one end points close to the other
 * end's side only in numbers, and the wrap of atan2 must not send it to the far end. */
EMBODY_API float
m_angle_clamp_nearest(float rad, float lo, float hi);

static inline float
m_clampf(float x, float lo, float hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}

/* a at t = 0, b at t = 1, on the line between and beyond. */
static inline float
m_lerpf(float a, float b, float t)
{
    return a + (b - a) * t;
}

/* t clamped to [0, 1], eased: 3t^2 - 2t^3 (0 at 0, 1 at 1, flat at both ends). */
static inline float
m_ease(float t)
{
    t = m_clampf(t, 0.0f, 1.0f);
    return t * t * (3.0f - 2.0f * t);
}

/* 0 up to edge0, 1 from edge1, eased between (m_ease of x's place from one to the other). */
static inline float
m_smoothstep(float edge0, float edge1, float x)
{
    return m_ease((x - edge0) / (edge1 - edge0));
}

#ifdef __cplusplus
}
#endif

#endif
