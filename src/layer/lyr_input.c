/*
 * The layer's own input: one action set ("embody_layer") with a grip-pose action and the
 * fingers' inputs (trigger, its touch, its curl sensor, squeeze, its force, the thumb's
 * touch sensors, as the program reads them: oxr_finger_inputs) for both hands, so the body
 * and its fingers need nothing of the application's actions.
 *
 * The runtime takes one set of suggested bindings per interaction profile (a second
 * suggestion replaces the first), and chooses the profile from those the application
 * suggested. So the layer's grip and finger bindings are added to each of the
 * application's own suggestions (for the controller profiles it knows, only the paths
 * oxr_finger_inputs lists for that profile: one path the profile lacks and the runtime
 * refuses the whole suggestion; a runtime that refuses the fingers anyway is asked again
 * with the grips alone, then with the application's bindings alone), never suggested
 * alone for a profile the application left out: that could make the runtime pick a
 * profile the application has no bindings for. Only an application that suggests nothing
 * (it has no actions) gets the layer's suggestions for the common profiles. The layer's
 * set is attached with the application's and synced with every xrSyncActions; the head
 * is located through a VIEW space.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layer/lyr_internal.h"
#include "util/u_log.h"
#include "xr/oxr_common.h"

#define MAX_BINDINGS 512
/* The layer's bindings in one profile: two grips, and per hand five finger inputs and
 * the thumb's sensors. */
#define MAX_OURS (LYR_HAND_COUNT * (1 + 5 + OXR_MAX_THUMB_TOUCHES))

static XrResult
path(struct lyr_instance *inst, const char *text, XrPath *out)
{
    return inst->next.string_to_path(inst->handle, text, out);
}

/* The finger actions, one per input kind, with both hands' subaction paths. */
static XrResult
create_finger_actions(struct lyr_instance *inst)
{
    static const struct {
        const char *name, *localized;
        XrActionType type;
    } k_finger[LYR_FINGER_ACTION_COUNT] = {
        [LYR_FINGER_TRIGGER] = {"embody_layer_trigger", "embody index finger (trigger)",
                                XR_ACTION_TYPE_FLOAT_INPUT},
        [LYR_FINGER_TRIGGER_TOUCH] = {"embody_layer_trigger_touch",
                                      "embody index finger on the trigger",
                                      XR_ACTION_TYPE_BOOLEAN_INPUT},
        [LYR_FINGER_SQUEEZE] = {"embody_layer_squeeze", "embody other fingers (grip)",
                                XR_ACTION_TYPE_FLOAT_INPUT},
        [LYR_FINGER_SQUEEZE_FORCE] = {"embody_layer_squeeze_force", "embody grip force",
                                      XR_ACTION_TYPE_FLOAT_INPUT},
        [LYR_FINGER_TRIGGER_CURL] = {"embody_layer_trigger_curl",
                                     "embody index finger near the trigger",
                                     XR_ACTION_TYPE_FLOAT_INPUT},
        [LYR_FINGER_THUMB_TOUCH] = {"embody_layer_thumb_touch", "embody thumb on the controller",
                                    XR_ACTION_TYPE_BOOLEAN_INPUT},
    };
    XrResult r = XR_SUCCESS;
    for (int i = 0; i < LYR_FINGER_ACTION_COUNT && XR_SUCCEEDED(r); ++i) {
        XrActionCreateInfo info = {.type = XR_TYPE_ACTION_CREATE_INFO,
                                   .actionType = k_finger[i].type,
                                   .countSubactionPaths = LYR_HAND_COUNT,
                                   .subactionPaths = inst->hand};
        snprintf(info.actionName, sizeof info.actionName, "%s", k_finger[i].name);
        snprintf(info.localizedActionName, sizeof info.localizedActionName, "%s",
                 k_finger[i].localized);
        r = inst->next.create_action(inst->set, &info, &inst->finger[i]);
    }
    return r;
}

