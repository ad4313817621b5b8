/*
 * embody mocap2stream (app_commands.h): a CMU-style BVH clip in, the 3-point stream of
 * PROTOCOL section 2 out (st_mocap_to_stream), lengths scaled by the guessed unit or
 * --unit-scale.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/app_args.h"
#include "app/app_commands.h"
#include "app/app_options.h"
#include "embody/stream.h"

#define HELP_HINT "embody mocap2stream --help"

enum { OPT_OUTPUT = 1, OPT_UNIT_SCALE, OPT_QUIET, OPT_HELP, OPT_TRACKERS };

static const struct app_arg_spec k_specs[] = {
    {OPT_OUTPUT, "output", 'o', APP_ARG_VALUE},   {OPT_UNIT_SCALE, "unit-scale", 0, APP_ARG_VALUE},
    {OPT_QUIET, "quiet", 'q', APP_ARG_FLAG},      {OPT_HELP, "help", 'h', APP_ARG_FLAG},
    {OPT_TRACKERS, "trackers", 0, APP_ARG_VALUE},
};
#define SPEC_COUNT ((int)(sizeof k_specs / sizeof k_specs[0]))

static void
print_help(void)
{
    fputs("usage: embody mocap2stream CLIP.bvh [-o OUT.csv] [--unit-scale S] [--trackers SETUP]\n"
          "\n"
          "Writes the 3-point stream (head, left and right controller at 60 Hz) that a\n"
          "headset and two controllers would have reported for a motion capture clip, as\n"
          "the evaluation protocol makes it (PROTOCOL.md section 2). The clip needs the\n"
          "joints Head, LeftHand, LeftFingerBase, RightHand and RightFingerBase (CMU).\n"
          "\n"
          "  -o, --output OUT.csv   where to write (default, or -: standard output)\n"
          "  --unit-scale S         metres per BVH unit (default: guessed from the\n"
          "                         skeleton's size; CMU clips: 0.056444)\n"
          "  --trackers SETUP       add body trackers (PROTOCOL.md section 2b): 3 (none,\n"
          "                         the default), 4 (pelvis), 6 (+ feet), 8 (+ knees),\n"
          "                         11 (+ chest and elbows), or a list such as\n"
          "                         pelvis,left_foot,right_foot\n"
          "  -q, --quiet            no summary line\n"
          "  -h, --help             this help\n",
          stdout);
}

/* Copies the file at `path` to stdout. */
static enum em_result
copy_to_stdout(const char *path, struct em_error *err)
{
    FILE *in = fopen(path, "rb");
    if (!in)
        return em_fail(err, EM_ERROR_IO, "%s: cannot open: %s", path, strerror(errno));
    char buf[65536];
    size_t n;
    bool ok = true;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0)
        ok = fwrite(buf, 1, n, stdout) == n;
    fclose(in);
    if (!ok || fflush(stdout) != 0)
        return em_fail(err, EM_ERROR_IO, "standard output: write error: %s", strerror(errno));
    return EM_OK;
}

/* Saves through a temporary file, so that the writer (which takes a path) can be used
 * and standard output is never truncated or reopened. */
static enum em_result
save_to_stdout(const struct st_stream *stream, struct em_error *err)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/embody-stream-XXXXXX", dir && dir[0] ? dir : "/tmp");
    const int fd = mkstemp(path);
    if (fd < 0)
        return em_fail(err, EM_ERROR_IO, "cannot create a temporary file in %s: %s",
                       dir && dir[0] ? dir : "/tmp", strerror(errno));
    close(fd);
    enum em_result r = st_stream_save(path, stream, err);
    if (r == EM_OK)
        r = copy_to_stdout(path, err);
    remove(path);
    return r;
}

struct mocap_args {
    const char *clip;
    const char *output;
    double unit_scale;
    uint32_t trackers;
    bool quiet;
    bool help;
};

