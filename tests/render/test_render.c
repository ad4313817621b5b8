/*
 * Mirror view tests. They open a real (hidden) window with an OpenGL 3.3 core context, so
 * they need a display: CI runs them under Xvfb with Mesa's software renderer. They check
 * what the image shows: the avatar's head, hands and feet where they project, the sides
 * mirrored, the floor grid, a lost device's changed gizmo; and that failures (a broken
 * shader, no display) are reported with what is wrong.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <cglm/cglm.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wdouble-promotion"
#pragma GCC diagnostic ignored "-Wshadow"
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#include <stb_image.h>
#pragma GCC diagnostic pop

#include "embody/m_math.h"
#include "render/render.h"
#include "render/r_internal.h"
#include "render_check.h"

#define HUMANOID EMBODY_SOURCE_DIR "/config/humanoid.json"

static void
read_image(struct render *r, struct render_check_image *image)
{
    assert_true(render_check_image_read(r, image));
}

static float
projected_x(struct render *r, const struct render_check_scene *ts, enum sk_bone bone)
{
    float px[2];
    assert_true(render_project(r, ts->pose.position_m[ts->skeleton.bone_joint[bone]], px));
    return px[0];
}

static void
expect_avatar_visible(struct render *r, const struct render_check_scene *ts)
{
    struct render_check_image image;
    read_image(r, &image);
    char report[2048];
    const int failed = render_check_avatar(r, &image, &ts->scene, report, sizeof report);
    render_check_image_fini(&image);
    if (failed)
        fail_msg("%d part(s) not drawn where they project:\n%s", failed, report);
}

static void
mirror_view_shows_head_hands_and_feet_where_they_project(void **state)
{
    (void)state;
    struct render_check_scene ts;
    render_check_scene_load(&ts, HUMANOID);
    struct render *r = render_check_open_hidden();
    assert_int_equal(render_get_camera(r), RENDER_CAMERA_MIRROR);
    render_draw(r, &ts.scene);
    render_draw(r, &ts.scene);
    expect_avatar_visible(r, &ts);
    /* A mirror: the player's left hand (at +X, the body faces +Z) is on the left. */
    assert_true(projected_x(r, &ts, SK_LEFT_HAND) < projected_x(r, &ts, SK_HEAD));
    assert_true(projected_x(r, &ts, SK_HEAD) < projected_x(r, &ts, SK_RIGHT_HAND));
    render_destroy(&r);
    assert_null(r);
    render_check_scene_fini(&ts);
}

static void
front_camera_is_not_mirrored(void **state)
{
    (void)state;
    struct render_check_scene ts;
    render_check_scene_load(&ts, HUMANOID);
    struct render *r = render_check_open_hidden();
    render_set_camera(r, RENDER_CAMERA_FRONT);
    render_draw(r, &ts.scene);
    expect_avatar_visible(r, &ts);
    /* Seen from the front, the player's left hand is on the viewer's right. */
    assert_true(projected_x(r, &ts, SK_LEFT_HAND) > projected_x(r, &ts, SK_RIGHT_HAND));
    render_destroy(&r);
    render_check_scene_fini(&ts);
}

static void
mirror_camera_follows_the_player(void **state)
{
    (void)state;
    struct render_check_scene ts;
    render_check_scene_load(&ts, HUMANOID);
    /* The whole body turned to face +X and moved 2 m away: still in the middle, facing. */
    const float up[3] = {0.0f, 1.0f, 0.0f};
    m_quat_from_axis_angle(up, 90.0f * M_DEG_TO_RAD, ts.pose.local_rotation[0]);
    ts.pose.position_m[0][0] += 2.0f;
    ts.pose.position_m[0][2] -= 1.5f;
    sk_pose_forward_kinematics(&ts.pose, &ts.skeleton);
    render_check_place_devices(&ts);
    struct render *r = render_check_open_hidden();
    render_draw(r, &ts.scene);
    expect_avatar_visible(r, &ts);
    int w, h;
    render_get_size(r, &w, &h);
    const float x = projected_x(r, &ts, SK_HIPS);
    assert_true(fabsf(x - 0.5f * (float)w) < 0.05f * (float)w);
    assert_true(projected_x(r, &ts, SK_LEFT_HAND) < projected_x(r, &ts, SK_RIGHT_HAND));
    render_destroy(&r);
    render_check_scene_fini(&ts);
}

