/*
 * VMC protocol input (include/embody/osc.h): tracking from another program as an input
 * source (include/embody/input.h), beside OpenXR and replay.
 *
 * Read: /VMC/Ext/Hmd/Pos (the headset), /VMC/Ext/Con/Pos (controllers) and
 * /VMC/Ext/Tra/Pos (trackers), each "s fffffff": a serial, then a position and a
 * rotation (x, y, z, w) in Unity's left-handed world. A serial becomes a role through the
 * role table (serials named after a role, "head", "left", "right", "pelvis",
 * "left_foot" ..., are that role, which is what embody's own VMC output sends); the
 * headset needs none. A device not heard from for OSC_VMC_STALE_S counts as lost. Every
 * other address is ignored (bones, blend shapes, time). Bad messages (wrong argument
 * types, non-finite or non-unit values) and datagrams liblo cannot read are counted and
 * the first of each kind is logged; none of them stops the source.
 *
 * Conversion: a device's pose is mirrored through the XY plane (x, y, -z), rotations as
 * M R M (M = diag(1, 1, -1)), the same map embody's output uses for device poses; a
 * controller's or tracker's axes are taken as they come.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lo/lo.h>

#include "embody/m_math.h"
#include "embody/osc.h"
#include "util/u_log.h"
#include "util/u_time.h"

struct vmc_device {
    struct em_pose pose;
    int64_t heard_ns; /* 0: never */
};

struct vmc_source {
    struct in_source base;
    lo_server server;
    struct osc_vmc_in_desc desc;
    struct vmc_device device[EM_DEVICE_COUNT];
    struct vmc_device tracker[EM_TRACKER_COUNT];
    uint32_t trackers_heard; /* every tracker ever heard: kept in the frames once seen */
    bool new_data;
    struct osc_vmc_in_stats stats;
    char unmapped_logged[4][64];
};

/* liblo's error handler takes no user pointer; the source being read is the one that
 * calls lo_server_recv_noblock, on this thread. */
static _Thread_local struct vmc_source *t_reading;

static void
on_lo_error(int num, const char *msg, const char *where)
{
    struct vmc_source *v = t_reading;
    if (!v)
        return;
    if (v->stats.malformed++ == 0)
        U_LOG_W("VMC input: an unreadable datagram (liblo error %d: %s%s%s); further ones "
                "are counted",
                num, msg ? msg : "?", where ? " at " : "", where ? where : "");
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
            U_LOG_W("VMC input: %s serial \"%s\" has no role; map it with --vmc-role "
                    "%s=ROLE (head, left, right, pelvis, chest, left_foot, right_foot, "
                    "left_knee, right_knee, left_elbow, right_elbow)",
                    path, serial, serial);
            return;
        }
    }
}

static int
on_message(const char *path, const char *types, lo_arg **argv, int argc, lo_message msg, void *user)
{
    (void)msg;
    struct vmc_source *v = user;
    v->stats.messages++;
    const bool hmd = strcmp(path, "/VMC/Ext/Hmd/Pos") == 0;
    const bool con = strcmp(path, "/VMC/Ext/Con/Pos") == 0;
    const bool tra = strcmp(path, "/VMC/Ext/Tra/Pos") == 0;
    if (!hmd && !con && !tra) {
        v->stats.ignored++;
        return 0;
    }
    if (argc != 8 || strcmp(types, "sfffffff") != 0) {
        note_bad(v, path, "expected a serial and 7 floats (s fffffff)");
        return 0;
    }
    float p[3], q[4];
    /* liblo's arguments sit at 4-byte offsets in the message while lo_arg (a union with
     * 64-bit members) wants 8: read the bytes, not the union. */
    for (int i = 0; i < 3; ++i)
        memcpy(&p[i], (const void *)argv[1 + i], sizeof p[i]);
    for (int i = 0; i < 4; ++i)
        memcpy(&q[i], (const void *)argv[4 + i], sizeof q[i]);
    if (!m_vec3_is_finite(p) || !m_quat_is_finite(q) || fabsf(p[0]) > 1e4f || fabsf(p[1]) > 1e4f ||
        fabsf(p[2]) > 1e4f) {
        note_bad(v, path, "a value is not a finite number (or beyond 10 km)");
        return 0;
    }
    const float n = sqrtf(m_quat_dot(q, q));
    if (fabsf(n - 1.0f) > 0.01f) {
        note_bad(v, path, "the rotation is not a unit quaternion");
        return 0;
    }
    const char *serial = (const char *)argv[0];
    const int role = hmd ? EM_DEVICE_HEAD : role_of_serial(v, serial);
    if (role < 0) {
        note_unmapped(v, path, serial);
        return 0;
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
    return 0;
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

static enum em_result
vmc_next(struct in_source *src, struct em_tracking_frame *out)
{
    struct vmc_source *v = (struct vmc_source *)src;
    t_reading = v;
    v->new_data = false;
    /* Wait a little for the first datagram, then take whatever else is queued. */
    int got = lo_server_recv_noblock(v->server, OSC_VMC_WAIT_MS);
    for (int i = 0; got > 0 && i < 1000; ++i)
        got = lo_server_recv_noblock(v->server, 0);
    t_reading = NULL;
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
    if (v->stats.bad || v->stats.malformed || v->stats.unmapped)
        U_LOG_W("VMC input: %llu messages, %llu bad, %llu unreadable datagrams, %llu with a "
                "serial without a role",
                (unsigned long long)v->stats.messages, (unsigned long long)v->stats.bad,
                (unsigned long long)v->stats.malformed, (unsigned long long)v->stats.unmapped);
    if (v->server)
        lo_server_free(v->server);
    free(v);
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
    char port_text[16];
    snprintf(port_text, sizeof port_text, "%d", port);
    v->server = lo_server_new_with_proto(port_text, LO_UDP, on_lo_error);
    if (!v->server) {
        free(v);
        return em_fail(err, EM_ERROR_IO,
                       "--vmc-in: cannot listen on UDP port %d (in use by another program?)", port);
    }
    lo_server_add_method(v->server, NULL, NULL, on_message, v);
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
