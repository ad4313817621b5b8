/*
 * A command line that says what it did, run as the real binary: every default a help
 * text names is the constant the code uses; a file the user names that cannot be opened
 * is an error (exit 2) in every command; reports name the body and the model file used;
 * a good avatar is confirmed without -v; options take the same forms everywhere (--vmc
 * PORT as --vmc-in PORT), and a VMC output that would feed the program's own input is
 * refused.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "app/app_options.h"
#include "app_run.h"
#include "avatar/avatar.h"
#include "osc/osc.h"
#include "embody/prior.h"

#define TIMEOUT_MS 60000
#define NO_RUNTIME "XR_RUNTIME_JSON=/nonexistent/embody-no-runtime.json"
#define MISSING "/nonexistent/embody-missing"

static const char *const k_env[] = {NO_RUNTIME, NULL};
static char g_stream[1024];
static char g_clips[1024];

static void
run(const char *const *args, struct app_run_result *r)
{
    app_run(args, k_env, TIMEOUT_MS, r);
}

/* `command --help` (NULL: the program's) exits 0 and prints `needle`. */
static void
expect_in_help(const char *command, const char *needle)
{
    struct app_run_result r;
    if (command)
        run((const char *[]){command, "--help", NULL}, &r);
    else
        run((const char *[]){"--help", NULL}, &r);
    app_run_expect_exit(&r, 0);
    if (!strstr(r.out, needle))
        fail_msg("%s --help does not say \"%s\":\n%s", command ? command : "embody", needle, r.out);
    app_run_result_fini(&r);
}

/* A help text is printed as it is written: no printf escape shows through ("30 %%"). */
static void
no_help_shows_a_printf_escape(void **state)
{
    (void)state;
    const char *const commands[] = {NULL,    "solve", "eval",        "train",
                                    "mocap2stream", "make-avatar", "proportions"};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; ++i) {
        struct app_run_result r;
        if (commands[i])
            run((const char *[]){commands[i], "--help", NULL}, &r);
        else
            run((const char *[]){"--help", NULL}, &r);
        app_run_expect_exit(&r, 0);
        if (strstr(r.out, "%%"))
            fail_msg("%s --help shows \"%%%%\":\n%s", commands[i] ? commands[i] : "embody",
                     r.out);
        app_run_result_fini(&r);
    }
}

static void
help_names_the_defaults_the_code_uses(void **state)
{
    (void)state;
    char text[256];
    const char *const prior_users[] = {NULL, "solve", "eval"};
    for (int i = 0; i < 3; ++i)
        expect_in_help(prior_users[i], PR_DEFAULT_MODEL);
    snprintf(text, sizeof text, "%s:%d", OSC_DEFAULT_HOST, OSC_VMC_DEFAULT_PORT);
    expect_in_help(NULL, text);
    snprintf(text, sizeof text, "%s:%d", OSC_DEFAULT_HOST, OSC_VRCHAT_DEFAULT_PORT);
    expect_in_help(NULL, text);
    expect_in_help(NULL, APP_DEFAULT_BODY_SETTINGS);
    expect_in_help("solve", APP_DEFAULT_BODY_SETTINGS);
    snprintf(text, sizeof text, "%.1f to %.1f m", APP_HEIGHT_MIN_M, APP_HEIGHT_MAX_M);
    expect_in_help(NULL, text);
    snprintf(text, sizeof text, "(%.1f to %.1f;", APP_HEIGHT_MIN_M, APP_HEIGHT_MAX_M);
    expect_in_help("solve", text);
    snprintf(text, sizeof text, "else %.2f", APP_DEFAULT_HEIGHT_M);
    expect_in_help(NULL, text);
    /* Every key the window takes. */
    expect_in_help(NULL, "Tab or 1-5 camera");
    expect_in_help(NULL, "B capsule figure");
    expect_in_help("solve", "-v, --verbose");
}

static void
solve_takes_verbose_as_the_program_does(void **state)
{
    (void)state;
    char out[1024];
    app_run_scratch_path("solve-verbose", "bvh", out, sizeof out);
    struct app_run_result r;
    run((const char *[]){"solve", g_stream, "-o", out, "-v", "--height", "1.7", NULL}, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.err, "the learned prior");
    app_run_result_fini(&r);
    remove(out);
}

/* make-avatar writes binary glTF: a .gltf name is refused; what it writes it counts, and
 * the count is the file's. */
