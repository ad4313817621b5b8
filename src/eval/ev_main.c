/*
 * `embody eval`: the command line of the evaluation. Parses its own options strictly,
 * runs the whole protocol over a folder of clips with progress on stderr, prints the
 * tables on stdout and writes the JSON copy. The exit status says whether every clip ran
 * and the regression bound (if given) held.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "embody/body.h"
#include "eval/eval.h"
#include "embody/prior.h"
#include "ev_internal.h"
#include "util/u_file.h"
#include "util/u_text.h"

#define MAX_FRAME_LIMIT 100000000L
#define MAX_BOUND_CM 1000.0

void
ev_print_usage(FILE *out)
{
    fprintf(out,
            "usage: embody eval [DIR] [options]\n"
            "\n"
            "Runs the 3-point evaluation protocol (docs/PROTOCOL.md in the repository, a\n"
            "copy of ../shared/eval/PROTOCOL.md) over every\n"
            "*.bvh clip in DIR: the body is given only the headset and controller poses made\n"
            "from each clip and its joints are compared with the true ones. Prints a table\n"
            "per clip and mode, the means over clips, a line per motion category (from\n"
            "DIR/MANIFEST.tsv), the time of body_update, the targets met and those still\n"
            "open.\n"
            "\n"
            "  DIR               folder of clips (default: ../shared/mocap beside the source\n"
            "                    tree, or the repository's tests/data/mocap without it)\n"
            "  --json PATH       write the figures as JSON to PATH (default eval.json in the\n"
            "                    current folder, its full path printed; - for none)\n"
            "  --mode MODE       known (the clip's own skeleton), height (default proportions\n"
            "                    fitted to the clip's height) or both (default)\n"
            "  --frames N        score only the first N rows (60 Hz) of each clip (N >= 4)\n"
            "  --max-mpjpe CM    exit with status 1 when the known-body mean MPJPE is above CM\n"
            "  --trackers SETUP  body trackers besides head and hands (PROTOCOL.md 2b): 3\n"
            "                    (none, default), 4 (pelvis), 6 (+ feet), 8 (+ knees), 11 (+\n"
            "                    chest and elbows), a list (pelvis,left_foot), or all: one\n"
            "                    row per named setup with the targets\n"
            "  --body BODY       procedural, prior (the learned body-pose prior) or both side\n"
            "                    by side (default; procedural alone when no model loads)\n"
            "  --prior MODEL     the prior's model file (default %s)\n"
            "  --validation DIR  where the model's held-out subjects' clips are (default\n"
            "                    ../shared/mocap-train; - for none)\n"
            "  --subjects LIST   only clips of these people: CMU subjects (\"03,09\"), HDM05\n"
            "                    actors (\"bd\") or LAB:PERSON (\"hdm05:bd\")\n"
            "  --fault F         put a tracker's fault into every stream (repeatable), F =\n"
            "                    KIND:DEVICE:AMOUNT: drift:D:DEG_PER_MIN, noise:D:MM,\n"
            "                    latency:D:MS, dropout:D:SHARE (0.1, 10%%) or dropout:D:FROM-TOs,\n"
            "                    offset:D:CM, turn:D:DEG, swap:PAIR; D a device (head, left,\n"
            "                    right, pelvis, left_foot, ...) or hands, feet, knees, elbows,\n"
            "                    trackers, all\n"
            "  --seed N          the faults' random seed (default 0)\n"
            "  --plot DIR        draw PNG figures into DIR (made if missing): each clip's\n"
            "                    error over time per joint group with contacts and posture,\n"
            "                    MPJPE bars per category (per setup with --trackers all), the\n"
            "                    fault table as a heat map (--fault-table)\n"
            "  --postures        the synthetic postures (lying, sitting on the floor, kneeling,\n"
            "                    a chair, a squat) through the default humanoid, one table per\n"
            "                    body (--body); no clips are read\n"
            "  --transitions     the clips of DIR named as transitions (lieDown, depositFloor,\n"
            "                    squat, kick) and jogs, frame by frame: head and hands against their\n"
            "                    devices, the floor, jitter (known body unless --mode height)\n"
            "  --stages          per joint group the network predicts (hips, knees, ankles,\n"
            "                    toes, neck), its raw output against the truth next to the\n"
            "                    body's final joints (after fusion and the solve), same rows,\n"
            "                    one table per mode; --json PATH writes it too (none without)\n"
            "  --without STAGES  the body with these stages after the network switched off, to\n"
            "                    measure what each costs (docs/accuracy.md): a list of\n"
            "                    smoothing, filters, planting, reach, floor, or all\n"
            "  --fault-table     every named setup x the typical faults, one table, and the\n"
            "                    graceful-degradation checks\n"
            "  -q, --quiet       no progress on stderr\n"
            "  -h, --help        this text\n"
            "\n"
            "Exit status: 0 when every clip ran, every file was written and the bound held,\n"
            "whatever the open targets (aims not reached yet, listed under \"Open\n"
            "targets\"); 1 when a clip, MANIFEST.tsv or a file written failed, or\n"
            "--max-mpjpe was exceeded; 2 for bad options, no clips or a --prior file that\n"
            "cannot be opened.\n",
            PR_DEFAULT_MODEL);
}

/* ---- Options ---- */

