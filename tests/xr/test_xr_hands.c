/*
 * Fingers and hands through the real Khronos loader and the test runtime: hand tracking
 * (XR_EXT_hand_tracking) in the hand model's poses, the controllers' finger inputs, the
 * handovers between them, the wrist from hand tracking while the controller is put down,
 * and absurd joints refused one by one. Headless at 60 Hz: the frames' times are the
 * clock's, so every bound on a change per frame is scaled by the frame's own step.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "embody/m_math.h"
#include "embody/stream.h"
#include "hand_poses.h"
#include "xr/oxr_common.h"
#include "xr/xr.h"
#include "xr_test_util.h"

#define MAX_CALLS 4000
#define N 120

static struct in_source *g_src;
static float g_cost_us[N][2]; /* each frame's cost of both hands' fingers and wrists */
static int g_right_still_until; /* frames before this hold the right controller still */

static int
destroy_leftover_source(void **state)
{
    (void)state;
    in_source_destroy(&g_src);
    return 0;
}

/* Frames where each hand moves smoothly: a 10 cm circle at 0.5 Hz, turning slowly. */
static void
smooth_frames(struct em_tracking_frame *frames, int count)
{
    for (int k = 0; k < count; ++k) {
        struct em_tracking_frame *f = &frames[k];
        memset(f, 0, sizeof *f);
        f->time_s = (double)k / 60.0;
        const float a = (float)k / 60.0f * 2.0f * M_PI_F * 0.5f;
        m_vec3_set(f->device[EM_DEVICE_HEAD].pose.position_m, 0.0f, 1.6f, 0.0f);
        m_quat_identity(f->device[EM_DEVICE_HEAD].pose.orientation);
        for (int h = 0; h < 2; ++h) {
            struct em_pose *p = &f->device[EM_DEVICE_LEFT_HAND + h].pose;
            m_vec3_set(p->position_m, (h ? 0.3f : -0.3f) + 0.1f * cosf(a), 1.1f + 0.1f * sinf(a),
                       -0.3f);
            const float axis[3] = {0.0f, 1.0f, 0.0f};
            m_quat_from_axis_angle(axis, 0.3f * sinf(a), p->orientation);
        }
        if (k < g_right_still_until) { /* a controller lying on a table */
            m_vec3_set(f->device[EM_DEVICE_RIGHT_HAND].pose.position_m, 0.3f, 0.9f, -0.4f);
            m_quat_identity(f->device[EM_DEVICE_RIGHT_HAND].pose.orientation);
        }
        for (int d = 0; d < EM_DEVICE_COUNT; ++d)
            f->device[d].flags = EM_POSE_ALL_VALID;
    }
}

/* Opens the headless source on `text` with smooth frames and pulls `count` frames with
 * their fingers. */
static void
run(const char *name, const char *text, struct em_tracking_frame *rows,
    struct em_tracking_frame *got, struct st_fingers *fingers, int count)
{
    smooth_frames(rows, count);
    char script[1024];
    xt_write_script(name, rows, count, text, script, sizeof script);
    xt_use_runtime(script);
    const struct oxr_desc desc = {.headless = true, .headless_rate_hz = 60.0f};
    struct em_error err = {{0}};
    if (oxr_source_create(&desc, &g_src, &err) != EM_OK)
        fail_msg("oxr_source_create: %s", err.message);
    int n = 0;
    for (int calls = 0; n < count && calls < MAX_CALLS; ++calls) {
        const enum em_result r = in_source_next(g_src, &got[n]);
        if (r == EM_NOT_READY)
            continue;
        assert_int_equal(r, EM_OK);
        assert_true(in_source_fingers(g_src, &fingers[n]));
        struct oxr_status status;
        oxr_source_get_status(g_src, &status);
        if (n < N)
            for (int h = 0; h < 2; ++h)
                g_cost_us[n][h] = status.hand[h].update_us;
        assert_int_equal(in_source_submit(g_src), EM_OK);
        n++;
    }
    assert_int_equal(n, count);
}

static struct hd_model
default_model(int h)
{
    struct hd_model m;
    const struct hd_model_desc desc = {.hand = h ? HD_RIGHT : HD_LEFT};
    assert_int_equal(hd_model_init(&desc, &m, NULL), EM_OK);
    return m;
}

