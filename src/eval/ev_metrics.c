/*
 * The scored joints, their groups, and the metrics of PROTOCOL.md section 4 on motions of
 * those joints: MPJPE by group, jitter, foot skate, and the do-nothing baseline.
 *
 * Everything here is in double: the third finite difference of positions sampled at
 * 60 Hz is multiplied by 60^3, which would turn float rounding of metre-sized positions
 * into a visible part of a real motion's jitter.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "ev_internal.h"

static const struct {
    enum sk_bone bone;
    const char *cmu;
} joint_table[EV_JOINT_COUNT] = {
    [EV_HIPS] = {SK_HIPS, "Hips"},
    [EV_NECK] = {SK_NECK, "Neck"},
    [EV_HEAD] = {SK_HEAD, "Head"},
    [EV_LEFT_UPPER_ARM] = {SK_LEFT_UPPER_ARM, "LeftArm"},
    [EV_LEFT_LOWER_ARM] = {SK_LEFT_LOWER_ARM, "LeftForeArm"},
    [EV_LEFT_HAND] = {SK_LEFT_HAND, "LeftHand"},
    [EV_RIGHT_UPPER_ARM] = {SK_RIGHT_UPPER_ARM, "RightArm"},
    [EV_RIGHT_LOWER_ARM] = {SK_RIGHT_LOWER_ARM, "RightForeArm"},
    [EV_RIGHT_HAND] = {SK_RIGHT_HAND, "RightHand"},
    [EV_LEFT_UPPER_LEG] = {SK_LEFT_UPPER_LEG, "LeftUpLeg"},
    [EV_LEFT_LOWER_LEG] = {SK_LEFT_LOWER_LEG, "LeftLeg"},
    [EV_LEFT_FOOT] = {SK_LEFT_FOOT, "LeftFoot"},
    [EV_LEFT_TOES] = {SK_LEFT_TOES, "LeftToeBase"},
    [EV_RIGHT_UPPER_LEG] = {SK_RIGHT_UPPER_LEG, "RightUpLeg"},
    [EV_RIGHT_LOWER_LEG] = {SK_RIGHT_LOWER_LEG, "RightLeg"},
    [EV_RIGHT_FOOT] = {SK_RIGHT_FOOT, "RightFoot"},
    [EV_RIGHT_TOES] = {SK_RIGHT_TOES, "RightToeBase"},
};

enum sk_bone
ev_joint_bone(enum ev_joint joint)
{
    return joint >= 0 && joint < EV_JOINT_COUNT ? joint_table[joint].bone : SK_BONE_NONE;
}

const char *
ev_joint_cmu_name(enum ev_joint joint)
{
    return joint >= 0 && joint < EV_JOINT_COUNT ? joint_table[joint].cmu : "none";
}

const char *
ev_group_name(enum ev_group group)
{
    static const char *const names[EV_GROUP_COUNT] = {"all", "upper", "lower", "hands",
                                                      "feet"};
    return group >= 0 && group < EV_GROUP_COUNT ? names[group] : "none";
}

static bool
is_foot(enum ev_joint j)
{
    return j == EV_LEFT_FOOT || j == EV_LEFT_TOES || j == EV_RIGHT_FOOT || j == EV_RIGHT_TOES;
}

static bool
is_leg_or_hips(enum ev_joint j)
{
    return j == EV_HIPS || (j >= EV_LEFT_UPPER_LEG && j <= EV_RIGHT_TOES);
}

bool
ev_joint_in_group(enum ev_joint joint, enum ev_group group)
{
    if (joint < 0 || joint >= EV_JOINT_COUNT)
        return false;
    switch (group) {
    case EV_GROUP_ALL: return true;
    case EV_GROUP_UPPER: return !is_leg_or_hips(joint);
    case EV_GROUP_LOWER: return is_leg_or_hips(joint);
    case EV_GROUP_HANDS: return joint == EV_LEFT_HAND || joint == EV_RIGHT_HAND;
    case EV_GROUP_FEET: return is_foot(joint);
    case EV_GROUP_COUNT: break;
    }
    return false;
}

enum em_result
ev_motion_init(struct ev_motion *out, int frame_count, double fps)
{
    memset(out, 0, sizeof *out);
    if (frame_count < 0)
        return EM_ERROR_INVALID_ARGUMENT;
    out->position_m = calloc(frame_count > 0 ? (size_t)frame_count : 1, sizeof *out->position_m);
    if (!out->position_m)
        return EM_ERROR_OUT_OF_MEMORY;
    out->frame_count = frame_count;
    out->fps = fps;
    return EM_OK;
}

void
ev_motion_fini(struct ev_motion *motion)
{
    free(motion->position_m);
    memset(motion, 0, sizeof *motion);
}

static double
distance3(const double *a, const double *b)
{
    const double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

void
ev_frame_joint_error_cm(const double ours_m[EV_JOINT_COUNT][3],
                        const double truth_m[EV_JOINT_COUNT][3], double out_joint_cm[EV_JOINT_COUNT])
{
    for (int j = 0; j < EV_JOINT_COUNT; ++j)
        out_joint_cm[j] = 100.0 * distance3(ours_m[j], truth_m[j]);
}

void
ev_group_means_cm(const double joint_cm[EV_JOINT_COUNT], double out_cm[EV_GROUP_COUNT])
{
    for (int g = 0; g < EV_GROUP_COUNT; ++g) {
        double sum = 0.0;
        int joints = 0;
        for (int j = 0; j < EV_JOINT_COUNT; ++j)
            if (ev_joint_in_group((enum ev_joint)j, (enum ev_group)g)) {
                sum += joint_cm[j];
                joints++;
            }
        out_cm[g] = joints > 0 ? sum / joints : (double)NAN;
    }
}

void
ev_frame_error_cm(const double ours_m[EV_JOINT_COUNT][3], const double truth_m[EV_JOINT_COUNT][3],
                  double out_cm[EV_GROUP_COUNT])
{
    double joint_cm[EV_JOINT_COUNT];
    ev_frame_joint_error_cm(ours_m, truth_m, joint_cm);
    ev_group_means_cm(joint_cm, out_cm);
}

/* The mean over frames of each frame's error (ev_frame_joint_error_cm): every joint has
 * the same number of frames, so a group's mean of joint means is its mean over pairs. */
