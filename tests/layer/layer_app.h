/*
 * A small OpenXR application for the layer's tests and benchmark: it talks to the test
 * runtime (tests/xr/runtime) through the real Khronos loader, with embody's layer enabled
 * (XR_API_LAYER_PATH at the build tree's manifest, XR_ENABLE_API_LAYERS), in a headless
 * session (XR_MND_headless: each xrSyncActions is one frame of the runtime's stream).
 * It has its own actions, as any application does: a trigger (the right hand's
 * select/click) and grip poses, bound for khr/simple_controller; or, with `touch`, for
 * oculus/touch_controller: the trigger on the right hand's a/click, the grips, and a
 * squeeze (float) on both hands' squeeze/value.
 */
#ifndef EMBODY_LAYER_APP_H
#define EMBODY_LAYER_APP_H

#include <stdbool.h>

#include <openxr/openxr.h>

#include "embody/openxr_ext.h"

struct la_app {
    XrInstance instance;
    XrSystemId system;
    XrSession session;
    XrSessionState state;
    bool running;
    int tracker_events; /* XrEventDataViveTrackerConnectedHTCX read by la_pump */
    XrActionSet set;
    XrAction trigger;
    XrAction grip;
    XrAction squeeze; /* with `touch` */
    XrPath hand[2];
    bool touch; /* set before la_start_session: bindings for Oculus Touch instead */
    const char *touch_profile; /* with `touch`, set before: that profile (NULL: Oculus Touch),
                                * one with Touch's paths (the instance enables its extension) */
    bool local_base; /* set before la_start_session: LOCAL instead of STAGE */
    XrSpace stage;   /* the application's base space: STAGE (or LOCAL) */
    XrSpace grip_space[2];
    PFN_xrCreateBodyTrackerFB create_body_tracker;
    PFN_xrDestroyBodyTrackerFB destroy_body_tracker;
    PFN_xrLocateBodyJointsFB locate_body_joints;
    PFN_xrGetBodySkeletonFB get_body_skeleton;
};

/* Points the loader at the test runtime with `script` and enables the layer. */
void la_use_layer(const char *script_path);

/* True when the loader lists `extension` (the runtime's and the enabled layers'). */
bool la_extension_offered(const char *extension);

/* Creates the instance (XR_MND_headless, plus XR_FB_body_tracking when `body` and
 * XR_META_body_tracking_full_body when `full_body`) and finds the system; fails the test
 * on error. The body-tracking functions are looked up (NULL when not given). */
void la_create(struct la_app *app, bool body, bool full_body);
/* The same, with one more extension the application enables itself (NULL: none). */
void la_create_with(struct la_app *app, bool body, bool full_body, const char *extension);

/* Actions (the first time), headless session, STAGE space, attach: fails the test on
 * error. */
void la_start_session(struct la_app *app);

/* Reads the events: begins on READY, ends on STOPPING. Returns the last result of
 * xrPollEvent that was not XR_SUCCESS (XR_EVENT_UNAVAILABLE normally). */
XrResult la_pump(struct la_app *app);

/* One frame: syncs the application's actions (the runtime advances a frame). */
XrResult la_sync(struct la_app *app);

/* Destroys the application's spaces and the session. */
void la_end_session(struct la_app *app);

/* The XrTime the test runtime gives the stream row at `t_s` (tr_frame_time). */
XrTime la_time_of(double t_s);

void la_destroy(struct la_app *app);

#endif
