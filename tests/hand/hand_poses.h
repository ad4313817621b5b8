/*
 * The test poses of the hand (point, pinch, fist, open, thumbs-up), shared by the hand
 * tests and the benchmark: each a pose of a given model, held within its limits.
 */
#ifndef EMBODY_TESTS_HAND_POSES_H
#define EMBODY_TESTS_HAND_POSES_H

#include "embody/hand.h"

enum test_hand_pose {
    POSE_POINT = 0,
    POSE_PINCH,
    POSE_FIST,
    POSE_OPEN,
    POSE_THUMBS_UP,
    POSE_COUNT,
};

const char *test_pose_name(int pose);

/* The pose on `model`, constrained (hd_pose_constrain). */
void test_pose_make(const struct hd_model *model, int pose, struct hd_pose *out_pose);

/* A hand of another size and proportions than the default: `length_m` long, each bone
 * longer or shorter by up to 12 % and each knuckle moved by up to 3 mm (from `seed`). */
void test_other_hand(enum hd_hand hand, float length_m, unsigned seed, struct hd_model *out_model);

/* Places the hand somewhere in a room: a rotation about a random axis and a position a
 * metre or so from the origin (from `seed`). */
void test_wrist_placement(unsigned seed, float *out_position_m, float *out_orientation);

/* Moves every tracked joint by up to `noise_m` in each axis (from `seed`). */
void test_add_noise(struct hd_xr_hand *hand, float noise_m, unsigned seed);

#endif
