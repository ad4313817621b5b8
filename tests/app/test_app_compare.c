/*
 * Issue 28 in the program's window: while a clip plays, G hides and shows the ghost of the
 * truth, K switches the tracker setup and P the body (the keys go through SDL's event
 * queue, as a user's do); --compare A,B shows two avatars side by side, each with its
 * ghost and its own error, and from a recording (no truth) two setups without a ghost.
 * Needs a display: CI runs it under Xvfb.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <SDL.h>

#include "app_live_check.h"
#include "render/render.h"
#include "embody/stream.h"
#include "render_check.h"

#define CLIP EMBODY_SOURCE_DIR "/tests/data/mocap/cmu_05_04.bvh"
#define RECORDING EMBODY_SOURCE_DIR "/tests/data/streams-trackers/cmu_127_17.csv"

/* What the keys did, seen in the scene of the frames after each press. */
struct keys_seen {
    bool ghost_hidden_after_g;
    bool ghost_shown_after_second_g;
    char label_before[160], label_after_k[160], label_after_p[160];
    uint32_t trackers_before, trackers_after_k;
    int ghosts_before;
};

static void
keys_on_frame(void *user, long index, const struct em_tracking_frame *frame, struct render *render,
              const struct render_scene *scene, const struct body *body)
{
    (void)frame;
    (void)body;
    struct keys_seen *k = user;
    assert_non_null(render);
    const char *label = scene->hud.lane_count > 0 ? scene->hud.lane[0].label : "";
    switch (index) {
    case 10:
        k->ghosts_before = scene->ghost_count;
        k->trackers_before = scene->tracker_present;
        snprintf(k->label_before, sizeof k->label_before, "%s", label);
        app_live_check_press(SDLK_g);
        break;
    case 12:
        k->ghost_hidden_after_g = !render_ghost_visible(render);
        app_live_check_press(SDLK_g);
        break;
    case 14:
        k->ghost_shown_after_second_g = render_ghost_visible(render);
        app_live_check_press(SDLK_k);
        break;
    case 16:
        k->trackers_after_k = scene->tracker_present;
        snprintf(k->label_after_k, sizeof k->label_after_k, "%s", label);
        app_live_check_press(SDLK_p);
        break;
    case 18: snprintf(k->label_after_p, sizeof k->label_after_p, "%s", label); break;
    default: break;
    }
}

static void
keys_toggle_the_ghost_and_switch_the_setup_and_the_body(void **state)
{
    (void)state;
    struct keys_seen k = {0};
    const struct app_live_hooks hooks = {.on_frame = keys_on_frame, .user = &k};
    assert_int_equal(app_live_check_run(
                         (const char *[]){"--replay", CLIP, "--fast", "--frames", "24", "-q", NULL},
                         &hooks, NULL),
                     0);
    assert_int_equal(k.ghosts_before, 1);
    assert_true(k.ghost_hidden_after_g);
    assert_true(k.ghost_shown_after_second_g);
    assert_string_equal(k.label_before, "3 points · learned prior");
    assert_int_equal(k.trackers_before, 0);
    assert_string_equal(k.label_after_k, "4 points · learned prior");
    assert_int_equal(k.trackers_after_k, EM_TRACKER_BIT(EM_TRACKER_PELVIS));
    assert_string_equal(k.label_after_p, "4 points · procedural");
}

struct compare_seen {
    bool checked;
    int lanes, ghosts;
    bool has_error[2];
    float mean_all_cm[2];
    char label[2][160];
    uint32_t first_trackers, second_trackers;
    int first_failed, second_failed;
    char report[4096];
};

