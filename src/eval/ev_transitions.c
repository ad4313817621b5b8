/*
 * `embody eval --transitions [DIR]`: real transitions frame by frame (issue 43). Each
 * clip of DIR whose name says a transition (lying down and getting up, putting something
 * on the floor, a squat, a kick: "lieDown", "depositFloor", "squat", "kick") is played
 * through a fresh known body with the learned prior (the program's default body), and
 * every frame is checked against what the body owes the player whatever the motion: the
 * head joint where the headset puts it (distance p99, cm; angle p95, degrees), the hands
 * on their controllers (share of frames with a tracked hand more than 2 cm off), nothing
 * under the floor (the lowest joint over the clip, cm above it), and no shaking beyond the
 * person's own (our jitter over the truth's). MPJPE beside them, for scale. Jogs ("jog") are
 * played too: their jitter is held to 1.5x the truth's, the transitions' to 3x.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embody/body.h"
#include "eval/eval.h"
#include "embody/m_math.h"
#include "ev_internal.h"

/* The transitions, and running (a jog) beside them, whose jitter is held to 1.5x. */
static const char *const TRANSITION_NAMES[] = {"lieDown", "depositFloor", "squat", "kick", "jog"};
#define TRANSITION_KINDS ((int)(sizeof TRANSITION_NAMES / sizeof TRANSITION_NAMES[0]))
#define JOG_KIND 4

int
ev_transition_kind(const char *file)
{
    for (int k = 0; k < TRANSITION_KINDS; ++k)
        if (strstr(file, TRANSITION_NAMES[k]))
            return k;
    return -1;
}

static int
compare_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The nearest-rank percentile of `v[0..n)`, which it sorts. */
static double
percentile_sorting(double *v, int n, double fraction)
{
    if (n <= 0)
        return (double)NAN;
    qsort(v, (size_t)n, sizeof *v, compare_double);
    int rank = (int)ceil(fraction * n);
    rank = rank < 1 ? 1 : (rank > n ? n : rank);
    return v[rank - 1];
}

enum em_result
ev_transition_run(const struct ev_clip *clip, enum ev_method method, const struct pr_model *prior,
                  struct ev_transition_result *out, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    out->worst_head_row = -1;
    struct body *body = NULL;
    enum em_result r = ev_clip_make_body(clip, method, prior, &body, err);
    if (r != EM_OK)
        return r;
    const int rows = clip->truth.frame_count < clip->stream.frame_count ? clip->truth.frame_count
                                                                        : clip->stream.frame_count;
    struct ev_motion ours = {0};
    double *head_cm = malloc(sizeof *head_cm * (size_t)(rows > 0 ? rows : 1));
    struct ev_body_checks *checks = malloc(sizeof *checks);
    if (!head_cm || !checks || ev_motion_init(&ours, rows, clip->truth.fps) != EM_OK) {
        r = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", clip->path);
        goto done;
    }
    ev_body_checks_init(checks);
    const struct sk_skeleton *sk = body_skeleton(body);
    double lowest_m = (double)INFINITY;
    long hand_off = 0;
    int head_n = 0;
    for (int row = 0; row < rows && r == EM_OK; ++row) {
        body_update(body, &clip->stream.frames[row]);
        r = ev_body_scored_positions(body, ours.position_m[row], err);
        if (r != EM_OK)
            break;
        ev_body_checks_add_frame(checks, body, &clip->stream.frames[row]);
        struct body_status st;
        body_get_status(body, &st);
        bool off = false;
        for (int e = 0; e < 3 && e < st.effector_count; ++e) {
            if (st.device[e] != BODY_DEVICE_TRACKED)
                continue;
            const double d = (double)m_vec3_distance(st.target_m[e], st.reached_m[e]);
            if (e == 0) {
                head_cm[head_n++] = 100.0 * d;
                if (100.0 * d > out->head_max_cm) {
                    out->head_max_cm = 100.0 * d;
                    out->worst_head_row = row;
                }
            } else if (d > EV_EFFECTOR_MISS_M)
                off = true;
        }
        hand_off += off;
        struct body_desc desc;
        body_get_desc(body, &desc);
        const struct sk_pose *pose = body_pose(body);
        for (int j = 0; j < sk->joint_count; ++j)
            lowest_m = fmin(lowest_m, (double)(pose->position_m[j][1] - desc.floor_height_m));
    }
    if (r == EM_OK) {
        ev_body_checks_finish(checks);
        double mpjpe[EV_GROUP_COUNT];
        ev_mpjpe_cm(&ours, &clip->truth, mpjpe, NULL);
        out->rows = rows;
        out->mpjpe_cm = mpjpe[EV_GROUP_ALL];
        out->head_p99_cm = percentile_sorting(head_cm, head_n, 0.99);
        out->head_angle_p95_deg = ev_body_checks_head_percentile(checks, 0.95);
        out->head_angle_max_deg = checks->head_angle_max_deg;
        out->hands_off_share = rows > 0 ? (double)hand_off / rows : 0.0;
        out->lowest_cm = 100.0 * lowest_m;
        out->jitter_ratio = ev_jitter_m_s3(&ours) / ev_jitter_m_s3(&clip->truth);
    }
done:
    ev_motion_fini(&ours);
    free(head_cm);
    free(checks);
    body_destroy(&body);
    return r;
}

