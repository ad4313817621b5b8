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
 */
#include <assert.h>
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "embody/m_math.h"
#include "embody/prior.h"
#include "embody/skeleton.h"
#include "embody/stream.h"
#include "pr_internal.h"
#include "pr_train.h"
#include "util/u_time.h"

#define DEFAULT_EPOCHS 15
#define DEFAULT_HIDDEN 64
#define DEFAULT_LR 1e-3f
#define DEFAULT_WEIGHT_DECAY 0.1f
#define DEFAULT_BATCH 128
#define DEFAULT_OFFSET_NOISE_M 0.01f
#define DEFAULT_HEIGHT_NOISE 0.02f
#define MAX_HOLDOUT PR_MAX_HOLDOUT_SUBJECTS
#define DEFAULT_PROPORTION_SPREAD 0.06f
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
    int *clip;    /* the clip each row came from (index into the clip list) */
    bool *plain;  /* the row is of the copy as recorded (validation), not an augmented one */
};

static void
dataset_fini(struct dataset *d)
{
    free(d->x);
    free(d->y);
    free(d->scale);
    free(d->clip);
    free(d->plain);
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

/* ---- Clips ---- */

/* One clip file: where it is, whose motion it is and what kind (MANIFEST.tsv). */
struct clip_entry {
    char *path, *name; /* name: relative to its folder ("acrnn/cmu_60_01.bvh") */
    int subject;       /* -1: unknown */
    char category[PR_CATEGORY_MAX];
};

struct clip_list {
    int count, capacity;
    struct clip_entry *e;
};

static void
clip_list_fini(struct clip_list *l)
{
    for (int i = 0; i < l->count; ++i) {
        free(l->e[i].path);
        free(l->e[i].name);
    }
    free(l->e);
    memset(l, 0, sizeof *l);
}

static int
compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The subject of "cmu_SS_TT.bvh" (SS; TT may be any text), or -1. */
static int
clip_subject(const char *name)
{
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    int subject = -1;
    if (sscanf(base, "cmu_%d_", &subject) == 1 && subject >= 0)
        return subject;
    return -1;
}

/* The *.bvh names in `dir` (sorted), with `prefix` ("sub/") before each. */
static enum em_result
list_folder(const char *dir, const char *prefix, char ***out_names, int *out_count,
            struct em_error *err)
{
    *out_names = NULL;
    *out_count = 0;
    DIR *d = opendir(dir);
    if (!d)
        return em_fail(err, EM_ERROR_IO, "%s: cannot open the clip folder", dir);
    int cap = 0, n = 0;
    char **names = NULL;
    for (struct dirent *e = readdir(d); e; e = readdir(d)) {
        const size_t len = strlen(e->d_name);
        if (len < 5 || strcasecmp(e->d_name + len - 4, ".bvh") != 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **grown = realloc(names, (size_t)cap * sizeof *grown);
            if (!grown)
                break;
            names = grown;
        }
        const size_t size = strlen(prefix) + len + 1;
        if ((names[n] = malloc(size)) != NULL)
            snprintf(names[n++], size, "%s%s", prefix, e->d_name);
    }
    closedir(d);
    if (n > 1)
        qsort(names, (size_t)n, sizeof *names, compare_names);
    *out_names = names;
    *out_count = n;
    return EM_OK;
}

static bool
clip_list_add(struct clip_list *l, const char *dir, char *name)
{
    if (l->count == l->capacity) {
        const int cap = l->capacity ? 2 * l->capacity : 256;
        struct clip_entry *grown = realloc(l->e, (size_t)cap * sizeof *grown);
        if (!grown)
            return false;
        l->e = grown;
        l->capacity = cap;
    }
    struct clip_entry *c = &l->e[l->count];
    memset(c, 0, sizeof *c);
    const size_t size = strlen(dir) + strlen(name) + 2;
    c->path = malloc(size);
    if (!c->path)
        return false;
    snprintf(c->path, size, "%s/%s", dir, name);
    c->name = name;
    c->subject = clip_subject(name);
    snprintf(c->category, sizeof c->category, "%s", "?");
    l->count++;
    return true;
}

/* Fills subject and category from the folder's MANIFEST.tsv (columns named file,
 * subject and category in its first line), where there is one. */
static enum em_result
read_manifest(const char *dir, struct clip_list *l, int first, struct em_error *err)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/MANIFEST.tsv", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return EM_OK;
    char line[4096];
    int col_file = -1, col_subject = -1, col_category = -1, line_no = 0;
    enum em_result r = EM_OK;
    while (r == EM_OK && fgets(line, sizeof line, f)) {
        line_no++;
        line[strcspn(line, "\r\n")] = '\0';
        char *field[32];
        int n = 0;
        for (char *p = line; n < 32;) {
            field[n++] = p;
            char *tab = strchr(p, '\t');
            if (!tab)
                break;
            *tab = '\0';
            p = tab + 1;
        }
        if (line_no == 1) {
            for (int i = 0; i < n; ++i) {
                if (strcmp(field[i], "file") == 0)
                    col_file = i;
                else if (strcmp(field[i], "subject") == 0)
                    col_subject = i;
                else if (strcmp(field[i], "category") == 0)
                    col_category = i;
            }
            if (col_file < 0)
                r = em_fail(err, EM_ERROR_PARSE, "%s:1: no column named \"file\"", path);
            continue;
        }
        if (n <= col_file || !field[col_file][0])
            continue;
        for (int i = first; i < l->count; ++i) {
            if (strcmp(l->e[i].name, field[col_file]) != 0)
                continue;
            if (col_subject >= 0 && col_subject < n) {
                char *end = NULL;
                const long v = strtol(field[col_subject], &end, 10);
                if (end == field[col_subject] || *end || v < 0 || v > 100000)
                    r = em_fail(err, EM_ERROR_PARSE,
                                "%s:%d: subject \"%s\" is not a subject number", path, line_no,
                                field[col_subject]);
                else
                    l->e[i].subject = (int)v;
            }
            if (col_category >= 0 && col_category < n && field[col_category][0])
                snprintf(l->e[i].category, sizeof l->e[i].category, "%s", field[col_category]);
        }
    }
    fclose(f);
    return r;
}

