/*
 * The mirror view's public functions (src/render/render.h): the SDL2 window and its
 * OpenGL 3.3 core context, events and keys, the frame: the scene drawn into an
 * off-screen (multisampled) framebuffer, the HUD over it, then shown in the window. The
 * off-screen image is what screenshots and tests read, so a hidden window under Xvfb
 * gives the same pixels as a visible one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cglm/cglm.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#include <stb_image_write.h>
#pragma GCC diagnostic pop

#include "embody/m_math.h"
#include "render/r_internal.h"
#include "util/u_file.h"
#include "util/u_log.h"
#include "util/u_time.h"

#define HUD_FONT_PX 15.0f
#define MESSAGE_TIME_NS 3000000000LL

static const char *const k_program_files[R_PROGRAM_COUNT][2] = {
    [R_PROGRAM_MESH] = {"mesh.vert", "mesh.frag"},
    [R_PROGRAM_FLOOR] = {"floor.vert", "floor.frag"},
    [R_PROGRAM_BACKGROUND] = {"background.vert", "background.frag"},
    [R_PROGRAM_TEXT] = {"text.vert", "text.frag"},
    [R_PROGRAM_SKIN] = {"skin.vert", "skin.frag"},
};

static void
set_message(struct render *r, const char *text)
{
    snprintf(r->hud.message, sizeof r->hud.message, "%s", text);
    r->hud.message_until_ns = u_time_now_ns() + MESSAGE_TIME_NS;
}

/* ---- Setup ---- */

static enum em_result
open_window(struct render *r, const struct render_desc *desc, struct em_error *err)
{
    const char *display = getenv("DISPLAY");
    const char *wayland = getenv("WAYLAND_DISPLAY");
    const bool no_display = (!display || !display[0]) && (!wayland || !wayland[0]);
    if (SDL_InitSubSystem(SDL_INIT_VIDEO) != 0) {
        if (no_display)
            return em_fail(err, EM_ERROR_UNSUPPORTED,
                           "no display: DISPLAY is not set; run under xvfb-run or on a "
                           "desktop (SDL: %s)",
                           SDL_GetError());
        return em_fail(err, EM_ERROR_UNSUPPORTED, "cannot open the display %s: %s",
                       display && display[0] ? display : wayland, SDL_GetError());
    }
    r->sdl_started = true;

    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MAJOR_VERSION, 3);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MINOR_VERSION, 3);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_PROFILE_MASK, SDL_GL_CONTEXT_PROFILE_CORE);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_FLAGS, SDL_GL_CONTEXT_FORWARD_COMPATIBLE_FLAG);
    SDL_GL_SetAttribute(SDL_GL_DOUBLEBUFFER, 1);
    SDL_GL_SetAttribute(SDL_GL_DEPTH_SIZE, 0); /* the scene has its own depth buffer */
    Uint32 flags = SDL_WINDOW_OPENGL | SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI;
    flags |= desc->hidden ? SDL_WINDOW_HIDDEN : SDL_WINDOW_SHOWN;
    r->window = SDL_CreateWindow(desc->title, SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED,
                                 desc->width, desc->height, flags);
    if (!r->window) {
        if (no_display)
            return em_fail(err, EM_ERROR_UNSUPPORTED,
                           "no display: DISPLAY is not set; run under xvfb-run or on a "
                           "desktop (SDL: %s)",
                           SDL_GetError());
        return em_fail(err, EM_ERROR_UNSUPPORTED, "cannot open a %dx%d OpenGL window: %s",
                       desc->width, desc->height, SDL_GetError());
    }
    r->context = SDL_GL_CreateContext(r->window);
    if (!r->context)
        return em_fail(err, EM_ERROR_UNSUPPORTED,
                       "no OpenGL 3.3 core context: %s (with no GPU, Mesa's software "
                       "renderer llvmpipe provides one: install libgl1-mesa-dri)",
                       SDL_GetError());
    SDL_GL_MakeCurrent(r->window, r->context);
    if (epoxy_gl_version() < 33)
        return em_fail(err, EM_ERROR_UNSUPPORTED, "OpenGL %d.%d found, 3.3 needed (renderer: %s)",
                       epoxy_gl_version() / 10, epoxy_gl_version() % 10,
                       (const char *)glGetString(GL_RENDERER));
    SDL_GL_SetSwapInterval(desc->vsync ? 1 : 0);
    return EM_OK;
}

