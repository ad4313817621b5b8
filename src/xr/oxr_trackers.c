/*
 * Body trackers through XR_HTCX_vive_tracker_interaction (SteamVR exposes Vive trackers,
 * Tundra trackers and SlimeVR through it), when the runtime offers the extension.
 *
 * One pose action with a subaction path per role (/user/vive_tracker_htcx/role/waist,
 * chest, left_foot, right_foot, left_knee, right_knee, left_elbow, right_elbow), bound
 * to each role's /input/grip/pose in /interaction_profiles/htc/vive_tracker_htcx, and an
 * action space per role. A role is present while its action is active (a tracker with
 * that role is connected and bound); its pose is located like the controllers', with the
 * runtime's validity flags. Connection events (XrEventDataViveTrackerConnectedHTCX) are
 * logged with the role. Runtimes without the extension work as before: no trackers.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/u_log.h"
#include "xr/oxr_internal.h"

enum em_result
oxr_trackers_create_actions(struct oxr_source *ox, struct em_error *err)
{
    struct oxr_actions *a = &ox->actions;
    a->trackers = false;
    if (!ox->ext.vive_tracker)
        return EM_OK;
    for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
        char path[96];
        snprintf(path, sizeof path, OXR_TRACKER_ROLE_PREFIX "%s", oxr_tracker_roles[t]);
        if (XR_FAILED(OXR_CHECK(ox, xrStringToPath(ox->instance, path, &a->tracker_role[t]))))
            return em_fail(err, EM_ERROR_RUNTIME, "%s (path \"%s\")", ox->last_failure, path);
    }
    XrActionCreateInfo info = {.type = XR_TYPE_ACTION_CREATE_INFO,
                               .actionType = XR_ACTION_TYPE_POSE_INPUT,
                               .countSubactionPaths = EM_TRACKER_COUNT,
                               .subactionPaths = a->tracker_role};
    snprintf(info.actionName, sizeof info.actionName, "%s", "tracker_pose");
    snprintf(info.localizedActionName, sizeof info.localizedActionName, "%s", "Body tracker pose");
    if (XR_FAILED(OXR_CHECK(ox, xrCreateAction(a->set, &info, &a->tracker))))
        return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);
    XrActionSuggestedBinding bindings[EM_TRACKER_COUNT];
    for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
        char path[128];
        snprintf(path, sizeof path, OXR_TRACKER_ROLE_PREFIX "%s/input/grip/pose",
                 oxr_tracker_roles[t]);
        bindings[t].action = a->tracker;
        if (XR_FAILED(OXR_CHECK(ox, xrStringToPath(ox->instance, path, &bindings[t].binding))))
            return em_fail(err, EM_ERROR_RUNTIME, "%s (path \"%s\")", ox->last_failure, path);
    }
    XrInteractionProfileSuggestedBinding suggested = {
        .type = XR_TYPE_INTERACTION_PROFILE_SUGGESTED_BINDING,
        .countSuggestedBindings = EM_TRACKER_COUNT,
        .suggestedBindings = bindings};
    if (XR_FAILED(OXR_CHECK(
            ox, xrStringToPath(ox->instance, OXR_TRACKER_PROFILE, &suggested.interactionProfile))))
        return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);
    /* A runtime that refuses the bindings still serves head and hands. */
    if (XR_FAILED(OXR_CHECK(ox, xrSuggestInteractionProfileBindings(ox->instance, &suggested)))) {
        U_LOG_W("openxr: the runtime refused the body tracker bindings: trackers not used");
        return EM_OK;
    }
    a->trackers = true;
    U_LOG_I("openxr: body trackers offered (XR_HTCX_vive_tracker_interaction)");
    return EM_OK;
}

enum em_result
oxr_trackers_create_spaces(struct oxr_source *ox, struct em_error *err)
{
    ox->trackers_connected = 0;
    if (!ox->actions.trackers)
        return EM_OK;
    for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
        XrActionSpaceCreateInfo info = {.type = XR_TYPE_ACTION_SPACE_CREATE_INFO,
                                        .action = ox->actions.tracker,
                                        .subactionPath = ox->actions.tracker_role[t]};
        info.poseInActionSpace.orientation.w = 1.0f;
        if (XR_FAILED(
                OXR_CHECK(ox, xrCreateActionSpace(ox->session, &info, &ox->tracker_space[t])))) {
            ox->tracker_space[t] = XR_NULL_HANDLE;
            return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);
        }
    }
    return EM_OK;
}

void
oxr_trackers_destroy_spaces(struct oxr_source *ox)
{
    for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
        if (ox->tracker_space[t] != XR_NULL_HANDLE)
            OXR_CHECK(ox, xrDestroySpace(ox->tracker_space[t]));
        ox->tracker_space[t] = XR_NULL_HANDLE;
    }
}

static int
tracker_of_role_path(const struct oxr_source *ox, XrPath role)
{
    for (int t = 0; t < EM_TRACKER_COUNT; ++t)
        if (ox->actions.trackers && ox->actions.tracker_role[t] == role)
            return t;
    return -1;
}

void
oxr_trackers_on_connected(struct oxr_source *ox, const XrEventDataBuffer *event)
{
    const XrEventDataViveTrackerConnectedHTCX *ev =
        (const XrEventDataViveTrackerConnectedHTCX *)event;
    if (!ev->paths) {
        U_LOG_W("openxr: a tracker connection event without paths: ignored");
        return;
    }
    const int t = tracker_of_role_path(ox, ev->paths->rolePath);
    if (t < 0) {
        U_LOG_I("openxr: a body tracker connected without a role embody uses (set its role in "
                "the runtime: waist, chest, feet, knees or elbows)");
        return;
    }
    ox->trackers_connected |= EM_TRACKER_BIT(t);
    U_LOG_I("openxr: body tracker connected: %s (%s)", oxr_tracker_roles[t],
            em_tracker_name((enum em_tracker)t));
}

static bool
pose_active(struct oxr_source *ox, int t)
{
    XrActionStateGetInfo info = {.type = XR_TYPE_ACTION_STATE_GET_INFO,
                                 .action = ox->actions.tracker,
                                 .subactionPath = ox->actions.tracker_role[t]};
    XrActionStatePose state = {.type = XR_TYPE_ACTION_STATE_POSE};
    if (XR_FAILED(OXR_CHECK(ox, xrGetActionStatePose(ox->session, &info, &state))))
        return false;
    return state.isActive;
}

bool
oxr_trackers_locate(struct oxr_source *ox, struct em_tracking_frame *f)
{
    f->tracker_present = 0;
    if (!ox->actions.trackers)
        return true;
    for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
        if (ox->tracker_space[t] == XR_NULL_HANDLE || !pose_active(ox, t))
            continue;
        XrSpaceLocation loc = {.type = XR_TYPE_SPACE_LOCATION};
        if (XR_FAILED(OXR_CHECK(
                ox, xrLocateSpace(ox->tracker_space[t], ox->base_space, ox->frame_time, &loc))))
            return false;
        f->tracker_present |= EM_TRACKER_BIT(t);
        oxr_location_to_pose(&loc, &ox->last.tracker[t], &f->tracker[t]);
    }
    return true;
}
