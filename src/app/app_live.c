/*
 * The live loop (app_live.h): setup in a fixed order (avatar and body, outputs, window
 * and source), the frame loop, then the screenshot, the summary and teardown in reverse.
 *
 * The window and the source are opened in the order each needs: a replayed file is read
 * before any window opens (a bad file fails at once), while OpenXR needs the window's
 * OpenGL context to exist first.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app_args.h"
#include "app/app_avatar.h"
#include "app/app_config.h"
#include "app/app_lanes.h"
#include "app/app_live.h"
#include "app/app_record.h"
#include "app/app_settings.h"
#include "app/app_source.h"
#include "app/app_stats.h"
#include "app/app_truth.h"
#include "embody/input.h"
#include "embody/m_math.h"
#include "osc/osc.h"
#include "embody/stream.h"
#include "util/u_log.h"
#include "util/u_time.h"

#define MESSAGE_TIME_NS 3000000000LL
#define FRAME_RATE_SMOOTHING 0.1f

struct live {
    const struct app_options *opt;
    struct app_avatar avatar;
    struct body *body;
    struct render *render;
    struct in_source *source;
    struct flt_state *faults; /* --fault: applied to every frame of the source */
    struct flt_set fault_set; /* the settings file's "faults", then --fault's */
    struct app_source_info source_info;
    /* The avatars (one, or two with --compare), whose first body is `body`, and a replayed
     * clip's truth for their ghosts and errors. */
    struct app_lanes lanes;
    bool lanes_ready;
    struct app_truth truth;
    bool have_truth;
    float (*ghost_shown[RENDER_MAX_GHOSTS])[3]; /* the truth moved by each lane's offset */
    struct em_tracking_frame source_frame;      /* as the source gave it, faults in */
    struct app_eye_target eyes;
    struct osc_sender *vmc;
    struct osc_sender *vrchat;

    struct app_record record; /* --record's, or one started with F9 */
    bool prior_dropped_told;

    long frame_limit; /* 0: none */
    bool no_display_fallback;
    bool paused;
    bool have_frame;
    struct em_tracking_frame frame;
    bool have_fingers;         /* the source gives fingers (in_source_fingers) */
    struct st_fingers fingers; /* this frame's */
    struct body_status status;
    struct render_scene scene;
    char message[768];
    int64_t message_until_ns;

    /* Sources without a calibrate button (headless OpenXR, VMC input) calibrate from
     * the headset: the height grows as standing evidence comes (in_height_estimator). */
    bool auto_calibrating;
    struct in_height_estimator *auto_estimate;
    float auto_height_m; /* the height last calibrated to, 0 before */

    struct app_stats stats;
    float frame_rate_hz;
    int64_t last_frame_ns;
    float last_update_us;
    char screenshot_done[APP_PATH_MAX];
};

static volatile sig_atomic_t g_interrupted;

static void
on_signal(int signal_number)
{
    (void)signal_number;
    g_interrupted = 1;
}

/* ---- Setup -------------------------------------------------------------------------- */

static void
set_log_level(int verbosity)
{
    u_log_set_level(verbosity < 0 ? U_LOG_WARN : (verbosity > 0 ? U_LOG_DEBUG : U_LOG_INFO));
}

static int
setup_body(struct live *L)
{
    const struct app_avatar_desc desc = {
        .bvh_path = L->opt->avatar_bvh,
        .model_path = L->opt->avatar_model,
        .bone_map_path = L->opt->bone_map_path,
        .default_mesh = true,
        .skeleton_path = L->opt->skeleton_json,
        .unit_scale = L->opt->unit_scale,
        .height_m = L->opt->height_m,
        .arm_span_m = L->opt->arm_span_m,
        .config_path = L->opt->config_path,
        .body_mode = L->opt->body_mode,
        .prior_path = L->opt->prior_path,
        /* A replay shows how tall its player is. */
        .height_stream = L->opt->input == APP_INPUT_REPLAY ? L->opt->replay_path : NULL,
    };
    struct em_error err = {{0}};
    if (app_avatar_create_body(&desc, &L->avatar, &L->body, &err) != EM_OK) {
        U_LOG_E("%s", err.message);
        return APP_EXIT_USAGE;
    }
    U_LOG_D("avatar: %s (%s), %d joints", L->avatar.path, L->avatar.kind,
            L->avatar.skeleton.joint_count);
    if (L->avatar.has_prior)
        U_LOG_I("body: the learned prior %s", L->avatar.prior_path);
    else
        U_LOG_I("body: the procedural estimate");
    if (L->avatar.height_estimated || desc.height_stream)
        U_LOG_I("height %.2f m: %s", (double)app_avatar_height_m(&L->avatar),
                L->avatar.height_source);
    return APP_EXIT_OK;
}

/* The faults to put into every frame: the settings file's, then --fault's. */
static int
collect_faults(struct live *L)
{
    struct em_error err = {{0}};
    memset(&L->fault_set, 0, sizeof L->fault_set);
    L->fault_set.seed = L->opt->faults.seed;
    if (L->avatar.settings_path[0] &&
        app_settings_faults(L->avatar.settings_path, &L->fault_set, &err) != EM_OK) {
        U_LOG_E("%s", err.message);
        return APP_EXIT_USAGE;
    }
    for (int i = 0; i < L->opt->faults.count; ++i) {
        if (L->fault_set.count >= FLT_MAX_FAULTS) {
            U_LOG_E("--fault: at most %d faults, with the settings file's", FLT_MAX_FAULTS);
            return APP_EXIT_USAGE;
        }
        L->fault_set.fault[L->fault_set.count++] = L->opt->faults.fault[i];
    }
    return APP_EXIT_OK;
}

