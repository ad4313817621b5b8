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

/* The median of `values[0..count)`, which it sorts; NaN when count is 0 (ev_metrics.c). */
double
ev_median_sorting(double *values, long count);

/* The tables of what a player sees (ev_report_body.c): per clip, and the summary rows of
 * mode `m` with their targets. */
struct ev_report;
enum ev_method;
void
ev_report_print_body_checks(const struct ev_report *report, FILE *out);
void
ev_report_body_summary(const struct ev_report *report, enum ev_method m, FILE *out);
/* Adds "<mode>_body_checks" objects to a clip's JSON object (a cJSON *). */
struct ev_clip_result;
bool
ev_report_body_json(void *clip_object, const struct ev_clip_result *clip);

#endif
