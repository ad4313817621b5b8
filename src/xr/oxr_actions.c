/*
 * Phase 2 of the OpenXR source: the action set (grip and aim poses for both hands, a
 * calibrate and a recenter button, the fingers' inputs: trigger, its touch, squeeze, its
 * force, the thumb's touch sensors), suggested bindings for the common controllers, and
 * the per-frame action state.
 *
 * The fingers' inputs are suggested with the rest of a profile; a runtime that refuses
 * the profile with them is asked again without them, so a finger path a runtime does not
 * know never costs the controllers themselves.
 *
 * Every suggested path must be one the OpenXR 1.0 specification lists for that
 * interaction profile (a runtime refuses the whole profile otherwise, with
 * XR_ERROR_PATH_UNSUPPORTED). A profile the runtime refuses is skipped with a warning:
 * the other controllers still work. The profiles and their buttons are in oxr_common.c
 * (the layer adds its grips to the same profiles); those of an extension are suggested
 * when the runtime offers it.
 */
#include <stdio.h>
#include <string.h>

#include "util/u_log.h"
#include "xr/oxr_internal.h"

static const char *const k_hand_path[OXR_HAND_COUNT] = {"/user/hand/left", "/user/hand/right"};
static const char *const k_hand_name[OXR_HAND_COUNT] = {"left", "right"};

/* grip, aim, calibrate, recenter and the fingers' inputs, for two hands */
#define OXR_BINDINGS_PER_PROFILE (2 * (9 + OXR_MAX_THUMB_TOUCHES))

static enum em_result
path_from_string(struct oxr_source *ox, const char *text, XrPath *out_path,
                 struct em_error *err)
{
    if (XR_FAILED(OXR_CHECK(ox, xrStringToPath(ox->instance, text, out_path))))
        return em_fail(err, EM_ERROR_RUNTIME, "%s (path \"%s\")", ox->last_failure, text);
    return EM_OK;
}

static enum em_result
create_action(struct oxr_source *ox, const char *name, const char *localized,
              XrActionType type, XrAction *out_action, struct em_error *err)
{
    XrActionCreateInfo info = {.type = XR_TYPE_ACTION_CREATE_INFO,
                               .actionType = type,
                               .countSubactionPaths = OXR_HAND_COUNT,
                               .subactionPaths = ox->actions.hand};
    snprintf(info.actionName, sizeof info.actionName, "%s", name);
    snprintf(info.localizedActionName, sizeof info.localizedActionName, "%s", localized);
    if (XR_FAILED(OXR_CHECK(ox, xrCreateAction(ox->actions.set, &info, out_action))))
        return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);
    return EM_OK;
}

/* Adds "<hand><input>" bound to `action` to the list. */
static enum em_result
add_binding(struct oxr_source *ox, XrAction action, int hand, const char *input,
            XrActionSuggestedBinding *list, uint32_t *count, struct em_error *err)
{
    char path[XR_MAX_PATH_LENGTH];
    snprintf(path, sizeof path, "%s%s", k_hand_path[hand], input);
    list[*count].action = action;
    const enum em_result r = path_from_string(ox, path, &list[*count].binding, err);
    if (r == EM_OK)
        ++*count;
    return r;
}

/* The fingers' inputs of one hand that `fi` lists. */
static enum em_result
add_finger_bindings(struct oxr_source *ox, const struct oxr_finger_inputs *fi, int hand,
                    XrActionSuggestedBinding *list, uint32_t *count, struct em_error *err)
{
    const struct oxr_actions *a = &ox->actions;
    const struct {
        XrAction action;
        const char *input;
    } one[] = {
        {a->finger_trigger, fi->trigger},
        {a->finger_trigger_touch, fi->trigger_touch},
        {a->finger_squeeze, fi->squeeze},
        {a->finger_squeeze_force, fi->squeeze_force},
        {a->finger_trigger_curl, fi->trigger_curl},
    };
    enum em_result r = EM_OK;
    for (size_t i = 0; i < sizeof one / sizeof one[0] && r == EM_OK; ++i)
        if (one[i].input)
            r = add_binding(ox, one[i].action, hand, one[i].input, list, count, err);
    for (int t = 0; t < OXR_MAX_THUMB_TOUCHES && r == EM_OK; ++t)
        if (fi->thumb_touch[hand][t])
            r = add_binding(ox, a->finger_thumb_touch, hand, fi->thumb_touch[hand][t], list,
                            count, err);
    return r;
}

