/*
 * The test runtime's input: action sets and actions, suggested bindings checked against
 * the interaction profile paths of the OpenXR 1.0 specification (section 6.4), action
 * state from the script's buttons, and spaces located from the script's poses.
 *
 * Binding: the controllers present the script's profile; if the application suggested
 * no bindings for it, the runtime falls back to khr/simple_controller bindings (as real
 * runtimes emulate), else nothing is bound. A pose action is served the grip pose when
 * bound to .../input/grip/pose and the aim pose (the grip moved by k_aim_offset) when
 * bound to .../input/aim/pose.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr_runtime.h"

/* ---- The specification's paths ------------------------------------------------------ */

static const char *const k_simple[] = {"/input/select/click", "/input/menu/click",
                                       "/input/grip/pose", "/input/aim/pose",
                                       "/output/haptic", NULL};

static const char *const k_index[] = {
    "/input/system/click",    "/input/system/touch",    "/input/a/click",
    "/input/a/touch",         "/input/b/click",         "/input/b/touch",
    "/input/squeeze/value",   "/input/squeeze/force",   "/input/trigger/click",
    "/input/trigger/value",   "/input/trigger/touch",   "/input/thumbstick/x",
    "/input/thumbstick/y",    "/input/thumbstick/click", "/input/thumbstick/touch",
    "/input/trackpad/x",      "/input/trackpad/y",      "/input/trackpad/force",
    "/input/trackpad/touch",  "/input/grip/pose",       "/input/aim/pose",
    "/output/haptic",         NULL};

static const char *const k_touch_both[] = {
    "/input/squeeze/value",  "/input/trigger/value",    "/input/trigger/touch",
    "/input/thumbstick/x",   "/input/thumbstick/y",     "/input/thumbstick/click",
    "/input/thumbstick/touch", "/input/thumbrest/touch", "/input/grip/pose",
    "/input/aim/pose",       "/output/haptic",          NULL};
static const char *const k_touch_left[] = {"/input/x/click", "/input/x/touch", "/input/y/click",
                                           "/input/y/touch", "/input/menu/click", NULL};
static const char *const k_touch_right[] = {"/input/a/click", "/input/a/touch",
                                            "/input/b/click", "/input/b/touch",
                                            "/input/system/click", NULL};

/* Touch Pro (XR_FB_touch_controller_pro) and Touch Plus (XR_META_touch_controller_plus):
 * Touch's paths (k_touch_left, k_touch_right) and these. */
static const char *const k_touch_pro_both[] = {
    "/input/squeeze/value",      "/input/trigger/value",        "/input/trigger/touch",
    "/input/thumbstick/x",       "/input/thumbstick/y",         "/input/thumbstick/click",
    "/input/thumbstick/touch",   "/input/thumbrest/touch",      "/input/grip/pose",
    "/input/aim/pose",           "/output/haptic",              "/input/thumbrest/force",
    "/input/stylus_fb/force",    "/input/trigger/curl_fb",      "/input/trigger/slide_fb",
    "/input/trigger/proximity_fb", "/input/thumb_fb/proximity_fb", "/output/haptic_trigger_fb",
    "/output/haptic_thumb_fb",   NULL};
static const char *const k_touch_plus_both[] = {
    "/input/squeeze/value",        "/input/trigger/value",          "/input/trigger/touch",
    "/input/thumbstick/x",         "/input/thumbstick/y",           "/input/thumbstick/click",
    "/input/thumbstick/touch",     "/input/thumbrest/touch",        "/input/grip/pose",
    "/input/aim/pose",             "/output/haptic",                "/input/trigger/force",
    "/input/trigger/curl_meta",    "/input/trigger/slide_meta",     "/input/trigger/proximity_meta",
    "/input/thumb_meta/proximity_meta", NULL};

static const char *const k_vive[] = {
    "/input/system/click", "/input/squeeze/click", "/input/menu/click",
    "/input/trigger/click", "/input/trigger/value", "/input/trackpad/x",
    "/input/trackpad/y",   "/input/trackpad/click", "/input/trackpad/touch",
    "/input/grip/pose",    "/input/aim/pose",      "/output/haptic",
    NULL};

static const char *const k_motion[] = {
    "/input/menu/click",      "/input/squeeze/click", "/input/trigger/value",
    "/input/thumbstick/x",    "/input/thumbstick/y",  "/input/thumbstick/click",
    "/input/trackpad/x",      "/input/trackpad/y",    "/input/trackpad/click",
    "/input/trackpad/touch",  "/input/grip/pose",     "/input/aim/pose",
    "/output/haptic",         NULL};

static const char *const k_hp_both[] = {
    "/input/menu/click",   "/input/squeeze/value", "/input/trigger/value",
    "/input/thumbstick/x", "/input/thumbstick/y",  "/input/thumbstick/click",
    "/input/grip/pose",    "/input/aim/pose",      "/output/haptic",
    NULL};
static const char *const k_hp_left[] = {"/input/x/click", "/input/y/click", NULL};
static const char *const k_hp_right[] = {"/input/a/click", "/input/b/click", NULL};

static const char *const k_none[] = {NULL};

struct tr_profile {
    const char *path;
    const char *extension; /* that the instance must enable, or NULL */
    const char *const *both;
    const char *const *left;
    const char *const *right;
};

static const struct tr_profile k_profiles[] = {
    {"/interaction_profiles/khr/simple_controller", NULL, k_simple, k_none, k_none},
    {"/interaction_profiles/valve/index_controller", NULL, k_index, k_none, k_none},
    {"/interaction_profiles/oculus/touch_controller", NULL, k_touch_both, k_touch_left,
     k_touch_right},
    {"/interaction_profiles/htc/vive_controller", NULL, k_vive, k_none, k_none},
    {"/interaction_profiles/microsoft/motion_controller", NULL, k_motion, k_none, k_none},
    {"/interaction_profiles/hp/mixed_reality_controller",
     XR_EXT_HP_MIXED_REALITY_CONTROLLER_EXTENSION_NAME, k_hp_both, k_hp_left, k_hp_right},
    {"/interaction_profiles/meta/touch_pro_controller", TR_TOUCH_PRO_EXTENSION,
     k_touch_pro_both, k_touch_left, k_touch_right},
    {"/interaction_profiles/meta/touch_plus_controller", TR_TOUCH_PLUS_EXTENSION,
     k_touch_plus_both, k_touch_left, k_touch_right},
};

