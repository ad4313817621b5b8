/*
 * Recordings that survive the end of the program (issue 20): kill -9 mid-recording leaves
 * "<path>.partial" with the whole rows so far, which --replay plays (dropping a cut last
 * row and saying so); SIGHUP and SIGTERM end a recording as Ctrl-C does; the next run
 * names a leftover partial recording; a recording that fails on a full disk says what is
 * on disk, not what was asked for; a recording onto a file that exists keeps that file
 * and goes to the next free numbered name (issue 41).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "app_run.h"
#include "embody/stream.h"

#define TIMEOUT_MS 120000

static char g_stream[1024]; /* tests/data/streams/cmu_14_04.csv */

static const char *const k_env[] = {"XR_RUNTIME_JSON=/nonexistent/runtime.json", NULL};

/* Starts the program with `args` (its output into `log_path`), sends `sig` after
 * `after_ms`, and returns its wait status. */
static int
run_then_signal(const char *const *args, int sig, int after_ms, const char *log_path)
{
    const char *argv[32];
    int argc = 0;
    argv[argc++] = app_run_program();
    for (int i = 0; args[i] && argc < 31; ++i)
        argv[argc++] = args[i];
    argv[argc] = NULL;
    fflush(NULL);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        const int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            _exit(127);
        dup2(fd, 1);
        dup2(fd, 2);
        setenv("XR_RUNTIME_JSON", "/nonexistent/runtime.json", 1);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    const struct timespec wait = {after_ms / 1000, (long)(after_ms % 1000) * 1000000L};
    nanosleep(&wait, NULL);
    kill(pid, sig);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
}

static bool
exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/* Rows after the header in a stream file's text (whole lines only). */
static int
whole_rows(const char *text)
{
    int lines = 0;
    for (const char *p = text; *p; ++p)
        lines += *p == '\n';
    return lines - 1;
}