static enum em_result
suggest_profile(struct oxr_source *ox, int index, bool fingers, struct em_error *err)
{
    const struct oxr_controller_profile *p = &oxr_controller_profiles[index];
    XrActionSuggestedBinding list[OXR_BINDINGS_PER_PROFILE];
    uint32_t count = 0;
    enum em_result r = EM_OK;
    for (int hand = 0; hand < OXR_HAND_COUNT && r == EM_OK; ++hand) {
        if (fingers)
            r = add_finger_bindings(ox, &oxr_finger_inputs[index], hand, list, &count, err);
        if (r != EM_OK)
            break;
        r = add_binding(ox, ox->actions.grip, hand, "/input/grip/pose", list, &count, err);
        if (r == EM_OK)
            r = add_binding(ox, ox->actions.aim, hand, "/input/aim/pose", list, &count, err);
        if (r == EM_OK)
            r = add_binding(ox, ox->actions.calibrate, hand, p->calibrate[hand], list, &count,
                            err);
        if (r == EM_OK)
            r = add_binding(ox, ox->actions.recenter, hand, p->recenter[hand], list, &count,
                            err);
    }
    XrInteractionProfileSuggestedBinding suggested = {
        .type = XR_TYPE_INTERACTION_PROFILE_SUGGESTED_BINDING,
        .countSuggestedBindings = count,
        .suggestedBindings = list};
    if (r == EM_OK)
        r = path_from_string(ox, p->path, &suggested.interactionProfile, err);
    if (r != EM_OK)
        return r;

    const XrResult xr = OXR_TRY(ox, xrSuggestInteractionProfileBindings(ox->instance, &suggested));
    if (xr == XR_ERROR_PATH_UNSUPPORTED && fingers) {
        U_LOG_W("openxr: the runtime refuses the finger inputs of %s; its controllers work "
                "without them (relaxed fingers)",
                p->path);
        return suggest_profile(ox, index, false, err);
    }
    if (xr == XR_ERROR_PATH_UNSUPPORTED) {
        U_LOG_W("openxr: the runtime refuses bindings for %s; those controllers will not "
                "move the avatar",
                p->path);
        return EM_OK;
    }
    if (XR_FAILED(xr))
        return em_fail(err, EM_ERROR_RUNTIME, "%s (profile %s)", ox->last_failure, p->path);
    ox->actions.profiles_accepted++;
    return EM_OK;
}

