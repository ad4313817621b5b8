/*
 * joint_frames: draws the joint frames a body-tracking runtime (or embody's layer) hands
 * out, as small axes over the skeleton, into an SVG picture any browser shows: the body
 * from the front (looking along -Z) and from its left side (looking along -X), each joint
 * with its X (red), Y (green) and Z (blue) axes, bones in grey.
 *
 *     XR_ENABLE_API_LAYERS=XR_APILAYER_EMBODY_body_tracking ./joint_frames [FRAMES] [OUT.svg] [bd]
 *
 * By default the joints of XR_FB_body_tracking (and XR_META_body_tracking_full_body's legs
 * when offered), in Meta's frames; with "bd", XR_BD_body_tracking's 24 joints in the frames
 * of its specification (at the T-pose: +X right, +Y up, +Z back). The picture is of the
 * last of FRAMES frames (default 120, one every 1/60 s, headless like body_tracking_app).
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
            fprintf(stderr, "joint_frames: %s failed: %d\n", #call, (int)r_);                      \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

#define MAX_JOINTS XR_FULL_BODY_JOINT_COUNT_META

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
        }
        ev = (XrEventDataBuffer){.type = XR_TYPE_EVENT_DATA_BUFFER};
    }
    return 1;
}

/* ---- The picture ------------------------------------------------------------------------ */

struct joint {
    XrPosef pose;
    int parent; /* -1: none */
    int valid;
};

static XrVector3f
rotate(XrQuaternionf q, XrVector3f v)
{
    /* v + 2w (u x v) + 2 u x (u x v), u = (x, y, z) */
    const XrVector3f u = {q.x, q.y, q.z};
    const XrVector3f t = {2.0f * (u.y * v.z - u.z * v.y), 2.0f * (u.z * v.x - u.x * v.z),
                          2.0f * (u.x * v.y - u.y * v.x)};
    return (XrVector3f){v.x + q.w * t.x + (u.y * t.z - u.z * t.y),
                        v.y + q.w * t.y + (u.z * t.x - u.x * t.z),
                        v.z + q.w * t.z + (u.x * t.y - u.y * t.x)};
}

#define PANEL_PX 600
#define PANEL_HEIGHT_PX 660
#define PX_PER_M 300.0f

/* A point of the stage in a panel: front (x right, y up) or side (-z right, y up), the
 * body's root in the middle, the floor near the bottom. */
static void
project(int side, XrVector3f p, XrVector3f centre, float *out_x, float *out_y)
{
    const float across = side ? -(p.z - centre.z) : p.x - centre.x;
    *out_x = (float)(side * PANEL_PX) + PANEL_PX / 2.0f + across * PX_PER_M;
    *out_y = PANEL_HEIGHT_PX - 30.0f - p.y * PX_PER_M;
}

static void
line(FILE *f, int side, XrVector3f a, XrVector3f b, XrVector3f centre, const char *colour,
     float width)
{
    float x0, y0, x1, y1;
    project(side, a, centre, &x0, &y0);
    project(side, b, centre, &x1, &y1);
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
            "stroke-width=\"%.1f\"/>\n",
            (double)x0, (double)y0, (double)x1, (double)y1, colour, (double)width);
}

static int
write_svg(const char *path, const struct joint *joints, int count, float axis_m, const char *title)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "joint_frames: cannot write %s\n", path);
        return 0;
    }
    XrVector3f centre = {0.0f, 1.0f, 0.0f};
    for (int j = 0; j < count; ++j)
        if (joints[j].valid && joints[j].parent < 0) /* the root: on the floor */
            centre = (XrVector3f){joints[j].pose.position.x, 1.0f, joints[j].pose.position.z};
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
            "<text x=\"10\" y=\"20\" font-family=\"sans-serif\" font-size=\"14\">%s: front "
            "(left) and left side (right); X red, Y green, Z blue</text>\n",
            2 * PANEL_PX, PANEL_HEIGHT_PX, title);
    static const char *const k_axis_colour[3] = {"#d62728", "#2ca02c", "#1f77b4"};
    for (int side = 0; side < 2; ++side) {
        for (int j = 0; j < count; ++j)
            if (joints[j].valid && joints[j].parent >= 0 && joints[joints[j].parent].valid)
                line(f, side, joints[joints[j].parent].pose.position, joints[j].pose.position,
                     centre, "#999999", 2.0f);
        for (int j = 0; j < count; ++j) {
            if (!joints[j].valid)
                continue;
            for (int a = 0; a < 3; ++a) {
                XrVector3f e = {a == 0 ? axis_m : 0.0f, a == 1 ? axis_m : 0.0f,
                                a == 2 ? axis_m : 0.0f};
                const XrVector3f d = rotate(joints[j].pose.orientation, e);
                const XrVector3f p = joints[j].pose.position;
                const XrVector3f tip = {p.x + d.x, p.y + d.y, p.z + d.z};
                line(f, side, p, tip, centre, k_axis_colour[a], 1.2f);
            }
        }
    }
    fprintf(f, "</svg>\n");
    return fclose(f) == 0;
}

