/*
 * The test runtime's core: negotiation with the Khronos loader, the function table, the
 * instance and system, the event queue, paths, objects, and the frame clock that walks
 * through the script.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr_runtime.h"

struct tr_state tr;

/* ---- Loader negotiation ---------------------------------------------------------- */

/* The loader/runtime interface (the loader's own header is not in Debian's 1.0.20
 * package; these layouts are fixed by the loader specification). */
enum tr_loader_struct {
    TR_LOADER_INTERFACE_STRUCT_LOADER_INFO = 1,
    TR_LOADER_INTERFACE_STRUCT_RUNTIME_REQUEST = 3,
};

struct tr_negotiate_loader_info {
    int struct_type;
    uint32_t struct_version;
    size_t struct_size;
    uint32_t min_interface_version;
    uint32_t max_interface_version;
    XrVersion min_api_version;
    XrVersion max_api_version;
};

struct tr_negotiate_runtime_request {
    int struct_type;
    uint32_t struct_version;
    size_t struct_size;
    uint32_t runtime_interface_version;
    XrVersion runtime_api_version;
    PFN_xrGetInstanceProcAddr get_instance_proc_addr;
};

/* Its name is fixed by the loader; the only xr-named symbol we export. */
TR_EXPORT XrResult
xrNegotiateLoaderRuntimeInterface(const struct tr_negotiate_loader_info *info,
                                  struct tr_negotiate_runtime_request *request);

TR_EXPORT const struct tr_report *
embody_test_runtime_report(void);

static XrResult XRAPI_CALL
tr_get_instance_proc_addr(XrInstance instance, const char *name, PFN_xrVoidFunction *function);

XrResult
xrNegotiateLoaderRuntimeInterface(const struct tr_negotiate_loader_info *info,
                                  struct tr_negotiate_runtime_request *request)
{
    if (!info || !request || info->struct_type != TR_LOADER_INTERFACE_STRUCT_LOADER_INFO ||
        request->struct_type != TR_LOADER_INTERFACE_STRUCT_RUNTIME_REQUEST ||
        info->min_interface_version > 1 || info->max_interface_version < 1)
        return XR_ERROR_INITIALIZATION_FAILED;
    request->runtime_interface_version = 1;
    request->runtime_api_version = XR_CURRENT_API_VERSION;
    request->get_instance_proc_addr = tr_get_instance_proc_addr;
    return XR_SUCCESS;
}

const struct tr_report *
embody_test_runtime_report(void)
{
    TR_LOCKED();
    return &tr.report;
}

/* ---- The lock ------------------------------------------------------------------------ */

static pthread_once_t g_lock_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_lock;

static void
lock_init(void)
{
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&g_lock, &attr);
    pthread_mutexattr_destroy(&attr);
}

void
tr_lock(void)
{
    pthread_once(&g_lock_once, lock_init);
    pthread_mutex_lock(&g_lock);
}

void
tr_unlock_scope(const int *unused)
{
    (void)unused;
    pthread_mutex_unlock(&g_lock);
}

/* ---- Violations, objects, paths, events -------------------------------------------- */

XrResult
tr_violation(XrResult result, const char *fmt, ...)
{
    struct tr_report *r = &tr.report;
    if (r->violation_count < TR_REPORT_MAX_MESSAGES) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(r->violations[r->violation_count], TR_REPORT_TEXT, fmt, args);
        va_end(args);
        fprintf(stderr, "test runtime: violation: %s\n", r->violations[r->violation_count]);
    }
    r->violation_count++;
    return result;
}

void
tr_register(struct tr_object *obj, enum tr_kind kind, struct tr_object *parent)
{
    obj->kind = kind;
    obj->parent = parent;
    if (tr.object_count < TR_MAX_OBJECTS)
        tr.objects[tr.object_count++] = obj;
}

void *
tr_lookup(const void *handle, enum tr_kind kind)
{
    for (int i = 0; i < tr.object_count; ++i) {
        if (tr.objects[i] == handle && tr.objects[i]->kind == kind)
            return tr.objects[i];
    }
    return NULL;
}

static bool
descends_from(const struct tr_object *obj, const struct tr_object *ancestor)
{
    for (const struct tr_object *o = obj; o; o = o->parent) {
        if (o == ancestor)
            return true;
    }
    return false;
}

