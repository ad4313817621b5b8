/*
 * The test poses of the hand (hand_poses.h).
 */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "embody/m_math.h"
#include "hand_poses.h"

static const char *const names[POSE_COUNT] = {"point", "pinch", "fist", "open", "thumbs-up"};

const char *
test_pose_name(int pose)
{
    assert(pose >= 0 && pose < POSE_COUNT);
    return names[pose];
}

void
test_pose_make(const struct hd_model *model, int pose, struct hd_pose *out_pose)
{
    static const struct hd_curls curls[POSE_COUNT] = {
        [POSE_POINT] = {{0.5f, 0.0f, 1.0f, 1.0f, 1.0f}, 0.0f},
        [POSE_FIST] = {{1.0f, 1.0f, 1.0f, 1.0f, 1.0f}, 0.0f},
        [POSE_OPEN] = {{0.0f, 0.0f, 0.0f, 0.0f, 0.0f}, 1.0f},
        [POSE_THUMBS_UP] = {{0.0f, 1.0f, 1.0f, 1.0f, 1.0f}, 0.0f},
    };
    if (pose != POSE_PINCH) {
        hd_pose_from_curls(model, &curls[pose], out_pose);
        return;
    }
    /* Thumb and index tips together, the other fingers relaxed: angles in degrees. */
    struct hd_curls relaxed;
    hd_curls_relaxed(&relaxed);
    hd_pose_from_curls(model, &relaxed, out_pose);
    static const float thumb[3] = {25.0f, 25.0f, 20.0f}, index[3] = {45.0f, 55.0f, 25.0f};
    for (int j = 0; j < HD_FINGER_JOINTS; ++j) {
        out_pose->flex_rad[HD_THUMB][j] = thumb[j] * M_DEG_TO_RAD;
        out_pose->flex_rad[HD_INDEX][j] = index[j] * M_DEG_TO_RAD;
    }
    out_pose->abduct_rad[HD_THUMB] = 20.0f * M_DEG_TO_RAD;
    out_pose->abduct_rad[HD_INDEX] = 5.0f * M_DEG_TO_RAD;
    hd_pose_constrain(model, out_pose);
}

/* A deterministic generator (xorshift) over a caller's state. */
static float
uniform(unsigned *state, float lo, float hi)
{
    unsigned x = *state ? *state : 2463534242u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return lo + (hi - lo) * (float)(x & 0xffffff) / (float)0x1000000;
}

void
test_other_hand(enum hd_hand hand, float length_m, unsigned seed, struct hd_model *out_model)
{
    struct em_error err;
    const struct hd_model_desc desc = {.hand = hand, .hand_length_m = length_m};
    enum em_result r = hd_model_init(&desc, out_model, &err);
    assert(r == EM_OK);
    (void)r;
    unsigned state = seed;
    for (int f = 0; f < HD_FINGER_COUNT; ++f) {
        for (int j = 0; j < HD_FINGER_JOINTS; ++j)
            out_model->bone_m[f][j] *= uniform(&state, 0.88f, 1.12f);
        if (f == HD_THUMB || f == HD_MIDDLE)
            continue; /* the middle knuckle defines the frame's -Z */
        out_model->base_m[f][0] += uniform(&state, -0.003f, 0.003f);
        out_model->base_m[f][2] += uniform(&state, -0.003f, 0.003f);
        m_vec3_sub(out_model->base_m[f], out_model->metacarpal_m[f], out_model->direction[f]);
        const float n = m_vec3_length(out_model->direction[f]);
        m_vec3_scale(out_model->direction[f], 1.0f / n, out_model->direction[f]);
        /* palmar stays -Y; the side is re-derived from the new direction */
        float *s = out_model->side[f];
        const float towards = s[0] > 0.0f ? 1.0f : -1.0f;
        m_vec3_set(s, towards, 0.0f, 0.0f);
        m_vec3_muladd(s, out_model->direction[f], -m_vec3_dot(s, out_model->direction[f]), s);
        m_vec3_scale(s, 1.0f / m_vec3_length(s), s);
    }
}

void
test_wrist_placement(unsigned seed, float *out_position_m, float *out_orientation)
{
    unsigned state = seed;
    float axis[3];
    do {
        for (int i = 0; i < 3; ++i)
            axis[i] = uniform(&state, -1.0f, 1.0f);
    } while (m_vec3_length(axis) < 0.1f);
    m_vec3_scale(axis, 1.0f / m_vec3_length(axis), axis);
    m_quat_from_axis_angle(axis, uniform(&state, -3.0f, 3.0f), out_orientation);
    for (int i = 0; i < 3; ++i)
        out_position_m[i] = uniform(&state, -1.0f, 1.0f);
    out_position_m[1] += 1.2f;
}

void
test_add_noise(struct hd_xr_hand *hand, float noise_m, unsigned seed)
{
    unsigned state = seed;
    for (int j = 0; j < HD_XR_JOINT_COUNT; ++j)
        for (int i = 0; i < 3; ++i)
            hand->joint[j].position_m[i] += uniform(&state, -noise_m, noise_m);
}
