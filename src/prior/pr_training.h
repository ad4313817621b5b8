/*
 * Training the body-pose prior (`embody train`, src/prior/pr_train.c) and leave-people-out
 * cross-validation: the program's tools, not the library's public API (include/embody/prior.h
 * has the model and its inference, which the body and embedders use).
 */
#ifndef EMBODY_PR_TRAINING_H
#define EMBODY_PR_TRAINING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "embody/prior.h"
#include "embody/result.h"

/* ---- Training (embody train) ------------------------------------------------------------ */

/* Subjects held out for choosing settings when none are given (mocap-train: 02 walks, runs,
 * jumps, swordplay and washing; 07 walks; 35 walks and a run). */
#define PR_DEFAULT_HOLDOUT "02,07,35"
#define PR_MAX_EPOCHS 1000

enum pr_schedule { PR_SCHEDULE_COSINE = 0, PR_SCHEDULE_ONE_CYCLE = 1 };
/* What training minimises: the mean squared error of the normalised outputs, or each
 * joint's distance from the truth (the rest squared, as before). */
enum pr_loss { PR_LOSS_SQUARED = 0, PR_LOSS_JOINTS = 1 };

typedef void (*pr_progress_fn)(void *user, const char *line);

/* Zero means default for every field. */
struct pr_train_options {
    const char *clip_dir; /* CMU BVH clips named cmu_SUBJECT_TRIAL.bvh (required) */
    const char *holdout;  /* comma-separated subjects (default PR_DEFAULT_HOLDOUT; "none") */
    uint64_t seed;        /* default 1 */
    int epochs;           /* default 15 */
    int hidden;           /* units per hidden layer, default 64 */
    float learning_rate;  /* Adam's, default 1e-3, cosine-decayed to a tenth */
    float weight_decay;   /* decoupled (AdamW), times the learning rate; default 0.1 */
    int batch;            /* default 128 */
    int max_clips;        /* use only the first N clips (name order); 0 = all */
    int frame_limit;      /* rows (60 Hz) per clip; 0 = all */
    bool no_mirror;       /* leave out the left/right mirrored copies */
    int tempo_copies;     /* more copies (each also mirrored) at random tempos 0.8-1.25x */
    float offset_noise_m; /* device offset noise (deviation), default 0.01; < 0 none */
    float height_noise;   /* relative error of the height told, default 0.02; < 0 none */
    /* Each augmented copy's devices turned by a fixed random rotation of this deviation
     * (degrees; how a person holds the controllers and wears the headset); 0 = none. */
    float rotation_noise_deg;
    /* Each augmented copy retargeted to other proportions: legs, torso (hips to head) and
     * arms each times a factor uniform in 1 -+ spread; default 0.06; < 0 none. */
    float proportion_spread;
    /* Keep the model of this epoch (1-based) rather than the best on validation (or,
     * without validation clips, the last): the epoch cross-validation chose; 0 = none. */
    int keep_epoch;
    /* Inverted dropout on both hidden layers while training: the share of units zeroed
     * per sample (0 = none; below 1). */
    float dropout;
    /* The learning rate's course: PR_SCHEDULE_COSINE (per epoch, from the rate down to a
     * tenth; the default) or PR_SCHEDULE_ONE_CYCLE (per step: up from a 25th to the rate
     * over the first 30 % of steps, then down to a 250,000th, both halves cosine; Smith
     * and Topin 2019). */
    int schedule;
    /* PR_LOSS_SQUARED (the default) or PR_LOSS_JOINTS. */
    int loss;
    /* Train on every Nth augmented row only (quick cross-validation; 0 or 1 = all). */
    int row_stride;
    /* More folders of clips after clip_dir (each with its subfolders and MANIFEST.tsv). */
    const char *const *more_clip_dirs;
    int more_clip_dir_count;
    pr_progress_fn progress;
    void *progress_user;
};

struct pr_joint_errors {
    double hips_cm, knee_cm, ankle_cm, toes_cm, contact_accuracy;
};

/* What picks epochs and settings: the pelvis's, a knee's and an ankle's mean errors added
 * (cm), the joints the body takes from the network. */
static inline double
pr_joint_sum_cm(const struct pr_joint_errors *e)
{
    return e->hips_cm + e->knee_cm + e->ankle_cm;
}

struct pr_train_report {
    int train_clips, validation_clips;
    long train_samples, validation_samples;   /* augmented copies included */
    double train_minutes, validation_minutes; /* of motion, before augmentation */
    /* best (1-based): lowest pr_joint_sum_cm on the validation people (the body's joints,
     * not the mixed loss), or the last without validation clips */
    int epochs_run, best_epoch;
    double train_loss[PR_MAX_EPOCHS];         /* mean squared error, normalised outputs */
    double validation_loss[PR_MAX_EPOCHS];
    /* On the validation subjects at the best epoch: mean distance (cm) of the pelvis,
     * knees, ankles and toes, and the share of frames whose contact was right. */
    double validation_hips_cm, validation_knee_cm, validation_ankle_cm, validation_toes_cm;
    double validation_contact_accuracy;
    char holdout[64];
    long glitch_rows; /* rows (60 Hz, each clip as recorded) left out for glitches */
    struct pr_joint_errors validation_by_epoch[PR_MAX_EPOCHS];
};

