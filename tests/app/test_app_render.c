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
#include "app_live_check.h"
#include "avatar/avatar.h"
#include "embody/m_math.h"
#include "embody/stream.h"
#include "render_check.h"

#define STREAM EMBODY_SOURCE_DIR "/tests/data/streams/"

/* Checks of the avatar in the window along a run. */
#define CHECK_FIRST_FRAME 30 /* after the filters and the camera have settled */
#define CHECK_EVERY 15
#define CHECK_PARTS 5 /* head, hands, feet (render_check_avatar) */

struct view_check {
    int checks;      /* frames checked */
    int part_fails;  /* parts not found where they project, over all checks */
    int worst_frame; /* most parts failed in one check */
    char first_failure[1024];
    bool called_at_end;
    bool had_window;
    int width, height;
    uint8_t *rgba;                 /* the final image as the program drew it */
    float head_m[3];               /* the body's head joint at the end */
    struct em_device_pose headset; /* the headset in the scene at the end */
};

/* Draws the program's scene again without the headset and controllers (a controller
 * held in front of the wrist hides the hand, which is right but not what is checked),
 * with the program's camera, and checks the avatar where the pose's parts project. */
static void
check_view(struct view_check *c, struct render *render, const struct render_scene *scene,
           long index)
{
    struct render_scene bare = *scene;
    bare.hidden_devices = (1u << EM_DEVICE_COUNT) - 1;
    render_draw(render, &bare);
    struct render_check_image image;
    assert_true(render_check_image_read(render, &image));
    char report[900];
    const int failed = render_check_avatar(render, &image, &bare, report, sizeof report);
    render_check_image_fini(&image);
    c->checks++;
    c->part_fails += failed;
    if (failed > c->worst_frame)
        c->worst_frame = failed;
    if (failed && !c->first_failure[0])
        snprintf(c->first_failure, sizeof c->first_failure, "frame %ld:\n%s", index, report);
}

static void
view_on_frame(void *user, long index, const struct em_tracking_frame *frame, struct render *render,
              const struct render_scene *scene, const struct body *body)
{
    (void)frame;
    struct view_check *c = user;
    assert_non_null(render);
    if (index == 0)
        return; /* nothing drawn yet */
    /* The scene drawn is the body's pose, not a copy made at some earlier frame. */
    assert_ptr_equal(scene->skeleton, body_skeleton(body));
    assert_ptr_equal(scene->pose, body_pose(body));
    /* The default avatar, or the --avatar file, is drawn skinned. */
    assert_non_null(scene->avatar);
    assert_non_null(scene->avatar_binding);
    if (index >= CHECK_FIRST_FRAME && index % CHECK_EVERY == 0)
        check_view(c, render, scene, index);
}

static void
view_at_end(void *user, struct render *render, const struct render_scene *scene,
            const struct body *body)
{
    struct view_check *c = user;
    c->called_at_end = true;
    c->had_window = render != NULL;
    const struct sk_skeleton *sk = body_skeleton(body);
    memcpy(c->head_m, body_pose(body)->position_m[sk->bone_joint[SK_HEAD]], sizeof c->head_m);
    c->headset = scene->device[EM_DEVICE_HEAD];
    if (!render)
        return;
    struct render_check_image image;
    assert_true(render_check_image_read(render, &image));
    c->width = image.width;
    c->height = image.height;
    c->rgba = image.rgba; /* compared with the screenshot */
    image.rgba = NULL;
    render_check_image_fini(&image);
    check_view(c, render, scene, -1);
}

/* The last frame drove the body: the scene's headset is the file's row, and the head
 * joint is under it (the eyes are 8 cm up and 9 cm forward of it). */
static void
expect_last_row_drove_the_body(const struct view_check *c, const char *stream, int frames)
{
    struct st_stream rows;
    struct em_error err = {{0}};
    assert_int_equal(st_stream_load(stream, &rows, &err), EM_OK);
    const struct em_device_pose *row = &rows.frames[frames - 1].device[EM_DEVICE_HEAD];
    assert_memory_equal(c->headset.pose.position_m, row->pose.position_m, sizeof(vec3));
    float d[3];
    m_vec3_sub(c->head_m, row->pose.position_m, d);
    if (!(sqrtf(m_vec3_dot(d, d)) < 0.2f))
        fail_msg("%s: the head joint is %.3f m from the headset", stream,
                 (double)sqrtf(m_vec3_dot(d, d)));
    st_stream_fini(&rows);
}

static void
expect_screenshot_is_the_image(const struct view_check *c, const char *shot)
{
    int w, h, comp;
    unsigned char *png = stbi_load(shot, &w, &h, &comp, 4);
    assert_non_null(png);
    assert_int_equal(w, c->width);
    assert_int_equal(h, c->height);
    size_t differing = 0;
    for (size_t p = 0; p < (size_t)w * (size_t)h; ++p)
        differing += memcmp(png + p * 4, c->rgba + p * 4, 3) != 0;
    assert_int_equal(differing, 0);
    stbi_image_free(png);
}

