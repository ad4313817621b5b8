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
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "embody/m_math.h"
#include "osc/osc.h"
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
    /* Cleared first: fail_msg does not return, which an optimising build cannot see, and
     * would warn that the caller's frame may be read uninitialised. */
    memset(out, 0, sizeof *out);
    for (int i = 0; i < 10; ++i)
        if (in_source_next(src, &f) == EM_OK) {
            *out = f;
            got = true;
        }
    if (!got)
        fail_msg("no frame from the VMC source");
}


/* ---- OSC datagrams built by hand (what a hostile or broken sender can send) ---------- */

struct packet {
    uint8_t data[70000];
    size_t size;
};

static void
put_bytes(struct packet *p, const void *bytes, size_t n)
{
    assert_true(p->size + n <= sizeof p->data);
    memcpy(p->data + p->size, bytes, n);
    p->size += n;
}

static void
put_u32(struct packet *p, uint32_t v)
{
    const uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    put_bytes(p, b, 4);
}

static void
put_string(struct packet *p, const char *s)
{
    const size_t n = strlen(s) + 1;
    put_bytes(p, s, n);
    while (p->size % 4)
        put_bytes(p, "", 1);
}

static void
put_float(struct packet *p, float f)
{
    uint32_t bits;
    memcpy(&bits, &f, 4);
    put_u32(p, bits);
}

/* A device message "s fffffff": serial, position, rotation (x, y, z, w). */
static void
put_pose_message(struct packet *p, const char *path, const char *serial, float y)
{
    put_string(p, path);
    put_string(p, ",sfffffff");
    put_string(p, serial);
    const float v[7] = {0.0f, y, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f};
    for (int i = 0; i < 7; ++i)
        put_float(p, v[i]);
}

/* Appends a bundle element holding `inner`. */
static void
put_element(struct packet *p, const struct packet *inner)
{
    put_u32(p, (uint32_t)inner->size);
    put_bytes(p, inner->data, inner->size);
}

static void
put_bundle_header(struct packet *p, uint64_t timetag)
{
    put_bytes(p, "#bundle", 8);
    put_u32(p, (uint32_t)(timetag >> 32));
    put_u32(p, (uint32_t)timetag);
}

/* The 448-byte datagram of issue 20: a bundle of ordinary Hmd and Con messages ending
 * in a nested bundle whose element runs past the datagram's end. liblo read past its
 * buffer on it (valgrind: "Invalid read ... 0 bytes after a block of size 448"). */
static void
build_overrunning_bundle(struct packet *out)
{
    memset(out, 0, sizeof *out);
    put_bundle_header(out, 1);
    static struct packet msg;
    const char *serial[] = {"hmd", "left", "right", "left", "right"};
    for (int i = 0; i < 5; ++i) {
        msg.size = 0;
        put_pose_message(&msg, i == 0 ? "/VMC/Ext/Hmd/Pos" : "/VMC/Ext/Con/Pos", serial[i],
                         1.0f + 0.01f * (float)i);
        put_element(out, &msg);
    }
    /* The nested bundle: its header, then an element claiming 4096 bytes. */
    const size_t left = 448 - out->size - 4;
    put_u32(out, (uint32_t)left);
    put_bundle_header(out, 1);
    put_u32(out, 4096);
    while (out->size < 448)
        put_bytes(out, "/VMC", 4);
    assert_int_equal(out->size, 448);
}

/* Reads until nothing more comes (a few empty reads in a row). */
static void
drain(struct in_source *src)
{
    struct em_tracking_frame f;
    for (int empty = 0; empty < 3;)
        empty = in_source_next(src, &f) == EM_OK ? 0 : empty + 1;
}

/* Reads until `poses` device poses in all were taken (or a bounded number of reads). */
static void
read_until_poses(struct in_source *src, uint64_t poses)
{
    struct em_tracking_frame f;
    struct osc_vmc_in_stats st = {0};
    for (int i = 0; i < 100 && st.poses < poses; ++i) {
        in_source_next(src, &f);
        osc_vmc_in_get_stats(src, &st);
    }
}

static long
max_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static struct in_source *
open_source(const struct osc_vmc_in_desc *desc)
{
    struct in_source *src = NULL;
    struct em_error err;
    if (osc_vmc_in_create(desc, &src, &err) != EM_OK)
        fail_msg("%s", err.message);
    return src;
}