static int
open_sender(const struct app_osc_option *osc, enum osc_protocol protocol,
            struct osc_sender **out_sender)
{
    if (!osc->enabled)
        return APP_EXIT_OK;
    struct em_error err = {{0}};
    if (osc_sender_create(protocol, osc->host, osc->port, out_sender, &err) != EM_OK) {
        U_LOG_E("%s: %s", protocol == OSC_PROTOCOL_VMC ? "--vmc" : "--vrchat-osc", err.message);
        return APP_EXIT_USAGE;
    }
    U_LOG_I("sending %s to %s:%d", osc_protocol_name(protocol), osc->host, osc->port);
    return APP_EXIT_OK;
}

static int
setup_outputs(struct live *L)
{
    int code = open_sender(&L->opt->vmc, OSC_PROTOCOL_VMC, &L->vmc);
    if (code == APP_EXIT_OK)
        code = open_sender(&L->opt->vrchat, OSC_PROTOCOL_VRCHAT, &L->vrchat);
    struct em_error err = {{0}};
    /* No output may overwrite a file the program reads. */
    const struct app_input_file inputs[] = {
        {"--replay's stream", L->opt->replay_path},
        {"--avatar's clip", L->opt->avatar_bvh},
        {"--skeleton's file", L->opt->skeleton_json},
        {"--config's settings", L->opt->config_path},
    };
    const int input_count = (int)(sizeof inputs / sizeof inputs[0]);
    if (code == APP_EXIT_OK &&
        (app_check_not_input("--record", L->opt->record_path, inputs, input_count, &err) != EM_OK ||
         app_check_not_input("--screenshot", L->opt->screenshot_path, inputs, input_count, &err) !=
             EM_OK)) {
        U_LOG_E("%s", err.message);
        return APP_EXIT_USAGE;
    }
    if (code == APP_EXIT_OK && L->opt->screenshot_path &&
        app_check_writable("--screenshot", L->opt->screenshot_path, &err) != EM_OK) {
        U_LOG_E("%s", err.message);
        return APP_EXIT_USAGE;
    }
    if (code != APP_EXIT_OK || !L->opt->record_path)
        return code;
    if (app_record_start(&L->record, L->opt->record_path, &err) != EM_OK) {
        U_LOG_E("--record: %s", err.message);
        return APP_EXIT_USAGE;
    }
    return APP_EXIT_OK;
}

static bool
display_available(void)
{
    const char *x11 = getenv("DISPLAY");
    const char *wayland = getenv("WAYLAND_DISPLAY");
    return (x11 && x11[0]) || (wayland && wayland[0]);
}

/* The main job without a display still does something useful: the pipeline without a
 * window. Everything else that wants a window fails plainly. */
static int
refuse_or_fall_back(struct live *L, const char *why)
{
    if (!app_options_is_main_job(L->opt)) {
        U_LOG_E("%s; run under xvfb-run, or use --no-window", why);
        return APP_EXIT_USAGE;
    }
    U_LOG_I("%s: running without the mirror window (run under xvfb-run to see it)", why);
    L->no_display_fallback = true;
    return APP_EXIT_OK;
}

static int
open_window(struct live *L)
{
    if (L->opt->no_window)
        return APP_EXIT_OK;
    if (!display_available())
        return refuse_or_fall_back(L, "no display: neither DISPLAY nor WAYLAND_DISPLAY is set");
    const struct render_desc desc = {
        .title = "embody",
        .hidden = L->opt->frames > 0,
        .show_figure = L->opt->show_figure,
        .hide_ghost = L->opt->no_ghost,
    };
    struct em_error err = {{0}};
    const enum em_result r = render_create(&desc, &L->render, &err);
    if (r == EM_OK) {
        render_set_camera(L->render, (enum render_camera)L->opt->camera);
        return APP_EXIT_OK;
    }
    if (r == EM_ERROR_UNSUPPORTED)
        return refuse_or_fall_back(L, err.message);
    U_LOG_E("window: %s", err.message);
    return APP_EXIT_FAILURE;
}

static int
open_source(struct live *L)
{
    L->eyes.render = L->render;
    L->eyes.scene = &L->scene;
    struct em_error err = {{0}};
    const enum em_result r =
        app_source_open(L->opt, L->render ? &L->eyes : NULL, &L->source, &L->source_info, &err);
    if (r != EM_OK) {
        U_LOG_E("%s", err.message);
        /* A bad file or option is the user's to fix; a runtime that fails is not. */
        return L->opt->input == APP_INPUT_OPENXR ? APP_EXIT_FAILURE : APP_EXIT_USAGE;
    }
    /* Faults go on the frames here rather than in a wrapping source, so the OpenXR source
     * is still itself for its status, floor and headless queries. */
    if (L->fault_set.count > 0 && flt_state_create(&L->fault_set, &L->faults, &err) != EM_OK) {
        U_LOG_E("%s", err.message);
        return APP_EXIT_FAILURE;
    }
    return APP_EXIT_OK;
}

/* Says where tracking comes from, once everything is open. */
static void
announce_source(const struct live *L)
{
    const struct app_source_info *info = &L->source_info;
    if (info->fell_back)
        U_LOG_I("no headset: %s; playing the bundled demo instead (%s)", info->fallback_reason,
                info->path);
    else if (info->path[0])
        U_LOG_I("playing %s%s", info->path, L->opt->fast ? " as fast as possible" : "");
    else if (L->opt->input == APP_INPUT_VMC)
        U_LOG_I("reading VMC tracking on UDP port %d of %s",
                L->opt->vmc_in.port ? L->opt->vmc_in.port : OSC_VMC_DEFAULT_PORT,
                L->opt->vmc_in.host[0] ? L->opt->vmc_in.host : "127.0.0.1 (this machine only)");
    else
        U_LOG_I("tracking the headset through OpenXR");
    if (L->fault_set.count > 0) {
        char faults[FLT_MAX_FAULTS * FLT_TEXT_MAX];
        flt_set_describe(&L->fault_set, faults, sizeof faults);
        U_LOG_I("with faults: %s (seed %llu)", faults, (unsigned long long)L->fault_set.seed);
    }
}

