/*
 * The OpenXR facts the program (src/xr) and the layer (src/layer) share (oxr_common.h).
 * Compiled into both; calls no OpenXR function.
 */
#include "xr/oxr_common.h"

#include <math.h>

const struct oxr_controller_profile oxr_controller_profiles[OXR_CONTROLLER_PROFILE_COUNT] = {
    /* Core OpenXR 1.0. */
    {"/interaction_profiles/khr/simple_controller",
     NULL,
     {"/input/select/click", "/input/select/click"},
     {"/input/menu/click", "/input/menu/click"}},
    {"/interaction_profiles/valve/index_controller",
     NULL,
     {"/input/a/click", "/input/a/click"},
     {"/input/b/click", "/input/b/click"}},
    {"/interaction_profiles/oculus/touch_controller",
     NULL,
     {"/input/x/click", "/input/a/click"},
     {"/input/y/click", "/input/b/click"}},
    {"/interaction_profiles/htc/vive_controller",
     NULL,
     {"/input/menu/click", "/input/menu/click"},
     {"/input/squeeze/click", "/input/squeeze/click"}},
    {"/interaction_profiles/microsoft/motion_controller",
     NULL,
     {"/input/menu/click", "/input/menu/click"},
     {"/input/squeeze/click", "/input/squeeze/click"}},
    /* Extensions' (names as strings: older OpenXR headers lack some of their macros). */
    {"/interaction_profiles/hp/mixed_reality_controller",
     "XR_EXT_hp_mixed_reality_controller",
     {"/input/x/click", "/input/a/click"},
     {"/input/y/click", "/input/b/click"}},
    {"/interaction_profiles/htc/vive_cosmos_controller",
     "XR_HTC_vive_cosmos_controller_interaction",
     {"/input/x/click", "/input/a/click"},
     {"/input/y/click", "/input/b/click"}},
    {"/interaction_profiles/htc/vive_focus3_controller",
     "XR_HTC_vive_focus3_controller_interaction",
     {"/input/x/click", "/input/a/click"},
     {"/input/y/click", "/input/b/click"}},
    {"/interaction_profiles/samsung/odyssey_controller",
     "XR_EXT_samsung_odyssey_controller",
     {"/input/menu/click", "/input/menu/click"},
     {"/input/squeeze/click", "/input/squeeze/click"}},
    {"/interaction_profiles/huawei/controller",
     "XR_HUAWEI_controller_interaction",
     {"/input/back/click", "/input/back/click"},
     {"/input/trackpad/click", "/input/trackpad/click"}},
    {"/interaction_profiles/bytedance/pico4_controller",
     "XR_BD_controller_interaction",
     {"/input/x/click", "/input/a/click"},
     {"/input/y/click", "/input/b/click"}},
    {"/interaction_profiles/meta/touch_pro_controller",
     "XR_FB_touch_controller_pro",
     {"/input/x/click", "/input/a/click"},
     {"/input/y/click", "/input/b/click"}},
    {"/interaction_profiles/meta/touch_plus_controller",
     "XR_META_touch_controller_plus",
     {"/input/x/click", "/input/a/click"},
     {"/input/y/click", "/input/b/click"}},
};

#define OXR_TOUCH_THUMBS                                                                           \
    {{"/input/thumbstick/touch", "/input/thumbrest/touch", "/input/x/touch", "/input/y/touch"},   \
     {"/input/thumbstick/touch", "/input/thumbrest/touch", "/input/a/touch", "/input/b/touch"}}
#define OXR_PAD_THUMB {{"/input/trackpad/touch"}, {"/input/trackpad/touch"}}

const struct oxr_finger_inputs oxr_finger_inputs[OXR_CONTROLLER_PROFILE_COUNT] = {
    /* khr/simple_controller */
    {"/input/select/click", NULL, NULL, NULL, {{NULL}, {NULL}}, NULL},
    /* valve/index_controller */
    {"/input/trigger/value",
     "/input/trigger/touch",
     "/input/squeeze/value",
     "/input/squeeze/force",
     {{"/input/thumbstick/touch", "/input/trackpad/touch", "/input/a/touch", "/input/b/touch"},
      {"/input/thumbstick/touch", "/input/trackpad/touch", "/input/a/touch", "/input/b/touch"}},
     NULL},
    /* oculus/touch_controller */
    {"/input/trigger/value", "/input/trigger/touch", "/input/squeeze/value", NULL,
     OXR_TOUCH_THUMBS, NULL},
    /* htc/vive_controller */
    {"/input/trigger/value", NULL, "/input/squeeze/click", NULL, OXR_PAD_THUMB, NULL},
    /* microsoft/motion_controller */
    {"/input/trigger/value", NULL, "/input/squeeze/click", NULL, OXR_PAD_THUMB, NULL},
    /* hp/mixed_reality_controller */
    {"/input/trigger/value", NULL, "/input/squeeze/value", NULL, {{NULL}, {NULL}}, NULL},
    /* htc/vive_cosmos_controller */
    {"/input/trigger/value",
     NULL,
     "/input/squeeze/click",
     NULL,
     {{"/input/thumbstick/touch"}, {"/input/thumbstick/touch"}}, NULL},
    /* htc/vive_focus3_controller */
    {"/input/trigger/value",
     "/input/trigger/touch",
     "/input/squeeze/value",
     NULL,
     {{"/input/thumbstick/touch", "/input/thumbrest/touch"},
      {"/input/thumbstick/touch", "/input/thumbrest/touch"}}, NULL},
    /* samsung/odyssey_controller */
    {"/input/trigger/value", NULL, "/input/squeeze/click", NULL, OXR_PAD_THUMB, NULL},
    /* huawei/controller */
    {"/input/trigger/value", NULL, NULL, NULL, OXR_PAD_THUMB, NULL},
    /* bytedance/pico4_controller */
    {"/input/trigger/value",
     "/input/trigger/touch",
     "/input/squeeze/value",
     NULL,
     {{"/input/thumbstick/touch", "/input/x/touch", "/input/y/touch"},
      {"/input/thumbstick/touch", "/input/a/touch", "/input/b/touch"}}, NULL},
    /* meta/touch_pro_controller */
    {"/input/trigger/value", "/input/trigger/touch", "/input/squeeze/value", NULL,
     OXR_TOUCH_THUMBS, "/input/trigger/curl_fb"},
    /* meta/touch_plus_controller */
    {"/input/trigger/value", "/input/trigger/touch", "/input/squeeze/value", NULL,
     OXR_TOUCH_THUMBS, "/input/trigger/curl_meta"},
};

