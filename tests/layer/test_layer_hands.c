/*
 * The fingers the layer hands out (XR_FB_body_tracking's and the META full body's hand
 * joints), through the real Khronos loader and the test runtime:
 *
 *   - where the runtime offers XR_EXT_hand_tracking and shows a pose of the hand model
 *     (point, fist, open, thumbs-up), the layer's finger joints bend as the hand model's
 *     joints of that pose (converted by hd_pose_from_tracking as the layer does), within
 *     LIMIT_DEG at every joint;
 *   - when hand tracking is lost, the fingers go back to the hand they had before (the
 *     simple controller's, which senses no finger: src/hand's relaxed curls), a bounded
 *     change per frame (the handover, HD_HANDOVER_S), and end there;
 *   - without the extension and with nothing pressed, the fingers hold still: rigid, the
 *     same on every frame;
 *   - an application that enables XR_EXT_hand_tracking itself keeps its own hand trackers;
 *   - without the extension, an application bound for Oculus Touch: the controller's
 *     finger inputs make the hand model's pose of their curls (fist, point, thumbs-up),
 *     putting the controller down and picking it up blend (the relaxed hand between),
 *     and the application's own actions still read their inputs.
 *
 * The measure is frame-free: at each finger joint, the angle between the bone that ends
 * there and the bone that starts there, from the joints' positions (a rigid move of the
 * hand, or another joint frame convention, leaves it alone).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "embody/hand.h"
#include "embody/stream.h"
#include "hand_poses.h"
#include "layer_app.h"
#include "xr_test_util.h"

#define STREAM EMBODY_SOURCE_DIR "/tests/data/streams/cmu_05_04.csv"
#define HEIGHT "1.70"
#define FULL XR_FULL_BODY_JOINT_COUNT_META
#define PATH_LEN 4096
/* The layer's finger bends against the hand model's: the same conversion of the same
 * joints, rebuilt at the body's wrist in floats; a margin for compilers and CPUs. */
#define LIMIT_DEG 1.0
/* Frames a pose is held before it is measured (more than HD_HANDOVER_S at 60 Hz). */
#define SETTLE_FRAMES 30
#define POSE_FRAMES 60

/* Bends per hand: thumb metacarpal, proximal, distal (3), four fingers' metacarpal,
 * proximal, intermediate, distal (4 each). */
#define BENDS (3 + 4 * 4)

static struct la_app *g_app;

static int
teardown(void **state)
{
    (void)state;
    if (g_app)
        la_destroy(g_app);
    g_app = NULL;
    return 0;
}

static const char *
write_script(const char *name, const char *extra, char *out, size_t size)
{
    xt_temp_path(name, out, size);
    FILE *f = fopen(out, "w");
    assert_non_null(f);
    fprintf(f, "poses %s\n%s", STREAM, extra ? extra : "");
    fclose(f);
    return out;
}

static double
angle_deg(const float *a, const float *b, const float *c)
{
    double u[3], v[3], uu = 0, vv = 0, uv = 0;
    for (int i = 0; i < 3; ++i) {
        u[i] = (double)b[i] - (double)a[i];
        v[i] = (double)c[i] - (double)b[i];
        uu += u[i] * u[i];
        vv += v[i] * v[i];
        uv += u[i] * v[i];
    }
    if (uu <= 0.0 || vv <= 0.0)
        return 0.0;
    double cosine = uv / sqrt(uu * vv);
    cosine = cosine > 1.0 ? 1.0 : (cosine < -1.0 ? -1.0 : cosine);
    return acos(cosine) * 180.0 / 3.14159265358979323846;
}

/* The bends of one hand from its 26 joints' positions in XrHandJointEXT's order (which
 * the FB hand joints share, from the palm): position(k) gives joint k. */
