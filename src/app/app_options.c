/* The live program's options (app_options.h): the table, the checks, the help text. */
#include <string.h>

#include "app/app_args.h"
#include "app/app_lanes.h"
#include "app/app_options.h"
#include "embody/prior.h"
#include "render/render.h"
#include "embody/stream.h"

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
    OPT_FAULT,
    OPT_FAULT_SEED,
    OPT_TRACKERS,
    OPT_BONE_MAP,
    OPT_PRINT_RIG,
    OPT_COMPARE,
    OPT_NO_GHOST,
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
    {OPT_FAULT, "fault", 0, APP_ARG_VALUE},
    {OPT_FAULT_SEED, "fault-seed", 0, APP_ARG_VALUE},
    {OPT_TRACKERS, "trackers", 0, APP_ARG_VALUE},
    {OPT_BONE_MAP, "bone-map", 0, APP_ARG_VALUE},
    {OPT_PRINT_RIG, "print-rig", 0, APP_ARG_FLAG},
    {OPT_COMPARE, "compare", 0, APP_ARG_VALUE},
    {OPT_NO_GHOST, "no-ghost", 0, APP_ARG_FLAG},
};
#define SPEC_COUNT ((int)(sizeof k_specs / sizeof k_specs[0]))

/* Every default and range the help names is the constant the code uses
 * (tests/app/test_app_help.c checks them). */
