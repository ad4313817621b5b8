/* Helpers for the xr tests (xr_test_util.h). */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <SDL2/SDL.h>

#include "embody/m_math.h"
#include "xr_test_util.h"

/* A small deterministic generator (xorshift), so runs are reproducible. */
static float
next_random(unsigned *state)
{
    unsigned x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return (float)(x & 0xffffff) / (float)0x1000000; /* [0, 1) */
}

static void
random_pose(unsigned *state, float cx, float cy, float cz, struct em_pose *out)
{
    float axis[3] = {next_random(state) - 0.5f, next_random(state) - 0.5f,
                     next_random(state) - 0.5f};
    const float up[3] = {0.0f, 1.0f, 0.0f};
    m_vec3_normalize_or(axis, up, axis);
    m_quat_from_axis_angle(axis, (next_random(state) - 0.5f) * 5.0f, out->orientation);
    m_quat_normalize(out->orientation);
    m_vec3_set(out->position_m, cx + (next_random(state) - 0.5f) * 0.4f,
               cy + (next_random(state) - 0.5f) * 0.4f, cz + (next_random(state) - 0.5f) * 0.4f);
}

void
xt_make_frames(struct em_tracking_frame *frames, int count, unsigned seed)
{
    unsigned state = seed ? seed : 1u;
    for (int k = 0; k < count; ++k) {
        struct em_tracking_frame *f = &frames[k];
        memset(f, 0, sizeof *f);
        f->time_s = (double)k / 60.0;
        random_pose(&state, 0.0f, 1.6f, 0.0f, &f->device[EM_DEVICE_HEAD].pose);
        random_pose(&state, 0.3f, 1.1f, 0.2f, &f->device[EM_DEVICE_LEFT_HAND].pose);
        random_pose(&state, -0.3f, 1.1f, 0.2f, &f->device[EM_DEVICE_RIGHT_HAND].pose);
        for (int d = 0; d < EM_DEVICE_COUNT; ++d)
            f->device[d].flags = EM_POSE_ALL_VALID;
    }
}

const char *
xt_temp_path(const char *name, char *out, size_t out_size)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tests/xr/tmp", EMBODY_BINARY_DIR);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        fail_msg("cannot make %s: %s", dir, strerror(errno));
    if (snprintf(out, out_size, "%s/%s-%s", dir, EMBODY_TEST_PROGRAM, name) >= (int)out_size)
        fail_msg("temporary path for %s too long", name);
    return out;
}

void
xt_write_stream(const char *path, const struct em_tracking_frame *frames, int count)
{
    FILE *f = fopen(path, "w");
    if (!f)
        fail_msg("cannot write %s", path);
    fprintf(f, "t");
    static const char *const names[] = {"head", "left", "right"};
    static const char *const fields[] = {"px", "py", "pz", "qx", "qy", "qz", "qw", "valid"};
    for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
        for (int i = 0; i < 8; ++i)
            fprintf(f, ",%s_%s", names[d], fields[i]);
    }
    fputc('\n', f);
    for (int k = 0; k < count; ++k) {
        fprintf(f, "%.17g", frames[k].time_s);
        for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
            const struct em_device_pose *p = &frames[k].device[d];
            for (int i = 0; i < 3; ++i)
                fprintf(f, ",%.9g", (double)p->pose.position_m[i]);
            for (int i = 0; i < 4; ++i)
                fprintf(f, ",%.9g", (double)p->pose.orientation[i]);
            fprintf(f, ",%d", em_device_pose_usable(p) ? 1 : 0);
        }
        fputc('\n', f);
    }
    if (fclose(f) != 0)
        fail_msg("cannot write %s", path);
}

const char *
xt_write_script(const char *name, const struct em_tracking_frame *frames, int count,
                const char *text, char *out, size_t out_size)
{
    char csv_name[256], csv[1024];
    snprintf(csv_name, sizeof csv_name, "%s.csv", name);
    xt_temp_path(csv_name, csv, sizeof csv);
    char script_name[256];
    snprintf(script_name, sizeof script_name, "%s.script", name);
    xt_temp_path(script_name, out, out_size);
    FILE *f = fopen(out, "w");
    if (!f)
        fail_msg("cannot write %s", out);
    if (frames) {
        xt_write_stream(csv, frames, count);
        fprintf(f, "poses %s\n", csv);
    }
    fprintf(f, "%s\n", text ? text : "");
    if (fclose(f) != 0)
        fail_msg("cannot write %s", out);
    return out;
}

