/*
 * The trainer's pieces that more than one of its files use (`embody train`,
 * include/embody/prior.h): the generator, the data set, clips and their truth, the corpus
 * and its splits, the network's training state. Internal to src/prior; the pieces that
 * inference shares with training are in pr_internal.h.
 *
 * The trainer's files, in the order the data flows:
 *   pr_options.c  the options with their defaults resolved, the progress lines
 *   pr_corpus.c   clip folders and manifests, the corpus of rows, held-out people, splits
 *   pr_truth.c    one clip's stream and its true joints (CMU's places on any rig), glitches
 *   pr_augment.c  the copies of a clip: mirrored, retargeted, devices offset and turned
 *   pr_net.c      the network's training: losses, minibatch layers, Adam, one epoch, scores
 *   pr_train.c    the model's start (normalisation, weights), one split, pr_train
 *   pr_folds.c    leave-people-out cross-validation (pr_cross_validate)
 * All are built with the same flags (src/prior/CMakeLists.txt), so the inline functions
 * below compile alike in each.
 */
#ifndef EMBODY_PR_LEARNING_H
#define EMBODY_PR_LEARNING_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "embody/prior.h"
#include "embody/stream.h"
#include "prior/pr_training.h"

/* ---- Random numbers (SplitMix64; Box-Muller for normals) ---- */

struct rng {
    uint64_t state;
};

