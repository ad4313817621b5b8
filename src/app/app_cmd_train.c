/*
 * embody train (app_commands.h): learns the body-pose prior from a folder of CMU clips
 * (pr_train, include/embody/prior.h) and writes the model file, with progress on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app_args.h"
#include "app/app_commands.h"
#include "embody/prior.h"
#include "eval/eval.h"
#include "prior/pr_training.h"
#include "util/u_time.h"

#define HELP_HINT "embody train --help"

enum {
    OPT_OUTPUT = 1,
    OPT_SEED,
    OPT_EPOCHS,
    OPT_HOLDOUT,
    OPT_HIDDEN,
    OPT_LR,
    OPT_DECAY,
    OPT_BATCH,
    OPT_MAX_CLIPS,
    OPT_FRAMES,
    OPT_NO_MIRROR,
    OPT_TEMPO,
    OPT_QUIET,
    OPT_CROSS_VALIDATE,
    OPT_PROPORTIONS,
    OPT_KEEP_EPOCH,
    OPT_ROTATION_NOISE,
    OPT_DROPOUT,
    OPT_SCHEDULE,
    OPT_LOSS,
    OPT_ROW_STRIDE,
    OPT_FOLDS,
    OPT_HELP
};
#define MAX_MORE_DIRS 7

static const struct app_arg_spec k_specs[] = {
    {OPT_OUTPUT, "output", 'o', APP_ARG_VALUE},    {OPT_SEED, "seed", 0, APP_ARG_VALUE},
    {OPT_EPOCHS, "epochs", 0, APP_ARG_VALUE},      {OPT_HOLDOUT, "holdout", 0, APP_ARG_VALUE},
    {OPT_HIDDEN, "hidden", 0, APP_ARG_VALUE},      {OPT_LR, "learning-rate", 0, APP_ARG_VALUE},
    {OPT_BATCH, "batch", 0, APP_ARG_VALUE},        {OPT_MAX_CLIPS, "clips", 0, APP_ARG_VALUE},
    {OPT_FRAMES, "frames", 0, APP_ARG_VALUE},      {OPT_NO_MIRROR, "no-mirror", 0, APP_ARG_FLAG},
    {OPT_QUIET, "quiet", 'q', APP_ARG_FLAG},       {OPT_HELP, "help", 'h', APP_ARG_FLAG},
    {OPT_DECAY, "weight-decay", 0, APP_ARG_VALUE}, {OPT_TEMPO, "tempo-copies", 0, APP_ARG_VALUE},
    {OPT_CROSS_VALIDATE, "cross-validate", 0, APP_ARG_VALUE},
    {OPT_PROPORTIONS, "proportions", 0, APP_ARG_VALUE},
    {OPT_KEEP_EPOCH, "keep-epoch", 0, APP_ARG_VALUE},
    {OPT_ROTATION_NOISE, "rotation-noise", 0, APP_ARG_VALUE},
    {OPT_DROPOUT, "dropout", 0, APP_ARG_VALUE},
    {OPT_SCHEDULE, "schedule", 0, APP_ARG_VALUE},
    {OPT_LOSS, "loss", 0, APP_ARG_VALUE},
    {OPT_ROW_STRIDE, "row-stride", 0, APP_ARG_VALUE},
    {OPT_FOLDS, "folds", 0, APP_ARG_VALUE},
};
#define SPEC_COUNT ((int)(sizeof k_specs / sizeof k_specs[0]))

static void
print_help(void)
{
    fputs("usage: embody train CLIP_DIR [CLIP_DIR...] -o MODEL [options]\n"
          "       embody train CLIP_DIR [CLIP_DIR...] --cross-validate K [options]\n"
          "       embody train CLIP_DIR [CLIP_DIR...] --folds LIST/LIST... [options]\n"
          "\n"
          "Learns the body-pose prior (pelvis, knees, feet and foot contact from the last\n"
          "0.73 s of headset and controller motion) from BVH clips named\n"
          "LAB_PERSON_....bvh (cmu_05_01.bvh, hdm05_bd_squat_001.bvh), such as\n"
          "../shared/mocap-train, ../shared/mocap-train-extra and\n"
          "../shared/mocap-train-hdm05 (subfolders too; a MANIFEST.tsv with columns file,\n"
          "subject (a number) or actor (a name), and category gives people and\n"
          "categories; a person is LAB:PERSON, cmu:05 or hdm05:bd). Skeletons: CMU, Daz-friendly,\n"
          "3ds Max, CC3/iClone, Mixamo names; units and T-pose or not are recognised. The\n"
          "features come from the 3-point stream each clip makes (as `embody mocap2stream`),\n"
          "the targets from its true joints; rows around a head, hand or foot faster than\n"
          "12 m/s (capture glitches) are left out. Never train on the evaluation clips\n"
          "(../shared/mocap).\n"
          "\n"
          "  -o, --output MODEL     the model file to write (required unless cross-validating)\n"
          "  --cross-validate K     leave people out: deal each lab's people into K folds,\n"
          "                         train on all but one fold each time and print the\n"
          "                         errors on the fold's people, per fold and per category\n"
          "                         (no model written)\n"
          "  --folds LIST/LIST...   a model per fold, each LIST (as --holdout) left out, run\n"
          "                         through the body (known body, height only) on the\n"
          "                         clips of its people in each folder: a table of MPJPE,\n"
          "                         hips and lower body per fold and folder, and the means\n"
          "                         (\"05,127,bd/14,49,bk\"); with -o MODEL, fold N's\n"
          "                         model is written to MODEL.N.bin\n"
          "  --rotation-noise DEG   turn each augmented copy's headset and controllers by a\n"
          "                         fixed random rotation of DEG deviation (default 0)\n"
          "  --keep-epoch N         keep the model of epoch N (the one cross-validation\n"
          "                         chose) rather than the best on --holdout or the last\n"
          "  --proportions X        retarget each augmented copy to legs, torso and arms\n"
          "                         each 1 -+ X times as long (default 0.06; 0 for none)\n"
          "  --holdout LIST         people kept out for validation (default " PR_DEFAULT_HOLDOUT
          ";\n"
          "                         none for none): CMU subject numbers, HDM05 actors (bd)\n"
          "                         or LAB:PERSON (cmu:05,hdm05:bd); the epoch whose pelvis\n"
          "                         + knees + ankles error on them is lowest is kept\n"
          "  --dropout P            drop this share of hidden units per training sample\n"
          "                         (default 0)\n"
          "  --schedule NAME        the learning rate's course: cosine (per epoch down to\n"
          "                         a tenth; default) or one-cycle (per step: up from a\n"
          "                         25th over 30 % of the steps, then down)\n"
          "  --loss NAME            what training minimises: squared (each normalised\n"
          "                         output's squared error; default) or joints (each\n"
          "                         joint's distance from the truth, as MPJPE)\n"
          "  --row-stride N         train on every Nth augmented row only (quick runs)\n"
          "  --seed N               random seed (default 1): the same seed, the same model\n"
          "  --epochs N             passes over the data (default 15)\n"
          "  --hidden N             units per hidden layer (default 64)\n"
          "  --learning-rate X      Adam's step (default 0.001)\n"
          "  --weight-decay X       decoupled weight decay per step, times the learning\n"
          "                         rate (default 0.1; 0 for none)\n"
          "  --batch N              samples per step (default 128)\n"
          "  --clips N              only the first N clips (name order), for quick runs\n"
          "  --frames N             only the first N rows (60 Hz) of each clip\n"
          "  --no-mirror            no left/right mirrored copies\n"
          "  --tempo-copies N       N more copies of each clip (and its mirror image), each\n"
          "                         played at a random tempo from 0.8 to 1.25 times\n"
          "  -q, --quiet            no progress\n"
          "  -h, --help             this help\n",
          stdout);
}

struct train_args {
    struct pr_train_options o;
    const char *more_dirs[MAX_MORE_DIRS];
    const char *output;
    const char *folds;
    int cross_validate;
    bool quiet, help;
};

static enum em_result
count_value(const char *name, const char *value, long lo, long hi, const char *what, int *out,
            struct em_error *err)
{
    long v = 0;
    const enum em_result r = app_parse_count(name, value, lo, hi, what, &v, err);
    if (r == EM_OK)
        *out = (int)v;
    return r;
}

/* An option that names one of two choices: `first` sets *out to 0, `second` to 1 (the
 * enums' values, checked here). */
