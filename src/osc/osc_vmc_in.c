/*
 * VMC protocol input (src/osc/osc.h): tracking from another program as an input
 * source (include/embody/input.h), beside OpenXR and replay.
 *
 * Read: /VMC/Ext/Hmd/Pos (the headset), /VMC/Ext/Con/Pos (controllers) and
 * /VMC/Ext/Tra/Pos (trackers), each "s fffffff": a serial, then a position and a
 * rotation (x, y, z, w) in Unity's left-handed world. A serial becomes a role through the
 * role table (serials named after a role, "head", "left", "right", "pelvis",
 * "left_foot" ..., are that role, which is what embody's own VMC output sends); the
 * headset needs none. A device not heard from for OSC_VMC_STALE_S counts as lost. Every
 * other address is ignored (bones, blend shapes, time). Bad messages (wrong argument
 * types, non-finite or non-unit values) and malformed datagrams are counted and the
 * first of each kind is logged (network text as a short printable prefix); none of them
 * stops the source.
 *
 * Network: the socket is ours (UDP, IPv4, 127.0.0.1 unless the user names an address)
 * and every datagram goes through the checked reader osc_in_decode.h before anything in
 * it is used; liblo is not used for input (its bundle decoder read past the datagram and
 * queued future-timetagged bundles without bound: issue 20). Senders outside the
 * --vmc-allow list are dropped and counted.
 *
 * Conversion: a device's pose is mirrored through the XY plane (x, y, -z), rotations as
 * M R M (M = diag(1, 1, -1)), the same map embody's output uses for device poses; a
 * controller's or tracker's axes are taken as they come.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "osc_in_decode.h"

#include "embody/m_math.h"
#include "osc/osc.h"
#include "util/u_log.h"
#include "util/u_time.h"

struct vmc_device {
    struct em_pose pose;
    int64_t heard_ns; /* 0: never */
};

struct vmc_source {
    struct in_source base;
    int fd;
    struct osc_vmc_in_desc desc;
    struct vmc_device device[EM_DEVICE_COUNT];
    struct vmc_device tracker[EM_TRACKER_COUNT];
    uint32_t trackers_heard; /* every tracker ever heard: kept in the frames once seen */
    bool new_data;
    struct osc_vmc_in_stats stats;
    char unmapped_logged[4][64];
    uint8_t datagram[65536]; /* the largest UDP payload fits */
};

/* What is logged of a string from the network: its first characters, printable. */
#define VMC_LOG_CHARS 32

static void
note_malformed(struct vmc_source *v, const char *why)
{
    if (v->stats.malformed++ == 0)
        U_LOG_W("VMC input: a malformed datagram refused (%s); further ones are counted", why);
}

/* Role codes in the table: devices first, then trackers. */
static int
role_of_name(const char *name)
{
    for (int d = 0; d < EM_DEVICE_COUNT; ++d)
        if (strcmp(name, em_device_name((enum em_device)d)) == 0)
            return d;
    const int t = em_tracker_find(name);
    return t >= 0 ? EM_DEVICE_COUNT + t : -1;
}

static int
role_of_serial(const struct vmc_source *v, const char *serial)
{
    for (int i = 0; i < v->desc.role_count; ++i)
        if (strcmp(v->desc.role[i].serial, serial) == 0)
            return v->desc.role[i].role;
    return role_of_name(serial);
}

static void
note_bad(struct vmc_source *v, const char *path, const char *why)
{
    if (v->stats.bad++ == 0)
        U_LOG_W("VMC input: %s refused: %s; further bad messages are counted", path, why);
}

static void
note_unmapped(struct vmc_source *v, const char *path, const char *serial)
{
    v->stats.unmapped++;
    for (size_t i = 0; i < sizeof v->unmapped_logged / sizeof v->unmapped_logged[0]; ++i) {
        if (strcmp(v->unmapped_logged[i], serial) == 0)
            return;
        if (!v->unmapped_logged[i][0]) {
            snprintf(v->unmapped_logged[i], sizeof v->unmapped_logged[i], "%s", serial);
            char shown[VMC_LOG_CHARS + 4];
            osc_in_printable(serial, VMC_LOG_CHARS, shown, sizeof shown);
            if (strlen(serial) >= sizeof v->desc.role[0].serial)
                U_LOG_W("VMC input: %s serial \"%s\" (%zu characters) has no role and is "
                        "too long to map with --vmc-role (at most %zu)",
                        path, shown, strlen(serial), sizeof v->desc.role[0].serial - 1);
            else
                U_LOG_W("VMC input: %s serial \"%s\" has no role; map it with --vmc-role "
                        "SERIAL=ROLE (head, left, right, pelvis, chest, left_foot, "
                        "right_foot, left_knee, right_knee, left_elbow, right_elbow)",
                        path, shown);
            return;
        }
    }
}

