/*
 * Leave-people-out cross-validation of the trainer (pr_cross_validate): each lab's people
 * dealt into folds of about the same minutes of that lab, a model trained per fold without its
 * people, and the figures on them, per category and per epoch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pr_learning.h"

struct subject_minutes {
    const char *person; /* "cmu:05" */
    double minutes;
};

static int
compare_subject_minutes(const void *pa, const void *pb)
{
    const struct subject_minutes *a = pa, *b = pb;
    if (a->minutes != b->minutes)
        return a->minutes > b->minutes ? -1 : 1;
    return strcmp(a->person, b->person);
}

/* The length of a person's lab ("hdm05:bd" -> 5). */
static size_t
lab_length(const char *person)
{
    return strcspn(person, ":");
}

/* Each person's minutes, people in order of most minutes first. */
static enum em_result
people_minutes(const struct corpus *c, struct subject_minutes *s, int *out_n, struct em_error *err)
{
    int n = 0;
    for (int i = 0; i < c->list.count; ++i) {
        int k = 0;
        while (k < n && strcmp(s[k].person, c->list.e[i].person) != 0)
            ++k;
        if (k == n) {
            if (n == PR_MAX_SUBJECTS)
                return em_fail(err, EM_ERROR_LIMIT, "cross-validation: more than %d people",
                               PR_MAX_SUBJECTS);
            s[n++] = (struct subject_minutes){c->list.e[i].person, 0.0};
        }
        s[k].minutes += c->minutes[i];
    }
    if (n > 1)
        qsort(s, (size_t)n, sizeof *s, compare_subject_minutes);
    *out_n = n;
    return EM_OK;
}

/* Deals `s[i]` to the fold with the fewest minutes of its lab so far (`lab_minutes`), the
 * fewest minutes in all breaking ties. */
static enum em_result
deal_one(const struct subject_minutes *s, double *lab_minutes, struct pr_cv_report *out,
         struct em_error *err)
{
    int best = 0;
    for (int f = 1; f < out->fold_count; ++f)
        if (lab_minutes[f] < lab_minutes[best] ||
            (lab_minutes[f] == lab_minutes[best] && out->fold[f].minutes < out->fold[best].minutes))
            best = f;
    struct pr_fold_report *f = &out->fold[best];
    if (f->subject_count == PR_MAX_HOLDOUT_SUBJECTS)
        return em_fail(err, EM_ERROR_LIMIT, "cross-validation: a fold of more than %d people",
                       PR_MAX_HOLDOUT_SUBJECTS);
    snprintf(f->subject[f->subject_count++], PR_PERSON_MAX, "%s", s->person);
    f->minutes += s->minutes;
    lab_minutes[best] += s->minutes;
    return EM_OK;
}

/* Deals the people into folds lab by lab (the lab of the person with most minutes
 * first), each lab's people most minutes first, each to the fold with the fewest minutes
 * of that lab so far: folds hold about the same motion of each lab, and a lab's people
 * are spread over the folds (four HDM05 people in four folds: one each). */
static enum em_result
deal_folds(const struct corpus *c, int folds, struct pr_cv_report *out, struct em_error *err)
{
    struct subject_minutes s[PR_MAX_SUBJECTS];
    int n = 0;
    enum em_result r = people_minutes(c, s, &n, err);
    if (r != EM_OK)
        return r;
    if (n < folds)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "cross-validation: %d folds but only %d people", folds, n);
    out->fold_count = folds;
    bool dealt[PR_MAX_SUBJECTS] = {false};
    for (int lab = 0; lab < n && r == EM_OK; ++lab) {
        if (dealt[lab])
            continue;
        double lab_minutes[PR_MAX_FOLDS] = {0.0};
        const size_t len = lab_length(s[lab].person);
        for (int i = lab; i < n && r == EM_OK; ++i) {
            if (dealt[i] || lab_length(s[i].person) != len ||
                strncmp(s[i].person, s[lab].person, len) != 0)
                continue;
            dealt[i] = true;
            r = deal_one(&s[i], lab_minutes, out, err);
        }
    }
    return r;
}

static int
category_slot(struct pr_cv_report *out, const char *name)
{
    for (int i = 0; i < out->category_count; ++i)
        if (strcmp(out->category[i].name, name) == 0)
            return i;
    if (out->category_count == PR_MAX_CATEGORIES)
        return -1;
    struct pr_category_score *c = &out->category[out->category_count];
    snprintf(c->name, sizeof c->name, "%s", name);
    return out->category_count++;
}

