/*
 * The out-of-line part of m_math.h: rotations built from vectors, swing-twist
 * decomposition and matrix conversion.
 */
#include "embody/m_math.h"

void
m_quat_from_to(const float *from, const float *to, float *out)
{
    const float d = m_vec3_dot(from, to);
    if (d < -0.999999f) {
        /* Opposite: any perpendicular axis will do; pick the one least aligned. */
        float axis[3];
        const float x_axis[3] = {1, 0, 0}, y_axis[3] = {0, 1, 0};
        m_vec3_cross(fabsf(from[0]) < 0.9f ? x_axis : y_axis, from, axis);
        const float fallback[3] = {0, 0, 1};
        m_vec3_normalize_or(axis, fallback, axis);
        m_quat_set(out, axis[0], axis[1], axis[2], 0.0f);
        return;
    }
    float c[3];
    m_vec3_cross(from, to, c);
    m_quat_set(out, c[0], c[1], c[2], 1.0f + d);
    m_quat_normalize(out);
}

float
m_quat_swing_twist(const float *q, const float *axis, float *out_swing, float *out_twist)
{
    /* Twist = the projection of q's vector part on the axis (Dobrowolski 2015). */
    const float p = m_vec3_dot(q, axis);
    float twist[4] = {axis[0] * p, axis[1] * p, axis[2] * p, q[3]};
    const float n2 = m_quat_dot(twist, twist);
    if (n2 < 1e-12f) {
        /* q turns the axis by half a circle: the twist is undefined; take none. */
        m_quat_identity(twist);
    } else {
        const float inv = 1.0f / sqrtf(n2);
        for (int i = 0; i < 4; ++i)
            twist[i] *= inv;
    }
    if (out_swing) {
        float tc[4];
        m_quat_conjugate(twist, tc);
        m_quat_mul(q, tc, out_swing);
    }
    if (out_twist)
        m_quat_copy(twist, out_twist);
    const float angle = 2.0f * atan2f(m_vec3_dot(twist, axis), twist[3]);
    return m_angle_wrap(angle);
}

float
m_quat_angle(const float *q)
{
    const float v = sqrtf(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
    return 2.0f * atan2f(v, fabsf(q[3]));
}

void
m_quat_slerp(const float *a, const float *b, float t, float *out)
{
    float bb[4];
    float d = m_quat_dot(a, b);
    const float sign = d < 0.0f ? -1.0f : 1.0f;
    for (int i = 0; i < 4; ++i)
        bb[i] = b[i] * sign;
    d *= sign;
    float wa, wb;
    if (d > 0.9995f) {
        wa = 1.0f - t;
        wb = t;
    } else {
        const float theta = acosf(d);
        const float s = sinf(theta);
        wa = sinf((1.0f - t) * theta) / s;
        wb = sinf(t * theta) / s;
    }
    for (int i = 0; i < 4; ++i)
        out[i] = a[i] * wa + bb[i] * wb;
    m_quat_normalize(out);
}

void
m_quat_from_columns(const float *x_col, const float *y_col, const float *z_col, float *out)
{
    /* m[row][col] */
    const float m00 = x_col[0], m10 = x_col[1], m20 = x_col[2];
    const float m01 = y_col[0], m11 = y_col[1], m21 = y_col[2];
    const float m02 = z_col[0], m12 = z_col[1], m22 = z_col[2];
    const float trace = m00 + m11 + m22;
    if (trace > 0.0f) {
        const float s = 0.5f / sqrtf(trace + 1.0f);
        m_quat_set(out, (m21 - m12) * s, (m02 - m20) * s, (m10 - m01) * s, 0.25f / s);
    } else if (m00 > m11 && m00 > m22) {
        const float s = 2.0f * sqrtf(1.0f + m00 - m11 - m22);
        m_quat_set(out, 0.25f * s, (m01 + m10) / s, (m02 + m20) / s, (m21 - m12) / s);
    } else if (m11 > m22) {
        const float s = 2.0f * sqrtf(1.0f + m11 - m00 - m22);
        m_quat_set(out, (m01 + m10) / s, 0.25f * s, (m12 + m21) / s, (m02 - m20) / s);
    } else {
        const float s = 2.0f * sqrtf(1.0f + m22 - m00 - m11);
        m_quat_set(out, (m02 + m20) / s, (m12 + m21) / s, 0.25f * s, (m10 - m01) / s);
    }
    m_quat_normalize(out);
}

void
m_quat_to_columns(const float *q, float *out_x, float *out_y, float *out_z)
{
    const float ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0}, ez[3] = {0, 0, 1};
    m_quat_rotate(q, ex, out_x);
    m_quat_rotate(q, ey, out_y);
    m_quat_rotate(q, ez, out_z);
}

float
m_angle_wrap(float rad)
{
    if (!isfinite(rad))
        return 0.0f;
    while (rad > M_PI_F)
        rad -= 2.0f * M_PI_F;
    while (rad <= -M_PI_F)
        rad += 2.0f * M_PI_F;
    return rad;
}

float
m_angle_clamp_nearest(float rad, float lo, float hi)
{
    if (rad >= lo && rad <= hi)
        return rad;
    const float to_lo = fabsf(m_angle_wrap(rad - lo));
    const float to_hi = fabsf(m_angle_wrap(rad - hi));
    return to_lo <= to_hi ? lo : hi;
}
