/*
 * Opening the input source the options ask for: OpenXR (when the program is built with
 * the xr module), a replayed stream file, or the bundled demo; for the main job, OpenXR
 * when a runtime and headset are there and otherwise the demo, with the reason.
 */
#ifndef EMBODY_APP_SOURCE_H
#define EMBODY_APP_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "app/app_avatar.h"
#include "app/app_options.h"
#include "embody/input.h"
#include "render/render.h"
#include "embody/result.h"

struct app_source_info {
    const char *kind;        /* "openxr", "replay" or "demo" */
    char path[APP_PATH_MAX]; /* the stream file played, "" for OpenXR */
    bool fell_back;          /* the main job found no OpenXR and plays the demo */
    char fallback_reason[EM_ERROR_MESSAGE_MAX]; /* why, in one line */
    float floor_height_m; /* OpenXR in LOCAL space: the floor's depth below LOCAL's origin */
};

/* Where the floor is first taken to be below LOCAL's origin (runtimes without STAGE). */
#define APP_LOCAL_FLOOR_DEFAULT_M 1.6f

/* What the OpenXR source draws for the headset's eyes: the mirror window's scene, drawn
 * again from each eye (render_draw_eye). Both must outlive the source. */
struct app_eye_target {
    struct render *render;
    const struct render_scene *scene;
};

/* True when this program was built with OpenXR support (the xr module). */
bool app_source_has_openxr(void);

/* Opens the source for `options`. `eyes` is the window for the headset view, or NULL to
 * track only (OpenXR's headless mode, without a window). Errors name the option and file;
 * --openxr without a runtime is EM_ERROR_UNSUPPORTED with the reason. The caller owns
 * `*out_source` (in_source_destroy). */
enum em_result app_source_open(const struct app_options *options, const struct app_eye_target *eyes,
                               struct in_source **out_source, struct app_source_info *out_info,
                               struct em_error *err);

/* A line about the OpenXR runtime and headset for the summary ("runtime X, headset Y"),
 * or "" for other sources. */
void app_source_describe(const struct in_source *source, char *out, size_t size);

/* Calibration where the floor is unknown (OpenXR in LOCAL space, no STAGE): moves the
 * floor so that the headset in `frame` is at `eye_height_m` (the eye height of the
 * avatar's standing height), and writes what happened to `out_message`. Returns false,
 * doing nothing, for other sources and in STAGE space, where the floor is known and
 * calibration measures the player instead (body_calibrate). */
bool app_source_calibrate_floor(struct in_source *source, struct app_source_info *info,
                                const struct em_tracking_frame *frame, float eye_height_m,
                                char *out_message, size_t size);

/* True for OpenXR in the headless mode: no window, no focus, so no buttons to calibrate
 * with (the program calibrates by itself, from the first seconds). */
bool app_source_is_headless(const struct in_source *source);

/* True when OpenXR's stream ended because the runtime went away for good (not because
 * it asked the program to exit). */
bool app_source_runtime_gone(const struct in_source *source);
/* The body trackers `source` may deliver at some point (EM_TRACKER_BIT each): all for VMC
 * input and for OpenXR with body trackers bound, none otherwise (a file says it in its
 * frames). A recording keeps these columns from its first row. */
uint32_t app_source_tracker_mask(const struct in_source *source);

/* Each frame's fingers: in_source_fingers (embody/input.h) on the source app_source_open
 * made. OpenXR gives them from hand tracking or the controllers' finger inputs; a replayed
 * stream file with finger columns (PROTOCOL.md section 1b) gives its columns, frame by
 * frame, looping and pausing with the replay. The demo, a clip and VMC input give none.
 *
 * The fingers as the VMC output (osc_sender_set_fingers) and an avatar take them: both
 * hands' HD_JOINT_COUNT bones each (left then right), humanoid local rotations and rest
 * offsets of the default hand (hd_pose_humanoid_locals); a hand not known
 * (valid false) is the relaxed hand. */
struct st_fingers;
void app_source_finger_locals(const struct st_fingers *fingers, float (*out_rotation)[4],
                              float (*out_offset_m)[3]);

#endif