void
ev_mpjpe_cm(const struct ev_motion *ours, const struct ev_motion *truth,
            double out_cm[EV_GROUP_COUNT], double out_joint_cm[EV_JOINT_COUNT])
{
    const int frames = ours->frame_count < truth->frame_count ? ours->frame_count
                                                               : truth->frame_count;
    double joint_sum[EV_JOINT_COUNT] = {0};
    for (int f = 0; f < frames; ++f) {
        double frame_cm[EV_JOINT_COUNT];
        ev_frame_joint_error_cm((const double(*)[3])ours->position_m[f],
                                (const double(*)[3])truth->position_m[f], frame_cm);
        for (int j = 0; j < EV_JOINT_COUNT; ++j)
            joint_sum[j] += frame_cm[j];
    }
    double joint_mean[EV_JOINT_COUNT];
    for (int j = 0; j < EV_JOINT_COUNT; ++j)
        joint_mean[j] = frames > 0 ? joint_sum[j] / frames : (double)NAN;
    ev_group_means_cm(joint_mean, out_cm);
    if (out_joint_cm)
        memcpy(out_joint_cm, joint_mean, sizeof joint_mean);
}

double
ev_jitter_m_s3(const struct ev_motion *motion)
{
    if (motion->frame_count < 4)
        return (double)NAN;
    double sum = 0.0;
    for (int f = 3; f < motion->frame_count; ++f)
        for (int j = 0; j < EV_JOINT_COUNT; ++j) {
            double d[3];
            for (int k = 0; k < 3; ++k)
                d[k] = motion->position_m[f][j][k] - 3.0 * motion->position_m[f - 1][j][k] +
                       3.0 * motion->position_m[f - 2][j][k] - motion->position_m[f - 3][j][k];
            sum += sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        }
    const double pairs = (double)(motion->frame_count - 3) * EV_JOINT_COUNT;
    return sum / pairs * motion->fps * motion->fps * motion->fps;
}

double
ev_foot_skate_cm(const struct ev_motion *ours, const struct ev_motion *truth,
                 long *out_planted)
{
    const int frames = ours->frame_count < truth->frame_count ? ours->frame_count
                                                               : truth->frame_count;
    double sum = 0.0;
    long planted = 0;
    for (int f = 1; f < frames; ++f)
        for (int j = 0; j < EV_JOINT_COUNT; ++j) {
            if (!is_foot((enum ev_joint)j))
                continue;
            const double true_step =
                distance3(truth->position_m[f][j], truth->position_m[f - 1][j]);
            if (!(true_step <= EV_PLANTED_MAX_STEP_M))
                continue;
            sum += distance3(ours->position_m[f][j], ours->position_m[f - 1][j]);
            planted++;
        }
    if (out_planted)
        *out_planted = planted;
    return planted > 0 ? 100.0 * sum / (double)planted : (double)NAN;
}