static void
the_issue_datagram_is_refused_whole_and_reading_goes_on(void **state)
{
    (void)state;
    const int port = test_port(4);
    struct osc_vmc_in_desc desc = {.port = port};
    struct in_source *src = open_source(&desc);
    static struct packet bad;
    build_overrunning_bundle(&bad);
    for (int i = 0; i < 50; ++i)
        send_raw(port, bad.data, bad.size);
    drain(src);
    struct osc_vmc_in_stats st;
    osc_vmc_in_get_stats(src, &st);
    assert_int_equal(st.malformed, 50);
    assert_int_equal(st.poses, 0); /* refused whole: not the messages before the fault */
    /* The same bundle with its last element cut away reads whole. */
    static struct packet good;
    good = bad;
    good.size = 16;
    for (int i = 0; i < 5; ++i) {
        uint32_t n;
        memcpy(&n, good.data + good.size, 4);
        good.size += 4 + ntohl(n);
    }
    send_raw(port, good.data, good.size);
    struct em_tracking_frame f;
    latest_frame(src, &f);
    assert_true(em_device_pose_usable(&f.device[EM_DEVICE_HEAD]));
    assert_float_equal(f.device[EM_DEVICE_HEAD].pose.position_m[1], 1.0f, 1e-6f);
    assert_float_equal(f.device[EM_DEVICE_RIGHT_HAND].pose.position_m[1], 1.04f, 1e-6f);
    osc_vmc_in_get_stats(src, &st);
    assert_int_equal(st.poses, 5);
    in_source_destroy(&src);
}

static void
bundles_timetagged_in_the_future_are_dispatched_at_once_with_memory_flat(void **state)
{
    (void)state;
    const int port = test_port(5);
    struct osc_vmc_in_desc desc = {.port = port};
    struct in_source *src = open_source(&desc);
    static struct packet p, msg;
    const int count = 20000;
    long rss_before = 0;
    for (int i = 0; i < count; ++i) {
        p.size = 0;
        msg.size = 0;
        put_bundle_header(&p, UINT64_C(0xfffffff000000000)); /* the year 2036, near its end */
        put_pose_message(&msg, "/VMC/Ext/Hmd/Pos", "hmd", 1.0f + (float)(i % 100) * 0.001f);
        put_element(&p, &msg);
        send_raw(port, p.data, p.size);
        if (i % 50 == 49) /* read as a live source does, so the socket's buffer never fills */
        {
            read_until_poses(src, (uint64_t)i + 1);
            struct osc_vmc_in_stats st;
            osc_vmc_in_get_stats(src, &st);
            assert_int_equal(st.poses, i + 1); /* every one taken now, none waiting */
        }
        if (i == 999)
            rss_before = max_rss_kb();
    }
    drain(src);
    struct osc_vmc_in_stats st;
    osc_vmc_in_get_stats(src, &st);
    assert_int_equal(st.poses, count); /* every one taken now, none waiting for its time */
    assert_int_equal(st.malformed, 0);
    /* 19,000 bundles after the first thousand: nothing kept of them. */
    assert_true(max_rss_kb() - rss_before < 1024);
    in_source_destroy(&src);
}

/* Binds a UDP socket to `address`:`port`; returns its errno (0 when it could). */
static int
bind_errno(const char *address, int port)
{
    const int fd = socket(AF_INET, SOCK_DGRAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in at = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, address, &at.sin_addr);
    const int e = bind(fd, (const struct sockaddr *)&at, sizeof at) == 0 ? 0 : errno;
    close(fd);
    return e;
}

static void
the_default_listens_on_loopback_only_and_an_address_when_given(void **state)
{
    (void)state;
    const int port = test_port(6);
    struct osc_vmc_in_desc desc = {0};
    struct em_error err;
    char text[32];
    snprintf(text, sizeof text, "%d", port);
    assert_int_equal(osc_vmc_listen_parse(text, &desc, &err), EM_OK);
    assert_int_equal(desc.port, port);
    assert_string_equal(desc.host, "");
    struct in_source *src = open_source(&desc);
    /* Bound to 127.0.0.1 only: another address of this machine's port is still free
     * (bound to every interface, 0.0.0.0, it would not be). */
    assert_int_equal(bind_errno("127.0.0.2", port), 0);
    in_source_destroy(&src);
    snprintf(text, sizeof text, "0.0.0.0:%d", port);
    assert_int_equal(osc_vmc_listen_parse(text, &desc, &err), EM_OK);
    assert_string_equal(desc.host, "0.0.0.0");
    src = open_source(&desc);
    assert_int_equal(bind_errno("127.0.0.2", port), EADDRINUSE);
    in_source_destroy(&src);
    const char *bad[] = {"0", "65536", "x:100", ":100", "127.0.0.1:", "127.0.0.1:-5", "1.2.3.4.5:9"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        struct osc_vmc_in_desc d = {0};
        assert_int_equal(osc_vmc_listen_parse(bad[i], &d, &err), EM_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(err.message, "--vmc-in"));
    }
}

