/*
 * Faults in the evaluation (src/eval/eval.h, src/fault/fault.h): `--fault` and
 * `--seed` put real trackers' faults into every clip's stream, and `--fault-table` runs the
 * typical faults on every named setup and prints what each costs (one table of setups x
 * faults), then checks that the body degrades gracefully: a pelvis tracker drifting 30
 * degrees does not turn the whole body, and a lost tracker falls back to the estimate
 * without it within EV_FALLBACK_TARGET_S.
 */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "embody/prior.h"
#include "ev_internal.h"
#include "util/u_text.h"

/* ---- options ---- */

enum em_result
ev_faults_option(const char *name, const char *value, struct ev_options *options,
                 struct em_error *err)
{
    if (strcmp(name, "--seed") == 0) {
        long seed = 0;
        if (!u_parse_int(value, 0, 2147483647L, &seed))
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "--seed: expected a whole number from 0 to 2147483647, got \"%s\"",
                           value);
        options->faults.seed = (uint64_t)seed;
        return EM_OK;
    }
    return flt_set_add(&options->faults, value, "--fault", err);
}

enum em_result
ev_faults_check_setup(const struct ev_options *options, struct em_error *err)
{
    if (options->tracker_setups)
        return EM_OK; /* every setup runs; a fault hits those that carry its devices */
    for (int i = 0; i < options->faults.count; ++i) {
        const struct flt_fault *f = &options->faults.fault[i];
        const uint32_t trackers = (f->devices >> EM_DEVICE_COUNT) & EM_TRACKER_ALL;
        const bool any_device = (f->devices & ((1u << EM_DEVICE_COUNT) - 1u)) != 0;
        if (trackers && !any_device && !(trackers & options->trackers))
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "--fault %s: the setup has none of the trackers it names; give "
                           "them with --trackers (4, 6, 8, 11 or a list)",
                           f->text);
    }
    return EM_OK;
}

/* ---- the table's setups and faults ---- */

#define ROW_COUNT 5
static const struct {
    const char *name;
    uint32_t mask;
} k_rows[ROW_COUNT] = {
    {"3", ST_SETUP_3}, {"4", ST_SETUP_4}, {"6", ST_SETUP_6}, {"8", ST_SETUP_8}, {"11", ST_SETUP_11},
};

/* One fault of each kind at a size real trackers show (none first): an IMU tracker whose
 * heading drifts a bad half degree a second, a noisy optical fix, a wireless tracker's
 * delay, occlusions a tenth of the time, a strap 3 cm off and a tracker turned 15 degrees
 * on it, and the feet's trackers assigned to the wrong sides. */
#define FAULT_COLUMNS 8
static const char *const k_typical[FAULT_COLUMNS] = {
    NULL,
    "drift:trackers:30",
    "noise:trackers:5",
    "latency:trackers:50",
    "dropout:trackers:10%",
    "offset:trackers:3",
    "turn:trackers:15",
    "swap:feet",
};
static const char *const k_headers[FAULT_COLUMNS] = {
    "none",        "drift 30 deg/min", "noise 5 mm",  "latency 50 ms",
    "dropout 10%", "offset 3 cm",      "turn 15 deg", "swap feet",
};

#define EV_DRIFT_TAIL_S 0.25

struct cell {
    int clips;
    double sum_cm[EV_GROUP_COUNT];
};

/* A check's figure over clips: mean and worst, and how many clips never got there. */
struct figure {
    int clips, never;
    double sum, worst;
    char worst_clip[256];
};

static void
figure_add(struct figure *f, double v, const char *clip)
{
    if (!isfinite(v)) {
        f->never++;
        return;
    }
    f->clips++;
    f->sum += v;
    if (f->clips == 1 || v > f->worst) {
        f->worst = v;
        snprintf(f->worst_clip, sizeof f->worst_clip, "%s", clip);
    }
}

#define DRIFT_SETUPS 3
#define FALLBACK_CASES 2
static const uint32_t k_drift_setups[DRIFT_SETUPS] = {ST_SETUP_4, ST_SETUP_6, ST_SETUP_11};
/* The feet's case has no target: lost feet stay planted where they were (where the true
 * feet were) until they step, while the estimate without them has put its feet where its
 * own steps went; both can be right, so the time only says how long the two disagree. */