XrResult
lyr_input_create(struct lyr_instance *inst)
{
    XrResult r = path(inst, "/user/hand/left", &inst->hand[0]);
    if (XR_SUCCEEDED(r))
        r = path(inst, "/user/hand/right", &inst->hand[1]);
    if (XR_FAILED(r))
        return r;
    XrActionSetCreateInfo set_info = {.type = XR_TYPE_ACTION_SET_CREATE_INFO, .priority = 0};
    strcpy(set_info.actionSetName, "embody_layer");
    strcpy(set_info.localizedActionSetName, "embody body tracking");
    r = inst->next.create_action_set(inst->handle, &set_info, &inst->set);
    if (XR_FAILED(r)) {
        U_LOG_E("openxr layer: xrCreateActionSet failed (%d)", (int)r);
        return r;
    }
    XrActionCreateInfo action_info = {.type = XR_TYPE_ACTION_CREATE_INFO,
                                      .actionType = XR_ACTION_TYPE_POSE_INPUT,
                                      .countSubactionPaths = LYR_HAND_COUNT,
                                      .subactionPaths = inst->hand};
    strcpy(action_info.actionName, "embody_layer_grip");
    strcpy(action_info.localizedActionName, "embody grip pose");
    r = inst->next.create_action(inst->set, &action_info, &inst->grip);
    if (XR_SUCCEEDED(r))
        r = create_finger_actions(inst);
    if (XR_FAILED(r)) {
        U_LOG_E("openxr layer: xrCreateAction failed (%d)", (int)r);
        return r;
    }
    if (!inst->trackers)
        return XR_SUCCESS;
    for (int t = 0; t < EM_TRACKER_COUNT && XR_SUCCEEDED(r); ++t) {
        char role[96];
        snprintf(role, sizeof role, OXR_TRACKER_ROLE_PREFIX "%s", oxr_tracker_roles[t]);
        r = path(inst, role, &inst->tracker_role[t]);
    }
    XrActionCreateInfo tracker_info = {.type = XR_TYPE_ACTION_CREATE_INFO,
                                       .actionType = XR_ACTION_TYPE_POSE_INPUT,
                                       .countSubactionPaths = EM_TRACKER_COUNT,
                                       .subactionPaths = inst->tracker_role};
    strcpy(tracker_info.actionName, "embody_layer_tracker");
    strcpy(tracker_info.localizedActionName, "embody body tracker pose");
    if (XR_SUCCEEDED(r))
        r = inst->next.create_action(inst->set, &tracker_info, &inst->tracker);
    if (XR_FAILED(r)) { /* head and hands are still served */
        U_LOG_W("openxr layer: no body tracker action (%d): trackers not used", (int)r);
        inst->trackers = false;
        inst->tracker = XR_NULL_HANDLE;
    }
    return XR_SUCCESS;
}

static bool
is_tracker_profile(struct lyr_instance *inst, XrPath profile)
{
    XrPath p;
    return inst->trackers && XR_SUCCEEDED(path(inst, OXR_TRACKER_PROFILE, &p)) && p == profile;
}

/* The layer's tracker bindings (one per role), appended to `bindings` at `at`. */
static XrResult
add_trackers(struct lyr_instance *inst, XrActionSuggestedBinding *bindings, uint32_t at)
{
    for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
        char pose[128];
        snprintf(pose, sizeof pose, OXR_TRACKER_ROLE_PREFIX "%s/input/grip/pose",
                 oxr_tracker_roles[t]);
        bindings[at + (uint32_t)t].action = inst->tracker;
        const XrResult r = path(inst, pose, &bindings[at + (uint32_t)t].binding);
        if (XR_FAILED(r))
            return r;
    }
    return XR_SUCCESS;
}

/* Index of the controller profile `profile` in oxr_controller_profiles, or -1. */
static int
known_profile(struct lyr_instance *inst, XrPath profile)
{
    for (int i = 0; i < OXR_CONTROLLER_PROFILE_COUNT; ++i) {
        XrPath p;
        if (XR_SUCCEEDED(path(inst, oxr_controller_profiles[i].path, &p)) && p == profile)
            return i;
    }
    return -1;
}