/* An option's effect, given its value (NULL for a flag). */
typedef enum em_result (*option_apply)(const char *name, const char *value,
                                       struct ev_options *out, bool *out_help,
                                       struct em_error *err);

struct option_spec {
    const char *name;
    const char *short_name; /* or NULL */
    const char *expected;   /* what its value is; NULL: a flag, which takes none */
    bool once;              /* given more than once is an error */
    option_apply apply;
};

static enum em_result
parse_mode(const char *v, unsigned *out, struct em_error *err)
{
    if (strcmp(v, "known") == 0)
        *out = EV_MODE_KNOWN_BODY;
    else if (strcmp(v, "height") == 0)
        *out = EV_MODE_HEIGHT_ONLY;
    else if (strcmp(v, "both") == 0)
        *out = EV_MODE_BOTH;
    else
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--mode: expected known, height or both, got \"%s\"", v);
    return EM_OK;
}

static enum em_result
parse_frames(const char *v, int *out, struct em_error *err)
{
    long n = 0;
    if (!u_parse_int(v, 4, MAX_FRAME_LIMIT, &n))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--frames: expected a whole number of rows per clip from 4 to %ld, "
                       "got \"%s\"",
                       MAX_FRAME_LIMIT, v);
    *out = (int)n;
    return EM_OK;
}

static enum em_result
parse_bound(const char *v, double *out, struct em_error *err)
{
    double cm = 0.0;
    if (!u_parse_double(v, &cm) || !(cm > 0.0) || cm > MAX_BOUND_CM)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--max-mpjpe: expected a number of centimetres above 0 and at most %g, "
                       "got \"%s\"",
                       MAX_BOUND_CM, v);
    *out = cm;
    return EM_OK;
}

/* --without: names of enum body_stage_flags, comma-separated, or "all". */
static enum em_result
parse_stages_off(const char *v, unsigned *out, struct em_error *err)
{
    *out = 0;
    if (strcmp(v, "all") == 0) {
        *out = (unsigned)BODY_STAGE_ALL;
        return EM_OK;
    }
    for (const char *p = v;;) {
        const size_t len = strcspn(p, ",");
        unsigned stage = 0;
        for (int i = 0; i < BODY_STAGE_COUNT && !stage; ++i) {
            const char *name = body_stage_name(1u << i);
            if (strlen(name) == len && strncmp(p, name, len) == 0)
                stage = 1u << i;
        }
        if (!stage)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "--without: expected smoothing, filters, planting, reach, floor "
                           "(a comma-separated list) or all, got \"%.*s\"",
                           (int)len, p);
        *out |= stage;
        if (!p[len])
            return EM_OK;
        p += len + 1;
    }
}

static enum em_result
apply_help(const char *name, const char *v, struct ev_options *out, bool *out_help,
           struct em_error *err)
{
    (void)name, (void)v, (void)out, (void)err;
    *out_help = true;
    return EM_OK;
}

