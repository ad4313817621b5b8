/*
 * embody solve (app_commands.h): every row of a 3-point stream through the body, as fast
 * as possible, and the body's motion out as BVH (PROTOCOL section 3): one frame per row,
 * Frame Time the stream's period, VRM joint names, metres, the stream's world frame.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app/app_args.h"
#include "app/app_avatar.h"
#include "app/app_commands.h"
#include "app/app_options.h"
#include "embody/body.h"
#include "embody/stream.h"
#include "embody/prior.h"
#include "util/u_log.h"
#include "util/u_time.h"

#define HELP_HINT "embody solve --help"
#define PROGRESS_INTERVAL_NS 1000000000LL
#define SINGLE_FRAME_PERIOD_S (1.0 / 60.0)

enum {
    OPT_OUTPUT = 1,
    OPT_AVATAR,
    OPT_HEIGHT,
    OPT_ARM_SPAN,
    OPT_UNIT_SCALE,
    OPT_QUIET,
    OPT_VERBOSE,
    OPT_HELP,
    OPT_CONFIG,
    OPT_BODY,
    OPT_PRIOR,
};

static const struct app_arg_spec k_specs[] = {
    {OPT_OUTPUT, "output", 'o', APP_ARG_VALUE},
    {OPT_AVATAR, "avatar", 0, APP_ARG_VALUE},
    {OPT_HEIGHT, "height", 0, APP_ARG_VALUE},
    {OPT_ARM_SPAN, "arm-span", 0, APP_ARG_VALUE},
    {OPT_UNIT_SCALE, "unit-scale", 0, APP_ARG_VALUE},
    {OPT_QUIET, "quiet", 'q', APP_ARG_FLAG},
    {OPT_VERBOSE, "verbose", 'v', APP_ARG_FLAG},
    {OPT_HELP, "help", 'h', APP_ARG_FLAG},
    {OPT_CONFIG, "config", 0, APP_ARG_VALUE},
    {OPT_BODY, "body", 0, APP_ARG_VALUE},
    {OPT_PRIOR, "prior", 0, APP_ARG_VALUE},
};
#define SPEC_COUNT ((int)(sizeof k_specs / sizeof k_specs[0]))

/* Every default and range named here is the constant the code uses
 * (tests/app/test_app_help.c checks them). */
static void
print_help(void)
{
    printf("usage: embody solve STREAM.csv -o OUT.bvh [--avatar CLIP.bvh | --height M]\n"
          "\n"
          "Reconstructs the full body for every row of a 3-point stream and writes its\n"
          "motion as BVH: one frame per row, Frame Time = the stream's period, joints named\n"
          "with the VRM humanoid bone names, lengths in metres (PROTOCOL.md section 3).\n"
          "\n"
          "  -o, --output OUT.bvh   the BVH file to write\n"
          "  --avatar CLIP.bvh      known body: the avatar from a BVH skeleton (its\n"
          "                         HIERARCHY only, never its motion)\n"
          "  --height M             height only: the default humanoid fitted to M metres\n"
          "                         (%.1f to %.1f; without it and --avatar, the height is\n"
          "                         estimated from where the stream's head is held still)\n"
          "  --arm-span M           also fit the arm span (%.1f to %.1f m)\n"
          "  --unit-scale S         metres per unit of the --avatar file (default: guessed)\n"
          "  --config FILE.json     the body's settings (default: %s)\n"
          "  --body MODE            legs and pelvis from the learned prior (prior, the\n"
          "                         default, as the program) or the procedural estimate\n"
          "                         (procedural), to compare them\n"
          "  --prior MODEL          the prior's model file (default\n"
          "                         %s)\n"
          "  -q, --quiet            no progress and no summary\n"
          "  -v, --verbose          more messages (the model and settings files read)\n"
          "  -h, --help             this help\n",
          APP_HEIGHT_MIN_M, APP_HEIGHT_MAX_M, APP_ARM_SPAN_MIN_M, APP_ARM_SPAN_MAX_M,
          APP_DEFAULT_BODY_SETTINGS, PR_DEFAULT_MODEL);
}

struct solve_args {
    const char *stream;
    const char *output;
    const char *avatar;
    const char *config;
    const char *body_mode; /* --body: "prior" or "procedural" (NULL: prior) */
    const char *prior_path;
    double height_m;
    double arm_span_m;
    double unit_scale;
    bool quiet;
    bool verbose;
    bool help;
};