/* The layer's two grip bindings, appended to `bindings` at `at`. */
static XrResult
add_grips(struct lyr_instance *inst, XrActionSuggestedBinding *bindings, uint32_t at)
{
    static const char *const k_grip[LYR_HAND_COUNT] = {"/user/hand/left/input/grip/pose",
                                                       "/user/hand/right/input/grip/pose"};
    for (int h = 0; h < LYR_HAND_COUNT; ++h) {
        bindings[at + (uint32_t)h].action = inst->grip;
        const XrResult r = path(inst, k_grip[h], &bindings[at + (uint32_t)h].binding);
        if (XR_FAILED(r))
            return r;
    }
    return XR_SUCCESS;
}

/* One binding "<hand><input>" of `action` at `*count`, counted. */
static XrResult
add_one(struct lyr_instance *inst, XrAction action, int h, const char *input,
        XrActionSuggestedBinding *bindings, uint32_t *count)
{
    static const char *const k_hand[LYR_HAND_COUNT] = {"/user/hand/left", "/user/hand/right"};
    char text[XR_MAX_PATH_LENGTH];
    snprintf(text, sizeof text, "%s%s", k_hand[h], input);
    bindings[*count].action = action;
    const XrResult r = path(inst, text, &bindings[*count].binding);
    if (XR_SUCCEEDED(r))
        ++*count;
    return r;
}

/* The layer's finger bindings for profile `index` (only the inputs oxr_finger_inputs
 * lists for it), appended to `bindings` at `*count`. */
static XrResult
add_fingers(struct lyr_instance *inst, int index, XrActionSuggestedBinding *bindings,
            uint32_t *count)
{
    const struct oxr_finger_inputs *fi = &oxr_finger_inputs[index];
    const char *const input[LYR_FINGER_THUMB_TOUCH] = {
        [LYR_FINGER_TRIGGER] = fi->trigger,
        [LYR_FINGER_TRIGGER_TOUCH] = fi->trigger_touch,
        [LYR_FINGER_SQUEEZE] = fi->squeeze,
        [LYR_FINGER_SQUEEZE_FORCE] = fi->squeeze_force,
        [LYR_FINGER_TRIGGER_CURL] = fi->trigger_curl,
    };
    XrResult r = XR_SUCCESS;
    for (int h = 0; h < LYR_HAND_COUNT && XR_SUCCEEDED(r); ++h) {
        for (int i = 0; i < LYR_FINGER_THUMB_TOUCH && XR_SUCCEEDED(r); ++i)
            if (input[i])
                r = add_one(inst, inst->finger[i], h, input[i], bindings, count);
        for (int t = 0; t < OXR_MAX_THUMB_TOUCHES && XR_SUCCEEDED(r); ++t)
            if (fi->thumb_touch[h][t])
                r = add_one(inst, inst->finger[LYR_FINGER_THUMB_TOUCH], h, fi->thumb_touch[h][t],
                            bindings, count);
    }
    return r;
}

/* The layer's bindings for a controller profile: the grips, and the fingers when
 * `fingers`; appended at `at`. Returns how many, 0 on failure. */
static uint32_t
add_controller(struct lyr_instance *inst, int index, bool fingers,
               XrActionSuggestedBinding *bindings, uint32_t at)
{
    uint32_t count = at + LYR_HAND_COUNT;
    XrResult r = add_grips(inst, bindings, at);
    if (XR_SUCCEEDED(r) && fingers)
        r = add_fingers(inst, index, bindings, &count);
    return XR_SUCCEEDED(r) ? count - at : 0;
}

/* The application's suggestion with ours added (`index` the controller profile, or -1
 * for the tracker profile), passed down; a refusal is the caller's to retry. */
