/*
 * The program's command line, run as the real binary: bad options are rejected with a
 * message naming the option and what was expected (exit 2), bad files name the file and
 * line, help and version work, a replay runs headless, and without a runtime or a display
 * the program says so plainly and does the right thing.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "app_run.h"

#define TIMEOUT_MS 60000
#define STREAM "tests/data/streams/cmu_14_04.csv"
#define CLIP "tests/data/mocap/cmu_14_04.bvh"

/* No OpenXR runtime anywhere: the loader is pointed at a manifest that does not exist. */
#define NO_RUNTIME "XR_RUNTIME_JSON=/nonexistent/embody-no-runtime.json"

static const char *const k_no_runtime_env[] = {NO_RUNTIME, NULL};
static const char *const k_no_display_env[] = {NO_RUNTIME, "DISPLAY", "WAYLAND_DISPLAY", NULL};

/* Runs the program and expects exit code `code` and `needle` (and `needle2`, may be NULL)
 * on stderr. */
static void
expect_failure(const char *const *args, int code, const char *needle, const char *needle2)
{
    struct app_run_result r;
    app_run(args, k_no_runtime_env, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, code);
    app_run_expect_text(r.err, needle);
    if (needle2)
        app_run_expect_text(r.err, needle2);
    /* An error is one clear line, not a cascade. */
    if (app_run_count_text(r.err, "error:") != 1)
        fail_msg("expected one error line, got:\n%s", r.err);
    app_run_result_fini(&r);
}

static char g_stream[1024];
static char g_clip[1024];

static void
unknown_options_are_named(void **state)
{
    (void)state;
    expect_failure((const char *[]){"--bogus", NULL}, 2, "unknown option \"--bogus\"",
                   "embody --help");
    expect_failure((const char *[]){"--height=1.7", "-x", NULL}, 2, "unknown option \"-x\"", NULL);
    expect_failure((const char *[]){"--no-window=yes", NULL}, 2, "--no-window takes no value",
                   NULL);
    expect_failure((const char *[]){"frobnicate", NULL}, 2, "unknown command \"frobnicate\"", NULL);
    expect_failure((const char *[]){"--demo", "stray.csv", NULL}, 2,
                   "unexpected argument \"stray.csv\"", NULL);
    expect_failure((const char *[]){"solve", "--bogus", NULL}, 2, "unknown option \"--bogus\"",
                   "embody solve --help");
}

static void
missing_values_are_named(void **state)
{
    (void)state;
    expect_failure((const char *[]){"--height", NULL}, 2, "--height needs a value", NULL);
    expect_failure((const char *[]){"--replay", NULL}, 2, "--replay needs a value", NULL);
    expect_failure((const char *[]){"--demo", "--frames", NULL}, 2, "--frames needs a value", NULL);
    expect_failure((const char *[]){"solve", g_stream, "--height", "1.7", "-o", NULL}, 2,
                   "-o needs a value", NULL);
    expect_failure((const char *[]){"solve", g_stream, "--height", "1.7", NULL}, 2, "-o OUT.bvh",
                   NULL);
    expect_failure((const char *[]){"mocap2stream", NULL}, 2, "expected a clip", NULL);
}

