/*
 * Opening the input source (app_source.h). OpenXR is compiled in when the xr module is
 * (EMBODY_HAVE_OPENXR); without it the main job says so and plays the demo.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app_args.h"
#include "app/app_source.h"
#include "embody/stream.h"
#include "util/u_log.h"

#ifdef EMBODY_HAVE_OPENXR
#include "xr/xr.h"
#endif

bool
app_source_has_openxr(void)
{
#ifdef EMBODY_HAVE_OPENXR
    return true;
#else
    return false;
#endif
}

#ifdef EMBODY_HAVE_OPENXR
/* Draws the mirror's scene for one headset eye (called inside in_source_submit). */
static void
draw_eye(void *user, const struct oxr_eye_view *eye)
{
    const struct app_eye_target *target = user;
    render_draw_eye(target->render, target->scene, eye->view, eye->projection, eye->width,
                    eye->height);
}
#endif

static enum em_result
open_openxr(const struct app_eye_target *eyes, bool verbose, struct in_source **out_source,
            struct em_error *err)
{
#ifdef EMBODY_HAVE_OPENXR
    /* The Khronos loader prints its own errors to stderr; our one-line reason says the
     * same more plainly, so keep it quiet unless asked (or set by the user). */
    if (!verbose)
        setenv("XR_LOADER_DEBUG", "none", 0);
    const struct oxr_desc desc = {
        .app_name = "embody",
        .headless = eyes == NULL,
        .draw_eye = eyes ? draw_eye : NULL,
        .user = (void *)eyes,
        .floor_height_m = APP_LOCAL_FLOOR_DEFAULT_M,
    };
    if (eyes)
        render_make_current(eyes->render);
    return oxr_source_create(&desc, out_source, err);
#else
    (void)eyes;
    (void)verbose;
    *out_source = NULL;
    return em_fail(err, EM_ERROR_UNSUPPORTED,
                   "this embody was built without OpenXR support (the xr module)");
#endif
}

/* A replay's gap longer than the longest wait: said once, so a silent program is not
 * mistaken for a hung one (a gap of 1e5 s would otherwise be a day's sleep). */
static void
tell_replay_gap(void *user, double gap_s, double at_s, double waited_s)
{
    U_LOG_W("%s: the stream has a gap of %.6g s before t = %.6g s; waiting %g s instead "
            "(further gaps are shortened too)",
            (const char *)user, gap_s, at_s, waited_s);
}

/* A recording a crash cut short: its whole rows play. */
static void
tell_cut_row(void *user, int line)
{
    U_LOG_W("%s:%d: the last row is cut short (a recording that did not end cleanly); "
            "dropped it and playing the whole rows before it",
            (const char *)user, line);
}

static enum em_result
stream_from_clip(const char *path, uint32_t trackers, struct st_stream *out, struct em_error *err)
{
    struct st_bvh bvh;
    enum em_result r = st_bvh_load(path, &bvh, err);
    if (r != EM_OK)
        return r;
    /* Every tracker the clip's skeleton can carry, so a key can switch the setup while it
     * plays (the live loop gives the body only the setup's); else the setup asked for. */
    const double scale = st_bvh_guess_unit_scale(&bvh);
    struct em_error all_err = {{0}};
    r = st_mocap_to_stream_trackers(&bvh, scale, EM_TRACKER_ALL, path, out, &all_err);
    if (r != EM_OK)
        r = st_mocap_to_stream_trackers(&bvh, scale, trackers, path, out, err);
    st_bvh_fini(&bvh);
    return r;
}

static enum em_result
open_replay(const struct app_options *o, struct in_source **out_source,
            struct app_source_info *info, struct em_error *err)
{
    info->kind = "replay";
    snprintf(info->path, sizeof info->path, "%s", o->replay_path);
    enum em_result r = app_check_readable("--replay", o->replay_path, err);
    if (r != EM_OK)
        return r;
    /* A motion capture clip: the stream a headset, controllers and the --trackers setup
     * would give, made now (PROTOCOL sections 2 and 2b, as embody mocap2stream does). */
    struct st_stream made = {0};
    const bool clip = app_has_suffix(o->replay_path, ".bvh");
    if (clip && (r = stream_from_clip(o->replay_path, o->replay_trackers, &made, err)) != EM_OK) {
        app_error_prefix(err, "--replay");
        return r;
    }
    const struct in_replay_desc desc = {
        .path = o->replay_path,
        .stream = clip ? &made : NULL,
        .as_fast_as_possible = o->fast,
        .loop = o->loop,
        .on_gap = tell_replay_gap,
        .on_gap_user = (void *)o->replay_path,
        .on_cut_row = tell_cut_row,
    };
    r = in_replay_create(&desc, out_source, err);
    st_stream_fini(&made);
    if (r != EM_OK)
        app_error_prefix(err, "--replay");
    return r;
}

static enum em_result
open_demo(const struct app_options *o, struct in_source **out_source, struct app_source_info *info,
          struct em_error *err)
{
    info->kind = "demo";
    app_path_tidy(in_demo_path(), info->path, sizeof info->path);
    return in_demo_create(o->fast, out_source, err);
}

