/*
 * Checks that rerun a clip on a changed stream, or a body on a made-up one (include/embody/
 * eval.h): recovery from one absurd head sample, turning in place from the clip's own
 * standing frame with the clip's own skeleton, the sensitivity to a tiny change of every
 * input, and the default humanoid's turn-in-place stream that winds legs up when rotations
 * accumulate. They sit above the clip's reconstruction (ev_clip.c) and below the run over
 * a folder (ev_run.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embody/body.h"
#include "eval/eval.h"
#include "embody/m_math.h"

/* ---- Bad-sample recovery ---- */

#define ABSURD_M 1e20f

/* The largest distance between a scored joint of `group` in `a` and in `b` at `row`, m. */
static double
worst_joint_distance(const struct ev_motion *a, const struct ev_motion *b, int row,
                     enum ev_group group)
{
    double worst = 0.0;
    for (int j = 0; j < EV_JOINT_COUNT; ++j) {
        if (!ev_joint_in_group((enum ev_joint)j, group))
            continue;
        const double *p = a->position_m[row][j], *q = b->position_m[row][j];
        const double dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
        worst = fmax(worst, sqrt(dx * dx + dy * dy + dz * dz));
    }
    return worst;
}

static enum em_result
recovery_once(const struct ev_clip *clip, enum ev_method method, const struct pr_model *prior,
              const struct ev_motion *ours, int bad_row, int after_rows, double *io_worst_m,
              double *io_worst_lower_m, struct em_error *err)
{
    struct st_stream bad;
    memset(&bad, 0, sizeof bad);
    for (int f = 0; f < clip->stream.frame_count; ++f) {
        struct em_tracking_frame frame = clip->stream.frames[f];
        if (f == bad_row)
            frame.device[EM_DEVICE_HEAD].pose.position_m[0] = ABSURD_M;
        if (st_stream_append(&bad, &frame) != EM_OK) {
            st_stream_fini(&bad);
            return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", clip->path);
        }
    }
    struct ev_motion other;
    const enum em_result r =
        ev_clip_reconstruct_stream(clip, &bad, method, prior, &other, NULL, NULL, err);
    if (r == EM_OK) {
        const int row = bad_row + after_rows;
        *io_worst_m = fmax(*io_worst_m, worst_joint_distance(ours, &other, row, EV_GROUP_ALL));
        *io_worst_lower_m =
            fmax(*io_worst_lower_m, worst_joint_distance(ours, &other, row, EV_GROUP_LOWER));
    }
    ev_motion_fini(&other);
    st_stream_fini(&bad);
    return r;
}

enum em_result
ev_clip_recovery(const struct ev_clip *clip, enum ev_method method, const struct pr_model *prior,
                 const struct ev_motion *ours, struct ev_body_checks *checks,
                 struct em_error *err)
{
    const int rows = ours->frame_count < clip->stream.frame_count ? ours->frame_count
                                                                  : clip->stream.frame_count;
    const int after = (int)lround(EV_RECOVERY_AFTER_S * ours->fps);
    double worst = 0.0, worst_lower = 0.0;
    bool measured = false;
    for (int q = 1; q <= 3; ++q) {
        const int bad_row = rows * q / 4;
        if (bad_row < 1 || bad_row + after >= rows)
            continue;
        const enum em_result r =
            recovery_once(clip, method, prior, ours, bad_row, after, &worst, &worst_lower, err);
        if (r != EM_OK)
            return r;
        measured = true;
    }
    checks->recovery_m = measured ? worst : (double)NAN;
    checks->recovery_lower_m = measured ? worst_lower : (double)NAN;
    return EM_OK;
}

/* ---- Turning in place from a standing frame ---- */

#define UPRIGHT_SHARE 0.95
#define FOOT_DOWN_M 0.05
#define STILL_WINDOW_S 0.5
#define FACING_MAX_DEG 15.0
#define HOLD_BEFORE_S 1.0
#define TURNS 5
#define TURN_DEG 90.0
#define TURN_SPEED_DEG_S 90.0
#define PAUSE_S 0.5
#define HOLD_AFTER_S 3.0

/* Yaw (0 = +Z) of a direction on the floor. */
static double
yaw_of(const float *v)
{
    return atan2((double)v[0], (double)v[2]);
}