_Static_assert(PR_SCHEDULE_COSINE == 0 && PR_SCHEDULE_ONE_CYCLE == 1 && PR_LOSS_SQUARED == 0 &&
                   PR_LOSS_JOINTS == 1,
               "choice_value's options map their choices to 0 and 1");
static enum em_result
choice_value(const char *name, const char *value, const char *first, const char *second,
             int *out, struct em_error *err)
{
    if (strcmp(value, first) == 0 || strcmp(value, second) == 0) {
        *out = strcmp(value, second) == 0;
        return EM_OK;
    }
    return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: \"%s\"; expected %s or %s (see %s)",
                   name, value, first, second, HELP_HINT);
}

static enum em_result
apply(void *context, int id, const char *name, const char *value, struct em_error *err)
{
    struct train_args *a = context;
    double x = 0.0;
    long n = 0;
    enum em_result r = EM_OK;
    switch (id) {
    case 0:
        if (!a->o.clip_dir) {
            a->o.clip_dir = value;
            return EM_OK;
        }
        if (a->o.more_clip_dir_count == MAX_MORE_DIRS)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "at most %d clip folders (\"%s\" is one more; see %s)",
                           MAX_MORE_DIRS + 1, value, HELP_HINT);
        a->more_dirs[a->o.more_clip_dir_count++] = value;
        a->o.more_clip_dirs = a->more_dirs;
        return EM_OK;
    case OPT_CROSS_VALIDATE:
        return count_value(name, value, 2, PR_MAX_FOLDS, "folds", &a->cross_validate, err);
    case OPT_ROTATION_NOISE:
        r = app_parse_number(name, value, 0.0, 45.0, "degrees", &x, err);
        a->o.rotation_noise_deg = (float)x;
        return r;
    case OPT_KEEP_EPOCH:
        return count_value(name, value, 1, PR_MAX_EPOCHS, "an epoch", &a->o.keep_epoch, err);
    case OPT_PROPORTIONS:
        r = app_parse_number(name, value, 0.0, 0.3, "a spread", &x, err);
        a->o.proportion_spread = x > 0.0 ? (float)x : -1.0f;
        return r;
    case OPT_DROPOUT:
        r = app_parse_number(name, value, 0.0, 0.9, "a share", &x, err);
        a->o.dropout = (float)x;
        return r;
    case OPT_SCHEDULE: /* PR_SCHEDULE_COSINE 0, PR_SCHEDULE_ONE_CYCLE 1 */
        return choice_value(name, value, "cosine", "one-cycle", &a->o.schedule, err);
    case OPT_LOSS: /* PR_LOSS_SQUARED 0, PR_LOSS_JOINTS 1 */
        return choice_value(name, value, "squared", "joints", &a->o.loss, err);
    case OPT_ROW_STRIDE:
        return count_value(name, value, 1, 1000, "a stride", &a->o.row_stride, err);
    case OPT_OUTPUT: a->output = value; return EM_OK;
    case OPT_FOLDS: a->folds = value; return EM_OK;
    case OPT_SEED:
        r = app_parse_count(name, value, 1, 2147483647L, "a seed", &n, err);
        a->o.seed = (uint64_t)n;
        return r;
    case OPT_EPOCHS: return count_value(name, value, 1, PR_MAX_EPOCHS, "epochs", &a->o.epochs, err);
    case OPT_HOLDOUT: a->o.holdout = value; return EM_OK;
    case OPT_HIDDEN: return count_value(name, value, 4, PR_MAX_HIDDEN, "units", &a->o.hidden, err);
    case OPT_LR:
        r = app_parse_number(name, value, 1e-6, 1.0, "a learning rate", &x, err);
        a->o.learning_rate = (float)x;
        return r;
    case OPT_DECAY:
        r = app_parse_number(name, value, 0.0, 10.0, "a weight decay", &x, err);
        a->o.weight_decay = x > 0.0 ? (float)x : -1.0f;
        return r;
    case OPT_BATCH: return count_value(name, value, 1, 65536, "samples", &a->o.batch, err);
    case OPT_MAX_CLIPS: return count_value(name, value, 1, 100000, "clips", &a->o.max_clips, err);
    case OPT_FRAMES: return count_value(name, value, 4, 100000000L, "rows", &a->o.frame_limit, err);
    case OPT_NO_MIRROR: a->o.no_mirror = true; return EM_OK;
    case OPT_TEMPO: return count_value(name, value, 0, 8, "copies", &a->o.tempo_copies, err);
    case OPT_QUIET: a->quiet = true; return EM_OK;
    default: a->help = true; return EM_OK;
    }
}

