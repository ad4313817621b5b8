/*
 * The program's mirror view end to end: the live loop (app_live_run, the same function
 * the program's main calls, with the options parsed from a command line) replays a known
 * stream in a hidden window, and at the end the image shows the avatar's colours where
 * the final pose's head, hands and feet project with the window's camera
 * (tests/render/render_check.h); the screenshot is that image. Needs a display: CI runs
 * it under Xvfb.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <SDL.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wdouble-promotion"
#pragma GCC diagnostic ignored "-Wshadow"
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#include <stb_image.h>
#pragma GCC diagnostic pop

#include "app/app_args.h"
#include "app/app_live.h"
#include "app/app_options.h"
#include "embody/m_math.h"
#include "embody/stream.h"
#include "render_check.h"

#define STREAM EMBODY_SOURCE_DIR "/tests/data/streams/"

/* What the end-of-run hook saw. */
struct end_check {
    bool called;
    bool had_window;
    int failed_parts;
    char report[2048];
    int width, height;
    uint8_t *rgba;                 /* the final image */
    float head_m[3];               /* the body's head joint at the end */
    struct em_device_pose headset; /* the headset in the scene at the end */
};

static void
check_at_end(void *user, struct render *render, const struct render_scene *scene,
             const struct body *body)
{
    struct end_check *c = user;
    c->called = true;
    c->had_window = render != NULL;
    const struct sk_skeleton *sk = body_skeleton(body);
    memcpy(c->head_m, body_pose(body)->position_m[sk->bone_joint[SK_HEAD]], sizeof c->head_m);
    c->headset = scene->device[EM_DEVICE_HEAD];
    if (!render)
        return;
    /* The scene drawn last is the body's pose, not a copy from some earlier frame. */
    assert_ptr_equal(scene->skeleton, body_skeleton(body));
    assert_ptr_equal(scene->pose, body_pose(body));
    struct render_check_image image;
    assert_true(render_check_image_read(render, &image));
    c->width = image.width;
    c->height = image.height;
    c->rgba = image.rgba; /* the image as the program drew it: compared with the PNG */
    image.rgba = NULL;

    /* The same scene again without the headset and controllers, which may hide a hand
     * or the crown (a controller held in front of the wrist), with the program's
     * camera: the avatar must be where the final pose's parts project. */
    struct render_scene bare = *scene;
    bare.hidden_devices = (1u << EM_DEVICE_COUNT) - 1;
    render_draw(render, &bare);
    assert_true(render_check_image_read(render, &image));
    c->failed_parts = render_check_avatar(render, &image, &bare, c->report, sizeof c->report);
    render_check_image_fini(&image);
}

/* The headset's pitch in degrees (its forward above the horizon: positive looking up). */
static float
pitch_deg(const struct em_tracking_frame *frame)
{
    const float back[3] = {0.0f, 0.0f, -1.0f};
    float forward[3];
    m_quat_rotate(frame->device[EM_DEVICE_HEAD].pose.orientation, back, forward);
    return asinf(fmaxf(-1.0f, fminf(1.0f, forward[1]))) * M_RAD_TO_DEG;
}

/* A frame count ending at or after `from` on a frame where the player has looked about
 * straight ahead or a little down for a third of a second: a moment to look at the whole
 * body. Looking up, the crown goes behind the face from the mirror camera; ducking or
 * crossing the legs, a part hides behind another (the checks see the part in front,
 * which is right, but not what they test). */
static int
frames_looking_ahead(const char *path, int from)
{
    struct st_stream stream;
    struct em_error err = {{0}};
    if (st_stream_load(path, &stream, &err) != EM_OK)
        fail_msg("%s", err.message);
    const int steady = 20;
    int found = -1, run = 0;
    for (int i = 0; i < stream.frame_count && found < 0; ++i) {
        const float pitch = pitch_deg(&stream.frames[i]);
        run = pitch > -35.0f && pitch < 10.0f ? run + 1 : 0;
        if (i >= from && run >= steady)
            found = i + 1;
    }
    st_stream_fini(&stream);
    if (found < 0)
        fail_msg("%s: the player never looks ahead for long after frame %d", path, from);
    return found;
}

