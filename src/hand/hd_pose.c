/*
 * Finger poses (include/embody/hand.h): from curls, within limits, out of the palm and of
 * each other, and blended.
 *
 * Keeping fingers apart works on the model's geometry rather than on a table of forbidden
 * angle pairs: each finger moves in the plane its abduction gives it (flexion turns about
 * an axis in the palm's plane), so two neighbours can only meet when their planes cross,
 * which ordering the planes' headings prevents; the thumb and a finger folding into the
 * palm are checked as capsules (the joints' radii) and opened, by bisection on their
 * flexion, until they are clear.
 */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "embody/m_math.h"
#include "hand/hd_internal.h"

/* The relaxed hand: the little finger most curled, as a hand hanging at rest is. */
static const float relaxed_curl[HD_FINGER_COUNT] = {0.20f, 0.15f, 0.20f, 0.25f, 0.30f};
#define RELAXED_SPLAY 0.25f

/* Bisection steps when opening a finger out of a contact: the flexion is found to 1/256
 * of itself (well under a degree). */
#define OPEN_STEPS 8

void
hd_curls_relaxed(struct hd_curls *out_curls)
{
    for (int f = 0; f < HD_FINGER_COUNT; ++f)
        out_curls->curl[f] = relaxed_curl[f];
    out_curls->splay = RELAXED_SPLAY;
}

void
hd_pose_relaxed(const struct hd_model *model, struct hd_pose *out_pose)
{
    struct hd_curls c;
    hd_curls_relaxed(&c);
    hd_pose_from_curls(model, &c, out_pose);
}

static float
unit_or(float v, float fallback)
{
    return isfinite(v) ? m_clampf(v, 0.0f, 1.0f) : fallback;
}

/* The pose of the curls, before any constraint. */
static void
pose_of_curls(const struct hd_model *model, const float *curl, float splay, struct hd_pose *out)
{
    for (int f = 0; f < HD_FINGER_COUNT; ++f) {
        const float c = curl[f];
        for (int j = 0; j < HD_FINGER_JOINTS; ++j)
            out->flex_rad[f][j] = c * model->fist_rad[f][j];
        out->abduct_rad[f] =
            (1.0f - c) * splay * model->spread_rad[f] + c * model->fist_abduct_rad[f];
    }
}

void
hd_pose_from_curls(const struct hd_model *model, const struct hd_curls *curls,
                   struct hd_pose *out_pose)
{
    float curl[HD_FINGER_COUNT];
    for (int f = 0; f < HD_FINGER_COUNT; ++f)
        curl[f] = unit_or(curls->curl[f], relaxed_curl[f]);
    pose_of_curls(model, curl, unit_or(curls->splay, RELAXED_SPLAY), out_pose);
    hd_pose_constrain(model, out_pose);
}

void
hd_curls_from_pose(const struct hd_model *model, const struct hd_pose *pose,
                   struct hd_curls *out_curls)
{
    float splay_sum = 0.0f;
    int splay_n = 0;
    for (int f = 0; f < HD_FINGER_COUNT; ++f) {
        float share = 0.0f;
        for (int j = 0; j < HD_FINGER_JOINTS; ++j)
            share += pose->flex_rad[f][j] / model->fist_rad[f][j];
        const float c = m_clampf(share / HD_FINGER_JOINTS, 0.0f, 1.0f);
        out_curls->curl[f] = c;
        /* Invert the abduction's formula where the finger is open enough to say. */
        const float open = (1.0f - c) * model->spread_rad[f];
        if (open > 1e-3f) {
            splay_sum += (pose->abduct_rad[f] - c * model->fist_abduct_rad[f]) / open;
            ++splay_n;
        }
    }
    out_curls->splay = splay_n ? m_clampf(splay_sum / (float)splay_n, 0.0f, 1.0f) : RELAXED_SPLAY;
}

void
hd_pose_blend(const struct hd_pose *from, const struct hd_pose *to, float weight,
              struct hd_pose *out_pose)
{
    /* (1 - w) a + w b: exactly `from` at 0 and `to` at 1. */
    const float w = isfinite(weight) ? m_clampf(weight, 0.0f, 1.0f) : 1.0f;
    const float v = 1.0f - w;
    for (int f = 0; f < HD_FINGER_COUNT; ++f) {
        for (int j = 0; j < HD_FINGER_JOINTS; ++j)
            out_pose->flex_rad[f][j] = v * from->flex_rad[f][j] + w * to->flex_rad[f][j];
        out_pose->abduct_rad[f] = v * from->abduct_rad[f] + w * to->abduct_rad[f];
    }
}

/* ---- Clearance ----------------------------------------------------------------------- */