/* The clips of one folder: its *.bvh files and those of its subfolders, names sorted. */
static enum em_result
list_clips(const char *dir, struct clip_list *out, struct em_error *err)
{
    const int first = out->count;
    char **names = NULL;
    int n = 0;
    enum em_result r = list_folder(dir, "", &names, &n, err);
    for (int i = 0; i < n; ++i)
        if (!clip_list_add(out, dir, names[i]))
            free(names[i]);
    free(names);
    if (r != EM_OK)
        return r;
    DIR *d = opendir(dir);
    char **subs = NULL;
    int sub_count = 0, sub_cap = 0;
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
        if (e->d_name[0] == '.')
            continue;
        char sub[2048];
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        DIR *probe = opendir(sub);
        if (!probe)
            continue;
        closedir(probe);
        if (sub_count == sub_cap) {
            sub_cap = sub_cap ? 2 * sub_cap : 16;
            char **grown = realloc(subs, (size_t)sub_cap * sizeof *grown);
            if (!grown)
                break;
            subs = grown;
        }
        subs[sub_count++] = strdup(e->d_name);
    }
    if (d)
        closedir(d);
    if (sub_count > 1)
        qsort(subs, (size_t)sub_count, sizeof *subs, compare_names);
    for (int s = 0; s < sub_count; ++s) {
        char sub[2048], prefix[1024];
        snprintf(sub, sizeof sub, "%s/%s", dir, subs[s]);
        snprintf(prefix, sizeof prefix, "%s/", subs[s]);
        if (list_folder(sub, prefix, &names, &n, err) == EM_OK) {
            for (int i = 0; i < n; ++i)
                if (!clip_list_add(out, dir, names[i]))
                    free(names[i]);
            free(names);
        }
        free(subs[s]);
    }
    free(subs);
    if (out->count == first)
        return em_fail(err, EM_ERROR_IO, "%s: no clips (*.bvh files) in the folder", dir);
    return read_manifest(dir, out, first, err);
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

/* The joints the targets come from (humanoid bones; the rig finds them by any names). */
enum {
    J_HIPS,
    J_ANKLE,
    J_TOES = J_ANKLE + 2,
    J_KNEE = J_TOES + 2,
    J_NECK = J_KNEE + 2,
    J_UPPER_ARM,
    J_COUNT = J_UPPER_ARM + 2
};
static const enum sk_bone joint_bones[J_COUNT] = {
    SK_HIPS,           SK_LEFT_FOOT,       SK_RIGHT_FOOT, SK_LEFT_TOES,     SK_RIGHT_TOES,
    SK_LEFT_LOWER_LEG, SK_RIGHT_LOWER_LEG, SK_NECK,       SK_LEFT_UPPER_ARM, SK_RIGHT_UPPER_ARM};

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

static void rotate(const float *q, const float *v, float *out);

static void
lerp3(const float *a, const float *b, float w, float *out)
{
    for (int k = 0; k < 3; ++k)
        out[k] = a[k] + w * (b[k] - a[k]);
}

/* CMU's Hips joint (and the 3ds Max conversion's, of the same skeleton) sits about
 * 10 cm above the hip joints and 4 cm behind them; the Daz and CC3 rigs put theirs at
 * the hip joints' height. The prior learns CMU's, as the body and the evaluation use. */
#define CMU_HIPS_ABOVE_THIGHS_M 0.10
#define CMU_HIPS_BEHIND_THIGHS_M 0.04

static bool
hips_joint_is_cmus(const struct st_mocap_rig *rig)
{
    return rig->map == SK_NAMES_CMU || rig->map == SK_NAMES_MAX;
}

/* Where CMU's Neck would be on this rig: CMU's starts where its shoulders (clavicles) do,
 * at the base of the neck; the Daz and CC3 rigs' neck starts higher, so it is taken midway
 * between their clavicles' roots (their own neck joint on a rig without clavicles). */
static void
place_cmu_neck(const double (*pos)[3], const struct st_mocap_rig *rig, double unit,
               const int *joint, float *out_m)
{
    const int l = rig->joint[SK_LEFT_SHOULDER], r = rig->joint[SK_RIGHT_SHOULDER];
    for (int k = 0; k < 3; ++k)
        out_m[k] = (float)((l >= 0 && r >= 0 ? 0.5 * (pos[l][k] + pos[r][k]) : pos[joint[J_NECK]][k]) *
                           unit);
}

/* Where CMU's Hips would be on this rig: between the hip joints, raised and moved back in
 * the pelvis's frame (`hips_q`, the convention's), scaled with the body's height. */
static void
place_cmu_hips(const double (*pos)[3], const struct st_mocap_rig *rig, const double *hips_q,
               double unit, float height_m, float *out_m)
{
    const double scale = (double)height_m / (double)PR_REFERENCE_HEIGHT_M;
    const float q[4] = {(float)hips_q[0], (float)hips_q[1], (float)hips_q[2], (float)hips_q[3]};
    const float local[3] = {0.0f, (float)(CMU_HIPS_ABOVE_THIGHS_M * scale),
                            (float)(-CMU_HIPS_BEHIND_THIGHS_M * scale)};
    float offset[3];
    rotate(q, local, offset);
    const int l = rig->joint[SK_LEFT_UPPER_LEG], r = rig->joint[SK_RIGHT_UPPER_LEG];
    for (int k = 0; k < 3; ++k)
        out_m[k] = (float)(0.5 * (pos[l][k] + pos[r][k]) * unit) + offset[k];
}