enum em_result
app_source_open(const struct app_options *options, const struct app_eye_target *eyes,
                struct in_source **out_source, struct app_source_info *out_info,
                struct em_error *err)
{
    *out_source = NULL;
    memset(out_info, 0, sizeof *out_info);
    out_info->floor_height_m = APP_LOCAL_FLOOR_DEFAULT_M;
    switch (options->input) {
    case APP_INPUT_VMC:
        out_info->kind = "vmc";
        return osc_vmc_in_create(&options->vmc_in, out_source, err);
    case APP_INPUT_REPLAY: return open_replay(options, out_source, out_info, err);
    case APP_INPUT_DEMO: return open_demo(options, out_source, out_info, err);
    case APP_INPUT_OPENXR: {
        out_info->kind = "openxr";
        const enum em_result r = open_openxr(eyes, options->verbosity > 0, out_source, err);
        if (r != EM_OK)
            app_error_prefix(err, "--openxr");
        return r;
    }
    case APP_INPUT_AUTO: break;
    }
    out_info->kind = "openxr";
    struct em_error why = {{0}};
    if (open_openxr(eyes, options->verbosity > 0, out_source, &why) == EM_OK)
        return EM_OK;
    /* Anything that keeps OpenXR from starting sends the main job to the demo. */
    out_info->fell_back = true;
    snprintf(out_info->fallback_reason, sizeof out_info->fallback_reason, "%s",
             why.message[0] ? why.message : "OpenXR could not start");
    return open_demo(options, out_source, out_info, err);
}

void
app_source_finger_locals(const struct st_fingers *fingers, float (*out_rotation)[4],
                         float (*out_offset_m)[3])
{
    for (int h = 0; h < HD_HAND_COUNT; ++h) {
        struct hd_model model;
        const struct hd_model_desc desc = {.hand = (enum hd_hand)h};
        if (hd_model_init(&desc, &model, NULL) != EM_OK)
            continue; /* the default hand always sizes */
        struct hd_pose pose;
        if (fingers->valid[h])
            st_fingers_get_pose(fingers, (enum hd_hand)h, &pose);
        else
            hd_pose_relaxed(&model, &pose);
        hd_pose_humanoid_locals(&model, &pose, out_rotation + h * HD_JOINT_COUNT,
                                out_offset_m + h * HD_JOINT_COUNT);
    }
}

uint32_t
app_source_tracker_mask(const struct in_source *source)
{
    if (strcmp(source->name, "vmc") == 0)
        return EM_TRACKER_ALL;
#ifdef EMBODY_HAVE_OPENXR
    if (oxr_source_is_openxr(source)) {
        struct oxr_status status;
        oxr_source_get_status(source, &status);
        return status.trackers ? EM_TRACKER_ALL : 0u;
    }
#endif
    return 0u;
}

void
app_source_describe(const struct in_source *source, char *out, size_t size)
{
    out[0] = '\0';
#ifdef EMBODY_HAVE_OPENXR
    if (!oxr_source_is_openxr(source))
        return;
    struct oxr_status status;
    oxr_source_get_status(source, &status);
    snprintf(out, size, "runtime %s, headset %s, %s space", status.runtime_name, status.system_name,
             status.stage_space ? "STAGE" : "LOCAL");
#else
    (void)source;
    (void)size;
#endif
}

bool
app_source_calibrate_floor(struct in_source *source, struct app_source_info *info,
                           const struct em_tracking_frame *frame, float eye_height_m,
                           char *out_message, size_t size)
{
#ifdef EMBODY_HAVE_OPENXR
    if (!oxr_source_is_openxr(source))
        return false;
    struct oxr_status status;
    oxr_source_get_status(source, &status);
    if (status.stage_space)
        return false;
    const struct em_device_pose *head = &frame->device[EM_DEVICE_HEAD];
    if (!em_device_pose_usable(head)) {
        snprintf(out_message, size, "floor calibration failed: the headset is not tracked");
        return true;
    }
    /* The frame's y is LOCAL's y plus the floor's depth: shift it to the eye height. */
    const float floor_m = info->floor_height_m + (eye_height_m - head->pose.position_m[1]);
    struct em_error err = {{0}};
    if (oxr_source_set_floor(source, floor_m, &err) != EM_OK) {
        snprintf(out_message, size, "floor calibration failed: %.120s", err.message);
        return true;
    }
    info->floor_height_m = floor_m;
    snprintf(out_message, size, "floor set %.2f m below the start (no STAGE space)",
             (double)floor_m);
    return true;
#else
    (void)source;
    (void)info;
    (void)frame;
    (void)eye_height_m;
    (void)out_message;
    (void)size;
    return false;
#endif
}

bool
app_source_is_headless(const struct in_source *source)
{
#ifdef EMBODY_HAVE_OPENXR
    struct oxr_status status;
    oxr_source_get_status(source, &status);
    return oxr_source_is_openxr(source) && status.headless;
#else
    (void)source;
    return false;
#endif
}

bool
app_source_runtime_gone(const struct in_source *source)
{
#ifdef EMBODY_HAVE_OPENXR
    struct oxr_status status;
    oxr_source_get_status(source, &status);
    return status.runtime_gone;
#else
    (void)source;
    return false;
#endif
}