/* A flag that sets one field of the options: --quiet, --postures, --transitions,
 * --stages, --fault-table. */
static enum em_result
apply_flag(const char *name, const char *v, struct ev_options *out, bool *out_help,
           struct em_error *err)
{
    (void)v, (void)out_help, (void)err;
    if (strcmp(name, "--quiet") == 0)
        out->quiet = true;
    else if (strcmp(name, "--postures") == 0)
        out->postures = true;
    else if (strcmp(name, "--transitions") == 0)
        out->transitions = true;
    else if (strcmp(name, "--stages") == 0)
        out->stages = true;
    else
        out->fault_table = true;
    return EM_OK;
}

/* A path that may not be empty: --json (or - for none), --plot. */
static enum em_result
apply_path(const char *name, const char *v, struct ev_options *out, bool *out_help,
           struct em_error *err)
{
    (void)out_help;
    const bool json = strcmp(name, "--json") == 0;
    if (!v[0])
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: expected %s, got an empty value",
                       name, json ? "a file path (or - for none)" : "a folder");
    if (json)
        out->json_path = v;
    else
        out->plot_dir = v;
    return EM_OK;
}

static enum em_result
apply_number(const char *name, const char *v, struct ev_options *out, bool *out_help,
             struct em_error *err)
{
    (void)out_help;
    if (strcmp(name, "--mode") == 0)
        return parse_mode(v, &out->modes, err);
    if (strcmp(name, "--frames") == 0)
        return parse_frames(v, &out->frame_limit, err);
    if (strcmp(name, "--without") == 0)
        return parse_stages_off(v, &out->stages_off, err);
    return parse_bound(v, &out->max_mean_mpjpe_cm, err);
}

static enum em_result
apply_trackers(const char *name, const char *v, struct ev_options *out, bool *out_help,
               struct em_error *err)
{
    (void)name, (void)out_help;
    return ev_trackers_parse(v, out, err);
}

static enum em_result
apply_fault(const char *name, const char *v, struct ev_options *out, bool *out_help,
            struct em_error *err)
{
    (void)out_help;
    return ev_faults_option(name, v, out, err);
}

static enum em_result
apply_prior(const char *name, const char *v, struct ev_options *out, bool *out_help,
            struct em_error *err)
{
    (void)out_help;
    return ev_prior_option(name, v, out, err);
}

static const struct option_spec options_table[] = {
    {"--help", "-h", NULL, false, apply_help},
    {"--quiet", "-q", NULL, true, apply_flag},
    {"--postures", NULL, NULL, false, apply_flag},
    {"--transitions", NULL, NULL, false, apply_flag},
    {"--stages", NULL, NULL, false, apply_flag},
    {"--fault-table", NULL, NULL, false, apply_flag},
    {"--json", NULL, "a file path (or - for none)", true, apply_path},
    {"--plot", NULL, "a folder", false, apply_path},
    {"--mode", NULL, "known, height or both", true, apply_number},
    {"--frames", NULL, "a number of rows", true, apply_number},
    {"--max-mpjpe", NULL, "a number of centimetres", true, apply_number},
    {"--without", NULL, "a list of stages", true, apply_number},
    {"--trackers", NULL, "a tracker setup", false, apply_trackers},
    {"--fault", NULL, "KIND:DEVICE:AMOUNT", false, apply_fault},
    {"--seed", NULL, "a whole number", false, apply_fault},
    {"--body", NULL, "a value", false, apply_prior},
    {"--prior", NULL, "a value", false, apply_prior},
    {"--validation", NULL, "a value", false, apply_prior},
    {"--subjects", NULL, "a value", false, apply_prior},
};
#define OPTION_COUNT ((int)(sizeof options_table / sizeof options_table[0]))

static int
find_option(const char *name)
{
    for (int k = 0; k < OPTION_COUNT; ++k)
        if (strcmp(name, options_table[k].name) == 0 ||
            (options_table[k].short_name && strcmp(name, options_table[k].short_name) == 0))
            return k;
    return -1;
}

