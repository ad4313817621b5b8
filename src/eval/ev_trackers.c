/*
 * Tracker setups in the evaluation (include/embody/eval.h): `embody eval --trackers SETUP`
 * gives the body the clip's body trackers of that setup besides head and hands
 * (PROTOCOL.md section 2b; made from the clip like the 3-point stream, so any clip can be
 * scored), and `--trackers all` runs every named setup and prints one row per setup and
 * mode with the targets of issue 12.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "embody/body.h"
#include "embody/eval.h"
#include "embody/m_math.h"
#include "embody/stream.h"

/* ---- the table of setups ---------------------------------------------------------- */

#define SETUP_COUNT 5

static const struct {
    const char *name;
    uint32_t mask;
    double mpjpe_target_cm; /* known body; 0 = none */
} k_setups[SETUP_COUNT] = {
    {"3", ST_SETUP_3, 0.0}, {"4", ST_SETUP_4, 8.0},   {"6", ST_SETUP_6, 3.0},
    {"8", ST_SETUP_8, 0.0}, {"11", ST_SETUP_11, 2.0},
};

/* Targets besides MPJPE (issue 12). */
#define SIX_LOWER_TARGET_CM 4.0
#define SIX_SKATE_TARGET_CM 0.3
#define JITTER_RATIO_TARGET 1.5
#define HEIGHT_ONLY_GAP_TARGET_CM 1.5
#define ELEVEN_UPDATE_TARGET_US 10.0

struct setup_row {
    bool ran;
    struct ev_means means;
    double worst_jitter_ratio[EV_METHOD_COUNT]; /* over clips: ours / truth's */
    char worst_clip[EV_METHOD_COUNT][256];
    double update_median_us[EV_METHOD_COUNT];
    int failed;
};

static void
collect(const struct ev_report *r, struct setup_row *row)
{
    row->ran = true;
    row->means = r->means;
    row->failed = r->failed_count;
    for (int m = 0; m < EV_METHOD_COUNT; ++m) {
        row->worst_jitter_ratio[m] = (double)NAN;
        row->update_median_us[m] = r->timing[m].median_us;
        for (int c = 0; c < r->clip_count; ++c) {
            const struct ev_clip_result *clip = &r->clips[c];
            if (!clip->has[m] || !(clip->truth_jitter_m_s3 > 0.0))
                continue;
            const double ratio = clip->scores[m].jitter_m_s3 / clip->truth_jitter_m_s3;
            if (isnan(row->worst_jitter_ratio[m]) || ratio > row->worst_jitter_ratio[m]) {
                row->worst_jitter_ratio[m] = ratio;
                snprintf(row->worst_clip[m], sizeof row->worst_clip[m], "%s", clip->file);
            }
        }
    }
}

static void
print_rows(const struct setup_row *rows, const struct ev_options *o, FILE *out)
{
    fprintf(out, "| setup | mode        | MPJPE cm | lower cm | feet cm | skate cm/frame "
                 "| jitter / truth | worst clip jitter / truth | update median us |\n");
    fprintf(out, "|-------|-------------|----------|----------|---------|----------------"
                 "|----------------|---------------------------|------------------|\n");
    for (int s = 0; s < SETUP_COUNT; ++s)
        for (int m = 0; m < EV_DO_NOTHING; ++m) {
            if (!rows[s].ran || !(o->modes & (1u << m)))
                continue;
            const struct ev_scores *sc = &rows[s].means.scores[m];
            const double truth = rows[s].means.truth_jitter_m_s3;
            fprintf(out,
                    "| %5s | %-11s | %8.2f | %8.2f | %7.2f | %14.3f | %14.2f | %25.2f | %16.2f |\n",
                    k_setups[s].name, ev_method_name((enum ev_method)m), sc->mpjpe_cm[EV_GROUP_ALL],
                    sc->mpjpe_cm[EV_GROUP_LOWER], sc->mpjpe_cm[EV_GROUP_FEET], sc->foot_skate_cm,
                    truth > 0.0 ? sc->jitter_m_s3 / truth : (double)NAN,
                    rows[s].worst_jitter_ratio[m], rows[s].update_median_us[m]);
        }
}

static bool
target_row(FILE *out, const char *measure, double value, const char *unit, const char *cmp,
           double target)
{
    const bool met = isfinite(value) && value <= target;
    char v[64], t[64];
    snprintf(v, sizeof v, "%.2f %s", value, unit);
    snprintf(t, sizeof t, "%s %.2f %s", cmp, target, unit);
    fprintf(out, "| %-48s | %-14s | %-14s | %-7s |\n", measure, v, t, met ? "met" : "NOT MET");
    return met;
}

