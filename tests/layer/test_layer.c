/*
 * Tests of embody's OpenXR API layer through the real Khronos loader: an OpenXR
 * application (layer_app.c) enables the layer, and the test runtime replays real 3-point
 * streams (CMU clips through mocap2stream, tests/data/streams/).
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

#include "embody/body.h"
#include "embody/input.h"
#include "embody/stream.h"
#include "layer_app.h"
#include "xr_test_util.h"

#define STREAM EMBODY_SOURCE_DIR "/tests/data/streams/cmu_05_04.csv"
#define HEIGHT "1.70"
#define FB XR_BODY_JOINT_COUNT_FB
#define FULL XR_FULL_BODY_JOINT_COUNT_META

/* The running test's application, destroyed after a failed test too (the loader allows
 * one instance at a time). */
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

/* Writes a script for the runtime: the stream and the extra directives. */
static const char *
write_script(const char *name, const char *stream, const char *extra, char *out, size_t size)
{
    xt_temp_path(name, out, size);
    FILE *f = fopen(out, "w");
    assert_non_null(f);
    fprintf(f, "poses %s\n%s", stream, extra ? extra : "");
    fclose(f);
    return out;
}

static void
start(struct la_app *app, const char *name, const char *extra, bool body, bool full_body)
{
    char script[1024];
    la_use_layer(write_script(name, STREAM, extra, script, sizeof script));
    setenv("EMBODY_LAYER_HEIGHT_M", HEIGHT, 1);
    la_create(app, body, full_body);
    la_start_session(app);
    la_pump(app);
    assert_true(app->running);
}

static XrBodyTrackerFB
make_tracker(struct la_app *app, XrBodyJointSetFB set)
{
    const XrBodyTrackerCreateInfoFB info = {.type = XR_TYPE_BODY_TRACKER_CREATE_INFO_FB,
                                            .bodyJointSet = set};
    XrBodyTrackerFB tracker = XR_NULL_HANDLE;
    assert_int_equal(app->create_body_tracker(app->session, &info, &tracker), XR_SUCCESS);
    assert_non_null(tracker);
    return tracker;
}

static XrResult
locate(struct la_app *app, XrBodyTrackerFB tracker, XrTime time, XrBodyJointLocationFB *joints,
       uint32_t count, XrBodyJointLocationsFB *out)
{
    const XrBodyJointsLocateInfoFB info = {
        .type = XR_TYPE_BODY_JOINTS_LOCATE_INFO_FB, .baseSpace = app->stage, .time = time};
    *out = (XrBodyJointLocationsFB){
        .type = XR_TYPE_BODY_JOINT_LOCATIONS_FB, .jointCount = count, .jointLocations = joints};
    return app->locate_body_joints(tracker, &info, out);
}

/* ---- The body: the same as embody solve ---------------------------------------------- */

/* FB / META joints that are embody's own joints, with their VRM names in solve's BVH. */
static const struct {
    int joint;
    const char *name;
} k_same[] = {
    {XR_BODY_JOINT_HIPS_FB, "hips"},
    {XR_BODY_JOINT_SPINE_LOWER_FB, "spine"},
    {XR_BODY_JOINT_SPINE_UPPER_FB, "chest"},
    {XR_BODY_JOINT_NECK_FB, "neck"},
    {XR_BODY_JOINT_HEAD_FB, "head"},
    {XR_BODY_JOINT_LEFT_SHOULDER_FB, "leftShoulder"},
    {XR_BODY_JOINT_LEFT_ARM_UPPER_FB, "leftUpperArm"},
    {XR_BODY_JOINT_LEFT_ARM_LOWER_FB, "leftLowerArm"},
    {XR_BODY_JOINT_LEFT_HAND_WRIST_FB, "leftHand"},
    {XR_BODY_JOINT_RIGHT_SHOULDER_FB, "rightShoulder"},
    {XR_BODY_JOINT_RIGHT_ARM_UPPER_FB, "rightUpperArm"},
    {XR_BODY_JOINT_RIGHT_ARM_LOWER_FB, "rightLowerArm"},
    {XR_BODY_JOINT_RIGHT_HAND_WRIST_FB, "rightHand"},
    {XR_FULL_BODY_JOINT_LEFT_UPPER_LEG_META, "leftUpperLeg"},
    {XR_FULL_BODY_JOINT_LEFT_LOWER_LEG_META, "leftLowerLeg"},
    {XR_FULL_BODY_JOINT_LEFT_FOOT_ANKLE_META, "leftFoot"},
    {XR_FULL_BODY_JOINT_LEFT_FOOT_BALL_META, "leftToes"},
    {XR_FULL_BODY_JOINT_RIGHT_UPPER_LEG_META, "rightUpperLeg"},
    {XR_FULL_BODY_JOINT_RIGHT_LOWER_LEG_META, "rightLowerLeg"},
    {XR_FULL_BODY_JOINT_RIGHT_FOOT_ANKLE_META, "rightFoot"},
    {XR_FULL_BODY_JOINT_RIGHT_FOOT_BALL_META, "rightToes"},
};
#define SAME_COUNT ((int)(sizeof k_same / sizeof k_same[0]))