static void
make_avatar_says_what_it_made(void **state)
{
    (void)state;
    struct app_run_result r;
    char path[1024];
    app_run_scratch_path("made", "gltf", path, sizeof path);
    run((const char *[]){"make-avatar", "-o", path, NULL}, &r);
    app_run_expect_exit(&r, 2);
    app_run_expect_text(r.err, "expected a .vrm or .glb file name");
    app_run_result_fini(&r);
    FILE *f = fopen(path, "rb");
    assert_null(f);

    app_run_scratch_path("made", "glb", path, sizeof path);
    run((const char *[]){"make-avatar", "-o", path, "--detail", "20", NULL}, &r);
    app_run_expect_exit(&r, 0);
    struct av_avatar av;
    struct em_error err = {{0}};
    if (av_avatar_load(path, NULL, &av, &err) != EM_OK)
        fail_msg("%s", err.message);
    char said[128];
    snprintf(said, sizeof said, "detail 20, %u triangles, %d vertices", av.index_count / 3u,
             av.vertex_count);
    app_run_expect_text(r.out, said);
    av_avatar_fini(&av);
    app_run_result_fini(&r);

    /* The program confirms a good avatar without -v. */
    run((const char *[]){"--avatar", path, "--demo", "--no-window", "--frames", "3", NULL}, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.err, "triangles");
    app_run_expect_text(r.err, path);
    app_run_result_fini(&r);
    remove(path);
}

/* Runs `args`, expects exit 2 and "OPTION: PATH: cannot open" on stderr. */
static void
expect_cannot_open(const char *const *args, const char *option)
{
    struct app_run_result r;
    app_run(args, k_env, 120000, &r);
    app_run_expect_exit(&r, 2);
    char needle[256];
    snprintf(needle, sizeof needle, "%s: %s", option, MISSING);
    app_run_expect_text(r.err, needle);
    app_run_expect_text(r.err, "cannot open");
    app_run_result_fini(&r);
}

static void
a_named_file_that_cannot_be_opened_is_an_error_everywhere(void **state)
{
    (void)state;
    char out[1024];
    app_run_scratch_path("never", "bvh", out, sizeof out);
    expect_cannot_open((const char *[]){"--demo", "--no-window", "--frames", "3", "--prior",
                                        MISSING ".bin", NULL},
                       "--prior");
    expect_cannot_open((const char *[]){"solve", g_stream, "-o", out, "--prior", MISSING ".bin",
                                        NULL},
                       "--prior");
    expect_cannot_open((const char *[]){"eval", g_clips, "--subjects", "05", "--mode", "height", "--frames", "8", "-q", "--json", "-",
                                        "--prior", MISSING ".bin", NULL},
                       "--prior");
    expect_cannot_open((const char *[]){"eval", g_clips, "--subjects", "05", "--mode", "height", "--frames", "8", "-q", "--json", "-",
                                        "--trackers", "all", "--prior", MISSING ".bin", NULL},
                       "--prior");
    expect_cannot_open((const char *[]){"--demo", "--no-window", "--frames", "3", "--avatar",
                                        MISSING ".vrm", NULL},
                       "--avatar");
    FILE *f = fopen(out, "rb");
    assert_null(f);
}

/* A model file that opens but is refused keeps the documented fallback, and the report
 * says which body it scored. */
static void
reports_name_the_body_they_used(void **state)
{
    (void)state;
    char bad[1024];
    app_run_scratch_path("bad-prior", "bin", bad, sizeof bad);
    FILE *f = fopen(bad, "wb");
    assert_non_null(f);
    fputs("not a model", f);
    fclose(f);
    struct app_run_result r;
    app_run((const char *[]){"eval", g_clips, "--subjects", "05", "--mode", "height", "--frames", "8", "-q", "--json", "-",
                             "--validation", "-", "--prior", bad, NULL},
            k_env, 120000, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.err, bad);
    app_run_expect_text(r.err, "the body uses the procedural estimate");
    app_run_expect_text(r.out, "# Body: the procedural estimate");
    app_run_result_fini(&r);
    app_run((const char *[]){"eval", g_clips, "--subjects", "05", "--mode", "height", "--frames", "8", "-q", "--json", "-",
                             "--validation", "-", "--body", "prior", NULL},
            k_env, 120000, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.out, "# Body: the learned prior ");
    app_run_expect_text(r.out, PR_DEFAULT_MODEL);
    app_run_result_fini(&r);
    remove(bad);
}

/* Rows of a markdown table in `text` (lines starting "| " after its header and rule) up
 * to the next blank line. */