static void
on_message(const struct osc_in_message *m, void *user)
{
    struct vmc_source *v = user;
    const char *path = m->path;
    v->stats.messages++;
    const bool hmd = strcmp(path, "/VMC/Ext/Hmd/Pos") == 0;
    const bool con = strcmp(path, "/VMC/Ext/Con/Pos") == 0;
    const bool tra = strcmp(path, "/VMC/Ext/Tra/Pos") == 0;
    if (!hmd && !con && !tra) {
        v->stats.ignored++;
        return;
    }
    if (m->argc != 8 || strcmp(m->types, "sfffffff") != 0) {
        note_bad(v, path, "expected a serial and 7 floats (s fffffff)");
        return;
    }
    float p[3], q[4];
    for (int i = 0; i < 3; ++i)
        p[i] = osc_in_float(m, 1 + i);
    for (int i = 0; i < 4; ++i)
        q[i] = osc_in_float(m, 4 + i);
    if (!m_vec3_is_finite(p) || !m_quat_is_finite(q) || fabsf(p[0]) > 1e4f || fabsf(p[1]) > 1e4f ||
        fabsf(p[2]) > 1e4f) {
        note_bad(v, path, "a value is not a finite number (or beyond 10 km)");
        return;
    }
    const float n = sqrtf(m_quat_dot(q, q));
    if (fabsf(n - 1.0f) > 0.01f) {
        note_bad(v, path, "the rotation is not a unit quaternion");
        return;
    }
    const char *serial = (const char *)m->arg[0];
    const int role = hmd ? EM_DEVICE_HEAD : role_of_serial(v, serial);
    if (role < 0) {
        note_unmapped(v, path, serial);
        return;
    }
    struct vmc_device *d =
        role < EM_DEVICE_COUNT ? &v->device[role] : &v->tracker[role - EM_DEVICE_COUNT];
    if (role >= EM_DEVICE_COUNT)
        v->trackers_heard |= EM_TRACKER_BIT(role - EM_DEVICE_COUNT);
    /* Unity (left-handed) -> STAGE: M p and M R M. */
    m_vec3_set(d->pose.position_m, p[0], p[1], -p[2]);
    m_quat_set(d->pose.orientation, -q[0] / n, -q[1] / n, q[2] / n, q[3] / n);
    d->heard_ns = u_time_now_ns();
    v->stats.poses++;
    v->new_data = true;
}

static void
fill_pose(const struct vmc_device *d, int64_t now_ns, int64_t stale_ns, struct em_device_pose *out)
{
    memset(out, 0, sizeof *out);
    if (!d->heard_ns)
        return;
    m_vec3_copy(d->pose.position_m, out->pose.position_m);
    m_quat_copy(d->pose.orientation, out->pose.orientation);
    out->flags = now_ns - d->heard_ns <= stale_ns ? (uint32_t)EM_POSE_ALL_VALID : 0u;
}

static bool
sender_allowed(const struct vmc_source *v, const struct sockaddr_in *from)
{
    if (v->desc.allow_count == 0)
        return true;
    const uint32_t a = ntohl(from->sin_addr.s_addr);
    for (int i = 0; i < v->desc.allow_count; ++i)
        if ((a & v->desc.allow[i].mask) == (v->desc.allow[i].address & v->desc.allow[i].mask))
            return true;
    return false;
}

/* Reads one datagram if one is there; false when none is. */
static bool
receive_one(struct vmc_source *v)
{
    struct sockaddr_in from;
    socklen_t from_size = sizeof from;
    const ssize_t n = recvfrom(v->fd, v->datagram, sizeof v->datagram, MSG_TRUNC,
                               (struct sockaddr *)&from, &from_size);
    if (n < 0)
        return false;
    if (from.sin_family != AF_INET || !sender_allowed(v, &from)) {
        if (v->stats.refused_senders++ == 0) {
            char who[INET_ADDRSTRLEN] = "?";
            inet_ntop(AF_INET, &from.sin_addr, who, sizeof who);
            U_LOG_W("VMC input: datagrams from %s dropped (not on --vmc-allow); further "
                    "ones are counted",
                    who);
        }
        return true;
    }
    if ((size_t)n > sizeof v->datagram) {
        note_malformed(v, "larger than a UDP datagram can be");
        return true;
    }
    const char *why = NULL;
    if (osc_in_decode(v->datagram, (size_t)n, on_message, v, &why) < 0)
        note_malformed(v, why);
    return true;
}

