/*
 * The OpenXR source against the test runtime, through the real Khronos loader, with a
 * hidden SDL2 window's OpenGL context (the normal mode, headset view included):
 * scripted poses arrive float-exact with the right validity, buttons become events under
 * every suggested controller profile, the session survives stopping, losses of the
 * session and of the runtime, ends on exit, and the headset view submits a valid
 * projection layer drawn through the program's callback.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <epoxy/gl.h>

#include "embody/m_math.h"
#include "xr/xr.h"
#include "xr_test_util.h"

#define MAX_CALLS 2000 /* next() calls allowed for a test's frames (NOT_READY sleeps) */

static const char *const k_simple = "/interaction_profiles/khr/simple_controller";
static const char *const k_index = "/interaction_profiles/valve/index_controller";
static const char *const k_touch = "/interaction_profiles/oculus/touch_controller";

/* What the draw callback saw. */
struct eye_log {
    int calls;
    int calls_per_eye[2];
    int width[2];
    int height[2];
    int bound_framebuffer; /* during the last call */
    mat4 view[2];
    mat4 projection[2];
};

static struct xt_gl g_gl;
static struct in_source *g_src; /* the test's source, destroyed by the teardown */

static void
clear_eye(void *user, const struct oxr_eye_view *eye)
{
    struct eye_log *log = user;
    assert_true(eye->eye == 0 || eye->eye == 1);
    GLint bound = 0;
    glGetIntegerv(GL_FRAMEBUFFER_BINDING, &bound);
    log->bound_framebuffer = bound;
    log->calls++;
    log->calls_per_eye[eye->eye]++;
    log->width[eye->eye] = eye->width;
    log->height[eye->eye] = eye->height;
    memcpy(log->view[eye->eye], eye->view, sizeof(mat4));
    memcpy(log->projection[eye->eye], eye->projection, sizeof(mat4));
    /* Left eye red, right eye green: the runtime reads the colours back. */
    glClearColor(eye->eye == 0 ? 1.0f : 0.0f, eye->eye == 1 ? 1.0f : 0.0f, 0.0f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
}

static struct in_source *
open_source(const char *script, struct eye_log *log, float reconnect_timeout_s)
{
    xt_use_runtime(script);
    const struct oxr_desc desc = {.draw_eye = clear_eye,
                                  .user = log,
                                  .reconnect_timeout_s = reconnect_timeout_s};
    struct em_error err = {{0}};
    struct in_source *src = NULL;
    const enum em_result r = oxr_source_create(&desc, &src, &err);
    if (r != EM_OK)
        fail_msg("oxr_source_create: %s: %s", em_result_string(r), err.message);
    g_src = src;
    assert_true(oxr_source_is_openxr(src));
    assert_string_equal(src->name, "openxr");
    return src;
}

static void
close_source(struct in_source **src)
{
    in_source_destroy(src);
    g_src = NULL;
}

/* After a failed test too: the runtime takes a new script only without an instance. */
static int
destroy_leftover_source(void **state)
{
    (void)state;
    in_source_destroy(&g_src);
    return 0;
}

static void
assert_pose_equal(const struct em_pose *a, const struct em_pose *b, const char *what, int k)
{
    if (!xt_pose_equal(a, b))
        fail_msg("frame %d, %s: got (%.9g %.9g %.9g | %.9g %.9g %.9g %.9g), expected (%.9g %.9g "
                 "%.9g | %.9g %.9g %.9g %.9g)",
                 k, what, (double)a->position_m[0], (double)a->position_m[1],
                 (double)a->position_m[2], (double)a->orientation[0], (double)a->orientation[1],
                 (double)a->orientation[2], (double)a->orientation[3], (double)b->position_m[0],
                 (double)b->position_m[1], (double)b->position_m[2], (double)b->orientation[0],
                 (double)b->orientation[1], (double)b->orientation[2],
                 (double)b->orientation[3]);
}

/* Frame k must carry row k's pose and flags when valid, else the last frame's pose and no
 * flags; hands only from `first_hand_frame` (before that the session had no focus). */
static void
check_frames_against_rows(const struct em_tracking_frame *got, const struct em_tracking_frame *rows,
                          int count, int first_hand_frame)
{
    static const char *const names[] = {"head", "left", "right"};
    for (int k = 0; k < count; ++k) {
        if (fabs(got[k].time_s - (rows[k].time_s - rows[0].time_s)) > 1e-8)
            fail_msg("frame %d: time %.12f s, expected %.12f s", k, got[k].time_s,
                     rows[k].time_s - rows[0].time_s);
        assert_int_equal(got[k].events, 0);
        for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
            const bool served = d == EM_DEVICE_HEAD || k >= first_hand_frame;
            const bool valid = served && em_device_pose_usable(&rows[k].device[d]);
            assert_int_equal(got[k].device[d].flags, valid ? EM_POSE_ALL_VALID : 0u);
            if (valid)
                assert_pose_equal(&got[k].device[d].pose, &rows[k].device[d].pose, names[d], k);
            else if (k > 0)
                assert_pose_equal(&got[k].device[d].pose, &got[k - 1].device[d].pose, names[d],
                                  k);
        }
    }
}