/* A replayed clip is its own truth: loaded for the ghost and the HUD's errors. */
static void
load_truth(struct live *L)
{
    const char *path = L->opt->replay_path;
    if (L->opt->input != APP_INPUT_REPLAY || !path || !app_has_suffix(path, ".bvh"))
        return;
    char why[EM_ERROR_MESSAGE_MAX] = "";
    struct em_error err = {{0}};
    if (app_truth_load(path, &L->truth, why, sizeof why, &err) != EM_OK) {
        U_LOG_W("no ghost: %s", err.message);
        return;
    }
    L->have_truth = true;
    if (!L->truth.scored)
        U_LOG_W("the ghost is drawn, but errors need the evaluation's joints: %s", why);
    for (int g = 0; g < RENDER_MAX_GHOSTS; ++g) {
        L->ghost_shown[g] = calloc((size_t)L->truth.bvh.joint_count, sizeof *L->ghost_shown[g]);
        if (!L->ghost_shown[g])
            L->have_truth = false;
    }
}

/* The avatars: the first is the body set up so far, built again as a lane (with the
 * clip's tracker mounts when the avatar is the clip), and a second for --compare. */
static int
setup_lanes(struct live *L)
{
    load_truth(L);
    const struct app_options *o = L->opt;
    const bool clip = o->input == APP_INPUT_REPLAY && app_has_suffix(o->replay_path, ".bvh");
    struct app_lanes_desc desc = {
        .avatar = &L->avatar,
        .truth = L->have_truth ? &L->truth : NULL,
        .avatar_is_clip = clip && o->avatar_bvh && strcmp(o->avatar_bvh, o->replay_path) == 0,
        .count = o->compare_given ? 2 : 1,
        .trackers = o->replay_trackers,
        .all_trackers = !clip,
    };
    struct em_error err = {{0}};
    for (int i = 0; o->compare_given && i < 2; ++i)
        app_lane_spec_parse(o->compare[i], &desc.spec[i], &err);
    if (app_lanes_init(&L->lanes, &desc, &err) != EM_OK) {
        U_LOG_E("%s", err.message);
        app_lanes_fini(&L->lanes);
        return APP_EXIT_USAGE;
    }
    body_destroy(&L->body);
    L->body = L->lanes.lane[0].body;
    L->lanes_ready = true;
    for (int i = 0; o->compare_given && i < L->lanes.count; ++i)
        U_LOG_I("avatar %s", L->lanes.lane[i].label);
    return APP_EXIT_OK;
}

static int
open_window_and_source(struct live *L)
{
    const bool file_first = L->opt->input == APP_INPUT_REPLAY || L->opt->input == APP_INPUT_DEMO;
    int code = file_first ? open_source(L) : open_window(L);
    if (code == APP_EXIT_OK)
        code = file_first ? open_window(L) : open_source(L);
    if (code == APP_EXIT_OK)
        code = setup_lanes(L);
    if (code != APP_EXIT_OK)
        return code;
    announce_source(L);
    /* Without a display the demo would play unseen for ever: a short run and a summary. */
    if (L->no_display_fallback && strcmp(L->source_info.kind, "demo") == 0 && L->opt->frames == 0) {
        L->frame_limit = APP_HEADLESS_DEMO_FRAMES;
        U_LOG_I("playing %ld demo frames (--frames N for more)", L->frame_limit);
    }
    return APP_EXIT_OK;
}

/* ---- One frame ---------------------------------------------------------------------- */

static void
set_message(struct live *L, const char *text)
{
    snprintf(L->message, sizeof L->message, "%s", text);
    L->message_until_ns = u_time_now_ns() + MESSAGE_TIME_NS;
}

/* The prior's output dropped at run time (not finite): said once, in the log and the HUD,
 * so the body does not quietly run without it. */
static void
tell_prior_dropped(struct live *L)
{
    if (L->prior_dropped_told || L->status.prior_dropped == 0)
        return;
    L->prior_dropped_told = true;
    U_LOG_W("the learned prior gave a prediction that is not a finite number; it was dropped "
            "(the body keeps its last good one, or the procedural estimate); further ones are "
            "dropped quietly");
    set_message(L, "the learned prior's output was dropped (not finite): see the log");
}

/* The calibrate action (C, a controller button) on `frame`. */
static void
calibrate_with(struct live *L, const struct em_tracking_frame *frame)
{
    struct em_error err = {{0}};
    char text[sizeof L->message];
    /* Without a known floor the headset's height says where the floor is, not how tall
     * the player is: the avatar's height stays and the floor moves. */
    if (app_source_calibrate_floor(L->source, &L->source_info, frame,
                                   body_eye_height_for(L->status.height_m), text, sizeof text)) {
        U_LOG_I("%s", text);
        set_message(L, text);
        return;
    }
    if (L->auto_calibrating && L->opt->height_m > 0.0) {
        U_LOG_I("%s: the height stays %.2f m (--height)", L->source_info.kind, L->opt->height_m);
        return;
    }
    if (body_calibrate(L->body, frame, &err) == EM_OK) {
        body_get_status(L->body, &L->status);
        snprintf(text, sizeof text, "calibrated: height %.2f m, arm span %.2f m",
                 (double)L->status.height_m, (double)L->status.arm_span_m);
        U_LOG_I("%s", text);
    } else {
        snprintf(text, sizeof text, "calibration failed: %.120s", err.message);
        U_LOG_W("%s", text);
    }
    set_message(L, text);
}

