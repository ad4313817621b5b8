/*
 * The prior's inputs and outputs (include/embody/prior.h): the 60 Hz history of the
 * devices, the features in the frame that follows the head's heading, and the targets
 * and outputs in that same frame. Training (pr_train.c) and the body (src/body/b_prior.c)
 * both go through these functions, so the network sees the same numbers in both.
 */
#include <math.h>
#include <string.h>

#include "embody/m_math.h"
#include "embody/prior.h"

/* A 60 Hz tick may arrive this much early (clock rounding) and still count. */
#define TICK_SLACK_S 1e-4

static void
quat_rotate(const float *q, const float *v, float *out)
{
    /* v + 2 w (u x v) + 2 u x (u x v), u = q.xyz */
    const float ux = q[0], uy = q[1], uz = q[2], w = q[3];
    const float tx = 2.0f * (uy * v[2] - uz * v[1]);
    const float ty = 2.0f * (uz * v[0] - ux * v[2]);
    const float tz = 2.0f * (ux * v[1] - uy * v[0]);
    out[0] = v[0] + w * tx + (uy * tz - uz * ty);
    out[1] = v[1] + w * ty + (uz * tx - ux * tz);
    out[2] = v[2] + w * tz + (ux * ty - uy * tx);
}

/* World direction -> heading frame (turned by -yaw about +Y). */
static void
to_heading(float c, float s, const float *v, float *out)
{
    const float x = v[0] * c - v[2] * s, z = v[0] * s + v[2] * c;
    out[0] = x;
    out[1] = v[1];
    out[2] = z;
}

/* Heading frame -> world (turned by +yaw). */
static void
from_heading(float c, float s, const float *v, float *out)
{
    const float x = v[0] * c + v[2] * s, z = -v[0] * s + v[2] * c;
    out[0] = x;
    out[1] = v[1];
    out[2] = z;
}

float
pr_head_yaw(const float *head_rotation, float fallback_rad)
{
    const float back[3] = {0, 0, -1}, up[3] = {0, 1, 0};
    float f[3], u[3];
    quat_rotate(head_rotation, back, f);
    quat_rotate(head_rotation, up, u);
    const float x = f[0] - f[1] * u[0], z = f[2] - f[1] * u[2];
    if (!(x * x + z * z >= 1e-6f))
        return fallback_rad;
    return atan2f(x, z);
}

void
pr_history_reset(struct pr_history *h)
{
    memset(h, 0, sizeof *h);
}

static bool
pose_finite(const struct em_device_pose *d)
{
    bool ok = true;
    for (int k = 0; k < 3; ++k)
        ok = ok && isfinite(d->pose.position_m[k]);
    for (int k = 0; k < 4; ++k)
        ok = ok && isfinite(d->pose.orientation[k]);
    return ok;
}

static void
copy_pose(const struct em_device_pose *d, float *position, float *rotation)
{
    for (int k = 0; k < 3; ++k)
        position[k] = d->pose.position_m[k];
    for (int k = 0; k < 4; ++k)
        rotation[k] = d->pose.orientation[k];
}

bool
pr_history_push(struct pr_history *h, const struct em_tracking_frame *frame)
{
    if (h->count > 0 && frame->time_s < h->next_time_s - TICK_SLACK_S)
        return false;
    struct pr_device_sample s;
    if (h->count > 0)
        s = h->sample[h->newest];
    else
        memset(&s, 0, sizeof s);
    const struct em_device_pose *head = &frame->device[EM_DEVICE_HEAD];
    /* A device that is not usable (or holds non-finite values) repeats its last sample. */
    if ((em_device_pose_usable(head) || h->count == 0) && pose_finite(head))
        copy_pose(head, s.head_position_m, s.head_rotation);
    for (int g = 0; g < 2; ++g) {
        const struct em_device_pose *grip = &frame->device[EM_DEVICE_LEFT_HAND + g];
        if ((em_device_pose_usable(grip) || h->count == 0) && pose_finite(grip))
            copy_pose(grip, s.grip_position_m[g], s.grip_rotation[g]);
    }
    /* A stream that starts with a lost device: its first pose is whatever the runtime
     * held; an identity rotation at least keeps the features finite. */
    if (s.head_rotation[0] == 0 && s.head_rotation[1] == 0 && s.head_rotation[2] == 0 &&
        s.head_rotation[3] == 0)
        s.head_rotation[3] = 1.0f;
    for (int g = 0; g < 2; ++g)
        if (s.grip_rotation[g][0] == 0 && s.grip_rotation[g][1] == 0 &&
            s.grip_rotation[g][2] == 0 && s.grip_rotation[g][3] == 0)
            s.grip_rotation[g][3] = 1.0f;
    h->newest = h->count > 0 ? (h->newest + 1) % PR_HISTORY_FRAMES : 0;
    h->sample[h->newest] = s;
    if (h->count < PR_HISTORY_FRAMES)
        h->count++;
    /* Next tick one period after this one (or after this frame, after a gap). */
    const double next = h->count > 1 ? h->next_time_s + 1.0 / PR_RATE_HZ : 0.0;
    h->next_time_s = next > frame->time_s ? next : frame->time_s + 1.0 / PR_RATE_HZ;
    return true;
}