static void
poses_arrive_exactly_as_scripted_with_their_validity(void **state)
{
    (void)state;
    enum { N = 40 };
    struct em_tracking_frame rows[N], got[N];
    xt_make_frames(rows, N, 7);
    for (int k = 10; k < 15; ++k)
        rows[k].device[EM_DEVICE_LEFT_HAND].flags = 0;
    for (int k = 20; k < 23; ++k)
        rows[k].device[EM_DEVICE_RIGHT_HAND].flags = 0;
    rows[30].device[EM_DEVICE_HEAD].flags = 0;
    char script[1024];
    xt_write_script("poses", rows, N, "profile /interaction_profiles/valve/index_controller",
                    script, sizeof script);
    struct eye_log log = {0};
    struct in_source *src = open_source(script, &log, 0.0f);

    assert_int_equal(xt_pull_frames(src, got, N, MAX_CALLS, NULL), N);
    /* Frame 0 comes before the runtime gave focus: no hands yet. */
    check_frames_against_rows(got, rows, N, 1);
    /* A lost hand keeps the last pose it had. */
    assert_pose_equal(&got[14].device[EM_DEVICE_LEFT_HAND].pose,
                      &rows[9].device[EM_DEVICE_LEFT_HAND].pose, "left", 14);

    struct oxr_status status;
    oxr_source_get_status(src, &status);
    assert_string_equal(status.runtime_name, "embody test runtime");
    assert_string_equal(status.session_state, "FOCUSED");
    assert_true(status.running);
    assert_true(status.stage_space);
    assert_false(status.headless);
    assert_string_equal(status.hand_profile[0], k_index);
    assert_string_equal(status.hand_profile[1], k_index);
    assert_int_equal(xt_report()->locates_off_frame_time, 0);
    xt_assert_no_violations();
    close_source(&src);
    assert_null(src);
}

static void
aim_poses_follow_the_grip(void **state)
{
    (void)state;
    enum { N = 6 };
    struct em_tracking_frame rows[N], got[N];
    xt_make_frames(rows, N, 11);
    char script[1024];
    xt_write_script("aim", rows, N, "", script, sizeof script);
    struct eye_log log = {0};
    struct in_source *src = open_source(script, &log, 0.0f);
    assert_int_equal(xt_pull_frames(src, got, N, MAX_CALLS, NULL), N);
    struct oxr_status status;
    oxr_source_get_status(src, &status);
    /* The test runtime's aim pose is the grip moved (0, 0.01, -0.05) m in the grip frame. */
    for (int hand = 0; hand < 2; ++hand) {
        const struct em_pose *grip = &rows[N - 1].device[EM_DEVICE_LEFT_HAND + hand].pose;
        const float offset[3] = {0.0f, 0.01f, -0.05f};
        float expected[3];
        m_quat_rotate(grip->orientation, offset, expected);
        m_vec3_add(grip->position_m, expected, expected);
        assert_int_equal(status.aim[hand].flags, EM_POSE_ALL_VALID);
        for (int i = 0; i < 3; ++i)
            assert_float_equal(status.aim[hand].pose.position_m[i], expected[i], 1e-6);
        for (int i = 0; i < 4; ++i)
            assert_float_equal(status.aim[hand].pose.orientation[i], grip->orientation[i], 1e-6);
    }
    xt_assert_no_violations();
    close_source(&src);
}

