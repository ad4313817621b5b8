/* The live program's options (app_options.h): the table, the checks, the help text. */
#include <string.h>

#include "app/app_args.h"
#include "app/app_options.h"
#include "embody/prior.h"
#include "embody/render.h"

#define HELP_HINT "embody --help"

enum option_id {
    OPT_OPENXR = 1,
    OPT_REPLAY,
    OPT_DEMO,
    OPT_FAST,
    OPT_LOOP,
    OPT_HEIGHT,
    OPT_ARM_SPAN,
    OPT_AVATAR,
    OPT_SKELETON,
    OPT_FIGURE,
    OPT_UNIT_SCALE,
    OPT_VMC,
    OPT_VRCHAT,
    OPT_RECORD,
    OPT_FRAMES,
    OPT_SCREENSHOT,
    OPT_CAMERA,
    OPT_NO_WINDOW,
    OPT_PRINT_CONFIG,
    OPT_VERBOSE,
    OPT_QUIET,
    OPT_HELP,
    OPT_VERSION,
    OPT_CONFIG,
    OPT_BODY,
    OPT_PRIOR,
    OPT_VMC_IN,
    OPT_VMC_ROLE,
    OPT_IDLE_EXIT,
    OPT_VMC_ALLOW,
    OPT_COUNT,
};

static const struct app_arg_spec k_specs[] = {
    {OPT_OPENXR, "openxr", 0, APP_ARG_FLAG},
    {OPT_REPLAY, "replay", 0, APP_ARG_VALUE},
    {OPT_DEMO, "demo", 0, APP_ARG_FLAG},
    {OPT_FAST, "fast", 0, APP_ARG_FLAG},
    {OPT_LOOP, "loop", 0, APP_ARG_FLAG},
    {OPT_HEIGHT, "height", 0, APP_ARG_VALUE},
    {OPT_ARM_SPAN, "arm-span", 0, APP_ARG_VALUE},
    {OPT_AVATAR, "avatar", 0, APP_ARG_VALUE},
    {OPT_SKELETON, "skeleton", 0, APP_ARG_VALUE},
    {OPT_FIGURE, "figure", 0, APP_ARG_FLAG},
    {OPT_UNIT_SCALE, "unit-scale", 0, APP_ARG_VALUE},
    {OPT_VMC, "vmc", 0, APP_ARG_OPTIONAL},
    {OPT_VRCHAT, "vrchat-osc", 0, APP_ARG_OPTIONAL},
    {OPT_RECORD, "record", 0, APP_ARG_VALUE},
    {OPT_FRAMES, "frames", 0, APP_ARG_VALUE},
    {OPT_SCREENSHOT, "screenshot", 0, APP_ARG_VALUE},
    {OPT_CAMERA, "camera", 0, APP_ARG_VALUE},
    {OPT_NO_WINDOW, "no-window", 0, APP_ARG_FLAG},
    {OPT_PRINT_CONFIG, "print-config", 0, APP_ARG_FLAG},
    {OPT_VERBOSE, "verbose", 'v', APP_ARG_FLAG},
    {OPT_QUIET, "quiet", 'q', APP_ARG_FLAG},
    {OPT_HELP, "help", 'h', APP_ARG_FLAG},
    {OPT_VERSION, "version", 0, APP_ARG_FLAG},
    {OPT_CONFIG, "config", 0, APP_ARG_VALUE},
    {OPT_BODY, "body", 0, APP_ARG_VALUE},
    {OPT_PRIOR, "prior", 0, APP_ARG_VALUE},
    {OPT_VMC_IN, "vmc-in", 0, APP_ARG_OPTIONAL},
    {OPT_VMC_ROLE, "vmc-role", 0, APP_ARG_VALUE},
    {OPT_IDLE_EXIT, "idle-exit", 0, APP_ARG_VALUE},
    {OPT_VMC_ALLOW, "vmc-allow", 0, APP_ARG_VALUE},
};
#define SPEC_COUNT ((int)(sizeof k_specs / sizeof k_specs[0]))