/* Runs `embody solve` on the stream with the same height and loads its BVH. */
static void
solve(const char *stream, struct st_bvh *out)
{
    char bvh[1024], command[4096];
    xt_temp_path("solve.bvh", bvh, sizeof bvh);
    snprintf(command, sizeof command, "'%s' solve '%s' -o '%s' --height %s -q", EMBODY_PROGRAM,
             stream, bvh, HEIGHT);
    assert_int_equal(system(command), 0);
    struct em_error err = {{0}};
    if (st_bvh_load(bvh, out, &err) != EM_OK)
        fail_msg("%s", err.message);
}

static void
layer_serves_the_joints_embody_solve_gives_and_leaves_the_apps_actions_alone(void **state)
{
    (void)state;
    assert_true(setenv("EMBODY_LAYER_HEIGHT_M", HEIGHT, 1) == 0);
    char script[1024];
    la_use_layer(write_script("solve.script", STREAM,
                              "at 10 press /user/hand/right/input/select/click\n"
                              "at 12 release /user/hand/right/input/select/click\n",
                              script, sizeof script));
    /* The loader lists the layer's extensions (the test runtime has neither). */
    assert_true(la_extension_offered(XR_FB_BODY_TRACKING_EXTENSION_NAME));
    assert_true(la_extension_offered(XR_META_BODY_TRACKING_FULL_BODY_EXTENSION_NAME));
    struct la_app app;
    g_app = &app;
    la_create(&app, true, true);
    assert_non_null(app.create_body_tracker);
    assert_non_null(app.locate_body_joints);

    XrSystemPropertiesBodyTrackingFullBodyMETA full = {
        .type = XR_TYPE_SYSTEM_PROPERTIES_BODY_TRACKING_FULL_BODY_META};
    XrSystemBodyTrackingPropertiesFB fb = {.type = XR_TYPE_SYSTEM_BODY_TRACKING_PROPERTIES_FB,
                                           .next = &full};
    XrSystemProperties props = {.type = XR_TYPE_SYSTEM_PROPERTIES, .next = &fb};
    assert_int_equal(xrGetSystemProperties(app.instance, app.system, &props), XR_SUCCESS);
    assert_int_equal(fb.supportsBodyTracking, XR_TRUE);
    assert_int_equal(full.supportsFullBodyTracking, XR_TRUE);

    la_start_session(&app);
    la_pump(&app);
    assert_true(app.running);
    const XrBodyTrackerFB tracker = make_tracker(&app, XR_BODY_JOINT_SET_FULL_BODY_META);

    struct st_stream stream = {0};
    struct em_error err = {{0}};
    assert_int_equal(st_stream_load(STREAM, &stream, &err), EM_OK);
    struct st_bvh bvh;
    solve(STREAM, &bvh);
    assert_int_equal(bvh.frame_count, stream.frame_count);
    int bvh_joint[SAME_COUNT];
    for (int i = 0; i < SAME_COUNT; ++i) {
        bvh_joint[i] = st_bvh_find(&bvh, k_same[i].name);
        assert_true(bvh_joint[i] >= 0);
    }
    double(*position)[3] = calloc((size_t)bvh.joint_count, sizeof *position);
    double(*rotation)[4] = calloc((size_t)bvh.joint_count, sizeof *rotation);
    assert_non_null(position);
    assert_non_null(rotation);

    XrBodyJointLocationFB joints[FULL];
    double worst_m = 0.0;
    int trigger_frames = 0;
    for (int k = 0; k < stream.frame_count; ++k) {
        la_pump(&app);
        assert_int_equal(la_sync(&app), XR_SUCCESS);
        const XrTime time = la_time_of(stream.frames[k].time_s);
        XrBodyJointLocationsFB out;
        assert_int_equal(locate(&app, tracker, time, joints, FULL, &out), XR_SUCCESS);
        assert_int_equal(out.isActive, XR_TRUE);
        st_bvh_frame_pose(&bvh, k, position, rotation);
        for (int i = 0; i < SAME_COUNT; ++i) {
            const XrVector3f *p = &joints[k_same[i].joint].pose.position;
            const double *q = position[bvh_joint[i]];
            const double dx = (double)p->x - q[0], dy = (double)p->y - q[1];
            const double dz = (double)p->z - q[2];
            const double d = sqrt(dx * dx + dy * dy + dz * dz);
            worst_m = fmax(worst_m, d);
        }

        /* The application's own actions report what the runtime gives. */
        XrSpaceLocation grip = {.type = XR_TYPE_SPACE_LOCATION};
        assert_int_equal(xrLocateSpace(app.grip_space[0], app.stage, time, &grip), XR_SUCCESS);
        assert_true(grip.pose.position.x ==
                    stream.frames[k].device[EM_DEVICE_LEFT_HAND].pose.position_m[0]);
        assert_true(grip.pose.position.y ==
                    stream.frames[k].device[EM_DEVICE_LEFT_HAND].pose.position_m[1]);
        const XrActionStateGetInfo get = {.type = XR_TYPE_ACTION_STATE_GET_INFO,
                                          .action = app.trigger};
        XrActionStateBoolean trigger = {.type = XR_TYPE_ACTION_STATE_BOOLEAN};
        assert_int_equal(xrGetActionStateBoolean(app.session, &get, &trigger), XR_SUCCESS);
        trigger_frames += trigger.currentState ? 1 : 0;
        if (k == 10)
            assert_true(trigger.currentState && trigger.changedSinceLastSync);
    }
    print_message("layer vs embody solve: %d frames, %d joints each, largest difference "
                  "%.4f mm\n",
                  stream.frame_count, SAME_COUNT, worst_m * 1000.0);
    assert_true(worst_m <= 0.001);
    assert_int_equal(trigger_frames, 2); /* pressed at frames 10 and 11 */
    /* The runtime saw the application's set and the layer's, and no violation. */
    assert_int_equal(xt_report()->action_sets_created, 2);
    xt_assert_no_violations();

    free(position);
    free(rotation);
    st_bvh_fini(&bvh);
    st_stream_fini(&stream);
    assert_int_equal(app.destroy_body_tracker(tracker), XR_SUCCESS);
    la_destroy(&app);
}