/* The back's points (PR_OUT_BACK): a third and two thirds of the way from the pelvis to
 * the neck along the polyline through the rig's spine joints between them (those whose
 * height along the pelvis-neck line is between the two: the Daz hip and CC3 waist sit at
 * the pelvis). The rigs have two to four spine bones in different places; these points
 * are where they bend the same. */
#define BACK_POINTS 2
#define BACK_MAX_VERTICES 5

static int
back_polyline(const double (*pos)[3], const struct st_mocap_rig *rig, double unit,
              const float *hips_m, const float *neck_m, float (*out)[3])
{
    static const enum sk_bone spine_bones[] = {SK_SPINE, SK_CHEST, SK_UPPER_CHEST};
    float axis[3];
    float axis2 = 0.0f;
    for (int k = 0; k < 3; ++k) {
        axis[k] = neck_m[k] - hips_m[k];
        axis2 += axis[k] * axis[k];
    }
    int n = 0;
    memcpy(out[n++], hips_m, sizeof out[0]);
    for (size_t b = 0; b < sizeof spine_bones / sizeof spine_bones[0] && axis2 > 1e-8f; ++b) {
        const int j = rig->joint[spine_bones[b]];
        if (j < 0)
            continue;
        float p[3], along = 0.0f;
        for (int k = 0; k < 3; ++k) {
            p[k] = (float)(pos[j][k] * unit);
            along += (p[k] - hips_m[k]) * axis[k];
        }
        along /= axis2;
        if (along > 0.05f && along < 0.95f)
            memcpy(out[n++], p, sizeof p);
    }
    memcpy(out[n++], neck_m, sizeof out[0]);
    return n;
}

static void
place_back(const double (*pos)[3], const struct st_mocap_rig *rig, double unit,
           struct pr_truth *t)
{
    float v[BACK_MAX_VERTICES][3];
    const int n = back_polyline(pos, rig, unit, t->hips_m, t->neck_m, v);
    float seg[BACK_MAX_VERTICES], total = 0.0f;
    for (int i = 0; i + 1 < n; ++i) {
        const float dx = v[i + 1][0] - v[i][0], dy = v[i + 1][1] - v[i][1],
                    dz = v[i + 1][2] - v[i][2];
        seg[i] = sqrtf(dx * dx + dy * dy + dz * dz);
        total += seg[i];
    }
    for (int b = 0; b < BACK_POINTS; ++b) {
        float left = total * (float)(b + 1) / (float)(BACK_POINTS + 1);
        int i = 0;
        while (i + 2 < n && left > seg[i]) {
            left -= seg[i];
            ++i;
        }
        const float w = seg[i] > 1e-6f ? fminf(1.0f, left / seg[i]) : 0.0f;
        lerp3(v[i], v[i + 1], w, t->back_m[b]);
    }
}

static enum em_result
fill_truth(const struct st_bvh *bvh, const struct st_mocap_rig *rig, double unit, int step,
           struct clip *c, const char *path, struct em_error *err)
{
    int joint[J_COUNT];
    for (int j = 0; j < J_COUNT; ++j)
        if ((joint[j] = rig->joint[joint_bones[j]]) < 0)
            return em_fail(err, EM_ERROR_PARSE, "%s: no joint for the humanoid \"%s\"", path,
                           sk_bone_name(joint_bones[j]));
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
                t->upper_arm_m[s][k] = (float)(pos[joint[J_UPPER_ARM + s]][k] * unit);
            }
            t->neck_m[k] = (float)(pos[joint[J_NECK]][k] * unit);
        }
        double hips_q[4];
        st_mocap_rig_fix_quat(rig, ST_RIG_HIPS, rot[joint[J_HIPS]], hips_q);
        quat_from_double(hips_q, t->hips_rotation);
        if (!hips_joint_is_cmus(rig)) {
            place_cmu_hips(pos, rig, hips_q, unit, c->height_m, t->hips_m);
            place_cmu_neck(pos, rig, unit, joint, t->neck_m);
        }
        place_back(pos, rig, unit, t);
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

static long
clip_step(const struct st_bvh *bvh)
{
    const long step = lround(1.0 / (bvh->frame_time_s * 60.0));
    return step < 1 ? 1 : step;
}

/* The rows (60 Hz) that see a glitch: a head, hand or foot moving faster than a person
 * can (PR_GLITCH_SPEED_M_S, marker swaps in the capture) in that row, in the row before
 * (its target) or in the history the row's features hold. `out_skip` has a flag per row;
 * returns how many are set. */
static long
mark_glitches(const struct st_bvh *bvh, const struct st_mocap_rig *rig, double unit, int rows,
              bool *out_skip)
{
    static const enum sk_bone watched[] = {SK_HEAD, SK_LEFT_HAND, SK_RIGHT_HAND, SK_LEFT_FOOT,
                                           SK_RIGHT_FOOT};
    enum { WATCHED = sizeof watched / sizeof watched[0] };
    memset(out_skip, 0, (size_t)rows * sizeof *out_skip);
    const size_t n = (size_t)bvh->joint_count;
    double(*pos)[3] = malloc(n * sizeof *pos);
    double(*rot)[4] = malloc(n * sizeof *rot);
    if (!pos || !rot || !(bvh->frame_time_s > 0.0)) {
        free(pos);
        free(rot);
        return 0;
    }
    const long step = clip_step(bvh);
    double last[WATCHED][3];
    const double max_step = PR_GLITCH_SPEED_M_S * bvh->frame_time_s / unit;
    for (int f = 0; f < bvh->frame_count; ++f) {
        st_bvh_frame_pose(bvh, f, pos, rot);
        bool glitch = false;
        for (int w = 0; w < WATCHED; ++w) {
            const double *p = pos[rig->joint[watched[w]]];
            if (f > 0) {
                const double dx = p[0] - last[w][0], dy = p[1] - last[w][1],
                             dz = p[2] - last[w][2];
                glitch |= dx * dx + dy * dy + dz * dz > max_step * max_step;
            }
            memcpy(last[w], p, sizeof last[w]);
        }
        if (!glitch)
            continue;
        /* Rows from the one before the jump to those whose history still holds it. */
        const long first = (f - 1) / step - 1, end = f / step + PR_HISTORY_FRAMES + 1;
        for (long r = first < 0 ? 0 : first; r < end && r < rows; ++r)
            out_skip[r] = true;
    }
    free(pos);
    free(rot);
    long count = 0;
    for (int r = 0; r < rows; ++r)
        count += out_skip[r];
    return count;
}

