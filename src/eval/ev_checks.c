/*
 * What the evaluation checks beyond accuracy (include/embody/eval.h): that a nearby input
 * gives a nearby pose (sensitivity), that tracked effectors are met, that limb joints
 * twist within their limits, and the turn-in-place stream that winds legs up when
 * rotations accumulate.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embody/body.h"
#include "embody/eval.h"
#include "embody/m_math.h"

/* ---- Limb joints ---- */

enum sk_bone
ev_limb_bone(enum ev_limb limb)
{
    static const enum sk_bone bones[EV_LIMB_COUNT] = {
        SK_LEFT_UPPER_ARM,  SK_LEFT_LOWER_ARM,  SK_LEFT_HAND,
        SK_RIGHT_UPPER_ARM, SK_RIGHT_LOWER_ARM, SK_RIGHT_HAND,
        SK_LEFT_UPPER_LEG,  SK_LEFT_LOWER_LEG,  SK_LEFT_FOOT,
        SK_RIGHT_UPPER_LEG, SK_RIGHT_LOWER_LEG, SK_RIGHT_FOOT,
    };
    return limb >= 0 && limb < EV_LIMB_COUNT ? bones[limb] : SK_BONE_NONE;
}

void
ev_checks_init(struct ev_checks *c)
{
    c->sensitivity_p99_mm = c->sensitivity_max_mm = (double)NAN;
    c->effector_miss_share = 0.0;
    c->effector_worst_miss_m = 0.0;
    c->out_of_reach_share = 0.0;
    for (int l = 0; l < EV_LIMB_COUNT; ++l) {
        c->twist_min_deg[l] = (double)INFINITY;
        c->twist_max_deg[l] = -(double)INFINITY;
        c->limit_min_deg[l] = c->limit_max_deg[l] = (double)NAN;
    }
    c->twist_excess_deg = 0.0;
    c->twist_excess_limb = -1;
    ev_body_checks_init(&c->body);
}

/* The twist of joint j's local rotation about its bone (toward its primary child), rad. */
static float
joint_twist_rad(const struct sk_skeleton *sk, const struct sk_pose *pose, int j)
{
    const int child = sk->primary_child[j];
    if (child < 0)
        return 0.0f;
    float axis[3];
    const float fallback[3] = {0, 1, 0};
    m_vec3_normalize_or(sk->offset_m[child], fallback, axis);
    return m_quat_swing_twist(pose->local_rotation[j], axis, NULL, NULL);
}

static void
limb_limit_deg(const struct sk_limit *limit, double *out_min, double *out_max)
{
    switch (limit->kind) {
    case SK_LIMIT_HINGE: *out_min = *out_max = 0.0; return; /* a hinge does not twist */
    case SK_LIMIT_BALL:
        *out_min = (double)(limit->min_rad * M_RAD_TO_DEG);
        *out_max = (double)(limit->max_rad * M_RAD_TO_DEG);
        return;
    case SK_LIMIT_NONE: break;
    }
    *out_min = *out_max = (double)NAN;
}

static bool
is_lower_arm(enum ev_limb limb)
{
    return limb == EV_LIMB_LEFT_LOWER_ARM || limb == EV_LIMB_RIGHT_LOWER_ARM;
}

/* The forearm is a hinge at the elbow that also turns along its length (pronation): the
 * body gives it half of the hand's twist (body.h), so its twist range is half the hand's. */
#define FOREARM_TWIST_SHARE 0.5

static void
add_twists(struct ev_checks *c, const struct sk_skeleton *sk, const struct sk_pose *pose)
{
    for (int l = 0; l < EV_LIMB_COUNT; ++l) {
        const int j = sk->bone_joint[ev_limb_bone((enum ev_limb)l)];
        if (j < 0)
            continue;
        const double twist = (double)(joint_twist_rad(sk, pose, j) * M_RAD_TO_DEG);
        c->twist_min_deg[l] = fmin(c->twist_min_deg[l], twist);
        c->twist_max_deg[l] = fmax(c->twist_max_deg[l], twist);
        limb_limit_deg(&sk->limit[j], &c->limit_min_deg[l], &c->limit_max_deg[l]);
        const int hand = sk->primary_child[j];
        if (is_lower_arm((enum ev_limb)l) && hand >= 0 && sk->limit[hand].kind == SK_LIMIT_BALL) {
            double lo, hi;
            limb_limit_deg(&sk->limit[hand], &lo, &hi);
            c->limit_min_deg[l] = FOREARM_TWIST_SHARE * lo;
            c->limit_max_deg[l] = FOREARM_TWIST_SHARE * hi;
        }
    }
}

void
ev_checks_add_frame(struct ev_checks *c, const struct body *body)
{
    add_twists(c, body_skeleton(body), body_pose(body));
    struct body_status st;
    body_get_status(body, &st);
    /* Effectors 0..2 are the head and the hands (body_get_status). A target farther
     * from the hips than the whole chain up to them, stretched straight, is out of any
     * pose's reach: such frames are counted apart. */
    const struct sk_skeleton *sk = body_skeleton(body);
    const struct sk_pose *pose = body_pose(body);
    static const enum sk_bone bones[3] = {SK_HEAD, SK_LEFT_HAND, SK_RIGHT_HAND};
    double worst = 0.0;
    bool out_of_reach = false;
    for (int e = 0; e < 3 && e < st.effector_count; ++e) {
        if (st.device[e] != BODY_DEVICE_TRACKED)
            continue;
        const int joint = sk->bone_joint[bones[e]];
        float chain = 0.0f;
        int j = joint;
        for (; j > 0 && sk->bone[j] != SK_HIPS; j = sk->parent[j])
            chain += sk->length_m[j];
        const float reach = chain + (float)EV_EFFECTOR_MISS_M;
        if (m_vec3_distance(st.target_m[e], pose->position_m[j]) > reach) {
            out_of_reach = true;
            continue;
        }
        worst = fmax(worst, (double)m_vec3_distance(st.target_m[e], st.reached_m[e]));
    }
    if (out_of_reach)
        c->out_of_reach_share += 1.0; /* a count until ev_checks_finish */
    if (worst > EV_EFFECTOR_MISS_M)
        c->effector_miss_share += 1.0;
    c->effector_worst_miss_m = fmax(c->effector_worst_miss_m, worst);
}

void
ev_checks_finish(struct ev_checks *c, int frame_count)
{
    c->effector_miss_share = frame_count > 0 ? c->effector_miss_share / frame_count : 0.0;
    c->out_of_reach_share = frame_count > 0 ? c->out_of_reach_share / frame_count : 0.0;
    c->twist_excess_deg = 0.0;
    c->twist_excess_limb = -1;
    for (int l = 0; l < EV_LIMB_COUNT; ++l) {
        if (!isfinite(c->limit_min_deg[l]) || !isfinite(c->twist_min_deg[l]))
            continue;
        const double over = fmax(c->twist_max_deg[l] - c->limit_max_deg[l],
                                 c->limit_min_deg[l] - c->twist_min_deg[l]);
        if (over > c->twist_excess_deg) {
            c->twist_excess_deg = over;
            c->twist_excess_limb = l;
        }
    }
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

static int
compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
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