static void
an_app_that_never_asks_for_body_tracking_sees_the_runtime_unchanged(void **state)
{
    (void)state;
    struct la_app app;
    g_app = &app;
    start(&app, "plain.script", NULL, false, false);
    /* No body-tracking functions, no action set of the layer's. */
    assert_null(app.create_body_tracker);
    XrSystemProperties props = {.type = XR_TYPE_SYSTEM_PROPERTIES};
    assert_int_equal(xrGetSystemProperties(app.instance, app.system, &props), XR_SUCCESS);
    for (int k = 0; k < 5; ++k)
        assert_int_equal(la_sync(&app), XR_SUCCESS);
    assert_int_equal(xt_report()->action_sets_created, 1);
    xt_assert_no_violations();
    la_destroy(&app);
}

static void
bad_calls_get_the_error_codes_the_specification_names(void **state)
{
    (void)state;
    struct la_app app;
    g_app = &app;
    start(&app, "bad.script", NULL, true, false);
    XrBodyTrackerFB tracker = XR_NULL_HANDLE;
    XrBodyTrackerCreateInfoFB info = {.type = XR_TYPE_BODY_TRACKER_CREATE_INFO_FB,
                                      .bodyJointSet = XR_BODY_JOINT_SET_FULL_BODY_META};
    /* The full-body set without XR_META_body_tracking_full_body enabled; an unknown set;
     * a wrong structure type; a session that is not one. */
    assert_int_equal(app.create_body_tracker(app.session, &info, &tracker),
                     XR_ERROR_VALIDATION_FAILURE);
    info.bodyJointSet = (XrBodyJointSetFB)7;
    assert_int_equal(app.create_body_tracker(app.session, &info, &tracker),
                     XR_ERROR_VALIDATION_FAILURE);
    info.bodyJointSet = XR_BODY_JOINT_SET_DEFAULT_FB;
    info.type = XR_TYPE_SESSION_CREATE_INFO;
    assert_int_equal(app.create_body_tracker(app.session, &info, &tracker),
                     XR_ERROR_VALIDATION_FAILURE);
    info.type = XR_TYPE_BODY_TRACKER_CREATE_INFO_FB;
    assert_int_equal(app.create_body_tracker((XrSession)&info, &info, &tracker),
                     XR_ERROR_HANDLE_INVALID);

    tracker = make_tracker(&app, XR_BODY_JOINT_SET_DEFAULT_FB);
    assert_int_equal(la_sync(&app), XR_SUCCESS);
    XrBodyJointLocationFB joints[FULL];
    XrBodyJointLocationsFB out;
    const XrTime t = la_time_of(0.0);
    /* 84 joints asked of a 70-joint tracker; a wrong structure type; no time. */
    assert_int_equal(locate(&app, tracker, t, joints, FULL, &out), XR_ERROR_VALIDATION_FAILURE);
    assert_int_equal(locate(&app, tracker, t, joints, FB, &out), XR_SUCCESS);
    assert_int_equal(out.jointCount, FB);
    XrBodyJointsLocateInfoFB bad = {
        .type = XR_TYPE_SPACE_LOCATION, .baseSpace = app.stage, .time = t};
    assert_int_equal(app.locate_body_joints(tracker, &bad, &out), XR_ERROR_VALIDATION_FAILURE);
    assert_int_equal(locate(&app, tracker, 0, joints, FB, &out), XR_ERROR_TIME_INVALID);
    XrBodySkeletonJointFB bones[FULL];
    XrBodySkeletonFB skeleton = {
        .type = XR_TYPE_BODY_SKELETON_FB, .jointCount = 69, .joints = bones};
    assert_int_equal(app.get_body_skeleton(tracker, &skeleton), XR_ERROR_VALIDATION_FAILURE);
    skeleton.jointCount = FB;
    assert_int_equal(app.get_body_skeleton(tracker, &skeleton), XR_SUCCESS);
    /* Every parent is a joint of the set, the root has none. */
    for (uint32_t i = 0; i < FB; ++i) {
        assert_int_equal(bones[i].joint, (int32_t)i);
        if (i == 0)
            assert_int_equal(bones[i].parentJoint, XR_BODY_JOINT_NONE_FB);
        else
            assert_true(bones[i].parentJoint >= 0 && bones[i].parentJoint < (int32_t)FB);
    }
    /* A destroyed tracker is refused, never followed. */
    assert_int_equal(app.destroy_body_tracker(tracker), XR_SUCCESS);
    assert_int_equal(app.destroy_body_tracker(tracker), XR_ERROR_HANDLE_INVALID);
    assert_int_equal(locate(&app, tracker, t, joints, FB, &out), XR_ERROR_HANDLE_INVALID);
    assert_int_equal(app.get_body_skeleton(tracker, &skeleton), XR_ERROR_HANDLE_INVALID);
    xt_assert_no_violations();
    la_destroy(&app);
}