/* Mean brightness around a pixel. */
static float
brightness(const struct render_check_image *image, const float px[2], int radius)
{
    float sum = 0.0f;
    int n = 0;
    for (int dy = -radius; dy <= radius; ++dy) {
        for (int dx = -radius; dx <= radius; ++dx) {
            const int x = (int)px[0] + dx, y = (int)px[1] + dy;
            if (x < 0 || y < 0 || x >= image->width || y >= image->height)
                continue;
            const uint8_t *p = image->rgba + ((size_t)y * (size_t)image->width + (size_t)x) * 4;
            sum += (float)(p[0] + p[1] + p[2]) / 3.0f;
            ++n;
        }
    }
    return n ? sum / (float)n : 0.0f;
}

static void
floor_grid_is_drawn_around_the_avatar(void **state)
{
    (void)state;
    struct render_check_scene ts;
    render_check_scene_load(&ts, HUMANOID);
    struct render *r = render_check_open_hidden();
    render_draw(r, &ts.scene);
    struct render_check_image image;
    read_image(r, &image);
    /* Metre lines on both sides of the player, behind them and beside, away from the
     * world axes (drawn in colour) and the avatar; each compared with the middle of the
     * nearest 25 cm cell. */
    const float lines[][3] = {{1.5f, 0, -1.0f}, {-1.5f, 0, -1.0f}, {1.0f, 0, 0.4f},
                              {-1.0f, 0, 0.4f}, {2.0f, 0, -1.6f},  {-2.0f, 0, -1.6f}};
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; ++i) {
        float line_px[2], cell_px[2];
        const float *p = lines[i];
        /* The cell's middle: 1/8 m off the line (inside the 25 cm cell beside it). */
        const float cell[3] = {p[0] + (fabsf(remainderf(p[0], 1.0f)) < 1e-3f ? 0.125f : 0.0f), 0.0f,
                               p[2] + (fabsf(remainderf(p[2], 1.0f)) < 1e-3f ? 0.125f : 0.0f)};
        assert_true(render_project(r, p, line_px));
        assert_true(render_project(r, cell, cell_px));
        assert_true(line_px[0] > 0 && line_px[0] < (float)image.width);
        assert_true(line_px[1] > 0 && line_px[1] < (float)image.height);
        const float on_line = brightness(&image, line_px, 0);
        const float in_cell = brightness(&image, cell_px, 0);
        if (!(on_line > in_cell + 30.0f))
            fail_msg("grid line at (%.2f, %.2f) m, pixel (%.0f, %.0f): brightness %.0f, "
                     "cell beside it %.0f",
                     (double)p[0], (double)p[2], (double)line_px[0], (double)line_px[1],
                     (double)on_line, (double)in_cell);
        const uint8_t *c =
            image.rgba + ((size_t)cell_px[1] * (size_t)image.width + (size_t)cell_px[0]) * 4;
        assert_int_equal(render_check_classify(c), RENDER_CHECK_BACKDROP);
    }
    /* Far away the grid has faded into the background: no lines. */
    float far_line[2], far_cell[2];
    const float far_p[3] = {-15.0f, 0, -40.0f}, far_c[3] = {-14.5f, 0, -40.0f};
    if (render_project(r, far_p, far_line) && render_project(r, far_c, far_cell)) {
        const float a = brightness(&image, far_line, 0), b = brightness(&image, far_cell, 0);
        if (!(fabsf(a - b) < 6.0f))
            fail_msg("far line (%.0f, %.0f) %.0f, cell (%.0f, %.0f) %.0f", (double)far_line[0],
                     (double)far_line[1], (double)a, (double)far_cell[0], (double)far_cell[1],
                     (double)b);
    }
    render_check_image_fini(&image);
    render_destroy(&r);
    render_check_scene_fini(&ts);
}

