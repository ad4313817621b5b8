/*
 * A humanoid skeleton from a BVH hierarchy (include/embody/stream.h).
 *
 * Joints whose names the name map knows become humanoid joints; the joints in between
 * (CMU's LHipJoint, LowerBack, Neck1) fold their offsets into the next mapped joint, and
 * unmapped leaves (fingers, thumbs) are dropped. Then the rest pose is made the
 * humanoid's, so its joint limits mean what they say: each leg below the hip is turned
 * rigidly so the thigh points straight down, each arm below the shoulder joint so the
 * upper arm points straight out to its side. Rotating a whole subtree keeps every bone's
 * length. Last, the hips are raised so the lowest foot joint stands on the floor.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embody/stream.h"
#include "stream/st_internal.h"
#include "util/u_path.h"

/* End Sites shorter than this (file units) mark a leaf, not an extent: never mapped. */
#define MIN_END_SITE_LENGTH 1e-9

/* The end joint an End Site stands for, given its parent's bone. Every map: the tips of
 * the toes. VRM names only (files embody wrote): also the crown and the hand ends. CMU's
 * Head End Site is not the crown (it is about 9.5 cm above the skull base), so it is not
 * taken as headTop. */
static enum sk_bone
end_site_bone(enum sk_name_map map, enum sk_bone parent_bone)
{
    switch (parent_bone) {
    case SK_LEFT_TOES: return SK_LEFT_TOES_END;
    case SK_RIGHT_TOES: return SK_RIGHT_TOES_END;
    case SK_HEAD: return map == SK_NAMES_VRM ? SK_HEAD_TOP : SK_BONE_NONE;
    case SK_LEFT_HAND: return map == SK_NAMES_VRM ? SK_LEFT_HAND_END : SK_BONE_NONE;
    case SK_RIGHT_HAND: return map == SK_NAMES_VRM ? SK_RIGHT_HAND_END : SK_BONE_NONE;
    default: return SK_BONE_NONE;
    }
}

static double
length3(const double *v)
{
    return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

/* Gives each BVH joint its humanoid bone (or SK_BONE_NONE); fills bone_joint. */
static enum em_result
map_bones(const struct st_bvh *bvh, enum sk_name_map map, const char *source,
          enum sk_bone *bone, int *bone_joint, struct em_error *err)
{
    for (int b = 0; b < SK_BONE_COUNT; ++b)
        bone_joint[b] = -1;
    for (int i = 0; i < bvh->joint_count; ++i) {
        const struct st_bvh_joint *j = &bvh->joints[i];
        bone[i] = j->is_end_site ? SK_BONE_NONE : sk_bone_from_mapped_name(map, j->name);
        if (bone[i] == SK_BONE_NONE)
            continue;
        if (bone_joint[bone[i]] >= 0)
            return em_fail(err, EM_ERROR_PARSE,
                           "%s: joints \"%s\" and \"%s\" both name the humanoid joint \"%s\"",
                           source, bvh->joints[bone_joint[bone[i]]].name, j->name,
                           sk_bone_name(bone[i]));
        bone_joint[bone[i]] = i;
    }
    for (int i = 0; i < bvh->joint_count; ++i) {
        const struct st_bvh_joint *j = &bvh->joints[i];
        if (!j->is_end_site || length3(j->offset) < MIN_END_SITE_LENGTH)
            continue;
        const enum sk_bone b = end_site_bone(map, bone[j->parent]);
        if (b != SK_BONE_NONE && bone_joint[b] < 0) {
            bone[i] = b;
            bone_joint[b] = i;
        }
    }
    return EM_OK;
}

static enum em_result
check_required(const int *bone_joint, enum sk_name_map map, const char *source,
               struct em_error *err)
{
    char missing[400] = "";
    for (int b = 0; b < SK_BONE_COUNT; ++b) {
        if (!sk_bone_is_required((enum sk_bone)b) || bone_joint[b] >= 0)
            continue;
        const size_t used = strlen(missing);
        snprintf(missing + used, sizeof missing - used, "%s\"%s\"", used ? ", " : "",
                 sk_bone_name((enum sk_bone)b));
    }
    if (missing[0])
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: no joint for the humanoid joints %s (joint names read as %s names)",
                       source, missing, sk_name_map_label(map));
    return EM_OK;
}

/* The humanoid joints: for each, its BVH joint, its humanoid parent (an index into the
 * same list, -1 for the root) and its offset from that parent in metres. */
struct humanoid_joint {
    int bvh_joint;
    enum sk_bone bone;
    int parent;
    double offset_m[3];
};