/* The largest difference of any angle of the two poses, degrees. */
static float
worst_deg(const struct hd_pose *a, const struct hd_pose *b)
{
    float worst = 0.0f;
    for (int f = 0; f < HD_FINGER_COUNT; ++f) {
        for (int j = 0; j < HD_FINGER_JOINTS; ++j)
            worst = fmaxf(worst, fabsf(a->flex_rad[f][j] - b->flex_rad[f][j]));
        worst = fmaxf(worst, fabsf(a->abduct_rad[f] - b->abduct_rad[f]));
    }
    return worst * M_RAD_TO_DEG;
}

static struct hd_pose
pose_of(const struct st_fingers *fingers, int h)
{
    struct hd_pose p;
    st_fingers_get_pose(fingers, (enum hd_hand)h, &p);
    return p;
}

/* How far the fingers may be from a pose made on the same hand: the conversion's own
 * worst on exact joints is 1.9 degrees (the fist, docs/hands.md), with a margin for
 * rounding through the runtime's poses in a moving room. */
#define POSE_TOLERANCE_DEG 3.0f

static void
each_scripted_pose_reaches_the_fingers(void **state)
{
    (void)state;
    static struct em_tracking_frame rows[N], got[N];
    static struct st_fingers fingers[N];
    run("hand_poses", "at 0 hand left point\nat 0 hand right open\n"
                      "at 20 hand left pinch\nat 20 hand right fist\n"
                      "at 40 hand left fist\nat 40 hand right thumbs_up\n"
                      "at 60 hand left open\nat 60 hand right point\n"
                      "at 80 hand left thumbs_up\nat 80 hand right pinch\n",
        rows, got, fingers, N);
    static const int left[5] = {POSE_POINT, POSE_PINCH, POSE_FIST, POSE_OPEN, POSE_THUMBS_UP};
    static const int right[5] = {POSE_OPEN, POSE_FIST, POSE_THUMBS_UP, POSE_POINT, POSE_PINCH};
    for (int h = 0; h < 2; ++h) {
        const struct hd_model model = default_model(h);
        for (int s = 0; s < 5; ++s) {
            const int pose_id = h ? right[s] : left[s];
            struct hd_pose want;
            test_pose_make(&model, pose_id, &want);
            float worst = 0.0f;
            /* The blend from the pose before takes HD_HANDOVER_S (12 frames); the last 5
             * frames of each 20 are past it. */
            for (int k = s * 20 + 15; k < s * 20 + 20; ++k) {
                assert_true(fingers[k].valid[h]);
                const struct hd_pose got_pose = pose_of(&fingers[k], h);
                worst = fmaxf(worst, worst_deg(&got_pose, &want));
            }
            print_message("%s hand, %-9s: worst angle %.3f deg from the scripted pose\n",
                          h ? "right" : "left", test_pose_name(pose_id), (double)worst);
            if (!(worst < POSE_TOLERANCE_DEG))
                fail_msg("%s %s: %.2f deg", h ? "right" : "left", test_pose_name(pose_id),
                         (double)worst);
        }
    }
    /* What the two tracked hands cost per frame (the runtime's own call not counted). */
    float costs[N];
    for (int k = 0; k < N; ++k)
        costs[k] = g_cost_us[k][0] + g_cost_us[k][1];
    for (int i = 1; i < N; ++i)
        for (int j = i; j > 0 && costs[j - 1] > costs[j]; --j) {
            const float t = costs[j];
            costs[j] = costs[j - 1];
            costs[j - 1] = t;
        }
    print_message("both tracked hands: median %.1f us, 99th percentile %.1f us per frame\n",
                  (double)costs[N / 2], (double)costs[N * 99 / 100]);
    struct oxr_status status;
    oxr_source_get_status(g_src, &status);
    assert_true(status.hand_tracking);
    assert_string_equal(status.hand[1].finger_source, "hand tracking");
    xt_assert_no_violations();
    in_source_destroy(&g_src);
}

