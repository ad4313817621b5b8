/*
 * The frame loop of the OpenXR source, as in_source next() and submit():
 *
 *   next():   poll events (state machine) -> xrWaitFrame -> xrBeginFrame -> xrSyncActions
 *             -> locate head (VIEW) and hands (grip, aim) at the predicted display time
 *             -> each hand's fingers and wrist (oxr_hands.c: hand tracking, the
 *             controller's finger inputs, handovers), into the frame and ox->fingers
 *   submit(): draw both eyes (when the runtime says to render) -> xrEndFrame with a
 *             projection layer, or with no layer
 *
 * Headless sessions have no frames (XR_MND_headless): next() paces itself and locates at
 * the current time, converted from CLOCK_MONOTONIC (XR_KHR_convert_timespec_time).
 *
 * While the session is not running, or lost, or the runtime is away, next() returns
 * EM_NOT_READY after a short sleep and retries in the background: a lost session waits
 * for its headset as long as it takes (the specification's advice); a lost runtime is
 * waited for up to reconnect_timeout_s, then the stream ends.
 */
#include <math.h>
#include <string.h>
#include <time.h>

#include "util/u_log.h"
#include "util/u_time.h"
#include "xr/oxr_internal.h"

#define OXR_IDLE_SLEEP_NS 10000000LL     /* 10 ms between polls when there is no frame */
#define OXR_RETRY_INTERVAL_NS 250000000LL /* 0.25 s between reconnection attempts */

/* ---- Poses ------------------------------------------------------------------------ */

/* Locates `space` in the base space at the frame's time; an inactive action or an
 * unusable answer gives no flags and keeps the last values. */
static bool
locate(struct oxr_source *ox, XrSpace space, bool active, const struct em_device_pose *keep,
       struct em_device_pose *out)
{
    XrSpaceLocation loc = {.type = XR_TYPE_SPACE_LOCATION};
    if (active) {
        if (XR_FAILED(OXR_CHECK(ox, xrLocateSpace(space, ox->base_space, ox->frame_time, &loc))))
            return false;
    }
    oxr_location_to_pose(&loc, keep, out);
    return true;
}

/* ---- Time ------------------------------------------------------------------------- */

/* Seconds from the first frame; strictly increasing, also across reconnections. */
static double
frame_time_s(struct oxr_source *ox, XrTime t)
{
    const int64_t now = u_time_now_ns();
    if (!ox->time_anchored) {
        ox->anchor_xr = t;
        ox->anchor_s = ox->last_frame_wall_ns
                           ? ox->last_time_s + (double)(now - ox->last_frame_wall_ns) * 1e-9
                           : 0.0;
        ox->time_anchored = true;
    }
    double s = ox->anchor_s + (double)(t - ox->anchor_xr) * 1e-9;
    if (ox->last_frame_wall_ns && !(s > ox->last_time_s))
        s = nextafter(ox->last_time_s, (double)INFINITY);
    ox->last_time_s = s;
    ox->last_frame_wall_ns = now;
    return s;
}

/* ---- Failures and reconnection ---------------------------------------------------- */

/* After a failed call: a loss is handled (the caller gets EM_NOT_READY and we retry);
 * anything else is returned as it is. */
static enum em_result
frame_failed(struct oxr_source *ox, enum em_result r)
{
    if (ox->session_lost || ox->instance_lost) {
        oxr_session_handle_losses(ox);
        return ox->link == OXR_LINK_ENDED ? EM_END_OF_STREAM : EM_NOT_READY;
    }
    return r;
}

static enum em_result
reconnect_failed(struct oxr_source *ox, enum em_result r, const struct em_error *err)
{
    if (ox->session_lost || ox->instance_lost) {
        oxr_session_handle_losses(ox);
        return ox->link == OXR_LINK_ENDED ? EM_END_OF_STREAM : EM_NOT_READY;
    }
    if (r == EM_ERROR_UNSUPPORTED) {
        /* still away (no runtime, no headset): try again later */
        U_LOG_D("openxr: not yet: %s", err->message);
        return EM_NOT_READY;
    }
    U_LOG_E("openxr: reconnecting failed: %s", err->message);
    ox->link = OXR_LINK_ENDED;
    ox->runtime_gone = true;
    return r;
}