static enum em_result
vmc_next(struct in_source *src, struct em_tracking_frame *out)
{
    struct vmc_source *v = (struct vmc_source *)src;
    v->new_data = false;
    /* Wait a little for the first datagram, then take whatever else is queued. */
    struct pollfd pfd = {.fd = v->fd, .events = POLLIN};
    if (poll(&pfd, 1, OSC_VMC_WAIT_MS) > 0)
        for (int i = 0; i < 1000 && receive_one(v); ++i) {
        }
    if (!v->new_data)
        return EM_NOT_READY;
    const int64_t now = u_time_now_ns();
    const int64_t stale = (int64_t)(OSC_VMC_STALE_S * 1e9);
    memset(out, 0, sizeof *out);
    out->time_s = (double)now * 1e-9;
    for (int d = 0; d < EM_DEVICE_COUNT; ++d)
        fill_pose(&v->device[d], now, stale, &out->device[d]);
    out->tracker_present = v->trackers_heard;
    for (int t = 0; t < EM_TRACKER_COUNT; ++t)
        fill_pose(&v->tracker[t], now, stale, &out->tracker[t]);
    v->stats.frames++;
    return EM_OK;
}

static void
vmc_destroy(struct in_source *src)
{
    struct vmc_source *v = (struct vmc_source *)src;
    if (v->stats.bad || v->stats.malformed || v->stats.unmapped || v->stats.refused_senders)
        U_LOG_W("VMC input: %llu messages, %llu bad, %llu malformed datagrams, %llu with a "
                "serial without a role, %llu from senders not allowed",
                (unsigned long long)v->stats.messages, (unsigned long long)v->stats.bad,
                (unsigned long long)v->stats.malformed, (unsigned long long)v->stats.unmapped,
                (unsigned long long)v->stats.refused_senders);
    if (v->fd >= 0)
        close(v->fd);
    free(v);
}

/* `host` as an IPv4 address: a dotted address, or a name looked up. 0 on success. */
static int
resolve_ipv4(const char *host, struct in_addr *out)
{
    if (inet_pton(AF_INET, host, out) == 1)
        return 0;
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM};
    struct addrinfo *res = NULL;
    if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res)
        return -1;
    *out = ((const struct sockaddr_in *)(const void *)res->ai_addr)->sin_addr;
    freeaddrinfo(res);
    return 0;
}

enum em_result
osc_vmc_in_create(const struct osc_vmc_in_desc *desc, struct in_source **out_source,
                  struct em_error *err)
{
    *out_source = NULL;
    const int port = desc->port ? desc->port : OSC_VMC_DEFAULT_PORT;
    if (port < 1 || port > 65535)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "--vmc-in: port %d: expected 1 to 65535",
                       port);
    if (desc->role_count < 0 || desc->role_count > OSC_VMC_MAX_ROLES)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "--vmc-in: at most %d serial roles",
                       OSC_VMC_MAX_ROLES);
    for (int i = 0; i < desc->role_count; ++i)
        if (desc->role[i].role < 0 || desc->role[i].role >= EM_DEVICE_COUNT + EM_TRACKER_COUNT)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "--vmc-in: serial \"%s\": no such role",
                           desc->role[i].serial);
    struct vmc_source *v = calloc(1, sizeof *v);
    if (!v)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "--vmc-in: out of memory");
    v->desc = *desc;
    v->fd = -1;
    const char *host = desc->host[0] ? desc->host : "127.0.0.1";
    struct sockaddr_in at = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (resolve_ipv4(host, &at.sin_addr) != 0) {
        free(v);
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--vmc-in: \"%s\" is not an IPv4 address or a known host name", host);
    }
    v->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (v->fd < 0 || bind(v->fd, (const struct sockaddr *)&at, sizeof at) != 0) {
        const int e = errno;
        if (v->fd >= 0)
            close(v->fd);
        free(v);
        return em_fail(err, EM_ERROR_IO,
                       "--vmc-in: cannot listen on UDP %s port %d: %s%s", host, port, strerror(e),
                       e == EADDRINUSE ? " (in use by another program?)" : "");
    }
    if (ntohl(at.sin_addr.s_addr) >> 24 != 127)
        U_LOG_W("VMC input: listening on %s port %d: the body now takes input from the "
                "network; anyone who can reach this port can drive it%s",
                host, port,
                desc->allow_count ? " if on --vmc-allow" : " (restrict senders with --vmc-allow)");
    v->base.name = "vmc";
    v->base.next = vmc_next;
    v->base.destroy = vmc_destroy;
    *out_source = &v->base;
    return EM_OK;
}