static void
compare_at_end(void *user, struct render *render, const struct render_scene *scene,
               const struct body *body)
{
    (void)body;
    struct compare_seen *c = user;
    assert_non_null(render);
    c->checked = true;
    c->lanes = scene->hud.lane_count;
    c->ghosts = scene->ghost_count;
    for (int i = 0; i < c->lanes && i < 2; ++i) {
        c->has_error[i] = scene->hud.lane[i].has_error;
        c->mean_all_cm[i] = scene->hud.lane[i].mean_cm[0];
        snprintf(c->label[i], sizeof c->label[i], "%s", scene->hud.lane[i].label);
    }
    c->first_trackers = scene->tracker_present;
    c->second_trackers = scene->second.tracker_present;
    assert_non_null(scene->second.skeleton);
    /* Both avatars on screen, each where its own parts project (devices hidden: a
     * controller in front of a wrist hides the hand). */
    app_live_check_press(SDLK_h); /* the HUD off: it covers a head in the top left */
    render_poll(render);
    struct render_scene bare = *scene;
    bare.hidden_devices = (1u << EM_DEVICE_COUNT) - 1;
    bare.ghost_count = 0;
    render_draw(render, &bare);
    struct render_check_image image;
    assert_true(render_check_image_read(render, &image));
    c->first_failed = render_check_avatar(render, &image, &bare, c->report, sizeof c->report);
    struct render_scene second = bare;
    second.skeleton = scene->second.skeleton;
    second.pose = scene->second.pose;
    const size_t used = strlen(c->report);
    c->second_failed =
        render_check_avatar(render, &image, &second, c->report + used, sizeof c->report - used);
    render_check_image_fini(&image);
}

static void
compare_shows_two_avatars_with_their_own_errors(void **state)
{
    (void)state;
    struct compare_seen c = {0};
    const struct app_live_hooks hooks = {.at_end = compare_at_end, .user = &c};
    assert_int_equal(app_live_check_run((const char *[]){"--replay", CLIP, "--compare", "3,6",
                                                         "--fast", "--frames", "300", "-q", NULL},
                                        &hooks, NULL),
                     0);
    assert_true(c.checked);
    assert_int_equal(c.lanes, 2);
    assert_int_equal(c.ghosts, 2);
    assert_true(c.has_error[0] && c.has_error[1]);
    assert_string_equal(c.label[0], "A: 3 points · learned prior");
    assert_string_equal(c.label[1], "B: 6 points · learned prior");
    print_message("--compare 3,6: mean error %.2f cm and %.2f cm\n", (double)c.mean_all_cm[0],
                  (double)c.mean_all_cm[1]);
    /* Feet and hips tracked: the 6-point body is the closer one on this walk. */
    assert_true(c.mean_all_cm[1] < c.mean_all_cm[0]);
    assert_int_equal(c.first_trackers, 0);
    assert_int_equal(c.second_trackers, ST_SETUP_6);
    /* A CMU skeleton's head joint is at the thin top of its neck, and a raised hand is
     * seen end on: up to two of the five parts may be missed; an avatar not drawn misses
     * all five. (Row 300: at row 240 avatar A's right leg hides its left foot from the
     * camera since the body's neck became the network's, body-prior-v5.) */
    if (c.first_failed > 2 || c.second_failed > 2)
        fail_msg("avatars A and B: %d and %d parts not where they project:\n%s", c.first_failed,
                 c.second_failed, c.report);
}

static void
compare_of_a_recording_shows_two_setups_without_a_ghost(void **state)
{
    (void)state;
    struct compare_seen c = {0};
    const struct app_live_hooks hooks = {.at_end = compare_at_end, .user = &c};
    assert_int_equal(app_live_check_run((const char *[]){"--replay", RECORDING, "--compare", "4,6",
                                                         "--fast", "--frames", "120", "-q", NULL},
                                        &hooks, NULL),
                     0);
    assert_true(c.checked);
    assert_int_equal(c.lanes, 2);
    assert_int_equal(c.ghosts, 0);
    assert_false(c.has_error[0] || c.has_error[1]);
    assert_int_equal(c.first_trackers, ST_SETUP_4);
    assert_int_equal(c.second_trackers, ST_SETUP_6);
    if (c.first_failed > 1 || c.second_failed > 1)
        fail_msg("avatars A and B: %d and %d parts not where they project:\n%s", c.first_failed,
                 c.second_failed, c.report);
}

int
main(void)
{
    assert_true(render_check_hold_gl());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(keys_toggle_the_ghost_and_switch_the_setup_and_the_body),
        cmocka_unit_test(compare_shows_two_avatars_with_their_own_errors),
        cmocka_unit_test(compare_of_a_recording_shows_two_setups_without_a_ghost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
