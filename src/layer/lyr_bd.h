/*
 * XR_BD_body_tracking (PICO's 24 joints) answered by the layer: each XrBodyTrackerBD
 * stands on one of the layer's full-body trackers (lyr_tracker.c) and hands out its
 * joints in the frames the specification gives (lyr_joint_frames.h).
 */
#ifndef EMBODY_LYR_BD_H
#define EMBODY_LYR_BD_H

#include "layer/lyr_internal.h"

XrResult XRAPI_CALL lyr_create_body_tracker_bd(XrSession session,
                                               const XrBodyTrackerCreateInfoBD *info,
                                               XrBodyTrackerBD *out_tracker);
XrResult XRAPI_CALL lyr_destroy_body_tracker_bd(XrBodyTrackerBD tracker);
XrResult XRAPI_CALL lyr_locate_body_joints_bd(XrBodyTrackerBD tracker,
                                              const XrBodyJointsLocateInfoBD *info,
                                              XrBodyJointLocationsBD *locations);

/* The session ends: its BD trackers die (their handles are refused from now on; their
 * full-body trackers go with the session; a later creation frees them). */
void lyr_bd_session_end(const struct lyr_session *s);

/* The FB / META joint a BD joint stands on (the same place and bone). */
uint32_t lyr_bd_source_joint(uint32_t bd_joint);

#endif
