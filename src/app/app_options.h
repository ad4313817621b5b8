/*
 * The options of the live program (`embody [OPTIONS]`): where tracking comes from, the
 * avatar, the outputs, the window and the headless controls. Parsing checks everything it
 * can without opening files or windows (numbers, ranges, combinations, destinations);
 * files are checked when they are read, with the option named in the error.
 */
#ifndef EMBODY_APP_OPTIONS_H
#define EMBODY_APP_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fault/fault.h"
#include "osc/osc.h"
#include "embody/result.h"

/* Limits of the options (also shown in --help). */
#define APP_HEIGHT_MIN_M 0.5
#define APP_HEIGHT_MAX_M 2.8
#define APP_DEFAULT_HEIGHT_M 1.75
/* The body's settings file when --config names none, found where the data is. */
#define APP_DEFAULT_BODY_SETTINGS "config/body.json"
#define APP_ARM_SPAN_MIN_M 0.5
#define APP_ARM_SPAN_MAX_M 3.0
#define APP_UNIT_SCALE_MIN 1e-4
#define APP_UNIT_SCALE_MAX 100.0
#define APP_FRAMES_MAX 1000000000L
/* --idle-exit's range, and the silence after which --frames N gives up on a live source
 * that stopped sending (it would otherwise wait for its N frames forever). */
#define APP_IDLE_EXIT_MIN_S 0.1
#define APP_IDLE_EXIT_MAX_S 86400.0
#define APP_IDLE_EXIT_DEFAULT_S 10.0
/* The main job without a display or a headset plays this many demo frames (10 s). */
#define APP_HEADLESS_DEMO_FRAMES 600L

enum app_input {
    APP_INPUT_AUTO = 0, /* OpenXR when a runtime and headset are there, else the demo */
    APP_INPUT_OPENXR,   /* OpenXR or an error */
    APP_INPUT_REPLAY,   /* a stream file */
    APP_INPUT_DEMO,     /* the bundled demo */
    APP_INPUT_VMC,      /* VMC protocol input (--vmc-in) */
};

/* One OSC output (--vmc, --vrchat-osc). */
struct app_osc_option {
    bool enabled;
    char host[OSC_HOST_MAX];
    int port;
};

struct app_options {
    enum app_input input;
    const char *replay_path; /* --replay: a stream file, or a motion capture clip (.bvh) */
    uint32_t replay_trackers; /* --trackers SETUP: the body trackers made from a clip */
    bool replay_trackers_given;
    bool fast;               /* --fast: replay and demo as fast as possible */
    bool loop;               /* --loop: replay starts again at the end */

    /* The avatar: the default humanoid, a BVH skeleton or a skeleton file, fitted to a
     * height and arm span (0 = the avatar's own; the default humanoid gets 1.75 m). */
    const char *avatar_bvh;    /* --avatar */
    const char *avatar_model;  /* --avatar FILE.vrm|.glb|.gltf: a skinned avatar */
    bool show_figure;          /* --figure: the capsule figure over the skinned avatar */
    const char *bone_map_path; /* --bone-map: the avatar's bones by node name, or NULL */
    bool print_rig;            /* --print-rig: print the avatar's bones as found, exit */
    const char *skeleton_json; /* --skeleton */
    double unit_scale;         /* --unit-scale for --avatar: metres per BVH unit, 0 = guess */
    double height_m;           /* --height, 0 when not given */
    double arm_span_m;         /* --arm-span, 0 when not given */
    const char *body_mode;     /* --body procedural|prior (NULL: prior when its model loads) */
    const char *prior_path;    /* --prior MODEL (NULL: PR_DEFAULT_MODEL) */

    struct app_osc_option vmc;    /* --vmc [HOST:PORT] */
    struct app_osc_option vrchat; /* --vrchat-osc [HOST:PORT] */
    const char *record_path;      /* --record */
    const char *config_path;      /* --config: the body's settings, NULL = config/body.json */
    struct osc_vmc_in_desc vmc_in; /* --vmc-in [PORT], --vmc-role SERIAL=ROLE */

    long frames;                 /* --frames: stop after this many, 0 = until the end */
    double idle_exit_s;          /* --idle-exit: stop after a live source's silence, 0 = never
                                    (with --frames: APP_IDLE_EXIT_DEFAULT_S) */
    const char *screenshot_path; /* --screenshot: the window's image at the end */
    int camera;                  /* --camera: enum render_camera to start with */
    bool no_window;              /* --no-window */

    struct flt_set faults; /* --fault (repeatable), --fault-seed: put into every frame */

    /* --compare A,B: two avatars side by side, each item a tracker setup, a body or a prior
     * model file (app_lane_spec_parse). */
    bool compare_given;
    bool no_ghost; /* --no-ghost: the ghost of a replayed clip's truth starts hidden */
    char compare[2][1024];

    bool print_config; /* --print-config */
    bool show_help;    /* --help */
    bool show_version; /* --version */
    int verbosity;     /* -1 quiet, 0 normal, 1 verbose */
};

/* Parses the live program's options from argv[first..argc). On a bad option returns
 * EM_ERROR_INVALID_ARGUMENT with a message naming it and what was expected (the program
 * exits with APP_EXIT_USAGE). */
enum em_result app_options_parse(int argc, char **argv, int first, struct app_options *out_options,
                                 struct em_error *err);

/* True when the options run the program's main job: tracking chosen automatically and no
 * screenshot asked for (the case that falls back to the demo and runs without a display). */
bool app_options_is_main_job(const struct app_options *options);

/* The --help text. */
void app_options_print_help(FILE *out);

/* The name of an input mode ("auto", "openxr", "replay", "demo"). */
const char *app_input_name(enum app_input input);

#endif
