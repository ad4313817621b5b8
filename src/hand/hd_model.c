/*
 * The hand model (include/embody/hand.h): the bone names, the default hand sized to a
 * length, and forward kinematics.
 *
 * The default hand is an adult's of 19 cm from wrist to the middle fingertip, built from
 * the usual proportions of the finger bones (the proximal phalanx about half the finger,
 * the distal a quarter) and knuckles fanning out from the wrist, so each finger's rest
 * direction points a little away from the middle finger. Joint limits are the active
 * ranges of motion anatomy books give, a little narrowed so that a rendered finger never
 * looks broken: knuckle (MCP) -20..90 degrees, middle joint (PIP) 0..105, last joint
 * (DIP) -5..80; the thumb's base (CMC) -15..50 flexion and -10..50 abduction, its MCP
 * -10..60 and IP -15..80.
 */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "embody/m_math.h"
#include "hand/hd_internal.h"

static const char *const finger_names[HD_FINGER_COUNT] = {"thumb", "index", "middle", "ring",
                                                          "little"};

/* One fact, one place: the finger bones' names in VRM 1.0 and in Unity's HumanBodyBones
 * (VMC), by hand and joint. Unity's thumb is Proximal, Intermediate, Distal where VRM 1.0
 * says Metacarpal, Proximal, Distal (VRM 0.x used Unity's). */
static const char *const vrm_names[HD_HAND_COUNT][HD_JOINT_COUNT] = {
    {"leftThumbMetacarpal", "leftThumbProximal", "leftThumbDistal", "leftIndexProximal",
     "leftIndexIntermediate", "leftIndexDistal", "leftMiddleProximal", "leftMiddleIntermediate",
     "leftMiddleDistal", "leftRingProximal", "leftRingIntermediate", "leftRingDistal",
     "leftLittleProximal", "leftLittleIntermediate", "leftLittleDistal"},
    {"rightThumbMetacarpal", "rightThumbProximal", "rightThumbDistal", "rightIndexProximal",
     "rightIndexIntermediate", "rightIndexDistal", "rightMiddleProximal", "rightMiddleIntermediate",
     "rightMiddleDistal", "rightRingProximal", "rightRingIntermediate", "rightRingDistal",
     "rightLittleProximal", "rightLittleIntermediate", "rightLittleDistal"},
};

static const char *const unity_names[HD_HAND_COUNT][HD_JOINT_COUNT] = {
    {"LeftThumbProximal", "LeftThumbIntermediate", "LeftThumbDistal", "LeftIndexProximal",
     "LeftIndexIntermediate", "LeftIndexDistal", "LeftMiddleProximal", "LeftMiddleIntermediate",
     "LeftMiddleDistal", "LeftRingProximal", "LeftRingIntermediate", "LeftRingDistal",
     "LeftLittleProximal", "LeftLittleIntermediate", "LeftLittleDistal"},
    {"RightThumbProximal", "RightThumbIntermediate", "RightThumbDistal", "RightIndexProximal",
     "RightIndexIntermediate", "RightIndexDistal", "RightMiddleProximal", "RightMiddleIntermediate",
     "RightMiddleDistal", "RightRingProximal", "RightRingIntermediate", "RightRingDistal",
     "RightLittleProximal", "RightLittleIntermediate", "RightLittleDistal"},
};

const char *
hd_finger_name(enum hd_finger finger)
{
    assert(finger >= 0 && finger < HD_FINGER_COUNT);
    return finger_names[finger];
}

const char *
hd_vrm_bone_name(enum hd_hand hand, int joint)
{
    assert(hand >= 0 && hand < HD_HAND_COUNT && joint >= 0 && joint < HD_JOINT_COUNT);
    return vrm_names[hand][joint];
}

const char *
hd_unity_bone_name(enum hd_hand hand, int joint)
{
    assert(hand >= 0 && hand < HD_HAND_COUNT && joint >= 0 && joint < HD_JOINT_COUNT);
    return unity_names[hand][joint];
}

/* ---- The default hand ---------------------------------------------------------------- */

/* The default hand at HD_DEFAULT_HAND_LENGTH_M, in the hand frame with the lateral
 * coordinate towards the thumb positive (x = that times hd_thumb_side_sign): the first
 * joint, XR's metacarpal joint, the bones, the radii at the joints and tip. The middle
 * knuckle sits on -Z and the index and little knuckles at y = 0, so the frame rebuilt from
 * tracked knuckles (hd_hand_frame) is this one. */