static enum em_result
reconnect_step(struct oxr_source *ox)
{
    const int64_t now = u_time_now_ns();
    if (now < ox->retry_at_ns) {
        const int64_t wait = ox->retry_at_ns - now;
        u_time_sleep_ns(wait < OXR_IDLE_SLEEP_NS ? wait : OXR_IDLE_SLEEP_NS);
        return EM_NOT_READY;
    }
    ox->retry_at_ns = now + OXR_RETRY_INTERVAL_NS;
    struct em_error err = {{0}};
    enum em_result r;
    if (ox->link == OXR_LINK_NONE) {
        if (now - ox->lost_at_ns > ox->reconnect_timeout_ns) {
            U_LOG_W("openxr: the runtime did not come back within %.0f s: the stream ends",
                    (double)ox->reconnect_timeout_ns * 1e-9);
            ox->link = OXR_LINK_ENDED;
            ox->runtime_gone = true;
            return EM_END_OF_STREAM;
        }
        r = oxr_instance_connect(ox, &err);
        if (r != EM_OK)
            return reconnect_failed(ox, r, &err);
        ox->time_anchored = false; /* a new instance may count time from elsewhere */
        U_LOG_I("openxr: reconnected to the runtime");
    } else {
        /* After LOSS_PENDING: xrGetSystem until the headset is back. */
        r = oxr_system_find(ox, &err);
        if (r != EM_OK)
            return reconnect_failed(ox, r, &err);
    }
    r = oxr_session_create(ox, &err);
    if (r != EM_OK)
        return reconnect_failed(ox, r, &err);
    U_LOG_I("openxr: new session created");
    return EM_NOT_READY; /* frames start when the runtime says READY */
}

/* ---- The frame -------------------------------------------------------------------- */

static enum em_result
begin_frame(struct oxr_source *ox)
{
    XrFrameWaitInfo wait = {.type = XR_TYPE_FRAME_WAIT_INFO};
    ox->frame_state = (XrFrameState){.type = XR_TYPE_FRAME_STATE};
    if (XR_FAILED(OXR_CHECK(ox, xrWaitFrame(ox->session, &wait, &ox->frame_state))))
        return EM_ERROR_RUNTIME;
    XrFrameBeginInfo begin = {.type = XR_TYPE_FRAME_BEGIN_INFO};
    if (XR_FAILED(OXR_CHECK(ox, xrBeginFrame(ox->session, &begin))))
        return EM_ERROR_RUNTIME;
    ox->frame_open = true;
    ox->frame_time = ox->frame_state.predictedDisplayTime;
    return EM_OK;
}

static enum em_result
begin_headless_frame(struct oxr_source *ox)
{
    int64_t now = u_time_now_ns();
    if (ox->headless_next_ns == 0)
        ox->headless_next_ns = now;
    if (now < ox->headless_next_ns) {
        u_time_sleep_ns(ox->headless_next_ns - now);
        now = u_time_now_ns();
    }
    ox->headless_next_ns += ox->headless_period_ns;
    if (ox->headless_next_ns < now) /* late: do not catch up with a burst */
        ox->headless_next_ns = now + ox->headless_period_ns;

    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    if (XR_FAILED(OXR_CHECK(ox, ox->convert_timespec(ox->instance, &ts, &ox->frame_time))))
        return EM_ERROR_RUNTIME;
    return EM_OK;
}