static int
is_transition_clip(const struct dirent *e)
{
    const size_t n = strlen(e->d_name);
    return n > 4 && strcmp(e->d_name + n - 4, ".bvh") == 0 && ev_transition_kind(e->d_name) >= 0;
}

struct kind_sum {
    int clips, head_over, angle_over, hands_over, floor_under, jitter_over;
    double mpjpe, head_p99, angle_p95, hands_off, lowest, jitter;
};

/* Adds one clip's figures to its kind's sums and to everything's. */
static void
add_to_sums(struct kind_sum sums[TRANSITION_KINDS + 1], int kind,
            const struct ev_transition_result *t)
{
    const int kinds[2] = {kind, TRANSITION_KINDS};
    for (int k = 0; k < 2; ++k) {
        struct kind_sum *s = &sums[kinds[k]];
        s->clips++;
        s->mpjpe += t->mpjpe_cm;
        s->head_p99 += t->head_p99_cm;
        s->angle_p95 += t->head_angle_p95_deg;
        s->hands_off += 100.0 * t->hands_off_share;
        s->lowest = fmin(s->lowest, t->lowest_cm);
        s->jitter += t->jitter_ratio;
        s->head_over += t->head_p99_cm > 2.0;
        s->angle_over += t->head_angle_p95_deg > EV_HEAD_ANGLE_TARGET_DEG;
        s->hands_over += t->hands_off_share > 0.05;
        s->floor_under += t->lowest_cm < -2.0;
        s->jitter_over += t->jitter_ratio > (kind == JOG_KIND ? 1.5 : 3.0);
    }
}

/* One clip of the folder through the body: false (said on stderr) when it cannot run. */
static bool
run_clip(const struct ev_options *options, const char *file, enum ev_method method,
         const struct pr_model *model, struct ev_transition_result *out)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", options->clip_dir, file);
    struct ev_clip clip;
    struct em_error err = {{0}};
    if (ev_clip_load_for(path, options, &clip, &err) != EM_OK) {
        fprintf(stderr, "embody eval: %s\n", err.message);
        return false;
    }
    /* The clip carries every body tracker; keep those asked for (none: 3 points). */
    const bool ran = ev_trackers_select(&clip, options->trackers, &err) == EM_OK &&
                     ev_transition_run(&clip, method, model, out, &err) == EM_OK;
    if (!ran)
        fprintf(stderr, "embody eval: %s\n", err.message);
    ev_clip_fini(&clip);
    return ran;
}

