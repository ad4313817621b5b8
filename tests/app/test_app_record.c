/*
 * The recorder (src/app/app_record.c) on its own: the free name a recording takes when
 * its name is in use, and F9's dated recordings, two within the same second included,
 * never writing over a file that was there.
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

#include "app/app_args.h"
#include "app/app_record.h"

static char g_dir[1024]; /* a scratch folder of this test process */

static void
write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void
expect_text(const char *path, const char *text)
{
    char got[256] = "";
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    const size_t n = fread(got, 1, sizeof got - 1, f);
    got[n] = '\0';
    fclose(f);
    assert_string_equal(got, text);
}

static void
free_name_is_the_asked_one_until_a_file_is_there(void **state)
{
    (void)state;
    char asked[1200], got[1300], want[1300];
    snprintf(asked, sizeof asked, "%s/keep.csv", g_dir);
    remove(asked);
    assert_int_equal(APP_RECORD_NAME_FREE, app_record_free_name(asked, got, sizeof got));
    assert_string_equal(got, asked);
    write_text(asked, "a session\n");
    assert_int_equal(APP_RECORD_NAME_FREE, app_record_free_name(asked, got, sizeof got));
    snprintf(want, sizeof want, "%s/keep.1.csv", g_dir);
    assert_string_equal(got, want);
    write_text(want, "another\n");
    assert_int_equal(APP_RECORD_NAME_FREE, app_record_free_name(asked, got, sizeof got));
    snprintf(want, sizeof want, "%s/keep.2.csv", g_dir);
    assert_string_equal(got, want);
    remove(asked);
    snprintf(want, sizeof want, "%s/keep.1.csv", g_dir);
    remove(want);
    /* No extension, and a dot in a folder's name: the number goes at the end. */
    snprintf(asked, sizeof asked, "%s/session", g_dir);
    write_text(asked, "x");
    assert_int_equal(APP_RECORD_NAME_FREE, app_record_free_name(asked, got, sizeof got));
    snprintf(want, sizeof want, "%s/session.1", g_dir);
    assert_string_equal(got, want);
    remove(asked);
    /* A device is written as asked (/dev/null records nothing, /dev/full tests a disk). */
    assert_int_equal(APP_RECORD_NAME_FREE, app_record_free_name("/dev/null", got, sizeof got));
    assert_string_equal(got, "/dev/null");
}

/* Opens and closes a recording with one frame, as the live loop does. */
static void
record_one_frame(struct app_record *rec)
{
    struct em_tracking_frame frame;
    memset(&frame, 0, sizeof frame);
    for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
        frame.device[d].pose.orientation[3] = 1.0f;
        frame.device[d].pose.position_m[1] = 1.0f;
        frame.device[d].flags = EM_POSE_ORIENTATION_VALID | EM_POSE_POSITION_VALID;
    }
    app_record_frame(rec, &frame, NULL, 0);
    assert_int_equal(rec->recorded, 1);
    assert_int_equal(app_record_close(rec), APP_EXIT_OK);
}

static void
dated_recordings_in_one_second_keep_each_other(void **state)
{
    (void)state;
    char here[1024];
    assert_non_null(getcwd(here, sizeof here));
    assert_int_equal(chdir(g_dir), 0);
    struct app_record *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    struct em_error err = {{0}};
    /* Within the same second when the clock allows; else a second pair is. */
    for (int attempt = 0; attempt < 2; ++attempt) {
        if (app_record_start_dated(a, &err) != EM_OK)
            fail_msg("%s", err.message);
        record_one_frame(a);
        if (app_record_start_dated(b, &err) != EM_OK)
            fail_msg("%s", err.message);
        record_one_frame(b);
        const size_t stem = strlen("embody-YYYYmmdd-HHMMSS");
        const bool same_second = strncmp(a->path, b->path, stem) == 0;
        if (same_second) {
            assert_string_not_equal(a->path, b->path);
            assert_string_equal(b->asked, a->path);
        }
        struct stat sa, sb;
        assert_int_equal(stat(a->path, &sa), 0);
        assert_int_equal(stat(b->path, &sb), 0);
        assert_true(sa.st_size > 0 && sb.st_size > 0);
        remove(a->path);
        remove(b->path);
        if (same_second)
            break;
    }
    free(a);
    free(b);
    assert_int_equal(chdir(here), 0);
}