void
app_options_print_help(FILE *out)
{
    fputs("usage: embody [OPTIONS]            a full body from a headset and two controllers\n"
          "       embody COMMAND [ARGS]       (embody COMMAND --help for each)\n"
          "\n"
          "With no options, embody tracks a headset through OpenXR when a runtime and a\n"
          "headset are there; otherwise it says why and plays the bundled demo.\n"
          "\n"
          "Tracking:\n"
          "  --openxr               OpenXR only: exit with an error if it is not available\n"
          "  --replay FILE.csv      play a 3-point stream file in real time\n"
          "  --demo                 play the bundled demo\n"
          "  --fast                 play the replay or the demo as fast as possible\n"
          "  --loop                 start the replay again at its end\n"
          "  --vmc-in [[HOST:]PORT] read tracking sent over the VMC protocol (UDP\n"
          "                         127.0.0.1:39539, this machine only; 0.0.0.0:PORT\n"
          "                         takes it from the network): Hmd/Con/Tra/Pos\n"
          "  --vmc-allow ADDR,...   take VMC only from these senders: IPv4 addresses,\n"
          "                         a.b.c.d/n blocks or host names; others are counted\n"
          "  --vmc-role SERIAL=ROLE the role of a VMC serial: head, left, right, pelvis,\n"
          "                         chest, left_foot, right_foot, left_knee, right_knee,\n"
          "                         left_elbow, right_elbow (serials named so need none)\n"
          "Avatar:\n"
          "  --height M             standing height, 0.5 to 2.8 m (default humanoid: from\n"
          "                         where a replay's head is held still, else 1.75; VMC\n"
          "                         input and headless OpenXR estimate it as they go)\n"
          "  --body MODE            legs and pelvis from the learned prior (prior, the\n"
          "                         default) or the procedural estimate (procedural)\n"
          "  --prior MODEL          the prior's model file (default\n"
          "                         " PR_DEFAULT_MODEL ")\n"
          "  --arm-span M           arm span, 0.5 to 3.0 m (default: the avatar's proportions)\n"
          "  --avatar CLIP.bvh      a known body: the skeleton of a BVH file\n"
          "  --avatar FILE.vrm      your own avatar: VRM 0.x/1.0, or a glTF or FBX humanoid\n"
          "                         (.glb, .gltf, .fbx); a bad file is reported and the\n"
          "                         default avatar shown\n"
          "  --figure               the capsule figure over the avatar (key B)\n"
          "  --skeleton FILE.json   an embody skeleton file (as config/humanoid.json)\n"
          "  --unit-scale S         metres per BVH unit for --avatar (default: guessed)\n"
          "  --config FILE.json     the body's settings: device offsets, filter, tracking\n"
          "                         loss, floor (default: config/body.json)\n"
          "Output:\n"
          "  --vmc [HOST:PORT]      send the pose over the VMC protocol (127.0.0.1:39539)\n"
          "  --vrchat-osc [HOST:PORT]  send VRChat OSC trackers (127.0.0.1:9000)\n"
          "  --record FILE.csv      write the tracking frames as read to a stream file\n"
          "Window:\n"
          "  --frames N             stop after N frames (the window is then hidden)\n"
          "  --idle-exit SECONDS    stop when a live source (VMC input, OpenXR) has sent\n"
          "                         nothing for this long (with --frames: 10 s)\n"
          "  --screenshot FILE.png  write the window's image at the end\n"
          "  --camera NAME          start with this view: mirror (default), orbit, front,\n"
          "                         side, top\n"
          "  --no-window            run without any window (no display needed)\n"
          "Other:\n"
          "  --print-config         print every resolved setting and exit\n"
          "  -v, --verbose          more messages\n"
          "  -q, --quiet            errors and warnings only, no summary\n"
          "  -h, --help             this help\n"
          "  --version              the version\n"
          "\n"
          "Commands:\n"
          "  mocap2stream CLIP.bvh -o OUT.csv   the stream a headset would give for a clip\n"
          "  solve STREAM.csv -o OUT.bvh        reconstruct a stream into a BVH file\n"
          "  eval [DIR]                         run the evaluation protocol on clips\n"
          "  train CLIP_DIR -o MODEL            learn the body-pose prior from clips\n"
          "  make-avatar -o OUT.vrm             write the default skinned humanoid avatar\n"
          "\n"
          "Keys in the window: C calibrate (stand straight, arms out), R recenter,\n"
          "Space pause, Tab camera, H HUD, T IK targets, S screenshot, F9 record, F1 help,\n"
          "Esc quit.\n"
          "Exit status: 0 done, 1 failed while running, 2 bad options or input files.\n",
          out);
}