static enum em_result
load_programs(struct render *r, const char *shader_dir, struct em_error *err)
{
    for (int p = 0; p < R_PROGRAM_COUNT; ++p) {
        struct r_shader_source vert, frag;
        enum em_result res = r_shader_read(shader_dir, k_program_files[p][0], &vert, err);
        if (res != EM_OK)
            return res;
        res = r_shader_read(shader_dir, k_program_files[p][1], &frag, err);
        if (res == EM_OK)
            res = r_program_build(&vert, &frag, &r->program[p], err);
        r_shader_source_fini(&vert);
        r_shader_source_fini(&frag);
        if (res != EM_OK)
            return res;
    }
    return EM_OK;
}

static void
create_buffers(struct render *r)
{
    glGenBuffers(1, &r->instance_buffer);
    glGenVertexArrays(1, &r->empty_vao);

    /* The floor: a quad at y = 0 far larger than the grid's fade distance. */
    const float e = 100.0f;
    const float floor[6][3] = {{-e, 0, -e}, {-e, 0, e}, {e, 0, e},
                               {-e, 0, -e}, {e, 0, e},  {e, 0, -e}};
    glGenVertexArrays(1, &r->floor_vao);
    glBindVertexArray(r->floor_vao);
    glGenBuffers(1, &r->floor_buffer);
    glBindBuffer(GL_ARRAY_BUFFER, r->floor_buffer);
    glBufferData(GL_ARRAY_BUFFER, sizeof floor, floor, GL_STATIC_DRAW);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 3 * sizeof(float), NULL);

    glGenVertexArrays(1, &r->text_vao);
    glBindVertexArray(r->text_vao);
    glGenBuffers(1, &r->text_buffer);
    glBindBuffer(GL_ARRAY_BUFFER, r->text_buffer);
    const GLsizei stride = sizeof(struct r_text_vertex);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, stride,
                          (const void *)offsetof(struct r_text_vertex, x));
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 2, GL_FLOAT, GL_FALSE, stride,
                          (const void *)offsetof(struct r_text_vertex, u));
    glEnableVertexAttribArray(2);
    glVertexAttribPointer(2, 4, GL_UNSIGNED_BYTE, GL_TRUE, stride,
                          (const void *)offsetof(struct r_text_vertex, rgba));
    glBindVertexArray(0);
}

static void
target_destroy(struct r_target *t)
{
    if (t->framebuffer)
        glDeleteFramebuffers(1, &t->framebuffer);
    if (t->color)
        glDeleteRenderbuffers(1, &t->color);
    if (t->depth)
        glDeleteRenderbuffers(1, &t->depth);
    memset(t, 0, sizeof *t);
}

static bool
target_create(struct r_target *t, int width, int height, int samples)
{
    memset(t, 0, sizeof *t);
    t->width = width;
    t->height = height;
    t->samples = samples;
    glGenFramebuffers(1, &t->framebuffer);
    glBindFramebuffer(GL_FRAMEBUFFER, t->framebuffer);
    glGenRenderbuffers(1, &t->color);
    glBindRenderbuffer(GL_RENDERBUFFER, t->color);
    glRenderbufferStorageMultisample(GL_RENDERBUFFER, samples > 1 ? samples : 0, GL_RGBA8, width,
                                     height);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, t->color);
    glGenRenderbuffers(1, &t->depth);
    glBindRenderbuffer(GL_RENDERBUFFER, t->depth);
    glRenderbufferStorageMultisample(GL_RENDERBUFFER, samples > 1 ? samples : 0,
                                     GL_DEPTH_COMPONENT24, width, height);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, t->depth);
    const bool ok = glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    return ok;
}

/* Makes the off-screen images match the window's drawable size and the font its scale. */
static void
fit_to_window(struct render *r)
{
    int w = 0, h = 0, points_w = 0, points_h = 0;
    SDL_GL_GetDrawableSize(r->window, &w, &h);
    SDL_GetWindowSize(r->window, &points_w, &points_h);
    if (w < 1 || h < 1)
        return; /* minimised */
    const float scale = points_w > 0 ? fmaxf((float)w / (float)points_w, 1.0f) : 1.0f;
    if (fabsf(scale - r->ui_scale) > 0.01f) {
        struct em_error err;
        if (r_font_resize(&r->font, HUD_FONT_PX * scale, &err) == EM_OK)
            r->ui_scale = scale;
        else
            U_LOG_W("render: %s", err.message);
    }
    if (w == r->width_px && h == r->height_px && r->resolved.framebuffer)
        return;
    target_destroy(&r->msaa);
    target_destroy(&r->resolved);
    if (r->msaa_samples > 1 && !target_create(&r->msaa, w, h, r->msaa_samples)) {
        U_LOG_W("render: no %dx multisampled framebuffer; drawing without anti-aliasing",
                r->msaa_samples);
        target_destroy(&r->msaa);
        r->msaa_samples = 1;
    }
    if (!target_create(&r->resolved, w, h, 1))
        U_LOG_E("render: cannot create a %dx%d framebuffer", w, h);
    r->width_px = w;
    r->height_px = h;
}