static enum em_result
apply(void *context, int id, const char *name, const char *value, struct em_error *err)
{
    struct mocap_args *a = context;
    switch (id) {
    case 0:
        if (a->clip)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "one clip at a time: \"%s\" and \"%s\" (see %s)", a->clip, value,
                           HELP_HINT);
        a->clip = value;
        return EM_OK;
    case OPT_OUTPUT: a->output = value; return EM_OK;
    case OPT_UNIT_SCALE:
        return app_parse_number(name, value, APP_UNIT_SCALE_MIN, APP_UNIT_SCALE_MAX,
                                "metres per BVH unit", &a->unit_scale, err);
    case OPT_QUIET: a->quiet = true; return EM_OK;
    case OPT_TRACKERS: {
        struct em_error why = {{0}};
        const enum em_result r = st_tracker_setup_parse(value, &a->trackers, &why);
        if (r != EM_OK)
            em_fail(err, r, "--trackers: %s (see %s)", why.message, HELP_HINT);
        return r;
    }
    default: a->help = true; return EM_OK;
    }
}

static enum em_result
parse(int argc, char **argv, struct mocap_args *a, struct em_error *err)
{
    memset(a, 0, sizeof *a);
    const enum em_result r =
        app_args_parse(argc, argv, 1, k_specs, SPEC_COUNT, HELP_HINT, apply, a, err);
    if (r != EM_OK)
        return r;
    if (a->help)
        return EM_OK;
    if (!a->clip)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "expected a clip: CLIP.bvh (see %s)",
                       HELP_HINT);
    if (!app_has_suffix(a->clip, ".bvh"))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "expected a BVH clip (CLIP.bvh), got \"%s\"",
                       a->clip);
    return EM_OK;
}

int
app_cmd_mocap2stream(int argc, char **argv)
{
    struct mocap_args a;
    struct em_error err = {{0}};
    if (parse(argc, argv, &a, &err) != EM_OK) {
        fprintf(stderr, "embody mocap2stream: error: %s\n", err.message);
        return APP_EXIT_USAGE;
    }
    if (a.help) {
        print_help();
        return APP_EXIT_OK;
    }
    const bool to_stdout = !a.output || strcmp(a.output, "-") == 0;
    struct st_bvh bvh;
    struct st_stream stream = {0};
    enum em_result r = app_check_readable("clip", a.clip, &err);
    if (r == EM_OK && !to_stdout)
        r = app_check_writable("-o", a.output, &err);
    if (r == EM_OK && !to_stdout)
        r = app_check_not_input("-o", a.output, &(struct app_input_file){"the clip", a.clip}, 1,
                                &err);
    if (r == EM_OK)
        r = st_bvh_load(a.clip, &bvh, &err);
    if (r != EM_OK) {
        fprintf(stderr, "embody mocap2stream: error: %s\n", err.message);
        return APP_EXIT_USAGE;
    }
    const double scale = a.unit_scale > 0.0 ? a.unit_scale : st_bvh_guess_unit_scale(&bvh);
    r = st_mocap_to_stream_trackers(&bvh, scale, a.trackers, a.clip, &stream, &err);
    st_bvh_fini(&bvh);
    if (r != EM_OK) {
        fprintf(stderr, "embody mocap2stream: error: %s\n", err.message);
        return APP_EXIT_USAGE;
    }
    r = to_stdout ? save_to_stdout(&stream, &err) : st_stream_save(a.output, &stream, &err);
    const int frames = stream.frame_count;
    st_stream_fini(&stream);
    if (r != EM_OK) {
        fprintf(stderr, "embody mocap2stream: error: %s%s\n", to_stdout ? "" : "-o: ", err.message);
        return APP_EXIT_FAILURE;
    }
    if (!a.quiet)
        fprintf(stderr, "embody mocap2stream: %d frames from %s (%g m per unit%s) to %s\n", frames,
                a.clip, scale, a.unit_scale > 0.0 ? "" : ", guessed",
                to_stdout ? "standard output" : a.output);
    return APP_EXIT_OK;
}
