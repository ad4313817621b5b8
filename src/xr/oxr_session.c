/*
 * The session and its life: creation (with the window's OpenGL context, or headless),
 * the reference spaces, and the state machine driven by the runtime's events, as the
 * specification describes it:
 *
 *   READY         -> xrBeginSession (frames start)
 *   STOPPING      -> xrEndSession (frames stop; READY may come again)
 *   EXITING       -> destroy the session, the stream ends
 *   LOSS_PENDING  -> destroy the session, then xrGetSystem until the headset is back and
 *                    create a new one (oxr_frame.c retries)
 *   instance loss -> destroy everything, reconnect for a while (oxr_frame.c)
 */
#include <stdio.h>
#include <string.h>

#include "util/u_log.h"
#include "util/u_time.h"
#include "xr/oxr_internal.h"

static bool
stage_offered(struct oxr_source *ox)
{
    XrReferenceSpaceType types[16];
    uint32_t count = 0;
    if (XR_FAILED(OXR_CHECK(ox, xrEnumerateReferenceSpaces(ox->session, 0, &count, NULL))))
        return false;
    if (count > 16)
        count = 16;
    if (XR_FAILED(OXR_CHECK(ox, xrEnumerateReferenceSpaces(ox->session, count, &count, types))))
        return false;
    for (uint32_t i = 0; i < count; ++i) {
        if (types[i] == XR_REFERENCE_SPACE_TYPE_STAGE)
            return true;
    }
    return false;
}

static XrResult
create_reference_space(struct oxr_source *ox, XrReferenceSpaceType type, float lift_m,
                       XrSpace *out_space)
{
    XrReferenceSpaceCreateInfo info = {.type = XR_TYPE_REFERENCE_SPACE_CREATE_INFO,
                                       .referenceSpaceType = type};
    info.poseInReferenceSpace.orientation.w = 1.0f;
    /* A space whose origin is `lift_m` below the reference space's origin. */
    info.poseInReferenceSpace.position.y = -lift_m;
    return OXR_CHECK(ox, xrCreateReferenceSpace(ox->session, &info, out_space));
}

enum em_result
oxr_session_create_base_space(struct oxr_source *ox, struct em_error *err)
{
    ox->base_space_stale = false;
    if (ox->base_space != XR_NULL_HANDLE) {
        OXR_CHECK(ox, xrDestroySpace(ox->base_space));
        ox->base_space = XR_NULL_HANDLE;
    }
    const XrResult r = ox->stage ? create_reference_space(ox, XR_REFERENCE_SPACE_TYPE_STAGE,
                                                           0.0f, &ox->base_space)
                                 : create_reference_space(ox, XR_REFERENCE_SPACE_TYPE_LOCAL,
                                                          ox->floor_height_m, &ox->base_space);
    if (XR_FAILED(r)) {
        ox->base_space = XR_NULL_HANDLE;
        return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);
    }
    return EM_OK;
}

static enum em_result
create_action_space(struct oxr_source *ox, XrAction action, int hand, XrSpace *out_space,
                    struct em_error *err)
{
    XrActionSpaceCreateInfo info = {.type = XR_TYPE_ACTION_SPACE_CREATE_INFO,
                                    .action = action,
                                    .subactionPath = ox->actions.hand[hand]};
    info.poseInActionSpace.orientation.w = 1.0f;
    if (XR_FAILED(OXR_CHECK(ox, xrCreateActionSpace(ox->session, &info, out_space)))) {
        *out_space = XR_NULL_HANDLE;
        return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);
    }
    return EM_OK;
}

