/*
 * body_update's cost per avatar-frame, repeatable on a busy machine (a benchmark, not a
 * test). `embody eval`'s timing table times each body_update once: on a machine where
 * other work takes the core for tens of microseconds a few thousand times a second, its
 * p99 says more about the machine than about the body (the slowest 1 % of one run and of
 * the next are different frames). This runs every clip's 3-point stream through the body
 * as the eval does (the learned prior, both modes: the clip's own skeleton and the default
 * proportions fitted to its height), REPEAT times with a fresh body each, and takes each
 * avatar-frame's fastest time: what the frame costs, whatever else ran. It prints the
 * median, mean and p99 of those (and of the first pass alone, what the eval's table
 * sees) and the slowest frames, by clip, mode and row.
 *
 *   bench_body_update [DIR] [--repeat N] [--frames N] [--prior MODEL | --procedural]
 *                     [--slowest K] [--callgrind]
 *
 * DIR: the clips (default ../shared/mocap beside the source tree, or tests/data/mocap).
 * --callgrind: one pass, instructions collected inside body_update only, for
 *   valgrind --tool=callgrind --collect-atstart=no (tests/bench/body_callgrind.sh divides
 *   the count by the avatar-frames it prints).
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embody/body.h"
#include "eval/eval.h"
#include "embody/prior.h"
#include "util/u_path.h"
#include "util/u_time.h"

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_TOGGLE_COLLECT
#endif

#ifndef EMBODY_SOURCE_DIR
#define EMBODY_SOURCE_DIR "."
#endif

#define MAX_CLIPS 256
#define MODES 2 /* EV_KNOWN_BODY, EV_HEIGHT_ONLY */

struct options {
    const char *dir;
    const char *prior_path;
    bool procedural;
    int repeat, frames, slowest;
    bool callgrind;
};

/* One avatar-frame's fastest time over the passes, and where it is. */
struct frame_time {
    float best_us, first_us;
    short clip, mode;
    int row;
};

struct run {
    struct frame_time *frame;
    long count, capacity;
    char clip_name[MAX_CLIPS][256];
    int clip_count;
};

static int
usage(void)
{
    fprintf(stderr, "usage: bench_body_update [DIR] [--repeat N] [--frames N] "
                    "[--prior MODEL | --procedural] [--slowest K] [--callgrind]\n");
    return 2;
}

static bool
parse_int(const char *text, int min, int *out)
{
    char *end;
    const long v = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < min || v > 1000000)
        return false;
    *out = (int)v;
    return true;
}

static int
parse(int argc, char **argv, struct options *o)
{
    memset(o, 0, sizeof *o);
    o->repeat = 5;
    o->slowest = 10;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const bool has_value = i + 1 < argc;
        if (strcmp(a, "--repeat") == 0 && has_value && parse_int(argv[i + 1], 1, &o->repeat))
            ++i;
        else if (strcmp(a, "--frames") == 0 && has_value && parse_int(argv[i + 1], 1, &o->frames))
            ++i;
        else if (strcmp(a, "--slowest") == 0 && has_value &&
                 parse_int(argv[i + 1], 0, &o->slowest))
            ++i;
        else if (strcmp(a, "--prior") == 0 && has_value)
            o->prior_path = argv[++i];
        else if (strcmp(a, "--procedural") == 0)
            o->procedural = true;
        else if (strcmp(a, "--callgrind") == 0)
            o->callgrind = true;
        else if (a[0] != '-' && !o->dir)
            o->dir = a;
        else
            return usage();
    }
    if (o->callgrind)
        o->repeat = 1;
    if (!o->dir)
        o->dir = u_path_exists(EMBODY_SOURCE_DIR "/../shared/mocap")
                     ? EMBODY_SOURCE_DIR "/../shared/mocap"
                     : EMBODY_SOURCE_DIR "/tests/data/mocap";
    return 0;
}

static int
compare_names(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* The folder's *.bvh files, sorted (the eval's order). */
static int
list_clips(const char *dir, struct run *r)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "bench_body_update: cannot open %s\n", dir);
        return -1;
    }
    const struct dirent *e;
    while ((e = readdir(d)) != NULL && r->clip_count < MAX_CLIPS) {
        const size_t n = strlen(e->d_name);
        if (n > 4 && n < sizeof r->clip_name[0] && strcmp(e->d_name + n - 4, ".bvh") == 0)
            snprintf(r->clip_name[r->clip_count++], sizeof r->clip_name[0], "%s", e->d_name);
    }
    closedir(d);
    qsort(r->clip_name, (size_t)r->clip_count, sizeof r->clip_name[0], compare_names);
    return r->clip_count;
}

static struct frame_time *
add_frame(struct run *r)
{
    if (r->count == r->capacity) {
        const long capacity = r->capacity ? 2 * r->capacity : 4096;
        struct frame_time *grown = realloc(r->frame, (size_t)capacity * sizeof *grown);
        if (!grown)
            return NULL;
        r->frame = grown;
        r->capacity = capacity;
    }
    return &r->frame[r->count++];
}

/* One pass of a clip through a fresh body of `mode`: each frame's time into `times`. */
static int
one_pass(const struct ev_clip *clip, enum ev_method mode, const struct pr_model *prior,
         bool callgrind, float *times)
{
    struct body *body = NULL;
    struct em_error err = {{0}};
    if (ev_clip_make_body(clip, mode, prior, &body, &err) != EM_OK) {
        fprintf(stderr, "bench_body_update: %s\n", err.message);
        return -1;
    }
    for (int row = 0; row < clip->stream.frame_count; ++row) {
        const int64_t start_ns = u_time_now_ns();
        if (callgrind)
            CALLGRIND_TOGGLE_COLLECT;
        body_update(body, &clip->stream.frames[row]);
        if (callgrind)
            CALLGRIND_TOGGLE_COLLECT;
        times[row] = (float)((double)(u_time_now_ns() - start_ns) * 1e-3);
    }
    body_destroy(&body);
    return 0;
}

