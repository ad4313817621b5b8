/*
 * `embody eval` with the learned body-pose prior (include/embody/prior.h): the options
 * --body procedural|prior|both, --prior MODEL and --validation DIR, and the run that puts
 * the prior and the procedural estimate side by side: the same clips through both, the
 * prior's full report, a comparison by mode and by motion category, and the same
 * comparison on the subjects the model was not trained on (its held-out subjects of
 * ../shared/mocap-train), so a model that learned the people rather than the motion shows.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/eval.h"
#include "ev_internal.h"
#include "prior/pr_training.h"
#include "util/u_path.h"

/* EMBODY_SHARED_DIR is set by the build (src/eval/CMakeLists.txt). */
#define DEFAULT_VALIDATION_DIR EMBODY_SHARED_DIR "/mocap-train"
#define JITTER_RATIO 1.5

/* True when `text` is people separated by commas (pr_person_token's each). */
static bool
people_list(const char *text)
{
    char token[PR_PERSON_MAX];
    for (const char *p = text;; ++p) {
        const size_t len = strcspn(p, ",");
        if (!pr_person_token(p, len, token, sizeof token))
            return false;
        p += len;
        if (!*p)
            return true;
    }
}

enum em_result
ev_prior_option(const char *name, const char *value, struct ev_options *out, struct em_error *err)
{
    const char **slot = strcmp(name, "--body") == 0       ? &out->body_mode
                        : strcmp(name, "--prior") == 0    ? &out->prior_path
                        : strcmp(name, "--subjects") == 0 ? &out->subjects
                                                          : &out->validation_dir;
    if (*slot)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: given more than once", name);
    if (!value[0])
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: expected a value, got an empty one",
                       name);
    if (slot == &out->body_mode && strcmp(value, "procedural") != 0 &&
        strcmp(value, "prior") != 0 && strcmp(value, "both") != 0)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--body: expected procedural, prior or both, got \"%s\"", value);
    if (slot == &out->subjects && !people_list(value))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--subjects: expected people separated by commas: subject numbers "
                       "(\"03,09\"), names (\"bd\") or LAB:PERSON (\"hdm05:bd\"), got \"%s\"",
                       value);
    *slot = value;
    return EM_OK;
}

/* ---- Printing ---- */

#define N(i, w, p, v) ev_format_number(b[i], sizeof b[i], (w), (p), (v))

/* Clips whose jitter is above 1.5 times the truth's. */
static int
jittery_clips(const struct ev_report *r, enum ev_method m)
{
    int n = 0;
    for (int c = 0; c < r->clip_count; ++c) {
        const struct ev_clip_result *clip = &r->clips[c];
        if (clip->ok && clip->has[m] &&
            !(clip->scores[m].jitter_m_s3 <= JITTER_RATIO * clip->truth_jitter_m_s3))
            n++;
    }
    return n;
}

static void
print_mode_row(FILE *out, const struct ev_report *r, enum ev_method m, const char *body)
{
    char b[10][32];
    const struct ev_scores *s = &r->means.scores[m];
    fprintf(out,
            "| %-11s | %-10s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %4d of %-3d | %s |\n",
            ev_method_name(m), body, N(0, 5, 2, s->mpjpe_cm[EV_GROUP_ALL]),
            N(1, 5, 2, s->mpjpe_cm[EV_GROUP_UPPER]), N(2, 5, 2, s->mpjpe_cm[EV_GROUP_LOWER]),
            N(3, 5, 2, s->mpjpe_cm[EV_GROUP_HANDS]), N(4, 5, 2, s->mpjpe_cm[EV_GROUP_FEET]),
            N(8, 5, 2, s->joint_mpjpe_cm[EV_HIPS]), N(5, 7, 1, s->jitter_m_s3),
            N(6, 5, 2, s->foot_skate_cm), N(9, 6, 1, s->lag_ms), jittery_clips(r, m),
            r->means.clip_count, N(7, 6, 2, r->timing[m].median_us));
}

/* The clips where the prior's MPJPE is above the procedural body's by more than
 * NO_WORSE_CM, and the worst difference. */
