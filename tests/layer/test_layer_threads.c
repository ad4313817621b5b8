/*
 * embody's OpenXR layer under the threads real engines use, through the real Khronos
 * loader over the test runtime (which takes one lock per call, so what is measured here
 * is the layer). Per scenario, for EMBODY_THREADS_SECONDS (default 2) each:
 *
 *   render thread   xrLocateBodyJointsFB at new times (the predicted display time)
 *   main thread     xrSyncActions, xrPollEvent drained (a recentre every 40 frames:
 *                   XrEventDataReferenceSpaceChangePending), xrLocateSpace of a grip
 *   third thread    by scenario: a second tracker located; trackers created, located and
 *                   destroyed; xrGetBodySkeletonFB; the same tracker located
 *
 * and a runtime without STAGE (the layer places the floor itself) with two trackers.
 * Every call must succeed and every active body be finite; the ThreadSanitizer build
 * (-DEMBODY_TSAN=ON) must report nothing. The specification lets an application make
 * these calls from any thread at once (only the destroy calls' handles are externally
 * synchronized).
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "layer_app.h"
#include "xr_test_util.h"

#define STREAM EMBODY_SOURCE_DIR "/tests/data/streams/cmu_05_04.csv"
#define FULL XR_FULL_BODY_JOINT_COUNT_META
#define RECENTRE_EVERY_FRAMES 40
#define RECENTRES 250     /* the runtime takes 256 scripted events */
#define FRAME_NS 11111111 /* 90 Hz */

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

/* ---- What the threads share ------------------------------------------------------------ */

enum third_job {
    THIRD_NONE,
    THIRD_SECOND_TRACKER,
    THIRD_CREATE_DESTROY,
    THIRD_SKELETON,
    THIRD_SAME_TRACKER
};

struct run {
    struct la_app *app;
    XrBodyTrackerFB tracker[2];
    enum third_job job;
    double until_s;         /* CLOCK_MONOTONIC */
    atomic_llong next_time; /* XrTime handed out to locating threads: always new */
    atomic_int calls;
    atomic_int active_bodies;
    atomic_int recentres_seen;
    atomic_int failures;
    pthread_mutex_t first_lock;
    char first_failure[256]; /* the first failure, for the test's message */
};

static double
now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool
running(const struct run *run)
{
    return now_s() < run->until_s && atomic_load(&run->failures) == 0;
}

/* cmocka's asserts must stay on the test's thread: the workers record failures. */
static void failure(struct run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
failure(struct run *run, const char *fmt, ...)
{
    pthread_mutex_lock(&run->first_lock);
    if (atomic_fetch_add(&run->failures, 1) == 0) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(run->first_failure, sizeof run->first_failure, fmt, args);
        va_end(args);
    }
    pthread_mutex_unlock(&run->first_lock);
}

static bool
pose_finite(const XrPosef *p)
{
    return isfinite(p->position.x) && isfinite(p->position.y) && isfinite(p->position.z) &&
           isfinite(p->orientation.x) && isfinite(p->orientation.y) && isfinite(p->orientation.z) &&
           isfinite(p->orientation.w);
}

/* One locate of `tracker` at a new time; a failure or a body that is not finite is
 * recorded. */
static void
locate_once(struct run *run, XrBodyTrackerFB tracker, const char *who)
{
    XrBodyJointLocationFB joints[FULL];
    XrBodyJointLocationsFB out = {
        .type = XR_TYPE_BODY_JOINT_LOCATIONS_FB, .jointCount = FULL, .jointLocations = joints};
    const XrBodyJointsLocateInfoFB info = {.type = XR_TYPE_BODY_JOINTS_LOCATE_INFO_FB,
                                           .baseSpace = run->app->stage,
                                           .time = atomic_fetch_add(&run->next_time, FRAME_NS)};
    const XrResult r = run->app->locate_body_joints(tracker, &info, &out);
    atomic_fetch_add(&run->calls, 1);
    if (r != XR_SUCCESS) {
        failure(run, "%s: xrLocateBodyJointsFB: %d", who, (int)r);
        return;
    }
    if (!out.isActive)
        return;
    atomic_fetch_add(&run->active_bodies, 1);
    for (uint32_t i = 0; i < FULL; ++i)
        if (!pose_finite(&joints[i].pose)) {
            failure(run, "%s: joint %u is not finite", who, i);
            return;
        }
}

/* ---- The threads ---------------------------------------------------------------------- */

static void *
render_thread(void *arg)
{
    struct run *run = arg;
    while (running(run))
        locate_once(run, run->tracker[0], "render thread");
    return NULL;
}