/* Body proportions of an augmented copy: each a factor on the bones' lengths. */
struct proportions {
    float legs, torso, arms;
};

/* The nearest mapped joint above `j` (not `j` itself), as a humanoid bone. */
static enum sk_bone
mapped_ancestor(const struct st_bvh *bvh, const enum sk_bone *bone_of, int j)
{
    for (int a = bvh->joints[j].parent; a >= 0; a = bvh->joints[a].parent)
        if (bone_of[a] != SK_BONE_NONE)
            return bone_of[a];
    return SK_BONE_NONE;
}

/* Retargets the clip to other proportions: thighs and shins times `legs` (and the root's
 * path with them, so that strides and the hips' height follow the legs), the spine from
 * the hips to the head times `torso`, upper arms and forearms times `arms`. The joint
 * rotations stay: the same motion on another person's build. */
static void
scale_proportions(struct st_bvh *bvh, const struct st_mocap_rig *rig,
                  const struct proportions *p)
{
    enum sk_bone *bone_of = malloc((size_t)bvh->joint_count * sizeof *bone_of);
    bool *on_spine = calloc((size_t)bvh->joint_count, sizeof *on_spine);
    if (!bone_of || !on_spine) {
        free(bone_of);
        free(on_spine);
        return;
    }
    for (int i = 0; i < bvh->joint_count; ++i)
        bone_of[i] = SK_BONE_NONE;
    for (int b = 0; b < SK_BONE_COUNT; ++b)
        if (rig->joint[b] >= 0)
            bone_of[rig->joint[b]] = (enum sk_bone)b;
    for (int a = rig->joint[SK_HEAD]; a > 0; a = bvh->joints[a].parent)
        on_spine[a] = true;
    for (int i = 1; i < bvh->joint_count; ++i) {
        const enum sk_bone up = mapped_ancestor(bvh, bone_of, i);
        float f = 1.0f;
        if (on_spine[i])
            f = p->torso;
        else if (up == SK_LEFT_UPPER_LEG || up == SK_LEFT_LOWER_LEG ||
                 up == SK_RIGHT_UPPER_LEG || up == SK_RIGHT_LOWER_LEG)
            f = p->legs;
        else if (up == SK_LEFT_UPPER_ARM || up == SK_LEFT_LOWER_ARM ||
                 up == SK_RIGHT_UPPER_ARM || up == SK_RIGHT_LOWER_ARM)
            f = p->arms;
        for (int k = 0; k < 3; ++k)
            bvh->joints[i].offset[k] *= (double)f;
    }
    const struct st_bvh_joint *root = &bvh->joints[0];
    for (int k = 0; k < 3; ++k)
        bvh->joints[0].offset[k] *= (double)p->legs;
    for (int fr = 0; fr < bvh->frame_count; ++fr) {
        double *row = bvh->motion + (size_t)fr * (size_t)bvh->channel_count;
        for (int c = 0; c < root->channel_count; ++c)
            if (root->channel[c] <= ST_BVH_ZPOS)
                row[root->first_channel + c] *= (double)p->legs;
    }
    free(bone_of);
    free(on_spine);
}

static enum em_result
copy_bvh(const struct st_bvh *in, struct st_bvh *out, const char *path, struct em_error *err)
{
    *out = *in;
    const size_t values = (size_t)in->frame_count * (size_t)in->channel_count;
    out->joints = malloc((size_t)in->joint_count * sizeof *out->joints);
    out->motion = malloc((values > 0 ? values : 1) * sizeof *out->motion);
    if (!out->joints || !out->motion) {
        free(out->joints);
        free(out->motion);
        memset(out, 0, sizeof *out);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    memcpy(out->joints, in->joints, (size_t)in->joint_count * sizeof *out->joints);
    memcpy(out->motion, in->motion, values * sizeof *out->motion);
    return EM_OK;
}

/* One copy of a clip: its stream, truth and height, on its own proportions (NULL: as
 * recorded). */
static enum em_result
make_clip(const struct st_bvh *recorded, const struct st_mocap_rig *rig, double unit,
          const struct proportions *prop, const char *path, int frame_limit, struct clip *out,
          struct em_error *err)
{
    memset(out, 0, sizeof *out);
    struct st_bvh scaled = {0};
    const struct st_bvh *bvh = recorded;
    enum em_result r = EM_OK;
    if (prop) {
        if ((r = copy_bvh(recorded, &scaled, path, err)) != EM_OK)
            return r;
        scale_proportions(&scaled, rig, prop);
        bvh = &scaled;
    }
    r = st_mocap_to_stream(bvh, unit, path, &out->stream, err);
    if (r == EM_OK && frame_limit > 0 && out->stream.frame_count > frame_limit)
        out->stream.frame_count = frame_limit;
    if (r == EM_OK) {
        struct sk_skeleton sk;
        r = st_bvh_to_humanoid(bvh, rig->map, unit, path, &sk, err);
        if (r == EM_OK) {
            out->height_m = sk_humanoid_height(&sk);
            sk_skeleton_fini(&sk);
            if (!(out->height_m > 0.5f && out->height_m < 2.8f))
                r = em_fail(err, EM_ERROR_PARSE, "%s: the skeleton stands %.2f m tall", path,
                            (double)out->height_m);
        }
    }
    if (r == EM_OK)
        r = fill_truth(bvh, rig, unit, (int)clip_step(bvh), out, path, err);
    if (prop)
        st_bvh_fini(&scaled);
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
        mirror_vec(t->upper_arm_m[s]);
    }
    mirror_vec(t->neck_m);
    mirror_vec(t->back_m[0]);
    mirror_vec(t->back_m[1]);
    swap3(t->ankle_m[0], t->ankle_m[1]);
    swap3(t->toes_m[0], t->toes_m[1]);
    swap3(t->knee_m[0], t->knee_m[1]);
    swap3(t->upper_arm_m[0], t->upper_arm_m[1]);
    const bool c = t->contact[0];
    t->contact[0] = t->contact[1];
    t->contact[1] = c;
}