static void
partly_valid_poses_keep_what_is_not_valid(void **state)
{
    (void)state;
    enum { N = 16 };
    struct em_tracking_frame rows[N], got[N];
    xt_make_frames(rows, N, 3);
    char script[1024];
    /* 3: both valid, neither tracked; 1: orientation only; 5: orientation valid+tracked */
    xt_write_script("partial", rows, N, "at 5 flags left 3\nat 8 flags right 1\nat 12 flags head 5",
                    script, sizeof script);
    struct eye_log log = {0};
    struct in_source *src = open_source(script, &log, 0.0f);
    assert_int_equal(xt_pull_frames(src, got, N, MAX_CALLS, NULL), N);

    for (int k = 5; k < N; ++k) {
        const struct em_device_pose *left = &got[k].device[EM_DEVICE_LEFT_HAND];
        assert_int_equal(left->flags, EM_POSE_ORIENTATION_VALID | EM_POSE_POSITION_VALID);
        assert_pose_equal(&left->pose, &rows[k].device[EM_DEVICE_LEFT_HAND].pose, "left", k);
    }
    for (int k = 8; k < N; ++k) {
        const struct em_device_pose *right = &got[k].device[EM_DEVICE_RIGHT_HAND];
        const struct em_pose *row = &rows[k].device[EM_DEVICE_RIGHT_HAND].pose;
        assert_int_equal(right->flags, EM_POSE_ORIENTATION_VALID);
        assert_false(em_device_pose_usable(right));
        assert_memory_equal(right->pose.orientation, row->orientation, 4 * sizeof(float));
        /* the position stays where it was last valid */
        assert_memory_equal(right->pose.position_m,
                            rows[7].device[EM_DEVICE_RIGHT_HAND].pose.position_m,
                            3 * sizeof(float));
    }
    for (int k = 12; k < N; ++k) {
        const struct em_device_pose *head = &got[k].device[EM_DEVICE_HEAD];
        assert_int_equal(head->flags, EM_POSE_ORIENTATION_VALID | EM_POSE_ORIENTATION_TRACKED);
        assert_memory_equal(head->pose.position_m, rows[11].device[EM_DEVICE_HEAD].pose.position_m,
                            3 * sizeof(float));
    }
    xt_assert_no_violations();
    close_source(&src);
}

struct profile_case {
    const char *profile;
    const char *calibrate; /* one input bound to calibrate under the profile */
    const char *recenter;
};