static XrResult
suggest_with_ours(struct lyr_instance *inst, const XrInteractionProfileSuggestedBinding *suggested,
                  int index, bool fingers)
{
    const uint32_t n = suggested->countSuggestedBindings;
    XrActionSuggestedBinding *merged = calloc(n + MAX_OURS + EM_TRACKER_COUNT, sizeof *merged);
    if (!merged)
        return XR_ERROR_OUT_OF_MEMORY;
    memcpy(merged, suggested->suggestedBindings, n * sizeof *merged);
    XrResult r = XR_SUCCESS;
    uint32_t ours = EM_TRACKER_COUNT;
    if (index < 0)
        r = add_trackers(inst, merged, n);
    else if ((ours = add_controller(inst, index, fingers, merged, n)) == 0)
        r = XR_ERROR_PATH_INVALID;
    XrInteractionProfileSuggestedBinding with_ours = *suggested;
    with_ours.countSuggestedBindings = n + ours;
    with_ours.suggestedBindings = merged;
    if (XR_SUCCEEDED(r))
        r = inst->next.suggest_bindings(inst->handle, &with_ours);
    free(merged);
    return r;
}

XrResult
lyr_input_suggest(struct lyr_instance *inst, const XrInteractionProfileSuggestedBinding *suggested)
{
    if (!suggested || suggested->type != XR_TYPE_INTERACTION_PROFILE_SUGGESTED_BINDING ||
        suggested->countSuggestedBindings > MAX_BINDINGS || !suggested->suggestedBindings)
        return inst->next.suggest_bindings(inst->handle, suggested);
    const bool trackers = is_tracker_profile(inst, suggested->interactionProfile);
    const int index = trackers ? -1 : known_profile(inst, suggested->interactionProfile);
    if (!trackers && index < 0)
        return inst->next.suggest_bindings(inst->handle, suggested);
    XrResult r = suggest_with_ours(inst, suggested, index, true);
    if (XR_FAILED(r) && r != XR_ERROR_OUT_OF_MEMORY && !trackers) {
        U_LOG_W("openxr layer: the runtime refuses a profile with the layer's finger inputs "
                "(%d): asked again without them",
                (int)r);
        r = suggest_with_ours(inst, suggested, index, false);
    }
    if (XR_FAILED(r)) /* the application's own error, as the runtime would give it */
        return inst->next.suggest_bindings(inst->handle, suggested);
    pthread_mutex_lock(&inst->profiles_lock);
    if (inst->app_profile_count < LYR_MAX_PROFILES)
        inst->app_profiles[inst->app_profile_count++] = suggested->interactionProfile;
    pthread_mutex_unlock(&inst->profiles_lock);
    return r;
}

/* For an application that suggests nothing: the layer's bindings for the core profiles.
 * The tracker profile (its own top-level paths: it changes nothing of the controllers')
 * whenever the application did not suggest it. */
static void
suggest_own(struct lyr_instance *inst)
{
    XrPath profiles[LYR_MAX_PROFILES];
    pthread_mutex_lock(&inst->profiles_lock);
    const int profile_count = inst->app_profile_count;
    memcpy(profiles, inst->app_profiles, sizeof profiles);
    pthread_mutex_unlock(&inst->profiles_lock);
    bool trackers_suggested = false;
    for (int i = 0; i < profile_count; ++i)
        trackers_suggested |= is_tracker_profile(inst, profiles[i]);
    if (inst->trackers && !trackers_suggested) {
        XrActionSuggestedBinding bindings[EM_TRACKER_COUNT];
        XrInteractionProfileSuggestedBinding s = {.type =
                                                      XR_TYPE_INTERACTION_PROFILE_SUGGESTED_BINDING,
                                                  .countSuggestedBindings = EM_TRACKER_COUNT,
                                                  .suggestedBindings = bindings};
        if (XR_SUCCEEDED(path(inst, OXR_TRACKER_PROFILE, &s.interactionProfile)) &&
            XR_SUCCEEDED(add_trackers(inst, bindings, 0)) &&
            XR_FAILED(inst->next.suggest_bindings(inst->handle, &s)))
            U_LOG_W("openxr layer: the runtime refused the body tracker bindings");
    }
    if (profile_count > 0)
        return;
    for (int i = 0; i < OXR_CONTROLLER_PROFILE_COUNT; ++i) {
        if (oxr_controller_profiles[i].extension)
            continue;
        XrActionSuggestedBinding bindings[MAX_OURS];
        XrInteractionProfileSuggestedBinding s = {
            .type = XR_TYPE_INTERACTION_PROFILE_SUGGESTED_BINDING, .suggestedBindings = bindings};
        if (XR_FAILED(path(inst, oxr_controller_profiles[i].path, &s.interactionProfile)))
            continue;
        s.countSuggestedBindings = add_controller(inst, i, true, bindings, 0);
        if (s.countSuggestedBindings && XR_SUCCEEDED(inst->next.suggest_bindings(inst->handle, &s)))
            continue;
        s.countSuggestedBindings = add_controller(inst, i, false, bindings, 0); /* grips alone */
        if (s.countSuggestedBindings)
            (void)inst->next.suggest_bindings(inst->handle, &s);
    }
}

