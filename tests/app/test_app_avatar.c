/*
 * The program with VRM and glTF avatars (the built binary, no display needed): an avatar
 * file made by the tests becomes the body's skeleton, `embody make-avatar` writes files
 * that read back, every kind of bad file is reported with its reason (a warning) while the
 * program goes on with the default avatar, and a file that cannot be read at all stops it
 * (exit 2).
 */
#include <errno.h>
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
#include "avatar/avatar.h"

#define TIMEOUT_MS 60000
#define NO_RUNTIME "XR_RUNTIME_JSON=/nonexistent/embody-no-runtime.json"

static const char *const k_env[] = {NO_RUNTIME, NULL};

static void
write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Runs the program with `args` and returns the result (exit code checked by the caller). */
static void
run(const char *const *args, struct app_run_result *r)
{
    app_run(args, k_env, TIMEOUT_MS, r);
}

static void
make_avatar_writes_files_that_read_back(void **state)
{
    (void)state;
    static const char *rigs[] = {"vrm1", "vrm0", "mixamo", "plain"};
    for (int i = 0; i < 4; ++i) {
        char path[1024];
        app_run_scratch_path(rigs[i], "vrm", path, sizeof path);
        struct app_run_result r;
        run((const char *[]){"make-avatar", "-o", path, "--rig", rigs[i], "--height", "1.6", NULL},
            &r);
        app_run_expect_exit(&r, 0);
        app_run_result_fini(&r);
        struct av_avatar av;
        struct em_error err = {{0}};
        if (av_avatar_load(path, NULL, &av, &err) != EM_OK)
            fail_msg("%s", err.message);
        assert_float_equal(av.height_m, 1.6, 0.02);
        av_avatar_fini(&av);
        remove(path);
    }
    struct app_run_result r;
    run((const char *[]){"make-avatar", "--rig", "fbx", "-o", "x.vrm", NULL}, &r);
    app_run_expect_exit(&r, 2);
    app_run_expect_text(r.err, "--rig: expected vrm1, vrm0, mixamo or plain");
    app_run_result_fini(&r);
}

static void
a_vrm_avatar_becomes_the_bodys_skeleton(void **state)
{
    (void)state;
    char path[1024];
    app_run_scratch_path("own", "vrm", path, sizeof path);
    struct app_run_result r;
    run((const char *[]){"make-avatar", "-o", path, "--rig", "vrm0", "--height", "1.5", NULL}, &r);
    app_run_expect_exit(&r, 0);
    app_run_result_fini(&r);
    run((const char *[]){"--avatar", path, "--print-config", NULL}, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.out, "(VRM/glTF avatar)");
    /* Its own height is kept (no --height): the file's, not the default 1.75 m. */
    app_run_expect_text(r.out, "fitted height");
    char *at = strstr(r.out, "fitted height");
    assert_non_null(at);
    double h = 0.0;
    assert_int_equal(sscanf(strchr(at, '=') + 1, "%lf", &h), 1);
    assert_float_equal(h, 1.5, 0.02);
    app_run_result_fini(&r);
    /* It runs: the demo drives it. */
    run((const char *[]){"--avatar", path, "--demo", "--no-window", "--frames", "30", NULL}, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.out, "30 frames from the demo");
    assert_null(strstr(r.err, "error"));
    app_run_result_fini(&r);
    remove(path);
}

/* Each bad file: its reason on stderr, then the default avatar, and the run goes on. */
static void
bad_avatar_files_are_reported_and_the_default_avatar_shown(void **state)
{
    (void)state;
    char truncated[1024], bones[1024], old[1024];
    app_run_scratch_path("truncated", "vrm", truncated, sizeof truncated);
    app_run_scratch_path("bones", "gltf", bones, sizeof bones);
    app_run_scratch_path("old", "gltf", old, sizeof old);
    write_text(truncated, "glTF\x02");
    write_text(bones, "{\"asset\": {\"version\": \"2.0\"}, \"nodes\": [{\"name\": \"bone0\"}, "
                      "{\"name\": \"bone1\"}], \"scenes\": [{\"nodes\": [0, 1]}]}");
    write_text(old, "{\"asset\": {\"version\": \"1.0\"}}");
    const struct {
        const char *path;
        const char *reason;
    } cases[] = {
        {truncated, "truncated GLB"},
        {bones, "no humanoid skeleton"},
        {old, "glTF version \"1.0\" is not supported"},
    }; /* a file that cannot be opened at all is an error: test_app_says.c */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        struct app_run_result r;
        run((const char *[]){"--avatar", cases[i].path, "--demo", "--no-window", "--frames", "20",
                             NULL},
            &r);
        app_run_expect_exit(&r, 0);
        app_run_expect_text(r.err, cases[i].path);
        app_run_expect_text(r.err, cases[i].reason);
        app_run_expect_text(r.err, "showing the default avatar instead");
        /* A warning, as the run goes on and ends well (exit 0): not an error. */
        app_run_expect_text(r.err, "warning: ");
        if (strstr(r.err, "error"))
            fail_msg("a run that goes on says \"error\":\n%s", r.err);
        app_run_expect_text(r.out, "20 frames from the demo");
        app_run_result_fini(&r);
        run((const char *[]){"--avatar", cases[i].path, "--print-config", NULL}, &r);
        app_run_expect_exit(&r, 0);
        app_run_expect_text(r.out, "(default humanoid)");
        app_run_result_fini(&r);
    }
    remove(truncated);
    remove(bones);
    remove(old);
}

