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

/* One sample of every device. */
struct em_tracking_frame {
    double time_s; /* seconds, increasing; the source's own clock */
    struct em_device_pose device[EM_DEVICE_COUNT];
    uint32_t events; /* enum em_frame_events */
};

/* True when both position and orientation of `d` may be used. */
static inline bool
em_device_pose_usable(const struct em_device_pose *d)
{
    const uint32_t need = EM_POSE_ORIENTATION_VALID | EM_POSE_POSITION_VALID;
    return (d->flags & need) == need;
}

/* Short lower-case name of a device ("head", "left", "right"), as in the stream files. */
const char *
em_device_name(enum em_device device);

#ifdef __cplusplus
}
#endif

#endif
