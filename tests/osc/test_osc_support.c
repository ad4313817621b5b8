/*
 * Test poses and an independent matrix reference for the out module's tests
 * (test_osc_support.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "embody/m_math.h"
#include "test_osc_support.h"
#include "util/u_text.h"

const double REF_M[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, -1}};
const double REF_N[3][3] = {{-1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

void
ref_mat_from_quat(const float *qf, double out[3][3])
{
    double x = (double)qf[0], y = (double)qf[1], z = (double)qf[2], w = (double)qf[3];
    const double n = sqrt(x * x + y * y + z * z + w * w);
    x /= n;
    y /= n;
    z /= n;
    w /= n;
    out[0][0] = 1 - 2 * (y * y + z * z);
    out[0][1] = 2 * (x * y - z * w);
    out[0][2] = 2 * (x * z + y * w);
    out[1][0] = 2 * (x * y + z * w);
    out[1][1] = 1 - 2 * (x * x + z * z);
    out[1][2] = 2 * (y * z - x * w);
    out[2][0] = 2 * (x * z - y * w);
    out[2][1] = 2 * (y * z + x * w);
    out[2][2] = 1 - 2 * (x * x + y * y);
}

void
ref_mat_mul(const double a[3][3], const double b[3][3], double out[3][3])
{
    double r[3][3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            r[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
    memcpy(out, r, sizeof r);
}

void
ref_mat_vec(const double a[3][3], const double *v, double *out)
{
    double r[3];
    for (int i = 0; i < 3; ++i)
        r[i] = a[i][0] * v[0] + a[i][1] * v[1] + a[i][2] * v[2];
    memcpy(out, r, sizeof r);
}

static void
axis_rotation(int axis, double deg, double out[3][3])
{
    const double a = deg * (3.14159265358979323846 / 180.0), c = cos(a), s = sin(a);
    memset(out, 0, 9 * sizeof(double));
    const int i = (axis + 1) % 3, j = (axis + 2) % 3;
    out[axis][axis] = 1;
    out[i][i] = c;
    out[i][j] = -s;
    out[j][i] = s;
    out[j][j] = c;
}

void
ref_mat_from_unity_euler_deg(const float *e, double out[3][3])
{
    double rx[3][3], ry[3][3], rz[3][3];
    axis_rotation(0, (double)e[0], rx);
    axis_rotation(1, (double)e[1], ry);
    axis_rotation(2, (double)e[2], rz);
    ref_mat_mul(rx, rz, out);
    ref_mat_mul(ry, out, out);
}

double
ref_mat_max_diff(const double a[3][3], const double b[3][3])
{
    double d = 0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            d = fmax(d, fabs(a[i][j] - b[i][j]));
    return d;
}

void
ref_stage_bone_rotation_from_unity(const double r_unity[3][3], double out[3][3])
{
    ref_mat_mul(REF_M, r_unity, out);
    ref_mat_mul(out, REF_N, out);
}

void
ref_conjugate(const double d[3][3], const double r[3][3], double out[3][3])
{
    ref_mat_mul(d, r, out);
    ref_mat_mul(out, d, out);
}

static const char *const ref_names[][2] = {
    {"hips", "Hips"},
    {"spine", "Spine"},
    {"chest", "Chest"},
    {"upperChest", "UpperChest"},
    {"neck", "Neck"},
    {"head", "Head"},
    {"leftShoulder", "LeftShoulder"},
    {"leftUpperArm", "LeftUpperArm"},
    {"leftLowerArm", "LeftLowerArm"},
    {"leftHand", "LeftHand"},
    {"rightShoulder", "RightShoulder"},
    {"rightUpperArm", "RightUpperArm"},
    {"rightLowerArm", "RightLowerArm"},
    {"rightHand", "RightHand"},
    {"leftUpperLeg", "LeftUpperLeg"},
    {"leftLowerLeg", "LeftLowerLeg"},
    {"leftFoot", "LeftFoot"},
    {"leftToes", "LeftToes"},
    {"rightUpperLeg", "RightUpperLeg"},
    {"rightLowerLeg", "RightLowerLeg"},
    {"rightFoot", "RightFoot"},
    {"rightToes", "RightToes"},
};

const char *
ref_unity_name_of_vrm(const char *vrm_name)
{
    for (size_t i = 0; i < sizeof ref_names / sizeof ref_names[0]; ++i)
        if (strcmp(ref_names[i][0], vrm_name) == 0)
            return ref_names[i][1];
    return NULL;
}

const char *
ref_unity_parent(const char *n, bool have_upper_chest)
{
    static const char *const parents[][2] = {
        {"Spine", "Hips"},
        {"Chest", "Spine"},
        {"UpperChest", "Chest"},
        {"Head", "Neck"},
        {"LeftUpperArm", "LeftShoulder"},
        {"LeftLowerArm", "LeftUpperArm"},
        {"LeftHand", "LeftLowerArm"},
        {"RightUpperArm", "RightShoulder"},
        {"RightLowerArm", "RightUpperArm"},
        {"RightHand", "RightLowerArm"},
        {"LeftUpperLeg", "Hips"},
        {"LeftLowerLeg", "LeftUpperLeg"},
        {"LeftFoot", "LeftLowerLeg"},
        {"LeftToes", "LeftFoot"},
        {"RightUpperLeg", "Hips"},
        {"RightLowerLeg", "RightUpperLeg"},
        {"RightFoot", "RightLowerLeg"},
        {"RightToes", "RightFoot"},
    };
    if (strcmp(n, "Neck") == 0 || strcmp(n, "LeftShoulder") == 0 ||
        strcmp(n, "RightShoulder") == 0)
        return have_upper_chest ? "UpperChest" : "Chest";
    for (size_t i = 0; i < sizeof parents / sizeof parents[0]; ++i)
        if (strcmp(parents[i][0], n) == 0)
            return parents[i][1];
    return NULL; /* Hips: under the root */
}

