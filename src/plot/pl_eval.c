/*
 * The evaluation's figures (src/plot/plot.h): the observer `embody eval --plot DIR`
 * hands the evaluation. Per clip, the known body's error over time per joint group with the
 * true feet's contacts and the true posture marked (clip_NAME.png); the MPJPE bars per
 * motion category (categories.png) or per tracker setup (setups.png); and the fault table
 * as heat maps (faults.png, faults_lower.png).
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plot/plot.h"

/* The folder, made when missing. */
static enum em_result
plot_dir(const struct ev_options *o, struct em_error *err)
{
    if (mkdir(o->plot_dir, 0777) != 0 && errno != EEXIST)
        return em_fail(err, EM_ERROR_IO, "%s: cannot make the folder (%s)", o->plot_dir,
                       strerror(errno));
    struct stat st;
    if (stat(o->plot_dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return em_fail(err, EM_ERROR_IO, "%s: not a folder", o->plot_dir);
    return EM_OK;
}

/* Says where the figures went, on stdout after the tables: "Plots: DIR: WHAT" with the
 * folder's full path. */
static void
tell_where(const struct ev_options *o, const char *what)
{
    char *full = realpath(o->plot_dir, NULL);
    printf("Plots: %s: %s\n", full ? full : o->plot_dir, what);
    fflush(stdout);
    free(full);
}

/* ---- a clip's error over time ---- */

#define CLIP_GROUPS 5
static const enum ev_group k_clip_groups[CLIP_GROUPS] = {
    EV_GROUP_ALL, EV_GROUP_UPPER, EV_GROUP_LOWER, EV_GROUP_HANDS, EV_GROUP_FEET,
};

/* Posture from the true hips' height against their standing height (the 90th percentile
 * over the clip): how low the person is, whatever the motion's label. */
#define CROUCH_BELOW 0.85
#define LOW_BELOW 0.6

static double
joint_distance_cm(const struct ev_motion *a, const struct ev_motion *b, int f, int j)
{
    const double *p = a->position_m[f][j], *q = b->position_m[f][j];
    return 100.0 * sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) +
                        (p[2] - q[2]) * (p[2] - q[2]));
}

static int
compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* 1 where the true foot (or its toes) is planted at frame f (EV_PLANTED_MAX_STEP_M). */
static unsigned char
planted(const struct ev_motion *truth, int f, enum ev_joint foot, enum ev_joint toes)
{
    if (f == 0)
        return 0;
    for (int k = 0; k < 2; ++k) {
        const int j = k == 0 ? (int)foot : (int)toes;
        const double *p = truth->position_m[f][j], *q = truth->position_m[f - 1][j];
        const double d = sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) +
                              (p[2] - q[2]) * (p[2] - q[2]));
        if (d <= EV_PLANTED_MAX_STEP_M)
            return 1;
    }
    return 0;
}

/* The clip's file name without its folder and ".bvh". */
static void
clip_name(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    snprintf(out, size, "%.200s", slash ? slash + 1 : path);
    const size_t n = strlen(out);
    if (n > 4 && strcmp(out + n - 4, ".bvh") == 0)
        out[n - 4] = '\0';
}