void
app_options_print_help(FILE *out)
{
    fprintf(out,
          "usage: embody [OPTIONS]            a full body from a headset and two controllers\n"
          "       embody COMMAND [ARGS]       (embody COMMAND --help for each)\n"
          "\n"
          "With no options, embody tracks a headset through OpenXR when a runtime and a\n"
          "headset are there; otherwise it says why and plays the bundled demo.\n"
          "\n"
          "Tracking:\n"
          "  --openxr               OpenXR only: exit with an error if it is not available\n"
          "  --replay FILE.csv      play a 3-point stream file in real time\n"
          "  --replay CLIP.bvh      play a motion capture clip: the stream a headset and\n"
          "                         controllers would give, made from it (its skeleton is\n"
          "                         the avatar unless --avatar, --skeleton or --height)\n"
          "  --trackers SETUP       with --replay CLIP.bvh: body trackers made from the clip\n"
          "                         too: 3 (none), 4, 6, 8, 11 or a list (pelvis,left_foot)\n"
          "  --demo                 play the bundled demo\n"
          "  --fast                 play the replay or the demo as fast as possible\n"
          "  --loop                 start the replay again at its end\n"
          "  --compare A,B          two avatars side by side from the same tracking, each a\n"
          "                         tracker setup (3, 4, 6, 8, 11), a body (prior,\n"
          "                         procedural) or a prior model file: --compare 3,6\n"
          "  --no-ghost             start with the ghost of a replayed clip's truth hidden\n"
          "                         (G shows it)\n"
          "  --vmc-in [[HOST:]PORT] read tracking sent over the VMC protocol (UDP\n"
          "                         %s:%d, this machine only; 0.0.0.0:PORT\n"
          "                         takes it from the network): Hmd/Con/Tra/Pos\n"
          "  --vmc-allow ADDR,...   take VMC only from these senders: IPv4 addresses,\n"
          "                         a.b.c.d/n blocks or host names; others are counted\n"
          "  --vmc-role SERIAL=ROLE the role of a VMC serial: head, left, right, pelvis,\n"
          "                         chest, left_foot, right_foot, left_knee, right_knee,\n"
          "                         left_elbow, right_elbow (serials named so need none)\n"
          "  --fault KIND:DEVICE:AMOUNT  a real tracker's fault on any source (repeatable):\n"
          "                         drift:D:DEG_PER_MIN, noise:D:MM, latency:D:MS,\n"
          "                         dropout:D:SHARE or dropout:D:FROM-TOs, offset:D:CM,\n"
          "                         turn:D:DEG, swap:PAIR (as embody eval --fault)\n"
          "  --fault-seed N         the faults' random seed (default 0)\n"
          "Avatar:\n"
          "  --height M             standing height, %.1f to %.1f m (default humanoid: from\n"
          "                         where a replay's head is held still, else %.2f; VMC\n"
          "                         input and headless OpenXR estimate it as they go)\n"
          "  --body MODE            legs and pelvis from the learned prior (prior, the\n"
          "                         default) or the procedural estimate (procedural)\n"
          "  --prior MODEL          the prior's model file (default\n"
          "                         %s)\n"
          "  --arm-span M           arm span, %.1f to %.1f m (default: the avatar's proportions)\n"
          "  --avatar CLIP.bvh      a known body: the skeleton of a BVH file\n"
          "  --avatar FILE.vrm      your own avatar: VRM 0.x/1.0, or a glTF or FBX humanoid\n"
          "                         (.glb, .gltf, .fbx); a bad file is reported and the\n"
          "                         default avatar shown\n"
          "  --bone-map FILE.json   the avatar's bones by node name, {\"hips\": \"Pelvis\", ...}\n"
          "  --print-rig            print the avatar's bones as found (a --bone-map file)\n"
          "  --figure               the capsule figure over the avatar (key B)\n"
          "  --skeleton FILE.json   an embody skeleton file (as config/humanoid.json)\n"
          "  --unit-scale S         metres per BVH unit for --avatar (default: guessed)\n"
          "  --config FILE.json     the body's settings: device offsets, filter, tracking\n"
          "                         loss, floor (default: %s)\n"
          "Output:\n"
          "  --vmc [HOST:PORT|PORT] send the pose over the VMC protocol (%s:%d)\n"
          "  --vrchat-osc [HOST:PORT|PORT]  send VRChat OSC trackers (%s:%d)\n"
          "  --record FILE.csv      write the tracking frames as read to a stream file\n"
          "Window:\n"
          "  --frames N             stop after N frames (the window is then hidden)\n"
          "  --idle-exit SECONDS    stop when a live source (VMC input, OpenXR) has sent\n"
          "                         nothing for this long: from its last packet, or\n"
          "                         before the first from when tracking starts (with\n"
          "                         --frames: %.0f s)\n"
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
          "  proportions [DIR...]               people's proportions vs the default humanoid\n"
          "\n"
          "Keys in the window: C calibrate (stand straight, arms out), R recenter,\n"
          "Space pause, Tab or 1-5 camera, H HUD, T IK targets, B capsule figure,\n"
          "S screenshot, F9 record, F1 help, Esc quit.\n"
          "Exit status: 0 done, 1 failed while running, 2 bad options or input files.\n",
          OSC_DEFAULT_HOST, OSC_VMC_DEFAULT_PORT, APP_HEIGHT_MIN_M, APP_HEIGHT_MAX_M,
          APP_DEFAULT_HEIGHT_M, PR_DEFAULT_MODEL, APP_ARM_SPAN_MIN_M, APP_ARM_SPAN_MAX_M,
          APP_DEFAULT_BODY_SETTINGS, OSC_DEFAULT_HOST, OSC_VMC_DEFAULT_PORT, OSC_DEFAULT_HOST,
          OSC_VRCHAT_DEFAULT_PORT, APP_IDLE_EXIT_DEFAULT_S);
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

/* --compare A,B: two items, each a tracker setup, a body or a prior model file. */
static enum em_result
parse_compare(struct app_options *o, const char *name, const char *value, struct em_error *err)
{
    const char *comma = strchr(value, ',');
    const size_t first = comma ? (size_t)(comma - value) : 0;
    if (!comma || strchr(comma + 1, ',') || first >= sizeof o->compare[0] ||
        strlen(comma + 1) >= sizeof o->compare[1])
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "%s: expected A,B: two of a tracker setup (3, 4, 6, 8, 11), a body (prior, "
                       "procedural) or a prior model file, got \"%s\"",
                       name, value);
    memcpy(o->compare[0], value, first);
    o->compare[0][first] = '\0';
    snprintf(o->compare[1], sizeof o->compare[1], "%s", comma + 1);
    for (int i = 0; i < 2; ++i) {
        struct app_lane_spec spec;
        if (app_lane_spec_parse(o->compare[i], &spec, err) != EM_OK)
            return EM_ERROR_INVALID_ARGUMENT;
    }
    o->compare_given = true;
    return EM_OK;
}

