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
 * order; one thread, a seeded generator, so a seed gives the same model bit for bit. The
 * epoch with the lowest validation loss is kept.
 */
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "embody/prior.h"
#include "embody/skeleton.h"
#include "embody/stream.h"
#include "util/u_time.h"

#define DEFAULT_EPOCHS 15
#define DEFAULT_HIDDEN 64
#define DEFAULT_LR 1e-3f
#define DEFAULT_WEIGHT_DECAY 0.1f
#define DEFAULT_BATCH 128
#define DEFAULT_OFFSET_NOISE_M 0.01f
#define DEFAULT_HEIGHT_NOISE 0.02f
#define MAX_HOLDOUT 16
/* A foot is planted (contact target 1) when its ankle moved at most this far since the
 * previous 60 Hz row: the evaluation's own planted test (eval.h). */
#define PLANTED_MAX_STEP_M 0.01f
#define MIN_DEVIATION 1e-4f
/* Tempo copies play between 1/1.25 and 1.25 times as fast: ln 1.25. */
#define TEMPO_LOG_RANGE 0.22314355f

/* ---- Random numbers (SplitMix64; Box-Muller for normals) ---- */

struct rng {
    uint64_t state;
};

static uint64_t
rng_next(struct rng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double
rng_uniform(struct rng *r) /* in (0, 1) */
{
    return ((double)(rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static float
rng_normal(struct rng *r)
{
    const double u = rng_uniform(r), v = rng_uniform(r);
    return (float)(sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v));
}

/* ---- The data set: features and targets, one row per sample ---- */

struct dataset {
    long count, capacity;
    float *x;     /* [count][PR_FEATURE_COUNT] */
    float *y;     /* [count][PR_OUTPUT_COUNT] */
    float *scale; /* metres per unit of the outputs' lengths */
};

static void
dataset_fini(struct dataset *d)
{
    free(d->x);
    free(d->y);
    free(d->scale);
    memset(d, 0, sizeof *d);
}

static bool
dataset_reserve(struct dataset *d, long more)
{
    if (d->count + more <= d->capacity)
        return true;
    long cap = d->capacity ? d->capacity : 4096;
    while (cap < d->count + more)
        cap *= 2;
    float *x = realloc(d->x, (size_t)cap * PR_FEATURE_COUNT * sizeof *x);
    if (x)
        d->x = x;
    float *y = realloc(d->y, (size_t)cap * PR_OUTPUT_COUNT * sizeof *y);
    if (y)
        d->y = y;
    float *s = realloc(d->scale, (size_t)cap * sizeof *s);
    if (s)
        d->scale = s;
    if (!x || !y || !s)
        return false;
    d->capacity = cap;
    return true;
}

/* ---- Clips ---- */

struct clip_list {
    int count;
    char **names;
};

static void
clip_list_fini(struct clip_list *l)
{
    for (int i = 0; i < l->count; ++i)
        free(l->names[i]);
    free(l->names);
    memset(l, 0, sizeof *l);
}

static int
compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static enum em_result
list_clips(const char *dir, struct clip_list *out, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    DIR *d = opendir(dir);
    if (!d)
        return em_fail(err, EM_ERROR_IO, "%s: cannot open the clip folder", dir);
    int cap = 0;
    for (struct dirent *e = readdir(d); e; e = readdir(d)) {
        const size_t n = strlen(e->d_name);
        if (n < 5 || strcasecmp(e->d_name + n - 4, ".bvh") != 0)
            continue;
        if (out->count == cap) {
            cap = cap ? 2 * cap : 64;
            char **grown = realloc(out->names, (size_t)cap * sizeof *grown);
            if (!grown) {
                closedir(d);
                clip_list_fini(out);
                return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", dir);
            }
            out->names = grown;
        }
        out->names[out->count] = strdup(e->d_name);
        if (out->names[out->count])
            out->count++;
    }
    closedir(d);
    if (out->count == 0)
        return em_fail(err, EM_ERROR_IO, "%s: no clips (*.bvh files) in the folder", dir);
    qsort(out->names, (size_t)out->count, sizeof *out->names, compare_names);
    return EM_OK;
}

/* The subject of "cmu_SS_TT.bvh" (SS), or -1 when the name is not of that form. */
static int
clip_subject(const char *name)
{
    int subject = -1, trial = -1;
    if (sscanf(name, "cmu_%d_%d", &subject, &trial) == 2 && subject >= 0)
        return subject;
    return -1;
}

struct holdout {
    int count;
    int subject[MAX_HOLDOUT];
};

static enum em_result
parse_holdout(const char *text, struct holdout *out, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    if (strcmp(text, "none") == 0)
        return EM_OK;
    const char *p = text;
    while (*p) {
        char *end = NULL;
        const long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v > 100000 || (*end && *end != ','))
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "--holdout: expected subject numbers separated by commas (\"02,07\") "
                           "or none, got \"%s\"",
                           text);
        if (out->count == MAX_HOLDOUT)
            return em_fail(err, EM_ERROR_LIMIT, "--holdout: more than %d subjects", MAX_HOLDOUT);
        out->subject[out->count++] = (int)v;
        p = *end ? end + 1 : end;
    }
    return EM_OK;
}

static bool
held_out(const struct holdout *h, int subject)
{
    for (int i = 0; i < h->count; ++i)
        if (h->subject[i] == subject)
            return true;
    return false;
}

/* The joints the targets come from. */
enum { J_HIPS, J_ANKLE, J_TOES = J_ANKLE + 2, J_KNEE = J_TOES + 2, J_COUNT = J_KNEE + 2 };
static const char *const joint_names[J_COUNT] = {
    "Hips", "LeftFoot", "RightFoot", "LeftToeBase", "RightToeBase", "LeftLeg", "RightLeg"};

/* One clip in memory: its stream and the true joints at its rows. */
struct clip {
    struct st_stream stream;
    struct pr_truth *truth; /* [row] */
    float height_m;
};

static void
clip_fini(struct clip *c)
{
    st_stream_fini(&c->stream);
    free(c->truth);
    memset(c, 0, sizeof *c);
}

static void
quat_from_double(const double *q, float *out)
{
    for (int k = 0; k < 4; ++k)
        out[k] = (float)q[k];
}

static enum em_result
fill_truth(const struct st_bvh *bvh, double unit, int step, struct clip *c, const char *path,
           struct em_error *err)
{
    int joint[J_COUNT];
    for (int j = 0; j < J_COUNT; ++j)
        if ((joint[j] = st_bvh_find(bvh, joint_names[j])) < 0)
            return em_fail(err, EM_ERROR_PARSE, "%s: no joint named \"%s\"", path, joint_names[j]);
    const size_t n = (size_t)bvh->joint_count;
    double(*pos)[3] = malloc(n * sizeof *pos);
    double(*rot)[4] = malloc(n * sizeof *rot);
    c->truth = calloc((size_t)c->stream.frame_count, sizeof *c->truth);
    if (!pos || !rot || !c->truth) {
        free(pos);
        free(rot);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    for (int row = 0; row < c->stream.frame_count; ++row) {
        st_bvh_frame_pose(bvh, row * step, pos, rot);
        struct pr_truth *t = &c->truth[row];
        for (int k = 0; k < 3; ++k) {
            t->hips_m[k] = (float)(pos[joint[J_HIPS]][k] * unit);
            for (int s = 0; s < 2; ++s) {
                t->ankle_m[s][k] = (float)(pos[joint[J_ANKLE + s]][k] * unit);
                t->toes_m[s][k] = (float)(pos[joint[J_TOES + s]][k] * unit);
                t->knee_m[s][k] = (float)(pos[joint[J_KNEE + s]][k] * unit);
            }
        }
        quat_from_double(rot[joint[J_HIPS]], t->hips_rotation);
    }
    free(pos);
    free(rot);
    /* Contact: the ankle barely moved since the previous row (row 0 looks ahead). */
    for (int row = 0; row < c->stream.frame_count; ++row)
        for (int s = 0; s < 2; ++s) {
            const int a = row > 0 ? row - 1 : row, b = row > 0 ? row : row + 1;
            if (b >= c->stream.frame_count) {
                c->truth[row].contact[s] = true;
                continue;
            }
            const float *p = c->truth[a].ankle_m[s], *q = c->truth[b].ankle_m[s];
            const float dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
            c->truth[row].contact[s] =
                dx * dx + dy * dy + dz * dz <= PLANTED_MAX_STEP_M * PLANTED_MAX_STEP_M;
        }
    return EM_OK;
}

static enum em_result
load_clip(const char *path, int frame_limit, struct clip *out, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    struct st_bvh bvh;
    enum em_result r = st_bvh_load(path, &bvh, err);
    if (r != EM_OK)
        return r;
    const double unit = st_bvh_guess_unit_scale(&bvh);
    r = st_mocap_to_stream(&bvh, unit, path, &out->stream, err);
    long step = lround(1.0 / (bvh.frame_time_s * 60.0));
    if (step < 1)
        step = 1;
    if (r == EM_OK && frame_limit > 0 && out->stream.frame_count > frame_limit)
        out->stream.frame_count = frame_limit;
    if (r == EM_OK)
        r = fill_truth(&bvh, unit, (int)step, out, path, err);
    if (r == EM_OK) {
        struct sk_skeleton sk;
        r = st_bvh_to_humanoid(&bvh, SK_NAMES_CMU, unit, path, &sk, err);
        if (r == EM_OK) {
            out->height_m = sk_humanoid_height(&sk);
            sk_skeleton_fini(&sk);
            if (!(out->height_m > 0.5f && out->height_m < 2.8f))
                r = em_fail(err, EM_ERROR_PARSE, "%s: the skeleton stands %.2f m tall", path,
                            (double)out->height_m);
        }
    }
    st_bvh_fini(&bvh);
    if (r != EM_OK)
        clip_fini(out);
    return r;
}

/* ---- Augmentation ---- */

static void
mirror_vec(float *v)
{
    v[0] = -v[0];
}

static void
mirror_quat(float *q)
{
    q[1] = -q[1];
    q[2] = -q[2];
}

static void
swap3(float *a, float *b)
{
    for (int k = 0; k < 3; ++k) {
        const float t = a[k];
        a[k] = b[k];
        b[k] = t;
    }
}

/* Left becomes right: x -> -x, rotations reflected (x, -y, -z, w), sides swapped. The
 * protocol's grip axes are each other's mirror images, so a mirrored left grip is a
 * right grip. */
static void
mirror_frame(struct em_tracking_frame *f, struct pr_truth *t)
{
    for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
        mirror_vec(f->device[d].pose.position_m);
        mirror_quat(f->device[d].pose.orientation);
    }
    const struct em_device_pose l = f->device[EM_DEVICE_LEFT_HAND];
    f->device[EM_DEVICE_LEFT_HAND] = f->device[EM_DEVICE_RIGHT_HAND];
    f->device[EM_DEVICE_RIGHT_HAND] = l;
    mirror_vec(t->hips_m);
    mirror_quat(t->hips_rotation);
    for (int s = 0; s < 2; ++s) {
        mirror_vec(t->ankle_m[s]);
        mirror_vec(t->toes_m[s]);
        mirror_vec(t->knee_m[s]);
    }
    swap3(t->ankle_m[0], t->ankle_m[1]);
    swap3(t->toes_m[0], t->toes_m[1]);
    swap3(t->knee_m[0], t->knee_m[1]);
    const bool c = t->contact[0];
    t->contact[0] = t->contact[1];
    t->contact[1] = c;
}

static void
rotate(const float *q, const float *v, float *out)
{
    const float ux = q[0], uy = q[1], uz = q[2], w = q[3];
    const float tx = 2.0f * (uy * v[2] - uz * v[1]);
    const float ty = 2.0f * (uz * v[0] - ux * v[2]);
    const float tz = 2.0f * (ux * v[1] - uy * v[0]);
    out[0] = v[0] + w * tx + (uy * tz - uz * ty);
    out[1] = v[1] + w * ty + (uz * tx - ux * tz);
    out[2] = v[2] + w * tz + (ux * ty - uy * tx);
}

struct augment {
    bool mirror;
    float device_offset_m[EM_DEVICE_COUNT][3]; /* in each device's own frame */
    float height_factor;
    float tempo; /* played this many times as fast (1 = as recorded) */
};

static void
lerp3(const float *a, const float *b, float w, float *out)
{
    for (int k = 0; k < 3; ++k)
        out[k] = a[k] + w * (b[k] - a[k]);
}

/* Normalised linear blend of unit quaternions, along the shorter way. */
static void
nlerp4(const float *a, const float *b, float w, float *out)
{
    const float dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
    const float sb = dot < 0.0f ? -w : w;
    float n = 0.0f;
    for (int k = 0; k < 4; ++k) {
        out[k] = (1.0f - w) * a[k] + sb * b[k];
        n += out[k] * out[k];
    }
    n = sqrtf(n);
    for (int k = 0; k < 4; ++k)
        out[k] /= n;
}

/* The clip's frame and truth at fractional row x (between rows, blended). */
static void
sample_clip(const struct clip *c, double x, struct em_tracking_frame *f, struct pr_truth *t)
{
    const int n = c->stream.frame_count;
    int r0 = (int)floor(x);
    const float w = (float)(x - r0);
    if (r0 >= n - 1 || w == 0.0f) { /* on a row: exactly it (no renormalisation) */
        r0 = r0 < n - 1 ? r0 : n - 1;
        *f = c->stream.frames[r0];
        *t = c->truth[r0];
        return;
    }
    const struct em_tracking_frame *a = &c->stream.frames[r0], *b = &c->stream.frames[r0 + 1];
    *f = *a;
    for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
        lerp3(a->device[d].pose.position_m, b->device[d].pose.position_m, w,
              f->device[d].pose.position_m);
        nlerp4(a->device[d].pose.orientation, b->device[d].pose.orientation, w,
               f->device[d].pose.orientation);
    }
    const struct pr_truth *ta = &c->truth[r0], *tb = &c->truth[r0 + 1];
    *t = w < 0.5f ? *ta : *tb; /* contact from the nearer row */
    lerp3(ta->hips_m, tb->hips_m, w, t->hips_m);
    nlerp4(ta->hips_rotation, tb->hips_rotation, w, t->hips_rotation);
    for (int s = 0; s < 2; ++s) {
        lerp3(ta->ankle_m[s], tb->ankle_m[s], w, t->ankle_m[s]);
        lerp3(ta->toes_m[s], tb->toes_m[s], w, t->toes_m[s]);
        lerp3(ta->knee_m[s], tb->knee_m[s], w, t->knee_m[s]);
    }
}

