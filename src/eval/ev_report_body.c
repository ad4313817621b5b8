/*
 * The report's tables of what a player sees of the body (struct ev_body_checks): per
 * clip and mode, and the summary rows with their targets (issue 17's Measure section).
 */
#include <math.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "eval/eval.h"
#include "ev_internal.h"

#define N(i, w, p, v) ev_format_number(b[i], sizeof b[i], w, p, v)

void
ev_report_print_body_checks(const struct ev_report *r, FILE *out)
{
    char b[10][32];
    fprintf(out, "\n## What a player sees, per clip\n\n");
    fprintf(out, "Head: the angle between the head joint's rotation and the headset's (median, "
                 "99th percentile, worst, share of frames over %.0f deg). Under floor: how far "
                 "the lowest joint and the lowest foot part went below the floor. Recovery: a "
                 "head sample at 1e20 m at 1/4, 1/2 and 3/4 of the clip; the largest distance "
                 "of a scored joint from the clean run's %.1f s later. Turn: five 90 deg turns "
                 "at 90 deg/s each way from the clip's stillest row standing and facing forward, its first "
                 "and its middle row, then 3 s still; the largest angle of a foot from the head's "
                 "heading (turn row: the row of the worst; a row where the body ends sitting or lying "
                 "on the floor does not count), and the person's own feet at that row from its "
                 "heading (person; a foot less than half its length over the floor left out: "
                 "kneeling on the insteps, they point back). Hand up: the right controller raised "
                 "over 1 s to 25 cm above a still headset and held 2 s; the largest turn of the "
                 "hips from before.\n\n",
            EV_HEAD_ANGLE_TARGET_DEG, EV_RECOVERY_AFTER_S);
    fprintf(out, "| clip                   | mode        | head med deg | head p99 | head max | "
                 "over %% | under floor cm | foot under cm | recovery cm | turn row | "
                 "turn feet deg | person deg | hand up hips deg |\n");
    fprintf(out, "|------------------------|-------------|--------------|----------|----------|"
                 "--------|----------------|---------------|-------------|----------|"
                 "---------------|------------|------------------|\n");
    for (int c = 0; c < r->clip_count; ++c) {
        const struct ev_clip_result *clip = &r->clips[c];
        for (int m = 0; m < EV_DO_NOTHING && clip->ok; ++m) {
            if (!clip->has[m])
                continue;
            const struct ev_body_checks *k = &clip->checks[m].body;
            fprintf(out,
                    "| %-22.22s | %-11s | %s | %s | %s | %s | %s | %s | %s | %8d | %s | %s "
                    "| %s |\n",
                    clip->file, ev_method_name((enum ev_method)m),
                    N(0, 12, 1, ev_body_checks_head_percentile(k, 0.5)),
                    N(1, 8, 1, ev_body_checks_head_percentile(k, 0.99)),
                    N(2, 8, 1, k->head_angle_max_deg), N(3, 6, 2, 100.0 * k->head_angle_over_share),
                    N(4, 14, 2, 100.0 * k->floor_depth_m), N(5, 13, 2, 100.0 * k->foot_floor_depth_m),
                    N(6, 11, 2, 100.0 * k->recovery_m), k->turn_row, N(7, 13, 1, k->turn_feet_deg),
                    N(8, 10, 1, k->turn_person_deg), N(9, 16, 1, k->hand_up_hips_deg));
        }
    }
}

/* The largest value of `get` over the clips that ran `m`, and its clip. */
static double
worst(const struct ev_report *r, enum ev_method m, double (*get)(const struct ev_body_checks *),
      const char **out_clip)
{
    double w = (double)NAN;
    *out_clip = "-";
    for (int c = 0; c < r->clip_count; ++c) {
        const struct ev_clip_result *clip = &r->clips[c];
        if (!clip->ok || !clip->has[m])
            continue;
        const double v = get(&clip->checks[m].body);
        if (isfinite(v) && !(v <= w)) {
            w = v;
            *out_clip = clip->file;
        }
    }
    return w;
}

static double
head_p99(const struct ev_body_checks *k)
{
    return ev_body_checks_head_percentile(k, 0.99);
}