void
load_humanoid(struct sk_skeleton *sk)
{
    struct em_error err = {{0}};
    if (sk_skeleton_load_json(EMBODY_SOURCE_DIR "/config/humanoid.json", sk, &err) != EM_OK)
        fail_msg("%s", err.message);
}

/* Replaces the first `from` in `text` (which has room) with `to`. */
static void
replace_once(char *text, size_t size, const char *from, const char *to)
{
    char *at = strstr(text, from);
    if (!at)
        fail_msg("humanoid.json has no \"%s\"", from);
    const size_t tail = strlen(at + strlen(from));
    assert_true(strlen(text) - strlen(from) + strlen(to) < size);
    memmove(at + strlen(to), at + strlen(from), tail + 1);
    memcpy(at, to, strlen(to));
}

void
load_humanoid_with_upper_chest(struct sk_skeleton *sk)
{
    struct u_text text;
    struct em_error err = {{0}};
    if (u_text_read_file(EMBODY_SOURCE_DIR "/config/humanoid.json", &text, &err) != EM_OK)
        fail_msg("%s", err.message);
    const size_t size = text.size + 1024;
    char *json = calloc(1, size);
    assert_non_null(json);
    memcpy(json, text.data, text.size);
    u_text_fini(&text);
    /* An upperChest 0.05 m above chest; neck and shoulders hang 0.05 m lower from it (the neck
     * where it was). */
    replace_once(json, size, "{\"name\": \"neck\", \"parent\": \"chest\", \"offset_m\": [0, 0.117,",
                 "{\"name\": \"upperChest\", \"parent\": \"chest\", \"offset_m\": [0, 0.05, 0]},\n"
                 "  {\"name\": \"neck\", \"parent\": \"upperChest\", \"offset_m\": [0, 0.067,");
    replace_once(json, size,
                 "{\"name\": \"leftShoulder\", \"parent\": \"chest\", \"offset_m\": [0.03, 0.16,",
                 "{\"name\": \"leftShoulder\", \"parent\": \"upperChest\", \"offset_m\": [0.03, "
                 "0.11,");
    replace_once(json, size,
                 "{\"name\": \"rightShoulder\", \"parent\": \"chest\", \"offset_m\": [-0.03, 0.16,",
                 "{\"name\": \"rightShoulder\", \"parent\": \"upperChest\", \"offset_m\": [-0.03, "
                 "0.11,");
    const enum em_result r = sk_skeleton_parse_json(json, "humanoid+upperChest", sk, &err);
    free(json);
    if (r != EM_OK)
        fail_msg("%s", err.message);
    assert_true(sk->bone_joint[SK_UPPER_CHEST] >= 0);
}

static uint32_t
rng_next(uint32_t *state)
{
    /* xorshift32: reproducible everywhere */
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *state = x;
}

static float
rng_uniform(uint32_t *state, float lo, float hi)
{
    return lo + (hi - lo) * (float)(rng_next(state) >> 8) / (float)(1u << 24);
}

static void
random_rotation(uint32_t *state, float max_angle_rad, float *out_q)
{
    float axis[3];
    float len;
    do {
        for (int i = 0; i < 3; ++i)
            axis[i] = rng_uniform(state, -1.0f, 1.0f);
        len = m_vec3_length(axis);
    } while (len < 0.1f || len > 1.0f);
    m_vec3_scale(axis, 1.0f / len, axis);
    m_quat_from_axis_angle(axis, rng_uniform(state, -max_angle_rad, max_angle_rad), out_q);
}

void
make_random_pose(const struct sk_skeleton *sk, uint32_t seed, struct sk_pose *pose)
{
    uint32_t state = seed * 2654435761u + 12345u;
    if (!state)
        state = 1;
    sk_pose_set_rest(pose, sk);
    for (int j = 0; j < sk->joint_count; ++j)
        random_rotation(&state, 70.0f * M_DEG_TO_RAD, pose->local_rotation[j]);
    /* Any heading for the whole body. */
    float yaw[4];
    const float up[3] = {0, 1, 0};
    m_quat_from_axis_angle(up, rng_uniform(&state, -M_PI_F, M_PI_F), yaw);
    m_quat_mul(yaw, pose->local_rotation[0], pose->local_rotation[0]);
    m_vec3_set(pose->position_m[0], rng_uniform(&state, -1.5f, 1.5f),
               rng_uniform(&state, 0.6f, 1.1f), rng_uniform(&state, -1.5f, 1.5f));
    sk_pose_forward_kinematics(pose, sk);
}

void
make_turned_rest_pose(const struct sk_skeleton *sk, float yaw_deg, struct sk_pose *pose)
{
    sk_pose_set_rest(pose, sk);
    const float up[3] = {0, 1, 0};
    m_quat_from_axis_angle(up, yaw_deg * M_DEG_TO_RAD, pose->local_rotation[0]);
    sk_pose_forward_kinematics(pose, sk);
}