static void
calibrate(struct live *L)
{
    calibrate_with(L, &L->frame);
    app_lanes_follow_calibration(&L->lanes, &L->source_frame);
}

/* A new estimate recalibrates (which resets the body's history) only when it is this
 * much taller than the last: the estimate only grows, in few steps. */
#define AUTO_HEIGHT_STEP_M 0.02f

/* Without a calibrate button: feeds the height estimator, and once it has confident
 * standing evidence calibrates as the button would with the player standing at the
 * estimated height; again whenever the estimate grows by AUTO_HEIGHT_STEP_M. The first
 * calibration takes the frame's trackers as they are; later ones only the height. */
static void
auto_calibrate_step(struct live *L)
{
    if (!L->auto_calibrating || !in_height_estimator_add(L->auto_estimate, &L->frame))
        return;
    float height = 0.0f;
    struct em_error err = {{0}};
    if (in_height_estimate(L->auto_estimate, &height, NULL, &err) != EM_OK ||
        height < L->auto_height_m + AUTO_HEIGHT_STEP_M)
        return;
    struct body_desc desc;
    body_get_desc(L->body, &desc);
    /* The frame to calibrate on: the headset at the eye height of that standing height. */
    struct em_tracking_frame standing = L->frame;
    if (L->auto_height_m > 0.0f)
        for (int t = 0; t < EM_TRACKER_COUNT; ++t)
            standing.tracker[t].flags = 0;
    standing.device[EM_DEVICE_HEAD].pose.position_m[1] =
        desc.floor_height_m + SK_HEAD_JOINT_HEIGHT_RATIO * height + desc.offsets.head_position_m[1];
    U_LOG_I("calibrating from the headset: the head held still gives a height of %.2f m", (double)height);
    L->auto_height_m = height;
    calibrate_with(L, &standing);
    if (L->opt->height_m > 0.0) { /* --height decides: nothing to grow */
        L->auto_calibrating = false;
        free(L->auto_estimate);
        L->auto_estimate = NULL;
    }
}

static void
recenter(struct live *L)
{
    body_recenter(L->body);
    app_lanes_follow_recenter(&L->lanes);
    set_message(L, "recentered");
    U_LOG_I("recentered");
}

static void
toggle_pause(struct live *L)
{
    if (!in_source_can_pause(L->source)) {
        set_message(L, "live tracking cannot pause");
        return;
    }
    L->paused = !L->paused;
    in_source_set_paused(L->source, L->paused);
    set_message(L, L->paused ? "paused" : "playing");
}

/* F9: stops the recording under way (from --record or an earlier F9), or starts one in
 * embody-YYYYmmdd-HHMMSS.csv in the current directory (app_record_start_dated). */
static void
toggle_recording(struct live *L)
{
    char text[sizeof L->message];
    if (L->record.recording) {
        const long frames = L->record.recorded;
        app_record_close(&L->record);
        app_record_describe_stop(&L->record, frames, text, sizeof text);
        set_message(L, text);
        return;
    }
    struct em_error err = {{0}};
    if (app_record_start_dated(&L->record, &err) != EM_OK) {
        U_LOG_W("recording: %s", err.message);
        snprintf(text, sizeof text, "cannot record: %s", err.message);
        set_message(L, text);
        return;
    }
    snprintf(text, sizeof text, "recording to %.600s (F9 stops)", L->record.path);
    set_message(L, text);
}

/* K and P: the first avatar's next tracker setup, or its other body (built afresh). */
static void
switch_lane(struct live *L, uint32_t actions)
{
    char text[sizeof L->message];
    if (actions & RENDER_ACTION_NEXT_SETUP) {
        app_lanes_next_setup(&L->lanes, text, sizeof text);
        app_lane_mask(&L->lanes.lane[0], &L->source_frame, &L->frame);
    }
    if (actions & RENDER_ACTION_NEXT_BODY) {
        app_lanes_next_body(&L->lanes, text, sizeof text);
        L->body = L->lanes.lane[0].body;
        body_get_status(L->body, &L->status);
    }
    U_LOG_I("%s", text);
    set_message(L, text);
}

/* Carries out the window's actions and the frame's button events; false to quit. */
static bool
handle_requests(struct live *L, uint32_t actions, uint32_t events)
{
    if ((actions & RENDER_ACTION_CALIBRATE) || (events & EM_EVENT_CALIBRATE))
        calibrate(L);
    if ((actions & RENDER_ACTION_RECENTER) || (events & EM_EVENT_RECENTER))
        recenter(L);
    if (actions & RENDER_ACTION_PAUSE_TOGGLE)
        toggle_pause(L);
    if (actions & RENDER_ACTION_RECORD_TOGGLE)
        toggle_recording(L);
    if (actions & (RENDER_ACTION_NEXT_SETUP | RENDER_ACTION_NEXT_BODY))
        switch_lane(L, actions);
    return !(actions & RENDER_ACTION_QUIT);
}

static const char *
stepping_text(const struct body_status *s)
{
    const bool left = s->foot[0] == BODY_FOOT_STEPPING;
    const bool right = s->foot[1] == BODY_FOOT_STEPPING;
    if (left && right)
        return "stepping both";
    if (left)
        return "stepping left";
    if (right)
        return "stepping right";
    if (s->foot[0] == BODY_FOOT_TRACKED && s->foot[1] == BODY_FOOT_TRACKED)
        return "feet tracked";
    switch (s->posture) {
    case BODY_SITTING_ON_FLOOR:
    case BODY_LYING_ON_BACK:
    case BODY_LYING_ON_SIDE:
    case BODY_LYING_ON_FRONT: return "legs on the floor";
    default: break;
    }
    return "feet planted";
}