static const struct pr_device_sample *
sample_back(const struct pr_history *h, int frames_back)
{
    if (frames_back > h->count - 1)
        frames_back = h->count - 1;
    int i = h->newest - frames_back;
    if (i < 0)
        i += PR_HISTORY_FRAMES;
    return &h->sample[i];
}

static float
length_scale(float height_m)
{
    return height_m > 0.1f ? height_m / PR_REFERENCE_HEIGHT_M : 1.0f;
}

void
pr_features(const struct pr_history *h, float height_m, float floor_y_m, float *out,
            float *out_yaw_rad)
{
    const struct pr_device_sample *now = sample_back(h, 0);
    const float yaw = pr_head_yaw(now->head_rotation, 0.0f);
    const float c = cosf(yaw), s = sinf(yaw), inv = 1.0f / length_scale(height_m);
    const float back[3] = {0, 0, -1}, up[3] = {0, 1, 0}, z[3] = {0, 0, 1};
    int n = 0;
    for (int k = 0; k < PR_WINDOW; ++k) {
        const struct pr_device_sample *p = sample_back(h, k * PR_STRIDE);
        float d[3], v[3];
        d[0] = p->head_position_m[0] - now->head_position_m[0];
        d[1] = p->head_position_m[1] - floor_y_m;
        d[2] = p->head_position_m[2] - now->head_position_m[2];
        to_heading(c, s, d, v);
        for (int i = 0; i < 3; ++i)
            out[n++] = v[i] * inv;
        quat_rotate(p->head_rotation, back, d);
        to_heading(c, s, d, v);
        for (int i = 0; i < 3; ++i)
            out[n++] = v[i];
        quat_rotate(p->head_rotation, up, d);
        to_heading(c, s, d, v);
        for (int i = 0; i < 3; ++i)
            out[n++] = v[i];
        for (int g = 0; g < 2; ++g) {
            for (int i = 0; i < 3; ++i)
                d[i] = p->grip_position_m[g][i] - p->head_position_m[i];
            to_heading(c, s, d, v);
            for (int i = 0; i < 3; ++i)
                out[n++] = v[i] * inv;
        }
    }
    for (int g = 0; g < 2; ++g) {
        float d[3], v[3];
        quat_rotate(now->grip_rotation[g], up, d);
        to_heading(c, s, d, v);
        for (int i = 0; i < 3; ++i)
            out[n++] = v[i];
        quat_rotate(now->grip_rotation[g], z, d);
        to_heading(c, s, d, v);
        for (int i = 0; i < 3; ++i)
            out[n++] = v[i];
    }
    if (out_yaw_rad)
        *out_yaw_rad = yaw;
}

/* A world point -> the heading frame's lengths (origin under the head, floor y = 0). */
static void
encode_point(const float *p, const float *head, float c, float s, float floor_y, float inv,
             float *out)
{
    const float d[3] = {p[0] - head[0], p[1] - floor_y, p[2] - head[2]};
    float v[3];
    to_heading(c, s, d, v);
    for (int i = 0; i < 3; ++i)
        out[i] = v[i] * inv;
}

static void
decode_point(const float *v, const float *head, float c, float s, float floor_y, float scale,
             float *out)
{
    const float d[3] = {v[0] * scale, v[1] * scale, v[2] * scale};
    float w[3];
    from_heading(c, s, d, w);
    out[0] = head[0] + w[0];
    out[1] = floor_y + w[1];
    out[2] = head[2] + w[2];
}

void
pr_encode_targets(const struct pr_truth *t, const float *head, float yaw, float height_m,
                  float floor_y, float *out)
{
    const float c = cosf(yaw), s = sinf(yaw), inv = 1.0f / length_scale(height_m);
    encode_point(t->hips_m, head, c, s, floor_y, inv, out + PR_OUT_HIPS);
    const float z[3] = {0, 0, 1}, up[3] = {0, 1, 0};
    float f[3], v[3];
    quat_rotate(t->hips_rotation, z, f);
    to_heading(c, s, f, v);
    const float len = sqrtf(v[0] * v[0] + v[2] * v[2]);
    out[PR_OUT_HIPS_YAW_SIN] = len > 1e-6f ? v[0] / len : 0.0f;
    out[PR_OUT_HIPS_YAW_COS] = len > 1e-6f ? v[2] / len : 1.0f;
    quat_rotate(t->hips_rotation, up, f);
    to_heading(c, s, f, out + PR_OUT_HIPS_UP);
    for (int side = 0; side < 2; ++side) {
        float *leg = out + PR_OUT_LEG + side * PR_OUT_PER_LEG;
        encode_point(t->ankle_m[side], head, c, s, floor_y, inv, leg + PR_LEG_ANKLE);
        encode_point(t->toes_m[side], head, c, s, floor_y, inv, leg + PR_LEG_TOES);
        encode_point(t->knee_m[side], head, c, s, floor_y, inv, leg + PR_LEG_KNEE);
        out[PR_OUT_CONTACT + side] = t->contact[side] ? 1.0f : 0.0f;
        encode_point(t->upper_arm_m[side], head, c, s, floor_y, inv,
                     out + PR_OUT_UPPER_ARM + 3 * side);
        encode_point(t->lower_arm_m[side], head, c, s, floor_y, inv,
                     out + PR_OUT_LOWER_ARM + 3 * side);
    }
    encode_point(t->neck_m, head, c, s, floor_y, inv, out + PR_OUT_NECK);
    for (int k = 0; k < 2; ++k)
        encode_point(t->back_m[k], head, c, s, floor_y, inv, out + PR_OUT_BACK + 3 * k);
}

