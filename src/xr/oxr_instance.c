/*
 * Phase 1 of the OpenXR source: what the runtime offers (extensions checked before the
 * instance is created), the instance, and the head-mounted system. Every way this can
 * fail for lack of something (no runtime, no headset, an extension missing) is
 * EM_ERROR_UNSUPPORTED with one line that says which, so the program can fall back.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/u_log.h"
#include "xr/oxr_internal.h"

/* Reads the runtime's extension list into ox->ext. */
static enum em_result
read_extensions(struct oxr_source *ox, struct em_error *err)
{
    uint32_t count = 0;
    XrResult r = OXR_TRY(ox, xrEnumerateInstanceExtensionProperties(NULL, 0, &count, NULL));
    if (XR_FAILED(r))
        return em_fail(err, EM_ERROR_UNSUPPORTED,
                       "no OpenXR runtime could be loaded (%s): start or install one, or "
                       "point XR_RUNTIME_JSON at its manifest",
                       oxr_result_name(r));
    XrExtensionProperties *props = calloc(count ? count : 1, sizeof *props);
    if (!props)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "out of memory listing OpenXR extensions");
    for (uint32_t i = 0; i < count; ++i)
        props[i].type = XR_TYPE_EXTENSION_PROPERTIES;
    r = OXR_TRY(ox, xrEnumerateInstanceExtensionProperties(NULL, count, &count, props));
    if (XR_FAILED(r)) {
        free(props);
        return em_fail(err, EM_ERROR_UNSUPPORTED,
                       "the OpenXR runtime could not list its extensions (%s)",
                       oxr_result_name(r));
    }
    memset(&ox->ext, 0, sizeof ox->ext);
    for (int p = 0; p < OXR_CONTROLLER_PROFILE_COUNT; ++p)
        if (!oxr_controller_profiles[p].extension)
            ox->ext.controller_profiles |= 1u << p;
    for (uint32_t i = 0; i < count; ++i) {
        const char *name = props[i].extensionName;
        U_LOG_D("openxr: runtime offers %s (version %u)", name, props[i].extensionVersion);
        if (strcmp(name, XR_KHR_OPENGL_ENABLE_EXTENSION_NAME) == 0)
            ox->ext.opengl = true;
        else if (strcmp(name, XR_MND_HEADLESS_EXTENSION_NAME) == 0)
            ox->ext.headless = true;
        else if (strcmp(name, XR_KHR_CONVERT_TIMESPEC_TIME_EXTENSION_NAME) == 0)
            ox->ext.timespec = true;
        else if (strcmp(name, XR_HTCX_VIVE_TRACKER_INTERACTION_EXTENSION_NAME) == 0)
            ox->ext.vive_tracker = true;
        else if (strcmp(name, XR_EXT_HAND_TRACKING_EXTENSION_NAME) == 0)
            ox->ext.hand_tracking = true;
        for (int p = 0; p < OXR_CONTROLLER_PROFILE_COUNT; ++p) {
            const char *needs = oxr_controller_profiles[p].extension;
            if (needs && strcmp(name, needs) == 0)
                ox->ext.controller_profiles |= 1u << p;
        }
    }
    free(props);
    return EM_OK;
}

/* Which extensions the mode needs, checked before anything is created. */
static enum em_result
check_needed_extensions(const struct oxr_source *ox, struct em_error *err)
{
    if (ox->headless) {
        if (!ox->ext.headless)
            return em_fail(err, EM_ERROR_UNSUPPORTED,
                           "the OpenXR runtime does not offer %s, needed for tracking "
                           "without the headset view",
                           XR_MND_HEADLESS_EXTENSION_NAME);
        /* Without frames, a headless session gets the time to locate at from the clock. */
        if (!ox->ext.timespec)
            return em_fail(err, EM_ERROR_UNSUPPORTED,
                           "the OpenXR runtime does not offer %s, needed for tracking "
                           "without the headset view",
                           XR_KHR_CONVERT_TIMESPEC_TIME_EXTENSION_NAME);
        return EM_OK;
    }
    if (!ox->ext.opengl)
        return em_fail(err, EM_ERROR_UNSUPPORTED,
                       "the OpenXR runtime does not offer %s, needed to draw the headset "
                       "view (the headless mode tracks without it)",
                       XR_KHR_OPENGL_ENABLE_EXTENSION_NAME);
    return EM_OK;
}