/* Whether the instance enabled the extension that adds profile `p`. */
static bool
profile_enabled(const struct tr_instance *inst, const struct tr_profile *p)
{
    if (!p->extension)
        return true;
    if (strcmp(p->extension, TR_TOUCH_PRO_EXTENSION) == 0)
        return inst->touch_pro_enabled;
    if (strcmp(p->extension, TR_TOUCH_PLUS_EXTENSION) == 0)
        return inst->touch_plus_enabled;
    return inst->hp_enabled;
}

static const char *const k_hand_path[2] = {"/user/hand/left", "/user/hand/right"};

/* ---- Body trackers (XR_HTCX_vive_tracker_interaction) ------------------------------ */

#define TR_ROLE_PREFIX "/user/vive_tracker_htcx/role/"
#define TR_TRACKER_PROFILE "/interaction_profiles/htc/vive_tracker_htcx"

static const char *const k_roles[TR_TRACKER_ROLES] = {
    "waist",     "chest",      "left_foot",  "right_foot",
    "left_knee", "right_knee", "left_elbow", "right_elbow",
};

const char *
tr_tracker_role_name(int r)
{
    return r >= 0 && r < TR_TRACKER_ROLES ? k_roles[r] : "?";
}

int
tr_tracker_role_find(const char *name)
{
    for (int r = 0; r < TR_TRACKER_ROLES; ++r)
        if (strcmp(k_roles[r], name) == 0)
            return r;
    return -1;
}

static bool
vive_enabled(void)
{
    return tr.instance && tr.instance->vive_tracker_enabled;
}

void
tr_tracker_set_connected(int r, bool connected)
{
    if (r < 0 || r >= TR_TRACKER_ROLES)
        return;
    const unsigned bit = 1u << r;
    const bool was = (tr.trackers_connected & bit) != 0;
    tr.trackers_connected = connected ? tr.trackers_connected | bit : tr.trackers_connected & ~bit;
    if (!connected || was || !vive_enabled())
        return;
    char path[XR_MAX_PATH_LENGTH];
    XrViveTrackerPathsHTCX *paths = &tr.tracker_paths[r];
    paths->type = XR_TYPE_VIVE_TRACKER_PATHS_HTCX;
    paths->next = NULL;
    snprintf(path, sizeof path, "/devices/htc/vive_tracker_%s", k_roles[r]);
    paths->persistentPath = tr_path_intern(path);
    snprintf(path, sizeof path, TR_ROLE_PREFIX "%s", k_roles[r]);
    paths->rolePath = tr_path_intern(path);
    XrEventDataViveTrackerConnectedHTCX ev = {
        .type = XR_TYPE_EVENT_DATA_VIVE_TRACKER_CONNECTED_HTCX, .paths = paths};
    tr_queue_event(&ev, sizeof ev);
}

/* A subaction path's index: 0 and 1 for the hands, 2 + role for a tracker role (with the
 * extension enabled), -1 for anything else. */
static int
subaction_index(const char *p)
{
    if (!p)
        return -1;
    for (int h = 0; h < 2; ++h)
        if (strcmp(p, k_hand_path[h]) == 0)
            return h;
    const size_t n = strlen(TR_ROLE_PREFIX);
    if (vive_enabled() && strncmp(p, TR_ROLE_PREFIX, n) == 0) {
        const int r = tr_tracker_role_find(p + n);
        if (r >= 0)
            return 2 + r;
    }
    return -1;
}

/* The tracker binding path of `action` for role r, if the application suggested one. */
static bool
tracker_bound(const struct tr_action *action, int r)
{
    char want[XR_MAX_PATH_LENGTH];
    snprintf(want, sizeof want, TR_ROLE_PREFIX "%s/input/grip/pose", k_roles[r]);
    for (int i = 0; i < tr.binding_count; ++i)
        if (tr.bindings[i].action == action &&
            strcmp(tr.bindings[i].profile, TR_TRACKER_PROFILE) == 0 &&
            strcmp(tr.bindings[i].path, want) == 0)
            return true;
    return false;
}

static bool session_focused(void);

static bool
tracker_active(const struct tr_action *action, int r)
{
    return vive_enabled() && (tr.trackers_connected & (1u << r)) && tracker_bound(action, r) &&
           session_focused();
}

/* Suggested bindings for the tracker profile: each role's grip pose. */
static XrResult
check_tracker_binding(const XrActionSuggestedBinding *b)
{
    const struct tr_action *a = tr_lookup(b->action, TR_KIND_ACTION);
    if (!a)
        return tr_violation(XR_ERROR_HANDLE_INVALID, "suggested binding with an invalid action");
    const char *path = tr_path_string(b->binding);
    if (!path)
        return tr_violation(XR_ERROR_PATH_INVALID, "suggested binding with an invalid path");
    const size_t n = strlen(TR_ROLE_PREFIX);
    char role[64] = "";
    const char *rest = strncmp(path, TR_ROLE_PREFIX, n) == 0 ? strchr(path + n, '/') : NULL;
    if (rest && (size_t)(rest - (path + n)) < sizeof role)
        memcpy(role, path + n, (size_t)(rest - (path + n)));
    const int r = tr_tracker_role_find(role);
    if (r < 0 || strcmp(rest, "/input/grip/pose") != 0)
        return tr_violation(XR_ERROR_PATH_UNSUPPORTED, "%s: %s is not a path this runtime serves",
                            TR_TRACKER_PROFILE, path);
    if (a->type != XR_ACTION_TYPE_POSE_INPUT)
        return tr_violation(XR_ERROR_PATH_UNSUPPORTED, "%s: %s needs a pose action",
                            TR_TRACKER_PROFILE, path);
    if (a->subaction_mask && !(a->subaction_mask & (1u << (2 + r))))
        return tr_violation(XR_ERROR_PATH_UNSUPPORTED, "%s: action %s has no subaction path for %s",
                            TR_TRACKER_PROFILE, a->name, path);
    return XR_SUCCESS;
}

/* The aim pose relative to the grip pose. */
static const XrPosef k_aim_offset = {.orientation = {0.0f, 0.0f, 0.0f, 1.0f},
                                     .position = {0.0f, 0.01f, -0.05f}};

static const struct tr_profile *
find_profile(const char *path)
{
    for (size_t i = 0; i < sizeof k_profiles / sizeof k_profiles[0]; ++i) {
        if (strcmp(k_profiles[i].path, path) == 0)
            return &k_profiles[i];
    }
    return NULL;
}

static bool
in_list(const char *const *list, const char *subpath)
{
    const size_t n = strlen(subpath);
    for (; *list; ++list) {
        /* Exact, or the identifier alone (the runtime picks the component). */
        if (strcmp(*list, subpath) == 0 ||
            (strncmp(*list, subpath, n) == 0 && (*list)[n] == '/' &&
             strncmp(subpath, "/input/", 7) == 0 && strchr(subpath + 7, '/') == NULL))
            return true;
    }
    return false;
}