enum em_result
oxr_actions_create(struct oxr_source *ox, struct em_error *err)
{
    struct oxr_actions *a = &ox->actions;
    memset(a, 0, sizeof *a);
    for (int hand = 0; hand < OXR_HAND_COUNT; ++hand) {
        const enum em_result r = path_from_string(ox, k_hand_path[hand], &a->hand[hand], err);
        if (r != EM_OK)
            return r;
    }

    XrActionSetCreateInfo set_info = {.type = XR_TYPE_ACTION_SET_CREATE_INFO, .priority = 0};
    snprintf(set_info.actionSetName, sizeof set_info.actionSetName, "%s", "embody");
    snprintf(set_info.localizedActionSetName, sizeof set_info.localizedActionSetName, "%s",
             "Body tracking");
    if (XR_FAILED(OXR_CHECK(ox, xrCreateActionSet(ox->instance, &set_info, &a->set))))
        return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);

    enum em_result r =
        create_action(ox, "grip_pose", "Hand pose", XR_ACTION_TYPE_POSE_INPUT, &a->grip, err);
    if (r == EM_OK)
        r = create_action(ox, "aim_pose", "Pointing pose", XR_ACTION_TYPE_POSE_INPUT, &a->aim,
                          err);
    if (r == EM_OK)
        r = create_action(ox, "calibrate", "Calibrate the body", XR_ACTION_TYPE_BOOLEAN_INPUT,
                          &a->calibrate, err);
    if (r == EM_OK)
        r = create_action(ox, "recenter", "Recenter", XR_ACTION_TYPE_BOOLEAN_INPUT,
                          &a->recenter, err);
    if (r == EM_OK)
        r = create_action(ox, "finger_trigger", "Index finger (trigger)",
                          XR_ACTION_TYPE_FLOAT_INPUT, &a->finger_trigger, err);
    if (r == EM_OK)
        r = create_action(ox, "finger_trigger_touch", "Index finger on the trigger",
                          XR_ACTION_TYPE_BOOLEAN_INPUT, &a->finger_trigger_touch, err);
    if (r == EM_OK)
        r = create_action(ox, "finger_squeeze", "Other fingers (grip)",
                          XR_ACTION_TYPE_FLOAT_INPUT, &a->finger_squeeze, err);
    if (r == EM_OK)
        r = create_action(ox, "finger_squeeze_force", "Grip force", XR_ACTION_TYPE_FLOAT_INPUT,
                          &a->finger_squeeze_force, err);
    if (r == EM_OK)
        r = create_action(ox, "finger_thumb_touch", "Thumb on the controller",
                          XR_ACTION_TYPE_BOOLEAN_INPUT, &a->finger_thumb_touch, err);
    if (r == EM_OK)
        r = create_action(ox, "finger_trigger_curl", "Index finger near the trigger",
                          XR_ACTION_TYPE_FLOAT_INPUT, &a->finger_trigger_curl, err);
    for (int i = 0; i < OXR_CONTROLLER_PROFILE_COUNT && r == EM_OK; ++i) {
        if (ox->ext.controller_profiles & (1u << i))
            r = suggest_profile(ox, i, true, err);
    }
    if (r == EM_OK && a->profiles_accepted == 0)
        U_LOG_W("openxr: the runtime accepted no controller bindings: only the head will be "
                "tracked");
    return r;
}

enum em_result
oxr_actions_attach(struct oxr_source *ox, struct em_error *err)
{
    XrSessionActionSetsAttachInfo info = {.type = XR_TYPE_SESSION_ACTION_SETS_ATTACH_INFO,
                                          .countActionSets = 1,
                                          .actionSets = &ox->actions.set};
    if (XR_FAILED(OXR_CHECK(ox, xrAttachSessionActionSets(ox->session, &info))))
        return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);
    return EM_OK;
}

/* True when the button was pressed since the last sync. The combined state over both
 * hands (no subaction path) is an OR of every bound button. */
static bool
button_pressed(struct oxr_source *ox, XrAction action)
{
    XrActionStateGetInfo info = {.type = XR_TYPE_ACTION_STATE_GET_INFO, .action = action};
    XrActionStateBoolean state = {.type = XR_TYPE_ACTION_STATE_BOOLEAN};
    if (XR_FAILED(OXR_CHECK(ox, xrGetActionStateBoolean(ox->session, &info, &state))))
        return false;
    return state.isActive && state.changedSinceLastSync && state.currentState;
}

bool
oxr_actions_sync(struct oxr_source *ox, uint32_t *out_events)
{
    *out_events = 0;
    const XrActiveActionSet active = {.actionSet = ox->actions.set,
                                      .subactionPath = XR_NULL_PATH};
    XrActionsSyncInfo info = {.type = XR_TYPE_ACTIONS_SYNC_INFO,
                              .countActiveActionSets = 1,
                              .activeActionSets = &active};
    const XrResult r = OXR_CHECK(ox, xrSyncActions(ox->session, &info));
    if (XR_FAILED(r))
        return false;
    if (r == XR_SESSION_NOT_FOCUSED)
        return true; /* every action is inactive until the session has focus */
    if (button_pressed(ox, ox->actions.calibrate))
        *out_events |= EM_EVENT_CALIBRATE;
    if (button_pressed(ox, ox->actions.recenter))
        *out_events |= EM_EVENT_RECENTER;
    return true;
}

bool
oxr_actions_pose_active(struct oxr_source *ox, XrAction action, int hand)
{
    XrActionStateGetInfo info = {.type = XR_TYPE_ACTION_STATE_GET_INFO,
                                 .action = action,
                                 .subactionPath = ox->actions.hand[hand]};
    XrActionStatePose state = {.type = XR_TYPE_ACTION_STATE_POSE};
    if (XR_FAILED(OXR_CHECK(ox, xrGetActionStatePose(ox->session, &info, &state))))
        return false;
    return state.isActive;
}