#define NO_WORSE_CM 0.3
static void
print_worse_than_procedural(FILE *out, const struct ev_report *a, const struct ev_report *p,
                            enum ev_method m)
{
    int worse = 0, worst = -1;
    double worst_cm = -(double)INFINITY;
    for (int c = 0; c < p->clip_count && c < a->clip_count; ++c) {
        const struct ev_clip_result *ca = &a->clips[c], *cp = &p->clips[c];
        if (!ca->ok || !cp->ok || !ca->has[m] || !cp->has[m])
            continue;
        const double d = cp->scores[m].mpjpe_cm[0] - ca->scores[m].mpjpe_cm[0];
        worse += d > NO_WORSE_CM;
        if (d > worst_cm) {
            worst_cm = d;
            worst = c;
        }
    }
    if (worst >= 0)
        fprintf(out, "%s: prior worse than procedural by more than %.1f cm on %d clips "
                     "(largest difference %+.2f cm, %s)\n",
                ev_method_name(m), NO_WORSE_CM, worse, worst_cm, p->clips[worst].file);
}

/* Both bodies by mode, then by category. `a` is procedural, `b` the prior; either may be
 * NULL when it did not run. */
static void
print_side_by_side(FILE *out, const char *title, const struct ev_report *a,
                   const struct ev_report *p)
{
    const struct ev_report *any = p ? p : a;
    char b[10][32];
    fprintf(out, "\n## %s\n\n%s: %d clips; truth jitter %s m/s^3 (mean)\n\n", title, any->clip_dir,
            any->means.clip_count, N(0, 1, 1, any->means.truth_jitter_m_s3));
    fprintf(out, "| mode        | body       | MPJPE | upper | lower | hands | feet  | hips  "
                 "| jitter  | skate | lag ms | > 1.5x jitter | us med |\n");
    fprintf(out, "|-------------|------------|-------|-------|-------|-------|-------|-------"
                 "|---------|-------|--------|---------------|--------|\n");
    for (int m = 0; m < EV_DO_NOTHING; ++m) {
        if (!(any->options.modes & (1u << m)))
            continue;
        if (a)
            print_mode_row(out, a, (enum ev_method)m, "procedural");
        if (p)
            print_mode_row(out, p, (enum ev_method)m, "prior");
    }
    const struct ev_scores *d = &any->means.scores[EV_DO_NOTHING];
    fprintf(out,
            "| do-nothing  |            | %s | %s | %s | %s | %s | %s | %s | %s | %s |         "
            "      |        |\n",
            N(0, 5, 2, d->mpjpe_cm[EV_GROUP_ALL]), N(1, 5, 2, d->mpjpe_cm[EV_GROUP_UPPER]),
            N(2, 5, 2, d->mpjpe_cm[EV_GROUP_LOWER]), N(3, 5, 2, d->mpjpe_cm[EV_GROUP_HANDS]),
            N(4, 5, 2, d->mpjpe_cm[EV_GROUP_FEET]), N(7, 5, 2, d->joint_mpjpe_cm[EV_HIPS]),
            N(5, 7, 1, d->jitter_m_s3), N(6, 5, 2, d->foot_skate_cm), N(8, 6, 1, d->lag_ms));
    if (a && p) {
        fprintf(out, "\n");
        for (int m = 0; m < EV_DO_NOTHING; ++m)
            if (any->options.modes & (1u << m))
                print_worse_than_procedural(out, a, p, (enum ev_method)m);
    }
    if (!a || !p || any->category_count == 0)
        return;
    fprintf(out, "\nBy category (MPJPE / lower body cm; procedural -> prior):\n\n");
    fprintf(out, "| category         | clips | known MPJPE     | known lower     | height MPJPE    "
                 "| height lower    |\n");
    fprintf(out, "|------------------|-------|-----------------|-----------------|-----------------"
                 "|-----------------|\n");
    for (int c = 0; c < p->category_count && c < a->category_count; ++c) {
        const struct ev_means *ma = &a->categories[c].means, *mp = &p->categories[c].means;
        const struct ev_scores *ka = &ma->scores[EV_KNOWN_BODY], *kp = &mp->scores[EV_KNOWN_BODY];
        const struct ev_scores *ha = &ma->scores[EV_HEIGHT_ONLY], *hp = &mp->scores[EV_HEIGHT_ONLY];
        fprintf(out, "| %-16s | %5d | %s -> %s | %s -> %s | %s -> %s | %s -> %s |\n",
                p->categories[c].name, mp->clip_count, N(0, 5, 2, ka->mpjpe_cm[0]),
                N(1, 6, 2, kp->mpjpe_cm[0]), N(2, 5, 2, ka->mpjpe_cm[EV_GROUP_LOWER]),
                N(3, 6, 2, kp->mpjpe_cm[EV_GROUP_LOWER]), N(4, 5, 2, ha->mpjpe_cm[0]),
                N(5, 6, 2, hp->mpjpe_cm[0]), N(6, 5, 2, ha->mpjpe_cm[EV_GROUP_LOWER]),
                N(7, 6, 2, hp->mpjpe_cm[EV_GROUP_LOWER]));
    }
}

