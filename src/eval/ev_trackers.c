/*
 * Tracker setups in the evaluation (src/eval/eval.h): `embody eval --trackers SETUP`
 * gives the body the clip's body trackers of that setup besides head and hands
 * (PROTOCOL.md section 2b; made from the clip like the 3-point stream, so any clip can be
 * scored), and `--trackers all` runs every named setup and prints one row per setup and
 * mode with the targets of issue 12.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "embody/body.h"
#include "eval/eval.h"
#include "embody/m_math.h"
#include "embody/prior.h"
#include "embody/stream.h"
#include "ev_internal.h"

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
    double worst_miss_share[EV_METHOD_COUNT];     /* over clips: reachable head/hand misses */
    double worst_hand_off_share[EV_METHOD_COUNT]; /* over clips: hands > 2 cm off */
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
        row->worst_miss_share[m] = (double)NAN;
        row->worst_hand_off_share[m] = (double)NAN;
        row->update_median_us[m] = r->timing[m].median_us;
        for (int c = 0; c < r->clip_count; ++c) {
            const struct ev_clip_result *clip = &r->clips[c];
            if (clip->has[m] && m != EV_DO_NOTHING)
                row->worst_miss_share[m] = fmax(isnan(row->worst_miss_share[m])
                                                    ? 0.0
                                                    : row->worst_miss_share[m],
                                                clip->checks[m].effector_miss_share);
            if (clip->has[m] && m != EV_DO_NOTHING)
                row->worst_hand_off_share[m] =
                    fmax(isnan(row->worst_hand_off_share[m]) ? 0.0 : row->worst_hand_off_share[m],
                         clip->checks[m].hand_off_share);
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
                 "| jitter / truth | worst clip jitter / truth | update median us "
                 "| misses %%, worst clip | hands off %%, worst clip |\n");
    fprintf(out, "|-------|-------------|----------|----------|---------|----------------"
                 "|----------------|---------------------------|------------------"
                 "|----------------------|-------------------------|\n");
    for (int s = 0; s < SETUP_COUNT; ++s)
        for (int m = 0; m < EV_DO_NOTHING; ++m) {
            if (!rows[s].ran || !(o->modes & (1u << m)))
                continue;
            const struct ev_scores *sc = &rows[s].means.scores[m];
            const double truth = rows[s].means.truth_jitter_m_s3;
            fprintf(out,
                    "| %5s | %-11s | %8.2f | %8.2f | %7.2f | %14.3f | %14.2f | %25.2f | %16.2f "
                    "| %20.2f | %23.2f |\n",
                    k_setups[s].name, ev_method_name((enum ev_method)m), sc->mpjpe_cm[EV_GROUP_ALL],
                    sc->mpjpe_cm[EV_GROUP_LOWER], sc->mpjpe_cm[EV_GROUP_FEET], sc->foot_skate_cm,
                    truth > 0.0 ? sc->jitter_m_s3 / truth : (double)NAN,
                    rows[s].worst_jitter_ratio[m], rows[s].update_median_us[m],
                    100.0 * rows[s].worst_miss_share[m], 100.0 * rows[s].worst_hand_off_share[m]);
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

/* One mode's means of a setup into `parent` under `key`. */
static bool
add_setup_scores(cJSON *parent, const char *key, const struct setup_row *row, enum ev_method m)
{
    const struct ev_scores *sc = &row->means.scores[m];
    const double truth = row->means.truth_jitter_m_s3;
    cJSON *o = cJSON_AddObjectToObject(parent, key);
    return o && cJSON_AddNumberToObject(o, "mpjpe_cm", sc->mpjpe_cm[EV_GROUP_ALL]) &&
           cJSON_AddNumberToObject(o, "lower_cm", sc->mpjpe_cm[EV_GROUP_LOWER]) &&
           cJSON_AddNumberToObject(o, "feet_cm", sc->mpjpe_cm[EV_GROUP_FEET]) &&
           cJSON_AddNumberToObject(o, "foot_skate_cm", sc->foot_skate_cm) &&
           cJSON_AddNumberToObject(o, "jitter_over_truth",
                                   truth > 0.0 ? sc->jitter_m_s3 / truth : -1.0) &&
           cJSON_AddNumberToObject(o, "worst_clip_jitter_over_truth",
                                   isfinite(row->worst_jitter_ratio[m])
                                       ? row->worst_jitter_ratio[m]
                                       : -1.0) &&
           cJSON_AddNumberToObject(o, "update_median_us", row->update_median_us[m]);
}

/* The table's figures as JSON at `path` (as the other eval paths write eval.json). */
static bool
write_setups_json(const struct setup_row *rows, const struct ev_options *o, const char *body,
                  int missed, const char *path)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *setups = root ? cJSON_AddArrayToObject(root, "tracker_setups") : NULL;
    bool ok = setups && cJSON_AddStringToObject(root, "body", body) &&
              cJSON_AddNumberToObject(root, "clips", rows[0].means.clip_count) &&
              cJSON_AddNumberToObject(root, "targets_missed", missed);
    for (int s = 0; ok && s < SETUP_COUNT; ++s) {
        cJSON *row = cJSON_CreateObject();
        ok = row && cJSON_AddItemToArray(setups, row) &&
             cJSON_AddStringToObject(row, "setup", k_setups[s].name);
        for (int m = 0; ok && m < EV_DO_NOTHING; ++m)
            if (rows[s].ran && (o->modes & (1u << m)))
                ok = add_setup_scores(row, ev_method_key((enum ev_method)m), &rows[s],
                                      (enum ev_method)m);
    }
    return ev_json_write(root, ok, path);
}

