/*
 * Streams made from motion capture (PROTOCOL.md section 2): every reference stream is
 * reproduced from its clip, the bundled demo is what make_demo makes of its clips and shows
 * what it should, a clip without the tracked joints is refused, and clips on other
 * skeletons (Daz-friendly, CC3/iClone, 3ds Max) read as people whose streams follow their
 * heads and hands.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo_recipe.h"
#include "embody/hand.h"
#include "embody/m_math.h"
#include "embody/skeleton.h"
#include "embody/stream.h"
#include "test_stream.h"

#define CMU_SCALE 0.056444

/* Largest difference between two streams' numbers; fails on a different shape. */
static double
stream_difference(const struct st_stream *a, const struct st_stream *b, const char *what)
{
    if (a->frame_count != b->frame_count)
        fail_msg("%s: %d frames, expected %d", what, a->frame_count, b->frame_count);
    double worst = 0.0;
    for (int i = 0; i < a->frame_count; ++i) {
        const struct em_tracking_frame *fa = &a->frames[i], *fb = &b->frames[i];
        worst = fmax(worst, fabs(fa->time_s - fb->time_s));
        for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
            const struct em_device_pose *da = &fa->device[d], *db = &fb->device[d];
            if (da->flags != db->flags)
                fail_msg("%s: frame %d: %s flags differ", what, i,
                         em_device_name((enum em_device)d));
            for (int k = 0; k < 3; ++k)
                worst = fmax(worst, fabs((double)da->pose.position_m[k] -
                                         (double)db->pose.position_m[k]));
            /* The sign of each quaternion counts too. */
            for (int k = 0; k < 4; ++k)
                worst = fmax(worst, fabs((double)da->pose.orientation[k] -
                                         (double)db->pose.orientation[k]));
        }
    }
    return worst;
}

static void
clip_to_stream(const char *clip, struct st_stream *out, int *out_clip_frames)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/data/mocap/%s.bvh", EMBODY_SOURCE_DIR, clip);
    struct st_bvh bvh;
    struct em_error err = {{0}};
    if (st_bvh_load(path, &bvh, &err) != EM_OK)
        fail_msg("%s", err.message);
    if (st_mocap_to_stream(&bvh, CMU_SCALE, path, out, &err) != EM_OK)
        fail_msg("%s", err.message);
    *out_clip_frames = bvh.frame_count;
    st_bvh_fini(&bvh);
}

static void
every_reference_stream_is_reproduced_from_its_clip(void **state)
{
    (void)state;
    for (int c = 0; c < TEST_CLIP_COUNT; ++c) {
        struct st_stream made, reference;
        int clip_frames = 0;
        clip_to_stream(test_clips[c], &made, &clip_frames);
        char path[512];
        snprintf(path, sizeof path, "%s/tests/data/streams/%s.csv", EMBODY_SOURCE_DIR,
                 test_clips[c]);
        struct em_error err = {{0}};
        if (st_stream_load(path, &reference, &err) != EM_OK)
            fail_msg("%s", err.message);
        /* 120 fps clips: every second frame from frame 0. */
        assert_int_equal(made.frame_count, (clip_frames + 1) / 2);
        const double worst = stream_difference(&made, &reference, test_clips[c]);
        if (!(worst <= 1e-5))
            fail_msg("%s: differs from the reference stream by %g", test_clips[c], worst);
        st_stream_fini(&made);
        st_stream_fini(&reference);
    }
}

