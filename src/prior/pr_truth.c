/*
 * One clip's truth for the trainer: its 3-point stream (st_mocap_to_stream, exactly what a
 * headset and two controllers would report), its height, and at each 60 Hz row the true
 * joints the network learns (pelvis, ankles, toes, knees, neck, shoulders, back; at CMU's
 * places on any rig) and the feet's contacts; the rows that see a capture glitch; a copy
 * retargeted to other proportions.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embody/skeleton.h"
#include "pr_learning.h"

/* A foot is planted (contact target 1) when its ankle moved at most this far since the
 * previous 60 Hz row: the evaluation's own planted test (eval.h). */
#define PLANTED_MAX_STEP_M 0.01f

/* Never inlined: called, as when the trainer was one file, so its sums are not regrouped
 * with the caller's (pr_learning.h). */
__attribute__((noinline)) void
pr_rotate(const float *q, const float *v, float *out)
{
    const float ux = q[0], uy = q[1], uz = q[2], w = q[3];
    const float tx = 2.0f * (uy * v[2] - uz * v[1]);
    const float ty = 2.0f * (uz * v[0] - ux * v[2]);
    const float tz = 2.0f * (ux * v[1] - uy * v[0]);
    out[0] = v[0] + w * tx + (uy * tz - uz * ty);
    out[1] = v[1] + w * ty + (uz * tx - ux * tz);
    out[2] = v[2] + w * tz + (ux * ty - uy * tx);
}

/* The joints the targets come from (humanoid bones; the rig finds them by any names). */
enum {
    J_HIPS,
    J_ANKLE,
    J_TOES = J_ANKLE + 2,
    J_KNEE = J_TOES + 2,
    J_NECK = J_KNEE + 2,
    J_UPPER_ARM,
    J_LOWER_ARM = J_UPPER_ARM + 2,
    J_COUNT = J_LOWER_ARM + 2
};
static const enum sk_bone joint_bones[J_COUNT] = {
    SK_HIPS,           SK_LEFT_FOOT,       SK_RIGHT_FOOT, SK_LEFT_TOES,      SK_RIGHT_TOES,
    SK_LEFT_LOWER_LEG, SK_RIGHT_LOWER_LEG, SK_NECK,       SK_LEFT_UPPER_ARM, SK_RIGHT_UPPER_ARM,
    SK_LEFT_LOWER_ARM, SK_RIGHT_LOWER_ARM};

void
pr_clip_fini(struct clip *c)
{
    st_stream_fini(&c->stream);
    free(c->truth);
    memset(c, 0, sizeof *c);
}

static void
quat_from_double(const double *q, float *out)
{
    for (int k = 0; k < 4; ++k)
        out[k] = (float)q[k];
}

/* CMU's Hips joint (and the 3ds Max conversion's, of the same skeleton) sits about
 * 10 cm above the hip joints and 4 cm behind them; the Daz and CC3 rigs put theirs at
 * the hip joints' height. The prior learns CMU's, as the body and the evaluation use. */
#define CMU_HIPS_ABOVE_THIGHS_M 0.10
#define CMU_HIPS_BEHIND_THIGHS_M 0.04

static bool
hips_joint_is_cmus(const struct st_mocap_rig *rig)
{
    return rig->map == SK_NAMES_CMU || rig->map == SK_NAMES_MAX;
}

/* Where CMU's Neck would be on this rig: CMU's starts where its shoulders (clavicles) do,
 * at the base of the neck; the Daz and CC3 rigs' neck starts higher, so it is taken midway
 * between their clavicles' roots (their own neck joint on a rig without clavicles). */
static void
place_cmu_neck(const double (*pos)[3], const struct st_mocap_rig *rig, double unit,
               const int *joint, float *out_m)
{
    const int l = rig->joint[SK_LEFT_SHOULDER], r = rig->joint[SK_RIGHT_SHOULDER];
    for (int k = 0; k < 3; ++k)
        out_m[k] =
            (float)((l >= 0 && r >= 0 ? 0.5 * (pos[l][k] + pos[r][k]) : pos[joint[J_NECK]][k]) *
                    unit);
}

/* Where CMU's Hips would be on this rig: between the hip joints, raised and moved back in
 * the pelvis's frame (`hips_q`, the convention's), scaled with the body's height. */
static void
place_cmu_hips(const double (*pos)[3], const struct st_mocap_rig *rig, const double *hips_q,
               double unit, float height_m, float *out_m)
{
    const double scale = (double)height_m / (double)PR_REFERENCE_HEIGHT_M;
    const float q[4] = {(float)hips_q[0], (float)hips_q[1], (float)hips_q[2], (float)hips_q[3]};
    const float local[3] = {0.0f, (float)(CMU_HIPS_ABOVE_THIGHS_M * scale),
                            (float)(-CMU_HIPS_BEHIND_THIGHS_M * scale)};
    float offset[3];
    pr_rotate(q, local, offset);
    const int l = rig->joint[SK_LEFT_UPPER_LEG], r = rig->joint[SK_RIGHT_UPPER_LEG];
    for (int k = 0; k < 3; ++k)
        out_m[k] = (float)(0.5 * (pos[l][k] + pos[r][k]) * unit) + offset[k];
}