static void
print_line(void *user, const char *line)
{
    (void)user;
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

static void
print_errors_row(const char *label, const struct pr_joint_errors *e)
{
    printf("| %-22s | %5.2f | %5.2f | %6.2f | %5.2f | %5.1f %% |\n", label, e->hips_cm, e->knee_cm,
           e->ankle_cm, e->toes_cm, 100.0 * e->contact_accuracy);
}

/* The cross-validation's tables on standard output: per fold, the means, per category. */
static int
cross_validate(struct train_args *a)
{
    struct pr_cv_report *rep = calloc(1, sizeof *rep);
    struct em_error err = {{0}};
    if (!rep) {
        fprintf(stderr, "embody train: error: out of memory\n");
        return APP_EXIT_FAILURE;
    }
    const int64_t start = u_time_now_ns();
    const enum em_result r = pr_cross_validate(&a->o, a->cross_validate, rep, &err);
    if (r != EM_OK) {
        fprintf(stderr, "embody train: error: %s\n", err.message);
        free(rep);
        return r == EM_ERROR_INVALID_ARGUMENT || r == EM_ERROR_PARSE ? APP_EXIT_USAGE
                                                                     : APP_EXIT_FAILURE;
    }
    printf("Leave-people-out cross-validation, %d folds (prior's own joints, cm; people left "
           "out unless marked)\n\n",
           rep->fold_count);
    printf("| fold: subjects left out | clips | min   | best epoch | hips  | knees | ankles | "
           "toes  | contact | trained people: ankles |\n");
    printf("|-------------------------|-------|-------|------------|-------|-------|--------|"
           "-------|---------|------------------------|\n");
    for (int f = 0; f < rep->fold_count; ++f) {
        const struct pr_fold_report *fr = &rep->fold[f];
        char subjects[96] = "";
        for (int i = 0; i < fr->subject_count; ++i) {
            const size_t used = strlen(subjects);
            snprintf(subjects + used, sizeof subjects - used, "%s%s", i ? "," : "",
                     pr_person_short(fr->subject[i]));
        }
        printf("| %d: %-20s | %5d | %5.2f | %10d | %5.2f | %5.2f | %6.2f | %5.2f | %5.1f %%  | "
               "%22.2f |\n",
               f + 1, subjects, fr->clips, fr->minutes, fr->best_epoch, fr->unseen.hips_cm,
               fr->unseen.knee_cm, fr->unseen.ankle_cm, fr->unseen.toes_cm,
               100.0 * fr->unseen.contact_accuracy, fr->seen.ankle_cm);
    }
    printf("\n(rows 1-2: each fold at its own best epoch; row 3: every fold at the epoch whose "
           "mean pelvis + knees + ankles error of the people left out is lowest, the epochs to "
           "train the model for)\n");
    printf("\n| mean over folds        | hips  | knees | ankles | toes  | contact |\n");
    printf("|------------------------|-------|-------|--------|-------|---------|\n");
    print_errors_row("people left out", &rep->unseen);
    print_errors_row("people trained on", &rep->seen);
    char at_best[64];
    snprintf(at_best, sizeof at_best, "left out, epoch %d", rep->best_epoch);
    print_errors_row(at_best, &rep->unseen_at_best);
    printf("\ngap (left out - trained on): hips %.2f, knees %.2f, ankles %.2f, toes %.2f cm\n",
           rep->unseen.hips_cm - rep->seen.hips_cm, rep->unseen.knee_cm - rep->seen.knee_cm,
           rep->unseen.ankle_cm - rep->seen.ankle_cm, rep->unseen.toes_cm - rep->seen.toes_cm);
    printf("\nBy epoch, mean over folds (people left out; cm):\n\n");
    printf("| epoch | loss   | hips  | knees | ankles | hips + knees + ankles |\n");
    printf("|-------|--------|-------|-------|--------|-----------------------|\n");
    for (int e = 0; e < rep->epochs; ++e) {
        const struct pr_joint_errors *u = &rep->unseen_by_epoch[e];
        printf("| %5d | %6.4f | %5.2f | %5.2f | %6.2f | %14.2f%s |\n", e + 1,
               rep->validation_loss[e], u->hips_cm, u->knee_cm, u->ankle_cm, pr_joint_sum_cm(u),
               e + 1 == rep->best_epoch ? " (best)" : "       ");
    }
    printf("\n| category (people left out) | clips | min   | hips  | knees | ankles | toes  |\n");
    printf("|----------------------------|-------|-------|-------|-------|--------|-------|\n");
    for (int i = 0; i < rep->category_count; ++i) {
        const struct pr_category_score *c = &rep->category[i];
        printf("| %-26s | %5d | %5.2f | %5.2f | %5.2f | %6.2f | %5.2f |\n", c->name, c->clips,
               c->minutes, c->hips_cm, c->knee_cm, c->ankle_cm, c->toes_cm);
    }
    fprintf(stderr, "embody train: cross-validation in %.0f s\n",
            (double)(u_time_now_ns() - start) * 1e-9);
    free(rep);
    return APP_EXIT_OK;
}

/* ---- --folds: each fold's model through the body on the people it left out ---- */

#define FOLDS_MAX 12
#define FOLD_TEXT_MAX 64

struct fold_table {
    int count, dir_count;
    char people[FOLDS_MAX][FOLD_TEXT_MAX];
    const char *dirs[MAX_MORE_DIRS + 1];
    struct ev_fold_scores s[FOLDS_MAX][MAX_MORE_DIRS + 1];
};

/* Splits "05,127,bd/14,49,bk" into the table's folds; an error names the option. */
static enum em_result
split_folds(const char *text, struct fold_table *t, struct em_error *err)
{
    for (const char *p = text; *p;) {
        const size_t len = strcspn(p, "/");
        if (len == 0 || len >= FOLD_TEXT_MAX || t->count == FOLDS_MAX)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "--folds: \"%s\": expected 1 to %d folds of people (as --holdout) "
                           "separated by '/', each under %d characters",
                           text, FOLDS_MAX, FOLD_TEXT_MAX);
        snprintf(t->people[t->count++], FOLD_TEXT_MAX, "%.*s", (int)len, p);
        p += p[len] ? len + 1 : len;
    }
    return t->count ? EM_OK
                    : em_fail(err, EM_ERROR_INVALID_ARGUMENT, "--folds: no fold given");
}