/* Anti-aliasing by default: 4 samples on a GPU; none on a software renderer, where it
 * costs two to three times the frame time (see tests/render/bench_render.c). */
static int
default_samples(void)
{
    const char *name = (const char *)glGetString(GL_RENDERER);
    static const char *const software[] = {"llvmpipe", "softpipe", "swrast", "SwiftShader"};
    for (size_t i = 0; name && i < sizeof software / sizeof software[0]; ++i)
        if (strstr(name, software[i]))
            return 1;
    return 4;
}

enum em_result
render_create(const struct render_desc *desc_in, struct render **out_render, struct em_error *err)
{
    *out_render = NULL;
    struct render_desc desc = desc_in ? *desc_in : (struct render_desc){0};
    if (desc.width == 0)
        desc.width = 1280;
    if (desc.height == 0)
        desc.height = 720;
    if (!desc.title)
        desc.title = "embody";
    if (desc.width < 16 || desc.height < 16 || desc.width > 16384 || desc.height > 16384)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "render: window size %dx%d: expected 16 to 16384 on each side", desc.width,
                       desc.height);
    if (desc.msaa_samples < 0 || desc.msaa_samples > 16)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "render: msaa_samples %d: expected 1 to 16",
                       desc.msaa_samples);

    struct render *r = aligned_alloc(16, (sizeof *r + 15) & ~(size_t)15);
    if (!r)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "render: out of memory");
    memset(r, 0, sizeof *r);
    r->show_targets = desc.show_targets;
    r->show_figure = desc.show_figure;
    r->show_ghost = !desc.hide_ghost;
    r->hud.visible = !desc.hide_hud;
    r_camera_init(&r->camera);

    enum em_result res = open_window(r, &desc, err);
    if (res == EM_OK)
        res = load_programs(r, desc.shader_dir, err);
    if (res == EM_OK) {
        create_buffers(r);
        res = r_meshes_create(r->mesh, r->instance_buffer, err);
    }
    if (res == EM_OK)
        res = r_font_create(&r->font, desc.font_path, HUD_FONT_PX, err);
    if (res != EM_OK) {
        render_destroy(&r);
        return res;
    }
    r->ui_scale = 1.0f;
    GLint max_samples = 1;
    glGetIntegerv(GL_MAX_SAMPLES, &max_samples);
    const int samples = desc.msaa_samples ? desc.msaa_samples : default_samples();
    r->msaa_samples = samples < max_samples ? samples : max_samples;
    fit_to_window(r);
    if (!r->resolved.framebuffer || r->width_px < 1) {
        render_destroy(&r);
        return em_fail(err, EM_ERROR_UNSUPPORTED, "render: cannot create the framebuffers");
    }
    r_camera_view(&r->camera, (float)r->width_px / (float)r->height_px, &r->last_view);
    U_LOG_D("render: %s, OpenGL %s, %dx%d pixels, %d samples",
            (const char *)glGetString(GL_RENDERER), (const char *)glGetString(GL_VERSION),
            r->width_px, r->height_px, r->msaa_samples);
    *out_render = r;
    return EM_OK;
}

void
render_destroy(struct render **render)
{
    struct render *r = render ? *render : NULL;
    if (!r)
        return;
    if (r->context) {
        SDL_GL_MakeCurrent(r->window, r->context);
        for (int p = 0; p < R_PROGRAM_COUNT; ++p)
            if (r->program[p])
                glDeleteProgram(r->program[p]);
        r_meshes_destroy(r->mesh);
        r_skin_destroy(&r->skin);
        GLuint buffers[3] = {r->instance_buffer, r->floor_buffer, r->text_buffer};
        glDeleteBuffers(3, buffers);
        GLuint arrays[3] = {r->floor_vao, r->empty_vao, r->text_vao};
        glDeleteVertexArrays(3, arrays);
        target_destroy(&r->msaa);
        target_destroy(&r->resolved);
        r_font_destroy(&r->font);
        SDL_GL_DeleteContext(r->context);
    }
    if (r->window)
        SDL_DestroyWindow(r->window);
    if (r->sdl_started)
        SDL_QuitSubSystem(SDL_INIT_VIDEO);
    r_parts_fini(&r->parts);
    free(r->staged);
    r_text_batch_fini(&r->text);
    free(r);
    *render = NULL;
}