/* Samples of one copy of a clip, appended to `d`. */
static enum em_result
add_copy(const struct clip *c, const struct augment *a, struct dataset *d)
{
    const int n = (int)floor((double)(c->stream.frame_count - 1) / (double)a->tempo) + 1;
    if (!dataset_reserve(d, n))
        return EM_ERROR_OUT_OF_MEMORY;
    struct pr_history *h = malloc(sizeof *h);
    if (!h)
        return EM_ERROR_OUT_OF_MEMORY;
    pr_history_reset(h);
    const float told_height = c->height_m * a->height_factor;
    for (int row = 0; row < n; ++row) {
        struct em_tracking_frame f;
        struct pr_truth t;
        sample_clip(c, row * (double)a->tempo, &f, &t);
        for (int dev = 0; dev < EM_DEVICE_COUNT; ++dev) {
            float off[3];
            rotate(f.device[dev].pose.orientation, a->device_offset_m[dev], off);
            for (int k = 0; k < 3; ++k)
                f.device[dev].pose.position_m[k] += off[k];
        }
        if (a->mirror)
            mirror_frame(&f, &t);
        f.time_s = row / PR_RATE_HZ; /* the prior samples at 60 Hz ticks */
        pr_history_push(h, &f);
        const long i = d->count++;
        float yaw;
        pr_features(h, told_height, 0.0f, d->x + i * PR_FEATURE_COUNT, &yaw);
        const float *head = h->sample[h->newest].head_position_m;
        pr_encode_targets(&t, head, yaw, told_height, 0.0f, d->y + i * PR_OUTPUT_COUNT);
        d->scale[i] = told_height / PR_REFERENCE_HEIGHT_M;
    }
    free(h);
    return EM_OK;
}

