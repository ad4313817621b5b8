/*
 * `embody train`: learns the body-pose prior from CMU clips (include/embody/prior.h).
 *
 * Data: each clip's 3-point stream (st_mocap_to_stream, exactly what a headset and two
 * controllers would report) goes through the same history and features as the body uses
 * at run time; the clip's true Hips, knees (LeftLeg), ankles (LeftFoot) and toes
 * (LeftToeBase) become the targets. Training clips are used as recorded and mirrored
 * left/right, each copy with its own random device offsets and an error in the height
 * the player told (the features are divided by it). Clips of held-out subjects are the
 * validation set, used as recorded.
 *
 * Learning: mean squared error on normalised outputs, Adam with decoupled weight decay
 * (Loshchilov and Hutter 2019), cosine-decayed learning rate, minibatches in a shuffled
 * order (optionally with dropout and a one-cycle learning rate); one thread, a seeded
 * generator, so a seed gives the same model bit for bit. The epoch whose pelvis, knees and
 * ankles are closest on the validation people is kept.
 *
 * This file: the model's start, training one split and pr_train; the other pieces are listed
 * in pr_learning.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embody/prior.h"
#include "pr_learning.h"
#include "util/u_time.h"

#define MIN_DEVIATION 1e-4f

static void
init_weights(struct pr_model *m, struct rng *r)
{
    const int f = m->feature_count, h = m->hidden_count, o = m->output_count;
    /* He initialisation for the ReLU layers, a smaller one for the linear output. */
    const float s1 = sqrtf(2.0f / (float)f), s2 = sqrtf(2.0f / (float)h),
                s3 = sqrtf(1.0f / (float)h);
    for (long i = 0; i < (long)f * h; ++i)
        m->w1[i] = s1 * rng_normal(r);
    for (long i = 0; i < (long)h * h; ++i)
        m->w2[i] = s2 * rng_normal(r);
    for (long i = 0; i < (long)h * o; ++i)
        m->w3[i] = s3 * rng_normal(r);
}

/* Mean and deviation of each column over the rows `rows` of the data. */
static void
column_stats(const float *data, const long *rows, long count, int cols, float *mean, float *std)
{
    for (int j = 0; j < cols; ++j) {
        double s = 0.0, ss = 0.0;
        for (long k = 0; k < count; ++k) {
            const double v = (double)data[rows[k] * cols + j];
            s += v;
            ss += v * v;
        }
        const double mu = count > 0 ? s / (double)count : 0.0;
        const double var = count > 0 ? ss / (double)count - mu * mu : 1.0;
        mean[j] = (float)mu;
        std[j] = var > (double)MIN_DEVIATION * (double)MIN_DEVIATION ? (float)sqrt(var) : 1.0f;
    }
}

/* The gradient and Adam's moments, as many as the model has parameters. */
static bool
trainer_alloc(struct trainer *t)
{
    const struct pr_model *m = t->m;
    t->n = pr_model_param_count(m->feature_count, m->hidden_count, m->output_count);
    t->grad = calloc((size_t)t->n, sizeof(float));
    t->adam_m = calloc((size_t)t->n, sizeof(float));
    t->adam_v = calloc((size_t)t->n, sizeof(float));
    return t->grad && t->adam_m && t->adam_v;
}

static void
trainer_free(struct trainer *t)
{
    free(t->grad);
    free(t->adam_m);
    free(t->adam_v);
}

/* The figure epoch `e` is kept by, lower better. Epochs are picked by the joints the body
 * takes from the network on the people left out (the training loss without them); the
 * mixed loss (which also weighs rotations and contacts) can rise while those joints still
 * improve. With --keep-epoch, the epoch chosen beforehand, whatever this split says. */
static double
epoch_score(const struct pr_train_options *o, const struct pr_train_report *rep,
            const struct split *sp, int e)
{
    double score =
        sp->val_count > 0 ? pr_joint_sum_cm(&rep->validation_by_epoch[e]) : rep->train_loss[e];
    if (o->keep_epoch > 0)
        score = e + 1 == o->keep_epoch || (e + 1 == o->epochs && o->keep_epoch > o->epochs)
                    ? -1.0
                    : (double)INFINITY;
    return score;
}

/* The kept epoch's validation figures, into the report. */
static void
keep_epoch_figures(struct pr_train_report *rep, int e, const struct validation *v)
{
    rep->best_epoch = e + 1;
    rep->validation_hips_cm = v->hips_cm;
    rep->validation_knee_cm = v->knee_cm;
    rep->validation_ankle_cm = v->ankle_cm;
    rep->validation_toes_cm = v->toes_cm;
    rep->validation_contact_accuracy = v->contact_accuracy;
}

static void
report_epoch(const struct pr_train_options *o, const struct pr_train_report *rep,
             const struct split *sp, int e, const struct validation *v, double seconds)
{
    if (sp->val_count == 0)
        pr_report_line(o, "epoch %3d/%d  train %.4f  (no validation clips)  %.1f s", e + 1,
                       o->epochs, rep->train_loss[e], seconds);
    else
        pr_report_line(o,
                       "epoch %3d/%d  train %.4f  validation %.4f  (hips %.2f, knees %.2f, "
                       "ankles %.2f: sum %.2f; toes %.2f, neck and shoulders %.2f, spine and "
                       "chest %.2f, elbows %.2f cm; contact %.0f %%)  %.1f s",
                       e + 1, o->epochs, rep->train_loss[e], v->loss, v->hips_cm, v->knee_cm,
                       v->ankle_cm, pr_joint_sum_cm(&rep->validation_by_epoch[e]), v->toes_cm,
                       v->torso_cm, v->back_cm, v->elbows_cm, 100.0 * v->contact_accuracy,
                       seconds);
}