static void
buttons_raise_calibrate_and_recenter_under_every_profile(void **state)
{
    (void)state;
    static const struct profile_case cases[] = {
        {"/interaction_profiles/khr/simple_controller", "/user/hand/right/input/select/click",
         "/user/hand/left/input/menu/click"},
        {"/interaction_profiles/valve/index_controller", "/user/hand/right/input/a/click",
         "/user/hand/left/input/b/click"},
        {"/interaction_profiles/oculus/touch_controller", "/user/hand/left/input/x/click",
         "/user/hand/right/input/b/click"},
        {"/interaction_profiles/htc/vive_controller", "/user/hand/left/input/menu/click",
         "/user/hand/right/input/squeeze/click"},
        {"/interaction_profiles/microsoft/motion_controller", "/user/hand/right/input/menu/click",
         "/user/hand/left/input/squeeze/click"},
        {"/interaction_profiles/hp/mixed_reality_controller", "/user/hand/right/input/a/click",
         "/user/hand/left/input/y/click"},
    };
    enum { N = 14 };
    struct em_tracking_frame rows[N], got[N];
    xt_make_frames(rows, N, 5);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        const struct profile_case *pc = &cases[c];
        char text[2048], name[64], script[1024];
        snprintf(text, sizeof text,
                 "profile %s\nat 3 press %s\nat 6 release %s\nat 8 press %s\nat 9 release %s\n"
                 "at 10 press %s\nat 11 release %s",
                 pc->profile, pc->calibrate, pc->calibrate, pc->recenter, pc->recenter,
                 pc->calibrate, pc->calibrate);
        snprintf(name, sizeof name, "buttons%zu", c);
        xt_write_script(name, rows, N, text, script, sizeof script);
        struct eye_log log = {0};
        struct in_source *src = open_source(script, &log, 0.0f);
        assert_int_equal(xt_pull_frames(src, got, N, MAX_CALLS, NULL), N);
        for (int k = 0; k < N; ++k) {
            const uint32_t expected = k == 3 || k == 10 ? EM_EVENT_CALIBRATE
                                      : k == 8         ? EM_EVENT_RECENTER
                                                       : 0u;
            if (got[k].events != expected)
                fail_msg("%s: frame %d: events %u, expected %u", pc->profile, k, got[k].events,
                         expected);
        }
        struct oxr_status status;
        oxr_source_get_status(src, &status);
        assert_string_equal(status.hand_profile[0], pc->profile);
        assert_string_equal(status.hand_profile[1], pc->profile);
        /* All six profiles' bindings were valid (the runtime offers the HP extension). */
        assert_int_equal(status.profiles_accepted, 6);
        assert_int_equal(xt_report()->profiles_accepted_count, 6);
        xt_assert_no_violations();
        close_source(&src);
    }
}

static void
interaction_profile_changes_are_followed(void **state)
{
    (void)state;
    enum { N = 12 };
    struct em_tracking_frame rows[N], got[N];
    xt_make_frames(rows, N, 9);
    char script[1024];
    char text[512];
    snprintf(text, sizeof text,
             "profile %s\nat 5 profile %s\nat 8 press /user/hand/left/input/x/click", k_index,
             k_touch);
    xt_write_script("profile_change", rows, N, text, script, sizeof script);
    struct eye_log log = {0};
    struct in_source *src = open_source(script, &log, 0.0f);
    struct oxr_status status;
    assert_int_equal(xt_pull_frames(src, got, 4, MAX_CALLS, NULL), 4);
    oxr_source_get_status(src, &status);
    assert_string_equal(status.hand_profile[0], k_index);
    assert_int_equal(xt_pull_frames(src, got + 4, N - 4, MAX_CALLS, NULL), N - 4);
    oxr_source_get_status(src, &status);
    assert_string_equal(status.hand_profile[0], k_touch);
    assert_string_equal(status.hand_profile[1], k_touch);
    /* X exists only on the Touch controller: pressing it calibrates after the change. */
    assert_int_equal(got[8].events, EM_EVENT_CALIBRATE);
    xt_assert_no_violations();
    close_source(&src);
}