/* ---- The network's training state ---- */

struct trainer {
    struct pr_model *m;
    long n;      /* parameters */
    float *grad; /* same layout as m->params */
    float *adam_m, *adam_v;
    long step;
};

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

/* Mean and deviation of each column over the data set. */
static void
column_stats(const float *data, long rows, int cols, float *mean, float *std)
{
    for (int j = 0; j < cols; ++j) {
        double s = 0.0, ss = 0.0;
        for (long i = 0; i < rows; ++i) {
            const double v = (double)data[i * cols + j];
            s += v;
            ss += v * v;
        }
        const double mu = rows > 0 ? s / (double)rows : 0.0;
        const double var = rows > 0 ? ss / (double)rows - mu * mu : 1.0;
        mean[j] = (float)mu;
        std[j] = var > (double)MIN_DEVIATION * (double)MIN_DEVIATION ? (float)sqrt(var) : 1.0f;
    }
}

struct activations {
    float x[PR_FEATURE_COUNT], a1[PR_MAX_HIDDEN], h1[PR_MAX_HIDDEN], a2[PR_MAX_HIDDEN],
        h2[PR_MAX_HIDDEN], y[PR_OUTPUT_COUNT];
    float dy[PR_OUTPUT_COUNT], dh[PR_MAX_HIDDEN], da[PR_MAX_HIDDEN];
};