static bool
read_float(struct oxr_source *ox, XrAction action, int hand, float *out_value, bool *out_active)
{
    XrActionStateGetInfo info = {.type = XR_TYPE_ACTION_STATE_GET_INFO,
                                 .action = action,
                                 .subactionPath = ox->actions.hand[hand]};
    XrActionStateFloat state = {.type = XR_TYPE_ACTION_STATE_FLOAT};
    if (XR_FAILED(OXR_CHECK(ox, xrGetActionStateFloat(ox->session, &info, &state))))
        return false;
    /* From outside: hd_curls_from_controller clamps and takes a non-finite value as 0. */
    *out_value = state.isActive ? state.currentState : 0.0f;
    if (out_active)
        *out_active = *out_active || state.isActive;
    return true;
}

static bool
read_bool(struct oxr_source *ox, XrAction action, int hand, bool *out_value, bool *out_active)
{
    XrActionStateGetInfo info = {.type = XR_TYPE_ACTION_STATE_GET_INFO,
                                 .action = action,
                                 .subactionPath = ox->actions.hand[hand]};
    XrActionStateBoolean state = {.type = XR_TYPE_ACTION_STATE_BOOLEAN};
    if (XR_FAILED(OXR_CHECK(ox, xrGetActionStateBoolean(ox->session, &info, &state))))
        return false;
    *out_value = state.isActive && state.currentState;
    *out_active = *out_active || state.isActive;
    return true;
}

bool
oxr_actions_read_fingers(struct oxr_source *ox, int hand, struct oxr_hand_controller *out)
{
    const struct oxr_actions *a = &ox->actions;
    struct hd_controller_input *in = &out->input;
    memset(in, 0, sizeof *in);
    out->fingers_active = false;
    bool active = false;
    bool thumb = false;
    bool curl_active = false;
    float curl = 0.0f;
    const bool ok = read_float(ox, a->finger_trigger, hand, &in->trigger, &active) &&
                    read_bool(ox, a->finger_trigger_touch, hand, &in->trigger_touch, &active) &&
                    read_float(ox, a->finger_squeeze, hand, &in->squeeze, &active) &&
                    read_float(ox, a->finger_squeeze_force, hand, &in->squeeze_force, &active) &&
                    read_bool(ox, a->finger_thumb_touch, hand, &thumb, &active) &&
                    read_float(ox, a->finger_trigger_curl, hand, &curl, &curl_active);
    /* The runtime's curl is 1 with the finger flat on the trigger; ours is the distance from
     * it. Without the sensor the index is far from the trigger, as before it was bound. */
    in->trigger_curl = curl_active ? 1.0f - curl : 1.0f;
    /* One action for every thumb sensor: any touched is the thumb on the controller. */
    in->thumbstick_touch = in->trackpad_touch = in->buttons_touch = in->thumbrest_touch = thumb;
    out->fingers_active = ok && active;
    return ok;
}

void
oxr_actions_report_profiles(struct oxr_source *ox)
{
    for (int hand = 0; hand < OXR_HAND_COUNT; ++hand) {
        XrInteractionProfileState state = {.type = XR_TYPE_INTERACTION_PROFILE_STATE};
        if (XR_FAILED(OXR_CHECK(ox, xrGetCurrentInteractionProfile(
                                        ox->session, ox->actions.hand[hand], &state))))
            continue;
        char name[XR_MAX_PATH_LENGTH] = "";
        if (state.interactionProfile != XR_NULL_PATH) {
            uint32_t length = 0;
            if (XR_FAILED(OXR_CHECK(ox, xrPathToString(ox->instance, state.interactionProfile,
                                                       sizeof name, &length, name))))
                snprintf(name, sizeof name, "%s", "(unreadable path)");
        }
        if (strcmp(name, ox->hand_profile[hand]) == 0)
            continue;
        snprintf(ox->hand_profile[hand], sizeof ox->hand_profile[hand], "%s", name);
        U_LOG_I("openxr: %s hand: %s", k_hand_name[hand],
                name[0] ? name : "no controller");
    }
}