static const struct {
    float base[3];
    float metacarpal[3];
    float bone[HD_FINGER_JOINTS];
    float radius[HD_FINGER_JOINTS + 1];
} default_fingers[HD_FINGER_COUNT] = {
    {{0.022f, -0.012f, -0.028f},
     {0.022f, -0.012f, -0.028f},
     {0.040f, 0.032f, 0.027f},
     {0.0110f, 0.0095f, 0.0082f, 0.0074f}},
    {{0.024f, 0.0f, -0.090f},
     {0.012f, 0.0f, -0.020f},
     {0.043f, 0.025f, 0.022f},
     {0.0085f, 0.0075f, 0.0065f, 0.0058f}},
    {{0.0f, 0.0f, -0.093f},
     {0.0f, 0.0f, -0.020f},
     {0.045f, 0.028f, 0.024f},
     {0.0088f, 0.0078f, 0.0068f, 0.0060f}},
    {{-0.021f, 0.0f, -0.088f},
     {-0.010f, 0.0f, -0.020f},
     {0.043f, 0.027f, 0.023f},
     {0.0082f, 0.0072f, 0.0062f, 0.0055f}},
    {{-0.040f, 0.0f, -0.080f},
     {-0.020f, 0.0f, -0.020f},
     {0.034f, 0.020f, 0.020f},
     {0.0072f, 0.0064f, 0.0056f, 0.0050f}},
};

/* The thumb's rest direction (out from the wrist, towards the thumb's side and a little
 * in front of the palm) and the way it flexes (across the palm, towards the little
 * finger's base), lateral coordinate towards the thumb positive. */
static const float thumb_direction[3] = {0.60f, -0.40f, -0.80f};
static const float thumb_flexes_towards[3] = {-0.80f, -0.40f, 0.0f};

#define DEG M_DEG_TO_RAD

/* Limits, fist and spread in degrees: per finger, per joint. */
static const float flex_min_deg[HD_FINGER_COUNT][HD_FINGER_JOINTS] = {
    {-15, -10, -15}, {-20, 0, -5}, {-20, 0, -5}, {-20, 0, -5}, {-20, 0, -5}};
static const float flex_max_deg[HD_FINGER_COUNT][HD_FINGER_JOINTS] = {
    {50, 60, 80}, {90, 105, 80}, {90, 105, 80}, {90, 105, 80}, {90, 105, 80}};
static const float abduct_min_deg[HD_FINGER_COUNT] = {-10, -15, -10, -12, -15};
static const float abduct_max_deg[HD_FINGER_COUNT] = {50, 20, 10, 12, 25};
static const float fist_deg[HD_FINGER_COUNT][HD_FINGER_JOINTS] = {
    {10, 40, 60}, {85, 100, 65}, {85, 100, 65}, {85, 100, 65}, {80, 95, 60}};
static const float fist_abduct_deg[HD_FINGER_COUNT] = {5, -3, 0, -3, -5};
static const float spread_deg[HD_FINGER_COUNT] = {40, 15, 3, 10, 22};

#define PALM_HALF_THICKNESS_M 0.012f

void
hd_joint_limits_deg(int finger, int joint, float *out_min_deg, float *out_max_deg)
{
    assert(finger >= 0 && finger < HD_FINGER_COUNT && joint >= 0 && joint <= HD_FINGER_JOINTS);
    *out_min_deg = joint < HD_FINGER_JOINTS ? flex_min_deg[finger][joint] : abduct_min_deg[finger];
    *out_max_deg = joint < HD_FINGER_JOINTS ? flex_max_deg[finger][joint] : abduct_max_deg[finger];
}

/* `v` normalised; false (and `v` unchanged) when it is too short to have a direction. */
static bool
normalize3(float *v)
{
    const float n = m_vec3_length(v);
    if (!(n > M_TINY))
        return false;
    m_vec3_scale(v, 1.0f / n, v);
    return true;
}

/* `v` less its component along unit `axis`, normalised; false when `v` lies along `axis`
 * (nothing is left to normalise). */
static bool
orthonormalize(float *v, const float *axis)
{
    m_vec3_muladd(v, axis, -m_vec3_dot(v, axis), v);
    return normalize3(v);
}