static enum em_result
create_spaces(struct oxr_source *ox, struct em_error *err)
{
    const bool had_stage = ox->stage;
    ox->stage = stage_offered(ox);
    if (ox->sessions_created == 1 || had_stage != ox->stage) {
        if (ox->stage)
            U_LOG_I("openxr: tracking in STAGE space (floor at y = 0)");
        else
            U_LOG_I("openxr: the runtime has no STAGE space: tracking in LOCAL space with "
                    "the floor %.2f m below its origin until calibration",
                    (double)ox->floor_height_m);
    }
    enum em_result r = oxr_session_create_base_space(ox, err);
    if (r != EM_OK)
        return r;
    if (XR_FAILED(create_reference_space(ox, XR_REFERENCE_SPACE_TYPE_VIEW, 0.0f,
                                         &ox->view_space))) {
        ox->view_space = XR_NULL_HANDLE;
        return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);
    }
    for (int hand = 0; hand < OXR_HAND_COUNT && r == EM_OK; ++hand) {
        r = create_action_space(ox, ox->actions.grip, hand, &ox->grip_space[hand], err);
        if (r == EM_OK)
            r = create_action_space(ox, ox->actions.aim, hand, &ox->aim_space[hand], err);
    }
    if (r == EM_OK)
        r = oxr_trackers_create_spaces(ox, err);
    if (r == EM_OK)
        r = oxr_hands_create_trackers(ox, err);
    return r;
}

enum em_result
oxr_session_create(struct oxr_source *ox, struct em_error *err)
{
    XrSessionCreateInfo info = {.type = XR_TYPE_SESSION_CREATE_INFO, .systemId = ox->system};
    XrGraphicsBindingOpenGLXlibKHR binding = {.type = XR_TYPE_GRAPHICS_BINDING_OPENGL_XLIB_KHR};
    if (!ox->headless) {
        const enum em_result r = oxr_view_binding(ox, &binding, err);
        if (r != EM_OK)
            return r;
        info.next = &binding;
    }
    /* Without a graphics binding, XR_MND_headless makes this a headless session. */
    if (XR_FAILED(OXR_CHECK(ox, xrCreateSession(ox->instance, &info, &ox->session)))) {
        ox->session = XR_NULL_HANDLE;
        return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);
    }
    ox->sessions_created++;
    ox->link = OXR_LINK_SESSION;
    ox->state = XR_SESSION_STATE_UNKNOWN;
    ox->running = false;
    ox->frame_open = false;

    enum em_result r = create_spaces(ox, err);
    if (r == EM_OK)
        r = oxr_actions_attach(ox, err);
    if (r == EM_OK && !ox->headless)
        r = oxr_view_create_swapchains(ox, err);
    if (r != EM_OK) {
        oxr_session_destroy(ox);
        return r;
    }
    return EM_OK;
}

static void
destroy_space(struct oxr_source *ox, XrSpace *space)
{
    if (*space != XR_NULL_HANDLE)
        OXR_CHECK(ox, xrDestroySpace(*space));
    *space = XR_NULL_HANDLE;
}

void
oxr_session_destroy(struct oxr_source *ox)
{
    if (ox->session != XR_NULL_HANDLE) {
        /* An open frame dies with its session. */
        ox->frame_open = false;
        if (!ox->headless)
            oxr_view_destroy_swapchains(ox);
        for (int hand = 0; hand < OXR_HAND_COUNT; ++hand) {
            destroy_space(ox, &ox->grip_space[hand]);
            destroy_space(ox, &ox->aim_space[hand]);
        }
        oxr_trackers_destroy_spaces(ox);
        oxr_hands_destroy_trackers(ox);
        destroy_space(ox, &ox->view_space);
        destroy_space(ox, &ox->base_space);
        OXR_CHECK(ox, xrDestroySession(ox->session));
        ox->session = XR_NULL_HANDLE;
    }
    ox->running = false;
    ox->state = XR_SESSION_STATE_UNKNOWN;
    ox->session_lost = false;
    memset(ox->hand_profile, 0, sizeof ox->hand_profile);
    if (ox->link == OXR_LINK_SESSION)
        ox->link = OXR_LINK_INSTANCE;
}

static void
begin_session(struct oxr_source *ox)
{
    XrSessionBeginInfo info = {.type = XR_TYPE_SESSION_BEGIN_INFO,
                               .primaryViewConfigurationType =
                                   XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO};
    if (XR_SUCCEEDED(OXR_CHECK(ox, xrBeginSession(ox->session, &info)))) {
        ox->running = true;
        ox->frame_open = false;
        ox->headless_next_ns = 0;
    }
}

static void
end_session(struct oxr_source *ox)
{
    /* frames stop whether or not the runtime liked the call */
    OXR_CHECK(ox, xrEndSession(ox->session));
    ox->running = false;
    ox->frame_open = false;
}

