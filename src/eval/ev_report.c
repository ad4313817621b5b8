/*
 * The evaluation's report: markdown tables (readable in a terminal, pasteable into
 * notes) and the same figures as JSON. The targets are the project's accuracy issue's.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "eval/eval.h"
#include "ev_internal.h"
#include "util/u_file.h"

/* The targets (means over clips) and the published figures given for scale. */
#define TARGET_MPJPE_KNOWN_CM 9.0
#define TARGET_MPJPE_HEIGHT_CM 10.0
#define TARGET_LOWER_CM 12.0
#define TARGET_FEET_CM 15.0
#define TARGET_JITTER_RATIO 1.5
#define TARGET_SKATE_CM 0.5
#define TARGET_UPDATE_US 10.0
#define TARGET_FEET_LAG_MS 50.0 /* issue 24: the feet's best-fit delay, median over clips */

/* Up to 8 numbers per printf call, each in its own buffer. */
#define N(i, w, p, v) ev_format_number(b[i], sizeof b[i], (w), (p), (v))

static void
print_clips(const struct ev_report *r, FILE *out)
{
    char b[8][32];
    fprintf(out, "\n## Clips\n\n");
    fprintf(out, "| clip             | category         | clip frames | rows (60 Hz) | height m "
                 "| truth jitter m/s^3 |\n");
    fprintf(out, "|------------------|------------------|-------------|--------------|----------"
                 "|--------------------|\n");
    for (int c = 0; c < r->clip_count; ++c) {
        const struct ev_clip_result *clip = &r->clips[c];
        if (!clip->ok) {
            fprintf(out, "| %-16s | %-16s | FAILED (see below) |\n", clip->file,
                    clip->category);
            continue;
        }
        fprintf(out, "| %-16s | %-16s | %11d | %12d | %s | %s |\n", clip->file, clip->category,
                clip->source_frames, clip->frames, N(0, 8, 3, (double)clip->height_m),
                N(1, 18, 1, clip->truth_jitter_m_s3));
    }
}

static void
print_scores_row(FILE *out, const char *label, const struct ev_scores *s, double truth_jitter,
                 double update_us)
{
    char b[8][32];
    fprintf(out, "| %-22s | %s | %s | %s | %s | %s | %s |", label, N(0, 8, 2, s->mpjpe_cm[0]),
            N(1, 5, 2, s->mpjpe_cm[EV_GROUP_UPPER]), N(2, 5, 2, s->mpjpe_cm[EV_GROUP_LOWER]),
            N(3, 5, 2, s->mpjpe_cm[EV_GROUP_HANDS]), N(4, 5, 2, s->mpjpe_cm[EV_GROUP_FEET]),
            N(5, 12, 1, s->jitter_m_s3));
    fprintf(out, " %s | %s | %7ld | %s |\n", N(6, 12, 1, truth_jitter),
            N(7, 14, 3, s->foot_skate_cm), s->planted_count, N(0, 9, 2, update_us));
}

static void
print_method(const struct ev_report *r, enum ev_method m, FILE *out)
{
    fprintf(out, "\n## %s%s\n\n", ev_method_name(m),
            m == EV_DO_NOTHING ? " (the first true pose carried upright under the headset)" : "");
    fprintf(out, "| clip                   | MPJPE cm | upper | lower | hands |  feet "
                 "| jitter m/s^3 | truth jitter | skate cm/frame | planted | update us |\n");
    fprintf(out, "|------------------------|----------|-------|-------|-------|-------"
                 "|--------------|--------------|----------------|---------|-----------|\n");
    for (int c = 0; c < r->clip_count; ++c) {
        const struct ev_clip_result *clip = &r->clips[c];
        if (clip->has[m])
            print_scores_row(out, clip->file, &clip->scores[m], clip->truth_jitter_m_s3,
                             clip->update_median_us[m]);
    }
    char label[64];
    snprintf(label, sizeof label, "mean (%d clips)", r->means.clip_count);
    print_scores_row(out, label, &r->means.scores[m], r->means.truth_jitter_m_s3,
                     r->timing[m].median_us);
}

static bool
ran(const struct ev_report *r, enum ev_method m)
{
    return m == EV_DO_NOTHING || (r->options.modes & (1u << m));
}

