/*
 * The truth beside the avatar (issue 28): `embody --replay CLIP.bvh` shows each frame's
 * error and the running mean on the HUD, and they are what `embody eval` scores for that
 * frame: the same clip (ev_clip_load), the same known body (ev_clip_reconstruct), the same
 * per-frame function (ev_frame_error_cm). Runs the live loop without a window.
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

#include "app/app_lanes.h"
#include "app/app_live.h"
#include "app/app_options.h"
#include "eval/eval.h"

#define CLIP EMBODY_SOURCE_DIR "/tests/data/mocap/cmu_05_04.bvh"
#define FRAMES 240
#define TOLERANCE_CM 0.1

/* The HUD's numbers as each frame left them (the scene a hook sees is the frame before). */
struct hud_log {
    int frames;
    float error_cm[FRAMES][RENDER_ERROR_GROUPS];
    float mean_cm[FRAMES][RENDER_ERROR_GROUPS];
    bool has_error[FRAMES];
    char label[160];
};

static void
log_hud(void *user, long index, const struct em_tracking_frame *frame, struct render *render,
        const struct render_scene *scene, const struct body *body)
{
    (void)frame;
    (void)render;
    (void)body;
    struct hud_log *log = user;
    if (index == 0 || index > FRAMES)
        return;
    const long row = index - 1;
    assert_int_equal(scene->hud.lane_count, 1);
    const struct render_hud_lane *lane = &scene->hud.lane[0];
    log->has_error[row] = lane->has_error;
    memcpy(log->error_cm[row], lane->error_cm, sizeof log->error_cm[row]);
    memcpy(log->mean_cm[row], lane->mean_cm, sizeof log->mean_cm[row]);
    snprintf(log->label, sizeof log->label, "%s", lane->label ? lane->label : "");
    log->frames = (int)row + 1;
}

static void
run_replay(const char *trackers, struct hud_log *log)
{
    char frames[16];
    snprintf(frames, sizeof frames, "%d", FRAMES + 1);
    char *argv[] = {"embody", "--replay",   CLIP,     "--trackers",  (char *)trackers,
                    "--body", "procedural", "--fast", "--no-window", "--frames",
                    frames,   "-q",         NULL};
    struct app_options options;
    struct em_error err = {{0}};
    if (app_options_parse(12, argv, 1, &options, &err) != EM_OK)
        fail_msg("%s", err.message);
    const struct app_live_hooks hooks = {.on_frame = log_hud, .user = log};
    assert_int_equal(app_live_run(&options, &hooks, NULL), 0);
    assert_int_equal(log->frames, FRAMES);
}

/* What eval computes for each of the first FRAMES rows, per group. */
static void
eval_errors(uint32_t trackers, double out_cm[FRAMES][EV_GROUP_COUNT])
{
    struct ev_clip clip;
    struct em_error err = {{0}};
    if (ev_clip_load(CLIP, FRAMES, &clip, &err) != EM_OK ||
        ev_trackers_select(&clip, trackers, &err) != EM_OK)
        fail_msg("%s", err.message);
    struct ev_motion ours;
    if (ev_clip_reconstruct(&clip, EV_KNOWN_BODY, &ours, NULL, &err) != EM_OK)
        fail_msg("%s", err.message);
    for (int f = 0; f < FRAMES; ++f)
        ev_frame_error_cm((const double(*)[3])ours.position_m[f],
                          (const double(*)[3])clip.truth.position_m[f], out_cm[f]);
    ev_motion_fini(&ours);
    ev_clip_fini(&clip);
}

static void
expect_hud_is_eval(const char *setup, uint32_t mask)
{
    struct hud_log *log = calloc(1, sizeof *log);
    double(*eval_cm)[EV_GROUP_COUNT] = calloc(FRAMES, sizeof *eval_cm);
    assert_non_null(log);
    assert_non_null(eval_cm);
    run_replay(setup, log);
    eval_errors(mask, eval_cm);
    double sum[EV_GROUP_COUNT] = {0}, worst = 0.0;
    for (int f = 0; f < FRAMES; ++f) {
        assert_true(log->has_error[f]);
        for (int g = 0; g < EV_GROUP_COUNT; ++g) {
            sum[g] += eval_cm[f][g];
            const double d = fabs((double)log->error_cm[f][g] - eval_cm[f][g]);
            worst = fmax(worst, d);
            if (!(d <= TOLERANCE_CM))
                fail_msg("--trackers %s, frame %d, %s: the HUD shows %.3f cm, eval computes "
                         "%.3f cm",
                         setup, f, ev_group_name((enum ev_group)g), (double)log->error_cm[f][g],
                         eval_cm[f][g]);
            const double mean = sum[g] / (f + 1);
            if (!(fabs((double)log->mean_cm[f][g] - mean) <= TOLERANCE_CM))
                fail_msg("--trackers %s, frame %d, %s: the HUD's mean is %.3f cm, eval's mean "
                         "of the frames so far %.3f cm",
                         setup, f, ev_group_name((enum ev_group)g), (double)log->mean_cm[f][g],
                         mean);
        }
    }
    print_message("--trackers %s (%s): %d frames, the HUD within %.2g cm of eval (all joints "
                  "%.2f cm mean)\n",
                  setup, log->label, FRAMES, worst, sum[EV_GROUP_ALL] / FRAMES);
    free(eval_cm);
    free(log);
}