static enum em_result
observe_clip(const struct ev_options *o, const struct ev_clip *clip, const struct ev_motion *ours,
             struct em_error *err)
{
    enum em_result r = plot_dir(o, err);
    if (r != EM_OK)
        return r;
    const struct ev_motion *truth = &clip->truth;
    const int n = truth->frame_count;
    double *values = calloc((size_t)n * CLIP_GROUPS + (size_t)n, sizeof *values);
    unsigned char *classes = calloc((size_t)n * 3, 1);
    if (!values || !classes) {
        free(values);
        free(classes);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "plots: out of memory");
    }
    double *hips = values + (size_t)n * CLIP_GROUPS;
    for (int f = 0; f < n; ++f) {
        for (int g = 0; g < CLIP_GROUPS; ++g) {
            double sum = 0.0;
            int count = 0;
            for (int j = 0; j < EV_JOINT_COUNT; ++j)
                if (ev_joint_in_group((enum ev_joint)j, k_clip_groups[g])) {
                    sum += joint_distance_cm(ours, truth, f, j);
                    count++;
                }
            values[(size_t)g * n + f] = sum / count;
        }
        hips[f] = truth->position_m[f][EV_HIPS][1];
        classes[f] = planted(truth, f, EV_LEFT_FOOT, EV_LEFT_TOES);
        classes[n + f] = planted(truth, f, EV_RIGHT_FOOT, EV_RIGHT_TOES);
    }
    double *sorted = malloc((size_t)n * sizeof *sorted);
    if (!sorted) {
        free(values);
        free(classes);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "plots: out of memory");
    }
    memcpy(sorted, hips, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, compare_doubles);
    const double standing = sorted[(int)(0.9 * (n - 1))];
    free(sorted);
    for (int f = 0; f < n; ++f) {
        const double ratio = standing > 0.0 ? hips[f] / standing : 1.0;
        classes[2 * n + f] = ratio >= CROUCH_BELOW ? 1 : ratio >= LOW_BELOW ? 2 : 3;
    }
    char name[256], title[400], path[2048];
    clip_name(clip->path, name, sizeof name);
    snprintf(title, sizeof title, "%s: error over time, known body (%s)", name,
             o->prior ? "learned prior" : "procedural");
    snprintf(path, sizeof path, "%s/clip_%s.png", o->plot_dir, name);
    struct pl_lines plot = {
        .title = title,
        .y_label = "joint position error (cm)",
        .frame_count = n,
        .fps = truth->fps,
        .series_count = CLIP_GROUPS,
        .band_count = 3,
    };
    for (int g = 0; g < CLIP_GROUPS; ++g) {
        plot.series_name[g] = ev_group_name(k_clip_groups[g]);
        plot.value[g] = values + (size_t)g * n;
    }
    plot.band[0] = (struct pl_band){.name = "left foot planted",
                                    .class_count = 1,
                                    .class_name = {"foot planted"},
                                    .class_of = classes};
    plot.band[1] = (struct pl_band){.name = "right foot planted",
                                    .class_count = 1,
                                    .class_name = {"foot planted"},
                                    .class_of = classes + n};
    plot.band[2] = (struct pl_band){.name = "posture",
                                    .class_count = 3,
                                    .class_name = {"standing", "crouching", "low (sit, kneel)"},
                                    .class_of = classes + 2 * n,
                                    .first_colour = 1};
    r = pl_write_lines(path, &plot, err);
    free(values);
    free(classes);
    return r;
}

/* ---- bars per category / setup ---- */

#define BAR_SERIES 3

static enum em_result
observe_report(const struct ev_options *o, const struct ev_report *report, struct em_error *err)
{
    enum em_result r = plot_dir(o, err);
    if (r != EM_OK)
        return r;
    const int groups = report->category_count + 1;
    const char **names = calloc((size_t)groups, sizeof *names);
    double *values = calloc((size_t)groups * BAR_SERIES, sizeof *values);
    if (!names || !values) {
        free(names);
        free(values);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "plots: out of memory");
    }
    for (int g = 0; g < groups; ++g) {
        const struct ev_means *m =
            g < report->category_count ? &report->categories[g].means : &report->means;
        names[g] = g < report->category_count ? report->categories[g].name : "all clips";
        for (int s = 0; s < BAR_SERIES; ++s)
            values[g * BAR_SERIES + s] = m->scores[s].mpjpe_cm[EV_GROUP_ALL];
    }
    char title[256], path[2048];
    snprintf(title, sizeof title, "MPJPE per motion category (%s, %d clips)",
             o->prior ? "learned prior" : "procedural", report->means.clip_count);
    snprintf(path, sizeof path, "%s/categories.png", o->plot_dir);
    const struct pl_bars plot = {
        .title = title,
        .y_label = "MPJPE (cm)",
        .group_count = groups,
        .group_name = names,
        .series_count = BAR_SERIES,
        .series_name = {"known body", "height only", "do-nothing"},
        .value = values,
    };
    r = pl_write_bars(path, &plot, err);
    free(names);
    free(values);
    if (r == EM_OK) {
        /* observe_clip drew each clip that ran the known body. */
        int clips = 0;
        for (int c = 0; c < report->clip_count; ++c)
            clips += report->clips[c].ok && report->clips[c].has[EV_KNOWN_BODY];
        char what[160];
        if (clips > 0)
            snprintf(what, sizeof what,
                     "%d PNG files: categories.png, and clip_NAME.png for each of the %d "
                     "clip%s",
                     clips + 1, clips, clips == 1 ? "" : "s");
        else
            snprintf(what, sizeof what, "categories.png");
        tell_where(o, what);
    }
    return r;
}