static void
print_categories(const struct ev_report *r, FILE *out)
{
    char b[8][32];
    fprintf(out, "\n## By motion category (means over clips; MPJPE in cm)\n\n");
    fprintf(out, "| category         | clips | known | known lower | height only | height lower "
                 "| do-nothing | known skate | jitter known/truth |\n");
    fprintf(out, "|------------------|-------|-------|-------------|-------------|--------------"
                 "|------------|-------------|--------------------|\n");
    for (int c = 0; c < r->category_count; ++c) {
        const struct ev_means *m = &r->categories[c].means;
        const struct ev_scores *k = &m->scores[EV_KNOWN_BODY], *h = &m->scores[EV_HEIGHT_ONLY];
        const bool has_k = ran(r, EV_KNOWN_BODY), has_h = ran(r, EV_HEIGHT_ONLY);
        fprintf(out, "| %-16s | %5d | %s | %s | %s | %s | %s |", r->categories[c].name,
                m->clip_count, N(0, 5, 2, has_k ? k->mpjpe_cm[0] : (double)NAN),
                N(1, 11, 2, has_k ? k->mpjpe_cm[EV_GROUP_LOWER] : (double)NAN),
                N(2, 11, 2, has_h ? h->mpjpe_cm[0] : (double)NAN),
                N(3, 12, 2, has_h ? h->mpjpe_cm[EV_GROUP_LOWER] : (double)NAN),
                N(4, 10, 2, m->scores[EV_DO_NOTHING].mpjpe_cm[0]));
        fprintf(out, " %s | %s |\n", N(5, 11, 3, has_k ? k->foot_skate_cm : (double)NAN),
                N(6, 18, 2, has_k ? k->jitter_m_s3 / m->truth_jitter_m_s3 : (double)NAN));
    }
}

static void
print_timing(const struct ev_report *r, FILE *out)
{
    char b[8][32];
    fprintf(out, "\n## body_update time (one core, monotonic clock, per avatar-frame: the faster of two passes)\n\n");
    fprintf(out, "| mode         | avatar-frames | median us | mean us | p99 us |\n");
    fprintf(out, "|--------------|---------------|-----------|---------|--------|\n");
    for (int m = 0; m < EV_DO_NOTHING; ++m)
        if (ran(r, (enum ev_method)m))
            fprintf(out, "| %-12s | %13ld | %s | %s | %s |\n", ev_method_name((enum ev_method)m),
                    r->timing[m].frames, N(0, 9, 2, r->timing[m].median_us),
                    N(1, 7, 2, r->timing[m].mean_us), N(2, 6, 2, r->timing[m].p99_us));
    fprintf(out, "| %-12s | %13ld | %s | %s | %s |\n", "all", r->timing_all.frames,
            N(0, 9, 2, r->timing_all.median_us), N(1, 7, 2, r->timing_all.mean_us),
            N(2, 6, 2, r->timing_all.p99_us));
}

static const char *
met(double value, double target)
{
    if (!isfinite(value))
        return "no value";
    return value <= target ? "met" : "open";
}

/* Where the targets come from, where known. */
#define FROM_ISSUE_10 "issue 10" /* MPJPE, lower body, feet, update time */

/* The median over the clips that ran `m` of their feet's lag, ms; NaN without any. */
static double
median_feet_lag_ms(const struct ev_report *r, enum ev_method m)
{
    double *lags = r->clip_count > 0 ? malloc((size_t)r->clip_count * sizeof *lags) : NULL;
    int n = 0;
    for (int c = 0; lags && c < r->clip_count; ++c)
        if (r->clips[c].ok && r->clips[c].has[m] && isfinite(r->clips[c].scores[m].lag_ms))
            lags[n++] = r->clips[c].scores[m].lag_ms;
    const double median = lags ? ev_median_sorting(lags, n) : (double)NAN;
    free(lags);
    return median;
}

