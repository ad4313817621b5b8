/*
 * The OpenXR facts that the program's OpenXR source (src/xr) and the OpenXR layer
 * (src/layer) both use, each written once (oxr_common.c, compiled into both: the layer is
 * a shared library of its own that must not link the loader, and this file calls no
 * OpenXR function):
 *
 *   - the controller interaction profiles with /user/hand/{left,right}/input/grip/pose,
 *     the extension each needs, and the buttons the program calibrates and recenters with;
 *   - XR_HTCX_vive_tracker_interaction's profile and roles, in enum em_tracker's order;
 *   - an XrSpaceLocation as an em_device_pose.
 */
#ifndef EMBODY_OXR_COMMON_H
#define EMBODY_OXR_COMMON_H

#include <openxr/openxr.h>

#include "embody/hand.h"
#include "embody/tracking.h"

/* ---- Controller interaction profiles ---- */

/* One controller profile: its path, the extension that defines it (NULL: core OpenXR
 * 1.0), and the program's buttons, input paths below /user/hand/<side> per hand (index 0
 * left, 1 right), each one the specification lists for that profile (a runtime refuses
 * the whole profile otherwise). */
struct oxr_controller_profile {
    const char *path;
    const char *extension;
    const char *calibrate[2];
    const char *recenter[2];
};

/* The core profiles first (extension NULL), then those of extensions. */
#define OXR_CONTROLLER_PROFILE_COUNT 13
extern const struct oxr_controller_profile oxr_controller_profiles[OXR_CONTROLLER_PROFILE_COUNT];

/* The inputs of each profile (oxr_controller_profiles' order) that say where the fingers
 * are, below /user/hand/<side>, each one the specification lists for that profile (NULL
 * where it has none): what src/hand's hd_curls_from_controller reads. A float action
 * bound to a click reads 0 or 1. */
#define OXR_MAX_THUMB_TOUCHES 4
struct oxr_finger_inputs {
    const char *trigger;       /* float: trigger value, or the simple controller's select */
    const char *trigger_touch; /* boolean */
    const char *squeeze;       /* float: squeeze value, or its click */
    const char *squeeze_force; /* float */
    /* boolean, per hand (0 left): any one touched is the thumb on the controller */
    const char *thumb_touch[2][OXR_MAX_THUMB_TOUCHES];
    const char *trigger_curl; /* float: 0 index pointed away .. 1 flat on the trigger */
};

extern const struct oxr_finger_inputs oxr_finger_inputs[OXR_CONTROLLER_PROFILE_COUNT];

/* ---- Body trackers (XR_HTCX_vive_tracker_interaction) ---- */

#define OXR_TRACKER_PROFILE "/interaction_profiles/htc/vive_tracker_htcx"
#define OXR_TRACKER_ROLE_PREFIX "/user/vive_tracker_htcx/role/"

/* The extension's role of each enum em_tracker ("waist", "chest", ... "right_elbow"). */
extern const char *const oxr_tracker_roles[EM_TRACKER_COUNT];

/* ---- Poses ---- */

/* `location` as a device pose, field by field, into `out`. Values the runtime marks
 * VALID that are not usable (a quaternion that is not finite and of unit length, a
 * position that is not finite) count as not valid. What is not valid is not to be used
 * (OpenXR: the pose is undefined without its VALID bit): its flags are cleared and its
 * values kept from `keep` (the last known; identity and origin when NULL). `out` may be
 * `keep`. */
void oxr_location_to_pose(const XrSpaceLocation *location, const struct em_device_pose *keep,
                          struct em_device_pose *out);

/* A hand's joints as xrLocateHandJointsEXT gave them (`locations`, its jointCount
 * XR_HAND_JOINT_COUNT_EXT), field by field, into the hand model's struct; the checks are
 * hd_pose_from_tracking's. */
void oxr_hand_joints_from_locations(const XrHandJointLocationsEXT *locations,
                                    struct hd_xr_hand *out);

#endif
