/*
 * Frame-time benchmark of the mirror view (not a test): renders the test scene in a hidden
 * window and prints, per configuration, the median and mean wall-clock milliseconds per
 * frame, each frame timed from render_draw to the end of glFinish (so the GPU's, or the
 * software renderer's, work is counted), and the median CPU milliseconds of the whole
 * process (all threads: llvmpipe renders on threads of ours), which a machine busy with
 * other work disturbs much less than the wall clock. Writes the default configuration's last frame
 * to render-test-scene.png in the build directory.
 *
 *   xvfb-run -a -s "-screen 0 1280x1024x24" ./tests/render/bench_render [frames] [w h]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "avatar/avatar.h"
#include "embody/m_math.h"
#include "render/r_internal.h"
#include "render_check.h"
#include "util/u_time.h"

/* CPU time of the whole process (every thread), nanoseconds. */
static int64_t
cpu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int
compare_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

struct config {
    const char *name;
    int msaa_samples;
    bool hide_hud;
    int avatar; /* 0: the capsule figure; 1, 2: skinned avatars (g_avatar) */
};

/* The skinned avatars the rows with `avatar` draw: the default and a dense one. */
static struct av_avatar g_avatar[3];
static struct av_skin_binding g_binding[3];

/* Renders `frames` frames (after 5 of warm-up) with configuration `c`, writing each
 * frame's milliseconds into ms[] and, when `screenshot` is given, the last frame there. */
static bool
run(const struct config *c, struct render_check_scene *ts, int frames, int width, int height,
    float *ms, float *cpu_ms, const char *screenshot)
{
    struct render_desc desc = {.width = width,
                               .height = height,
                               .hidden = true,
                               .msaa_samples = c->msaa_samples,
                               .hide_hud = c->hide_hud};
    struct render *r = NULL;
    struct em_error err = {{0}};
    if (render_create(&desc, &r, &err) != EM_OK) {
        fprintf(stderr, "bench_render: %s\n", err.message);
        return false;
    }
    const float up[3] = {0.0f, 1.0f, 0.0f};
    ts->scene.avatar = c->avatar ? &g_avatar[c->avatar] : NULL;
    ts->scene.avatar_binding = c->avatar ? &g_binding[c->avatar] : NULL;
    for (int i = -5; i < frames; ++i) { /* 5 frames of warm-up */
        /* Turn the body a little each frame so the camera follows something. */
        m_quat_from_axis_angle(up, 0.2f * sinf(0.05f * (float)i), ts->pose.local_rotation[0]);
        sk_pose_forward_kinematics(&ts->pose, &ts->skeleton);
        render_check_place_devices(ts);
        const int64_t start = u_time_now_ns();
        const int64_t cpu_start = cpu_now_ns();
        render_poll(r);
        render_draw(r, &ts->scene);
        glFinish();
        if (i >= 0)
            ms[i] = (float)(u_time_now_ns() - start) * 1e-6f;
        if (i >= 0)
            cpu_ms[i] = (float)(cpu_now_ns() - cpu_start) * 1e-6f;
    }
    if (screenshot && render_screenshot(r, screenshot, &err) != EM_OK)
        fprintf(stderr, "bench_render: %s\n", err.message);
    render_destroy(&r);
    return true;
}

/* The OpenGL renderer's name, from a window opened for the purpose. */
static const char *
renderer_name(int width, int height)
{
    static char name[256] = "unknown";
    struct render_desc desc = {.width = width, .height = height, .hidden = true};
    struct render *r = NULL;
    if (render_create(&desc, &r, NULL) == EM_OK) {
        snprintf(name, sizeof name, "%s, OpenGL %s", (const char *)glGetString(GL_RENDERER),
                 (const char *)glGetString(GL_VERSION));
        render_destroy(&r);
    }
    return name;
}

