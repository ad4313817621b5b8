/*
 * `embody eval --stages [DIR]`: how much accuracy is lost after the network. For every clip
 * and mode, the learned prior's network is run alone from the clip's 3-point stream (its
 * raw, unfiltered output, decoded into the room as the body decodes it: src/body/b_prior.c,
 * predict() and decode()), and beside it the body the evaluation runs (ev_clip_make_body,
 * body_update, ev_body_scored_positions), which smooths, filters, fuses (b_fuse.c) and
 * solves that output into the skeleton. Both are scored against the truth on the same rows
 * for the joints the network predicts (enum ev_stage_group): the network's column is what
 * it knows, the body's what reaches the player.
 *
 * Rows: the body predicts from its first sample on (the history repeats its oldest sample
 * until it spans PR_HISTORY_FRAMES), so every row counts here too, the rows `embody eval`
 * scores. Means: over rows per clip (each joint has every row), then over clips (each
 * clip counts once), as the rest of the evaluation.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "embody/body.h"
#include "embody/prior.h"
#include "eval/eval.h"
#include "ev_internal.h"

static const char *const STAGE_NAMES[EV_STAGE_COUNT] = {
    "hips", "knees", "ankles", "toes", "neck", "shoulders", "elbows", "all predicted"};
static const char *const STAGE_KEYS[EV_STAGE_COUNT] = {
    "hips", "knees", "ankles", "toes", "neck", "shoulders", "elbows", "all_predicted"};

/* Whether a model whose decoded pose says `pose` predicts group g's joints. */
static bool
predicts_group(const struct pr_truth *pose, int g)
{
    if (g == EV_STAGE_NECK || g == EV_STAGE_SHOULDERS)
        return pose->has_torso;
    return g != EV_STAGE_ELBOWS || pose->has_elbows;
}

const char *
ev_stage_group_name(enum ev_stage_group group)
{
    return group >= 0 && group < EV_STAGE_COUNT ? STAGE_NAMES[group] : "none";
}

int
ev_stage_group_of(enum ev_joint joint)
{
    switch (joint) {
    case EV_HIPS: return EV_STAGE_HIPS;
    case EV_LEFT_LOWER_LEG:
    case EV_RIGHT_LOWER_LEG: return EV_STAGE_KNEES;
    case EV_LEFT_FOOT:
    case EV_RIGHT_FOOT: return EV_STAGE_ANKLES;
    case EV_LEFT_TOES:
    case EV_RIGHT_TOES: return EV_STAGE_TOES;
    case EV_NECK: return EV_STAGE_NECK;
    case EV_LEFT_UPPER_ARM:
    case EV_RIGHT_UPPER_ARM: return EV_STAGE_SHOULDERS;
    case EV_LEFT_LOWER_ARM:
    case EV_RIGHT_LOWER_ARM: return EV_STAGE_ELBOWS;
    default: return -1;
    }
}

static void
put3(const float *p, double *out)
{
    for (int k = 0; k < 3; ++k)
        out[k] = (double)p[k];
}

/* The network's prediction from the history's latest sample, decoded into the room as the
 * body decodes it (same head position, heading, height and floor), into the scored joints
 * it predicts (`out_has`). False, leaving `out_m` as it was, when an output is not finite
 * (the body then keeps its last prediction too). */
static bool
network_joints(const struct pr_model *model, const struct pr_history *history,
               const struct body_desc *desc, double out_m[EV_JOINT_COUNT][3],
               bool out_has[EV_JOINT_COUNT])
{
    float features[PR_FEATURE_COUNT], yaw_rad = 0.0f;
    pr_features(history, desc->height_m, desc->floor_height_m, features, &yaw_rad);
    float outputs[PR_OUTPUT_COUNT] = {0}; /* a model of output set 1 fills no torso */
    pr_model_infer(model, features, outputs);
    for (int i = 0; i < model->output_count; ++i)
        if (!isfinite(outputs[i]))
            return false;
    struct pr_truth pose;
    float contact[2];
    pr_decode_outputs(outputs, model->output_count,
                      history->sample[history->newest].head_position_m, yaw_rad,
                      desc->height_m, desc->floor_height_m, &pose, contact);
    put3(pose.hips_m, out_m[EV_HIPS]);
    static const enum ev_joint knee[2] = {EV_LEFT_LOWER_LEG, EV_RIGHT_LOWER_LEG};
    static const enum ev_joint ankle[2] = {EV_LEFT_FOOT, EV_RIGHT_FOOT};
    static const enum ev_joint toes[2] = {EV_LEFT_TOES, EV_RIGHT_TOES};
    for (int s = 0; s < 2; ++s) {
        put3(pose.knee_m[s], out_m[knee[s]]);
        put3(pose.ankle_m[s], out_m[ankle[s]]);
        put3(pose.toes_m[s], out_m[toes[s]]);
    }
    static const enum ev_joint shoulder[2] = {EV_LEFT_UPPER_ARM, EV_RIGHT_UPPER_ARM};
    static const enum ev_joint elbow[2] = {EV_LEFT_LOWER_ARM, EV_RIGHT_LOWER_ARM};
    if (pose.has_torso) {
        put3(pose.neck_m, out_m[EV_NECK]);
        for (int s = 0; s < 2; ++s)
            put3(pose.upper_arm_m[s], out_m[shoulder[s]]);
    }
    for (int s = 0; s < 2 && pose.has_elbows; ++s)
        put3(pose.lower_arm_m[s], out_m[elbow[s]]);
    for (int j = 0; j < EV_JOINT_COUNT; ++j) {
        const int g = ev_stage_group_of((enum ev_joint)j);
        out_has[j] = g >= 0 && predicts_group(&pose, g);
    }
    return true;
}

