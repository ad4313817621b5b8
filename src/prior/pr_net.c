/*
 * The network's training: the forward pass, the losses (squared error of normalised
 * outputs, or each joint's distance), the layers over a minibatch at once and their
 * gradients, Adam with decoupled weight decay (Loshchilov and Hutter 2019) on a cosine or
 * one-cycle learning rate, dropout, one epoch, and the validation figures of rows. One
 * thread and one fixed order of sums: a seed gives the same model bit for bit.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pr_internal.h"
#include "pr_learning.h"

/* Built for AVX2 too, picked at load (as the inference's layers; names of their own, since
 * clang names a static clone's resolver globally): the same machine always
 * takes the same one, so a seed still gives the same bytes there. */
#if defined(__x86_64__) && defined(__GNUC__)
#define TRAIN_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TRAIN_CLONES
#endif

TRAIN_CLONES static void
dense_sample(const float *w, const float *b, const float *x, int n_in, int n_out, float *y)
{
    for (int j = 0; j < n_out; ++j)
        y[j] = b[j];
    for (int i = 0; i < n_in; ++i) {
        const float xi = x[i];
        const float *row = w + (long)i * n_out;
        for (int j = 0; j < n_out; ++j)
            y[j] += row[j] * xi;
    }
}

/* Forward pass on a normalised input; outputs stay normalised. The hidden units are
 * scaled by a->keep1 and a->keep2 (dropout while training; all 1 otherwise). */
static void
forward(const struct pr_model *m, struct activations *a)
{
    const int f = m->feature_count, h = m->hidden_count, o = m->output_count;
    dense_sample(m->w1, m->b1, a->x, f, h, a->a1);
    for (int j = 0; j < h; ++j)
        a->h1[j] = a->a1[j] > 0.0f ? a->a1[j] * a->keep1[j] : 0.0f;
    dense_sample(m->w2, m->b2, a->h1, h, h, a->a2);
    for (int j = 0; j < h; ++j)
        a->h2[j] = a->a2[j] > 0.0f ? a->a2[j] * a->keep2[j] : 0.0f;
    dense_sample(m->w3, m->b3, a->h2, h, o, a->y);
}

/* Every unit kept as is (scoring, and training without dropout). */
void
pr_keep_all(struct activations *a)
{
    for (int j = 0; j < PR_MAX_HIDDEN; ++j)
        a->keep1[j] = a->keep2[j] = 1.0f;
}

/* A fresh dropout draw: each unit zeroed with probability `rate`, the rest scaled up so
 * the layer's expected output is unchanged (inverted dropout; Srivastava et al. 2014). */
static void
draw_dropout(struct activations *a, int hidden, float rate, struct rng *r)
{
    const float up = 1.0f / (1.0f - rate);
    for (int j = 0; j < hidden; ++j)
        a->keep1[j] = rng_uniform(r) < (double)rate ? 0.0f : up;
    for (int j = 0; j < hidden; ++j)
        a->keep2[j] = rng_uniform(r) < (double)rate ? 0.0f : up;
}

/* Output j's error: the network's (normalised) output minus the normalised truth. */
static float
output_error(const struct pr_model *m, const struct activations *a, const float *target, int j)
{
    const float t = (target[j] - m->out_mean[j]) / m->out_std[j];
    return a->y[j] - t;
}

/* Output j's squared error; its gradient, as a term of the mean over all outputs, into
 * out_dy[j] (out_dy may be NULL). */
static double
squared_term(const struct pr_model *m, const struct activations *a, const float *target, int j,
             float *out_dy)
{
    const float e = output_error(m, a, target, j);
    if (out_dy)
        out_dy[j] = 2.0f * e / (float)m->output_count;
    return (double)e * (double)e;
}

/* Squared error of one sample (normalised outputs), mean over outputs. */
static double
squared_error(const struct pr_model *m, const struct activations *a, const float *target,
              float *out_dy)
{
    double loss = 0.0;
    const int o = m->output_count;
    for (int j = 0; j < o; ++j)
        loss += squared_term(m, a, target, j, out_dy);
    return loss / o;
}