/* Trains a prior on every clip of the folder: the 3-point stream of each clip
 * (st_mocap_to_stream, as a headset would report it) gives the features, the clip's true
 * joints the targets; clips of the held-out subjects are the validation set. Augmented:
 * each training clip is used as recorded and mirrored left/right, each copy with its own
 * device offsets and height error; headings need no copies (the features turn with the
 * head). Single-threaded and deterministic: the same options give the same bytes. The
 * model returned is the epoch with the lowest validation loss (the last without
 * validation clips). `out_model` is the caller's to pr_model_fini (also on failure). */
enum em_result pr_train(const struct pr_train_options *options, struct pr_model *out_model,
                        struct pr_train_report *out_report, struct em_error *err);

/* ---- Leave-people-out cross-validation ---- */

#define PR_MAX_FOLDS 12
#define PR_MAX_SUBJECTS 64
#define PR_MAX_HOLDOUT_SUBJECTS 16
/* A person: "LAB:ID", the lab the prefix of the clip's file name ("cmu_05_01.bvh" ->
 * cmu, "hdm05_bd_squat_001.bvh" -> hdm05), the ID the manifest's subject (a number, two
 * digits at least: "cmu:05") or actor ("hdm05:bd"). */
#define PR_PERSON_MAX 24
#define PR_MAX_CATEGORIES 32
#define PR_CATEGORY_MAX 24
/* Training leaves out rows that see a head, hand or foot faster than this (m/s): no
 * person moves so; marker swaps in the capture do. */
#define PR_GLITCH_SPEED_M_S 12.0


struct pr_fold_report {
    int subject_count; /* people left out of this fold's training ("cmu:05") */
    char subject[PR_MAX_HOLDOUT_SUBJECTS][PR_PERSON_MAX];
    int trained_subject_count; /* the people of its training rows */
    char trained_subject[PR_MAX_SUBJECTS][PR_PERSON_MAX];
    int clips, best_epoch;
    double minutes;
    struct pr_joint_errors unseen; /* on its left-out people (clips as recorded) */
    struct pr_joint_errors seen;   /* on the people it trained on (as recorded) */
};

struct pr_category_score {
    char name[PR_CATEGORY_MAX]; /* MANIFEST.tsv's category; "?" without one */
    int clips;
    long rows;
    double minutes, hips_cm, knee_cm, ankle_cm, toes_cm; /* people left out */
};

struct pr_cv_report {
    int fold_count;
    struct pr_fold_report fold[PR_MAX_FOLDS];
    struct pr_joint_errors unseen, seen; /* means over folds */
    int epochs;
    double validation_loss[PR_MAX_EPOCHS]; /* by epoch, mean over folds */
    struct pr_joint_errors unseen_by_epoch[PR_MAX_EPOCHS]; /* people left out, mean over folds */
    int best_epoch; /* lowest pr_joint_sum_cm of unseen_by_epoch: the epochs to train for */
    struct pr_joint_errors unseen_at_best; /* people left out, every fold at best_epoch */
    int category_count;
    struct pr_category_score category[PR_MAX_CATEGORIES];
};

/* k-fold cross-validation by person: each lab's people are dealt into `folds` folds of
 * about equal minutes of that lab (so each lab's people are spread over the folds); for
 * each fold a model is trained (the options of pr_train, its holdout ignored) on every
 * other person and scored on the fold's own clips as recorded, and on the trained
 * people's. No person is on both sides of a fold. */
enum em_result pr_cross_validate(const struct pr_train_options *options, int folds,
                                 struct pr_cv_report *out_report, struct em_error *err);

/* ---- People (src/prior/pr_person.c) ---- */

/* The person of a clip file named "LAB_ID_..." ("cmu_05_01.bvh" -> "cmu:05", subfolders
 * ignored), or "" when the name has no lab and id. A numeric ID is written with two
 * digits at least. */
void pr_person_of_file(const char *file, char *out, size_t size);
/* "LAB:ID" from a lab and an ID as a manifest gives it (a number: two digits at least);
 * false when the ID is empty or not letters, digits, '-' or '.'. */
bool pr_person_make(const char *lab, const char *id, char *out, size_t size);
/* One person as the command line names it ("cmu:05", "hdm05:bd", or without the lab,
 * "5", "05", "bd") in the form pr_person_matches takes: the ID canonical, the lab kept if
 * given. False when it is not such a name. */
bool pr_person_token(const char *text, size_t len, char *out, size_t size);
/* True when `person` ("LAB:ID") is the one `token` (pr_person_token's) names: the same
 * lab and ID, or, for a token without a lab, the same ID. */
bool pr_person_matches(const char *person, const char *token);
/* "cmu:05" -> "05" for CMU's people (their old names on the command line and in model
 * files), else the person as is. */
const char *pr_person_short(const char *person);

#endif
