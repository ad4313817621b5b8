/*
 * The summary table of `embody eval` (its rows: a measure, its value, its target and the
 * verdict) and the "Open targets" table after it: the targets not reached yet are held
 * back from the summary and listed apart. Used by the report (ev_report.c) and by the
 * player's checks (ev_report_body.c), which both add rows.
 */
#include <stdio.h>
#include <string.h>

#include "eval/ev_internal.h"

void
ev_summary_line(FILE *out, const char *measure, const char *value, const char *target,
                const char *last)
{
    fprintf(out, "| %-36s | %-32s | %-26s | %-8s |\n", measure, value, target, last);
}

void
ev_summary_row(struct ev_summary *s, const char *measure, const char *value, const char *target,
               const char *verdict, const char *origin)
{
    if (strcmp(verdict, "open") != 0 || s->open_count == EV_SUMMARY_OPEN_MAX) {
        ev_summary_line(s->out, measure, value, target, verdict);
        return;
    }
    struct ev_summary_open *o = &s->open[s->open_count++];
    snprintf(o->measure, sizeof o->measure, "%s", measure);
    snprintf(o->value, sizeof o->value, "%s", value);
    snprintf(o->target, sizeof o->target, "%s", target);
    o->origin = origin;
}

/* The targets not reached yet, after the summary: aims of earlier work, kept in view. */
void
ev_summary_print_open(const struct ev_summary *s)
{
    FILE *out = s->out;
    fprintf(out, "\n## Open targets\n\n");
    if (s->open_count == 0) {
        fprintf(out, "None: every target above is met.\n");
        return;
    }
    fprintf(out,
            "%d aims set by earlier work (by the issue named, where known) that the body "
            "does not reach yet: work still open, not a failure of this run (the exit "
            "status is 0 when every clip ran; docs/program.md).\n\n",
            s->open_count);
    ev_summary_line(out, "measure", "now", "target", "set by");
    fprintf(out, "|--------------------------------------|----------------------------------|"
                 "----------------------------|----------|\n");
    for (int i = 0; i < s->open_count; ++i)
        ev_summary_line(out, s->open[i].measure, s->open[i].value, s->open[i].target,
                        s->open[i].origin ? s->open[i].origin : "-");
}
