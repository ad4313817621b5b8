/*
 * The program's OSC output end to end: the real binary replays a stream and sends to
 * Debian's oscdump (tests/osc/oscdump_capture.h), an independent receiver. VMC messages
 * arrive for every humanoid bone of the avatar, VRChat's trackers arrive, and sending to
 * a port where nothing listens neither stalls the run nor warns more than once.
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

#include "app_run.h"
#include "osc/osc.h"
#include "embody/skeleton.h"
#include "embody/stream.h"
#include "oscdump_capture.h"

#define TIMEOUT_MS 60000

static char g_stream[1024];
static const char *const k_env[] = {"XR_RUNTIME_JSON=/nonexistent/runtime.json", NULL};

static void
start_capture(struct oscdump_capture *cap)
{
    char why[256];
    if (!oscdump_start(cap, 0, why, sizeof why))
        fail_msg("oscdump: %s", why);
}

/* Runs the program replaying the stream in real time for `frames` frames with `option`
 * pointed at 127.0.0.1:`port`. */
static void
run_to_port(const char *option, int port, const char *frames, struct app_run_result *r)
{
    char dest[64];
    snprintf(dest, sizeof dest, "127.0.0.1:%d", port);
    app_run((const char *[]){"--replay", g_stream, "--no-window", "--frames", frames, option, dest,
                             NULL},
            k_env, TIMEOUT_MS, r);
    app_run_expect_exit(r, 0);
}

static void
expect_finite_args(const struct oscdump_message *m)
{
    for (int i = 0; i < m->arg_count; ++i)
        if (m->arg[i].type == 'f' && !isfinite(m->arg[i].number))
            fail_msg("%s: argument %d is not finite", m->address, i);
}

static void
vmc_carries_every_bone_of_the_avatar(void **state)
{
    (void)state;
    struct oscdump_capture cap;
    start_capture(&cap);
    struct app_run_result r;
    run_to_port("--vmc", cap.port, "30", &r);
    app_run_expect_text(r.out, "VMC to 127.0.0.1:");
    app_run_result_fini(&r);
    oscdump_poll(&cap, 500);

    /* Every humanoid bone of the default avatar that VMC carries. */
    char humanoid[1024];
    app_run_source_path("config/humanoid.json", humanoid, sizeof humanoid);
    struct sk_skeleton sk;
    struct em_error err = {{0}};
    if (sk_skeleton_load_json(humanoid, &sk, &err) != EM_OK)
        fail_msg("%s", err.message);
    int bones = 0;
    for (int j = 0; j < sk.joint_count; ++j) {
        const char *name = sk.bone[j] == SK_BONE_NONE ? NULL : osc_unity_bone_name(sk.bone[j]);
        if (!name)
            continue;
        bones++;
        const int at = oscdump_find(&cap, 0, "/VMC/Ext/Bone/Pos", name);
        if (at < 0)
            fail_msg("no /VMC/Ext/Bone/Pos for %s among %d messages", name, cap.count);
        assert_string_equal(cap.messages[at].types, "sfffffff");
        expect_finite_args(&cap.messages[at]);
    }
    assert_true(bones >= 20);
    const int root = oscdump_find(&cap, 0, "/VMC/Ext/Root/Pos", "root");
    assert_true(root >= 0);
    assert_true(oscdump_find(&cap, 0, "/VMC/Ext/OK", NULL) >= 0);
    /* The hips of a standing person, in Unity's frame: about a metre up. */
    const int hips = oscdump_find(&cap, 0, "/VMC/Ext/Bone/Pos", "Hips");
    const double hips_y = cap.messages[hips].arg[2].number;
    if (!(hips_y > 0.6 && hips_y < 1.3))
        fail_msg("Hips at y = %g m", hips_y);
    /* About one Hips message per frame sent (UDP on loopback may drop a few). */
    int hips_count = 0;
    for (int i = 0; (i = oscdump_find(&cap, i, "/VMC/Ext/Bone/Pos", "Hips")) >= 0; ++i)
        hips_count++;
    assert_true(hips_count >= 20 && hips_count <= 30);
    sk_skeleton_fini(&sk);
    oscdump_stop(&cap);
}

static void
vrchat_osc_carries_the_trackers_and_the_head(void **state)
{
    (void)state;
    struct oscdump_capture cap;
    start_capture(&cap);
    struct app_run_result r;
    run_to_port("--vrchat-osc", cap.port, "20", &r);
    app_run_result_fini(&r);
    oscdump_poll(&cap, 500);
    for (int slot = 1; slot <= OSC_VRCHAT_BODY_TRACKERS; ++slot) {
        char address[64];
        snprintf(address, sizeof address, "/tracking/trackers/%d/position", slot);
        const int at = oscdump_find(&cap, 0, address, NULL);
        if (at < 0)
            fail_msg("no %s among %d messages", address, cap.count);
        assert_string_equal(cap.messages[at].types, "fff");
        expect_finite_args(&cap.messages[at]);
        snprintf(address, sizeof address, "/tracking/trackers/%d/rotation", slot);
        assert_true(oscdump_find(&cap, 0, address, NULL) >= 0);
    }
    assert_true(oscdump_find(&cap, 0, "/tracking/trackers/head/position", NULL) >= 0);
    oscdump_stop(&cap);
}