static inline uint64_t
rng_next(struct rng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline double
rng_uniform(struct rng *r) /* in (0, 1) */
{
    return ((double)(rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static inline float
rng_normal(struct rng *r)
{
    const double u = rng_uniform(r), v = rng_uniform(r);
    return (float)(sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v));
}

/* Linear blend of two points: a + w (b - a). */
static inline void
lerp3(const float *a, const float *b, float w, float *out)
{
    for (int k = 0; k < 3; ++k)
        out[k] = a[k] + w * (b[k] - a[k]);
}

/* v turned by the unit quaternion q (x, y, z, w), into `out`: pr_features.c's quat_rotate,
 * written again on purpose (pr_truth.c). The trainer's files are built with
 * -fassociative-math (src/prior/CMakeLists.txt), which would regroup this copy's sums with
 * its caller's; one copy shared with pr_features.c (inline or not) changed the trained
 * model's bytes (tried), and so did this one inlined at its callers (tried). */
void pr_rotate(const float *q, const float *v, float *out);

/* ---- The data set: features and targets, one row per sample (pr_corpus.c) ---- */

struct dataset {
    long count, capacity;
    float *x;     /* [count][PR_FEATURE_COUNT] */
    float *y;     /* [count][PR_OUTPUT_COUNT] */
    float *scale; /* metres per unit of the outputs' lengths */
    int *clip;    /* the clip each row came from (index into the clip list) */
    bool *plain;  /* the row is of the copy as recorded (validation), not an augmented one */
};

/* Room for `more` rows; false when out of memory. */
bool pr_dataset_reserve(struct dataset *d, long more);

/* ---- Clips and the corpus (pr_corpus.c) ---- */

/* One clip file: where it is, whose motion it is and what kind (MANIFEST.tsv). */
struct clip_entry {
    char *path, *name;          /* name: relative to its folder ("acrnn/cmu_60_01.bvh") */
    char person[PR_PERSON_MAX]; /* "cmu:05", "hdm05:bd" (pr_person.c); "": unknown */
    char category[PR_CATEGORY_MAX];
};

struct clip_list {
    int count, capacity;
    struct clip_entry *e;
};

/* The people left out of training (--holdout): each as pr_person_token gives it. */
struct holdout {
    int count;
    char person[PR_MAX_HOLDOUT_SUBJECTS][PR_PERSON_MAX];
};

/* Parses "02,07", "05,hdm05:bd" (or "none") into `out`; an error names what was
 * expected. */
enum em_result pr_parse_holdout(const char *text, struct holdout *out, struct em_error *err);

/* The whole corpus: every clip's plain and augmented rows, and what each clip is. */
struct corpus {
    struct clip_list list;
    struct dataset data;
    double *minutes; /* [clip] */
    long glitch_rows;
};

/* Lists every clip of the options' folders and adds each one's rows (pr_add_clip),
 * reporting a line per clip. `out` is freed on failure. */
enum em_result pr_load_corpus(const struct pr_train_options *o, struct rng *r, struct corpus *out,
                              struct em_error *err);
void pr_corpus_fini(struct corpus *c);

/* The rows of a split: augmented rows of training clips, plain rows of validation
 * clips, and plain rows of training clips (the figure on trained people). */
struct split {
    long *train, *val, *seen;
    long train_count, val_count, seen_count;
};

/* The rows of the corpus for a holdout (every `row_stride`-th augmented row), and the
 * split's clip and minute counts into `rep`. Fails when a person named without the lab
 * ("05") is a person of more than one lab of the corpus. */
enum em_result pr_make_split(const struct corpus *c, const struct holdout *hold, int row_stride,
                             struct split *out, struct pr_train_report *rep, struct em_error *err);
void pr_split_fini(struct split *s);

/* ---- One clip's truth (pr_truth.c) ---- */

/* One clip in memory: its stream and the true joints at its rows. */
struct clip {
    struct st_stream stream;
    struct pr_truth *truth; /* [row] */
    float height_m;
};

/* Body proportions of an augmented copy: each a factor on the bones' lengths. */
struct proportions {
    float legs, torso, arms;
};

/* One copy of a clip: its stream, truth and height, on its own proportions (`prop` NULL:
 * as recorded), at most `frame_limit` rows (0: all). */
enum em_result pr_make_clip(const struct st_bvh *recorded, const struct st_mocap_rig *rig,
                            double unit, const struct proportions *prop, const char *path,
                            int frame_limit, struct clip *out, struct em_error *err);
void pr_clip_fini(struct clip *c);

/* Flags in `out_skip` (a flag per 60 Hz row) the rows that see a capture glitch; returns
 * how many. */
long pr_mark_glitches(const struct st_bvh *bvh, const struct st_mocap_rig *rig, double unit,
                      int rows, bool *out_skip);

/* ---- Augmentation (pr_augment.c) ---- */

/* All rows of one clip, appended to `d`: the copy as recorded (for validation) and the
 * augmented copies (for training), glitch rows left out of both. */
enum em_result pr_add_clip(const struct pr_train_options *o, const struct clip_entry *e, int index,
                           struct rng *r, struct dataset *d, double *out_minutes, long *out_skipped,
                           struct em_error *err);

/* ---- The network's training (pr_net.c) ---- */

struct trainer {
    struct pr_model *m;
    long n;      /* parameters */
    float *grad; /* same layout as m->params */
    float *adam_m, *adam_v;
    long step;
};

/* One sample's input, activations and gradients. */
struct activations {
    float x[PR_FEATURE_COUNT], a1[PR_MAX_HIDDEN], h1[PR_MAX_HIDDEN], a2[PR_MAX_HIDDEN],
        h2[PR_MAX_HIDDEN], y[PR_OUTPUT_COUNT];
    float dy[PR_OUTPUT_COUNT], dh[PR_MAX_HIDDEN], da[PR_MAX_HIDDEN];
    /* Dropout: each hidden unit's factor this sample (0, or 1 / (1 - rate)); 1 without. */
    float keep1[PR_MAX_HIDDEN], keep2[PR_MAX_HIDDEN];
};

/* A minibatch's inputs, activations and their gradients, a row per sample. */
struct batch {
    int capacity;
    float *x, *a1, *h1, *a2, *h2, *y, *dy, *dh, *da, *keep1, *keep2, *wt;
};

bool pr_batch_init(struct batch *b, int capacity, int hidden);
void pr_batch_fini(struct batch *b);

/* The validation figures of some rows (per row until pr_validation_divide). */
struct validation {
    double loss, hips_cm, knee_cm, ankle_cm, toes_cm, contact_accuracy;
    double torso_cm; /* neck and shoulders */
    double back_cm;  /* spine and chest */
    double elbows_cm;
};

void pr_keep_all(struct activations *a);
/* One epoch over `count` rows of `d` in a shuffled `order`; returns the mean loss. */
double pr_train_epoch(struct trainer *t, const struct dataset *d, long *order, long count,
                      struct rng *r, struct batch *b, struct activations *a, int epoch,
                      const struct pr_train_options *o);
void pr_score_row(const struct pr_model *m, const struct dataset *d, long i, struct activations *a,
                  struct validation *v);
void pr_validation_divide(struct validation *v, double n);
void pr_validate(const struct pr_model *m, const struct dataset *d, const long *rows, long count,
                 struct activations *a, struct validation *out);

/* ---- Training (pr_train.c) ---- */

/* The options with every zero replaced by its default. */
void pr_resolve_options(const struct pr_train_options *in, struct pr_train_options *o);
/* A line of progress to the options' callback (none without one). */
void pr_report_line(const struct pr_train_options *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Trains one model on a split's training rows, keeping the epoch best on its validation
 * rows (the last, without them). */
enum em_result pr_train_split(const struct pr_train_options *o, const struct corpus *c,
                              struct split *sp, struct pr_model *m, struct pr_train_report *rep,
                              struct em_error *err);

#endif
