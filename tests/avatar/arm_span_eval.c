/*
 * Hands on the controllers whatever the avatar's arms (issue 27): the evaluation, not a
 * test. For each public clip (../shared/mocap by default: the player is the clip's
 * person, the stream its 3 points), avatars of the player's height whose arm span is 0.85,
 * 1.0 and 1.15 times the player's are driven by the body, and each frame measures how far
 * each hand is from where its controller puts it (body_status: the hand effector's target
 * and the hand joint) and whether the elbow is locked straight (over 175 degrees). The
 * "--arm-span" rows fit the same avatars' arms to the player's span first (what
 * `embody --arm-span M` does), the player's choice for short arms; the "stretching" rows
 * let the arms stretch up to 15 % and 25 % of their length (body_desc.arm_stretch_max,
 * config/body.json's "arm_stretch_max").
 *
 *   arm_span_eval [DIR [ROWS]]     ROWS per clip, default 1200 (10 s at 120 Hz)
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embody/body.h"
#include "eval/eval.h"
#include "embody/m_math.h"

#define STRAIGHT_ELBOW_DEG 175.0f

struct tally {
    double sum_mm;
    double max_mm;
    long count;
    long over_2mm;
    long straight; /* elbow-frames locked straight */
    long elbows;
    double *all_mm; /* for the 95th percentile */
    long cap;
};

static void
tally_add(struct tally *t, double mm)
{
    if (t->count == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 4096;
        t->all_mm = realloc(t->all_mm, (size_t)t->cap * sizeof *t->all_mm);
        if (!t->all_mm)
            exit(1);
    }
    t->all_mm[t->count++] = mm;
    t->sum_mm += mm;
    if (mm > t->max_mm)
        t->max_mm = mm;
    t->over_2mm += mm > 2.0;
}

static int
cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static float
elbow_angle_deg(const struct sk_pose *pose, const struct sk_skeleton *sk, int side)
{
    const int ua = sk->bone_joint[side ? SK_RIGHT_UPPER_ARM : SK_LEFT_UPPER_ARM];
    const int la = sk->bone_joint[side ? SK_RIGHT_LOWER_ARM : SK_LEFT_LOWER_ARM];
    const int h = sk->bone_joint[side ? SK_RIGHT_HAND : SK_LEFT_HAND];
    float a[3], b[3];
    m_vec3_sub(pose->position_m[ua], pose->position_m[la], a);
    m_vec3_sub(pose->position_m[h], pose->position_m[la], b);
    const float c = m_vec3_dot(a, b) / (m_vec3_length(a) * m_vec3_length(b) + 1e-12f);
    return acosf(m_clampf(c, -1.0f, 1.0f)) * M_RAD_TO_DEG;
}

/* Drives an avatar of arm span `ratio` times the player's through the clip. */
static int
run(const struct ev_clip *clip, float ratio, bool fit_span, float stretch, struct tally *t)
{
    struct sk_skeleton sk;
    struct em_error err = {{0}};
    if (sk_skeleton_copy(&clip->skeleton, &sk) != EM_OK)
        return -1;
    const float span = sk_humanoid_arm_span(&clip->skeleton);
    if (sk_humanoid_fit(&sk, clip->height_m, ratio * span, &err) != EM_OK ||
        (fit_span && sk_humanoid_fit(&sk, clip->height_m, span, &err) != EM_OK)) {
        fprintf(stderr, "%s: %s\n", clip->path, err.message);
        sk_skeleton_fini(&sk);
        return -1;
    }
    struct body_desc desc = {.skeleton = &sk, .arm_stretch_max = stretch};
    struct body *body = NULL;
    if (body_create(&desc, &body, &err) != EM_OK) {
        fprintf(stderr, "%s: %s\n", clip->path, err.message);
        sk_skeleton_fini(&sk);
        return -1;
    }
    const struct sk_skeleton *bsk = NULL;
    for (int row = 0; row < clip->stream.frame_count; ++row) {
        body_update(body, &clip->stream.frames[row]);
        struct body_status st;
        body_get_status(body, &st);
        const struct sk_pose *pose = body_pose(body);
        bsk = body_skeleton(body);
        for (int s = 0; s < 2; ++s) {
            tally_add(t, 1000.0 * (double)m_vec3_distance(st.target_m[1 + s], st.reached_m[1 + s]));
            t->straight += elbow_angle_deg(pose, bsk, s) > STRAIGHT_ELBOW_DEG;
            ++t->elbows;
        }
    }
    body_destroy(&body);
    sk_skeleton_fini(&sk);
    return 0;
}

int
main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : EMBODY_SOURCE_DIR "/../shared/mocap";
    const int rows = argc > 2 ? atoi(argv[2]) : 1200;
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "arm_span_eval: cannot open %s (usage: arm_span_eval [DIR [ROWS]])\n",
                dir);
        return 2;
    }
    static const float ratios[] = {0.85f, 1.0f, 1.15f};
    /* The avatar's own arms; stretching up to 15 % and 25 %; fitted to the player's span. */
    static const float stretches[] = {0.0f, 0.15f, 0.25f, 0.0f};
    enum { MODES = 4 };
    struct tally t[MODES][3] = {{{0}}};
    int clips = 0;
    struct dirent *e;
    char **names = NULL;
    int n = 0;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".bvh")) {
            names = realloc(names, (size_t)(n + 1) * sizeof *names);
            names[n++] = strdup(e->d_name);
        }
    closedir(d);
    for (int i = 0; i < n; ++i) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct ev_clip clip;
        struct em_error err = {{0}};
        if (ev_clip_load(path, rows, &clip, &err) != EM_OK) {
            fprintf(stderr, "%s\n", err.message);
            continue;
        }
        for (int f = 0; f < MODES; ++f)
            for (int r = 0; r < 3; ++r)
                run(&clip, ratios[r], f == MODES - 1, stretches[f], &t[f][r]);
        ev_clip_fini(&clip);
        ++clips;
        free(names[i]);
    }
    free(names);
    printf("Hands on the controllers, %d clips of %s, at most %d rows each (both hands, every "
           "row)\n\n",
           clips, dir, rows);
    printf("| avatar arm span / player's | arms | hand to controller mean (mm) | p95 (mm) | "
           "max (mm) | frames > 2 mm | elbows locked (> %.0f deg) |\n",
           (double)STRAIGHT_ELBOW_DEG);
    printf("|---|---|---|---|---|---|---|\n");
    for (int f = 0; f < MODES; ++f)
        for (int r = 0; r < 3; ++r) {
            struct tally *x = &t[f][r];
            char arms[80];
            if (f == MODES - 1)
                snprintf(arms, sizeof arms, "fitted to the player's span (--arm-span)");
            else if (stretches[f] > 0.0f)
                snprintf(arms, sizeof arms, "stretching up to %.0f %% (arm_stretch_max %.2f)",
                         100.0 * (double)stretches[f], (double)stretches[f]);
            else
                snprintf(arms, sizeof arms, "the avatar's own");
            if (x->count == 0)
                continue;
            qsort(x->all_mm, (size_t)x->count, sizeof *x->all_mm, cmp_double);
            printf("| %.2f | %s | %.1f | %.1f | %.1f | %.1f %% | %.1f %% |\n", (double)ratios[r],
                   arms,
                   x->sum_mm / (double)x->count, x->all_mm[(long)(0.95 * (double)(x->count - 1))],
                   x->max_mm, 100.0 * (double)x->over_2mm / (double)x->count,
                   100.0 * (double)x->straight / (double)x->elbows);
            free(x->all_mm);
        }
    return 0;
}