const char *const oxr_tracker_roles[EM_TRACKER_COUNT] = {
    "waist",     "chest",      "left_foot",  "right_foot",
    "left_knee", "right_knee", "left_elbow", "right_elbow",
};

/* The runtime's flags, less those whose values are not usable: a finite unit quaternion
 * (within 1e-3 of unit length squared), a finite position. */
static XrSpaceLocationFlags
usable_flags(const XrSpaceLocation *loc)
{
    XrSpaceLocationFlags f = loc->locationFlags;
    const XrQuaternionf *q = &loc->pose.orientation;
    const XrVector3f *p = &loc->pose.position;
    const float n2 = q->x * q->x + q->y * q->y + q->z * q->z + q->w * q->w;
    if (!(isfinite(n2) && fabsf(n2 - 1.0f) < 1e-3f))
        f &= ~(XrSpaceLocationFlags)(XR_SPACE_LOCATION_ORIENTATION_VALID_BIT |
                                     XR_SPACE_LOCATION_ORIENTATION_TRACKED_BIT);
    if (!(isfinite(p->x) && isfinite(p->y) && isfinite(p->z)))
        f &= ~(XrSpaceLocationFlags)(XR_SPACE_LOCATION_POSITION_VALID_BIT |
                                     XR_SPACE_LOCATION_POSITION_TRACKED_BIT);
    return f;
}

void
oxr_location_to_pose(const XrSpaceLocation *location, const struct em_device_pose *keep,
                     struct em_device_pose *out)
{
    static const struct em_device_pose k_rest = {.pose.orientation = {0.0f, 0.0f, 0.0f, 1.0f}};
    const XrSpaceLocationFlags f = usable_flags(location);
    struct em_device_pose d = keep ? *keep : k_rest;
    d.flags = 0;
    if (f & XR_SPACE_LOCATION_ORIENTATION_VALID_BIT) {
        d.pose.orientation[0] = location->pose.orientation.x;
        d.pose.orientation[1] = location->pose.orientation.y;
        d.pose.orientation[2] = location->pose.orientation.z;
        d.pose.orientation[3] = location->pose.orientation.w;
        d.flags |= EM_POSE_ORIENTATION_VALID;
        if (f & XR_SPACE_LOCATION_ORIENTATION_TRACKED_BIT)
            d.flags |= EM_POSE_ORIENTATION_TRACKED;
    }
    if (f & XR_SPACE_LOCATION_POSITION_VALID_BIT) {
        d.pose.position_m[0] = location->pose.position.x;
        d.pose.position_m[1] = location->pose.position.y;
        d.pose.position_m[2] = location->pose.position.z;
        d.flags |= EM_POSE_POSITION_VALID;
        if (f & XR_SPACE_LOCATION_POSITION_TRACKED_BIT)
            d.flags |= EM_POSE_POSITION_TRACKED;
    }
    *out = d;
}

void
oxr_hand_joints_from_locations(const XrHandJointLocationsEXT *locations, struct hd_xr_hand *out)
{
    out->active = locations->isActive == XR_TRUE;
    for (int j = 0; j < HD_XR_JOINT_COUNT; ++j) {
        const XrHandJointLocationEXT *in = &locations->jointLocations[j];
        struct hd_xr_joint_location *o = &out->joint[j];
        /* XrSpaceLocationFlags' bits are enum em_pose_flags'. */
        o->flags = (uint32_t)(in->locationFlags & EM_POSE_ALL_VALID);
        o->position_m[0] = in->pose.position.x;
        o->position_m[1] = in->pose.position.y;
        o->position_m[2] = in->pose.position.z;
        o->orientation[0] = in->pose.orientation.x;
        o->orientation[1] = in->pose.orientation.y;
        o->orientation[2] = in->pose.orientation.z;
        o->orientation[3] = in->pose.orientation.w;
        o->radius_m = in->radius;
    }
}