/* The joints' outputs: a position (3 outputs) each, where the per-joint loss measures. */
static const int joint_output[] = {
    PR_OUT_HIPS,
    PR_OUT_LEG + PR_LEG_ANKLE,
    PR_OUT_LEG + PR_LEG_TOES,
    PR_OUT_LEG + PR_LEG_KNEE,
    PR_OUT_LEG + PR_OUT_PER_LEG + PR_LEG_ANKLE,
    PR_OUT_LEG + PR_OUT_PER_LEG + PR_LEG_TOES,
    PR_OUT_LEG + PR_OUT_PER_LEG + PR_LEG_KNEE,
    PR_OUT_NECK,
    PR_OUT_UPPER_ARM,
    PR_OUT_UPPER_ARM + 3,
    PR_OUT_BACK,
    PR_OUT_BACK + 3,
    PR_OUT_LOWER_ARM,
    PR_OUT_LOWER_ARM + 3,
};
#define JOINT_OUTPUTS ((int)(sizeof joint_output / sizeof joint_output[0]))

/* PR_LOSS_JOINTS: each joint's Euclidean distance from the truth (the evaluation's own
 * measure, MPJPE, in the outputs' units: metres at the reference height) over
 * JOINT_LOSS_SCALE_M, in place of its three outputs' squared errors; the rest (the
 * pelvis's turn and tilt, contacts) as squared_error. The scale makes a joint 10 cm off
 * weigh about as much as it did (three outputs one deviation off). Its gradient has the
 * same length at any distance: far joints do not drown the near ones. */
#define JOINT_LOSS_SCALE_M 0.1f
#define JOINT_LOSS_MIN_M 1e-4f

static double
joint_error(const struct pr_model *m, const struct activations *a, const float *target,
            float *out_dy)
{
    const int o = m->output_count;
    bool is_joint[PR_OUTPUT_COUNT] = {false};
    double loss = 0.0;
    for (int k = 0; k < JOINT_OUTPUTS; ++k) {
        float e[3], e2 = 0.0f;
        for (int c = 0; c < 3; ++c) {
            const int j = joint_output[k] + c;
            assert(j < o);
            is_joint[j] = true;
            e[c] = output_error(m, a, target, j) * m->out_std[j]; /* in metres */
            e2 += e[c] * e[c];
        }
        const float dist = sqrtf(e2);
        loss += (double)(dist / JOINT_LOSS_SCALE_M);
        if (out_dy) {
            const float len = fmaxf(dist, JOINT_LOSS_MIN_M) * JOINT_LOSS_SCALE_M;
            for (int c = 0; c < 3; ++c) {
                const int j = joint_output[k] + c;
                out_dy[j] = e[c] * m->out_std[j] / len / (float)o;
            }
        }
    }
    for (int j = 0; j < o; ++j)
        if (!is_joint[j])
            loss += squared_term(m, a, target, j, out_dy);
    return loss / o;
}

static double
sample_loss(const struct pr_model *m, int kind, const struct activations *a, const float *target,
            float *out_dy)
{
    return kind == PR_LOSS_JOINTS ? joint_error(m, a, target, out_dy)
                                  : squared_error(m, a, target, out_dy);
}

/* ---- A minibatch at once: the same layers as matrices, so each weight row is read once
 * for four samples and each gradient row updated once for four (the per-sample loops
 * above read every weight and gradient once per sample: memory-bound). Sums run in a
 * fixed order, so a seed still gives the same bytes. ---- */

/* y[r] = b + x[r] W for `rows` rows; W a row per input. Four rows by four inputs per pass
 * over the outputs (16 products per 8 loads and 4 stores). */