static enum em_result
apply(void *context, int id, const char *name, const char *value, struct em_error *err)
{
    struct solve_args *a = context;
    switch (id) {
    case 0:
        if (a->stream)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "one stream at a time: \"%s\" and \"%s\" (see %s)", a->stream, value,
                           HELP_HINT);
        a->stream = value;
        return EM_OK;
    case OPT_OUTPUT: a->output = value; return EM_OK;
    case OPT_AVATAR: a->avatar = value; return EM_OK;
    case OPT_HEIGHT:
        return app_parse_metres(name, value, APP_HEIGHT_MIN_M, APP_HEIGHT_MAX_M,
                                "a standing height", &a->height_m, err);
    case OPT_ARM_SPAN:
        return app_parse_metres(name, value, APP_ARM_SPAN_MIN_M, APP_ARM_SPAN_MAX_M,
                                "an arm span", &a->arm_span_m, err);
    case OPT_UNIT_SCALE:
        return app_parse_number(name, value, APP_UNIT_SCALE_MIN, APP_UNIT_SCALE_MAX,
                                "metres per BVH unit", &a->unit_scale, err);
    case OPT_QUIET: a->quiet = true; return EM_OK;
    case OPT_VERBOSE: a->verbose = true; return EM_OK;
    case OPT_CONFIG: a->config = value; return EM_OK;
    case OPT_BODY:
        if (strcmp(value, "procedural") != 0 && strcmp(value, "prior") != 0)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "%s: expected procedural or prior, got \"%s\"", name, value);
        a->body_mode = value;
        return EM_OK;
    case OPT_PRIOR: a->prior_path = value; return EM_OK;
    default: a->help = true; return EM_OK;
    }
}

static enum em_result
check(const struct solve_args *a, struct em_error *err)
{
    if (!a->stream)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "expected a stream: STREAM.csv (see %s)",
                       HELP_HINT);
    if (!a->output)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "-o OUT.bvh: expected the BVH file to write (see %s)", HELP_HINT);
    if (!app_has_suffix(a->output, ".bvh"))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "-o: expected a .bvh file name, got \"%s\"",
                       a->output);
    if (a->avatar && a->height_m > 0.0)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--avatar and --height: choose one (the known body has its own height)");
    if (a->avatar && !app_has_suffix(a->avatar, ".bvh"))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--avatar: expected a BVH file (CLIP.bvh), got \"%s\"", a->avatar);
    if (a->unit_scale > 0.0 && !a->avatar)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "--unit-scale: only with --avatar");
    return EM_OK;
}

static enum em_result
parse(int argc, char **argv, struct solve_args *a, struct em_error *err)
{
    memset(a, 0, sizeof *a);
    const enum em_result r =
        app_args_parse(argc, argv, 1, k_specs, SPEC_COUNT, HELP_HINT, apply, a, err);
    if (r != EM_OK)
        return r;
    return a->help ? EM_OK : check(a, err);
}

/* The stream's period: its mean frame interval (a one-row stream: 60 Hz). */
static double
stream_period_s(const struct st_stream *s)
{
    if (s->frame_count < 2)
        return SINGLE_FRAME_PERIOD_S;
    return (s->frames[s->frame_count - 1].time_s - s->frames[0].time_s) /
           (double)(s->frame_count - 1);
}

/* A progress line at most once a second, for long files; on a terminal it rewrites
 * itself. */
struct progress {
    bool enabled;
    bool tty;
    bool printed;
    int64_t next_ns;
};

static void
progress_show(struct progress *p, int done, int total)
{
    if (!p->enabled)
        return;
    const int64_t now = u_time_now_ns();
    if (now < p->next_ns)
        return;
    p->next_ns = now + PROGRESS_INTERVAL_NS;
    fprintf(stderr, "%sembody solve: %d / %d frames (%d%%)%s", p->tty ? "\r" : "", done, total,
            (int)(100.0 * done / total), p->tty ? "" : "\n");
    p->printed = true;
}

static void
progress_end(struct progress *p)
{
    if (p->enabled && p->tty && p->printed)
        fputc('\n', stderr);
}