/* pr_features.c's quat_rotate, written again on purpose: this file is built with
 * -fassociative-math (src/prior/CMakeLists.txt), which regroups this copy's sums; one
 * shared copy (inline or not) changed the trained model's bytes (tried). */
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
    }
    lerp3(ta->neck_m, tb->neck_m, w, t->neck_m);
    for (int k = 0; k < 2; ++k)
        lerp3(ta->back_m[k], tb->back_m[k], w, t->back_m[k]);
}

/* Samples of one copy of a clip, appended to `d` (rows that `skip` marks left out:
 * their history still goes in, as it would at run time). */
static enum em_result
add_copy(const struct clip *c, const struct augment *a, const bool *skip, int clip_index,
         bool plain, struct dataset *d)
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

struct activations {
    float x[PR_FEATURE_COUNT], a1[PR_MAX_HIDDEN], h1[PR_MAX_HIDDEN], a2[PR_MAX_HIDDEN],
        h2[PR_MAX_HIDDEN], y[PR_OUTPUT_COUNT];
    float dy[PR_OUTPUT_COUNT], dh[PR_MAX_HIDDEN], da[PR_MAX_HIDDEN];
    /* Dropout: each hidden unit's factor this sample (0, or 1 / (1 - rate)); 1 without. */
    float keep1[PR_MAX_HIDDEN], keep2[PR_MAX_HIDDEN];
};

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
static void
keep_all(struct activations *a)
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

/* A minibatch's inputs, activations and their gradients, a row per sample. */
struct batch {
    int capacity;
    float *x, *a1, *h1, *a2, *h2, *y, *dy, *dh, *da, *keep1, *keep2, *wt;
};

static void
batch_fini(struct batch *b)
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

static bool
batch_init(struct batch *b, int capacity, int hidden)
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
    if (b->x && b->a1 && b->h1 && b->a2 && b->h2 && b->y && b->dy && b->dh && b->da &&
        b->keep1 && b->keep2 && b->wt)
        return true;
    batch_fini(b);
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

struct validation {
    double loss, hips_cm, knee_cm, ankle_cm, toes_cm, contact_accuracy;
    double torso_cm; /* neck and shoulders */
    double back_cm;  /* spine and chest */
};

static double
point_error(const float *p, const float *q)
{
    const double dx = (double)(p[0] - q[0]), dy = (double)(p[1] - q[1]), dz = (double)(p[2] - q[2]);
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* Errors of one row, added to `v` (not yet divided by the rows). */
static void
score_row(const struct pr_model *m, const struct dataset *d, long i, struct activations *a,
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
    }
    v->torso_cm += cm * point_error(y + PR_OUT_NECK, t + PR_OUT_NECK) / 3.0;
    for (int b = 0; b < 2; ++b)
        v->back_cm += 0.5 * cm * point_error(y + PR_OUT_BACK + 3 * b, t + PR_OUT_BACK + 3 * b);
}

static void
validation_divide(struct validation *v, double n)
{
    v->loss /= n;
    v->hips_cm /= n;
    v->knee_cm /= n;
    v->ankle_cm /= n;
    v->toes_cm /= n;
    v->torso_cm /= n;
    v->back_cm /= n;
    v->contact_accuracy /= n;
}

static void
validate(const struct pr_model *m, const struct dataset *d, const long *rows, long count,
         struct activations *a, struct validation *out)
{
    memset(out, 0, sizeof *out);
    if (count == 0) {
        out->loss = (double)NAN;
        return;
    }
    for (long k = 0; k < count; ++k)
        score_row(m, d, rows[k], a, out);
    validation_divide(out, (double)count);
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
    if (o->proportion_spread == 0.0f)
        o->proportion_spread = DEFAULT_PROPORTION_SPREAD;
    if (!(o->dropout > 0.0f && o->dropout < 1.0f))
        o->dropout = 0.0f;
}

/* Every clip of every folder, in folder order then name order. */
static enum em_result
list_all_clips(const struct pr_train_options *o, struct clip_list *out, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    enum em_result r = EM_OK;
    if (o->clip_dir)
        r = list_clips(o->clip_dir, out, err);
    for (int i = 0; i < o->more_clip_dir_count && r == EM_OK; ++i)
        r = list_clips(o->more_clip_dirs[i], out, err);
    if (r == EM_OK && out->count == 0)
        r = em_fail(err, EM_ERROR_INVALID_ARGUMENT, "train: no clip folder given");
    if (r != EM_OK)
        clip_list_fini(out);
    return r;
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
static enum em_result
add_clip(const struct pr_train_options *o, const struct clip_entry *e, int index,
         struct rng *r, struct dataset *d, double *out_minutes, long *out_skipped,
         struct em_error *err)
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
        res = make_clip(&bvh, &rig, unit, NULL, e->path, o->frame_limit, &plain, err);
    if (res != EM_OK)
        goto done;
    const int rows = plain.stream.frame_count;
    skip = malloc((size_t)rows * sizeof *skip);
    if (!skip) {
        res = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", e->path);
        goto done;
    }
    *out_skipped = mark_glitches(&bvh, &rig, unit, rows, skip);
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
            res = make_clip(&bvh, &rig, unit, &p, e->path, o->frame_limit, &copy, err);
            if (res != EM_OK)
                break;
            use = &copy;
        }
        if (add_copy(use, &a, skip, index, false, d) != EM_OK)
            res = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", e->path);
        if (use == &copy)
            clip_fini(&copy);
    }