const char *
app_input_name(enum app_input input)
{
    switch (input) {
    case APP_INPUT_AUTO: return "auto";
    case APP_INPUT_OPENXR: return "openxr";
    case APP_INPUT_REPLAY: return "replay";
    case APP_INPUT_DEMO: return "demo";
    case APP_INPUT_VMC: return "vmc";
    }
    return "?";
}

bool
app_options_is_main_job(const struct app_options *options)
{
    return options->input == APP_INPUT_AUTO && !options->screenshot_path;
}

static enum em_result
set_input(struct app_options *o, enum app_input input, const char *name, struct em_error *err)
{
    if (o->input != APP_INPUT_AUTO && o->input != input)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "%s: choose one of --openxr, --replay and --demo (or --vmc-in)", name);
    o->input = input;
    return EM_OK;
}

static enum em_result
parse_osc(struct app_osc_option *osc, const char *name, const char *value, int default_port,
          struct em_error *err)
{
    osc->enabled = true;
    return osc_parse_destination(value, name, OSC_DEFAULT_HOST, default_port, osc->host, &osc->port,
                                 err);
}

/* Applies one option with its value. */
static enum em_result
apply(struct app_options *o, int id, const char *name, const char *value, struct em_error *err)
{
    long count;
    switch ((enum option_id)id) {
    case OPT_OPENXR: return set_input(o, APP_INPUT_OPENXR, name, err);
    case OPT_REPLAY: o->replay_path = value; return set_input(o, APP_INPUT_REPLAY, name, err);
    case OPT_DEMO: return set_input(o, APP_INPUT_DEMO, name, err);
    case OPT_FAST: o->fast = true; return EM_OK;
    case OPT_LOOP: o->loop = true; return EM_OK;
    case OPT_HEIGHT:
        return app_parse_number(name, value, APP_HEIGHT_MIN_M, APP_HEIGHT_MAX_M,
                                "a standing height in metres", &o->height_m, err);
    case OPT_ARM_SPAN:
        return app_parse_number(name, value, APP_ARM_SPAN_MIN_M, APP_ARM_SPAN_MAX_M,
                                "an arm span in metres", &o->arm_span_m, err);
    case OPT_AVATAR:
        if (app_has_suffix(value, ".vrm") || app_has_suffix(value, ".glb") ||
            app_has_suffix(value, ".gltf") || app_has_suffix(value, ".fbx"))
            o->avatar_model = value;
        else
            o->avatar_bvh = value;
        return EM_OK;
    case OPT_FIGURE: o->show_figure = true; return EM_OK;
    case OPT_SKELETON: o->skeleton_json = value; return EM_OK;
    case OPT_UNIT_SCALE:
        return app_parse_number(name, value, APP_UNIT_SCALE_MIN, APP_UNIT_SCALE_MAX,
                                "metres per BVH unit", &o->unit_scale, err);
    case OPT_VMC: return parse_osc(&o->vmc, name, value, OSC_VMC_DEFAULT_PORT, err);
    case OPT_VRCHAT: return parse_osc(&o->vrchat, name, value, OSC_VRCHAT_DEFAULT_PORT, err);
    case OPT_RECORD: o->record_path = value; return EM_OK;
    case OPT_VMC_IN:
        if (value && osc_vmc_listen_parse(value, &o->vmc_in, err) != EM_OK)
            return EM_ERROR_INVALID_ARGUMENT;
        return set_input(o, APP_INPUT_VMC, name, err);
    case OPT_VMC_ALLOW: return osc_vmc_allow_parse(value, &o->vmc_in, err);
    case OPT_VMC_ROLE:
        if (o->vmc_in.role_count >= OSC_VMC_MAX_ROLES)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: at most %d serials", name,
                           OSC_VMC_MAX_ROLES);
        return osc_vmc_role_parse(value, &o->vmc_in.role[o->vmc_in.role_count++], err);
    case OPT_FRAMES:
        if (app_parse_count(name, value, 1, APP_FRAMES_MAX, "a frame count", &count, err) != EM_OK)
            return EM_ERROR_INVALID_ARGUMENT;
        o->frames = count;
        return EM_OK;
    case OPT_IDLE_EXIT:
        return app_parse_number(name, value, APP_IDLE_EXIT_MIN_S, APP_IDLE_EXIT_MAX_S,
                                "seconds", &o->idle_exit_s, err);
    case OPT_SCREENSHOT: o->screenshot_path = value; return EM_OK;
    case OPT_CAMERA:
        for (int c = 0; c < RENDER_CAMERA_COUNT; ++c)
            if (strcmp(value, render_camera_name((enum render_camera)c)) == 0) {
                o->camera = c;
                return EM_OK;
            }
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "%s: expected mirror, orbit, front, side or top, got \"%s\"", name, value);
    case OPT_NO_WINDOW: o->no_window = true; return EM_OK;
    case OPT_PRINT_CONFIG: o->print_config = true; return EM_OK;
    case OPT_VERBOSE: o->verbosity = 1; return EM_OK;
    case OPT_QUIET: o->verbosity = -1; return EM_OK;
    case OPT_HELP: o->show_help = true; return EM_OK;
    case OPT_VERSION: o->show_version = true; return EM_OK;
    case OPT_CONFIG: o->config_path = value; return EM_OK;
    case OPT_BODY:
        if (strcmp(value, "procedural") != 0 && strcmp(value, "prior") != 0)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "%s: expected procedural or prior, got \"%s\"", name, value);
        o->body_mode = value;
        return EM_OK;
    case OPT_PRIOR: o->prior_path = value; return EM_OK;
    case OPT_COUNT: break;
    }
    return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: not handled", name);
}

