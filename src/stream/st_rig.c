/*
 * Which joint of a motion capture clip is which (include/embody/stream.h,
 * st_mocap_rig): the naming convention guessed from the joint names, the humanoid joints
 * found under it, and, for rigs whose joint frames are not CMU's T-pose frames, the
 * constant rotations that turn the head's, hands' and hips' frames into the convention's
 * (PROTOCOL section 2 defines the devices in CMU's joint frames).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embody/stream.h"
#include "stream/st_internal.h"

/* A rest pose counts as CMU's T-pose when the upper arms point along +-X and the thighs
 * down to within this angle. */
#define T_POSE_MAX_DEG 30.0
/* The frame fixes average over about this many frames of the clip. */
#define FIX_SAMPLES 240

static double
length3(const double *v)
{
    return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

static void
sub3(const double *a, const double *b, double *out)
{
    for (int k = 0; k < 3; ++k)
        out[k] = a[k] - b[k];
}

static void
cross3(const double *a, const double *b, double *out)
{
    const double x = a[1] * b[2] - a[2] * b[1];
    const double y = a[2] * b[0] - a[0] * b[2];
    const double z = a[0] * b[1] - a[1] * b[0];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

static double
dot3(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static bool
normalize3(double *v)
{
    const double n = length3(v);
    if (!(n > 1e-12))
        return false;
    for (int k = 0; k < 3; ++k)
        v[k] /= n;
    return true;
}

/* The rotation whose columns are `x` (kept) and `y` made orthogonal to it, z = x cross y.
 * False when they are (nearly) parallel. */
static bool
frame_from_axes(const double *x_in, const double *y_in, struct st_mat3 *out)
{
    double x[3] = {x_in[0], x_in[1], x_in[2]}, y[3], z[3];
    if (!normalize3(x))
        return false;
    const double d = dot3(x, y_in);
    for (int k = 0; k < 3; ++k)
        y[k] = y_in[k] - d * x[k];
    if (!normalize3(y))
        return false;
    cross3(x, y, z);
    for (int k = 0; k < 3; ++k) {
        out->m[k][0] = x[k];
        out->m[k][1] = y[k];
        out->m[k][2] = z[k];
    }
    return true;
}

/* Lower-case copy of `name` contains `word`. */
static bool
name_has(const char *name, const char *word)
{
    char s[128];
    size_t n = 0;
    for (; name[n] && n + 1 < sizeof s; ++n)
        s[n] = (char)tolower((unsigned char)name[n]);
    s[n] = '\0';
    return strstr(s, word) != NULL;
}

/* -1 left, +1 right, 0 unknown, from "left"/"right", an "l"/"r" first letter before an
 * upper-case one (lEye) or an "_L_"/"_R_" token (CC_Base_L_Eye). */
static int
name_side(const char *name)
{
    if (name_has(name, "left") || strstr(name, "_L_") || (name[0] == 'l' && isupper((unsigned char)name[1])))
        return -1;
    if (name_has(name, "right") || strstr(name, "_R_") || (name[0] == 'r' && isupper((unsigned char)name[1])))
        return 1;
    return 0;
}

static bool
is_descendant(const struct st_bvh *bvh, int j, int ancestor)
{
    for (int a = bvh->joints[j].parent; a >= 0; a = bvh->joints[a].parent)
        if (a == ancestor)
            return true;
    return false;
}

/* The first End Site below `joint` (not through another joint) longer than zero. */
static int
end_site_of(const struct st_bvh *bvh, int joint)
{
    for (int i = joint + 1; i < bvh->joint_count; ++i)
        if (bvh->joints[i].parent == joint && bvh->joints[i].is_end_site &&
            length3(bvh->joints[i].offset) > 1e-9)
            return i;
    return -1;
}

/* The tip of the thumb below `hand`: the last joint of the first chain whose name says
 * thumb, -1 for none. */
static int
thumb_tip(const struct st_bvh *bvh, int hand)
{
    int thumb = -1;
    for (int i = hand + 1; i < bvh->joint_count && thumb < 0; ++i)
        if (is_descendant(bvh, i, hand) && name_has(bvh->joints[i].name, "thumb"))
            thumb = i;
    if (thumb < 0)
        return -1;
    int tip = thumb;
    for (bool deeper = true; deeper;) {
        deeper = false;
        for (int i = tip + 1; i < bvh->joint_count; ++i)
            if (bvh->joints[i].parent == tip) {
                tip = i;
                deeper = true;
                break;
            }
    }
    return tip;
}

static void
find_eyes(const struct st_bvh *bvh, int head, int *out_left, int *out_right)
{
    *out_left = *out_right = -1;
    for (int i = 0; i < bvh->joint_count; ++i) {
        if (bvh->joints[i].is_end_site || !is_descendant(bvh, i, head) ||
            !name_has(bvh->joints[i].name, "eye"))
            continue;
        const int side = name_side(bvh->joints[i].name);
        if (side < 0 && *out_left < 0)
            *out_left = i;
        else if (side > 0 && *out_right < 0)
            *out_right = i;
    }
}

enum sk_name_map
st_bvh_guess_name_map(const struct st_bvh *bvh)
{
    const char **names = calloc((size_t)(bvh->joint_count > 0 ? bvh->joint_count : 1),
                                sizeof *names);
    if (!names)
        return SK_NAMES_CMU;
    for (int i = 0; i < bvh->joint_count; ++i)
        names[i] = bvh->joints[i].name;
    const enum sk_name_map map = sk_name_map_guess(names, bvh->joint_count);
    free(names);
    return map;
}

static const enum sk_bone k_needed[] = {
    SK_HIPS,           SK_SPINE,          SK_HEAD,           SK_LEFT_UPPER_ARM,
    SK_LEFT_HAND,      SK_LEFT_HAND_END,  SK_RIGHT_UPPER_ARM, SK_RIGHT_HAND,
    SK_RIGHT_HAND_END, SK_LEFT_UPPER_LEG, SK_LEFT_LOWER_LEG, SK_LEFT_FOOT,
    SK_RIGHT_UPPER_LEG, SK_RIGHT_LOWER_LEG, SK_RIGHT_FOOT,
};

static enum em_result
map_joints(const struct st_bvh *bvh, const char *source, struct st_mocap_rig *rig,
           struct em_error *err)
{
    for (int b = 0; b < SK_BONE_COUNT; ++b)
        rig->joint[b] = -1;
    for (int i = 0; i < bvh->joint_count; ++i) {
        if (bvh->joints[i].is_end_site)
            continue;
        const enum sk_bone b = sk_bone_from_mapped_name(rig->map, bvh->joints[i].name);
        if (b != SK_BONE_NONE && rig->joint[b] < 0)
            rig->joint[b] = i;
    }
    /* VRM files (embody's own) end their hands in End Sites. */
    for (int s = 0; s < 2; ++s) {
        const enum sk_bone hand = s ? SK_RIGHT_HAND : SK_LEFT_HAND;
        const enum sk_bone end = s ? SK_RIGHT_HAND_END : SK_LEFT_HAND_END;
        if (rig->map == SK_NAMES_VRM && rig->joint[end] < 0 && rig->joint[hand] >= 0)
            rig->joint[end] = end_site_of(bvh, rig->joint[hand]);
        /* No toes joint: the foot's End Site is where the rig's author put them. */
        const enum sk_bone foot = s ? SK_RIGHT_FOOT : SK_LEFT_FOOT;
        const enum sk_bone toes = s ? SK_RIGHT_TOES : SK_LEFT_TOES;
        if (rig->joint[toes] < 0 && rig->joint[foot] >= 0)
            rig->joint[toes] = end_site_of(bvh, rig->joint[foot]);
    }
    char missing[600] = "";
    for (size_t i = 0; i < sizeof k_needed / sizeof k_needed[0]; ++i) {
        if (rig->joint[k_needed[i]] >= 0)
            continue;
        const char *name = sk_mapped_name(rig->map, k_needed[i]);
        const size_t used = strlen(missing);
        snprintf(missing + used, sizeof missing - used, "%s\"%s\"", used ? ", " : "",
                 name ? name : sk_bone_name(k_needed[i]));
    }
    if (missing[0])
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: no joint named %s (joint names read as %s names); a 3-point stream "
                       "is made from the head, both hands and their knuckles (CMU: Head, "
                       "LeftHand, LeftFingerBase, RightHand, RightFingerBase)",
                       source, missing, sk_name_map_label(rig->map));
    return EM_OK;
}

/* True when the rest pose is CMU's: upper arms out along +-X, thighs down. */
static bool
rest_is_t_pose(const struct st_bvh *bvh, const struct st_mocap_rig *rig)
{
    double(*rest)[3] = malloc((size_t)bvh->joint_count * sizeof *rest);
    if (!rest)
        return false;
    for (int i = 0; i < bvh->joint_count; ++i)
        for (int k = 0; k < 3; ++k)
            rest[i][k] = bvh->joints[i].offset[k] +
                         (bvh->joints[i].parent >= 0 ? rest[bvh->joints[i].parent][k] : 0.0);
    static const struct {
        enum sk_bone from, to;
        double direction[3];
    } limbs[] = {
        {SK_LEFT_UPPER_ARM, SK_LEFT_HAND, {1, 0, 0}},
        {SK_RIGHT_UPPER_ARM, SK_RIGHT_HAND, {-1, 0, 0}},
        {SK_LEFT_UPPER_LEG, SK_LEFT_FOOT, {0, -1, 0}},
        {SK_RIGHT_UPPER_LEG, SK_RIGHT_FOOT, {0, -1, 0}},
    };
    bool t_pose = true;
    const double min_cos = cos(T_POSE_MAX_DEG * ST_PI / 180.0);
    for (size_t i = 0; i < sizeof limbs / sizeof limbs[0]; ++i) {
        double d[3];
        sub3(rest[rig->joint[limbs[i].to]], rest[rig->joint[limbs[i].from]], d);
        if (!normalize3(d) || dot3(d, limbs[i].direction) < min_cos)
            t_pose = false;
    }
    free(rest);
    return t_pose;
}

/* The points that show each frame's axes (see st_mocap_rig). */
struct fix_points {
    int neck, head, eye[2], shoulder[2];
    int wrist[2], knuckles[2], thumb[2];
    int hips, spine, thigh[2];
};

/* Frame `f`'s world axes in the convention (columns), from joint positions. */
static bool
convention_axes(const struct fix_points *p, enum st_rig_frame f, const double (*pos)[3],
                struct st_mat3 *out)
{
    double a[3], b[3];
    switch (f) {
    case ST_RIG_HEAD: { /* columns: left, up, forward = left x up */
        double left[3], up[3];
        if (p->eye[0] >= 0 && p->eye[1] >= 0)
            sub3(pos[p->eye[0]], pos[p->eye[1]], left);
        else
            sub3(pos[p->shoulder[0]], pos[p->shoulder[1]], left);
        sub3(pos[p->head], pos[p->neck], up);
        /* Up is the better measured: keep it, then left square to it. */
        struct st_mat3 m;
        if (!frame_from_axes(up, left, &m)) /* columns: up, left, up x left = -forward */
            return false;
        for (int k = 0; k < 3; ++k) {
            out->m[k][0] = m.m[k][1];
            out->m[k][1] = m.m[k][0];
            out->m[k][2] = -m.m[k][2];
        }
        return true;
    }
    case ST_RIG_LEFT_HAND:
    case ST_RIG_RIGHT_HAND: { /* columns: +-fingers, thumb side x ..., thumb side */
        const int s = f == ST_RIG_RIGHT_HAND;
        if (p->thumb[s] < 0)
            return false;
        sub3(pos[p->knuckles[s]], pos[p->wrist[s]], a);
        if (s)
            for (int k = 0; k < 3; ++k)
                a[k] = -a[k];
        sub3(pos[p->thumb[s]], pos[p->wrist[s]], b);
        struct st_mat3 m; /* columns: x, thumb square to x, x cross thumb = -y */
        if (!frame_from_axes(a, b, &m))
            return false;
        for (int k = 0; k < 3; ++k) {
            out->m[k][0] = m.m[k][0];
            out->m[k][1] = -m.m[k][2];
            out->m[k][2] = m.m[k][1];
        }
        return true;
    }
    case ST_RIG_HIPS: { /* columns: left, up, forward */
        double left[3], up[3];
        sub3(pos[p->thigh[0]], pos[p->thigh[1]], left);
        sub3(pos[p->spine], pos[p->hips], up);
        struct st_mat3 m;
        if (!frame_from_axes(left, up, &m))
            return false;
        *out = m;
        return true;
    }
    default: return false;
    }
}

static void
transpose_mul(const struct st_mat3 *a, const struct st_mat3 *b, struct st_mat3 *out)
{
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
            double s = 0.0;
            for (int k = 0; k < 3; ++k)
                s += a->m[k][r] * b->m[k][c];
            out->m[r][c] = s;
        }
}

/* Averages R^T G over the clip for each frame and makes each sum a rotation again. */
static enum em_result
measure_fixes(const struct st_bvh *bvh, const struct fix_points *p, const char *source,
              struct st_mocap_rig *rig, struct em_error *err)
{
    const int joint_of[ST_RIG_FRAME_COUNT] = {rig->joint[SK_HEAD], rig->joint[SK_LEFT_HAND],
                                              rig->joint[SK_RIGHT_HAND], rig->joint[SK_HIPS]};
    struct st_mat3 sum[ST_RIG_FRAME_COUNT];
    memset(sum, 0, sizeof sum);
    int used[ST_RIG_FRAME_COUNT] = {0};
    double(*pos)[3] = malloc((size_t)bvh->joint_count * sizeof *pos);
    struct st_mat3 *rot = malloc((size_t)bvh->joint_count * sizeof *rot);
    if (!pos || !rot) {
        free(pos);
        free(rot);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", source);
    }
    const int step = bvh->frame_count > FIX_SAMPLES ? bvh->frame_count / FIX_SAMPLES : 1;
    for (int fr = 0; fr < bvh->frame_count; fr += step) {
        st_bvh_frame_matrices(bvh, fr, pos, rot);
        for (int f = 0; f < ST_RIG_FRAME_COUNT; ++f) {
            struct st_mat3 g, c;
            if (!convention_axes(p, (enum st_rig_frame)f, (const double(*)[3])pos, &g))
                continue;
            transpose_mul(&rot[joint_of[f]], &g, &c);
            for (int r = 0; r < 3; ++r)
                for (int k = 0; k < 3; ++k)
                    sum[f].m[r][k] += c.m[r][k];
            used[f]++;
        }
    }
    free(pos);
    free(rot);
    for (int f = 0; f < ST_RIG_FRAME_COUNT; ++f) {
        struct st_mat3 m;
        double x[3], y[3];
        for (int k = 0; k < 3; ++k) {
            x[k] = sum[f].m[k][0];
            y[k] = sum[f].m[k][1];
        }
        if (used[f] == 0 || !frame_from_axes(x, y, &m))
            return em_fail(err, EM_ERROR_PARSE,
                           "%s: the rest pose is not a T-pose and the %s's frame cannot be "
                           "told from the joints (a hand needs a thumb joint)",
                           source,
                           f == ST_RIG_HEAD ? "head" : f == ST_RIG_HIPS ? "hips" : "hand");
        memcpy(rig->fix[f], m.m, sizeof m.m);
    }
    return EM_OK;
}

enum em_result
st_mocap_rig_init(const struct st_bvh *bvh, const char *source, struct st_mocap_rig *out_rig,
                  struct em_error *err)
{
    memset(out_rig, 0, sizeof *out_rig);
    if (!source)
        source = "bvh";
    for (int f = 0; f < ST_RIG_FRAME_COUNT; ++f)
        for (int k = 0; k < 3; ++k)
            out_rig->fix[f][k][k] = 1.0;
    out_rig->map = st_bvh_guess_name_map(bvh);
    enum em_result r = map_joints(bvh, source, out_rig, err);
    if (r != EM_OK)
        return r;
    /* CMU's names are the protocol's own joints: their frames are the definition. */
    out_rig->frames_aligned = out_rig->map == SK_NAMES_CMU || rest_is_t_pose(bvh, out_rig);
    if (out_rig->frames_aligned || bvh->frame_count <= 0)
        return EM_OK;
    const int *j = out_rig->joint;
    struct fix_points p = {
        .neck = j[SK_NECK] >= 0 ? j[SK_NECK] : bvh->joints[j[SK_HEAD]].parent,
        .head = j[SK_HEAD],
        .shoulder = {j[SK_LEFT_UPPER_ARM], j[SK_RIGHT_UPPER_ARM]},
        .wrist = {j[SK_LEFT_HAND], j[SK_RIGHT_HAND]},
        .knuckles = {j[SK_LEFT_HAND_END], j[SK_RIGHT_HAND_END]},
        .thumb = {thumb_tip(bvh, j[SK_LEFT_HAND]), thumb_tip(bvh, j[SK_RIGHT_HAND])},
        .hips = j[SK_HIPS],
        .spine = j[SK_CHEST] >= 0 ? j[SK_CHEST] : j[SK_SPINE],
        .thigh = {j[SK_LEFT_UPPER_LEG], j[SK_RIGHT_UPPER_LEG]},
    };
    find_eyes(bvh, j[SK_HEAD], &p.eye[0], &p.eye[1]);
    return measure_fixes(bvh, &p, source, out_rig, err);
}

const char *
st_mocap_rig_name(const struct st_mocap_rig *rig, enum sk_bone bone)
{
    return sk_mapped_name(rig->map, bone);
}

void
st_mocap_rig_fix_quat(const struct st_mocap_rig *rig, enum st_rig_frame frame, const double *q,
                      double *out_q)
{
    if (rig->frames_aligned) {
        for (int k = 0; k < 4; ++k)
            out_q[k] = q[k];
        return;
    }
    struct st_mat3 r, fix, m;
    st_quat_to_mat3(q, &r);
    memcpy(fix.m, rig->fix[frame], sizeof fix.m);
    st_mat3_mul(&r, &fix, &m);
    st_mat3_to_quat(&m, out_q);
}