/* ---- Drawing ---- */

enum staged_group { STAGED_SOLID = 0, STAGED_GHOST, STAGED_OVERLAY, STAGED_GROUPS };

/* Copies every instance of the frame into one array and uploads it in one call; each
 * group's and mesh's first instance goes to staged_first. False when out of memory. */
static bool
stage_instances(struct render *r)
{
    const struct r_instance_list *groups[STAGED_GROUPS] = {r->parts.solid, r->parts.ghost,
                                                           r->parts.overlay};
    int total = 0;
    for (int g = 0; g < STAGED_GROUPS; ++g)
        for (int m = 0; m < R_MESH_COUNT; ++m)
            total += groups[g][m].count;
    if (total > r->staged_capacity) {
        struct r_instance *grown = realloc(r->staged, (size_t)total * sizeof *grown);
        if (!grown)
            return false;
        r->staged = grown;
        r->staged_capacity = total;
    }
    int at = 0;
    for (int g = 0; g < STAGED_GROUPS; ++g)
        for (int m = 0; m < R_MESH_COUNT; ++m) {
            r->staged_first[g][m] = at;
            if (groups[g][m].count > 0)
                memcpy(r->staged + at, groups[g][m].items,
                       (size_t)groups[g][m].count * sizeof *r->staged);
            at += groups[g][m].count;
        }
    glBindBuffer(GL_ARRAY_BUFFER, r->instance_buffer);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)((size_t)total * sizeof(struct r_instance)),
                 total > 0 ? r->staged : NULL, GL_STREAM_DRAW);
    return true;
}

static void
draw_instances(const struct render *r, const struct r_instance_list lists[R_MESH_COUNT],
               enum staged_group group)
{
    glBindBuffer(GL_ARRAY_BUFFER, r->instance_buffer);
    for (int m = 0; m < R_MESH_COUNT; ++m) {
        if (lists[m].count == 0)
            continue;
        glBindVertexArray(r->mesh[m].vao);
        r_mesh_point_instances((size_t)r->staged_first[group][m]);
        glDrawElementsInstanced(GL_TRIANGLES, r->mesh[m].index_count, GL_UNSIGNED_INT, NULL,
                                lists[m].count);
    }
    glBindVertexArray(0);
}

static GLint
uniform(GLuint program, const char *name)
{
    return glGetUniformLocation(program, name);
}

static void
draw_background(const struct render *r)
{
    const GLuint p = r->program[R_PROGRAM_BACKGROUND];
    glUseProgram(p);
    const float top[3] = {R_COLOR_BG_TOP}, horizon[3] = {R_COLOR_BG_HORIZON};
    glUniform3fv(uniform(p, "u_top_color"), 1, top);
    glUniform3fv(uniform(p, "u_horizon_color"), 1, horizon);
    glDisable(GL_DEPTH_TEST);
    glDepthMask(GL_FALSE);
    glBindVertexArray(r->empty_vao);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glDepthMask(GL_TRUE);
}

static void
draw_floor(const struct render *r, const struct r_view *view)
{
    const GLuint p = r->program[R_PROGRAM_FLOOR];
    glUseProgram(p);
    glUniformMatrix4fv(uniform(p, "u_view_proj"), 1, GL_FALSE, (const float *)view->view_proj);
    glUniform3fv(uniform(p, "u_focus"), 1, r->parts.focus_m);
    glUniform2f(uniform(p, "u_fade_m"), 3.0f, 12.0f);
    const float floor_rgb[3] = {R_COLOR_FLOOR}, grid_rgb[3] = {R_COLOR_GRID};
    glUniform3fv(uniform(p, "u_floor_color"), 1, floor_rgb);
    glUniform3fv(uniform(p, "u_line_color"), 1, grid_rgb);
    glUniform4fv(uniform(p, "u_shadow"), 3, (const float *)r->parts.shadow);
    glEnable(GL_DEPTH_TEST);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    /* Push the floor back a little so soles resting on it win the depth test. */
    glEnable(GL_POLYGON_OFFSET_FILL);
    glPolygonOffset(1.0f, 4.0f);
    glBindVertexArray(r->floor_vao);
    glDrawArrays(GL_TRIANGLES, 0, 6);
    glDisable(GL_POLYGON_OFFSET_FILL);
    glDisable(GL_BLEND);
}

