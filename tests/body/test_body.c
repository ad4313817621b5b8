/*
 * Body reconstruction tests: the pelvis, heading, planted feet and steps, elbow and knee
 * directions, tracker loss and return, bad input, calibration, and the settings file.
 * Frames are made from known avatar poses through the default device offsets, so each
 * test knows where the body really is.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "embody/body.h"
#include "embody/m_math.h"
#include "embody/skeleton.h"

#define RATE_HZ 60.0

struct rig {
    struct sk_skeleton sk;
    struct sk_pose pose; /* the "real" body the devices are on */
    struct body *body;
    struct body_desc desc; /* resolved */
    double t;
};

static void
rig_init(struct rig *r)
{
    memset(r, 0, sizeof *r);
    struct em_error err;
    if (sk_skeleton_load_json(EMBODY_SOURCE_DIR "/config/humanoid.json", &r->sk, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(sk_pose_init(&r->pose, &r->sk), EM_OK);
    const struct body_desc d = {.skeleton = &r->sk};
    if (body_create(&d, &r->body, &err) != EM_OK)
        fail_msg("%s", err.message);
    body_get_desc(r->body, &r->desc);
}

static void
rig_fini(struct rig *r)
{
    body_destroy(&r->body);
    assert_null(r->body);
    sk_pose_fini(&r->pose);
    sk_skeleton_fini(&r->sk);
}

/* device = bone * offset */
static void
device_on(const float *bone_pos, const float *bone_rot, const float *off_pos,
          const float *off_rot, struct em_device_pose *out)
{
    float p[3];
    m_quat_rotate(bone_rot, off_pos, p);
    m_vec3_add(bone_pos, p, out->pose.position_m);
    m_quat_mul(bone_rot, off_rot, out->pose.orientation);
    out->flags = EM_POSE_ALL_VALID;
}

/* The frame the devices on the rig's real pose would report. */
static struct em_tracking_frame
rig_frame(struct rig *r)
{
    struct em_tracking_frame f = {.time_s = r->t};
    const struct sk_skeleton *sk = &r->sk;
    const struct body_device_offsets *o = &r->desc.offsets;
    const int head = sk->bone_joint[SK_HEAD];
    device_on(r->pose.position_m[head], r->pose.rotation[head], o->head_position_m,
              o->head_rotation, &f.device[EM_DEVICE_HEAD]);
    const enum sk_bone hands[2] = {SK_LEFT_HAND, SK_RIGHT_HAND};
    const enum sk_bone ends[2] = {SK_LEFT_HAND_END, SK_RIGHT_HAND_END};
    for (int s = 0; s < 2; ++s) {
        const int h = sk->bone_joint[hands[s]], e = sk->bone_joint[ends[s]];
        float off[3];
        m_vec3_scale(sk->offset_m[e], o->grip_palm_fraction, off);
        device_on(r->pose.position_m[h], r->pose.rotation[h], off, o->grip_rotation[s],
                  &f.device[EM_DEVICE_LEFT_HAND + s]);
    }
    return f;
}

/* Poses the real body: rest pose moved/turned, the arms hanging, local tweaks applied. */
static void
rig_pose(struct rig *r, const float *hips_m, float yaw_rad)
{
    sk_pose_set_rest(&r->pose, &r->sk);
    const float y[3] = {0, 1, 0}, z[3] = {0, 0, 1};
    m_vec3_copy(hips_m, r->pose.position_m[0]);
    m_quat_from_axis_angle(y, yaw_rad, r->pose.local_rotation[0]);
    /* Arms down at the sides, elbows a little bent forward. */
    m_quat_from_axis_angle(z, -1.3f, r->pose.local_rotation[r->sk.bone_joint[SK_LEFT_UPPER_ARM]]);
    m_quat_from_axis_angle(z, 1.3f, r->pose.local_rotation[r->sk.bone_joint[SK_RIGHT_UPPER_ARM]]);
    const float yn[3] = {0, -1, 0};
    m_quat_from_axis_angle(yn, 0.4f, r->pose.local_rotation[r->sk.bone_joint[SK_LEFT_LOWER_ARM]]);
    m_quat_from_axis_angle(y, 0.4f, r->pose.local_rotation[r->sk.bone_joint[SK_RIGHT_LOWER_ARM]]);
    sk_pose_forward_kinematics(&r->pose, &r->sk);
}

static void
rig_step(struct rig *r, int frames)
{
    for (int i = 0; i < frames; ++i) {
        r->t += 1.0 / RATE_HZ;
        struct em_tracking_frame f = rig_frame(r);
        body_update(r->body, &f);
    }
}

static const float *
ours(const struct rig *r, enum sk_bone b)
{
    const struct sk_skeleton *sk = body_skeleton(r->body);
    return body_pose(r->body)->position_m[sk->bone_joint[b]];
}

static const float *
truth(const struct rig *r, enum sk_bone b)
{
    return r->pose.position_m[r->sk.bone_joint[b]];
}

static void
assert_pose_finite(const struct rig *r)
{
    const struct sk_pose *p = body_pose(r->body);
    for (int j = 0; j < p->joint_count; ++j) {
        assert_true(m_vec3_is_finite(p->position_m[j]));
        assert_true(m_quat_is_finite(p->local_rotation[j]));
    }
}

/* ---- Tests ------------------------------------------------------------------------- */

static void
standing_body_matches_the_devices_body(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    rig_pose(&r, (const float[3]){0.3f, 1.0f, -0.5f}, 0.7f);
    rig_step(&r, 60);
    /* Head and hands are where the devices say (the filter has settled); the pelvis sits
     * under the head at standing height. */
    assert_true(m_vec3_distance(ours(&r, SK_HEAD), truth(&r, SK_HEAD)) < 0.01f);
    assert_true(m_vec3_distance(ours(&r, SK_LEFT_HAND), truth(&r, SK_LEFT_HAND)) < 0.01f);
    assert_true(m_vec3_distance(ours(&r, SK_RIGHT_HAND), truth(&r, SK_RIGHT_HAND)) < 0.01f);
    assert_true(m_vec3_distance(ours(&r, SK_HIPS), truth(&r, SK_HIPS)) < 0.03f);
    assert_true(m_vec3_distance(ours(&r, SK_LEFT_FOOT), truth(&r, SK_LEFT_FOOT)) < 0.05f);
    assert_true(m_vec3_distance(ours(&r, SK_RIGHT_FOOT), truth(&r, SK_RIGHT_FOOT)) < 0.05f);
    struct body_status st;
    body_get_status(r.body, &st);
    assert_int_equal(st.posture, BODY_STANDING);
    assert_float_equal(st.heading_rad, 0.7, 0.02);
    assert_pose_finite(&r);
    rig_fini(&r);
}

static void
pelvis_drops_with_the_head_and_knees_bend_forward(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    const float stand[3] = {0.0f, 1.0f, 0.0f};
    rig_pose(&r, stand, 0.0f);
    rig_step(&r, 30);
    const float standing_hips = ours(&r, SK_HIPS)[1];
    const float standing_hips_z = ours(&r, SK_HIPS)[2];
    /* The player crouches: the head comes down 35 cm over a second. */
    for (int i = 1; i <= 60; ++i) {
        const float hips[3] = {0.0f, 1.0f - 0.35f * (float)i / 60.0f, 0.0f};
        rig_pose(&r, hips, 0.0f);
        rig_step(&r, 1);
    }
    rig_step(&r, 20);
    assert_float_equal(ours(&r, SK_HIPS)[1], standing_hips - 0.35f, 0.03);
    /* ... and sit back (the body faces +Z). */
    assert_true(ours(&r, SK_HIPS)[2] < standing_hips_z - 0.02f);
    struct body_status st;
    body_get_status(r.body, &st);
    assert_true(st.posture == BODY_CROUCHING || st.posture == BODY_KNEELING);
    /* Knees in front of the hip-to-ankle line (the body faces +Z): never backward. */
    const enum sk_bone hips[2] = {SK_LEFT_UPPER_LEG, SK_RIGHT_UPPER_LEG};
    const enum sk_bone knees[2] = {SK_LEFT_LOWER_LEG, SK_RIGHT_LOWER_LEG};
    const enum sk_bone feet[2] = {SK_LEFT_FOOT, SK_RIGHT_FOOT};
    for (int s = 0; s < 2; ++s) {
        float mid[3];
        m_vec3_lerp(ours(&r, hips[s]), ours(&r, feet[s]), 0.5f, mid);
        assert_true(ours(&r, knees[s])[2] > mid[2] + 0.05f);
    }
    /* The feet stayed on the floor where they were. */
    assert_true(ours(&r, SK_LEFT_FOOT)[1] < 0.15f);
    assert_pose_finite(&r);
    rig_fini(&r);
}

static void
looking_around_does_not_twist_the_hips_but_turning_does(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    const float stand[3] = {0.0f, 1.0f, 0.0f};
    rig_pose(&r, stand, 0.0f);
    rig_step(&r, 30);
    /* Head turns 20 degrees (the neck turns, the body does not). */
    const float y[3] = {0, 1, 0};
    const int neck = r.sk.bone_joint[SK_NECK];
    m_quat_from_axis_angle(y, 0.35f, r.pose.local_rotation[neck]);
    sk_pose_forward_kinematics(&r.pose, &r.sk);
    rig_step(&r, 10);
    struct body_status st;
    body_get_status(r.body, &st);
    assert_true(fabsf(st.heading_rad) < 0.08f);
    /* The whole body turns 90 degrees: the hips follow. */
    rig_pose(&r, stand, 1.57f);
    rig_step(&r, 120);
    body_get_status(r.body, &st);
    assert_float_equal(st.heading_rad, 1.57, 0.1);
    rig_fini(&r);
}

static void
planted_feet_stay_put_while_the_body_sways(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    const float stand[3] = {0.0f, 1.0f, 0.0f};
    rig_pose(&r, stand, 0.0f);
    rig_step(&r, 30);
    float left[3], right[3];
    m_vec3_copy(ours(&r, SK_LEFT_FOOT), left);
    m_vec3_copy(ours(&r, SK_RIGHT_FOOT), right);
    /* Sway a few centimetres for two seconds. */
    for (int i = 0; i < 120; ++i) {
        const float a = (float)i / 20.0f;
        const float hips[3] = {0.05f * sinf(a), 1.0f, 0.04f * cosf(a) - 0.04f};
        rig_pose(&r, hips, 0.1f * sinf(0.7f * a));
        rig_step(&r, 1);
        assert_true(m_vec3_distance(ours(&r, SK_LEFT_FOOT), left) < 0.003f);
        assert_true(m_vec3_distance(ours(&r, SK_RIGHT_FOOT), right) < 0.003f);
    }
    rig_fini(&r);
}

static void
walking_steps_one_foot_at_a_time_and_planted_feet_do_not_slide(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    rig_pose(&r, (const float[3]){0.0f, 1.0f, 0.0f}, 0.0f);
    rig_step(&r, 30);
    int steps[2] = {0, 0};
    bool was_stepping[2] = {false, false};
    float last[2][3];
    m_vec3_copy(ours(&r, SK_LEFT_FOOT), last[0]);
    m_vec3_copy(ours(&r, SK_RIGHT_FOOT), last[1]);
    /* Walk forward for 3 s at a room-scale pace: speeding up to 0.4 m/s over the first
     * 0.6 s, the head bobbing 2 cm twice a stride as a walker's does. (At a brisk walk,
     * 0.5 m/s and up, a planted foot can still be dragged before its next step: the
     * stepping reacts to the body rather than knowing the gait's phase.) */
    float z = 0.0f;
    for (int i = 1; i <= 180; ++i) {
        const float t = (float)i / 60.0f;
        z += fminf(1.0f, t / 0.6f) * 0.4f / 60.0f;
        const float hips[3] = {0.0f, 1.0f - 0.02f + 0.02f * cosf(2.0f * M_PI_F * 1.8f * t), z};
        rig_pose(&r, hips, 0.0f);
        rig_step(&r, 1);
        struct body_status st;
        body_get_status(r.body, &st);
        assert_false(st.foot[0] == BODY_FOOT_STEPPING && st.foot[1] == BODY_FOOT_STEPPING);
        const enum sk_bone feet[2] = {SK_LEFT_FOOT, SK_RIGHT_FOOT};
        for (int s = 0; s < 2; ++s) {
            const bool stepping = st.foot[s] == BODY_FOOT_STEPPING;
            if (stepping && !was_stepping[s])
                ++steps[s];
            /* A planted foot (planted this frame and the one before) does not slide; its
             * heel may lift before it steps. */
            if (!stepping && !was_stepping[s]) {
                const float dx = ours(&r, feet[s])[0] - last[s][0];
                const float dz = ours(&r, feet[s])[2] - last[s][2];
                assert_true(sqrtf(dx * dx + dz * dz) < 0.003f);
            }
            was_stepping[s] = stepping;
            m_vec3_copy(ours(&r, feet[s]), last[s]);
        }
    }
    assert_true(steps[0] >= 2 && steps[1] >= 2);
    /* And the feet came along: both within half a metre of the hips' ground point. */
    const float *hips = ours(&r, SK_HIPS);
    assert_true(fabsf(ours(&r, SK_LEFT_FOOT)[2] - hips[2]) < 0.5f);
    assert_true(fabsf(ours(&r, SK_RIGHT_FOOT)[2] - hips[2]) < 0.5f);
    rig_fini(&r);
}

static void
elbows_point_down_and_back_for_hands_in_front(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    rig_pose(&r, (const float[3]){0.0f, 1.0f, 0.0f}, 0.0f);
    /* Hands held in front at chest height: upper arms down-forward, forearms forward. */
    const float x[3] = {1, 0, 0}, z[3] = {0, 0, 1}, yn[3] = {0, -1, 0}, yp[3] = {0, 1, 0};
    for (int s = 0; s < 2; ++s) {
        const float sign = s == 0 ? 1.0f : -1.0f;
        float down[4], fwd[4];
        m_quat_from_axis_angle(z, -sign * 1.3f, down);
        m_quat_from_axis_angle(x, -0.3f, fwd);
        m_quat_mul(fwd, down, r.pose.local_rotation[r.sk.bone_joint[s ? SK_RIGHT_UPPER_ARM
                                                                       : SK_LEFT_UPPER_ARM]]);
        m_quat_from_axis_angle(s ? yp : yn, 1.4f,
                               r.pose.local_rotation[r.sk.bone_joint[s ? SK_RIGHT_LOWER_ARM
                                                                        : SK_LEFT_LOWER_ARM]]);
    }
    sk_pose_forward_kinematics(&r.pose, &r.sk);
    rig_step(&r, 60);
    const enum sk_bone sh[2] = {SK_LEFT_UPPER_ARM, SK_RIGHT_UPPER_ARM};
    const enum sk_bone el[2] = {SK_LEFT_LOWER_ARM, SK_RIGHT_LOWER_ARM};
    const enum sk_bone ha[2] = {SK_LEFT_HAND, SK_RIGHT_HAND};
    for (int s = 0; s < 2; ++s) {
        float mid[3];
        m_vec3_lerp(ours(&r, sh[s]), ours(&r, ha[s]), 0.5f, mid);
        /* Below and behind the shoulder-to-hand line, never above it, and near the
         * real elbow. */
        assert_true(ours(&r, el[s])[1] < mid[1] - 0.05f);
        assert_true(m_vec3_distance(ours(&r, el[s]), truth(&r, el[s])) < 0.06f);
    }
    rig_fini(&r);
}

static void
the_forearm_shares_the_hands_twist(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    rig_pose(&r, (const float[3]){0.0f, 1.0f, 0.0f}, 0.0f);
    /* The left hand turned 80 degrees about the forearm (pronation). */
    const int hand = r.sk.bone_joint[SK_LEFT_HAND];
    const float x[3] = {1, 0, 0};
    m_quat_from_axis_angle(x, 80.0f * M_DEG_TO_RAD, r.pose.local_rotation[hand]);
    sk_pose_forward_kinematics(&r.pose, &r.sk);
    rig_step(&r, 60);
    const struct sk_skeleton *sk = body_skeleton(r.body);
    const struct sk_pose *p = body_pose(r.body);
    const int elbow = sk->bone_joint[SK_LEFT_LOWER_ARM], our_hand = sk->bone_joint[SK_LEFT_HAND];
    /* The hand still follows the controller... */
    float diff[4];
    m_quat_mul_conj_first(r.pose.rotation[hand], p->rotation[our_hand], diff);
    assert_true(m_quat_angle(diff) < 3.0f * M_DEG_TO_RAD);
    assert_true(m_vec3_distance(p->position_m[our_hand], r.pose.position_m[hand]) < 0.01f);
    /* ... and the forearm took half of the hand's turn about its own axis: the two parts
     * are equal (measured in our arm, whose upper arm may be twisted differently from
     * the rig's, so not necessarily 40 degrees each). */
    float axis[3];
    m_vec3_normalize_or(sk->offset_m[our_hand], x, axis);
    const float forearm = m_quat_swing_twist(p->local_rotation[elbow], axis, NULL, NULL);
    const float wrist = m_quat_swing_twist(p->local_rotation[our_hand], axis, NULL, NULL);
    assert_true(fabsf(forearm) > 20.0f * M_DEG_TO_RAD);
    assert_float_equal(forearm, wrist, 2.0f * M_DEG_TO_RAD);
    rig_fini(&r);
}

static void
a_lost_hand_hangs_at_the_side_and_comes_back(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    rig_pose(&r, (const float[3]){0.0f, 1.0f, 0.0f}, 0.0f);
    /* The left hand held out to the side at shoulder height. */
    const float z[3] = {0, 0, 1};
    m_quat_identity(r.pose.local_rotation[r.sk.bone_joint[SK_LEFT_UPPER_ARM]]);
    m_quat_identity(r.pose.local_rotation[r.sk.bone_joint[SK_LEFT_LOWER_ARM]]);
    (void)z;
    sk_pose_forward_kinematics(&r.pose, &r.sk);
    rig_step(&r, 30);
    const float held_y = ours(&r, SK_LEFT_HAND)[1];
    /* Lost: flags off, the pose columns left holding garbage. */
    const double blend = (double)r.desc.loss_blend_s;
    float previous[3], start[3];
    m_vec3_copy(ours(&r, SK_LEFT_HAND), previous);
    m_vec3_copy(ours(&r, SK_LEFT_HAND), start);
    float biggest_move = 0.0f;
    for (int i = 0; i < (int)(blend * RATE_HZ) + 6; ++i) {
        r.t += 1.0 / RATE_HZ;
        struct em_tracking_frame f = rig_frame(&r);
        f.device[EM_DEVICE_LEFT_HAND].flags = 0;
        m_vec3_set(f.device[EM_DEVICE_LEFT_HAND].pose.position_m, NAN, 1e30f, 0.0f);
        body_update(r.body, &f);
        assert_pose_finite(&r);
        biggest_move = fmaxf(biggest_move, m_vec3_distance(ours(&r, SK_LEFT_HAND), previous));
        m_vec3_copy(ours(&r, SK_LEFT_HAND), previous);
    }
    /* No snap: no frame moves the hand more than a sixth of the way it travels (a
     * blend over 0.3 s at 60 Hz moves it in about 18 steps). */
    assert_true(biggest_move < m_vec3_distance(start, previous) / 6.0f);
    struct body_status st;
    body_get_status(r.body, &st);
    assert_int_equal(st.device[EM_DEVICE_LEFT_HAND], BODY_DEVICE_LOST);
    /* Hanging at the side: well below shoulder height, beside the hip. */
    assert_true(ours(&r, SK_LEFT_HAND)[1] < held_y - 0.4f);
    assert_true(ours(&r, SK_LEFT_HAND)[0] > 0.1f);
    /* The right hand was not affected. */
    assert_true(m_vec3_distance(ours(&r, SK_RIGHT_HAND), truth(&r, SK_RIGHT_HAND)) < 0.01f);
    /* It returns: blending back, then tracked, at the real hand again. */
    rig_step(&r, 2);
    body_get_status(r.body, &st);
    assert_int_equal(st.device[EM_DEVICE_LEFT_HAND], BODY_DEVICE_RETURNING);
    rig_step(&r, (int)(blend * RATE_HZ) + 10);
    body_get_status(r.body, &st);
    assert_int_equal(st.device[EM_DEVICE_LEFT_HAND], BODY_DEVICE_TRACKED);
    assert_true(m_vec3_distance(ours(&r, SK_LEFT_HAND), truth(&r, SK_LEFT_HAND)) < 0.01f);
    rig_fini(&r);
}

static void
a_lost_head_holds_where_it_was(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    rig_pose(&r, (const float[3]){0.2f, 1.0f, 0.1f}, 0.3f);
    rig_step(&r, 30);
    float head[3];
    m_vec3_copy(ours(&r, SK_HEAD), head);
    for (int i = 0; i < 60; ++i) {
        r.t += 1.0 / RATE_HZ;
        struct em_tracking_frame f = rig_frame(&r);
        f.device[EM_DEVICE_HEAD].flags = EM_POSE_ORIENTATION_VALID; /* position lost */
        body_update(r.body, &f);
    }
    assert_true(m_vec3_distance(ours(&r, SK_HEAD), head) < 0.01f);
    assert_pose_finite(&r);
    rig_fini(&r);
}

static void
bad_frames_never_break_the_pose(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    rig_pose(&r, (const float[3]){0.0f, 1.0f, 0.0f}, 0.0f);
    rig_step(&r, 10);
    /* Non-finite values flagged valid, a zero quaternion, absurd positions. */
    struct em_tracking_frame f = rig_frame(&r);
    f.time_s = r.t + 0.02;
    f.device[EM_DEVICE_HEAD].pose.position_m[0] = INFINITY;
    m_quat_set(f.device[EM_DEVICE_LEFT_HAND].pose.orientation, 0, 0, 0, 0);
    f.device[EM_DEVICE_RIGHT_HAND].pose.orientation[2] = NAN;
    body_update(r.body, &f);
    assert_pose_finite(&r);
    /* Time going backwards or NaN time is ignored. */
    f = rig_frame(&r);
    f.time_s = r.t - 1.0;
    f.device[EM_DEVICE_HEAD].pose.position_m[1] = 5.0f;
    body_update(r.body, &f);
    f.time_s = (double)NAN;
    body_update(r.body, &f);
    assert_true(ours(&r, SK_HEAD)[1] < 2.0f);
    /* Far-away devices: still a finite, connected body. */
    f = rig_frame(&r);
    f.time_s = r.t + 0.1;
    m_vec3_set(f.device[EM_DEVICE_LEFT_HAND].pose.position_m, 1000.0f, -50.0f, 3.0f);
    body_update(r.body, &f);
    assert_pose_finite(&r);
    const struct sk_skeleton *sk = body_skeleton(r.body);
    const struct sk_pose *p = body_pose(r.body);
    for (int j = 1; j < sk->joint_count; ++j)
        assert_float_equal(m_vec3_distance(p->position_m[j], p->position_m[sk->parent[j]]),
                           sk->length_m[j], 1e-4);
    rig_fini(&r);
}

/* One headset sample 1e20 m away: that frame is a loss of the headset, never a NaN pose,
 * and the head is back on its device within 0.5 s of good samples. */
static void
an_absurd_sample_is_a_loss_for_one_frame_and_the_body_recovers(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    rig_pose(&r, (const float[3]){0.0f, 1.0f, 0.0f}, 0.0f);
    rig_step(&r, 30);
    r.t += 1.0 / RATE_HZ;
    struct em_tracking_frame f = rig_frame(&r);
    f.device[EM_DEVICE_HEAD].pose.position_m[0] = 1e20f;
    body_update(r.body, &f);
    struct body_status st;
    body_get_status(r.body, &st);
    assert_int_equal(st.device[EM_DEVICE_HEAD], BODY_DEVICE_LOST);
    assert_pose_finite(&r);
    /* A quaternion far from unit is no rotation either. */
    r.t += 1.0 / RATE_HZ;
    f = rig_frame(&r);
    for (int k = 0; k < 4; ++k)
        f.device[EM_DEVICE_LEFT_HAND].pose.orientation[k] *= 3.0f;
    body_update(r.body, &f);
    body_get_status(r.body, &st);
    assert_int_equal(st.device[EM_DEVICE_LEFT_HAND], BODY_DEVICE_LOST);
    assert_pose_finite(&r);
    rig_step(&r, (int)(0.5 * RATE_HZ));
    assert_pose_finite(&r);
    const int head = r.sk.bone_joint[SK_HEAD];
    assert_true(m_vec3_distance(ours(&r, SK_HEAD), r.pose.position_m[head]) < 0.01f);
    const int hand = r.sk.bone_joint[SK_LEFT_HAND];
    assert_true(m_vec3_distance(ours(&r, SK_LEFT_HAND), r.pose.position_m[hand]) < 0.01f);
    rig_fini(&r);
}

/* Two samples 1e-40 s apart (a stream starting at 0): the filter must not divide by
 * that step. */
static void
a_tiny_time_step_does_not_reach_the_filter(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    rig_pose(&r, (const float[3]){0.0f, 1.0f, 0.0f}, 0.0f);
    r.t = 0.0;
    struct em_tracking_frame f = rig_frame(&r);
    body_update(r.body, &f);
    f.time_s = 1e-40;
    /* Moved: 1e39 m/s, beyond a float. */
    f.device[EM_DEVICE_HEAD].pose.position_m[0] += 0.05f;
    f.device[EM_DEVICE_LEFT_HAND].pose.position_m[0] += 0.1f;
    body_update(r.body, &f);
    assert_pose_finite(&r);
    rig_step(&r, (int)(0.5 * RATE_HZ));
    assert_pose_finite(&r);
    const int head = r.sk.bone_joint[SK_HEAD];
    assert_true(m_vec3_distance(ours(&r, SK_HEAD), r.pose.position_m[head]) < 0.01f);
    rig_fini(&r);
}

/* A player sits down on a chair (the head goes down and back with the hips) and, seated,
 * bobs: the head up and down by 5 cm once a second (0.3 m/s at its fastest). The status
 * says sitting through the bobbing: the head's speed decides only on the way down or up
 * (it flickered to crouching whenever the head moved faster than 0.2 m/s). */
static void
a_seated_player_who_bobs_stays_sitting(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    rig_pose(&r, (const float[3]){0.0f, 1.0f, 0.0f}, 0.0f);
    rig_step(&r, 60);
    for (int i = 1; i <= 90; ++i) { /* 1.5 s down onto the seat */
        const float t = (float)i / 90.0f;
        rig_pose(&r, (const float[3]){0.0f, 1.0f - 0.35f * t, -0.2f * t}, 0.0f);
        rig_step(&r, 1);
    }
    rig_step(&r, 60);
    struct body_status st;
    body_get_status(r.body, &st);
    assert_int_equal(st.posture, BODY_SITTING);
    int other = 0;
    for (int i = 1; i <= 180; ++i) {
        const float bob = 0.05f * sinf(2.0f * M_PI_F * (float)i / 60.0f);
        rig_pose(&r, (const float[3]){0.0f, 0.65f + bob, -0.2f}, 0.0f);
        rig_step(&r, 1);
        body_get_status(r.body, &st);
        other += st.posture != BODY_SITTING;
    }
    print_message("seated and bobbing: %d of 180 frames not sitting\n", other);
    assert_int_equal(other, 0);
    rig_fini(&r);
}

/* A body that starts on a player already running (a replay from the middle of a run, the
 * service started mid-game) keeps up from its first frames: the hands ride on the
 * controllers at 3 m/s within a few frames. Each filter's speed estimate once started
 * from 0 and climbed over a second, holding its cutoff low: the hands trailed and then
 * caught up. */
static void
a_body_started_on_a_run_keeps_up_at_once(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    const float speed_m_s = 3.0f;
    float worst_m = 0.0f;
    for (int frame = 0; frame < 30; ++frame) {
        r.t = frame / RATE_HZ;
        const float hips[3] = {0.0f, 1.0f, speed_m_s * (float)r.t};
        rig_pose(&r, hips, 0.0f);
        struct em_tracking_frame f = rig_frame(&r);
        body_update(r.body, &f);
        if (frame < 6)
            continue;
        const enum sk_bone hands[2] = {SK_LEFT_HAND, SK_RIGHT_HAND};
        for (int s = 0; s < 2; ++s)
            worst_m = fmaxf(worst_m, m_vec3_distance(ours(&r, hands[s]), truth(&r, hands[s])));
    }
    print_message("started on a run: hands at most %.1f cm off from the 6th frame\n",
                  100.0 * (double)worst_m);
    assert_true(worst_m < 0.02f);
    rig_fini(&r);
}

/* The headset jumps 4 m in one frame (a teleport, a replay looping): the feet are on the
 * floor under the new body in that same frame, not lifted toward it for half a second. */
static void
a_teleport_puts_the_feet_under_the_body_at_once(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    const float hips_y = r.sk.rest_position_m[0][1];
    rig_pose(&r, (const float[3]){0.0f, hips_y, 0.0f}, 0.0f);
    rig_step(&r, 60);
    const float ankle_y = ours(&r, SK_LEFT_FOOT)[1];
    rig_pose(&r, (const float[3]){4.0f, hips_y, -1.0f}, 1.0f);
    rig_step(&r, 1);
    for (int s = 0; s < 2; ++s) {
        const float *ankle = ours(&r, s == 0 ? SK_LEFT_FOOT : SK_RIGHT_FOOT);
        const float *hips = ours(&r, SK_HIPS);
        assert_float_equal(ankle[1], ankle_y, 0.02);
        const float dx = ankle[0] - hips[0], dz = ankle[2] - hips[2];
        assert_true(sqrtf(dx * dx + dz * dz) < 0.3f);
    }
    /* Walking speed is no teleport: a 1 m/s move keeps the planted feet. */
    rig_step(&r, 60);
    const float before[3] = {ours(&r, SK_LEFT_FOOT)[0], ours(&r, SK_LEFT_FOOT)[1],
                             ours(&r, SK_LEFT_FOOT)[2]};
    rig_pose(&r, (const float[3]){4.0f + 1.0f / (float)RATE_HZ, hips_y, -1.0f}, 1.0f);
    rig_step(&r, 1);
    assert_true(m_vec3_distance(ours(&r, SK_LEFT_FOOT), before) < 0.005f);
    rig_fini(&r);
}

static void
calibration_measures_height_and_span(void **state)
{
    (void)state;
    struct body *b;
    struct em_error err;
    const struct body_desc d = {.height_m = 1.6f};
    assert_int_equal(body_create(&d, &b, &err), EM_OK);
    struct em_tracking_frame f = {.time_s = 1.0};
    /* Eyes at a 1.85 m person's eye height, hands spread in a T-pose at shoulder height,
     * 1.6 m apart (grip to grip). */
    const float height = 1.85f;
    const float eye = body_eye_height_for(height);
    for (int dv = 0; dv < EM_DEVICE_COUNT; ++dv) {
        m_quat_identity(f.device[dv].pose.orientation);
        f.device[dv].flags = EM_POSE_ALL_VALID;
    }
    m_vec3_set(f.device[EM_DEVICE_HEAD].pose.position_m, 0.0f, eye, 0.0f);
    m_vec3_set(f.device[EM_DEVICE_LEFT_HAND].pose.position_m, 0.8f, eye - 0.2f * height, 0.0f);
    m_vec3_set(f.device[EM_DEVICE_RIGHT_HAND].pose.position_m, -0.8f, eye - 0.2f * height, 0.0f);
    assert_int_equal(body_calibrate(b, &f, &err), EM_OK);
    struct body_status st;
    body_get_status(b, &st);
    assert_float_equal(st.height_m, height, 0.005);
    assert_float_equal(sk_humanoid_height(body_skeleton(b)), height, 0.005);
    assert_true(st.arm_span_m > 1.6f && st.arm_span_m < 2.0f);
    /* Hands down: the height is measured, the span kept from before. */
    const float span = st.arm_span_m;
    m_vec3_set(f.device[EM_DEVICE_LEFT_HAND].pose.position_m, 0.2f, 0.9f, 0.0f);
    assert_int_equal(body_calibrate(b, &f, &err), EM_OK);
    body_get_status(b, &st);
    /* An untracked headset or an implausible height is refused, the fit kept. */
    f.device[EM_DEVICE_HEAD].flags = 0;
    assert_int_equal(body_calibrate(b, &f, &err), EM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "not tracked"));
    f.device[EM_DEVICE_HEAD].flags = EM_POSE_ALL_VALID;
    f.device[EM_DEVICE_HEAD].pose.position_m[1] = 0.4f;
    assert_int_equal(body_calibrate(b, &f, &err), EM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "eye height"));
    body_get_status(b, &st);
    assert_float_equal(st.height_m, height, 0.005);
    (void)span;
    body_destroy(&b);
}

