/*
 * VMC input (osc_vmc_in.c): device poses sent with liblo's oscsend (Debian's liblo-tools)
 * arrive as tracking frames with their roles and converted axes; malformed and partial
 * messages are refused with a count and the source keeps going; embody's own VMC output
 * (osc_sender with devices) read back gives the frame that was sent.
 */
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "embody/m_math.h"
#include "embody/osc.h"
#include "embody/skeleton.h"

extern char **environ;

static int
test_port(int salt)
{
    return 41000 + (int)(getpid() % 4000) * 4 + salt;
}

/* Runs oscsend with `args` (NULL-terminated, after the program's name); fails the test if
 * it cannot run or fails. */
static void
oscsend(const char *const *args)
{
    char *argv[16];
    int n = 0;
    argv[n++] = (char *)"oscsend";
    for (int i = 0; args[i] && n < 15; ++i)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    pid_t pid;
    if (posix_spawnp(&pid, "oscsend", NULL, NULL, argv, environ) != 0)
        fail_msg("cannot run oscsend (Debian package liblo-tools)");
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("oscsend %s %s failed", args[2], args[3]);
}

static void
send_raw(int port, const void *data, size_t size)
{
    const int fd = socket(AF_INET, SOCK_DGRAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_true(sendto(fd, data, size, 0, (const struct sockaddr *)&to, sizeof to) ==
                (ssize_t)size);
    close(fd);
}

/* The latest frame after what was sent has been read (datagrams are local: they are
 * there after a few reads); fails when no frame came. */
static void
latest_frame(struct in_source *src, struct em_tracking_frame *out)
{
    bool got = false;
    struct em_tracking_frame f;
    for (int i = 0; i < 10; ++i)
        if (in_source_next(src, &f) == EM_OK) {
            *out = f;
            got = true;
        }
    if (!got)
        fail_msg("no frame from the VMC source");
}

static void
oscsend_poses_arrive_with_their_roles(void **state)
{
    (void)state;
    const int port = test_port(0);
    char port_text[16];
    snprintf(port_text, sizeof port_text, "%d", port);
    struct osc_vmc_in_desc desc = {.port = port, .role_count = 1};
    snprintf(desc.role[0].serial, sizeof desc.role[0].serial, "LHR-1234");
    desc.role[0].role = EM_DEVICE_COUNT + EM_TRACKER_LEFT_FOOT;
    struct in_source *src = NULL;
    struct em_error err;
    if (osc_vmc_in_create(&desc, &src, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_string_equal(src->name, "vmc");
    /* A headset 1.6 m up and 0.5 m forward in Unity (+Z): -0.5 in STAGE; turned 90
     * degrees about +Y (Unity) = -90 degrees about +Y in STAGE. */
    oscsend((const char *[]){"localhost", port_text, "/VMC/Ext/Hmd/Pos", "sfffffff", "hmd-0", "0.1",
                             "1.6", "0.5", "0", "0.70710678", "0", "0.70710678", NULL});
    oscsend((const char *[]){"localhost", port_text, "/VMC/Ext/Con/Pos", "sfffffff", "right",
                             "-0.3", "1.0", "0.2", "0", "0", "0", "1", NULL});
    oscsend((const char *[]){"localhost", port_text, "/VMC/Ext/Tra/Pos", "sfffffff", "LHR-1234",
                             "0.1", "0.08", "0", "0", "0", "0", "1", NULL});
    struct em_tracking_frame f;
    latest_frame(src, &f);
    const struct em_device_pose *head = &f.device[EM_DEVICE_HEAD];
    assert_true(em_device_pose_usable(head));
    assert_float_equal(head->pose.position_m[0], 0.1f, 1e-6f);
    assert_float_equal(head->pose.position_m[1], 1.6f, 1e-6f);
    assert_float_equal(head->pose.position_m[2], -0.5f, 1e-6f);
    assert_float_equal(head->pose.orientation[1], -0.70710678f, 1e-6f);
    assert_true(em_device_pose_usable(&f.device[EM_DEVICE_RIGHT_HAND]));
    assert_false(em_device_pose_usable(&f.device[EM_DEVICE_LEFT_HAND])); /* never sent */
    assert_int_equal(f.tracker_present, EM_TRACKER_BIT(EM_TRACKER_LEFT_FOOT));
    assert_float_equal(f.tracker[EM_TRACKER_LEFT_FOOT].pose.position_m[1], 0.08f, 1e-6f);
    in_source_destroy(&src);
}

static void
malformed_and_partial_messages_are_counted_and_refused(void **state)
{
    (void)state;
    const int port = test_port(1);
    char port_text[16];
    snprintf(port_text, sizeof port_text, "%d", port);
    struct osc_vmc_in_desc desc = {.port = port};
    struct in_source *src = NULL;
    struct em_error err;
    if (osc_vmc_in_create(&desc, &src, &err) != EM_OK)
        fail_msg("%s", err.message);
    /* Partial (2 floats), a non-unit rotation, a serial without a role, an address we do
     * not read, and two datagrams that are not OSC at all. */
    oscsend((const char *[]){"localhost", port_text, "/VMC/Ext/Hmd/Pos", "sff", "head", "0", "1",
                             NULL});
    oscsend((const char *[]){"localhost", port_text, "/VMC/Ext/Tra/Pos", "sfffffff", "pelvis", "0",
                             "1", "0", "0", "0", "0", "3", NULL});
    oscsend((const char *[]){"localhost", port_text, "/VMC/Ext/Tra/Pos", "sfffffff", "LHR-9", "0",
                             "1", "0", "0", "0", "0", "1", NULL});
    oscsend((const char *[]){"localhost", port_text, "/VMC/Ext/Blend/Val", "sf", "A", "1", NULL});
    send_raw(port, "garbage!", 8);
    send_raw(port, "/VMC\0\0\0\0,fff\0\0\0\0\1", 17);
    struct em_tracking_frame f;
    assert_int_equal(in_source_next(src, &f), EM_NOT_READY); /* nothing usable came */
    struct osc_vmc_in_stats st;
    osc_vmc_in_get_stats(src, &st);
    assert_int_equal(st.bad, 2);
    assert_int_equal(st.unmapped, 1);
    assert_int_equal(st.ignored, 1);
    assert_true(st.malformed >= 1);
    assert_int_equal(st.poses, 0);
    /* Still listening. */
    oscsend((const char *[]){"localhost", port_text, "/VMC/Ext/Hmd/Pos", "sfffffff", "head", "0",
                             "1.7", "0", "0", "0", "0", "1", NULL});
    latest_frame(src, &f);
    assert_true(em_device_pose_usable(&f.device[EM_DEVICE_HEAD]));
    assert_float_equal(f.device[EM_DEVICE_HEAD].pose.position_m[1], 1.7f, 1e-6f);
    in_source_destroy(&src);
}

static void
embodys_own_vmc_output_reads_back_as_the_frame_sent(void **state)
{
    (void)state;
    const int port = test_port(2);
    struct osc_vmc_in_desc desc = {.port = port};
    struct in_source *src = NULL;
    struct em_error err;
    if (osc_vmc_in_create(&desc, &src, &err) != EM_OK)
        fail_msg("%s", err.message);
    struct osc_sender *sender = NULL;
    if (osc_sender_create(OSC_PROTOCOL_VMC, "127.0.0.1", port, &sender, &err) != EM_OK)
        fail_msg("%s", err.message);
    struct sk_skeleton sk;
    if (sk_skeleton_load_json(EMBODY_SOURCE_DIR "/config/humanoid.json", &sk, &err) != EM_OK)
        fail_msg("%s", err.message);
    struct sk_pose pose;
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    sk_pose_set_rest(&pose, &sk);
    sk_pose_forward_kinematics(&pose, &sk);
    /* A frame with head, hands and three trackers, turned every which way. */
    struct em_tracking_frame sent;
    memset(&sent, 0, sizeof sent);
    sent.tracker_present = EM_TRACKER_BIT(EM_TRACKER_PELVIS) |
                           EM_TRACKER_BIT(EM_TRACKER_LEFT_KNEE) |
                           EM_TRACKER_BIT(EM_TRACKER_RIGHT_ELBOW);
    for (int i = 0; i < EM_DEVICE_COUNT + EM_TRACKER_COUNT; ++i) {
        struct em_device_pose *d =
            i < EM_DEVICE_COUNT ? &sent.device[i] : &sent.tracker[i - EM_DEVICE_COUNT];
        const float axis[3] = {0.3f, 1.0f, -0.2f * (float)i};
        float unit[3];
        m_vec3_normalize_or(axis, axis, unit);
        m_quat_from_axis_angle(unit, 0.3f * (float)i, d->pose.orientation);
        m_vec3_set(d->pose.position_m, 0.1f * (float)i, 1.0f - 0.05f * (float)i, -0.2f);
        d->flags = EM_POSE_ALL_VALID;
    }
    osc_sender_set_devices(sender, &sent);
    osc_sender_send(sender, &sk, &pose, 0.0);
    struct em_tracking_frame got;
    latest_frame(src, &got);
    assert_int_equal(got.tracker_present, sent.tracker_present);
    for (int i = 0; i < EM_DEVICE_COUNT + EM_TRACKER_COUNT; ++i) {
        if (i >= EM_DEVICE_COUNT && !(sent.tracker_present & EM_TRACKER_BIT(i - EM_DEVICE_COUNT)))
            continue;
        const struct em_device_pose *a =
            i < EM_DEVICE_COUNT ? &sent.device[i] : &sent.tracker[i - EM_DEVICE_COUNT];
        const struct em_device_pose *b =
            i < EM_DEVICE_COUNT ? &got.device[i] : &got.tracker[i - EM_DEVICE_COUNT];
        assert_true(em_device_pose_usable(b));
        assert_true(m_vec3_distance(a->pose.position_m, b->pose.position_m) < 1e-6f);
        assert_true(fabsf(m_quat_dot(a->pose.orientation, b->pose.orientation)) > 1.0f - 1e-6f);
    }
    struct osc_vmc_in_stats st;
    osc_vmc_in_get_stats(src, &st);
    assert_int_equal(st.bad + st.malformed + st.unmapped, 0);
    assert_true(st.ignored > 10); /* the bones, sent too */
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
    osc_sender_destroy(&sender);
    in_source_destroy(&src);
}

static void
a_port_in_use_is_refused_naming_it(void **state)
{
    (void)state;
    const int port = test_port(3);
    struct osc_vmc_in_desc desc = {.port = port};
    struct in_source *a = NULL, *b = NULL;
    struct em_error err;
    assert_int_equal(osc_vmc_in_create(&desc, &a, &err), EM_OK);
    assert_int_equal(osc_vmc_in_create(&desc, &b, &err), EM_ERROR_IO);
    char want[32];
    snprintf(want, sizeof want, "port %d", port);
    assert_non_null(strstr(err.message, want));
    assert_null(b);
    struct osc_vmc_role role;
    assert_int_equal(osc_vmc_role_parse("LHR-1=left_knee", &role, &err), EM_OK);
    assert_int_equal(role.role, EM_DEVICE_COUNT + EM_TRACKER_LEFT_KNEE);
    assert_int_equal(osc_vmc_role_parse("LHR-1=tail", &role, &err), EM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(osc_vmc_role_parse("=left", &role, &err), EM_ERROR_INVALID_ARGUMENT);
    in_source_destroy(&a);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(oscsend_poses_arrive_with_their_roles),
        cmocka_unit_test(malformed_and_partial_messages_are_counted_and_refused),
        cmocka_unit_test(embodys_own_vmc_output_reads_back_as_the_frame_sent),
        cmocka_unit_test(a_port_in_use_is_refused_naming_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
