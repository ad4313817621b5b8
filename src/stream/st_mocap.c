/*
 * From a motion capture clip to the 3-point stream a headset and two controllers would
 * have reported (include/embody/stream.h; PROTOCOL.md section 2).
 *
 * Two details are fixed by the reference streams (eval/streams/), which this reproduces
 * to their printed precision:
 *  - t of the k-th kept frame is k * step * Frame Time, the clip's own clock (for CMU's
 *    "Frame Time: 0.0083333" that is k * 0.0166666, not exactly k / 60);
 *  - each quaternion's sign is the one Shepperd's branches give for the device's
 *    rotation matrix (st_mat3_to_quat): w > 0 when the trace is positive, else the
 *    component of the largest diagonal element is positive.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embody/m_math.h"
#include "embody/stream.h"
#include "stream/st_internal.h"

/* The eyes relative to the skull base (CMU "Head"), metres, in the head's frame. */
static const double eye_offset_m[3] = {0.0, 0.08, 0.09};

enum mocap_joint {
    MJ_HEAD = 0,
    MJ_LEFT_HAND,
    MJ_LEFT_KNUCKLES,
    MJ_RIGHT_HAND,
    MJ_RIGHT_KNUCKLES,
    MJ_COUNT,
};

static const char *const mocap_joint_name[MJ_COUNT] = {
    "Head", "LeftHand", "LeftFingerBase", "RightHand", "RightFingerBase"};

static enum em_result
find_joints(const struct st_bvh *bvh, const char *source, int *out_index, struct em_error *err)
{
    char missing[200] = "";
    for (int m = 0; m < MJ_COUNT; ++m) {
        out_index[m] = st_bvh_find(bvh, mocap_joint_name[m]);
        if (out_index[m] < 0) {
            const size_t used = strlen(missing);
            snprintf(missing + used, sizeof missing - used, "%s\"%s\"", used ? ", " : "",
                     mocap_joint_name[m]);
        }
    }
    if (missing[0])
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: no joint named %s; a 3-point stream is made from the joints Head, "
                       "LeftHand, LeftFingerBase, RightHand and RightFingerBase (CMU names)",
                       source, missing);
    return EM_OK;
}

/* The rotation R * G, where G's columns are given in the joint's local frame. */
static void
device_orientation(const struct st_mat3 *r, const double g_columns[3][3], float *out_q)
{
    struct st_mat3 g, m;
    for (int c = 0; c < 3; ++c)
        for (int row = 0; row < 3; ++row)
            g.m[row][c] = g_columns[c][row];
    st_mat3_mul(r, &g, &m);
    double q[4];
    st_mat3_to_quat(&m, q);
    m_quat_set(out_q, (float)q[0], (float)q[1], (float)q[2], (float)q[3]);
}

static void
set_valid(struct em_device_pose *d, const double *position_m)
{
    m_vec3_set(d->pose.position_m, (float)position_m[0], (float)position_m[1],
               (float)position_m[2]);
    d->flags = EM_POSE_ALL_VALID;
}