/* Distance between segments [p0, p1] and [q0, q1] (clamped closest points). */
static float
segment_distance(const float *p0, const float *p1, const float *q0, const float *q1)
{
    float d1[3], d2[3], r[3];
    m_vec3_sub(p1, p0, d1);
    m_vec3_sub(q1, q0, d2);
    m_vec3_sub(p0, q0, r);
    const float a = m_vec3_dot(d1, d1), e = m_vec3_dot(d2, d2), f = m_vec3_dot(d2, r);
    float s = 0.0f, t = 0.0f;
    if (a <= M_TINY && e <= M_TINY) {
        s = t = 0.0f;
    } else if (a <= M_TINY) {
        t = m_clampf(f / e, 0.0f, 1.0f);
    } else {
        const float c = m_vec3_dot(d1, r);
        if (e <= M_TINY) {
            s = m_clampf(-c / a, 0.0f, 1.0f);
        } else {
            const float b = m_vec3_dot(d1, d2), denom = a * e - b * b;
            s = denom > M_TINY * a * e ? m_clampf((b * f - c * e) / denom, 0.0f, 1.0f) : 0.0f;
            t = (b * s + f) / e;
            if (t < 0.0f) {
                t = 0.0f;
                s = m_clampf(-c / a, 0.0f, 1.0f);
            } else if (t > 1.0f) {
                t = 1.0f;
                s = m_clampf((b - c) / a, 0.0f, 1.0f);
            }
        }
    }
    float cp[3], cq[3], d[3];
    m_vec3_muladd(p0, d1, s, cp);
    m_vec3_muladd(q0, d2, t, cq);
    m_vec3_sub(cp, cq, d);
    return m_vec3_length(d);
}

/* Smallest clearance between the bones of fingers a and b (capsules, each bone the mean
 * radius of its ends). */
static float
fingers_clearance(const struct hd_model *model, const float (*pa)[3], int a, const float (*pb)[3],
                  int b)
{
    float worst = INFINITY;
    for (int i = 0; i < HD_FINGER_JOINTS; ++i)
        for (int k = 0; k < HD_FINGER_JOINTS; ++k) {
            const float ra = 0.5f * (model->radius_m[a][i] + model->radius_m[a][i + 1]);
            const float rb = 0.5f * (model->radius_m[b][k] + model->radius_m[b][k + 1]);
            const float d = segment_distance(pa[i], pa[i + 1], pb[k], pb[k + 1]) - ra - rb;
            worst = fminf(worst, d);
        }
    return worst;
}

/* The palm: a slab of palm_half_thickness_m either side of y = 0, from the wrist to the
 * knuckles' mean depth, between the index's and the little finger's knuckles. */
static float
palm_clearance_of_point(const struct hd_model *model, const float *p, float radius)
{
    const float x0 = fminf(model->base_m[HD_INDEX][0], model->base_m[HD_LITTLE][0]);
    const float x1 = fmaxf(model->base_m[HD_INDEX][0], model->base_m[HD_LITTLE][0]);
    float z0 = 0.0f;
    for (int f = HD_INDEX; f <= HD_LITTLE; ++f)
        z0 += 0.25f * model->base_m[f][2];
    const float h = model->palm_half_thickness_m;
    const float lo[3] = {x0, -h, z0}, hi[3] = {x1, h, 0.0f};
    float outside = 0.0f;
    float inside = INFINITY;
    for (int i = 0; i < 3; ++i) {
        const float below = lo[i] - p[i], above = p[i] - hi[i];
        const float out = fmaxf(fmaxf(below, above), 0.0f);
        outside += out * out;
        inside = fminf(inside, fminf(p[i] - lo[i], hi[i] - p[i]));
    }
    const float distance = outside > 0.0f ? sqrtf(outside) : -inside;
    return distance - radius;
}

/* A finger's outer joints and tip against the palm (its first joint is on the palm's
 * edge, and the thumb's base inside it, by construction). */
static float
finger_palm_clearance(const struct hd_model *model, const float (*p)[3], int f)
{
    float worst = INFINITY;
    for (int k = 1; k <= HD_FINGER_JOINTS; ++k)
        worst = fminf(worst, palm_clearance_of_point(model, p[k], model->radius_m[f][k]));
    return worst;
}

typedef float point_set[HD_FINGER_COUNT][HD_FINGER_JOINTS + 1][3];

static float
thumb_clearance(const struct hd_model *model, const point_set pts)
{
    float worst = finger_palm_clearance(model, (const float(*)[3])pts[HD_THUMB], HD_THUMB);
    for (int f = HD_INDEX; f <= HD_MIDDLE; ++f)
        worst = fminf(worst, fingers_clearance(model, (const float(*)[3])pts[HD_THUMB], HD_THUMB,
                                               (const float(*)[3])pts[f], f));
    return worst;
}

float
hd_pose_clearance(const struct hd_model *model, const struct hd_pose *pose)
{
    point_set pts;
    hd_pose_positions(model, pose, (float(*)[3])pts);
    float worst = thumb_clearance(model, pts);
    for (int f = HD_INDEX; f <= HD_LITTLE; ++f) {
        worst = fminf(worst, finger_palm_clearance(model, (const float(*)[3])pts[f], f));
        if (f < HD_LITTLE)
            worst = fminf(worst, fingers_clearance(model, (const float(*)[3])pts[f], f,
                                                   (const float(*)[3])pts[f + 1], f + 1));
    }
    return worst;
}