static void
bends_of(const float (*position)[3], double *out)
{
    int n = 0;
    for (int k = HD_XR_THUMB_METACARPAL; k < HD_XR_THUMB_TIP; ++k) {
        const int a = k == HD_XR_THUMB_METACARPAL ? HD_XR_WRIST : k - 1;
        out[n++] = angle_deg(position[a], position[k], position[k + 1]);
    }
    for (int f = 0; f < 4; ++f) {
        const int first = HD_XR_INDEX_METACARPAL + 5 * f;
        for (int k = first; k < first + 4; ++k) {
            const int a = k == first ? HD_XR_WRIST : k - 1;
            out[n++] = angle_deg(position[a], position[k], position[k + 1]);
        }
    }
    assert_int_equal(n, BENDS);
}

static void
layer_bends(const XrBodyJointLocationFB *joints, int hand, double *out)
{
    const int first = hand == HD_LEFT ? XR_BODY_JOINT_LEFT_HAND_PALM_FB
                                      : XR_BODY_JOINT_RIGHT_HAND_PALM_FB;
    float p[HD_XR_JOINT_COUNT][3];
    for (int k = 0; k < HD_XR_JOINT_COUNT; ++k) {
        const XrBodyJointLocationFB *j = &joints[first + k];
        assert_true(j->locationFlags & XR_SPACE_LOCATION_POSITION_VALID_BIT);
        p[k][0] = j->pose.position.x;
        p[k][1] = j->pose.position.y;
        p[k][2] = j->pose.position.z;
    }
    bends_of(p, out);
}

/* What the layer should show for a pose the runtime shows: the hand model's joints of the
 * pose (as the runtime makes them), converted as the layer converts them, rebuilt. */
static void
expected_bends(int hand, int pose, double *out)
{
    struct hd_model model;
    const struct hd_model_desc desc = {.hand = (enum hd_hand)hand};
    struct em_error err = {{0}};
    assert_int_equal(hd_model_init(&desc, &model, &err), EM_OK);
    struct hd_pose shown, seen;
    test_pose_make(&model, pose, &shown);
    const float origin[3] = {0.0f, 0.0f, 0.0f}, identity[4] = {0.0f, 0.0f, 0.0f, 1.0f};
    struct hd_xr_hand joints;
    hd_pose_to_tracking(&model, &shown, origin, identity, &joints);
    struct hd_tracking_state st;
    hd_tracking_state_init(&st);
    hd_pose_from_tracking(&model, &joints, &st, &seen, NULL);
    hd_pose_to_tracking(&model, &seen, origin, identity, &joints);
    float p[HD_XR_JOINT_COUNT][3];
    for (int k = 0; k < HD_XR_JOINT_COUNT; ++k)
        memcpy(p[k], joints.joint[k].position_m, sizeof p[k]);
    bends_of(p, out);
}

static double
max_difference(const double *a, const double *b)
{
    double worst = 0.0;
    for (int i = 0; i < BENDS; ++i)
        worst = fmax(worst, fabs(a[i] - b[i]));
    return worst;
}

struct run {
    struct la_app app;
    XrBodyTrackerFB tracker;
    struct st_stream stream;
    int k;
    XrBodyJointLocationFB joints[FULL];
};

/* `touch`: the application binds Oculus Touch (layer_app.h), not the simple controller;
 * or `touch_profile`, one with Touch's paths, when not NULL. */
static void
run_start_profile(struct run *r, const char *name, const char *extra, const char *extension,
                  bool touch, const char *touch_profile)
{
    char script[PATH_LEN];
    g_app = &r->app;
    la_use_layer(write_script(name, extra, script, sizeof script));
    setenv("EMBODY_LAYER_HEIGHT_M", HEIGHT, 1);
    la_create_with(&r->app, true, true, extension);
    r->app.touch = touch;
    r->app.touch_profile = touch_profile;
    la_start_session(&r->app);
    la_pump(&r->app);
    assert_true(r->app.running);
    struct em_error err = {{0}};
    memset(&r->stream, 0, sizeof r->stream);
    if (st_stream_load(STREAM, &r->stream, &err) != EM_OK)
        fail_msg("%s", err.message);
    const XrBodyTrackerCreateInfoFB info = {.type = XR_TYPE_BODY_TRACKER_CREATE_INFO_FB,
                                            .bodyJointSet = XR_BODY_JOINT_SET_FULL_BODY_META};
    assert_int_equal(r->app.create_body_tracker(r->app.session, &info, &r->tracker), XR_SUCCESS);
    r->k = 0;
}