/* Pixels near `px` that are the lost mark's red. */
static int
red_pixels(const struct render_check_image *image, const float px[2], int radius)
{
    int n = 0;
    for (int dy = -radius; dy <= radius; ++dy) {
        for (int dx = -radius; dx <= radius; ++dx) {
            const int x = (int)px[0] + dx, y = (int)px[1] + dy;
            if (x < 0 || y < 0 || x >= image->width || y >= image->height)
                continue;
            const uint8_t *p = image->rgba + ((size_t)y * (size_t)image->width + (size_t)x) * 4;
            n += p[0] > 200 && p[1] < 80 && p[2] < 80;
        }
    }
    return n;
}

static void
lost_device_is_greyed_and_marked(void **state)
{
    (void)state;
    struct render_check_scene ts;
    render_check_scene_load(&ts, HUMANOID);
    struct render *r = render_check_open_hidden();
    for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
        ts.scene.device[d].flags = EM_POSE_ALL_VALID;
        render_draw(r, &ts.scene);
        struct render_check_image tracked, lost;
        read_image(r, &tracked);
        float px[2];
        assert_true(render_project(r, ts.scene.device[d].pose.position_m, px));
        /* Lost: the runtime's last pose is kept, the flags say it is not to be trusted. */
        ts.scene.device[d].flags = 0;
        render_draw(r, &ts.scene);
        read_image(r, &lost);
        const int radius = 12;
        assert_int_equal(red_pixels(&tracked, px, radius), 0);
        const int red = red_pixels(&lost, px, radius);
        if (red < 20)
            fail_msg("%s lost: %d red pixels around (%.0f, %.0f)",
                     em_device_name((enum em_device)d), red, (double)px[0], (double)px[1]);
        /* The model itself turned grey: its coloured parts are gone. */
        int changed = 0;
        for (int dy = -radius; dy <= radius; ++dy)
            for (int dx = -radius; dx <= radius; ++dx) {
                const int x = (int)px[0] + dx, y = (int)px[1] + dy;
                const size_t at = ((size_t)y * (size_t)tracked.width + (size_t)x) * 4;
                const int diff = abs(tracked.rgba[at] - lost.rgba[at]) +
                                 abs(tracked.rgba[at + 1] - lost.rgba[at + 1]) +
                                 abs(tracked.rgba[at + 2] - lost.rgba[at + 2]);
                changed += diff > 60;
            }
        assert_true(changed > 2 * red / 3);
        /* Hidden: nothing drawn there at all. */
        ts.scene.hidden_devices = 1u << d;
        render_draw(r, &ts.scene);
        render_check_image_fini(&lost);
        read_image(r, &lost);
        assert_int_equal(red_pixels(&lost, px, radius), 0);
        ts.scene.hidden_devices = 0;
        ts.scene.device[d].flags = EM_POSE_ALL_VALID;
        render_check_image_fini(&tracked);
        render_check_image_fini(&lost);
    }
    render_destroy(&r);
    render_check_scene_fini(&ts);
}

/* Copies every file of the source tree's shaders/ into `dir`. */
static void
copy_shaders(const char *dir)
{
    DIR *d = opendir(EMBODY_SOURCE_DIR "/shaders");
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char from[1024], to[1024];
        snprintf(from, sizeof from, "%s/%s", EMBODY_SOURCE_DIR "/shaders", e->d_name);
        snprintf(to, sizeof to, "%s/%s", dir, e->d_name);
        FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
        assert_non_null(in);
        assert_non_null(out);
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, in)) > 0)
            assert_int_equal(fwrite(buf, 1, n, out), n);
        fclose(in);
        fclose(out);
    }
    closedir(d);
}

static void
remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

/* Replaces line `line` (1-based) of `path` with `text`. */
static void
replace_line(const char *path, int line, const char *text)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char content[65536], out[65536];
    const size_t n = fread(content, 1, sizeof content - 1, f);
    fclose(f);
    content[n] = '\0';
    size_t used = 0;
    int number = 1;
    for (char *s = content; *s;) {
        char *end = strchr(s, '\n');
        const size_t len = end ? (size_t)(end - s) : strlen(s);
        used +=
            (size_t)snprintf(out + used, sizeof out - used, "%.*s\n",
                             (int)(number == line ? strlen(text) : len), number == line ? text : s);
        s += len + (end ? 1 : 0);
        ++number;
    }
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(out, 1, used, f), used);
    fclose(f);
}