/* The curls the controller's inputs make, as the program gives them. */
static void
controller_values_make_the_curls(void **state)
{
    (void)state;
    static struct em_tracking_frame rows[N], got[N];
    static struct st_fingers fingers[N];
    /* Touch: 0-29 point (trigger off and untouched, grip closed, thumb on the stick);
     * 30-59 fist (trigger pulled); 60-89 thumbs-up (thumb lifted). */
    run("hand_curls",
        "profile /interaction_profiles/oculus/touch_controller\n"
        "at 0 value /user/hand/right/input/squeeze/value 1\n"
        "at 0 press /user/hand/right/input/thumbstick/touch\n"
        "at 30 value /user/hand/right/input/trigger/value 1\n"
        "at 30 press /user/hand/right/input/trigger/touch\n"
        "at 60 release /user/hand/right/input/thumbstick/touch\n",
        rows, got, fingers, N);
    const struct hd_model model = default_model(1);
    const struct hd_profile *touch = hd_profile_find("/interaction_profiles/oculus/touch_controller");
    assert_non_null(touch);
    const struct hd_controller_input inputs[3] = {
        {.squeeze = 1.0f, .thumbstick_touch = true},
        {.trigger = 1.0f, .trigger_touch = true, .squeeze = 1.0f, .thumbstick_touch = true},
        {.trigger = 1.0f, .trigger_touch = true, .squeeze = 1.0f},
    };
    static const char *const names[3] = {"point", "fist", "thumbs-up"};
    for (int s = 0; s < 3; ++s) {
        struct hd_curls curls;
        hd_curls_from_controller(touch, &inputs[s], &curls);
        struct hd_pose want;
        hd_pose_from_curls(&model, &curls, &want);
        for (int k = s * 30 + 20; k < s * 30 + 30; ++k) {
            assert_true(fingers[k].valid[1]);
            const struct hd_pose p = pose_of(&fingers[k], 1);
            const float worst = worst_deg(&p, &want);
            if (!(worst < 0.01f))
                fail_msg("%s, frame %d: %.3f deg from the controller's curls", names[s], k,
                         (double)worst);
            struct hd_curls c;
            hd_curls_from_pose(&model, &p, &c);
            if (s == 0)
                assert_true(c.curl[HD_INDEX] < 0.1f && c.curl[HD_MIDDLE] > 0.9f);
            if (s == 1)
                assert_true(c.curl[HD_INDEX] > 0.9f && c.curl[HD_LITTLE] > 0.9f &&
                            c.curl[HD_THUMB] > 0.3f);
            if (s == 2)
                assert_true(c.curl[HD_THUMB] < 0.1f && c.curl[HD_INDEX] > 0.9f);
        }
    }
    struct oxr_status status;
    oxr_source_get_status(g_src, &status);
    assert_string_equal(status.hand[1].finger_source, "controller");
    /* The left hand's inputs are bound but nothing is pressed: a touch controller with
     * its sensors untouched is an open hand. */
    assert_true(fingers[N - 1].valid[0]);
    xt_assert_no_violations();
    in_source_destroy(&g_src);
}

/* Touch Pro: with the trigger untouched, the index hovers as far as the trigger's curl
 * sensor says (the runtime's 1 flat on the trigger, 0 pointed away): 0-29 at 0.5, between
 * straight and its curl on the trigger; 30-59 at 0, straight. */