/* ---- Running ---- */

static void
print_progress(void *user, int index, int count, const struct ev_clip_result *clip)
{
    const char *label = user;
    if (!clip->ok)
        fprintf(stderr, "[%s %d/%d] FAILED: %s\n", label, index + 1, count, clip->error);
    else
        fprintf(stderr, "[%s %d/%d] %s: known %.2f cm, height %.2f cm\n", label, index + 1, count,
                clip->file, clip->scores[EV_KNOWN_BODY].mpjpe_cm[0],
                clip->scores[EV_HEIGHT_ONLY].mpjpe_cm[0]);
}

static enum em_result
run_one(const struct ev_options *base, const struct pr_model *prior, const char *label,
        struct ev_report *out, struct em_error *err)
{
    struct ev_options o = *base;
    o.prior = prior;
    if (!prior)
        o.observer = NULL; /* --plot draws the prior's run (the program's body) alone */
    if (!o.quiet) {
        o.progress = print_progress;
        o.progress_user = (void *)label;
    }
    return ev_run(&o, out, err);
}

/* Loads the model the options name (or the shipped one); on failure warns and returns
 * false: the caller runs the procedural body. */
bool
ev_prior_load(const struct ev_options *o, struct pr_model *out, char *out_path, size_t size)
{
    char found[1024];
    const char *path = o->prior_path;
    if (!path) {
        if (!u_path_find_data(PR_DEFAULT_MODEL, found, sizeof found)) {
            fprintf(stderr,
                    "embody eval: warning: %s not found; the body uses the procedural "
                    "estimate\n",
                    PR_DEFAULT_MODEL);
            return false;
        }
        path = found;
    }
    struct em_error err = {{0}};
    if (pr_model_load(path, out, &err) != EM_OK) {
        fprintf(stderr, "embody eval: warning: %s; the body uses the procedural estimate\n",
                err.message);
        return false;
    }
    if (out_path)
        snprintf(out_path, size, "%s", path);
    return true;
}

static int
report_status(const struct ev_report *r)
{
    int status = r->failed_count > 0 || r->manifest_error[0] ? 1 : 0;
    if (r->failed_count > 0)
        fprintf(stderr, "embody eval: %d of %d clips failed (listed under Failures)\n",
                r->failed_count, r->clip_count);
    if (r->manifest_error[0])
        fprintf(stderr, "embody eval: %s\n", r->manifest_error);
    return status;
}