/* Replays known streams in a hidden window and checks, every CHECK_EVERY frames and at
 * the end, that the avatar's colours are where the head, hands and feet of the pose
 * project with the window's camera. A part may hide behind another in some poses (the
 * head looking up, a hand behind the back, crossed legs), so a few parts may be missed;
 * a program that drew another pose, an old one, a wrongly scaled avatar or nothing
 * would miss most of them. */
static void
replayed_streams_show_the_avatar_where_its_parts_project(void **state)
{
    (void)state;
    static const char *const clips[] = {"cmu_14_04", "cmu_14_14", "cmu_49_03", "cmu_91_04"};
    const int frame_count = 240;
    char frames[16];
    snprintf(frames, sizeof frames, "%d", frame_count);
    for (int i = 0; i < 4; ++i) {
        char stream[1024], shot[1024];
        snprintf(stream, sizeof stream, STREAM "%s.csv", clips[i]);
        snprintf(shot, sizeof shot, EMBODY_BINARY_DIR "/tests/app/render-%s-%d.png", clips[i],
                 (int)getpid());
        struct view_check check = {0};
        const struct app_live_hooks hooks = {
            .on_frame = view_on_frame, .at_end = view_at_end, .user = &check};
        struct app_live_result result;
        const int code =
            app_live_check_run((const char *[]){"--replay", stream, "--fast", "--frames", frames,
                                                "--screenshot", shot, "-q", NULL},
                               &hooks, &result);
        assert_int_equal(code, 0);
        assert_true(check.called_at_end);
        assert_true(check.had_window);
        assert_int_equal(result.frames, frame_count);
        assert_string_equal(result.source_kind, "replay");
        expect_last_row_drove_the_body(&check, stream, frame_count);

        /* Every view checked (and the last), 5 parts each: at most one part in ten missed,
         * never most of a body. */
        int views = 1;
        for (int k = CHECK_FIRST_FRAME; k < frame_count; ++k)
            views += k % CHECK_EVERY == 0;
        assert_int_equal(check.checks, views);
        printf("%s: %d of %d parts missed (most in one view: %d)\n", clips[i], check.part_fails,
               check.checks * CHECK_PARTS, check.worst_frame);
        if (check.part_fails * 10 > check.checks * CHECK_PARTS || check.worst_frame > 2)
            fail_msg("%s: %d of %d parts were not where they project; first:\n%s", clips[i],
                     check.part_fails, check.checks * CHECK_PARTS, check.first_failure);

        expect_screenshot_is_the_image(&check, shot);
        free(check.rgba);
        remove(shot);
    }
}

/* An avatar of another size made by the tests, as VRM 0.x (its model facing -Z, turned
 * on reading): its skinned mesh covers the head, hands and feet of a replayed clip as the
 * default avatar's does. */
static void
a_vrm_avatar_from_a_file_covers_its_parts_in_a_replay(void **state)
{
    (void)state;
    struct sk_skeleton sk;
    struct em_error err = {{0}};
    assert_int_equal(sk_skeleton_load_json(EMBODY_SOURCE_DIR "/config/humanoid.json", &sk, &err),
                     EM_OK);
    assert_int_equal(sk_humanoid_fit(&sk, 1.6f, 0.0f, &err), EM_OK);
    char avatar[1024];
    snprintf(avatar, sizeof avatar, EMBODY_BINARY_DIR "/tests/app/avatar-%d.vrm", (int)getpid());
    const struct av_make_desc desc = {.skeleton = &sk, .rig = AV_MAKE_VRM0};
    if (av_make_file(&desc, avatar, &err) != EM_OK)
        fail_msg("%s", err.message);
    sk_skeleton_fini(&sk);
    const int frame_count = 180;
    struct view_check check = {0};
    const struct app_live_hooks hooks = {
        .on_frame = view_on_frame, .at_end = view_at_end, .user = &check};
    struct app_live_result result;
    /* (In cmu_14_04 the smaller avatar's raised hand goes under the HUD's panel.) */
    const int code =
        app_live_check_run((const char *[]){"--replay", STREAM "cmu_49_03.csv", "--fast",
                                            "--frames", "180", "--avatar", avatar, "-q", NULL},
                           &hooks, &result);
    assert_int_equal(code, 0);
    assert_int_equal(result.frames, frame_count);
    printf("VRM 0.x avatar: %d of %d parts missed (most in one view: %d)\n", check.part_fails,
           check.checks * CHECK_PARTS, check.worst_frame);
    if (check.part_fails * 10 > check.checks * CHECK_PARTS || check.worst_frame > 2)
        fail_msg("%d of %d parts were not where they project; first:\n%s", check.part_fails,
                 check.checks * CHECK_PARTS, check.first_failure);
    free(check.rgba);
    remove(avatar);
}

