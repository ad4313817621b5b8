/*
 * A humanoid's body proportions in its rest pose (include/embody/skeleton.h,
 * sk_humanoid_proportions): joint heights above the floor and distances between joints,
 * each as a fraction of the head joint's height, so skeletons of any size (and the people
 * of a mocap folder against the default humanoid) compare directly.
 */
#include <math.h>
#include <string.h>

#include "embody/skeleton.h"

static const char *const k_measure_names[SK_MEASURE_COUNT] = {
    [SK_MEASURE_HIPS_HEIGHT] = "hips height",
    [SK_MEASURE_UPPER_LEG_HEIGHT] = "upper legs height",
    [SK_MEASURE_KNEE_HEIGHT] = "knees height",
    [SK_MEASURE_ANKLE_HEIGHT] = "ankles height",
    [SK_MEASURE_CHEST_HEIGHT] = "chest height",
    [SK_MEASURE_NECK_HEIGHT] = "neck height",
    [SK_MEASURE_UPPER_ARM_HEIGHT] = "upper arms height",
    [SK_MEASURE_HIP_WIDTH] = "hip width",
    [SK_MEASURE_THIGH] = "thigh",
    [SK_MEASURE_SHIN] = "shin",
    [SK_MEASURE_FOOT] = "foot (ankle to toes)",
    [SK_MEASURE_SPINE] = "spine (hips to neck)",
    [SK_MEASURE_NECK] = "neck (neck to head)",
    [SK_MEASURE_SHOULDER_WIDTH] = "shoulder width",
    [SK_MEASURE_UPPER_ARM] = "upper arm",
    [SK_MEASURE_FOREARM] = "forearm",
    [SK_MEASURE_NECK_FRONT] = "neck in front of head",
    [SK_MEASURE_UPPER_ARM_FRONT] = "upper arms in front of head",
};

const char *
sk_measure_name(enum sk_measure measure)
{
    return measure >= 0 && measure < SK_MEASURE_COUNT ? k_measure_names[measure] : "unknown";
}

/* The bones the measures need, the left ones with their mirrors: the toes too, as the
 * floor is under them (a foot joint is the ankle, above the floor). */
static const enum sk_bone k_needed[] = {
    SK_HIPS,           SK_CHEST,          SK_NECK,      SK_HEAD,
    SK_LEFT_UPPER_ARM, SK_LEFT_LOWER_ARM, SK_LEFT_HAND, SK_LEFT_UPPER_LEG,
    SK_LEFT_LOWER_LEG, SK_LEFT_FOOT,      SK_LEFT_TOES,
};

static const float *
rest(const struct sk_skeleton *sk, enum sk_bone bone)
{
    return sk->rest_position_m[sk->bone_joint[bone]];
}