static void
controllers_without_own_bindings_fall_back_to_simple(void **state)
{
    (void)state;
    enum { N = 8 };
    struct em_tracking_frame rows[N], got[N];
    xt_make_frames(rows, N, 13);
    char script[1024];
    /* The HP profile is not suggested without its extension; the runtime then binds the
     * simple controller's suggestions (its select button calibrates). */
    xt_write_script("fallback_profile", rows, N,
                    "hide_extension XR_EXT_hp_mixed_reality_controller\n"
                    "profile /interaction_profiles/hp/mixed_reality_controller\n"
                    "at 4 press /user/hand/left/input/select/click",
                    script, sizeof script);
    struct eye_log log = {0};
    struct in_source *src = open_source(script, &log, 0.0f);
    assert_int_equal(xt_pull_frames(src, got, N, MAX_CALLS, NULL), N);
    struct oxr_status status;
    oxr_source_get_status(src, &status);
    assert_int_equal(status.profiles_accepted, 5);
    assert_string_equal(status.hand_profile[0], k_simple);
    assert_int_equal(got[4].events, EM_EVENT_CALIBRATE);
    for (int k = 1; k < N; ++k) {
        assert_int_equal(got[k].device[EM_DEVICE_LEFT_HAND].flags, EM_POSE_ALL_VALID);
        assert_pose_equal(&got[k].device[EM_DEVICE_RIGHT_HAND].pose,
                          &rows[k].device[EM_DEVICE_RIGHT_HAND].pose, "right", k);
    }
    xt_assert_no_violations();
    close_source(&src);
}

static void
an_unfocused_session_tracks_the_head_only(void **state)
{
    (void)state;
    enum { N = 16 };
    struct em_tracking_frame rows[N], got[N];
    xt_make_frames(rows, N, 17);
    char script[1024];
    xt_write_script("focus", rows, N, "manual_focus\nat 6 focus\nat 12 unfocus", script,
                    sizeof script);
    struct eye_log log = {0};
    struct in_source *src = open_source(script, &log, 0.0f);
    assert_int_equal(xt_pull_frames(src, got, N, MAX_CALLS, NULL), N);
    for (int k = 0; k < N; ++k) {
        const bool focused = k >= 6 && k < 12;
        assert_int_equal(got[k].device[EM_DEVICE_HEAD].flags, EM_POSE_ALL_VALID);
        assert_int_equal(got[k].device[EM_DEVICE_LEFT_HAND].flags,
                         focused ? EM_POSE_ALL_VALID : 0u);
        assert_int_equal(got[k].device[EM_DEVICE_RIGHT_HAND].flags,
                         focused ? EM_POSE_ALL_VALID : 0u);
    }
    /* VISIBLE still renders: every frame after the first has a layer. */
    assert_int_equal(xt_report()->projection_layers, N - 1);
    xt_assert_no_violations();
    close_source(&src);
}

static void
a_stopped_session_begins_again_when_ready(void **state)
{
    (void)state;
    enum { N = 20 };
    struct em_tracking_frame rows[N], got[N];
    xt_make_frames(rows, N, 19);
    char script[1024];
    xt_write_script("stop", rows, N, "at 5 stop", script, sizeof script);
    struct eye_log log = {0};
    struct in_source *src = open_source(script, &log, 0.0f);
    assert_int_equal(xt_pull_frames(src, got, N, MAX_CALLS, NULL), N);
    const struct tr_report *report = xt_report();
    assert_int_equal(report->sessions_ended, 1);
    assert_int_equal(report->sessions_begun, 2);
    assert_int_equal(report->sessions_created, 1);
    for (int k = 0; k < N; ++k)
        assert_pose_equal(&got[k].device[EM_DEVICE_HEAD].pose, &rows[k].device[EM_DEVICE_HEAD].pose,
                          "head", k);
    xt_assert_no_violations();
    close_source(&src);
}

/* After a loss the frames go on from later rows: each frame is some row, in order. */
static void
check_frames_are_rows_in_order(const struct em_tracking_frame *got, int count,
                               const struct em_tracking_frame *rows, int row_count)
{
    int last_row = -1;
    for (int k = 0; k < count; ++k) {
        const int row = xt_find_row(rows, row_count, &got[k].device[EM_DEVICE_HEAD].pose);
        if (row <= last_row)
            fail_msg("frame %d shows row %d after row %d", k, row, last_row);
        if (k > 0)
            assert_true(got[k].time_s > got[k - 1].time_s);
        last_row = row;
    }
}