/* The posture, and when the head and hands could not tell it from another (kneeling
 * upright or sitting on a seat), that it was chosen by the way down. */
static const char *
posture_text(const struct body_status *s)
{
    if (s->posture_by_motion && s->posture == BODY_SITTING)
        return "sitting (sat back on the way down)";
    if (s->posture_by_motion && s->posture == BODY_KNEELING)
        return "kneeling (by the way down)";
    return body_posture_name(s->posture);
}

/* What the body does for a device it is covering for (lost, or coming back). */
static const char *
device_note(const struct body_status *s, int d)
{
    switch (s->device[d]) {
    case BODY_DEVICE_LOST: return d == EM_DEVICE_HEAD ? "head held" : "hand at rest";
    case BODY_DEVICE_RETURNING: return "blending back";
    case BODY_DEVICE_TRACKED: break;
    }
    return NULL;
}

/* Body trackers in the mirror and the HUD: their poses, and what the body does with them
 * beyond their flags. */
static void
fill_trackers(struct live *L)
{
    struct render_scene *sc = &L->scene;
    struct body_tracker_status st[EM_TRACKER_COUNT];
    body_get_trackers(L->body, st);
    sc->tracker_present = L->frame.tracker_present;
    for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
        sc->tracker[t] = L->frame.tracker[t];
        const char *note = NULL;
        if (st[t].present && st[t].state == BODY_DEVICE_RETURNING)
            note = "blending in";
        else if (st[t].present && st[t].state == BODY_DEVICE_LOST && st[t].weight > 0.0f)
            note = "blending to the estimate";
        else if (st[t].present && st[t].state == BODY_DEVICE_LOST)
            note = "waiting";
        /* A tracker the body does not use this frame (its sample was refused, or it has not
         * counted yet) is not shown as tracked, whatever its flags say. */
        if (st[t].present && st[t].state == BODY_DEVICE_LOST)
            sc->tracker[t].flags = 0;
        sc->hud.tracker_note[t] = note;
    }
}

static void
shift_pose(struct em_device_pose *d, const float *offset_m)
{
    m_vec3_add(d->pose.position_m, offset_m, d->pose.position_m);
}

/* With two avatars: the first's devices and trackers where it is drawn, and the second
 * avatar with its own trackers where it is drawn. */
static void
fill_second(struct live *L)
{
    struct render_scene *sc = &L->scene;
    const struct app_lane *a = &L->lanes.lane[0], *b = &L->lanes.lane[1];
    sc->pose = &a->shown;
    for (int d = 0; d < EM_DEVICE_COUNT; ++d)
        shift_pose(&sc->device[d], a->offset_m);
    for (int t = 0; t < EM_TRACKER_COUNT; ++t)
        shift_pose(&sc->tracker[t], a->offset_m);
    struct render_figure *f = &sc->second;
    f->skeleton = body_skeleton(b->body);
    f->pose = &b->shown;
    f->tracker_present = b->frame.tracker_present;
    for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
        f->tracker[t] = b->frame.tracker[t];
        shift_pose(&f->tracker[t], b->offset_m);
    }
}

/* The truth's ghost where each avatar is drawn. */
static void
fill_ghosts(struct live *L)
{
    struct render_scene *sc = &L->scene;
    struct app_truth *t = &L->truth;
    app_truth_pose(t, app_truth_row(t, L->frame.time_s));
    sc->ghost_count = L->lanes.count;
    for (int i = 0; i < L->lanes.count; ++i) {
        struct render_ghost *g = &sc->ghost[i];
        g->joint_count = t->bvh.joint_count;
        g->parent = t->parent;
        g->position_m = (const float(*)[3])t->ghost_m;
        if (L->lanes.count < 2)
            continue;
        for (int j = 0; j < t->bvh.joint_count; ++j)
            m_vec3_add(t->ghost_m[j], L->lanes.lane[i].offset_m, L->ghost_shown[i][j]);
        g->position_m = (const float(*)[3])L->ghost_shown[i];
    }
}

/* The avatars beyond the first body's own drawing: the second, the ghosts, and a line
 * on the HUD for each (with its errors against a replayed clip). */
static void
fill_lanes(struct live *L)
{
    struct render_scene *sc = &L->scene;
    memset(&sc->second, 0, sizeof sc->second);
    sc->ghost_count = 0;
    sc->hud.lane_count = 0;
    if (!L->lanes_ready)
        return;
    if (L->lanes.count > 1) {
        app_lanes_place(&L->lanes);
        fill_second(L);
    }
    if (L->have_truth)
        fill_ghosts(L);
    if (L->lanes.count < 2 && L->opt->input != APP_INPUT_REPLAY)
        return;
    sc->hud.lane_count = L->lanes.count;
    for (int i = 0; i < L->lanes.count; ++i)
        app_lanes_hud(&L->lanes, i, &sc->hud.lane[i]);
}

/* The avatar's fingers: this frame's hands the source gives (hand tracking, the
 * controllers' curls, a replayed stream's finger columns), the relaxed hand for the others. */
static void
set_avatar_fingers(struct live *L)
{
    struct hd_pose poses[HD_HAND_COUNT];
    const struct hd_pose *given[HD_HAND_COUNT] = {NULL, NULL};
    for (int h = 0; h < HD_HAND_COUNT; ++h)
        if (L->have_fingers && L->fingers.valid[h]) {
            st_fingers_get_pose(&L->fingers, (enum hd_hand)h, &poses[h]);
            given[h] = &poses[h];
        }
    app_avatar_set_fingers(&L->avatar, given);
}

