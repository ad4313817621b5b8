/*
 * Body trackers (src/body/b_trackers.c): every setup reaches its trackers, on a held pose
 * and on real motion (CMU clip 127_17 with the trackers of PROTOCOL section 2b), a tracker
 * that drops out and comes back blends without a jump, calibration recovers mounts that
 * differ from the defaults, and a frame without trackers is the 3-point body.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "embody/body.h"
#include "eval/eval.h"
#include "embody/m_math.h"
#include "embody/skeleton.h"

#define RATE_HZ 60.0
#define CLIP EMBODY_SOURCE_DIR "/tests/data/mocap/cmu_127_17.bvh"

static const enum sk_bone k_tracker_bone[EM_TRACKER_COUNT] = {
    SK_HIPS,           SK_CHEST,           SK_LEFT_FOOT,      SK_RIGHT_FOOT,
    SK_LEFT_LOWER_LEG, SK_RIGHT_LOWER_LEG, SK_LEFT_LOWER_ARM, SK_RIGHT_LOWER_ARM,
};

/* ---- a held pose of the default humanoid ---------------------------------------- */

struct rig {
    struct sk_skeleton sk;
    struct sk_pose pose; /* the real body the devices are on */
    struct body *body;
    struct body_desc desc;                             /* resolved */
    struct body_tracker_mount mount[EM_TRACKER_COUNT]; /* where the trackers really are */
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
    memcpy(r->mount, r->desc.tracker_mount, sizeof r->mount);
}

static void
rig_fini(struct rig *r)
{
    body_destroy(&r->body);
    sk_pose_fini(&r->pose);
    sk_skeleton_fini(&r->sk);
}

/* device = bone * offset */
static void
device_on(const float *bone_pos, const float *bone_rot, const float *off_pos, const float *off_rot,
          struct em_device_pose *out)
{
    float p[3];
    m_quat_rotate(bone_rot, off_pos, p);
    m_vec3_add(bone_pos, p, out->pose.position_m);
    m_quat_mul(bone_rot, off_rot, out->pose.orientation);
    m_quat_normalize(out->pose.orientation);
    out->flags = EM_POSE_ALL_VALID;
}

/* The headset (hands not tracked) and the trackers of `mask` on the rig's real pose. */
static struct em_tracking_frame
rig_frame(const struct rig *r, uint32_t mask)
{
    struct em_tracking_frame f;
    memset(&f, 0, sizeof f);
    f.time_s = r->t;
    const int head = r->sk.bone_joint[SK_HEAD];
    device_on(r->pose.position_m[head], r->pose.rotation[head], r->desc.offsets.head_position_m,
              r->desc.offsets.head_rotation, &f.device[EM_DEVICE_HEAD]);
    f.tracker_present = mask;
    for (int t = 0; t < EM_TRACKER_COUNT; ++t)
        if (mask & EM_TRACKER_BIT(t)) {
            const int j = r->sk.bone_joint[k_tracker_bone[t]];
            device_on(r->pose.position_m[j], r->pose.rotation[j], r->mount[t].position_m,
                      r->mount[t].rotation, &f.tracker[t]);
        }
    return f;
}

/* Standing, turned by `yaw_rad`, hips at `hips_m`, knees a little bent. */
static void
rig_pose(struct rig *r, const float *hips_m, float yaw_rad)
{
    sk_pose_set_rest(&r->pose, &r->sk);
    const float y[3] = {0, 1, 0}, x[3] = {1, 0, 0};
    m_vec3_copy(hips_m, r->pose.position_m[0]);
    m_quat_from_axis_angle(y, yaw_rad, r->pose.local_rotation[0]);
    for (int s = 0; s < 2; ++s) {
        m_quat_from_axis_angle(
            x, -0.3f,
            r->pose.local_rotation[r->sk.bone_joint[s ? SK_RIGHT_UPPER_LEG : SK_LEFT_UPPER_LEG]]);
        m_quat_from_axis_angle(
            x, 0.6f,
            r->pose.local_rotation[r->sk.bone_joint[s ? SK_RIGHT_LOWER_LEG : SK_LEFT_LOWER_LEG]]);
        m_quat_from_axis_angle(
            x, -0.3f, r->pose.local_rotation[r->sk.bone_joint[s ? SK_RIGHT_FOOT : SK_LEFT_FOOT]]);
    }
    sk_pose_forward_kinematics(&r->pose, &r->sk);
}