static int
compare_categories(const void *pa, const void *pb)
{
    return strcmp(((const struct pr_category_score *)pa)->name,
                  ((const struct pr_category_score *)pb)->name);
}

/* The figures of one trained fold: its people left out, per category, and its people
 * trained on. */
static void
score_fold(const struct corpus *c, const struct split *sp, const struct pr_model *m,
           struct activations *a, struct pr_fold_report *f, struct pr_cv_report *out)
{
    struct validation v = {0};
    for (long k = 0; k < sp->val_count; ++k) {
        const long i = sp->val[k];
        struct validation row = {0};
        pr_score_row(m, &c->data, i, a, &row);
        v.loss += row.loss;
        v.hips_cm += row.hips_cm;
        v.knee_cm += row.knee_cm;
        v.ankle_cm += row.ankle_cm;
        v.toes_cm += row.toes_cm;
        v.contact_accuracy += row.contact_accuracy;
        const int slot = category_slot(out, c->list.e[c->data.clip[i]].category);
        if (slot < 0)
            continue;
        struct pr_category_score *cat = &out->category[slot];
        cat->rows++;
        cat->hips_cm += row.hips_cm;
        cat->knee_cm += row.knee_cm;
        cat->ankle_cm += row.ankle_cm;
        cat->toes_cm += row.toes_cm;
    }
    if (sp->val_count > 0)
        pr_validation_divide(&v, (double)sp->val_count);
    f->unseen =
        (struct pr_joint_errors){v.hips_cm, v.knee_cm, v.ankle_cm, v.toes_cm, v.contact_accuracy};
    struct validation s;
    pr_validate(m, &c->data, sp->seen, sp->seen_count, a, &s);
    f->seen =
        (struct pr_joint_errors){s.hips_cm, s.knee_cm, s.ankle_cm, s.toes_cm, s.contact_accuracy};
}

static void
add_errors(struct pr_joint_errors *sum, const struct pr_joint_errors *e, double w)
{
    sum->hips_cm += w * e->hips_cm;
    sum->knee_cm += w * e->knee_cm;
    sum->ankle_cm += w * e->ankle_cm;
    sum->toes_cm += w * e->toes_cm;
    sum->contact_accuracy += w * e->contact_accuracy;
}

/* Fold `fr`'s people as a holdout, and as text ("02,07,hdm05:bd") into `text`. */
static void
fold_holdout(const struct pr_fold_report *fr, struct holdout *out, char *text, size_t size)
{
    *out = (struct holdout){.count = fr->subject_count};
    text[0] = '\0';
    for (int i = 0; i < fr->subject_count; ++i) {
        snprintf(out->person[i], sizeof out->person[i], "%s", fr->subject[i]);
        const size_t used = strlen(text);
        snprintf(text + used, size - used, "%s%s", i ? "," : "", pr_person_short(fr->subject[i]));
    }
}

/* The subjects a fold trained on, each once, in the order of its training rows. */
static void
note_trained_subjects(const struct corpus *c, const struct split *sp, struct pr_fold_report *fr)
{
    for (long k = 0; k < sp->train_count; ++k) {
        const char *person = c->list.e[c->data.clip[sp->train[k]]].person;
        int i = 0;
        while (i < fr->trained_subject_count && strcmp(fr->trained_subject[i], person) != 0)
            ++i;
        if (i == fr->trained_subject_count && i < PR_MAX_SUBJECTS)
            snprintf(fr->trained_subject[fr->trained_subject_count++], PR_PERSON_MAX, "%s", person);
    }
}

/* A trained fold's figures, and its share of the means over the folds (`by_epoch`: the
 * people left out, per epoch). */
static void
add_fold(const struct corpus *c, const struct split *sp, const struct pr_model *m,
         const struct pr_train_report *rep, int folds, struct activations *a,
         struct pr_fold_report *fr, struct pr_joint_errors *by_epoch, struct pr_cv_report *out)
{
    fr->clips = rep->validation_clips;
    fr->best_epoch = rep->best_epoch;
    score_fold(c, sp, m, a, fr, out);
    add_errors(&out->unseen, &fr->unseen, 1.0 / folds);
    add_errors(&out->seen, &fr->seen, 1.0 / folds);
    out->epochs = rep->epochs_run;
    for (int e = 0; e < rep->epochs_run; ++e) {
        out->validation_loss[e] += rep->validation_loss[e] / folds;
        add_errors(&by_epoch[e], &rep->validation_by_epoch[e], 1.0 / folds);
    }
}