static void
summary_for_mode(const struct ev_report *r, enum ev_method m, double mpjpe_target,
                 struct ev_summary *out)
{
    const struct ev_scores *s = &r->means.scores[m];
    const char *name = ev_method_name(m);
    char measure[64], value[64], target[64];
    snprintf(measure, sizeof measure, "%s: MPJPE", name);
    snprintf(value, sizeof value, "%.2f cm (upper body %.2f)", s->mpjpe_cm[0],
             s->mpjpe_cm[EV_GROUP_UPPER]);
    snprintf(target, sizeof target, "<= %.1f cm", mpjpe_target);
    ev_summary_row(out, measure, value, target, met(s->mpjpe_cm[0], mpjpe_target),
                   FROM_ISSUE_10);
    snprintf(measure, sizeof measure, "%s: lower body MPJPE", name);
    snprintf(value, sizeof value, "%.2f cm", s->mpjpe_cm[EV_GROUP_LOWER]);
    snprintf(target, sizeof target, "<= %.1f cm", TARGET_LOWER_CM);
    ev_summary_row(out, measure, value, target,
                   met(s->mpjpe_cm[EV_GROUP_LOWER], TARGET_LOWER_CM), FROM_ISSUE_10);
    snprintf(measure, sizeof measure, "%s: feet MPJPE", name);
    snprintf(value, sizeof value, "%.2f cm", s->mpjpe_cm[EV_GROUP_FEET]);
    snprintf(target, sizeof target, "<= %.1f cm", TARGET_FEET_CM);
    ev_summary_row(out, measure, value, target,
                   met(s->mpjpe_cm[EV_GROUP_FEET], TARGET_FEET_CM), FROM_ISSUE_10);
    const double jitter_target = TARGET_JITTER_RATIO * r->means.truth_jitter_m_s3;
    snprintf(measure, sizeof measure, "%s: jitter", name);
    snprintf(value, sizeof value, "%.1f m/s^3 (%.2f x truth)", s->jitter_m_s3,
             s->jitter_m_s3 / r->means.truth_jitter_m_s3);
    snprintf(target, sizeof target, "<= 1.5 x truth = %.1f", jitter_target);
    ev_summary_row(out, measure, value, target, met(s->jitter_m_s3, jitter_target), NULL);
    snprintf(measure, sizeof measure, "%s: foot skate", name);
    snprintf(value, sizeof value, "%.3f cm/frame", s->foot_skate_cm);
    snprintf(target, sizeof target, "<= %.1f cm/frame", TARGET_SKATE_CM);
    ev_summary_row(out, measure, value, target, met(s->foot_skate_cm, TARGET_SKATE_CM), NULL);
    const double lag = median_feet_lag_ms(r, m);
    snprintf(measure, sizeof measure, "%s: feet lag, median clip", name);
    snprintf(value, sizeof value, "%.1f ms (mean %.1f)", lag, s->lag_ms);
    snprintf(target, sizeof target, "<= %.0f ms", TARGET_FEET_LAG_MS);
    ev_summary_row(out, measure, value, target, met(lag, TARGET_FEET_LAG_MS), "issue 24");
}

/* ---- Continuity, tracked effectors and twist ---- */

#define TARGET_SENSITIVITY_P99_MM 1.0
#define TARGET_SENSITIVITY_MAX_MM 20.0
#define TARGET_TWIST_EXCESS_DEG 1.0
#define TARGET_HANDS_OFF_PERCENT 1.0 /* issue 25: hands > 2 cm off on <= 1 % of frames */
#define TARGET_FOOT_HEADING_DEG 20.0

static const char *
limb_name(int limb)
{
    return limb >= 0 ? sk_bone_name(ev_limb_bone((enum ev_limb)limb)) : "-";
}

static void
print_checks_clips(const struct ev_report *r, FILE *out)
{
    char b[8][32];
    fprintf(out, "\n## Continuity, tracked effectors and twist, per clip\n\n");
    fprintf(out, "Sensitivity: the scored joints' displacement when every stream value moves "
                 "by uniform noise of +-%.0e (m; quaternions renormalised). Misses: frames "
                 "where the head or a hand ends more than %.0f cm from a target it could "
                 "reach; out of reach: frames with a target farther from the hips than its "
                 "whole chain; hands off: frames where a tracked hand ends more than %.0f cm from "
                 "its controller's target, in reach or not.\n\n",
            EV_SENSITIVITY_NOISE, 100.0 * EV_EFFECTOR_MISS_M, 100.0 * EV_EFFECTOR_MISS_M);
    fprintf(out, "| clip                   | mode        | sens p99 mm | sens max mm | misses %% "
                 "| worst miss cm | out of reach %% | hands off %% | jitter/truth "
                 "| twist over limit deg (joint) |\n");
    fprintf(out, "|------------------------|-------------|-------------|-------------|----------"
                 "|---------------|----------------|-------------|--------------"
                 "|------------------------------|\n");
    for (int c = 0; c < r->clip_count; ++c) {
        const struct ev_clip_result *clip = &r->clips[c];
        for (int m = 0; m < EV_DO_NOTHING && clip->ok; ++m) {
            if (!clip->has[m])
                continue;
            const struct ev_checks *k = &clip->checks[m];
            char twist[64];
            snprintf(twist, sizeof twist, "%.1f (%s)", k->twist_excess_deg,
                     limb_name(k->twist_excess_limb));
            fprintf(out, "| %-22.22s | %-11s | %s | %s | %s | %s | %s | %s | %s | %-28s |\n",
                    clip->file, ev_method_name((enum ev_method)m),
                    N(0, 11, 3, k->sensitivity_p99_mm), N(1, 11, 2, k->sensitivity_max_mm),
                    N(2, 8, 2, 100.0 * k->effector_miss_share),
                    N(3, 13, 2, 100.0 * k->effector_worst_miss_m),
                    N(5, 14, 2, 100.0 * k->out_of_reach_share),
                    N(6, 11, 2, 100.0 * k->hand_off_share),
                    N(4, 12, 2, clip->scores[m].jitter_m_s3 / clip->truth_jitter_m_s3), twist);
        }
    }
}

