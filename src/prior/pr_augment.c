/*
 * The trainer's copies of a clip: as recorded (validation), mirrored left/right, on their
 * own proportions, tempo and device offsets and turns, with an error in the height the
 * player told; each copy's rows go through the same history and features as the body uses
 * at run time.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embody/m_math.h"
#include "pr_learning.h"

/* Tempo copies play between 1/1.25 and 1.25 times as fast: ln 1.25. */
#define TEMPO_LOG_RANGE 0.22314355f

/* ---- Mirroring ---- */

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
        mirror_vec(t->upper_arm_m[s]);
        mirror_vec(t->lower_arm_m[s]);
    }
    mirror_vec(t->neck_m);
    mirror_vec(t->back_m[0]);
    mirror_vec(t->back_m[1]);
    swap3(t->ankle_m[0], t->ankle_m[1]);
    swap3(t->toes_m[0], t->toes_m[1]);
    swap3(t->knee_m[0], t->knee_m[1]);
    swap3(t->upper_arm_m[0], t->upper_arm_m[1]);
    swap3(t->lower_arm_m[0], t->lower_arm_m[1]);
    const bool c = t->contact[0];
    t->contact[0] = t->contact[1];
    t->contact[1] = c;
}

struct augment {
    bool mirror;
    float device_offset_m[EM_DEVICE_COUNT][3]; /* in each device's own frame */
    float device_turn[EM_DEVICE_COUNT][4];     /* each device's orientation times this */
    float height_factor;
    float tempo; /* played this many times as fast (1 = as recorded) */
};

/* A small rotation: about a random axis (normal components), by a normal angle of
 * deviation `deg`. */
static void
random_turn(struct rng *r, float deg, float *out)
{
    float axis[3] = {rng_normal(r), rng_normal(r), rng_normal(r)};
    const float n = sqrtf(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    const float half = 0.5f * deg * 0.017453292f * rng_normal(r);
    for (int k = 0; k < 3; ++k)
        out[k] = n > 1e-6f ? axis[k] / n * sinf(half) : 0.0f;
    out[3] = cosf(half);
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
        lerp3(ta->upper_arm_m[s], tb->upper_arm_m[s], w, t->upper_arm_m[s]);
        lerp3(ta->lower_arm_m[s], tb->lower_arm_m[s], w, t->lower_arm_m[s]);
    }
    lerp3(ta->neck_m, tb->neck_m, w, t->neck_m);
    for (int k = 0; k < 2; ++k)
        lerp3(ta->back_m[k], tb->back_m[k], w, t->back_m[k]);
}

/* Room for `more` rows (doubling); false when memory ran out. */
bool
pr_dataset_reserve(struct dataset *d, long more)
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
    int *c = realloc(d->clip, (size_t)cap * sizeof *c);
    if (c)
        d->clip = c;
    bool *pl = realloc(d->plain, (size_t)cap * sizeof *pl);
    if (pl)
        d->plain = pl;
    if (!x || !y || !s || !c || !pl)
        return false;
    d->capacity = cap;
    return true;
}

/* Samples of one copy of a clip, appended to `d` (rows that `skip` marks left out:
 * their history still goes in, as it would at run time). */
static enum em_result
add_copy(const struct clip *c, const struct augment *a, const bool *skip, int clip_index,
         bool plain, struct dataset *d)
{
    const int n = (int)floor((double)(c->stream.frame_count - 1) / (double)a->tempo) + 1;
    if (!pr_dataset_reserve(d, n))
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
            pr_rotate(f.device[dev].pose.orientation, a->device_offset_m[dev], off);
            for (int k = 0; k < 3; ++k)
                f.device[dev].pose.position_m[k] += off[k];
            if (a->device_turn[dev][3] != 0.0f) /* how this person holds or wears it */
                m_quat_mul(f.device[dev].pose.orientation, a->device_turn[dev],
                           f.device[dev].pose.orientation);
        }
        if (a->mirror)
            mirror_frame(&f, &t);
        f.time_s = row / PR_RATE_HZ; /* the prior samples at 60 Hz ticks */
        pr_history_push(h, &f);
        const double x = row * (double)a->tempo;
        const int below = (int)floor(x), above = (int)ceil(x);
        if (skip[below < c->stream.frame_count ? below : c->stream.frame_count - 1] ||
            skip[above < c->stream.frame_count ? above : c->stream.frame_count - 1])
            continue;
        const long i = d->count++;
        d->clip[i] = clip_index;
        d->plain[i] = plain;
        float yaw;
        pr_features(h, told_height, 0.0f, d->x + i * PR_FEATURE_COUNT, &yaw);
        const float *head = h->sample[h->newest].head_position_m;
        pr_encode_targets(&t, head, yaw, told_height, 0.0f, d->y + i * PR_OUTPUT_COUNT);
        d->scale[i] = told_height / PR_REFERENCE_HEIGHT_M;
    }
    free(h);
    return EM_OK;
}