static void
run_start_with(struct run *r, const char *name, const char *extra, const char *extension,
               bool touch)
{
    run_start_profile(r, name, extra, extension, touch, NULL);
}

static void
run_start(struct run *r, const char *name, const char *extra)
{
    run_start_with(r, name, extra, NULL, false);
}

/* One frame: the runtime advances, the application asks for the body at the frame's
 * time. */
static void
run_frame(struct run *r)
{
    assert_true(r->k < r->stream.frame_count);
    la_pump(&r->app);
    assert_true(r->app.running);
    assert_int_equal(la_sync(&r->app), XR_SUCCESS);
    const XrBodyJointsLocateInfoFB info = {.type = XR_TYPE_BODY_JOINTS_LOCATE_INFO_FB,
                                           .baseSpace = r->app.stage,
                                           .time = la_time_of(r->stream.frames[r->k].time_s)};
    XrBodyJointLocationsFB out = {.type = XR_TYPE_BODY_JOINT_LOCATIONS_FB,
                                  .jointCount = FULL,
                                  .jointLocations = r->joints};
    assert_int_equal(r->app.locate_body_joints(r->tracker, &info, &out), XR_SUCCESS);
    assert_true(out.isActive);
    r->k++;
}

static void
run_end(struct run *r)
{
    assert_int_equal(r->app.destroy_body_tracker(r->tracker), XR_SUCCESS);
    st_stream_fini(&r->stream);
    xt_assert_no_violations();
    la_destroy(&r->app);
    g_app = NULL;
}

static void
fingers_bend_as_the_hand_model_in_each_tracked_pose(void **state)
{
    (void)state;
    static const int k_poses[] = {POSE_POINT, POSE_FIST, POSE_OPEN, POSE_THUMBS_UP};
    static const char *k_names[] = {"point", "fist", "open", "thumbs_up"};
    enum { POSES = 4 };
    char extra[1024];
    int n = 0;
    for (int i = 0; i < POSES; ++i) /* the right hand one pose behind */
        n += snprintf(extra + n, sizeof extra - (size_t)n, "at %d hand left %s\nat %d hand right %s\n",
                      i * POSE_FRAMES, k_names[i], i * POSE_FRAMES, k_names[(i + POSES - 1) % POSES]);
    struct run r;
    run_start(&r, "layer_hands_poses.script", extra);
    double worst = 0.0;
    for (int i = 0; i < POSES; ++i) {
        double want[2][BENDS];
        expected_bends(HD_LEFT, k_poses[i], want[0]);
        expected_bends(HD_RIGHT, k_poses[(i + POSES - 1) % POSES], want[1]);
        for (int f = 0; f < POSE_FRAMES; ++f) {
            run_frame(&r);
            if (f < SETTLE_FRAMES)
                continue;
            for (int h = 0; h < 2; ++h) {
                double got[BENDS];
                layer_bends(r.joints, h, got);
                const double d = max_difference(got, want[h]);
                worst = fmax(worst, d);
                if (d > LIMIT_DEG)
                    fail_msg("%s hand, %s: a bend %.2f degrees off the hand model's (limit %.1f)",
                             h == 0 ? "left" : "right", k_names[h == 0 ? i : (i + 3) % 4], d,
                             LIMIT_DEG);
            }
        }
    }
    printf("tracked poses: fingers within %.3f degrees of the hand model's\n", worst);
    run_end(&r);
}