void
osc_vmc_in_get_stats(const struct in_source *source, struct osc_vmc_in_stats *out_stats)
{
    const struct vmc_source *v = (const struct vmc_source *)source;
    *out_stats = v->stats;
}

enum em_result
osc_vmc_role_parse(const char *text, struct osc_vmc_role *out, struct em_error *err)
{
    const char *eq = strrchr(text, '=');
    if (!eq || eq == text || (size_t)(eq - text) >= sizeof out->serial)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--vmc-role: expected SERIAL=ROLE (a serial of at most %zu characters), "
                       "got \"%s\"",
                       sizeof out->serial - 1, text);
    const int role = role_of_name(eq + 1);
    if (role < 0)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--vmc-role: \"%s\" is not a role; expected head, left, right, pelvis, "
                       "chest, left_foot, right_foot, left_knee, right_knee, left_elbow or "
                       "right_elbow",
                       eq + 1);
    memset(out, 0, sizeof *out);
    memcpy(out->serial, text, (size_t)(eq - text));
    out->role = role;
    return EM_OK;
}

enum em_result
osc_vmc_listen_parse(const char *text, struct osc_vmc_in_desc *desc, struct em_error *err)
{
    const char *colon = strrchr(text, ':');
    const char *port_text = colon ? colon + 1 : text;
    char *end = NULL;
    errno = 0;
    const long port = strtol(port_text, &end, 10);
    if (!*port_text || *end || errno || port < 1 || port > 65535 || port_text[0] == '-' ||
        port_text[0] == '+' || port_text[0] == ' ')
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--vmc-in: expected [HOST:]PORT with PORT 1 to 65535, got \"%s\"", text);
    char host[sizeof desc->host] = "";
    if (colon) {
        const size_t n = (size_t)(colon - text);
        if (n == 0 || n >= sizeof host)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "--vmc-in: expected HOST:PORT with a host of 1 to %zu characters, got "
                           "\"%s\"",
                           sizeof host - 1, text);
        memcpy(host, text, n);
        host[n] = '\0';
        struct in_addr a;
        if (resolve_ipv4(host, &a) != 0)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "--vmc-in: \"%s\" is not an IPv4 address or a known host name", host);
    }
    memcpy(desc->host, host, sizeof host);
    desc->port = (int)port;
    return EM_OK;
}

/* One --vmc-allow entry: "a.b.c.d", "a.b.c.d/n" or a host name. */
static enum em_result
parse_allow_one(const char *item, struct osc_vmc_allow *out, struct em_error *err)
{
    char addr[256];
    const char *slash = strchr(item, '/');
    const size_t n = slash ? (size_t)(slash - item) : strlen(item);
    if (n == 0 || n >= sizeof addr)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--vmc-allow: expected ADDR, ADDR/BITS or a host name, got \"%.64s\"", item);
    memcpy(addr, item, n);
    addr[n] = '\0';
    long bits = 32;
    if (slash) {
        char *end = NULL;
        errno = 0;
        bits = strtol(slash + 1, &end, 10);
        if (!slash[1] || *end || errno || bits < 0 || bits > 32 || slash[1] == '-' ||
            slash[1] == '+')
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "--vmc-allow: \"%.64s\": expected a prefix length 0 to 32 after '/'",
                           item);
    }
    struct in_addr a;
    if ((slash ? inet_pton(AF_INET, addr, &a) != 1 : resolve_ipv4(addr, &a) != 0))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--vmc-allow: \"%.64s\" is not an IPv4 address%s", addr,
                       slash ? "" : " or a known host name");
    out->mask = bits == 0 ? 0u : 0xffffffffu << (32 - bits);
    out->address = ntohl(a.s_addr) & out->mask;
    return EM_OK;
}

enum em_result
osc_vmc_allow_parse(const char *text, struct osc_vmc_in_desc *desc, struct em_error *err)
{
    const char *p = text;
    for (;;) {
        const char *comma = strchr(p, ',');
        const size_t n = comma ? (size_t)(comma - p) : strlen(p);
        char item[300];
        if (n >= sizeof item)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "--vmc-allow: an entry is too long");
        memcpy(item, p, n);
        item[n] = '\0';
        if (desc->allow_count >= OSC_VMC_MAX_ALLOW)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "--vmc-allow: at most %d entries",
                           OSC_VMC_MAX_ALLOW);
        if (parse_allow_one(item, &desc->allow[desc->allow_count], err) != EM_OK)
            return EM_ERROR_INVALID_ARGUMENT;
        desc->allow_count++;
        if (!comma)
            return EM_OK;
        p = comma + 1;
    }
}