static void
the_demo_stream_is_what_make_demo_makes(void **state)
{
    (void)state;
    struct st_stream made, demo;
    struct em_error err = {{0}};
    if (demo_make(EMBODY_SOURCE_DIR "/tests/data/mocap", &made, &err) != EM_OK)
        fail_msg("%s", err.message);
    if (st_stream_load(EMBODY_SOURCE_DIR "/config/demo/demo.csv", &demo, &err) != EM_OK)
        fail_msg("%s", err.message);
    /* Written by the exact writer, so only a change in the conversion can differ. */
    const double worst = stream_difference(&made, &demo, "demo.csv");
    if (!(worst <= 1e-6))
        fail_msg("config/demo/demo.csv differs from what make_demo makes by %g: remake it", worst);
    assert_non_null(made.fingers);
    assert_non_null(demo.fingers);
    for (int i = 0; i < made.frame_count; ++i)
        for (int h = 0; h < HD_HAND_COUNT; ++h)
            for (int f = 0; f < HD_FINGER_COUNT; ++f)
                for (int a = 0; a < ST_FINGER_ANGLES; ++a)
                    if (!(fabsf(made.fingers[i].angle_deg[h][f][a] -
                                demo.fingers[i].angle_deg[h][f][a]) <= 1e-3f))
                        fail_msg("demo.csv row %d: fingers differ from what make_demo makes", i);
    st_stream_fini(&made);
    st_stream_fini(&demo);
}

/* How far hand h of row `fingers` is from `curls` on the default hand: the largest angle
 * difference, degrees. */
static float
fingers_from_curls_deg(const struct st_fingers *fingers, enum hd_hand h, const struct hd_curls *curls)
{
    struct hd_model model;
    const struct hd_model_desc desc = {.hand = h};
    struct em_error err = {{0}};
    if (hd_model_init(&desc, &model, &err) != EM_OK)
        fail_msg("%s", err.message);
    struct hd_pose want, got;
    hd_pose_from_curls(&model, curls, &want);
    st_fingers_get_pose(fingers, h, &got);
    float worst = 0.0f;
    for (int f = 0; f < HD_FINGER_COUNT; ++f) {
        for (int j = 0; j < HD_FINGER_JOINTS; ++j)
            worst = fmaxf(worst, fabsf(got.flex_rad[f][j] - want.flex_rad[f][j]));
        worst = fmaxf(worst, fabsf(got.abduct_rad[f] - want.abduct_rad[f]));
    }
    return worst * M_RAD_TO_DEG;
}

/* The demo's hands: both known on every row, a fist in each hand, the right one pointing,
 * a thumbs-up at the end; no finger angle jumps from row to row (eased over a quarter
 * second). */