done:
    free(skip);
    clip_fini(&plain);
    st_bvh_fini(&bvh);
    return res;
}

/* The whole corpus: every clip's plain and augmented rows, and what each clip is. */
struct corpus {
    struct clip_list list;
    struct dataset data;
    double *minutes; /* [clip] */
    long glitch_rows;
};

static void
corpus_fini(struct corpus *c)
{
    clip_list_fini(&c->list);
    dataset_fini(&c->data);
    free(c->minutes);
    memset(c, 0, sizeof *c);
}

static enum em_result
load_corpus(const struct pr_train_options *o, struct rng *r, struct corpus *out,
            struct em_error *err)
{
    memset(out, 0, sizeof *out);
    enum em_result res = list_all_clips(o, &out->list, err);
    if (res != EM_OK)
        return res;
    const int count =
        o->max_clips > 0 && o->max_clips < out->list.count ? o->max_clips : out->list.count;
    out->list.count = count < out->list.count ? count : out->list.count;
    out->minutes = calloc((size_t)out->list.count, sizeof *out->minutes);
    if (!out->minutes)
        res = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "train: out of memory");
    for (int i = 0; i < out->list.count && res == EM_OK; ++i) {
        const struct clip_entry *e = &out->list.e[i];
        const long before = out->data.count;
        long skipped = 0;
        res = add_clip(o, e, i, r, &out->data, &out->minutes[i], &skipped, err);
        if (res != EM_OK)
            break;
        out->glitch_rows += skipped;
        report_line(o, "[%d/%d] %s: subject %d, %s, %.2f min, %ld samples%s%.0ld%s", i + 1,
                    out->list.count, e->name, e->subject, e->category, out->minutes[i],
                    out->data.count - before, skipped ? "; left out for glitches: " : "",
                    skipped, skipped ? " rows" : "");
    }
    if (res != EM_OK)
        corpus_fini(out);
    return res;
}

/* The rows of a split: augmented rows of training clips, plain rows of validation
 * clips, and plain rows of training clips (the figure on trained people). */
struct split {
    long *train, *val, *seen;
    long train_count, val_count, seen_count;
};

static void
split_fini(struct split *s)
{
    free(s->train);
    free(s->val);
    free(s->seen);
    memset(s, 0, sizeof *s);
}

static enum em_result
make_split(const struct corpus *c, const struct holdout *hold, int row_stride,
           struct split *out, struct pr_train_report *rep, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    const long n = c->data.count > 0 ? c->data.count : 1;
    out->train = malloc((size_t)n * sizeof *out->train);
    out->val = malloc((size_t)n * sizeof *out->val);
    out->seen = malloc((size_t)n * sizeof *out->seen);
    if (!out->train || !out->val || !out->seen) {
        split_fini(out);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "train: out of memory");
    }
    const long stride = row_stride > 1 ? row_stride : 1;
    long augmented = 0;
    for (long i = 0; i < c->data.count; ++i) {
        const bool is_val = held_out(hold, c->list.e[c->data.clip[i]].subject);
        if (is_val && c->data.plain[i])
            out->val[out->val_count++] = i;
        else if (!is_val && !c->data.plain[i]) {
            if (augmented++ % stride == 0)
                out->train[out->train_count++] = i;
        }
        else if (!is_val)
            out->seen[out->seen_count++] = i;
    }
    for (int k = 0; k < c->list.count; ++k) {
        if (held_out(hold, c->list.e[k].subject)) {
            rep->validation_clips++;
            rep->validation_minutes += c->minutes[k];
        } else {
            rep->train_clips++;
            rep->train_minutes += c->minutes[k];
        }
    }
    rep->train_samples = out->train_count;
    rep->validation_samples = out->val_count;
    rep->glitch_rows = c->glitch_rows;
    return EM_OK;
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

static double
train_epoch(struct trainer *t, const struct dataset *d, long *order, long count, struct rng *r,
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
    keep_all(a);
    return loss / (double)count;
}

/* Trains one model on a split's training rows, keeping the epoch best on its validation
 * rows (the last, without them). */
