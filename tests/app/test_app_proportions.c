/*
 * embody proportions, run as the real binary: a folder that cannot be read or holds no
 * BVH is refused naming it (exit 2), so is a folder whose skeletons cannot be measured
 * (each with its reason); one skeleton per subject, a repeated skeleton counted once, and
 * the table's numbers are the clip's own measures (sk_humanoid_proportions) beside the
 * default humanoid's.
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
#include "embody/skeleton.h"
#include "embody/stream.h"

#define TIMEOUT_MS 60000
#define CLIP "tests/data/mocap-train/cmu_09_01.bvh"
#define CLIP_2 "tests/data/mocap-train/cmu_09_02.bvh"
#define TOELESS_CLIP "tests/data/mocap-extra/cmu_08_07.bvh" /* Daz-friendly: no toes */
#define HUMANOID "config/humanoid.json"

/* A fresh scratch folder for this test process. */
static void
make_folder(const char *tag, char *out, size_t size)
{
    app_run_scratch_path(tag, "d", out, size);
    mkdir(out, 0777);
}

/* Copies the source tree's `relative` file into `dir` as `name`; remembers it for cleanup. */
static void
copy_into(const char *relative, const char *dir, const char *name, char *out, size_t size)
{
    char from[1024];
    app_run_source_path(relative, from, sizeof from);
    snprintf(out, size, "%s/%s", dir, name);
    app_run_copy_file(from, out);
}

/* Runs `embody proportions ARGS...`, expecting exit `code`. */
static void
run_proportions(const char *const *args, int code, struct app_run_result *out)
{
    const char *argv[8] = {"proportions"};
    int n = 1;
    for (int i = 0; args[i] && n < 7; ++i)
        argv[n++] = args[i];
    argv[n] = NULL;
    app_run(argv, NULL, TIMEOUT_MS, out);
    app_run_expect_exit(out, code);
}

static void
a_missing_folder_is_refused_naming_it(void **state)
{
    (void)state;
    struct app_run_result r;
    run_proportions((const char *[]){"/nonexistent/embody-clips", NULL}, 2, &r);
    app_run_expect_text(r.err, "/nonexistent/embody-clips: cannot open the folder");
    assert_int_equal(app_run_count_text(r.err, "error:"), 1);
    assert_string_equal(r.out, "");
    app_run_result_fini(&r);
}

static void
a_folder_without_bvh_files_is_refused_naming_it(void **state)
{
    (void)state;
    char dir[1024], note[1200];
    make_folder("proportions-empty", dir, sizeof dir);
    copy_into("tests/data/README.md", dir, "README.md", note, sizeof note);
    struct app_run_result r;
    run_proportions((const char *[]){dir, NULL}, 2, &r);
    app_run_expect_text(r.err, dir);
    app_run_expect_text(r.err, "no *.bvh files");
    assert_string_equal(r.out, "");
    app_run_result_fini(&r);
    remove(note);
    rmdir(dir);
}

static void
a_folder_of_unmeasurable_skeletons_exits_2_with_each_reason(void **state)
{
    (void)state;
    char dir[1024], clip[1200];
    make_folder("proportions-toeless", dir, sizeof dir);
    copy_into(TOELESS_CLIP, dir, "cmu_08_07.bvh", clip, sizeof clip);
    struct app_run_result r;
    run_proportions((const char *[]){dir, NULL}, 2, &r);
    app_run_expect_text(r.err, "skipped");
    app_run_expect_text(r.err, "cmu_08_07.bvh: no leftToes joint");
    app_run_expect_text(r.err, "no skeleton could be measured");
    assert_string_equal(r.out, "");
    app_run_result_fini(&r);
    remove(clip);
    rmdir(dir);
}

/* The numbers of the table's row `measure`: mean, min, max, default, difference. */
static void
table_row(const char *out, const char *measure, double *v)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "| %s ", measure);
    const char *row = strstr(out, prefix);
    if (!row)
        fail_msg("no row \"%s\" in:\n%s", measure, out);
    row = strchr(row + 1, '|');
    assert_non_null(row);
    if (sscanf(row, "| %lf | %lf | %lf | %lf | %lf |", &v[0], &v[1], &v[2], &v[3], &v[4]) != 5)
        fail_msg("cannot read the row \"%s\" in:\n%s", measure, out);
}

static void
expect_near(const char *measure, double got, double want, double tolerance)
{
    if (!(fabs(got - want) <= tolerance))
        fail_msg("%s: the table says %.5f, expected %.5f", measure, got, want);
}