/* Which hand a binding path is for (0, 1), or -1; `out_subpath` is the rest. */
static int
split_hand(const char *path, const char **out_subpath)
{
    for (int hand = 0; hand < 2; ++hand) {
        const size_t n = strlen(k_hand_path[hand]);
        if (strncmp(path, k_hand_path[hand], n) == 0 && path[n] == '/') {
            *out_subpath = path + n;
            return hand;
        }
    }
    return -1;
}

static bool
path_valid_for_profile(const struct tr_profile *p, const char *path)
{
    const char *sub = NULL;
    const int hand = split_hand(path, &sub);
    if (hand < 0)
        return false;
    return in_list(p->both, sub) || in_list(hand == 0 ? p->left : p->right, sub);
}

static bool
is_pose_path(const char *path)
{
    const size_t n = strlen(path);
    return n > 5 && strcmp(path + n - 5, "/pose") == 0;
}

/* ---- Pose math ------------------------------------------------------------------- */

static XrQuaternionf
quat_mul(XrQuaternionf a, XrQuaternionf b)
{
    return (XrQuaternionf){a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                           a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                           a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
                           a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
}

static XrVector3f
quat_rotate(XrQuaternionf q, XrVector3f v)
{
    const float tx = 2.0f * (q.y * v.z - q.z * v.y);
    const float ty = 2.0f * (q.z * v.x - q.x * v.z);
    const float tz = 2.0f * (q.x * v.y - q.y * v.x);
    return (XrVector3f){v.x + q.w * tx + q.y * tz - q.z * ty,
                        v.y + q.w * ty + q.z * tx - q.x * tz,
                        v.z + q.w * tz + q.x * ty - q.y * tx};
}

XrPosef
tr_pose_compose(const XrPosef *a, const XrPosef *b)
{
    const XrVector3f r = quat_rotate(a->orientation, b->position);
    return (XrPosef){.orientation = quat_mul(a->orientation, b->orientation),
                     .position = {a->position.x + r.x, a->position.y + r.y,
                                  a->position.z + r.z}};
}

XrPosef
tr_pose_relative(const XrPosef *a, const XrPosef *b)
{
    const XrQuaternionf ai = {-a->orientation.x, -a->orientation.y, -a->orientation.z,
                              a->orientation.w};
    const XrVector3f d = {b->position.x - a->position.x, b->position.y - a->position.y,
                          b->position.z - a->position.z};
    return (XrPosef){.orientation = quat_mul(ai, b->orientation),
                     .position = quat_rotate(ai, d)};
}

bool
tr_pose_is_unit(const XrPosef *pose)
{
    const XrQuaternionf q = pose->orientation;
    const float n2 = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
    return isfinite(n2) && fabsf(n2 - 1.0f) < 1e-3f && isfinite(pose->position.x) &&
           isfinite(pose->position.y) && isfinite(pose->position.z);
}

/* ---- Binding state ------------------------------------------------------------------ */

static bool
profile_suggested(const char *profile)
{
    for (int i = 0; i < tr.binding_count; ++i) {
        if (strcmp(tr.bindings[i].profile, profile) == 0)
            return true;
    }
    return false;
}

const char *
tr_effective_profile(void)
{
    if (profile_suggested(tr.profile))
        return tr.profile;
    if (profile_suggested("/interaction_profiles/khr/simple_controller"))
        return "/interaction_profiles/khr/simple_controller";
    return "";
}

/* The n-th path `action` is bound to for `hand` under the effective profile, or NULL. */
static const char *
bound_path(const struct tr_action *action, int hand, int n)
{
    const char *profile = tr_effective_profile();
    for (int i = 0; i < tr.binding_count; ++i) {
        const struct tr_binding *b = &tr.bindings[i];
        const char *sub = NULL;
        if (b->action != action || strcmp(b->profile, profile) != 0 ||
            split_hand(b->path, &sub) != hand)
            continue;
        if (n-- == 0)
            return b->path;
    }
    return NULL;
}

static bool
pressed(const char *binding)
{
    const size_t n = strlen(binding);
    for (int i = 0; i < tr.pressed_count; ++i) {
        if (strncmp(tr.pressed[i], binding, n) == 0 &&
            (tr.pressed[i][n] == '\0' || tr.pressed[i][n] == '/'))
            return true;
    }
    return false;
}

float
tr_scripted_value(const char *path)
{
    for (int i = 0; i < tr.value_count; ++i)
        if (strcmp(tr.value_path[i], path) == 0)
            return tr.value[i];
    return -1.0f;
}

/* A float input's value: the scripted one, else 1 while pressed (a click bound to a
 * float action), else 0. */
static float
input_value(const char *binding)
{
    const float v = tr_scripted_value(binding);
    if (v >= 0.0f)
        return v;
    return pressed(binding) ? 1.0f : 0.0f;
}

static XrSpaceLocationFlags
device_flags(int device, const struct tr_row *row)
{
    if (!row->valid[device])
        return 0;
    if (tr.flags_override[device])
        return tr.flags_override[device];
    return XR_SPACE_LOCATION_ORIENTATION_VALID_BIT | XR_SPACE_LOCATION_POSITION_VALID_BIT |
           XR_SPACE_LOCATION_ORIENTATION_TRACKED_BIT | XR_SPACE_LOCATION_POSITION_TRACKED_BIT;
}

static bool
session_focused(void)
{
    const struct tr_session *s = tr_current_session();
    return s && s->state == XR_SESSION_STATE_FOCUSED && !s->lost;
}

XrSpaceLocationFlags
tr_space_pose(const struct tr_space *space, XrPosef *out_pose)
{
    const struct tr_row *row = tr_current_row();
    XrPosef base = {.orientation = {0.0f, 0.0f, 0.0f, 1.0f}};
    XrSpaceLocationFlags flags =
        XR_SPACE_LOCATION_ORIENTATION_VALID_BIT | XR_SPACE_LOCATION_POSITION_VALID_BIT |
        XR_SPACE_LOCATION_ORIENTATION_TRACKED_BIT | XR_SPACE_LOCATION_POSITION_TRACKED_BIT;
    switch (space->kind) {
    case TR_SPACE_STAGE:
        break;
    case TR_SPACE_LOCAL:
        base.position.y = tr.script.local_origin_y_m;
        break;
    case TR_SPACE_VIEW:
        base = row->pose[TR_HEAD];
        flags = device_flags(TR_HEAD, row);
        break;
    case TR_SPACE_ACTION: {
        const char *path = NULL;
        flags = 0;
        if (space->hand >= 2) {
            const int r = space->hand - 2;
            if (tr_lookup(space->action, TR_KIND_ACTION) && tracker_active(space->action, r)) {
                base.position.x = tr.script.tracker_position_m[r][0];
                base.position.y = tr.script.tracker_position_m[r][1];
                base.position.z = tr.script.tracker_position_m[r][2];
                flags = XR_SPACE_LOCATION_ORIENTATION_VALID_BIT |
                        XR_SPACE_LOCATION_POSITION_VALID_BIT |
                        XR_SPACE_LOCATION_ORIENTATION_TRACKED_BIT |
                        XR_SPACE_LOCATION_POSITION_TRACKED_BIT;
            }
            break;
        }
        if (tr_lookup(space->action, TR_KIND_ACTION) && space->hand >= 0 && session_focused() &&
            !tr.controller_off[space->hand])
            path = bound_path(space->action, space->hand, 0);
        if (path) {
            const int device = space->hand == 0 ? TR_LEFT : TR_RIGHT;
            base = row->pose[device];
            flags = device_flags(device, row);
            if (strstr(path, "/input/aim"))
                base = tr_pose_compose(&base, &k_aim_offset);
        }
        break;
    }
    }
    *out_pose = tr_pose_compose(&base, &space->offset);
    return flags;
}

void
tr_input_profile_changed(void)
{
    struct tr_session *s = tr_current_session();
    if (!s || !s->attached)
        return;
    XrEventDataInteractionProfileChanged ev = {
        .type = XR_TYPE_EVENT_DATA_INTERACTION_PROFILE_CHANGED, .session = (XrSession)s};
    tr_queue_event(&ev, sizeof ev);
}

/* ---- Action sets and actions --------------------------------------------------------- */

static bool
name_ok(const char *name)
{
    if (!name[0])
        return false;
    for (const char *c = name; *c; ++c) {
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' ||
              *c == '_' || *c == '.'))
            return false;
    }
    return true;
}

