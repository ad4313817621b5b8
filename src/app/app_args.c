/* Command-line scanning and option values (app_args.h). */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/app_args.h"
#include "util/u_text.h"
#include "util/u_file.h"

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
static void
app_args_init(struct app_args *args, int argc, char **argv, int first)
{
    args->argc = argc;
    args->argv = argv;
    args->index = first;
    args->only_positionals = false;
}

static const struct app_arg_spec *
find_long(const struct app_arg_spec *specs, int count, const char *name, size_t name_len)
{
    for (int i = 0; i < count; ++i)
        if (strlen(specs[i].long_name) == name_len &&
            strncmp(specs[i].long_name, name, name_len) == 0)
            return &specs[i];
    return NULL;
}

static const struct app_arg_spec *
find_short(const struct app_arg_spec *specs, int count, char c)
{
    for (int i = 0; i < count; ++i)
        if (specs[i].short_name && specs[i].short_name == c)
            return &specs[i];
    return NULL;
}

/* The value of an option whose value may be the next argument. */
static enum app_arg_next
take_value(struct app_args *args, const struct app_arg_spec *spec, const char *name,
           const char **out_value, const char *help_hint, struct em_error *err)
{
    const char *next = args->index < args->argc ? args->argv[args->index] : NULL;
    if (spec->kind == APP_ARG_OPTIONAL) {
        /* Only a following argument that cannot be an option is taken as the value. */
        if (next && next[0] != '-') {
            *out_value = next;
            args->index++;
        }
        return APP_ARGS_OPTION;
    }
    if (!next) {
        em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s needs a value (see %s)", name, help_hint);
        return APP_ARGS_ERROR;
    }
    *out_value = next;
    args->index++;
    return APP_ARGS_OPTION;
}

/* The next argument. `out_name` gets the option's name ("--height", "-o"; without any
 * "=value") for error messages, valid until the next call. On APP_ARGS_ERROR `err` says
 * what was wrong and suggests `help_hint` ("embody --help"). */
static enum app_arg_next
app_args_next(struct app_args *args, const struct app_arg_spec *specs, int spec_count, int *out_id,
              const char **out_name, const char **out_value, const char *help_hint,
              struct em_error *err)
{
    *out_id = 0;
    *out_name = NULL;
    *out_value = NULL;
    if (args->index >= args->argc)
        return APP_ARGS_END;
    char *arg = args->argv[args->index++];
    *out_name = arg;
    if (args->only_positionals || arg[0] != '-' || strcmp(arg, "-") == 0) {
        *out_value = arg;
        return APP_ARGS_POSITIONAL;
    }
    if (strcmp(arg, "--") == 0) {
        args->only_positionals = true;
        return app_args_next(args, specs, spec_count, out_id, out_name, out_value, help_hint, err);
    }

    const struct app_arg_spec *spec = NULL;
    const char *inline_value = NULL;
    if (arg[1] == '-') {
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        const size_t len = eq ? (size_t)(eq - name) : strlen(name);
        spec = find_long(specs, spec_count, name, len);
        inline_value = eq ? eq + 1 : NULL;
        if (!spec) {
            em_fail(err, EM_ERROR_INVALID_ARGUMENT, "unknown option \"%.*s\" (see %s)",
                    (int)(len + 2), arg, help_hint);
            return APP_ARGS_ERROR;
        }
    } else {
        spec = arg[2] == '\0' ? find_short(specs, spec_count, arg[1]) : NULL;
        if (!spec) {
            em_fail(err, EM_ERROR_INVALID_ARGUMENT, "unknown option \"%s\" (see %s)", arg,
                    help_hint);
            return APP_ARGS_ERROR;
        }
    }
    *out_id = spec->id;
    if (arg[1] == '-')
        snprintf(args->name, sizeof args->name, "--%s", spec->long_name);
    else
        snprintf(args->name, sizeof args->name, "-%c", spec->short_name);
    *out_name = args->name;
    if (spec->kind == APP_ARG_FLAG) {
        if (inline_value) {
            em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s takes no value (got \"%s\")", args->name,
                    inline_value);
            return APP_ARGS_ERROR;
        }
        return APP_ARGS_OPTION;
    }
    if (inline_value) {
        *out_value = inline_value;
        return APP_ARGS_OPTION;
    }
    return take_value(args, spec, args->name, out_value, help_hint, err);
}

enum em_result
app_args_parse(int argc, char **argv, int first, const struct app_arg_spec *specs, int spec_count,
               const char *help_hint, app_arg_handler handle, void *context, struct em_error *err)
{
    struct app_args args;
    app_args_init(&args, argc, argv, first);
    for (;;) {
        int id;
        const char *name, *value;
        const enum app_arg_next kind =
            app_args_next(&args, specs, spec_count, &id, &name, &value, help_hint, err);
        if (kind == APP_ARGS_END)
            return EM_OK;
        if (kind == APP_ARGS_ERROR)
            return EM_ERROR_INVALID_ARGUMENT;
        const enum em_result r =
            handle(context, kind == APP_ARGS_POSITIONAL ? 0 : id, name, value, err);
        if (r != EM_OK)
            return r;
    }
}