/* The largest value of one check over the clips that ran `m`, and the clip it came from. */
static double
worst_over_clips(const struct ev_report *r, enum ev_method m, double (*get)(const struct ev_clip_result *, enum ev_method),
                 const char **out_clip)
{
    double worst = (double)NAN;
    *out_clip = "-";
    for (int c = 0; c < r->clip_count; ++c) {
        const struct ev_clip_result *clip = &r->clips[c];
        if (!clip->ok || !clip->has[m])
            continue;
        const double v = get(clip, m);
        if (isfinite(v) && !(v <= worst)) {
            worst = v;
            *out_clip = clip->file;
        }
    }
    return worst;
}

static double
get_sens_p99(const struct ev_clip_result *c, enum ev_method m)
{
    return c->checks[m].sensitivity_p99_mm;
}

static double
get_sens_max(const struct ev_clip_result *c, enum ev_method m)
{
    return c->checks[m].sensitivity_max_mm;
}

static double
get_misses(const struct ev_clip_result *c, enum ev_method m)
{
    return 100.0 * c->checks[m].effector_miss_share;
}

static double
get_hands_off(const struct ev_clip_result *c, enum ev_method m)
{
    return 100.0 * c->checks[m].hand_off_share;
}

static double
get_twist_excess(const struct ev_clip_result *c, enum ev_method m)
{
    return c->checks[m].twist_excess_deg;
}

static double
get_jitter_ratio(const struct ev_clip_result *c, enum ev_method m)
{
    return c->scores[m].jitter_m_s3 / c->truth_jitter_m_s3;
}

static void
print_twist_table(const struct ev_report *r, FILE *out)
{
    fprintf(out, "\n## Twist of each limb joint about its bone (degrees; min .. max over every "
                 "frame)\n\n");
    fprintf(out, "| joint          | limit          | clips, known body | clips, height only "
                 "| turn in place     |\n");
    fprintf(out, "|----------------|----------------|-------------------|--------------------"
                 "|-------------------|\n");
    for (int l = 0; l < EV_LIMB_COUNT; ++l) {
        const double inf = (double)INFINITY;
        double lo[2] = {inf, inf}, hi[2] = {-inf, -inf};
        double lim_lo = (double)NAN, lim_hi = (double)NAN;
        for (int c = 0; c < r->clip_count; ++c)
            for (int m = 0; m < EV_DO_NOTHING; ++m) {
                const struct ev_clip_result *clip = &r->clips[c];
                if (!clip->ok || !clip->has[m])
                    continue;
                lo[m] = fmin(lo[m], clip->checks[m].twist_min_deg[l]);
                hi[m] = fmax(hi[m], clip->checks[m].twist_max_deg[l]);
                if (m == EV_HEIGHT_ONLY || !isfinite(lim_lo)) {
                    lim_lo = clip->checks[m].limit_min_deg[l];
                    lim_hi = clip->checks[m].limit_max_deg[l];
                }
            }
        char limit[32], range[3][32];
        if (isfinite(lim_lo))
            snprintf(limit, sizeof limit, "%.0f .. %.0f", lim_lo, lim_hi);
        else
            snprintf(limit, sizeof limit, "none");
        for (int m = 0; m < 2; ++m)
            if (isfinite(lo[m]))
                snprintf(range[m], sizeof range[m], "%.1f .. %.1f", lo[m], hi[m]);
            else
                snprintf(range[m], sizeof range[m], "-");
        const struct ev_checks *t = &r->turn.checks;
        if (r->turn.ok && isfinite(t->twist_min_deg[l]))
            snprintf(range[2], sizeof range[2], "%.1f .. %.1f", t->twist_min_deg[l],
                     t->twist_max_deg[l]);
        else
            snprintf(range[2], sizeof range[2], "-");
        fprintf(out, "| %-14s | %-14s | %-17s | %-18s | %-17s |\n", limb_name(l), limit,
                range[0], range[1], range[2]);
    }
    if (r->turn.ok)
        fprintf(out, "\nTurn in place (default humanoid, 1.75 m, %d turns each way then "
                     "standing): at the end the feet point %.1f and %.1f degrees from the "
                     "head's heading.\n",
                r->turn.turns, r->turn.foot_heading_error_deg[0],
                r->turn.foot_heading_error_deg[1]);
    else
        fprintf(out, "\nTurn in place: %s\n", r->turn.error);
}

