/*
 * The OSC sender (src/osc/osc.h): encodes each frame with liblo (messages and
 * bundles, serialised into one reusable buffer) and sends the datagrams on our own UDP
 * socket, which is
 *  - resolved once, at creation: a DNS name never costs the frame loop anything;
 *  - non-blocking: a datagram the kernel cannot take now is dropped, never waited for;
 *  - connected: only a connected UDP socket hears of the ICMP "port unreachable" that a
 *    host sends back when nothing listens, as ECONNREFUSED on a later send. (liblo 0.31's
 *    own lo_send_* uses an unconnected socket, where Linux drops those errors, so an
 *    absent receiver would go unnoticed; this is why the transport is ours.)
 * Failures are reported once per outage (a warning), and once when sending works again.
 */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <lo/lo.h>

#include "osc/osc.h"
#include "util/u_log.h"
#include "util/u_time.h"

/* The largest datagram we build: fits one Ethernet frame (1500 bytes less IP and UDP
 * headers), so a VMC frame is never fragmented on the way. */
#define OSC_DATAGRAM_MAX 1400
/* Sending counts as working again after this long without a failed send. Remote hosts
 * rate-limit their ICMP errors (Linux: about one a second), so a shorter quiet time
 * would announce recoveries that are not. */
#define OSC_RECOVERY_NS 2000000000LL

struct osc_sender {
    enum osc_protocol protocol;
    char destination[OSC_HOST_MAX + 16]; /* "host:port" or "[v6]:port", for messages */
    int fd;

    bool have_first_time;
    double first_time_s;

    bool have_headset; /* for the next send only */
    struct em_device_pose headset;
    bool have_devices; /* for the next send only (osc_sender_set_devices) */
    struct em_tracking_frame devices;
    bool have_fingers; /* for the next send only (osc_sender_set_fingers) */
    bool have_finger_offsets;
    float finger_rotation[OSC_VMC_FINGER_BONES][4];
    float finger_offset_m[OSC_VMC_FINGER_BONES][3];

    struct osc_sender_stats stats;
    int64_t last_failure_ns;
    bool warned_nonfinite;

    /* Scratch, here rather than on the stack: a frame is a few kilobytes. */
    struct osc_vmc_frame vmc;
    struct osc_vrchat_frame vrchat;
    unsigned char datagram[OSC_DATAGRAM_MAX];
};

/* What went wrong while sending one frame. */
struct frame_result {
    bool failed;
    int error; /* errno of the first failure */
};

const char *
osc_protocol_name(enum osc_protocol protocol)
{
    return protocol == OSC_PROTOCOL_VRCHAT ? "VRChat OSC" : "VMC";
}

/* ---- Socket ---------------------------------------------------------------------------- */

static int
open_connected_socket(const struct addrinfo *ai)
{
    const int fd = socket(ai->ai_family, SOCK_DGRAM, 0);
    if (fd < 0)
        return -1;
    const int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 ||
        fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
        const int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (ai->ai_family == AF_INET) { /* so a broadcast destination works too */
        const int on = 1;
        (void)setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &on, sizeof on);
    }
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
        const int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* Opens a socket to the first address that takes one, IPv4 first: "localhost" may
 * resolve to ::1 and 127.0.0.1, and VMC and VRChat receivers listen on IPv4. */
static enum em_result
open_destination(struct osc_sender *s, const char *host, int port, struct em_error *err)
{
    char port_text[8];
    snprintf(port_text, sizeof port_text, "%d", port);
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    struct addrinfo *found = NULL;
    const int r = getaddrinfo(host, port_text, &hints, &found);
    if (r != 0)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "%s output: host \"%s\" cannot be resolved: %s",
                       osc_protocol_name(s->protocol), host, gai_strerror(r));
    int last_errno = 0;
    for (int pass = 0; pass < 2 && s->fd < 0; ++pass) {
        for (const struct addrinfo *ai = found; ai && s->fd < 0; ai = ai->ai_next) {
            if ((pass == 0) != (ai->ai_family == AF_INET))
                continue;
            s->fd = open_connected_socket(ai);
            if (s->fd < 0)
                last_errno = errno;
        }
    }
    freeaddrinfo(found);
    if (s->fd < 0)
        return em_fail(err, EM_ERROR_IO, "%s output: cannot open a UDP socket to %s: %s",
                       osc_protocol_name(s->protocol), s->destination,
                       strerror(last_errno ? last_errno : EADDRNOTAVAIL));
    return EM_OK;
}

