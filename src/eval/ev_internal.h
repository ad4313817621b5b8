/*
 * Pieces the eval module's files share (not part of src/eval/eval.h).
 */
#ifndef EMBODY_EV_INTERNAL_H
#define EMBODY_EV_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct ev_options;
struct pr_model;

/* `v` in `width` columns with `precision` decimals into `buf`, or "-" when it is not
 * finite; returns `buf`. */
const char *
ev_format_number(char *buf, size_t size, int width, int precision, double v);

/* Loads the prior the options name (--prior, or the shipped model): the body the program
 * uses by default. On failure warns on stderr and returns false (the procedural body
 * runs). `out` is the caller's to pr_model_fini on success; `out_path` (`size` bytes, or
 * NULL) gets the model file's path, for the report. */
bool
ev_prior_load(const struct ev_options *options, struct pr_model *out, char *out_path,
              size_t size);

/* With a bound (--max-mpjpe): prints the known-body mean MPJPE of `report` against it,
 * `which` after "MPJPE" ("" or " (prior)"); true when it is exceeded (exit status 1).
 * Without a bound: nothing, false. (ev_prior.c, which ev_main.c calls, not the reverse.) */
struct ev_report;
bool
ev_print_bound_check(const struct ev_report *report, const char *which);

/* The median of `values[0..count)`, which it sorts; NaN when count is 0 (ev_metrics.c). */
double
ev_median_sorting(double *values, long count);

/* The summary's rows (ev_summary.c): a measure, its value, its target and the verdict
 * ("met", "open" for a target not reached yet, "no value", or another word), and the
 * issue that set the target ("issue 10"; NULL when unknown). A met row is printed at
 * once; an open one waits for the "Open targets" table after the summary. */
#define EV_SUMMARY_OPEN_MAX 64

struct ev_summary_open {
    char measure[64], value[64], target[64];
    const char *origin;
};

struct ev_summary {
    FILE *out;
    int open_count;
    struct ev_summary_open open[EV_SUMMARY_OPEN_MAX];
};

void
ev_summary_row(struct ev_summary *summary, const char *measure, const char *value,
               const char *target, const char *verdict, const char *origin);
/* One row of the summary's columns, printed as it is. */
void
ev_summary_line(FILE *out, const char *measure, const char *value, const char *target,
                const char *last);
/* The "Open targets" table: the rows held back, or a line saying none. */
void
ev_summary_print_open(const struct ev_summary *summary);

/* The tables of what a player sees (ev_report_body.c): per clip, and the summary rows of
 * mode `m` with their targets. */
enum ev_method;
void
ev_report_print_body_checks(const struct ev_report *report, FILE *out);
void
ev_report_body_summary(const struct ev_report *report, enum ev_method m,
                       struct ev_summary *summary);
/* Adds "<mode>_body_checks" objects to a clip's JSON object (a cJSON *). */
struct ev_clip_result;
bool
ev_report_body_json(void *clip_object, const struct ev_clip_result *clip);

/* Real transitions frame by frame (ev_transitions.c, `embody eval --transitions`). */
struct ev_clip;
struct em_error;
struct ev_transition_result {
    int rows;
    double mpjpe_cm;
    double head_p99_cm;        /* the head joint's distance from its headset target */
    double head_max_cm;
    int worst_head_row;
    double head_angle_p95_deg; /* its angle from the headset's (ev_body_checks) */
    double head_angle_max_deg;
    double hands_off_share;    /* frames with a tracked hand > EV_EFFECTOR_MISS_M off */
    double lowest_cm;          /* the lowest joint over the clip, above the floor */
    double jitter_ratio;       /* our jitter over the truth's */
};
/* -1, or which transition a clip's file name says (lieDown, depositFloor, squat, kick, jog). */
int
ev_transition_kind(const char *file);
enum em_result
ev_transition_run(const struct ev_clip *clip, enum ev_method method, const struct pr_model *prior,
                  struct ev_transition_result *out, struct em_error *err);
/* Prints the table of the folder's transition clips; returns the exit status. */
int
ev_transitions_main(const struct ev_options *options);

/* Prints `root` as JSON to `path` when `made` (root built whole) and deletes it; says why
 * not on stderr ("embody eval: ..."). Returns whether the file was written. */
struct cJSON;
bool
ev_json_write(struct cJSON *root, bool made, const char *path);

#endif
