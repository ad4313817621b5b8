/*
 * Double-precision rotation matrices for the stream module (st_internal.h). BVH clips
 * are evaluated in double so that the streams made from them match the reference files
 * to far below their printed precision.
 */
#include <math.h>

#include "stream/st_internal.h"

void
st_mat3_identity(struct st_mat3 *out)
{
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            out->m[r][c] = r == c ? 1.0 : 0.0;
}

void
st_mat3_mul(const struct st_mat3 *a, const struct st_mat3 *b, struct st_mat3 *out)
{
    struct st_mat3 t;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            t.m[r][c] = a->m[r][0] * b->m[0][c] + a->m[r][1] * b->m[1][c] +
                        a->m[r][2] * b->m[2][c];
    *out = t;
}

void
st_mat3_apply(const struct st_mat3 *m, const double *v, double *out)
{
    const double x = m->m[0][0] * v[0] + m->m[0][1] * v[1] + m->m[0][2] * v[2];
    const double y = m->m[1][0] * v[0] + m->m[1][1] * v[1] + m->m[1][2] * v[2];
    const double z = m->m[2][0] * v[0] + m->m[2][1] * v[1] + m->m[2][2] * v[2];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

void
st_mat3_axis_rotation(int axis, double deg, struct st_mat3 *out)
{
    const double rad = deg * (ST_PI / 180.0);
    const double c = cos(rad), s = sin(rad);
    const int i = (axis + 1) % 3, j = (axis + 2) % 3;
    st_mat3_identity(out);
    /* The plane (i, j) turns from i towards j: X turns Y to Z, Y turns Z to X, Z turns X
     * to Y (right-handed). */
    out->m[i][i] = c;
    out->m[i][j] = -s;
    out->m[j][i] = s;
    out->m[j][j] = c;
}

void
st_mat3_to_quat(const struct st_mat3 *mat, double *q)
{
    const double(*m)[3] = mat->m;
    const double trace = m[0][0] + m[1][1] + m[2][2];
    if (trace > 0.0) {
        const double s = 0.5 / sqrt(trace + 1.0);
        q[0] = (m[2][1] - m[1][2]) * s;
        q[1] = (m[0][2] - m[2][0]) * s;
        q[2] = (m[1][0] - m[0][1]) * s;
        q[3] = 0.25 / s;
    } else if (m[0][0] > m[1][1] && m[0][0] > m[2][2]) {
        const double s = 2.0 * sqrt(1.0 + m[0][0] - m[1][1] - m[2][2]);
        q[0] = 0.25 * s;
        q[1] = (m[0][1] + m[1][0]) / s;
        q[2] = (m[0][2] + m[2][0]) / s;
        q[3] = (m[2][1] - m[1][2]) / s;
    } else if (m[1][1] > m[2][2]) {
        const double s = 2.0 * sqrt(1.0 + m[1][1] - m[0][0] - m[2][2]);
        q[0] = (m[0][1] + m[1][0]) / s;
        q[1] = 0.25 * s;
        q[2] = (m[1][2] + m[2][1]) / s;
        q[3] = (m[0][2] - m[2][0]) / s;
    } else {
        const double s = 2.0 * sqrt(1.0 + m[2][2] - m[0][0] - m[1][1]);
        q[0] = (m[0][2] + m[2][0]) / s;
        q[1] = (m[1][2] + m[2][1]) / s;
        q[2] = 0.25 * s;
        q[3] = (m[1][0] - m[0][1]) / s;
    }
    const double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int i = 0; i < 4; ++i)
        q[i] /= n;
}

void
st_quat_to_mat3(const double *q_in, struct st_mat3 *out)
{
    const double n2 = q_in[0] * q_in[0] + q_in[1] * q_in[1] + q_in[2] * q_in[2] +
                      q_in[3] * q_in[3];
    if (!(n2 > 1e-300)) {
        st_mat3_identity(out);
        return;
    }
    const double inv = 1.0 / sqrt(n2);
    const double x = q_in[0] * inv, y = q_in[1] * inv, z = q_in[2] * inv, w = q_in[3] * inv;
    out->m[0][0] = 1.0 - 2.0 * (y * y + z * z);
    out->m[0][1] = 2.0 * (x * y - w * z);
    out->m[0][2] = 2.0 * (x * z + w * y);
    out->m[1][0] = 2.0 * (x * y + w * z);
    out->m[1][1] = 1.0 - 2.0 * (x * x + z * z);
    out->m[1][2] = 2.0 * (y * z - w * x);
    out->m[2][0] = 2.0 * (x * z - w * y);
    out->m[2][1] = 2.0 * (y * z + w * x);
    out->m[2][2] = 1.0 - 2.0 * (x * x + y * y);
}

void
st_mat3_from_to(const double *from, const double *to, struct st_mat3 *out)
{
    const double d = from[0] * to[0] + from[1] * to[1] + from[2] * to[2];
    if (d < -1.0 + 1e-12) {
        /* Opposite: half a turn about an axis perpendicular to `from`. */
        double axis[3];
        if (fabs(from[0]) < 0.9) {
            axis[0] = 0.0, axis[1] = from[2], axis[2] = -from[1]; /* X x from */
        } else {
            axis[0] = -from[2], axis[1] = 0.0, axis[2] = from[0]; /* Y x from */
        }
        const double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c)
                out->m[r][c] = 2.0 * axis[r] * axis[c] / (n * n) - (r == c ? 1.0 : 0.0);
        return;
    }
    /* Rodrigues with v = from x to, |v| = sin, d = cos: R = I + [v]x + [v]x^2 / (1 + d). */
    const double v[3] = {from[1] * to[2] - from[2] * to[1], from[2] * to[0] - from[0] * to[2],
                         from[0] * to[1] - from[1] * to[0]};
    const double k = 1.0 / (1.0 + d);
    const double vx[3][3] = {{0.0, -v[2], v[1]}, {v[2], 0.0, -v[0]}, {-v[1], v[0], 0.0}};
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
            double sq = 0.0;
            for (int i = 0; i < 3; ++i)
                sq += vx[r][i] * vx[i][c];
            out->m[r][c] = (r == c ? 1.0 : 0.0) + vx[r][c] + sq * k;
        }
}