static void
the_touch_pro_curl_sensor_bends_the_index_off_the_trigger(void **state)
{
    (void)state;
    static struct em_tracking_frame rows[N], got[N];
    static struct st_fingers fingers[N];
    run("hand_touch_pro_curl",
        "profile /interaction_profiles/meta/touch_pro_controller\n"
        "at 0 value /user/hand/right/input/trigger/curl_fb 0.5\n"
        "at 30 value /user/hand/right/input/trigger/curl_fb 0\n",
        rows, got, fingers, N);
    const struct hd_model model = default_model(1);
    const struct hd_profile *pro =
        hd_profile_find("/interaction_profiles/meta/touch_pro_controller");
    assert_non_null(pro);
    assert_true(pro->inputs & HD_IN_TRIGGER_CURL);
    struct hd_curls on_trigger;
    hd_curls_from_controller(pro, &(struct hd_controller_input){.trigger_touch = true},
                             &on_trigger);
    assert_true(on_trigger.curl[HD_INDEX] > 0.1f);
    const struct hd_controller_input inputs[2] = {{.trigger_curl = 0.5f}, {.trigger_curl = 1.0f}};
    for (int s = 0; s < 2; ++s) {
        struct hd_curls curls;
        hd_curls_from_controller(pro, &inputs[s], &curls);
        struct hd_pose want;
        hd_pose_from_curls(&model, &curls, &want);
        for (int k = s * 30 + 20; k < s * 30 + 30; ++k) {
            assert_true(fingers[k].valid[1]);
            const struct hd_pose p = pose_of(&fingers[k], 1);
            const float worst = worst_deg(&p, &want);
            if (!(worst < 0.01f))
                fail_msg("curl %d, frame %d: %.3f deg from the controller's curls", s, k,
                         (double)worst);
            struct hd_curls c;
            hd_curls_from_pose(&model, &p, &c);
            const float index = c.curl[HD_INDEX];
            if (s == 0 && !(index > 0.05f && index < on_trigger.curl[HD_INDEX] - 0.05f))
                fail_msg("frame %d: index curl %.3f, not between 0 and %.3f", k, (double)index,
                         (double)on_trigger.curl[HD_INDEX]);
            if (s == 1 && !(index < 0.05f))
                fail_msg("frame %d: index curl %.3f, not straight", k, (double)index);
        }
    }
    struct oxr_status status;
    oxr_source_get_status(g_src, &status);
    assert_string_equal(status.hand[1].finger_source, "controller");
    xt_assert_no_violations();
    in_source_destroy(&g_src);
}

/* The largest per-frame change of any angle over frames [from, to), against what a
 * blend over HD_HANDOVER_S from the pose at `from - 1` to the one at `to - 1` allows in
 * each frame's step (with 20 % and 0.05 degrees for rounding). */
static float
check_smooth(const struct em_tracking_frame *got, const struct st_fingers *fingers, int h,
             int from, int to)
{
    const struct hd_pose a = pose_of(&fingers[from - 1], h);
    const struct hd_pose b = pose_of(&fingers[to - 1], h);
    const float total = worst_deg(&a, &b);
    float largest = 0.0f;
    for (int k = from; k < to; ++k) {
        const struct hd_pose p0 = pose_of(&fingers[k - 1], h);
        const struct hd_pose p1 = pose_of(&fingers[k], h);
        const float step = worst_deg(&p0, &p1);
        const double dt = got[k].time_s - got[k - 1].time_s;
        const float allowed = total * (float)(dt / (double)HD_HANDOVER_S) * 1.2f + 0.05f;
        if (step > allowed)
            fail_msg("frame %d: the fingers moved %.2f deg in %.1f ms (a blend of %.1f deg "
                     "allows %.2f)",
                     k, (double)step, dt * 1e3, (double)total, (double)allowed);
        largest = fmaxf(largest, step);
    }
    return largest;
}

static void
losing_hand_tracking_falls_back_without_a_jump(void **state)
{
    (void)state;
    static struct em_tracking_frame rows[N], got[N];
    static struct st_fingers fingers[N];
    /* A fist tracked, then lost at 30: the controller's open hand (Touch, nothing
     * touched); at 70 the controller is put down too: the relaxed hand. */
    run("hand_loss",
        "profile /interaction_profiles/oculus/touch_controller\n"
        "at 0 hand right fist\nat 30 hand right none\nat 70 controller right off\n",
        rows, got, fingers, N);
    const float to_controller = check_smooth(got, fingers, 1, 30, 60);
    const float to_relaxed = check_smooth(got, fingers, 1, 70, 100);
    print_message("fist -> controller: largest step %.2f deg per frame; controller -> relaxed: "
                  "%.2f deg\n",
                  (double)to_controller, (double)to_relaxed);
    assert_true(fingers[59].valid[1]);
    assert_false(fingers[N - 1].valid[1]); /* nobody drives it: the relaxed hand */
    const struct hd_model model = default_model(1);
    struct hd_pose relaxed;
    hd_pose_relaxed(&model, &relaxed);
    const struct hd_pose last = pose_of(&fingers[N - 1], 1);
    assert_true(worst_deg(&last, &relaxed) < 0.01f);
    /* The hand leaving view, with its controller down, is a lost device. */
    assert_int_equal(got[N - 1].device[EM_DEVICE_RIGHT_HAND].flags, 0);
    xt_assert_no_violations();
    in_source_destroy(&g_src);
}