static void
vmc_to_a_port_nobody_listens_on_neither_stalls_nor_repeats_warnings(void **state)
{
    (void)state;
    const int port = oscdump_free_udp_port();
    assert_true(port > 0);
    char dest[64];
    snprintf(dest, sizeof dest, "127.0.0.1:%d", port);
    struct app_run_result r;
    app_run((const char *[]){"--demo", "--fast", "--no-window", "--frames", "2000", "--vmc", dest,
                             NULL},
            k_env, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    /* 2000 frames as fast as possible: seconds at most, even in a sanitizer build. */
    if (!(r.seconds < 30.0))
        fail_msg("the run took %.1f s", r.seconds);
    app_run_expect_text(r.out, "2000 frames from the demo");
    if (app_run_count_text(r.err, "warning:") != 1 || !strstr(r.err, dest))
        fail_msg("expected one warning naming %s, got:\n%s", dest, r.err);
    app_run_result_fini(&r);
}

/* A replayed stream with finger columns sends the 30 finger bones over VMC, the left
 * hand's as recorded; one without them sends none (the frames are as they were). */
static void
vmc_carries_the_fingers_a_stream_has(void **state)
{
    (void)state;
    struct st_stream stream = {0};
    struct em_error err = {{0}};
    if (st_stream_load(g_stream, &stream, &err) != EM_OK)
        fail_msg("%s", err.message);
    char with_fingers[1024];
    app_run_scratch_path("osc-fingers", "csv", with_fingers, sizeof with_fingers);
    struct st_stream_writer w;
    if (st_stream_writer_open(with_fingers, &w, &err) != EM_OK)
        fail_msg("%s", err.message);
    struct hd_model model;
    const struct hd_model_desc desc = {.hand = HD_LEFT};
    assert_int_equal(hd_model_init(&desc, &model, NULL), EM_OK);
    const struct hd_curls fist = {{1.0f, 1.0f, 1.0f, 1.0f, 1.0f}, 0.0f};
    struct hd_pose pose;
    hd_pose_from_curls(&model, &fist, &pose);
    struct st_fingers fingers;
    memset(&fingers, 0, sizeof fingers);
    st_fingers_set_pose(&fingers, HD_LEFT, &pose); /* the right hand not known */
    for (int k = 0; k < 60 && k < stream.frame_count; ++k)
        if (st_stream_writer_write_fingers(&w, &stream.frames[k], &fingers, &err) != EM_OK)
            fail_msg("%s", err.message);
    if (st_stream_writer_close(&w, &err) != EM_OK)
        fail_msg("%s", err.message);
    st_stream_fini(&stream);

    struct oscdump_capture cap;
    start_capture(&cap);
    char dest[64];
    snprintf(dest, sizeof dest, "127.0.0.1:%d", cap.port);
    struct app_run_result r;
    app_run((const char *[]){"--replay", with_fingers, "--no-window", "--frames", "30", "--vmc",
                             dest, NULL},
            k_env, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    app_run_result_fini(&r);
    oscdump_poll(&cap, 500);
    for (int i = 0; i < OSC_VMC_FINGER_BONES; ++i) {
        const int at = oscdump_find(&cap, 0, "/VMC/Ext/Bone/Pos", osc_unity_finger_bone_name(i));
        if (at < 0)
            fail_msg("no /VMC/Ext/Bone/Pos for %s", osc_unity_finger_bone_name(i));
        expect_finite_args(&cap.messages[at]);
    }
    /* The left index's middle joint bent (a fist), not the rest pose's identity. */
    const int bent = oscdump_find(&cap, 0, "/VMC/Ext/Bone/Pos", "LeftIndexIntermediate");
    assert_true(fabs(cap.messages[bent].arg[7].number) < 0.95);
    oscdump_stop(&cap);

    start_capture(&cap);
    run_to_port("--vmc", cap.port, "30", &r);
    app_run_result_fini(&r);
    oscdump_poll(&cap, 500);
    assert_true(oscdump_find(&cap, 0, "/VMC/Ext/Bone/Pos", "Hips") >= 0);
    assert_int_equal(oscdump_find(&cap, 0, "/VMC/Ext/Bone/Pos", "LeftIndexIntermediate"), -1);
    oscdump_stop(&cap);
    remove(with_fingers);
}

int
main(int argc, char **argv)
{
    if (!app_run_set_program_from_args(argc, argv))
        return 2;
    app_run_source_path("tests/data/streams/cmu_14_04.csv", g_stream, sizeof g_stream);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(vmc_carries_every_bone_of_the_avatar),
        cmocka_unit_test(vmc_carries_the_fingers_a_stream_has),
        cmocka_unit_test(vrchat_osc_carries_the_trackers_and_the_head),
        cmocka_unit_test(vmc_to_a_port_nobody_listens_on_neither_stalls_nor_repeats_warnings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