/* Steps `frames` frames and locates at each; returns the last result of the locate. */
static XrResult
run_frames(struct la_app *app, XrBodyTrackerFB tracker, const struct st_stream *s, int *k,
           int frames, XrBodyJointLocationsFB *out, XrBodyJointLocationFB *joints, uint32_t n)
{
    XrResult r = XR_SUCCESS;
    for (int i = 0; i < frames; ++i, ++*k) {
        la_pump(app);
        if (!app->running)
            continue;
        r = la_sync(app);
        if (XR_FAILED(r))
            return r;
        r = locate(app, tracker, la_time_of(s->frames[*k].time_s), joints, n, out);
        if (XR_FAILED(r))
            return r;
    }
    return r;
}

static void
trackers_live_through_a_restart_and_go_with_their_session_and_instance(void **state)
{
    (void)state;
    struct la_app app;
    g_app = &app;
    start(&app, "restart.script", "at 10 stop\n", true, true);
    struct st_stream s = {0};
    struct em_error err = {{0}};
    assert_int_equal(st_stream_load(STREAM, &s, &err), EM_OK);
    XrBodyTrackerFB tracker = make_tracker(&app, XR_BODY_JOINT_SET_FULL_BODY_META);
    XrBodyJointLocationFB joints[FULL];
    XrBodyJointLocationsFB out;
    int k = 0;
    /* The runtime stops the session at frame 10, the application ends it and begins it
     * again: the tracker goes on. */
    assert_int_equal(run_frames(&app, tracker, &s, &k, 20, &out, joints, FULL), XR_SUCCESS);
    assert_int_equal(xt_report()->sessions_begun, 2);
    assert_int_equal(out.isActive, XR_TRUE);

    /* The application leaves and makes a new session: the tracker went with the old. */
    assert_int_equal(xrRequestExitSession(app.session), XR_SUCCESS);
    la_pump(&app);
    assert_false(app.running);
    la_end_session(&app);
    /* The tracker went with its session. */
    assert_int_equal(locate(&app, tracker, la_time_of(1.0), joints, FULL, &out),
                     XR_ERROR_HANDLE_INVALID);
    la_start_session(&app);
    la_pump(&app);
    assert_true(app.running);
    tracker = make_tracker(&app, XR_BODY_JOINT_SET_FULL_BODY_META);
    assert_int_equal(run_frames(&app, tracker, &s, &k, 20, &out, joints, FULL), XR_SUCCESS);
    assert_int_equal(out.isActive, XR_TRUE);
    /* The instance goes with a tracker alive: the layer frees it (the sanitizer build
     * checks for leaks at exit). */
    la_destroy(&app);
    st_stream_fini(&s);
    xt_assert_no_violations();
}

