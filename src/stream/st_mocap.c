/*
 * From a motion capture clip to the 3-point stream a headset and two controllers would
 * have reported (include/embody/stream.h; PROTOCOL.md section 2), and optionally the body
 * trackers a full-body player would wear (section 2b).
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embody/m_math.h"
#include "embody/stream.h"
#include "stream/st_internal.h"

/* The eyes relative to the skull base (CMU "Head"), metres, in the head's frame. */
static const double eye_offset_m[3] = {0.0, 0.08, 0.09};

/* The body trackers of PROTOCOL section 2b: the CMU joint each is mounted on and where
 * on it (metres, in the joint's frame), in enum em_tracker order. */
static const struct {
    const char *joint;
    enum sk_bone bone; /* the same joint on rigs with other names */
    double offset_m[3];
} k_trackers[EM_TRACKER_COUNT] = {
    {"Hips", SK_HIPS, {0.0, 0.05, -0.12}},
    {"Spine1", SK_CHEST, {0.0, 0.0, 0.10}},
    {"LeftFoot", SK_LEFT_FOOT, {0.0, -0.02, 0.07}},
    {"RightFoot", SK_RIGHT_FOOT, {0.0, -0.02, 0.07}},
    {"LeftLeg", SK_LEFT_LOWER_LEG, {0.0, -0.10, 0.06}},
    {"RightLeg", SK_RIGHT_LOWER_LEG, {0.0, -0.10, 0.06}},
    {"LeftForeArm", SK_LEFT_LOWER_ARM, {0.0, 0.0, -0.05}},
    {"RightForeArm", SK_RIGHT_LOWER_ARM, {0.0, 0.0, -0.05}},
};

void
st_mocap_tracker_mount(enum em_tracker tracker, const char **out_joint, float *out_offset_m)
{
    if (out_joint)
        *out_joint = k_trackers[tracker].joint;
    if (out_offset_m)
        for (int k = 0; k < 3; ++k)
            out_offset_m[k] = (float)k_trackers[tracker].offset_m[k];
}

/* Each tracker's joint: CMU's name, or on a rig in CMU's T-pose with other names the
 * joint its name map gives the same humanoid bone. */
static enum em_result
find_tracker_joints(const struct st_bvh *bvh, const struct st_mocap_rig *rig,
                    uint32_t tracker_mask, const char *source, int *out_index,
                    struct em_error *err)
{
    char missing[200] = "";
    for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
        out_index[t] = -1;
        if (!(tracker_mask & EM_TRACKER_BIT(t)))
            continue;
        out_index[t] = st_bvh_find(bvh, k_trackers[t].joint);
        if (out_index[t] < 0)
            out_index[t] = rig->joint[k_trackers[t].bone];
        if (out_index[t] < 0) {
            const size_t used = strlen(missing);
            snprintf(missing + used, sizeof missing - used, "%s\"%s\" (for the %s tracker)",
                     used ? ", " : "", k_trackers[t].joint, em_tracker_name((enum em_tracker)t));
        }
    }
    if (missing[0])
        return em_fail(err, EM_ERROR_PARSE, "%s: no joint named %s", source, missing);
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

/* The joint's rotation in the convention's frame (st_mocap_rig): R, or R * fix. */
static void
convention_rotation(const struct st_mocap_rig *rig, const struct st_mat3 *rotation,
                    enum st_rig_frame frame, int joint, struct st_mat3 *out)
{
    if (rig->frames_aligned) {
        *out = rotation[joint];
        return;
    }
    struct st_mat3 fix;
    memcpy(fix.m, rig->fix[frame], sizeof fix.m);
    st_mat3_mul(&rotation[joint], &fix, out);
}