XrResult
lyr_input_attach(struct lyr_session *s, const XrSessionActionSetsAttachInfo *info)
{
    struct lyr_instance *inst = s->instance;
    if (s->attached || !info || info->type != XR_TYPE_SESSION_ACTION_SETS_ATTACH_INFO ||
        info->countActionSets >= LYR_MAX_SETS || (info->countActionSets && !info->actionSets))
        return inst->next.attach_action_sets(s->handle, info);
    suggest_own(inst);
    XrActionSet sets[LYR_MAX_SETS];
    if (info->countActionSets)
        memcpy(sets, info->actionSets, info->countActionSets * sizeof sets[0]);
    sets[info->countActionSets] = inst->set;
    XrSessionActionSetsAttachInfo with_ours = *info;
    with_ours.countActionSets = info->countActionSets + 1;
    with_ours.actionSets = sets;
    const XrResult r = inst->next.attach_action_sets(s->handle, &with_ours);
    if (XR_SUCCEEDED(r))
        s->attached = true;
    return r;
}

const XrActionsSyncInfo *
lyr_input_sync_info(struct lyr_session *s, const XrActionsSyncInfo *info,
                    struct lyr_sync_buffer *buffer)
{
    if (!s->attached || !info || info->type != XR_TYPE_ACTIONS_SYNC_INFO ||
        info->countActiveActionSets >= LYR_MAX_SETS ||
        (info->countActiveActionSets && !info->activeActionSets))
        return info;
    if (info->countActiveActionSets)
        memcpy(buffer->active, info->activeActionSets,
               info->countActiveActionSets * sizeof buffer->active[0]);
    buffer->active[info->countActiveActionSets] =
        (XrActiveActionSet){s->instance->set, XR_NULL_PATH};
    buffer->info = *info;
    buffer->info.countActiveActionSets = info->countActiveActionSets + 1;
    buffer->info.activeActionSets = buffer->active;
    s->app_syncs = true;
    return &buffer->info;
}

void
lyr_input_sync_own(struct lyr_session *s)
{
    const XrActiveActionSet active = {s->instance->set, XR_NULL_PATH};
    const XrActionsSyncInfo info = {
        .type = XR_TYPE_ACTIONS_SYNC_INFO, .countActiveActionSets = 1, .activeActionSets = &active};
    (void)s->instance->next.sync_actions(s->handle, &info);
}

/* The body's space: STAGE (floor at y = 0) where the runtime has it, else LOCAL lowered
 * by the floor's estimate (lyr_input_set_floor). */
static XrResult
create_reference(struct lyr_session *s)
{
    struct lyr_instance *inst = s->instance;
    XrReferenceSpaceType types[16];
    uint32_t count = 0;
    XrReferenceSpaceType type = XR_REFERENCE_SPACE_TYPE_LOCAL;
    if (XR_SUCCEEDED(inst->next.enumerate_reference_spaces(s->handle, 16, &count, types)))
        for (uint32_t i = 0; i < count; ++i)
            if (types[i] == XR_REFERENCE_SPACE_TYPE_STAGE)
                type = XR_REFERENCE_SPACE_TYPE_STAGE;
    s->local = type == XR_REFERENCE_SPACE_TYPE_LOCAL;
    const XrReferenceSpaceCreateInfo info = {
        .type = XR_TYPE_REFERENCE_SPACE_CREATE_INFO,
        .referenceSpaceType = type,
        .poseInReferenceSpace = {.orientation.w = 1.0f,
                                 .position.y = s->local ? s->floor_local_m : 0.0f}};
    XrResult r = inst->next.create_reference_space(s->handle, &info, &s->reference);
    if (XR_FAILED(r))
        return r;
    XrReferenceSpaceCreateInfo view = info;
    view.referenceSpaceType = XR_REFERENCE_SPACE_TYPE_VIEW;
    view.poseInReferenceSpace.position.y = 0.0f;
    return inst->next.create_reference_space(s->handle, &view, &s->view);
}