static void
numbers_are_checked_for_form_and_range(void **state)
{
    (void)state;
    static const struct {
        const char *option, *value, *expected;
    } cases[] = {
        {"--height", "abc",
         "--height: expected a standing height in metres from 0.5 to 2.8, "
         "got \"abc\""},
        {"--height", "1.7m", "got \"1.7m\""},
        {"--height", "0.4", "from 0.5 to 2.8, got \"0.4\""},
        {"--height", "2.81", "from 0.5 to 2.8, got \"2.81\""},
        {"--height", "nan", "got \"nan\""},
        {"--height", "", "got \"\""},
        {"--arm-span", "3.5", "--arm-span: expected an arm span in metres from 0.5 to 3"},
        {"--frames", "0", "--frames: expected a frame count, a whole number from 1"},
        {"--frames", "-5", "got \"-5\""},
        {"--frames", "1.5", "got \"1.5\""},
        {"--frames", "99999999999999999999", "got \"99999999999999999999\""},
        {"--vmc", "127.0.0.1:99999", "--vmc: port \"99999\" is out of range 1-65535"},
        {"--vrchat-osc", "127.0.0.1:abc", "--vrchat-osc"},
        {"--camera", "sideways", "--camera: expected mirror, orbit, front, side or top, got "
                                 "\"sideways\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char joined[128];
        snprintf(joined, sizeof joined, "%s=%s", cases[i].option, cases[i].value);
        /* Both spellings: "--height 0.4" and "--height=0.4". */
        expect_failure((const char *[]){"--demo", cases[i].option, cases[i].value, NULL}, 2,
                       cases[i].expected, NULL);
        expect_failure((const char *[]){"--demo", joined, NULL}, 2, cases[i].expected, NULL);
    }
    expect_failure((const char *[]){"--avatar", g_clip, "--unit-scale", "0", NULL}, 2,
                   "--unit-scale: expected metres per BVH unit", NULL);
    expect_failure((const char *[]){"solve", g_stream, "-o", "x.bvh", "--height", "9", NULL}, 2,
                   "--height: expected a standing height in metres from 0.5 to 2.8", NULL);
    expect_failure((const char *[]){"mocap2stream", g_clip, "--unit-scale", "x", NULL}, 2,
                   "--unit-scale: expected metres per BVH unit", NULL);
}

static void
conflicting_options_are_refused(void **state)
{
    (void)state;
    expect_failure((const char *[]){"--demo", "--replay", g_stream, NULL}, 2,
                   "choose one of --openxr, --replay and --demo", NULL);
    expect_failure((const char *[]){"--demo", "--no-window", "--screenshot", "a.png", NULL}, 2,
                   "--screenshot: needs the window", NULL);
    expect_failure((const char *[]){"--demo", "--screenshot", "a.jpg", NULL}, 2,
                   "--screenshot: expected a PNG file name", NULL);
    expect_failure((const char *[]){"--avatar", g_clip, "--skeleton", "s.json", NULL}, 2,
                   "choose one of them", NULL);
    expect_failure((const char *[]){"--fast", NULL}, 2, "--fast: only with --replay", NULL);
    expect_failure((const char *[]){"--height", "1.7", "--height", "1.8", NULL}, 2,
                   "--height: given twice", NULL);
    expect_failure((const char *[]){"--vmc", "--vrchat-osc", ":39539", NULL}, 2,
                   "give them different ports", NULL);
    expect_failure((const char *[]){"solve", g_stream, "-o", "x.bvh", "--avatar", g_clip,
                                    "--height", "1.7", NULL},
                   2, "--avatar and --height: choose one", NULL);
}

/* Writes `text` to a scratch file and returns its path in `out`. */
static void
scratch_file(const char *tag, const char *ext, const char *text, char *out, size_t size)
{
    app_run_scratch_path(tag, ext, out, size);
    FILE *f = fopen(out, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void
bad_files_are_named_with_their_line(void **state)
{
    (void)state;
    expect_failure((const char *[]){"--replay", "/nonexistent/walk.csv", NULL}, 2,
                   "--replay: /nonexistent/walk.csv: cannot open", NULL);
    expect_failure((const char *[]){"--replay", "/dev/zero", NULL}, 2,
                   "--replay: /dev/zero: is not a regular file", NULL);
    expect_failure((const char *[]){"--replay", "/tmp", NULL}, 2, "--replay: /tmp: is a directory",
                   NULL);
    char bad_csv[1024];
    scratch_file("bad", "csv",
                 "t,head_px,head_py,head_pz,head_qx,head_qy,head_qz,head_qw,head_valid,"
                 "left_px,left_py,left_pz,left_qx,left_qy,left_qz,left_qw,left_valid,"
                 "right_px,right_py,right_pz,right_qx,right_qy,right_qz,right_qw,right_valid\n"
                 "0,0,1.6,0,0,0,0,1,1,0.3,1,0,0,0,0,1,1,-0.3,1,0,0,0,0,1,1\n"
                 "0.1,0,1.6,0,0,0,0,1,1,0.3,1,0,0,0,0,1,x,-0.3,1,0,0,0,0,1,1\n",
                 bad_csv, sizeof bad_csv);
    char csv_where[1100];
    snprintf(csv_where, sizeof csv_where, "%s:3", bad_csv);
    expect_failure((const char *[]){"--replay", bad_csv, NULL}, 2, "--replay: ", csv_where);

    expect_failure((const char *[]){"--avatar", "/nonexistent/body.bvh", NULL}, 2,
                   "--avatar: /nonexistent/body.bvh: cannot open", NULL);
    char bad_bvh[1024];
    scratch_file("bad", "bvh",
                 "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 3 Xposition Yposition "
                 "Wobble\n}\nMOTION\nFrames: 0\nFrame Time: 0.01\n",
                 bad_bvh, sizeof bad_bvh);
    char bvh_where[1100];
    snprintf(bvh_where, sizeof bvh_where, "%s:5", bad_bvh);
    expect_failure((const char *[]){"--avatar", bad_bvh, NULL}, 2, "--avatar: ", bvh_where);

    char bad_json[1024];
    scratch_file("bad", "json",
                 "{\"format\": \"embody-skeleton\", \"version\": 1,\n \"joints\": 3}\n", bad_json,
                 sizeof bad_json);
    expect_failure((const char *[]){"--skeleton", bad_json, NULL}, 2, "--skeleton: ", bad_json);

    /* Recording over the file being replayed would destroy it: refused, file untouched. */
    char copy[1024];
    scratch_file("replayed", "csv", "t,head_px\n", copy, sizeof copy);
    expect_failure((const char *[]){"--replay", copy, "--record", copy, NULL}, 2,
                   "is the same file as --replay's stream", NULL);
    size_t size = 0;
    free(app_run_read_file(copy, &size));
    assert_int_equal(size, 10);
    expect_failure((const char *[]){"--demo", "--record", "/nonexistent/dir/out.csv", NULL}, 2,
                   "--record: /nonexistent/dir/out.csv", NULL);
    expect_failure((const char *[]){"--demo", "--screenshot", "/nonexistent/dir/a.png", NULL}, 2,
                   "--screenshot: /nonexistent/dir/a.png: cannot write", NULL);
    expect_failure(
        (const char *[]){"solve", "/nonexistent/s.csv", "-o", "x.bvh", "--height", "1.7", NULL}, 2,
        "/nonexistent/s.csv: cannot open", NULL);
    expect_failure((const char *[]){"solve", bad_csv, "-o", "x.bvh", "--height", "1.7", NULL}, 2,
                   csv_where, NULL);
    expect_failure((const char *[]){"mocap2stream", bad_bvh, NULL}, 2, bvh_where, NULL);
}

static void
help_and_version_exit_zero(void **state)
{
    (void)state;
    struct app_run_result r;
    app_run((const char *[]){"--help", NULL}, NULL, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    static const char *const documented[] = {
        "usage: embody",  "--openxr",   "--replay", "--demo",       "--fast",
        "--height",       "--arm-span", "--avatar", "--skeleton",   "--vmc",
        "--vrchat-osc",   "--record",   "--frames", "--screenshot", "--no-window",
        "--print-config", "--verbose",  "--quiet",  "--version",    "mocap2stream",
        "solve",          "Keys"};
    for (size_t i = 0; i < sizeof documented / sizeof documented[0]; ++i)
        app_run_expect_text(r.out, documented[i]);
    app_run_result_fini(&r);

    static const char *const commands[][2] = {{"solve", "usage: embody solve"},
                                              {"mocap2stream", "usage: embody mocap2stream"}};
    for (int i = 0; i < 2; ++i) {
        app_run((const char *[]){commands[i][0], "--help", NULL}, NULL, TIMEOUT_MS, &r);
        app_run_expect_exit(&r, 0);
        app_run_expect_text(r.out, commands[i][1]);
        app_run_result_fini(&r);
    }
    app_run((const char *[]){"--version", NULL}, NULL, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.out, "embody 0.");
    app_run_result_fini(&r);
}

/* The value printed for `key` by --print-config, as a number. */
static double
config_number(const char *text, const char *key)
{
    const char *line = strstr(text, key);
    if (!line)
        fail_msg("no \"%s\" in:\n%s", key, text);
    const char *eq = strchr(line, '=');
    assert_non_null(eq);
    return strtod(eq + 1, NULL);
}

static void
print_config_shows_the_resolved_settings(void **state)
{
    (void)state;
    struct app_run_result r;
    app_run((const char *[]){"--print-config", "--height", "1.6", "--arm-span", "1.7", "--vmc",
                             "--replay", g_stream, NULL},
            k_no_runtime_env, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.out, "config/humanoid.json (default humanoid)");
    assert_true(fabs(config_number(r.out, "fitted height") - 1.6) < 0.002);
    assert_true(fabs(config_number(r.out, "fitted arm span") - 1.7) < 0.002);
    app_run_expect_text(r.out, "127.0.0.1:39539");
    app_run_expect_text(r.out, "filter_min_cutoff_hz");
    app_run_expect_text(r.out, "offsets.head_position_m");
    app_run_expect_text(r.out, "demo stream");
    app_run_expect_text(r.out, g_stream);
    app_run_result_fini(&r);

    /* A known body keeps its own size: fitted = own. */
    app_run((const char *[]){"--print-config", "--avatar", g_clip, NULL}, k_no_runtime_env,
            TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.out, "(BVH skeleton)");
    app_run_expect_text(r.out, "(guessed)");
    const double own = config_number(r.out, "own height");
    assert_true(own > 1.3 && own < 2.1);
    assert_true(fabs(config_number(r.out, "fitted height") - own) < 0.002);
    app_run_result_fini(&r);
}

static void
replay_runs_headless_and_exits_zero(void **state)
{
    (void)state;
    struct app_run_result r;
    app_run((const char *[]){"--frames", "30", "--no-window", "--replay", g_stream, NULL},
            k_no_runtime_env, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.out, "30 frames from replay");
    app_run_expect_text(r.out, "body update in real time (each starts cold");
    app_run_expect_text(r.out, "posture: standing");
    /* 30 frames at 60 Hz in real time: about half a second, not as fast as possible. */
    assert_true(r.seconds > 0.4);
    app_run_result_fini(&r);
    /* --fast: the summary says its updates ran back to back, as eval's do. */
    app_run((const char *[]){"--frames", "30", "--no-window", "--fast", "--replay", g_stream, NULL},
            k_no_runtime_env, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.out, "body update with frames back to back (--fast");
    app_run_result_fini(&r);
}

static void
main_job_without_a_runtime_plays_the_demo_and_says_why(void **state)
{
    (void)state;
    struct app_run_result r;
    app_run((const char *[]){"--frames", "20", "--no-window", NULL}, k_no_runtime_env, TIMEOUT_MS,
            &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.err, "no headset: no OpenXR runtime");
    app_run_expect_text(r.err, "playing the bundled demo instead");
    app_run_expect_text(r.out, "20 frames from the demo");
    app_run_expect_text(r.out, "the demo played because there is no headset");
    /* The loader's own error lines are kept out of the way. */
    assert_null(strstr(r.err, "OpenXR-Loader"));
    app_run_result_fini(&r);
}

static void
openxr_without_a_runtime_is_an_error(void **state)
{
    (void)state;
    expect_failure((const char *[]){"--openxr", "--no-window", "--frames", "5", NULL}, 1,
                   "--openxr: no OpenXR runtime", NULL);
}

static void
no_display_is_refused_plainly(void **state)
{
    (void)state;
    struct app_run_result r;
    app_run((const char *[]){"--replay", g_stream, "--frames", "5", NULL}, k_no_display_env,
            TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 2);
    app_run_expect_text(r.err, "no display: ");
    app_run_expect_text(r.err, "run under xvfb-run, or use --no-window");
    app_run_result_fini(&r);

    /* --no-window needs no display. */
    app_run((const char *[]){"--replay", g_stream, "--frames", "5", "--fast", "--no-window", NULL},
            k_no_display_env, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    app_run_result_fini(&r);
}

/* The main job on a machine without a display still runs: the demo, without a window,
 * for APP_HEADLESS_DEMO_FRAMES (600) frames in real time, then a summary. */
/* A body length given in centimetres or millimetres is refused with the metres meant, in
 * every command that takes one. */
static void
lengths_in_other_units_are_refused_with_the_metres_meant(void **state)
{
    (void)state;
    expect_failure((const char *[]){"--demo", "--height", "182", NULL}, 2,
                   "--height: a standing height is in metres: did you mean 1.82?",
                   "expected 0.5 to 2.8, got \"182\"");
    expect_failure((const char *[]){"--demo", "--arm-span=1750", NULL}, 2,
                   "--arm-span: an arm span is in metres: did you mean 1.75?", NULL);
    expect_failure((const char *[]){"solve", g_stream, "-o", "x.bvh", "--height", "170", NULL}, 2,
                   "--height: a standing height is in metres: did you mean 1.70?", NULL);
    expect_failure((const char *[]){"make-avatar", "-o", "x.vrm", "--height", "160", NULL}, 2,
                   "--height: a standing height is in metres: did you mean 1.60?", NULL);
    /* Just outside the range in metres is not another unit. */
    expect_failure((const char *[]){"--demo", "--height", "2.9", NULL}, 2,
                   "expected a standing height in metres from 0.5 to 2.8", NULL);
}

/* A --compare item that is a number but not a setup lists what an item may be, as does
 * a model file that cannot be opened. */
static void
compare_names_the_setups_it_takes(void **state)
{
    (void)state;
    expect_failure((const char *[]){"--replay", g_clip, "--no-window", "--compare", "3,99", NULL},
                   2, "--compare: 99 is not a tracker setup",
                   "each item is a tracker setup (3, 4, 6, 8 or 11), a body (prior, procedural) "
                   "or a prior model file");
    expect_failure((const char *[]){"--replay", g_clip, "--no-window", "--frames", "3",
                                    "--compare", "3,/nonexistent/model.bin", NULL},
                   2, "--compare: /nonexistent/model.bin: cannot open",
                   "(each item is a tracker setup (3, 4, 6, 8 or 11)");
}

/* Data found through a path with ".." in it (as beside build/) is printed as the plain
 * absolute path, wherever the program prints one. */
static void
data_paths_are_printed_plainly(void **state)
{
    (void)state;
    char data_dir[1200], env_data[1300], want[1300];
    app_run_source_path("tests/..", data_dir, sizeof data_dir);
    snprintf(env_data, sizeof env_data, "EMBODY_DATA_DIR=%s", data_dir);
    app_run_source_path("config/humanoid.json", want, sizeof want);
    const char *const env[] = {NO_RUNTIME, env_data, NULL};
    const char *const *runs[] = {
        (const char *[]){"--print-config", NULL},
        (const char *[]){"--demo", "--no-window", "--frames", "3", NULL},
    };
    for (int i = 0; i < 2; ++i) {
        struct app_run_result r;
        app_run(runs[i], env, TIMEOUT_MS, &r);
        app_run_expect_exit(&r, 0);
        if (strstr(r.out, "/../") || strstr(r.err, "/../"))
            fail_msg("a path with \"..\" in it:\n%s%s", r.out, r.err);
        if (i == 0)
            app_run_expect_text(r.out, want);
        else
            app_run_expect_text(r.out, "config/demo/demo.csv");
        app_run_result_fini(&r);
    }
}

static void
main_job_without_a_display_plays_the_demo_windowless(void **state)
{
    (void)state;
    struct app_run_result r;
    app_run((const char *[]){NULL}, k_no_display_env, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.err, "no display");
    app_run_expect_text(r.err, "running without the mirror window");
    app_run_expect_text(r.err, "playing the bundled demo instead");
    app_run_expect_text(r.out, "600 frames from the demo");
    app_run_expect_text(r.out, "posture: standing");
    app_run_result_fini(&r);
}

int
main(int argc, char **argv)
{
    if (!app_run_set_program_from_args(argc, argv))
        return 2;
    app_run_source_path(STREAM, g_stream, sizeof g_stream);
    app_run_source_path(CLIP, g_clip, sizeof g_clip);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unknown_options_are_named),
        cmocka_unit_test(missing_values_are_named),
        cmocka_unit_test(numbers_are_checked_for_form_and_range),
        cmocka_unit_test(conflicting_options_are_refused),
        cmocka_unit_test(bad_files_are_named_with_their_line),
        cmocka_unit_test(help_and_version_exit_zero),
        cmocka_unit_test(print_config_shows_the_resolved_settings),
        cmocka_unit_test(replay_runs_headless_and_exits_zero),
        cmocka_unit_test(main_job_without_a_runtime_plays_the_demo_and_says_why),
        cmocka_unit_test(openxr_without_a_runtime_is_an_error),
        cmocka_unit_test(no_display_is_refused_plainly),
        cmocka_unit_test(main_job_without_a_display_plays_the_demo_windowless),
        cmocka_unit_test(lengths_in_other_units_are_refused_with_the_metres_meant),
        cmocka_unit_test(compare_names_the_setups_it_takes),
        cmocka_unit_test(data_paths_are_printed_plainly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