static float
bone_error(const struct rig *r, enum sk_bone bone)
{
    const struct sk_skeleton *sk = body_skeleton(r->body);
    return m_vec3_distance(body_pose(r->body)->position_m[sk->bone_joint[bone]],
                           r->pose.position_m[r->sk.bone_joint[bone]]);
}

static void
each_setup_reaches_its_trackers_on_a_held_pose(void **state)
{
    (void)state;
    const uint32_t setups[] = {ST_SETUP_4, ST_SETUP_6, ST_SETUP_8, ST_SETUP_11,
                               EM_TRACKER_BIT(EM_TRACKER_LEFT_FOOT) |
                                   EM_TRACKER_BIT(EM_TRACKER_CHEST)};
    for (size_t i = 0; i < sizeof setups / sizeof setups[0]; ++i) {
        struct rig r;
        rig_init(&r);
        const float hips[3] = {0.4f, 0.9f, -0.2f};
        rig_pose(&r, hips, 0.7f);
        for (int k = 0; k < 60; ++k) {
            r.t += 1.0 / RATE_HZ;
            const struct em_tracking_frame f = rig_frame(&r, setups[i]);
            body_update(r.body, &f);
        }
        for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
            if (!(setups[i] & EM_TRACKER_BIT(t)))
                continue;
            const float e = bone_error(&r, k_tracker_bone[t]);
            /* Pelvis and feet are placed; chest, knees and elbows are solved toward. */
            const float bound = t == EM_TRACKER_CHEST || t >= EM_TRACKER_LEFT_KNEE ? 0.02f : 0.005f;
            if (!(e <= bound))
                fail_msg("setup %zu: the %s is %.4f m from its tracker's bone, expected <= %g", i,
                         em_tracker_name((enum em_tracker)t), (double)e, (double)bound);
        }
        struct body_tracker_status st[EM_TRACKER_COUNT];
        body_get_trackers(r.body, st);
        for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
            const bool worn = (setups[i] & EM_TRACKER_BIT(t)) != 0;
            assert_int_equal(st[t].present, worn);
            assert_true(st[t].weight == (worn ? 1.0f : 0.0f));
        }
        rig_fini(&r);
    }
}

/* ---- real motion ------------------------------------------------------------------ */

struct motion_run {
    double pelvis_median_m, feet_median_m;
    double max_jump_m; /* largest frame-to-frame move of any scored joint */
};

static int
compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    return n > 0 ? v[n / 2] : (double)NAN;
}

/* Runs the known body over the clip with the trackers of `mask`; `drop` says which
 * trackers are lost on which rows (NULL: none). */
