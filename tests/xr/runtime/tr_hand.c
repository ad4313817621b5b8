/*
 * The test runtime's hand tracking (XR_EXT_hand_tracking): hand trackers, the system's
 * XrSystemHandTrackingPropertiesEXT, and xrLocateHandJointsEXT serving the script's hand
 * poses.
 *
 * A tracked hand's 26 joints are the hand model's own (src/hand, hd_pose_to_tracking on
 * the default hand) in one of the poses tests/hand makes (point, pinch, fist, open,
 * thumbs-up), with the wrist where the hand's controller is held: the row's grip pose
 * moved by k_wrist_in_grip, the runtime's idea of where a wrist is in a controller's grip
 * frame (the program has its own; they differ by a few millimetres, as a real hand
 * tracker and a controller do). "absurd" is a fist with four joints that must be refused:
 * the index tip a metre away, the middle finger's distal joint NaN, the ring tip's radius
 * 20 cm, the little finger's distal joint on top of its intermediate one.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embody/m_math.h"
#include "hand_poses.h"
#include "tr_runtime.h"

/* The wrist in the grip frame, per hand: the hand frame's axes (XR_EXT_hand_tracking's
 * wrist: -Z to the fingers, +Y the back of the hand) turned so the grip's +X is the
 * palm's normal (away from the left palm, into the right one) and its -Z runs through
 * the fist from the little finger to the thumb; 4.5 cm behind the palm's centre, and
 * off the program's guess by (3, -2, 4) mm. Orientations as columns below. */
static const float k_wrist_offset_m[3] = {0.003f, -0.002f, 0.004f};
#define TR_PALM_TO_WRIST_M 0.045f

static bool
enabled(void)
{
    return tr.instance && tr.instance->hand_tracking_enabled;
}

void
tr_hand_system_properties(XrSystemProperties *props)
{
    for (XrBaseOutStructure *next = props->next; next; next = next->next) {
        if (next->type == XR_TYPE_SYSTEM_HAND_TRACKING_PROPERTIES_EXT)
            ((XrSystemHandTrackingPropertiesEXT *)next)->supportsHandTracking =
                enabled() ? XR_TRUE : XR_FALSE;
    }
}

struct tr_hand_tracker {
    struct tr_object obj;
    XrHandEXT hand;
};

static XrResult XRAPI_CALL
tr_create_hand_tracker(XrSession handle, const XrHandTrackerCreateInfoEXT *info,
                       XrHandTrackerEXT *out)
{
    TR_LOCKED();
    struct tr_session *s = NULL;
    XrResult r = tr_session_check(handle, &s);
    if (XR_FAILED(r))
        return r;
    if (!enabled())
        return tr_violation(XR_ERROR_FUNCTION_UNSUPPORTED,
                            "xrCreateHandTrackerEXT without XR_EXT_hand_tracking enabled");
    if (!info || info->type != XR_TYPE_HAND_TRACKER_CREATE_INFO_EXT || !out)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrCreateHandTrackerEXT: bad info");
    if (info->hand != XR_HAND_LEFT_EXT && info->hand != XR_HAND_RIGHT_EXT)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrCreateHandTrackerEXT: hand %d",
                            (int)info->hand);
    if (info->handJointSet != XR_HAND_JOINT_SET_DEFAULT_EXT)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE,
                            "xrCreateHandTrackerEXT: joint set %d", (int)info->handJointSet);
    struct tr_hand_tracker *t = calloc(1, sizeof *t);
    if (!t)
        return XR_ERROR_OUT_OF_MEMORY;
    t->hand = info->hand;
    tr_register(&t->obj, TR_KIND_HAND_TRACKER, &s->obj);
    *out = (XrHandTrackerEXT)t;
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_destroy_hand_tracker(XrHandTrackerEXT handle)
{
    TR_LOCKED();
    struct tr_hand_tracker *t = tr_lookup(handle, TR_KIND_HAND_TRACKER);
    if (!t)
        return tr_violation(XR_ERROR_HANDLE_INVALID, "xrDestroyHandTrackerEXT: invalid handle");
    tr_destroy_object(&t->obj);
    return XR_SUCCESS;
}