/* ---- Constraints --------------------------------------------------------------------- */

static void
clamp_to_limits(const struct hd_model *model, struct hd_pose *pose)
{
    struct hd_pose relaxed;
    bool have_relaxed = false;
    for (int f = 0; f < HD_FINGER_COUNT; ++f) {
        for (int j = 0; j <= HD_FINGER_JOINTS; ++j) {
            float *v = j < HD_FINGER_JOINTS ? &pose->flex_rad[f][j] : &pose->abduct_rad[f];
            if (!isfinite(*v)) {
                if (!have_relaxed) {
                    struct hd_curls c;
                    hd_curls_relaxed(&c);
                    pose_of_curls(model, c.curl, c.splay, &relaxed);
                    have_relaxed = true;
                }
                *v = j < HD_FINGER_JOINTS ? relaxed.flex_rad[f][j] : relaxed.abduct_rad[f];
            }
            *v = j < HD_FINGER_JOINTS
                     ? m_clampf(*v, model->flex_min_rad[f][j], model->flex_max_rad[f][j])
                     : m_clampf(*v, model->abduct_min_rad[f], model->abduct_max_rad[f]);
        }
    }
}

/* The heading of a finger's plane in the palm, towards the thumb positive. */
static float
heading(const struct hd_model *model, const struct hd_pose *pose, int f)
{
    const float sign = hd_thumb_side_sign(model->hand);
    const float *d = model->direction[f];
    const float rest = atan2f(sign * d[0], -d[2]);
    const float towards_thumb = f <= HD_MIDDLE ? 1.0f : -1.0f;
    return rest + towards_thumb * pose->abduct_rad[f];
}

/* Neighbours never cross: from the middle finger outwards, a finger turned past its
 * neighbour towards the middle is turned back to parallel. */
static void
order_headings(const struct hd_model *model, struct hd_pose *pose)
{
    static const int outward[3][2] = {
        {HD_INDEX, HD_MIDDLE}, {HD_RING, HD_MIDDLE}, {HD_LITTLE, HD_RING}};
    for (int i = 0; i < 3; ++i) {
        const int f = outward[i][0], inner = outward[i][1];
        const float towards_thumb = f <= HD_MIDDLE ? 1.0f : -1.0f;
        const float excess =
            towards_thumb * (heading(model, pose, inner) - heading(model, pose, f));
        if (excess > 0.0f)
            pose->abduct_rad[f] = m_clampf(pose->abduct_rad[f] + excess, model->abduct_min_rad[f],
                                           model->abduct_max_rad[f]);
    }
}

/* The clearance that matters for finger f with the others as they are. */
static float
finger_clearance(const struct hd_model *model, const struct hd_pose *pose, int f)
{
    point_set pts;
    if (f == HD_THUMB) {
        for (int g = HD_THUMB; g <= HD_MIDDLE; ++g)
            hd_finger_fk(model, pose, g, pts[g], NULL);
        return thumb_clearance(model, pts);
    }
    hd_finger_fk(model, pose, f, pts[f], NULL);
    return finger_palm_clearance(model, (const float(*)[3])pts[f], f);
}

/* Opens finger f (scales its flexion towards straight) just enough to clear. */
static void
open_until_clear(const struct hd_model *model, struct hd_pose *pose, int f)
{
    if (finger_clearance(model, pose, f) >= 0.0f)
        return;
    float flex[HD_FINGER_JOINTS];
    memcpy(flex, pose->flex_rad[f], sizeof flex);
    float clear = 0.0f, blocked = 1.0f; /* scales known clear and known blocked */
    for (int step = 0; step < OPEN_STEPS; ++step) {
        const float mid = 0.5f * (clear + blocked);
        for (int j = 0; j < HD_FINGER_JOINTS; ++j)
            pose->flex_rad[f][j] =
                m_clampf(mid * flex[j], model->flex_min_rad[f][j], model->flex_max_rad[f][j]);
        if (finger_clearance(model, pose, f) >= 0.0f)
            clear = mid;
        else
            blocked = mid;
    }
    for (int j = 0; j < HD_FINGER_JOINTS; ++j)
        pose->flex_rad[f][j] =
            m_clampf(clear * flex[j], model->flex_min_rad[f][j], model->flex_max_rad[f][j]);
}

void
hd_pose_constrain(const struct hd_model *model, struct hd_pose *pose)
{
    clamp_to_limits(model, pose);
    order_headings(model, pose);
    for (int f = HD_INDEX; f <= HD_LITTLE; ++f)
        open_until_clear(model, pose, f);
    open_until_clear(model, pose, HD_THUMB);
}