/* A file that cannot be read at all (missing, a folder) stops the program before it
 * starts, naming the file: exit 2, as for any input file. */
static void
an_avatar_file_that_cannot_be_read_stops_the_program(void **state)
{
    (void)state;
    char folder[1024];
    app_run_scratch_path("folder", "vrm", folder, sizeof folder);
    assert_true(mkdir(folder, 0755) == 0 || errno == EEXIST);
    const char *const paths[] = {"/nonexistent/embody-avatar.vrm", folder};
    for (int i = 0; i < 2; ++i) {
        struct app_run_result r;
        run((const char *[]){"--avatar", paths[i], "--demo", "--no-window", "--frames", "20",
                             NULL},
            &r);
        app_run_expect_exit(&r, 2);
        char said[1100];
        snprintf(said, sizeof said, "error: --avatar: %s: ", paths[i]);
        app_run_expect_text(r.err, said);
        assert_null(strstr(r.out, "frames from the demo"));
        app_run_result_fini(&r);
    }
    rmdir(folder);
}

/* --print-rig prints the bones as found, in the form --bone-map reads back; a bad bone
 * map stops the program naming the option, the file and the field. */
static void
print_rig_output_is_a_bone_map_that_reads_back(void **state)
{
    (void)state;
    char avatar[1024], map[1024], bad[1024];
    app_run_scratch_path("rig-mixamo", "glb", avatar, sizeof avatar);
    app_run_scratch_path("rig-map", "json", map, sizeof map);
    app_run_scratch_path("rig-bad-map", "json", bad, sizeof bad);
    struct app_run_result r;
    run((const char *[]){"make-avatar", "-o", avatar, "--rig", "mixamo", NULL}, &r);
    app_run_expect_exit(&r, 0);
    app_run_result_fini(&r);
    run((const char *[]){"--avatar", avatar, "--print-rig", NULL}, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.out, "\"leftUpperArm\": \"mixamorig:LeftArm\"");
    write_text(map, r.out);
    char *printed = strdup(r.out);
    app_run_result_fini(&r);
    run((const char *[]){"--avatar", avatar, "--bone-map", map, "--print-rig", NULL}, &r);
    app_run_expect_exit(&r, 0);
    assert_string_equal(r.out, printed);
    app_run_result_fini(&r);
    free(printed);
    write_text(bad, "{\"hips\": \"mixamorig:Hips\",\n \"leftElbow\": \"mixamorig:LeftForeArm\"}");
    run((const char *[]){"--avatar", avatar, "--bone-map", bad, "--demo", "--no-window", NULL}, &r);
    app_run_expect_exit(&r, 2);
    app_run_expect_text(r.err, "--bone-map");
    app_run_expect_text(r.err, bad);
    app_run_expect_text(r.err, "\"leftElbow\": not a humanoid bone");
    app_run_result_fini(&r);
    remove(avatar);
    remove(map);
    remove(bad);
}

int
main(int argc, char **argv)
{
    if (!app_run_set_program_from_args(argc, argv))
        return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(make_avatar_writes_files_that_read_back),
        cmocka_unit_test(a_vrm_avatar_becomes_the_bodys_skeleton),
        cmocka_unit_test(bad_avatar_files_are_reported_and_the_default_avatar_shown),
        cmocka_unit_test(an_avatar_file_that_cannot_be_read_stops_the_program),
        cmocka_unit_test(print_rig_output_is_a_bone_map_that_reads_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