enum em_result
app_parse_number(const char *option, const char *text, double lo, double hi, const char *what,
                 double *out_value, struct em_error *err)
{
    double v;
    if (!u_parse_double(text, &v) || v < lo || v > hi)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: expected %s from %g to %g, got \"%s\"",
                       option, what, lo, hi, text);
    *out_value = v;
    return EM_OK;
}

/* Above this a body length in metres is clearly another unit. */
#define METRES_AT_MOST 3.0

enum em_result
app_parse_metres(const char *option, const char *text, double lo, double hi, const char *what,
                 double *out_value, struct em_error *err)
{
    double v;
    if (u_parse_double(text, &v) && v > METRES_AT_MOST) {
        const double per_metre[] = {100.0, 1000.0}; /* centimetres, millimetres */
        for (int u = 0; u < 2; ++u)
            if (v / per_metre[u] >= lo && v / per_metre[u] <= hi)
                return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                               "%s: %s is in metres: did you mean %.2f? (expected %g to %g, "
                               "got \"%s\")",
                               option, what, v / per_metre[u], lo, hi, text);
    }
    char in_metres[96];
    snprintf(in_metres, sizeof in_metres, "%s in metres", what);
    return app_parse_number(option, text, lo, hi, in_metres, out_value, err);
}

enum em_result
app_parse_count(const char *option, const char *text, long lo, long hi, const char *what,
                long *out_value, struct em_error *err)
{
    if (!u_parse_int(text, lo, hi, out_value))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "%s: expected %s, a whole number from %ld to %ld, got \"%s\"", option, what,
                       lo, hi, text);
    return EM_OK;
}

enum em_result
app_check_readable(const char *option, const char *path, struct em_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return em_fail(err, EM_ERROR_IO, "%s: %s: cannot open: %s", option, path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return em_fail(err, EM_ERROR_IO, "%s: %s: is a directory, expected a file", option, path);
    /* Files are read whole: a device or a pipe may never end. */
    if (!S_ISREG(st.st_mode))
        return em_fail(err, EM_ERROR_IO, "%s: %s: is not a regular file", option, path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return em_fail(err, EM_ERROR_IO, "%s: %s: cannot open: %s", option, path, strerror(errno));
    fclose(f);
    return EM_OK;
}

enum em_result
app_check_writable(const char *option, const char *path, struct em_error *err)
{
    if (!path[0])
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: expected a file name, got \"\"",
                       option);
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return em_fail(err, EM_ERROR_IO, "%s: %s: is a directory, expected a file name", option,
                           path);
        if (access(path, W_OK) != 0)
            return em_fail(err, EM_ERROR_IO, "%s: %s: cannot write: %s", option, path,
                           strerror(errno));
        return EM_OK;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return em_fail(err, EM_ERROR_IO, "%s: %s: cannot write: the folder %s does not exist",
                       option, path, dir);
    if (access(dir, W_OK) != 0)
        return em_fail(err, EM_ERROR_IO, "%s: %s: cannot write in the folder %s: %s", option, path,
                       dir, strerror(errno));
    return EM_OK;
}

bool
app_same_file(const char *a, const char *b)
{
    return u_file_same(a, b);
}

enum em_result
app_check_not_input(const char *option, const char *output, const struct app_input_file *inputs,
                    int count, struct em_error *err)
{
    for (int i = 0; output && i < count; ++i)
        if (inputs[i].path && u_file_same(output, inputs[i].path))
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "%s: %s is the same file as %s %s (read, not written); write to "
                           "another file",
                           option, output, inputs[i].what, inputs[i].path);
    return EM_OK;
}

bool
app_has_suffix(const char *path, const char *suffix)
{
    const size_t n = strlen(path), s = strlen(suffix);
    return n >= s && strcasecmp(path + n - s, suffix) == 0;
}

void
app_error_prefix(struct em_error *err, const char *option)
{
    char copy[EM_ERROR_MESSAGE_MAX];
    memcpy(copy, err->message, sizeof copy);
    /* Truncation is fine: the start of the message says the most. */
    const size_t n = strlen(option);
    if (n + 2 >= sizeof err->message)
        return;
    memcpy(err->message, option, n);
    memcpy(err->message + n, ": ", 2);
    const size_t room = sizeof err->message - n - 3;
    const size_t len = strnlen(copy, room);
    memcpy(err->message + n + 2, copy, len);
    err->message[n + 2 + len] = '\0';
}

void
app_path_tidy(const char *path, char *out, size_t out_size)
{
    char *full = path && path[0] ? realpath(path, NULL) : NULL;
    if (full)
        snprintf(out, out_size, "%s", full);
    else if (out != path)
        snprintf(out, out_size, "%s", path ? path : "");
    free(full);
}