static int
table_rows(const char *text)
{
    const char *rule = strstr(text, "|---");
    if (!rule)
        return 0;
    int rows = 0;
    for (const char *line = strchr(rule, '\n'); line && line[1] == '|';
         line = strchr(line + 1, '\n'))
        rows++;
    return rows;
}

/* eval's targets not reached yet are listed apart, as open work, and the run still exits
 * 0: a newcomer reads no failure where there is none. */
static void
eval_lists_targets_not_reached_apart_and_exits_zero(void **state)
{
    (void)state;
    struct app_run_result r;
    app_run((const char *[]){"eval", g_clips, "--subjects", "05", "--mode", "height", "--frames",
                             "8", "-q", "--json", "-", "--validation", "-", "--body", "prior",
                             NULL},
            k_env, 120000, &r);
    app_run_expect_exit(&r, 0);
    assert_null(strstr(r.out, "NOT MET"));
    char *summary = strstr(r.out, "## Summary");
    char *open = strstr(r.out, "## Open targets");
    assert_non_null(summary);
    assert_non_null(open);
    assert_true(open > summary);
    /* A quick run of 8 rows reaches no MPJPE target: the row is in the open table only. */
    const char *row = "| height only: MPJPE ";
    const char *in_open = strstr(open, row);
    assert_non_null(in_open);
    *open = '\0';
    assert_null(strstr(summary, row));
    *open = '#';
    int said = 0;
    assert_int_equal(sscanf(strstr(open, "\n\n") + 2, "%d aims", &said), 1);
    assert_int_equal(said, table_rows(open));
    app_run_result_fini(&r);
    expect_in_help("eval", "Exit status: 0 when every clip ran");
}

/* eval --plot says where its figures went (the folder's full path) and how many there
 * are: one per clip and the categories' bars. */
static void
eval_says_where_its_plots_went(void **state)
{
    (void)state;
    char dir[1024];
    app_run_scratch_path("plots", "d", dir, sizeof dir);
    struct app_run_result r;
    app_run((const char *[]){"eval", g_clips, "--subjects", "05", "--mode", "known", "--frames",
                             "8", "-q", "--json", "-", "--validation", "-", "--plot", dir, NULL},
            k_env, 120000, &r);
    app_run_expect_exit(&r, 0);
    char *full = realpath(dir, NULL);
    assert_non_null(full);
    char said[1300];
    snprintf(said, sizeof said,
             "Plots: %s: 2 PNG files: categories.png, and clip_NAME.png for each of the 1 clip",
             full);
    app_run_expect_text(r.out, said);
    app_run_result_fini(&r);
    const char *const files[] = {"categories.png", "clip_cmu_05_04.png"};
    for (int i = 0; i < 2; ++i) {
        char path[1400];
        snprintf(path, sizeof path, "%s/%s", full, files[i]);
        assert_int_equal(access(path, R_OK), 0);
        remove(path);
    }
    rmdir(full);
    free(full);
}

static void
vmc_takes_a_bare_port_as_vmc_in_does(void **state)
{
    (void)state;
    struct app_run_result r;
    run((const char *[]){"--print-config", "--vmc", "39541", "--demo", NULL}, &r);
    app_run_expect_exit(&r, 0);
    char dest[64];
    snprintf(dest, sizeof dest, "%s:39541", OSC_DEFAULT_HOST);
    app_run_expect_text(r.out, dest);
    app_run_result_fini(&r);
    run((const char *[]){"--print-config", "--vrchat-osc", "9001", "--demo", NULL}, &r);
    app_run_expect_exit(&r, 0);
    snprintf(dest, sizeof dest, "%s:9001", OSC_DEFAULT_HOST);
    app_run_expect_text(r.out, dest);
    app_run_result_fini(&r);
}

static void
a_vmc_output_into_its_own_input_is_refused(void **state)
{
    (void)state;
    struct app_run_result r;
    /* Both default to the same port on this machine. */
    run((const char *[]){"--vmc-in", "--vmc", "--no-window", "--frames", "3", NULL}, &r);
    app_run_expect_exit(&r, 2);
    app_run_expect_text(r.err, "would read its own output");
    app_run_result_fini(&r);
    run((const char *[]){"--vmc-in", "40000", "--vmc", "localhost:40000", "--print-config",
                         NULL},
        &r);
    app_run_expect_exit(&r, 2);
    app_run_expect_text(r.err, "would read its own output");
    app_run_result_fini(&r);
    /* Another port is fine: one embody driving another. */
    run((const char *[]){"--vmc-in", "40000", "--vmc", "40001", "--print-config", NULL}, &r);
    app_run_expect_exit(&r, 0);
    app_run_result_fini(&r);
}

