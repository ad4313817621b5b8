/*
 * The public side of the OpenXR source (xr/xr.h): settings resolved from the
 * description, creation in the specification's order (instance, system, actions,
 * session, spaces), teardown in reverse, and the status the program can show.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embody/m_math.h"
#include "util/u_log.h"
#include "xr/oxr_internal.h"

#define OXR_DEFAULT_FLOOR_HEIGHT_M 1.6f
#define OXR_MAX_FLOOR_HEIGHT_M 3.0f
#define OXR_DEFAULT_HEADLESS_RATE_HZ 60.0f
#define OXR_DEFAULT_RECONNECT_TIMEOUT_S 10.0f

static void
oxr_source_destroy(struct in_source *src)
{
    struct oxr_source *ox = (struct oxr_source *)src;
    oxr_frame_end_empty(ox);
    oxr_session_destroy(ox);
    oxr_instance_disconnect(ox);
    free(ox);
}

bool
oxr_source_is_openxr(const struct in_source *src)
{
    return src != NULL && src->destroy == oxr_source_destroy;
}

static enum em_result
check_floor(float floor_height_m, struct em_error *err)
{
    if (!isfinite(floor_height_m) || floor_height_m < 0.0f ||
        floor_height_m > OXR_MAX_FLOOR_HEIGHT_M)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "floor height: expected 0 to %.1f m below the LOCAL origin, got %g",
                       (double)OXR_MAX_FLOOR_HEIGHT_M, (double)floor_height_m);
    return EM_OK;
}

/* Checks the description and resolves its defaults into `ox`. */
static enum em_result
resolve_desc(const struct oxr_desc *desc, struct oxr_source *ox, struct em_error *err)
{
    if (!desc->headless && !desc->draw_eye)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "oxr_desc.draw_eye: needed to draw the headset view (or set headless)");
    enum em_result r = check_floor(desc->floor_height_m, err);
    if (r != EM_OK)
        return r;
    if (!isfinite(desc->headless_rate_hz) || desc->headless_rate_hz < 0.0f ||
        desc->headless_rate_hz > 1000.0f)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "headless rate: expected 0 (default) to 1000 Hz, got %g",
                       (double)desc->headless_rate_hz);
    if (!isfinite(desc->reconnect_timeout_s))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "reconnect timeout: expected a number of seconds, got %g",
                       (double)desc->reconnect_timeout_s);

    snprintf(ox->app_name, sizeof ox->app_name, "%s",
             desc->app_name && desc->app_name[0] ? desc->app_name : "embody");
    ox->headless = desc->headless;
    ox->draw_eye = desc->draw_eye;
    ox->user = desc->user;
    ox->floor_height_m =
        desc->floor_height_m > 0.0f ? desc->floor_height_m : OXR_DEFAULT_FLOOR_HEIGHT_M;
    const float rate_hz =
        desc->headless_rate_hz > 0.0f ? desc->headless_rate_hz : OXR_DEFAULT_HEADLESS_RATE_HZ;
    ox->headless_period_ns = (int64_t)(1e9 / (double)rate_hz);
    const float timeout_s = desc->reconnect_timeout_s == 0.0f ? OXR_DEFAULT_RECONNECT_TIMEOUT_S
                                                              : desc->reconnect_timeout_s;
    ox->reconnect_timeout_ns = timeout_s < 0.0f ? -1 : (int64_t)((double)timeout_s * 1e9);
    return EM_OK;
}

static void
init_last_frame(struct oxr_source *ox)
{
    for (int d = 0; d < EM_DEVICE_COUNT; ++d)
        m_quat_identity(ox->last.device[d].pose.orientation);
    for (int hand = 0; hand < OXR_HAND_COUNT; ++hand)
        m_quat_identity(ox->aim[hand].pose.orientation);
    oxr_hands_init(ox);
}

static bool
oxr_source_fingers(struct in_source *src, struct st_fingers *out_fingers)
{
    const struct oxr_source *ox = (const struct oxr_source *)src;
    *out_fingers = ox->fingers;
    return true;
}