/* One option at argv[*i] (which starts with '-'): "--name=value", "--name value" or a
 * flag. `seen` counts each option of the table given so far. */
static enum em_result
parse_option(int argc, char **argv, int *i, int seen[OPTION_COUNT], struct ev_options *out,
             bool *out_help, struct em_error *err)
{
    char name[64];
    const char *arg = argv[*i];
    const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
    const size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
    if (name_len >= sizeof name)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "unknown option \"%.60s...\" (see --help)",
                       arg);
    memcpy(name, arg, name_len);
    name[name_len] = '\0';
    const int k = find_option(name);
    if (k < 0)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "unknown option \"%s\" (see --help)", arg);
    const struct option_spec *spec = &options_table[k];
    const char *value = eq ? eq + 1 : NULL;
    if (!spec->expected && value)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: takes no value, got \"%s\"", name,
                       value);
    if (spec->once && seen[k]++ > 0)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: given more than once", spec->name);
    if (spec->expected && !value) {
        if (*i + 1 >= argc)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: expected %s after it", name,
                           spec->expected);
        value = argv[++*i];
    }
    return spec->apply(spec->name, value, out, out_help, err);
}

enum em_result
ev_parse_options(int argc, char **argv, struct ev_options *out, bool *out_help,
                 struct em_error *err)
{
    memset(out, 0, sizeof *out);
    *out_help = false;
    int seen[OPTION_COUNT] = {0};
    bool options_done = false;
    for (int i = 1; i < argc; ++i) {
        const char *arg = argv[i];
        if (!options_done && strcmp(arg, "--") == 0) {
            options_done = true;
            continue;
        }
        if (!options_done && arg[0] == '-' && arg[1] != '\0') {
            const enum em_result r = parse_option(argc, argv, &i, seen, out, out_help, err);
            if (r != EM_OK)
                return r;
            continue;
        }
        if (out->clip_dir)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "unexpected argument \"%s\": one clip folder is taken, and \"%s\" "
                           "was already given",
                           arg, out->clip_dir);
        if (!arg[0])
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "the clip folder is an empty string; expected a folder of *.bvh "
                           "clips");
        out->clip_dir = arg;
    }
    if (out->max_mean_mpjpe_cm > 0.0 && out->modes == EV_MODE_HEIGHT_ONLY)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--max-mpjpe: bounds the known-body mean MPJPE, which --mode height "
                       "does not run");
    return EM_OK;
}

/* ---- Progress on stderr ---- */

struct progress {
    bool tty;
};

static void
print_progress(void *user, int index, int count, const struct ev_clip_result *clip)
{
    const struct progress *p = user;
    if (!clip->ok) {
        fprintf(stderr, "%s[%d/%d] FAILED: %s\n", p->tty ? "\r\033[K" : "", index + 1, count,
                clip->error);
        return;
    }
    char scores[160] = "";
    size_t used = 0;
    for (int m = 0; m < EV_METHOD_COUNT && used < sizeof scores; ++m)
        if (clip->has[m])
            used += (size_t)snprintf(scores + used, sizeof scores - used, ", %s %.2f cm",
                                     ev_method_name((enum ev_method)m),
                                     clip->scores[m].mpjpe_cm[EV_GROUP_ALL]);
    fprintf(stderr, "%s[%d/%d] %s: %d frames, %d rows%s%s", p->tty ? "\r\033[K" : "",
            index + 1, count, clip->file, clip->source_frames, clip->frames, scores,
            p->tty && index + 1 < count ? "" : "\n");
    fflush(stderr);
}
int
ev_main(int argc, char **argv)
{
    return ev_main_observed(argc, argv, NULL);
}


/* A model the user names that cannot be opened is a mistake in the command, not a model to
 * fall back from: false (said on stderr). */
static bool
named_model_opens(const struct ev_options *options)
{
    const bool procedural = options->body_mode && strcmp(options->body_mode, "procedural") == 0;
    if (!options->prior_path || procedural)
        return true;
    FILE *f = fopen(options->prior_path, "rb");
    if (!f) {
        fprintf(stderr, "embody eval: --prior: %s: cannot open: %s\n", options->prior_path,
                strerror(errno));
        return false;
    }
    fclose(f);
    return true;
}