/* The back's points (PR_OUT_BACK): a third and two thirds of the way from the pelvis to
 * the neck along the polyline through the rig's spine joints between them (those whose
 * height along the pelvis-neck line is between the two: the Daz hip and CC3 waist sit at
 * the pelvis). The rigs have two to four spine bones in different places; these points
 * are where they bend the same. */
#define BACK_POINTS 2
#define BACK_MAX_VERTICES 5

static int
back_polyline(const double (*pos)[3], const struct st_mocap_rig *rig, double unit,
              const float *hips_m, const float *neck_m, float (*out)[3])
{
    static const enum sk_bone spine_bones[] = {SK_SPINE, SK_CHEST, SK_UPPER_CHEST};
    float axis[3];
    float axis2 = 0.0f;
    for (int k = 0; k < 3; ++k) {
        axis[k] = neck_m[k] - hips_m[k];
        axis2 += axis[k] * axis[k];
    }
    int n = 0;
    memcpy(out[n++], hips_m, sizeof out[0]);
    for (size_t b = 0; b < sizeof spine_bones / sizeof spine_bones[0] && axis2 > 1e-8f; ++b) {
        const int j = rig->joint[spine_bones[b]];
        if (j < 0)
            continue;
        float p[3], along = 0.0f;
        for (int k = 0; k < 3; ++k) {
            p[k] = (float)(pos[j][k] * unit);
            along += (p[k] - hips_m[k]) * axis[k];
        }
        along /= axis2;
        if (along > 0.05f && along < 0.95f)
            memcpy(out[n++], p, sizeof p);
    }
    memcpy(out[n++], neck_m, sizeof out[0]);
    return n;
}

static void
place_back(const double (*pos)[3], const struct st_mocap_rig *rig, double unit, struct pr_truth *t)
{
    float v[BACK_MAX_VERTICES][3];
    const int n = back_polyline(pos, rig, unit, t->hips_m, t->neck_m, v);
    float seg[BACK_MAX_VERTICES], total = 0.0f;
    for (int i = 0; i + 1 < n; ++i) {
        const float dx = v[i + 1][0] - v[i][0], dy = v[i + 1][1] - v[i][1],
                    dz = v[i + 1][2] - v[i][2];
        seg[i] = sqrtf(dx * dx + dy * dy + dz * dz);
        total += seg[i];
    }
    for (int b = 0; b < BACK_POINTS; ++b) {
        float left = total * (float)(b + 1) / (float)(BACK_POINTS + 1);
        int i = 0;
        while (i + 2 < n && left > seg[i]) {
            left -= seg[i];
            ++i;
        }
        const float w = seg[i] > 1e-6f ? fminf(1.0f, left / seg[i]) : 0.0f;
        lerp3(v[i], v[i + 1], w, t->back_m[b]);
    }
}