static void
fill_scene(struct live *L, int64_t now_ns)
{
    struct render_scene *sc = &L->scene;
    const struct body_status *s = &L->status;
    sc->skeleton = body_skeleton(L->body);
    sc->pose = body_pose(L->body);
    set_avatar_fingers(L);
    app_avatar_scene(&L->avatar, L->body, sc);
    for (int d = 0; d < EM_DEVICE_COUNT; ++d)
        sc->device[d] = L->frame.device[d];
    fill_trackers(L);
    fill_lanes(L);
    const int n = s->effector_count < RENDER_MAX_TARGETS ? s->effector_count : RENDER_MAX_TARGETS;
    sc->target_count = n;
    struct render_hud *h = &sc->hud;
    h->effector_count = n;
    for (int i = 0; i < n; ++i) {
        memcpy(sc->target[i].target_m, s->target_m[i], sizeof(vec3));
        memcpy(sc->target[i].reached_m, s->reached_m[i], sizeof(vec3));
        h->effector_name[i] = s->effector_name[i];
        h->residual_mm[i] = s->ik.residual_m[i] * 1000.0f;
    }
    h->frame_rate_hz = L->frame_rate_hz;
    h->solve_us = L->last_update_us;
    h->iterations = s->ik.iterations;
    h->source_name = L->source_info.kind;
    h->posture = posture_text(s);
    h->stepping = stepping_text(s);
    h->height_m = s->height_m;
    h->arm_span_m = s->arm_span_m;
    h->paused = L->paused;
    h->recording = L->record.recording;
    for (int d = 0; d < EM_DEVICE_COUNT; ++d)
        h->device_note[d] = device_note(s, d);
    h->message = now_ns < L->message_until_ns ? L->message : NULL;
}

static void
update_frame_rate(struct live *L, int64_t now_ns)
{
    if (L->last_frame_ns > 0 && now_ns > L->last_frame_ns) {
        const float rate = (float)(1e9 / (double)(now_ns - L->last_frame_ns));
        L->frame_rate_hz = L->frame_rate_hz > 0.0f
                               ? L->frame_rate_hz + FRAME_RATE_SMOOTHING * (rate - L->frame_rate_hz)
                               : rate;
    }
    L->last_frame_ns = now_ns;
}

static void
send_outputs(struct live *L)
{
    const struct sk_skeleton *skeleton = body_skeleton(L->body);
    const struct sk_pose *pose = body_pose(L->body);
    struct osc_sender *senders[2] = {L->vmc, L->vrchat};
    for (int i = 0; i < 2; ++i) {
        if (!senders[i])
            continue;
        osc_sender_set_headset(senders[i], &L->frame.device[EM_DEVICE_HEAD]);
        osc_sender_set_devices(senders[i], &L->frame);
        if (senders[i] == L->vmc && L->have_fingers) {
            float rotation[OSC_VMC_FINGER_BONES][4], offset_m[OSC_VMC_FINGER_BONES][3];
            app_source_finger_locals(&L->fingers, rotation, offset_m);
            osc_sender_set_fingers(senders[i], rotation, offset_m);
        }
        osc_sender_send(senders[i], skeleton, pose, L->frame.time_s);
    }
}

/* Solves one new frame and shows it; false to stop. */
static bool
process_frame(struct live *L)
{
    auto_calibrate_step(L);
    const int64_t start_ns = u_time_now_ns();
    app_lanes_update(&L->lanes, &L->source_frame, &L->frame);
    const int64_t end_ns = u_time_now_ns();
    L->last_update_us = (float)((double)(end_ns - start_ns) * 1e-3);
    body_get_status(L->body, &L->status);
    tell_prior_dropped(L);
    app_stats_add(&L->stats, end_ns, L->last_update_us, L->status.posture);
    update_frame_rate(L, end_ns);

    const uint32_t actions = L->render ? render_poll(L->render) : 0;
    const bool keep_going = handle_requests(L, actions, L->frame.events);
    fill_scene(L, end_ns); /* the headset's eyes draw it too, in in_source_submit */
    if (L->render)
        render_draw(L->render, &L->scene);
    send_outputs(L);
    app_record_frame(&L->record, &L->frame, L->have_fingers ? &L->fingers : NULL,
                     L->source ? app_source_tracker_mask(L->source) : 0);
    return keep_going;
}

/* No frame this time (a session not running yet): keep the window alive. */
static bool
idle(struct live *L)
{
    if (!L->render)
        return true;
    const uint32_t actions = render_poll(L->render);
    if (L->have_frame) {
        set_message(L, "waiting for tracking");
        fill_scene(L, u_time_now_ns());
        render_draw(L->render, &L->scene);
    }
    return !(actions & RENDER_ACTION_QUIT);
}

/* How long a live source may stay silent before the program ends (0: forever): the
 * --idle-exit option, or APP_IDLE_EXIT_DEFAULT_S when --frames waits for frames. Files and
 * the demo never fall silent. */
static double
idle_exit_s(const struct live *L)
{
    const bool live = strcmp(L->source_info.kind, "vmc") == 0 ||
                      strcmp(L->source_info.kind, "openxr") == 0;
    if (!live)
        return 0.0;
    if (L->opt->idle_exit_s > 0.0)
        return L->opt->idle_exit_s;
    return L->opt->frames > 0 ? APP_IDLE_EXIT_DEFAULT_S : 0.0;
}