TRAIN_CLONES static void
dense_rows(const float *restrict w, const float *restrict b, const float *restrict x, int rows,
           int n_in, int n_out, float *restrict y)
{
    for (int r = 0; r < rows; ++r)
        for (int j = 0; j < n_out; ++j)
            y[(long)r * n_out + j] = b ? b[j] : 0.0f;
    int r = 0;
    for (; r + 4 <= rows; r += 4) {
        float *restrict y0 = y + (long)r * n_out, *restrict y1 = y0 + n_out;
        float *restrict y2 = y1 + n_out, *restrict y3 = y2 + n_out;
        const float *x0 = x + (long)r * n_in, *x1 = x0 + n_in, *x2 = x1 + n_in, *x3 = x2 + n_in;
        int i = 0;
        for (; i + 4 <= n_in; i += 4) {
            const float *restrict w0 = w + (long)i * n_out, *restrict w1 = w0 + n_out;
            const float *restrict w2 = w1 + n_out, *restrict w3 = w2 + n_out;
            const float a0 = x0[i], a1 = x0[i + 1], a2 = x0[i + 2], a3 = x0[i + 3];
            const float b0 = x1[i], b1 = x1[i + 1], b2 = x1[i + 2], b3 = x1[i + 3];
            const float c0 = x2[i], c1 = x2[i + 1], c2 = x2[i + 2], c3 = x2[i + 3];
            const float d0 = x3[i], d1 = x3[i + 1], d2 = x3[i + 2], d3 = x3[i + 3];
            for (int j = 0; j < n_out; ++j) {
                const float u0 = w0[j], u1 = w1[j], u2 = w2[j], u3 = w3[j];
                y0[j] += u0 * a0 + u1 * a1 + u2 * a2 + u3 * a3;
                y1[j] += u0 * b0 + u1 * b1 + u2 * b2 + u3 * b3;
                y2[j] += u0 * c0 + u1 * c1 + u2 * c2 + u3 * c3;
                y3[j] += u0 * d0 + u1 * d1 + u2 * d2 + u3 * d3;
            }
        }
        for (; i < n_in; ++i) {
            const float *restrict w0 = w + (long)i * n_out;
            for (int j = 0; j < n_out; ++j) {
                y0[j] += w0[j] * x0[i];
                y1[j] += w0[j] * x1[i];
                y2[j] += w0[j] * x2[i];
                y3[j] += w0[j] * x3[i];
            }
        }
    }
    for (; r < rows; ++r) {
        float *restrict y0 = y + (long)r * n_out;
        const float *x0 = x + (long)r * n_in;
        for (int i = 0; i < n_in; ++i) {
            const float *restrict w0 = w + (long)i * n_out;
            for (int j = 0; j < n_out; ++j)
                y0[j] += w0[j] * x0[i];
        }
    }
}

/* gw[i][j] += sum_r x[r][i] dy[r][j]; gb[j] += sum_r dy[r][j]. Four inputs by four rows
 * per pass over the outputs. */
TRAIN_CLONES static void
gradient_rows(const float *restrict x, const float *restrict dy, int rows, int n_in, int n_out,
              float *restrict gw, float *restrict gb)
{
    for (int r = 0; r < rows; ++r)
        for (int j = 0; j < n_out; ++j)
            gb[j] += dy[(long)r * n_out + j];
    int i = 0;
    for (; i + 4 <= n_in; i += 4) {
        float *restrict g0 = gw + (long)i * n_out, *restrict g1 = g0 + n_out;
        float *restrict g2 = g1 + n_out, *restrict g3 = g2 + n_out;
        int r = 0;
        for (; r + 4 <= rows; r += 4) {
            const float *restrict e0 = dy + (long)r * n_out, *restrict e1 = e0 + n_out;
            const float *restrict e2 = e1 + n_out, *restrict e3 = e2 + n_out;
            const float *x0 = x + (long)r * n_in + i, *x1 = x0 + n_in, *x2 = x1 + n_in,
                        *x3 = x2 + n_in;
            for (int j = 0; j < n_out; ++j) {
                const float v0 = e0[j], v1 = e1[j], v2 = e2[j], v3 = e3[j];
                g0[j] += x0[0] * v0 + x1[0] * v1 + x2[0] * v2 + x3[0] * v3;
                g1[j] += x0[1] * v0 + x1[1] * v1 + x2[1] * v2 + x3[1] * v3;
                g2[j] += x0[2] * v0 + x1[2] * v1 + x2[2] * v2 + x3[2] * v3;
                g3[j] += x0[3] * v0 + x1[3] * v1 + x2[3] * v2 + x3[3] * v3;
            }
        }
        for (; r < rows; ++r) {
            const float *restrict e0 = dy + (long)r * n_out;
            const float *x0 = x + (long)r * n_in + i;
            for (int j = 0; j < n_out; ++j) {
                g0[j] += x0[0] * e0[j];
                g1[j] += x0[1] * e0[j];
                g2[j] += x0[2] * e0[j];
                g3[j] += x0[3] * e0[j];
            }
        }
    }
    for (; i < n_in; ++i) {
        float *restrict g0 = gw + (long)i * n_out;
        for (int r = 0; r < rows; ++r) {
            const float xi = x[(long)r * n_in + i];
            const float *restrict e0 = dy + (long)r * n_out;
            for (int j = 0; j < n_out; ++j)
                g0[j] += xi * e0[j];
        }
    }
}