void
xt_use_runtime(const char *script_path)
{
    setenv("XR_RUNTIME_JSON", EMBODY_TEST_RUNTIME_JSON, 1);
    setenv("EMBODY_TEST_RUNTIME_SCRIPT", script_path, 1);
}

const struct tr_report *
xt_report(void)
{
    void *lib = dlopen(EMBODY_TEST_RUNTIME_LIB, RTLD_NOW | RTLD_NOLOAD);
    if (!lib)
        return NULL;
    tr_report_fn fn;
    /* POSIX: a function pointer may be copied out of dlsym's object pointer. */
    void *sym = dlsym(lib, TR_REPORT_FUNCTION);
    memcpy(&fn, &sym, sizeof fn);
    const struct tr_report *report = fn ? fn() : NULL;
    dlclose(lib);
    return report;
}

void
xt_assert_no_violations(void)
{
    const struct tr_report *r = xt_report();
    assert_non_null(r);
    for (int i = 0; i < r->violation_count && i < TR_REPORT_MAX_MESSAGES; ++i)
        print_error("runtime caught: %s\n", r->violations[i]);
    assert_int_equal(r->violation_count, 0);
}

int
xt_pull_frames(struct in_source *src, struct em_tracking_frame *out, int count, int max_calls,
               enum em_result *out_last)
{
    int got = 0;
    enum em_result r = EM_NOT_READY;
    for (int calls = 0; got < count && calls < max_calls; ++calls) {
        r = in_source_next(src, &out[got]);
        if (r == EM_OK) {
            got++;
            const enum em_result s = in_source_submit(src);
            if (s < 0)
                fail_msg("submit failed: %s", em_result_string(s));
        } else if (r != EM_NOT_READY) {
            break;
        }
    }
    if (out_last)
        *out_last = r;
    return got;
}

bool
xt_pose_equal(const struct em_pose *a, const struct em_pose *b)
{
    return memcmp(a->orientation, b->orientation, sizeof(float) * 4) == 0 &&
           memcmp(a->position_m, b->position_m, sizeof(float) * 3) == 0;
}

int
xt_find_row(const struct em_tracking_frame *frames, int count, const struct em_pose *head)
{
    for (int k = 0; k < count; ++k) {
        if (xt_pose_equal(&frames[k].device[EM_DEVICE_HEAD].pose, head))
            return k;
    }
    return -1;
}

void
xt_gl_open(struct xt_gl *gl)
{
    if (SDL_Init(SDL_INIT_VIDEO) != 0)
        fail_msg("SDL_Init: %s", SDL_GetError());
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MAJOR_VERSION, 3);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MINOR_VERSION, 3);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_PROFILE_MASK, SDL_GL_CONTEXT_PROFILE_CORE);
    SDL_GL_SetAttribute(SDL_GL_DOUBLEBUFFER, 1);
    SDL_GL_SetAttribute(SDL_GL_DEPTH_SIZE, 24);
    SDL_Window *window = SDL_CreateWindow("embody xr test", 0, 0, 320, 240,
                                          SDL_WINDOW_OPENGL | SDL_WINDOW_HIDDEN);
    if (!window)
        fail_msg("SDL_CreateWindow: %s", SDL_GetError());
    SDL_GLContext context = SDL_GL_CreateContext(window);
    if (!context)
        fail_msg("SDL_GL_CreateContext: %s", SDL_GetError());
    SDL_GL_MakeCurrent(window, context);
    gl->window = window;
    gl->context = context;
}

void
xt_gl_close(struct xt_gl *gl)
{
    if (gl->context)
        SDL_GL_DeleteContext(gl->context);
    if (gl->window)
        SDL_DestroyWindow(gl->window);
    gl->context = NULL;
    gl->window = NULL;
    /* No SDL_Quit: it unloads the OpenGL driver, whose allocations (reachable until then)
     * would be reported as leaks of an unknown module by LeakSanitizer. */
}

void
xt_ensure_display(int argc, char **argv)
{
    (void)argc;
    const char *display = getenv("DISPLAY");
    if ((display && display[0]) || getenv("EMBODY_XVFB_STARTED"))
        return;
    setenv("EMBODY_XVFB_STARTED", "1", 1);
    char *args[64] = {"xvfb-run", "-a", "-s", "-screen 0 1280x1024x24"};
    int n = 4;
    for (int i = 0; argv[i] && n < 63; ++i)
        args[n++] = argv[i];
    args[n] = NULL;
    execvp(args[0], args);
    fprintf(stderr, "%s: no display and no xvfb-run (%s)\n", argv[0], strerror(errno));
    exit(1);
}