/* Per-joint sums of the distances (cm) over the rows counted. */
struct stage_sums {
    double network[EV_JOINT_COUNT], body[EV_JOINT_COUNT];
};

static void
add_row(struct stage_sums *sums, const double net_m[EV_JOINT_COUNT][3],
        const double body_m[EV_JOINT_COUNT][3], const double truth_m[EV_JOINT_COUNT][3],
        const bool has[EV_JOINT_COUNT])
{
    double net_cm[EV_JOINT_COUNT], body_cm[EV_JOINT_COUNT];
    ev_frame_joint_error_cm(net_m, truth_m, net_cm);
    ev_frame_joint_error_cm(body_m, truth_m, body_cm);
    for (int j = 0; j < EV_JOINT_COUNT; ++j)
        if (has[j]) {
            sums->network[j] += net_cm[j];
            sums->body[j] += body_cm[j];
        }
}

/* The groups' means from the per-joint sums: every predicted joint has every counted row,
 * so a group's mean of joint means is its mean over (row, joint) pairs. */
static void
finish_groups(const struct stage_sums *sums, const bool has[EV_JOINT_COUNT],
              struct ev_stage_result *out)
{
    double net[EV_STAGE_COUNT] = {0}, body[EV_STAGE_COUNT] = {0};
    int joints[EV_STAGE_COUNT] = {0};
    for (int j = 0; j < EV_JOINT_COUNT; ++j) {
        const int g = ev_stage_group_of((enum ev_joint)j);
        if (g < 0 || !has[j])
            continue;
        const int groups[2] = {g, EV_STAGE_PREDICTED};
        for (int i = 0; i < 2; ++i) {
            net[groups[i]] += sums->network[j] / out->rows;
            body[groups[i]] += sums->body[j] / out->rows;
            joints[groups[i]]++;
        }
    }
    for (int g = 0; g < EV_STAGE_COUNT; ++g) {
        out->network_cm[g] = joints[g] > 0 && out->rows > 0 ? net[g] / joints[g] : (double)NAN;
        out->body_cm[g] = joints[g] > 0 && out->rows > 0 ? body[g] / joints[g] : (double)NAN;
    }
    for (int g = 0; g < EV_STAGE_COUNT; ++g)
        out->has_group[g] = joints[g] > 0;
}

/* The two runs row by row into `ours` (the body's joints) and `sums`. */
static enum em_result
run_rows(const struct ev_clip *clip, const struct pr_model *prior, struct body *body,
         struct ev_motion *ours, struct stage_sums *sums, bool has[EV_JOINT_COUNT],
         struct ev_stage_result *out, struct em_error *err)
{
    struct pr_history history;
    pr_history_reset(&history);
    double net_m[EV_JOINT_COUNT][3] = {{0}};
    bool predicted = false;
    for (int row = 0; row < ours->frame_count; ++row) {
        const struct em_tracking_frame *frame = &clip->stream.frames[row];
        body_update(body, frame);
        enum em_result r = ev_body_scored_positions(body, ours->position_m[row], err);
        if (r != EM_OK)
            return r;
        /* The body's own height and floor this row (what its prior is given). It pushes
         * the frame after its clean-up (b_prior.c, clean_frame), which changes nothing
         * in a clip's stream: every device is tracked on every row. */
        struct body_desc desc;
        body_get_desc(body, &desc);
        if (pr_history_push(&history, frame) || !predicted) {
            if (history.count > 0 && network_joints(prior, &history, &desc, net_m, has))
                predicted = true;
            else if (history.count > 0)
                out->dropped++;
        }
        if (!predicted)
            continue; /* no prediction yet: the row is not counted in either column */
        add_row(sums, (const double(*)[3])net_m, (const double(*)[3])ours->position_m[row],
                (const double(*)[3])clip->truth.position_m[row], has);
        out->rows++;
    }
    return EM_OK;
}