static void
on_state_changed(struct oxr_source *ox, const XrEventDataSessionStateChanged *ev)
{
    if (ev->session != ox->session || ox->session == XR_NULL_HANDLE)
        return; /* about a session already destroyed */
    ox->state = ev->state;
    U_LOG_I("openxr: session %s", oxr_session_state_name(ev->state));
    switch (ev->state) {
    case XR_SESSION_STATE_READY:
        begin_session(ox);
        break;
    case XR_SESSION_STATE_STOPPING:
        end_session(ox);
        break;
    case XR_SESSION_STATE_EXITING:
        oxr_session_destroy(ox);
        ox->link = OXR_LINK_ENDED;
        U_LOG_I("openxr: the runtime asked embody to exit");
        break;
    case XR_SESSION_STATE_LOSS_PENDING:
        U_LOG_W("openxr: the session is being lost (headset gone?): waiting for it to come "
                "back");
        ox->session_lost = true;
        break;
    default:
        break;
    }
}

static void
on_event(struct oxr_source *ox, const XrEventDataBuffer *ev)
{
    switch (ev->type) {
    case XR_TYPE_EVENT_DATA_EVENTS_LOST: {
        const XrEventDataEventsLost *lost = (const XrEventDataEventsLost *)ev;
        U_LOG_W("openxr: the runtime dropped %u events", lost->lostEventCount);
        break;
    }
    case XR_TYPE_EVENT_DATA_VIVE_TRACKER_CONNECTED_HTCX: oxr_trackers_on_connected(ox, ev); break;
    case XR_TYPE_EVENT_DATA_INSTANCE_LOSS_PENDING:
        U_LOG_W("openxr: the runtime is going away (instance loss pending)");
        ox->instance_lost = true;
        break;
    case XR_TYPE_EVENT_DATA_SESSION_STATE_CHANGED:
        on_state_changed(ox, (const XrEventDataSessionStateChanged *)ev);
        break;
    case XR_TYPE_EVENT_DATA_INTERACTION_PROFILE_CHANGED: {
        const XrEventDataInteractionProfileChanged *changed =
            (const XrEventDataInteractionProfileChanged *)ev;
        if (changed->session == ox->session && ox->session != XR_NULL_HANDLE)
            oxr_actions_report_profiles(ox);
        break;
    }
    case XR_TYPE_EVENT_DATA_REFERENCE_SPACE_CHANGE_PENDING: {
        const XrEventDataReferenceSpaceChangePending *change =
            (const XrEventDataReferenceSpaceChangePending *)ev;
        U_LOG_I("openxr: the runtime moves reference space %d (recentered?)",
                (int)change->referenceSpaceType);
        break;
    }
    default:
        U_LOG_D("openxr: event %d ignored", (int)ev->type);
        break;
    }
}

void
oxr_session_poll_events(struct oxr_source *ox)
{
    while (ox->instance != XR_NULL_HANDLE && !ox->instance_lost) {
        XrEventDataBuffer ev = {.type = XR_TYPE_EVENT_DATA_BUFFER};
        const XrResult r = OXR_CHECK(ox, xrPollEvent(ox->instance, &ev));
        if (r != XR_SUCCESS)
            break; /* XR_EVENT_UNAVAILABLE, or a failure already logged */
        on_event(ox, &ev);
    }
    oxr_session_handle_losses(ox);
}

void
oxr_session_handle_losses(struct oxr_source *ox)
{
    if (ox->instance_lost && ox->link != OXR_LINK_ENDED) {
        oxr_session_destroy(ox);
        oxr_instance_disconnect(ox);
        const int64_t now = u_time_now_ns();
        ox->lost_at_ns = now;
        ox->retry_at_ns = now;
        if (ox->reconnect_timeout_ns < 0) {
            U_LOG_W("openxr: the runtime went away: the stream ends");
            ox->link = OXR_LINK_ENDED;
            ox->runtime_gone = true;
        } else {
            U_LOG_W("openxr: the runtime went away: reconnecting for up to %.0f s",
                    (double)ox->reconnect_timeout_ns * 1e-9);
        }
        return;
    }
    if (ox->session_lost && ox->link == OXR_LINK_SESSION) {
        oxr_session_destroy(ox);
        ox->retry_at_ns = u_time_now_ns();
    }
}