static void
make_frame(const double (*position)[3], const struct st_mat3 *rotation, const int *joint,
           double unit_scale, struct em_tracking_frame *out)
{
    /* The view looks down -Z: the head's +X and +Z turn over (diag(-1, 1, -1)). */
    static const double view_columns[3][3] = {{-1, 0, 0}, {0, 1, 0}, {0, 0, -1}};
    /* The grip's +X, +Y, +Z in each hand's local frame (PROTOCOL section 2). */
    static const double left_grip_columns[3][3] = {{0, -1, 0}, {-1, 0, 0}, {0, 0, -1}};
    static const double right_grip_columns[3][3] = {{0, 1, 0}, {1, 0, 0}, {0, 0, -1}};

    const int head = joint[MJ_HEAD];
    double eye[3];
    st_mat3_apply(&rotation[head], eye_offset_m, eye);
    double p[3];
    for (int k = 0; k < 3; ++k)
        p[k] = position[head][k] * unit_scale + eye[k];
    set_valid(&out->device[EM_DEVICE_HEAD], p);
    device_orientation(&rotation[head], view_columns,
                       out->device[EM_DEVICE_HEAD].pose.orientation);

    const struct {
        enum em_device device;
        int wrist, knuckles;
        const double (*grip)[3];
    } hands[2] = {
        {EM_DEVICE_LEFT_HAND, joint[MJ_LEFT_HAND], joint[MJ_LEFT_KNUCKLES], left_grip_columns},
        {EM_DEVICE_RIGHT_HAND, joint[MJ_RIGHT_HAND], joint[MJ_RIGHT_KNUCKLES],
         right_grip_columns},
    };
    for (int h = 0; h < 2; ++h) {
        for (int k = 0; k < 3; ++k)
            p[k] = (position[hands[h].wrist][k] + position[hands[h].knuckles][k]) * 0.5 *
                   unit_scale;
        set_valid(&out->device[hands[h].device], p);
        device_orientation(&rotation[hands[h].wrist], hands[h].grip,
                           out->device[hands[h].device].pose.orientation);
    }
}

/* A clip's offsets or motion can be finite in the file and still overflow once scaled
 * and made single precision (an offset of 1e300): the clip is at fault, so say so. */
static enum em_result
check_frame_finite(const struct em_tracking_frame *frame, long clip_frame, const char *source,
                   struct em_error *err)
{
    for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
        const struct em_pose *pose = &frame->device[d].pose;
        if (!m_vec3_is_finite(pose->position_m) || !m_quat_is_finite(pose->orientation))
            return em_fail(err, EM_ERROR_PARSE,
                           "%s: frame %ld: the %s pose is not finite (an offset or a motion "
                           "value is too large)",
                           source, clip_frame + 1, em_device_name((enum em_device)d));
    }
    return EM_OK;
}

enum em_result
st_mocap_to_stream(const struct st_bvh *bvh, double unit_scale, const char *source,
                   struct st_stream *out_stream, struct em_error *err)
{
    memset(out_stream, 0, sizeof *out_stream);
    if (!source)
        source = "bvh";
    const enum em_result scale_ok = st_check_unit_scale(unit_scale, source, err);
    if (scale_ok != EM_OK)
        return scale_ok;
    if (bvh->frame_count <= 0)
        return em_fail(err, EM_ERROR_PARSE, "%s: the clip has no frames", source);
    int joint[MJ_COUNT];
    enum em_result r = find_joints(bvh, source, joint, err);
    if (r != EM_OK)
        return r;
    /* Keep every step-th frame to come down to 60 Hz (120 fps clips: every second). */
    const double frames_per_60hz = 1.0 / (bvh->frame_time_s * 60.0);
    long step = frames_per_60hz < (double)bvh->frame_count ? lround(frames_per_60hz)
                                                           : (long)bvh->frame_count;
    if (step < 1)
        step = 1;
    const size_t n = (size_t)bvh->joint_count;
    double(*position)[3] = malloc(n * sizeof *position);
    struct st_mat3 *rotation = malloc(n * sizeof *rotation);
    if (!position || !rotation) {
        r = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", source);
        goto done;
    }
    for (long f = 0, k = 0; f < bvh->frame_count; f += step, ++k) {
        st_bvh_frame_matrices(bvh, (int)f, position, rotation);
        struct em_tracking_frame frame;
        memset(&frame, 0, sizeof frame);
        frame.time_s = (double)(k * step) * bvh->frame_time_s;
        make_frame((const double(*)[3])position, rotation, joint, unit_scale, &frame);
        if ((r = check_frame_finite(&frame, f, source, err)) != EM_OK)
            goto done;
        if (st_stream_append(out_stream, &frame) != EM_OK) {
            r = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", source);
            goto done;
        }
    }
done:
    free(position);
    free(rotation);
    if (r != EM_OK)
        st_stream_fini(out_stream);
    return r;
}