static void
free_object(struct tr_object *obj)
{
    if (obj->kind == TR_KIND_SWAPCHAIN)
        tr_gl_destroy_swapchain((struct tr_swapchain *)obj);
    if (obj->kind == TR_KIND_INSTANCE && tr.instance == (struct tr_instance *)obj)
        tr.instance = NULL;
    free(obj);
}

void
tr_destroy_object(struct tr_object *target)
{
    /* Children first (they come later in the list), then the object itself. */
    for (int i = tr.object_count - 1; i >= 0; --i) {
        struct tr_object *o = tr.objects[i];
        if (!descends_from(o, target))
            continue;
        memmove(&tr.objects[i], &tr.objects[i + 1],
                (size_t)(tr.object_count - i - 1) * sizeof tr.objects[0]);
        tr.object_count--;
        if (o != target)
            free_object(o);
    }
    free_object(target);
}

const char *
tr_path_string(XrPath path)
{
    if (path == XR_NULL_PATH || path > (XrPath)tr.path_count)
        return NULL;
    return tr.paths[path - 1];
}

XrPath
tr_path_intern(const char *text)
{
    for (int i = 0; i < tr.path_count; ++i) {
        if (strcmp(tr.paths[i], text) == 0)
            return (XrPath)(i + 1);
    }
    if (tr.path_count == TR_MAX_PATHS)
        return XR_NULL_PATH;
    snprintf(tr.paths[tr.path_count], XR_MAX_PATH_LENGTH, "%s", text);
    return (XrPath)++tr.path_count;
}

void
tr_queue_event(const void *event, size_t size)
{
    if (tr.queue_count == TR_EVENT_QUEUE) {
        fprintf(stderr, "test runtime: event queue full\n");
        return;
    }
    XrEventDataBuffer *slot = &tr.queue[(tr.queue_head + tr.queue_count) % TR_EVENT_QUEUE];
    memset(slot, 0, sizeof *slot);
    memcpy(slot, event, size);
    tr.queue_count++;
}

XrResult
tr_instance_check(XrInstance handle, struct tr_instance **out)
{
    struct tr_instance *inst = tr_lookup(handle, TR_KIND_INSTANCE);
    if (!inst)
        return tr_violation(XR_ERROR_HANDLE_INVALID, "invalid XrInstance %p", (void *)handle);
    if (out)
        *out = inst;
    return tr.instance_lost ? XR_ERROR_INSTANCE_LOST : XR_SUCCESS;
}

/* ---- Frames ------------------------------------------------------------------------ */

const struct tr_row *
tr_current_row(void)
{
    long i = tr.frame < 0 ? 0 : tr.frame;
    if (i >= tr.script.row_count)
        i = tr.script.row_count - 1;
    return &tr.script.rows[i];
}

XrTime
tr_frame_time(long frame)
{
    const int n = tr.script.row_count;
    double t;
    if (frame < 0)
        frame = 0;
    if (frame < n)
        t = tr.script.rows[frame].t_s;
    else
        t = tr.script.rows[n - 1].t_s + (double)(frame - n + 1) / 60.0;
    /* XrTime must be positive: the stream's t = 0 is one second in. */
    return (XrTime)1000000000 + (XrTime)(t * 1e9 + 0.5);
}