static void
losing_hand_tracking_blends_back(void **state)
{
    (void)state;
    enum { TRACKED_AT = 30, LOST_AT = 90, END = 150 };
    char extra[256];
    snprintf(extra, sizeof extra, "hand_tracking\nat %d hand left fist\nat %d hand left none\n",
             TRACKED_AT, LOST_AT);
    struct run r;
    run_start(&r, "layer_hands_lost.script", extra);
    double relaxed[BENDS], fist[BENDS], prev[BENDS], now[BENDS];
    expected_bends(HD_LEFT, POSE_FIST, fist);
    double worst_step = 0.0, bound = 0.0;
    for (int f = 0; f < END; ++f) {
        run_frame(&r);
        layer_bends(r.joints, HD_LEFT, now);
        if (f == TRACKED_AT - 1)
            memcpy(relaxed, now, sizeof relaxed); /* not tracked: the controller's hand */
        if (f == LOST_AT - 1)
            assert_true(max_difference(now, fist) <= LIMIT_DEG);
        if (f >= LOST_AT) {
            /* The whole way from the fist to the hand before, spread over the handover:
             * the frame's share, with room for the blend not being linear in angle. */
            const double dt_s = r.stream.frames[r.k - 1].time_s - r.stream.frames[r.k - 2].time_s;
            bound = 1.5 * max_difference(fist, relaxed) * dt_s / (double)HD_HANDOVER_S + 0.5;
            const double step = max_difference(now, prev);
            worst_step = fmax(worst_step, step);
            if (step > bound)
                fail_msg("frame %d: the fingers moved %.2f degrees (bound %.2f)", f, step, bound);
        }
        memcpy(prev, now, sizeof prev);
    }
    const double jump = max_difference(fist, relaxed);
    const double end = max_difference(now, relaxed);
    printf("lost: the largest change %.2f degrees a frame (bound %.2f; a jump would be %.2f); "
           "%.4f degrees from the hand before at the end\n",
           worst_step, bound, jump, end);
    assert_true(jump > 4.0 * bound); /* the test can tell a blend from a jump */
    assert_true(end <= 0.01);
    run_end(&r);
}

static void
without_hand_tracking_or_inputs_the_fingers_hold_still(void **state)
{
    (void)state;
    struct run r;
    run_start(&r, "layer_hands_none.script", NULL);
    assert_false(la_extension_offered(XR_EXT_HAND_TRACKING_EXTENSION_NAME));
    double first[2][BENDS], now[BENDS];
    double worst = 0.0;
    for (int f = 0; f < 120; ++f) {
        run_frame(&r);
        for (int h = 0; h < 2; ++h) {
            layer_bends(r.joints, h, f == 0 ? first[h] : now);
            if (f > 0)
                worst = fmax(worst, max_difference(now, first[h]));
        }
    }
    printf("no hand tracking: the bends change by at most %.5f degrees\n", worst);
    assert_true(worst <= 0.01);
    run_end(&r);
}

/* An application that enables XR_EXT_hand_tracking itself keeps it: its own hand tracker
 * works beside the layer's, and the body's fingers follow the hand. */