static void
transpose(const float *w, int n_in, int n_out, float *out)
{
    for (int i = 0; i < n_in; ++i)
        for (int j = 0; j < n_out; ++j)
            out[(long)j * n_in + i] = w[(long)i * n_out + j];
}

void
pr_batch_fini(struct batch *b)
{
    free(b->x);
    free(b->a1);
    free(b->h1);
    free(b->a2);
    free(b->h2);
    free(b->y);
    free(b->dy);
    free(b->dh);
    free(b->da);
    free(b->keep1);
    free(b->keep2);
    free(b->wt);
    memset(b, 0, sizeof *b);
}

bool
pr_batch_init(struct batch *b, int capacity, int hidden)
{
    memset(b, 0, sizeof *b);
    const size_t n = (size_t)capacity, h = (size_t)hidden;
    b->capacity = capacity;
    b->x = malloc(n * PR_FEATURE_COUNT * sizeof(float));
    b->a1 = malloc(n * h * sizeof(float));
    b->h1 = malloc(n * h * sizeof(float));
    b->a2 = malloc(n * h * sizeof(float));
    b->h2 = malloc(n * h * sizeof(float));
    b->y = malloc(n * PR_OUTPUT_COUNT * sizeof(float));
    b->dy = malloc(n * PR_OUTPUT_COUNT * sizeof(float));
    b->dh = malloc(n * h * sizeof(float));
    b->da = malloc(n * h * sizeof(float));
    b->keep1 = malloc(n * h * sizeof(float));
    b->keep2 = malloc(n * h * sizeof(float));
    b->wt = malloc(h * (h > PR_OUTPUT_COUNT ? h : PR_OUTPUT_COUNT) * sizeof(float));
    if (b->x && b->a1 && b->h1 && b->a2 && b->h2 && b->y && b->dy && b->dh && b->da && b->keep1 &&
        b->keep2 && b->wt)
        return true;
    pr_batch_fini(b);
    return false;
}

static void
relu_rows(const float *a, const float *keep, long n, float *h)
{
    for (long k = 0; k < n; ++k)
        h[k] = a[k] > 0.0f ? a[k] * keep[k] : 0.0f;
}

static void
relu_backward_rows(const float *a, const float *keep, long n, const float *dh, float *da)
{
    for (long k = 0; k < n; ++k)
        da[k] = a[k] > 0.0f ? dh[k] * keep[k] : 0.0f;
}

/* Forward and backward over the batch's `rows` samples (inputs in b->x, output gradients
 * in b->dy after the forward), adding the gradients into t->grad. */
static void
forward_rows(const struct pr_model *m, struct batch *b, int rows)
{
    const int f = m->feature_count, h = m->hidden_count, o = m->output_count;
    dense_rows(m->w1, m->b1, b->x, rows, f, h, b->a1);
    relu_rows(b->a1, b->keep1, (long)rows * h, b->h1);
    dense_rows(m->w2, m->b2, b->h1, rows, h, h, b->a2);
    relu_rows(b->a2, b->keep2, (long)rows * h, b->h2);
    dense_rows(m->w3, m->b3, b->h2, rows, h, o, b->y);
}