static void
broken_shader_is_reported_with_its_file_and_line(void **state)
{
    (void)state;
    char dir[] = "/tmp/embody-shaders-XXXXXX";
    assert_non_null(mkdtemp(dir));
    copy_shaders(dir);
    char path[1024];
    snprintf(path, sizeof path, "%s/mesh.frag", dir);
    replace_line(path, 30, "    float broken = undefined_name * 2.0;");

    struct render_desc desc = {.hidden = true, .shader_dir = dir};
    struct render *r = NULL;
    struct em_error err = {{0}};
    assert_int_equal(render_create(&desc, &r, &err), EM_ERROR_PARSE);
    assert_null(r);
    char expected[1100];
    snprintf(expected, sizeof expected, "%s:30: ", path);
    if (!strstr(err.message, expected))
        fail_msg("expected \"%s\" in: %s", expected, err.message);
    assert_non_null(strstr(err.message, "undefined_name"));

    /* A shader missing from the directory given is named, not replaced silently. */
    unlink(path);
    assert_int_equal(render_create(&desc, &r, &err), EM_ERROR_IO);
    assert_non_null(strstr(err.message, "mesh.frag"));
    remove_dir(dir);
}

static void
driver_logs_are_rewritten_as_file_and_line(void **state)
{
    (void)state;
    char out[512];
    /* Mesa */
    assert_int_equal(r_shader_log_format("shaders/limb.frag", "0:12(5): error: `x' undeclared\n",
                                         out, sizeof out),
                     12);
    assert_string_equal(out, "shaders/limb.frag:12: error: `x' undeclared");
    /* NVIDIA */
    assert_int_equal(r_shader_log_format("a.vert", "0(7) : error C1008: undefined variable \"y\"\n",
                                         out, sizeof out),
                     7);
    assert_string_equal(out, "a.vert:7: error C1008: undefined variable \"y\"");
    /* AMD, Intel on Windows, ANGLE */
    assert_int_equal(r_shader_log_format("b.frag",
                                         "ERROR: 0:3: 'z' : undeclared identifier\n"
                                         "ERROR: 1 compilation errors.\n",
                                         out, sizeof out),
                     3);
    assert_string_equal(out, "b.frag:3: error: 'z' : undeclared identifier\n"
                             "b.frag: ERROR: 1 compilation errors.");
    /* Nothing recognisable: kept, still naming the file. */
    assert_int_equal(r_shader_log_format("c.frag", "something odd", out, sizeof out), 0);
    assert_string_equal(out, "c.frag: something odd");
}

static void
built_in_shaders_are_the_files(void **state)
{
    (void)state;
    DIR *d = opendir(EMBODY_SOURCE_DIR "/shaders");
    assert_non_null(d);
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", EMBODY_SOURCE_DIR "/shaders", e->d_name);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        static char text[65536];
        const size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = '\0';
        const char *builtin = r_shader_builtin(e->d_name);
        if (!builtin)
            fail_msg("%s is not built in", e->d_name);
        assert_string_equal(builtin, text);
        ++count;
    }
    closedir(d);
    assert_true(count >= 8);
    assert_null(r_shader_builtin("nonexistent.frag"));
}

static void
no_display_is_reported_clearly(void **state)
{
    (void)state;
    char display[256] = "", driver[64] = "";
    const char *d = getenv("DISPLAY"), *v = getenv("SDL_VIDEODRIVER");
    snprintf(display, sizeof display, "%s", d ? d : "");
    snprintf(driver, sizeof driver, "%s", v ? v : "");
    unsetenv("DISPLAY");
    unsetenv("WAYLAND_DISPLAY");
    setenv("SDL_VIDEODRIVER", "x11", 1); /* not a console driver that might work */
    struct render_desc desc = {.hidden = true};
    struct render *r = NULL;
    struct em_error err = {{0}};
    const enum em_result res = render_create(&desc, &r, &err);
    if (display[0])
        setenv("DISPLAY", display, 1);
    if (driver[0])
        setenv("SDL_VIDEODRIVER", driver, 1);
    else
        unsetenv("SDL_VIDEODRIVER");
    assert_int_equal(res, EM_ERROR_UNSUPPORTED);
    assert_null(r);
    assert_non_null(strstr(err.message, "no display"));
    assert_non_null(strstr(err.message, "xvfb-run"));
}