/* The main loop of an engine: sync, events, a space located; about 1000 frames a second (less on a
 * loaded machine), so that the runtime's frames (one per sync) and their recentres come while the
 * render thread works. */
static void *
main_thread(void *arg)
{
    struct run *run = arg;
    const struct timespec pause = {.tv_nsec = 1000000};
    while (running(run)) {
        XrResult r = la_sync(run->app);
        if (r != XR_SUCCESS)
            failure(run, "main thread: xrSyncActions: %d", (int)r);
        for (;;) {
            XrEventDataBuffer ev = {.type = XR_TYPE_EVENT_DATA_BUFFER};
            r = xrPollEvent(run->app->instance, &ev);
            if (r != XR_SUCCESS)
                break;
            if (ev.type == XR_TYPE_EVENT_DATA_REFERENCE_SPACE_CHANGE_PENDING)
                atomic_fetch_add(&run->recentres_seen, 1);
        }
        if (r != XR_EVENT_UNAVAILABLE)
            failure(run, "main thread: xrPollEvent: %d", (int)r);
        XrSpaceLocation grip = {.type = XR_TYPE_SPACE_LOCATION};
        r = xrLocateSpace(run->app->grip_space[0], run->app->stage, atomic_load(&run->next_time),
                          &grip);
        if (r != XR_SUCCESS)
            failure(run, "main thread: xrLocateSpace: %d", (int)r);
        nanosleep(&pause, NULL);
    }
    return NULL;
}

static void
create_destroy_once(struct run *run)
{
    const XrBodyTrackerCreateInfoFB info = {.type = XR_TYPE_BODY_TRACKER_CREATE_INFO_FB,
                                            .bodyJointSet = XR_BODY_JOINT_SET_FULL_BODY_META};
    XrBodyTrackerFB tracker = XR_NULL_HANDLE;
    XrResult r = run->app->create_body_tracker(run->app->session, &info, &tracker);
    if (r != XR_SUCCESS) {
        failure(run, "third thread: xrCreateBodyTrackerFB: %d", (int)r);
        return;
    }
    for (int i = 0; i < 3; ++i)
        locate_once(run, tracker, "third thread (its own tracker)");
    r = run->app->destroy_body_tracker(tracker);
    if (r != XR_SUCCESS)
        failure(run, "third thread: xrDestroyBodyTrackerFB: %d", (int)r);
}

static void
read_skeleton_once(struct run *run)
{
    XrBodySkeletonJointFB bones[FULL];
    XrBodySkeletonFB skeleton = {
        .type = XR_TYPE_BODY_SKELETON_FB, .jointCount = FULL, .joints = bones};
    const XrResult r = run->app->get_body_skeleton(run->tracker[0], &skeleton);
    atomic_fetch_add(&run->calls, 1);
    if (r != XR_SUCCESS) {
        failure(run, "third thread: xrGetBodySkeletonFB: %d", (int)r);
        return;
    }
    for (uint32_t i = 0; i < FULL; ++i)
        if (!pose_finite(&bones[i].pose)) {
            failure(run, "third thread: skeleton joint %u is not finite", i);
            return;
        }
}

static void *
third_thread(void *arg)
{
    struct run *run = arg;
    while (running(run)) {
        switch (run->job) {
        case THIRD_SECOND_TRACKER:
            locate_once(run, run->tracker[1], "third thread (second tracker)");
            break;
        case THIRD_CREATE_DESTROY: create_destroy_once(run); break;
        case THIRD_SKELETON: read_skeleton_once(run); break;
        case THIRD_SAME_TRACKER:
            locate_once(run, run->tracker[0], "third thread (same tracker)");
            break;
        case THIRD_NONE: return NULL;
        }
    }
    return NULL;
}

/* ---- Scenarios ------------------------------------------------------------------------- */

static double
seconds_each(void)
{
    const char *v = getenv("EMBODY_THREADS_SECONDS");
    const double s = v ? atof(v) : 0.0;
    return s > 0.0 ? s : 2.0;
}

static XrBodyTrackerFB
make_tracker(struct la_app *app)
{
    const XrBodyTrackerCreateInfoFB info = {.type = XR_TYPE_BODY_TRACKER_CREATE_INFO_FB,
                                            .bodyJointSet = XR_BODY_JOINT_SET_FULL_BODY_META};
    XrBodyTrackerFB tracker = XR_NULL_HANDLE;
    assert_int_equal(app->create_body_tracker(app->session, &info, &tracker), XR_SUCCESS);
    return tracker;
}

/* A session replaying the stream with a recentre every 40 frames (and `extra`), the
 * player's height left to the layer's calibration (so recentres recalibrate), `job` on the
 * third thread. */