static void
backward_rows(const struct pr_model *m, struct trainer *t, struct batch *b, int rows)
{
    const int f = m->feature_count, h = m->hidden_count, o = m->output_count;
    float *g = t->grad;
    const float *p = m->params;
    gradient_rows(b->h2, b->dy, rows, h, o, g + (m->w3 - p), g + (m->b3 - p));
    transpose(m->w3, h, o, b->wt);
    dense_rows(b->wt, NULL, b->dy, rows, o, h, b->dh);
    relu_backward_rows(b->a2, b->keep2, (long)rows * h, b->dh, b->da);
    gradient_rows(b->h1, b->da, rows, h, h, g + (m->w2 - p), g + (m->b2 - p));
    transpose(m->w2, h, h, b->wt);
    dense_rows(b->wt, NULL, b->da, rows, h, h, b->dh);
    relu_backward_rows(b->a1, b->keep1, (long)rows * h, b->dh, b->da);
    gradient_rows(b->x, b->da, rows, f, h, g + (m->w1 - p), g + (m->b1 - p));
}

/* One Adam step over the weights and biases (the normalisation stays fixed). */
static void
adam_step(struct trainer *t, float lr, float decay, int batch)
{
    const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    t->step++;
    const float c1 = 1.0f - powf(b1, (float)t->step), c2 = 1.0f - powf(b2, (float)t->step);
    const long first = t->m->w1 - t->m->params;
    const float inv = 1.0f / (float)batch;
    for (long i = first; i < t->n; ++i) {
        const float g = t->grad[i] * inv;
        t->adam_m[i] = b1 * t->adam_m[i] + (1.0f - b1) * g;
        t->adam_v[i] = b2 * t->adam_v[i] + (1.0f - b2) * g * g;
        const float step = (t->adam_m[i] / c1) / (sqrtf(t->adam_v[i] / c2) + eps);
        t->m->params[i] -= lr * (step + decay * t->m->params[i]);
        t->grad[i] = 0.0f;
    }
}