static enum em_result
fill_truth(const struct st_bvh *bvh, const struct st_mocap_rig *rig, double unit, int step,
           struct clip *c, const char *path, struct em_error *err)
{
    int joint[J_COUNT];
    for (int j = 0; j < J_COUNT; ++j)
        if ((joint[j] = rig->joint[joint_bones[j]]) < 0)
            return em_fail(err, EM_ERROR_PARSE, "%s: no joint for the humanoid \"%s\"", path,
                           sk_bone_name(joint_bones[j]));
    const size_t n = (size_t)bvh->joint_count;
    double(*pos)[3] = malloc(n * sizeof *pos);
    double(*rot)[4] = malloc(n * sizeof *rot);
    c->truth = calloc((size_t)c->stream.frame_count, sizeof *c->truth);
    if (!pos || !rot || !c->truth) {
        free(pos);
        free(rot);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    for (int row = 0; row < c->stream.frame_count; ++row) {
        st_bvh_frame_pose(bvh, row * step, pos, rot);
        struct pr_truth *t = &c->truth[row];
        for (int k = 0; k < 3; ++k) {
            t->hips_m[k] = (float)(pos[joint[J_HIPS]][k] * unit);
            for (int s = 0; s < 2; ++s) {
                t->ankle_m[s][k] = (float)(pos[joint[J_ANKLE + s]][k] * unit);
                t->toes_m[s][k] = (float)(pos[joint[J_TOES + s]][k] * unit);
                t->knee_m[s][k] = (float)(pos[joint[J_KNEE + s]][k] * unit);
                t->upper_arm_m[s][k] = (float)(pos[joint[J_UPPER_ARM + s]][k] * unit);
                t->lower_arm_m[s][k] = (float)(pos[joint[J_LOWER_ARM + s]][k] * unit);
            }
            t->neck_m[k] = (float)(pos[joint[J_NECK]][k] * unit);
        }
        double hips_q[4];
        st_mocap_rig_fix_quat(rig, ST_RIG_HIPS, rot[joint[J_HIPS]], hips_q);
        quat_from_double(hips_q, t->hips_rotation);
        if (!hips_joint_is_cmus(rig)) {
            place_cmu_hips(pos, rig, hips_q, unit, c->height_m, t->hips_m);
            place_cmu_neck(pos, rig, unit, joint, t->neck_m);
        }
        place_back(pos, rig, unit, t);
    }
    free(pos);
    free(rot);
    /* Contact: the ankle barely moved since the previous row (row 0 looks ahead). */
    for (int row = 0; row < c->stream.frame_count; ++row)
        for (int s = 0; s < 2; ++s) {
            const int a = row > 0 ? row - 1 : row, b = row > 0 ? row : row + 1;
            if (b >= c->stream.frame_count) {
                c->truth[row].contact[s] = true;
                continue;
            }
            const float *p = c->truth[a].ankle_m[s], *q = c->truth[b].ankle_m[s];
            const float dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
            c->truth[row].contact[s] =
                dx * dx + dy * dy + dz * dz <= PLANTED_MAX_STEP_M * PLANTED_MAX_STEP_M;
        }
    return EM_OK;
}

static long
clip_step(const struct st_bvh *bvh)
{
    const long step = lround(1.0 / (bvh->frame_time_s * 60.0));
    return step < 1 ? 1 : step;
}

/* The rows (60 Hz) that see a glitch: a head, hand or foot moving faster than a person
 * can (PR_GLITCH_SPEED_M_S, marker swaps in the capture) in that row, in the row before
 * (its target) or in the history the row's features hold. `out_skip` has a flag per row;
 * returns how many are set. */
long
pr_mark_glitches(const struct st_bvh *bvh, const struct st_mocap_rig *rig, double unit, int rows,
                 bool *out_skip)
{
    static const enum sk_bone watched[] = {SK_HEAD, SK_LEFT_HAND, SK_RIGHT_HAND, SK_LEFT_FOOT,
                                           SK_RIGHT_FOOT};
    enum { WATCHED = sizeof watched / sizeof watched[0] };
    memset(out_skip, 0, (size_t)rows * sizeof *out_skip);
    const size_t n = (size_t)bvh->joint_count;
    double(*pos)[3] = malloc(n * sizeof *pos);
    double(*rot)[4] = malloc(n * sizeof *rot);
    if (!pos || !rot || !(bvh->frame_time_s > 0.0)) {
        free(pos);
        free(rot);
        return 0;
    }
    const long step = clip_step(bvh);
    double last[WATCHED][3];
    const double max_step = PR_GLITCH_SPEED_M_S * bvh->frame_time_s / unit;
    for (int f = 0; f < bvh->frame_count; ++f) {
        st_bvh_frame_pose(bvh, f, pos, rot);
        bool glitch = false;
        for (int w = 0; w < WATCHED; ++w) {
            const double *p = pos[rig->joint[watched[w]]];
            if (f > 0) {
                const double dx = p[0] - last[w][0], dy = p[1] - last[w][1], dz = p[2] - last[w][2];
                glitch |= dx * dx + dy * dy + dz * dz > max_step * max_step;
            }
            memcpy(last[w], p, sizeof last[w]);
        }
        if (!glitch)
            continue;
        /* Rows from the one before the jump to those whose history still holds it. */
        const long first = (f - 1) / step - 1, end = f / step + PR_HISTORY_FRAMES + 1;
        for (long r = first < 0 ? 0 : first; r < end && r < rows; ++r)
            out_skip[r] = true;
    }
    free(pos);
    free(rot);
    long count = 0;
    for (int r = 0; r < rows; ++r)
        count += out_skip[r];
    return count;
}

/* The nearest mapped joint above `j` (not `j` itself), as a humanoid bone. */
static enum sk_bone
mapped_ancestor(const struct st_bvh *bvh, const enum sk_bone *bone_of, int j)
{
    for (int a = bvh->joints[j].parent; a >= 0; a = bvh->joints[a].parent)
        if (bone_of[a] != SK_BONE_NONE)
            return bone_of[a];
    return SK_BONE_NONE;
}

/* Retargets the clip to other proportions: thighs and shins times `legs` (and the root's
 * path with them, so that strides and the hips' height follow the legs), the spine from
 * the hips to the head times `torso`, upper arms and forearms times `arms`. The joint
 * rotations stay: the same motion on another person's build. */
static void
scale_proportions(struct st_bvh *bvh, const struct st_mocap_rig *rig, const struct proportions *p)
{
    enum sk_bone *bone_of = malloc((size_t)bvh->joint_count * sizeof *bone_of);
    bool *on_spine = calloc((size_t)bvh->joint_count, sizeof *on_spine);
    if (!bone_of || !on_spine) {
        free(bone_of);
        free(on_spine);
        return;
    }
    for (int i = 0; i < bvh->joint_count; ++i)
        bone_of[i] = SK_BONE_NONE;
    for (int b = 0; b < SK_BONE_COUNT; ++b)
        if (rig->joint[b] >= 0)
            bone_of[rig->joint[b]] = (enum sk_bone)b;
    for (int a = rig->joint[SK_HEAD]; a > 0; a = bvh->joints[a].parent)
        on_spine[a] = true;
    for (int i = 1; i < bvh->joint_count; ++i) {
        const enum sk_bone up = mapped_ancestor(bvh, bone_of, i);
        float f = 1.0f;
        if (on_spine[i])
            f = p->torso;
        else if (up == SK_LEFT_UPPER_LEG || up == SK_LEFT_LOWER_LEG || up == SK_RIGHT_UPPER_LEG ||
                 up == SK_RIGHT_LOWER_LEG)
            f = p->legs;
        else if (up == SK_LEFT_UPPER_ARM || up == SK_LEFT_LOWER_ARM || up == SK_RIGHT_UPPER_ARM ||
                 up == SK_RIGHT_LOWER_ARM)
            f = p->arms;
        for (int k = 0; k < 3; ++k)
            bvh->joints[i].offset[k] *= (double)f;
    }
    const struct st_bvh_joint *root = &bvh->joints[0];
    for (int k = 0; k < 3; ++k)
        bvh->joints[0].offset[k] *= (double)p->legs;
    for (int fr = 0; fr < bvh->frame_count; ++fr) {
        double *row = bvh->motion + (size_t)fr * (size_t)bvh->channel_count;
        for (int c = 0; c < root->channel_count; ++c)
            if (root->channel[c] <= ST_BVH_ZPOS)
                row[root->first_channel + c] *= (double)p->legs;
    }
    free(bone_of);
    free(on_spine);
}

static enum em_result
copy_bvh(const struct st_bvh *in, struct st_bvh *out, const char *path, struct em_error *err)
{
    *out = *in;
    const size_t values = (size_t)in->frame_count * (size_t)in->channel_count;
    out->joints = malloc((size_t)in->joint_count * sizeof *out->joints);
    out->motion = malloc((values > 0 ? values : 1) * sizeof *out->motion);
    if (!out->joints || !out->motion) {
        free(out->joints);
        free(out->motion);
        memset(out, 0, sizeof *out);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    memcpy(out->joints, in->joints, (size_t)in->joint_count * sizeof *out->joints);
    memcpy(out->motion, in->motion, values * sizeof *out->motion);
    return EM_OK;
}

/* One copy of a clip: its stream, truth and height, on its own proportions (NULL: as
 * recorded). */
enum em_result
pr_make_clip(const struct st_bvh *recorded, const struct st_mocap_rig *rig, double unit,
             const struct proportions *prop, const char *path, int frame_limit, struct clip *out,
             struct em_error *err)
{
    memset(out, 0, sizeof *out);
    struct st_bvh scaled = {0};
    const struct st_bvh *bvh = recorded;
    enum em_result r = EM_OK;
    if (prop) {
        if ((r = copy_bvh(recorded, &scaled, path, err)) != EM_OK)
            return r;
        scale_proportions(&scaled, rig, prop);
        bvh = &scaled;
    }
    r = st_mocap_to_stream(bvh, unit, path, &out->stream, err);
    if (r == EM_OK && frame_limit > 0 && out->stream.frame_count > frame_limit)
        out->stream.frame_count = frame_limit;
    if (r == EM_OK) {
        struct sk_skeleton sk;
        r = st_bvh_to_humanoid(bvh, rig->map, unit, path, &sk, err);
        if (r == EM_OK) {
            out->height_m = sk_humanoid_height(&sk);
            sk_skeleton_fini(&sk);
            if (!(out->height_m > 0.5f && out->height_m < 2.8f))
                r = em_fail(err, EM_ERROR_PARSE, "%s: the skeleton stands %.2f m tall", path,
                            (double)out->height_m);
        }
    }
    if (r == EM_OK)
        r = fill_truth(bvh, rig, unit, (int)clip_step(bvh), out, path, err);
    if (prop)
        st_bvh_fini(&scaled);
    if (r != EM_OK)
        pr_clip_fini(out);
    return r;
}