static float
distance(const struct sk_skeleton *sk, enum sk_bone a, enum sk_bone b)
{
    const float *p = rest(sk, a), *q = rest(sk, b);
    const float d[3] = {p[0] - q[0], p[1] - q[1], p[2] - q[2]};
    return sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

/* The mean of a measure over the two sides: the left bones given, their mirrors. */
static float
both_sides_distance(const struct sk_skeleton *sk, enum sk_bone left_a, enum sk_bone left_b)
{
    return 0.5f * (distance(sk, left_a, left_b) +
                   distance(sk, sk_bone_mirror(left_a), sk_bone_mirror(left_b)));
}

static float
both_sides_axis(const struct sk_skeleton *sk, enum sk_bone left, int axis)
{
    return 0.5f * (rest(sk, left)[axis] + rest(sk, sk_bone_mirror(left))[axis]);
}

/* Every measure in metres (heights above `floor_y`). */
static void
measure_m(const struct sk_skeleton *sk, float floor_y, float *out_m)
{
    const float head_z = rest(sk, SK_HEAD)[2];
    out_m[SK_MEASURE_HIPS_HEIGHT] = rest(sk, SK_HIPS)[1] - floor_y;
    out_m[SK_MEASURE_UPPER_LEG_HEIGHT] = both_sides_axis(sk, SK_LEFT_UPPER_LEG, 1) - floor_y;
    out_m[SK_MEASURE_KNEE_HEIGHT] = both_sides_axis(sk, SK_LEFT_LOWER_LEG, 1) - floor_y;
    out_m[SK_MEASURE_ANKLE_HEIGHT] = both_sides_axis(sk, SK_LEFT_FOOT, 1) - floor_y;
    out_m[SK_MEASURE_CHEST_HEIGHT] = rest(sk, SK_CHEST)[1] - floor_y;
    out_m[SK_MEASURE_NECK_HEIGHT] = rest(sk, SK_NECK)[1] - floor_y;
    out_m[SK_MEASURE_UPPER_ARM_HEIGHT] = both_sides_axis(sk, SK_LEFT_UPPER_ARM, 1) - floor_y;
    out_m[SK_MEASURE_HIP_WIDTH] = distance(sk, SK_LEFT_UPPER_LEG, SK_RIGHT_UPPER_LEG);
    out_m[SK_MEASURE_THIGH] = both_sides_distance(sk, SK_LEFT_UPPER_LEG, SK_LEFT_LOWER_LEG);
    out_m[SK_MEASURE_SHIN] = both_sides_distance(sk, SK_LEFT_LOWER_LEG, SK_LEFT_FOOT);
    out_m[SK_MEASURE_FOOT] = both_sides_distance(sk, SK_LEFT_FOOT, SK_LEFT_TOES);
    out_m[SK_MEASURE_SPINE] = distance(sk, SK_HIPS, SK_NECK);
    out_m[SK_MEASURE_NECK] = distance(sk, SK_NECK, SK_HEAD);
    out_m[SK_MEASURE_SHOULDER_WIDTH] = distance(sk, SK_LEFT_UPPER_ARM, SK_RIGHT_UPPER_ARM);
    out_m[SK_MEASURE_UPPER_ARM] = both_sides_distance(sk, SK_LEFT_UPPER_ARM, SK_LEFT_LOWER_ARM);
    out_m[SK_MEASURE_FOREARM] = both_sides_distance(sk, SK_LEFT_LOWER_ARM, SK_LEFT_HAND);
    out_m[SK_MEASURE_NECK_FRONT] = rest(sk, SK_NECK)[2] - head_z;
    out_m[SK_MEASURE_UPPER_ARM_FRONT] = both_sides_axis(sk, SK_LEFT_UPPER_ARM, 2) - head_z;
}

/* A rest pose stands on its feet when each foot points forward more than down. Rigs whose
 * bones lie along their own axes (CC3/iClone: every offset along +Y) have a rest pose that
 * is no pose at all; st_bvh_to_humanoid turns their thighs and upper arms, but their feet
 * still point at the floor and their shoulders straight up, so nothing can be measured. */
static enum em_result
check_standing(const struct sk_skeleton *sk, const char *source, struct em_error *err)
{
    for (int side = 0; side < 2; ++side) {
        const enum sk_bone foot = side ? SK_RIGHT_FOOT : SK_LEFT_FOOT;
        const enum sk_bone toes = side ? SK_RIGHT_TOES : SK_LEFT_TOES;
        const float forward_m = rest(sk, toes)[2] - rest(sk, foot)[2];
        const float down_m = rest(sk, foot)[1] - rest(sk, toes)[1];
        if (!(forward_m > down_m))
            return em_fail(err, EM_ERROR_PARSE,
                           "%s: the rest pose does not stand on its feet: the %s points down "
                           "(toes %.1f cm below the ankle, %.1f cm in front), so joint heights "
                           "cannot be read from it (is the rest pose a T-pose?)",
                           source, sk_bone_name(foot), 100.0 * (double)down_m,
                           100.0 * (double)forward_m);
    }
    return EM_OK;
}

enum em_result
sk_humanoid_proportions(const struct sk_skeleton *sk, const char *source,
                        struct sk_proportions *out, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < 2 * (sizeof k_needed / sizeof k_needed[0]); ++i) {
        const enum sk_bone b = i % 2 ? sk_bone_mirror(k_needed[i / 2]) : k_needed[i / 2];
        if (sk->bone_joint[b] < 0)
            return em_fail(err, EM_ERROR_PARSE,
                           "%s: no %s joint; the proportions need hips, chest, neck, head, "
                           "arms, legs, feet and toes (the floor is under the toes)",
                           source, sk_bone_name(b));
    }
    const enum em_result r = check_standing(sk, source, err);
    if (r != EM_OK)
        return r;
    const float floor_y = sk_humanoid_floor_y(sk);
    const float head_m = rest(sk, SK_HEAD)[1] - floor_y;
    /* The head joint is the unit: a head at or below the feet is no standing person. */
    if (!(head_m > 1e-3f) || !isfinite(head_m))
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: the head joint is %.4g m above the feet; a standing humanoid's "
                       "is above them",
                       source, (double)head_m);
    float m[SK_MEASURE_COUNT];
    measure_m(sk, floor_y, m);
    out->head_height_m = head_m;
    for (int i = 0; i < SK_MEASURE_COUNT; ++i)
        out->fraction[i] = m[i] / head_m;
    return EM_OK;
}