/* SMPL's parents, as XrBodyJointBD orders the joints. */
static const int k_bd_parent[XR_BODY_JOINT_COUNT_BD] = {
    -1, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 12, 13, 14, 16, 17, 18, 19, 20, 21};

int
main(int argc, char **argv)
{
    const int frames = argc > 1 ? atoi(argv[1]) : 120;
    const char *out_path = argc > 2 ? argv[2] : "joint_frames.svg";
    const int bd = argc > 3 && strcmp(argv[3], "bd") == 0;
    const char *body_ext =
        bd ? XR_BD_BODY_TRACKING_EXTENSION_NAME : XR_FB_BODY_TRACKING_EXTENSION_NAME;
    if (!offered(body_ext)) {
        fprintf(stderr,
                "joint_frames: no %s here; enable embody's layer "
                "(XR_ENABLE_API_LAYERS=XR_APILAYER_EMBODY_body_tracking)\n",
                body_ext);
        return 1;
    }
    const int full = !bd && offered(XR_META_BODY_TRACKING_FULL_BODY_EXTENSION_NAME);
    int status = 1;
    XrInstance instance = XR_NULL_HANDLE;
    const char *ext[] = {XR_MND_HEADLESS_EXTENSION_NAME,
                         XR_KHR_CONVERT_TIMESPEC_TIME_EXTENSION_NAME, body_ext,
                         XR_META_BODY_TRACKING_FULL_BODY_EXTENSION_NAME};
    XrInstanceCreateInfo info = {.type = XR_TYPE_INSTANCE_CREATE_INFO,
                                 .enabledExtensionCount = full ? 4 : 3,
                                 .enabledExtensionNames = ext};
    strcpy(info.applicationInfo.applicationName, "joint_frames");
    info.applicationInfo.apiVersion = XR_MAKE_VERSION(1, 0, 0);
    CHECK(xrCreateInstance(&info, &instance));
    PFN_xrConvertTimespecTimeToTimeKHR to_xr_time = NULL;
    CHECK(xrGetInstanceProcAddr(instance, "xrConvertTimespecTimeToTimeKHR",
                                (PFN_xrVoidFunction *)&to_xr_time));
    XrSystemId system = XR_NULL_SYSTEM_ID;
    const XrSystemGetInfo sys = {.type = XR_TYPE_SYSTEM_GET_INFO,
                                 .formFactor = XR_FORM_FACTOR_HEAD_MOUNTED_DISPLAY};
    CHECK(xrGetSystem(instance, &sys, &system));
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

    PFN_xrCreateBodyTrackerFB create_fb = NULL;
    PFN_xrLocateBodyJointsFB locate_fb = NULL;
    PFN_xrGetBodySkeletonFB skeleton_fb = NULL;
    PFN_xrCreateBodyTrackerBD create_bd = NULL;
    PFN_xrLocateBodyJointsBD locate_bd = NULL;
    XrBodyTrackerFB fb_tracker = XR_NULL_HANDLE;
    XrBodyTrackerBD bd_tracker = XR_NULL_HANDLE;
    const uint32_t count = bd     ? XR_BODY_JOINT_COUNT_BD
                           : full ? XR_FULL_BODY_JOINT_COUNT_META
                                  : XR_BODY_JOINT_COUNT_FB;
    struct joint joints[MAX_JOINTS];
    if (bd) {
        CHECK(xrGetInstanceProcAddr(instance, "xrCreateBodyTrackerBD",
                                    (PFN_xrVoidFunction *)&create_bd));
        CHECK(xrGetInstanceProcAddr(instance, "xrLocateBodyJointsBD",
                                    (PFN_xrVoidFunction *)&locate_bd));
        const XrBodyTrackerCreateInfoBD create = {.type = XR_TYPE_BODY_TRACKER_CREATE_INFO_BD,
                                                  .jointSet =
                                                      XR_BODY_JOINT_SET_FULL_BODY_JOINTS_BD};
        CHECK(create_bd(session, &create, &bd_tracker));
        for (uint32_t j = 0; j < count; ++j)
            joints[j].parent = k_bd_parent[j];
    } else {
        CHECK(xrGetInstanceProcAddr(instance, "xrCreateBodyTrackerFB",
                                    (PFN_xrVoidFunction *)&create_fb));
        CHECK(xrGetInstanceProcAddr(instance, "xrLocateBodyJointsFB",
                                    (PFN_xrVoidFunction *)&locate_fb));
        CHECK(xrGetInstanceProcAddr(instance, "xrGetBodySkeletonFB",
                                    (PFN_xrVoidFunction *)&skeleton_fb));
        const XrBodyTrackerCreateInfoFB create = {
            .type = XR_TYPE_BODY_TRACKER_CREATE_INFO_FB,
            .bodyJointSet = full ? XR_BODY_JOINT_SET_FULL_BODY_META : XR_BODY_JOINT_SET_DEFAULT_FB};
        CHECK(create_fb(session, &create, &fb_tracker));
        /* The bones: the skeleton's parents. */
        XrBodySkeletonJointFB bones[MAX_JOINTS];
        XrBodySkeletonFB sk = {
            .type = XR_TYPE_BODY_SKELETON_FB, .jointCount = count, .joints = bones};
        CHECK(skeleton_fb(fb_tracker, &sk));
        for (uint32_t j = 0; j < count; ++j)
            joints[j].parent = bones[j].parentJoint < (int32_t)count ? bones[j].parentJoint : -1;
    }

    int located = 0;
    for (int k = 0; k < frames && pump(instance, session); ++k) {
        const struct timespec period = {0, 1000000000L / 60};
        nanosleep(&period, NULL);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        XrTime time = 0;
        CHECK(to_xr_time(instance, &now, &time));
        if (bd) {
            XrBodyJointLocationBD loc[XR_BODY_JOINT_COUNT_BD];
            const XrBodyJointsLocateInfoBD where = {
                .type = XR_TYPE_BODY_JOINTS_LOCATE_INFO_BD, .baseSpace = stage, .time = time};
            XrBodyJointLocationsBD out = {.type = XR_TYPE_BODY_JOINT_LOCATIONS_BD,
                                          .jointLocationCount = count,
                                          .jointLocations = loc};
            CHECK(locate_bd(bd_tracker, &where, &out));
            for (uint32_t j = 0; j < count; ++j) {
                joints[j].pose = loc[j].pose;
                joints[j].valid = (loc[j].locationFlags & XR_SPACE_LOCATION_POSITION_VALID_BIT) &&
                                  (loc[j].locationFlags & XR_SPACE_LOCATION_ORIENTATION_VALID_BIT);
            }
            located = 1;
        } else {
            XrBodyJointLocationFB loc[MAX_JOINTS];
            const XrBodyJointsLocateInfoFB where = {
                .type = XR_TYPE_BODY_JOINTS_LOCATE_INFO_FB, .baseSpace = stage, .time = time};
            XrBodyJointLocationsFB out = {.type = XR_TYPE_BODY_JOINT_LOCATIONS_FB,
                                          .jointCount = count,
                                          .jointLocations = loc};
            CHECK(locate_fb(fb_tracker, &where, &out));
            for (uint32_t j = 0; j < count; ++j) {
                joints[j].pose = loc[j].pose;
                joints[j].valid = out.isActive &&
                                  (loc[j].locationFlags & XR_SPACE_LOCATION_POSITION_VALID_BIT) &&
                                  (loc[j].locationFlags & XR_SPACE_LOCATION_ORIENTATION_VALID_BIT);
            }
            located = out.isActive == XR_TRUE;
        }
    }
    if (!located) {
        fprintf(stderr, "joint_frames: no body was located\n");
        goto done;
    }
    if (!write_svg(out_path, joints, (int)count, bd ? 0.06f : 0.03f,
                   bd ? "XR_BD_body_tracking" : "XR_FB_body_tracking"))
        goto done;
    printf("joint_frames: wrote %s (%u joints)\n", out_path, count);
    status = 0;
done:
    if (instance != XR_NULL_HANDLE)
        xrDestroyInstance(instance); /* the session, spaces and trackers go with it */
    return status;
}