static void
a_lost_instance_is_reported_and_freed(void **state)
{
    (void)state;
    struct la_app app;
    g_app = &app;
    start(&app, "lost.script", "at 15 instance_lost\n", true, false);
    struct st_stream s = {0};
    struct em_error err = {{0}};
    assert_int_equal(st_stream_load(STREAM, &s, &err), EM_OK);
    XrBodyTrackerFB tracker = make_tracker(&app, XR_BODY_JOINT_SET_DEFAULT_FB);
    XrBodyJointLocationFB joints[FULL];
    XrBodyJointLocationsFB out;
    int k = 0;
    const XrResult r = run_frames(&app, tracker, &s, &k, 30, &out, joints, FB);
    assert_int_equal(r, XR_ERROR_INSTANCE_LOST);
    la_destroy(&app);
    st_stream_fini(&s);
}

static void
calibrates_from_the_headset_and_again_after_a_recenter(void **state)
{
    (void)state;
    struct la_app app;
    g_app = &app;
    char script[1024];
    la_use_layer(
        write_script("calibrate.script", STREAM, "at 300 recenter\n", script, sizeof script));
    unsetenv("EMBODY_LAYER_HEIGHT_M");
    la_create(&app, true, true);
    la_start_session(&app);
    la_pump(&app);
    struct st_stream s = {0};
    struct em_error err = {{0}};
    assert_int_equal(st_stream_load(STREAM, &s, &err), EM_OK);
    XrBodyTrackerFB tracker = make_tracker(&app, XR_BODY_JOINT_SET_FULL_BODY_META);
    XrBodyJointLocationFB joints[FULL];
    XrBodyJointLocationsFB out;
    int k = 0;
    assert_int_equal(run_frames(&app, tracker, &s, &k, 10, &out, joints, FULL), XR_SUCCESS);
    const uint32_t at_start = out.skeletonChangedCount;
    XrBodySkeletonJointFB bones[FULL];
    XrBodySkeletonFB skeleton = {
        .type = XR_TYPE_BODY_SKELETON_FB, .jointCount = FULL, .joints = bones};
    assert_int_equal(app.get_body_skeleton(tracker, &skeleton), XR_SUCCESS);
    const float head_before = bones[XR_BODY_JOINT_HEAD_FB].pose.position.y;
    /* 3 s of standing: calibrated, the skeleton changed, to the stream's own estimate. */
    assert_int_equal(run_frames(&app, tracker, &s, &k, 200, &out, joints, FULL), XR_SUCCESS);
    assert_int_equal(out.skeletonChangedCount, at_start + 1);
    assert_int_equal(app.get_body_skeleton(tracker, &skeleton), XR_SUCCESS);
    float expected_height = 0.0f;
    assert_int_equal(in_height_estimate_file(STREAM, NULL, 0.0f, &expected_height, NULL, &err),
                     EM_OK);
    /* The skeleton scaled from the 1.75 m it started with to the estimate. */
    const float head_after = bones[XR_BODY_JOINT_HEAD_FB].pose.position.y;
    print_message("calibrated: head joint %.3f m -> %.3f m (estimate %.3f m tall)\n",
                  (double)head_before, (double)head_after, (double)expected_height);
    assert_true(fabsf(head_after / head_before - expected_height / 1.75f) < 0.01f);
    /* The player recentres (frame 300): after another 3 s, calibrated again. */
    assert_int_equal(run_frames(&app, tracker, &s, &k, 290, &out, joints, FULL), XR_SUCCESS);
    assert_int_equal(out.skeletonChangedCount, at_start + 2);
    la_destroy(&app);
    st_stream_fini(&s);
    xt_assert_no_violations();
}