/* The key light follows the camera: above it, a little to the left, so the side the
 * viewer sees is always lit. The view's rows are the eye's axes (unmirrored). */
static void
key_light(const struct r_view *view, float out_key[3])
{
    const float *const m = (const float *)view->view;
    for (int a = 0; a < 3; ++a)
        out_key[a] = -0.35f * m[a * 4 + 0] + 0.8f * m[a * 4 + 1] + 0.6f * m[a * 4 + 2];
    const float fallback[3] = {0.0f, 1.0f, 0.0f};
    m_vec3_normalize_or(out_key, fallback, out_key);
}

/* The ghosts over the solid parts, blended and not depth-tested: where the truth is
 * inside the avatar (a good reconstruction) its bones still show, as on an X-ray. */
static void
draw_ghosts(const struct render *r, GLuint program)
{
    glDisable(GL_DEPTH_TEST);
    glEnable(GL_BLEND);
    glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
    glDepthMask(GL_FALSE);
    glUniform1f(uniform(program, "u_alpha"), R_GHOST_ALPHA);
    draw_instances(r, r->parts.ghost, STAGED_GHOST);
    glUniform1f(uniform(program, "u_alpha"), 1.0f);
    glDepthMask(GL_TRUE);
    glDisable(GL_BLEND);
    glEnable(GL_DEPTH_TEST);
}

static void
draw_parts(struct render *r, const struct r_view *view)
{
    if (!stage_instances(r)) {
        U_LOG_W("render: out of memory for the frame's parts; nothing drawn");
        return;
    }
    const GLuint p = r->program[R_PROGRAM_MESH];
    glUseProgram(p);
    glUniformMatrix4fv(uniform(p, "u_view_proj"), 1, GL_FALSE, (const float *)view->view_proj);
    glUniform3fv(uniform(p, "u_camera_pos"), 1, view->eye_m);
    float key[3];
    key_light(view, key);
    glUniform3fv(uniform(p, "u_key_dir"), 1, key);

    glEnable(GL_DEPTH_TEST);
    glEnable(GL_CULL_FACE);
    glCullFace(GL_BACK);
    /* A mirrored projection turns counter-clockwise triangles clockwise on screen. */
    glFrontFace(view->mirrored ? GL_CW : GL_CCW);
    glUniform1f(uniform(p, "u_alpha"), 1.0f);
    draw_instances(r, r->parts.solid, STAGED_SOLID);
    draw_ghosts(r, p);
    glDisable(GL_DEPTH_TEST);
    draw_instances(r, r->parts.overlay, STAGED_OVERLAY);
    glFrontFace(GL_CCW);
    glDisable(GL_CULL_FACE);
}

/* The skinned avatar, and the second one (--compare) with the same mesh at its pose. */
static bool
draw_skinned(struct render *r, const struct render_scene *scene, const struct r_view *view,
             const float key[3])
{
    if (!r_skin_draw(&r->skin, r->program[R_PROGRAM_SKIN], scene, view, key))
        return false;
    if (!scene->second.skeleton || !scene->second.pose)
        return true;
    struct render_scene second = *scene;
    second.skeleton = scene->second.skeleton;
    second.pose = scene->second.pose;
    return r_skin_draw(&r->skin, r->program[R_PROGRAM_SKIN], &second, view, key);
}

void
r_draw_world(struct render *r, const struct render_scene *scene, const struct r_view *view,
             int width, int height)
{
    /* A skinned avatar replaces the capsule figure, unless that is asked for over it. */
    const bool skinned = scene->avatar && scene->avatar_binding && scene->pose;
    r->parts.hide_figure = skinned && !r->show_figure;
    r->parts.show_ghost = r->show_ghost;
    if (!r_parts_build(&r->parts, scene, r->show_targets, view->right, view->up))
        U_LOG_W("render: out of memory building the scene; parts are missing");
    glViewport(0, 0, width, height);
    glDisable(GL_SCISSOR_TEST);
    glDepthMask(GL_TRUE);
    glClearColor(R_COLOR_BG_HORIZON, 1.0f);
    glClearDepth(1.0);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    draw_background(r);
    draw_floor(r, view);
    if (skinned) {
        float key[3];
        key_light(view, key);
        if (!draw_skinned(r, scene, view, key) && r->parts.hide_figure) {
            /* The avatar could not be drawn: the capsule figure stands in. */
            r->parts.hide_figure = false;
            if (!r_parts_build(&r->parts, scene, r->show_targets, view->right, view->up))
                U_LOG_W("render: out of memory building the scene; parts are missing");
        }
    }
    draw_parts(r, view);
    glUseProgram(0);
}