/* Fold `f`: a model trained without its people, run through the body in each folder. */
static enum em_result
run_fold(const struct train_args *a, struct fold_table *t, int f, struct em_error *err)
{
    struct pr_train_options o = a->o;
    o.holdout = t->people[f];
    struct pr_model m;
    struct pr_train_report *rep = calloc(1, sizeof *rep);
    enum em_result r =
        rep ? pr_train(&o, &m, rep, err) : em_fail(err, EM_ERROR_OUT_OF_MEMORY, "out of memory");
    if (r == EM_OK && a->output) {
        char path[1024];
        snprintf(path, sizeof path, "%s.%d.bin", a->output, f + 1);
        r = pr_model_save(&m, path, err);
    }
    for (int d = 0; d < t->dir_count && r == EM_OK; ++d)
        r = ev_fold_score(&m, t->dirs[d], t->people[f], &t->s[f][d], err);
    if (rep)
        pr_model_fini(&m);
    free(rep);
    return r;
}

static const char *
base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

static void
print_fold_row(const char *label, const char *dir, const struct ev_fold_scores *s)
{
    printf("| %-22s | %-18s | %5d | %5.2f / %5.2f | %5.2f / %5.2f | %5.2f / %5.2f |\n", label,
           base_name(dir), s->clips, s->mpjpe_cm[EV_KNOWN_BODY], s->mpjpe_cm[EV_HEIGHT_ONLY],
           s->hips_cm[EV_KNOWN_BODY], s->hips_cm[EV_HEIGHT_ONLY], s->lower_cm[EV_KNOWN_BODY],
           s->lower_cm[EV_HEIGHT_ONLY]);
}