enum em_result
oxr_source_create(const struct oxr_desc *desc, struct in_source **out_source,
                  struct em_error *err)
{
    *out_source = NULL;
    if (!desc)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "oxr_source_create: no description");
    struct oxr_source *ox = calloc(1, sizeof *ox);
    if (!ox)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "out of memory for the OpenXR source");
    ox->base.name = "openxr";
    ox->base.next = oxr_frame_next;
    ox->base.submit = oxr_frame_submit;
    ox->base.set_paused = NULL; /* live tracking does not pause */
    ox->base.destroy = oxr_source_destroy;
    ox->base.fingers = oxr_source_fingers;
    init_last_frame(ox);

    enum em_result r = resolve_desc(desc, ox, err);
    if (r == EM_OK)
        r = oxr_instance_connect(ox, err);
    if (r == EM_OK)
        r = oxr_session_create(ox, err);
    if (r != EM_OK) {
        oxr_source_destroy(&ox->base);
        return r;
    }
    *out_source = &ox->base;
    return EM_OK;
}

enum em_result
oxr_source_set_floor(struct in_source *src, float floor_height_m, struct em_error *err)
{
    if (!oxr_source_is_openxr(src))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "not an OpenXR source");
    const enum em_result r = check_floor(floor_height_m, err);
    if (r != EM_OK)
        return r;
    struct oxr_source *ox = (struct oxr_source *)src;
    ox->floor_height_m = floor_height_m;
    /* The open frame (if any) still uses the old space; next() makes the new one, and a
     * new session uses the new height anyway. */
    ox->base_space_stale = !ox->stage && ox->session != XR_NULL_HANDLE;
    return EM_OK;
}

void
oxr_source_get_status(const struct in_source *src, struct oxr_status *out_status)
{
    memset(out_status, 0, sizeof *out_status);
    if (!oxr_source_is_openxr(src))
        return;
    const struct oxr_source *ox = (const struct oxr_source *)src;
    struct oxr_status *s = out_status;
    snprintf(s->runtime_name, sizeof s->runtime_name, "%s", ox->runtime_name);
    snprintf(s->system_name, sizeof s->system_name, "%s", ox->system_name);
    snprintf(s->session_state, sizeof s->session_state, "%s",
             ox->session ? oxr_session_state_name(ox->state) : "NONE");
    for (int hand = 0; hand < OXR_HAND_COUNT; ++hand) {
        snprintf(s->hand_profile[hand], sizeof s->hand_profile[hand], "%s",
                 ox->hand_profile[hand]);
        s->aim[hand] = ox->aim[hand];
    }
    s->running = ox->running;
    s->headless = ox->headless;
    s->stage_space = ox->stage;
    s->instances_created = ox->instances_created;
    s->sessions_created = ox->sessions_created;
    s->profiles_accepted = ox->actions.profiles_accepted;
    s->runtime_gone = ox->runtime_gone;
    s->trackers = ox->actions.trackers;
    s->hand_tracking = ox->hand_tracking;
    static const char *const k_source[] = {"none", "controller", "hand tracking"};
    for (int hand = 0; hand < OXR_HAND_COUNT; ++hand) {
        const struct oxr_hand *h = &ox->hand[hand];
        s->hand[hand].tracked = h->active;
        s->hand[hand].finger_source = k_source[h->finger_source];
        s->hand[hand].wrist_source = k_source[h->wrist_source];
        s->hand[hand].controller_idle = h->idle;
        s->hand[hand].refused_joints = h->report.refused_count;
        s->hand[hand].fallback_fingers = h->report.fallback_mask;
        memcpy(s->hand[hand].joint_fault, h->report.fault, sizeof s->hand[hand].joint_fault);
        s->hand[hand].pose = h->pose;
        s->hand[hand].update_us = (float)((double)h->update_ns * 1e-3);
    }
}