static void
dense(const float *w, const float *b, const float *x, int n_in, int n_out, float *y)
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

/* Forward pass on a normalised input; outputs stay normalised. */
static void
forward(const struct pr_model *m, struct activations *a)
{
    const int f = m->feature_count, h = m->hidden_count, o = m->output_count;
    dense(m->w1, m->b1, a->x, f, h, a->a1);
    for (int j = 0; j < h; ++j)
        a->h1[j] = a->a1[j] > 0.0f ? a->a1[j] : 0.0f;
    dense(m->w2, m->b2, a->h1, h, h, a->a2);
    for (int j = 0; j < h; ++j)
        a->h2[j] = a->a2[j] > 0.0f ? a->a2[j] : 0.0f;
    dense(m->w3, m->b3, a->h2, h, o, a->y);
}

static void
normalise_input(const struct pr_model *m, const float *raw, float *x)
{
    for (int i = 0; i < m->feature_count; ++i)
        x[i] = (raw[i] - m->in_mean[i]) / m->in_std[i];
}

/* Squared error of one sample (normalised outputs), mean over outputs. */
static double
sample_loss(const struct pr_model *m, const struct activations *a, const float *target,
            float *out_dy)
{
    double loss = 0.0;
    const int o = m->output_count;
    for (int j = 0; j < o; ++j) {
        const float t = (target[j] - m->out_mean[j]) / m->out_std[j];
        const float e = a->y[j] - t;
        loss += (double)e * (double)e;
        if (out_dy)
            out_dy[j] = 2.0f * e / (float)o;
    }
    return loss / o;
}