static void
fire(const struct tr_scripted_event *ev)
{
    switch (ev->kind) {
    case TR_EV_PROFILE:
        memcpy(tr.profile, ev->path, sizeof tr.profile); /* same size, NUL-terminated */
        tr_input_profile_changed();
        break;
    case TR_EV_PRESS:
        if (tr.pressed_count < TR_MAX_PRESSED)
            memcpy(tr.pressed[tr.pressed_count++], ev->path, XR_MAX_PATH_LENGTH);
        break;
    case TR_EV_RELEASE:
        for (int i = 0; i < tr.pressed_count; ++i) {
            if (strcmp(tr.pressed[i], ev->path) == 0) {
                memmove(tr.pressed[i], tr.pressed[i + 1],
                        (size_t)(tr.pressed_count - i - 1) * XR_MAX_PATH_LENGTH);
                tr.pressed_count--;
                break;
            }
        }
        break;
    case TR_EV_FLAGS:
        tr.flags_override[ev->device] = ev->flags;
        break;
    case TR_EV_HAND:
        tr.hand_pose[ev->device] = (int)ev->flags - 1;
        break;
    case TR_EV_CONTROLLER:
        tr.controller_off[ev->device] = ev->flags == 2; /* stored + 1 */
        break;
    case TR_EV_HAND_AT:
        tr.hand_placed[ev->device] = ev->flags == 1;
        memcpy(tr.hand_at_m[ev->device], ev->at_m, sizeof ev->at_m);
        break;
    case TR_EV_VALUE: {
        int i = 0;
        while (i < tr.value_count && strcmp(tr.value_path[i], ev->path) != 0)
            ++i;
        if (i == TR_MAX_VALUES)
            break;
        memcpy(tr.value_path[i], ev->path, XR_MAX_PATH_LENGTH);
        tr.value[i] = ev->value;
        if (i == tr.value_count)
            tr.value_count++;
        break;
    }
    case TR_EV_TRACKER_CONNECT:
    case TR_EV_TRACKER_DISCONNECT:
        tr_tracker_set_connected(ev->device, ev->kind == TR_EV_TRACKER_CONNECT);
        break;
    case TR_EV_INSTANCE_LOSS:
    case TR_EV_INSTANCE_LOST: {
        XrEventDataInstanceLossPending loss = {.type = XR_TYPE_EVENT_DATA_INSTANCE_LOSS_PENDING,
                                               .lossTime = tr_frame_time(tr.frame + 1)};
        tr_queue_event(&loss, sizeof loss);
        tr.runtime_unavailable_left = tr.script.runtime_unavailable;
        if (ev->kind == TR_EV_INSTANCE_LOST)
            tr.instance_lost = true;
        break;
    }
    default:
        tr_session_scripted(ev->kind);
        break;
    }
}

void
tr_advance_frame(void)
{
    tr.frame++;
    while (tr.next_event < tr.script.event_count &&
           tr.script.events[tr.next_event].frame <= tr.frame)
        fire(&tr.script.events[tr.next_event++]);
}

/* ---- Instance ---------------------------------------------------------------------- */

static const char *const k_extensions[] = {
    XR_KHR_OPENGL_ENABLE_EXTENSION_NAME,
    XR_MND_HEADLESS_EXTENSION_NAME,
    XR_KHR_CONVERT_TIMESPEC_TIME_EXTENSION_NAME,
    XR_EXT_HP_MIXED_REALITY_CONTROLLER_EXTENSION_NAME,
    XR_HTCX_VIVE_TRACKER_INTERACTION_EXTENSION_NAME,
    XR_EXT_HAND_TRACKING_EXTENSION_NAME,
    TR_TOUCH_PRO_EXTENSION,
    TR_TOUCH_PLUS_EXTENSION,
};
#define TR_EXTENSION_COUNT ((int)(sizeof k_extensions / sizeof k_extensions[0]))

static bool
extension_offered(const char *name)
{
    bool known = false;
    for (int i = 0; i < TR_EXTENSION_COUNT; ++i)
        known = known || strcmp(k_extensions[i], name) == 0;
    for (int i = 0; i < tr.script.hidden_count; ++i) {
        if (strcmp(tr.script.hidden_extension[i], name) == 0)
            return false;
    }
    /* Body trackers only for scripts that have some (the other scripts' runtimes are as
     * they were: a runtime without the extension). */
    if (strcmp(name, XR_HTCX_VIVE_TRACKER_INTERACTION_EXTENSION_NAME) == 0 &&
        !tr.script.vive_trackers)
        return false;
    /* Hand tracking likewise, for scripts that track hands. */
    if (strcmp(name, XR_EXT_HAND_TRACKING_EXTENSION_NAME) == 0 && !tr.script.hand_tracking)
        return false;
    /* The Touch Pro and Plus profiles likewise, for scripts that use one. */
    if ((strcmp(name, TR_TOUCH_PRO_EXTENSION) == 0 || strcmp(name, TR_TOUCH_PLUS_EXTENSION) == 0) &&
        !tr.script.meta_touch)
        return false;
    return known;
}