/* A copy's proportions: each factor uniform within 1 -+ spread. */
static struct proportions
random_proportions(struct rng *r, float spread)
{
    struct proportions p;
    p.legs = 1.0f + spread * (float)(2.0 * rng_uniform(r) - 1.0);
    p.torso = 1.0f + spread * (float)(2.0 * rng_uniform(r) - 1.0);
    p.arms = 1.0f + spread * (float)(2.0 * rng_uniform(r) - 1.0);
    return p;
}

/* All rows of one clip: the copy as recorded (for validation) and the augmented copies
 * (for training), glitch rows left out of both. */
enum em_result
pr_add_clip(const struct pr_train_options *o, const struct clip_entry *e, int index, struct rng *r,
            struct dataset *d, double *out_minutes, long *out_skipped, struct em_error *err)
{
    struct st_bvh bvh;
    enum em_result res = st_bvh_load(e->path, &bvh, err);
    if (res != EM_OK)
        return res;
    const double unit = st_bvh_guess_unit_scale(&bvh);
    struct st_mocap_rig rig;
    struct clip plain = {0};
    bool *skip = NULL;
    res = st_mocap_rig_init(&bvh, e->path, &rig, err);
    if (res == EM_OK)
        res = pr_make_clip(&bvh, &rig, unit, NULL, e->path, o->frame_limit, &plain, err);
    if (res != EM_OK)
        goto done;
    const int rows = plain.stream.frame_count;
    skip = malloc((size_t)rows * sizeof *skip);
    if (!skip) {
        res = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", e->path);
        goto done;
    }
    *out_skipped = pr_mark_glitches(&bvh, &rig, unit, rows, skip);
    *out_minutes = rows / PR_RATE_HZ / 60.0;
    const struct augment as_recorded = {.height_factor = 1.0f, .tempo = 1.0f};
    if (add_copy(&plain, &as_recorded, skip, index, true, d) != EM_OK) {
        res = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", e->path);
        goto done;
    }
    const int mirrors = o->no_mirror ? 1 : 2;
    const int copies = mirrors * (1 + (o->tempo_copies > 0 ? o->tempo_copies : 0));
    for (int k = 0; k < copies && res == EM_OK; ++k) {
        struct augment a = {.mirror = k % mirrors == 1, .height_factor = 1.0f, .tempo = 1.0f};
        if (k >= mirrors) /* another tempo: 0.8 to 1.25 times as fast, log-uniform */
            a.tempo = expf(TEMPO_LOG_RANGE * (float)(2.0 * rng_uniform(r) - 1.0));
        const float dev = o->offset_noise_m > 0.0f ? o->offset_noise_m : 0.0f;
        for (int dv = 0; dv < EM_DEVICE_COUNT; ++dv)
            for (int j = 0; j < 3; ++j)
                a.device_offset_m[dv][j] = dev * rng_normal(r);
        if (o->height_noise > 0.0f)
            a.height_factor = 1.0f + o->height_noise * rng_normal(r);
        if (o->rotation_noise_deg > 0.0f)
            for (int dv = 0; dv < EM_DEVICE_COUNT; ++dv)
                random_turn(r, o->rotation_noise_deg, a.device_turn[dv]);
        struct clip copy;
        const struct clip *use = &plain;
        if (o->proportion_spread > 0.0f) {
            const struct proportions p = random_proportions(r, o->proportion_spread);
            res = pr_make_clip(&bvh, &rig, unit, &p, e->path, o->frame_limit, &copy, err);
            if (res != EM_OK)
                break;
            use = &copy;
        }
        if (add_copy(use, &a, skip, index, false, d) != EM_OK)
            res = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", e->path);
        if (use == &copy)
            pr_clip_fini(&copy);
    }
done:
    free(skip);
    pr_clip_fini(&plain);
    st_bvh_fini(&bvh);
    return res;
}