static float
distance_mm(const float *a, const float *b)
{
    return m_vec3_distance(a, b) * 1000.0f;
}

static void
the_tracked_wrist_drives_the_hand_while_the_controller_is_down(void **state)
{
    (void)state;
    static struct em_tracking_frame rows[N], got[N];
    static struct st_fingers fingers[N];
    /* Hand tracked throughout; the controller put down 10 to 59, back at 60; the hand
     * leaves view 90 to 99 with the controller down again from 85. */
    run("hand_wrist",
        "profile /interaction_profiles/oculus/touch_controller\n"
        "at 0 hand right open\nat 10 controller right off\nat 60 controller right on\n"
        "at 85 controller right off\nat 90 hand right none\nat 100 hand right open\n",
        rows, got, fingers, N);
    const int R = EM_DEVICE_RIGHT_HAND;
    /* While down: the hand where the tracked hand is (the runtime's wrist is 5.4 mm from
     * the program's idea of the grip). */
    float apart_max = 0.0f, turn_max = 0.0f;
    for (int k = 25; k < 60; ++k) {
        assert_true(em_device_pose_usable(&got[k].device[R]));
        apart_max = fmaxf(apart_max, distance_mm(got[k].device[R].pose.position_m,
                                                 rows[k].device[R].pose.position_m));
        float d[4];
        m_quat_mul_conj_first(rows[k].device[R].pose.orientation,
                              got[k].device[R].pose.orientation, d);
        turn_max = fmaxf(turn_max, m_quat_angle(d) * M_RAD_TO_DEG);
    }
    print_message("hand-tracked grip within %.2f mm and %.3f deg of the controller's\n",
                  (double)apart_max, (double)turn_max);
    assert_true(apart_max < 10.0f);
    assert_true(turn_max < 0.5f); /* the grip's axes from the wrist's, as the runtime's */
    /* The handovers: each frame's step beyond what the controller itself moved. */
    float jump = 0.0f;
    for (int k = 5; k < 85; ++k) {
        float moved[3], rowmoved[3], extra[3];
        m_vec3_sub(got[k].device[R].pose.position_m, got[k - 1].device[R].pose.position_m, moved);
        m_vec3_sub(rows[k].device[R].pose.position_m, rows[k - 1].device[R].pose.position_m,
                   rowmoved);
        m_vec3_sub(moved, rowmoved, extra);
        jump = fmaxf(jump, m_vec3_length(extra) * 1000.0f);
    }
    const float at_return =
        distance_mm(got[59].device[R].pose.position_m, rows[59].device[R].pose.position_m);
    print_message("wrist handover: %.2f mm between the sources, largest step beyond the "
                  "motion %.2f mm per frame\n",
                  (double)at_return, (double)jump);
    assert_true(jump < at_return * 0.5f + 0.2f); /* faded, not one step */
    /* Back on the controller once the handover is over. */
    for (int k = 75; k < 85; ++k)
        assert_true(distance_mm(got[k].device[R].pose.position_m,
                                rows[k].device[R].pose.position_m) < 0.01f);
    /* Out of view with the controller down: lost (no flags), the pose kept. */
    for (int k = 92; k < 100; ++k) {
        assert_int_equal(got[k].device[R].flags, 0);
        assert_memory_equal(got[k].device[R].pose.position_m, got[91].device[R].pose.position_m,
                            sizeof(float[3]));
    }
    /* Back in view: tracked again. */
    assert_true(em_device_pose_usable(&got[N - 1].device[R]));
    xt_assert_no_violations();
    in_source_destroy(&g_src);
}

/* A controller put down on a table while its actions stay active (runtimes that keep
 * reporting it): once it has lain still for a second with the tracked hand elsewhere, the
 * tracked hand drives the wrist, with the handover faded; picked up (it moves), the
 * controller drives it again. */
