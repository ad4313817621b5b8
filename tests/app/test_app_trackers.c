/*
 * Body trackers in the program, run as the real binary: `embody mocap2stream --trackers`
 * reproduces the reference tracker stream, tracker columns survive --replay and --record
 * unchanged, a bad setup is refused by name, and `embody eval --trackers` runs the setups.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app_run.h"
#include "vmc_sender.h"
#include "embody/m_math.h"
#include "osc/osc.h"
#include "embody/stream.h"

/* A hang guard: a sanitizer build runs eval's probes of every clip in 80 s alone, and
 * twice that beside another test on two cores. */
#define TIMEOUT_MS 300000

static char g_tracker_stream[1024]; /* tests/data/streams-trackers/cmu_127_17.csv */
static char g_clip[1024];           /* tests/data/mocap/cmu_127_17.bvh */

static void
run_ok(const char *const *args, struct app_run_result *r)
{
    app_run(args, (const char *const[]){"XR_RUNTIME_JSON=/nonexistent/runtime.json", NULL},
            TIMEOUT_MS, r);
    app_run_expect_exit(r, 0);
}

static void
load_stream(const char *path, struct st_stream *out)
{
    struct em_error err = {{0}};
    if (st_stream_load(path, out, &err) != EM_OK)
        fail_msg("%s", err.message);
}

static bool
same_pose(const struct em_device_pose *x, const struct em_device_pose *y)
{
    return memcmp(x->pose.position_m, y->pose.position_m, sizeof(vec3)) == 0 &&
           memcmp(x->pose.orientation, y->pose.orientation, sizeof(versor)) == 0 &&
           x->flags == y->flags;
}

static void
mocap2stream_with_trackers_reproduces_the_reference(void **state)
{
    (void)state;
    char out[1024];
    app_run_scratch_path("trackers-11", "csv", out, sizeof out);
    struct app_run_result r;
    run_ok((const char *[]){"mocap2stream", g_clip, "--trackers", "11", "-o", out, "-q", NULL}, &r);
    app_run_result_fini(&r);
    struct st_stream made, reference;
    load_stream(out, &made);
    load_stream(g_tracker_stream, &reference);
    assert_int_equal(made.frame_count, reference.frame_count);
    double worst = 0.0;
    for (int i = 0; i < made.frame_count; ++i) {
        assert_int_equal(made.frames[i].tracker_present, EM_TRACKER_ALL);
        for (int t = 0; t < EM_TRACKER_COUNT; ++t)
            for (int k = 0; k < 3; ++k)
                worst =
                    fmax(worst, fabs((double)made.frames[i].tracker[t].pose.position_m[k] -
                                     (double)reference.frames[i].tracker[t].pose.position_m[k]));
    }
    if (!(worst <= 1e-5))
        fail_msg("tracker positions differ from the reference by %g m", worst);
    st_stream_fini(&made);
    st_stream_fini(&reference);

    /* A named subset writes only its groups. */
    run_ok((const char *[]){"mocap2stream", g_clip, "--trackers", "pelvis,chest", "-o", out, "-q",
                            NULL},
           &r);
    app_run_result_fini(&r);
    size_t size;
    char *text = app_run_read_file(out, &size);
    app_run_expect_text(text, "right_valid,pelvis_px");
    app_run_expect_text(text, "pelvis_valid,chest_px");
    assert_null(strstr(text, "left_foot"));
    free(text);
    remove(out);
}

static void
mocap2stream_refuses_an_unknown_tracker_setup(void **state)
{
    (void)state;
    struct app_run_result r;
    app_run((const char *[]){"mocap2stream", g_clip, "--trackers", "pelvis,tail", NULL}, NULL,
            TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 2);
    app_run_expect_text(r.err, "--trackers");
    app_run_expect_text(r.err, "\"tail\"");
    app_run_result_fini(&r);
}

static void
tracker_columns_round_trip_through_replay_and_record(void **state)
{
    (void)state;
    char b[1024];
    app_run_scratch_path("trackers-record", "csv", b, sizeof b);
    struct app_run_result r;
    run_ok((const char *[]){"--replay", g_tracker_stream, "--fast", "--no-window", "--record", b,
                            NULL},
           &r);
    app_run_result_fini(&r);
    struct st_stream sa, sb;
    load_stream(g_tracker_stream, &sa);
    load_stream(b, &sb);
    assert_int_equal(sa.frame_count, sb.frame_count);
    for (int i = 0; i < sa.frame_count; ++i) {
        assert_int_equal(sb.frames[i].tracker_present, EM_TRACKER_ALL);
        for (int t = 0; t < EM_TRACKER_COUNT; ++t)
            if (!same_pose(&sa.frames[i].tracker[t], &sb.frames[i].tracker[t]))
                fail_msg("row %d, %s: the recorded tracker differs from the file's", i + 2,
                         em_tracker_name((enum em_tracker)t));
    }
    st_stream_fini(&sa);
    st_stream_fini(&sb);
    remove(b);
}