XrResult
lyr_input_set_floor(struct lyr_session *s, float floor_local_m)
{
    const XrReferenceSpaceCreateInfo info = {
        .type = XR_TYPE_REFERENCE_SPACE_CREATE_INFO,
        .referenceSpaceType = XR_REFERENCE_SPACE_TYPE_LOCAL,
        .poseInReferenceSpace = {.orientation.w = 1.0f, .position.y = floor_local_m}};
    XrSpace lowered = XR_NULL_HANDLE;
    const XrResult r = s->instance->next.create_reference_space(s->handle, &info, &lowered);
    if (XR_FAILED(r))
        return r;
    if (s->reference != XR_NULL_HANDLE)
        (void)s->instance->next.destroy_space(s->reference);
    s->reference = lowered;
    s->floor_local_m = floor_local_m;
    s->floor_known = true;
    return XR_SUCCESS;
}

static XrResult
create_spaces(struct lyr_session *s)
{
    XrResult r = create_reference(s);
    for (int h = 0; h < LYR_HAND_COUNT && XR_SUCCEEDED(r); ++h) {
        const XrActionSpaceCreateInfo info = {.type = XR_TYPE_ACTION_SPACE_CREATE_INFO,
                                              .action = s->instance->grip,
                                              .subactionPath = s->instance->hand[h],
                                              .poseInActionSpace = {.orientation.w = 1.0f}};
        r = s->instance->next.create_action_space(s->handle, &info, &s->grip[h]);
    }
    for (int t = 0; t < EM_TRACKER_COUNT && XR_SUCCEEDED(r) && s->instance->trackers; ++t) {
        const XrActionSpaceCreateInfo info = {.type = XR_TYPE_ACTION_SPACE_CREATE_INFO,
                                              .action = s->instance->tracker,
                                              .subactionPath = s->instance->tracker_role[t],
                                              .poseInActionSpace = {.orientation.w = 1.0f}};
        r = s->instance->next.create_action_space(s->handle, &info, &s->body_tracker[t]);
    }
    /* The hand trackers: optional (a runtime may refuse them, e.g. no hand tracking on
     * this system): the fingers then stay relaxed. */
    for (int h = 0; h < LYR_HAND_COUNT && XR_SUCCEEDED(r) && s->instance->hands; ++h) {
        const XrHandTrackerCreateInfoEXT info = {.type = XR_TYPE_HAND_TRACKER_CREATE_INFO_EXT,
                                                 .hand = h == 0 ? XR_HAND_LEFT_EXT
                                                                : XR_HAND_RIGHT_EXT,
                                                 .handJointSet = XR_HAND_JOINT_SET_DEFAULT_EXT};
        if (XR_FAILED(s->instance->next.create_hand_tracker(s->handle, &info,
                                                            &s->hand_tracker[h])))
            s->hand_tracker[h] = XR_NULL_HANDLE;
    }
    s->spaces_made = true; /* what was made is destroyed with the rest */
    return r;
}

