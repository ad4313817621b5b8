/*
 * Pieces the eval module's files share (not part of include/embody/eval.h).
 */
#ifndef EMBODY_EV_INTERNAL_H
#define EMBODY_EV_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* `v` in `width` columns with `precision` decimals into `buf`, or "-" when it is not
 * finite; returns `buf`. */
const char *
ev_format_number(char *buf, size_t size, int width, int precision, double v);

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