static enum em_result
collect_joints(const struct st_bvh *bvh, const enum sk_bone *bone, double unit_scale,
               const char *source, struct humanoid_joint *out, int *out_count,
               int *humanoid_of, struct em_error *err)
{
    int n = 0;
    for (int i = 0; i < bvh->joint_count; ++i) {
        humanoid_of[i] = -1;
        if (bone[i] == SK_BONE_NONE)
            continue;
        struct humanoid_joint *h = &out[n];
        h->bvh_joint = i;
        h->bone = bone[i];
        h->parent = -1;
        double offset[3] = {0.0, 0.0, 0.0};
        /* Sum the offsets up to the nearest mapped ancestor: in a BVH rest pose every
         * frame is aligned with the world, so offsets simply add. */
        int a = i;
        do {
            for (int k = 0; k < 3; ++k)
                offset[k] += bvh->joints[a].offset[k];
            a = bvh->joints[a].parent;
        } while (a >= 0 && bone[a] == SK_BONE_NONE);
        if (a >= 0)
            h->parent = humanoid_of[a];
        else if (bone[i] != SK_HIPS)
            return em_fail(err, EM_ERROR_PARSE,
                           "%s: joint \"%s\" (humanoid \"%s\") is not below the hips", source,
                           bvh->joints[i].name, sk_bone_name(bone[i]));
        for (int k = 0; k < 3; ++k)
            h->offset_m[k] = offset[k] * unit_scale;
        humanoid_of[i] = n++;
    }
    *out_count = n;
    return EM_OK;
}

/* A joint that sits on its parent (3ds Max conversions put the collars on the chest)
 * has no bone of its own: when it has one mapped child, it takes a quarter of that
 * child's bone, so both bones have a length and the chain keeps its shape and reach. */
static void
split_zero_bones(struct humanoid_joint *joints, int count)
{
    for (int j = 1; j < count; ++j) {
        if (length3(joints[j].offset_m) > 1e-6)
            continue;
        int child = -1, children = 0;
        for (int c = j + 1; c < count; ++c)
            if (joints[c].parent == j) {
                child = c;
                children++;
            }
        if (children != 1)
            continue;
        for (int k = 0; k < 3; ++k) {
            joints[j].offset_m[k] = 0.25 * joints[child].offset_m[k];
            joints[child].offset_m[k] *= 0.75;
        }
    }
}

static bool
is_below(const struct humanoid_joint *joints, int j, int top)
{
    for (int a = joints[j].parent; a >= 0; a = joints[a].parent)
        if (a == top)
            return true;
    return false;
}

/* Turns everything below joint `top` rigidly so that the bone from `top` to `next` points
 * along `direction`. */
static void
aim_subtree(struct humanoid_joint *joints, int count, int top, int next,
            const double *direction)
{
    double d[3];
    const double len = length3(joints[next].offset_m);
    for (int k = 0; k < 3; ++k)
        d[k] = joints[next].offset_m[k] / len;
    struct st_mat3 turn;
    st_mat3_from_to(d, direction, &turn);
    for (int j = 0; j < count; ++j)
        if (is_below(joints, j, top))
            st_mat3_apply(&turn, joints[j].offset_m, joints[j].offset_m);
}

static int
joint_of_bone(const struct humanoid_joint *joints, int count, enum sk_bone bone)
{
    for (int j = 0; j < count; ++j)
        if (joints[j].bone == bone)
            return j;
    return -1;
}

static enum em_result
make_rest_pose_humanoid(struct humanoid_joint *joints, int count, const char *source,
                        struct em_error *err)
{
    static const struct {
        enum sk_bone top, next;
        double direction[3];
    } limbs[] = {
        {SK_LEFT_UPPER_LEG, SK_LEFT_LOWER_LEG, {0.0, -1.0, 0.0}},
        {SK_RIGHT_UPPER_LEG, SK_RIGHT_LOWER_LEG, {0.0, -1.0, 0.0}},
        {SK_LEFT_UPPER_ARM, SK_LEFT_LOWER_ARM, {1.0, 0.0, 0.0}},
        {SK_RIGHT_UPPER_ARM, SK_RIGHT_LOWER_ARM, {-1.0, 0.0, 0.0}},
    };
    for (size_t i = 0; i < sizeof limbs / sizeof limbs[0]; ++i) {
        const int top = joint_of_bone(joints, count, limbs[i].top);
        const int next = joint_of_bone(joints, count, limbs[i].next);
        if (joints[next].parent != top)
            return em_fail(err, EM_ERROR_PARSE, "%s: joint \"%s\" must be below \"%s\"",
                           source, sk_bone_name(limbs[i].next), sk_bone_name(limbs[i].top));
        if (!(length3(joints[next].offset_m) > 1e-9))
            return em_fail(err, EM_ERROR_PARSE, "%s: the \"%s\" bone has no length", source,
                           sk_bone_name(limbs[i].top));
        aim_subtree(joints, count, top, next, limbs[i].direction);
    }
    return EM_OK;
}