/* A UDP port on loopback that nothing listens on (bound, read, closed). */
static int
free_udp_port(void)
{
    const int fd = socket(AF_INET, SOCK_DGRAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t len = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static void
a_vmc_output_nobody_listens_to_is_said_so(void **state)
{
    (void)state;
    char dest[64];
    snprintf(dest, sizeof dest, "127.0.0.1:%d", free_udp_port());
    struct app_run_result r;
    run((const char *[]){"--demo", "--no-window", "--frames", "30", "--vmc", dest, NULL}, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.out, "nothing was listening there");
    if (strstr(r.out, "datagrams sent"))
        fail_msg("the summary still counts refused datagrams as sent:\n%s", r.out);
    app_run_result_fini(&r);
}

/* Writes `text` to a scratch file `tag`.json; its path in `out`. */
static void
scratch_json(const char *tag, const char *text, char *out, size_t size)
{
    app_run_scratch_path(tag, "json", out, size);
    FILE *f = fopen(out, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* `embody --print-config --demo --config FILE` with `text` in FILE: exit 2, and stderr
 * holds FILE followed by `after`. */
static void
expect_settings_refused(const char *text, const char *after)
{
    char path[1024];
    scratch_json("says-settings", text, path, sizeof path);
    struct app_run_result r;
    run((const char *[]){"--print-config", "--demo", "--config", path, NULL}, &r);
    app_run_expect_exit(&r, 2);
    char needle[1200];
    snprintf(needle, sizeof needle, "%s%s", path, after);
    if (!strstr(r.err, needle))
        fail_msg("expected \"%s\" in:\n%s", needle, r.err);
    app_run_result_fini(&r);
    remove(path);
}

static void
settings_files_name_every_field_the_same_way(void **state)
{
    (void)state;
    /* A top-level field as a nested one: "FILE: a.b", never "FILE.a". */
    expect_settings_refused("{\"floor_height_m\": 20}\n",
                            ": floor_height_m: expected a number from -10 to 10");
    expect_settings_refused("{\"filter\": 3}\n", ": filter: expected an object");
    expect_settings_refused("{\"devices\": {\"head\": {\"position_m\": [0, 1]}}}\n",
                            ": devices.head.position_m: expected an array of 3 numbers");
    /* Malformed JSON: line, column and what was there; an empty file says so. */
    expect_settings_refused("{\n  \"filter\": {\"beta\": 8,}\n}\n",
                            ":2:24: malformed JSON: unexpected '}'");
    expect_settings_refused("{\"filter\": {\"beta\": 8}\n", ":2:1: malformed JSON: the text ends early");
    expect_settings_refused("", ": empty file, expected JSON");
    /* A key given twice, and a version this program does not read, are refused. */
    expect_settings_refused("{\"filter\": {\"beta\": 8, \"beta\": 2}}\n",
                            ": filter.beta: given twice");
    expect_settings_refused("{\"version\": 2}\n", ": version: expected 1");
}

int
main(int argc, char **argv)
{
    if (!app_run_set_program_from_args(argc, argv))
        return 2;
    app_run_source_path("tests/data/streams/cmu_14_04.csv", g_stream, sizeof g_stream);
    app_run_source_path("tests/data/mocap", g_clips, sizeof g_clips);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(help_names_the_defaults_the_code_uses),
        cmocka_unit_test(no_help_shows_a_printf_escape),
        cmocka_unit_test(solve_takes_verbose_as_the_program_does),
        cmocka_unit_test(make_avatar_says_what_it_made),
        cmocka_unit_test(a_named_file_that_cannot_be_opened_is_an_error_everywhere),
        cmocka_unit_test(reports_name_the_body_they_used),
        cmocka_unit_test(eval_lists_targets_not_reached_apart_and_exits_zero),
        cmocka_unit_test(eval_says_where_its_plots_went),
        cmocka_unit_test(vmc_takes_a_bare_port_as_vmc_in_does),
        cmocka_unit_test(a_vmc_output_into_its_own_input_is_refused),
        cmocka_unit_test(a_vmc_output_nobody_listens_to_is_said_so),
        cmocka_unit_test(settings_files_name_every_field_the_same_way),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