static void
eval_runs_every_tracker_setup_and_checks_its_option(void **state)
{
    (void)state;
    char dir[1024];
    app_run_source_path("tests/data/mocap", dir, sizeof dir);
    struct app_run_result r;
    /* Two clips (subject 91) and 60 rows each: every setup of `all` runs the learned prior
     * and the per-clip probes (turn in place, recovery), which take minutes over all 15
     * clips in the sanitizer build. */
    run_ok((const char *[]){"eval", dir, "--trackers", "6", "--frames", "60", "--subjects",
                            "91", "--json", "-", "--quiet", NULL},
           &r);
    app_run_expect_text(r.out, "Body trackers: setup 6");
    app_run_result_fini(&r);
    run_ok((const char *[]){"eval", dir, "--trackers", "all", "--frames", "60", "--subjects",
                            "91", "--quiet", NULL},
           &r);
    const char *rows[] = {"|     3 | known body",  "|     4 | known body",
                          "|     6 | height only", "|     8 | known body",
                          "|    11 | height only", "11-point: body_update median"};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i)
        app_run_expect_text(r.out, rows[i]);
    app_run_result_fini(&r);
    app_run((const char *[]){"eval", dir, "--trackers", "5", NULL}, NULL, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 2);
    app_run_expect_text(r.err, "--trackers");
    app_run_result_fini(&r);
}

/* In a child process: sends VMC frames (headset, hands, a pelvis tracker) to `port` every
 * 10 ms for 8 s, with embody's own VMC output. */
static pid_t
start_vmc_sender(int port)
{
    struct em_tracking_frame f;
    memset(&f, 0, sizeof f);
    for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
        m_vec3_set(f.device[d].pose.position_m, d == 0 ? 0.0f : (d == 1 ? 0.3f : -0.3f),
                   d == 0 ? 1.65f : 1.0f, 0.1f);
        m_quat_identity(f.device[d].pose.orientation);
        f.device[d].flags = EM_POSE_ALL_VALID;
    }
    f.tracker_present = EM_TRACKER_BIT(EM_TRACKER_PELVIS);
    m_vec3_set(f.tracker[EM_TRACKER_PELVIS].pose.position_m, 0.0f, 1.0f, -0.1f);
    m_quat_identity(f.tracker[EM_TRACKER_PELVIS].pose.orientation);
    f.tracker[EM_TRACKER_PELVIS].flags = EM_POSE_ALL_VALID;
    return vmc_sender_start(port, &f, 800);
}

static void
vmc_input_drives_the_body_and_records_every_tracker_column(void **state)
{
    (void)state;
    const int port = 43000 + (int)(getpid() % 2000);
    char port_text[16], out[1024];
    snprintf(port_text, sizeof port_text, "%d", port);
    app_run_scratch_path("vmc-record", "csv", out, sizeof out);
    const pid_t sender = start_vmc_sender(port);
    struct app_run_result r;
    run_ok((const char *[]){"--vmc-in", port_text, "--no-window", "--frames", "40", "--record", out,
                            NULL},
           &r);
    kill(sender, SIGTERM);
    waitpid(sender, NULL, 0);
    app_run_expect_text(r.err, "reading VMC tracking on UDP port");
    app_run_result_fini(&r);
    struct st_stream s;
    load_stream(out, &s);
    assert_true(s.frame_count >= 30);
    /* Every tracker's columns from the first row (trackers may come later), the pelvis
     * tracked, the others not. */
    const struct em_tracking_frame *last = &s.frames[s.frame_count - 1];
    assert_int_equal(last->tracker_present, EM_TRACKER_ALL);
    assert_int_equal(last->tracker[EM_TRACKER_PELVIS].flags, EM_POSE_ALL_VALID);
    assert_true(last->tracker[EM_TRACKER_PELVIS].pose.position_m[2] == -0.1f);
    assert_int_equal(last->tracker[EM_TRACKER_CHEST].flags, 0u);
    assert_int_equal(last->device[EM_DEVICE_HEAD].flags, EM_POSE_ALL_VALID);
    st_stream_fini(&s);
    remove(out);
}

int
main(int argc, char **argv)
{
    if (!app_run_set_program_from_args(argc, argv))
        return 2;
    app_run_source_path("tests/data/streams-trackers/cmu_127_17.csv", g_tracker_stream,
                        sizeof g_tracker_stream);
    app_run_source_path("tests/data/mocap/cmu_127_17.bvh", g_clip, sizeof g_clip);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mocap2stream_with_trackers_reproduces_the_reference),
        cmocka_unit_test(mocap2stream_refuses_an_unknown_tracker_setup),
        cmocka_unit_test(tracker_columns_round_trip_through_replay_and_record),
        cmocka_unit_test(eval_runs_every_tracker_setup_and_checks_its_option),
        cmocka_unit_test(vmc_input_drives_the_body_and_records_every_tracker_column),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