static int
run_loop(struct live *L, const struct app_live_hooks *hooks)
{
    const long limit = L->opt->frames > 0 ? L->opt->frames : L->frame_limit;
    const bool openxr_window = L->render && strcmp(L->source_info.kind, "openxr") == 0;
    /* Silence counts from here (tracking starts: the avatar, prior and window are ready)
     * until the first frame, then from the last one, as the help says. */
    const double idle_limit_s = idle_exit_s(L);
    int64_t last_heard_ns = u_time_now_ns();
    while (!g_interrupted && (limit == 0 || L->stats.frames < limit)) {
        if (openxr_window)
            render_make_current(L->render);
        /* Into a separate frame: the last good one stays for the window while waiting. */
        struct em_tracking_frame next;
        const enum em_result r = in_source_next(L->source, &next);
        if (r == EM_END_OF_STREAM)
            break;
        if (r == EM_NOT_READY) {
            const double silent_s = (double)(u_time_now_ns() - last_heard_ns) * 1e-9;
            if (idle_limit_s > 0.0 && silent_s >= idle_limit_s) {
                U_LOG_W("%s: nothing received for %.1f s: stopping after %ld frames "
                        "(--idle-exit)",
                        L->source_info.kind, silent_s, L->stats.frames);
                break;
            }
            if (!idle(L))
                break;
            continue;
        }
        last_heard_ns = u_time_now_ns();
        if (r != EM_OK) {
            U_LOG_E("tracking (%s) failed: %s", L->source_info.kind, em_result_string(r));
            return APP_EXIT_FAILURE;
        }
        if (L->faults)
            flt_state_apply(L->faults, &next);
        L->source_frame = next;
        L->have_fingers = in_source_fingers(L->source, &L->fingers);
        app_lane_mask(&L->lanes.lane[0], &next, &L->frame);
        L->have_frame = true;
        if (hooks && hooks->on_frame)
            hooks->on_frame(hooks->user, L->stats.frames, &L->frame, L->render, &L->scene, L->body);
        const bool keep_going = process_frame(L);
        const enum em_result s = in_source_submit(L->source);
        if (s < 0) {
            U_LOG_E("tracking (%s): submitting the frame failed: %s", L->source_info.kind,
                    em_result_string(s));
            return APP_EXIT_FAILURE;
        }
        if (!keep_going)
            break;
    }
    if (g_interrupted)
        U_LOG_I("interrupted");
    return APP_EXIT_OK;
}

/* ---- The end ------------------------------------------------------------------------ */

static int
take_screenshot(struct live *L)
{
    if (!L->opt->screenshot_path || !L->render)
        return APP_EXIT_OK;
    if (!L->have_frame) {
        U_LOG_E("--screenshot: no frame was drawn, so there is nothing to save");
        return APP_EXIT_FAILURE;
    }
    struct em_error err = {{0}};
    if (render_screenshot(L->render, L->opt->screenshot_path, &err) != EM_OK) {
        U_LOG_E("--screenshot: %s", err.message);
        return APP_EXIT_FAILURE;
    }
    /* Say where it is, wherever the program was started from. */
    app_path_tidy(L->opt->screenshot_path, L->screenshot_done, sizeof L->screenshot_done);
    return APP_EXIT_OK;
}

static void
print_sender_summary(const char *what, const struct app_osc_option *o,
                     const struct osc_sender *sender)
{
    if (!sender)
        return;
    struct osc_sender_stats st;
    osc_sender_get_stats(sender, &st);
    const unsigned long long frames = st.frames, sent = st.datagrams_sent,
                             failed = st.datagrams_failed;
    /* UDP says nothing listens only as a refusal of a later datagram, so a "sent" one may
     * have reached no one: with refusals, say that rather than "N sent, N failed". */
    if (failed > 0 && st.last_errno == ECONNREFUSED)
        printf("embody: %s to %s:%d: %llu frames; nothing was listening there (%llu of %llu "
               "datagrams refused)\n",
               what, o->host, o->port, frames, failed, sent + failed);
    else if (failed > 0)
        printf("embody: %s to %s:%d: %llu frames, %llu datagrams sent, %llu failed (%s)\n", what,
               o->host, o->port, frames, sent, failed, strerror(st.last_errno));
    else
        printf("embody: %s to %s:%d: %llu frames, %llu datagrams sent\n", what, o->host, o->port,
               frames, sent);
}

/* What the summary's update time measures. In real time each update starts cold: the
 * program waited for the frame (caches taken by others, the core's clock down) and shares
 * the core with drawing; `embody eval` and bench_body_update time a hot loop of updates,
 * as --fast runs them. */
static const char *
update_conditions(const struct live *L)
{
    const char *kind = L->source_info.kind ? L->source_info.kind : "";
    const bool back_to_back =
        L->opt->fast && (strcmp(kind, "replay") == 0 || strcmp(kind, "demo") == 0);
    if (back_to_back)
        return "with frames back to back (--fast: caches warm, as `embody eval` times it)";
    return L->opt->no_window ? "in real time (each starts cold after waiting for its frame; "
                               "`embody eval` times a hot loop)"
                             : "in real time (each starts cold after waiting for its frame, the "
                               "core shared with drawing; `embody eval` times a hot loop)";
}