/* The keys, pressed through SDL's event queue at chosen frames. */
struct key_script {
    double paused_time_s; /* the frame time when Space paused */
    int repeated;         /* frames given again while paused */
    int held_wrong;       /* paused frames with another time */
    bool saw_calibrated;
    bool saw_recentered;
    float height_before_m, height_after_m;
    long saved_frames;      /* F9 stopped --record: the frames it said it saved */
    char started_path[256]; /* F9 started a recording here */
    bool recording_badge;   /* the HUD showed recording while it ran */
};

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
        app_live_check_press(SDLK_c); /* calibrate from this frame (the player's headset height) */
    } else if (index == 11) {
        k->height_after_m = status.height_m;
        k->saw_calibrated = strncmp(hud_message(scene), "calibrated: height ", 19) == 0;
    } else if (index == 20) {
        k->paused_time_s = frame->time_s; /* the frame to be held */
        app_live_check_press(SDLK_SPACE);
    } else if (index > 20 && index <= 30) {
        k->repeated++;
        k->held_wrong += frame->time_s != k->paused_time_s;
        if (index == 30)
            app_live_check_press(SDLK_SPACE);
    } else if (index == 40) {
        app_live_check_press(SDLK_r);
    } else if (index == 41) {
        k->saw_recentered = strcmp(hud_message(scene), "recentered") == 0;
    } else if (index == 42) {
        app_live_check_press(SDLK_F9); /* stops --record */
    } else if (index == 43) {
        const char *m = hud_message(scene);
        const char *paren = strrchr(m, '(');
        if (strncmp(m, "recording saved: ", 17) == 0 && paren)
            k->saved_frames = strtol(paren + 1, NULL, 10);
    } else if (index == 44) {
        app_live_check_press(SDLK_F9); /* starts a recording in the current directory */
    } else if (index == 45) {
        const char *m = hud_message(scene);
        if (strncmp(m, "recording to ", 13) == 0) {
            snprintf(k->started_path, sizeof k->started_path, "%s", m + 13);
            char *space = strchr(k->started_path, ' ');
            if (space)
                *space = '\0';
        }
        k->recording_badge = scene->hud.recording;
    } else if (index == 50) {
        app_live_check_press(SDLK_ESCAPE);
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
    /* Before: the height estimated from the stream (cmu_14_04's player, 1.72 m). */
    assert_true(fabsf(keys.height_before_m - 1.72f) < 0.03f);
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
    /* F9 stopped it part way: it holds what the HUD said it saved, each frame once. */
    assert_true(keys.saved_frames > 20 && keys.saved_frames < 51 - 10);
    assert_int_equal(got.frame_count, keys.saved_frames);
    for (int i = 0; i < got.frame_count; ++i)
        assert_memory_equal(got.frames[i].device, want.frames[i].device,
                            sizeof got.frames[i].device);
    st_stream_fini(&got);
    remove(recorded);
    /* The second F9 started a new recording, shown on the HUD, closed at the end: the
     * stream's next frames, in order. */
    assert_true(keys.recording_badge);
    assert_true(strncmp(keys.started_path, "embody-", 7) == 0);
    assert_int_equal(st_stream_load(keys.started_path, &got, &err), EM_OK);
    assert_true(got.frame_count >= 3);
    int first = -1;
    for (int i = 0; i < want.frame_count && first < 0; ++i)
        if (memcmp(want.frames[i].device, got.frames[0].device, sizeof got.frames[0].device) == 0)
            first = i;
    assert_true(first > 30);
    for (int i = 0; i < got.frame_count; ++i)
        assert_memory_equal(got.frames[i].device, want.frames[first + i].device,
                            sizeof got.frames[i].device);
    st_stream_fini(&got);
    st_stream_fini(&want);
    remove(keys.started_path);
}

static void
no_window_runs_the_same_loop_without_a_renderer(void **state)
{
    (void)state;
    struct view_check check = {0};
    const struct app_live_hooks hooks = {.at_end = view_at_end, .user = &check};
    struct app_live_result result;
    const int code = app_live_check_run(
        (const char *[]){"--replay", STREAM "cmu_14_04.csv", "--fast", "--no-window", "-q", NULL},
        &hooks, &result);
    assert_int_equal(code, 0);
    assert_true(check.called_at_end);
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
        cmocka_unit_test(replayed_streams_show_the_avatar_where_its_parts_project),
        cmocka_unit_test(a_vrm_avatar_from_a_file_covers_its_parts_in_a_replay),
        cmocka_unit_test(keys_calibrate_recenter_pause_and_quit),
        cmocka_unit_test(no_window_runs_the_same_loop_without_a_renderer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