/* Folder `d`'s mean over the folds that left out people of it (each fold counts once). */
static void
print_fold_mean(const struct fold_table *t, int d)
{
    struct ev_fold_scores mean = {0};
    int n = 0;
    for (int f = 0; f < t->count; ++f) {
        const struct ev_fold_scores *s = &t->s[f][d];
        if (s->clips == 0)
            continue;
        n++;
        mean.clips += s->clips;
        for (int m = 0; m < EV_DO_NOTHING; ++m) {
            mean.mpjpe_cm[m] += s->mpjpe_cm[m];
            mean.hips_cm[m] += s->hips_cm[m];
            mean.lower_cm[m] += s->lower_cm[m];
        }
    }
    if (n == 0)
        return;
    for (int m = 0; m < EV_DO_NOTHING; ++m) {
        mean.mpjpe_cm[m] /= n;
        mean.hips_cm[m] /= n;
        mean.lower_cm[m] /= n;
    }
    char label[32];
    snprintf(label, sizeof label, "mean of %d folds", n);
    print_fold_row(label, t->dirs[d], &mean);
}

static void
print_fold_table(const struct fold_table *t)
{
    printf("Folds of people left out: each fold's model through the body on the clips of its "
           "people (cm, known body / height only)\n\n");
    printf("| fold: people left out  | folder             | clips | MPJPE         | hips        "
           "  | lower         |\n");
    printf("|------------------------|--------------------|-------|---------------|-------------"
           "--|---------------|\n");
    for (int f = 0; f < t->count; ++f)
        for (int d = 0; d < t->dir_count; ++d) {
            char label[FOLD_TEXT_MAX + 8];
            snprintf(label, sizeof label, "%d: %s", f + 1, t->people[f]);
            if (t->s[f][d].clips > 0)
                print_fold_row(label, t->dirs[d], &t->s[f][d]);
        }
    for (int d = 0; d < t->dir_count; ++d)
        print_fold_mean(t, d);
}