static XrResult XRAPI_CALL
tr_create_action_set(XrInstance handle, const XrActionSetCreateInfo *info, XrActionSet *out)
{
    TR_LOCKED();
    struct tr_instance *inst = NULL;
    XrResult r = tr_instance_check(handle, &inst);
    if (XR_FAILED(r))
        return r;
    if (!info || info->type != XR_TYPE_ACTION_SET_CREATE_INFO)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrCreateActionSet: bad info");
    if (!name_ok(info->actionSetName))
        return tr_violation(XR_ERROR_PATH_FORMAT_INVALID, "xrCreateActionSet: bad name \"%s\"",
                            info->actionSetName);
    if (!info->localizedActionSetName[0])
        return tr_violation(XR_ERROR_LOCALIZED_NAME_INVALID,
                            "xrCreateActionSet: empty localized name");
    for (int i = 0; i < tr.object_count; ++i) {
        const struct tr_action_set *other = (const struct tr_action_set *)tr.objects[i];
        if (other->obj.kind == TR_KIND_ACTION_SET && strcmp(other->name, info->actionSetName) == 0)
            return XR_ERROR_NAME_DUPLICATED;
    }
    struct tr_action_set *set = calloc(1, sizeof *set);
    if (!set)
        return XR_ERROR_OUT_OF_MEMORY;
    snprintf(set->name, sizeof set->name, "%s", info->actionSetName);
    tr.report.action_sets_created++;
    tr_register(&set->obj, TR_KIND_ACTION_SET, &inst->obj);
    *out = (XrActionSet)set;
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_destroy_action_set(XrActionSet handle)
{
    TR_LOCKED();
    struct tr_action_set *set = tr_lookup(handle, TR_KIND_ACTION_SET);
    if (!set)
        return tr_violation(XR_ERROR_HANDLE_INVALID, "xrDestroyActionSet: invalid handle");
    tr_destroy_object(&set->obj);
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_create_action(XrActionSet set_handle, const XrActionCreateInfo *info, XrAction *out)
{
    TR_LOCKED();
    struct tr_action_set *set = tr_lookup(set_handle, TR_KIND_ACTION_SET);
    if (!set)
        return tr_violation(XR_ERROR_HANDLE_INVALID, "xrCreateAction: invalid action set");
    if (tr.instance_lost)
        return XR_ERROR_INSTANCE_LOST;
    if (!info || info->type != XR_TYPE_ACTION_CREATE_INFO)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrCreateAction: bad info");
    if (set->attached)
        return tr_violation(XR_ERROR_ACTIONSETS_ALREADY_ATTACHED,
                            "xrCreateAction: the action set is attached");
    if (!name_ok(info->actionName) || !info->localizedActionName[0])
        return tr_violation(XR_ERROR_PATH_FORMAT_INVALID, "xrCreateAction: bad name \"%s\"",
                            info->actionName);
    if (info->actionType != XR_ACTION_TYPE_BOOLEAN_INPUT &&
        info->actionType != XR_ACTION_TYPE_FLOAT_INPUT &&
        info->actionType != XR_ACTION_TYPE_VECTOR2F_INPUT &&
        info->actionType != XR_ACTION_TYPE_POSE_INPUT &&
        info->actionType != XR_ACTION_TYPE_VIBRATION_OUTPUT)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrCreateAction: bad type");
    unsigned mask = 0;
    for (uint32_t i = 0; i < info->countSubactionPaths; ++i) {
        const char *p = tr_path_string(info->subactionPaths[i]);
        const int hand = subaction_index(p);
        if (hand < 0)
            return tr_violation(XR_ERROR_PATH_UNSUPPORTED,
                                "xrCreateAction: unsupported subaction path %s",
                                p ? p : "(invalid)");
        if (mask & (1u << hand))
            return tr_violation(XR_ERROR_PATH_UNSUPPORTED,
                                "xrCreateAction: subaction path %s twice", p);
        mask |= 1u << hand;
    }
    for (int i = 0; i < tr.object_count; ++i) {
        const struct tr_action *other = (const struct tr_action *)tr.objects[i];
        if (other->obj.kind == TR_KIND_ACTION && other->set == set &&
            strcmp(other->name, info->actionName) == 0)
            return XR_ERROR_NAME_DUPLICATED;
    }
    struct tr_action *a = calloc(1, sizeof *a);
    if (!a)
        return XR_ERROR_OUT_OF_MEMORY;
    a->set = set;
    a->type = info->actionType;
    a->subaction_mask = mask;
    snprintf(a->name, sizeof a->name, "%s", info->actionName);
    tr_register(&a->obj, TR_KIND_ACTION, &set->obj);
    *out = (XrAction)a;
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_destroy_action(XrAction handle)
{
    TR_LOCKED();
    struct tr_action *a = tr_lookup(handle, TR_KIND_ACTION);
    if (!a)
        return tr_violation(XR_ERROR_HANDLE_INVALID, "xrDestroyAction: invalid handle");
    tr_destroy_object(&a->obj);
    return XR_SUCCESS;
}

static XrResult
check_binding(const struct tr_profile *p, const XrActionSuggestedBinding *b)
{
    const struct tr_action *a = tr_lookup(b->action, TR_KIND_ACTION);
    if (!a)
        return tr_violation(XR_ERROR_HANDLE_INVALID, "suggested binding with an invalid action");
    const char *path = tr_path_string(b->binding);
    if (!path)
        return tr_violation(XR_ERROR_PATH_INVALID, "suggested binding with an invalid path");
    if (!path_valid_for_profile(p, path))
        return tr_violation(XR_ERROR_PATH_UNSUPPORTED, "%s: %s is not a path of this profile",
                            p->path, path);
    const char *sub = NULL;
    const int hand = split_hand(path, &sub);
    if (a->subaction_mask && !(a->subaction_mask & (1u << hand)))
        return tr_violation(XR_ERROR_PATH_UNSUPPORTED,
                            "%s: action %s has no subaction path for %s", p->path, a->name,
                            path);
    const bool pose_path = is_pose_path(path);
    const bool output = strncmp(sub, "/output/", 8) == 0;
    if ((a->type == XR_ACTION_TYPE_POSE_INPUT) != pose_path ||
        (output != (a->type == XR_ACTION_TYPE_VIBRATION_OUTPUT)))
        return tr_violation(XR_ERROR_PATH_UNSUPPORTED,
                            "%s: action %s cannot be bound to %s (wrong kind)", p->path, a->name,
                            path);
    return XR_SUCCESS;
}

static XrResult
suggest_tracker_bindings(const struct tr_instance *inst,
                         const XrInteractionProfileSuggestedBinding *info)
{
    if (!inst->vive_tracker_enabled)
        return tr_violation(XR_ERROR_PATH_UNSUPPORTED,
                            "%s needs XR_HTCX_vive_tracker_interaction enabled",
                            TR_TRACKER_PROFILE);
    for (uint32_t i = 0; i < info->countSuggestedBindings; ++i) {
        const XrResult r = check_tracker_binding(&info->suggestedBindings[i]);
        if (XR_FAILED(r))
            return r;
    }
    int kept = 0;
    for (int i = 0; i < tr.binding_count; ++i)
        if (strcmp(tr.bindings[i].profile, TR_TRACKER_PROFILE) != 0)
            tr.bindings[kept++] = tr.bindings[i];
    tr.binding_count = kept;
    for (uint32_t i = 0; i < info->countSuggestedBindings && tr.binding_count < TR_MAX_BINDINGS;
         ++i) {
        struct tr_binding *b = &tr.bindings[tr.binding_count++];
        snprintf(b->profile, sizeof b->profile, "%s", TR_TRACKER_PROFILE);
        b->action = (struct tr_action *)info->suggestedBindings[i].action;
        snprintf(b->path, sizeof b->path, "%s", tr_path_string(info->suggestedBindings[i].binding));
    }
    struct tr_report *rep = &tr.report;
    bool listed = false;
    for (int i = 0; i < rep->profiles_accepted_count; ++i)
        listed = listed || strcmp(rep->profiles_accepted[i], TR_TRACKER_PROFILE) == 0;
    if (!listed && rep->profiles_accepted_count < TR_REPORT_MAX_PROFILES)
        snprintf(rep->profiles_accepted[rep->profiles_accepted_count++], TR_REPORT_TEXT, "%s",
                 TR_TRACKER_PROFILE);
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_suggest_bindings(XrInstance handle, const XrInteractionProfileSuggestedBinding *info)
{
    TR_LOCKED();
    struct tr_instance *inst = NULL;
    XrResult r = tr_instance_check(handle, &inst);
    if (XR_FAILED(r))
        return r;
    if (!info || info->type != XR_TYPE_INTERACTION_PROFILE_SUGGESTED_BINDING ||
        info->countSuggestedBindings == 0 || !info->suggestedBindings)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE,
                            "xrSuggestInteractionProfileBindings: bad info");
    if (inst->attached_any)
        return tr_violation(XR_ERROR_ACTIONSETS_ALREADY_ATTACHED,
                            "xrSuggestInteractionProfileBindings after attaching");
    const char *profile_path = tr_path_string(info->interactionProfile);
    if (profile_path && strcmp(profile_path, TR_TRACKER_PROFILE) == 0)
        return suggest_tracker_bindings(inst, info);
    const struct tr_profile *p = profile_path ? find_profile(profile_path) : NULL;
    if (!p)
        return tr_violation(XR_ERROR_PATH_UNSUPPORTED, "unknown interaction profile %s",
                            profile_path ? profile_path : "(invalid path)");
    if (!profile_enabled(inst, p))
        return tr_violation(XR_ERROR_PATH_UNSUPPORTED, "%s needs %s enabled", p->path,
                            p->extension);
    for (uint32_t i = 0; i < info->countSuggestedBindings; ++i) {
        r = check_binding(p, &info->suggestedBindings[i]);
        if (XR_FAILED(r))
            return r;
    }
    /* Replaces earlier suggestions for the profile. */
    int kept = 0;
    for (int i = 0; i < tr.binding_count; ++i) {
        if (strcmp(tr.bindings[i].profile, p->path) != 0)
            tr.bindings[kept++] = tr.bindings[i];
    }
    tr.binding_count = kept;
    for (uint32_t i = 0; i < info->countSuggestedBindings && tr.binding_count < TR_MAX_BINDINGS;
         ++i) {
        struct tr_binding *b = &tr.bindings[tr.binding_count++];
        snprintf(b->profile, sizeof b->profile, "%s", p->path);
        b->action = (struct tr_action *)info->suggestedBindings[i].action;
        snprintf(b->path, sizeof b->path, "%s", tr_path_string(info->suggestedBindings[i].binding));
    }
    struct tr_report *rep = &tr.report;
    bool listed = false;
    for (int i = 0; i < rep->profiles_accepted_count; ++i)
        listed = listed || strcmp(rep->profiles_accepted[i], p->path) == 0;
    if (!listed && rep->profiles_accepted_count < TR_REPORT_MAX_PROFILES)
        snprintf(rep->profiles_accepted[rep->profiles_accepted_count++], TR_REPORT_TEXT, "%s",
                 p->path);
    return XR_SUCCESS;
}

/* ---- Per-session action state ------------------------------------------------------- */

static XrResult XRAPI_CALL
tr_attach_action_sets(XrSession handle, const XrSessionActionSetsAttachInfo *info)
{
    TR_LOCKED();
    struct tr_session *s = NULL;
    XrResult r = tr_session_check(handle, &s);
    if (XR_FAILED(r))
        return r;
    if (!info || info->type != XR_TYPE_SESSION_ACTION_SETS_ATTACH_INFO ||
        info->countActionSets == 0)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrAttachSessionActionSets: bad info");
    if (s->attached)
        return tr_violation(XR_ERROR_ACTIONSETS_ALREADY_ATTACHED,
                            "xrAttachSessionActionSets twice on a session");
    for (uint32_t i = 0; i < info->countActionSets; ++i) {
        struct tr_action_set *set = tr_lookup(info->actionSets[i], TR_KIND_ACTION_SET);
        if (!set)
            return tr_violation(XR_ERROR_HANDLE_INVALID,
                                "xrAttachSessionActionSets: invalid action set");
        set->attached = true;
    }
    s->attached = true;
    s->instance->attached_any = true;
    if (tr_effective_profile()[0])
        tr_input_profile_changed();
    return XR_SUCCESS;
}

static void
update_action(struct tr_action *a, bool focused)
{
    for (int hand = 0; hand < 2; ++hand) {
        bool now = false;
        const char *path = NULL;
        a->active[hand] = false;
        a->value[hand] = 0.0f;
        const bool present = focused && !tr.controller_off[hand];
        for (int n = 0; present && (path = bound_path(a, hand, n)) != NULL; ++n) {
            a->active[hand] = true;
            now = now || pressed(path);
            /* Several bindings: the largest value (the specification's rule). */
            const float v = input_value(path);
            if (v > a->value[hand])
                a->value[hand] = v;
        }
        a->changed[hand] = a->active[hand] && now != a->state[hand];
        a->state[hand] = a->active[hand] && now;
    }
    const bool combined = a->state[0] || a->state[1];
    a->combined_changed = (a->active[0] || a->active[1]) && combined != a->combined;
    a->combined = combined;
}

static XrResult XRAPI_CALL
tr_sync_actions(XrSession handle, const XrActionsSyncInfo *info)
{
    TR_LOCKED();
    struct tr_session *s = NULL;
    XrResult r = tr_session_check(handle, &s);
    if (XR_FAILED(r))
        return r;
    if (!info || info->type != XR_TYPE_ACTIONS_SYNC_INFO)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrSyncActions: bad info");
    if (!s->attached)
        return tr_violation(XR_ERROR_ACTIONSET_NOT_ATTACHED, "xrSyncActions before attaching");
    for (uint32_t i = 0; i < info->countActiveActionSets; ++i) {
        const struct tr_action_set *set =
            tr_lookup(info->activeActionSets[i].actionSet, TR_KIND_ACTION_SET);
        if (!set || !set->attached)
            return tr_violation(XR_ERROR_ACTIONSET_NOT_ATTACHED,
                                "xrSyncActions: action set not attached");
    }
    if (s->headless && s->running)
        tr_advance_frame(); /* headless sessions have no frames: syncs count them */
    const bool focused = session_focused();
    for (int i = 0; i < tr.object_count; ++i) {
        if (tr.objects[i]->kind != TR_KIND_ACTION)
            continue;
        struct tr_action *a = (struct tr_action *)tr.objects[i];
        bool synced = false;
        for (uint32_t k = 0; k < info->countActiveActionSets; ++k)
            synced = synced || (XrActionSet)a->set == info->activeActionSets[k].actionSet;
        if (synced)
            update_action(a, focused);
    }
    return focused ? XR_SUCCESS : XR_SESSION_NOT_FOCUSED;
}

/* Checks a state query: the action, its type, its subaction path (-1 for none). */
static XrResult
check_state_query(XrSession handle, const XrActionStateGetInfo *info, XrActionType type,
                  struct tr_action **out_action, int *out_hand)
{
    struct tr_session *s = NULL;
    XrResult r = tr_session_check(handle, &s);
    if (XR_FAILED(r))
        return r;
    if (!info || info->type != XR_TYPE_ACTION_STATE_GET_INFO)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "action state query: bad info");
    struct tr_action *a = tr_lookup(info->action, TR_KIND_ACTION);
    if (!a)
        return tr_violation(XR_ERROR_HANDLE_INVALID, "action state query: invalid action");
    if (a->type != type)
        return tr_violation(XR_ERROR_ACTION_TYPE_MISMATCH, "action %s queried as another type",
                            a->name);
    if (!a->set->attached || !s->attached)
        return tr_violation(XR_ERROR_ACTIONSET_NOT_ATTACHED, "action %s not attached", a->name);
    *out_hand = -1;
    if (info->subactionPath != XR_NULL_PATH) {
        const char *p = tr_path_string(info->subactionPath);
        *out_hand = subaction_index(p);
        if (*out_hand < 0 || !(a->subaction_mask & (1u << *out_hand)))
            return tr_violation(XR_ERROR_PATH_UNSUPPORTED,
                                "action %s queried with a subaction path it lacks", a->name);
    }
    *out_action = a;
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_get_action_state_boolean(XrSession handle, const XrActionStateGetInfo *info,
                            XrActionStateBoolean *state)
{
    TR_LOCKED();
    struct tr_action *a = NULL;
    int hand = -1;
    XrResult r = check_state_query(handle, info, XR_ACTION_TYPE_BOOLEAN_INPUT, &a, &hand);
    if (XR_FAILED(r))
        return r;
    if (!state || state->type != XR_TYPE_ACTION_STATE_BOOLEAN)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrGetActionStateBoolean: bad type");
    if (hand >= 2) {
        state->isActive = XR_FALSE; /* the runtime serves tracker poses only */
        state->currentState = XR_FALSE;
        state->changedSinceLastSync = XR_FALSE;
    } else if (hand < 0) {
        state->isActive = a->active[0] || a->active[1];
        state->currentState = a->combined;
        state->changedSinceLastSync = a->combined_changed;
    } else {
        state->isActive = a->active[hand];
        state->currentState = a->state[hand];
        state->changedSinceLastSync = a->changed[hand];
    }
    state->lastChangeTime = tr_frame_time(tr.frame);
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_get_action_state_float(XrSession handle, const XrActionStateGetInfo *info,
                          XrActionStateFloat *state)
{
    TR_LOCKED();
    struct tr_action *a = NULL;
    int hand = -1;
    XrResult r = check_state_query(handle, info, XR_ACTION_TYPE_FLOAT_INPUT, &a, &hand);
    if (XR_FAILED(r))
        return r;
    if (!state || state->type != XR_TYPE_ACTION_STATE_FLOAT)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrGetActionStateFloat: bad type");
    state->changedSinceLastSync = XR_FALSE;
    state->lastChangeTime = tr_frame_time(tr.frame);
    if (hand >= 2) {
        state->isActive = XR_FALSE;
        state->currentState = 0.0f;
    } else if (hand < 0) {
        state->isActive = a->active[0] || a->active[1];
        state->currentState = a->value[0] > a->value[1] ? a->value[0] : a->value[1];
    } else {
        state->isActive = a->active[hand];
        state->currentState = a->value[hand];
    }
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_get_action_state_pose(XrSession handle, const XrActionStateGetInfo *info,
                         XrActionStatePose *state)
{
    TR_LOCKED();
    struct tr_action *a = NULL;
    int hand = -1;
    XrResult r = check_state_query(handle, info, XR_ACTION_TYPE_POSE_INPUT, &a, &hand);
    if (XR_FAILED(r))
        return r;
    if (!state || state->type != XR_TYPE_ACTION_STATE_POSE)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrGetActionStatePose: bad type");
    if (hand >= 2)
        state->isActive = tracker_active(a, hand - 2);
    else
        state->isActive = hand < 0 ? (a->active[0] || a->active[1]) : a->active[hand];
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_get_current_interaction_profile(XrSession handle, XrPath top_level,
                                   XrInteractionProfileState *state)
{
    TR_LOCKED();
    struct tr_session *s = NULL;
    XrResult r = tr_session_check(handle, &s);
    if (XR_FAILED(r))
        return r;
    if (!s->attached)
        return tr_violation(XR_ERROR_ACTIONSET_NOT_ATTACHED,
                            "xrGetCurrentInteractionProfile before attaching");
    if (!state || state->type != XR_TYPE_INTERACTION_PROFILE_STATE)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE,
                            "xrGetCurrentInteractionProfile: bad type");
    const char *p = tr_path_string(top_level);
    if (!p || (strcmp(p, k_hand_path[0]) != 0 && strcmp(p, k_hand_path[1]) != 0))
        return tr_violation(XR_ERROR_PATH_UNSUPPORTED,
                            "xrGetCurrentInteractionProfile: top level path %s",
                            p ? p : "(invalid)");
    const char *profile = tr_effective_profile();
    state->interactionProfile = profile[0] ? tr_path_intern(profile) : XR_NULL_PATH;
    return XR_SUCCESS;
}

/* ---- Spaces ------------------------------------------------------------------------- */

static XrResult XRAPI_CALL
tr_enumerate_reference_spaces(XrSession handle, uint32_t capacity, uint32_t *count,
                              XrReferenceSpaceType *types)
{
    TR_LOCKED();
    XrResult r = tr_session_check(handle, NULL);
    if (XR_FAILED(r))
        return r;
    const XrReferenceSpaceType all[3] = {XR_REFERENCE_SPACE_TYPE_VIEW,
                                         XR_REFERENCE_SPACE_TYPE_LOCAL,
                                         XR_REFERENCE_SPACE_TYPE_STAGE};
    const uint32_t n = tr.script.no_stage ? 2 : 3;
    *count = n;
    if (capacity == 0)
        return XR_SUCCESS;
    if (capacity < n)
        return XR_ERROR_SIZE_INSUFFICIENT;
    memcpy(types, all, n * sizeof all[0]);
    return XR_SUCCESS;
}

static XrResult
new_space(struct tr_session *s, enum tr_space_kind kind, const XrPosef *offset,
          struct tr_action *action, int hand, XrSpace *out)
{
    if (!tr_pose_is_unit(offset))
        return tr_violation(XR_ERROR_POSE_INVALID, "space created with a non-unit pose");
    struct tr_space *space = calloc(1, sizeof *space);
    if (!space)
        return XR_ERROR_OUT_OF_MEMORY;
    space->kind = kind;
    space->offset = *offset;
    space->action = action;
    space->hand = hand;
    tr_register(&space->obj, TR_KIND_SPACE, &s->obj);
    *out = (XrSpace)space;
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_create_reference_space(XrSession handle, const XrReferenceSpaceCreateInfo *info,
                          XrSpace *out)
{
    TR_LOCKED();
    struct tr_session *s = NULL;
    XrResult r = tr_session_check(handle, &s);
    if (XR_FAILED(r))
        return r;
    if (!info || info->type != XR_TYPE_REFERENCE_SPACE_CREATE_INFO)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrCreateReferenceSpace: bad info");
    switch (info->referenceSpaceType) {
    case XR_REFERENCE_SPACE_TYPE_VIEW:
        return new_space(s, TR_SPACE_VIEW, &info->poseInReferenceSpace, NULL, -1, out);
    case XR_REFERENCE_SPACE_TYPE_LOCAL:
        return new_space(s, TR_SPACE_LOCAL, &info->poseInReferenceSpace, NULL, -1, out);
    case XR_REFERENCE_SPACE_TYPE_STAGE:
        if (!tr.script.no_stage)
            return new_space(s, TR_SPACE_STAGE, &info->poseInReferenceSpace, NULL, -1, out);
        break;
    default:
        break;
    }
    return tr_violation(XR_ERROR_REFERENCE_SPACE_UNSUPPORTED,
                        "xrCreateReferenceSpace: type %d is not offered",
                        (int)info->referenceSpaceType);
}

static XrResult XRAPI_CALL
tr_create_action_space(XrSession handle, const XrActionSpaceCreateInfo *info, XrSpace *out)
{
    TR_LOCKED();
    struct tr_session *s = NULL;
    XrResult r = tr_session_check(handle, &s);
    if (XR_FAILED(r))
        return r;
    if (!info || info->type != XR_TYPE_ACTION_SPACE_CREATE_INFO)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrCreateActionSpace: bad info");
    struct tr_action *a = tr_lookup(info->action, TR_KIND_ACTION);
    if (!a)
        return tr_violation(XR_ERROR_HANDLE_INVALID, "xrCreateActionSpace: invalid action");
    if (a->type != XR_ACTION_TYPE_POSE_INPUT)
        return tr_violation(XR_ERROR_ACTION_TYPE_MISMATCH, "xrCreateActionSpace: %s is no pose",
                            a->name);
    int hand = -1;
    if (info->subactionPath != XR_NULL_PATH) {
        const char *p = tr_path_string(info->subactionPath);
        hand = subaction_index(p);
        if (hand < 0 || !(a->subaction_mask & (1u << hand)))
            return tr_violation(XR_ERROR_PATH_UNSUPPORTED,
                                "xrCreateActionSpace: bad subaction path");
    }
    return new_space(s, TR_SPACE_ACTION, &info->poseInActionSpace, a, hand, out);
}

static XrResult XRAPI_CALL
tr_destroy_space(XrSpace handle)
{
    TR_LOCKED();
    struct tr_space *space = tr_lookup(handle, TR_KIND_SPACE);
    if (!space)
        return tr_violation(XR_ERROR_HANDLE_INVALID, "xrDestroySpace: invalid handle");
    tr_destroy_object(&space->obj);
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_locate_space(XrSpace space_handle, XrSpace base_handle, XrTime time,
                XrSpaceLocation *location)
{
    TR_LOCKED();
    struct tr_space *space = tr_lookup(space_handle, TR_KIND_SPACE);
    struct tr_space *base = tr_lookup(base_handle, TR_KIND_SPACE);
    if (!space || !base)
        return tr_violation(XR_ERROR_HANDLE_INVALID, "xrLocateSpace: invalid space");
    if (space->obj.parent != base->obj.parent)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrLocateSpace: spaces of two sessions");
    struct tr_session *s = NULL;
    XrResult r = tr_session_check((XrSession)space->obj.parent, &s);
    if (XR_FAILED(r))
        return r;
    if (!location || location->type != XR_TYPE_SPACE_LOCATION)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrLocateSpace: bad location type");
    if (time <= 0)
        return tr_violation(XR_ERROR_TIME_INVALID, "xrLocateSpace: time %lld",
                            (long long)time);
    if (!s->headless && time != s->predicted)
        tr.report.locates_off_frame_time++;
    XrPosef space_pose, base_pose;
    XrSpaceLocationFlags flags = tr_space_pose(space, &space_pose);
    const XrSpaceLocationFlags base_flags = tr_space_pose(base, &base_pose);
    const XrSpaceLocationFlags both =
        XR_SPACE_LOCATION_ORIENTATION_VALID_BIT | XR_SPACE_LOCATION_POSITION_VALID_BIT;
    if ((base_flags & both) != both)
        flags = 0;
    location->pose = tr_pose_relative(&base_pose, &space_pose);
    location->locationFlags = flags;
    /* What is not valid is garbage: NaN shows it if the application uses it anyway. */
    if (!(flags & XR_SPACE_LOCATION_ORIENTATION_VALID_BIT))
        location->pose.orientation = (XrQuaternionf){NAN, NAN, NAN, NAN};
    if (!(flags & XR_SPACE_LOCATION_POSITION_VALID_BIT))
        location->pose.position = (XrVector3f){NAN, NAN, NAN};
    return XR_SUCCESS;
}

/* ---- Table ------------------------------------------------------------------------ */

static XrResult XRAPI_CALL
tr_enumerate_vive_tracker_paths(XrInstance handle, uint32_t capacity, uint32_t *count,
                                XrViveTrackerPathsHTCX *paths)
{
    TR_LOCKED();
    struct tr_instance *inst = NULL;
    XrResult r = tr_instance_check(handle, &inst);
    if (XR_FAILED(r))
        return r;
    if (!inst->vive_tracker_enabled)
        return tr_violation(XR_ERROR_FUNCTION_UNSUPPORTED,
                            "xrEnumerateViveTrackerPathsHTCX without the extension enabled");
    if (!count)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE,
                            "xrEnumerateViveTrackerPathsHTCX: no count");
    uint32_t n = 0;
    for (int k = 0; k < TR_TRACKER_ROLES; ++k)
        n += (tr.trackers_connected >> k) & 1u;
    *count = n;
    if (capacity == 0)
        return XR_SUCCESS;
    if (capacity < n || !paths)
        return XR_ERROR_SIZE_INSUFFICIENT;
    uint32_t i = 0;
    for (int k = 0; k < TR_TRACKER_ROLES; ++k)
        if (tr.trackers_connected & (1u << k)) {
            tr_tracker_set_connected(k, true); /* fills tracker_paths[k] (no event: was on) */
            char path[XR_MAX_PATH_LENGTH];
            snprintf(path, sizeof path, "/devices/htc/vive_tracker_%s", k_roles[k]);
            paths[i].persistentPath = tr_path_intern(path);
            snprintf(path, sizeof path, TR_ROLE_PREFIX "%s", k_roles[k]);
            paths[i].rolePath = tr_path_intern(path);
            ++i;
        }
    return XR_SUCCESS;
}

PFN_xrVoidFunction
tr_input_function(const char *name)
{
    static const struct {
        const char *name;
        PFN_xrVoidFunction function;
    } k_table[] = {
        {"xrCreateActionSet", (PFN_xrVoidFunction)tr_create_action_set},
        {"xrDestroyActionSet", (PFN_xrVoidFunction)tr_destroy_action_set},
        {"xrCreateAction", (PFN_xrVoidFunction)tr_create_action},
        {"xrDestroyAction", (PFN_xrVoidFunction)tr_destroy_action},
        {"xrSuggestInteractionProfileBindings", (PFN_xrVoidFunction)tr_suggest_bindings},
        {"xrAttachSessionActionSets", (PFN_xrVoidFunction)tr_attach_action_sets},
        {"xrSyncActions", (PFN_xrVoidFunction)tr_sync_actions},
        {"xrGetActionStateBoolean", (PFN_xrVoidFunction)tr_get_action_state_boolean},
        {"xrGetActionStatePose", (PFN_xrVoidFunction)tr_get_action_state_pose},
        {"xrGetActionStateFloat", (PFN_xrVoidFunction)tr_get_action_state_float},
        {"xrGetCurrentInteractionProfile", (PFN_xrVoidFunction)tr_get_current_interaction_profile},
        {"xrEnumerateReferenceSpaces", (PFN_xrVoidFunction)tr_enumerate_reference_spaces},
        {"xrCreateReferenceSpace", (PFN_xrVoidFunction)tr_create_reference_space},
        {"xrCreateActionSpace", (PFN_xrVoidFunction)tr_create_action_space},
        {"xrDestroySpace", (PFN_xrVoidFunction)tr_destroy_space},
        {"xrLocateSpace", (PFN_xrVoidFunction)tr_locate_space},
        {"xrEnumerateViveTrackerPathsHTCX", (PFN_xrVoidFunction)tr_enumerate_vive_tracker_paths},
    };
    for (size_t i = 0; i < sizeof k_table / sizeof k_table[0]; ++i) {
        if (strcmp(k_table[i].name, name) == 0)
            return k_table[i].function;
    }
    return NULL;
}