enum em_result
osc_sender_create(enum osc_protocol protocol, const char *host, int port,
                  struct osc_sender **out_sender, struct em_error *err)
{
    *out_sender = NULL;
    if (protocol != OSC_PROTOCOL_VMC && protocol != OSC_PROTOCOL_VRCHAT)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "unknown OSC protocol %d",
                       (int)protocol);
    if (!host || !*host || strlen(host) >= OSC_HOST_MAX)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s output: empty or too long host",
                       osc_protocol_name(protocol));
    if (port < 1 || port > 65535)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "%s output: port %d is out of range 1-65535",
                       osc_protocol_name(protocol), port);
    struct osc_sender *s = calloc(1, sizeof *s);
    if (!s)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "out of memory");
    s->protocol = protocol;
    s->fd = -1;
    if (strchr(host, ':'))
        snprintf(s->destination, sizeof s->destination, "[%s]:%d", host, port);
    else
        snprintf(s->destination, sizeof s->destination, "%s:%d", host, port);
    const enum em_result r = open_destination(s, host, port, err);
    if (r != EM_OK) {
        free(s);
        return r;
    }
    *out_sender = s;
    return EM_OK;
}

void
osc_sender_destroy(struct osc_sender **sender)
{
    if (!sender || !*sender)
        return;
    if ((*sender)->fd >= 0)
        close((*sender)->fd);
    free(*sender);
    *sender = NULL;
}

void
osc_sender_set_headset(struct osc_sender *sender, const struct em_device_pose *headset)
{
    if (!headset) {
        sender->have_headset = false;
        return;
    }
    /* Field by field: the versor inside is 16-byte aligned. */
    for (int i = 0; i < 4; ++i)
        sender->headset.pose.orientation[i] = headset->pose.orientation[i];
    for (int i = 0; i < 3; ++i)
        sender->headset.pose.position_m[i] = headset->pose.position_m[i];
    sender->headset.flags = headset->flags;
    sender->have_headset = true;
}

void
osc_sender_get_stats(const struct osc_sender *sender, struct osc_sender_stats *out_stats)
{
    *out_stats = sender->stats;
}

static void
send_datagram(struct osc_sender *s, const void *data, size_t size, struct frame_result *fr)
{
    const ssize_t n = send(s->fd, data, size, MSG_NOSIGNAL);
    if (n == (ssize_t)size) {
        ++s->stats.datagrams_sent;
        return;
    }
    ++s->stats.datagrams_failed;
    if (!fr->failed) {
        fr->failed = true;
        fr->error = n < 0 ? errno : EMSGSIZE;
    }
}

/* A datagram that could not even be built (out of memory) counts as failed. */
static void
note_build_failure(struct osc_sender *s, struct frame_result *fr)
{
    ++s->stats.datagrams_failed;
    if (!fr->failed) {
        fr->failed = true;
        fr->error = ENOMEM;
    }
}

/* ---- Encoding ---------------------------------------------------------------------------- */

/* Packs messages into bundles of at most OSC_DATAGRAM_MAX bytes and sends each when full. */
struct bundle_packer {
    struct osc_sender *s;
    struct frame_result *fr;
    lo_bundle bundle;
    size_t size; /* serialised size so far */
};

