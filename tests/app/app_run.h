/*
 * Test helper: runs the built embody program (its path is the test's first argument,
 * given by CTest as $<TARGET_FILE:embody>) as a child process with a changed environment,
 * captures its stdout and stderr, and kills it if it runs past a time limit. No shell.
 */
#ifndef EMBODY_TESTS_APP_RUN_H
#define EMBODY_TESTS_APP_RUN_H

#include <stdbool.h>
#include <stddef.h>

struct app_run_result {
    int exit_code;  /* the program's exit status, or -1 when a signal ended it */
    int signal;     /* the signal that ended it, 0 if none */
    bool timed_out; /* killed at the time limit */
    double seconds; /* wall time */
    char *out;      /* everything it wrote to stdout, NUL-terminated (owned) */
    char *err;      /* and to stderr */
};

/* Remembers the program's path (call once from main with argv[1]). */
void app_run_set_program(const char *path);

/* The same from a test's own arguments: the program's path is argv[1]; without it, prints
 * the usage on stderr and returns false (main then exits 2). */
bool app_run_set_program_from_args(int argc, char **argv);

const char *app_run_program(void);

/* Limits the size of the files the program started by app_run may write (RLIMIT_FSIZE,
 * SIGXFSZ ignored), so writes past `bytes` fail as on a full disk; 0 lifts the limit. */
void app_run_set_file_size_limit(long bytes);

/* Runs the program with `args` (NULL-terminated, without argv[0]) and the environment
 * changes `env` (NULL-terminated; "NAME=value" sets, "NAME" unsets; may be NULL), in the
 * current directory, for at most `timeout_ms`. Fails the test if it cannot be started.
 * Free the result with app_run_result_fini. */
void app_run(const char *const *args, const char *const *env, int timeout_ms,
             struct app_run_result *out_result);

void app_run_result_fini(struct app_run_result *result);

/* Fails the test, showing the program's output, unless it exited with `code`. */
void app_run_expect_exit(const struct app_run_result *result, int code);

/* Fails the test, showing the text, unless `text` contains `needle`. */
void app_run_expect_text(const char *text, const char *needle);

/* Counts the occurrences of `needle` in `text`. */
int app_run_count_text(const char *text, const char *needle);

/* "<build>/tests/app/tmp/<tag>-<pid>.<ext>": a scratch file for this test process. */
void app_run_scratch_path(const char *tag, const char *ext, char *out, size_t size);

/* "<source>/<relative>": a file of the source tree (tests/data/...). */
void app_run_source_path(const char *relative, char *out, size_t size);

/* Reads a whole file (NUL-terminated, free it), or fails the test. */
char *app_run_read_file(const char *path, size_t *out_size);

/* Copies file `from` to `to` byte for byte, or fails the test. */
void app_run_copy_file(const char *from, const char *to);

#endif