/* Parses `args` as the program would and runs the live loop with the check. */
static int
run_live(const char *const *args, struct end_check *check, struct app_live_result *result)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = "embody";
    for (int i = 0; args[i]; ++i)
        argv[argc++] = (char *)args[i];
    argv[argc] = NULL;
    struct app_options options;
    struct em_error err = {{0}};
    if (app_options_parse(argc, argv, 1, &options, &err) != EM_OK)
        fail_msg("%s", err.message);
    const struct app_live_hooks hooks = {.at_end = check_at_end, .user = check};
    return app_live_run(&options, &hooks, result);
}

static void
replayed_stream_shows_the_avatar_where_its_parts_project(void **state)
{
    (void)state;
    static const char *const clips[] = {"cmu_14_04", "cmu_05_04", "cmu_17_10"};
    for (int i = 0; i < 3; ++i) {
        char stream[1024], shot[1024];
        snprintf(stream, sizeof stream, STREAM "%s.csv", clips[i]);
        snprintf(shot, sizeof shot, EMBODY_BINARY_DIR "/tests/app/render-%s-%d.png", clips[i],
                 (int)getpid());
        char frames[16];
        const int frame_count = frames_looking_ahead(stream, 120);
        snprintf(frames, sizeof frames, "%d", frame_count);
        struct end_check check = {0};
        struct app_live_result result;
        const int code = run_live((const char *[]){"--replay", stream, "--fast", "--frames", frames,
                                                   "--screenshot", shot, "-q", NULL},
                                  &check, &result);
        assert_int_equal(code, 0);
        assert_true(check.called);
        assert_true(check.had_window);
        assert_int_equal(result.frames, frame_count);
        assert_string_equal(result.source_kind, "replay");
        /* The last frame drove the body: the scene's headset is the file's row, and the
         * head joint is under it (the eyes are 8 cm up and 9 cm forward of it). */
        struct st_stream rows;
        struct em_error err = {{0}};
        assert_int_equal(st_stream_load(stream, &rows, &err), EM_OK);
        const struct em_device_pose *row = &rows.frames[frame_count - 1].device[EM_DEVICE_HEAD];
        assert_memory_equal(check.headset.pose.position_m, row->pose.position_m, sizeof(vec3));
        float d[3];
        m_vec3_sub(check.head_m, row->pose.position_m, d);
        if (!(sqrtf(m_vec3_dot(d, d)) < 0.2f))
            fail_msg("%s: the head joint is %.3f m from the headset", clips[i],
                     (double)sqrtf(m_vec3_dot(d, d)));
        st_stream_fini(&rows);
        if (check.failed_parts != 0)
            fail_msg("%s: the avatar is not where its parts project:\n%s", clips[i], check.report);

        /* The screenshot is the image checked. */
        int w, h, comp;
        unsigned char *png = stbi_load(shot, &w, &h, &comp, 4);
        assert_non_null(png);
        assert_int_equal(w, check.width);
        assert_int_equal(h, check.height);
        size_t differing = 0;
        for (size_t p = 0; p < (size_t)w * (size_t)h; ++p)
            differing += memcmp(png + p * 4, check.rgba + p * 4, 3) != 0;
        assert_int_equal(differing, 0);
        stbi_image_free(png);
        free(check.rgba);
        remove(shot);
    }
}

/* The keys, pressed through SDL's event queue at chosen frames. */
struct key_script {
    double paused_time_s; /* the frame time when Space paused */
    int repeated;         /* frames given again while paused */
    int held_wrong;       /* paused frames with another time */
    bool saw_calibrated;
    bool saw_recentered;
    float height_before_m, height_after_m;
};

static void
press(SDL_Keycode key)
{
    SDL_Event e = {0};
    e.type = SDL_KEYDOWN;
    e.key.state = SDL_PRESSED;
    e.key.keysym.sym = key;
    assert_int_equal(SDL_PushEvent(&e), 1);
}

static const char *
hud_message(const struct render_scene *scene)
{
    return scene->hud.message ? scene->hud.message : "";
}