/* The validation subjects (held out of the model's training) through both bodies. */
static void
run_validation(const struct ev_options *base, const struct pr_model *prior)
{
    const char *dir = base->validation_dir ? base->validation_dir : DEFAULT_VALIDATION_DIR;
    if (strcmp(dir, "-") == 0)
        return;
    if (!prior->holdout[0]) {
        printf("\n(No validation figures: the model names no held-out subjects.)\n");
        return;
    }
    if (!u_path_exists(dir)) {
        printf("\n(No validation figures: %s not found; --validation DIR.)\n", dir);
        return;
    }
    struct ev_options o = *base;
    o.clip_dir = dir;
    o.observer = NULL; /* the plots are of the evaluation clips */
    o.subjects = prior->holdout;
    o.json_path = "-";
    o.max_mean_mpjpe_cm = 0.0;
    struct ev_report a, p;
    struct em_error err = {{0}};
    if (run_one(&o, NULL, "validation, procedural", &a, &err) == EM_OK &&
        run_one(&o, prior, "validation, prior", &p, &err) == EM_OK) {
        char title[160];
        snprintf(title, sizeof title, "Validation: subjects %s (held out of the model's training)",
                 prior->holdout);
        print_side_by_side(stdout, title, &a, &p);
    } else {
        fprintf(stderr, "embody eval: validation: %s\n", err.message);
    }
    ev_report_fini(&a);
    ev_report_fini(&p);
}

/* "eval.json" -> "eval.procedural.json". */
static void
procedural_json_path(const char *path, char *out, size_t size)
{
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (dot && (!slash || dot > slash))
        snprintf(out, size, "%.*s.procedural%s", (int)(dot - path), path, dot);
    else
        snprintf(out, size, "%s.procedural.json", path);
}

static int
write_json(const struct ev_report *r, const char *path)
{
    struct em_error err = {{0}};
    if (ev_json_is_an_input(r, path, &err)) {
        fprintf(stderr, "embody eval: %s\n", err.message);
        return 2;
    }
    if (ev_report_write_json(r, path, &err) != EM_OK) {
        fprintf(stderr, "embody eval: %s\n", err.message);
        return 1;
    }
    char where[4096];
    ev_written_where(path, where, sizeof where);
    printf("JSON copy: %s\n", where);
    return 0;
}

bool
ev_print_bound_check(const struct ev_report *report, const char *which)
{
    if (!(report->options.max_mean_mpjpe_cm > 0.0))
        return false;
    const double mean = report->means.scores[EV_KNOWN_BODY].mpjpe_cm[EV_GROUP_ALL];
    const bool exceeded = ev_report_exceeds_bound(report);
    printf("known-body mean MPJPE%s %.3f cm, bound %.3f cm: %s\n", which, mean,
           report->options.max_mean_mpjpe_cm, exceeded ? "EXCEEDED" : "within");
    return exceeded;
}

bool
ev_prior_main(const struct ev_options *options, int *out_status)
{
    if (options->body_mode && strcmp(options->body_mode, "procedural") == 0)
        return false;
    struct pr_model model;
    char model_path[1024];
    if (!ev_prior_load(options, &model, model_path, sizeof model_path))
        return false;
    const bool both = !options->body_mode || strcmp(options->body_mode, "both") == 0;
    struct ev_report a, p;
    memset(&a, 0, sizeof a);
    struct em_error err = {{0}};
    int status = 0;
    if ((both && run_one(options, NULL, "procedural", &a, &err) != EM_OK) ||
        run_one(options, &model, "prior", &p, &err) != EM_OK) {
        fprintf(stderr, "embody eval: %s\n", err.message);
        ev_report_fini(&a);
        pr_model_fini(&model);
        *out_status = 2;
        return true;
    }
    printf("# Body: the learned prior %s (%s)\n", model_path, model.note);
    ev_report_print(&p, stdout);
    print_side_by_side(stdout, "Prior and procedural side by side", both ? &a : NULL, &p);
    const bool plotted = ev_report_observe(&p);
    run_validation(options, &model);
    fflush(stdout);
    status = report_status(&p) | (both ? report_status(&a) : 0) | (plotted ? 0 : 1);
    const char *json = p.options.json_path;
    if (strcmp(json, "-") != 0) {
        const int wrote = write_json(&p, json);
        status = wrote > status ? wrote : status;
        if (both) {
            char path[1100];
            procedural_json_path(json, path, sizeof path);
            const int wrote_a = write_json(&a, path);
            status = wrote_a > status ? wrote_a : status;
        }
    }
    if (ev_print_bound_check(&p, " (prior)"))
        status = 1;
    ev_report_fini(&a);
    ev_report_fini(&p);
    pr_model_fini(&model);
    *out_status = status;
    return true;
}
