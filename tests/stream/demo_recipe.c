/*
 * The bundled demo (config/demo/demo.csv), as cuts of the public CMU clips'
 * 3-point streams (tests/data/mocap) joined into one motion: each cut is turned about +Y
 * and moved on the floor so that it starts where and facing how the one before ended, and
 * the devices' remaining differences fade out over DEMO_BLEND_S, so nothing jumps. The
 * whole is then turned and moved so the last frame faces the mirror camera (+Z view
 * direction of the clips' own start) at the origin. The hands get fingers (demo_hands):
 * relaxed while walking, the right one pointing the way, open reaching up and gripping at
 * the top, gripping at the bottom of the squat, then a thumbs-up and an open left hand.
 * make_demo writes it; the stream test checks the shipped file is what this makes.
 */
#include "demo_recipe.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "embody/hand.h"
#include "embody/m_math.h"

#define CMU_METRES_PER_UNIT 0.056444
#define DEMO_BLEND_S 0.3

/* 600 frames at 60 Hz (what `.ci/setup.sh run` plays before its screenshot): walking with
 * a turn of about 200 degrees, reaching up with both hands, a squat down to the floor and
 * back, and standing with the hands raised in front. */
static const struct demo_cut k_cuts[] = {
    {"cmu_09_12", 0.5, 5.0},   /* navigate: walk forward, turning round */
    {"cmu_14_07", 0.25, 2.25}, /* reach up for something */
    {"cmu_14_14", 8.8, 11.2},  /* squat */
    {"cmu_14_14", 20.2, 21.3}, /* stand, hands in front: the last frame */
};

const struct demo_cut *
demo_cuts(int *out_count)
{
    *out_count = (int)(sizeof k_cuts / sizeof k_cuts[0]);
    return k_cuts;
}

/* The headset's heading about +Y (radians; 0 when its view looks along -Z). */
static float
heading_of(const float *q)
{
    const float f[3] = {0.0f, 0.0f, -1.0f};
    float v[3];
    m_quat_rotate(q, f, v);
    return atan2f(-v[0], -v[2]);
}

/* Turns `f` by `yaw` about +Y through the point `pivot`, then moves it by `shift`. */
static void
place_frame(struct em_tracking_frame *f, float yaw, const float *pivot, const float *shift)
{
    const float up[3] = {0.0f, 1.0f, 0.0f};
    float turn[4];
    m_quat_from_axis_angle(up, yaw, turn);
    for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
        struct em_device_pose *p = &f->device[d];
        float rel[3], turned[3], q[4];
        m_vec3_sub(p->pose.position_m, pivot, rel);
        m_quat_rotate(turn, rel, turned);
        for (int k = 0; k < 3; ++k)
            p->pose.position_m[k] = pivot[k] + turned[k] + shift[k];
        m_quat_mul(turn, p->pose.orientation, q);
        m_quat_normalize(q);
        m_quat_copy(q, p->pose.orientation);
    }
}

/* Fades the difference between `from` (the previous cut's last frame) and the cut's first
 * frame out over its first frames, `weight` 1 at the start. */
static void
blend_toward(struct em_tracking_frame *f, const struct em_tracking_frame *from,
             const struct em_tracking_frame *first, float weight)
{
    for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
        struct em_device_pose *p = &f->device[d];
        for (int k = 0; k < 3; ++k)
            p->pose.position_m[k] += weight * (from->device[d].pose.position_m[k] -
                                               first->device[d].pose.position_m[k]);
        /* The rotation from the cut's first to the previous last, applied in part. */
        float delta[4], part[4], q[4], identity[4];
        m_quat_mul_conj_first(first->device[d].pose.orientation,
                              from->device[d].pose.orientation, delta);
        m_quat_identity(identity);
        if (m_quat_dot(delta, identity) < 0.0f)
            for (int k = 0; k < 4; ++k)
                delta[k] = -delta[k];
        m_quat_slerp(identity, delta, weight, part);
        m_quat_mul(p->pose.orientation, part, q);
        m_quat_normalize(q);
        m_quat_copy(q, p->pose.orientation);
    }
}

static enum em_result
clip_stream(const char *clip_dir, const char *name, struct st_stream *out, struct em_error *err)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.bvh", clip_dir, name);
    struct st_bvh bvh;
    enum em_result r = st_bvh_load(path, &bvh, err);
    if (r != EM_OK)
        return r;
    r = st_mocap_to_stream(&bvh, CMU_METRES_PER_UNIT, path, out, err);
    st_bvh_fini(&bvh);
    return r;
}

/* ---- The hands ---- */

/* A hand's key: from `time_s` on, these curls (thumb, index, middle, ring, little) and
 * splay, eased in over DEMO_HAND_EASE_S. */
struct demo_hand_key {
    double time_s;
    float curl[HD_FINGER_COUNT];
    float splay;
};

#define DEMO_HAND_EASE_S 0.25
#define RELAXED {0.3f, 0.25f, 0.3f, 0.35f, 0.4f}, 0.3f
#define OPEN {0.0f, 0.0f, 0.0f, 0.0f, 0.0f}, 0.8f
#define FIST {0.8f, 1.0f, 1.0f, 1.0f, 1.0f}, 0.0f
#define POINT {0.7f, 0.0f, 1.0f, 1.0f, 1.0f}, 0.0f
#define THUMBS_UP {0.0f, 1.0f, 1.0f, 1.0f, 1.0f}, 0.0f

/* The cuts' times in the demo: walk 0 to 4.5 s, reach 4.5 to 6.5, squat 6.5 to 8.9, stand
 * 8.9 to 10. */