bool
lyr_input_locate_hand(struct lyr_session *s, int h, XrTime time, struct hd_xr_hand *out)
{
    if (h < 0 || h >= LYR_HAND_COUNT || s->hand_tracker[h] == XR_NULL_HANDLE ||
        s->reference == XR_NULL_HANDLE)
        return false;
    XrHandJointLocationEXT joints[XR_HAND_JOINT_COUNT_EXT];
    memset(joints, 0, sizeof joints);
    const XrHandJointsLocateInfoEXT info = {
        .type = XR_TYPE_HAND_JOINTS_LOCATE_INFO_EXT, .baseSpace = s->reference, .time = time};
    XrHandJointLocationsEXT locations = {.type = XR_TYPE_HAND_JOINT_LOCATIONS_EXT,
                                         .jointCount = XR_HAND_JOINT_COUNT_EXT,
                                         .jointLocations = joints};
    if (XR_FAILED(s->instance->next.locate_hand_joints(s->hand_tracker[h], &info, &locations)))
        return false;
    oxr_hand_joints_from_locations(&locations, out);
    return true;
}

/* Each hand's current profile, as an index in oxr_controller_profiles (-1: none). */
static void
read_profiles(struct lyr_session *s)
{
    struct lyr_instance *inst = s->instance;
    bool ok = true;
    for (int h = 0; h < LYR_HAND_COUNT; ++h) {
        XrInteractionProfileState state = {.type = XR_TYPE_INTERACTION_PROFILE_STATE};
        const bool read =
            XR_SUCCEEDED(inst->next.get_current_interaction_profile(s->handle, inst->hand[h],
                                                                    &state));
        s->hand_profile[h] = read && state.interactionProfile != XR_NULL_PATH
                                 ? known_profile(inst, state.interactionProfile)
                                 : -1;
        ok = ok && read;
    }
    s->profiles_known = ok; /* a failed read is tried again at the next */
}

static bool
read_float(struct lyr_session *s, XrAction action, int h, float *out, bool *active)
{
    const XrActionStateGetInfo info = {.type = XR_TYPE_ACTION_STATE_GET_INFO,
                                       .action = action,
                                       .subactionPath = s->instance->hand[h]};
    XrActionStateFloat state = {.type = XR_TYPE_ACTION_STATE_FLOAT};
    if (XR_FAILED(s->instance->next.get_action_state_float(s->handle, &info, &state)))
        return false;
    /* From outside: hd_curls_from_controller clamps and takes a non-finite value as 0. */
    *out = state.isActive ? state.currentState : 0.0f;
    *active = *active || state.isActive;
    return true;
}

static bool
read_bool(struct lyr_session *s, XrAction action, int h, bool *out, bool *active)
{
    const XrActionStateGetInfo info = {.type = XR_TYPE_ACTION_STATE_GET_INFO,
                                       .action = action,
                                       .subactionPath = s->instance->hand[h]};
    XrActionStateBoolean state = {.type = XR_TYPE_ACTION_STATE_BOOLEAN};
    if (XR_FAILED(s->instance->next.get_action_state_boolean(s->handle, &info, &state)))
        return false;
    *out = state.isActive && state.currentState;
    *active = *active || state.isActive;
    return true;
}

bool
lyr_input_read_fingers(struct lyr_session *s, int h, struct hd_controller_input *out,
                       const struct hd_profile **out_profile)
{
    const XrAction *a = s->instance->finger;
    memset(out, 0, sizeof *out);
    *out_profile = NULL;
    if (h < 0 || h >= LYR_HAND_COUNT || !s->attached)
        return false;
    if (!s->profiles_known)
        read_profiles(s);
    bool active = false, thumb = false, curl_active = false;
    float curl = 0.0f;
    const bool ok =
        read_float(s, a[LYR_FINGER_TRIGGER], h, &out->trigger, &active) &&
        read_bool(s, a[LYR_FINGER_TRIGGER_TOUCH], h, &out->trigger_touch, &active) &&
        read_float(s, a[LYR_FINGER_SQUEEZE], h, &out->squeeze, &active) &&
        read_float(s, a[LYR_FINGER_SQUEEZE_FORCE], h, &out->squeeze_force, &active) &&
        read_bool(s, a[LYR_FINGER_THUMB_TOUCH], h, &thumb, &active) &&
        read_float(s, a[LYR_FINGER_TRIGGER_CURL], h, &curl, &curl_active);
    /* The runtime's curl is 1 with the finger flat on the trigger; ours is the distance from
     * it. Without the sensor the index is far from the trigger, as before it was bound. */
    out->trigger_curl = curl_active ? 1.0f - curl : 1.0f;
    /* One action for every thumb sensor: any touched is the thumb on the controller. */
    out->thumbstick_touch = out->trackpad_touch = out->buttons_touch = out->thumbrest_touch =
        thumb;
    const int p = s->hand_profile[h];
    *out_profile = p >= 0 ? hd_profile_find(oxr_controller_profiles[p].path) : NULL;
    return ok && active && *out_profile; /* a profile src/hand does not know: nothing */
}