static void
a_controller_lying_still_away_from_the_tracked_hand_is_idle(void **state)
{
    (void)state;
    static struct em_tracking_frame rows[N], got[N];
    static struct st_fingers fingers[N];
    g_right_still_until = 100;
    run("hand_idle", "at 0 hand right open\nat 0 hand_at right 0.2,1.2,-0.3\n"
                     "at 100 hand_at right controller\n",
        rows, got, fingers, N);
    g_right_still_until = 0;
    const int R = EM_DEVICE_RIGHT_HAND;
    const float table[3] = {0.3f, 0.9f, -0.4f}, held[3] = {0.2f, 1.2f, -0.3f};
    int switched = -1;
    for (int k = 0; k < 100 && switched < 0; ++k)
        if (distance_mm(got[k].device[R].pose.position_m, table) > 1.0f)
            switched = k;
    print_message("the controller lying still became idle after %.2f s\n",
                  switched >= 0 ? got[switched].time_s - got[0].time_s : -1.0);
    /* Idle after the second of stillness (counted from the first frame it was seen). */
    assert_true(switched > 0);
    assert_true(got[switched].time_s - got[0].time_s > 0.95);
    /* The handover over 0.33 m: faded (each frame within its share of the distance). */
    const float apart_mm = distance_mm(table, held);
    for (int k = switched; k < switched + 20 && k < 100; ++k) {
        const float step = distance_mm(got[k].device[R].pose.position_m,
                                       got[k - 1].device[R].pose.position_m);
        const double dt = got[k].time_s - got[k - 1].time_s;
        assert_true(step <= apart_mm * (float)(dt / (double)HD_HANDOVER_S) * 1.2f + 0.5f);
    }
    for (int k = switched + 20; k < 100; ++k)
        assert_true(distance_mm(got[k].device[R].pose.position_m, held) < 10.0f);
    /* The controller picked up (moving from frame 100): it drives the hand again. */
    assert_true(distance_mm(got[N - 1].device[R].pose.position_m,
                            rows[N - 1].device[R].pose.position_m) < 0.01f);
    struct oxr_status status;
    oxr_source_get_status(g_src, &status);
    assert_false(status.hand[1].controller_idle);
    assert_string_equal(status.hand[1].wrist_source, "controller");
    xt_assert_no_violations();
    in_source_destroy(&g_src);
}

static void
absurd_joints_are_refused_one_by_one(void **state)
{
    (void)state;
    enum { M = 50 };
    static struct em_tracking_frame rows[M], got[M];
    static struct st_fingers fingers[M];
    run("hand_absurd", "at 0 hand right fist\nat 25 hand right absurd\n", rows, got, fingers, M);
    struct oxr_status status;
    oxr_source_get_status(g_src, &status);
    const uint8_t *fault = status.hand[1].joint_fault;
    assert_int_equal(fault[HD_XR_INDEX_TIP], HD_JOINT_TOO_FAR);
    assert_int_equal(fault[HD_XR_MIDDLE_DISTAL], HD_JOINT_NOT_FINITE);
    assert_int_equal(fault[HD_XR_RING_TIP], HD_JOINT_BAD_RADIUS);
    assert_int_equal(fault[HD_XR_LITTLE_DISTAL], HD_JOINT_COINCIDENT);
    assert_int_equal(status.hand[1].refused_joints, 4);
    assert_int_equal(status.hand[1].fallback_fingers,
                     (1u << HD_INDEX) | (1u << HD_MIDDLE) | (1u << HD_RING) | (1u << HD_LITTLE));
    /* The refused fingers keep their last good pose (the fist), the thumb is tracked. */
    const struct hd_model model = default_model(1);
    struct hd_pose fist;
    test_pose_make(&model, POSE_FIST, &fist);
    const struct hd_pose last = pose_of(&fingers[M - 1], 1);
    assert_true(worst_deg(&last, &fist) < POSE_TOLERANCE_DEG);
    for (int k = 0; k < M; ++k)
        for (int f = 0; f < HD_FINGER_COUNT; ++f)
            for (int j = 0; j < ST_FINGER_ANGLES; ++j)
                assert_true(isfinite(fingers[k].angle_deg[1][f][j]));
    /* The wrist and palm are fine: the hand still drives nothing but its fingers (the
     * controller is there). */
    assert_string_equal(status.hand[1].wrist_source, "controller");
    xt_assert_no_violations();
    in_source_destroy(&g_src);
}