static const struct demo_hand_key k_left[] = {
    {0.0, RELAXED}, {4.6, OPEN}, {5.5, FIST}, {6.4, RELAXED}, {7.6, FIST}, {8.4, RELAXED},
    {9.0, OPEN},
};
static const struct demo_hand_key k_right[] = {
    {0.0, RELAXED}, {1.8, POINT}, {3.4, RELAXED}, {4.6, OPEN}, {5.5, FIST}, {6.4, RELAXED},
    {7.6, FIST}, {8.4, RELAXED}, {9.0, THUMBS_UP},
};

/* The curls at time t: the last key's, eased in from the one before (smoothstep). */
static void
curls_at(const struct demo_hand_key *keys, int count, double t, struct hd_curls *out)
{
    int k = 0;
    while (k + 1 < count && keys[k + 1].time_s <= t)
        ++k;
    const struct demo_hand_key *to = &keys[k], *from = k > 0 ? &keys[k - 1] : &keys[k];
    const double x = fmin(1.0, (t - to->time_s) / DEMO_HAND_EASE_S);
    const float s = (float)(x * x * (3.0 - 2.0 * x));
    for (int f = 0; f < HD_FINGER_COUNT; ++f)
        out->curl[f] = from->curl[f] + s * (to->curl[f] - from->curl[f]);
    out->splay = from->splay + s * (to->splay - from->splay);
}

/* Every frame of `stream` with both hands' fingers from the keys, on the default hand. */
static enum em_result
demo_hands(struct st_stream *stream, struct em_error *err)
{
    const struct demo_hand_key *keys[HD_HAND_COUNT] = {k_left, k_right};
    const int counts[HD_HAND_COUNT] = {(int)(sizeof k_left / sizeof k_left[0]),
                                       (int)(sizeof k_right / sizeof k_right[0])};
    struct hd_model model[HD_HAND_COUNT];
    for (int h = 0; h < HD_HAND_COUNT; ++h) {
        const struct hd_model_desc desc = {.hand = (enum hd_hand)h};
        if (hd_model_init(&desc, &model[h], err) != EM_OK)
            return EM_ERROR_INVALID_ARGUMENT;
    }
    struct st_stream with = {0};
    for (int i = 0; i < stream->frame_count; ++i) {
        struct st_fingers fingers;
        memset(&fingers, 0, sizeof fingers);
        for (int h = 0; h < HD_HAND_COUNT; ++h) {
            struct hd_curls curls;
            struct hd_pose pose;
            curls_at(keys[h], counts[h], stream->frames[i].time_s, &curls);
            hd_pose_from_curls(&model[h], &curls, &pose);
            st_fingers_set_pose(&fingers, (enum hd_hand)h, &pose);
        }
        if (st_stream_append_fingers(&with, &stream->frames[i], &fingers) != EM_OK) {
            st_stream_fini(&with);
            return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "out of memory");
        }
    }
    st_stream_fini(stream);
    *stream = with;
    return EM_OK;
}

enum em_result
demo_make(const char *clip_dir, struct st_stream *out, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    int count = 0;
    const struct demo_cut *cuts = demo_cuts(&count);
    const double period_s = 1.0 / 60.0;
    for (int c = 0; c < count; ++c) {
        struct st_stream clip;
        enum em_result r = clip_stream(clip_dir, cuts[c].clip, &clip, err);
        if (r != EM_OK) {
            st_stream_fini(out);
            return r;
        }
        int begin = 0, end = clip.frame_count;
        while (begin < clip.frame_count && clip.frames[begin].time_s < cuts[c].start_s)
            ++begin;
        while (end > begin && clip.frames[end - 1].time_s >= cuts[c].end_s)
            --end;
        struct em_tracking_frame first = clip.frames[begin], last = first;
        float yaw = 0.0f, shift[3] = {0.0f, 0.0f, 0.0f}, pivot[3];
        m_vec3_copy(first.device[EM_DEVICE_HEAD].pose.position_m, pivot);
        if (out->frame_count > 0) {
            last = out->frames[out->frame_count - 1];
            const float *from = last.device[EM_DEVICE_HEAD].pose.position_m;
            yaw = heading_of(last.device[EM_DEVICE_HEAD].pose.orientation) -
                  heading_of(first.device[EM_DEVICE_HEAD].pose.orientation);
            shift[0] = from[0] - pivot[0];
            shift[2] = from[2] - pivot[2];
            place_frame(&first, yaw, pivot, shift);
        }
        const int blend_frames = (int)lround(DEMO_BLEND_S / period_s);
        for (int i = begin; i < end && r == EM_OK; ++i) {
            struct em_tracking_frame f = clip.frames[i];
            f.time_s = out->frame_count * period_s;
            place_frame(&f, yaw, pivot, shift);
            const int k = i - begin;
            if (c > 0 && k < blend_frames) {
                const float s = (float)k / (float)blend_frames;
                blend_toward(&f, &last, &first, 1.0f - s * s * (3.0f - 2.0f * s));
            }
            r = st_stream_append(out, &f);
        }
        st_stream_fini(&clip);
        if (r != EM_OK) {
            st_stream_fini(out);
            return em_fail(err, r, "out of memory");
        }
    }
    /* The last frame facing the camera, its headset above the origin. */
    const struct em_tracking_frame *end = &out->frames[out->frame_count - 1];
    float pivot[3], shift[3];
    m_vec3_copy(end->device[EM_DEVICE_HEAD].pose.position_m, pivot);
    const float yaw = M_PI_F - heading_of(end->device[EM_DEVICE_HEAD].pose.orientation);
    m_vec3_set(shift, -pivot[0], 0.0f, -pivot[2]);
    for (int i = 0; i < out->frame_count; ++i)
        place_frame(&out->frames[i], yaw, pivot, shift);
    const enum em_result r = demo_hands(out, err);
    if (r != EM_OK)
        st_stream_fini(out);
    return r;
}