static void
bad_settings_are_refused(void **state)
{
    (void)state;
    struct body *b = NULL;
    struct em_error err;
    struct body_desc d = {.height_m = NAN};
    assert_int_equal(body_create(&d, &b, &err), EM_ERROR_INVALID_ARGUMENT);
    assert_null(b);
    d = (struct body_desc){.height_m = 4.0f};
    assert_int_equal(body_create(&d, &b, &err), EM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "height"));
    d = (struct body_desc){.loss_blend_s = -1.0f};
    assert_int_equal(body_create(&d, &b, &err), EM_ERROR_INVALID_ARGUMENT);
    d = (struct body_desc){.stages_off = BODY_STAGE_ALL + 1u};
    assert_int_equal(body_create(&d, &b, &err), EM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "stages off"));
    d = (struct body_desc){.stages_off = BODY_STAGE_ALL}; /* every stage may be off */
    assert_int_equal(body_create(&d, &b, &err), EM_OK);
    body_destroy(&b);
    for (int i = 0; i < BODY_STAGE_COUNT; ++i)
        assert_non_null(body_stage_name(1u << i));
    assert_null(body_stage_name(BODY_STAGE_PLANTING | BODY_STAGE_FLOOR));
    /* A skeleton that is not a humanoid. */
    const struct sk_joint_desc jd[] = {{.name = "hips", .offset_m = {0, 1, 0}},
                                       {.name = "tail", .parent = "hips", .offset_m = {0, 0, -1}}};
    struct sk_skeleton sk;
    assert_int_equal(sk_skeleton_create(jd, 2, "tiny", &sk, NULL), EM_OK);
    d = (struct body_desc){.skeleton = &sk};
    assert_int_equal(body_create(&d, &b, &err), EM_ERROR_PARSE);
    assert_non_null(strstr(err.message, "missing the humanoid joint"));
    sk_skeleton_fini(&sk);
}