enum em_result
ev_stage_run(const struct ev_clip *clip, enum ev_method method, const struct pr_model *prior,
             struct ev_stage_result *out, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    if (!prior)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "%s: the stages need the learned prior (a model)", clip->path);
    if (method != EV_KNOWN_BODY && method != EV_HEIGHT_ONLY)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: the stages run a body (known "
                       "body or height only), not %s", clip->path, ev_method_name(method));
    struct body *body = NULL;
    enum em_result r = ev_clip_make_body(clip, method, prior, &body, err);
    if (r != EM_OK)
        return r;
    const int rows = clip->truth.frame_count < clip->stream.frame_count
                         ? clip->truth.frame_count
                         : clip->stream.frame_count;
    struct ev_motion ours = {0};
    struct stage_sums sums;
    memset(&sums, 0, sizeof sums);
    bool has[EV_JOINT_COUNT] = {false};
    if (ev_motion_init(&ours, rows, clip->truth.fps) != EM_OK)
        r = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", clip->path);
    if (r == EM_OK)
        r = run_rows(clip, prior, body, &ours, &sums, has, out, err);
    if (r == EM_OK) {
        finish_groups(&sums, has, out);
        double mpjpe[EV_GROUP_COUNT];
        ev_mpjpe_cm(&ours, &clip->truth, mpjpe, NULL); /* ev_run's own score */
        out->body_mpjpe_cm = mpjpe[EV_GROUP_ALL];
    }
    ev_motion_fini(&ours);
    body_destroy(&body);
    return r;
}

/* ---- Over a folder ---- */

#define STAGE_MODES 2 /* EV_KNOWN_BODY, EV_HEIGHT_ONLY */

struct stage_clip {
    char file[256];
    bool ran[STAGE_MODES];
    struct ev_stage_result result[STAGE_MODES];
};

static int
is_clip(const struct dirent *e)
{
    const size_t n = strlen(e->d_name);
    return n > 4 && strcmp(e->d_name + n - 4, ".bvh") == 0;
}

/* One clip in the modes asked for; false (said on stderr) when it cannot run. */
static bool
run_clip(const struct ev_options *options, unsigned modes, const struct pr_model *model,
         struct stage_clip *out)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", options->clip_dir, out->file);
    struct ev_clip clip;
    struct em_error err = {{0}};
    if (ev_clip_load_for(path, options, &clip, &err) != EM_OK) {
        fprintf(stderr, "embody eval: %s\n", err.message);
        return false;
    }
    /* The clip carries every body tracker; keep those asked for (none: 3 points). */
    bool ok = ev_trackers_select(&clip, options->trackers, &err) == EM_OK;
    for (int m = 0; ok && m < STAGE_MODES; ++m) {
        if (!(modes & (1u << m)))
            continue;
        ok = ev_stage_run(&clip, (enum ev_method)m, model, &out->result[m], &err) == EM_OK;
        out->ran[m] = ok;
        if (ok && !options->quiet)
            fprintf(stderr, "%s, %s: %d rows, network %.2f cm, body %.2f cm (predicted "
                    "joints)\n", out->file, ev_method_name((enum ev_method)m),
                    out->result[m].rows, out->result[m].network_cm[EV_STAGE_PREDICTED],
                    out->result[m].body_cm[EV_STAGE_PREDICTED]);
    }
    if (!ok)
        fprintf(stderr, "embody eval: %s\n", err.message);
    ev_clip_fini(&clip);
    return ok;
}

/* The means over the clips that ran in mode `m` (a clip without a neck is left out of the
 * neck's mean). */