static void
packer_flush(struct bundle_packer *bp)
{
    if (!bp->bundle)
        return;
    size_t size = lo_bundle_length(bp->bundle);
    if (size <= sizeof bp->s->datagram &&
        lo_bundle_serialise(bp->bundle, bp->s->datagram, &size) != NULL)
        send_datagram(bp->s, bp->s->datagram, size, bp->fr);
    else
        note_build_failure(bp->s, bp->fr);
    lo_bundle_free_recursive(bp->bundle);
    bp->bundle = NULL;
}

/* Adds `m` (owned: the bundle frees it) to the bundle being packed. */
static void
packer_add(struct bundle_packer *bp, const char *path, lo_message m)
{
    if (!m) {
        note_build_failure(bp->s, bp->fr);
        return;
    }
    enum { BUNDLE_HEADER = 16, ELEMENT_SIZE_FIELD = 4 };
    const size_t element = ELEMENT_SIZE_FIELD + lo_message_length(m, path);
    if (bp->bundle && bp->size + element > OSC_DATAGRAM_MAX)
        packer_flush(bp);
    if (!bp->bundle) {
        bp->bundle = lo_bundle_new(LO_TT_IMMEDIATE);
        bp->size = BUNDLE_HEADER;
    }
    if (!bp->bundle || lo_bundle_add_message(bp->bundle, path, m) != 0) {
        lo_message_free(m);
        note_build_failure(bp->s, bp->fr);
        return;
    }
    bp->size += element;
}

/* A message of a name and a pose (7 floats): /VMC/Ext/Root/Pos and /VMC/Ext/Bone/Pos. */
static lo_message
pose_message(const char *name, const struct osc_unity_pose *pose)
{
    lo_message m = lo_message_new();
    if (!m)
        return NULL;
    int bad = lo_message_add_string(m, name);
    for (int i = 0; i < 3; ++i)
        bad |= lo_message_add_float(m, pose->position_m[i]);
    for (int i = 0; i < 4; ++i)
        bad |= lo_message_add_float(m, pose->rotation[i]);
    if (bad) {
        lo_message_free(m);
        return NULL;
    }
    return m;
}

static lo_message
int_message(int32_t value)
{
    lo_message m = lo_message_new();
    if (m && lo_message_add_int32(m, value) != 0) {
        lo_message_free(m);
        return NULL;
    }
    return m;
}

static lo_message
float_message(float value)
{
    lo_message m = lo_message_new();
    if (m && lo_message_add_float(m, value) != 0) {
        lo_message_free(m);
        return NULL;
    }
    return m;
}

static lo_message
vec3_message(const float *v)
{
    lo_message m = lo_message_new();
    if (m && (lo_message_add_float(m, v[0]) | lo_message_add_float(m, v[1]) |
              lo_message_add_float(m, v[2])) != 0) {
        lo_message_free(m);
        return NULL;
    }
    return m;
}

static bool
all_finite(const float *v, int n)
{
    for (int i = 0; i < n; ++i)
        if (!isfinite(v[i]))
            return false;
    return true;
}

static bool
vmc_frame_is_finite(const struct osc_vmc_frame *f)
{
    if (!isfinite(f->time_s))
        return false;
    for (int i = 0; i < f->bone_count; ++i)
        if (!all_finite(f->bone_local[i].position_m, 3) ||
            !all_finite(f->bone_local[i].rotation, 4))
            return false;
    for (int i = 0; i < f->finger_count; ++i)
        if (!all_finite(f->finger_local[i].position_m, 3) ||
            !all_finite(f->finger_local[i].rotation, 4))
            return false;
    return true;
}

static bool
vrchat_frame_is_finite(const struct osc_vrchat_frame *f)
{
    for (int i = 0; i <= OSC_VRCHAT_BODY_TRACKERS; ++i)
        if (f->tracker[i].present &&
            (!all_finite(f->tracker[i].position_m, 3) || !all_finite(f->tracker[i].euler_deg, 3)))
            return false;
    return true;
}