static double
wrap_deg(double a)
{
    while (a > 180.0)
        a -= 360.0;
    while (a < -180.0)
        a += 360.0;
    return a;
}

/* The heading of the headset's view (its -Z axis on the floor), degrees. */
static double
view_yaw_deg(const struct em_tracking_frame *frame)
{
    const float forward[3] = {0, 0, -1};
    float view[3];
    m_quat_rotate(frame->device[EM_DEVICE_HEAD].pose.orientation, forward, view);
    return yaw_of(view) * (double)M_RAD_TO_DEG;
}

/* The heading of a person's stance: between the directions of the two feet (heel to
 * toes), degrees. */
static double
stance_yaw_deg(const struct ev_motion *truth, int row)
{
    double sum[2] = {0, 0};
    static const enum ev_joint foot[2] = {EV_LEFT_FOOT, EV_RIGHT_FOOT};
    static const enum ev_joint toes[2] = {EV_LEFT_TOES, EV_RIGHT_TOES};
    for (int side = 0; side < 2; ++side) {
        const double *a = truth->position_m[row][foot[side]], *b = truth->position_m[row][toes[side]];
        const double dx = b[0] - a[0], dz = b[2] - a[2], len = sqrt(dx * dx + dz * dz);
        if (len > 1e-6) {
            sum[0] += dx / len;
            sum[1] += dz / len;
        }
    }
    return atan2(sum[0], sum[1]) * (double)M_RAD_TO_DEG;
}

/* How far the head and hands travel over the STILL_WINDOW_S either side of `row`, m. */
static double
travel_around(const struct st_stream *s, int row, int window)
{
    const int first = row - window > 0 ? row - window : 0;
    const int last = row + window < s->frame_count - 1 ? row + window : s->frame_count - 1;
    double sum = 0.0;
    for (int f = first; f < last; ++f)
        for (int d = 0; d < EM_DEVICE_COUNT; ++d)
            sum += (double)m_vec3_distance(s->frames[f + 1].device[d].pose.position_m,
                                           s->frames[f].device[d].pose.position_m);
    return sum;
}

/* What the person does at `row`, as the standing-row search asks it (ev_clip_standing_row):
 * both ankles down (within FOOT_DOWN_M of the lowest either reaches in the clip), the head
 * up (UPRIGHT_SHARE of its 90th percentile height is a standing person's; the highest rows
 * of a jump clip are jumps), and looking where the feet point (within FACING_MAX_DEG): a
 * player facing forward, so that after turning on the spot the feet should point where
 * the head looks. */
enum stance_need { NEED_ALL = 0, NEED_FEET_AND_FACING, NEED_STANDING, NEED_NOTHING };

static bool
stance_at(const struct ev_clip *clip, int row, double ankle_floor_m, double head_top_m,
          enum stance_need need)
{
    const struct ev_motion *truth = &clip->truth;
    const double *l = truth->position_m[row][EV_LEFT_FOOT], *r = truth->position_m[row][EV_RIGHT_FOOT];
    const double head = truth->position_m[row][EV_HEAD][1];
    const double facing = wrap_deg(view_yaw_deg(&clip->stream.frames[row]) - stance_yaw_deg(truth, row));
    const bool feet = l[1] < ankle_floor_m + FOOT_DOWN_M && r[1] < ankle_floor_m + FOOT_DOWN_M;
    const bool upright = head >= UPRIGHT_SHARE * head_top_m && head <= head_top_m + FOOT_DOWN_M;
    const bool facing_on = fabs(facing) < FACING_MAX_DEG;
    switch (need) {
    case NEED_ALL: return feet && upright && facing_on;
    case NEED_FEET_AND_FACING: return feet && facing_on;
    case NEED_STANDING: return feet && upright;
    case NEED_NOTHING: break;
    }
    return true;
}

