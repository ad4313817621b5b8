/*
 * Forward kinematics of a BVH clip (include/embody/stream.h), in double.
 *
 * A joint's local rotation is the product of its rotation channels in file order (for
 * CMU's "Zrotation Yrotation Xrotation" that is Rz * Ry * Rx); its translation channels
 * add to its offset, in the parent's frame. Then, from the root down:
 *     R = R_parent * R_local,   p = p_parent + R_parent * (offset + translation).
 */
#include <assert.h>
#include <math.h>

#include "embody/stream.h"
#include "stream/st_internal.h"

/* Local translation (offset + position channels) of joint `j` in a motion row. */
static void
local_translation(const struct st_bvh_joint *j, const double *row, double *out)
{
    out[0] = j->offset[0];
    out[1] = j->offset[1];
    out[2] = j->offset[2];
    for (int c = 0; c < j->channel_count; ++c)
        if (j->channel[c] <= ST_BVH_ZPOS)
            out[j->channel[c] - ST_BVH_XPOS] += row[j->first_channel + c];
}

void
st_bvh_frame_matrices(const struct st_bvh *bvh, int frame, double (*out_position)[3],
                      struct st_mat3 *out_rotation)
{
    assert(frame >= 0 && frame < bvh->frame_count);
    const double *row = bvh->motion + (size_t)frame * (size_t)bvh->channel_count;
    for (int i = 0; i < bvh->joint_count; ++i) {
        const struct st_bvh_joint *j = &bvh->joints[i];
        struct st_mat3 local;
        st_mat3_identity(&local);
        for (int c = 0; c < j->channel_count; ++c) {
            if (j->channel[c] < ST_BVH_XROT)
                continue;
            struct st_mat3 turn;
            st_mat3_axis_rotation(j->channel[c] - ST_BVH_XROT, row[j->first_channel + c],
                                  &turn);
            st_mat3_mul(&local, &turn, &local);
        }
        double t[3];
        local_translation(j, row, t);
        if (j->parent < 0) {
            out_rotation[i] = local;
            for (int k = 0; k < 3; ++k)
                out_position[i][k] = t[k];
            continue;
        }
        const int p = j->parent;
        st_mat3_mul(&out_rotation[p], &local, &out_rotation[i]);
        st_mat3_apply(&out_rotation[p], t, t);
        for (int k = 0; k < 3; ++k)
            out_position[i][k] = out_position[p][k] + t[k];
    }
}

/* out = a * b for quaternions x, y, z, w; out may alias a or b. */
static void
quat_mul(const double *a, const double *b, double *out)
{
    const double x = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
    const double y = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
    const double z = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
    const double w = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
    out[0] = x;
    out[1] = y;
    out[2] = z;
    out[3] = w;
}

/* out = q v q*; out may alias v. */
static void
quat_rotate(const double *q, const double *v, double *out)
{
    const double tx = 2.0 * (q[1] * v[2] - q[2] * v[1]);
    const double ty = 2.0 * (q[2] * v[0] - q[0] * v[2]);
    const double tz = 2.0 * (q[0] * v[1] - q[1] * v[0]);
    const double x = v[0] + q[3] * tx + q[1] * tz - q[2] * ty;
    const double y = v[1] + q[3] * ty + q[2] * tx - q[0] * tz;
    const double z = v[2] + q[3] * tz + q[0] * ty - q[1] * tx;
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

void
st_bvh_frame_pose(const struct st_bvh *bvh, int frame, double (*out_position)[3],
                  double (*out_rotation)[4])
{
    assert(frame >= 0 && frame < bvh->frame_count);
    const double *row = bvh->motion + (size_t)frame * (size_t)bvh->channel_count;
    for (int i = 0; i < bvh->joint_count; ++i) {
        const struct st_bvh_joint *j = &bvh->joints[i];
        double local[4] = {0.0, 0.0, 0.0, 1.0};
        for (int c = 0; c < j->channel_count; ++c) {
            if (j->channel[c] < ST_BVH_XROT)
                continue;
            const double half = 0.5 * row[j->first_channel + c] * (ST_PI / 180.0);
            double turn[4] = {0.0, 0.0, 0.0, cos(half)};
            turn[j->channel[c] - ST_BVH_XROT] = sin(half);
            quat_mul(local, turn, local);
        }
        double t[3];
        local_translation(j, row, t);
        const int p = j->parent;
        if (p < 0) {
            for (int k = 0; k < 4; ++k)
                out_rotation[i][k] = local[k];
            for (int k = 0; k < 3; ++k)
                out_position[i][k] = t[k];
            continue;
        }
        quat_mul(out_rotation[p], local, out_rotation[i]);
        quat_rotate(out_rotation[p], t, t);
        for (int k = 0; k < 3; ++k)
            out_position[i][k] = out_position[p][k] + t[k];
    }
}