static XrResult XRAPI_CALL
tr_enumerate_instance_extension_properties(const char *layer, uint32_t capacity,
                                           uint32_t *count, XrExtensionProperties *props)
{
    TR_LOCKED();
    if (!tr_script_ensure_loaded())
        return XR_ERROR_RUNTIME_FAILURE;
    if (layer)
        return XR_ERROR_API_LAYER_NOT_PRESENT;
    uint32_t n = 0;
    for (int i = 0; i < TR_EXTENSION_COUNT; ++i) {
        if (!extension_offered(k_extensions[i]))
            continue;
        if (capacity > 0) {
            if (n >= capacity)
                return XR_ERROR_SIZE_INSUFFICIENT;
            if (props[n].type != XR_TYPE_EXTENSION_PROPERTIES)
                return tr_violation(XR_ERROR_VALIDATION_FAILURE,
                                    "xrEnumerateInstanceExtensionProperties: type not set");
            snprintf(props[n].extensionName, XR_MAX_EXTENSION_NAME_SIZE, "%s", k_extensions[i]);
            props[n].extensionVersion = 1;
        }
        n++;
    }
    *count = n;
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_create_instance(const XrInstanceCreateInfo *info, XrInstance *out)
{
    TR_LOCKED();
    if (!tr_script_ensure_loaded())
        return XR_ERROR_RUNTIME_FAILURE;
    if (!info || info->type != XR_TYPE_INSTANCE_CREATE_INFO)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrCreateInstance: bad create info");
    if (tr.instance)
        return XR_ERROR_LIMIT_REACHED;
    if (tr.runtime_unavailable_left > 0) {
        tr.runtime_unavailable_left--;
        return XR_ERROR_RUNTIME_UNAVAILABLE;
    }
    if (XR_VERSION_MAJOR(info->applicationInfo.apiVersion) != 1)
        return XR_ERROR_API_VERSION_UNSUPPORTED;
    if (info->applicationInfo.applicationName[0] == '\0')
        return tr_violation(XR_ERROR_NAME_INVALID, "xrCreateInstance: empty application name");
    struct tr_instance *inst = calloc(1, sizeof *inst);
    if (!inst)
        return XR_ERROR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < info->enabledExtensionCount; ++i) {
        const char *name = info->enabledExtensionNames[i];
        if (!extension_offered(name)) {
            free(inst);
            return tr_violation(XR_ERROR_EXTENSION_NOT_PRESENT,
                                "xrCreateInstance: extension %s is not offered", name);
        }
        inst->gl_enabled |= strcmp(name, XR_KHR_OPENGL_ENABLE_EXTENSION_NAME) == 0;
        inst->headless_enabled |= strcmp(name, XR_MND_HEADLESS_EXTENSION_NAME) == 0;
        inst->timespec_enabled |= strcmp(name, XR_KHR_CONVERT_TIMESPEC_TIME_EXTENSION_NAME) == 0;
        inst->hp_enabled |= strcmp(name, XR_EXT_HP_MIXED_REALITY_CONTROLLER_EXTENSION_NAME) == 0;
        inst->vive_tracker_enabled |=
            strcmp(name, XR_HTCX_VIVE_TRACKER_INTERACTION_EXTENSION_NAME) == 0;
        inst->hand_tracking_enabled |= strcmp(name, XR_EXT_HAND_TRACKING_EXTENSION_NAME) == 0;
        inst->touch_pro_enabled |= strcmp(name, TR_TOUCH_PRO_EXTENSION) == 0;
        inst->touch_plus_enabled |= strcmp(name, TR_TOUCH_PLUS_EXTENSION) == 0;
    }
    tr_register(&inst->obj, TR_KIND_INSTANCE, NULL);
    tr.instance = inst;
    tr.instance_lost = false;
    tr.binding_count = 0;
    tr.queue_count = 0;
    /* Trackers connected from the start are announced to an instance that asks for them. */
    tr.trackers_connected = 0;
    for (int r = 0; r < TR_TRACKER_ROLES; ++r)
        if (tr.script.trackers_at_start & (1u << r))
            tr_tracker_set_connected(r, true);
    tr.report.instances_created++;
    *out = (XrInstance)inst;
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_destroy_instance(XrInstance handle)
{
    TR_LOCKED();
    struct tr_instance *inst = tr_lookup(handle, TR_KIND_INSTANCE);
    if (!inst)
        return tr_violation(XR_ERROR_HANDLE_INVALID, "xrDestroyInstance: invalid handle");
    tr_destroy_object(&inst->obj);
    tr.instance_lost = false;
    tr.queue_count = 0;
    tr.binding_count = 0;
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_get_instance_properties(XrInstance handle, XrInstanceProperties *props)
{
    TR_LOCKED();
    XrResult r = tr_instance_check(handle, NULL);
    if (XR_FAILED(r))
        return r;
    if (!props || props->type != XR_TYPE_INSTANCE_PROPERTIES)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrGetInstanceProperties: bad type");
    props->runtimeVersion = XR_MAKE_VERSION(0, 1, 0);
    snprintf(props->runtimeName, sizeof props->runtimeName, "%s", "embody test runtime");
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_poll_event(XrInstance handle, XrEventDataBuffer *buffer)
{
    TR_LOCKED();
    struct tr_instance *inst = NULL;
    XrResult r = tr_instance_check(handle, &inst);
    if (XR_FAILED(r) && !(r == XR_ERROR_INSTANCE_LOST && tr.queue_count > 0))
        return r; /* the loss event itself is still delivered */
    if (!buffer || buffer->type != XR_TYPE_EVENT_DATA_BUFFER)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrPollEvent: bad buffer type");
    if (tr.queue_count == 0)
        return XR_EVENT_UNAVAILABLE;
    *buffer = tr.queue[tr.queue_head];
    tr.queue_head = (tr.queue_head + 1) % TR_EVENT_QUEUE;
    tr.queue_count--;
    return XR_SUCCESS;
}

static bool
path_syntax_ok(const char *s)
{
    if (s[0] != '/' || s[strlen(s) - 1] == '/' || strstr(s, "//"))
        return false;
    for (const char *c = s; *c; ++c) {
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' ||
              *c == '_' || *c == '.' || *c == '/'))
            return false;
    }
    return true;
}

static XrResult XRAPI_CALL
tr_string_to_path(XrInstance handle, const char *text, XrPath *out)
{
    TR_LOCKED();
    XrResult r = tr_instance_check(handle, NULL);
    if (XR_FAILED(r))
        return r;
    if (!text || strlen(text) >= XR_MAX_PATH_LENGTH || !path_syntax_ok(text))
        return tr_violation(XR_ERROR_PATH_FORMAT_INVALID, "xrStringToPath: bad path \"%s\"",
                            text ? text : "(null)");
    *out = tr_path_intern(text);
    return *out == XR_NULL_PATH ? XR_ERROR_PATH_COUNT_EXCEEDED : XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_path_to_string(XrInstance handle, XrPath path, uint32_t capacity, uint32_t *count,
                  char *buffer)
{
    TR_LOCKED();
    XrResult r = tr_instance_check(handle, NULL);
    if (XR_FAILED(r))
        return r;
    const char *s = tr_path_string(path);
    if (!s)
        return tr_violation(XR_ERROR_PATH_INVALID, "xrPathToString: unknown path %llu",
                            (unsigned long long)path);
    const uint32_t need = (uint32_t)strlen(s) + 1;
    *count = need;
    if (capacity == 0)
        return XR_SUCCESS;
    if (capacity < need)
        return XR_ERROR_SIZE_INSUFFICIENT;
    memcpy(buffer, s, need);
    return XR_SUCCESS;
}

/* ---- System ------------------------------------------------------------------------ */

static XrResult XRAPI_CALL
tr_get_system(XrInstance handle, const XrSystemGetInfo *info, XrSystemId *out)
{
    TR_LOCKED();
    XrResult r = tr_instance_check(handle, NULL);
    if (XR_FAILED(r))
        return r;
    if (!info || info->type != XR_TYPE_SYSTEM_GET_INFO)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrGetSystem: bad info");
    if (info->formFactor != XR_FORM_FACTOR_HEAD_MOUNTED_DISPLAY)
        return XR_ERROR_FORM_FACTOR_UNSUPPORTED;
    if (tr.script.no_hmd)
        return XR_ERROR_FORM_FACTOR_UNAVAILABLE;
    if (tr.system_unavailable_left > 0) {
        tr.system_unavailable_left--;
        return XR_ERROR_FORM_FACTOR_UNAVAILABLE;
    }
    *out = TR_SYSTEM_ID;
    return XR_SUCCESS;
}

static XrResult
check_system(XrInstance handle, XrSystemId system)
{
    XrResult r = tr_instance_check(handle, NULL);
    if (XR_FAILED(r))
        return r;
    return system == TR_SYSTEM_ID ? XR_SUCCESS
                                  : tr_violation(XR_ERROR_SYSTEM_INVALID, "invalid system id");
}

static XrResult XRAPI_CALL
tr_get_system_properties(XrInstance handle, XrSystemId system, XrSystemProperties *props)
{
    TR_LOCKED();
    XrResult r = check_system(handle, system);
    if (XR_FAILED(r))
        return r;
    if (!props || props->type != XR_TYPE_SYSTEM_PROPERTIES)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrGetSystemProperties: bad type");
    props->systemId = system;
    props->vendorId = 0x454d;
    snprintf(props->systemName, sizeof props->systemName, "%s", "scripted headset");
    props->graphicsProperties.maxLayerCount = 16;
    props->graphicsProperties.maxSwapchainImageWidth = 1024;
    props->graphicsProperties.maxSwapchainImageHeight = 1024;
    props->trackingProperties.orientationTracking = XR_TRUE;
    props->trackingProperties.positionTracking = XR_TRUE;
    tr_hand_system_properties(props);
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_enumerate_view_configurations(XrInstance handle, XrSystemId system, uint32_t capacity,
                                 uint32_t *count, XrViewConfigurationType *types)
{
    TR_LOCKED();
    XrResult r = check_system(handle, system);
    if (XR_FAILED(r))
        return r;
    *count = 1;
    if (capacity == 0)
        return XR_SUCCESS;
    types[0] = XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO;
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_enumerate_view_configuration_views(XrInstance handle, XrSystemId system,
                                      XrViewConfigurationType type, uint32_t capacity,
                                      uint32_t *count, XrViewConfigurationView *views)
{
    TR_LOCKED();
    XrResult r = check_system(handle, system);
    if (XR_FAILED(r))
        return r;
    if (type != XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO)
        return tr_violation(XR_ERROR_VIEW_CONFIGURATION_TYPE_UNSUPPORTED,
                            "xrEnumerateViewConfigurationViews: type %d", (int)type);
    *count = 2;
    if (capacity == 0)
        return XR_SUCCESS;
    if (capacity < 2)
        return XR_ERROR_SIZE_INSUFFICIENT;
    for (int i = 0; i < 2; ++i) {
        if (views[i].type != XR_TYPE_VIEW_CONFIGURATION_VIEW)
            return tr_violation(XR_ERROR_VALIDATION_FAILURE,
                                "xrEnumerateViewConfigurationViews: type not set");
        views[i].recommendedImageRectWidth = TR_EYE_WIDTH;
        views[i].recommendedImageRectHeight = TR_EYE_HEIGHT;
        views[i].maxImageRectWidth = 1024;
        views[i].maxImageRectHeight = 1024;
        views[i].recommendedSwapchainSampleCount = 1;
        views[i].maxSwapchainSampleCount = 1;
    }
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_enumerate_environment_blend_modes(XrInstance handle, XrSystemId system,
                                     XrViewConfigurationType type, uint32_t capacity,
                                     uint32_t *count, XrEnvironmentBlendMode *modes)
{
    TR_LOCKED();
    XrResult r = check_system(handle, system);
    if (XR_FAILED(r))
        return r;
    if (type != XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO)
        return XR_ERROR_VIEW_CONFIGURATION_TYPE_UNSUPPORTED;
    *count = 1;
    if (capacity > 0)
        modes[0] = XR_ENVIRONMENT_BLEND_MODE_OPAQUE;
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_convert_timespec(XrInstance handle, const struct timespec *ts, XrTime *out)
{
    TR_LOCKED();
    struct tr_instance *inst = NULL;
    XrResult r = tr_instance_check(handle, &inst);
    if (XR_FAILED(r))
        return r;
    if (!inst->timespec_enabled)
        return tr_violation(XR_ERROR_FUNCTION_UNSUPPORTED,
                            "xrConvertTimespecTimeToTimeKHR without its extension");
    *out = (XrTime)ts->tv_sec * 1000000000 + ts->tv_nsec;
    return *out > 0 ? XR_SUCCESS : XR_ERROR_TIME_INVALID;
}

/* ---- Function table -------------------------------------------------------------- */

struct tr_function {
    const char *name;
    PFN_xrVoidFunction function;
};

#define TR_FN(name, fn) {name, (PFN_xrVoidFunction)(fn)}

static const struct tr_function k_core[] = {
    TR_FN("xrGetInstanceProcAddr", tr_get_instance_proc_addr),
    TR_FN("xrEnumerateInstanceExtensionProperties", tr_enumerate_instance_extension_properties),
    TR_FN("xrCreateInstance", tr_create_instance),
    TR_FN("xrDestroyInstance", tr_destroy_instance),
    TR_FN("xrGetInstanceProperties", tr_get_instance_properties),
    TR_FN("xrPollEvent", tr_poll_event),
    TR_FN("xrStringToPath", tr_string_to_path),
    TR_FN("xrPathToString", tr_path_to_string),
    TR_FN("xrGetSystem", tr_get_system),
    TR_FN("xrGetSystemProperties", tr_get_system_properties),
    TR_FN("xrEnumerateViewConfigurations", tr_enumerate_view_configurations),
    TR_FN("xrEnumerateViewConfigurationViews", tr_enumerate_view_configuration_views),
    TR_FN("xrEnumerateEnvironmentBlendModes", tr_enumerate_environment_blend_modes),
};

static XrResult XRAPI_CALL
tr_get_instance_proc_addr(XrInstance instance, const char *name, PFN_xrVoidFunction *function)
{
    TR_LOCKED();
    if (!name || !function)
        return XR_ERROR_VALIDATION_FAILURE;
    *function = NULL;
    const bool pre_instance = strcmp(name, "xrEnumerateInstanceExtensionProperties") == 0 ||
                              strcmp(name, "xrCreateInstance") == 0 ||
                              strcmp(name, "xrEnumerateApiLayerProperties") == 0;
    if (instance == XR_NULL_HANDLE && !pre_instance)
        return XR_ERROR_HANDLE_INVALID;
    for (size_t i = 0; i < sizeof k_core / sizeof k_core[0]; ++i) {
        if (strcmp(k_core[i].name, name) == 0) {
            *function = k_core[i].function;
            return XR_SUCCESS;
        }
    }
    if (strcmp(name, "xrGetOpenGLGraphicsRequirementsKHR") == 0) {
        const struct tr_instance *inst = tr_lookup(instance, TR_KIND_INSTANCE);
        if (!inst || !inst->gl_enabled)
            return XR_ERROR_FUNCTION_UNSUPPORTED;
    }
    if (strcmp(name, "xrConvertTimespecTimeToTimeKHR") == 0) {
        const struct tr_instance *inst = tr_lookup(instance, TR_KIND_INSTANCE);
        if (!inst || !inst->timespec_enabled)
            return XR_ERROR_FUNCTION_UNSUPPORTED;
        *function = (PFN_xrVoidFunction)tr_convert_timespec;
        return XR_SUCCESS;
    }
    if (instance != XR_NULL_HANDLE) {
        *function = tr_input_function(name);
        if (!*function)
            *function = tr_session_function(name);
        if (!*function)
            *function = tr_gl_function(name);
        if (!*function) {
            *function = tr_hand_function(name);
            const struct tr_instance *inst = tr_lookup(instance, TR_KIND_INSTANCE);
            if (*function && (!inst || !inst->hand_tracking_enabled)) {
                *function = NULL; /* the extension's functions only when it is enabled */
                return XR_ERROR_FUNCTION_UNSUPPORTED;
            }
        }
    }
    return *function ? XR_SUCCESS : XR_ERROR_FUNCTION_UNSUPPORTED;
}