static enum em_result
train_split(const struct pr_train_options *o, const struct corpus *c, struct split *sp,
            struct pr_model *m, struct pr_train_report *rep, struct em_error *err)
{
    struct rng rng = {o->seed};
    struct trainer t = {.m = m};
    struct activations *a = calloc(1, sizeof *a);
    struct batch b = {0};
    float *best = NULL;
    enum em_result res = EM_OK;
    if (!a || !batch_init(&b, o->batch, m->hidden_count)) {
        res = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "train: out of memory");
        goto done;
    }
    column_stats(c->data.x, sp->train, sp->train_count, PR_FEATURE_COUNT, m->in_mean,
                 m->in_std);
    column_stats(c->data.y, sp->train, sp->train_count, PR_OUTPUT_COUNT, m->out_mean,
                 m->out_std);
    init_weights(m, &rng);
    t.n = pr_model_param_count(m->feature_count, m->hidden_count, m->output_count);
    t.grad = calloc((size_t)t.n, sizeof(float));
    t.adam_m = calloc((size_t)t.n, sizeof(float));
    t.adam_v = calloc((size_t)t.n, sizeof(float));
    best = malloc((size_t)t.n * sizeof *best);
    if (!t.grad || !t.adam_m || !t.adam_v || !best) {
        res = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "train: out of memory");
        goto done;
    }
    report_line(o,
                "training on %d clips (%.2f min, %ld samples with augmented copies), validating "
                "on %d clips of subjects %s (%.2f min); %ld weights",
                rep->train_clips, rep->train_minutes, sp->train_count, rep->validation_clips,
                rep->holdout, rep->validation_minutes,
                t.n - 2L * (PR_FEATURE_COUNT + PR_OUTPUT_COUNT));
    double best_loss = (double)INFINITY;
    memcpy(best, m->params, (size_t)t.n * sizeof *best);
    keep_all(a);
    for (int e = 0; e < o->epochs; ++e) {
        const int64_t start = u_time_now_ns();
        rep->train_loss[e] =
            train_epoch(&t, &c->data, sp->train, sp->train_count, &rng, &b, a, e, o);
        struct validation v;
        validate(m, &c->data, sp->val, sp->val_count, a, &v);
        rep->validation_loss[e] = v.loss;
        rep->validation_by_epoch[e] = (struct pr_joint_errors){v.hips_cm, v.knee_cm, v.ankle_cm,
                                                               v.toes_cm, v.contact_accuracy};
        rep->epochs_run = e + 1;
        /* Epochs are picked by the joints the body takes from the network on the people
         * left out; the mixed loss (which also weighs rotations and contacts) can rise
         * while those joints still improve. */
        double score = sp->val_count > 0 ? pr_joint_sum_cm(&rep->validation_by_epoch[e])
                                         : rep->train_loss[e];
        if (o->keep_epoch > 0) /* the epoch chosen beforehand, whatever this split says */
            score = e + 1 == o->keep_epoch || (e + 1 == o->epochs && o->keep_epoch > o->epochs)
                        ? -1.0
                        : (double)INFINITY;
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
        if (sp->val_count == 0)
            report_line(o, "epoch %3d/%d  train %.4f  (no validation clips)  %.1f s", e + 1,
                        o->epochs, rep->train_loss[e], (double)(u_time_now_ns() - start) * 1e-9);
        else
            report_line(o,
                    "epoch %3d/%d  train %.4f  validation %.4f  (hips %.2f, knees %.2f, ankles "
                    "%.2f: sum %.2f; toes %.2f, neck and shoulders %.2f, spine and chest %.2f cm; "
                    "contact %.0f %%)  %.1f s",
                    e + 1, o->epochs, rep->train_loss[e], v.loss, v.hips_cm, v.knee_cm,
                    v.ankle_cm, pr_joint_sum_cm(&rep->validation_by_epoch[e]), v.toes_cm,
                    v.torso_cm, v.back_cm, 100.0 * v.contact_accuracy,
                    (double)(u_time_now_ns() - start) * 1e-9);
        /* Nothing after the epoch chosen beforehand can be kept (the schedule still spans
         * every epoch asked for, so the model is the same as after a full run). */
        if (o->keep_epoch > 0 && e + 1 == o->keep_epoch)
            break;
    }
    memcpy(m->params, best, (size_t)t.n * sizeof *best);
done:
    free(a);
    batch_fini(&b);
    free(best);
    free(t.grad);
    free(t.adam_m);
    free(t.adam_v);
    return res;
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
    struct holdout hold;
    if ((res = parse_holdout(o.holdout, &hold, err)) != EM_OK)
        return res;
    snprintf(rep->holdout, sizeof rep->holdout, "%s", o.holdout);
    struct rng rng = {o.seed};
    struct corpus c;
    if ((res = load_corpus(&o, &rng, &c, err)) != EM_OK)
        return res;
    struct split sp;
    res = make_split(&c, &hold, o.row_stride, &sp, rep, err);
    if (res == EM_OK && sp.train_count == 0)
        res = em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                      "%s: no training clips left after holding out subjects %s",
                      o.clip_dir ? o.clip_dir : "train", o.holdout);
    if (res == EM_OK)
        res = train_split(&o, &c, &sp, out_model, rep, err);
    if (res == EM_OK) {
        pr_model_pack(out_model); /* the weights as a saved and loaded model has them */
        snprintf(out_model->holdout, sizeof out_model->holdout, "%s",
                 strcmp(o.holdout, "none") == 0 ? "" : o.holdout);
        snprintf(out_model->note, sizeof out_model->note,
                 "embody train: %d clips, %.1f min; holdout %s; seed %llu; %d epochs, best %d%s",
                 rep->train_clips, rep->train_minutes, o.holdout, (unsigned long long)o.seed,
                 o.epochs, rep->best_epoch, o.loss == PR_LOSS_JOINTS ? "; joints loss" : "");
    }
    split_fini(&sp);
    corpus_fini(&c);
    return res;
}

/* ---- Leave-people-out cross-validation ---- */

struct subject_minutes {
    int subject;
    double minutes;
};

static int
compare_subject_minutes(const void *pa, const void *pb)
{
    const struct subject_minutes *a = pa, *b = pb;
    if (a->minutes != b->minutes)
        return a->minutes > b->minutes ? -1 : 1;
    return a->subject - b->subject;
}

/* Deals the subjects into folds, most minutes first, each to the fold with the fewest
 * minutes so far, so that folds hold about the same amount of motion. */