/* Applies one option with its value (a flat switch, one case per option). */
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
        return app_parse_metres(name, value, APP_HEIGHT_MIN_M, APP_HEIGHT_MAX_M,
                                "a standing height", &o->height_m, err);
    case OPT_ARM_SPAN:
        return app_parse_metres(name, value, APP_ARM_SPAN_MIN_M, APP_ARM_SPAN_MAX_M,
                                "an arm span", &o->arm_span_m, err);
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
    case OPT_FAULT: return flt_set_add(&o->faults, value, name, err);
    case OPT_TRACKERS: {
        struct em_error why = {{0}};
        if (st_tracker_setup_parse(value, &o->replay_trackers, &why) != EM_OK)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: %s (see %s)", name, why.message,
                           HELP_HINT);
        o->replay_trackers_given = true;
        return EM_OK;
    }
    case OPT_FAULT_SEED:
        if (app_parse_count(name, value, 0, 2147483647L, "a seed", &count, err) != EM_OK)
            return EM_ERROR_INVALID_ARGUMENT;
        o->faults.seed = (uint64_t)count;
        return EM_OK;
    case OPT_BONE_MAP: o->bone_map_path = value; return EM_OK;
    case OPT_PRINT_RIG: o->print_rig = true; return EM_OK;
    case OPT_COMPARE: return parse_compare(o, name, value, err);
    case OPT_NO_GHOST: o->no_ghost = true; return EM_OK;
    case OPT_COUNT: break;
    }
    return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: not handled", name);
}

/* Whether --vmc's destination is --vmc-in's own socket: the same port on this machine
 * (a loopback address, or the listening address itself, or a listener on every address). */
static bool
vmc_output_feeds_input(const struct app_options *o)
{
    const int listen_port = o->vmc_in.port ? o->vmc_in.port : OSC_VMC_DEFAULT_PORT;
    if (o->vmc.port != listen_port)
        return false;
    const char *listen_host = o->vmc_in.host[0] ? o->vmc_in.host : OSC_DEFAULT_HOST;
    return strncmp(o->vmc.host, "127.", 4) == 0 || strcmp(o->vmc.host, "localhost") == 0 ||
           strcmp(o->vmc.host, listen_host) == 0 || strcmp(listen_host, "0.0.0.0") == 0;
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
    const bool clip = o->replay_path && app_has_suffix(o->replay_path, ".bvh");
    if (o->replay_trackers_given && !clip)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--trackers: only with --replay CLIP.bvh (a stream file carries its own)");
    if (o->unit_scale > 0.0 && !o->avatar_bvh)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "--unit-scale: only with --avatar FILE.bvh");
    if (o->avatar_bvh && !app_has_suffix(o->avatar_bvh, ".bvh"))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--avatar: expected FILE.vrm, FILE.glb, FILE.gltf, FILE.fbx or FILE.bvh, got \"%s\"",
                       o->avatar_bvh);
    if (o->bone_map_path && !o->avatar_model)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--bone-map: only with --avatar FILE.vrm, .glb, .gltf or .fbx");
    if (o->bone_map_path && !app_has_suffix(o->bone_map_path, ".json"))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--bone-map: expected a bone map file (FILE.json), got \"%s\"",
                       o->bone_map_path);
    if (o->print_rig && !o->avatar_model)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--print-rig: only with --avatar FILE.vrm, .glb, .gltf or .fbx");
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
    if (o->vmc.enabled && o->input == APP_INPUT_VMC && vmc_output_feeds_input(o))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--vmc and --vmc-in: --vmc sends to %s:%d, where --vmc-in listens: "
                       "embody would read its own output; give one of them another port "
                       "(--vmc %d)",
                       o->vmc.host, o->vmc.port, o->vmc.port + 1);
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
    const bool repeatable = id == OPT_VERBOSE || id == OPT_QUIET || id == OPT_FAULT;
    if (scan->seen[id] && !repeatable)
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
    const enum em_result c = check_combinations(o, err);
    /* A clip's own skeleton is the avatar, unless another body was asked for. */
    if (c == EM_OK && o->replay_path && app_has_suffix(o->replay_path, ".bvh") &&
        !o->avatar_bvh && !o->avatar_model && !o->skeleton_json && o->height_m <= 0.0)
        o->avatar_bvh = o->replay_path;
    return c;
}