static void
draw_hud(struct render *r, const struct render_scene *scene)
{
    r_hud_build(&r->text, &r->font, &r->hud, scene, r->camera.mode, r->last_draw_ms, r->width_px,
                r->height_px, r->ui_scale, u_time_now_ns());
    if (r->text.count == 0)
        return;
    const GLuint p = r->program[R_PROGRAM_TEXT];
    glUseProgram(p);
    glUniform2f(uniform(p, "u_screen_px"), (float)r->width_px, (float)r->height_px);
    glUniform1i(uniform(p, "u_atlas"), 0);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, r->font.texture);
    glDisable(GL_DEPTH_TEST);
    glEnable(GL_BLEND);
    glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
    glBindVertexArray(r->text_vao);
    glBindBuffer(GL_ARRAY_BUFFER, r->text_buffer);
    glBufferData(GL_ARRAY_BUFFER,
                 (GLsizeiptr)((size_t)r->text.count * sizeof(struct r_text_vertex)),
                 r->text.vertices, GL_STREAM_DRAW);
    glDrawArrays(GL_TRIANGLES, 0, r->text.count);
    glBindVertexArray(0);
    glDisable(GL_BLEND);
    glUseProgram(0);
}

void
render_draw(struct render *r, const struct render_scene *scene)
{
    const int64_t start_ns = u_time_now_ns();
    SDL_GL_MakeCurrent(r->window, r->context);
    fit_to_window(r);
    const float dt_s = r->drawn ? (float)(start_ns - r->last_draw_ns) * 1e-9f : 0.0f;
    r_camera_follow(&r->camera, scene, dt_s);
    r_camera_view(&r->camera, (float)r->width_px / (float)r->height_px, &r->last_view);

    const bool msaa = r->msaa.framebuffer != 0;
    glBindFramebuffer(GL_FRAMEBUFFER, msaa ? r->msaa.framebuffer : r->resolved.framebuffer);
    r_draw_world(r, scene, &r->last_view, r->width_px, r->height_px);
    if (msaa) {
        glBindFramebuffer(GL_READ_FRAMEBUFFER, r->msaa.framebuffer);
        glBindFramebuffer(GL_DRAW_FRAMEBUFFER, r->resolved.framebuffer);
        glBlitFramebuffer(0, 0, r->width_px, r->height_px, 0, 0, r->width_px, r->height_px,
                          GL_COLOR_BUFFER_BIT, GL_NEAREST);
    }
    glBindFramebuffer(GL_FRAMEBUFFER, r->resolved.framebuffer);
    draw_hud(r, scene);

    /* Show it: the off-screen image copied into the window. */
    glBindFramebuffer(GL_READ_FRAMEBUFFER, r->resolved.framebuffer);
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
    glBlitFramebuffer(0, 0, r->width_px, r->height_px, 0, 0, r->width_px, r->height_px,
                      GL_COLOR_BUFFER_BIT, GL_NEAREST);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    SDL_GL_SwapWindow(r->window);

    r->drawn = true;
    r->last_draw_ns = start_ns;
    r->last_draw_ms = (float)(u_time_now_ns() - start_ns) * 1e-6f;
}

void
render_draw_eye(struct render *r, const struct render_scene *scene, const mat4 view,
                const mat4 projection, int width, int height)
{
    struct r_view eye;
    r_view_from_matrices(view, projection, false, &eye);
    r_draw_world(r, scene, &eye, width, height);
}

void
render_make_current(struct render *r)
{
    SDL_GL_MakeCurrent(r->window, r->context);
}

/* ---- Reading the image ---- */

void
render_get_size(const struct render *r, int *out_width, int *out_height)
{
    *out_width = r->width_px;
    *out_height = r->height_px;
}

bool
render_read_pixels(struct render *r, uint8_t *out_rgba, size_t size)
{
    const size_t row = (size_t)r->width_px * 4;
    if (size < row * (size_t)r->height_px || !r->resolved.framebuffer)
        return false;
    SDL_GL_MakeCurrent(r->window, r->context);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, r->resolved.framebuffer);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, r->width_px, r->height_px, GL_RGBA, GL_UNSIGNED_BYTE, out_rgba);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    /* OpenGL's rows go up from the bottom; images go down from the top. */
    uint8_t *tmp = malloc(row);
    if (!tmp)
        return false;
    for (int y = 0; y < r->height_px / 2; ++y) {
        uint8_t *a = out_rgba + (size_t)y * row;
        uint8_t *b = out_rgba + (size_t)(r->height_px - 1 - y) * row;
        memcpy(tmp, a, row);
        memcpy(a, b, row);
        memcpy(b, tmp, row);
    }
    free(tmp);
    return true;
}

