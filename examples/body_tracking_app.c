/*
 * body_tracking_app: an OpenXR application that asks for XR_FB_body_tracking (and
 * XR_META_body_tracking_full_body for the legs) and prints where the body is. On a runtime
 * without body tracking, enable embody's layer and it gets embody's reconstruction:
 *
 *     XR_ENABLE_API_LAYERS=XR_APILAYER_EMBODY_body_tracking ./body_tracking_app [FRAMES]
 *
 * Headless (XR_MND_headless, XR_KHR_convert_timespec_time): no window, one frame every
 * 1/60 s, located at the current time. Only what the OpenXR specification offers is used;
 * embody/openxr_ext.h declares the extensions for SDKs older than them (Debian's 1.0.20).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define XR_USE_TIMESPEC /* xrConvertTimespecTimeToTimeKHR */
#include <openxr/openxr.h>
#include <openxr/openxr_platform.h>

#include <embody/openxr_ext.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        const XrResult r_ = (call);                                                                \
        if (XR_FAILED(r_)) {                                                                       \
            fprintf(stderr, "body_tracking_app: %s failed: %d\n", #call, (int)r_);                 \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

/* Whether the loader finds a runtime at all: without one it cannot list extensions
 * (whatever layers are enabled). */
static int
runtime_found(void)
{
    uint32_t n = 0;
    return XR_SUCCEEDED(xrEnumerateInstanceExtensionProperties(NULL, 0, &n, NULL)) && n > 0;
}

static int
offered(const char *extension)
{
    uint32_t n = 0;
    if (XR_FAILED(xrEnumerateInstanceExtensionProperties(NULL, 0, &n, NULL)) || n == 0)
        return 0;
    XrExtensionProperties *p = calloc(n, sizeof *p);
    int found = 0;
    for (uint32_t i = 0; p && i < n; ++i)
        p[i].type = XR_TYPE_EXTENSION_PROPERTIES;
    if (p && XR_SUCCEEDED(xrEnumerateInstanceExtensionProperties(NULL, n, &n, p)))
        for (uint32_t i = 0; i < n; ++i)
            found |= strcmp(p[i].extensionName, extension) == 0;
    free(p);
    return found;
}

/* Reads events; begins the session when it is READY. Returns 0 when it must end. */
static int
pump(XrInstance instance, XrSession session)
{
    XrEventDataBuffer ev = {.type = XR_TYPE_EVENT_DATA_BUFFER};
    while (xrPollEvent(instance, &ev) == XR_SUCCESS) {
        if (ev.type == XR_TYPE_EVENT_DATA_SESSION_STATE_CHANGED) {
            const XrSessionState s = ((XrEventDataSessionStateChanged *)&ev)->state;
            if (s == XR_SESSION_STATE_READY) {
                const XrSessionBeginInfo begin = {.type = XR_TYPE_SESSION_BEGIN_INFO,
                                                  .primaryViewConfigurationType =
                                                      XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO};
                if (XR_FAILED(xrBeginSession(session, &begin)))
                    return 0;
            } else if (s == XR_SESSION_STATE_STOPPING || s == XR_SESSION_STATE_EXITING ||
                       s == XR_SESSION_STATE_LOSS_PENDING) {
                return 0;
            }
        } else if (ev.type == XR_TYPE_EVENT_DATA_INSTANCE_LOSS_PENDING) {
            return 0;
        }
        ev = (XrEventDataBuffer){.type = XR_TYPE_EVENT_DATA_BUFFER};
    }
    return 1;
}

static void
print_joint(const char *name, const XrBodyJointLocationFB *j)
{
    printf("  %-10s %7.3f %7.3f %7.3f%s\n", name, (double)j->pose.position.x,
           (double)j->pose.position.y, (double)j->pose.position.z,
           (j->locationFlags & XR_SPACE_LOCATION_POSITION_TRACKED_BIT) ? "  tracked" : "");
}

int
main(int argc, char **argv)
{
    const int frames = argc > 1 ? atoi(argv[1]) : 300;
    int status = 1;
    XrInstance instance = XR_NULL_HANDLE;
    /* Two different fixes: start a runtime, or enable the layer. */
    if (!runtime_found()) {
        fprintf(stderr, "body_tracking_app: no OpenXR runtime: start one (Monado, SteamVR, ...) "
                        "or point XR_RUNTIME_JSON at its manifest\n");
        return 1;
    }
    if (!offered(XR_FB_BODY_TRACKING_EXTENSION_NAME)) {
        fprintf(stderr, "body_tracking_app: the runtime has no XR_FB_body_tracking and embody's "
                        "layer is not enabled (XR_ENABLE_API_LAYERS="
                        "XR_APILAYER_EMBODY_body_tracking, or EMBODY_LAYER_ENABLE=1 with the "
                        "package)\n");
        return 1;
    }
    const int full = offered(XR_META_BODY_TRACKING_FULL_BODY_EXTENSION_NAME);
    const char *ext[] = {
        XR_MND_HEADLESS_EXTENSION_NAME, XR_KHR_CONVERT_TIMESPEC_TIME_EXTENSION_NAME,
        XR_FB_BODY_TRACKING_EXTENSION_NAME, XR_META_BODY_TRACKING_FULL_BODY_EXTENSION_NAME};
    XrInstanceCreateInfo info = {.type = XR_TYPE_INSTANCE_CREATE_INFO,
                                 .enabledExtensionCount = full ? 4 : 3,
                                 .enabledExtensionNames = ext};
    strcpy(info.applicationInfo.applicationName, "body_tracking_app");
    info.applicationInfo.apiVersion = XR_MAKE_VERSION(1, 0, 0);
    CHECK(xrCreateInstance(&info, &instance));

    PFN_xrCreateBodyTrackerFB create_tracker = NULL;
    PFN_xrLocateBodyJointsFB locate = NULL;
    PFN_xrConvertTimespecTimeToTimeKHR to_xr_time = NULL;
    CHECK(xrGetInstanceProcAddr(instance, "xrCreateBodyTrackerFB",
                                (PFN_xrVoidFunction *)&create_tracker));
    CHECK(xrGetInstanceProcAddr(instance, "xrLocateBodyJointsFB", (PFN_xrVoidFunction *)&locate));
    CHECK(xrGetInstanceProcAddr(instance, "xrConvertTimespecTimeToTimeKHR",
                                (PFN_xrVoidFunction *)&to_xr_time));

    XrSystemId system = XR_NULL_SYSTEM_ID;
    const XrSystemGetInfo sys = {.type = XR_TYPE_SYSTEM_GET_INFO,
                                 .formFactor = XR_FORM_FACTOR_HEAD_MOUNTED_DISPLAY};
    CHECK(xrGetSystem(instance, &sys, &system));
    XrSystemBodyTrackingPropertiesFB body_props = {.type =
                                                       XR_TYPE_SYSTEM_BODY_TRACKING_PROPERTIES_FB};
    XrSystemProperties props = {.type = XR_TYPE_SYSTEM_PROPERTIES, .next = &body_props};
    CHECK(xrGetSystemProperties(instance, system, &props));
    printf("%s: body tracking %s\n", props.systemName,
           body_props.supportsBodyTracking ? "supported" : "not supported");

    XrSession session = XR_NULL_HANDLE;
    const XrSessionCreateInfo session_info = {.type = XR_TYPE_SESSION_CREATE_INFO,
                                              .systemId = system};
    CHECK(xrCreateSession(instance, &session_info, &session));
    XrSpace stage = XR_NULL_HANDLE;
    const XrReferenceSpaceCreateInfo stage_info = {.type = XR_TYPE_REFERENCE_SPACE_CREATE_INFO,
                                                   .referenceSpaceType =
                                                       XR_REFERENCE_SPACE_TYPE_STAGE,
                                                   .poseInReferenceSpace = {.orientation.w = 1.0f}};
    CHECK(xrCreateReferenceSpace(session, &stage_info, &stage));
    const XrBodyTrackerCreateInfoFB tracker_info = {
        .type = XR_TYPE_BODY_TRACKER_CREATE_INFO_FB,
        .bodyJointSet = full ? XR_BODY_JOINT_SET_FULL_BODY_META : XR_BODY_JOINT_SET_DEFAULT_FB};
    XrBodyTrackerFB tracker = XR_NULL_HANDLE;
    CHECK(create_tracker(session, &tracker_info, &tracker));

    XrBodyJointLocationFB joints[XR_FULL_BODY_JOINT_COUNT_META];
    for (int k = 0; k < frames && pump(instance, session); ++k) {
        const struct timespec period = {0, 1000000000L / 60};
        nanosleep(&period, NULL);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        XrTime time = 0;
        CHECK(to_xr_time(instance, &now, &time));
        const XrBodyJointsLocateInfoFB where = {
            .type = XR_TYPE_BODY_JOINTS_LOCATE_INFO_FB, .baseSpace = stage, .time = time};
        XrBodyJointLocationsFB out = {.type = XR_TYPE_BODY_JOINT_LOCATIONS_FB,
                                      .jointCount = full ? XR_FULL_BODY_JOINT_COUNT_META
                                                         : XR_BODY_JOINT_COUNT_FB,
                                      .jointLocations = joints};
        CHECK(locate(tracker, &where, &out));
        if (k % 60 != 59)
            continue;
        printf("frame %d: %s, confidence %.2f\n", k + 1, out.isActive ? "active" : "not active",
               (double)out.confidence);
        if (!out.isActive)
            continue;
        print_joint("head", &joints[XR_BODY_JOINT_HEAD_FB]);
        print_joint("hips", &joints[XR_BODY_JOINT_HIPS_FB]);
        print_joint("left hand", &joints[XR_BODY_JOINT_LEFT_HAND_WRIST_FB]);
        print_joint("right hand", &joints[XR_BODY_JOINT_RIGHT_HAND_WRIST_FB]);
        if (full) {
            print_joint("left foot", &joints[XR_FULL_BODY_JOINT_LEFT_FOOT_ANKLE_META]);
            print_joint("right foot", &joints[XR_FULL_BODY_JOINT_RIGHT_FOOT_ANKLE_META]);
        }
    }
    status = 0;
done:
    if (instance != XR_NULL_HANDLE)
        xrDestroyInstance(instance); /* the session, spaces and tracker go with it */
    return status;
}