static void
print_header(const struct ev_options *options, enum ev_method method, const char *body)
{
    printf("# Transitions: %s, %s, %s (src/eval/ev_transitions.c)\n", options->clip_dir,
           ev_method_name(method), body);
    printf("# contracts: head <= 2 cm (p99) and <= 10 deg (p95) from the headset; hands off "
           "<= 5 %% of frames (> 2 cm); lowest joint >= -2 cm; jitter <= 3x the truth's (jogs "
           "1.5x)\n");
    printf("%-40s %5s %7s %8s %8s %8s %7s %8s %7s\n", "clip", "rows", "MPJPE", "head p99",
           "head max", "deg p95", "hands%", "lowest", "jitter");
}

static void
print_summary(const struct kind_sum sums[TRANSITION_KINDS + 1])
{
    printf("\nSummary (means over clips; 'over' = clips missing the contract)\n");
    printf("%-13s %5s %7s %8s %8s %7s %8s %7s | %6s %6s %6s %6s %6s\n", "kind", "clips", "MPJPE",
           "head p99", "deg p95", "hands%", "lowest", "jitter", "head>2", "deg>10", "hands",
           "floor", "jit>3");
    for (int k = 0; k <= TRANSITION_KINDS; ++k) {
        const struct kind_sum *s = &sums[k];
        if (s->clips == 0)
            continue;
        const double n = s->clips;
        printf("%-13s %5d %7.2f %8.2f %8.1f %7.2f %8.1f %7.2f | %6d %6d %6d %6d %6d\n",
               k < TRANSITION_KINDS ? TRANSITION_NAMES[k] : "all", s->clips, s->mpjpe / n,
               s->head_p99 / n, s->angle_p95 / n, s->hands_off / n, s->lowest, s->jitter / n,
               s->head_over, s->angle_over, s->hands_over, s->floor_under, s->jitter_over);
    }
}

int
ev_transitions_main(const struct ev_options *options)
{
    struct pr_model model;
    char model_path[1024];
    const bool procedural = options->body_mode && strcmp(options->body_mode, "procedural") == 0;
    const bool prior = !procedural && ev_prior_load(options, &model, model_path, sizeof model_path);
    struct dirent **names = NULL;
    const int count = scandir(options->clip_dir, &names, is_transition_clip, alphasort);
    if (count < 0) {
        fprintf(stderr, "embody eval: --transitions: %s: cannot read the folder\n",
                options->clip_dir);
        if (prior)
            pr_model_fini(&model);
        return 2;
    }
    const enum ev_method method = options->modes == 0 || (options->modes & EV_MODE_KNOWN_BODY)
                                      ? EV_KNOWN_BODY
                                      : EV_HEIGHT_ONLY;
    print_header(options, method, prior ? model_path : "the procedural body");
    struct kind_sum sums[TRANSITION_KINDS + 1];
    memset(sums, 0, sizeof sums);
    for (int k = 0; k <= TRANSITION_KINDS; ++k)
        sums[k].lowest = (double)INFINITY;
    int status = 0;
    for (int i = 0; i < count; ++i) {
        const char *file = names[i]->d_name;
        if (!ev_clip_of_subjects(file, options->subjects))
            continue; /* --subjects: a fold model on its people left out */
        struct ev_transition_result t;
        if (!run_clip(options, file, method, prior ? &model : NULL, &t)) {
            status = 1;
            continue;
        }
        printf("%-40.*s %5d %7.2f %8.2f %8.2f %8.1f %7.2f %8.1f %7.2f\n",
               (int)(strlen(file) - 4), file, t.rows, t.mpjpe_cm, t.head_p99_cm, t.head_max_cm,
               t.head_angle_p95_deg, 100.0 * t.hands_off_share, t.lowest_cm, t.jitter_ratio);
        add_to_sums(sums, ev_transition_kind(file), &t);
    }
    print_summary(sums);
    for (int i = 0; i < count; ++i)
        free(names[i]);
    free(names);
    if (prior)
        pr_model_fini(&model);
    return status;
}