static int
compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int
ev_clip_standing_row(const struct ev_clip *clip)
{
    const struct ev_motion *truth = &clip->truth;
    const int rows = truth->frame_count < clip->stream.frame_count ? truth->frame_count
                                                                   : clip->stream.frame_count;
    if (rows <= 0)
        return 0;
    double ankle_floor = HUGE_VAL;
    double *heads = malloc((size_t)rows * sizeof *heads);
    if (!heads)
        return 0;
    for (int f = 0; f < rows; ++f) {
        ankle_floor = fmin(ankle_floor, fmin(truth->position_m[f][EV_LEFT_FOOT][1],
                                             truth->position_m[f][EV_RIGHT_FOOT][1]));
        heads[f] = truth->position_m[f][EV_HEAD][1];
    }
    qsort(heads, (size_t)rows, sizeof *heads, compare_doubles);
    const double head_top = heads[(rows - 1) * 9 / 10];
    free(heads);
    const int window = (int)lround(STILL_WINDOW_S * truth->fps);
    /* The stillest standing row facing forward; without one (a person who never stands
     * up straight), the stillest row with the feet down facing forward; then the stillest
     * standing row; then the stillest row. */
    int best = 0;
    double best_travel = HUGE_VAL;
    for (int need = NEED_ALL; need <= NEED_NOTHING && !isfinite(best_travel); ++need)
        for (int f = window; f + window < rows; ++f) {
            if (!stance_at(clip, f, ankle_floor, head_top, (enum stance_need)need))
                continue;
            const double travel = travel_around(&clip->stream, f, window);
            if (travel < best_travel) {
                best_travel = travel;
                best = f;
            }
        }
    return best;
}

/* The yaw turned so far at time t (seconds since the first turn began), degrees. */
static double
turned_deg(double t)
{
    const double turn_s = TURN_DEG / TURN_SPEED_DEG_S, period = turn_s + PAUSE_S;
    if (t <= 0.0)
        return 0.0;
    const int done = (int)(t / period);
    if (done >= TURNS)
        return TURNS * TURN_DEG;
    const double in_turn = fmin(t - done * period, turn_s);
    return done * TURN_DEG + in_turn * TURN_SPEED_DEG_S;
}

/* A pose turned by `turn` (about +Y) about the vertical through `pivot`. */
static void
turn_pose(struct em_pose *p, const float *pivot, const float *turn)
{
    float from_pivot[3], turned[3], q[4];
    m_vec3_sub(p->position_m, pivot, from_pivot);
    from_pivot[1] = 0.0f;
    m_quat_rotate(turn, from_pivot, turned);
    p->position_m[0] = pivot[0] + turned[0];
    p->position_m[2] = pivot[2] + turned[2];
    m_quat_mul(turn, p->orientation, q);
    m_quat_copy(q, p->orientation);
}

enum em_result
ev_clip_turn_stream(const struct ev_clip *clip, int row, int sign, struct st_stream *out)
{
    memset(out, 0, sizeof *out);
    const struct em_tracking_frame *still = &clip->stream.frames[row];
    const double fps = clip->truth.fps;
    const double turning_s = TURNS * (TURN_DEG / TURN_SPEED_DEG_S + PAUSE_S);
    const int rows = (int)((HOLD_BEFORE_S + turning_s + HOLD_AFTER_S) * fps) + 1;
    const float *pivot = still->device[EM_DEVICE_HEAD].pose.position_m;
    const float up[3] = {0, 1, 0};
    for (int k = 0; k < rows; ++k) {
        struct em_tracking_frame f = *still;
        f.time_s = k / fps;
        const double yaw = sign * turned_deg(f.time_s - HOLD_BEFORE_S) * (double)M_DEG_TO_RAD;
        float turn[4];
        m_quat_from_axis_angle(up, (float)yaw, turn);
        for (int d = 0; d < EM_DEVICE_COUNT; ++d)
            turn_pose(&f.device[d].pose, pivot, turn);
        for (int t = 0; t < EM_TRACKER_COUNT; ++t) /* body trackers turn with the player */
            if (f.tracker_present & EM_TRACKER_BIT(t))
                turn_pose(&f.tracker[t].pose, pivot, turn);
        if (st_stream_append(out, &f) != EM_OK) {
            st_stream_fini(out);
            return EM_ERROR_OUT_OF_MEMORY;
        }
    }
    return EM_OK;
}

/* A foot's direction over the floor (heel to toes) from `heading_deg`, signed degrees; NaN
 * when less than half its length is over the floor (a foot on its toes or its instep points
 * nowhere over it). */