static void
run_loss(const char *name, const char *text, bool instance)
{
    enum { N = 20, ROWS = 200 };
    static struct em_tracking_frame rows[ROWS];
    struct em_tracking_frame got[N];
    xt_make_frames(rows, ROWS, 23);
    char script[1024];
    xt_write_script(name, rows, ROWS, text, script, sizeof script);
    struct eye_log log = {0};
    struct in_source *src = open_source(script, &log, 0.0f);
    enum em_result last;
    assert_int_equal(xt_pull_frames(src, got, N, MAX_CALLS, &last), N);
    check_frames_are_rows_in_order(got, N, rows, ROWS);
    struct oxr_status status;
    oxr_source_get_status(src, &status);
    const struct tr_report *report = xt_report();
    assert_int_equal(status.sessions_created, 2);
    assert_int_equal(report->sessions_created, 2);
    assert_int_equal(status.instances_created, instance ? 2 : 1);
    assert_int_equal(report->instances_created, instance ? 2 : 1);
    assert_true(status.running);
    xt_assert_no_violations();
    close_source(&src);
}

static void
a_session_loss_pending_recreates_the_session(void **state)
{
    (void)state;
    run_loss("session_loss", "system_unavailable 2\nat 5 session_loss", false);
}

static void
an_abruptly_lost_session_is_recreated(void **state)
{
    (void)state;
    run_loss("session_lost", "system_unavailable 1\nat 5 session_lost", false);
}

static void
a_lost_runtime_is_reconnected(void **state)
{
    (void)state;
    run_loss("instance_loss", "runtime_unavailable 1\nat 5 instance_loss", true);
}

static void
an_abruptly_lost_runtime_is_reconnected(void **state)
{
    (void)state;
    run_loss("instance_lost", "runtime_unavailable 2\nat 5 instance_lost", true);
}

static void
a_lost_runtime_ends_the_stream_when_told_not_to_wait(void **state)
{
    (void)state;
    enum { N = 10 };
    struct em_tracking_frame rows[N], got[N];
    xt_make_frames(rows, N, 29);
    char script[1024];
    xt_write_script("instance_gone", rows, N, "at 5 instance_lost", script, sizeof script);
    struct eye_log log = {0};
    struct in_source *src = open_source(script, &log, -1.0f);
    enum em_result last;
    assert_int_equal(xt_pull_frames(src, got, N, MAX_CALLS, &last), 5);
    assert_int_equal(last, EM_END_OF_STREAM);
    assert_int_equal(in_source_next(src, got), EM_END_OF_STREAM);
    xt_assert_no_violations();
    close_source(&src);
}

static void
an_exit_request_ends_the_stream(void **state)
{
    (void)state;
    enum { N = 10 };
    struct em_tracking_frame rows[N], got[N];
    xt_make_frames(rows, N, 31);
    char script[1024];
    xt_write_script("exit", rows, N, "at 5 exit", script, sizeof script);
    struct eye_log log = {0};
    struct in_source *src = open_source(script, &log, 0.0f);
    enum em_result last;
    assert_int_equal(xt_pull_frames(src, got, N, MAX_CALLS, &last), 6);
    assert_int_equal(last, EM_END_OF_STREAM);
    assert_int_equal(in_source_next(src, got), EM_END_OF_STREAM);
    struct oxr_status status;
    oxr_source_get_status(src, &status);
    assert_string_equal(status.session_state, "NONE");
    assert_false(status.running);
    /* The session was ended on STOPPING before it was destroyed on EXITING. */
    assert_int_equal(xt_report()->sessions_ended, 1);
    xt_assert_no_violations();
    close_source(&src);
}

/* m * (x, y, z, 1) */
static void
transform(const mat4 m, const float *p, float out[4])
{
    for (int row = 0; row < 4; ++row)
        out[row] = m[0][row] * p[0] + m[1][row] * p[1] + m[2][row] * p[2] + m[3][row];
}