/* Puts the root where the lowest foot joint stands on the floor (y = 0). */
static void
stand_on_floor(struct humanoid_joint *joints, int count, double (*rest)[3])
{
    for (int j = 0; j < count; ++j)
        for (int k = 0; k < 3; ++k)
            rest[j][k] = joints[j].offset_m[k] +
                         (joints[j].parent >= 0 ? rest[joints[j].parent][k] : 0.0);
    double lowest = (double)INFINITY;
    for (int j = 0; j < count; ++j) {
        const enum sk_bone b = joints[j].bone;
        if (b == SK_LEFT_FOOT || b == SK_RIGHT_FOOT || b == SK_LEFT_TOES ||
            b == SK_RIGHT_TOES || b == SK_LEFT_TOES_END || b == SK_RIGHT_TOES_END)
            lowest = fmin(lowest, rest[j][1] - rest[0][1]);
    }
    joints[0].offset_m[0] = 0.0;
    joints[0].offset_m[1] = isfinite(lowest) ? -lowest : 0.0;
    joints[0].offset_m[2] = 0.0;
}

static enum em_result
build_skeleton(const struct humanoid_joint *joints, int count, const char *source,
               struct sk_skeleton *out, struct em_error *err)
{
    struct sk_joint_desc *desc = calloc((size_t)count, sizeof *desc);
    if (!desc)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", source);
    for (int j = 0; j < count; ++j) {
        desc[j].name = sk_bone_name(joints[j].bone);
        desc[j].parent = joints[j].parent >= 0 ? sk_bone_name(joints[joints[j].parent].bone)
                                               : NULL;
        for (int k = 0; k < 3; ++k)
            desc[j].offset_m[k] = (float)joints[j].offset_m[k];
    }
    const enum em_result r = sk_skeleton_create(desc, count, source, out, err);
    free(desc);
    return r;
}

static enum em_result
copy_default_limits(struct sk_skeleton *sk, const char *source, struct em_error *err)
{
    char path[1024];
    if (!u_path_find_data("config/humanoid.json", path, sizeof path))
        return em_fail(err, EM_ERROR_IO,
                       "%s: cannot find the default humanoid config/humanoid.json for the joint "
                       "limits (tried %s)",
                       source, path);
    struct sk_skeleton limits;
    const enum em_result r = sk_skeleton_load_json(path, &limits, err);
    if (r != EM_OK)
        return r;
    sk_skeleton_copy_limits(&limits, sk);
    sk_skeleton_fini(&limits);
    return EM_OK;
}

enum em_result
st_bvh_to_humanoid_with_limits(const struct st_bvh *bvh, enum sk_name_map map,
                               double unit_scale, const struct sk_skeleton *limits_from,
                               const char *source, struct sk_skeleton *out_skeleton,
                               struct em_error *err)
{
    memset(out_skeleton, 0, sizeof *out_skeleton);
    if (!source)
        source = "bvh";
    const enum em_result scale_ok = st_check_unit_scale(unit_scale, source, err);
    if (scale_ok != EM_OK)
        return scale_ok;
    const size_t n = (size_t)(bvh->joint_count > 0 ? bvh->joint_count : 1);
    enum sk_bone *bone = malloc(n * sizeof *bone);
    int *humanoid_of = malloc(n * sizeof *humanoid_of);
    struct humanoid_joint *joints = malloc(n * sizeof *joints);
    double(*rest)[3] = malloc(n * sizeof *rest);
    enum em_result r = EM_OK;
    if (!bone || !humanoid_of || !joints || !rest) {
        r = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", source);
        goto done;
    }
    int bone_joint[SK_BONE_COUNT];
    int count = 0;
    r = map_bones(bvh, map, source, bone, bone_joint, err);
    if (r == EM_OK)
        r = check_required(bone_joint, map, source, err);
    if (r == EM_OK)
        r = collect_joints(bvh, bone, unit_scale, source, joints, &count, humanoid_of, err);
    if (r == EM_OK && joints[0].bone != SK_HIPS)
        r = em_fail(err, EM_ERROR_PARSE, "%s: joint \"%s\" (humanoid \"%s\") is above the hips",
                    source, bvh->joints[joints[0].bvh_joint].name, sk_bone_name(joints[0].bone));
    if (r == EM_OK)
        split_zero_bones(joints, count);
    if (r == EM_OK)
        r = make_rest_pose_humanoid(joints, count, source, err);
    if (r != EM_OK)
        goto done;
    stand_on_floor(joints, count, rest);
    r = build_skeleton(joints, count, source, out_skeleton, err);
    if (r != EM_OK)
        goto done;
    if (limits_from)
        sk_skeleton_copy_limits(limits_from, out_skeleton);
    else
        r = copy_default_limits(out_skeleton, source, err);
    if (r == EM_OK)
        r = sk_humanoid_validate(out_skeleton, source, err);
    if (r != EM_OK)
        sk_skeleton_fini(out_skeleton);
done:
    free(bone);
    free(humanoid_of);
    free(joints);
    free(rest);
    return r;
}

enum em_result
st_bvh_to_humanoid(const struct st_bvh *bvh, enum sk_name_map map, double unit_scale,
                   const char *source, struct sk_skeleton *out_skeleton, struct em_error *err)
{
    return st_bvh_to_humanoid_with_limits(bvh, map, unit_scale, NULL, source, out_skeleton,
                                          err);
}