static void
run_clip(const struct ev_clip *clip, uint32_t mask,
         void (*drop)(int row, struct em_tracking_frame *), struct motion_run *out)
{
    struct body_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.skeleton = &clip->skeleton;
    ev_trackers_known_mounts(clip, desc.tracker_mount);
    struct body *body = NULL;
    struct em_error err;
    if (body_create(&desc, &body, &err) != EM_OK)
        fail_msg("%s", err.message);
    const struct sk_skeleton *sk = body_skeleton(body);
    const int n = clip->stream.frame_count;
    double *pelvis = calloc((size_t)n, sizeof *pelvis);
    double *feet = calloc((size_t)2 * (size_t)n, sizeof *feet);
    double(*last)[3] = calloc(EV_JOINT_COUNT, sizeof *last);
    int feet_n = 0;
    out->max_jump_m = 0.0;
    for (int row = 0; row < n; ++row) {
        struct em_tracking_frame f = clip->stream.frames[row];
        f.tracker_present &= mask;
        if (drop)
            drop(row, &f);
        body_update(body, &f);
        const struct sk_pose *pose = body_pose(body);
        const double(*truth)[3] = clip->truth.position_m[row];
        const float *hips = pose->position_m[sk->bone_joint[SK_HIPS]];
        double d2 = 0.0;
        for (int k = 0; k < 3; ++k)
            d2 += ((double)hips[k] - truth[EV_HIPS][k]) * ((double)hips[k] - truth[EV_HIPS][k]);
        pelvis[row] = sqrt(d2);
        for (int s = 0; s < 2; ++s) {
            const enum ev_joint ej = s ? EV_RIGHT_FOOT : EV_LEFT_FOOT;
            const enum ev_joint hip = s ? EV_RIGHT_UPPER_LEG : EV_LEFT_UPPER_LEG;
            const float *foot = pose->position_m[sk->bone_joint[ev_joint_bone(ej)]];
            const int leg_j = sk->bone_joint[ev_joint_bone(hip)];
            double reach2 = 0.0, e2 = 0.0;
            for (int k = 0; k < 3; ++k) {
                reach2 += (truth[ej][k] - truth[hip][k]) * (truth[ej][k] - truth[hip][k]);
                e2 += ((double)foot[k] - truth[ej][k]) * ((double)foot[k] - truth[ej][k]);
            }
            const float leg = sk->length_m[sk->bone_joint[ev_joint_bone(ej)]] +
                              sk->length_m[sk->bone_joint[ev_joint_bone(s ? EV_RIGHT_LOWER_LEG
                                                                          : EV_LEFT_LOWER_LEG)]];
            (void)leg_j;
            if (sqrt(reach2) < 0.99 * (double)leg)
                feet[feet_n++] = sqrt(e2);
        }
        for (int j = 0; j < EV_JOINT_COUNT; ++j) {
            const float *p = pose->position_m[sk->bone_joint[ev_joint_bone((enum ev_joint)j)]];
            if (row > 0) {
                double jump2 = 0.0;
                for (int k = 0; k < 3; ++k)
                    jump2 += ((double)p[k] - last[j][k]) * ((double)p[k] - last[j][k]);
                out->max_jump_m = fmax(out->max_jump_m, sqrt(jump2));
            }
            for (int k = 0; k < 3; ++k)
                last[j][k] = (double)p[k];
        }
    }
    out->pelvis_median_m = median(pelvis, n);
    out->feet_median_m = median(feet, feet_n);
    free(pelvis);
    free(feet);
    free(last);
    body_destroy(&body);
}