static void
an_application_with_its_own_hand_tracking_keeps_it(void **state)
{
    (void)state;
    struct run r;
    run_start_with(&r, "layer_hands_app.script", "at 0 hand left fist\nat 0 hand right open\n",
                   XR_EXT_HAND_TRACKING_EXTENSION_NAME, false);
    PFN_xrCreateHandTrackerEXT create = NULL;
    PFN_xrDestroyHandTrackerEXT destroy = NULL;
    PFN_xrLocateHandJointsEXT locate = NULL;
    assert_int_equal(xrGetInstanceProcAddr(r.app.instance, "xrCreateHandTrackerEXT",
                                           (PFN_xrVoidFunction *)&create),
                     XR_SUCCESS);
    assert_int_equal(xrGetInstanceProcAddr(r.app.instance, "xrDestroyHandTrackerEXT",
                                           (PFN_xrVoidFunction *)&destroy),
                     XR_SUCCESS);
    assert_int_equal(xrGetInstanceProcAddr(r.app.instance, "xrLocateHandJointsEXT",
                                           (PFN_xrVoidFunction *)&locate),
                     XR_SUCCESS);
    const XrHandTrackerCreateInfoEXT info = {.type = XR_TYPE_HAND_TRACKER_CREATE_INFO_EXT,
                                             .hand = XR_HAND_LEFT_EXT,
                                             .handJointSet = XR_HAND_JOINT_SET_DEFAULT_EXT};
    XrHandTrackerEXT hand = XR_NULL_HANDLE;
    assert_int_equal(create(r.app.session, &info, &hand), XR_SUCCESS);
    double want[BENDS], got[BENDS];
    expected_bends(HD_LEFT, POSE_FIST, want);
    for (int f = 0; f < SETTLE_FRAMES; ++f)
        run_frame(&r);
    XrHandJointLocationEXT joints[XR_HAND_JOINT_COUNT_EXT];
    const XrHandJointsLocateInfoEXT at = {.type = XR_TYPE_HAND_JOINTS_LOCATE_INFO_EXT,
                                          .baseSpace = r.app.stage,
                                          .time = la_time_of(r.stream.frames[r.k - 1].time_s)};
    XrHandJointLocationsEXT located = {.type = XR_TYPE_HAND_JOINT_LOCATIONS_EXT,
                                       .jointCount = XR_HAND_JOINT_COUNT_EXT,
                                       .jointLocations = joints};
    assert_int_equal(locate(hand, &at, &located), XR_SUCCESS);
    assert_true(located.isActive);
    layer_bends(r.joints, HD_LEFT, got);
    const double d = max_difference(got, want);
    printf("the application's own hand tracking: the body's left fingers %.3f degrees off\n", d);
    assert_true(d <= LIMIT_DEG);
    assert_int_equal(destroy(hand), XR_SUCCESS);
    run_end(&r);
}


/* ---- The controllers' finger inputs (no hand tracking) ---- */

/* What the layer should show for `curls`: the hand model's pose of them, as joints. */
static void
curl_bends(int hand, const struct hd_curls *curls, double *out)
{
    struct hd_model model;
    const struct hd_model_desc desc = {.hand = (enum hd_hand)hand};
    struct em_error err = {{0}};
    assert_int_equal(hd_model_init(&desc, &model, &err), EM_OK);
    struct hd_pose pose;
    hd_pose_from_curls(&model, curls, &pose);
    const float origin[3] = {0.0f, 0.0f, 0.0f}, identity[4] = {0.0f, 0.0f, 0.0f, 1.0f};
    struct hd_xr_hand joints;
    hd_pose_to_tracking(&model, &pose, origin, identity, &joints);
    float p[HD_XR_JOINT_COUNT][3];
    for (int k = 0; k < HD_XR_JOINT_COUNT; ++k)
        memcpy(p[k], joints.joint[k].position_m, sizeof p[k]);
    bends_of(p, out);
}

static float
app_float(struct la_app *app, XrAction action, int hand, XrBool32 *out_active)
{
    const XrActionStateGetInfo info = {
        .type = XR_TYPE_ACTION_STATE_GET_INFO, .action = action, .subactionPath = app->hand[hand]};
    XrActionStateFloat state = {.type = XR_TYPE_ACTION_STATE_FLOAT};
    assert_int_equal(xrGetActionStateFloat(app->session, &info, &state), XR_SUCCESS);
    *out_active = state.isActive;
    return state.currentState;
}

static bool
app_bool(struct la_app *app, XrAction action, int hand)
{
    const XrActionStateGetInfo info = {
        .type = XR_TYPE_ACTION_STATE_GET_INFO, .action = action, .subactionPath = app->hand[hand]};
    XrActionStateBoolean state = {.type = XR_TYPE_ACTION_STATE_BOOLEAN};
    assert_int_equal(xrGetActionStateBoolean(app->session, &info, &state), XR_SUCCESS);
    return state.isActive && state.currentState;
}

#define RIGHT "/user/hand/right/input/"
/* The right hand's phases, PHASE frames each: fist, point, thumbs-up from the inputs; the
 * controller put down (the relaxed hand); picked up again (thumbs-up). The application
 * presses its own a/click at A_AT and reads its squeeze. */