/* stb's writer hands the PNG over in pieces; errors show in ferror. */
static void
write_png_bytes(void *context, void *data, int size)
{
    if (size > 0)
        fwrite(data, 1, (size_t)size, context);
}

enum em_result
render_screenshot(struct render *r, const char *path, struct em_error *err)
{
    const size_t size = (size_t)r->width_px * (size_t)r->height_px * 4;
    uint8_t *rgba = malloc(size);
    if (!rgba)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory for the screenshot", path);
    if (!render_read_pixels(r, rgba, size)) {
        free(rgba);
        return em_fail(err, EM_ERROR_RUNTIME, "%s: cannot read the image back", path);
    }
    /* Opaque RGB: the image's alpha is blending bookkeeping, not transparency. */
    const size_t count = (size_t)r->width_px * (size_t)r->height_px;
    for (size_t i = 0; i < count; ++i)
        memmove(rgba + i * 3, rgba + i * 4, 3);
    struct u_out_file *out = NULL;
    enum em_result result = u_out_file_open(path, &out, err);
    if (result == EM_OK) {
        const int ok = stbi_write_png_to_func(write_png_bytes, out->file, r->width_px, r->height_px,
                                              3, rgba, r->width_px * 3);
        if (ok && !ferror(out->file)) {
            result = u_out_file_commit(&out, err);
        } else {
            u_out_file_abort(&out);
            result = em_fail(err, EM_ERROR_IO, "%s: cannot write the PNG file", path);
        }
    }
    free(rgba);
    return result;
}

bool
render_project(const struct render *r, const vec3 world_m, float out_pixel_xy[2])
{
    vec4 p = {world_m[0], world_m[1], world_m[2], 1.0f}, clip;
    glm_mat4_mulv((vec4 *)r->last_view.view_proj, p, clip);
    if (!(clip[3] > 1e-6f))
        return false;
    const float x = clip[0] / clip[3], y = clip[1] / clip[3];
    out_pixel_xy[0] = (x * 0.5f + 0.5f) * (float)r->width_px;
    out_pixel_xy[1] = (0.5f - y * 0.5f) * (float)r->height_px;
    return true;
}

/* ---- Camera and state ---- */

void
render_set_camera(struct render *r, enum render_camera camera)
{
    if (camera < 0 || camera >= RENDER_CAMERA_COUNT)
        return;
    r->camera.mode = camera;
    r_camera_view(&r->camera, (float)r->width_px / (float)r->height_px, &r->last_view);
}

enum render_camera
render_get_camera(const struct render *r)
{
    return r->camera.mode;
}

void
render_set_ghost_visible(struct render *r, bool visible)
{
    r->show_ghost = visible;
}

bool
render_ghost_visible(const struct render *r)
{
    return r->show_ghost;
}

float
render_last_draw_ms(const struct render *r)
{
    return r->last_draw_ms;
}

/* ---- Events ---- */

/* Writes embody-YYYYmmdd-HHMMSS.png (with -2, -3... if taken) in the current directory. */
static void
screenshot_key(struct render *r)
{
    char base[64], path[80];
    const time_t now = time(NULL);
    struct tm local;
    localtime_r(&now, &local);
    strftime(base, sizeof base, "embody-%Y%m%d-%H%M%S", &local);
    snprintf(path, sizeof path, "%s.png", base);
    for (int n = 2; n < 100; ++n) {
        FILE *f = fopen(path, "rb");
        if (!f)
            break;
        fclose(f);
        snprintf(path, sizeof path, "%s-%d.png", base, n);
    }
    struct em_error err;
    char message[160];
    if (render_screenshot(r, path, &err) == EM_OK) {
        U_LOG_I("screenshot: %s", path);
        snprintf(message, sizeof message, "screenshot saved: %s", path);
    } else {
        U_LOG_E("screenshot: %s", err.message);
        snprintf(message, sizeof message, "screenshot failed: %.120s", err.message);
    }
    set_message(r, message);
}

static void
change_camera(struct render *r, enum render_camera camera)
{
    render_set_camera(r, camera);
    char message[64];
    snprintf(message, sizeof message, "%s camera", render_camera_name(camera));
    set_message(r, message);
}