/* --folds: the table on standard output, progress on standard error. */
static int
run_folds(struct train_args *a)
{
    struct fold_table *t = calloc(1, sizeof *t);
    struct em_error err = {{0}};
    enum em_result r = t ? split_folds(a->folds, t, &err)
                         : em_fail(&err, EM_ERROR_OUT_OF_MEMORY, "out of memory");
    if (t) {
        t->dirs[t->dir_count++] = a->o.clip_dir;
        for (int i = 0; i < a->o.more_clip_dir_count; ++i)
            t->dirs[t->dir_count++] = a->o.more_clip_dirs[i];
    }
    const int64_t start = u_time_now_ns();
    for (int f = 0; t && f < t->count && r == EM_OK; ++f) {
        fprintf(stderr, "embody train: fold %d of %d: %s left out\n", f + 1, t->count,
                t->people[f]);
        r = run_fold(a, t, f, &err);
    }
    if (r != EM_OK) {
        fprintf(stderr, "embody train: error: %s\n", err.message);
        free(t);
        return r == EM_ERROR_INVALID_ARGUMENT || r == EM_ERROR_PARSE ? APP_EXIT_USAGE
                                                                     : APP_EXIT_FAILURE;
    }
    print_fold_table(t);
    fprintf(stderr, "embody train: %d folds in %.0f s\n", t->count,
            (double)(u_time_now_ns() - start) * 1e-9);
    free(t);
    return APP_EXIT_OK;
}