#define PHASE 60
#define A_AT 130
static const char k_controller_script[] =
    "profile /interaction_profiles/oculus/touch_controller\n"
    "at 0 value " RIGHT "trigger/value 1\n"
    "at 0 press " RIGHT "trigger/touch\n"
    "at 0 value " RIGHT "squeeze/value 1\n"
    "at 0 press " RIGHT "thumbstick/touch\n"
    "at 60 release " RIGHT "trigger/touch\n"
    "at 60 value " RIGHT "trigger/value 0\n"
    "at 120 value " RIGHT "trigger/value 1\n"
    "at 120 press " RIGHT "trigger/touch\n"
    "at 120 release " RIGHT "thumbstick/touch\n"
    "at 130 press " RIGHT "a/click\n"
    "at 180 controller right off\n"
    "at 240 controller right on\n";

/* Without hand tracking, an application bound for Oculus Touch: the layer's own finger
 * actions (bound beside the application's) give the right hand the curls of its inputs
 * (src/hand: the thumb on a sensor 0.5, off them 0; the index on the trigger follows it,
 * off its touch sensor it points; the squeeze closes the other three), within LIMIT_DEG
 * of the hand model's pose of them at every bend; putting the controller down and
 * picking it up again change the source without a jump; the application's own actions
 * read their inputs all along. */
static void
the_controllers_inputs_shape_the_fingers(void **state)
{
    (void)state;
    enum { FIST, POINT, THUMBS_UP, PUT_DOWN, PICKED_UP, PHASES };
    static const char *k_names[PHASES] = {"fist", "point", "thumbs-up", "put down",
                                          "picked up"};
    static const struct hd_curls k_curls[PHASES] = {
        [FIST] = {{0.5f, 1.0f, 1.0f, 1.0f, 1.0f}, 0.0f},
        [POINT] = {{0.5f, 0.0f, 1.0f, 1.0f, 1.0f}, 0.0f},
        [THUMBS_UP] = {{0.0f, 1.0f, 1.0f, 1.0f, 1.0f}, 0.0f},
        [PICKED_UP] = {{0.0f, 1.0f, 1.0f, 1.0f, 1.0f}, 0.0f},
    };
    struct run r;
    run_start_with(&r, "layer_hands_controller.script", k_controller_script, NULL, true);
    assert_false(la_extension_offered(XR_EXT_HAND_TRACKING_EXTENSION_NAME));
    double want[PHASES][BENDS], now[BENDS], prev[BENDS], relaxed[BENDS];
    for (int p = 0; p < PHASES; ++p)
        if (p != PUT_DOWN)
            curl_bends(HD_RIGHT, &k_curls[p], want[p]);
    double worst = 0.0, step[PHASES * PHASE] = {0}, dt_s = 0.0;
    bool app_read = false;
    for (int f = 0; f < PHASES * PHASE; ++f) {
        run_frame(&r);
        const int p = f / PHASE;
        layer_bends(r.joints, HD_RIGHT, now);
        if (f == PUT_DOWN * PHASE + PHASE - 1)
            memcpy(relaxed, now, sizeof relaxed);
        if (f >= PUT_DOWN * PHASE) { /* the changes of source */
            dt_s = fmax(dt_s, r.stream.frames[r.k - 1].time_s - r.stream.frames[r.k - 2].time_s);
            step[f] = max_difference(now, prev);
        }
        if (f % PHASE >= SETTLE_FRAMES && p != PUT_DOWN) {
            const double d = max_difference(now, want[p]);
            worst = fmax(worst, d);
            if (d > LIMIT_DEG)
                fail_msg("frame %d, %s: a bend %.2f degrees off the curls' pose (limit %.1f)", f,
                         k_names[p], d, LIMIT_DEG);
        }
        if (f == A_AT + 10) { /* the application's own bindings still work */
            XrBool32 active = XR_FALSE;
            assert_true(app_bool(&r.app, r.app.trigger, HD_RIGHT));
            assert_true(app_float(&r.app, r.app.squeeze, HD_RIGHT, &active) == 1.0f);
            assert_true(active);
            assert_true(app_float(&r.app, r.app.squeeze, HD_LEFT, &active) == 0.0f);
            assert_true(active);
            app_read = true;
        }
        memcpy(prev, now, sizeof prev);
    }
    assert_true(app_read);
    /* The way between the thumbs-up and the relaxed hand spread over the handover, with
     * room for the blend not being linear in angle (as the tracked hand's test). */
    const double jump = max_difference(want[THUMBS_UP], relaxed);
    const double bound = 1.5 * jump * dt_s / (double)HD_HANDOVER_S + 0.5;
    double worst_step = 0.0;
    for (int f = PUT_DOWN * PHASE; f < PHASES * PHASE; ++f) {
        worst_step = fmax(worst_step, step[f]);
        if (step[f] > bound)
            fail_msg("frame %d: the fingers moved %.2f degrees (bound %.2f)", f, step[f], bound);
    }
    printf("controller: fingers within %.3f degrees of the curls' pose; putting it down and "
           "up, the largest change %.2f degrees a frame (bound %.2f; a jump would be %.2f)\n",
           worst, worst_step, bound, jump);
    assert_true(jump > 4.0 * bound); /* the test can tell a blend from a jump */
    run_end(&r);
}