/* The wrist's pose in STAGE for hand `h` (0 left) held at `grip`. */
static XrPosef
wrist_from_grip(int h, const XrPosef *grip, const struct hd_model *model)
{
    /* Columns: the wrist's axes in grip coordinates. */
    static const float cols[2][3][3] = {
        {{0.0f, 0.0f, -1.0f}, {-1.0f, 0.0f, 0.0f}, {0.0f, 1.0f, 0.0f}},
        {{0.0f, 0.0f, 1.0f}, {1.0f, 0.0f, 0.0f}, {0.0f, 1.0f, 0.0f}},
    };
    float q[4];
    m_quat_from_columns(cols[h][0], cols[h][1], cols[h][2], q);
    /* The palm's centre (hd_pose_to_tracking's palm joint) lies on the grip. */
    float palm[3];
    m_vec3_lerp(model->metacarpal_m[HD_MIDDLE], model->base_m[HD_MIDDLE], 0.5f, palm);
    float back[3], wrist_in_grip[3];
    m_quat_rotate(q, palm, back);
    for (int i = 0; i < 3; ++i)
        wrist_in_grip[i] = -back[i] + k_wrist_offset_m[i];
    const XrPosef local = {.orientation = {q[0], q[1], q[2], q[3]},
                           .position = {wrist_in_grip[0], wrist_in_grip[1], wrist_in_grip[2]}};
    return tr_pose_compose(grip, &local);
}

/* The scripted hand's joints in STAGE (hd_xr_hand); false when it is not tracked. */
static bool
scripted_joints(int h, struct hd_xr_hand *out)
{
    const int pose_id = tr.hand_pose[h];
    const struct tr_row *row = tr_current_row();
    const int device = h == 0 ? TR_LEFT : TR_RIGHT;
    if (pose_id == TR_HAND_NONE || (!row->valid[device] && !tr.hand_placed[h]))
        return false;
    struct hd_model model;
    const struct hd_model_desc desc = {.hand = h == 0 ? HD_LEFT : HD_RIGHT};
    if (hd_model_init(&desc, &model, NULL) != EM_OK)
        return false;
    struct hd_pose pose;
    test_pose_make(&model, pose_id == TR_HAND_ABSURD ? POSE_FIST : pose_id, &pose);
    XrPosef grip = row->pose[device];
    if (tr.hand_placed[h])
        grip = (XrPosef){.orientation = {0.0f, 0.0f, 0.0f, 1.0f},
                         .position = {tr.hand_at_m[h][0], tr.hand_at_m[h][1], tr.hand_at_m[h][2]}};
    const XrPosef wrist = wrist_from_grip(h, &grip, &model);
    const float p[3] = {wrist.position.x, wrist.position.y, wrist.position.z};
    const float q[4] = {wrist.orientation.x, wrist.orientation.y, wrist.orientation.z,
                        wrist.orientation.w};
    hd_pose_to_tracking(&model, &pose, p, q, out);
    if (pose_id == TR_HAND_ABSURD) {
        out->joint[HD_XR_INDEX_TIP].position_m[1] += 1.0f;
        out->joint[HD_XR_MIDDLE_DISTAL].position_m[0] = NAN;
        out->joint[HD_XR_RING_TIP].radius_m = 0.2f;
        memcpy(out->joint[HD_XR_LITTLE_DISTAL].position_m,
               out->joint[HD_XR_LITTLE_INTERMEDIATE].position_m, sizeof(float[3]));
    }
    return true;
}

