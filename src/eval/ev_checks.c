/*
 * What the evaluation checks beyond accuracy in each reconstructed frame (include/embody/
 * eval.h): that tracked effectors are met and that limb joints twist within their limits.
 * The checks that rerun a clip or a made-up stream (sensitivity, turning in place) are in
 * ev_probes.c, above the clip's reconstruction that calls these.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embody/body.h"
#include "eval/eval.h"
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
    c->hand_off_share = 0.0;
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
    bool out_of_reach = false, hand_off = false;
    for (int e = 0; e < 3 && e < st.effector_count; ++e) {
        if (st.device[e] != BODY_DEVICE_TRACKED)
            continue;
        const int joint = sk->bone_joint[bones[e]];
        if (e > 0 && (double)m_vec3_distance(st.target_m[e], st.reached_m[e]) > EV_EFFECTOR_MISS_M)
            hand_off = true;
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
    if (hand_off)
        c->hand_off_share += 1.0;
    if (worst > EV_EFFECTOR_MISS_M)
        c->effector_miss_share += 1.0;
    c->effector_worst_miss_m = fmax(c->effector_worst_miss_m, worst);
}

void
ev_checks_finish(struct ev_checks *c, int frame_count)
{
    c->effector_miss_share = frame_count > 0 ? c->effector_miss_share / frame_count : 0.0;
    c->out_of_reach_share = frame_count > 0 ? c->out_of_reach_share / frame_count : 0.0;
    c->hand_off_share = frame_count > 0 ? c->hand_off_share / frame_count : 0.0;
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