static void
checks_summary_for_mode(const struct ev_report *r, enum ev_method m, struct ev_summary *out)
{
    static const struct {
        const char *measure;
        double (*get)(const struct ev_clip_result *, enum ev_method);
        int precision;
        const char *unit;
        double target;
        const char *target_text; /* NULL: "<= TARGET UNIT" */
        const char *origin;
    } rows[] = {
        {"sensitivity p99, worst clip", get_sens_p99, 3, "mm", TARGET_SENSITIVITY_P99_MM, NULL,
         NULL},
        {"sensitivity max, worst clip", get_sens_max, 2, "mm", TARGET_SENSITIVITY_MAX_MM, NULL,
         NULL},
        {"reachable misses, worst", get_misses, 2, "% of frames", 0.0, "0.0 %", NULL},
        {"hands off > 2 cm, worst", get_hands_off, 2, "% of frames", TARGET_HANDS_OFF_PERCENT,
         "<= 1 % on every clip", "issue 25"},
        {"twist beyond limit, worst", get_twist_excess, 2, "deg", TARGET_TWIST_EXCESS_DEG, NULL,
         NULL},
        {"jitter / truth, worst", get_jitter_ratio, 2, "x", TARGET_JITTER_RATIO,
         "<= 1.5 x on every clip", NULL},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
        const char *clip;
        const double v = worst_over_clips(r, m, rows[i].get, &clip);
        char measure[64], value[64], target[64];
        snprintf(measure, sizeof measure, "%s: %s", ev_method_name(m), rows[i].measure);
        snprintf(value, sizeof value, "%.*f %s (%.16s)", rows[i].precision, v, rows[i].unit,
                 clip);
        if (rows[i].target_text)
            snprintf(target, sizeof target, "%s", rows[i].target_text);
        else
            snprintf(target, sizeof target, "<= %.0f %s", rows[i].target, rows[i].unit);
        ev_summary_row(out, measure, value, target, met(v, rows[i].target), rows[i].origin);
    }
}

static void
checks_summary(const struct ev_report *r, struct ev_summary *out)
{
    for (int m = 0; m < EV_DO_NOTHING; ++m)
        if (ran(r, (enum ev_method)m)) {
            checks_summary_for_mode(r, (enum ev_method)m, out);
            ev_report_body_summary(r, (enum ev_method)m, out);
        }
    if (!r->turn.ok)
        return;
    char value[64], target[64];
    const double over = r->turn.checks.twist_excess_deg;
    snprintf(value, sizeof value, "%.2f deg (%s)", over,
             limb_name(r->turn.checks.twist_excess_limb));
    snprintf(target, sizeof target, "<= %.0f deg", TARGET_TWIST_EXCESS_DEG);
    ev_summary_row(out, "turn in place: twist beyond limit", value, target,
                   met(over, TARGET_TWIST_EXCESS_DEG), NULL);
    const double feet =
        fmax(r->turn.foot_heading_error_deg[0], r->turn.foot_heading_error_deg[1]);
    snprintf(value, sizeof value, "%.1f deg", feet);
    snprintf(target, sizeof target, "<= %.0f deg", TARGET_FOOT_HEADING_DEG);
    ev_summary_row(out, "turn in place: feet from heading", value, target,
                   met(feet, TARGET_FOOT_HEADING_DEG), NULL);
}