static XrResult XRAPI_CALL
tr_locate_hand_joints(XrHandTrackerEXT handle, const XrHandJointsLocateInfoEXT *info,
                      XrHandJointLocationsEXT *locations)
{
    TR_LOCKED();
    struct tr_hand_tracker *t = tr_lookup(handle, TR_KIND_HAND_TRACKER);
    if (!t)
        return tr_violation(XR_ERROR_HANDLE_INVALID, "xrLocateHandJointsEXT: invalid handle");
    struct tr_session *s = NULL;
    XrResult r = tr_session_check((XrSession)t->obj.parent, &s);
    if (XR_FAILED(r))
        return r;
    if (!info || info->type != XR_TYPE_HAND_JOINTS_LOCATE_INFO_EXT)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrLocateHandJointsEXT: bad info");
    if (!locations || locations->type != XR_TYPE_HAND_JOINT_LOCATIONS_EXT ||
        !locations->jointLocations)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE,
                            "xrLocateHandJointsEXT: bad locations");
    if (locations->jointCount != XR_HAND_JOINT_COUNT_EXT)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE,
                            "xrLocateHandJointsEXT: %u joints for the default joint set",
                            locations->jointCount);
    const struct tr_space *base = tr_lookup(info->baseSpace, TR_KIND_SPACE);
    if (!base || base->obj.parent != t->obj.parent)
        return tr_violation(XR_ERROR_HANDLE_INVALID, "xrLocateHandJointsEXT: bad base space");
    if (info->time <= 0)
        return tr_violation(XR_ERROR_TIME_INVALID, "xrLocateHandJointsEXT: time %lld",
                            (long long)info->time);
    if (!s->headless && info->time != s->predicted)
        tr.report.locates_off_frame_time++;

    const int h = t->hand == XR_HAND_LEFT_EXT ? 0 : 1;
    struct hd_xr_hand joints;
    XrPosef base_pose;
    const XrSpaceLocationFlags base_flags = tr_space_pose(base, &base_pose);
    const XrSpaceLocationFlags both =
        XR_SPACE_LOCATION_ORIENTATION_VALID_BIT | XR_SPACE_LOCATION_POSITION_VALID_BIT;
    const bool tracked = (base_flags & both) == both && s->state == XR_SESSION_STATE_FOCUSED &&
                         scripted_joints(h, &joints);
    locations->isActive = tracked ? XR_TRUE : XR_FALSE;
    for (uint32_t j = 0; j < XR_HAND_JOINT_COUNT_EXT; ++j) {
        XrHandJointLocationEXT *out = &locations->jointLocations[j];
        if (!tracked) {
            out->locationFlags = 0;
            out->pose = (XrPosef){.orientation = {NAN, NAN, NAN, NAN}, .position = {NAN, NAN, NAN}};
            out->radius = NAN;
            continue;
        }
        const struct hd_xr_joint_location *in = &joints.joint[j];
        const XrPosef stage = {
            .orientation = {in->orientation[0], in->orientation[1], in->orientation[2],
                            in->orientation[3]},
            .position = {in->position_m[0], in->position_m[1], in->position_m[2]}};
        out->pose = tr_pose_relative(&base_pose, &stage);
        out->radius = in->radius_m;
        out->locationFlags = XR_SPACE_LOCATION_ORIENTATION_VALID_BIT |
                             XR_SPACE_LOCATION_POSITION_VALID_BIT |
                             XR_SPACE_LOCATION_ORIENTATION_TRACKED_BIT |
                             XR_SPACE_LOCATION_POSITION_TRACKED_BIT;
    }
    for (XrBaseOutStructure *next = (XrBaseOutStructure *)locations->next; next;
         next = next->next) {
        if (next->type != XR_TYPE_HAND_JOINT_VELOCITIES_EXT)
            continue;
        XrHandJointVelocitiesEXT *v = (XrHandJointVelocitiesEXT *)next;
        if (v->jointCount != XR_HAND_JOINT_COUNT_EXT || !v->jointVelocities)
            return tr_violation(XR_ERROR_VALIDATION_FAILURE,
                                "xrLocateHandJointsEXT: bad velocities");
        for (uint32_t j = 0; j < XR_HAND_JOINT_COUNT_EXT; ++j)
            memset(&v->jointVelocities[j], 0, sizeof v->jointVelocities[j]);
    }
    return XR_SUCCESS;
}

PFN_xrVoidFunction
tr_hand_function(const char *name)
{
    if (strcmp(name, "xrCreateHandTrackerEXT") == 0)
        return (PFN_xrVoidFunction)tr_create_hand_tracker;
    if (strcmp(name, "xrDestroyHandTrackerEXT") == 0)
        return (PFN_xrVoidFunction)tr_destroy_hand_tracker;
    if (strcmp(name, "xrLocateHandJointsEXT") == 0)
        return (PFN_xrVoidFunction)tr_locate_hand_joints;
    return NULL;
}