/* The setups' means to the observer (--plot). */
static bool
observe_setups(const struct setup_row *rows, const struct ev_options *o)
{
    if (!o->plot_dir || !o->observer || !o->observer->setups)
        return true;
    const char *names[SETUP_COUNT];
    struct ev_means means[SETUP_COUNT];
    for (int s = 0; s < SETUP_COUNT; ++s) {
        names[s] = k_setups[s].name;
        means[s] = rows[s].means;
    }
    struct em_error err = {{0}};
    if (o->observer->setups(o, SETUP_COUNT, names, means, &err) == EM_OK)
        return true;
    fprintf(stderr, "embody eval: --plot: %s\n", err.message);
    return false;
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
    o.observer = NULL; /* no clip figures per setup: the setups' bars below */
    /* The body the program uses by default: the learned prior, unless --body procedural
     * (or the model does not load). */
    struct pr_model model;
    char model_path[1024] = "";
    const bool procedural_asked = options->body_mode && strcmp(options->body_mode, "procedural") == 0;
    const bool have_prior =
        !procedural_asked && ev_prior_load(options, &model, model_path, sizeof model_path);
    o.prior = have_prior ? &model : NULL;
    const char *body = have_prior ? "prior" : "procedural";
    int failed = 0;
    char dir[1024] = "";
    for (int s = 0; s < SETUP_COUNT; ++s) {
        o.trackers = k_setups[s].mask;
        struct ev_report report;
        struct em_error err = {{0}};
        if (ev_run(&o, &report, &err) != EM_OK) {
            fprintf(stderr, "embody eval: %s\n", err.message);
            ev_report_fini(&report);
            if (have_prior)
                pr_model_fini(&model);
            return 2;
        }
        collect(&report, &rows[s]);
        failed += report.failed_count;
        snprintf(dir, sizeof dir, "%s", report.clip_dir);
        o.modes = report.options.modes;
        if (!options->quiet)
            fprintf(stderr, "setup %s (%s body): %d clips, known-body MPJPE %.2f cm\n",
                    k_setups[s].name, body, report.means.clip_count,
                    report.means.scores[EV_KNOWN_BODY].mpjpe_cm[EV_GROUP_ALL]);
        ev_report_fini(&report);
    }
    if (have_prior)
        pr_model_fini(&model);
    printf("## Tracker setups (PROTOCOL.md section 2b), means over %d clips of %s\n\n",
           rows[0].means.clip_count, dir);
    printf("Body: the %s%s (--body prior|procedural). Setups: 3 head and hands; 4 + pelvis; 6 + "
           "feet; 8 + knees; 11 + chest and elbows.\n\n",
           have_prior ? "learned prior " : "procedural estimate", model_path);
    print_rows(rows, &o, stdout);
    o.observer = options->observer;
    if (!observe_setups(rows, &o))
        failed++;
    const int missed = print_targets(rows, &o, stdout);
    printf("\n%d target%s not met\n", missed, missed == 1 ? "" : "s");
    int status = failed > 0 ? 1 : 0;
    const char *json = options->json_path ? options->json_path : "eval.json";
    if (strcmp(json, "-") != 0) {
        if (!write_setups_json(rows, &o, body, missed, json)) {
            status = 1;
        } else {
            char where[4096];
            ev_written_where(json, where, sizeof where);
            printf("JSON copy: %s\n", where);
        }
    }
    fflush(stdout);
    if (failed > 0)
        fprintf(stderr, "embody eval: %d clip runs failed\n", failed);
    return status;
}