static void
only_the_head_and_the_hands_are_tracked_and_only_while_their_devices_are(void **state)
{
    (void)state;
    struct la_app app;
    g_app = &app;
    start(&app, "flags.script", "at 5 flags left 3\n", true, true);
    struct st_stream s = {0};
    struct em_error err = {{0}};
    assert_int_equal(st_stream_load(STREAM, &s, &err), EM_OK);
    XrBodyTrackerFB tracker = make_tracker(&app, XR_BODY_JOINT_SET_FULL_BODY_META);
    XrBodyJointLocationFB joints[FULL];
    XrBodyJointLocationsFB out;
    int k = 0;
    assert_int_equal(run_frames(&app, tracker, &s, &k, 3, &out, joints, FULL), XR_SUCCESS);
    const XrSpaceLocationFlags valid =
        XR_SPACE_LOCATION_ORIENTATION_VALID_BIT | XR_SPACE_LOCATION_POSITION_VALID_BIT;
    const XrSpaceLocationFlags tracked =
        XR_SPACE_LOCATION_ORIENTATION_TRACKED_BIT | XR_SPACE_LOCATION_POSITION_TRACKED_BIT;
    assert_true(out.confidence > 0.99f);
    for (uint32_t i = 0; i < FULL; ++i) {
        const bool device = i == XR_BODY_JOINT_HEAD_FB || i == XR_BODY_JOINT_LEFT_HAND_WRIST_FB ||
                            i == XR_BODY_JOINT_LEFT_HAND_PALM_FB ||
                            i == XR_BODY_JOINT_RIGHT_HAND_WRIST_FB ||
                            i == XR_BODY_JOINT_RIGHT_HAND_PALM_FB;
        assert_int_equal(joints[i].locationFlags & valid, valid);
        assert_int_equal(joints[i].locationFlags & tracked, device ? tracked : 0);
    }
    /* The left controller valid but not tracked from frame 5: its wrist is not TRACKED. */
    assert_int_equal(run_frames(&app, tracker, &s, &k, 5, &out, joints, FULL), XR_SUCCESS);
    assert_int_equal(joints[XR_BODY_JOINT_LEFT_HAND_WRIST_FB].locationFlags & tracked, 0);
    assert_int_equal(joints[XR_BODY_JOINT_RIGHT_HAND_WRIST_FB].locationFlags & tracked, tracked);
    assert_true(out.confidence < 0.7f);
    la_destroy(&app);
    st_stream_fini(&s);
    xt_assert_no_violations();
}

/* Headless sessions and applications in the background never get focus: xrSyncActions
 * answers XR_SESSION_NOT_FOCUSED and the controllers are not located, but the headset is,
 * and the body goes on under it. */
static void
a_session_without_focus_still_gets_a_body_that_follows_the_headset(void **state)
{
    (void)state;
    struct la_app app;
    g_app = &app;
    start(&app, "unfocused.script", "manual_focus\n", true, true);
    assert_int_equal(app.state, XR_SESSION_STATE_VISIBLE);
    struct st_stream s = {0};
    struct em_error err = {{0}};
    assert_int_equal(st_stream_load(STREAM, &s, &err), EM_OK);
    XrBodyTrackerFB tracker = make_tracker(&app, XR_BODY_JOINT_SET_FULL_BODY_META);
    XrBodyJointLocationFB joints[FULL];
    XrBodyJointLocationsFB out;
    double worst_m = 0.0;
    for (int k = 0; k < 240; ++k) {
        assert_int_equal(la_sync(&app), XR_SESSION_NOT_FOCUSED);
        assert_int_equal(locate(&app, tracker, la_time_of(s.frames[k].time_s), joints, FULL, &out),
                         XR_SUCCESS);
        assert_int_equal(out.isActive, XR_TRUE);
        const float *eye = s.frames[k].device[EM_DEVICE_HEAD].pose.position_m;
        const XrVector3f *head = &joints[XR_BODY_JOINT_HEAD_FB].pose.position;
        const double dx = (double)(head->x - eye[0]), dy = (double)(head->y - eye[1]);
        const double dz = (double)(head->z - eye[2]);
        worst_m = fmax(worst_m, sqrt(dx * dx + dy * dy + dz * dz));
    }
    /* The head joint (the skull base) stays where the headset says, 10 to 15 cm away. */
    assert_true(worst_m < 0.2);
    assert_int_equal(joints[XR_BODY_JOINT_HEAD_FB].locationFlags &
                         XR_SPACE_LOCATION_POSITION_TRACKED_BIT,
                     XR_SPACE_LOCATION_POSITION_TRACKED_BIT);
    assert_int_equal(joints[XR_BODY_JOINT_LEFT_HAND_WRIST_FB].locationFlags &
                         XR_SPACE_LOCATION_POSITION_TRACKED_BIT,
                     0);
    assert_true(fabsf(out.confidence - 1.0f / 3.0f) < 1e-6f);
    la_destroy(&app);
    st_stream_fini(&s);
    xt_assert_no_violations();
}

/* Body trackers (XR_HTCX_vive_tracker_interaction), where the runtime has them, feed the
 * body even though the application did not ask for them, and it hears nothing of them. */
