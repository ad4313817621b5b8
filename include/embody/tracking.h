/*
 * What the trackers report: the poses of the head and both hands at one instant.
 *
 * Conventions (the same as OpenXR's STAGE space and as the 3-point stream files):
 * right-handed, metres, +Y up, floor at y = 0. Orientations are unit quaternions stored
 * x, y, z, w. The head pose is the headset's centre-eye view pose (-Z forward, +Y up,
 * +X right); a hand pose is the controller's grip pose (origin at the palm, +X normal to
 * the palm, -Z through the closed fist from little finger to thumb).
 *
 * A lost tracker is data, not an error: its flags say what may be trusted.
 */
#ifndef EMBODY_TRACKING_H
#define EMBODY_TRACKING_H

#include <stdbool.h>
#include <stdint.h>

#include <cglm/types.h>

#include "embody/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A rigid transform: rotate by `orientation`, then translate by `position_m`. */
struct em_pose {
    versor orientation; /* x, y, z, w; 16-byte aligned, so copy field by field */
    vec3 position_m;
};

enum em_device {
    EM_DEVICE_HEAD = 0,
    EM_DEVICE_LEFT_HAND = 1,
    EM_DEVICE_RIGHT_HAND = 2,
    EM_DEVICE_COUNT = 3,
};

/* Validity flags, as XrSpaceLocationFlags: VALID means the value may be used, TRACKED
 * means it comes from live tracking rather than the runtime's inference. */
enum em_pose_flags {
    EM_POSE_ORIENTATION_VALID = 1u << 0,
    EM_POSE_POSITION_VALID = 1u << 1,
    EM_POSE_ORIENTATION_TRACKED = 1u << 2,
    EM_POSE_POSITION_TRACKED = 1u << 3,
};
#define EM_POSE_ALL_VALID                                                                      \
    (EM_POSE_ORIENTATION_VALID | EM_POSE_POSITION_VALID | EM_POSE_ORIENTATION_TRACKED |        \
     EM_POSE_POSITION_TRACKED)

struct em_device_pose {
    struct em_pose pose;
    uint32_t flags; /* enum em_pose_flags */
};

/* Requests from the player's buttons, raised for one frame. */
enum em_frame_events {
    EM_EVENT_CALIBRATE = 1u << 0,
    EM_EVENT_RECENTER = 1u << 1,
};

/* Optional body trackers (Vive trackers, Tundra, SlimeVR; PROTOCOL.md section 2b). A
 * tracker's pose is that of the tracker itself; where it sits on its bone is the body's
 * mount offset (include/embody/body.h). */
enum em_tracker {
    EM_TRACKER_PELVIS = 0,
    EM_TRACKER_CHEST,
    EM_TRACKER_LEFT_FOOT,
    EM_TRACKER_RIGHT_FOOT,
    EM_TRACKER_LEFT_KNEE,
    EM_TRACKER_RIGHT_KNEE,
    EM_TRACKER_LEFT_ELBOW,
    EM_TRACKER_RIGHT_ELBOW,
    EM_TRACKER_COUNT,
};

#define EM_TRACKER_BIT(t) (1u << (unsigned)(t))
#define EM_TRACKER_ALL ((1u << EM_TRACKER_COUNT) - 1u)

/* One sample of every device. */
struct em_tracking_frame {
    double time_s; /* seconds, increasing; the source's own clock */
    struct em_device_pose device[EM_DEVICE_COUNT];
    uint32_t events; /* enum em_frame_events */
    /* Body trackers the source carries (EM_TRACKER_BIT per tracker; 0 for head and
     * hands only). A present tracker's flags say whether it is tracked at this sample;
     * an absent one's pose is zero and means nothing. */
    uint32_t tracker_present;
    struct em_device_pose tracker[EM_TRACKER_COUNT];
};

/* True when both position and orientation of `d` may be used. */
static inline bool
em_device_pose_usable(const struct em_device_pose *d)
{
    const uint32_t need = EM_POSE_ORIENTATION_VALID | EM_POSE_POSITION_VALID;
    return (d->flags & need) == need;
}

/* Short lower-case name of a device ("head", "left", "right"), as in the stream files. */
EMBODY_API const char *
em_device_name(enum em_device device);

/* The tracker's name in stream files ("pelvis", "chest", "left_foot", ... "right_elbow"),
 * or "unknown". */
EMBODY_API const char *em_tracker_name(enum em_tracker tracker);

/* The tracker called `name` (as em_tracker_name gives it), or -1. */
EMBODY_API int em_tracker_find(const char *name);

#ifdef __cplusplus
}
#endif

#endif