#define PRO "/interaction_profiles/meta/touch_pro_controller"
static const char k_touch_pro_script[] = "profile " PRO "\n"
                                         "at 0 value " RIGHT "trigger/curl_fb 0.5\n"
                                         "at 60 value " RIGHT "trigger/curl_fb 0\n";

/* Touch Pro, the trigger untouched: the layer's curl action bends the right index as far
 * as the sensor says (the runtime's 1 flat on the trigger): at 0.5 between straight and
 * its curl on the trigger, at 0 straight; within LIMIT_DEG of the hand model's pose. */
static void
the_touch_pro_curl_sensor_bends_the_index(void **state)
{
    (void)state;
    const struct hd_profile *pro = hd_profile_find(PRO);
    assert_non_null(pro);
    struct hd_curls on_trigger, curls[2];
    hd_curls_from_controller(pro, &(struct hd_controller_input){.trigger_touch = true},
                             &on_trigger);
    hd_curls_from_controller(pro, &(struct hd_controller_input){.trigger_curl = 0.5f}, &curls[0]);
    hd_curls_from_controller(pro, &(struct hd_controller_input){.trigger_curl = 1.0f}, &curls[1]);
    assert_true(curls[0].curl[HD_INDEX] > 0.05f &&
                curls[0].curl[HD_INDEX] < on_trigger.curl[HD_INDEX] - 0.05f);
    assert_true(curls[1].curl[HD_INDEX] < 0.01f);
    double want[2][BENDS], now[BENDS];
    for (int p = 0; p < 2; ++p)
        curl_bends(HD_RIGHT, &curls[p], want[p]);
    assert_true(max_difference(want[0], want[1]) > 4.0 * LIMIT_DEG); /* the test can tell */
    struct run r;
    run_start_profile(&r, "layer_hands_touch_pro.script", k_touch_pro_script,
                      "XR_FB_touch_controller_pro", true, PRO);
    for (int f = 0; f < 2 * PHASE; ++f) {
        run_frame(&r);
        layer_bends(r.joints, HD_RIGHT, now);
        const double d = max_difference(now, want[f / PHASE]);
        if (f % PHASE >= SETTLE_FRAMES && d > LIMIT_DEG)
            fail_msg("frame %d: a bend %.2f degrees off the curls' pose (limit %.1f)", f, d,
                     LIMIT_DEG);
    }
    run_end(&r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(fingers_bend_as_the_hand_model_in_each_tracked_pose, teardown),
        cmocka_unit_test_teardown(losing_hand_tracking_blends_back, teardown),
        cmocka_unit_test_teardown(without_hand_tracking_or_inputs_the_fingers_hold_still,
                                  teardown),
        cmocka_unit_test_teardown(an_application_with_its_own_hand_tracking_keeps_it, teardown),
        cmocka_unit_test_teardown(the_controllers_inputs_shape_the_fingers, teardown),
        cmocka_unit_test_teardown(the_touch_pro_curl_sensor_bends_the_index, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