/* Switches to the orbit camera, starting from where the current camera looks. */
static void
start_orbit(struct render *r)
{
    if (r->camera.mode == RENDER_CAMERA_ORBIT)
        return;
    const float *eye = r->last_view.eye_m;
    float center[3];
    r_camera_center(&r->camera, center);
    const float dx = eye[0] - center[0], dy = eye[1] - center[1], dz = eye[2] - center[2];
    const float horizontal = sqrtf(dx * dx + dz * dz);
    r->camera.orbit_yaw_rad = atan2f(dx, dz);
    r->camera.orbit_pitch_rad =
        m_clampf(atan2f(dy, horizontal), 3.0f * M_DEG_TO_RAD, 85.0f * M_DEG_TO_RAD);
    r->camera.orbit_distance_m = m_clampf(sqrtf(dx * dx + dy * dy + dz * dz), 0.5f, 30.0f);
    change_camera(r, RENDER_CAMERA_ORBIT);
}

static uint32_t
key_down(struct render *r, const SDL_KeyboardEvent *key)
{
    const bool shift = (key->keysym.mod & KMOD_SHIFT) != 0;
    switch (key->keysym.sym) {
    case SDLK_ESCAPE: return RENDER_ACTION_QUIT;
    case SDLK_c: return RENDER_ACTION_CALIBRATE;
    case SDLK_r: return RENDER_ACTION_RECENTER;
    case SDLK_SPACE: return RENDER_ACTION_PAUSE_TOGGLE;
    case SDLK_F9: return RENDER_ACTION_RECORD_TOGGLE;
    case SDLK_F1: r->hud.help_visible = !r->hud.help_visible; break;
    case SDLK_h: r->hud.visible = !r->hud.visible; break;
    case SDLK_t:
        r->show_targets = !r->show_targets;
        set_message(r, r->show_targets ? "IK targets shown" : "IK targets hidden");
        break;
    case SDLK_b:
        r->show_figure = !r->show_figure;
        set_message(r, r->show_figure ? "capsule figure shown" : "capsule figure hidden");
        break;
    case SDLK_g:
        r->show_ghost = !r->show_ghost;
        set_message(r, r->show_ghost ? "ghost of the truth shown" : "ghost of the truth hidden");
        break;
    case SDLK_k: return RENDER_ACTION_NEXT_SETUP;
    case SDLK_p: return RENDER_ACTION_NEXT_BODY;
    case SDLK_s: screenshot_key(r); break;
    case SDLK_TAB: {
        const int step = shift ? RENDER_CAMERA_COUNT - 1 : 1;
        change_camera(r, (enum render_camera)(((int)r->camera.mode + step) % RENDER_CAMERA_COUNT));
        break;
    }
    case SDLK_1:
    case SDLK_2:
    case SDLK_3:
    case SDLK_4:
    case SDLK_5: change_camera(r, (enum render_camera)(key->keysym.sym - SDLK_1)); break;
    default: break;
    }
    return 0;
}

uint32_t
render_poll(struct render *r)
{
    uint32_t actions = 0;
    SDL_Event e;
    while (SDL_PollEvent(&e)) {
        switch (e.type) {
        case SDL_QUIT: actions |= RENDER_ACTION_QUIT; break;
        case SDL_WINDOWEVENT:
            if (e.window.event == SDL_WINDOWEVENT_CLOSE)
                actions |= RENDER_ACTION_QUIT;
            break;
        case SDL_KEYDOWN:
            if (!e.key.repeat)
                actions |= key_down(r, &e.key);
            break;
        case SDL_MOUSEBUTTONDOWN:
            if (e.button.button == SDL_BUTTON_LEFT) {
                start_orbit(r);
                r->dragging = true;
            }
            break;
        case SDL_MOUSEBUTTONUP:
            if (e.button.button == SDL_BUTTON_LEFT)
                r->dragging = false;
            break;
        case SDL_MOUSEMOTION:
            if (r->dragging) {
                r->camera.orbit_yaw_rad -= (float)e.motion.xrel * 0.006f;
                r->camera.orbit_pitch_rad =
                    m_clampf(r->camera.orbit_pitch_rad + (float)e.motion.yrel * 0.006f,
                             3.0f * M_DEG_TO_RAD, 85.0f * M_DEG_TO_RAD);
            }
            break;
        case SDL_MOUSEWHEEL:
            start_orbit(r);
            r->camera.orbit_distance_m =
                m_clampf(r->camera.orbit_distance_m * powf(0.9f, (float)e.wheel.y), 0.5f, 30.0f);
            break;
        default: break;
        }
    }
    return actions;
}