int
main(int argc, char **argv)
{
    const int frames = argc > 1 ? atoi(argv[1]) : 100;
    const int width = argc > 3 ? atoi(argv[2]) : 1280, height = argc > 3 ? atoi(argv[3]) : 720;
    if (frames < 1 || frames > 100000 || width < 16 || height < 16) {
        fprintf(stderr, "usage: bench_render [frames] [width height]\n");
        return 2;
    }
    struct render_check_scene ts;
    struct em_error err = {{0}};
    if (!render_check_scene_init(&ts, EMBODY_SOURCE_DIR "/config/humanoid.json", &err)) {
        fprintf(stderr, "bench_render: %s\n", err.message);
        return 1;
    }
    /* The avatars: the shipped default, and one of about 30,000 triangles. */
    struct sk_skeleton humanoid;
    char dense[512];
    snprintf(dense, sizeof dense, "%s/bench-avatar-dense.vrm", EMBODY_BINARY_DIR);
    if (sk_skeleton_load_json(EMBODY_SOURCE_DIR "/config/humanoid.json", &humanoid, &err) !=
            EM_OK ||
        av_make_file(&(struct av_make_desc){.skeleton = &humanoid, .detail = 26}, dense, &err) !=
            EM_OK ||
        av_avatar_load(EMBODY_SOURCE_DIR "/config/avatar/embody.vrm", NULL, &g_avatar[1], &err) !=
            EM_OK ||
        av_avatar_load(dense, NULL, &g_avatar[2], &err) != EM_OK ||
        av_skin_bind(&g_avatar[1], &ts.skeleton, &g_binding[1], &err) != EM_OK ||
        av_skin_bind(&g_avatar[2], &ts.skeleton, &g_binding[2], &err) != EM_OK) {
        fprintf(stderr, "bench_render: %s\n", err.message);
        return 1;
    }
    sk_skeleton_fini(&humanoid);
    remove(dense);
    char avatar_rows[2][2][64];
    for (int a = 1; a <= 2; ++a) {
        snprintf(avatar_rows[a - 1][0], sizeof avatar_rows[0][0], "avatar %uk tris, default",
                 (g_avatar[a].index_count / 3 + 500) / 1000);
        snprintf(avatar_rows[a - 1][1], sizeof avatar_rows[0][1], "avatar %uk tris, no HUD",
                 (g_avatar[a].index_count / 3 + 500) / 1000);
    }
    const struct config configs[] = {
        {"default (llvmpipe: no MSAA)", 0, false, 0},
        {"4x MSAA + HUD", 4, false, 0},
        {"2x MSAA + HUD", 2, false, 0},
        {"no MSAA + HUD", 1, false, 0},
        {"no MSAA, no HUD", 1, true, 0},
        {avatar_rows[0][0], 0, false, 1},
        {avatar_rows[0][1], 1, true, 1},
        {avatar_rows[1][0], 0, false, 2},
        {avatar_rows[1][1], 1, true, 2},
    };
    float *ms = calloc((size_t)frames, sizeof *ms);
    float *cpu_ms = calloc((size_t)frames, sizeof *cpu_ms);
    if (!ms || !cpu_ms)
        return 1;
    printf("renderer: %s\n", renderer_name(width, height));
    printf("%d frames of the test scene at %dx%d, ms per frame (render_draw + glFinish)\n", frames,
           width, height);
    printf("%-26s %10s %10s %10s %10s %10s\n", "configuration", "median", "mean", "p95", "fps",
           "cpu median");
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; ++c) {
        const char *shot = c == 0 ? EMBODY_BINARY_DIR "/render-test-scene.png" : NULL;
        if (!run(&configs[c], &ts, frames, width, height, ms, cpu_ms, shot))
            return 1;
        double sum = 0.0;
        for (int i = 0; i < frames; ++i)
            sum += (double)ms[i];
        qsort(ms, (size_t)frames, sizeof *ms, compare_float);
        const float median = ms[frames / 2];
        const float p95 = ms[(int)((float)(frames - 1) * 0.95f)];
        qsort(cpu_ms, (size_t)frames, sizeof *cpu_ms, compare_float);
        printf("%-26s %10.2f %10.2f %10.2f %10.1f %10.2f\n", configs[c].name, (double)median,
               sum / (double)frames, (double)p95, 1000.0 / (double)median,
               (double)cpu_ms[frames / 2]);
    }
    free(ms);
    free(cpu_ms);
    for (int a = 1; a <= 2; ++a) {
        av_skin_binding_fini(&g_binding[a]);
        av_avatar_fini(&g_avatar[a]);
    }
    printf("screenshot of the last default frame: %s\n",
           EMBODY_BINARY_DIR "/render-test-scene.png");
    render_check_scene_fini(&ts);
    return 0;
}