/* grad_w[i][j] += x[i] dy[j]; grad_b += dy; dx[i] = sum_j w[i][j] dy[j]. */
static void
dense_backward(const float *w, const float *x, const float *dy, int n_in, int n_out, float *gw,
               float *gb, float *dx)
{
    for (int j = 0; j < n_out; ++j)
        gb[j] += dy[j];
    for (int i = 0; i < n_in; ++i) {
        const float xi = x[i];
        const float *row = w + (long)i * n_out;
        float *grow = gw + (long)i * n_out;
        float s = 0.0f;
        for (int j = 0; j < n_out; ++j) {
            grow[j] += xi * dy[j];
            s += row[j] * dy[j];
        }
        if (dx)
            dx[i] = s;
    }
}

static void
backward(const struct pr_model *m, struct trainer *t, struct activations *a)
{
    const int f = m->feature_count, h = m->hidden_count, o = m->output_count;
    const long off_w1 = m->w1 - m->params, off_b1 = m->b1 - m->params;
    const long off_w2 = m->w2 - m->params, off_b2 = m->b2 - m->params;
    const long off_w3 = m->w3 - m->params, off_b3 = m->b3 - m->params;
    dense_backward(m->w3, a->h2, a->dy, h, o, t->grad + off_w3, t->grad + off_b3, a->dh);
    for (int j = 0; j < h; ++j)
        a->da[j] = a->a2[j] > 0.0f ? a->dh[j] : 0.0f;
    dense_backward(m->w2, a->h1, a->da, h, h, t->grad + off_w2, t->grad + off_b2, a->dh);
    for (int j = 0; j < h; ++j)
        a->da[j] = a->a1[j] > 0.0f ? a->dh[j] : 0.0f;
    dense_backward(m->w1, a->x, a->da, f, h, t->grad + off_w1, t->grad + off_b1, NULL);
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

struct validation {
    double loss, hips_cm, knee_cm, ankle_cm, toes_cm, contact_accuracy;
};

static double
point_error(const float *p, const float *q)
{
    const double dx = (double)(p[0] - q[0]), dy = (double)(p[1] - q[1]), dz = (double)(p[2] - q[2]);
    return sqrt(dx * dx + dy * dy + dz * dz);
}

static void
validate(const struct pr_model *m, const struct dataset *d, struct activations *a,
         struct validation *out)
{
    memset(out, 0, sizeof *out);
    if (d->count == 0) {
        out->loss = (double)NAN;
        return;
    }
    for (long i = 0; i < d->count; ++i) {
        normalise_input(m, d->x + i * PR_FEATURE_COUNT, a->x);
        forward(m, a);
        const float *t = d->y + i * PR_OUTPUT_COUNT;
        out->loss += sample_loss(m, a, t, NULL);
        float y[PR_OUTPUT_COUNT];
        for (int j = 0; j < PR_OUTPUT_COUNT; ++j)
            y[j] = a->y[j] * m->out_std[j] + m->out_mean[j];
        const double cm = 100.0 * (double)d->scale[i];
        out->hips_cm += cm * point_error(y + PR_OUT_HIPS, t + PR_OUT_HIPS);
        for (int s = 0; s < 2; ++s) {
            const int leg = PR_OUT_LEG + s * PR_OUT_PER_LEG;
            out->ankle_cm += 0.5 * cm * point_error(y + leg + PR_LEG_ANKLE, t + leg + PR_LEG_ANKLE);
            out->toes_cm += 0.5 * cm * point_error(y + leg + PR_LEG_TOES, t + leg + PR_LEG_TOES);
            out->knee_cm += 0.5 * cm * point_error(y + leg + PR_LEG_KNEE, t + leg + PR_LEG_KNEE);
            out->contact_accuracy +=
                0.5 * ((y[PR_OUT_CONTACT + s] >= 0.5f) == (t[PR_OUT_CONTACT + s] >= 0.5f));
        }
    }
    const double n = (double)d->count;
    out->loss /= n;
    out->hips_cm /= n;
    out->knee_cm /= n;
    out->ankle_cm /= n;
    out->toes_cm /= n;
    out->contact_accuracy /= n;
}

static void report_line(const struct pr_train_options *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
report_line(const struct pr_train_options *o, const char *fmt, ...)
{
    if (!o->progress)
        return;
    char line[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(line, sizeof line, fmt, args);
    va_end(args);
    o->progress(o->progress_user, line);
}

static void
resolve(const struct pr_train_options *in, struct pr_train_options *o)
{
    *o = *in;
    if (!o->holdout || !o->holdout[0])
        o->holdout = PR_DEFAULT_HOLDOUT;
    if (o->seed == 0)
        o->seed = 1;
    if (o->epochs <= 0)
        o->epochs = DEFAULT_EPOCHS;
    if (o->epochs > PR_MAX_EPOCHS)
        o->epochs = PR_MAX_EPOCHS;
    if (o->hidden <= 0)
        o->hidden = DEFAULT_HIDDEN;
    if (!(o->learning_rate > 0.0f))
        o->learning_rate = DEFAULT_LR;
    if (o->weight_decay == 0.0f)
        o->weight_decay = DEFAULT_WEIGHT_DECAY;
    if (o->batch <= 0)
        o->batch = DEFAULT_BATCH;
    if (o->offset_noise_m == 0.0f)
        o->offset_noise_m = DEFAULT_OFFSET_NOISE_M;
    if (o->height_noise == 0.0f)
        o->height_noise = DEFAULT_HEIGHT_NOISE;
}

/* Loads every clip and makes the training and validation samples. */
static enum em_result
make_data(const struct pr_train_options *o, const struct holdout *hold, struct rng *r,
          struct dataset *train, struct dataset *val, struct pr_train_report *rep,
          struct em_error *err)
{
    struct clip_list list;
    enum em_result res = list_clips(o->clip_dir, &list, err);
    if (res != EM_OK)
        return res;
    const int count = o->max_clips > 0 && o->max_clips < list.count ? o->max_clips : list.count;
    for (int i = 0; i < count && res == EM_OK; ++i) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", o->clip_dir, list.names[i]);
        struct clip c;
        res = load_clip(path, o->frame_limit, &c, err);
        if (res != EM_OK)
            break;
        const bool is_val = held_out(hold, clip_subject(list.names[i]));
        const double minutes = c.stream.frame_count / PR_RATE_HZ / 60.0;
        const int plain = o->no_mirror ? 1 : 2;
        const int copies = is_val ? 1 : plain * (1 + (o->tempo_copies > 0 ? o->tempo_copies : 0));
        for (int k = 0; k < copies && res == EM_OK; ++k) {
            struct augment a = {.mirror = k % plain == 1, .height_factor = 1.0f, .tempo = 1.0f};
            if (k >= plain) /* another tempo: 0.8 to 1.25 times as fast, log-uniform */
                a.tempo = expf(TEMPO_LOG_RANGE * (float)(2.0 * rng_uniform(r) - 1.0));
            if (!is_val) {
                const float dev = o->offset_noise_m > 0.0f ? o->offset_noise_m : 0.0f;
                for (int d = 0; d < EM_DEVICE_COUNT; ++d)
                    for (int j = 0; j < 3; ++j)
                        a.device_offset_m[d][j] = dev * rng_normal(r);
                if (o->height_noise > 0.0f)
                    a.height_factor = 1.0f + o->height_noise * rng_normal(r);
            }
            if (add_copy(&c, &a, is_val ? val : train) != EM_OK)
                res = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", path);
        }
        if (is_val) {
            rep->validation_clips++;
            rep->validation_minutes += minutes;
        } else {
            rep->train_clips++;
            rep->train_minutes += minutes;
        }
        report_line(o, "[%d/%d] %s: %d rows, %s", i + 1, count, list.names[i], c.stream.frame_count,
                    is_val ? "validation" : "training");
        clip_fini(&c);
    }
    clip_list_fini(&list);
    if (res == EM_OK && train->count == 0)
        res = em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                      "%s: no training clips left after holding out subjects %s", o->clip_dir,
                      o->holdout);
    rep->train_samples = train->count;
    rep->validation_samples = val->count;
    return res;
}

static double
train_epoch(struct trainer *t, const struct dataset *d, long *order, struct rng *r,
            struct activations *a, float lr, const struct pr_train_options *o)
{
    shuffle(order, d->count, r);
    double loss = 0.0;
    int in_batch = 0;
    for (long k = 0; k < d->count; ++k) {
        const long i = order[k];
        normalise_input(t->m, d->x + i * PR_FEATURE_COUNT, a->x);
        forward(t->m, a);
        loss += sample_loss(t->m, a, d->y + i * PR_OUTPUT_COUNT, a->dy);
        backward(t->m, t, a);
        if (++in_batch == o->batch || k == d->count - 1) {
            adam_step(t, lr, o->weight_decay > 0.0f ? o->weight_decay : 0.0f, in_batch);
            in_batch = 0;
        }
    }
    return loss / (double)d->count;
}

enum em_result
pr_train(const struct pr_train_options *options, struct pr_model *out_model,
         struct pr_train_report *rep, struct em_error *err)
{
    memset(rep, 0, sizeof *rep);
    struct pr_train_options o;
    resolve(options, &o);
    enum em_result res = pr_model_init(out_model, o.hidden, err);
    if (res != EM_OK)
        return res;
    if (!o.clip_dir)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "train: no clip folder given");
    struct holdout hold;
    if ((res = parse_holdout(o.holdout, &hold, err)) != EM_OK)
        return res;
    snprintf(rep->holdout, sizeof rep->holdout, "%s", o.holdout);
    struct rng rng = {o.seed};
    struct dataset train = {0}, val = {0};
    struct trainer t = {.m = out_model};
    struct activations *a = calloc(1, sizeof *a);
    long *order = NULL;
    float *best = NULL;
    res = a ? make_data(&o, &hold, &rng, &train, &val, rep, err)
            : em_fail(err, EM_ERROR_OUT_OF_MEMORY, "train: out of memory");
    if (res != EM_OK)
        goto done;
    struct pr_model *m = out_model;
    column_stats(train.x, train.count, PR_FEATURE_COUNT, m->in_mean, m->in_std);
    column_stats(train.y, train.count, PR_OUTPUT_COUNT, m->out_mean, m->out_std);
    init_weights(m, &rng);
    t.n = pr_model_param_count(m->feature_count, m->hidden_count, m->output_count);
    t.grad = calloc((size_t)t.n, sizeof(float));
    t.adam_m = calloc((size_t)t.n, sizeof(float));
    t.adam_v = calloc((size_t)t.n, sizeof(float));
    order = malloc((size_t)train.count * sizeof *order);
    best = malloc((size_t)t.n * sizeof *best);
    if (!t.grad || !t.adam_m || !t.adam_v || !order || !best) {
        res = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "train: out of memory");
        goto done;
    }
    for (long i = 0; i < train.count; ++i)
        order[i] = i;
    report_line(&o,
                "training on %d clips (%.2f min, %ld samples with mirrored copies), validating "
                "on %d clips of subjects %s (%.2f min); %ld weights",
                rep->train_clips, rep->train_minutes, train.count, rep->validation_clips, o.holdout,
                rep->validation_minutes, t.n - 2L * (PR_FEATURE_COUNT + PR_OUTPUT_COUNT));
    double best_loss = (double)INFINITY;
    for (int e = 0; e < o.epochs; ++e) {
        const int64_t start = u_time_now_ns();
        const double progress = o.epochs > 1 ? (double)e / (o.epochs - 1) : 0.0;
        const float lr =
            o.learning_rate * (float)(0.1 + 0.45 * (1.0 + cos(3.141592653589793 * progress)));
        rep->train_loss[e] = train_epoch(&t, &train, order, &rng, a, lr, &o);
        struct validation v;
        validate(m, &val, a, &v);
        rep->validation_loss[e] = v.loss;
        rep->epochs_run = e + 1;
        const double score = val.count > 0 ? v.loss : rep->train_loss[e];
        if (score < best_loss) {
            best_loss = score;
            rep->best_epoch = e + 1;
            memcpy(best, m->params, (size_t)t.n * sizeof *best);
            rep->validation_hips_cm = v.hips_cm;
            rep->validation_knee_cm = v.knee_cm;
            rep->validation_ankle_cm = v.ankle_cm;
            rep->validation_toes_cm = v.toes_cm;
            rep->validation_contact_accuracy = v.contact_accuracy;
        }
        report_line(&o,
                    "epoch %3d/%d  train %.4f  validation %.4f  (hips %.1f, knees %.1f, ankles "
                    "%.1f, toes %.1f cm; contact %.0f %%)  %.1f s",
                    e + 1, o.epochs, rep->train_loss[e], v.loss, v.hips_cm, v.knee_cm, v.ankle_cm,
                    v.toes_cm, 100.0 * v.contact_accuracy,
                    (double)(u_time_now_ns() - start) * 1e-9);
    }
    memcpy(m->params, best, (size_t)t.n * sizeof *best);
    snprintf(m->holdout, sizeof m->holdout, "%s", strcmp(o.holdout, "none") == 0 ? "" : o.holdout);
    snprintf(m->note, sizeof m->note,
             "embody train: %d clips, %.1f min; holdout %s; seed %llu; %d epochs, best %d",
             rep->train_clips, rep->train_minutes, o.holdout, (unsigned long long)o.seed, o.epochs,
             rep->best_epoch);
done:
    free(a);
    free(order);
    free(best);
    free(t.grad);
    free(t.adam_m);
    free(t.adam_v);
    dataset_fini(&train);
    dataset_fini(&val);
    return res;
}