static void
screenshot_is_the_image_drawn(void **state)
{
    (void)state;
    struct render_check_scene ts;
    render_check_scene_load(&ts, HUMANOID);
    struct render_desc desc = {.hidden = true, .width = 640, .height = 400};
    struct render *r = NULL;
    struct em_error err = {{0}};
    assert_int_equal(render_create(&desc, &r, &err), EM_OK);
    render_draw(r, &ts.scene);
    const char *path = EMBODY_BINARY_DIR "/test-render-screenshot.png";
    assert_int_equal(render_screenshot(r, path, &err), EM_OK);
    int w, h, comp;
    unsigned char *png = stbi_load(path, &w, &h, &comp, 4);
    assert_non_null(png);
    int rw, rh;
    render_get_size(r, &rw, &rh);
    assert_int_equal(w, rw);
    assert_int_equal(h, rh);
    struct render_check_image image;
    read_image(r, &image);
    /* Same pixels, rows from the top in both (the PNG is opaque RGB). */
    for (size_t i = 0; i < (size_t)w * (size_t)h; ++i)
        if (memcmp(png + i * 4, image.rgba + i * 4, 3) != 0)
            fail_msg("pixel %zu differs", i);
    stbi_image_free(png);
    render_check_image_fini(&image);
    /* An unwritable path is an error naming it. */
    assert_int_equal(render_screenshot(r, "/nonexistent-dir/x.png", &err), EM_ERROR_IO);
    assert_non_null(strstr(err.message, "/nonexistent-dir/x.png"));
    unlink(path);
    render_destroy(&r);
    render_check_scene_fini(&ts);
}

static void
push_key(SDL_Keycode key, Uint16 mod)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_KEYDOWN;
    e.key.state = SDL_PRESSED;
    e.key.keysym.sym = key;
    e.key.keysym.mod = mod;
    assert_true(SDL_PushEvent(&e) == 1);
}

static void
keys_give_actions_and_switch_views(void **state)
{
    (void)state;
    struct render_check_scene ts;
    render_check_scene_load(&ts, HUMANOID);
    struct render *r = render_check_open_hidden();
    render_draw(r, &ts.scene);
    render_poll(r); /* whatever the window system said first */

    push_key(SDLK_c, 0);
    assert_int_equal(render_poll(r), RENDER_ACTION_CALIBRATE);
    push_key(SDLK_r, 0);
    push_key(SDLK_SPACE, 0);
    assert_int_equal(render_poll(r), RENDER_ACTION_RECENTER | RENDER_ACTION_PAUSE_TOGGLE);
    push_key(SDLK_ESCAPE, 0);
    assert_int_equal(render_poll(r), RENDER_ACTION_QUIT);

    /* Cameras: Tab goes round, Shift+Tab back, digits choose. */
    push_key(SDLK_TAB, 0);
    assert_int_equal(render_poll(r), 0);
    assert_int_equal(render_get_camera(r), RENDER_CAMERA_ORBIT);
    push_key(SDLK_TAB, KMOD_LSHIFT);
    push_key(SDLK_TAB, KMOD_LSHIFT);
    render_poll(r);
    assert_int_equal(render_get_camera(r), RENDER_CAMERA_TOP);
    push_key(SDLK_3, 0);
    render_poll(r);
    assert_int_equal(render_get_camera(r), RENDER_CAMERA_FRONT);

    /* H and F1 are the renderer's own: the HUD goes, the help comes. */
    assert_true(r->hud.visible == false); /* opened with hide_hud */
    push_key(SDLK_h, 0);
    push_key(SDLK_F1, 0);
    assert_int_equal(render_poll(r), 0);
    assert_true(r->hud.visible);
    assert_true(r->hud.help_visible);

    /* S writes embody-YYYYmmdd-HHMMSS.png in the current directory. */
    char dir[] = "/tmp/embody-shot-XXXXXX", cwd[1024];
    assert_non_null(mkdtemp(dir));
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    push_key(SDLK_s, 0);
    assert_int_equal(render_poll(r), 0);
    DIR *d = opendir(".");
    assert_non_null(d);
    int shots = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        shots += strncmp(e->d_name, "embody-", 7) == 0 && strlen(e->d_name) == 26 &&
                 strcmp(e->d_name + 22, ".png") == 0;
    closedir(d);
    assert_int_equal(chdir(cwd), 0);
    remove_dir(dir);
    assert_int_equal(shots, 1);
    render_destroy(&r);
    render_check_scene_fini(&ts);
}