static const struct {
    const char *what;
    uint32_t setup, dropped;
    bool has_target;
} k_fallbacks[FALLBACK_CASES] = {
    {"setup 4 loses the pelvis tracker: to setup 3", ST_SETUP_4, ST_SETUP_4, true},
    {"setup 6 loses both foot trackers: to setup 4", ST_SETUP_6, ST_SETUP_6 & ~ST_SETUP_4, false},
};

struct table {
    struct cell cell[ROW_COUNT][FAULT_COLUMNS];
    struct figure hips_turn[DRIFT_SETUPS], shoulders_turn[DRIFT_SETUPS];
    struct figure fallback[FALLBACK_CASES];
    int clip_count, failed;
};

/* ---- one run of a clip ---- */

/* The clip reconstructed (known body) from its stream with only the trackers of `mask`
 * and the faults of `faults`; `work` holds the stream's frames while it runs. */
static enum em_result
run_variant(const struct ev_clip *clip, struct st_stream *work, uint32_t mask,
            const struct flt_set *faults, const struct pr_model *prior, struct ev_motion *out,
            struct em_error *err)
{
    const int n = clip->stream.frame_count;
    memcpy(work->frames, clip->stream.frames, (size_t)n * sizeof *work->frames);
    work->frame_count = n;
    for (int i = 0; i < n; ++i)
        work->frames[i].tracker_present &= mask;
    enum em_result r = flt_apply_frames(faults, work->frames, n, err);
    if (r == EM_OK)
        r = ev_clip_reconstruct_stream(clip, work, EV_KNOWN_BODY, prior, out, NULL, NULL, err);
    else
        memset(out, 0, sizeof *out);
    return r;
}

/* The horizontal heading (degrees) of the line from joint b to joint a at frame f. */
static double
heading_deg(const struct ev_motion *m, int f, enum ev_joint a, enum ev_joint b)
{
    const double *pa = m->position_m[f][a], *pb = m->position_m[f][b];
    return atan2(pa[2] - pb[2], pa[0] - pb[0]) * 180.0 / 3.14159265358979323846;
}

static double
angle_between_deg(double a, double b)
{
    double d = fmod(fabs(a - b), 360.0);
    return d > 180.0 ? 360.0 - d : d;
}

/* The mean over the clip's last EV_DRIFT_TAIL_S of how far the line a-b of `faulted` turned
 * from that of `clean`. */
static double
tail_turn_deg(const struct ev_motion *faulted, const struct ev_motion *clean, enum ev_joint a,
              enum ev_joint b)
{
    const int n = clean->frame_count;
    const int tail = (int)fmax(1.0, fmin((double)n, EV_DRIFT_TAIL_S * clean->fps));
    double sum = 0.0;
    for (int f = n - tail; f < n; ++f)
        sum += angle_between_deg(heading_deg(faulted, f, a, b), heading_deg(clean, f, a, b));
    return sum / tail;
}

/* Seconds from frame `from` until the joints `joints` (bits of enum ev_joint) of `a` are
 * all within EV_FALLBACK_NEAR_CM of those of `b`; NaN when they never are. */
static double
time_to_meet_s(const struct ev_motion *a, const struct ev_motion *b, int from, uint32_t joints)
{
    for (int f = from; f < a->frame_count; ++f) {
        bool near = true;
        for (int j = 0; j < EV_JOINT_COUNT && near; ++j) {
            if (!(joints & (1u << j)))
                continue;
            const double *p = a->position_m[f][j], *q = b->position_m[f][j];
            near = 100.0 * sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) +
                                (p[2] - q[2]) * (p[2] - q[2])) <=
                   EV_FALLBACK_NEAR_CM;
        }
        if (near)
            return (f - from) / a->fps;
    }
    return (double)NAN;
}