static void
load_clip(struct ev_clip *clip)
{
    struct em_error err;
    if (ev_clip_load(CLIP, 0, clip, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(clip->stream.frames[0].tracker_present, EM_TRACKER_ALL);
}

static void
each_setup_reaches_its_trackers_on_real_motion(void **state)
{
    (void)state;
    struct ev_clip clip;
    load_clip(&clip);
    const uint32_t setups[] = {ST_SETUP_4, ST_SETUP_6, ST_SETUP_8, ST_SETUP_11};
    for (size_t i = 0; i < sizeof setups / sizeof setups[0]; ++i) {
        struct motion_run run;
        run_clip(&clip, setups[i], NULL, &run);
        if (!(run.pelvis_median_m <= 0.005))
            fail_msg("setup %zu: pelvis %.4f m from the truth (median), expected <= 0.005", i,
                     run.pelvis_median_m);
        if ((setups[i] & ST_SETUP_6) == ST_SETUP_6 && !(run.feet_median_m <= 0.005))
            fail_msg("setup %zu: feet %.4f m from the truth (median, when reachable), expected "
                     "<= 0.005",
                     i, run.feet_median_m);
    }
    ev_clip_fini(&clip);
}

/* The left foot lost on rows 60-89, the pelvis on rows 120-139. */
static void
drop_some(int row, struct em_tracking_frame *f)
{
    if (row >= 60 && row < 90)
        f->tracker[EM_TRACKER_LEFT_FOOT].flags = 0;
    if (row >= 120 && row < 140)
        f->tracker[EM_TRACKER_PELVIS].flags = 0;
}

static void
a_tracker_that_drops_out_and_returns_blends_without_a_jump(void **state)
{
    (void)state;
    struct ev_clip clip;
    load_clip(&clip);
    struct motion_run steady, dropped;
    run_clip(&clip, ST_SETUP_6, NULL, &steady);
    run_clip(&clip, ST_SETUP_6, drop_some, &dropped);
    /* No frame moves a joint much further than the undisturbed run ever does. */
    if (!(dropped.max_jump_m <= steady.max_jump_m + 0.01))
        fail_msg("a joint jumped %.4f m in one frame with drop-outs, %.4f m without",
                 dropped.max_jump_m, steady.max_jump_m);
    ev_clip_fini(&clip);

    /* The states and weights along the way. */
    struct rig r;
    rig_init(&r);
    const float hips[3] = {0.0f, 0.9f, 0.0f};
    rig_pose(&r, hips, 0.0f);
    struct body_tracker_status st[EM_TRACKER_COUNT];
    for (int k = 0; k < 90; ++k) {
        r.t += 1.0 / RATE_HZ;
        struct em_tracking_frame f = rig_frame(&r, ST_SETUP_4);
        if (k >= 30 && k < 60)
            f.tracker[EM_TRACKER_PELVIS].flags = 0;
        body_update(r.body, &f);
        body_get_trackers(r.body, st);
        if (k == 29)
            assert_int_equal(st[EM_TRACKER_PELVIS].state, BODY_DEVICE_TRACKED);
        if (k == 35)
            assert_true(st[EM_TRACKER_PELVIS].weight > 0.0f && st[EM_TRACKER_PELVIS].weight < 1.0f);
        if (k == 59)
            assert_true(st[EM_TRACKER_PELVIS].weight == 0.0f);
        if (k == 62)
            assert_int_equal(st[EM_TRACKER_PELVIS].state, BODY_DEVICE_RETURNING);
    }
    assert_int_equal(st[EM_TRACKER_PELVIS].state, BODY_DEVICE_TRACKED);
    assert_true(st[EM_TRACKER_PELVIS].weight == 1.0f);
    rig_fini(&r);
}

/* ---- calibration ----------------------------------------------------------------- */

static void
calibration_recovers_mounts_that_differ_from_the_defaults(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    /* Each tracker worn up to 5 cm and 30 degrees away from where the defaults say. */
    for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
        const float shift[3] = {0.05f * (float)((t % 3) - 1), -0.03f,
                                0.04f * (t % 2 ? 1.0f : -1.0f)};
        m_vec3_add(r.mount[t].position_m, shift, r.mount[t].position_m);
        float axis[3] = {(float)(t % 2), 1.0f, (float)(t % 3)}, turn[4];
        m_vec3_normalize_or(axis, axis, axis);
        m_quat_from_axis_angle(axis, (float)(10 + 20 * (t % 2)) * M_DEG_TO_RAD, turn);
        m_quat_mul(r.mount[t].rotation, turn, r.mount[t].rotation);
    }
    /* Standing straight (the rest pose), turned and away from the origin. */
    sk_pose_set_rest(&r.pose, &r.sk);
    const float y[3] = {0, 1, 0};
    r.pose.position_m[0][0] += 0.6f;
    r.pose.position_m[0][2] -= 0.4f;
    m_quat_from_axis_angle(y, 0.9f, r.pose.local_rotation[0]);
    sk_pose_forward_kinematics(&r.pose, &r.sk);
    r.t = 1.0;
    const struct em_tracking_frame f = rig_frame(&r, EM_TRACKER_ALL);
    uint32_t done = 0;
    struct em_error err;
    if (body_calibrate_trackers(r.body, &f, &done, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(done, EM_TRACKER_ALL);
    struct body_desc d;
    body_get_desc(r.body, &d);
    for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
        const float e = m_vec3_distance(d.tracker_mount[t].position_m, r.mount[t].position_m);
        float diff[4];
        m_quat_mul_conj_first(d.tracker_mount[t].rotation, r.mount[t].rotation, diff);
        const float angle = m_quat_angle(diff) * M_RAD_TO_DEG;
        if (!(e <= 0.001f && angle <= 0.5f))
            fail_msg("%s: calibrated mount off by %.4f m and %.2f degrees",
                     em_tracker_name((enum em_tracker)t), (double)e, (double)angle);
    }
    /* Without a headset nothing changes. */
    struct em_tracking_frame blind = f;
    blind.device[EM_DEVICE_HEAD].flags = 0;
    assert_int_equal(body_calibrate_trackers(r.body, &blind, &done, &err),
                     EM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(done, 0u);
    rig_fini(&r);
}

static void
mounts_default_to_the_protocol(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    const float pelvis[3] = {0.0f, 0.05f, -0.12f}, knee[3] = {0.0f, -0.10f, 0.06f};
    assert_true(m_vec3_distance(r.desc.tracker_mount[EM_TRACKER_PELVIS].position_m, pelvis) <
                1e-6f);
    assert_true(m_vec3_distance(r.desc.tracker_mount[EM_TRACKER_RIGHT_KNEE].position_m, knee) <
                1e-6f);
    assert_true(r.desc.tracker_mount[EM_TRACKER_CHEST].rotation[3] == 1.0f);
    rig_fini(&r);
}

static void
a_frame_without_trackers_gives_the_three_point_body(void **state)
{
    (void)state;
    struct rig a, b;
    rig_init(&a);
    rig_init(&b);
    const float hips[3] = {0.1f, 0.95f, 0.3f};
    rig_pose(&a, hips, -0.5f);
    rig_pose(&b, hips, -0.5f);
    for (int k = 0; k < 30; ++k) {
        a.t = b.t = (k + 1) / RATE_HZ;
        struct em_tracking_frame fa = rig_frame(&a, 0);
        struct em_tracking_frame fb = rig_frame(&b, ST_SETUP_11);
        fb.tracker_present = 0; /* poses there, but not carried: ignored */
        body_update(a.body, &fa);
        body_update(b.body, &fb);
    }
    const struct sk_pose *pa = body_pose(a.body), *pb = body_pose(b.body);
    assert_memory_equal(pa->position_m, pb->position_m, sizeof(vec3) * (size_t)pa->joint_count);
    rig_fini(&a);
    rig_fini(&b);
}

static void
tracker_mounts_are_read_from_the_settings_file(void **state)
{
    (void)state;
    struct body_desc d;
    memset(&d, 0, sizeof d);
    struct em_error err;
    const char *ok = "{\"format\": \"embody-body\", \"trackers\": {\"pelvis\": {\"position_m\": "
                     "[0, 0.06, -0.1]}, \"left_knee\": {\"position_m\": [0.01, -0.1, 0.07], "
                     "\"rotation_xyzw\": [0, 0.258819, 0, 0.9659258]}}}";
    if (body_desc_parse_json(ok, "body.json", &d, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_float_equal(d.tracker_mount[EM_TRACKER_PELVIS].position_m[1], 0.06f, 1e-6f);
    assert_float_equal(d.tracker_mount[EM_TRACKER_PELVIS].rotation[3], 1.0f, 1e-6f);
    assert_float_equal(d.tracker_mount[EM_TRACKER_LEFT_KNEE].rotation[1], 0.258819f, 1e-5f);
    const char *bad = "{\"trackers\": {\"tail\": {\"position_m\": [0, 0, 0]}}}";
    assert_int_equal(body_desc_parse_json(bad, "body.json", &d, &err), EM_ERROR_PARSE);
    assert_non_null(strstr(err.message, "trackers.tail"));
    const char *not_unit = "{\"trackers\": {\"chest\": {\"rotation_xyzw\": [0, 0, 0, 2]}}}";
    assert_int_equal(body_desc_parse_json(not_unit, "body.json", &d, &err), EM_ERROR_PARSE);
    assert_non_null(strstr(err.message, "trackers.chest"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_setup_reaches_its_trackers_on_a_held_pose),
        cmocka_unit_test(each_setup_reaches_its_trackers_on_real_motion),
        cmocka_unit_test(a_tracker_that_drops_out_and_returns_blends_without_a_jump),
        cmocka_unit_test(calibration_recovers_mounts_that_differ_from_the_defaults),
        cmocka_unit_test(mounts_default_to_the_protocol),
        cmocka_unit_test(a_frame_without_trackers_gives_the_three_point_body),
        cmocka_unit_test(tracker_mounts_are_read_from_the_settings_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