int
app_cmd_train(int argc, char **argv)
{
    struct train_args a;
    memset(&a, 0, sizeof a);
    struct em_error err = {{0}};
    enum em_result r =
        app_args_parse(argc, argv, 1, k_specs, SPEC_COUNT, HELP_HINT, apply, &a, &err);
    if (r == EM_OK && !a.help && !a.o.clip_dir)
        r = em_fail(&err, EM_ERROR_INVALID_ARGUMENT, "expected a folder of clips (see %s)",
                    HELP_HINT);
    if (r == EM_OK && !a.help && !a.output && !a.cross_validate && !a.folds)
        r = em_fail(&err, EM_ERROR_INVALID_ARGUMENT, "expected -o MODEL (see %s)", HELP_HINT);
    if (r == EM_OK && !a.help && a.output)
        r = app_check_writable("-o", a.output, &err);
    if (r != EM_OK) {
        fprintf(stderr, "embody train: error: %s\n", err.message);
        return APP_EXIT_USAGE;
    }
    if (a.help) {
        print_help();
        return APP_EXIT_OK;
    }
    if (!a.quiet)
        a.o.progress = print_line;
    if (a.cross_validate)
        return cross_validate(&a);
    if (a.folds)
        return run_folds(&a);
    struct pr_model model;
    struct pr_train_report *rep = calloc(1, sizeof *rep);
    if (!rep) {
        fprintf(stderr, "embody train: error: out of memory\n");
        return APP_EXIT_FAILURE;
    }
    const int64_t start = u_time_now_ns();
    r = pr_train(&a.o, &model, rep, &err);
    if (r == EM_OK)
        r = pr_model_save(&model, a.output, &err);
    pr_model_fini(&model);
    if (r != EM_OK) {
        fprintf(stderr, "embody train: error: %s\n", err.message);
        free(rep);
        return r == EM_ERROR_INVALID_ARGUMENT || r == EM_ERROR_PARSE ? APP_EXIT_USAGE
                                                                     : APP_EXIT_FAILURE;
    }
    if (rep->validation_clips == 0)
        fprintf(stderr, "embody train: wrote %s (epoch %d of %d; no validation clips) in %.0f s\n",
                a.output, rep->best_epoch, rep->epochs_run,
                (double)(u_time_now_ns() - start) * 1e-9);
    else
        fprintf(stderr,
            "embody train: wrote %s (best epoch %d of %d; validation on subjects %s: hips "
            "%.1f, knees %.1f, ankles %.1f, toes %.1f cm, contact %.0f %%) in %.0f s\n",
            a.output, rep->best_epoch, rep->epochs_run, rep->holdout, rep->validation_hips_cm,
            rep->validation_knee_cm, rep->validation_ankle_cm, rep->validation_toes_cm,
            100.0 * rep->validation_contact_accuracy, (double)(u_time_now_ns() - start) * 1e-9);
    free(rep);
    return APP_EXIT_OK;
}