static enum em_result
deal_folds(const struct corpus *c, int folds, struct pr_cv_report *out, struct em_error *err)
{
    struct subject_minutes s[PR_MAX_SUBJECTS];
    int n = 0;
    for (int i = 0; i < c->list.count; ++i) {
        int k = 0;
        while (k < n && s[k].subject != c->list.e[i].subject)
            ++k;
        if (k == n) {
            if (n == PR_MAX_SUBJECTS)
                return em_fail(err, EM_ERROR_LIMIT, "cross-validation: more than %d subjects",
                               PR_MAX_SUBJECTS);
            s[n++] = (struct subject_minutes){c->list.e[i].subject, 0.0};
        }
        s[k].minutes += c->minutes[i];
    }
    if (n < folds)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "cross-validation: %d folds but only %d subjects", folds, n);
    qsort(s, (size_t)n, sizeof *s, compare_subject_minutes);
    out->fold_count = folds;
    for (int i = 0; i < n; ++i) {
        int best = 0;
        for (int f = 1; f < folds; ++f)
            if (out->fold[f].minutes < out->fold[best].minutes)
                best = f;
        struct pr_fold_report *f = &out->fold[best];
        if (f->subject_count == PR_MAX_HOLDOUT_SUBJECTS)
            return em_fail(err, EM_ERROR_LIMIT, "cross-validation: a fold of more than %d subjects",
                           PR_MAX_HOLDOUT_SUBJECTS);
        f->subject[f->subject_count++] = s[i].subject;
        f->minutes += s[i].minutes;
    }
    return EM_OK;
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
        score_row(m, &c->data, i, a, &row);
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
        validation_divide(&v, (double)sp->val_count);
    f->unseen = (struct pr_joint_errors){v.hips_cm, v.knee_cm, v.ankle_cm, v.toes_cm,
                                         v.contact_accuracy};
    struct validation s;
    validate(m, &c->data, sp->seen, sp->seen_count, a, &s);
    f->seen = (struct pr_joint_errors){s.hips_cm, s.knee_cm, s.ankle_cm, s.toes_cm,
                                       s.contact_accuracy};
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

enum em_result
pr_cross_validate(const struct pr_train_options *options, int folds, struct pr_cv_report *out,
                  struct em_error *err)
{
    memset(out, 0, sizeof *out);
    if (folds < 2 || folds > PR_MAX_FOLDS)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "cross-validation: %d folds; expected 2 to %d", folds, PR_MAX_FOLDS);
    struct pr_train_options o;
    resolve(options, &o);
    struct rng rng = {o.seed};
    struct corpus c;
    enum em_result res = load_corpus(&o, &rng, &c, err);
    if (res != EM_OK)
        return res;
    res = deal_folds(&c, folds, out, err);
    struct activations *a = calloc(1, sizeof *a);
    struct pr_joint_errors *by_epoch = calloc(PR_MAX_EPOCHS, sizeof *by_epoch);
    if (res == EM_OK && !by_epoch)
        res = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "train: out of memory");
    if (res == EM_OK && !a)
        res = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "train: out of memory");
    if (a)
        keep_all(a);
    for (int f = 0; f < folds && res == EM_OK; ++f) {
        struct pr_fold_report *fr = &out->fold[f];
        struct holdout hold = {.count = fr->subject_count};
        char text[PR_HOLDOUT_MAX] = "";
        for (int i = 0; i < fr->subject_count; ++i) {
            hold.subject[i] = fr->subject[i];
            const size_t used = strlen(text);
            snprintf(text + used, sizeof text - used, "%s%02d", i ? "," : "", fr->subject[i]);
        }
        struct pr_train_report rep = {0};
        snprintf(rep.holdout, sizeof rep.holdout, "%s", text);
        struct split sp;
        struct pr_model m;
        res = make_split(&c, &hold, o.row_stride, &sp, &rep, err);
        if (res != EM_OK)
            break;
        report_line(&o, "fold %d/%d: subjects %s left out", f + 1, folds, text);
        res = pr_model_init(&m, o.hidden, err);
        if (res == EM_OK)
            res = train_split(&o, &c, &sp, &m, &rep, err);
        for (long k = 0; k < sp.train_count && res == EM_OK; ++k) {
            const int subject = c.list.e[c.data.clip[sp.train[k]]].subject;
            int i = 0;
            while (i < fr->trained_subject_count && fr->trained_subject[i] != subject)
                ++i;
            if (i == fr->trained_subject_count && i < PR_MAX_SUBJECTS)
                fr->trained_subject[fr->trained_subject_count++] = subject;
        }
        if (res == EM_OK) {
            fr->clips = rep.validation_clips;
            fr->best_epoch = rep.best_epoch;
            score_fold(&c, &sp, &m, a, fr, out);
            add_errors(&out->unseen, &fr->unseen, 1.0 / folds);
            add_errors(&out->seen, &fr->seen, 1.0 / folds);
            out->epochs = rep.epochs_run;
            for (int e = 0; e < rep.epochs_run; ++e) {
                out->validation_loss[e] += rep.validation_loss[e] / folds;
                add_errors(&by_epoch[e], &rep.validation_by_epoch[e], 1.0 / folds);
            }
        }
        pr_model_fini(&m);
        split_fini(&sp);
    }
    for (int e = 0; e < out->epochs; ++e) {
        out->unseen_by_epoch[e] = by_epoch[e];
        if (out->best_epoch == 0 ||
            pr_joint_sum_cm(&by_epoch[e]) < pr_joint_sum_cm(&by_epoch[out->best_epoch - 1]))
            out->best_epoch = e + 1;
    }
    if (out->best_epoch > 0)
        out->unseen_at_best = by_epoch[out->best_epoch - 1];
    free(by_epoch);
    for (int i = 0; i < out->category_count; ++i) {
        struct pr_category_score *cat = &out->category[i];
        const double n = cat->rows > 0 ? (double)cat->rows : 1.0;
        cat->hips_cm /= n;
        cat->knee_cm /= n;
        cat->ankle_cm /= n;
        cat->toes_cm /= n;
        for (int k = 0; k < c.list.count; ++k)
            if (strcmp(c.list.e[k].category, cat->name) == 0) {
                cat->clips++;
                cat->minutes += c.minutes[k];
            }
    }
    if (out->category_count > 1)
        qsort(out->category, (size_t)out->category_count, sizeof *out->category,
              compare_categories);
    free(a);
    corpus_fini(&c);
    return res;
}