static void
print_summary(const struct ev_report *r, FILE *file)
{
    struct ev_summary *out = calloc(1, sizeof *out);
    if (!out) {
        fprintf(file, "\n## Summary: out of memory\n");
        return;
    }
    out->out = file;
    fprintf(file, "\n## Summary (means over %d clips%s)\n\n", r->means.clip_count,
            r->options.frame_limit > 0 ? ", first rows only: not the full protocol" : "");
    fprintf(file, "Targets not reached yet are listed apart, under Open targets.\n\n");
    ev_summary_line(file, "measure", "value", "target", "verdict");
    fprintf(file, "|--------------------------------------|----------------------------------|"
                  "----------------------------|----------|\n");
    if (ran(r, EV_KNOWN_BODY))
        summary_for_mode(r, EV_KNOWN_BODY, TARGET_MPJPE_KNOWN_CM, out);
    if (ran(r, EV_HEIGHT_ONLY))
        summary_for_mode(r, EV_HEIGHT_ONLY, TARGET_MPJPE_HEIGHT_CM, out);
    char value[64], target[64];
    snprintf(value, sizeof value, "%.2f us (mean %.2f, p99 %.2f)", r->timing_all.median_us,
             r->timing_all.mean_us, r->timing_all.p99_us);
    snprintf(target, sizeof target, "<= %.1f us", TARGET_UPDATE_US);
    ev_summary_row(out, "body_update, median per avatar-frame", value, target,
                   met(r->timing_all.median_us, TARGET_UPDATE_US), FROM_ISSUE_10);
    const struct ev_scores *d = &r->means.scores[EV_DO_NOTHING];
    snprintf(value, sizeof value, "%.2f (lower %.2f, hands %.2f)", d->mpjpe_cm[0],
             d->mpjpe_cm[EV_GROUP_LOWER], d->mpjpe_cm[EV_GROUP_HANDS]);
    checks_summary(r, out);
    ev_summary_row(out, "do-nothing MPJPE cm (for scale)", value, "20.5 (23.5, 30.1) PROTOCOL",
                   "-", NULL);
    if (r->options.max_mean_mpjpe_cm > 0.0) {
        const double mean = r->means.scores[EV_KNOWN_BODY].mpjpe_cm[0];
        snprintf(value, sizeof value, "%.2f cm", mean);
        snprintf(target, sizeof target, "<= %.2f cm (--max-mpjpe)", r->options.max_mean_mpjpe_cm);
        ev_summary_row(out, "regression bound: known-body MPJPE", value, target,
                       ev_report_exceeds_bound(r) ? "EXCEEDED" : "within", NULL);
    }
    ev_summary_print_open(out);
    free(out);
}

static void
print_failures(const struct ev_report *r, FILE *out)
{
    if (r->failed_count == 0 && !r->manifest_error[0])
        return;
    fprintf(out, "\n## Failures\n\n");
    if (r->manifest_error[0])
        fprintf(out, "- %s\n", r->manifest_error);
    for (int c = 0; c < r->clip_count; ++c)
        if (!r->clips[c].ok)
            fprintf(out, "- %s\n", r->clips[c].error);
}

void
ev_report_print(const struct ev_report *r, FILE *out)
{
    fprintf(out, "# embody eval: %s\n\n", r->clip_dir);
    fprintf(out, "%d clips (%d failed); modes: %s%s%s; %s\n", r->clip_count, r->failed_count,
            ran(r, EV_KNOWN_BODY) ? "known body" : "",
            ran(r, EV_KNOWN_BODY) && ran(r, EV_HEIGHT_ONLY) ? ", " : "",
            ran(r, EV_HEIGHT_ONLY) ? "height only" : "",
            r->options.frame_limit > 0 ? "only the first rows of each clip" : "every row");
    if (r->options.frame_limit > 0)
        fprintf(out, "frame limit: %d rows (60 Hz) per clip\n", r->options.frame_limit);
    if (r->options.faults.count > 0) {
        char faults[FLT_MAX_FAULTS * FLT_TEXT_MAX];
        flt_set_describe(&r->options.faults, faults, sizeof faults);
        fprintf(out, "faults: %s (seed %llu)\n", faults,
                (unsigned long long)r->options.faults.seed);
    }
    print_clips(r, out);
    for (int m = 0; m < EV_METHOD_COUNT; ++m)
        if (ran(r, (enum ev_method)m))
            print_method(r, (enum ev_method)m, out);
    print_categories(r, out);
    print_timing(r, out);
    print_checks_clips(r, out);
    print_twist_table(r, out);
    ev_report_print_body_checks(r, out);
    print_summary(r, out);
    print_failures(r, out);
    fprintf(out, "\nthe run took %.2f s\n", r->elapsed_s);
}

/* ---- JSON ---- */

/* True (with the reason in `err`) when `json` is one of the files the run read: a clip
 * or MANIFEST.tsv (compared as files, not names). */
