/*
 * Out module tests against a real receiver this project did not write: Debian's oscdump
 * (liblo-tools) listening on loopback. What it prints is parsed back and checked: the
 * message names, the full bone set, the type tags, and values that convert back to the
 * pose. And a destination where nothing listens: no stall, one warning.
 */
#include <errno.h>
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

#include "embody/m_math.h"
#include "oscdump_capture.h"
#include "test_osc.h"
#include "test_osc_support.h"

#define WAIT_MS 5000

static double
now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void
sleep_ms(int ms)
{
    const struct timespec t = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* The capture lives in the fixture so that a failing test still stops oscdump. */
int
start_capture_fixture(void **state)
{
    struct oscdump_capture *cap = calloc(1, sizeof *cap);
    if (!cap)
        return -1;
    cap->pid = -1;
    cap->out_fd = -1;
    *state = cap;
    return 0;
}

int
stop_capture_fixture(void **state)
{
    struct oscdump_capture *cap = *state;
    oscdump_stop(cap);
    free(cap);
    return 0;
}

static void
start_oscdump(struct oscdump_capture *cap, int port)
{
    char why[256];
    if (!oscdump_start(cap, port, why, sizeof why))
        fail_msg("cannot start oscdump: %s", why);
}

static struct osc_sender *
open_sender(enum osc_protocol protocol, int port)
{
    struct osc_sender *s = NULL;
    struct em_error err = {{0}};
    if (osc_sender_create(protocol, "127.0.0.1", port, &s, &err) != EM_OK)
        fail_msg("%s", err.message);
    return s;
}

static void
wait_for(struct oscdump_capture *cap, int count)
{
    if (!oscdump_wait_for_count(cap, count, WAIT_MS))
        fail_msg("oscdump received %d messages, expected %d (unparsed lines: %d, last: %s)",
                 cap->count, count, cap->unparsed_lines, cap->last_unparsed);
}

static const struct oscdump_message *
only_message(const struct oscdump_capture *cap, const char *address, const char *types)
{
    const int i = oscdump_find(cap, 0, address, NULL);
    if (i < 0)
        fail_msg("no %s message", address);
    if (oscdump_find(cap, i + 1, address, NULL) >= 0)
        fail_msg("more than one %s message in a frame", address);
    const struct oscdump_message *m = &cap->messages[i];
    if (strcmp(m->types, types) != 0)
        fail_msg("%s has type tags \"%s\", expected \"%s\"", address, m->types, types);
    return m;
}

static void
pose_from_message(const struct oscdump_message *m, struct osc_unity_pose *out)
{
    for (int k = 0; k < 3; ++k)
        out->position_m[k] = (float)m->arg[1 + k].number;
    for (int k = 0; k < 4; ++k)
        out->rotation[k] = (float)m->arg[4 + k].number;
}

/* Rebuilds a VMC frame from what oscdump printed, checking names and type tags. */
static void
vmc_frame_from_capture(const struct oscdump_capture *cap, struct osc_vmc_frame *f)
{
    memset(f, 0, sizeof *f);
    const struct oscdump_message *ok = only_message(cap, "/VMC/Ext/OK", "i");
    assert_int_equal((int)ok->arg[0].number, 1);
    f->time_s = (float)only_message(cap, "/VMC/Ext/T", "f")->arg[0].number;
    const struct oscdump_message *root = only_message(cap, "/VMC/Ext/Root/Pos", "sfffffff");
    assert_string_equal(root->arg[0].text, "root");
    pose_from_message(root, &f->root);
    for (int i = 0; i < cap->count; ++i) {
        const struct oscdump_message *m = &cap->messages[i];
        if (strcmp(m->address, "/VMC/Ext/Bone/Pos") != 0) {
            if (strcmp(m->address, "/VMC/Ext/OK") != 0 && strcmp(m->address, "/VMC/Ext/T") != 0 &&
                strcmp(m->address, "/VMC/Ext/Root/Pos") != 0)
                fail_msg("unexpected message %s", m->address);
            continue;
        }
        if (strcmp(m->types, "sfffffff") != 0)
            fail_msg("/VMC/Ext/Bone/Pos has type tags \"%s\"", m->types);
        /* Unity name -> VRM bone through the test's own table. */
        enum sk_bone bone = SK_BONE_NONE;
        for (int b = 0; b < SK_BONE_COUNT; ++b) {
            const char *unity = ref_unity_name_of_vrm(sk_bone_name((enum sk_bone)b));
            if (unity && strcmp(unity, m->arg[0].text) == 0)
                bone = (enum sk_bone)b;
        }
        if (bone == SK_BONE_NONE)
            fail_msg("bone name \"%s\" is not a Unity humanoid bone", m->arg[0].text);
        for (int k = 0; k < f->bone_count; ++k)
            if (f->bone[k] == bone)
                fail_msg("bone %s sent twice in a frame", m->arg[0].text);
        f->bone[f->bone_count] = bone;
        pose_from_message(m, &f->bone_local[f->bone_count]);
        ++f->bone_count;
    }
}

void
vmc_stream_reaches_oscdump_with_every_bone(void **state)
{
    struct oscdump_capture *cap = *state;
    start_oscdump(cap, 0);
    struct sk_skeleton sk;
    struct sk_pose pose;
    load_humanoid(&sk);
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    int humanoid_bones = 0;
    for (int j = 0; j < sk.joint_count; ++j)
        humanoid_bones += ref_unity_name_of_vrm(sk.name[j]) != NULL;
    struct osc_sender *s = open_sender(OSC_PROTOCOL_VMC, cap->port);

    const double times[3] = {100.0, 100.5, 101.25};
    for (int frame = 0; frame < 3; ++frame) {
        oscdump_clear(cap);
        make_random_pose(&sk, 11u + (uint32_t)frame, &pose);
        osc_sender_send(s, &sk, &pose, times[frame]);
        wait_for(cap, 3 + humanoid_bones);
        oscdump_poll(cap, 50); /* anything extra would show up now */
        assert_int_equal(cap->count, 3 + humanoid_bones);
        assert_int_equal(cap->unparsed_lines, 0);

        struct osc_vmc_frame f;
        vmc_frame_from_capture(cap, &f);
        assert_int_equal(f.bone_count, humanoid_bones); /* every bone, once */
        assert_float_equal(f.time_s, (times[frame] - times[0]), 1e-6);
        /* Printed with 6 decimals: locals within 3e-6, composed chains within 2e-5. */
        check_vmc_values_against_pose(&sk, &pose, &f, 3e-6, 2e-5);
    }
    struct osc_sender_stats st;
    osc_sender_get_stats(s, &st);
    assert_int_equal(st.frames, 3);
    assert_int_equal(st.datagrams_failed, 0);
    assert_true(st.datagrams_sent >= 3 && st.datagrams_sent <= 9); /* one to three bundles */
    assert_int_equal(st.warnings, 0);
    osc_sender_destroy(&s);
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
}

/* Unity's HumanBodyBones finger bones, in the hand module's order (left hand, then right;
 * thumb, index, middle, ring, little; three each), written from Unity's documentation. */
static const char *const unity_finger_names[OSC_VMC_FINGER_BONES] = {
    "LeftThumbProximal",    "LeftThumbIntermediate",  "LeftThumbDistal",
    "LeftIndexProximal",    "LeftIndexIntermediate",  "LeftIndexDistal",
    "LeftMiddleProximal",   "LeftMiddleIntermediate", "LeftMiddleDistal",
    "LeftRingProximal",     "LeftRingIntermediate",   "LeftRingDistal",
    "LeftLittleProximal",   "LeftLittleIntermediate", "LeftLittleDistal",
    "RightThumbProximal",   "RightThumbIntermediate", "RightThumbDistal",
    "RightIndexProximal",   "RightIndexIntermediate", "RightIndexDistal",
    "RightMiddleProximal",  "RightMiddleIntermediate", "RightMiddleDistal",
    "RightRingProximal",    "RightRingIntermediate",  "RightRingDistal",
    "RightLittleProximal",  "RightLittleIntermediate", "RightLittleDistal",
};

/* Left hand pointing, right hand a fist: the fingers as our humanoid's bones. */
static void
make_fingers(float (*rotation)[4], float (*offset_m)[3])
{
    static const struct hd_curls curls[HD_HAND_COUNT] = {
        {{0.5f, 0.0f, 1.0f, 1.0f, 1.0f}, 0.0f}, {{1.0f, 1.0f, 1.0f, 1.0f, 1.0f}, 0.0f}};
    for (int h = 0; h < HD_HAND_COUNT; ++h) {
        struct hd_model model;
        struct hd_pose pose;
        struct em_error err = {{0}};
        const struct hd_model_desc desc = {.hand = (enum hd_hand)h};
        if (hd_model_init(&desc, &model, &err) != EM_OK)
            fail_msg("%s", err.message);
        hd_pose_from_curls(&model, &curls[h], &pose);
        hd_pose_humanoid_locals(&model, &pose, rotation + h * HD_JOINT_COUNT,
                                offset_m + h * HD_JOINT_COUNT);
    }
}

void
vmc_stream_carries_the_thirty_finger_bones_when_given(void **state)
{
    struct oscdump_capture *cap = *state;
    start_oscdump(cap, 0);
    struct sk_skeleton sk;
    struct sk_pose pose;
    load_humanoid(&sk);
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    make_random_pose(&sk, 21u, &pose);
    int humanoid_bones = 0;
    for (int j = 0; j < sk.joint_count; ++j)
        humanoid_bones += ref_unity_name_of_vrm(sk.name[j]) != NULL;
    struct osc_sender *s = open_sender(OSC_PROTOCOL_VMC, cap->port);
    float rotation[OSC_VMC_FINGER_BONES][4], offset_m[OSC_VMC_FINGER_BONES][3];
    make_fingers(rotation, offset_m);

    osc_sender_set_fingers(s, (const float(*)[4])rotation, (const float(*)[3])offset_m);
    osc_sender_send(s, &sk, &pose, 3.0);
    wait_for(cap, 3 + humanoid_bones + OSC_VMC_FINGER_BONES);
    oscdump_poll(cap, 50);
    assert_int_equal(cap->count, 3 + humanoid_bones + OSC_VMC_FINGER_BONES);
    assert_int_equal(cap->unparsed_lines, 0);
    double largest_turn = 0.0;
    for (int i = 0; i < OSC_VMC_FINGER_BONES; ++i) {
        const int at = oscdump_find(cap, 0, "/VMC/Ext/Bone/Pos", unity_finger_names[i]);
        if (at < 0)
            fail_msg("no /VMC/Ext/Bone/Pos \"%s\"", unity_finger_names[i]);
        if (oscdump_find(cap, at + 1, "/VMC/Ext/Bone/Pos", unity_finger_names[i]) >= 0)
            fail_msg("%s sent twice in a frame", unity_finger_names[i]);
        const struct oscdump_message *m = &cap->messages[at];
        assert_string_equal(m->types, "sfffffff");
        struct osc_unity_pose got;
        pose_from_message(m, &got);
        /* The derivation's local conversion, N L N and N v, from the values given. */
        double ours[3][3], expect[3][3], received[3][3], v[3];
        ref_mat_from_quat(rotation[i], ours);
        ref_conjugate(REF_N, ours, expect);
        ref_mat_from_quat(got.rotation, received);
        if (ref_mat_max_diff(expect, received) > 2e-5)
            fail_msg("%s: rotation off by %.2g", unity_finger_names[i],
                     ref_mat_max_diff(expect, received));
        const double offset[3] = {(double)offset_m[i][0], (double)offset_m[i][1],
                                  (double)offset_m[i][2]};
        ref_mat_vec(REF_N, offset, v);
        for (int k = 0; k < 3; ++k)
            assert_float_equal(got.position_m[k], v[k], 3e-6);
        largest_turn = fmax(largest_turn, acos(fmin(1.0, fabs((double)got.rotation[3]))) * 2.0);
    }
    assert_true(largest_turn > 1.0); /* the fist's joints turn by more than a radian */

    /* The next frame, given no fingers, is what a frame always was. */
    oscdump_clear(cap);
    osc_sender_send(s, &sk, &pose, 3.5);
    wait_for(cap, 3 + humanoid_bones);
    oscdump_poll(cap, 50);
    assert_int_equal(cap->count, 3 + humanoid_bones);
    assert_int_equal(oscdump_find(cap, 0, "/VMC/Ext/Bone/Pos", "LeftThumbProximal"), -1);
    osc_sender_destroy(&s);
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
}

static void
check_vrchat_capture(const struct oscdump_capture *cap, const struct sk_skeleton *sk,
                     const struct sk_pose *pose)
{
    static const char *const trackers[] = {
        "/tracking/trackers/1", "/tracking/trackers/2", "/tracking/trackers/3",
        "/tracking/trackers/4", "/tracking/trackers/5", "/tracking/trackers/6",
        "/tracking/trackers/7", "/tracking/trackers/8", "/tracking/trackers/head",
    };
    for (size_t t = 0; t < sizeof trackers / sizeof trackers[0]; ++t) {
        char position[64], rotation[64];
        snprintf(position, sizeof position, "%s/position", trackers[t]);
        snprintf(rotation, sizeof rotation, "%s/rotation", trackers[t]);
        const struct oscdump_message *p = only_message(cap, position, "fff");
        const struct oscdump_message *r = only_message(cap, rotation, "fff");
        const float pv[3] = {(float)p->arg[0].number, (float)p->arg[1].number,
                             (float)p->arg[2].number};
        const float rv[3] = {(float)r->arg[0].number, (float)r->arg[1].number,
                             (float)r->arg[2].number};
        if (sk)
            check_vrchat_values_against_pose(sk, pose, trackers[t], pv, rv, 2e-6);
    }
}

void
vrchat_stream_reaches_oscdump_as_nine_trackers(void **state)
{
    struct oscdump_capture *cap = *state;
    start_oscdump(cap, 0);
    struct sk_skeleton sk;
    struct sk_pose pose;
    load_humanoid(&sk);
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    struct osc_sender *s = open_sender(OSC_PROTOCOL_VRCHAT, cap->port);

    for (int frame = 0; frame < 3; ++frame) {
        oscdump_clear(cap);
        make_random_pose(&sk, 21u + (uint32_t)frame, &pose);
        osc_sender_send(s, &sk, &pose, 10.0 + frame);
        wait_for(cap, 18);
        oscdump_poll(cap, 50);
        assert_int_equal(cap->count, 18); /* 9 addresses x position and rotation */
        assert_int_equal(cap->unparsed_lines, 0);
        check_vrchat_capture(cap, &sk, &pose);
    }

    /* With the headset given, the head is the headset, for that frame only. */
    struct em_device_pose headset = {.flags = EM_POSE_ALL_VALID};
    m_quat_identity(headset.pose.orientation);
    m_vec3_set(headset.pose.position_m, 0.25f, 1.7f, -0.5f);
    oscdump_clear(cap);
    osc_sender_set_headset(s, &headset);
    osc_sender_send(s, &sk, &pose, 20.0);
    wait_for(cap, 18);
    check_vrchat_capture(cap, NULL, NULL);
    const struct oscdump_message *hp = only_message(cap, "/tracking/trackers/head/position", "fff");
    assert_float_equal(hp->arg[0].number, 0.25, 1e-6);
    assert_float_equal(hp->arg[1].number, 1.7, 1e-6);
    assert_float_equal(hp->arg[2].number, 0.5, 1e-6); /* Unity's +Z is ahead */
    const struct oscdump_message *hr = only_message(cap, "/tracking/trackers/head/rotation", "fff");
    for (int k = 0; k < 3; ++k)
        assert_float_equal(hr->arg[k].number, 0.0, 1e-6); /* looking ahead */
    oscdump_clear(cap);
    osc_sender_send(s, &sk, &pose, 21.0);
    wait_for(cap, 18);
    check_vrchat_capture(cap, &sk, &pose); /* the head joint again */

    osc_sender_destroy(&s);
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
}

void
nothing_listening_does_not_stall_and_warns_once(void **state)
{
    (void)state;
    struct sk_skeleton sk;
    struct sk_pose pose;
    load_humanoid(&sk);
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    make_random_pose(&sk, 5, &pose);
    const int port = oscdump_free_udp_port(); /* closed again: nothing listens there */
    assert_true(port > 0);
    const enum osc_protocol protocols[2] = {OSC_PROTOCOL_VMC, OSC_PROTOCOL_VRCHAT};
    for (int p = 0; p < 2; ++p) {
        struct osc_sender *s = open_sender(protocols[p], port);
        const double start = now_s();
        for (int frame = 0; frame < 1000; ++frame)
            osc_sender_send(s, &sk, &pose, frame / 90.0);
        const double elapsed = now_s() - start;
        /* A stall detector, not a speed target (see bench_osc for speed): a send that
         * waited for the network would take milliseconds a frame; a sanitizer build on a
         * busy machine takes about 1 ms. */
        if (!(elapsed < 5.0))
            fail_msg("%s: 1000 frames to a closed port took %.3f s",
                     osc_protocol_name(protocols[p]), elapsed);
        struct osc_sender_stats st;
        osc_sender_get_stats(s, &st);
        assert_int_equal(st.frames, 1000);
        assert_int_equal(st.warnings, 1); /* one warning, not one per frame */
        assert_true(st.failing);
        assert_true(st.frames_failed > 0);
        assert_int_equal(st.last_errno, ECONNREFUSED);
        assert_int_equal(st.recoveries, 0);
        osc_sender_destroy(&s);
    }
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
}

void
sending_recovers_when_a_receiver_appears(void **state)
{
    struct oscdump_capture *cap = *state;
    struct sk_skeleton sk;
    struct sk_pose pose;
    load_humanoid(&sk);
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    make_random_pose(&sk, 9, &pose);
    const int port = oscdump_free_udp_port();
    assert_true(port > 0);
    struct osc_sender *s = open_sender(OSC_PROTOCOL_VMC, port);
    for (int frame = 0; frame < 10; ++frame)
        osc_sender_send(s, &sk, &pose, frame / 90.0);
    struct osc_sender_stats st;
    osc_sender_get_stats(s, &st);
    assert_true(st.failing);
    assert_int_equal(st.warnings, 1);

    start_oscdump(cap, port); /* the receiver comes up */
    const double deadline = now_s() + 6.0;
    int frame = 10;
    do {
        osc_sender_send(s, &sk, &pose, frame++ / 90.0);
        osc_sender_get_stats(s, &st);
        oscdump_poll(cap, 0);
        sleep_ms(20);
    } while (st.failing && now_s() < deadline);
    assert_false(st.failing);
    assert_int_equal(st.recoveries, 1);
    assert_int_equal(st.warnings, 1);
    oscdump_poll(cap, 100);
    assert_true(oscdump_find(cap, 0, "/VMC/Ext/Bone/Pos", "Hips") >= 0);
    osc_sender_destroy(&s);
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
}

void
frames_with_non_finite_values_are_not_sent(void **state)
{
    (void)state;
    struct sk_skeleton sk;
    struct sk_pose pose;
    load_humanoid(&sk);
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    make_random_pose(&sk, 4, &pose);
    pose.position_m[sk.bone_joint[SK_LEFT_FOOT]][1] = NAN; /* a solver gone wrong */
    const int port = oscdump_free_udp_port();
    assert_true(port > 0);
    const enum osc_protocol protocols[2] = {OSC_PROTOCOL_VMC, OSC_PROTOCOL_VRCHAT};
    for (int p = 0; p < 2; ++p) {
        struct osc_sender *s = open_sender(protocols[p], port);
        for (int frame = 0; frame < 5; ++frame)
            osc_sender_send(s, &sk, &pose, frame / 90.0);
        struct osc_sender_stats st;
        osc_sender_get_stats(s, &st);
        assert_int_equal(st.frames, 5);
        assert_int_equal(st.frames_skipped, 5);
        assert_int_equal(st.datagrams_sent + st.datagrams_failed, 0); /* nothing went out */
        assert_int_equal(st.warnings, 1);
        osc_sender_destroy(&s);
        assert_null(s);
    }
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
}