/* The JSON copy of `report`, unless --json -: the exit status it adds (0, 1 for a write
 * that failed, 2 for a path that is one of the inputs). */
static int
write_json_copy(const struct ev_report *report)
{
    const char *json = report->options.json_path;
    if (strcmp(json, "-") == 0)
        return 0;
    struct em_error err = {{0}};
    if (ev_json_is_an_input(report, json, &err)) {
        fprintf(stderr, "embody eval: %s\n", err.message);
        return 2;
    }
    if (ev_report_write_json(report, json, &err) != EM_OK) {
        fprintf(stderr, "embody eval: %s\n", err.message);
        return 1;
    }
    char where[4096];
    ev_written_where(json, where, sizeof where);
    printf("JSON copy: %s\n", where);
    return 0;
}

/* The protocol over the clips of the folder, the procedural body's tables (the prior's
 * side-by-side run is ev_prior_main): the exit status. */
static int
run_clips(struct ev_options *options)
{
    struct em_error err = {{0}};
    struct progress progress = {.tty = isatty(fileno(stderr)) != 0};
    if (!options->quiet) {
        options->progress = print_progress;
        options->progress_user = &progress;
    }
    struct ev_report report;
    if (ev_run(options, &report, &err) != EM_OK) {
        fprintf(stderr, "embody eval: %s\n", err.message);
        ev_report_fini(&report);
        return 2;
    }
    printf("# Body: the procedural estimate\n");
    ev_report_print(&report, stdout);
    fflush(stdout);
    int status = report.failed_count > 0 || report.manifest_error[0] ? 1 : 0;
    if (!ev_report_observe(&report))
        status = 1;
    if (report.failed_count > 0)
        fprintf(stderr, "embody eval: %d of %d clips failed (listed under Failures)\n",
                report.failed_count, report.clip_count);
    if (report.manifest_error[0])
        fprintf(stderr, "embody eval: %s\n", report.manifest_error);
    const int json_status = write_json_copy(&report);
    if (json_status > status)
        status = json_status;
    if (ev_print_bound_check(&report, ""))
        status = status > 1 ? status : 1;
    ev_report_fini(&report);
    return status;
}

int
ev_main_observed(int argc, char **argv, const struct ev_observer *observer)
{
    struct ev_options options;
    bool help = false;
    struct em_error err = {{0}};
    enum em_result parsed = ev_parse_options(argc, argv, &options, &help, &err);
    if (parsed == EM_OK && options.plot_dir && !observer)
        parsed = em_fail(&err, EM_ERROR_UNSUPPORTED,
                         "--plot: this program was built without the plots");
    options.observer = observer;
    if (parsed != EM_OK) {
        fprintf(stderr, "embody eval: %s\n", err.message);
        fprintf(stderr, "usage: embody eval [DIR] [--json PATH|-] [--mode known|height|both] "
                        "[--frames N] [--max-mpjpe CM] [--quiet] [--help]\n");
        return 2;
    }
    if (help) {
        ev_print_usage(stdout);
        return 0;
    }
    if (!named_model_opens(&options))
        return 2;
    if (options.postures)
        return ev_postures_main(&options);
    if (options.transitions)
        return ev_transitions_main(&options);
    if (options.stages)
        return ev_stages_main(&options);
    if (options.fault_table)
        return ev_faults_main(&options);
    if (ev_faults_check_setup(&options, &err) != EM_OK) {
        fprintf(stderr, "embody eval: %s\n", err.message);
        return 2;
    }
    if (options.tracker_setups)
        return ev_trackers_main(&options);
    if (options.trackers) {
        char setup[128];
        st_tracker_setup_name(options.trackers, setup, sizeof setup);
        printf("Body trackers: setup %s (PROTOCOL.md section 2b)\n", setup);
    }
    int prior_status = 0;
    if (ev_prior_main(&options, &prior_status))
        return prior_status;
    return run_clips(&options);
}