bool
lyr_input_ready(struct lyr_session *s)
{
    if (!s->attached) {
        /* An application without actions never attaches: attach the layer's set alone
         * once the session is running (an application that attaches later then gets
         * XR_ERROR_ACTIONSETS_ALREADY_ATTACHED, as the README says). */
        if (s->state != XR_SESSION_STATE_READY && s->state != XR_SESSION_STATE_SYNCHRONIZED &&
            s->state != XR_SESSION_STATE_VISIBLE && s->state != XR_SESSION_STATE_FOCUSED)
            return false;
        const XrSessionActionSetsAttachInfo info = {.type = XR_TYPE_SESSION_ACTION_SETS_ATTACH_INFO,
                                                    .countActionSets = 0};
        if (XR_FAILED(lyr_input_attach(s, &info)))
            return false;
    }
    if (!s->spaces_made && XR_FAILED(create_spaces(s)))
        return false;
    return s->reference != XR_NULL_HANDLE && s->view != XR_NULL_HANDLE &&
           s->grip[0] != XR_NULL_HANDLE && s->grip[1] != XR_NULL_HANDLE;
}

void
lyr_input_destroy_spaces(struct lyr_session *s)
{
    if (!s->spaces_made)
        return;
    XrSpace *spaces[4 + EM_TRACKER_COUNT] = {&s->reference, &s->view, &s->grip[0], &s->grip[1]};
    for (int t = 0; t < EM_TRACKER_COUNT; ++t)
        spaces[4 + t] = &s->body_tracker[t];
    for (size_t i = 0; i < sizeof spaces / sizeof spaces[0]; ++i) {
        if (*spaces[i] != XR_NULL_HANDLE)
            (void)s->instance->next.destroy_space(*spaces[i]);
        *spaces[i] = XR_NULL_HANDLE;
    }
    for (int h = 0; h < LYR_HAND_COUNT; ++h) {
        if (s->hand_tracker[h] != XR_NULL_HANDLE)
            (void)s->instance->next.destroy_hand_tracker(s->hand_tracker[h]);
        s->hand_tracker[h] = XR_NULL_HANDLE;
    }
    s->spaces_made = false;
}

XrResult
lyr_input_locate(struct lyr_session *s, XrTime time, const struct em_tracking_frame *last,
                 struct em_tracking_frame *out)
{
    const XrSpace spaces[EM_DEVICE_COUNT] = {s->view, s->grip[0], s->grip[1]};
    memset(out, 0, sizeof *out);
    for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
        XrSpaceLocation loc = {.type = XR_TYPE_SPACE_LOCATION};
        const XrResult r = s->instance->next.locate_space(spaces[d], s->reference, time, &loc);
        if (XR_FAILED(r))
            return r;
        oxr_location_to_pose(&loc, last ? &last->device[d] : NULL, &out->device[d]);
    }
    /* A tracker is worn while the runtime locates it (its action is active) in full. */
    for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
        if (s->body_tracker[t] == XR_NULL_HANDLE)
            continue;
        XrSpaceLocation loc = {.type = XR_TYPE_SPACE_LOCATION};
        const XrResult r =
            s->instance->next.locate_space(s->body_tracker[t], s->reference, time, &loc);
        if (XR_FAILED(r))
            return r;
        oxr_location_to_pose(&loc, last ? &last->tracker[t] : NULL, &out->tracker[t]);
        if (em_device_pose_usable(&out->tracker[t]))
            out->tracker_present |= EM_TRACKER_BIT(t);
    }
    return XR_SUCCESS;
}