static void
hud_error_of_a_replayed_clip_is_what_eval_computes_for_the_frame(void **state)
{
    (void)state;
    expect_hud_is_eval("3", ST_SETUP_3);
    expect_hud_is_eval("6", ST_SETUP_6);
}

/* The function K calls: 3, 4, 6, 8, 11 points and around again; the body given only the
 * setup's trackers; the mean starts again. P: the other body, built afresh. */
static void
keys_switch_the_tracker_setup_and_the_body(void **state)
{
    (void)state;
    struct app_truth truth;
    struct em_error err = {{0}};
    assert_int_equal(app_truth_load(CLIP, &truth, NULL, 0, &err), EM_OK);
    struct app_avatar avatar;
    const struct app_avatar_desc adesc = {.bvh_path = CLIP, .body_mode = "procedural"};
    assert_int_equal(app_avatar_load(&adesc, &avatar, &err), EM_OK);
    const struct app_lanes_desc desc = {
        .avatar = &avatar, .truth = &truth, .avatar_is_clip = true, .count = 1};
    struct app_lanes lanes;
    if (app_lanes_init(&lanes, &desc, &err) != EM_OK)
        fail_msg("%s", err.message);
    const struct em_tracking_frame *rows = truth.clip.stream.frames;
    assert_int_equal(truth.clip.stream.frames[0].tracker_present, EM_TRACKER_ALL);
    app_lanes_update(&lanes, &rows[0], NULL);
    assert_int_equal(lanes.lane[0].frame.tracker_present, 0);
    assert_int_equal(lanes.lane[0].frames, 1);
    static const uint32_t order[] = {ST_SETUP_4, ST_SETUP_6, ST_SETUP_8, ST_SETUP_11, ST_SETUP_3};
    char message[256];
    for (int k = 0; k < 5; ++k) {
        app_lanes_next_setup(&lanes, message, sizeof message);
        assert_int_equal(lanes.lane[0].trackers, order[k]);
        assert_int_equal(lanes.lane[0].frames, 0);
        app_lanes_update(&lanes, &rows[k + 1], NULL);
        assert_int_equal(lanes.lane[0].frame.tracker_present, order[k]);
    }
    assert_non_null(strstr(lanes.lane[0].label, "procedural"));
    struct body_desc bd;
    body_get_desc(lanes.lane[0].body, &bd);
    assert_null(bd.prior);
    app_lanes_next_body(&lanes, message, sizeof message);
    if (lanes.lane[0].procedural)
        fail_msg("P did not switch to the learned prior: %s", message);
    assert_non_null(strstr(lanes.lane[0].label, "learned prior"));
    body_get_desc(lanes.lane[0].body, &bd);
    assert_non_null(bd.prior);
    app_lanes_next_body(&lanes, message, sizeof message);
    assert_true(lanes.lane[0].procedural);
    body_get_desc(lanes.lane[0].body, &bd);
    assert_null(bd.prior);
    app_lanes_fini(&lanes);
    app_avatar_fini(&avatar);
    app_truth_fini(&truth);
}

/* --compare's items: a setup, a body or a prior model file; two of them, no more. */
static void
compare_items_are_setups_bodies_or_model_files(void **state)
{
    (void)state;
    struct app_lane_spec spec;
    struct em_error err = {{0}};
    assert_int_equal(app_lane_spec_parse("6", &spec, &err), EM_OK);
    assert_true(spec.trackers_set);
    assert_int_equal(spec.trackers, ST_SETUP_6);
    assert_int_equal(app_lane_spec_parse("procedural", &spec, &err), EM_OK);
    assert_int_equal(spec.body, 2);
    assert_int_equal(app_lane_spec_parse("prior", &spec, &err), EM_OK);
    assert_int_equal(spec.body, 1);
    assert_null(spec.model);
    assert_int_equal(app_lane_spec_parse("models/v2.bin", &spec, &err), EM_OK);
    assert_string_equal(spec.model, "models/v2.bin");
    static const char *const bad[] = {"3", "3,6,8", ",6", "6,"};
    for (int i = 0; i < 4; ++i) {
        char *argv[] = {"embody", "--compare", (char *)bad[i], NULL};
        struct app_options options;
        assert_int_equal(app_options_parse(3, argv, 1, &options, &err), EM_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(err.message, "--compare"));
    }
    /* A model file that is not there is refused when the avatars are built. */
    struct app_avatar avatar;
    const struct app_avatar_desc adesc = {.bvh_path = CLIP, .body_mode = "procedural"};
    assert_int_equal(app_avatar_load(&adesc, &avatar, &err), EM_OK);
    struct app_lanes_desc desc = {.avatar = &avatar, .count = 2};
    assert_int_equal(app_lane_spec_parse("prior", &desc.spec[0], &err), EM_OK);
    assert_int_equal(app_lane_spec_parse("/nonexistent/model.bin", &desc.spec[1], &err), EM_OK);
    struct app_lanes lanes;
    assert_int_not_equal(app_lanes_init(&lanes, &desc, &err), EM_OK);
    assert_non_null(strstr(err.message, "/nonexistent/model.bin"));
    app_lanes_fini(&lanes);
    app_avatar_fini(&avatar);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hud_error_of_a_replayed_clip_is_what_eval_computes_for_the_frame),
        cmocka_unit_test(keys_switch_the_tracker_setup_and_the_body),
        cmocka_unit_test(compare_items_are_setups_bodies_or_model_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