/* Mean length of the difference between our feet's motion over row f and the true feet's
 * over row f - shift (m per row). Motion, not position: a foot that stands 20 cm from the
 * true one all clip long says nothing of when it moves. */
static double
shifted_motion_error(const struct ev_motion *ours, const struct ev_motion *truth, int frames,
                     int shift)
{
    double sum = 0.0;
    long n = 0;
    for (int f = EV_MAX_LAG_ROWS + 1; f < frames - EV_MAX_LAG_ROWS; ++f)
        for (int j = 0; j < EV_JOINT_COUNT; ++j)
            if (is_foot((enum ev_joint)j)) {
                double d[3];
                for (int k = 0; k < 3; ++k)
                    d[k] = (ours->position_m[f][j][k] - ours->position_m[f - 1][j][k]) -
                           (truth->position_m[f - shift][j][k] -
                            truth->position_m[f - shift - 1][j][k]);
                sum += sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
                n++;
            }
    return n > 0 ? sum / (double)n : (double)NAN;
}

/* The feet's delay behind the truth (see ev_scores.lag_ms): the shift of least motion
 * error, refined by the parabola through it and its neighbours; NaN when no shift stands
 * out by EV_LAG_MIN_DEPTH of the error, or by EV_LAG_MIN_STEP_M (feet too still to time),
 * or the clip is short. */
static double
feet_lag_ms(const struct ev_motion *ours, const struct ev_motion *truth)
{
    const int frames = ours->frame_count < truth->frame_count ? ours->frame_count
                                                               : truth->frame_count;
    if (frames < 4 * EV_MAX_LAG_ROWS)
        return (double)NAN;
    double e[2 * EV_MAX_LAG_ROWS + 1];
    int best = 0, worst = 0;
    for (int s = -EV_MAX_LAG_ROWS; s <= EV_MAX_LAG_ROWS; ++s) {
        e[s + EV_MAX_LAG_ROWS] = shifted_motion_error(ours, truth, frames, s);
        if (e[s + EV_MAX_LAG_ROWS] < e[best])
            best = s + EV_MAX_LAG_ROWS;
        if (e[s + EV_MAX_LAG_ROWS] > e[worst])
            worst = s + EV_MAX_LAG_ROWS;
    }
    if (!(e[worst] - e[best] >= fmax(EV_LAG_MIN_DEPTH * e[worst], EV_LAG_MIN_STEP_M)))
        return (double)NAN;
    double shift = best - EV_MAX_LAG_ROWS;
    if (best > 0 && best < 2 * EV_MAX_LAG_ROWS) {
        const double a = e[best - 1], b = e[best], c = e[best + 1];
        const double curve = a - 2.0 * b + c;
        if (curve > 1e-12)
            shift += 0.5 * (a - c) / curve;
    }
    return shift * 1000.0 / 60.0;
}

void
ev_score(const struct ev_motion *ours, const struct ev_motion *truth, struct ev_scores *out)
{
    ev_mpjpe_cm(ours, truth, out->mpjpe_cm, out->joint_mpjpe_cm);
    out->lag_ms = feet_lag_ms(ours, truth);
    out->jitter_m_s3 = ev_jitter_m_s3(ours);
    out->foot_skate_cm = ev_foot_skate_cm(ours, truth, &out->planted_count);
}

/* ---- The do-nothing baseline, in double ---- */

/* The heading of a view pose: the angle about +Y from +Z to the horizontal direction it
 * looks in (the view looks down its -Z). Looking straight up or down, the view's +Y (the
 * top of the head) points along the heading instead, backwards when looking up. */
static double
view_heading_rad(const float *q)
{
    const double x = (double)q[0], y = (double)q[1], z = (double)q[2], w = (double)q[3];
    /* The rotation matrix's third column is the view's +Z, its second the view's +Y. */
    const double fx = -(2.0 * (x * z + w * y)), fz = -(1.0 - 2.0 * (x * x + y * y));
    if (fx * fx + fz * fz > 1e-12)
        return atan2(fx, fz);
    const double ux = 2.0 * (x * y - w * z), uz = 2.0 * (y * z + w * x);
    const double forward_y = -(2.0 * (y * z - w * x));
    const double sign = forward_y < 0.0 ? 1.0 : -1.0;
    return atan2(sign * ux, sign * uz);
}