static double
foot_from_deg(const double *heel, const double *toes, double heading_deg)
{
    const double dx = toes[0] - heel[0], dy = toes[1] - heel[1], dz = toes[2] - heel[2];
    const double level = sqrt(dx * dx + dz * dz);
    if (!(level >= 0.5 * sqrt(dx * dx + dy * dy + dz * dz)) || level < 1e-6)
        return (double)NAN;
    return wrap_deg(atan2(dx, dz) * (double)M_RAD_TO_DEG - heading_deg);
}

/* The person's own feet (left, right) at `row` of the clip, as foot_from_deg from that
 * row's view heading. */
static void
person_feet_from_view_deg(const struct ev_clip *clip, int row, double out_deg[2])
{
    static const enum ev_joint foot[2] = {EV_LEFT_FOOT, EV_RIGHT_FOOT};
    static const enum ev_joint toes[2] = {EV_LEFT_TOES, EV_RIGHT_TOES};
    const double heading = view_yaw_deg(&clip->stream.frames[row]);
    for (int side = 0; side < 2; ++side)
        out_deg[side] = foot_from_deg(clip->truth.position_m[row][foot[side]],
                                      clip->truth.position_m[row][toes[side]], heading);
}

/* The largest angle of a foot (heel to toes, on the floor) from the heading of the
 * headset's view (its -Z axis on the floor), degrees. */
static double
feet_from_heading_deg(const struct body *body, const struct em_tracking_frame *last)
{
    const double heading = view_yaw_deg(last);
    const struct sk_skeleton *sk = body_skeleton(body);
    const struct sk_pose *pose = body_pose(body);
    double worst = 0.0;
    for (int side = 0; side < 2; ++side) {
        const int foot = sk->bone_joint[side == 0 ? SK_LEFT_FOOT : SK_RIGHT_FOOT];
        const int toes = sk->bone_joint[side == 0 ? SK_LEFT_TOES : SK_RIGHT_TOES];
        const int tip = toes >= 0 ? toes : sk->primary_child[foot];
        if (foot < 0 || tip < 0)
            continue;
        float d[3];
        m_vec3_sub(pose->position_m[tip], pose->position_m[foot], d);
        worst = fmax(worst, fabs(wrap_deg(yaw_of(d) * (double)M_RAD_TO_DEG - heading)));
    }
    return worst;
}

/* A fresh body of `method` (with `prior`) for `clip`, given `stream` (which it takes:
 * freed here on failure). */
static enum em_result
probe_body(const struct ev_clip *clip, enum ev_method method, const struct pr_model *prior,
           struct st_stream *stream, struct body **out_body, struct em_error *err)
{
    *out_body = NULL;
    const enum em_result r = ev_clip_make_body(clip, method, prior, out_body, err);
    if (r != EM_OK)
        st_stream_fini(stream);
    return r;
}

static bool
on_the_floor(const struct body *body)
{
    struct body_status status;
    body_get_status(body, &status);
    return status.posture == BODY_SITTING_ON_FLOOR || status.posture == BODY_LYING_ON_BACK ||
           status.posture == BODY_LYING_ON_SIDE || status.posture == BODY_LYING_ON_FRONT;
}

/* Both turn streams from `row` through fresh bodies: the worst foot's angle, degrees; NaN
 * when the body ends sitting or lying on the floor (a held crouch low enough to be taken
 * for sitting down: crossed feet point across by design, and nobody turns on the spot
 * there). */
static enum em_result
turn_from_row(const struct ev_clip *clip, int row, enum ev_method method,
              const struct pr_model *prior, double *out_deg, struct em_error *err)
{
    *out_deg = 0.0;
    for (int sign = 1; sign >= -1; sign -= 2) {
        struct st_stream stream;
        if (ev_clip_turn_stream(clip, row, sign, &stream) != EM_OK)
            return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", clip->path);
        struct body *body;
        const enum em_result r = probe_body(clip, method, prior, &stream, &body, err);
        if (r != EM_OK)
            return r;
        for (int k = 0; k < stream.frame_count; ++k)
            body_update(body, &stream.frames[k]);
        const double deg = feet_from_heading_deg(body, &stream.frames[stream.frame_count - 1]);
        *out_deg = on_the_floor(body) ? (double)NAN : fmax(*out_deg, deg);
        body_destroy(&body);
        st_stream_fini(&stream);
        if (isnan(*out_deg))
            break;
    }
    return EM_OK;
}