/* Solves every frame into the writer. */
static enum em_result
solve_all(const struct solve_args *a, const struct st_stream *stream, struct body *body,
          struct st_bvh_writer *writer, double *out_update_s, struct em_error *err)
{
    struct progress progress = {
        .enabled = !a->quiet,
        .tty = isatty(STDERR_FILENO) != 0,
        .next_ns = u_time_now_ns() + PROGRESS_INTERVAL_NS,
    };
    int64_t update_ns = 0;
    for (int i = 0; i < stream->frame_count; ++i) {
        const int64_t t0 = u_time_now_ns();
        body_update(body, &stream->frames[i]);
        update_ns += u_time_now_ns() - t0;
        const enum em_result r = st_bvh_writer_write(writer, body_pose(body), err);
        if (r != EM_OK)
            return r;
        progress_show(&progress, i + 1, stream->frame_count);
    }
    progress_end(&progress);
    *out_update_s = (double)update_ns * 1e-9;
    return EM_OK;
}

static int
fail(const char *message, int code)
{
    fprintf(stderr, "embody solve: error: %s\n", message);
    return code;
}

int
app_cmd_solve(int argc, char **argv)
{
    struct solve_args a;
    struct em_error err = {{0}};
    if (parse(argc, argv, &a, &err) != EM_OK)
        return fail(err.message, APP_EXIT_USAGE);
    if (a.help) {
        print_help();
        return APP_EXIT_OK;
    }
    u_log_set_level(a.verbose ? U_LOG_DEBUG : (a.quiet ? U_LOG_WARN : U_LOG_INFO));
    const struct app_input_file inputs[] = {
        {"the stream", a.stream}, {"the avatar", a.avatar}, {"the settings", a.config}};
    if (app_check_not_input("-o", a.output, inputs, 3, &err) != EM_OK)
        return fail(err.message, APP_EXIT_USAGE);
    struct st_stream stream = {0};
    if (app_check_readable("stream", a.stream, &err) != EM_OK ||
        st_stream_load(a.stream, &stream, &err) != EM_OK)
        return fail(err.message, APP_EXIT_USAGE);
    if (app_check_writable("-o", a.output, &err) != EM_OK) {
        st_stream_fini(&stream);
        return fail(err.message, APP_EXIT_USAGE);
    }

    const struct app_avatar_desc avatar_desc = {
        .bvh_path = a.avatar,
        .unit_scale = a.unit_scale,
        .height_m = a.height_m,
        .arm_span_m = a.arm_span_m,
        .config_path = a.config,
        .body_mode = a.body_mode,
        .prior_path = a.prior_path,
        .height_stream = a.avatar || a.height_m > 0.0 ? NULL : a.stream,
    };
    struct app_avatar avatar;
    struct body *body = NULL;
    if (app_avatar_create_body(&avatar_desc, &avatar, &body, &err) != EM_OK) {
        st_stream_fini(&stream);
        return fail(err.message, APP_EXIT_USAGE);
    }
    if (!a.quiet && !a.avatar && a.height_m <= 0.0)
        fprintf(stderr, "embody solve: height %.2f m: %s\n", (double)app_avatar_height_m(&avatar),
                avatar.height_source);
    /* The writer keeps the skeleton: a copy of the fitted one, which stays put. */
    struct sk_skeleton skeleton = {0};
    struct st_bvh_writer writer = {0};
    double update_s = 0.0;
    enum em_result r = sk_skeleton_copy(body_skeleton(body), &skeleton) == EM_OK
                           ? EM_OK
                           : em_fail(&err, EM_ERROR_OUT_OF_MEMORY, "out of memory");
    if (r == EM_OK)
        r = st_bvh_writer_open(a.output, &skeleton, stream_period_s(&stream), &writer, &err);
    if (r == EM_OK)
        r = solve_all(&a, &stream, body, &writer, &update_s, &err);
    if (r == EM_OK)
        r = st_bvh_writer_close(&writer, &err);
    else
        st_bvh_writer_abort(&writer); /* what was at -o stays as it was */
    const int frames = stream.frame_count;
    char body_name[APP_PATH_MAX + 32];
    if (avatar.has_prior)
        snprintf(body_name, sizeof body_name, "learned prior %s", avatar.prior_path);
    else
        snprintf(body_name, sizeof body_name, "procedural");
    sk_skeleton_fini(&skeleton);
    body_destroy(&body);
    app_avatar_fini(&avatar);
    st_stream_fini(&stream);
    if (r != EM_OK)
        return fail(err.message, APP_EXIT_FAILURE);
    if (!a.quiet)
        fprintf(stderr,
                "embody solve: %d frames from %s to %s (avatar: %s, %s; body: %s); body "
                "update %.1f µs per frame\n",
                frames, a.stream, a.output, avatar.path[0] ? avatar.path : "-",
                a.avatar ? "known body" : "height only", body_name,
                1e6 * update_s / (double)frames);
    return APP_EXIT_OK;
}