static void
run_scenario(const char *name, const char *extra, bool local_base, enum third_job job)
{
    char script[1024];
    xt_temp_path(name, script, sizeof script);
    FILE *f = fopen(script, "w");
    assert_non_null(f);
    fprintf(f, "poses %s\n%s", STREAM, extra ? extra : "");
    for (int k = 1; k <= RECENTRES; ++k)
        fprintf(f, "at %d recenter\n", k * RECENTRE_EVERY_FRAMES);
    fclose(f);
    la_use_layer(script);
    unsetenv("EMBODY_LAYER_HEIGHT_M");

    struct la_app app;
    g_app = &app;
    la_create(&app, true, true);
    app.local_base = local_base;
    la_start_session(&app);
    la_pump(&app);
    assert_true(app.running);

    struct run run = {.app = &app, .job = job};
    pthread_mutex_init(&run.first_lock, NULL);
    atomic_init(&run.next_time, la_time_of(0.0));
    run.tracker[0] = make_tracker(&app);
    if (job == THIRD_SECOND_TRACKER)
        run.tracker[1] = make_tracker(&app);
    run.until_s = now_s() + seconds_each();

    pthread_t threads[3];
    assert_int_equal(pthread_create(&threads[0], NULL, render_thread, &run), 0);
    assert_int_equal(pthread_create(&threads[1], NULL, main_thread, &run), 0);
    assert_int_equal(pthread_create(&threads[2], NULL, third_thread, &run), 0);
    for (int i = 0; i < 3; ++i)
        pthread_join(threads[i], NULL);
    pthread_mutex_destroy(&run.first_lock);

    print_message("%s: %d calls, %d active bodies, %d recentres, %d failures\n", name,
                  atomic_load(&run.calls), atomic_load(&run.active_bodies),
                  atomic_load(&run.recentres_seen), atomic_load(&run.failures));
    if (atomic_load(&run.failures) > 0)
        fail_msg("%s: %s", name, run.first_failure);
    assert_true(atomic_load(&run.active_bodies) > 0);
    assert_true(atomic_load(&run.recentres_seen) > 0);
    la_destroy(&app);
    g_app = NULL;
    xt_assert_no_violations();
}

static void
render_thread_locates_while_the_main_thread_syncs_polls_recentres_and_locates(void **state)
{
    (void)state;
    run_scenario("threads-main.script", NULL, false, THIRD_NONE);
}

static void
a_second_tracker_is_located_from_a_third_thread(void **state)
{
    (void)state;
    run_scenario("threads-second.script", NULL, false, THIRD_SECOND_TRACKER);
}

static void
trackers_are_created_and_destroyed_meanwhile(void **state)
{
    (void)state;
    run_scenario("threads-create.script", NULL, false, THIRD_CREATE_DESTROY);
}

static void
the_skeleton_is_read_meanwhile(void **state)
{
    (void)state;
    run_scenario("threads-skeleton.script", NULL, false, THIRD_SKELETON);
}

static void
the_same_tracker_is_located_from_two_threads(void **state)
{
    (void)state;
    run_scenario("threads-same.script", NULL, false, THIRD_SAME_TRACKER);
}

/* Without STAGE the layer places the floor (a space of its own, replaced as it learns
 * the floor) while two trackers are located from two threads. */
static void
without_stage_two_trackers_place_the_floor_meanwhile(void **state)
{
    (void)state;
    run_scenario("threads-local.script", "no_stage\nlocal_origin_y 1.6\n", true,
                 THIRD_SECOND_TRACKER);
}

/* Hand tracking (XR_EXT_hand_tracking): the layer's own hand trackers are located and
 * their joints converted at every body update, from two threads, through recentres. */
static void
tracked_hands_are_located_from_two_threads(void **state)
{
    (void)state;
    run_scenario("threads-hands.script", "at 0 hand left fist\nat 0 hand right point\n", false,
                 THIRD_SECOND_TRACKER);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(
            render_thread_locates_while_the_main_thread_syncs_polls_recentres_and_locates,
            teardown),
        cmocka_unit_test_teardown(a_second_tracker_is_located_from_a_third_thread, teardown),
        cmocka_unit_test_teardown(trackers_are_created_and_destroyed_meanwhile, teardown),
        cmocka_unit_test_teardown(the_skeleton_is_read_meanwhile, teardown),
        cmocka_unit_test_teardown(the_same_tracker_is_located_from_two_threads, teardown),
        cmocka_unit_test_teardown(tracked_hands_are_located_from_two_threads, teardown),
        cmocka_unit_test_teardown(without_stage_two_trackers_place_the_floor_meanwhile, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