/* The epochs: each trained, validated and reported; the parameters of the one kept are
 * left in `best`. */
static void
train_epochs(const struct pr_train_options *o, const struct corpus *c, struct split *sp,
             struct trainer *t, struct batch *b, struct activations *a, struct rng *rng,
             float *best, struct pr_train_report *rep)
{
    struct pr_model *m = t->m;
    double best_loss = (double)INFINITY;
    memcpy(best, m->params, (size_t)t->n * sizeof *best);
    pr_keep_all(a);
    for (int e = 0; e < o->epochs; ++e) {
        const int64_t start = u_time_now_ns();
        rep->train_loss[e] =
            pr_train_epoch(t, &c->data, sp->train, sp->train_count, rng, b, a, e, o);
        struct validation v;
        pr_validate(m, &c->data, sp->val, sp->val_count, a, &v);
        rep->validation_loss[e] = v.loss;
        rep->validation_by_epoch[e] = (struct pr_joint_errors){v.hips_cm, v.knee_cm, v.ankle_cm,
                                                               v.toes_cm, v.contact_accuracy};
        rep->epochs_run = e + 1;
        const double score = epoch_score(o, rep, sp, e);
        if (score < best_loss) {
            best_loss = score;
            memcpy(best, m->params, (size_t)t->n * sizeof *best);
            keep_epoch_figures(rep, e, &v);
        }
        report_epoch(o, rep, sp, e, &v, (double)(u_time_now_ns() - start) * 1e-9);
        /* Nothing after the epoch chosen beforehand can be kept (the schedule still spans
         * every epoch asked for, so the model is the same as after a full run). */
        if (o->keep_epoch > 0 && e + 1 == o->keep_epoch)
            break;
    }
}

/* Trains one model on a split's training rows, keeping the epoch best on its validation
 * rows (the last, without them). */
enum em_result
pr_train_split(const struct pr_train_options *o, const struct corpus *c, struct split *sp,
               struct pr_model *m, struct pr_train_report *rep, struct em_error *err)
{
    struct rng rng = {o->seed};
    struct trainer t = {.m = m};
    struct activations *a = calloc(1, sizeof *a);
    struct batch b = {0};
    float *best = NULL;
    enum em_result res = EM_OK;
    if (!a || !pr_batch_init(&b, o->batch, m->hidden_count)) {
        res = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "train: out of memory");
        goto done;
    }
    column_stats(c->data.x, sp->train, sp->train_count, PR_FEATURE_COUNT, m->in_mean, m->in_std);
    column_stats(c->data.y, sp->train, sp->train_count, PR_OUTPUT_COUNT, m->out_mean, m->out_std);
    init_weights(m, &rng);
    if (!trainer_alloc(&t) || !(best = malloc((size_t)t.n * sizeof *best))) {
        res = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "train: out of memory");
        goto done;
    }
    pr_report_line(o,
                   "training on %d clips (%.2f min, %ld samples with augmented copies), "
                   "validating on %d clips of subjects %s (%.2f min); %ld weights",
                   rep->train_clips, rep->train_minutes, sp->train_count, rep->validation_clips,
                   rep->holdout, rep->validation_minutes,
                   t.n - 2L * (PR_FEATURE_COUNT + PR_OUTPUT_COUNT));
    train_epochs(o, c, sp, &t, &b, a, &rng, best, rep);
    memcpy(m->params, best, (size_t)t.n * sizeof *best);
done:
    free(a);
    pr_batch_fini(&b);
    free(best);
    trainer_free(&t);
    return res;
}

enum em_result
pr_train(const struct pr_train_options *options, struct pr_model *out_model,
         struct pr_train_report *rep, struct em_error *err)
{
    memset(rep, 0, sizeof *rep);
    struct pr_train_options o;
    pr_resolve_options(options, &o);
    enum em_result res = pr_model_init(out_model, o.hidden, err);
    if (res != EM_OK)
        return res;
    struct holdout hold;
    if ((res = pr_parse_holdout(o.holdout, &hold, err)) != EM_OK)
        return res;
    snprintf(rep->holdout, sizeof rep->holdout, "%s", o.holdout);
    struct rng rng = {o.seed};
    struct corpus c;
    if ((res = pr_load_corpus(&o, &rng, &c, err)) != EM_OK)
        return res;
    struct split sp;
    res = pr_make_split(&c, &hold, o.row_stride, &sp, rep, err);
    if (res == EM_OK && sp.train_count == 0)
        res = em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                      "%s: no training clips left after holding out subjects %s",
                      o.clip_dir ? o.clip_dir : "train", o.holdout);
    if (res == EM_OK)
        res = pr_train_split(&o, &c, &sp, out_model, rep, err);
    if (res == EM_OK) {
        pr_model_pack(out_model); /* the weights as a saved and loaded model has them */
        snprintf(out_model->holdout, sizeof out_model->holdout, "%s",
                 strcmp(o.holdout, "none") == 0 ? "" : o.holdout);
        snprintf(out_model->note, sizeof out_model->note,
                 "embody train: %d clips, %.1f min; holdout %s; seed %llu; %d epochs, best %d%s",
                 rep->train_clips, rep->train_minutes, o.holdout, (unsigned long long)o.seed,
                 o.epochs, rep->best_epoch, o.loss == PR_LOSS_JOINTS ? "; joints loss" : "");
    }
    pr_split_fini(&sp);
    pr_corpus_fini(&c);
    return res;
}