static int
print_targets(const struct setup_row *rows, const struct ev_options *o, FILE *out)
{
    const bool known = (o->modes & EV_MODE_KNOWN_BODY) != 0;
    const bool height = (o->modes & EV_MODE_HEIGHT_ONLY) != 0;
    int missed = 0;
    char what[96];
    fprintf(out, "\n| %-48s | value          | target         | verdict |\n", "target");
    fprintf(out, "|--------------------------------------------------|----------------"
                 "|----------------|---------|\n");
    for (int s = 0; s < SETUP_COUNT && known; ++s) {
        const struct ev_scores *k = &rows[s].means.scores[EV_KNOWN_BODY];
        if (k_setups[s].mpjpe_target_cm > 0.0) {
            snprintf(what, sizeof what, "%s-point known body: MPJPE", k_setups[s].name);
            missed += !target_row(out, what, k->mpjpe_cm[EV_GROUP_ALL], "cm",
                                  "<=", k_setups[s].mpjpe_target_cm);
        }
        if (k_setups[s].mask == ST_SETUP_6) {
            missed += !target_row(out, "6-point known body: lower body MPJPE",
                                  k->mpjpe_cm[EV_GROUP_LOWER], "cm", "<=", SIX_LOWER_TARGET_CM);
            missed += !target_row(out, "6-point known body: foot skate", k->foot_skate_cm, "cm/f",
                                  "<=", SIX_SKATE_TARGET_CM);
        }
    }
    for (int s = 1; s < SETUP_COUNT; ++s)
        for (int m = 0; m < EV_DO_NOTHING; ++m) {
            if (!(o->modes & (1u << m)))
                continue;
            snprintf(what, sizeof what, "%s-point %s: jitter / truth, worst clip", k_setups[s].name,
                     ev_method_name((enum ev_method)m));
            missed += !target_row(out, what, rows[s].worst_jitter_ratio[m], "x",
                                  "<=", JITTER_RATIO_TARGET);
        }
    for (int s = 2; s < SETUP_COUNT && known && height; ++s) {
        snprintf(what, sizeof what, "%s-point: height only minus known, MPJPE", k_setups[s].name);
        missed += !target_row(out, what,
                              rows[s].means.scores[EV_HEIGHT_ONLY].mpjpe_cm[EV_GROUP_ALL] -
                                  rows[s].means.scores[EV_KNOWN_BODY].mpjpe_cm[EV_GROUP_ALL],
                              "cm", "<=", HEIGHT_ONLY_GAP_TARGET_CM);
    }
    const int eleven = SETUP_COUNT - 1;
    const enum ev_method timed = known ? EV_KNOWN_BODY : EV_HEIGHT_ONLY;
    missed +=
        !target_row(out, "11-point: body_update median per avatar-frame",
                    rows[eleven].update_median_us[timed], "us", "<=", ELEVEN_UPDATE_TARGET_US);
    return missed;
}

int
ev_trackers_main(const struct ev_options *options)
{
    struct setup_row rows[SETUP_COUNT];
    memset(rows, 0, sizeof rows);
    struct ev_options o = *options;
    o.json_path = "-";
    o.progress = NULL;
    o.tracker_setups = false;
    int failed = 0;
    char dir[1024] = "";
    for (int s = 0; s < SETUP_COUNT; ++s) {
        o.trackers = k_setups[s].mask;
        struct ev_report report;
        struct em_error err = {{0}};
        if (ev_run(&o, &report, &err) != EM_OK) {
            fprintf(stderr, "embody eval: %s\n", err.message);
            ev_report_fini(&report);
            return 2;
        }
        collect(&report, &rows[s]);
        failed += report.failed_count;
        snprintf(dir, sizeof dir, "%s", report.clip_dir);
        o.modes = report.options.modes;
        if (!options->quiet)
            fprintf(stderr, "setup %s: %d clips, known-body MPJPE %.2f cm\n", k_setups[s].name,
                    report.means.clip_count,
                    report.means.scores[EV_KNOWN_BODY].mpjpe_cm[EV_GROUP_ALL]);
        ev_report_fini(&report);
    }
    printf("## Tracker setups (PROTOCOL.md section 2b), means over %d clips of %s\n\n",
           rows[0].means.clip_count, dir);
    printf("Setups: 3 head and hands; 4 + pelvis; 6 + feet; 8 + knees; 11 + chest and "
           "elbows.\n\n");
    print_rows(rows, &o, stdout);
    const int missed = print_targets(rows, &o, stdout);
    printf("\n%d target%s not met\n", missed, missed == 1 ? "" : "s");
    fflush(stdout);
    if (failed > 0)
        fprintf(stderr, "embody eval: %d clip runs failed\n", failed);
    return failed > 0 ? 1 : 0;
}
