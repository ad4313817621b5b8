/*
 * The program's settings and sizes, run as the real binary: config/body.json (or
 * --config FILE) is read, applied and shown by --print-config, and a bad one is refused
 * naming its field; avatars of impossible sizes are refused with what was found.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "app_run.h"
#include "embody/stream.h"

/* A hang guard: a sanitizer build runs eval's probes of every clip in 80 s alone, and
 * twice that beside another test on two cores. */
#define TIMEOUT_MS 300000

static const char *const k_no_runtime_env[] = {"XR_RUNTIME_JSON=/nonexistent/runtime.json", NULL};

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
expect_refused(const char *const *args, const char *const *env, const char *a, const char *b)
{
    struct app_run_result r;
    app_run(args, env ? env : k_no_runtime_env, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 2);
    app_run_expect_text(r.err, a);
    if (b)
        app_run_expect_text(r.err, b);
    app_run_result_fini(&r);
}

static void
the_default_body_settings_file_is_read_and_shown(void **state)
{
    (void)state;
    struct app_run_result r;
    app_run((const char *[]){"--print-config", "--demo", NULL}, k_no_runtime_env, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.out, "config/body.json");
    assert_true(fabs(config_number(r.out, "filter_beta") - 8.0) < 1e-6);
    app_run_result_fini(&r);

    /* A broken config/body.json where the program finds its data is refused. */
    char dir[1024], sub[1100], file[1200], humanoid[1200], source[1024];
    app_run_scratch_path("data", "d", dir, sizeof dir);
    snprintf(sub, sizeof sub, "%s/config", dir);
    mkdir(dir, 0777);
    mkdir(sub, 0777);
    snprintf(file, sizeof file, "%s/body.json", sub);
    snprintf(humanoid, sizeof humanoid, "%s/humanoid.json", sub);
    app_run_source_path("config/humanoid.json", source, sizeof source);
    char *text = app_run_read_file(source, NULL);
    FILE *f = fopen(humanoid, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(text);
    f = fopen(file, "w");
    assert_non_null(f);
    fputs("{\"format\": \"embody-body\", \"tracking_loss\": {\"blend_s\": 99}}\n", f);
    fclose(f);
    char env_dir[1100];
    snprintf(env_dir, sizeof env_dir, "EMBODY_DATA_DIR=%s", dir);
    expect_refused((const char *[]){"--print-config", "--demo", NULL},
                   (const char *[]){env_dir, k_no_runtime_env[0], NULL}, "body.json",
                   "tracking_loss.blend_s: expected a number from 0 to 10");
    remove(file);
    remove(humanoid);
    remove(sub);
    remove(dir);
}

static void
a_settings_file_given_with_config_is_applied(void **state)
{
    (void)state;
    char path[1024];
    scratch_file("settings", "json",
                 "{\"format\": \"embody-body\", \"filter\": {\"beta\": 2.5},\n"
                 " \"tracking_loss\": {\"blend_s\": 0.75}, \"floor_height_m\": 0.1}\n",
                 path, sizeof path);
    struct app_run_result r;
    app_run((const char *[]){"--print-config", "--demo", "--config", path, NULL}, k_no_runtime_env,
            TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.out, path);
    /* The values the body resolved, not the file echoed. */
    assert_true(fabs(config_number(r.out, "filter_beta") - 2.5) < 1e-6);
    assert_true(fabs(config_number(r.out, "loss_blend_s") - 0.75) < 1e-6);
    assert_true(fabs(config_number(r.out, "floor_height_m") - 0.1) < 1e-6);
    assert_true(fabs(config_number(r.out, "filter_min_cutoff_hz") - 3.0) < 1e-6);
    app_run_result_fini(&r);
    remove(path);
}

/* Issue 28: "faults" in the settings file are put into every frame, as --fault's are (the
 * settings file's first); a recording of a replay shows the dropout window it asked for. */
static void
faults_in_the_settings_file_are_applied(void **state)
{
    (void)state;
    char path[1024], out[1024], stream[1024];
    scratch_file("faults", "json",
                 "{\"format\": \"embody-body\",\n"
                 " \"faults\": [\"dropout:left:1-2s\", \"latency:right:20ms\"]}\n",
                 path, sizeof path);
    struct app_run_result r;
    app_run((const char *[]){"--print-config", "--demo", "--config", path, "--fault",
                             "noise:head:1mm", NULL},
            k_no_runtime_env, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.out, "dropout:left:1-2s, latency:right:20ms, noise:head:1mm");
    app_run_result_fini(&r);

    app_run_source_path("tests/data/streams/cmu_14_04.csv", stream, sizeof stream);
    app_run_scratch_path("faults-recorded", "csv", out, sizeof out);
    app_run((const char *[]){"--replay", stream, "--fast", "--no-window", "--frames", "200",
                             "--config", path, "--record", out, NULL},
            k_no_runtime_env, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    app_run_result_fini(&r);
    struct st_stream rows;
    struct em_error err = {{0}};
    if (st_stream_load(out, &rows, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(rows.frame_count, 200);
    const double t0 = rows.frames[0].time_s;
    int lost_inside = 0, lost_outside = 0, inside = 0;
    for (int i = 0; i < rows.frame_count; ++i) {
        const double t = rows.frames[i].time_s - t0;
        const bool lost = !em_device_pose_usable(&rows.frames[i].device[EM_DEVICE_LEFT_HAND]);
        if (t >= 1.0 + 1e-6 && t < 2.0 - 1e-6) {
            inside++;
            lost_inside += lost;
        } else if (t < 1.0 - 1e-6 || t > 2.0 + 1e-6) {
            lost_outside += lost;
        }
    }
    assert_true(inside > 50);
    assert_int_equal(lost_inside, inside);
    assert_int_equal(lost_outside, 0);
    st_stream_fini(&rows);
    remove(out);
    remove(path);
}

/* A bad entry is refused naming the file, its line and column, and what was expected. */
static void
a_bad_fault_in_the_settings_file_is_refused_where_it_is(void **state)
{
    (void)state;
    char path[1024];
    scratch_file("bad-faults", "json",
                 "{\n \"faults\": [\"latency:pelvis:50\",\n   \"latency:pelvis:soon\"]\n}\n",
                 path, sizeof path);
    char where[1200];
    snprintf(where, sizeof where, "%s:3:4: faults[1] \"latency:pelvis:soon\": bad amount", path);
    expect_refused((const char *[]){"--demo", "--no-window", "--frames", "3", "--config", path,
                                    NULL},
                   NULL, where, "expected a latency in ms");
    scratch_file("bad-faults", "json", "{\"faults\": \"drift:head:30\"}\n", path, sizeof path);
    expect_refused((const char *[]){"--demo", "--print-config", "--config", path, NULL}, NULL,
                   "faults: expected an array", NULL);
    scratch_file("bad-faults", "json", "{\"faults\": [\"drift:head:30\", 7]}\n", path,
                 sizeof path);
    expect_refused((const char *[]){"--demo", "--print-config", "--config", path, NULL}, NULL,
                   ":1:30: faults[1]: expected a string", NULL);
    remove(path);
}

static void
a_bad_settings_file_is_refused_naming_its_field(void **state)
{
    (void)state;
    char typo[1024], range[1024], malformed[1024];
    scratch_file("typo", "json", "{\"filter\": {\"min_cutoff_hz\": 3, \"bta\": 8}}\n", typo,
                 sizeof typo);
    scratch_file("range", "json", "{\"devices\": {\"grip\": {\"palm_fraction\": 2}}}\n", range,
                 sizeof range);
    scratch_file("malformed", "json", "{\n\"filter\": {\"beta\": 8,}\n}\n", malformed,
                 sizeof malformed);
    expect_refused((const char *[]){"--demo", "--no-window", "--config", typo, NULL}, NULL,
                   "--config: ", "filter.bta: unknown field");
    expect_refused((const char *[]){"--demo", "--config", range, NULL}, NULL,
                   "devices.grip.palm_fraction: expected a number from 0 to 1", NULL);
    expect_refused((const char *[]){"--demo", "--config", malformed, NULL}, NULL, malformed,
                   "malformed JSON");
    expect_refused((const char *[]){"--demo", "--config", "/nonexistent/body.json", NULL}, NULL,
                   "--config: /nonexistent/body.json: cannot open", NULL);
    expect_refused((const char *[]){"--demo", "--config", "body.txt", NULL}, NULL,
                   "--config: expected an embody body file", NULL);
    char stream[1024];
    app_run_source_path("tests/data/streams/cmu_14_04.csv", stream, sizeof stream);
    expect_refused(
        (const char *[]){"solve", stream, "-o", "x.bvh", "--height", "1.7", "--config", typo, NULL},
        NULL, "filter.bta: unknown field", NULL);
    remove(typo);
    remove(range);
    remove(malformed);
}

/* A copy of `source` (a file of the source tree) with the first `from` replaced by `to`. */
static void
edited_copy(const char *source, const char *from, const char *to, const char *tag, const char *ext,
            char *out, size_t size)
{
    char path[1024];
    app_run_source_path(source, path, sizeof path);
    char *text = app_run_read_file(path, NULL);
    char *at = strstr(text, from);
    if (!at)
        fail_msg("%s has no \"%s\"", source, from);
    app_run_scratch_path(tag, ext, out, size);
    FILE *f = fopen(out, "w");
    assert_non_null(f);
    fwrite(text, 1, (size_t)(at - text), f);
    fputs(to, f);
    fputs(at + strlen(from), f);
    fclose(f);
    free(text);
}

static void
skeleton_files_of_impossible_sizes_are_refused(void **state)
{
    (void)state;
    static const struct {
        const char *to, *expect;
    } cases[] = {
        {"\"offset_m\": [1000, 0, 0]", "the bone to joint \"leftLowerArm\" is 1000 m long"},
        {"\"offset_m\": [3e38, 0, 0]", "leftLowerArm"},
        {"\"offset_m\": [0.02, 0, 0]", "the left upper arm is 0.02 m"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char path[1024];
        edited_copy("config/humanoid.json", "\"offset_m\": [0.295, 0, 0]", cases[i].to, "size",
                    "json", path, sizeof path);
        expect_refused((const char *[]){"--print-config", "--skeleton", path, NULL}, NULL,
                       "--skeleton: ", cases[i].expect);
        remove(path);
    }
    char path[1024];
    edited_copy("config/humanoid.json", "\"offset_m\": [0, 1.0, 0]", "\"offset_m\": [0, 1000, 0]",
                "tall", "json", path, sizeof path);
    /* The hips placed high up is fine: the height is from the feet to the crown. */
    struct app_run_result r;
    app_run((const char *[]){"--print-config", "--skeleton", path, NULL}, k_no_runtime_env,
            TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    app_run_result_fini(&r);
    remove(path);
    edited_copy("config/humanoid.json", "\"offset_m\": [0, 0.189, -0.007]",
                "\"offset_m\": [0, 1000.189, -0.007]", "tall", "json", path, sizeof path);
    expect_refused((const char *[]){"--print-config", "--skeleton", path, NULL}, NULL,
                   "the avatar is 1002 m tall; a humanoid is 0.5 to 3 m", NULL);
    remove(path);
    /* A shoulder a kilometre out to the side: the height is right, the bone is not. */
    edited_copy("config/humanoid.json", "\"offset_m\": [0.03, 0.16, 0.0]",
                "\"offset_m\": [1000, 0.16, 0.0]", "wide", "json", path, sizeof path);
    expect_refused((const char *[]){"--print-config", "--skeleton", path, NULL}, NULL,
                   "the bone to joint \"leftShoulder\" is 1000 m long", NULL);
    remove(path);
}

static void
bvh_avatars_of_impossible_sizes_are_refused(void **state)
{
    (void)state;
    char clip[1024], stream[1024];
    app_run_source_path("tests/data/mocap/cmu_14_04.bvh", clip, sizeof clip);
    app_run_source_path("tests/data/streams/cmu_14_04.csv", stream, sizeof stream);
    expect_refused(
        (const char *[]){"--print-config", "--avatar", clip, "--unit-scale", "0.0001", NULL}, NULL,
        "the avatar is 0.003053 m tall; a humanoid is 0.5 to 3 m", "0.0001 m per BVH unit");
    expect_refused((const char *[]){"solve", stream, "-o", "x.bvh", "--avatar", clip,
                                    "--unit-scale", "10", NULL},
                   NULL, "the avatar is 305.3 m tall", NULL);
    /* A thigh of 1e30 units. */
    char big[1024];
    edited_copy("tests/data/mocap/cmu_14_04.bvh", "JOINT LeftUpLeg\n\t\t{\n\t\t\tOFFSET 1.62329 ",
                "JOINT LeftUpLeg\n\t\t{\n\t\t\tOFFSET 1e30 ", "bigleg", "bvh", big, sizeof big);
    expect_refused((const char *[]){"--print-config", "--avatar", big, NULL}, NULL,
                   "--avatar: ", big);
    remove(big);
}

static void
a_clip_that_overflows_is_blamed_not_the_output(void **state)
{
    (void)state;
    char big[1024], out[1024];
    edited_copy("tests/data/mocap/cmu_14_04.bvh", "OFFSET 0 0 0", "OFFSET 1e300 0 0", "root", "bvh",
                big, sizeof big);
    app_run_scratch_path("root", "csv", out, sizeof out);
    remove(out);
    /* The reader refuses the root's 1e300 as any joint's (issue 20), naming the line. */
    expect_refused((const char *[]){"mocap2stream", big, "-o", out, NULL}, NULL, big,
                   ":4: OFFSET of joint \"Hips\"");
    assert_int_equal(access(out, F_OK), -1);
    remove(big);
}

static void
json_nested_too_deep_is_reported_as_such(void **state)
{
    (void)state;
    char path[1024];
    app_run_scratch_path("deep", "json", path, sizeof path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"format\": \"embody-body\",\n \"note\": ", f);
    for (int i = 0; i < 5000; ++i)
        fputc('[', f);
    for (int i = 0; i < 5000; ++i)
        fputc(']', f);
    fputs("}\n", f);
    fclose(f);
    expect_refused((const char *[]){"--demo", "--config", path, NULL}, NULL, path,
                   ":2: JSON nested deeper than 1000 levels");
    char skeleton[1100];
    snprintf(skeleton, sizeof skeleton, "%s", path);
    expect_refused((const char *[]){"--print-config", "--skeleton", skeleton, NULL}, NULL,
                   "--skeleton: ", "JSON nested deeper than 1000 levels");
    remove(path);
}

static void
solve_into_a_missing_folder_is_refused_cleanly(void **state)
{
    (void)state;
    char stream[1024];
    app_run_source_path("tests/data/streams/cmu_14_04.csv", stream, sizeof stream);
    /* Under the sanitizer build a leak would end the program with another status. */
    expect_refused((const char *[]){"solve", stream, "-o", "/nonexistent/dir/out.bvh", "--height",
                                    "1.7", NULL},
                   NULL, "-o: /nonexistent/dir/out.bvh: cannot write: the folder", NULL);
}

static void
eval_says_where_it_wrote_its_json(void **state)
{
    (void)state;
    char clips[1024];
    app_run_source_path("tests/data/mocap", clips, sizeof clips);
    struct app_run_result r;
    app_run((const char *[]){"eval", clips, "--frames", "8", "--mode", "height", "-q", NULL},
            k_no_runtime_env, 300000, &r); /* its probes are slow under the sanitizers */
    app_run_expect_exit(&r, 0);
    const char *line = strstr(r.out, "JSON copy: ");
    if (!line)
        fail_msg("no \"JSON copy: \" in:\n%s", r.out);
    char where[1024];
    assert_int_equal(sscanf(line, "JSON copy: %1023s", where), 1);
    assert_true(where[0] == '/'); /* the full path, not just "eval.json" */
    assert_int_equal(access(where, F_OK), 0);
    remove(where);
    app_run_result_fini(&r);
}

static void
the_height_of_a_short_player_is_estimated_from_the_stream(void **state)
{
    (void)state;
    /* CMU subject 91 is 1.48 m tall (the clip's own skeleton, measured as the
     * estimate measures: from the skull base). */
    char clip[1024], stream[1024], out[1024];
    app_run_source_path("tests/data/mocap/cmu_91_17.bvh", clip, sizeof clip);
    app_run_source_path("tests/data/streams/cmu_91_17.csv", stream, sizeof stream);
    struct app_run_result r;
    app_run((const char *[]){"--print-config", "--avatar", clip, NULL}, k_no_runtime_env,
            TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    const double truth = config_number(r.out, "own height");
    app_run_result_fini(&r);
    assert_true(truth < 1.55);

    app_run((const char *[]){"--print-config", "--replay", stream, NULL}, k_no_runtime_env,
            TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    const double estimated = config_number(r.out, "fitted height");
    if (!(fabs(estimated - truth) < 0.03))
        fail_msg("estimated %.3f m, the clip's skeleton is %.3f m", estimated, truth);
    app_run_expect_text(r.out, "estimated from");
    app_run_result_fini(&r);

    /* --height wins. */
    app_run((const char *[]){"--print-config", "--replay", stream, "--height", "1.9", NULL},
            k_no_runtime_env, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    assert_true(fabs(config_number(r.out, "fitted height") - 1.9) < 0.002);
    app_run_result_fini(&r);

    /* solve without --height says what it used, and its BVH is that size. */
    app_run_scratch_path("short", "bvh", out, sizeof out);
    app_run((const char *[]){"solve", stream, "-o", out, NULL}, k_no_runtime_env, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.err, "embody solve: height 1.4");
    app_run_expect_text(r.err, "estimated from");
    app_run_result_fini(&r);
    app_run((const char *[]){"--print-config", "--avatar", out, NULL}, k_no_runtime_env, TIMEOUT_MS,
            &r);
    app_run_expect_exit(&r, 0);
    if (!(fabs(config_number(r.out, "own height") - truth) < 0.03))
        fail_msg("the solved BVH's skeleton is %.3f m", config_number(r.out, "own height"));
    app_run_result_fini(&r);
    remove(out);
}

static void
the_protocol_texts_that_are_cited_ship_with_the_repository(void **state)
{
    (void)state;
    struct app_run_result r;
    app_run((const char *[]){"eval", "--help", NULL}, NULL, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.out, "docs/PROTOCOL.md");
    app_run_result_fini(&r);
    static const char *const shipped[] = {"docs/PROTOCOL.md", "tests/data/bench/README.md",
                                          "tests/data/bench/problems.tar.xz",
                                          "tests/data/bench/gen_problems.mjs"};
    for (size_t i = 0; i < sizeof shipped / sizeof shipped[0]; ++i) {
        char path[1024];
        app_run_source_path(shipped[i], path, sizeof path);
        size_t size = 0;
        free(app_run_read_file(path, &size));
        assert_true(size > 1000);
    }
    /* The build unpacked the benchmark's problems for ik_bench. */
    char problems[1024];
    snprintf(problems, sizeof problems, "%s/tests/data/bench/problems.json", EMBODY_BINARY_DIR);
    size_t size = 0;
    char *text = app_run_read_file(problems, &size);
    assert_true(size > 1000000);
    assert_non_null(strstr(text, "P3_human3_track"));
    free(text);
}

static void
eval_refuses_to_write_its_json_over_a_clip(void **state)
{
    (void)state;
    char dir[1024], clip[1100], source[1024];
    app_run_scratch_path("eval-clips", "d", dir, sizeof dir);
    mkdir(dir, 0777);
    snprintf(clip, sizeof clip, "%s/cmu_14_04.bvh", dir);
    app_run_source_path("tests/data/mocap/cmu_14_04.bvh", source, sizeof source);
    app_run_copy_file(source, clip);
    size_t size = 0;
    char *text = app_run_read_file(source, &size);
    struct app_run_result r;
    app_run((const char *[]){"eval", dir, "--frames", "8", "--mode", "height", "-q", "--json",
                             clip, NULL},
            k_no_runtime_env, 120000, &r);
    app_run_expect_exit(&r, 2);
    app_run_expect_text(r.err, "--json: ");
    app_run_expect_text(r.err, "which was read; not written");
    app_run_result_fini(&r);
    size_t after_size = 0;
    char *after = app_run_read_file(clip, &after_size);
    assert_int_equal(after_size, size);
    assert_memory_equal(after, text, size);
    free(after);
    free(text);
    remove(clip);
    rmdir(dir);
}

int
main(int argc, char **argv)
{
    if (!app_run_set_program_from_args(argc, argv))
        return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_default_body_settings_file_is_read_and_shown),
        cmocka_unit_test(a_settings_file_given_with_config_is_applied),
        cmocka_unit_test(a_bad_settings_file_is_refused_naming_its_field),
        cmocka_unit_test(faults_in_the_settings_file_are_applied),
        cmocka_unit_test(a_bad_fault_in_the_settings_file_is_refused_where_it_is),
        cmocka_unit_test(skeleton_files_of_impossible_sizes_are_refused),
        cmocka_unit_test(bvh_avatars_of_impossible_sizes_are_refused),
        cmocka_unit_test(a_clip_that_overflows_is_blamed_not_the_output),
        cmocka_unit_test(json_nested_too_deep_is_reported_as_such),
        cmocka_unit_test(solve_into_a_missing_folder_is_refused_cleanly),
        cmocka_unit_test(eval_says_where_it_wrote_its_json),
        cmocka_unit_test(eval_refuses_to_write_its_json_over_a_clip),
        cmocka_unit_test(the_height_of_a_short_player_is_estimated_from_the_stream),
        cmocka_unit_test(the_protocol_texts_that_are_cited_ship_with_the_repository),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