static void
kill_9_mid_recording_leaves_a_partial_file_whose_rows_replay(void **state)
{
    (void)state;
    char out[1024], partial[1100], log[1024];
    app_run_scratch_path("crash", "csv", out, sizeof out);
    snprintf(partial, sizeof partial, "%s.partial", out);
    app_run_scratch_path("crash-log", "txt", log, sizeof log);
    remove(out);
    remove(partial);
    /* The demo plays in real time (60 frames/s) until stopped. */
    const int status = run_then_signal(
        (const char *[]){"--demo", "--no-window", "--record", out, NULL}, SIGKILL, 2500, log);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    assert_false(exists(out)); /* never finished */
    assert_true(exists(partial));
    char *text = app_run_read_file(partial, NULL);
    const int rows = whole_rows(text);
    /* Rows reach the file at least every 0.25 s: of about 2 s of frames, most are there. */
    if (rows < 45)
        fail_msg("only %d whole rows in %s after 2.5 s", rows, partial);
    free(text);
    struct app_run_result r;
    app_run((const char *[]){"--replay", partial, "--fast", "--no-window", NULL}, k_env,
            TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    app_run_result_fini(&r);
    /* Half a row more, as if cut mid-write: the whole rows play and the cut one is named. */
    FILE *f = fopen(partial, "a");
    assert_non_null(f);
    fputs("9.5,0.1,1.6,0.2,0,0", f);
    fclose(f);
    app_run((const char *[]){"--replay", partial, "--fast", "--no-window", NULL}, k_env,
            TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.err, "the last row is cut short");
    char want[64];
    snprintf(want, sizeof want, "%d frames from replay", rows);
    app_run_expect_text(r.out, want);
    app_run_result_fini(&r);
    remove(partial);
    remove(log);
}

static void
sighup_and_sigterm_end_a_recording_as_ctrl_c_does(void **state)
{
    (void)state;
    const int signals[] = {SIGHUP, SIGTERM};
    for (int i = 0; i < 2; ++i) {
        char out[1024], partial[1100], log[1024];
        app_run_scratch_path(i ? "term" : "hup", "csv", out, sizeof out);
        snprintf(partial, sizeof partial, "%s.partial", out);
        app_run_scratch_path("signal-log", "txt", log, sizeof log);
        remove(out);
        const int status = run_then_signal(
            (const char *[]){"--demo", "--no-window", "--record", out, NULL}, signals[i], 1500,
            log);
        char *log_text = app_run_read_file(log, NULL);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fail_msg("signal %d: the program did not end cleanly:\n%s", signals[i], log_text);
        app_run_expect_text(log_text, "recorded ");
        free(log_text);
        assert_true(exists(out));
        assert_false(exists(partial));
        struct st_stream s;
        struct em_error err = {{0}};
        if (st_stream_load(out, &s, &err) != EM_OK)
            fail_msg("%s", err.message);
        assert_true(s.frame_count > 20);
        st_stream_fini(&s);
        remove(out);
        remove(log);
    }
}

static void
a_leftover_partial_recording_is_kept_and_named_by_the_next_run(void **state)
{
    (void)state;
    char out[1024], partial[1100], aside[1100];
    app_run_scratch_path("leftover", "csv", out, sizeof out);
    snprintf(partial, sizeof partial, "%s.partial", out);
    snprintf(aside, sizeof aside, "%s.partial.1", out);
    remove(aside);
    FILE *f = fopen(partial, "w");
    assert_non_null(f);
    fputs("an earlier session\n", f);
    fclose(f);
    struct app_run_result r;
    app_run((const char *[]){"--replay", g_stream, "--fast", "--no-window", "--record", out,
                             NULL},
            k_env, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.err, aside);
    app_run_result_fini(&r);
    char *kept = app_run_read_file(aside, NULL);
    assert_string_equal(kept, "an earlier session\n");
    free(kept);
    assert_true(exists(out));
    assert_false(exists(partial));
    remove(out);
    remove(aside);
}

static void
a_recording_that_fails_on_a_full_disk_says_what_is_on_disk(void **state)
{
    (void)state;
    struct app_run_result r;
    app_run((const char *[]){"--replay", g_stream, "--fast", "--no-window", "--record",
                             "/dev/full", NULL},
            k_env, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 1);
    app_run_expect_text(r.err, "No space left on device");
    assert_null(strstr(r.out, "recorded "));
    app_run_expect_text(r.out, "recording to /dev/full failed: none of its");
    app_run_result_fini(&r);
    /* A disk that fills after 20 kB (a file size limit): the rows before are kept. */
    char out[1024], partial[1100];
    app_run_scratch_path("full", "csv", out, sizeof out);
    snprintf(partial, sizeof partial, "%s.partial", out);
    remove(out);
    remove(partial);
    app_run_set_file_size_limit(20000);
    app_run((const char *[]){"--replay", g_stream, "--no-window", "--frames", "150", "--record",
                             out, NULL},
            k_env,
            TIMEOUT_MS, &r);
    app_run_set_file_size_limit(0);
    app_run_expect_exit(&r, 1);
    assert_null(strstr(r.out, "recorded "));
    app_run_expect_text(r.out, "frames are on disk, in ");
    assert_false(exists(out));
    long claimed = -1;
    const char *at = strstr(r.out, "failed: ");
    assert_non_null(at);
    assert_int_equal(sscanf(at, "failed: %ld of", &claimed), 1);
    app_run_result_fini(&r);
    struct st_stream s;
    struct em_error err = {{0}};
    if (st_stream_load(partial, &s, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(s.frame_count, claimed); /* the summary's count is what is there */
    assert_true(claimed > 10);
    st_stream_fini(&s);
    remove(partial);
}

/* "<stem>.<n>.csv" beside a scratch "<stem>.csv". */
static void
numbered(const char *csv, int n, char *out, size_t size)
{
    snprintf(out, size, "%.*s.%d.csv", (int)(strlen(csv) - 4), csv, n);
}

/* --record onto a file that exists (a player's earlier session) keeps that file byte for
 * byte and records to the next free numbered name, saying which at the start and in the
 * summary; the next run takes the next number. */
static void
recording_onto_an_existing_file_keeps_it_and_says_where_the_new_one_went(void **state)
{
    (void)state;
    char out[1024], first[1100], second[1100];
    app_run_scratch_path("session", "csv", out, sizeof out);
    numbered(out, 1, first, sizeof first);
    numbered(out, 2, second, sizeof second);
    remove(first);
    remove(second);
    app_run_copy_file(g_stream, out); /* the earlier session */
    size_t before_size = 0;
    char *before = app_run_read_file(out, &before_size);
    const char *names[] = {first, second};
    for (int run = 0; run < 2; ++run) {
        struct app_run_result r;
        app_run((const char *[]){"--replay", g_stream, "--fast", "--no-window", "--frames", "30",
                                 "--record", out, NULL},
                k_env, TIMEOUT_MS, &r);
        app_run_expect_exit(&r, 0);
        char said[2400];
        snprintf(said, sizeof said, "recording to %s: %s is there already and is kept", names[run],
                 out);
        app_run_expect_text(r.err, said);
        snprintf(said, sizeof said, "recorded 30 frames to %s (%s was there already", names[run],
                 out);
        app_run_expect_text(r.out, said);
        app_run_result_fini(&r);
        struct st_stream s;
        struct em_error err = {{0}};
        if (st_stream_load(names[run], &s, &err) != EM_OK)
            fail_msg("%s", err.message);
        assert_int_equal(s.frame_count, 30);
        st_stream_fini(&s);
        size_t after_size = 0;
        char *after = app_run_read_file(out, &after_size);
        assert_int_equal(after_size, before_size);
        assert_memory_equal(after, before, before_size);
        free(after);
    }
    free(before);
    remove(out);
    remove(first);
    remove(second);
}

int
main(int argc, char **argv)
{
    if (!app_run_set_program_from_args(argc, argv))
        return 2;
    app_run_source_path("tests/data/streams/cmu_14_04.csv", g_stream, sizeof g_stream);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kill_9_mid_recording_leaves_a_partial_file_whose_rows_replay),
        cmocka_unit_test(sighup_and_sigterm_end_a_recording_as_ctrl_c_does),
        cmocka_unit_test(a_leftover_partial_recording_is_kept_and_named_by_the_next_run),
        cmocka_unit_test(a_recording_that_fails_on_a_full_disk_says_what_is_on_disk),
        cmocka_unit_test(recording_onto_an_existing_file_keeps_it_and_says_where_the_new_one_went),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