enum em_result
ev_clip_turn_in_place(const struct ev_clip *clip, enum ev_method method,
                      const struct pr_model *prior, struct ev_body_checks *checks,
                      struct em_error *err)
{
    const int rows[] = {ev_clip_standing_row(clip), 0, clip->stream.frame_count / 2};
    checks->turn_feet_deg = -1.0;
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; ++k) {
        if ((k >= 1 && rows[k] == rows[0]) || (k == 2 && rows[2] == rows[1]))
            continue; /* the same row again (a short clip, or standing at its start) */
        double deg;
        const enum em_result r = turn_from_row(clip, rows[k], method, prior, &deg, err);
        if (r != EM_OK)
            return r;
        if (!isnan(deg) && deg > checks->turn_feet_deg) {
            checks->turn_feet_deg = deg;
            checks->turn_row = rows[k];
            double person[2];
            person_feet_from_view_deg(clip, rows[k], person);
            checks->turn_person_deg = fmax(fabs(person[0]), fabs(person[1]));
        }
    }
    if (checks->turn_feet_deg < 0.0)
        checks->turn_feet_deg = (double)NAN; /* every start row ended on the floor */
    return EM_OK;
}

/* ---- A hand raised above a still head ---- */

#define HAND_UP_BEFORE_S 1.0
#define HAND_UP_RAISE_S 1.0
#define HAND_UP_HOLD_S 2.0
#define HAND_UP_ABOVE_M 0.25f
#define HAND_UP_AHEAD_M 0.10f

enum em_result
ev_clip_hand_up_stream(const struct ev_clip *clip, int row, struct st_stream *out)
{
    memset(out, 0, sizeof *out);
    const struct em_tracking_frame *still = &clip->stream.frames[row];
    const double fps = clip->truth.fps;
    const int rows = (int)((HAND_UP_BEFORE_S + HAND_UP_RAISE_S + HAND_UP_HOLD_S) * fps) + 1;
    const float *head = still->device[EM_DEVICE_HEAD].pose.position_m;
    const float forward[3] = {0, 0, -1};
    float view[3], up_m[3];
    m_quat_rotate(still->device[EM_DEVICE_HEAD].pose.orientation, forward, view);
    view[1] = 0.0f;
    m_vec3_normalize_or(view, forward, view);
    m_vec3_muladd(head, view, HAND_UP_AHEAD_M, up_m);
    up_m[1] += HAND_UP_ABOVE_M;
    const float *from = still->device[EM_DEVICE_RIGHT_HAND].pose.position_m;
    for (int k = 0; k < rows; ++k) {
        struct em_tracking_frame f = *still;
        f.time_s = k / fps;
        const double t = fmin(fmax((f.time_s - HAND_UP_BEFORE_S) / HAND_UP_RAISE_S, 0.0), 1.0);
        const float ease = (float)(t * t * (3.0 - 2.0 * t));
        m_vec3_lerp(from, up_m, ease, f.device[EM_DEVICE_RIGHT_HAND].pose.position_m);
        if (st_stream_append(out, &f) != EM_OK) {
            st_stream_fini(out);
            return EM_ERROR_OUT_OF_MEMORY;
        }
    }
    return EM_OK;
}

/* The yaw of the line through the two hip joints as posed, degrees. */
static double
hip_line_yaw_deg(const struct body *body)
{
    const struct sk_skeleton *sk = body_skeleton(body);
    const int l = sk->bone_joint[SK_LEFT_UPPER_LEG], r = sk->bone_joint[SK_RIGHT_UPPER_LEG];
    float d[3];
    m_vec3_sub(body_pose(body)->position_m[l], body_pose(body)->position_m[r], d);
    return yaw_of(d) * (double)M_RAD_TO_DEG;
}