/* Checks the options that only make sense together (or apart). */
static enum em_result
check_combinations(const struct app_options *o, struct em_error *err)
{
    if (o->fast && o->input != APP_INPUT_REPLAY && o->input != APP_INPUT_DEMO)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--fast: only with --replay FILE or --demo (live tracking keeps its "
                       "own pace)");
    if (o->loop && o->input != APP_INPUT_REPLAY)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--loop: only with --replay FILE (the demo always loops)");
    if (o->avatar_model && o->skeleton_json)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--avatar and --skeleton: choose one of them for the avatar");
    if (o->avatar_bvh && o->skeleton_json)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--avatar and --skeleton: choose one of them for the avatar");
    if (o->unit_scale > 0.0 && !o->avatar_bvh)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "--unit-scale: only with --avatar FILE.bvh");
    if (o->avatar_bvh && !app_has_suffix(o->avatar_bvh, ".bvh"))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--avatar: expected FILE.vrm, FILE.glb, FILE.gltf, FILE.fbx or FILE.bvh, got \"%s\"",
                       o->avatar_bvh);
    if (o->skeleton_json && !app_has_suffix(o->skeleton_json, ".json"))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--skeleton: expected an embody skeleton file (FILE.json), got \"%s\"",
                       o->skeleton_json);
    if (o->config_path && !app_has_suffix(o->config_path, ".json"))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--config: expected an embody body file (FILE.json), got \"%s\"",
                       o->config_path);
    if (o->screenshot_path && o->no_window)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--screenshot: needs the window, which --no-window turns off");
    if (o->screenshot_path && !app_has_suffix(o->screenshot_path, ".png"))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--screenshot: expected a PNG file name (FILE.png), got \"%s\"",
                       o->screenshot_path);
    if (o->vmc.enabled && o->vrchat.enabled && o->vmc.port == o->vrchat.port &&
        strcmp(o->vmc.host, o->vrchat.host) == 0)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--vmc and --vrchat-osc: both send to %s:%d; give them different ports",
                       o->vmc.host, o->vmc.port);
    return EM_OK;
}

/* app_options_parse's state: the options, and which were given (most may be given once). */
struct option_scan {
    struct app_options *options;
    bool seen[OPT_COUNT];
};

static enum em_result
scan_one(void *context, int id, const char *name, const char *value, struct em_error *err)
{
    struct option_scan *scan = context;
    if (id == 0)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "unexpected argument \"%s\": embody takes files only after an "
                       "option (--replay FILE.csv, ...; see %s)",
                       value, HELP_HINT);
    if (scan->seen[id] && id != OPT_VERBOSE && id != OPT_QUIET)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: given twice", name);
    scan->seen[id] = true;
    return apply(scan->options, id, name, value, err);
}

enum em_result
app_options_parse(int argc, char **argv, int first, struct app_options *out_options,
                  struct em_error *err)
{
    struct app_options *o = out_options;
    memset(o, 0, sizeof *o);
    struct option_scan scan = {.options = o};
    const enum em_result r =
        app_args_parse(argc, argv, first, k_specs, SPEC_COUNT, HELP_HINT, scan_one, &scan, err);
    if (r != EM_OK)
        return r;
    if (o->show_help || o->show_version)
        return EM_OK;
    return check_combinations(o, err);
}