/* A device's pose in Unity's world: M p, M R M (M = diag(1, 1, -1)). */
static lo_message
device_message(const char *serial, const struct em_device_pose *d)
{
    const float *p = d->pose.position_m, *q = d->pose.orientation;
    const struct osc_unity_pose u = {.position_m = {p[0], p[1], -p[2]},
                                     .rotation = {-q[0], -q[1], q[2], q[3]}};
    return pose_message(serial, &u);
}

static bool
device_sendable(const struct em_device_pose *d)
{
    return em_device_pose_usable(d) && all_finite(d->pose.position_m, 3) &&
           all_finite(d->pose.orientation, 4);
}

/* The tracked devices given for this frame: /VMC/Ext/Hmd/Pos, Con/Pos, Tra/Pos. */
static void
add_vmc_devices(struct osc_sender *s, struct bundle_packer *bp)
{
    if (!s->have_devices)
        return;
    s->have_devices = false;
    const struct em_tracking_frame *f = &s->devices;
    static const char *const paths[EM_DEVICE_COUNT] = {"/VMC/Ext/Hmd/Pos", "/VMC/Ext/Con/Pos",
                                                       "/VMC/Ext/Con/Pos"};
    for (int d = 0; d < EM_DEVICE_COUNT; ++d)
        if (device_sendable(&f->device[d]))
            packer_add(bp, paths[d],
                       device_message(em_device_name((enum em_device)d), &f->device[d]));
    for (int t = 0; t < EM_TRACKER_COUNT; ++t)
        if ((f->tracker_present & EM_TRACKER_BIT(t)) && device_sendable(&f->tracker[t]))
            packer_add(bp, "/VMC/Ext/Tra/Pos",
                       device_message(em_tracker_name((enum em_tracker)t), &f->tracker[t]));
}

void
osc_sender_set_devices(struct osc_sender *sender, const struct em_tracking_frame *frame)
{
    sender->have_devices = frame != NULL;
    if (frame)
        sender->devices = *frame;
}

void
osc_sender_set_fingers(struct osc_sender *sender, const float (*rotation)[4],
                       const float (*offset_m)[3])
{
    sender->have_fingers = rotation != NULL;
    sender->have_finger_offsets = rotation && offset_m;
    if (rotation)
        memcpy(sender->finger_rotation, rotation, sizeof sender->finger_rotation);
    if (rotation && offset_m)
        memcpy(sender->finger_offset_m, offset_m, sizeof sender->finger_offset_m);
}

/* VMC: availability, time, root, then every bone (the fingers last); a few bundles. */
static void
send_vmc(struct osc_sender *s, const struct osc_vmc_frame *f, struct frame_result *fr)
{
    struct bundle_packer bp = {.s = s, .fr = fr};
    packer_add(&bp, "/VMC/Ext/OK", int_message(1)); /* 1: an avatar is loaded */
    packer_add(&bp, "/VMC/Ext/T", float_message(f->time_s));
    packer_add(&bp, "/VMC/Ext/Root/Pos", pose_message("root", &f->root));
    for (int i = 0; i < f->bone_count; ++i)
        packer_add(&bp, "/VMC/Ext/Bone/Pos",
                   pose_message(osc_unity_bone_name(f->bone[i]), &f->bone_local[i]));
    for (int i = 0; i < f->finger_count; ++i)
        packer_add(&bp, "/VMC/Ext/Bone/Pos",
                   pose_message(osc_unity_finger_bone_name(i), &f->finger_local[i]));
    add_vmc_devices(s, &bp);
    packer_flush(&bp);
}

static void
send_message(struct osc_sender *s, const char *path, lo_message m, struct frame_result *fr)
{
    if (!m) {
        note_build_failure(s, fr);
        return;
    }
    size_t size = lo_message_length(m, path);
    if (size <= sizeof s->datagram && lo_message_serialise(m, path, s->datagram, &size) != NULL)
        send_datagram(s, s->datagram, size, fr);
    else
        note_build_failure(s, fr);
    lo_message_free(m);
}