/* Fold `f` of `folds`: a model trained without its people, and its figures. */
static enum em_result
run_fold(const struct pr_train_options *o, const struct corpus *c, int f, int folds,
         struct activations *a, struct pr_joint_errors *by_epoch, struct pr_cv_report *out,
         struct em_error *err)
{
    struct pr_fold_report *fr = &out->fold[f];
    struct holdout hold;
    char text[PR_HOLDOUT_MAX];
    fold_holdout(fr, &hold, text, sizeof text);
    struct pr_train_report rep = {0};
    snprintf(rep.holdout, sizeof rep.holdout, "%s", text);
    struct split sp;
    struct pr_model m;
    enum em_result res = pr_make_split(c, &hold, o->row_stride, &sp, &rep, err);
    if (res != EM_OK)
        return res;
    pr_report_line(o, "fold %d/%d: people %s left out", f + 1, folds, text);
    res = pr_model_init(&m, o->hidden, err);
    if (res == EM_OK)
        res = pr_train_split(o, c, &sp, &m, &rep, err);
    if (res == EM_OK) {
        note_trained_subjects(c, &sp, fr);
        add_fold(c, &sp, &m, &rep, folds, a, fr, by_epoch, out);
    }
    pr_model_fini(&m);
    pr_split_fini(&sp);
    return res;
}

/* The epoch whose mean over the folds is best on the people left out. */
static void
pick_best_epoch(const struct pr_joint_errors *by_epoch, struct pr_cv_report *out)
{
    for (int e = 0; e < out->epochs; ++e) {
        out->unseen_by_epoch[e] = by_epoch[e];
        if (out->best_epoch == 0 ||
            pr_joint_sum_cm(&by_epoch[e]) < pr_joint_sum_cm(&by_epoch[out->best_epoch - 1]))
            out->best_epoch = e + 1;
    }
    if (out->best_epoch > 0)
        out->unseen_at_best = by_epoch[out->best_epoch - 1];
}

/* Each category's mean errors, clips and minutes, the categories in name order. */
static void
finish_categories(const struct corpus *c, struct pr_cv_report *out)
{
    for (int i = 0; i < out->category_count; ++i) {
        struct pr_category_score *cat = &out->category[i];
        const double n = cat->rows > 0 ? (double)cat->rows : 1.0;
        cat->hips_cm /= n;
        cat->knee_cm /= n;
        cat->ankle_cm /= n;
        cat->toes_cm /= n;
        for (int k = 0; k < c->list.count; ++k)
            if (strcmp(c->list.e[k].category, cat->name) == 0) {
                cat->clips++;
                cat->minutes += c->minutes[k];
            }
    }
    if (out->category_count > 1)
        qsort(out->category, (size_t)out->category_count, sizeof *out->category,
              compare_categories);
}

enum em_result
pr_cross_validate(const struct pr_train_options *options, int folds, struct pr_cv_report *out,
                  struct em_error *err)
{
    memset(out, 0, sizeof *out);
    if (folds < 2 || folds > PR_MAX_FOLDS)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "cross-validation: %d folds; expected 2 to %d", folds, PR_MAX_FOLDS);
    struct pr_train_options o;
    pr_resolve_options(options, &o);
    struct rng rng = {o.seed};
    struct corpus c;
    enum em_result res = pr_load_corpus(&o, &rng, &c, err);
    if (res != EM_OK)
        return res;
    res = deal_folds(&c, folds, out, err);
    struct activations *a = calloc(1, sizeof *a);
    struct pr_joint_errors *by_epoch = calloc(PR_MAX_EPOCHS, sizeof *by_epoch);
    if (res == EM_OK && (!by_epoch || !a))
        res = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "train: out of memory");
    if (a)
        pr_keep_all(a);
    for (int f = 0; f < folds && res == EM_OK; ++f)
        res = run_fold(&o, &c, f, folds, a, by_epoch, out, err);
    if (by_epoch)
        pick_best_epoch(by_epoch, out);
    free(by_epoch);
    finish_categories(&c, out);
    free(a);
    pr_corpus_fini(&c);
    return res;
}