bool
hd_finger_frame_from_direction(struct hd_model *model, int finger)
{
    const float sign = hd_thumb_side_sign(model->hand);
    float *d = model->direction[finger];
    float *p = model->palmar[finger];
    float *s = model->side[finger];
    if (!normalize3(d))
        return false;
    if (finger == HD_THUMB) {
        m_vec3_set(p, sign * thumb_flexes_towards[0], thumb_flexes_towards[1],
                   thumb_flexes_towards[2]);
        if (!orthonormalize(p, d))
            return false;
        /* Abduction takes the thumb away from the palm: the side of d x p that is in
         * front of the palm (-Y). */
        m_vec3_cross(p, d, s);
        if (s[1] > 0.0f)
            m_vec3_scale(s, -1.0f, s);
        return normalize3(s);
    }
    m_vec3_set(p, 0.0f, -1.0f, 0.0f);
    if (!orthonormalize(p, d))
        return false;
    /* Index and middle abduct towards the thumb, ring and little away from it. */
    const float towards_thumb = finger <= HD_MIDDLE ? 1.0f : -1.0f;
    m_vec3_set(s, towards_thumb * sign, 0.0f, 0.0f);
    return orthonormalize(s, d) && orthonormalize(s, p);
}

enum em_result
hd_model_init(const struct hd_model_desc *desc, struct hd_model *out_model, struct em_error *err)
{
    const float length =
        desc->hand_length_m == 0.0f ? HD_DEFAULT_HAND_LENGTH_M : desc->hand_length_m;
    if (desc->hand != HD_LEFT && desc->hand != HD_RIGHT)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "hand model: hand is %d; expected HD_LEFT or HD_RIGHT", (int)desc->hand);
    if (!isfinite(length) || length < HD_MIN_HAND_LENGTH_M || length > HD_MAX_HAND_LENGTH_M)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "hand model: hand_length_m is %g; expected %g to %g m (wrist to the "
                       "middle fingertip)",
                       (double)length, (double)HD_MIN_HAND_LENGTH_M, (double)HD_MAX_HAND_LENGTH_M);
    for (int f = 0; f < HD_FINGER_COUNT; ++f)
        for (int j = 0; j < HD_FINGER_JOINTS; ++j) {
            const float b = desc->bone_m[f][j];
            if (b != 0.0f && !(b >= HD_MIN_BONE_LENGTH_M && b <= HD_MAX_BONE_LENGTH_M))
                return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                               "hand model: bone_m[%d][%d] (%s) is %g; expected 0 (the "
                               "default) or %g to %g m",
                               f, j, vrm_names[desc->hand][f * HD_FINGER_JOINTS + j], (double)b,
                               (double)HD_MIN_BONE_LENGTH_M, (double)HD_MAX_BONE_LENGTH_M);
        }
    struct hd_model *m = out_model;
    memset(m, 0, sizeof *m);
    m->hand = desc->hand;
    m->hand_length_m = length;
    const float k = length / HD_DEFAULT_HAND_LENGTH_M;
    const float sign = hd_thumb_side_sign(desc->hand);
    m->palm_half_thickness_m = PALM_HALF_THICKNESS_M * k;
    for (int f = 0; f < HD_FINGER_COUNT; ++f) {
        const float *b = default_fingers[f].base;
        const float *mc = default_fingers[f].metacarpal;
        m_vec3_set(m->base_m[f], sign * b[0] * k, b[1] * k, b[2] * k);
        m_vec3_set(m->metacarpal_m[f], sign * mc[0] * k, mc[1] * k, mc[2] * k);
        for (int j = 0; j < HD_FINGER_JOINTS; ++j) {
            m->bone_m[f][j] =
                desc->bone_m[f][j] != 0.0f ? desc->bone_m[f][j] : default_fingers[f].bone[j] * k;
            m->flex_min_rad[f][j] = flex_min_deg[f][j] * DEG;
            m->flex_max_rad[f][j] = flex_max_deg[f][j] * DEG;
            m->fist_rad[f][j] = fist_deg[f][j] * DEG;
        }
        for (int j = 0; j <= HD_FINGER_JOINTS; ++j)
            m->radius_m[f][j] = default_fingers[f].radius[j] * k;
        m->abduct_min_rad[f] = abduct_min_deg[f] * DEG;
        m->abduct_max_rad[f] = abduct_max_deg[f] * DEG;
        m->fist_abduct_rad[f] = fist_abduct_deg[f] * DEG;
        m->spread_rad[f] = spread_deg[f] * DEG;
        if (f == HD_THUMB)
            m_vec3_set(m->direction[f], sign * thumb_direction[0], thumb_direction[1],
                       thumb_direction[2]);
        else
            m_vec3_sub(m->base_m[f], m->metacarpal_m[f], m->direction[f]);
        /* The default hand's fingers all point well forward: never degenerate. */
        const bool framed = hd_finger_frame_from_direction(m, f);
        assert(framed);
        (void)framed;
    }
    return EM_OK;
}

/* ---- Kinematics ---------------------------------------------------------------------- */

void
hd_finger_axes(const struct hd_model *model, int finger, float *out_flex_axis,
               float *out_abduct_axis)
{
    m_vec3_cross(model->direction[finger], model->palmar[finger], out_flex_axis);
    m_vec3_cross(model->direction[finger], model->side[finger], out_abduct_axis);
}

