/* XrSpaceLocation -> em_device_pose (oxr_internal.h): a leaf of the module, used by the
 * frame loop and the body trackers alike. */
#include "xr/oxr_internal.h"

void
oxr_pose_convert(const XrSpaceLocation *location, const struct em_device_pose *keep,
                 struct em_device_pose *out)
{
    const XrSpaceLocationFlags f = location->locationFlags;
    struct em_device_pose d = *keep;
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