static void
key_script_frame(void *user, long index, const struct em_tracking_frame *frame,
                 struct render *render, const struct render_scene *scene, const struct body *body)
{
    struct key_script *k = user;
    assert_non_null(render);
    struct body_status status;
    body_get_status(body, &status);
    if (index == 10) {
        k->height_before_m = status.height_m;
        press(SDLK_c); /* calibrate from this frame (the player's headset height) */
    } else if (index == 11) {
        k->height_after_m = status.height_m;
        k->saw_calibrated = strncmp(hud_message(scene), "calibrated: height ", 19) == 0;
    } else if (index == 20) {
        k->paused_time_s = frame->time_s; /* the frame to be held */
        press(SDLK_SPACE);
    } else if (index > 20 && index <= 30) {
        k->repeated++;
        k->held_wrong += frame->time_s != k->paused_time_s;
        if (index == 30)
            press(SDLK_SPACE);
    } else if (index == 40) {
        press(SDLK_r);
    } else if (index == 41) {
        k->saw_recentered = strcmp(hud_message(scene), "recentered") == 0;
    } else if (index == 50) {
        press(SDLK_ESCAPE);
    }
}

static void
keys_calibrate_recenter_pause_and_quit(void **state)
{
    (void)state;
    char recorded[1024];
    snprintf(recorded, sizeof recorded, EMBODY_BINARY_DIR "/tests/app/keys-%d.csv", (int)getpid());
    struct key_script keys = {0};
    const struct app_live_hooks hooks = {.on_frame = key_script_frame, .user = &keys};
    char *argv[] = {"embody",   "--replay", STREAM "cmu_14_04.csv",
                    "--fast",   "--frames", "300",
                    "--record", recorded,   "-q",
                    NULL};
    struct app_options options;
    struct em_error err = {{0}};
    assert_int_equal(app_options_parse(9, argv, 1, &options, &err), EM_OK);
    struct app_live_result result;
    assert_int_equal(app_live_run(&options, &hooks, &result), 0);

    /* C: calibrated from the headset (1.55 m eyes: a shorter player than 1.75 m). */
    assert_true(keys.saw_calibrated);
    assert_true(fabsf(keys.height_before_m - 1.75f) < 0.01f);
    assert_true(keys.height_after_m > 1.5f && keys.height_after_m < 1.72f);
    /* Space: the same frame again until Space again. */
    assert_int_equal(keys.repeated, 10);
    assert_int_equal(keys.held_wrong, 0);
    assert_true(keys.saw_recentered);
    /* Esc: the run ends after the frame it was pressed on. */
    assert_int_equal(result.frames, 51);

    /* The recording has each frame once, as the file has it: the paused repeats are not
     * new samples. */
    struct st_stream got, want;
    assert_int_equal(st_stream_load(recorded, &got, &err), EM_OK);
    assert_int_equal(st_stream_load(STREAM "cmu_14_04.csv", &want, &err), EM_OK);
    assert_int_equal(got.frame_count, 51 - 10);
    for (int i = 0; i < got.frame_count; ++i)
        assert_memory_equal(got.frames[i].device, want.frames[i].device,
                            sizeof got.frames[i].device);
    st_stream_fini(&got);
    st_stream_fini(&want);
    remove(recorded);
}

static void
no_window_runs_the_same_loop_without_a_renderer(void **state)
{
    (void)state;
    struct end_check check = {0};
    struct app_live_result result;
    const int code = run_live(
        (const char *[]){"--replay", STREAM "cmu_14_04.csv", "--fast", "--no-window", "-q", NULL},
        &check, &result);
    assert_int_equal(code, 0);
    assert_true(check.called);
    assert_false(check.had_window);
    /* To the end of the file: every row once. */
    assert_int_equal(result.frames, 380);
}

int
main(void)
{
    /* LeakSanitizer: keep Mesa loaded until exit (see render_check.h). */
    if (!render_check_hold_gl()) {
        fprintf(stderr, "test_app_render: cannot start SDL video (no display? CI runs this "
                        "under Xvfb)\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(replayed_stream_shows_the_avatar_where_its_parts_project),
        cmocka_unit_test(keys_calibrate_recenter_pause_and_quit),
        cmocka_unit_test(no_window_runs_the_same_loop_without_a_renderer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