/* Local rotations of one finger: the first joint abducts about its abduction axis after
 * flexing (so it flexes about its abducted flexion axis), the others flex. */
static void
finger_local_rotations(const struct hd_model *model, const struct hd_pose *pose, int f,
                       float (*out)[4])
{
    float flex_axis[3], abduct_axis[3], qa[4], qf[4];
    hd_finger_axes(model, f, flex_axis, abduct_axis);
    m_quat_from_axis_angle(abduct_axis, pose->abduct_rad[f], qa);
    m_quat_from_axis_angle(flex_axis, pose->flex_rad[f][0], qf);
    m_quat_mul(qa, qf, out[0]);
    m_quat_from_axis_angle(flex_axis, pose->flex_rad[f][1], out[1]);
    m_quat_from_axis_angle(flex_axis, pose->flex_rad[f][2], out[2]);
}

void
hd_finger_fk(const struct hd_model *model, const struct hd_pose *pose, int f,
             float (*out_point_m)[3], float (*out_world)[4])
{
    float local[HD_FINGER_JOINTS][4], world[4], bone[3], step[3];
    finger_local_rotations(model, pose, f, local);
    m_vec3_copy(model->base_m[f], out_point_m[0]);
    m_quat_identity(world);
    for (int j = 0; j < HD_FINGER_JOINTS; ++j) {
        float next[4];
        m_quat_mul(world, local[j], next);
        m_quat_copy(next, world);
        if (out_world)
            m_quat_copy(world, out_world[j]);
        m_vec3_scale(model->direction[f], model->bone_m[f][j], bone);
        m_quat_rotate(world, bone, step);
        m_vec3_add(out_point_m[j], step, out_point_m[j + 1]);
    }
}

void
hd_pose_local_rotations(const struct hd_model *model, const struct hd_pose *pose,
                        float (*out_rotation)[4])
{
    for (int f = 0; f < HD_FINGER_COUNT; ++f)
        finger_local_rotations(model, pose, f, out_rotation + f * HD_FINGER_JOINTS);
}

void
hd_pose_positions(const struct hd_model *model, const struct hd_pose *pose,
                  float (*out_position_m)[3])
{
    for (int f = 0; f < HD_FINGER_COUNT; ++f)
        hd_finger_fk(model, pose, f, out_position_m + f * (HD_FINGER_JOINTS + 1), NULL);
}

void
hd_humanoid_rotation_from_hand(enum hd_hand hand, const float *q, float *out_q)
{
    /* The left hand's T-pose frame has the fingers along +X, the back of the hand up and
     * the thumb forward (+Z): the hand frame's -Z goes to +X, +X (thumb) to +Z, a turn of
     * -90 degrees about Y; the right hand's +X (little finger) goes to -Z, Z to +X: +90. */
    static const float y_axis[3] = {0.0f, 1.0f, 0.0f};
    float m[4], t[4];
    m_quat_from_axis_angle(y_axis, hand == HD_LEFT ? -0.5f * M_PI_F : 0.5f * M_PI_F, m);
    m_quat_mul(m, q, t);
    float m_inv[4];
    m_quat_conjugate(m, m_inv);
    m_quat_mul(t, m_inv, out_q);
}

/* The hand frame's vector as the humanoid's (the same turn as the rotations). */
static void
humanoid_vector_from_hand(enum hd_hand hand, const float *v, float *out)
{
    static const float y_axis[3] = {0.0f, 1.0f, 0.0f};
    float m[4];
    m_quat_from_axis_angle(y_axis, hand == HD_LEFT ? -0.5f * M_PI_F : 0.5f * M_PI_F, m);
    m_quat_rotate(m, v, out);
}

void
hd_pose_humanoid_locals(const struct hd_model *model, const struct hd_pose *pose,
                        float (*out_rotation)[4], float (*out_offset_m)[3])
{
    float local[HD_JOINT_COUNT][4];
    hd_pose_local_rotations(model, pose, local);
    for (int f = 0; f < HD_FINGER_COUNT; ++f)
        for (int j = 0; j < HD_FINGER_JOINTS; ++j) {
            const int i = f * HD_FINGER_JOINTS + j;
            hd_humanoid_rotation_from_hand(model->hand, local[i], out_rotation[i]);
            float offset[3];
            if (j == 0)
                m_vec3_copy(model->base_m[f], offset);
            else
                m_vec3_scale(model->direction[f], model->bone_m[f][j - 1], offset);
            humanoid_vector_from_hand(model->hand, offset, out_offset_m[i]);
        }
}