static void
the_headset_view_submits_a_projection_layer(void **state)
{
    (void)state;
    enum { N = 12 };
    struct em_tracking_frame rows[N], got[N];
    xt_make_frames(rows, N, 37);
    char script[1024];
    xt_write_script("view", rows, N, "", script, sizeof script);
    struct eye_log log = {0};
    struct in_source *src = open_source(script, &log, 0.0f);
    assert_int_equal(xt_pull_frames(src, got, N, MAX_CALLS, NULL), N);

    /* The mirror's framebuffer is bound again after the eyes were drawn into theirs. */
    GLint bound = -1;
    glGetIntegerv(GL_FRAMEBUFFER_BINDING, &bound);
    assert_int_equal(bound, 0);
    assert_int_not_equal(log.bound_framebuffer, 0);

    const struct tr_report *report = xt_report();
    /* Frame 0 is not shown yet (READY, not VISIBLE): an empty frame; then one layer each. */
    assert_int_equal(report->frames_ended, N);
    assert_int_equal(report->empty_frames, 1);
    assert_int_equal(report->projection_layers, N - 1);
    assert_int_equal(log.calls_per_eye[0], N - 1);
    assert_int_equal(log.calls_per_eye[1], N - 1);
    assert_int_equal(report->layer.view_count, 2);
    for (int eye = 0; eye < 2; ++eye) {
        assert_int_equal(report->layer.width[eye], log.width[eye]);
        assert_int_equal(report->layer.height[eye], log.height[eye]);
        assert_true(log.width[eye] > 0 && log.height[eye] > 0);
        assert_int_equal(report->layer.format[eye], GL_SRGB8_ALPHA8);
    }
    assert_true(report->layer.views_as_located);
    assert_int_equal(report->locates_off_frame_time, 0);
    /* What the callback drew is in the images the layer shows. */
    const uint8_t red[4] = {255, 0, 0, 255}, green[4] = {0, 255, 0, 255};
    assert_memory_equal(report->layer.center_rgba[0], red, 4);
    assert_memory_equal(report->layer.center_rgba[1], green, 4);

    /* The view matrices put each eye at the origin looking down -Z: the runtime's eyes are
     * 32 mm left and right of the head pose of the last frame. */
    const struct em_pose *head = &rows[N - 1].device[EM_DEVICE_HEAD].pose;
    for (int eye = 0; eye < 2; ++eye) {
        const float side[3] = {eye == 0 ? -0.032f : 0.032f, 0.0f, 0.0f};
        const float forward[3] = {0.0f, 0.0f, -1.0f};
        float eye_pos[3], ahead[3], p[4];
        m_quat_rotate(head->orientation, side, eye_pos);
        m_vec3_add(head->position_m, eye_pos, eye_pos);
        m_quat_rotate(head->orientation, forward, ahead);
        m_vec3_add(eye_pos, ahead, ahead);
        transform(log.view[eye], eye_pos, p);
        for (int i = 0; i < 3; ++i)
            assert_float_equal(p[i], 0.0f, 1e-5);
        transform(log.view[eye], ahead, p);
        assert_float_equal(p[0], 0.0f, 1e-5);
        assert_float_equal(p[1], 0.0f, 1e-5);
        assert_float_equal(p[2], -1.0f, 1e-5);
    }
    xt_assert_no_violations();
    close_source(&src);
}