static bool
create_failure_means_no_runtime(XrResult r)
{
    return r == XR_ERROR_RUNTIME_UNAVAILABLE || r == XR_ERROR_RUNTIME_FAILURE ||
           r == XR_ERROR_INSTANCE_LOST || r == XR_ERROR_API_VERSION_UNSUPPORTED ||
           r == XR_ERROR_INITIALIZATION_FAILED;
}

static enum em_result
create_instance(struct oxr_source *ox, struct em_error *err)
{
    const char *enabled[4 + OXR_CONTROLLER_PROFILE_COUNT];
    uint32_t enabled_count = 0;
    if (ox->headless) {
        enabled[enabled_count++] = XR_MND_HEADLESS_EXTENSION_NAME;
        enabled[enabled_count++] = XR_KHR_CONVERT_TIMESPEC_TIME_EXTENSION_NAME;
    } else {
        enabled[enabled_count++] = XR_KHR_OPENGL_ENABLE_EXTENSION_NAME;
    }
    for (int p = 0; p < OXR_CONTROLLER_PROFILE_COUNT; ++p)
        if (oxr_controller_profiles[p].extension && (ox->ext.controller_profiles & (1u << p)))
            enabled[enabled_count++] = oxr_controller_profiles[p].extension;
    if (ox->ext.vive_tracker)
        enabled[enabled_count++] = XR_HTCX_VIVE_TRACKER_INTERACTION_EXTENSION_NAME;
    if (ox->ext.hand_tracking)
        enabled[enabled_count++] = XR_EXT_HAND_TRACKING_EXTENSION_NAME;

    XrInstanceCreateInfo info = {.type = XR_TYPE_INSTANCE_CREATE_INFO};
    snprintf(info.applicationInfo.applicationName, sizeof info.applicationInfo.applicationName,
             "%s", ox->app_name);
    info.applicationInfo.applicationVersion = 1;
    snprintf(info.applicationInfo.engineName, sizeof info.applicationInfo.engineName, "%s",
             "embody");
    info.applicationInfo.engineVersion = 1;
    info.applicationInfo.apiVersion = XR_MAKE_VERSION(1, 0, 0);
    info.enabledExtensionCount = enabled_count;
    info.enabledExtensionNames = enabled;

    const XrResult r = OXR_TRY(ox, xrCreateInstance(&info, &ox->instance));
    if (XR_FAILED(r)) {
        ox->instance = XR_NULL_HANDLE;
        if (create_failure_means_no_runtime(r))
            return em_fail(err, EM_ERROR_UNSUPPORTED,
                           "the OpenXR runtime could not start (xrCreateInstance: %s)",
                           oxr_result_name(r));
        return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);
    }
    ox->instances_created++;

    XrInstanceProperties props = {.type = XR_TYPE_INSTANCE_PROPERTIES};
    if (XR_SUCCEEDED(OXR_CHECK(ox, xrGetInstanceProperties(ox->instance, &props)))) {
        snprintf(ox->runtime_name, sizeof ox->runtime_name, "%s", props.runtimeName);
        U_LOG_I("openxr: runtime %s %u.%u.%u", props.runtimeName,
                XR_VERSION_MAJOR(props.runtimeVersion), XR_VERSION_MINOR(props.runtimeVersion),
                XR_VERSION_PATCH(props.runtimeVersion));
    } else {
        snprintf(ox->runtime_name, sizeof ox->runtime_name, "%s", "unnamed runtime");
    }
    return EM_OK;
}