static int
run_clip(const struct options *o, const struct pr_model *prior, int c, struct run *r)
{
    char path[1400];
    snprintf(path, sizeof path, "%s/%s", o->dir, r->clip_name[c]);
    struct ev_clip clip;
    struct em_error err = {{0}};
    if (ev_clip_load(path, o->frames, &clip, &err) != EM_OK ||
        ev_trackers_select(&clip, 0, &err) != EM_OK) { /* head and hands, as the eval */
        fprintf(stderr, "bench_body_update: %s\n", err.message);
        return -1;
    }
    const int rows = clip.stream.frame_count;
    float *times = malloc((size_t)(rows > 0 ? rows : 1) * sizeof *times);
    int status = times ? 0 : -1;
    for (int m = 0; m < MODES && status == 0; ++m) {
        const long first = r->count;
        for (int row = 0; row < rows && status == 0; ++row) {
            struct frame_time *f = add_frame(r);
            if (!f)
                status = -1;
            else
                *f = (struct frame_time){.clip = (short)c, .mode = (short)m, .row = row};
        }
        for (int k = 0; k < o->repeat && status == 0; ++k) {
            status = one_pass(&clip, (enum ev_method)m, prior, o->callgrind, times);
            for (int row = 0; row < rows && status == 0; ++row) {
                struct frame_time *f = &r->frame[first + row];
                if (k == 0)
                    f->first_us = f->best_us = times[row];
                else if (times[row] < f->best_us)
                    f->best_us = times[row];
            }
        }
    }
    free(times);
    ev_clip_fini(&clip);
    return status;
}

/* Median, mean and p99 of the frames of `mode` (-1: all), best or first pass. */
static void
summary_row(const struct run *r, int mode, bool best, const char *label)
{
    struct ev_timing t;
    memset(&t, 0, sizeof t);
    for (long i = 0; i < r->count; ++i)
        if (mode < 0 || r->frame[i].mode == mode)
            if (ev_timing_add(&t, best ? r->frame[i].best_us : r->frame[i].first_us) != EM_OK)
                break;
    printf("| %-12s | %-17s | %13ld | %9.2f | %7.2f | %6.2f |\n", label,
           best ? "fastest of passes" : "first pass", t.count,
           ev_timing_median_us(&t, 0, t.count), ev_timing_mean_us(&t, 0, t.count),
           ev_timing_percentile_us(&t, 0, t.count, 0.99));
    ev_timing_fini(&t);
}

static int
slower_first(const void *a, const void *b)
{
    const float x = ((const struct frame_time *)a)->best_us;
    const float y = ((const struct frame_time *)b)->best_us;
    return (x < y) - (x > y);
}

static void
print_report(const struct options *o, struct run *r, const char *body)
{
    static const char *const mode_name[MODES] = {"known body", "height only"};
    printf("## body_update per avatar-frame (%s body, %d clips, %d passes)\n\n", body,
           r->clip_count, o->repeat);
    printf("| mode         | time              | avatar-frames | median us | mean us | p99 us |\n");
    printf("|--------------|-------------------|---------------|-----------|---------|--------|\n");
    for (int m = -1; m < MODES; ++m)
        for (int best = 1; best >= 0; --best)
            if (best || o->repeat > 1)
                summary_row(r, m, best, m < 0 ? "all" : mode_name[m]);
    if (o->slowest <= 0 || r->count == 0)
        return;
    qsort(r->frame, (size_t)r->count, sizeof *r->frame, slower_first);
    printf("\nThe slowest avatar-frames (fastest of the passes):\n\n");
    printf("| clip                 | mode         |  row | us     |\n");
    printf("|----------------------|--------------|------|--------|\n");
    for (int i = 0; i < o->slowest && i < r->count; ++i) {
        const struct frame_time *f = &r->frame[i];
        printf("| %-20s | %-12s | %4d | %6.2f |\n", r->clip_name[f->clip], mode_name[f->mode],
               f->row, f->best_us);
    }
}

int
main(int argc, char **argv)
{
    struct options o;
    if (parse(argc, argv, &o) != 0)
        return 2;
    struct pr_model model;
    const struct pr_model *prior = NULL;
    if (!o.procedural) {
        char found[1024];
        const char *path = o.prior_path;
        if (!path && u_path_find_data(PR_DEFAULT_MODEL, found, sizeof found))
            path = found;
        struct em_error err = {{0}};
        if (!path || pr_model_load(path, &model, &err) != EM_OK) {
            fprintf(stderr, "bench_body_update: no prior: %s\n",
                    path ? err.message : PR_DEFAULT_MODEL " not found");
            return 1;
        }
        prior = &model;
    }
    struct run *r = calloc(1, sizeof *r);
    int status = r && list_clips(o.dir, r) > 0 ? 0 : 1;
    if (r && r->clip_count == 0)
        fprintf(stderr, "bench_body_update: no .bvh clips in %s\n", o.dir);
    for (int c = 0; status == 0 && c < r->clip_count; ++c)
        if (run_clip(&o, prior, c, r) != 0)
            status = 1;
    if (status == 0)
        print_report(&o, r, prior ? "prior" : "procedural");
    if (r)
        free(r->frame);
    free(r);
    if (prior)
        pr_model_fini(&model);
    return status;
}