static void
print_summary(const struct live *L)
{
    const struct app_stats *st = &L->stats;
    const double seconds = app_stats_seconds(st);
    const char *kind = L->source_info.kind ? L->source_info.kind : "-";
    printf("embody: %ld frames from %s%s%s%s in %.2f s", st->frames,
           strcmp(kind, "openxr") == 0 ? "OpenXR" : (strcmp(kind, "demo") == 0 ? "the demo" : kind),
           L->source_info.path[0] ? " (" : "", L->source_info.path,
           L->source_info.path[0] ? ")" : "", seconds);
    if (seconds > 0.0)
        printf(" (%.1f frames/s)", (double)(st->frames - 1) / seconds);
    printf("\n");
    if (L->source_info.fell_back)
        printf("embody: the demo played because there is no headset: %s\n",
               L->source_info.fallback_reason);
    char openxr[512];
    app_source_describe(L->source, openxr, sizeof openxr);
    if (openxr[0])
        printf("embody: OpenXR: %s\n", openxr);
    printf("embody: body update %s: median %.1f µs, mean %.1f µs, max %.1f µs\n",
           update_conditions(L), (double)app_stats_median_us(st), (double)app_stats_mean_us(st),
           (double)st->update_us_max);
    printf("embody: posture:");
    for (int p = 0; p < BODY_POSTURE_COUNT; ++p)
        printf("%s %s %ld", p ? "," : "", body_posture_name((enum body_posture)p), st->posture[p]);
    printf(" (frames)\n");
    if (L->screenshot_done[0])
        printf("embody: screenshot: %s\n", L->screenshot_done);
    if (L->record.path[0]) /* --record's, or the last one F9 started */
        app_record_print_summary(&L->record, stdout);
    print_sender_summary("VMC", &L->opt->vmc, L->vmc);
    print_sender_summary("VRChat OSC", &L->opt->vrchat, L->vrchat);
    fflush(stdout);
}

static void
teardown(struct live *L)
{
    app_record_abandon(&L->record);
    osc_sender_destroy(&L->vrchat);
    osc_sender_destroy(&L->vmc);
    if (L->render && L->source && strcmp(L->source_info.kind, "openxr") == 0)
        render_make_current(L->render);
    in_source_destroy(&L->source);
    flt_state_destroy(&L->faults);
    free(L->auto_estimate);
    L->auto_estimate = NULL;
    render_destroy(&L->render);
    if (L->lanes_ready) {
        L->body = NULL; /* the first lane's */
        app_lanes_fini(&L->lanes);
        L->lanes_ready = false;
    }
    body_destroy(&L->body);
    app_truth_fini(&L->truth);
    for (int g = 0; g < RENDER_MAX_GHOSTS; ++g) {
        free(L->ghost_shown[g]);
        L->ghost_shown[g] = NULL;
    }
    app_avatar_fini(&L->avatar);
}

static int
finish(struct live *L, const struct app_live_hooks *hooks, int loop_code)
{
    int code = loop_code;
    const int shot = take_screenshot(L);
    if (code == APP_EXIT_OK)
        code = shot;
    if (hooks && hooks->at_end)
        hooks->at_end(hooks->user, L->render, &L->scene, L->body);
    const int recorded = app_record_close(&L->record);
    if (code == APP_EXIT_OK)
        code = recorded;
    if (L->opt->verbosity >= 0)
        print_summary(L);
    return code;
}

/* Headless OpenXR (no window: the session never gets focus, so no buttons) and VMC input
 * (the player is elsewhere) calibrate themselves from the headset, unless the avatar has
 * its own height. */
static void
start_auto_calibration(struct live *L)
{
    const bool no_button = L->source && (app_source_is_headless(L->source) ||
                                         L->opt->input == APP_INPUT_VMC);
    if (!no_button || L->avatar.fit_height_m <= 0.0f)
        return;
    L->auto_estimate = malloc(sizeof *L->auto_estimate);
    if (!L->auto_estimate)
        return;
    struct body_desc desc;
    body_get_desc(L->body, &desc);
    in_height_estimator_init(L->auto_estimate, desc.offsets.head_position_m, desc.floor_height_m);
    L->auto_calibrating = true;
}

int
app_live_run(const struct app_options *options, const struct app_live_hooks *hooks,
             struct app_live_result *out_result)
{
    struct live *L = calloc(1, sizeof *L);
    if (!L) {
        fprintf(stderr, "embody: error: out of memory\n");
        return APP_EXIT_FAILURE;
    }
    L->opt = options;
    set_log_level(options->verbosity);
    g_interrupted = 0;

    int code = setup_body(L);
    if (code == APP_EXIT_OK)
        code = collect_faults(L);
    if (code == APP_EXIT_OK && options->print_rig) {
        code = app_avatar_print_rig(stdout, &L->avatar);
        teardown(L);
        free(L);
        return code;
    }
    if (code == APP_EXIT_OK && options->print_config) {
        app_config_print(stdout, options, &L->avatar, L->body, &L->fault_set);
        teardown(L);
        free(L);
        return APP_EXIT_OK;
    }
    if (code == APP_EXIT_OK)
        code = setup_outputs(L);
    if (code == APP_EXIT_OK)
        code = open_window_and_source(L);
    if (code == APP_EXIT_OK) {
        struct sigaction action = {.sa_handler = on_signal}, old_int, old_term, old_hup;
        sigemptyset(&action.sa_mask);
        sigaction(SIGINT, &action, &old_int);
        sigaction(SIGTERM, &action, &old_term);
        sigaction(SIGHUP, &action, &old_hup); /* the terminal closed: end as for Ctrl-C */
        app_record_tell_leftovers();
        start_auto_calibration(L);
        code = finish(L, hooks, run_loop(L, hooks));
        if (code == APP_EXIT_OK && options->input == APP_INPUT_OPENXR &&
            app_source_runtime_gone(L->source)) {
            U_LOG_E("--openxr: the OpenXR runtime went away and did not come back");
            code = APP_EXIT_FAILURE;
        }
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        sigaction(SIGHUP, &old_hup, NULL);
    }
    if (out_result) {
        out_result->frames = L->stats.frames;
        out_result->source_kind = L->source_info.kind;
        out_result->fell_back_to_demo = L->source_info.fell_back;
        out_result->had_window = L->render != NULL;
    }
    teardown(L);
    free(L);
    return code;
}