static int
mode_means(const struct stage_clip *clips, int count, int m, struct ev_stage_result *out)
{
    memset(out, 0, sizeof *out);
    int n = 0, with[EV_STAGE_COUNT] = {0}; /* clips, and clips with each group */
    for (int i = 0; i < count; ++i) {
        if (!clips[i].ran[m])
            continue;
        const struct ev_stage_result *c = &clips[i].result[m];
        n++;
        out->rows += c->rows;
        out->dropped += c->dropped;
        out->body_mpjpe_cm += c->body_mpjpe_cm;
        for (int g = 0; g < EV_STAGE_COUNT; ++g)
            if (c->has_group[g]) {
                with[g]++;
                out->network_cm[g] += c->network_cm[g];
                out->body_cm[g] += c->body_cm[g];
            }
    }
    for (int g = 0; g < EV_STAGE_COUNT; ++g) {
        out->network_cm[g] = with[g] > 0 ? out->network_cm[g] / with[g] : (double)NAN;
        out->body_cm[g] = with[g] > 0 ? out->body_cm[g] / with[g] : (double)NAN;
        out->has_group[g] = with[g] > 0;
    }
    out->body_mpjpe_cm = n > 0 ? out->body_mpjpe_cm / n : (double)NAN;
    return n;
}

static void
print_table(const struct ev_options *options, const char *model_path, int m, int clips,
            const struct ev_stage_result *means)
{
    printf("\n## Stages, %s: %s over %d clips of %s\n\n", ev_method_name((enum ev_method)m),
           model_path, clips, options->clip_dir);
    printf("Rows: every 60 Hz row%s (the body predicts from its first sample, as here), "
           "%d in all. Means over rows per clip, then over clips.\n\n",
           options->frame_limit > 0 ? " up to --frames" : "", means->rows);
    printf("| joints        | network (raw) cm | body (fused, solved) cm | body - network cm |\n");
    printf("|---------------|-----------------:|------------------------:|------------------:|\n");
    for (int g = 0; g < EV_STAGE_COUNT; ++g) {
        char a[32], b[32], d[32];
        printf("| %-13s | %16s | %23s | %17s |\n", STAGE_NAMES[g],
               ev_format_number(a, sizeof a, 16, 2, means->network_cm[g]),
               ev_format_number(b, sizeof b, 23, 2, means->body_cm[g]),
               ev_format_number(d, sizeof d, 17, 2, means->body_cm[g] - means->network_cm[g]));
    }
    printf("\nBody MPJPE, all 17 scored joints: %.2f cm\n", means->body_mpjpe_cm);
    if (means->dropped > 0)
        printf("Rows whose network output was not finite (the last prediction stood): %d\n",
               means->dropped);
}

/* A result's figures into `object`: per group network, body and difference (cm). */
static bool
add_result(cJSON *object, const struct ev_stage_result *r)
{
    bool ok = cJSON_AddNumberToObject(object, "rows", r->rows) &&
              cJSON_AddNumberToObject(object, "body_mpjpe_cm", r->body_mpjpe_cm);
    cJSON *groups = ok ? cJSON_AddObjectToObject(object, "groups") : NULL;
    for (int g = 0; groups && g < EV_STAGE_COUNT; ++g) {
        cJSON *o = cJSON_AddObjectToObject(groups, STAGE_KEYS[g]);
        ok = o && cJSON_AddNumberToObject(o, "network_cm", r->network_cm[g]) &&
             cJSON_AddNumberToObject(o, "body_cm", r->body_cm[g]) &&
             cJSON_AddNumberToObject(o, "difference_cm", r->body_cm[g] - r->network_cm[g]);
        if (!ok)
            return false;
    }
    return groups != NULL;
}

static bool
add_mode_json(cJSON *modes, const struct stage_clip *clips, int count, int m)
{
    struct ev_stage_result means;
    const int n = mode_means(clips, count, m, &means);
    cJSON *mode = cJSON_CreateObject();
    if (!mode || !cJSON_AddItemToObject(modes, ev_method_key((enum ev_method)m), mode))
        return false;
    cJSON *per_clip = NULL;
    bool ok = cJSON_AddNumberToObject(mode, "clips", n) && add_result(mode, &means) &&
              (per_clip = cJSON_AddObjectToObject(mode, "per_clip")) != NULL;
    for (int i = 0; ok && i < count; ++i) {
        if (!clips[i].ran[m])
            continue;
        cJSON *c = cJSON_AddObjectToObject(per_clip, clips[i].file);
        ok = c && add_result(c, &clips[i].result[m]);
    }
    return ok;
}