static double
floor_cm(const struct ev_body_checks *k)
{
    return 100.0 * k->floor_depth_m;
}

static double
recovery_cm(const struct ev_body_checks *k)
{
    return 100.0 * k->recovery_m;
}

static double
recovery_lower_cm(const struct ev_body_checks *k)
{
    return 100.0 * k->recovery_lower_m;
}

static double
turn_deg(const struct ev_body_checks *k)
{
    return k->turn_feet_deg;
}

static double
hand_up_deg(const struct ev_body_checks *k)
{
    return k->hand_up_hips_deg;
}

void
ev_report_body_summary(const struct ev_report *r, enum ev_method m, struct ev_summary *summary)
{
    static const struct {
        const char *measure;
        double (*get)(const struct ev_body_checks *);
        const char *unit;
        double target;
    } rows[] = {
        {"head vs headset p99, worst", head_p99, "deg", EV_HEAD_ANGLE_TARGET_DEG},
        {"joint under floor, worst", floor_cm, "cm", 100.0 * EV_FLOOR_DEPTH_TARGET_M},
        {"bad-sample recovery, worst", recovery_cm, "cm", 100.0 * EV_RECOVERY_TARGET_M},
        {"recovery, hips and legs, worst", recovery_lower_cm, "cm", 100.0 * EV_RECOVERY_TARGET_M},
        {"turn in place: feet, worst", turn_deg, "deg", EV_TURN_FEET_TARGET_DEG},
        {"hand raised: hips turn, worst", hand_up_deg, "deg", EV_HAND_UP_HIPS_TARGET_DEG},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
        const char *clip;
        const double v = worst(r, m, rows[i].get, &clip);
        char measure[64], value[64], target[64];
        snprintf(measure, sizeof measure, "%s: %s", ev_method_name(m), rows[i].measure);
        snprintf(value, sizeof value, "%.2f %s (%.16s)", v, rows[i].unit, clip);
        snprintf(target, sizeof target, "<= %.0f %s on every clip", rows[i].target,
                 rows[i].unit);
        ev_summary_row(summary, measure, value, target,
                       !isfinite(v) ? "no value" : v <= rows[i].target ? "met" : "open",
                       "issue 17");
    }
}

bool
ev_report_body_json(void *clip_object, const struct ev_clip_result *c)
{
    bool ok = true;
    for (int m = 0; m < EV_DO_NOTHING && ok; ++m) {
        if (!c->has[m])
            continue;
        const struct ev_body_checks *k = &c->checks[m].body;
        char key[64];
        snprintf(key, sizeof key, "%s_body_checks", ev_method_key((enum ev_method)m));
        cJSON *o = cJSON_AddObjectToObject((cJSON *)clip_object, key);
        ok = o && cJSON_AddNumberToObject(o, "head_angle_median_deg",
                                          ev_body_checks_head_percentile(k, 0.5));
        ok = ok && cJSON_AddNumberToObject(o, "head_angle_p99_deg",
                                           ev_body_checks_head_percentile(k, 0.99));
        ok = ok && cJSON_AddNumberToObject(o, "head_angle_max_deg", k->head_angle_max_deg);
        ok = ok && cJSON_AddNumberToObject(o, "head_angle_over_share", k->head_angle_over_share);
        ok = ok && cJSON_AddNumberToObject(o, "floor_depth_m", k->floor_depth_m);
        ok = ok && cJSON_AddNumberToObject(o, "foot_floor_depth_m", k->foot_floor_depth_m);
        ok = ok && cJSON_AddNumberToObject(o, "recovery_m", k->recovery_m);
        ok = ok && cJSON_AddNumberToObject(o, "recovery_lower_m", k->recovery_lower_m);
        ok = ok && cJSON_AddNumberToObject(o, "turn_row", k->turn_row);
        ok = ok && cJSON_AddNumberToObject(o, "turn_feet_deg", k->turn_feet_deg);
        ok = ok && cJSON_AddNumberToObject(o, "turn_person_deg", k->turn_person_deg);
        ok = ok && cJSON_AddNumberToObject(o, "hand_up_hips_deg", k->hand_up_hips_deg);
    }
    return ok;
}