void
ev_do_nothing(const struct ev_motion *truth, const struct em_tracking_frame *frames,
              struct ev_motion *out)
{
    if (truth->frame_count <= 0)
        return;
    const struct em_pose *first = &frames[0].device[EM_DEVICE_HEAD].pose;
    const double heading0 = view_heading_rad(first->orientation);
    double rel[EV_JOINT_COUNT][3];
    for (int j = 0; j < EV_JOINT_COUNT; ++j)
        for (int k = 0; k < 3; ++k)
            rel[j][k] = truth->position_m[0][j][k] - (double)first->position_m[k];
    for (int f = 0; f < truth->frame_count && f < out->frame_count; ++f) {
        const struct em_pose *head = &frames[f].device[EM_DEVICE_HEAD].pose;
        const double turn = view_heading_rad(head->orientation) - heading0;
        const double c = cos(turn), s = sin(turn);
        for (int j = 0; j < EV_JOINT_COUNT; ++j) {
            /* Turned by `turn` about +Y (right-handed: +Z towards +X), then moved. */
            const double *r = rel[j];
            out->position_m[f][j][0] = c * r[0] + s * r[2] + (double)head->position_m[0];
            out->position_m[f][j][1] = r[1] + (double)head->position_m[1];
            out->position_m[f][j][2] = -s * r[0] + c * r[2] + (double)head->position_m[2];
        }
    }
}

/* ---- Timing ---- */

enum em_result
ev_timing_add(struct ev_timing *timing, double us)
{
    if (timing->count == timing->capacity) {
        const long capacity = timing->capacity > 0 ? timing->capacity * 2 : 4096;
        double *grown = realloc(timing->us, (size_t)capacity * sizeof *grown);
        if (!grown)
            return EM_ERROR_OUT_OF_MEMORY;
        timing->us = grown;
        timing->capacity = capacity;
    }
    timing->us[timing->count++] = us;
    return EM_OK;
}

void
ev_timing_fini(struct ev_timing *timing)
{
    free(timing->us);
    memset(timing, 0, sizeof *timing);
}

static int
compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A sorted copy of samples [first, first + count), or NULL (bad range, no memory). */
static double *
sorted_samples(const struct ev_timing *timing, long first, long count)
{
    if (count <= 0 || first < 0 || first + count > timing->count)
        return NULL;
    double *sorted = malloc((size_t)count * sizeof *sorted);
    if (!sorted)
        return NULL;
    memcpy(sorted, timing->us + first, (size_t)count * sizeof *sorted);
    qsort(sorted, (size_t)count, sizeof *sorted, compare_doubles);
    return sorted;
}

double
ev_median_sorting(double *values, long count)
{
    if (count <= 0)
        return (double)NAN;
    qsort(values, (size_t)count, sizeof *values, compare_doubles);
    return count % 2 ? values[count / 2] : 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

double
ev_timing_median_us(const struct ev_timing *timing, long first, long count)
{
    double *sorted = sorted_samples(timing, first, count);
    if (!sorted)
        return (double)NAN;
    const double median = ev_median_sorting(sorted, count);
    free(sorted);
    return median;
}

double
ev_timing_percentile_us(const struct ev_timing *timing, long first, long count,
                        double fraction)
{
    double *sorted = sorted_samples(timing, first, count);
    if (!sorted || !(fraction > 0.0 && fraction <= 1.0)) {
        free(sorted);
        return (double)NAN;
    }
    /* Nearest rank: the smallest sample with at least `fraction` of them at or below. */
    long rank = (long)ceil(fraction * (double)count);
    rank = rank < 1 ? 1 : rank > count ? count : rank;
    const double value = sorted[rank - 1];
    free(sorted);
    return value;
}

double
ev_timing_mean_us(const struct ev_timing *timing, long first, long count)
{
    if (count <= 0 || first < 0 || first + count > timing->count)
        return (double)NAN;
    double sum = 0.0;
    for (long i = first; i < first + count; ++i)
        sum += timing->us[i];
    return sum / (double)count;
}