static bool
write_json(const struct ev_options *options, const char *model_path, unsigned modes,
           const struct stage_clip *clips, int count, const char *path)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *stages = root ? cJSON_AddObjectToObject(root, "stages") : NULL;
    bool ok = stages && cJSON_AddStringToObject(stages, "clip_dir", options->clip_dir) &&
              cJSON_AddStringToObject(stages, "prior", model_path) &&
              cJSON_AddStringToObject(stages, "means", "over rows per clip, then over clips");
    cJSON *by_mode = ok ? cJSON_AddObjectToObject(stages, "modes") : NULL;
    for (int m = 0; by_mode && ok && m < STAGE_MODES; ++m)
        if (modes & (1u << m))
            ok = add_mode_json(by_mode, clips, count, m);
    return ev_json_write(root, ok && by_mode, path);
}

/* The tables and the JSON (only when --json names a file); the exit status. */
static int
report(const struct ev_options *options, const char *model_path, unsigned modes,
       const struct stage_clip *clips, int count, int failed)
{
    printf("# Stages: the network against the body (src/eval/ev_stages.c)\n");
    for (int m = 0; m < STAGE_MODES; ++m) {
        if (!(modes & (1u << m)))
            continue;
        struct ev_stage_result means;
        const int n = mode_means(clips, count, m, &means);
        print_table(options, model_path, m, n, &means);
    }
    int status = failed > 0 ? 1 : 0;
    const char *json = options->json_path;
    if (json && strcmp(json, "-") != 0) {
        if (!write_json(options, model_path, modes, clips, count, json))
            status = 1;
        else {
            char where[4096];
            ev_written_where(json, where, sizeof where);
            printf("JSON copy: %s\n", where);
        }
    }
    fflush(stdout);
    if (failed > 0)
        fprintf(stderr, "embody eval: %d clips failed\n", failed);
    return status;
}

/* The folder's clips (of --subjects) into `clips` (count of them), run; returns the number
 * that failed. */
static int
run_folder(const struct ev_options *options, unsigned modes, const struct pr_model *model,
           struct dirent **names, int count, struct stage_clip *clips, int *out_count)
{
    int failed = 0, n = 0;
    for (int i = 0; i < count; ++i) {
        const char *file = names[i]->d_name;
        if (!ev_clip_of_subjects(file, options->subjects))
            continue; /* --subjects: a fold model on its people left out */
        struct stage_clip *c = &clips[n++];
        memset(c, 0, sizeof *c);
        snprintf(c->file, sizeof c->file, "%s", file);
        if (!run_clip(options, modes, model, c))
            failed++;
    }
    *out_count = n;
    return failed;
}

int
ev_stages_main(const struct ev_options *given)
{
    /* The default folder as `embody eval`'s; the JSON only when --json names one. */
    struct ev_options resolved;
    ev_options_resolve(given, &resolved);
    resolved.json_path = given->json_path;
    const struct ev_options *options = &resolved;
    if (options->body_mode && strcmp(options->body_mode, "procedural") == 0) {
        fprintf(stderr, "embody eval: --stages: the procedural body has no network to "
                        "compare; leave out --body procedural\n");
        return 2;
    }
    /* Faults: the body coasts over a lost device and cleans the frame its prior is given
     * (b_prior.c, clean_frame), the network here is given the frame as it is: they would
     * not see the same input. */
    if (options->faults.count > 0 || options->plot_dir || options->tracker_setups) {
        fprintf(stderr, "embody eval: --stages: not with --fault, --plot or --trackers all\n");
        return 2;
    }
    struct pr_model model;
    char model_path[1024];
    if (!ev_prior_load(options, &model, model_path, sizeof model_path))
        return 2; /* ev_prior_load said why */
    struct dirent **names = NULL;
    const int count = scandir(options->clip_dir, &names, is_clip, alphasort);
    struct stage_clip *clips = count > 0 ? calloc((size_t)count, sizeof *clips) : NULL;
    int status = 2;
    if (count <= 0)
        fprintf(stderr, "embody eval: --stages: %s: no clips (*.bvh) or cannot read the "
                        "folder\n", options->clip_dir);
    else if (!clips)
        fprintf(stderr, "embody eval: --stages: out of memory\n");
    else {
        const unsigned modes = options->modes ? options->modes : EV_MODE_BOTH;
        int n = 0;
        const int failed = run_folder(options, modes, &model, names, count, clips, &n);
        status = n == 0 ? 2 : report(options, model_path, modes, clips, n, failed);
        if (n == 0)
            fprintf(stderr, "embody eval: --stages: no clip of %s in %s\n",
                    options->subjects ? options->subjects : "anyone", options->clip_dir);
    }
    for (int i = 0; i < count; ++i)
        free(names[i]);
    free(names);
    free(clips);
    pr_model_fini(&model);
    return status;
}