static enum em_result
observe_setups(const struct ev_options *o, int count, const char *const *names,
               const struct ev_means *means, struct em_error *err)
{
    enum em_result r = plot_dir(o, err);
    if (r != EM_OK)
        return r;
    double *values = calloc((size_t)count * 4, sizeof *values);
    const char **labels = calloc((size_t)count, sizeof *labels);
    char(*text)[32] = calloc((size_t)count, sizeof *text);
    if (!values || !labels || !text) {
        free(values);
        free(labels);
        free(text);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "plots: out of memory");
    }
    for (int s = 0; s < count; ++s) {
        const struct ev_scores *k = &means[s].scores[EV_KNOWN_BODY];
        values[s * 4 + 0] = k->mpjpe_cm[EV_GROUP_ALL];
        values[s * 4 + 1] = k->mpjpe_cm[EV_GROUP_LOWER];
        values[s * 4 + 2] = k->mpjpe_cm[EV_GROUP_FEET];
        values[s * 4 + 3] = means[s].scores[EV_HEIGHT_ONLY].mpjpe_cm[EV_GROUP_ALL];
        snprintf(text[s], sizeof text[s], "%s-point", names[s]);
        labels[s] = text[s];
    }
    char title[256], path[2048];
    snprintf(title, sizeof title, "MPJPE per tracker setup (%s, %d clips)",
             o->prior ? "learned prior" : "procedural", means[0].clip_count);
    snprintf(path, sizeof path, "%s/setups.png", o->plot_dir);
    const struct pl_bars plot = {
        .title = title,
        .y_label = "MPJPE (cm)",
        .group_count = count,
        .group_name = labels,
        .series_count = 4,
        .series_name = {"known body: all", "known body: lower", "known body: feet",
                        "height only: all"},
        .value = values,
    };
    r = pl_write_bars(path, &plot, err);
    free(values);
    free(labels);
    free(text);
    if (r == EM_OK)
        tell_where(o, "setups.png");
    return r;
}

/* ---- the fault table ---- */

static enum em_result
observe_faults(const struct ev_options *o, int rows, const char *const *row_names, int cols,
               const char *const *col_names, const double *mpjpe_cm, const double *lower_cm,
               struct em_error *err)
{
    enum em_result r = plot_dir(o, err);
    if (r != EM_OK)
        return r;
    const char **labels = calloc((size_t)rows, sizeof *labels);
    char(*text)[32] = calloc((size_t)rows, sizeof *text);
    if (!labels || !text) {
        free(labels);
        free(text);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "plots: out of memory");
    }
    for (int i = 0; i < rows; ++i) {
        snprintf(text[i], sizeof text[i], "%s-point", row_names[i]);
        labels[i] = text[i];
    }
    char path[2048];
    struct pl_heatmap plot = {
        .title = "What trackers' faults cost: MPJPE (cm), known body",
        .unit = "cm",
        .row_count = rows,
        .col_count = cols,
        .row_name = labels,
        .col_name = col_names,
        .value = mpjpe_cm,
    };
    snprintf(path, sizeof path, "%s/faults.png", o->plot_dir);
    r = pl_write_heatmap(path, &plot, err);
    if (r == EM_OK) {
        plot.title = "What trackers' faults cost: lower-body MPJPE (cm), known body";
        plot.value = lower_cm;
        snprintf(path, sizeof path, "%s/faults_lower.png", o->plot_dir);
        r = pl_write_heatmap(path, &plot, err);
    }
    free(labels);
    free(text);
    if (r == EM_OK)
        tell_where(o, "faults.png and faults_lower.png");
    return r;
}

static const struct ev_observer k_observer = {
    .clip = observe_clip,
    .report = observe_report,
    .setups = observe_setups,
    .faults = observe_faults,
};

const struct ev_observer *
pl_eval_observer(void)
{
    return &k_observer;
}