/* What sk_humanoid_proportions says of a clip read as the command reads it. */
static void
clip_proportions(const char *relative, struct sk_proportions *out)
{
    char path[1024];
    app_run_source_path(relative, path, sizeof path);
    struct st_bvh bvh;
    struct sk_skeleton sk;
    struct em_error err = {{0}};
    if (st_bvh_load(path, &bvh, &err) != EM_OK ||
        st_bvh_to_humanoid(&bvh, SK_NAMES_CMU, st_bvh_guess_unit_scale(&bvh), path, &sk, &err) !=
            EM_OK)
        fail_msg("%s", err.message);
    st_bvh_fini(&bvh);
    if (sk_humanoid_proportions(&sk, path, out, &err) != EM_OK)
        fail_msg("%s", err.message);
    sk_skeleton_fini(&sk);
}

static void
one_skeleton_per_subject_a_repeated_skeleton_counted_once(void **state)
{
    (void)state;
    char dir[1024], a[1200], b[1200], c[1200];
    make_folder("proportions-people", dir, sizeof dir);
    copy_into(CLIP, dir, "cmu_09_01.bvh", a, sizeof a);
    copy_into(CLIP_2, dir, "cmu_09_02.bvh", b, sizeof b); /* subject 09 again: not read */
    copy_into(CLIP, dir, "cmu_77_01.bvh", c, sizeof c);   /* another subject, same body */
    struct app_run_result r;
    run_proportions((const char *[]){dir, NULL}, 0, &r);
    app_run_expect_text(r.out, "Body proportions of 1 person");
    app_run_expect_text(r.out, "3 files, 2 skeletons measured");
    app_run_expect_text(r.out, "1 other clip of the same subjects not read");
    app_run_expect_text(r.out, "1 repeating an earlier skeleton (counted once)");
    app_run_expect_text(r.err, "cmu_77_01.bvh has the same skeleton as");
    /* Every measure's row: the clip's own fraction (one person: mean = min = max), the
     * default humanoid's, and their difference at 1.75 m in cm. */
    struct sk_proportions clip, def;
    clip_proportions(CLIP, &clip);
    struct sk_skeleton humanoid;
    struct em_error err = {{0}};
    char path[1024];
    app_run_source_path(HUMANOID, path, sizeof path);
    assert_int_equal(sk_skeleton_load_json(path, &humanoid, &err), EM_OK);
    assert_int_equal(sk_humanoid_proportions(&humanoid, HUMANOID, &def, &err), EM_OK);
    const double head_175_m =
        (double)def.head_height_m * 1.75 / (double)sk_humanoid_height(&humanoid);
    sk_skeleton_fini(&humanoid);
    for (int m = 0; m < SK_MEASURE_COUNT; ++m) {
        const char *name = sk_measure_name((enum sk_measure)m);
        const double own = (double)clip.fraction[m], default_fraction = (double)def.fraction[m];
        double v[5];
        table_row(r.out, name, v);
        for (int k = 0; k < 3; ++k)
            expect_near(name, v[k], own, 6e-5);
        expect_near(name, v[3], default_fraction, 6e-5);
        expect_near(name, v[4], 100.0 * (own - default_fraction) * head_175_m, 0.06);
    }
    app_run_result_fini(&r);
    remove(a);
    remove(b);
    remove(c);
    rmdir(dir);
}

static void
without_a_folder_it_reads_the_training_clips(void **state)
{
    (void)state;
    struct app_run_result r;
    run_proportions((const char *[]){NULL}, 0, &r);
    app_run_expect_text(r.out, "mocap-train");
    app_run_expect_text(r.out, "| thigh ");
    app_run_result_fini(&r);
    run_proportions((const char *[]){"--skeleton", "/nonexistent/humanoid.json", NULL}, 2, &r);
    app_run_expect_text(r.err, "--skeleton: /nonexistent/humanoid.json: cannot open");
    app_run_result_fini(&r);
}

int
main(int argc, char **argv)
{
    if (!app_run_set_program_from_args(argc, argv))
        return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_missing_folder_is_refused_naming_it),
        cmocka_unit_test(a_folder_without_bvh_files_is_refused_naming_it),
        cmocka_unit_test(a_folder_of_unmeasurable_skeletons_exits_2_with_each_reason),
        cmocka_unit_test(one_skeleton_per_subject_a_repeated_skeleton_counted_once),
        cmocka_unit_test(without_a_folder_it_reads_the_training_clips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