bool
ev_json_is_an_input(const struct ev_report *report, const char *json, struct em_error *err)
{
    char path[2048];
    for (int i = -1; i < report->clip_count; ++i) {
        snprintf(path, sizeof path, "%s/%s", report->clip_dir,
                 i < 0 ? "MANIFEST.tsv" : report->clips[i].file);
        if (u_file_same(json, path)) {
            em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                    "--json: %s is the same file as %s, which was read; not written", json, path);
            return true;
        }
    }
    return false;
}

void
ev_written_where(const char *path, char *out, size_t out_size)
{
    char *full = realpath(path, NULL);
    snprintf(out, out_size, "%s", full ? full : path);
    free(full);
}

static bool
add_scores(cJSON *parent, const char *key, const struct ev_scores *s, double median_us,
           double mean_us)
{
    cJSON *o = cJSON_AddObjectToObject(parent, key);
    if (!o)
        return false;
    bool ok = cJSON_AddNumberToObject(o, "mpjpe_cm", s->mpjpe_cm[EV_GROUP_ALL]) != NULL;
    for (int g = EV_GROUP_UPPER; g < EV_GROUP_COUNT; ++g) {
        char name[32];
        snprintf(name, sizeof name, "%s_cm", ev_group_name((enum ev_group)g));
        ok = ok && cJSON_AddNumberToObject(o, name, s->mpjpe_cm[g]);
    }
    cJSON *joints = ok ? cJSON_AddObjectToObject(o, "joint_mpjpe_cm") : NULL;
    ok = joints != NULL;
    for (int j = 0; j < EV_JOINT_COUNT && ok; ++j)
        ok = cJSON_AddNumberToObject(joints, sk_bone_name(ev_joint_bone((enum ev_joint)j)),
                                     s->joint_mpjpe_cm[j]) != NULL;
    ok = ok && cJSON_AddNumberToObject(o, "jitter_m_s3", s->jitter_m_s3);
    ok = ok && cJSON_AddNumberToObject(o, "foot_skate_cm", s->foot_skate_cm);
    ok = ok && cJSON_AddNumberToObject(o, "planted_count", (double)s->planted_count);
    if (isfinite(median_us)) {
        ok = ok && cJSON_AddNumberToObject(o, "update_median_us", median_us);
        ok = ok && cJSON_AddNumberToObject(o, "update_mean_us", mean_us);
    }
    return ok;
}

static bool
add_means(cJSON *parent, const char *key, const struct ev_report *r, const struct ev_means *m)
{
    cJSON *o = cJSON_AddObjectToObject(parent, key);
    bool ok = o && cJSON_AddNumberToObject(o, "clips", m->clip_count);
    ok = ok && cJSON_AddNumberToObject(o, "truth_jitter_m_s3", m->truth_jitter_m_s3);
    for (int k = 0; k < EV_METHOD_COUNT && ok; ++k)
        if (ran(r, (enum ev_method)k))
            ok = add_scores(o, ev_method_key((enum ev_method)k), &m->scores[k], (double)NAN,
                            (double)NAN);
    return ok;
}

static bool
add_clip(cJSON *array, const struct ev_report *r, const struct ev_clip_result *c)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(array, o))
        return false;
    bool ok = cJSON_AddStringToObject(o, "file", c->file) != NULL;
    ok = ok && cJSON_AddStringToObject(o, "category", c->category);
    if (!c->ok)
        return ok && cJSON_AddStringToObject(o, "error", c->error);
    ok = ok && cJSON_AddNumberToObject(o, "clip_frames", c->source_frames);
    ok = ok && cJSON_AddNumberToObject(o, "frames", c->frames);
    ok = ok && cJSON_AddNumberToObject(o, "fps", c->fps);
    ok = ok && cJSON_AddNumberToObject(o, "height_m", (double)c->height_m);
    ok = ok && cJSON_AddNumberToObject(o, "truth_jitter_m_s3", c->truth_jitter_m_s3);
    for (int m = 0; m < EV_METHOD_COUNT && ok; ++m)
        if (c->has[m] && ran(r, (enum ev_method)m))
            ok = add_scores(o, ev_method_key((enum ev_method)m), &c->scores[m],
                            c->update_median_us[m], c->update_mean_us[m]);
    return ok && ev_report_body_json(o, c);
}