static void
body_trackers_the_runtime_offers_hold_their_bones(void **state)
{
    (void)state;
    struct la_app app;
    g_app = &app;
    char script[1024];
    la_use_layer(write_script("trackers.script", STREAM,
                              "tracker waist 0.0 0.95 1.55\ntracker left_foot 0.15 0.08 1.6\n",
                              script, sizeof script));
    setenv("EMBODY_LAYER_HEIGHT_M", HEIGHT, 1);
    la_create(&app, true, true);
    la_start_session(&app);
    la_pump(&app);
    struct st_stream s = {0};
    struct em_error err = {{0}};
    assert_int_equal(st_stream_load(STREAM, &s, &err), EM_OK);
    XrBodyTrackerFB tracker = make_tracker(&app, XR_BODY_JOINT_SET_FULL_BODY_META);
    XrBodyJointLocationFB joints[FULL];
    XrBodyJointLocationsFB out;
    int k = 0;
    assert_int_equal(run_frames(&app, tracker, &s, &k, 60, &out, joints, FULL), XR_SUCCESS);
    const XrSpaceLocationFlags tracked =
        XR_SPACE_LOCATION_ORIENTATION_TRACKED_BIT | XR_SPACE_LOCATION_POSITION_TRACKED_BIT;
    assert_int_equal(joints[XR_BODY_JOINT_HIPS_FB].locationFlags & tracked, tracked);
    assert_int_equal(joints[XR_FULL_BODY_JOINT_LEFT_FOOT_ANKLE_META].locationFlags & tracked,
                     tracked);
    assert_int_equal(joints[XR_FULL_BODY_JOINT_RIGHT_FOOT_ANKLE_META].locationFlags & tracked, 0);
    /* The hips sit on the waist tracker (its mount: 12 cm in front of it, 5 cm lower). */
    const XrVector3f *hips = &joints[XR_BODY_JOINT_HIPS_FB].pose.position;
    const double dx = (double)hips->x, dy = (double)hips->y - 0.95, dz = (double)hips->z - 1.55;
    assert_true(sqrt(dx * dx + dy * dy + dz * dz) < 0.2);
    /* No tracker events reach an application that did not enable the extension. */
    assert_int_equal(app.tracker_events, 0);
    la_destroy(&app);
    st_stream_fini(&s);
    xt_assert_no_violations();
}

/* A runtime without STAGE: the layer's body lives in LOCAL lowered to a floor it places a
 * standing eye height below the headset, then from the headset's standing height. The
 * test runtime's LOCAL origin is 1.6 m above the floor. */
static void
without_stage_the_floor_is_placed_from_the_headset(void **state)
{
    (void)state;
    struct la_app app;
    g_app = &app;
    char script[1024];
    la_use_layer(write_script("local.script", STREAM, "no_stage\nlocal_origin_y 1.6\n", script,
                              sizeof script));
    setenv("EMBODY_LAYER_HEIGHT_M", HEIGHT, 1);
    la_create(&app, true, true);
    app.local_base = true;
    la_start_session(&app);
    la_pump(&app);
    struct st_stream s = {0};
    struct em_error err = {{0}};
    assert_int_equal(st_stream_load(STREAM, &s, &err), EM_OK);
    XrBodyTrackerFB tracker = make_tracker(&app, XR_BODY_JOINT_SET_FULL_BODY_META);
    XrBodyJointLocationFB joints[FULL];
    XrBodyJointLocationsFB out;
    int k = 0;
    double lowest_early = 1e9, lowest_late = 1e9;
    for (int i = 0; i < 400; ++i) {
        assert_int_equal(run_frames(&app, tracker, &s, &k, 1, &out, joints, FULL), XR_SUCCESS);
        const double feet =
            fmin((double)joints[XR_FULL_BODY_JOINT_LEFT_FOOT_BALL_META].pose.position.y,
                 (double)joints[XR_FULL_BODY_JOINT_RIGHT_FOOT_BALL_META].pose.position.y);
        if (i < 150)
            lowest_early = fmin(lowest_early, feet);
        else
            lowest_late = fmin(lowest_late, feet);
    }
    /* The balls of the feet reach the floor, 1.6 m below LOCAL's origin (within the
     * difference between this player's eye height and a 1.70 m one's). */
    print_message("lowest foot in LOCAL: %.3f m (first 150 frames), %.3f m (after)\n", lowest_early,
                  lowest_late);
    assert_true(fabs(lowest_early + 1.6) < 0.12);
    assert_true(fabs(lowest_late + 1.6) < 0.12);
    la_destroy(&app);
    st_stream_fini(&s);
    xt_assert_no_violations();
}

/* The layer's settings file fixes the player's height (no calibration from the headset),
 * and a file it cannot take refuses the instance rather than serving another body. */
