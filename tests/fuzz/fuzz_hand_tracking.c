/* libFuzzer target: hand tracking's joints (hd_pose_from_tracking, hd_model_fit) as a
 * runtime might give them. The input patches a good tracked hand: each 5 bytes name one
 * of its 26 x 9 numbers (flags, position, orientation, radius) and the 4 bytes to put
 * there, so the fuzzer mixes good joints with any bits; a first byte picks the hand and
 * the pose. Whatever comes in, the pose must be finite and within the model's limits,
 * every refused joint's finger must fall back, and a model hd_model_fit accepts must have
 * every vector finite (a knuckle along the palm's normal once gave NaN finger frames). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "embody/hand.h"
#include "fuzz_common.h"

#define FIELDS_PER_JOINT 9

static void
patch(struct hd_xr_hand *hand, int field, const uint8_t *bytes)
{
    struct hd_xr_joint_location *j = &hand->joint[field / FIELDS_PER_JOINT];
    const int k = field % FIELDS_PER_JOINT;
    void *target = k == 0 ? (void *)&j->flags
                 : k < 4  ? (void *)&j->position_m[k - 1]
                 : k < 8  ? (void *)&j->orientation[k - 4]
                          : (void *)&j->radius_m;
    memcpy(target, bytes, 4);
}

static void
check_pose(const struct hd_model *m, const struct hd_pose *p, const struct hd_tracking_report *r)
{
    for (int f = 0; f < HD_FINGER_COUNT; ++f) {
        for (int j = 0; j < HD_FINGER_JOINTS; ++j)
            if (!(p->flex_rad[f][j] >= m->flex_min_rad[f][j] &&
                  p->flex_rad[f][j] <= m->flex_max_rad[f][j]))
                abort();
        if (!(p->abduct_rad[f] >= m->abduct_min_rad[f] && p->abduct_rad[f] <= m->abduct_max_rad[f]))
            abort();
    }
    int refused = 0;
    for (int j = 0; j < HD_XR_JOINT_COUNT; ++j) {
        if (r->fault[j] >= HD_JOINT_FAULT_COUNT)
            abort();
        refused += r->fault[j] != HD_JOINT_OK;
        /* a refused finger joint holds its finger */
        const int finger = j < HD_XR_THUMB_METACARPAL ? -1
                           : j < HD_XR_INDEX_METACARPAL ? HD_THUMB
                                                        : 1 + (j - HD_XR_INDEX_METACARPAL) / 5;
        if (r->fault[j] != HD_JOINT_OK && finger >= 0 && !(r->fallback_mask & (1u << finger)))
            abort();
    }
    if (refused != r->refused_count || r->fallback_mask >= (1u << HD_FINGER_COUNT))
        abort();
}

static void
check_finite(const float *v, int n)
{
    for (int i = 0; i < n; ++i)
        if (!isfinite(v[i]))
            abort();
}

static void
check_model(const struct hd_model *m)
{
    for (int f = 0; f < HD_FINGER_COUNT; ++f) {
        check_finite(m->base_m[f], 3);
        check_finite(m->metacarpal_m[f], 3);
        check_finite(m->bone_m[f], HD_FINGER_JOINTS);
        check_finite(m->radius_m[f], HD_FINGER_JOINTS + 1);
        check_finite(m->direction[f], 3);
        check_finite(m->palmar[f], 3);
        check_finite(m->side[f], 3);
    }
    check_finite(&m->palm_half_thickness_m, 1);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t head = size > 0 ? data[0] : 0;
    struct hd_model model;
    const struct hd_model_desc desc = {.hand = (head & 1) ? HD_RIGHT : HD_LEFT};
    if (hd_model_init(&desc, &model, NULL) != EM_OK)
        abort();
    struct hd_curls curls;
    hd_curls_relaxed(&curls);
    for (int f = 0; f < HD_FINGER_COUNT; ++f)
        curls.curl[f] = (float)((head >> 1) & 3) / 3.0f;
    struct hd_pose pose, out;
    hd_pose_from_curls(&model, &curls, &pose);
    const float wrist[3] = {0.2f, 1.2f, -0.3f}, q[4] = {0.0f, 0.0f, 0.0f, 1.0f};
    struct hd_xr_hand good, hand;
    hd_pose_to_tracking(&model, &pose, wrist, q, &good);
    hand = good;
    for (size_t i = 1; i + 5 <= size; i += 5)
        patch(&hand, data[i] % (HD_XR_JOINT_COUNT * FIELDS_PER_JOINT), data + i + 1);
    if (head & 8)
        hand.active = false;

    /* A good frame, then the patched one, then the good one again. */
    struct hd_tracking_state state;
    struct hd_tracking_report report;
    hd_tracking_state_init(&state);
    hd_pose_from_tracking(&model, &good, &state, &out, &report);
    check_pose(&model, &out, &report);
    hd_pose_from_tracking(&model, &hand, &state, &out, &report);
    check_pose(&model, &out, &report);
    hd_pose_from_tracking(&model, &good, &state, &out, &report);
    check_pose(&model, &out, &report);

    struct hd_model fitted = model;
    if (hd_model_fit(&fitted, &hand, NULL) == EM_OK) {
        if (!(fitted.hand_length_m >= HD_MIN_HAND_LENGTH_M &&
              fitted.hand_length_m <= HD_MAX_HAND_LENGTH_M))
            abort();
        check_model(&fitted);
        hd_tracking_state_init(&state);
        hd_pose_from_tracking(&fitted, &hand, &state, &out, &report);
        check_pose(&fitted, &out, &report);
    }
    return 0;
}