static bool
add_timing(cJSON *parent, const char *key, const struct ev_timing_summary *t)
{
    cJSON *o = cJSON_AddObjectToObject(parent, key);
    bool ok = o && cJSON_AddNumberToObject(o, "avatar_frames", (double)t->frames);
    ok = ok && cJSON_AddNumberToObject(o, "median_us", t->median_us);
    ok = ok && cJSON_AddNumberToObject(o, "mean_us", t->mean_us);
    return ok && cJSON_AddNumberToObject(o, "p99_us", t->p99_us);
}

static cJSON *
report_json(const struct ev_report *r)
{
    cJSON *root = cJSON_CreateObject();
    bool ok = root && cJSON_AddStringToObject(root, "clip_dir", r->clip_dir);
    ok = ok && cJSON_AddNumberToObject(root, "frame_limit", r->options.frame_limit);
    if (ok && r->options.faults.count > 0) {
        char faults[FLT_MAX_FAULTS * FLT_TEXT_MAX];
        flt_set_describe(&r->options.faults, faults, sizeof faults);
        ok = cJSON_AddStringToObject(root, "faults", faults) &&
             cJSON_AddNumberToObject(root, "fault_seed", (double)r->options.faults.seed);
    }
    ok = ok && cJSON_AddNumberToObject(root, "clip_count", r->clip_count);
    ok = ok && cJSON_AddNumberToObject(root, "failed_count", r->failed_count);
    if (ok && r->manifest_error[0])
        ok = cJSON_AddStringToObject(root, "manifest_error", r->manifest_error) != NULL;
    cJSON *clips = ok ? cJSON_AddArrayToObject(root, "clips") : NULL;
    ok = clips != NULL;
    for (int c = 0; c < r->clip_count && ok; ++c)
        ok = add_clip(clips, r, &r->clips[c]);
    ok = ok && add_means(root, "means", r, &r->means);
    cJSON *categories = ok ? cJSON_AddArrayToObject(root, "categories") : NULL;
    ok = categories != NULL;
    for (int c = 0; c < r->category_count && ok; ++c) {
        cJSON *o = cJSON_CreateObject();
        ok = o && cJSON_AddItemToArray(categories, o) &&
             cJSON_AddStringToObject(o, "category", r->categories[c].name) &&
             add_means(o, "means", r, &r->categories[c].means);
    }
    cJSON *timing = ok ? cJSON_AddObjectToObject(root, "update_timing") : NULL;
    ok = timing != NULL;
    for (int m = 0; m < EV_DO_NOTHING && ok; ++m)
        if (ran(r, (enum ev_method)m))
            ok = add_timing(timing, ev_method_key((enum ev_method)m), &r->timing[m]);
    ok = ok && add_timing(timing, "all", &r->timing_all);
    if (ok && r->options.max_mean_mpjpe_cm > 0.0)
        ok = cJSON_AddNumberToObject(root, "max_mean_mpjpe_cm", r->options.max_mean_mpjpe_cm) &&
             cJSON_AddBoolToObject(root, "bound_exceeded", ev_report_exceeds_bound(r));
    ok = ok && cJSON_AddNumberToObject(root, "elapsed_s", r->elapsed_s);
    if (!ok) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

enum em_result
ev_report_write_json(const struct ev_report *report, const char *path, struct em_error *err)
{
    cJSON *root = report_json(report);
    char *text = root ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!text)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory making the JSON", path);
    /* All or nothing: an eval.json from before stays whole if this write fails. */
    struct u_out_file *f = NULL;
    enum em_result r = u_out_file_open(path, &f, err);
    if (r == EM_OK) {
        const size_t len = strlen(text);
        if (fwrite(text, 1, len, f->file) == len && fputc('\n', f->file) != EOF) {
            r = u_out_file_commit(&f, err);
        } else {
            u_out_file_abort(&f);
            r = em_fail(err, EM_ERROR_IO, "%s: write error", path);
        }
    }
    free(text);
    return r;
}

/* Hands a report to the program's observer (the plots of --plot), saying why on stderr
 * when it cannot. */
bool
ev_report_observe(const struct ev_report *report)
{
    const struct ev_options *o = &report->options;
    struct em_error err = {{0}};
    if (report->plot_error[0]) {
        fprintf(stderr, "embody eval: --plot: %s\n", report->plot_error);
        return false;
    }
    if (o->plot_dir && o->observer && o->observer->report &&
        o->observer->report(o, report, &err) != EM_OK) {
        fprintf(stderr, "embody eval: --plot: %s\n", err.message);
        return false;
    }
    return true;
}