/* Extension functions come through xrGetInstanceProcAddr. */
static enum em_result
load_functions(struct oxr_source *ox, struct em_error *err)
{
    PFN_xrVoidFunction fn = NULL;
    if (ox->headless) {
        if (XR_FAILED(OXR_CHECK(ox, xrGetInstanceProcAddr(ox->instance,
                                                          "xrConvertTimespecTimeToTimeKHR", &fn))))
            return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);
        ox->convert_timespec = (PFN_xrConvertTimespecTimeToTimeKHR)fn;
    } else {
        if (XR_FAILED(OXR_CHECK(ox, xrGetInstanceProcAddr(
                                        ox->instance, "xrGetOpenGLGraphicsRequirementsKHR", &fn))))
            return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);
        ox->get_gl_requirements = (PFN_xrGetOpenGLGraphicsRequirementsKHR)fn;
    }
    return EM_OK;
}

enum em_result
oxr_system_find(struct oxr_source *ox, struct em_error *err)
{
    XrSystemGetInfo info = {.type = XR_TYPE_SYSTEM_GET_INFO,
                            .formFactor = XR_FORM_FACTOR_HEAD_MOUNTED_DISPLAY};
    const XrResult r = OXR_TRY(ox, xrGetSystem(ox->instance, &info, &ox->system));
    if (r == XR_ERROR_FORM_FACTOR_UNAVAILABLE || r == XR_ERROR_FORM_FACTOR_UNSUPPORTED)
        return em_fail(err, EM_ERROR_UNSUPPORTED,
                       "the OpenXR runtime %s has no headset connected (%s)", ox->runtime_name,
                       oxr_result_name(r));
    if (XR_FAILED(r))
        return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);

    XrSystemProperties props = {.type = XR_TYPE_SYSTEM_PROPERTIES};
    if (XR_FAILED(OXR_CHECK(ox, xrGetSystemProperties(ox->instance, ox->system, &props))))
        return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);
    snprintf(ox->system_name, sizeof ox->system_name, "%s", props.systemName);
    U_LOG_I("openxr: headset %s (orientation tracking %s, position tracking %s)",
            props.systemName, props.trackingProperties.orientationTracking ? "yes" : "no",
            props.trackingProperties.positionTracking ? "yes" : "no");
    if (!ox->headless)
        return oxr_view_check_system(ox, err);
    return EM_OK;
}

enum em_result
oxr_instance_connect(struct oxr_source *ox, struct em_error *err)
{
    enum em_result r = read_extensions(ox, err);
    if (r == EM_OK)
        r = check_needed_extensions(ox, err);
    if (r == EM_OK)
        r = create_instance(ox, err);
    if (r != EM_OK)
        return r;
    r = load_functions(ox, err);
    if (r == EM_OK)
        r = oxr_system_find(ox, err);
    if (r == EM_OK)
        r = oxr_hands_load(ox, err);
    if (r == EM_OK)
        r = oxr_actions_create(ox, err);
    if (r == EM_OK) /* after the other actions, before the set is attached */
        r = oxr_trackers_create_actions(ox, err);
    if (r != EM_OK) {
        oxr_instance_disconnect(ox);
        return r;
    }
    ox->link = OXR_LINK_INSTANCE;
    return EM_OK;
}

void
oxr_instance_disconnect(struct oxr_source *ox)
{
    /* Teardown in reverse order: the session went first (oxr_session_destroy), so the
     * instance does not reach up into the session. */
    assert(ox->session == XR_NULL_HANDLE);
    if (ox->instance != XR_NULL_HANDLE) {
        /* Destroying the instance destroys the action set, actions and paths with it. */
        OXR_CHECK(ox, xrDestroyInstance(ox->instance));
        ox->instance = XR_NULL_HANDLE;
    }
    memset(&ox->actions, 0, sizeof ox->actions);
    ox->system = XR_NULL_SYSTEM_ID;
    ox->get_gl_requirements = NULL;
    ox->convert_timespec = NULL;
    /* The hand trackers went with the session; their functions go with the instance. */
    ox->hand_tracking = false;
    ox->create_hand_tracker = NULL;
    ox->destroy_hand_tracker = NULL;
    ox->locate_hand_joints = NULL;
    ox->instance_lost = false;
    ox->session_lost = false;
    ox->link = OXR_LINK_NONE;
}
