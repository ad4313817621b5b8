/* The layer tests' OpenXR application (layer_app.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layer_app.h"

/* In the tests a failure fails the test; in the benchmark it ends the program. */
#ifdef LA_WITH_CMOCKA
#include <cmocka.h>
#define LA_FAIL(...) fail_msg(__VA_ARGS__)
#define LA_ASSERT(cond) assert_true(cond)
#else
#define LA_FAIL(...) (fprintf(stderr, __VA_ARGS__), fputc('\n', stderr), exit(1))
#define LA_ASSERT(cond) ((cond) ? (void)0 : LA_FAIL("%s:%d: %s", __FILE__, __LINE__, #cond))
#endif

#define CHECK_XR(call)                                                                             \
    do {                                                                                           \
        const XrResult r_ = (call);                                                                \
        if (XR_FAILED(r_))                                                                         \
            LA_FAIL("%s: %d", #call, (int)r_);                                                     \
    } while (0)

void
la_use_layer(const char *script_path)
{
    setenv("XR_RUNTIME_JSON", EMBODY_TEST_RUNTIME_JSON, 1);
    setenv("EMBODY_TEST_RUNTIME_SCRIPT", script_path, 1);
    /* EMBODY_TEST_LAYERS_BELOW stacks more layers under embody's (closer to the runtime):
     * "NAME:MANIFEST_DIR", e.g. Khronos' core validation layer. */
    /* EMBODY_TEST_LAYER_MANIFEST_DIR: an installed layer's manifest folder instead of the
     * build tree's. */
    const char *mine = getenv("EMBODY_TEST_LAYER_MANIFEST_DIR");
    if (!mine || !mine[0])
        mine = EMBODY_LAYER_MANIFEST_DIR;
    const char *below = getenv("EMBODY_TEST_LAYERS_BELOW");
    const char *colon = below ? strchr(below, ':') : NULL;
    if (colon) {
        char layers[512], paths[2048];
        snprintf(layers, sizeof layers, "XR_APILAYER_EMBODY_body_tracking:%.*s",
                 (int)(colon - below), below);
        snprintf(paths, sizeof paths, "%s:%s", mine, colon + 1);
        setenv("XR_API_LAYER_PATH", paths, 1);
        setenv("XR_ENABLE_API_LAYERS", layers, 1);
        return;
    }
    setenv("XR_API_LAYER_PATH", mine, 1);
    setenv("XR_ENABLE_API_LAYERS", "XR_APILAYER_EMBODY_body_tracking", 1);
}

bool
la_extension_offered(const char *extension)
{
    uint32_t count = 0;
    CHECK_XR(xrEnumerateInstanceExtensionProperties(NULL, 0, &count, NULL));
    XrExtensionProperties *props = calloc(count, sizeof *props);
    LA_ASSERT(props != NULL);
    for (uint32_t i = 0; i < count; ++i)
        props[i].type = XR_TYPE_EXTENSION_PROPERTIES;
    CHECK_XR(xrEnumerateInstanceExtensionProperties(NULL, count, &count, props));
    bool found = false;
    for (uint32_t i = 0; i < count; ++i)
        found = found || strcmp(props[i].extensionName, extension) == 0;
    free(props);
    return found;
}

static void
lookup(struct la_app *app, const char *name, PFN_xrVoidFunction *out)
{
    *out = NULL;
    if (XR_FAILED(xrGetInstanceProcAddr(app->instance, name, out)))
        *out = NULL;
}

void
la_create(struct la_app *app, bool body, bool full_body)
{
    la_create_with(app, body, full_body, NULL);
}

void
la_create_with(struct la_app *app, bool body, bool full_body, const char *extension)
{
    memset(app, 0, sizeof *app);
    const char *ext[4] = {XR_MND_HEADLESS_EXTENSION_NAME};
    uint32_t n = 1;
    if (extension)
        ext[n++] = extension;
    if (body)
        ext[n++] = XR_FB_BODY_TRACKING_EXTENSION_NAME;
    if (full_body)
        ext[n++] = XR_META_BODY_TRACKING_FULL_BODY_EXTENSION_NAME;
    XrInstanceCreateInfo info = {.type = XR_TYPE_INSTANCE_CREATE_INFO,
                                 .enabledExtensionCount = n,
                                 .enabledExtensionNames = ext};
    strcpy(info.applicationInfo.applicationName, "embody layer test");
    info.applicationInfo.apiVersion = XR_MAKE_VERSION(1, 0, 0);
    CHECK_XR(xrCreateInstance(&info, &app->instance));
    const XrSystemGetInfo sys = {.type = XR_TYPE_SYSTEM_GET_INFO,
                                 .formFactor = XR_FORM_FACTOR_HEAD_MOUNTED_DISPLAY};
    CHECK_XR(xrGetSystem(app->instance, &sys, &app->system));
    lookup(app, "xrCreateBodyTrackerFB", (PFN_xrVoidFunction *)&app->create_body_tracker);
    lookup(app, "xrDestroyBodyTrackerFB", (PFN_xrVoidFunction *)&app->destroy_body_tracker);
    lookup(app, "xrLocateBodyJointsFB", (PFN_xrVoidFunction *)&app->locate_body_joints);
    lookup(app, "xrGetBodySkeletonFB", (PFN_xrVoidFunction *)&app->get_body_skeleton);
}

static XrAction
make_action(struct la_app *app, const char *name, XrActionType type)
{
    XrActionCreateInfo info = {.type = XR_TYPE_ACTION_CREATE_INFO,
                               .actionType = type,
                               .countSubactionPaths = 2,
                               .subactionPaths = app->hand};
    strcpy(info.actionName, name);
    strcpy(info.localizedActionName, name);
    XrAction action = XR_NULL_HANDLE;
    CHECK_XR(xrCreateAction(app->set, &info, &action));
    return action;
}

static XrPath
path(struct la_app *app, const char *text)
{
    XrPath p = XR_NULL_PATH;
    CHECK_XR(xrStringToPath(app->instance, text, &p));
    return p;
}

/* The action set, its actions and their suggested bindings (once per instance: the
 * runtime refuses suggestions once a set was attached). */
static void
make_actions(struct la_app *app)
{
    app->hand[0] = path(app, "/user/hand/left");
    app->hand[1] = path(app, "/user/hand/right");
    XrActionSetCreateInfo set_info = {.type = XR_TYPE_ACTION_SET_CREATE_INFO};
    strcpy(set_info.actionSetName, "app");
    strcpy(set_info.localizedActionSetName, "app");
    CHECK_XR(xrCreateActionSet(app->instance, &set_info, &app->set));
    app->trigger = make_action(app, "trigger", XR_ACTION_TYPE_BOOLEAN_INPUT);
    app->grip = make_action(app, "grip", XR_ACTION_TYPE_POSE_INPUT);
    if (app->touch) {
        app->squeeze = make_action(app, "squeeze", XR_ACTION_TYPE_FLOAT_INPUT);
        const XrActionSuggestedBinding touch[] = {
            {app->trigger, path(app, "/user/hand/right/input/a/click")},
            {app->grip, path(app, "/user/hand/left/input/grip/pose")},
            {app->grip, path(app, "/user/hand/right/input/grip/pose")},
            {app->squeeze, path(app, "/user/hand/left/input/squeeze/value")},
            {app->squeeze, path(app, "/user/hand/right/input/squeeze/value")},
        };
        const XrInteractionProfileSuggestedBinding suggested = {
            .type = XR_TYPE_INTERACTION_PROFILE_SUGGESTED_BINDING,
            .interactionProfile =
                path(app, app->touch_profile ? app->touch_profile
                                             : "/interaction_profiles/oculus/touch_controller"),
            .countSuggestedBindings = 5,
            .suggestedBindings = touch};
        CHECK_XR(xrSuggestInteractionProfileBindings(app->instance, &suggested));
        return;
    }
    const XrActionSuggestedBinding bindings[] = {
        {app->trigger, path(app, "/user/hand/right/input/select/click")},
        {app->grip, path(app, "/user/hand/left/input/grip/pose")},
        {app->grip, path(app, "/user/hand/right/input/grip/pose")},
    };
    const XrInteractionProfileSuggestedBinding suggested = {
        .type = XR_TYPE_INTERACTION_PROFILE_SUGGESTED_BINDING,
        .interactionProfile = path(app, "/interaction_profiles/khr/simple_controller"),
        .countSuggestedBindings = 3,
        .suggestedBindings = bindings};
    CHECK_XR(xrSuggestInteractionProfileBindings(app->instance, &suggested));
}

void
la_start_session(struct la_app *app)
{
    if (app->set == XR_NULL_HANDLE)
        make_actions(app);

    const XrSessionCreateInfo info = {.type = XR_TYPE_SESSION_CREATE_INFO, .systemId = app->system};
    CHECK_XR(xrCreateSession(app->instance, &info, &app->session));
    app->state = XR_SESSION_STATE_IDLE;
    const XrReferenceSpaceCreateInfo stage = {.type = XR_TYPE_REFERENCE_SPACE_CREATE_INFO,
                                              .referenceSpaceType =
                                                  app->local_base ? XR_REFERENCE_SPACE_TYPE_LOCAL
                                                                  : XR_REFERENCE_SPACE_TYPE_STAGE,
                                              .poseInReferenceSpace = {.orientation.w = 1.0f}};
    CHECK_XR(xrCreateReferenceSpace(app->session, &stage, &app->stage));
    for (int h = 0; h < 2; ++h) {
        const XrActionSpaceCreateInfo grip = {.type = XR_TYPE_ACTION_SPACE_CREATE_INFO,
                                              .action = app->grip,
                                              .subactionPath = app->hand[h],
                                              .poseInActionSpace = {.orientation.w = 1.0f}};
        CHECK_XR(xrCreateActionSpace(app->session, &grip, &app->grip_space[h]));
    }
    const XrSessionActionSetsAttachInfo attach = {.type = XR_TYPE_SESSION_ACTION_SETS_ATTACH_INFO,
                                                  .countActionSets = 1,
                                                  .actionSets = &app->set};
    CHECK_XR(xrAttachSessionActionSets(app->session, &attach));
}

XrResult
la_pump(struct la_app *app)
{
    for (;;) {
        XrEventDataBuffer ev = {.type = XR_TYPE_EVENT_DATA_BUFFER};
        const XrResult r = xrPollEvent(app->instance, &ev);
        if (r != XR_SUCCESS)
            return r;
        app->tracker_events += ev.type == XR_TYPE_EVENT_DATA_VIVE_TRACKER_CONNECTED_HTCX;
        if (ev.type != XR_TYPE_EVENT_DATA_SESSION_STATE_CHANGED)
            continue;
        app->state = ((XrEventDataSessionStateChanged *)&ev)->state;
        if (app->state == XR_SESSION_STATE_READY) {
            /* Headless sessions ignore the view configuration; a validation layer wants a
             * valid one all the same. */
            const XrSessionBeginInfo begin = {.type = XR_TYPE_SESSION_BEGIN_INFO,
                                              .primaryViewConfigurationType =
                                                  XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO};
            CHECK_XR(xrBeginSession(app->session, &begin));
            app->running = true;
        } else if (app->state == XR_SESSION_STATE_STOPPING) {
            CHECK_XR(xrEndSession(app->session));
            app->running = false;
        }
    }
}

XrResult
la_sync(struct la_app *app)
{
    const XrActiveActionSet active = {app->set, XR_NULL_PATH};
    const XrActionsSyncInfo sync = {
        .type = XR_TYPE_ACTIONS_SYNC_INFO, .countActiveActionSets = 1, .activeActionSets = &active};
    return xrSyncActions(app->session, &sync);
}

void
la_end_session(struct la_app *app)
{
    CHECK_XR(xrDestroySpace(app->stage));
    for (int h = 0; h < 2; ++h)
        CHECK_XR(xrDestroySpace(app->grip_space[h]));
    CHECK_XR(xrDestroySession(app->session));
    app->session = XR_NULL_HANDLE;
}

XrTime
la_time_of(double t_s)
{
    return (XrTime)1000000000 + (XrTime)(t_s * 1e9 + 0.5);
}

void
la_destroy(struct la_app *app)
{
    if (app->instance != XR_NULL_HANDLE)
        xrDestroyInstance(app->instance);
    memset(app, 0, sizeof *app);
}