/* A lost session takes its hand trackers with it, a lost runtime the extension's
 * functions; the new session (and instance) makes new ones and the hand is tracked again
 * (the runtime checks the handles). */
static void
hand_trackers_come_back_with_a_new_session(void **state)
{
    (void)state;
    enum { M = 90 };
    static struct em_tracking_frame rows[M], got[M];
    static struct st_fingers fingers[M];
    run("hand_session_loss",
        "system_unavailable 0\nruntime_unavailable 0\nat 0 hand right fist\n"
        "at 20 session_loss\nat 50 instance_loss\n",
        rows, got, fingers, M);
    struct oxr_status status;
    oxr_source_get_status(g_src, &status);
    assert_true(status.sessions_created >= 3);
    assert_true(status.instances_created >= 2);
    assert_true(status.hand_tracking);
    assert_true(status.hand[1].tracked);
    assert_string_equal(status.hand[1].finger_source, "hand tracking");
    xt_assert_no_violations();
    in_source_destroy(&g_src);
}

/* Every finger input a hand profile (src/hand) reads is one the bindings (xr_common's
 * oxr_finger_inputs, which the program and the layer bind) give: a profile that claimed an
 * input nobody binds read zeros (Index's claimed per-finger curls: its fingers straight
 * whatever the grip; Touch Pro's trigger curl, before it was bound: its index curled on a
 * trigger it had left).
 * And every profile the bindings know has a hand profile. */
static void
every_input_a_hand_profile_reads_is_bound(void **state)
{
    (void)state;
    for (int i = 0; i < OXR_CONTROLLER_PROFILE_COUNT; ++i) {
        const char *path = oxr_controller_profiles[i].path;
        const struct hd_profile *hp = hd_profile_find(path);
        if (!hp)
            fail_msg("%s: no hand profile", path);
        const struct oxr_finger_inputs *fi = &oxr_finger_inputs[i];
        const uint32_t in = hp->inputs;
        bool thumb_bound = false;
        for (int t = 0; t < OXR_MAX_THUMB_TOUCHES; ++t)
            thumb_bound = thumb_bound || (fi->thumb_touch[0][t] && fi->thumb_touch[1][t]);
        char why[160];
        snprintf(why, sizeof why, "%s (inputs 0x%x)", path, (unsigned)in);
        if ((in & (HD_IN_TRIGGER_VALUE | HD_IN_SELECT_CLICK)) && !fi->trigger)
            fail_msg("%s: reads a trigger nobody binds", why);
        if ((in & HD_IN_TRIGGER_TOUCH) && !fi->trigger_touch)
            fail_msg("%s: reads a trigger touch nobody binds", why);
        if ((in & (HD_IN_SQUEEZE_VALUE | HD_IN_SQUEEZE_CLICK)) && !fi->squeeze)
            fail_msg("%s: reads a squeeze nobody binds", why);
        if ((in & HD_IN_SQUEEZE_FORCE) && !fi->squeeze_force)
            fail_msg("%s: reads a squeeze force nobody binds", why);
        if ((in & HD_IN_THUMB_TOUCHES) && !thumb_bound)
            fail_msg("%s: reads thumb touches nobody binds", why);
        if ((in & HD_IN_TRIGGER_CURL) && !fi->trigger_curl)
            fail_msg("%s: reads a trigger curl nobody binds", why);
        if (in & HD_IN_FINGER_CURL)
            fail_msg("%s: reads per-finger curls nobody binds", why);
    }
}

#define XT_TEST(test) cmocka_unit_test_teardown(test, destroy_leftover_source)

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_input_a_hand_profile_reads_is_bound),
        XT_TEST(each_scripted_pose_reaches_the_fingers),
        XT_TEST(controller_values_make_the_curls),
        XT_TEST(the_touch_pro_curl_sensor_bends_the_index_off_the_trigger),
        XT_TEST(losing_hand_tracking_falls_back_without_a_jump),
        XT_TEST(the_tracked_wrist_drives_the_hand_while_the_controller_is_down),
        XT_TEST(a_controller_lying_still_away_from_the_tracked_hand_is_idle),
        XT_TEST(absurd_joints_are_refused_one_by_one),
        XT_TEST(hand_trackers_come_back_with_a_new_session),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