enum em_result
ev_clip_hand_up(const struct ev_clip *clip, enum ev_method method, const struct pr_model *prior,
                struct ev_body_checks *checks, struct em_error *err)
{
    struct st_stream stream;
    if (ev_clip_hand_up_stream(clip, ev_clip_standing_row(clip), &stream) != EM_OK)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", clip->path);
    struct body *body;
    const enum em_result r = probe_body(clip, method, prior, &stream, &body, err);
    if (r != EM_OK)
        return r;
    const double raise_at = stream.frames[0].time_s + HAND_UP_BEFORE_S;
    double before = 0.0, worst = 0.0;
    for (int k = 0; k < stream.frame_count; ++k) {
        body_update(body, &stream.frames[k]);
        if (stream.frames[k].time_s < raise_at)
            before = hip_line_yaw_deg(body);
        else
            worst = fmax(worst, fabs(wrap_deg(hip_line_yaw_deg(body) - before)));
    }
    checks->hand_up_hips_deg = worst;
    body_destroy(&body);
    st_stream_fini(&stream);
    return EM_OK;
}

/* ---- Sensitivity ---- */

/* A small deterministic generator (xorshift64*), uniform in [-1, 1]. */
static double
noise(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    const uint64_t r = x * 0x2545F4914F6CDD1DULL;
    return (double)(r >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

static enum em_result
perturbed_copy(const struct st_stream *in, struct st_stream *out)
{
    memset(out, 0, sizeof *out);
    uint64_t state = 0x9E3779B97F4A7C15ULL;
    for (int f = 0; f < in->frame_count; ++f) {
        struct em_tracking_frame frame = in->frames[f];
        for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
            struct em_pose *p = &frame.device[d].pose;
            for (int k = 0; k < 3; ++k)
                p->position_m[k] += (float)(EV_SENSITIVITY_NOISE * noise(&state));
            for (int k = 0; k < 4; ++k)
                p->orientation[k] += (float)(EV_SENSITIVITY_NOISE * noise(&state));
            m_quat_normalize(p->orientation);
        }
        if (st_stream_append(out, &frame) != EM_OK) {
            st_stream_fini(out);
            return EM_ERROR_OUT_OF_MEMORY;
        }
    }
    return EM_OK;
}

enum em_result
ev_clip_sensitivity(const struct ev_clip *clip, enum ev_method method,
                    const struct pr_model *prior, const struct ev_motion *ours,
                    struct ev_checks *checks, struct em_error *err)
{
    struct st_stream noisy;
    if (perturbed_copy(&clip->stream, &noisy) != EM_OK)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", clip->path);
    struct ev_motion other;
    enum em_result r =
        ev_clip_reconstruct_stream(clip, &noisy, method, prior, &other, NULL, NULL, err);
    const size_t n = (size_t)ours->frame_count * EV_JOINT_COUNT;
    double *moved = r == EM_OK ? malloc(n * sizeof *moved) : NULL;
    if (r == EM_OK && !moved)
        r = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", clip->path);
    if (r == EM_OK) {
        for (int f = 0; f < ours->frame_count; ++f)
            for (int j = 0; j < EV_JOINT_COUNT; ++j) {
                const double *a = ours->position_m[f][j], *b = other.position_m[f][j];
                const double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
                moved[(size_t)f * EV_JOINT_COUNT + (size_t)j] = sqrt(dx * dx + dy * dy + dz * dz);
            }
        qsort(moved, n, sizeof *moved, compare_doubles);
        const size_t p99 = n > 0 ? (size_t)ceil(0.99 * (double)n) - 1 : 0;
        checks->sensitivity_p99_mm = n > 0 ? 1e3 * moved[p99] : (double)NAN;
        checks->sensitivity_max_mm = n > 0 ? 1e3 * moved[n - 1] : (double)NAN;
    }
    free(moved);
    ev_motion_fini(&other);
    st_stream_fini(&noisy);
    return r;
}

/* ---- Turning in place ---- */

#define TURN_S 4.0
#define STILL_S 3.0
#define PI 3.14159265358979323846

/* A device pose facing `yaw` (0 = +Z): `local` is its rotation when facing +Z. */
static void
set_device(struct em_device_pose *d, const float *position_m, const float *local, float yaw)
{
    const float up[3] = {0, 1, 0};
    float turn[4];
    m_quat_from_axis_angle(up, yaw, turn);
    m_quat_mul(turn, local, d->pose.orientation);
    m_vec3_copy(position_m, d->pose.position_m);
    d->flags = EM_POSE_ALL_VALID;
}

/* Head yaw at time t: `turns` turns to the left (counter-clockwise seen from above), as
 * many back to the right, then still; eased in and out of each leg so it starts and ends
 * at rest. */
static double
turn_yaw(double t, int turns)
{
    const double leg = TURN_S * turns;
    const double full = 2.0 * PI * turns;
    if (t < leg) {
        const double u = t / leg;
        return full * (u - sin(2.0 * PI * u) / (2.0 * PI));
    }
    if (t < 2.0 * leg) {
        const double u = (t - leg) / leg;
        return full * (1.0 - (u - sin(2.0 * PI * u) / (2.0 * PI)));
    }
    return 0.0;
}

enum em_result
ev_turn_in_place_stream(float height_m, int turns, double fps, struct st_stream *out)
{
    memset(out, 0, sizeof *out);
    const double total_s = 2.0 * TURN_S * turns + STILL_S;
    const int rows = (int)(total_s * fps) + 1;
    const float eye = body_eye_height_for(height_m);
    /* View: -Z forward (a half turn about +Y). Grips, both hands, palms facing each other
     * with the fists forward: +X to the body's right, +Y up, +Z back (PROTOCOL section 1),
     * which in a body facing +Z (left at +X) is also a half turn about +Y. */
    const float half_turn[4] = {0, 1, 0, 0};
    for (int k = 0; k < rows; ++k) {
        const double t = k / fps;
        const float yaw = (float)turn_yaw(t, turns);
        struct em_tracking_frame f;
        memset(&f, 0, sizeof f);
        f.time_s = t;
        /* The head turns about a point a little behind the eyes (the neck). */
        const float s = sinf(yaw), c = cosf(yaw);
        const float head[3] = {0.08f * s, eye, 0.08f * c};
        set_device(&f.device[EM_DEVICE_HEAD], head, half_turn, yaw);
        for (int side = 0; side < 2; ++side) {
            const float lx = side == 0 ? 0.18f : -0.18f, lz = 0.30f;
            const float hand[3] = {c * lx + s * lz, 0.56f * height_m, -s * lx + c * lz};
            set_device(&f.device[EM_DEVICE_LEFT_HAND + side], hand, half_turn, yaw);
        }
        if (st_stream_append(out, &f) != EM_OK) {
            st_stream_fini(out);
            return EM_ERROR_OUT_OF_MEMORY;
        }
    }
    return EM_OK;
}

/* Where a foot points on the floor (heel to toes), as a yaw; 0 = +Z. */
static float
foot_yaw(const struct body *body, int side)
{
    const struct sk_skeleton *sk = body_skeleton(body);
    const struct sk_pose *pose = body_pose(body);
    const int foot = sk->bone_joint[side == 0 ? SK_LEFT_FOOT : SK_RIGHT_FOOT];
    const int toes = sk->bone_joint[side == 0 ? SK_LEFT_TOES : SK_RIGHT_TOES];
    const int tip = toes >= 0 ? toes : sk->primary_child[foot];
    const float *a = pose->position_m[foot], *b = pose->position_m[tip];
    return atan2f(b[0] - a[0], b[2] - a[2]);
}

void
ev_turn_in_place_check(struct ev_turn_result *out)
{
    memset(out, 0, sizeof *out);
    out->turns = 10;
    ev_checks_init(&out->checks);
    struct st_stream stream;
    if (ev_turn_in_place_stream(1.75f, out->turns, 60.0, &stream) != EM_OK) {
        snprintf(out->error, sizeof out->error, "turn in place: out of memory");
        return;
    }
    struct body_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.height_m = 1.75f;
    struct body *body = NULL;
    struct em_error err = {{0}};
    if (body_create(&desc, &body, &err) != EM_OK) {
        snprintf(out->error, sizeof out->error, "turn in place: %.480s", err.message);
        st_stream_fini(&stream);
        return;
    }
    for (int k = 0; k < stream.frame_count; ++k) {
        body_update(body, &stream.frames[k]);
        ev_checks_add_frame(&out->checks, body);
    }
    ev_checks_finish(&out->checks, stream.frame_count);
    /* The stream ends facing +Z (yaw 0), as it started. */
    for (int side = 0; side < 2; ++side)
        out->foot_heading_error_deg[side] =
            fabs((double)(m_angle_wrap(foot_yaw(body, side)) * M_RAD_TO_DEG));
    out->ok = true;
    body_destroy(&body);
    st_stream_fini(&stream);
}