static void
a_recording_never_replaces_the_file_it_was_asked_for(void **state)
{
    (void)state;
    char asked[1200], first[1300];
    snprintf(asked, sizeof asked, "%s/mine.csv", g_dir);
    snprintf(first, sizeof first, "%s/mine.1.csv", g_dir);
    remove(first);
    write_text(asked, "an earlier session\n");
    struct app_record *rec = calloc(1, sizeof *rec);
    assert_non_null(rec);
    struct em_error err = {{0}};
    if (app_record_start(rec, asked, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_string_equal(rec->path, first);
    assert_string_equal(rec->asked, asked);
    record_one_frame(rec);
    expect_text(asked, "an earlier session\n");
    free(rec);
    remove(asked);
    remove(first);
}


/* A file made at the name while the recording runs is kept; the recording goes to the
 * first free numbered name and says so. */
static void
a_file_appearing_during_the_recording_is_kept(void **state)
{
    (void)state;
    char asked[1200], numbered[1300];
    snprintf(asked, sizeof asked, "%s/over.csv", g_dir);
    snprintf(numbered, sizeof numbered, "%s/over.1.csv", g_dir);
    remove(asked);
    remove(numbered);
    struct app_record *rec = calloc(1, sizeof *rec);
    assert_non_null(rec);
    struct em_error err = {{0}};
    if (app_record_start(rec, asked, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_string_equal(rec->path, asked);
    write_text(asked, "precious\n");
    record_one_frame(rec);
    expect_text(asked, "precious\n");
    assert_string_equal(rec->path, numbered);
    assert_string_equal(rec->asked, asked);
    struct stat st;
    assert_int_equal(stat(numbered, &st), 0);
    assert_true(st.st_size > 0);
    char summary[4096] = "";
    FILE *mem = fmemopen(summary, sizeof summary, "w");
    assert_non_null(mem);
    app_record_print_summary(rec, mem);
    fclose(mem);
    assert_non_null(strstr(summary, "appeared while recording"));
    free(rec);
    remove(asked);
    remove(numbered);
}

/* Two recordings onto one name at once: the second sees the first's live partial file,
 * leaves it alone and takes the next name; both end whole, neither over the other. */
static void
two_recordings_onto_one_name_both_keep_their_files(void **state)
{
    (void)state;
    char asked[1200], numbered[1300], partial[1300];
    snprintf(asked, sizeof asked, "%s/race.csv", g_dir);
    snprintf(numbered, sizeof numbered, "%s/race.1.csv", g_dir);
    snprintf(partial, sizeof partial, "%s/race.csv.partial.1", g_dir);
    remove(asked);
    remove(numbered);
    struct app_record *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    struct em_error err = {{0}};
    if (app_record_start(a, asked, &err) != EM_OK)
        fail_msg("%s", err.message);
    if (app_record_start(b, asked, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_string_equal(a->path, asked);
    assert_string_equal(b->path, numbered);
    assert_string_equal(b->writer.leftover_path, ""); /* a's partial was not taken aside */
    struct stat st;
    assert_int_not_equal(stat(partial, &st), 0);
    record_one_frame(b);
    record_one_frame(a);
    assert_string_equal(a->path, asked);
    assert_string_equal(b->path, numbered);
    assert_int_equal(stat(asked, &st), 0);
    assert_true(st.st_size > 0);
    assert_int_equal(stat(numbered, &st), 0);
    assert_true(st.st_size > 0);
    free(a);
    free(b);
    remove(asked);
    remove(numbered);
}

/* A name that does not fit is said to be too long, not taken. */
static void
a_too_long_name_gets_the_right_reason(void **state)
{
    (void)state;
    char *asked = malloc(APP_RECORD_PATH_MAX + 100);
    assert_non_null(asked);
    memset(asked, 'a', APP_RECORD_PATH_MAX + 50);
    memcpy(asked + APP_RECORD_PATH_MAX + 50, ".csv", 5);
    char got[64];
    assert_int_equal(app_record_free_name(asked, got, sizeof got), APP_RECORD_NAME_TOO_LONG);
    struct app_record *rec = calloc(1, sizeof *rec);
    assert_non_null(rec);
    struct em_error err = {{0}};
    assert_int_not_equal(app_record_start(rec, asked, &err), EM_OK);
    assert_non_null(strstr(err.message, "too long"));
    assert_null(strstr(err.message, "numbered names (up to"));
    free(asked);
    /* An existing file whose numbered name does not fit. */
    char existing[1200];
    snprintf(existing, sizeof existing, "%s/keep.csv", g_dir);
    write_text(existing, "x");
    char numbered[sizeof existing];
    assert_int_equal(app_record_free_name(existing, numbered, strlen(existing) + 2),
                     APP_RECORD_NAME_TOO_LONG);
    remove(existing);
    free(rec);
}

int
main(void)
{
    snprintf(g_dir, sizeof g_dir, "%s/tests/app/tmp/record-%d", EMBODY_BINARY_DIR, (int)getpid());
    char parent[1024];
    snprintf(parent, sizeof parent, "%s/tests/app/tmp", EMBODY_BINARY_DIR);
    mkdir(parent, 0777);
    if (mkdir(g_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "%s: %s\n", g_dir, strerror(errno));
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(free_name_is_the_asked_one_until_a_file_is_there),
        cmocka_unit_test(dated_recordings_in_one_second_keep_each_other),
        cmocka_unit_test(a_recording_never_replaces_the_file_it_was_asked_for),
        cmocka_unit_test(a_file_appearing_during_the_recording_is_kept),
        cmocka_unit_test(two_recordings_onto_one_name_both_keep_their_files),
        cmocka_unit_test(a_too_long_name_gets_the_right_reason),
    };
    const int failed = cmocka_run_group_tests(tests, NULL, NULL);
    rmdir(g_dir);
    return failed;
}