enum em_result
ev_stream_back_and_forth(const struct st_stream *stream, double seconds, uint32_t mask,
                         struct st_stream *out, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    const int n = stream->frame_count;
    if (n < 2)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "a stream of %d rows cannot be played", n);
    const double step_s = (stream->frames[n - 1].time_s - stream->frames[0].time_s) / (n - 1);
    const int count = (int)ceil(seconds / step_s - 1e-6) + 1;
    out->frames = aligned_alloc(16, (size_t)count * sizeof *out->frames);
    if (!out->frames)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "out of memory");
    out->frame_count = out->capacity = count;
    for (int k = 0; k < count; ++k) {
        const int period = 2 * (n - 1), at = k % period;
        out->frames[k] = stream->frames[at < n ? at : period - at];
        out->frames[k].time_s = stream->frames[0].time_s + k * step_s;
        out->frames[k].tracker_present &= mask;
    }
    return EM_OK;
}

/* `stream` reconstructed (known body) with `faults`, into `out` (initialised here). The
 * clip gives the body; a stream longer than the clip is scored against nothing, so the
 * clip is copied with its truth's length set to the stream's (its truth is not read). */
static enum em_result
run_stream(const struct ev_clip *clip, const struct st_stream *stream, const struct flt_set *faults,
           const struct pr_model *prior, struct ev_motion *out, struct em_error *err)
{
    struct st_stream work = *stream;
    work.frames = aligned_alloc(16, (size_t)stream->frame_count * sizeof *work.frames);
    if (!work.frames) {
        memset(out, 0, sizeof *out);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    memcpy(work.frames, stream->frames, (size_t)stream->frame_count * sizeof *work.frames);
    struct ev_clip *shape = malloc(sizeof *shape);
    enum em_result r = shape ? flt_apply_frames(faults, work.frames, work.frame_count, err)
                             : em_fail(err, EM_ERROR_OUT_OF_MEMORY, "out of memory");
    if (r == EM_OK) {
        *shape = *clip;
        shape->truth.frame_count = stream->frame_count;
        r = ev_clip_reconstruct_stream(shape, &work, EV_KNOWN_BODY, prior, out, NULL, NULL, err);
    } else {
        memset(out, 0, sizeof *out);
    }
    free(shape);
    free(work.frames);
    return r;
}

enum em_result
ev_faults_drift_turn(const struct ev_clip *clip, uint32_t setup, const struct pr_model *prior,
                     double *out_hips_deg, double *out_shoulders_deg, struct em_error *err)
{
    struct st_stream stream;
    enum em_result r = ev_stream_back_and_forth(
        &clip->stream, 60.0 * EV_DRIFT_DEG / EV_DRIFT_DEG_PER_MIN, setup, &stream, err);
    if (r != EM_OK)
        return r;
    struct flt_set drift = {.count = 1};
    drift.fault[0] = (struct flt_fault){.kind = FLT_DRIFT,
                                        .devices = FLT_TRACKER_BIT(EM_TRACKER_PELVIS),
                                        .amount = EV_DRIFT_DEG_PER_MIN};
    const struct flt_set none = {0};
    struct ev_motion clean, drifted;
    r = run_stream(clip, &stream, &none, prior, &clean, err);
    if (r == EM_OK)
        r = run_stream(clip, &stream, &drift, prior, &drifted, err);
    if (r == EM_OK) {
        *out_hips_deg = tail_turn_deg(&drifted, &clean, EV_LEFT_UPPER_LEG, EV_RIGHT_UPPER_LEG);
        *out_shoulders_deg = tail_turn_deg(&drifted, &clean, EV_LEFT_UPPER_ARM, EV_RIGHT_UPPER_ARM);
    }
    ev_motion_fini(&drifted);
    ev_motion_fini(&clean);
    st_stream_fini(&stream);
    return r;
}

enum em_result
ev_faults_fallback_s(const struct ev_clip *clip, uint32_t setup, uint32_t dropped,
                     const struct pr_model *prior, double *out_s, struct em_error *err)
{
    const int n = clip->stream.frame_count, from = n / 2;
    const double t0 = clip->stream.frames[0].time_s;
    struct flt_set lose = {.count = 1};
    lose.fault[0] = (struct flt_fault){
        .kind = FLT_DROPOUT,
        .devices = dropped << EM_DEVICE_COUNT,
        .window = true,
        .window_from_s = clip->stream.frames[from].time_s - t0 - 1e-6,
        .window_to_s = FLT_MAX_WINDOW_S,
    };
    uint32_t joints = 0;
    if (dropped & EM_TRACKER_BIT(EM_TRACKER_PELVIS))
        joints |= 1u << EV_HIPS;
    if (dropped & EM_TRACKER_BIT(EM_TRACKER_LEFT_FOOT))
        joints |= 1u << EV_LEFT_FOOT;
    if (dropped & EM_TRACKER_BIT(EM_TRACKER_RIGHT_FOOT))
        joints |= 1u << EV_RIGHT_FOOT;
    const struct flt_set none = {0};
    struct ev_motion lost = {0}, estimate = {0};
    struct st_stream s_with = {0}, s_without = {0};
    const double seconds = (n - 1) / clip->truth.fps;
    enum em_result r = ev_stream_back_and_forth(&clip->stream, seconds, setup, &s_with, err);
    if (r == EM_OK)
        r = ev_stream_back_and_forth(&clip->stream, seconds, setup & ~dropped, &s_without, err);
    if (r == EM_OK)
        r = run_stream(clip, &s_with, &lose, prior, &lost, err);
    if (r == EM_OK)
        r = run_stream(clip, &s_without, &none, prior, &estimate, err);
    if (r == EM_OK)
        *out_s = time_to_meet_s(&lost, &estimate, from, joints);
    ev_motion_fini(&lost);
    ev_motion_fini(&estimate);
    st_stream_fini(&s_with);
    st_stream_fini(&s_without);
    return r;
}

/* ---- the checks of one clip ---- */

static enum em_result
drift_checks(const struct ev_clip *clip, const struct pr_model *prior, struct table *t,
             const char *file, struct em_error *err)
{
    for (int s = 0; s < DRIFT_SETUPS; ++s) {
        double hips = 0.0, shoulders = 0.0;
        const enum em_result r =
            ev_faults_drift_turn(clip, k_drift_setups[s], prior, &hips, &shoulders, err);
        if (r != EM_OK)
            return r;
        figure_add(&t->hips_turn[s], hips, file);
        figure_add(&t->shoulders_turn[s], shoulders, file);
    }
    return EM_OK;
}

static enum em_result
fallback_checks(const struct ev_clip *clip, const struct pr_model *prior, struct table *t,
                const char *file, struct em_error *err)
{
    for (int c = 0; c < FALLBACK_CASES; ++c) {
        double seconds = 0.0;
        const enum em_result r = ev_faults_fallback_s(clip, k_fallbacks[c].setup,
                                                      k_fallbacks[c].dropped, prior, &seconds, err);
        if (r != EM_OK)
            return r;
        figure_add(&t->fallback[c], seconds, file);
    }
    return EM_OK;
}

/* Every cell and check on one clip. */
static enum em_result
run_clip(const char *path, const char *file, const struct ev_options *o,
         const struct pr_model *prior, struct table *t, struct em_error *err)
{
    struct ev_clip clip;
    enum em_result r = ev_clip_load_for(path, o, &clip, err);
    if (r != EM_OK)
        return r;
    struct st_stream work = {0};
    work.frames = aligned_alloc(16, (size_t)clip.stream.frame_count * sizeof *work.frames);
    if (!work.frames) {
        ev_clip_fini(&clip);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    if ((clip.stream.frames[0].tracker_present & EM_TRACKER_ALL) != EM_TRACKER_ALL)
        r = em_fail(err, EM_ERROR_UNSUPPORTED, "%s: the clip lacks the trackers' joints", path);
    for (int s = 0; s < ROW_COUNT && r == EM_OK; ++s)
        for (int c = 0; c < FAULT_COLUMNS && r == EM_OK; ++c) {
            struct flt_set faults = {.seed = o->faults.seed};
            if (k_typical[c]) {
                r = flt_set_add(&faults, k_typical[c], "fault table", err);
                const uint32_t hit = (faults.fault[0].devices >> EM_DEVICE_COUNT) & k_rows[s].mask;
                if (r != EM_OK || !hit)
                    continue;
            }
            struct ev_motion ours;
            r = run_variant(&clip, &work, k_rows[s].mask, &faults, prior, &ours, err);
            if (r == EM_OK) {
                struct ev_scores scores;
                ev_score(&ours, &clip.truth, &scores);
                t->cell[s][c].clips++;
                for (int g = 0; g < EV_GROUP_COUNT; ++g)
                    t->cell[s][c].sum_cm[g] += scores.mpjpe_cm[g];
            }
            ev_motion_fini(&ours);
        }
    if (r == EM_OK)
        r = drift_checks(&clip, prior, t, file, err);
    if (r == EM_OK)
        r = fallback_checks(&clip, prior, t, file, err);
    free(work.frames);
    ev_clip_fini(&clip);
    return r;
}

/* ---- printing ---- */

static void
print_table(const struct table *t, FILE *out)
{
    fprintf(out, "| setup |");
    for (int c = 0; c < FAULT_COLUMNS; ++c)
        fprintf(out, " %-17s |", k_headers[c]);
    fprintf(out, "\n|-------|");
    for (int c = 0; c < FAULT_COLUMNS; ++c)
        fprintf(out, "-------------------|");
    fprintf(out, "\n");
    for (int s = 0; s < ROW_COUNT; ++s) {
        fprintf(out, "| %5s |", k_rows[s].name);
        for (int c = 0; c < FAULT_COLUMNS; ++c) {
            const struct cell *cell = &t->cell[s][c];
            if (cell->clips == 0) {
                fprintf(out, " %-17s |", "-");
                continue;
            }
            char text[64];
            snprintf(text, sizeof text, "%.2f (%.2f)", cell->sum_cm[EV_GROUP_ALL] / cell->clips,
                     cell->sum_cm[EV_GROUP_LOWER] / cell->clips);
            fprintf(out, " %-17s |", text);
        }
        fprintf(out, "\n");
    }
}

/* One check's row; a target that is NaN is shown but not judged (true). */
static bool
print_figure(FILE *out, const char *what, const struct figure *f, const char *unit, double target)
{
    const double mean = f->clips ? f->sum / f->clips : (double)NAN;
    const bool judged = isfinite(target);
    const bool met = !judged || (f->clips > 0 && f->never == 0 && f->worst <= target);
    char never[32] = "";
    if (f->never)
        snprintf(never, sizeof never, ", %d never", f->never);
    char goal[32] = "-";
    if (judged)
        snprintf(goal, sizeof goal, "<= %.2f %s", target, unit);
    fprintf(out, "| %-48s | %6.2f %-3s | %6.2f %-3s (%s%s) | %-12s | %-7s |\n", what, mean, unit,
            f->clips ? f->worst : (double)NAN, unit, f->clips ? f->worst_clip : "-", never, goal,
            !judged ? "info"
            : met   ? "met"
                    : "NOT MET");
    return met;
}

static int
print_checks(const struct table *t, FILE *out)
{
    int missed = 0;
    char what[128];
    fprintf(out,
            "\n| %-48s | mean       | worst (clip)                          | target       "
            "| verdict |\n",
            "graceful degradation");
    fprintf(out, "|--------------------------------------------------|------------|"
                 "---------------------------------------|--------------|---------|\n");
    static const char *const setup_names[DRIFT_SETUPS] = {"4", "6", "11"};
    for (int s = 0; s < DRIFT_SETUPS; ++s) {
        snprintf(what, sizeof what, "setup %s, pelvis drifted 30 deg: hips turn", setup_names[s]);
        missed += !print_figure(out, what, &t->hips_turn[s], "deg", EV_DRIFT_TURN_TARGET_DEG);
        snprintf(what, sizeof what, "setup %s, pelvis drifted 30 deg: shoulders turn",
                 setup_names[s]);
        missed += !print_figure(out, what, &t->shoulders_turn[s], "deg", EV_DRIFT_TURN_TARGET_DEG);
    }
    for (int c = 0; c < FALLBACK_CASES; ++c)
        missed += !print_figure(out, k_fallbacks[c].what, &t->fallback[c], "s",
                                k_fallbacks[c].has_target ? EV_FALLBACK_TARGET_S : (double)NAN);
    return missed;
}

/* The table to the observer (--plot): the heat map. */
static bool
observe_table(const struct table *t, const struct ev_options *o)
{
    if (!o->plot_dir || !o->observer || !o->observer->faults)
        return true;
    const char *rows[ROW_COUNT];
    double mpjpe[ROW_COUNT][FAULT_COLUMNS], lower[ROW_COUNT][FAULT_COLUMNS];
    for (int s = 0; s < ROW_COUNT; ++s) {
        rows[s] = k_rows[s].name;
        for (int c = 0; c < FAULT_COLUMNS; ++c) {
            const struct cell *cell = &t->cell[s][c];
            mpjpe[s][c] = cell->clips ? cell->sum_cm[EV_GROUP_ALL] / cell->clips : (double)NAN;
            lower[s][c] = cell->clips ? cell->sum_cm[EV_GROUP_LOWER] / cell->clips : (double)NAN;
        }
    }
    struct em_error err = {{0}};
    if (o->observer->faults(o, ROW_COUNT, rows, FAULT_COLUMNS, k_headers, &mpjpe[0][0],
                            &lower[0][0], &err) == EM_OK)
        return true;
    fprintf(stderr, "embody eval: --plot: %s\n", err.message);
    return false;
}

/* ---- the command ---- */

static int
is_clip(const struct dirent *e)
{
    const size_t n = strlen(e->d_name);
    return n > 4 && strcmp(e->d_name + n - 4, ".bvh") == 0;
}

int
ev_faults_main(const struct ev_options *options)
{
    struct ev_options o;
    ev_options_resolve(options, &o);
    struct dirent **names = NULL;
    const int count = scandir(o.clip_dir, &names, is_clip, alphasort);
    if (count <= 0) {
        fprintf(stderr, "embody eval: %s: no clips (*.bvh files) in the folder\n", o.clip_dir);
        free(names);
        return 2;
    }
    struct pr_model model;
    char model_path[1024] = "";
    const bool procedural = o.body_mode && strcmp(o.body_mode, "procedural") == 0;
    const bool have_prior =
        !procedural && ev_prior_load(&o, &model, model_path, sizeof model_path);
    struct table *t = calloc(1, sizeof *t);
    int status = t ? 0 : 2;
    for (int i = 0; i < count && t; ++i) {
        if (!ev_clip_of_subjects(names[i]->d_name, o.subjects))
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", o.clip_dir, names[i]->d_name);
        struct em_error err = {{0}};
        t->clip_count++;
        if (run_clip(path, names[i]->d_name, &o, have_prior ? &model : NULL, t, &err) != EM_OK) {
            fprintf(stderr, "embody eval: %s\n", err.message);
            t->failed++;
        } else if (!o.quiet) {
            fprintf(stderr, "[%d/%d] %s\n", i + 1, count, names[i]->d_name);
        }
    }
    if (t) {
        printf("## What trackers' faults cost (setups x faults), %d clips of %s\n\n",
               t->clip_count - t->failed, o.clip_dir);
        printf("Known body, the %s%s; each cell MPJPE cm (lower body cm), means over clips; - "
               "where the setup has none of the fault's trackers. Faults on every body tracker "
               "of the setup (swap: the feet's), seed %llu.\n\n",
               have_prior ? "learned prior " : "procedural estimate", have_prior ? model_path : "",
               (unsigned long long)o.faults.seed);
        print_table(t, stdout);
        if (!observe_table(t, &o))
            t->failed++;
        const int missed = print_checks(t, stdout);
        printf("\n%d check%s not met\n", missed, missed == 1 ? "" : "s");
        status = t->failed > 0 ? 1 : 0;
    }
    fflush(stdout);
    for (int i = 0; i < count; ++i)
        free(names[i]);
    free(names);
    free(t);
    if (have_prior)
        pr_model_fini(&model);
    return status;
}