/* The smallest rotation taking unit vector a to unit vector b (x, y, z, w). */
static void
quat_from_to(const float *a, const float *b, float *out)
{
    const float d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    float x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2],
          z = a[0] * b[1] - a[1] * b[0], w = 1.0f + d;
    if (w < 1e-6f) { /* opposite: any perpendicular axis (about x or z) */
        x = fabsf(a[0]) > 0.9f ? 0.0f : 1.0f;
        y = 0.0f;
        z = fabsf(a[0]) > 0.9f ? 1.0f : 0.0f;
        w = 0.0f;
    }
    const float n = sqrtf(x * x + y * y + z * z + w * w);
    out[0] = x / n;
    out[1] = y / n;
    out[2] = z / n;
    out[3] = w / n;
}

void
pr_decode_outputs(const float *o, int output_count, const float *head, float yaw, float height_m,
                  float floor_y, struct pr_truth *out, float out_contact[2])
{
    const float c = cosf(yaw), s = sinf(yaw), scale = length_scale(height_m);
    out->has_torso = output_count >= PR_OUTPUT_COUNT_SET2;
    out->has_back = output_count >= PR_OUTPUT_COUNT_SET3;
    out->has_elbows = output_count >= PR_OUTPUT_COUNT;
    for (int side = 0; side < 2 && out->has_elbows; ++side)
        decode_point(o + PR_OUT_LOWER_ARM + 3 * side, head, c, s, floor_y, scale,
                     out->lower_arm_m[side]);
    for (int k = 0; k < 2 && out->has_back; ++k)
        decode_point(o + PR_OUT_BACK + 3 * k, head, c, s, floor_y, scale, out->back_m[k]);
    if (out->has_torso) {
        decode_point(o + PR_OUT_NECK, head, c, s, floor_y, scale, out->neck_m);
        for (int side = 0; side < 2; ++side)
            decode_point(o + PR_OUT_UPPER_ARM + 3 * side, head, c, s, floor_y, scale,
                         out->upper_arm_m[side]);
    }
    decode_point(o + PR_OUT_HIPS, head, c, s, floor_y, scale, out->hips_m);
    for (int side = 0; side < 2; ++side) {
        const float *leg = o + PR_OUT_LEG + side * PR_OUT_PER_LEG;
        decode_point(leg + PR_LEG_ANKLE, head, c, s, floor_y, scale, out->ankle_m[side]);
        decode_point(leg + PR_LEG_TOES, head, c, s, floor_y, scale, out->toes_m[side]);
        decode_point(leg + PR_LEG_KNEE, head, c, s, floor_y, scale, out->knee_m[side]);
        const float p = o[PR_OUT_CONTACT + side];
        out_contact[side] = p < 0.0f ? 0.0f : (p > 1.0f ? 1.0f : p);
        out->contact[side] = out_contact[side] >= 0.5f;
    }
    /* Pelvis: yaw about +Y, then tilted so its +Y is the predicted up axis. */
    const float hips_yaw = yaw + atan2f(o[PR_OUT_HIPS_YAW_SIN], o[PR_OUT_HIPS_YAW_COS]);
    const float q_yaw[4] = {0.0f, sinf(0.5f * hips_yaw), 0.0f, cosf(0.5f * hips_yaw)};
    float up[3];
    from_heading(c, s, o + PR_OUT_HIPS_UP, up);
    const float n = sqrtf(up[0] * up[0] + up[1] * up[1] + up[2] * up[2]);
    const float y_axis[3] = {0, 1, 0};
    float tilt[4] = {0, 0, 0, 1};
    if (n > 1e-3f && up[1] > 0.0f) {
        const float u[3] = {up[0] / n, up[1] / n, up[2] / n};
        quat_from_to(y_axis, u, tilt);
    }
    m_quat_mul(tilt, q_yaw, out->hips_rotation);
}