static void
settings_file_is_read_and_checked(void **state)
{
    (void)state;
    struct body_desc d = {0};
    struct em_error err;
    assert_int_equal(body_desc_load_json(EMBODY_SOURCE_DIR "/config/body.json", &d, &err), EM_OK);
    assert_float_equal(d.offsets.head_position_m[2], 0.09, 1e-6);
    assert_float_equal(d.loss_blend_s, 0.3, 1e-6);
    /* The file's defaults are the built-in ones. */
    struct body *b;
    assert_int_equal(body_create(&d, &b, &err), EM_OK);
    struct body_desc from_file, built_in;
    body_get_desc(b, &from_file);
    body_destroy(&b);
    const struct body_desc zero = {0};
    assert_int_equal(body_create(&zero, &b, &err), EM_OK);
    body_get_desc(b, &built_in);
    body_destroy(&b);
    for (int s = 0; s < 2; ++s)
        assert_true(fabsf(m_quat_dot(from_file.offsets.grip_rotation[s],
                                     built_in.offsets.grip_rotation[s])) > 0.99999f);
    /* Errors name the file and the field; the description is left as it was. */
    struct {
        const char *json, *expect;
    } bad[] = {
        {"{\"filter\": {\"beta\": -2}}", "bad.json: filter.beta"},
        {"{\"devices\": {\"head\": {\"position_m\": [0, 1]}}}", "devices.head.position_m"},
        {"{\"devices\": {\"head\": {\"rotation_xyzw\": [0, 0, 0, 2]}}}", "unit quaternion"},
        {"{\"devices\": {\"grip\": {\"left\": {\"axes\": {\"x\": [1,0,0], \"y\": [1,0,0], "
         "\"z\": [0,0,1]}}}}}",
         "devices.grip.left.axes"},
        {"{\"tracking_loss\": \"soon\"}", "tracking_loss: expected an object"},
        {"{\"format\": \"something-else\"}", "format"},
        {"{\n\"filter\": {\n", "bad.json:3"},
        {"{\"arm_stretch_max\": 0.5}", "bad.json: arm_stretch_max: expected a number from 0 to 0.3"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        struct body_desc before = {.filter_beta = 5.0f};
        struct body_desc x = before;
        if (body_desc_parse_json(bad[i].json, "bad.json", &x, &err) == EM_OK)
            fail_msg("accepted %s", bad[i].json);
        if (!strstr(err.message, bad[i].expect))
            fail_msg("\"%s\" lacks \"%s\"", err.message, bad[i].expect);
        assert_memory_equal(&x, &before, sizeof x);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(standing_body_matches_the_devices_body),
        cmocka_unit_test(pelvis_drops_with_the_head_and_knees_bend_forward),
        cmocka_unit_test(looking_around_does_not_twist_the_hips_but_turning_does),
        cmocka_unit_test(planted_feet_stay_put_while_the_body_sways),
        cmocka_unit_test(walking_steps_one_foot_at_a_time_and_planted_feet_do_not_slide),
        cmocka_unit_test(elbows_point_down_and_back_for_hands_in_front),
        cmocka_unit_test(the_forearm_shares_the_hands_twist),
        cmocka_unit_test(a_lost_hand_hangs_at_the_side_and_comes_back),
        cmocka_unit_test(a_lost_head_holds_where_it_was),
        cmocka_unit_test(bad_frames_never_break_the_pose),
        cmocka_unit_test(an_absurd_sample_is_a_loss_for_one_frame_and_the_body_recovers),
        cmocka_unit_test(a_tiny_time_step_does_not_reach_the_filter),
        cmocka_unit_test(a_body_started_on_a_run_keeps_up_at_once),
        cmocka_unit_test(a_seated_player_who_bobs_stays_sitting),
        cmocka_unit_test(a_teleport_puts_the_feet_under_the_body_at_once),
        cmocka_unit_test(calibration_measures_height_and_span),
        cmocka_unit_test(bad_settings_are_refused),
        cmocka_unit_test(settings_file_is_read_and_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
