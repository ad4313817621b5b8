/*
 * Cost per frame of the hand module's conversions (a benchmark, not a test): one hand's
 * 26 tracked joints to its finger pose (hd_pose_from_tracking, validation and contact
 * checks included), a controller's inputs to a pose (hd_curls_from_controller and
 * hd_pose_from_curls), and a pose to the humanoid's 15 local rotations and offsets, on
 * each test pose (point, pinch, fist, open, thumbs-up). Prints the median and 99th
 * percentile of batches, nanoseconds per call.
 *
 *   build/tests/bench/bench_hand
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embody/hand.h"
#include "hand_poses.h"
#include "util/u_time.h"

#define BATCHES 301
#define CALLS_PER_BATCH 200

static int
compare_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum conversion { FROM_TRACKING, FROM_CONTROLLER, TO_HUMANOID, CONVERSION_COUNT };

static const char *const conversion_names[CONVERSION_COUNT] = {
    "26 tracked joints -> pose", "controller inputs -> pose", "pose -> humanoid locals"};

struct work {
    const struct hd_model *model;
    struct hd_xr_hand tracked;
    struct hd_tracking_state state;
    const struct hd_profile *profile;
    struct hd_controller_input input;
    struct hd_pose pose;
};

static float
run(enum conversion c, struct work *w)
{
    struct hd_pose out;
    switch (c) {
    case FROM_TRACKING:
        hd_pose_from_tracking(w->model, &w->tracked, &w->state, &out, NULL);
        return out.flex_rad[HD_INDEX][1];
    case FROM_CONTROLLER: {
        struct hd_curls curls;
        hd_curls_from_controller(w->profile, &w->input, &curls);
        hd_pose_from_curls(w->model, &curls, &out);
        return out.flex_rad[HD_INDEX][1];
    }
    default: {
        float rotation[HD_JOINT_COUNT][4], offset[HD_JOINT_COUNT][3];
        hd_pose_humanoid_locals(w->model, &w->pose, rotation, offset);
        return rotation[4][0];
    }
    }
}

static void
time_conversion(enum conversion c, struct work *w, double *out_median, double *out_p99)
{
    static double ns[BATCHES];
    volatile float sink = 0.0f;
    for (int b = 0; b < BATCHES; ++b) {
        const int64_t start = u_time_now_ns();
        for (int r = 0; r < CALLS_PER_BATCH; ++r)
            sink += run(c, w);
        ns[b] = (double)(u_time_now_ns() - start) / CALLS_PER_BATCH;
    }
    (void)sink;
    qsort(ns, BATCHES, sizeof ns[0], compare_double);
    *out_median = ns[BATCHES / 2];
    *out_p99 = ns[BATCHES * 99 / 100];
}

/* What a player does on a Touch controller for each pose (pinch: trigger half pulled). */
static void
controller_input(int pose, struct hd_controller_input *in)
{
    memset(in, 0, sizeof *in);
    const bool grip = pose != POSE_OPEN;
    in->squeeze = grip && pose != POSE_PINCH ? 1.0f : 0.0f;
    in->trigger =
        pose == POSE_FIST || pose == POSE_THUMBS_UP ? 1.0f : (pose == POSE_PINCH ? 0.5f : 0.0f);
    in->trigger_touch = in->trigger > 0.0f;
    in->buttons_touch = pose == POSE_POINT || pose == POSE_FIST || pose == POSE_PINCH;
}

int
main(void)
{
    struct hd_model model;
    struct em_error err = {{0}};
    const struct hd_model_desc desc = {.hand = HD_LEFT};
    if (hd_model_init(&desc, &model, &err) != EM_OK) {
        fprintf(stderr, "bench_hand: %s\n", err.message);
        return 1;
    }
    struct hd_model player;
    test_other_hand(HD_LEFT, 0.175f, 3u, &player);
    printf("| conversion | pose | median ns | p99 ns |\n");
    printf("|---|---|---|---|\n");
    for (int c = 0; c < CONVERSION_COUNT; ++c)
        for (int pose = 0; pose < POSE_COUNT; ++pose) {
            struct work w = {.model = &model};
            test_pose_make(&player, pose, &w.pose);
            float wrist[3], q[4];
            test_wrist_placement(11u, wrist, q);
            hd_pose_to_tracking(&player, &w.pose, wrist, q, &w.tracked);
            hd_tracking_state_init(&w.state);
            w.profile = hd_profile_find("/interaction_profiles/oculus/touch_controller");
            controller_input(pose, &w.input);
            double median, p99;
            time_conversion((enum conversion)c, &w, &median, &p99);
            printf("| %s | %s | %.0f | %.0f |\n", conversion_names[c], test_pose_name(pose), median,
                   p99);
        }
    return 0;
}