static enum em_result
track(struct oxr_source *ox, struct em_tracking_frame *out_frame)
{
    uint32_t events = 0;
    if (!oxr_actions_sync(ox, &events))
        return frame_failed(ox, EM_ERROR_RUNTIME);

    struct em_tracking_frame f;
    memset(&f, 0, sizeof f);
    f.time_s = frame_time_s(ox, ox->frame_time);
    f.events = events;
    bool ok = locate(ox, ox->view_space, true, &ox->last.device[EM_DEVICE_HEAD],
                     &f.device[EM_DEVICE_HEAD]);
    for (int hand = 0; hand < OXR_HAND_COUNT && ok; ++hand) {
        const int device = EM_DEVICE_LEFT_HAND + hand;
        struct oxr_hand_controller controller = {
            .grip_active = oxr_actions_pose_active(ox, ox->actions.grip, hand)};
        ok = locate(ox, ox->grip_space[hand], controller.grip_active, &ox->last.device[device],
                    &f.device[device]);
        ok = ok && locate(ox, ox->aim_space[hand],
                          oxr_actions_pose_active(ox, ox->actions.aim, hand), &ox->aim[hand],
                          &ox->aim[hand]);
        /* The fingers, and the wrist from hand tracking when the controller is away. */
        ok = ok && oxr_actions_read_fingers(ox, hand, &controller);
        ok = ok && oxr_hands_update(ox, hand, f.time_s, &controller, &f.device[device]);
    }
    ok = ok && oxr_trackers_locate(ox, &f);
    if (!ok || ox->session_lost || ox->instance_lost)
        return frame_failed(ox, EM_ERROR_RUNTIME);
    ox->last = f;
    *out_frame = f;
    return EM_OK;
}

enum em_result
oxr_frame_next(struct in_source *src, struct em_tracking_frame *out_frame)
{
    struct oxr_source *ox = (struct oxr_source *)src;
    oxr_frame_end_empty(ox); /* the last frame was not submitted */
    oxr_session_poll_events(ox);
    switch (ox->link) {
    case OXR_LINK_ENDED:
        return EM_END_OF_STREAM;
    case OXR_LINK_NONE:
    case OXR_LINK_INSTANCE:
        return reconnect_step(ox);
    case OXR_LINK_SESSION:
        break;
    }
    if (ox->base_space_stale) {
        struct em_error err = {{0}};
        if (oxr_session_create_base_space(ox, &err) != EM_OK)
            return frame_failed(ox, EM_ERROR_RUNTIME);
    }
    if (!ox->running) {
        u_time_sleep_ns(OXR_IDLE_SLEEP_NS);
        return EM_NOT_READY;
    }
    const enum em_result r = ox->headless ? begin_headless_frame(ox) : begin_frame(ox);
    if (r != EM_OK)
        return frame_failed(ox, r);
    return track(ox, out_frame);
}

void
oxr_frame_end_empty(struct oxr_source *ox)
{
    if (!ox->frame_open)
        return;
    ox->frame_open = false;
    XrFrameEndInfo end = {.type = XR_TYPE_FRAME_END_INFO,
                          .displayTime = ox->frame_state.predictedDisplayTime,
                          .environmentBlendMode = ox->view.blend_mode};
    OXR_CHECK(ox, xrEndFrame(ox->session, &end));
}

enum em_result
oxr_frame_submit(struct in_source *src)
{
    struct oxr_source *ox = (struct oxr_source *)src;
    if (!ox->frame_open)
        return EM_OK; /* headless, or no frame this time */
    XrCompositionLayerProjection layer;
    XrCompositionLayerProjectionView views[OXR_EYE_COUNT];
    bool drawn = false;
    if (ox->frame_state.shouldRender) {
        const enum em_result r = oxr_view_render(ox, &layer, views, &drawn);
        if (r != EM_OK) {
            oxr_frame_end_empty(ox);
            const enum em_result f = frame_failed(ox, r);
            return f == EM_NOT_READY || f == EM_END_OF_STREAM ? EM_OK : f;
        }
    }
    const XrCompositionLayerBaseHeader *layers[1] = {(const XrCompositionLayerBaseHeader *)&layer};
    XrFrameEndInfo end = {.type = XR_TYPE_FRAME_END_INFO,
                          .displayTime = ox->frame_state.predictedDisplayTime,
                          .environmentBlendMode = ox->view.blend_mode,
                          .layerCount = drawn ? 1u : 0u,
                          .layers = drawn ? layers : NULL};
    ox->frame_open = false;
    if (XR_FAILED(OXR_CHECK(ox, xrEndFrame(ox->session, &end)))) {
        const enum em_result r = frame_failed(ox, EM_ERROR_RUNTIME);
        /* a loss is handled: the next next() carries on */
        return r == EM_NOT_READY || r == EM_END_OF_STREAM ? EM_OK : r;
    }
    return EM_OK;
}