static void
the_settings_file_fixes_the_height_and_a_bad_one_is_refused(void **state)
{
    (void)state;
    char script[1024], settings[1024];
    la_use_layer(write_script("settings.script", STREAM, NULL, script, sizeof script));
    unsetenv("EMBODY_LAYER_HEIGHT_M");
    xt_temp_path("layer.json", settings, sizeof settings);
    FILE *f = fopen(settings, "w");
    assert_non_null(f);
    fputs("{\"format\": \"embody-layer\", \"height_m\": 1.7, \"colour\": \"blue\"}\n", f);
    fclose(f);
    setenv("EMBODY_LAYER_SETTINGS", settings, 1);
    const char *ext[] = {XR_MND_HEADLESS_EXTENSION_NAME, XR_FB_BODY_TRACKING_EXTENSION_NAME};
    XrInstanceCreateInfo info = {.type = XR_TYPE_INSTANCE_CREATE_INFO,
                                 .enabledExtensionCount = 2,
                                 .enabledExtensionNames = ext};
    strcpy(info.applicationInfo.applicationName, "embody layer test");
    info.applicationInfo.apiVersion = XR_MAKE_VERSION(1, 0, 0);
    XrInstance instance = XR_NULL_HANDLE;
    assert_int_equal(xrCreateInstance(&info, &instance), XR_ERROR_INITIALIZATION_FAILED);

    f = fopen(settings, "w");
    assert_non_null(f);
    fputs("{\"format\": \"embody-layer\", \"version\": 1, \"height_m\": 1.7}\n", f);
    fclose(f);
    struct la_app app;
    g_app = &app;
    la_create(&app, true, true);
    la_start_session(&app);
    la_pump(&app);
    struct st_stream s = {0};
    struct em_error err = {{0}};
    assert_int_equal(st_stream_load(STREAM, &s, &err), EM_OK);
    XrBodyTrackerFB tracker = make_tracker(&app, XR_BODY_JOINT_SET_FULL_BODY_META);
    XrBodyJointLocationFB joints[FULL];
    XrBodyJointLocationsFB out;
    int k = 0;
    assert_int_equal(run_frames(&app, tracker, &s, &k, 10, &out, joints, FULL), XR_SUCCESS);
    const uint32_t at_start = out.skeletonChangedCount;
    assert_int_equal(run_frames(&app, tracker, &s, &k, 250, &out, joints, FULL), XR_SUCCESS);
    assert_int_equal(out.skeletonChangedCount, at_start);
    /* The same body as EMBODY_LAYER_HEIGHT_M=1.70 gives: embody solve --height 1.70's. */
    XrBodySkeletonJointFB bones[FULL];
    XrBodySkeletonFB skeleton = {
        .type = XR_TYPE_BODY_SKELETON_FB, .jointCount = FULL, .joints = bones};
    assert_int_equal(app.get_body_skeleton(tracker, &skeleton), XR_SUCCESS);
    const float head_file = bones[XR_BODY_JOINT_HEAD_FB].pose.position.y;
    la_destroy(&app);
    unsetenv("EMBODY_LAYER_SETTINGS");
    start(&app, "settings-env.script", NULL, true, true);
    tracker = make_tracker(&app, XR_BODY_JOINT_SET_FULL_BODY_META);
    assert_int_equal(app.get_body_skeleton(tracker, &skeleton), XR_SUCCESS);
    assert_true(fabsf(bones[XR_BODY_JOINT_HEAD_FB].pose.position.y - head_file) < 1e-6f);
    la_destroy(&app);
    st_stream_fini(&s);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(
            layer_serves_the_joints_embody_solve_gives_and_leaves_the_apps_actions_alone, teardown),
        cmocka_unit_test_teardown(
            an_app_that_never_asks_for_body_tracking_sees_the_runtime_unchanged, teardown),
        cmocka_unit_test_teardown(bad_calls_get_the_error_codes_the_specification_names, teardown),
        cmocka_unit_test_teardown(
            trackers_live_through_a_restart_and_go_with_their_session_and_instance, teardown),
        cmocka_unit_test_teardown(a_lost_instance_is_reported_and_freed, teardown),
        cmocka_unit_test_teardown(calibrates_from_the_headset_and_again_after_a_recenter, teardown),
        cmocka_unit_test_teardown(
            only_the_head_and_the_hands_are_tracked_and_only_while_their_devices_are, teardown),
        cmocka_unit_test_teardown(
            a_session_without_focus_still_gets_a_body_that_follows_the_headset, teardown),
        cmocka_unit_test_teardown(body_trackers_the_runtime_offers_hold_their_bones, teardown),
        cmocka_unit_test_teardown(without_stage_the_floor_is_placed_from_the_headset, teardown),
        cmocka_unit_test_teardown(the_settings_file_fixes_the_height_and_a_bad_one_is_refused,
                                  teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
