/*
 * Command-line scanning shared by the program and its subcommands: a table of options,
 * an iterator that understands "--name value", "--name=value", "-x value", optional
 * values and "--", and value parsers whose errors name the option and what was expected
 * ("--height: expected metres from 0.5 to 2.8, got \"3.5\"").
 *
 * Nothing here prints: errors go into a `struct em_error` for the caller to report.
 */
#ifndef EMBODY_APP_ARGS_H
#define EMBODY_APP_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "embody/result.h"

/* Exit codes of the program. */
enum app_exit {
    APP_EXIT_OK = 0,
    APP_EXIT_FAILURE = 1, /* something failed while running (a runtime, a disk, a window) */
    APP_EXIT_USAGE = 2,   /* bad options or bad input files: nothing was done */
};

enum app_arg_kind {
    APP_ARG_FLAG = 0, /* no value */
    APP_ARG_VALUE,    /* a value is required */
    APP_ARG_OPTIONAL, /* "--name=value", or "--name value" when value does not start
                         with '-', or nothing */
};

/* One option a command accepts. */
struct app_arg_spec {
    int id;                /* returned by app_args_next; > 0 */
    const char *long_name; /* without the dashes: "height" */
    char short_name;       /* 'o', or 0 */
    enum app_arg_kind kind;
};

/* What app_args_parse hands each argument to: an option (`id` > 0, its `name` for error
 * messages, "--height" or "-o" without any "=value", and its `value`, NULL when it has
 * none) or a plain argument (`id` 0, `value` the argument). An error stops the scan. */
typedef enum em_result (*app_arg_handler)(void *context, int id, const char *name,
                                          const char *value, struct em_error *err);

/* Scans argv[first..] ("--name value", "--name=value", "-x value", optional values, "--"),
 * handing every argument to `handle`; returns the first error: from the scan
 * (EM_ERROR_INVALID_ARGUMENT: unknown option, missing value, value given to a flag; `err`
 * suggests `help_hint`, "embody --help") or from `handle`. */
enum em_result app_args_parse(int argc, char **argv, int first, const struct app_arg_spec *specs,
                              int spec_count, const char *help_hint, app_arg_handler handle,
                              void *context, struct em_error *err);

/* Parses `text` as a number in [lo, hi]. On failure: "OPTION: expected WHAT from LO to HI,
 * got \"TEXT\"" (EM_ERROR_INVALID_ARGUMENT). `what` says the unit ("metres"). */
enum em_result app_parse_number(const char *option, const char *text, double lo, double hi,
                                const char *what, double *out_value, struct em_error *err);

/* Parses `text` as a body length in metres in [lo, hi] (`what`: "a standing height"). A
 * value that reads as centimetres or millimetres of a length in range is refused with
 * the metres it meant: "--height: a standing height is in metres: did you mean 1.82?
 * (expected 0.5 to 2.8, got \"182\")"; anything else as app_parse_number. */
enum em_result app_parse_metres(const char *option, const char *text, double lo, double hi,
                                const char *what, double *out_value, struct em_error *err);

/* Parses `text` as a whole number in [lo, hi], with the same kind of message. */
enum em_result app_parse_count(const char *option, const char *text, long lo, long hi,
                               const char *what, long *out_value, struct em_error *err);

/* Checks that `path` names a regular file that can be opened for reading (not a directory,
 * a device or a pipe, which a reader of whole files could wait on for ever):
 * "OPTION: PATH: cannot open: No such file or directory". */
enum em_result app_check_readable(const char *option, const char *path, struct em_error *err);

/* Checks that `path` can be created or overwritten: its folder exists and is writable,
 * and it is not a folder itself: "OPTION: PATH: cannot write: ...". Creates nothing. */
enum em_result app_check_writable(const char *option, const char *path, struct em_error *err);

/* True when both paths exist and name the same file (however they are spelled). */
bool app_same_file(const char *a, const char *b);

/* A file a command reads, for app_check_not_input: what it is ("the clip", "--replay's
 * stream") and its path (NULL when not given). */
struct app_input_file {
    const char *what;
    const char *path;
};

/* Refuses (EM_ERROR_INVALID_ARGUMENT) an output that is the same file (device and inode)
 * as one of the `count` inputs: "-o: X.bvh is the same file as the clip X.bvh (read, not
 * written); write to another file". A missing output is fine. */
enum em_result app_check_not_input(const char *option, const char *output,
                                   const struct app_input_file *inputs, int count,
                                   struct em_error *err);

/* True when `path` ends with `suffix`, ignoring case (".bvh"). */
bool app_has_suffix(const char *path, const char *suffix);

/* The absolute form of an existing `path` without "..", "." or symbolic links, for
 * messages (`path` itself when it does not exist). `out` may be `path`. */
void app_path_tidy(const char *path, char *out, size_t out_size);

/* Prefixes an existing message with "OPTION: " (in place, truncating if needed). */
void app_error_prefix(struct em_error *err, const char *option);

#endif
