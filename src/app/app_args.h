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

/* An iterator over argv (not copied: the strings must outlive it). */
struct app_args {
    int argc;
    char **argv;
    int index;             /* next argument to look at */
    bool only_positionals; /* "--" was seen */
    char name[72];         /* the option last returned, as "--height" or "-o" */
};

enum app_arg_next {
    APP_ARGS_END = 0,    /* no more arguments */
    APP_ARGS_OPTION,     /* an option from the table: *out_id, *out_value (NULL if none) */
    APP_ARGS_POSITIONAL, /* a plain argument: *out_value */
    APP_ARGS_ERROR,      /* unknown option, missing value, value given to a flag */
};

/* Starts at argv[first]. */
void app_args_init(struct app_args *args, int argc, char **argv, int first);

/* The next argument. `out_name` gets the option's name ("--height", "-o"; without any
 * "=value") for error messages, valid until the next call. On APP_ARGS_ERROR `err` says what was
 * wrong and suggests `help_hint` ("embody --help"). */
enum app_arg_next app_args_next(struct app_args *args, const struct app_arg_spec *specs,
                                int spec_count, int *out_id, const char **out_name,
                                const char **out_value, const char *help_hint,
                                struct em_error *err);

/* Parses `text` as a number in [lo, hi]. On failure: "OPTION: expected WHAT from LO to HI,
 * got \"TEXT\"" (EM_ERROR_INVALID_ARGUMENT). `what` says the unit ("metres"). */
enum em_result app_parse_number(const char *option, const char *text, double lo, double hi,
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

/* True when `path` ends with `suffix`, ignoring case (".bvh"). */
bool app_has_suffix(const char *path, const char *suffix);

/* The absolute form of an existing `path` without "..", "." or symbolic links, for
 * messages (`path` itself when it does not exist). `out` may be `path`. */
void app_path_tidy(const char *path, char *out, size_t out_size);

/* Prefixes an existing message with "OPTION: " (in place, truncating if needed). */
void app_error_prefix(struct em_error *err, const char *option);

#endif