static void
shuffle(long *order, long n, struct rng *r)
{
    for (long i = n - 1; i > 0; --i) {
        const long j = (long)(rng_next(r) % (uint64_t)(i + 1));
        const long tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
}

static double
point_error(const float *p, const float *q)
{
    const double dx = (double)(p[0] - q[0]), dy = (double)(p[1] - q[1]), dz = (double)(p[2] - q[2]);
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* Errors of one row, added to `v` (not yet divided by the rows). */
void
pr_score_row(const struct pr_model *m, const struct dataset *d, long i, struct activations *a,
             struct validation *v)
{
    pr_normalise_features(m, d->x + i * PR_FEATURE_COUNT, a->x);
    forward(m, a);
    const float *t = d->y + i * PR_OUTPUT_COUNT;
    v->loss += squared_error(m, a, t, NULL);
    float y[PR_OUTPUT_COUNT];
    for (int j = 0; j < PR_OUTPUT_COUNT; ++j)
        y[j] = a->y[j] * m->out_std[j] + m->out_mean[j];
    const double cm = 100.0 * (double)d->scale[i];
    v->hips_cm += cm * point_error(y + PR_OUT_HIPS, t + PR_OUT_HIPS);
    for (int s = 0; s < 2; ++s) {
        const int leg = PR_OUT_LEG + s * PR_OUT_PER_LEG;
        v->ankle_cm += 0.5 * cm * point_error(y + leg + PR_LEG_ANKLE, t + leg + PR_LEG_ANKLE);
        v->toes_cm += 0.5 * cm * point_error(y + leg + PR_LEG_TOES, t + leg + PR_LEG_TOES);
        v->knee_cm += 0.5 * cm * point_error(y + leg + PR_LEG_KNEE, t + leg + PR_LEG_KNEE);
        v->contact_accuracy +=
            0.5 * ((y[PR_OUT_CONTACT + s] >= 0.5f) == (t[PR_OUT_CONTACT + s] >= 0.5f));
        const int arm = PR_OUT_UPPER_ARM + 3 * s;
        v->torso_cm += cm * point_error(y + arm, t + arm) / 3.0;
        const int elbow = PR_OUT_LOWER_ARM + 3 * s;
        v->elbows_cm += 0.5 * cm * point_error(y + elbow, t + elbow);
    }
    v->torso_cm += cm * point_error(y + PR_OUT_NECK, t + PR_OUT_NECK) / 3.0;
    for (int b = 0; b < 2; ++b)
        v->back_cm += 0.5 * cm * point_error(y + PR_OUT_BACK + 3 * b, t + PR_OUT_BACK + 3 * b);
}

void
pr_validation_divide(struct validation *v, double n)
{
    v->loss /= n;
    v->hips_cm /= n;
    v->knee_cm /= n;
    v->ankle_cm /= n;
    v->toes_cm /= n;
    v->torso_cm /= n;
    v->back_cm /= n;
    v->elbows_cm /= n;
    v->contact_accuracy /= n;
}

void
pr_validate(const struct pr_model *m, const struct dataset *d, const long *rows, long count,
            struct activations *a, struct validation *out)
{
    memset(out, 0, sizeof *out);
    if (count == 0) {
        out->loss = (double)NAN;
        return;
    }
    for (long k = 0; k < count; ++k)
        pr_score_row(m, d, rows[k], a, out);
    pr_validation_divide(out, (double)count);
}

/* The learning rate of step `step` (0-based, within `epoch`) of `steps` per epoch. */
static float
learning_rate_at(const struct pr_train_options *o, int epoch, long step, long steps)
{
    const double pi = 3.141592653589793, top = (double)o->learning_rate;
    if (o->schedule == PR_SCHEDULE_ONE_CYCLE) {
        const double total = (double)o->epochs * (double)steps;
        const double now = (double)epoch * (double)steps + (double)step, rise = 0.3 * total;
        const double start = top / 25.0, end = start / 1e4;
        if (now < rise)
            return (float)(start + (top - start) * 0.5 * (1.0 - cos(pi * now / rise)));
        return (float)(end + (top - end) * 0.5 * (1.0 + cos(pi * (now - rise) / (total - rise))));
    }
    const double progress = o->epochs > 1 ? (double)epoch / (o->epochs - 1) : 0.0;
    return (float)(top * (0.1 + 0.45 * (1.0 + cos(pi * progress))));
}

double
pr_train_epoch(struct trainer *t, const struct dataset *d, long *order, long count, struct rng *r,
               struct batch *b, struct activations *a, int epoch, const struct pr_train_options *o)
{
    shuffle(order, count, r);
    const struct pr_model *m = t->m;
    const int h = m->hidden_count;
    double loss = 0.0;
    const long steps = (count + o->batch - 1) / o->batch;
    for (long step = 0; step < steps; ++step) {
        const long first = step * o->batch;
        const int rows = (int)(count - first < o->batch ? count - first : o->batch);
        for (int k = 0; k < rows; ++k) {
            pr_normalise_features(m, d->x + order[first + k] * PR_FEATURE_COUNT,
                                  b->x + (long)k * PR_FEATURE_COUNT);
            float *k1 = b->keep1 + (long)k * h, *k2 = b->keep2 + (long)k * h;
            if (o->dropout > 0.0f) { /* drawn per sample, in order: the same as one at a time */
                draw_dropout(a, h, o->dropout, r);
                memcpy(k1, a->keep1, (size_t)h * sizeof *k1);
                memcpy(k2, a->keep2, (size_t)h * sizeof *k2);
            } else {
                for (int j = 0; j < h; ++j)
                    k1[j] = k2[j] = 1.0f;
            }
        }
        forward_rows(m, b, rows);
        for (int k = 0; k < rows; ++k) {
            memcpy(a->y, b->y + (long)k * PR_OUTPUT_COUNT, sizeof a->y);
            loss += sample_loss(m, o->loss, a, d->y + order[first + k] * PR_OUTPUT_COUNT,
                                b->dy + (long)k * PR_OUTPUT_COUNT);
        }
        backward_rows(m, t, b, rows);
        adam_step(t, learning_rate_at(o, epoch, step, steps),
                  o->weight_decay > 0.0f ? o->weight_decay : 0.0f, rows);
    }
    pr_keep_all(a);
    return loss / (double)count;
}