static void
skeleton_without_hands_feet_or_head_top_still_draws(void **state)
{
    (void)state;
    /* A bare humanoid: no upper chest, toes, ends; one extra non-humanoid joint. */
    const struct sk_joint_desc j[] = {
        {.name = "hips", .offset_m = {0, 1.0f, 0}},
        {.name = "spine", .parent = "hips", .offset_m = {0, 0.2f, 0}},
        {.name = "chest", .parent = "spine", .offset_m = {0, 0.2f, 0}},
        {.name = "neck", .parent = "chest", .offset_m = {0, 0.15f, 0}},
        {.name = "head", .parent = "neck", .offset_m = {0, 0.1f, 0}},
        {.name = "tail", .parent = "hips", .offset_m = {0, -0.1f, -0.2f}},
        {.name = "leftUpperArm", .parent = "chest", .offset_m = {0.18f, 0.1f, 0}},
        {.name = "leftLowerArm", .parent = "leftUpperArm", .offset_m = {0.28f, 0, 0}},
        {.name = "leftHand", .parent = "leftLowerArm", .offset_m = {0.25f, 0, 0}},
        {.name = "leftUpperLeg", .parent = "hips", .offset_m = {0.1f, -0.05f, 0}},
        {.name = "leftLowerLeg", .parent = "leftUpperLeg", .offset_m = {0, -0.42f, 0}},
        {.name = "leftFoot", .parent = "leftLowerLeg", .offset_m = {0, -0.42f, 0}},
    };
    struct sk_skeleton sk;
    struct sk_pose pose;
    struct em_error err = {{0}};
    assert_int_equal(sk_skeleton_create(j, 12, "test", &sk, &err), EM_OK);
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    struct render_scene scene = {.skeleton = &sk, .pose = &pose};
    scene.hidden_devices = (1u << EM_DEVICE_COUNT) - 1;
    struct render *r = render_check_open_hidden();
    render_draw(r, &scene);
    struct render_check_image image;
    read_image(r, &image);
    char report[1024];
    assert_int_equal(render_check_avatar(r, &image, &scene, report, sizeof report), 0);
    /* The head is still a head, around where the head joint is. */
    float px[2];
    assert_true(render_project(r, pose.position_m[sk.bone_joint[SK_HEAD]], px));
    assert_true(render_check_share(&image, px[0], px[1] - 4.0f, 2, RENDER_CHECK_AVATAR_CENTER) >
                0.5f);
    render_check_image_fini(&image);

    /* No skeleton at all: the floor and the devices, no crash. */
    struct render_scene empty = {0};
    render_draw(r, &empty);
    render_destroy(&r);
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
}

static void
resized_window_draws_at_its_new_size(void **state)
{
    (void)state;
    struct render_check_scene ts;
    render_check_scene_load(&ts, HUMANOID);
    struct render *r = render_check_open_hidden();
    render_draw(r, &ts.scene);
    /* Taller than wide: the mirror camera steps back to keep the arms in the picture. */
    SDL_SetWindowSize(r->window, 480, 640);
    render_draw(r, &ts.scene);
    int w, h;
    render_get_size(r, &w, &h);
    assert_int_equal(w, 480);
    assert_int_equal(h, 640);
    expect_avatar_visible(r, &ts);
    render_destroy(&r);
    render_check_scene_fini(&ts);
}