static void
the_projection_maps_the_field_of_view_to_the_clip_edges(void **state)
{
    (void)state;
    enum { N = 3 };
    struct em_tracking_frame rows[N], got[N];
    xt_make_frames(rows, N, 41);
    char script[1024];
    xt_write_script("projection", rows, N, "", script, sizeof script);
    struct eye_log log = {0};
    struct in_source *src = open_source(script, &log, 0.0f);
    assert_int_equal(xt_pull_frames(src, got, N, MAX_CALLS, NULL), N);
    /* The test runtime's left eye: left -0.90, right 0.80, up 0.85, down -0.95 rad. */
    const float depth = 2.0f;
    const float right_edge[3] = {tanf(0.80f) * depth, 0.0f, -depth};
    const float left_edge[3] = {tanf(-0.90f) * depth, 0.0f, -depth};
    const float top_edge[3] = {0.0f, tanf(0.85f) * depth, -depth};
    const float bottom_edge[3] = {0.0f, tanf(-0.95f) * depth, -depth};
    const float near_point[3] = {0.0f, 0.0f, -0.05f};
    const float far_point[3] = {0.0f, 0.0f, -100.0f};
    float c[4];
    transform(log.projection[0], right_edge, c);
    assert_float_equal(c[0] / c[3], 1.0f, 1e-5);
    transform(log.projection[0], left_edge, c);
    assert_float_equal(c[0] / c[3], -1.0f, 1e-5);
    transform(log.projection[0], top_edge, c);
    assert_float_equal(c[1] / c[3], 1.0f, 1e-5);
    transform(log.projection[0], bottom_edge, c);
    assert_float_equal(c[1] / c[3], -1.0f, 1e-5);
    transform(log.projection[0], near_point, c);
    assert_float_equal(c[2] / c[3], -1.0f, 1e-4);
    transform(log.projection[0], far_point, c);
    assert_float_equal(c[2] / c[3], 1.0f, 1e-4);
    xt_assert_no_violations();
    close_source(&src);
}

static void
no_layer_is_shown_while_the_head_is_lost(void **state)
{
    (void)state;
    enum { N = 10 };
    struct em_tracking_frame rows[N], got[N];
    xt_make_frames(rows, N, 43);
    for (int k = 5; k < 8; ++k)
        rows[k].device[EM_DEVICE_HEAD].flags = 0;
    char script[1024];
    xt_write_script("head_lost", rows, N, "", script, sizeof script);
    struct eye_log log = {0};
    struct in_source *src = open_source(script, &log, 0.0f);
    assert_int_equal(xt_pull_frames(src, got, N, MAX_CALLS, NULL), N);
    const struct tr_report *report = xt_report();
    assert_int_equal(report->empty_frames, 1 + 3);
    assert_int_equal(report->projection_layers, N - 4);
    assert_int_equal(log.calls_per_eye[0], N - 4);
    xt_assert_no_violations();
    close_source(&src);
}

static int
open_window(void **state)
{
    (void)state;
    xt_gl_open(&g_gl);
    return 0;
}

static int
close_window(void **state)
{
    (void)state;
    xt_gl_close(&g_gl);
    return 0;
}

#define XT_TEST(test) cmocka_unit_test_teardown(test, destroy_leftover_source)

int
main(int argc, char **argv)
{
    xt_ensure_display(argc, argv);
    const struct CMUnitTest tests[] = {
        XT_TEST(poses_arrive_exactly_as_scripted_with_their_validity),
        XT_TEST(aim_poses_follow_the_grip),
        XT_TEST(partly_valid_poses_keep_what_is_not_valid),
        XT_TEST(buttons_raise_calibrate_and_recenter_under_every_profile),
        XT_TEST(interaction_profile_changes_are_followed),
        XT_TEST(controllers_without_own_bindings_fall_back_to_simple),
        XT_TEST(an_unfocused_session_tracks_the_head_only),
        XT_TEST(a_stopped_session_begins_again_when_ready),
        XT_TEST(a_session_loss_pending_recreates_the_session),
        XT_TEST(an_abruptly_lost_session_is_recreated),
        XT_TEST(a_lost_runtime_is_reconnected),
        XT_TEST(an_abruptly_lost_runtime_is_reconnected),
        XT_TEST(a_lost_runtime_ends_the_stream_when_told_not_to_wait),
        XT_TEST(an_exit_request_ends_the_stream),
        XT_TEST(the_headset_view_submits_a_projection_layer),
        XT_TEST(the_projection_maps_the_field_of_view_to_the_clip_edges),
        XT_TEST(no_layer_is_shown_while_the_head_is_lost),
    };
    return cmocka_run_group_tests(tests, open_window, close_window);
}
