/*
 * Frame rate of the program's window while a clip replays (issue 28; a benchmark, not a
 * test): the live loop (app_live_run, as `embody` runs it) plays a motion capture clip as
 * fast as it can in a hidden 1280x720 window, plain (--no-ghost), with the ghost of the
 * truth, and with --compare 3,6 (two avatars and two ghosts), and prints per case the median
 * wall time between frames (everything a frame does: the bodies, the scene, the draw, the
 * HUD), the frames per second that gives, the renderer's own median draw time, and the
 * median CPU time of the whole process per frame (llvmpipe draws on threads of ours; a
 * machine busy with other work disturbs it less than the wall clock).
 *
 *   xvfb-run -a -s "-screen 0 1280x1024x24" build/tests/bench/bench_replay_window \
 *       [CLIP.bvh] [frames]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app/app_live.h"
#include "app/app_options.h"
#include "render/render.h"
#include "util/u_time.h"

#define WARM_UP_FRAMES 30

static int64_t
cpu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct timing {
    int count, capacity;
    float *wall_ms, *cpu_ms, *draw_ms;
    int64_t last_wall_ns, last_cpu_ns;
};

static void
on_frame(void *user, long index, const struct em_tracking_frame *frame, struct render *render,
         const struct render_scene *scene, const struct body *body)
{
    (void)frame;
    (void)scene;
    (void)body;
    struct timing *t = user;
    const int64_t wall = u_time_now_ns(), cpu = cpu_now_ns();
    if (index > WARM_UP_FRAMES && t->count < t->capacity && render) {
        t->wall_ms[t->count] = (float)((double)(wall - t->last_wall_ns) * 1e-6);
        t->cpu_ms[t->count] = (float)((double)(cpu - t->last_cpu_ns) * 1e-6);
        t->draw_ms[t->count] = render_last_draw_ms(render);
        t->count++;
    }
    t->last_wall_ns = wall;
    t->last_cpu_ns = cpu;
}

static int
compare_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static float
median(float *v, int n)
{
    if (n <= 0)
        return 0.0f;
    qsort(v, (size_t)n, sizeof *v, compare_float);
    return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

/* Runs the program with `extra` options after the common ones; false if it failed. */
static bool
run_case(const char *clip, int frames, const char *const *extra, struct timing *t)
{
    char frames_text[16];
    snprintf(frames_text, sizeof frames_text, "%d", frames);
    char *argv[16] = {"embody", "--replay", (char *)clip, "--fast", "--frames", frames_text, "-q"};
    int argc = 7;
    for (int i = 0; extra[i]; ++i)
        argv[argc++] = (char *)extra[i];
    struct app_options options;
    struct em_error err = {{0}};
    if (app_options_parse(argc, argv, 1, &options, &err) != EM_OK) {
        fprintf(stderr, "bench_replay_window: %s\n", err.message);
        return false;
    }
    const struct app_live_hooks hooks = {.on_frame = on_frame, .user = t};
    struct app_live_result result;
    return app_live_run(&options, &hooks, &result) == 0 && result.had_window;
}

int
main(int argc, char **argv)
{
    setenv("EMBODY_DATA_DIR", EMBODY_SOURCE_DIR, 0);
    const char *clip = argc > 1 ? argv[1] : EMBODY_SOURCE_DIR "/tests/data/mocap/cmu_05_04.bvh";
    const int frames = argc > 2 ? atoi(argv[2]) : 600;
    if (frames <= WARM_UP_FRAMES + 10) {
        fprintf(stderr, "bench_replay_window: frames: expected more than %d\n",
                WARM_UP_FRAMES + 10);
        return 2;
    }
    static const char *const plain[] = {"--no-ghost", NULL};
    static const char *const ghost[] = {NULL};
    static const char *const compare[] = {"--compare", "3,6", NULL};
    static const struct {
        const char *name;
        const char *const *extra;
    } cases[] = {{"plain replay (--no-ghost)", plain},
                 {"with the ghost", ghost},
                 {"--compare 3,6 (two avatars, two ghosts)", compare}};
    printf("Replay of %s, %d frames (%d of warm-up), 1280x720 window, Mesa as installed\n\n", clip,
           frames, WARM_UP_FRAMES);
    printf("| case | frames timed | median frame ms | median frames/s | median draw ms | median "
           "CPU ms/frame |\n");
    printf("|---|---|---|---|---|---|\n");
    int status = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        struct timing t = {.capacity = frames};
        t.wall_ms = calloc((size_t)frames, sizeof *t.wall_ms);
        t.cpu_ms = calloc((size_t)frames, sizeof *t.cpu_ms);
        t.draw_ms = calloc((size_t)frames, sizeof *t.draw_ms);
        if (!t.wall_ms || !t.cpu_ms || !t.draw_ms || !run_case(clip, frames, cases[c].extra, &t)) {
            fprintf(stderr, "bench_replay_window: %s failed\n", cases[c].name);
            status = 1;
        } else {
            const float wall = median(t.wall_ms, t.count);
            printf("| %s | %d | %.2f | %.1f | %.2f | %.2f |\n", cases[c].name, t.count,
                   (double)wall, wall > 0.0f ? 1000.0 / (double)wall : 0.0,
                   (double)median(t.draw_ms, t.count), (double)median(t.cpu_ms, t.count));
        }
        free(t.wall_ms);
        free(t.cpu_ms);
        free(t.draw_ms);
        fflush(stdout);
    }
    return status;
}