static void
headset_eye_view_draws_with_the_given_matrices(void **state)
{
    (void)state;
    struct render_check_scene ts;
    render_check_scene_load(&ts, HUMANOID);
    struct render *r = render_check_open_hidden();
    render_draw(r, &ts.scene);
    float before[2];
    const float *head = ts.pose.position_m[ts.skeleton.bone_joint[SK_HEAD]];
    assert_true(render_project(r, head, before));

    /* An eye 2 m in front of the player looking back at the chest, into a 256 x 256
     * framebuffer of the test's own, as the OpenXR layer does with a swapchain image. */
    render_make_current(r);
    GLuint fb, color, depth;
    glGenFramebuffers(1, &fb);
    glBindFramebuffer(GL_FRAMEBUFFER, fb);
    glGenRenderbuffers(1, &color);
    glBindRenderbuffer(GL_RENDERBUFFER, color);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, 256, 256);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color);
    glGenRenderbuffers(1, &depth);
    glBindRenderbuffer(GL_RENDERBUFFER, depth);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, 256, 256);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, depth);
    assert_int_equal(glCheckFramebufferStatus(GL_FRAMEBUFFER), GL_FRAMEBUFFER_COMPLETE);
    mat4 view, projection;
    vec3 eye = {0.0f, 1.3f, 2.0f}, center = {0.0f, 1.3f, 0.0f}, up = {0.0f, 1.0f, 0.0f};
    glm_lookat(eye, center, up, view);
    glm_perspective(glm_rad(60.0f), 1.0f, 0.05f, 100.0f, projection);
    render_draw_eye(r, &ts.scene, view, projection, 256, 256);
    uint8_t rgba[256 * 256 * 4];
    glReadPixels(0, 0, 256, 256, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glDeleteFramebuffers(1, &fb);
    GLuint rbs[2] = {color, depth};
    glDeleteRenderbuffers(2, rbs);

    /* The chest is in the middle of the eye's image (rows from the bottom here). */
    const int chest = ts.skeleton.bone_joint[SK_CHEST];
    vec4 p = {ts.pose.position_m[chest][0], ts.pose.position_m[chest][1],
              ts.pose.position_m[chest][2], 1.0f},
         clip;
    mat4 vp;
    glm_mat4_mul(projection, view, vp);
    glm_mat4_mulv(vp, p, clip);
    const int x = (int)((clip[0] / clip[3] * 0.5f + 0.5f) * 256.0f);
    const int y = (int)((clip[1] / clip[3] * 0.5f + 0.5f) * 256.0f);
    assert_int_equal(render_check_classify(rgba + ((size_t)y * 256 + (size_t)x) * 4),
                     RENDER_CHECK_AVATAR_CENTER);
    /* The window's camera was not touched. */
    float after[2];
    assert_true(render_project(r, head, after));
    assert_float_equal(before[0], after[0], 1e-3);
    assert_float_equal(before[1], after[1], 1e-3);
    render_destroy(&r);
    render_check_scene_fini(&ts);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(driver_logs_are_rewritten_as_file_and_line),
        cmocka_unit_test(built_in_shaders_are_the_files),
        /* Before any test holds SDL video open (render_check_hold_gl). */
        cmocka_unit_test(no_display_is_reported_clearly),
        cmocka_unit_test(mirror_view_shows_head_hands_and_feet_where_they_project),
        cmocka_unit_test(front_camera_is_not_mirrored),
        cmocka_unit_test(mirror_camera_follows_the_player),
        cmocka_unit_test(floor_grid_is_drawn_around_the_avatar),
        cmocka_unit_test(lost_device_is_greyed_and_marked),
        cmocka_unit_test(broken_shader_is_reported_with_its_file_and_line),
        cmocka_unit_test(screenshot_is_the_image_drawn),
        cmocka_unit_test(keys_give_actions_and_switch_views),
        cmocka_unit_test(skeleton_without_hands_feet_or_head_top_still_draws),
        cmocka_unit_test(resized_window_draws_at_its_new_size),
        cmocka_unit_test(headset_eye_view_draws_with_the_given_matrices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