static void
make_frame(const double (*position)[3], const struct st_mat3 *rotation,
           const struct st_mocap_rig *rig, double unit_scale, struct em_tracking_frame *out)
{
    /* The view looks down -Z: the head's +X and +Z turn over (diag(-1, 1, -1)). */
    static const double view_columns[3][3] = {{-1, 0, 0}, {0, 1, 0}, {0, 0, -1}};
    /* The grip's +X, +Y, +Z in each hand's local frame (PROTOCOL section 2). */
    static const double left_grip_columns[3][3] = {{0, -1, 0}, {-1, 0, 0}, {0, 0, -1}};
    static const double right_grip_columns[3][3] = {{0, 1, 0}, {1, 0, 0}, {0, 0, -1}};

    const int head = rig->joint[SK_HEAD];
    struct st_mat3 r;
    convention_rotation(rig, rotation, ST_RIG_HEAD, head, &r);
    double eye[3];
    st_mat3_apply(&r, eye_offset_m, eye);
    double p[3];
    for (int k = 0; k < 3; ++k)
        p[k] = position[head][k] * unit_scale + eye[k];
    set_valid(&out->device[EM_DEVICE_HEAD], p);
    device_orientation(&r, view_columns, out->device[EM_DEVICE_HEAD].pose.orientation);

    const struct {
        enum em_device device;
        enum st_rig_frame frame;
        int wrist, knuckles;
        const double (*grip)[3];
    } hands[2] = {
        {EM_DEVICE_LEFT_HAND, ST_RIG_LEFT_HAND, rig->joint[SK_LEFT_HAND],
         rig->joint[SK_LEFT_HAND_END], left_grip_columns},
        {EM_DEVICE_RIGHT_HAND, ST_RIG_RIGHT_HAND, rig->joint[SK_RIGHT_HAND],
         rig->joint[SK_RIGHT_HAND_END], right_grip_columns},
    };
    for (int h = 0; h < 2; ++h) {
        for (int k = 0; k < 3; ++k)
            p[k] = (position[hands[h].wrist][k] + position[hands[h].knuckles][k]) * 0.5 *
                   unit_scale;
        set_valid(&out->device[hands[h].device], p);
        convention_rotation(rig, rotation, hands[h].frame, hands[h].wrist, &r);
        device_orientation(&r, hands[h].grip, out->device[hands[h].device].pose.orientation);
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

/* Each tracker: at its joint plus the mount offset turned with the joint, with the
 * joint's own rotation. */
static void
make_trackers(const double (*position)[3], const struct st_mat3 *rotation, const int *tracker_joint,
              uint32_t tracker_mask, double unit_scale, struct em_tracking_frame *out)
{
    static const double identity_columns[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    out->tracker_present = tracker_mask;
    for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
        if (!(tracker_mask & EM_TRACKER_BIT(t)))
            continue;
        const int j = tracker_joint[t];
        double off[3], p[3];
        st_mat3_apply(&rotation[j], k_trackers[t].offset_m, off);
        for (int k = 0; k < 3; ++k)
            p[k] = position[j][k] * unit_scale + off[k];
        set_valid(&out->tracker[t], p);
        device_orientation(&rotation[j], identity_columns, out->tracker[t].pose.orientation);
    }
}

enum em_result
st_mocap_to_stream(const struct st_bvh *bvh, double unit_scale, const char *source,
                   struct st_stream *out_stream, struct em_error *err)
{
    return st_mocap_to_stream_trackers(bvh, unit_scale, 0, source, out_stream, err);
}

enum em_result
st_mocap_to_stream_trackers(const struct st_bvh *bvh, double unit_scale, uint32_t tracker_mask,
                            const char *source, struct st_stream *out_stream, struct em_error *err)
{
    memset(out_stream, 0, sizeof *out_stream);
    if (!source)
        source = "bvh";
    const enum em_result scale_ok = st_check_unit_scale(unit_scale, source, err);
    if (scale_ok != EM_OK)
        return scale_ok;
    if (bvh->frame_count <= 0)
        return em_fail(err, EM_ERROR_PARSE, "%s: the clip has no frames", source);
    struct st_mocap_rig rig;
    int tracker_joint[EM_TRACKER_COUNT];
    tracker_mask &= EM_TRACKER_ALL;
    enum em_result r = st_mocap_rig_init(bvh, source, &rig, err);
    if (r == EM_OK && tracker_mask && !rig.frames_aligned)
        r = em_fail(err, EM_ERROR_PARSE,
                    "%s: body trackers are mounted in CMU's joint frames, and this clip's rest "
                    "pose is not CMU's T-pose",
                    source);
    if (r == EM_OK)
        r = find_tracker_joints(bvh, &rig, tracker_mask, source, tracker_joint, err);
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
        make_frame((const double(*)[3])position, rotation, &rig, unit_scale, &frame);
        make_trackers((const double(*)[3])position, rotation, tracker_joint, tracker_mask,
                      unit_scale, &frame);
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

/* ---- tracker setups ------------------------------------------------------------- */

static const struct {
    const char *name;
    uint32_t mask;
} k_setups[] = {
    {"3", ST_SETUP_3}, {"4", ST_SETUP_4}, {"6", ST_SETUP_6}, {"8", ST_SETUP_8}, {"11", ST_SETUP_11},
};
#define SETUP_COUNT ((int)(sizeof k_setups / sizeof k_setups[0]))

enum em_result
st_tracker_setup_parse(const char *text, uint32_t *out_mask, struct em_error *err)
{
    for (int i = 0; i < SETUP_COUNT; ++i)
        if (strcmp(text, k_setups[i].name) == 0) {
            *out_mask = k_setups[i].mask;
            return EM_OK;
        }
    uint32_t mask = 0;
    const char *p = text;
    for (;;) {
        const char *comma = strchr(p, ',');
        const size_t n = comma ? (size_t)(comma - p) : strlen(p);
        char name[32];
        int t = -1;
        if (n > 0 && n < sizeof name) {
            memcpy(name, p, n);
            name[n] = '\0';
            t = em_tracker_find(name);
        }
        if (t < 0)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "tracker setup \"%s\": \"%.*s\" is neither a setup (3, 4, 6, 8, 11) "
                           "nor a tracker (pelvis, chest, left_foot, right_foot, left_knee, "
                           "right_knee, left_elbow, right_elbow)",
                           text, (int)(n > 40 ? 40 : n), p);
        mask |= EM_TRACKER_BIT(t);
        if (!comma)
            break;
        p = comma + 1;
    }
    *out_mask = mask;
    return EM_OK;
}

void
st_tracker_setup_name(uint32_t mask, char *out, size_t size)
{
    mask &= EM_TRACKER_ALL;
    for (int i = 0; i < SETUP_COUNT; ++i)
        if (k_setups[i].mask == mask) {
            snprintf(out, size, "%s", k_setups[i].name);
            return;
        }
    size_t used = 0;
    out[0] = '\0';
    for (int t = 0; t < EM_TRACKER_COUNT && used < size; ++t)
        if (mask & EM_TRACKER_BIT(t)) {
            const int n = snprintf(out + used, size - used, "%s%s", used ? "," : "",
                                   em_tracker_name((enum em_tracker)t));
            used += n > 0 ? (size_t)n : 0;
        }
}