static void
the_demo_grips_points_and_ends_with_a_thumbs_up(void **state)
{
    (void)state;
    struct st_stream demo;
    struct em_error err = {{0}};
    if (st_stream_load(EMBODY_SOURCE_DIR "/config/demo/demo.csv", &demo, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_non_null(demo.fingers);
    const struct hd_curls fist = {{0.8f, 1.0f, 1.0f, 1.0f, 1.0f}, 0.0f};
    const struct hd_curls point = {{0.7f, 0.0f, 1.0f, 1.0f, 1.0f}, 0.0f};
    const struct hd_curls thumbs_up = {{0.0f, 1.0f, 1.0f, 1.0f, 1.0f}, 0.0f};
    bool fist_seen[HD_HAND_COUNT] = {false, false}, point_seen = false;
    float steepest = 0.0f;
    for (int i = 0; i < demo.frame_count; ++i) {
        for (int h = 0; h < HD_HAND_COUNT; ++h) {
            assert_true(demo.fingers[i].valid[h]);
            fist_seen[h] |= fingers_from_curls_deg(&demo.fingers[i], (enum hd_hand)h, &fist) < 1.0f;
            if (i == 0)
                continue;
            for (int f = 0; f < HD_FINGER_COUNT; ++f)
                for (int a = 0; a < ST_FINGER_ANGLES; ++a)
                    steepest = fmaxf(steepest, fabsf(demo.fingers[i].angle_deg[h][f][a] -
                                                     demo.fingers[i - 1].angle_deg[h][f][a]));
        }
        point_seen |= fingers_from_curls_deg(&demo.fingers[i], HD_RIGHT, &point) < 1.0f;
    }
    print_message("demo: largest change of a finger angle from one row to the next %.2f deg\n",
                  (double)steepest);
    assert_true(fist_seen[HD_LEFT] && fist_seen[HD_RIGHT]);
    assert_true(point_seen);
    assert_true(fingers_from_curls_deg(&demo.fingers[demo.frame_count - 1], HD_RIGHT,
                                       &thumbs_up) < 1.0f);
    assert_true(steepest <= 15.0f);
    st_stream_fini(&demo);
}

/* The headset's heading about +Y in degrees (0: looking along +Z, at the mirror camera). */
static double
heading_deg(const float *q)
{
    const float forward[3] = {0.0f, 0.0f, -1.0f};
    float v[3];
    m_quat_rotate(q, forward, v);
    return (double)(atan2f(v[0], v[2]) * M_RAD_TO_DEG);
}

/* What `.ci/setup.sh run` shows (the demo's first 600 frames, then a screenshot): a walk
 * with a turn, a reach above the head, a crouch, and a last frame standing still at full
 * height facing the mirror (the last frame once was the bottom of a squat). */
static void
the_demo_walks_turns_reaches_crouches_and_ends_standing(void **state)
{
    (void)state;
    struct st_stream demo;
    struct em_error err = {{0}};
    if (st_stream_load(EMBODY_SOURCE_DIR "/config/demo/demo.csv", &demo, &err) != EM_OK)
        fail_msg("%s", err.message);
    const int n = demo.frame_count < 600 ? demo.frame_count : 600;
    assert_true(n >= 600);
    double walked = 0.0, low = 1e9, high = -1e9, min_turn = 1e9, max_turn = -1e9, turn = 0.0;
    double previous = 0.0;
    bool reached = false;
    for (int i = 0; i < n; ++i) {
        const struct em_tracking_frame *f = &demo.frames[i];
        const float *head = f->device[EM_DEVICE_HEAD].pose.position_m;
        const double heading = heading_deg(f->device[EM_DEVICE_HEAD].pose.orientation);
        if (i > 0) {
            const float *before = demo.frames[i - 1].device[EM_DEVICE_HEAD].pose.position_m;
            walked += hypot((double)(head[0] - before[0]), (double)(head[2] - before[2]));
            double step = heading - previous; /* unwrapped */
            step -= 360.0 * floor((step + 180.0) / 360.0);
            turn += step;
        }
        previous = heading;
        min_turn = fmin(min_turn, turn), max_turn = fmax(max_turn, turn);
        low = fmin(low, (double)head[1]);
        high = fmax(high, (double)head[1]);
        for (int h = EM_DEVICE_LEFT_HAND; h <= EM_DEVICE_RIGHT_HAND; ++h)
            reached = reached || f->device[h].pose.position_m[1] > head[1] + 0.2f;
    }
    if (!(walked > 2.0))
        fail_msg("the head travels %.2f m: no walk", walked);
    if (!(max_turn - min_turn > 120.0))
        fail_msg("the heading spans %.0f degrees: no turn", max_turn - min_turn);
    assert_true(reached);
    if (!(low < 0.6 * high))
        fail_msg("the head goes down to %.2f m of %.2f m: no crouch", low, high);
    /* The last frame: standing, still over the last half second, facing the mirror. */
    const struct em_tracking_frame *last = &demo.frames[n - 1];
    const float *head = last->device[EM_DEVICE_HEAD].pose.position_m;
    if (!((double)head[1] > high - 0.12))
        fail_msg("the last frame's head is at %.2f m, the demo's highest %.2f m: not standing",
                 (double)head[1], high);
    for (int i = n - 30; i < n; ++i)
        assert_true(fabsf(demo.frames[i].device[EM_DEVICE_HEAD].pose.position_m[1] - head[1]) <
                    0.03f);
    const double facing = heading_deg(last->device[EM_DEVICE_HEAD].pose.orientation);
    if (!(fabs(facing) < 20.0))
        fail_msg("the last frame faces %.0f degrees away from the mirror", facing);
    st_stream_fini(&demo);
}

static void
a_60_fps_clip_keeps_every_frame(void **state)
{
    (void)state;
    char *text = test_read_file(EMBODY_SOURCE_DIR "/tests/data/mocap/cmu_127_17.bvh");
    char *ft = strstr(text, "Frame Time: 0.0083333");
    assert_non_null(ft);
    memcpy(ft, "Frame Time: 0.0166667", 21);
    struct st_bvh bvh;
    struct st_stream s;
    struct em_error err = {{0}};
    assert_int_equal(st_bvh_parse(text, "60fps.bvh", &bvh, &err), EM_OK);
    assert_int_equal(st_mocap_to_stream(&bvh, CMU_SCALE, "60fps.bvh", &s, &err), EM_OK);
    assert_int_equal(s.frame_count, bvh.frame_count);
    assert_true(s.frames[10].time_s == 10 * 0.0166667);
    st_stream_fini(&s);
    st_bvh_fini(&bvh);
    free(text);
}

static void
a_clip_without_the_tracked_joints_is_refused_naming_them(void **state)
{
    (void)state;
    char *text = test_read_file(EMBODY_SOURCE_DIR "/tests/data/mocap/cmu_127_17.bvh");
    memcpy(strstr(text, "JOINT LeftFingerBase\n"), "JOINT LeftFingerBasX\n", 21);
    struct st_bvh bvh;
    struct st_stream s;
    struct em_error err = {{0}};
    assert_int_equal(st_bvh_parse(text, "renamed.bvh", &bvh, &err), EM_OK);
    assert_int_equal(st_mocap_to_stream(&bvh, CMU_SCALE, "renamed.bvh", &s, &err),
                     EM_ERROR_PARSE);
    test_expect_message(err.message, "renamed.bvh", "no joint named \"LeftFingerBase\"",
                        (const char *)NULL);
    assert_null(s.frames);
    assert_int_equal(st_mocap_to_stream(&bvh, -1.0, "renamed.bvh", &s, &err),
                     EM_ERROR_INVALID_ARGUMENT);
    st_bvh_fini(&bvh);
    free(text);
}

/* One clip of each other skeleton (tests/data/mocap-extra), and a CMU clip as the
 * reference they must agree with. */
static const struct {
    const char *path;
    enum sk_name_map map;
    double unit;
    const char *thumb[2]; /* a point on each thumb, toward its tip */
} k_rigs[] = {
    {EMBODY_SOURCE_DIR "/tests/data/mocap/cmu_127_17.bvh", SK_NAMES_CMU, CMU_SCALE,
     {"LThumb_End", "RThumb_End"}},
    {EMBODY_SOURCE_DIR "/tests/data/mocap-extra/cmu_08_07.bvh", SK_NAMES_DAZ, 0.01,
     {"lThumb2_End", "rThumb2_End"}},
    {EMBODY_SOURCE_DIR "/tests/data/mocap-extra/cmu_06_02.bvh", SK_NAMES_CC3, 0.01,
     {"CC_Base_L_Thumb3_End", "CC_Base_R_Thumb3_End"}},
    {EMBODY_SOURCE_DIR "/tests/data/mocap-extra/cmu_131_03.bvh", SK_NAMES_MAX, CMU_SCALE,
     {"LThumb_End", "RThumb_End"}},
};
#define RIG_COUNT ((int)(sizeof k_rigs / sizeof k_rigs[0]))

static double
bone_length(const struct sk_skeleton *sk, enum sk_bone bone)
{
    const int j = sk->bone_joint[bone];
    assert_true(j >= 0);
    return (double)sk->length_m[j];
}

static void
clips_on_other_skeletons_read_with_a_persons_size_and_proportions(void **state)
{
    (void)state;
    for (int c = 0; c < RIG_COUNT; ++c) {
        struct st_bvh bvh;
        struct em_error err = {{0}};
        if (st_bvh_load(k_rigs[c].path, &bvh, &err) != EM_OK)
            fail_msg("%s", err.message);
        const double unit = st_bvh_guess_unit_scale(&bvh);
        assert_near(unit, k_rigs[c].unit, 1e-9);
        struct st_mocap_rig rig;
        if (st_mocap_rig_init(&bvh, k_rigs[c].path, &rig, &err) != EM_OK)
            fail_msg("%s", err.message);
        assert_int_equal(rig.map, k_rigs[c].map);
        struct sk_skeleton sk;
        if (st_bvh_to_humanoid(&bvh, rig.map, unit, k_rigs[c].path, &sk, &err) != EM_OK)
            fail_msg("%s", err.message);
        /* A grown person; thigh and shin about 0.49 of the height, upper arm and forearm
         * about 0.33 (Drillis and Contini's segment table), each side alike. The CC3
         * character the iClone files were retargeted to is the tall one (1.98 m) and
         * short in the arm (0.26); the Daz figure 1.58 m, CMU subject 131 1.49 m. A wrong
         * unit, a leg read upside down or a missing segment falls far outside. */
        const double height = (double)sk_humanoid_height(&sk);
        assert_in_range((long)(100.0 * height), 140, 200);
        for (int s = 0; s < 2; ++s) {
            const double leg = bone_length(&sk, s ? SK_RIGHT_LOWER_LEG : SK_LEFT_LOWER_LEG) +
                               bone_length(&sk, s ? SK_RIGHT_FOOT : SK_LEFT_FOOT);
            const double arm = bone_length(&sk, s ? SK_RIGHT_LOWER_ARM : SK_LEFT_LOWER_ARM) +
                               bone_length(&sk, s ? SK_RIGHT_HAND : SK_LEFT_HAND);
            if (!(leg / height > 0.42 && leg / height < 0.56 && arm / height > 0.25 &&
                  arm / height < 0.40))
                fail_msg("%s: legs %.3f and arms %.3f of the height %.2f m", k_rigs[c].path,
                         leg / height, arm / height, height);
        }
        sk_skeleton_fini(&sk);
        st_bvh_fini(&bvh);
    }
}

static void
vec_between(const double (*pos)[3], int from, int to, double unit, float *out)
{
    for (int k = 0; k < 3; ++k)
        out[k] = (float)((pos[to][k] - pos[from][k]) * unit);
}

static double
unit_dot(const float *a, const float *b)
{
    const float la = m_vec3_length(a), lb = m_vec3_length(b);
    return la > 1e-6f && lb > 1e-6f ? (double)(m_vec3_dot(a, b) / (la * lb)) : 0.0;
}

static void
streams_of_other_skeletons_follow_their_heads_and_hands(void **state)
{
    (void)state;
    for (int c = 0; c < RIG_COUNT; ++c) {
        struct st_bvh bvh;
        struct em_error err = {{0}};
        if (st_bvh_load(k_rigs[c].path, &bvh, &err) != EM_OK)
            fail_msg("%s", err.message);
        struct st_mocap_rig rig;
        struct st_stream s;
        if (st_mocap_rig_init(&bvh, k_rigs[c].path, &rig, &err) != EM_OK ||
            st_mocap_to_stream(&bvh, k_rigs[c].unit, k_rigs[c].path, &s, &err) != EM_OK)
            fail_msg("%s", err.message);
        const int thumb[2] = {st_bvh_find(&bvh, k_rigs[c].thumb[0]),
                              st_bvh_find(&bvh, k_rigs[c].thumb[1])};
        assert_true(thumb[0] >= 0 && thumb[1] >= 0);
        double(*pos)[3] = malloc((size_t)bvh.joint_count * sizeof *pos);
        double(*rot)[4] = malloc((size_t)bvh.joint_count * sizeof *rot);
        const int step = (int)lround(1.0 / (bvh.frame_time_s * 60.0));
        double head_up = 0.0, head_facing = 0.0, grip_thumb = 0.0, grip_fingers = 0.0;
        for (int r = 0; r < s.frame_count; ++r) {
            st_bvh_frame_pose(&bvh, r * step, pos, rot);
            const struct em_tracking_frame *f = &s.frames[r];
            const double u = k_rigs[c].unit;
            /* Positions: the headset at the eyes, a few cm from the skull base; each
             * controller between wrist and knuckles. */
            float d[3];
            const float *head = f->device[EM_DEVICE_HEAD].pose.position_m;
            for (int k = 0; k < 3; ++k)
                d[k] = head[k] - (float)(pos[rig.joint[SK_HEAD]][k] * u);
            assert_true(m_vec3_length(d) < 0.16f);
            for (int h = 0; h < 2; ++h) {
                const int wrist = rig.joint[h ? SK_RIGHT_HAND : SK_LEFT_HAND];
                const float *grip =
                    f->device[h ? EM_DEVICE_RIGHT_HAND : EM_DEVICE_LEFT_HAND].pose.position_m;
                for (int k = 0; k < 3; ++k)
                    d[k] = grip[k] - (float)(pos[wrist][k] * u);
                assert_true(m_vec3_length(d) < 0.10f);
            }
            /* Axes: the headset looks where the body faces (left hip to right hip,
             * crossed with up) and stands upright; each grip's -Z points along the thumb
             * and its +Y back from the fingers (the protocol's grip frame). */
            const float up[3] = {0, 1, 0}, view[3] = {0, 0, -1}, ey[3] = {0, 1, 0};
            float head_fwd[3], head_top[3], hips_left[3], body_fwd[3];
            m_quat_rotate(f->device[EM_DEVICE_HEAD].pose.orientation, view, head_fwd);
            m_quat_rotate(f->device[EM_DEVICE_HEAD].pose.orientation, ey, head_top);
            vec_between((const double(*)[3])pos, rig.joint[SK_RIGHT_UPPER_LEG],
                        rig.joint[SK_LEFT_UPPER_LEG], 1.0, hips_left);
            m_vec3_cross(hips_left, up, body_fwd);
            head_fwd[1] = 0.0f;
            head_up += unit_dot(head_top, up) / (double)s.frame_count;
            head_facing += unit_dot(head_fwd, body_fwd) / (double)s.frame_count;
            for (int h = 0; h < 2; ++h) {
                const float *q = f->device[h ? EM_DEVICE_RIGHT_HAND : EM_DEVICE_LEFT_HAND]
                                     .pose.orientation;
                const int wrist = rig.joint[h ? SK_RIGHT_HAND : SK_LEFT_HAND];
                const int knuckles = rig.joint[h ? SK_RIGHT_HAND_END : SK_LEFT_HAND_END];
                float fingers[3], to_thumb[3], grip_fwd[3], grip_y[3];
                vec_between((const double(*)[3])pos, wrist, knuckles, 1.0, fingers);
                vec_between((const double(*)[3])pos, wrist, thumb[h], 1.0, to_thumb);
                const float along = m_vec3_dot(to_thumb, fingers) / m_vec3_dot(fingers, fingers);
                for (int k = 0; k < 3; ++k)
                    to_thumb[k] -= along * fingers[k];
                m_quat_rotate(q, view, grip_fwd);
                m_quat_rotate(q, ey, grip_y);
                grip_thumb += unit_dot(grip_fwd, to_thumb) / (2.0 * (double)s.frame_count);
                grip_fingers += unit_dot(grip_y, fingers) / (2.0 * (double)s.frame_count);
            }
        }
        if (!(head_up > 0.85 && head_facing > 0.7 && grip_thumb > 0.6 && grip_fingers < -0.6))
            fail_msg("%s: head up %.2f, head facing %.2f, grip along the thumb %.2f, grip Y "
                     "along the fingers %.2f (means of cosines)",
                     k_rigs[c].path, head_up, head_facing, grip_thumb, grip_fingers);
        free(pos);
        free(rot);
        st_stream_fini(&s);
        st_bvh_fini(&bvh);
    }
}

const struct CMUnitTest *
mocap_tests(size_t *out_count)
{
    static const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_reference_stream_is_reproduced_from_its_clip),
        cmocka_unit_test(the_demo_stream_is_what_make_demo_makes),
        cmocka_unit_test(the_demo_walks_turns_reaches_crouches_and_ends_standing),
        cmocka_unit_test(the_demo_grips_points_and_ends_with_a_thumbs_up),
        cmocka_unit_test(a_60_fps_clip_keeps_every_frame),
        cmocka_unit_test(a_clip_without_the_tracked_joints_is_refused_naming_them),
        cmocka_unit_test(clips_on_other_skeletons_read_with_a_persons_size_and_proportions),
        cmocka_unit_test(streams_of_other_skeletons_follow_their_heads_and_hands),
    };
    *out_count = sizeof tests / sizeof tests[0];
    return tests;
}