/* Sends from a socket bound to `from` (a loopback address). */
static void
send_from(const char *from, int port, const void *data, size_t size)
{
    const int fd = socket(AF_INET, SOCK_DGRAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in me = {.sin_family = AF_INET};
    inet_pton(AF_INET, from, &me.sin_addr);
    assert_int_equal(bind(fd, (const struct sockaddr *)&me, sizeof me), 0);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_true(sendto(fd, data, size, 0, (const struct sockaddr *)&to, sizeof to) ==
                (ssize_t)size);
    close(fd);
}

static void
senders_outside_the_allow_list_are_dropped_and_counted(void **state)
{
    (void)state;
    const int port = test_port(7);
    struct osc_vmc_in_desc desc = {.port = port};
    struct em_error err;
    assert_int_equal(osc_vmc_allow_parse("127.0.0.2,10.0.0.0/8", &desc, &err), EM_OK);
    assert_int_equal(desc.allow_count, 2);
    struct in_source *src = open_source(&desc);
    static struct packet p;
    p.size = 0;
    put_pose_message(&p, "/VMC/Ext/Hmd/Pos", "hmd", 1.5f);
    for (int i = 0; i < 5; ++i)
        send_from("127.0.0.1", port, p.data, p.size);
    drain(src);
    struct osc_vmc_in_stats st;
    osc_vmc_in_get_stats(src, &st);
    assert_int_equal(st.refused_senders, 5);
    assert_int_equal(st.poses, 0);
    send_from("127.0.0.2", port, p.data, p.size);
    struct em_tracking_frame f;
    latest_frame(src, &f);
    assert_float_equal(f.device[EM_DEVICE_HEAD].pose.position_m[1], 1.5f, 1e-6f);
    in_source_destroy(&src);
    const char *bad[] = {"", "127.0.0.1/33", "1.2.3/8", "127.0.0.1,", "no such host.invalid"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        struct osc_vmc_in_desc d = {0};
        assert_int_equal(osc_vmc_allow_parse(bad[i], &d, &err), EM_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(err.message, "--vmc-allow"));
    }
}

static void
a_long_serial_is_logged_as_a_short_printable_prefix(void **state)
{
    (void)state;
    const int port = test_port(8);
    struct osc_vmc_in_desc desc = {.port = port};
    struct in_source *src = open_source(&desc);
    static struct packet p;
    static char serial[65001];
    for (size_t i = 0; i < sizeof serial - 1; ++i)
        serial[i] = (char)('A' + i % 26);
    serial[5] = '\033'; /* an escape: not to reach the terminal */
    char log_path[] = "/tmp/embody_vmc_log_XXXXXX";
    const int log_fd = mkstemp(log_path);
    assert_true(log_fd >= 0);
    fflush(stderr);
    const int saved = dup(2);
    dup2(log_fd, 2);
    for (int i = 0; i < 4; ++i) {
        serial[10] = (char)('a' + i); /* four different serials */
        p.size = 0;
        put_pose_message(&p, "/VMC/Ext/Tra/Pos", serial, 1.0f);
        send_raw(port, p.data, p.size);
        drain(src); /* one 65 kB datagram at a time: the socket's buffer holds about 3 */
    }
    drain(src);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    struct osc_vmc_in_stats st;
    osc_vmc_in_get_stats(src, &st);
    in_source_destroy(&src);
    assert_int_equal(st.unmapped, 4);
    const off_t logged = lseek(log_fd, 0, SEEK_END);
    char text[4096] = "";
    lseek(log_fd, 0, SEEK_SET);
    const ssize_t got = read(log_fd, text, sizeof text - 1);
    close(log_fd);
    unlink(log_path);
    assert_true(got > 0);
    assert_true(logged < 2000); /* 4 warnings of a line each, not 4 x 2 x 65,000 bytes */
    assert_null(strchr(text, '\033'));
    assert_non_null(strstr(text, "ABCDE?GHIJ"));
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
        cmocka_unit_test(the_issue_datagram_is_refused_whole_and_reading_goes_on),
        cmocka_unit_test(bundles_timetagged_in_the_future_are_dispatched_at_once_with_memory_flat),
        cmocka_unit_test(the_default_listens_on_loopback_only_and_an_address_when_given),
        cmocka_unit_test(senders_outside_the_allow_list_are_dropped_and_counted),
        cmocka_unit_test(a_long_serial_is_logged_as_a_short_printable_prefix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