/* VRChat: plain messages, one per address, as VRChat's own example sends them. */
static void
send_vrchat(struct osc_sender *s, const struct osc_vrchat_frame *f, struct frame_result *fr)
{
    char path[64];
    for (int i = 0; i <= OSC_VRCHAT_BODY_TRACKERS; ++i) {
        const struct osc_vrchat_tracker *t = &f->tracker[i];
        if (!t->present)
            continue;
        snprintf(path, sizeof path, "%s/position", t->address);
        send_message(s, path, vec3_message(t->position_m), fr);
        snprintf(path, sizeof path, "%s/rotation", t->address);
        send_message(s, path, vec3_message(t->euler_deg), fr);
    }
}

/* ---- Reporting ---------------------------------------------------------------------------- */

static const char *
failure_hint(int error)
{
    switch (error) {
    case ECONNREFUSED:
        return " (nothing is listening there: is the receiver running, on that port?)";
    case EAGAIN: return " (the socket's buffer is full: frames are being dropped)";
    case ENETUNREACH:
    case EHOSTUNREACH: return " (no route to that address: check the host)";
    case EMSGSIZE: return " (a datagram was not sent whole)";
    default: return "";
    }
}

/* One warning when an outage starts; one info line once it has been clean for a while. */
static void
report(struct osc_sender *s, const struct frame_result *fr)
{
    const int64_t now = u_time_now_ns();
    if (fr->failed) {
        ++s->stats.frames_failed;
        s->stats.last_errno = fr->error;
        s->last_failure_ns = now;
        if (!s->stats.failing) {
            s->stats.failing = true;
            ++s->stats.warnings;
            U_LOG_W("%s output to %s fails: %s%s; still sending, quietly, and will say when it "
                    "works",
                    osc_protocol_name(s->protocol), s->destination, strerror(fr->error),
                    failure_hint(fr->error));
        }
        return;
    }
    if (s->stats.failing && now - s->last_failure_ns >= OSC_RECOVERY_NS) {
        s->stats.failing = false;
        ++s->stats.recoveries;
        U_LOG_I("%s output to %s works again", osc_protocol_name(s->protocol),
                s->destination);
    }
}

void
osc_sender_send(struct osc_sender *sender, const struct sk_skeleton *skeleton,
                const struct sk_pose *pose, double time_s)
{
    struct osc_sender *s = sender;
    assert(s && skeleton && pose && pose->joint_count == skeleton->joint_count);
    ++s->stats.frames;
    if (!s->have_first_time) {
        s->have_first_time = true;
        s->first_time_s = time_s;
    }
    const struct em_device_pose *headset = s->have_headset ? &s->headset : NULL;
    s->have_headset = false;
    const bool fingers = s->have_fingers;
    s->have_fingers = false;

    bool finite;
    if (s->protocol == OSC_PROTOCOL_VMC) {
        osc_vmc_frame_build(skeleton, pose, (float)(time_s - s->first_time_s), &s->vmc);
        if (fingers)
            osc_vmc_frame_set_fingers(&s->vmc, (const float(*)[4])s->finger_rotation,
                                      s->have_finger_offsets
                                          ? (const float(*)[3])s->finger_offset_m
                                          : NULL);
        finite = vmc_frame_is_finite(&s->vmc);
    } else {
        osc_vrchat_frame_build(skeleton, pose, headset, &s->vrchat);
        finite = vrchat_frame_is_finite(&s->vrchat);
    }
    if (!finite) {
        /* Receivers do not expect NaN; not sending is better than breaking them. */
        ++s->stats.frames_skipped;
        if (!s->warned_nonfinite) {
            s->warned_nonfinite = true;
            ++s->stats.warnings;
            U_LOG_W("%s output: a frame has non-finite values and is not sent (further such "
                    "frames are skipped quietly)",
                    osc_protocol_name(s->protocol));
        }
        return;
    }

    struct frame_result fr = {0};
    if (s->protocol == OSC_PROTOCOL_VMC)
        send_vmc(s, &s->vmc, &fr);
    else
        send_vrchat(s, &s->vrchat, &fr);
    report(s, &fr);
}
