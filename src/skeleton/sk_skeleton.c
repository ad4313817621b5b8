/*
 * Building, checking and scaling skeletons (include/embody/skeleton.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embody/m_math.h"
#include "embody/skeleton.h"
#include "skeleton/sk_humanoid_tree.h"

#define MIN_BONE_LENGTH_M 1e-6f

static enum em_result
alloc_arrays(struct sk_skeleton *sk, int count)
{
    memset(sk, 0, sizeof *sk);
    const size_t n = (size_t)count;
    sk->name = calloc(n, sizeof *sk->name);
    sk->parent = calloc(n, sizeof *sk->parent);
    sk->offset_m = calloc(n, sizeof *sk->offset_m);
    sk->limit = calloc(n, sizeof *sk->limit);
    sk->primary_child = calloc(n, sizeof *sk->primary_child);
    sk->bone = calloc(n, sizeof *sk->bone);
    sk->rest_position_m = calloc(n, sizeof *sk->rest_position_m);
    sk->length_m = calloc(n, sizeof *sk->length_m);
    sk->child_count = calloc(n, sizeof *sk->child_count);
    sk->joint_count = count;
    if (!sk->name || !sk->parent || !sk->offset_m || !sk->limit || !sk->primary_child ||
        !sk->bone || !sk->rest_position_m || !sk->length_m || !sk->child_count) {
        sk_skeleton_fini(sk);
        return EM_ERROR_OUT_OF_MEMORY;
    }
    for (int b = 0; b < SK_BONE_COUNT; ++b)
        sk->bone_joint[b] = -1;
    return EM_OK;
}

void
sk_skeleton_fini(struct sk_skeleton *sk)
{
    free(sk->name);
    free(sk->parent);
    free(sk->offset_m);
    free(sk->limit);
    free(sk->primary_child);
    free(sk->bone);
    free(sk->rest_position_m);
    free(sk->length_m);
    free(sk->child_count);
    memset(sk, 0, sizeof *sk);
}

enum em_result
sk_skeleton_copy(const struct sk_skeleton *src, struct sk_skeleton *out)
{
    const enum em_result r = alloc_arrays(out, src->joint_count);
    if (r != EM_OK)
        return r;
    const size_t n = (size_t)src->joint_count;
    memcpy(out->name, src->name, n * sizeof *src->name);
    memcpy(out->parent, src->parent, n * sizeof *src->parent);
    memcpy(out->offset_m, src->offset_m, n * sizeof *src->offset_m);
    memcpy(out->limit, src->limit, n * sizeof *src->limit);
    memcpy(out->primary_child, src->primary_child, n * sizeof *src->primary_child);
    memcpy(out->bone, src->bone, n * sizeof *src->bone);
    memcpy(out->rest_position_m, src->rest_position_m, n * sizeof *src->rest_position_m);
    memcpy(out->length_m, src->length_m, n * sizeof *src->length_m);
    memcpy(out->child_count, src->child_count, n * sizeof *src->child_count);
    memcpy(out->bone_joint, src->bone_joint, sizeof src->bone_joint);
    return EM_OK;
}

int
sk_skeleton_find(const struct sk_skeleton *sk, const char *name)
{
    for (int i = 0; i < sk->joint_count; ++i)
        if (strcmp(sk->name[i], name) == 0)
            return i;
    return -1;
}

/* Main-path bones win the primary-child choice: the spine leads up, a hand to its end. */
static int
primary_rank(enum sk_bone bone)
{
    switch (bone) {
    case SK_SPINE:
    case SK_CHEST:
    case SK_UPPER_CHEST:
    case SK_NECK:
    case SK_HEAD:
    case SK_HEAD_TOP:
    case SK_LEFT_HAND_END:
    case SK_RIGHT_HAND_END:
    case SK_LEFT_TOES_END:
    case SK_RIGHT_TOES_END: return 1;
    default: return 0;
    }
}

void
sk_skeleton_update_derived(struct sk_skeleton *sk)
{
    for (int i = 0; i < sk->joint_count; ++i) {
        sk->child_count[i] = 0;
        sk->primary_child[i] = -1;
    }
    for (int i = 0; i < sk->joint_count; ++i) {
        const int p = sk->parent[i];
        if (p < 0) {
            m_vec3_copy(sk->offset_m[i], sk->rest_position_m[i]);
            sk->length_m[i] = 0.0f;
            continue;
        }
        m_vec3_add(sk->rest_position_m[p], sk->offset_m[i], sk->rest_position_m[i]);
        sk->length_m[i] = m_vec3_length(sk->offset_m[i]);
        sk->child_count[p]++;
        const int cur = sk->primary_child[p];
        if (cur < 0 || primary_rank(sk->bone[i]) > primary_rank(sk->bone[cur]))
            sk->primary_child[p] = i;
    }
}

static enum em_result
check_limit(const struct sk_limit *in, struct sk_limit *out, const char *source,
            const char *joint, struct em_error *err)
{
    *out = *in;
    if (in->kind == SK_LIMIT_NONE)
        return EM_OK;
    if (in->kind != SK_LIMIT_BALL && in->kind != SK_LIMIT_HINGE)
        return em_fail(err, EM_ERROR_PARSE, "%s: joint \"%s\": limit: unknown kind %d", source,
                       joint, (int)in->kind);
    const float len = m_vec3_length(in->axis);
    if (!m_vec3_is_finite(in->axis) || !(len > 1e-6f))
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: joint \"%s\": limit.axis: expected a finite non-zero vector", source,
                       joint);
    m_vec3_scale(in->axis, 1.0f / len, out->axis);
    if (!isfinite(in->min_rad) || !isfinite(in->max_rad) || in->min_rad > in->max_rad ||
        in->min_rad < -M_PI_F - 1e-4f || in->max_rad > M_PI_F + 1e-4f)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: joint \"%s\": limit range: expected min <= max within "
                       "[-180, 180] degrees, got [%g, %g]",
                       source, joint, (double)(in->min_rad * M_RAD_TO_DEG),
                       (double)(in->max_rad * M_RAD_TO_DEG));
    if (in->kind == SK_LIMIT_BALL && !(in->cone_rad > 0.0f && in->cone_rad <= M_PI_F + 1e-4f))
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: joint \"%s\": limit cone: expected an angle in (0, 180] degrees, "
                       "got %g",
                       source, joint, (double)(in->cone_rad * M_RAD_TO_DEG));
    return EM_OK;
}

/* A joint's name and description index, for sorting by name. */
struct name_index {
    const char *name;
    int index;
};

/* Scratch arrays for sk_skeleton_create, `count` entries each. */
struct create_scratch {
    int *parent_of;             /* description index of each joint's parent, -1 for the root */
    struct name_index *by_name; /* sorted by name, then index */
    int *first_child;           /* description order of children, as linked lists */
    int *next_sibling;
    int *order; /* depth-first preorder of description indices */
    int *stack; /* for the traversal, then new index by description index */
};

/* Depth-first preorder from `root`, children in description order, in time linear in
 * the joint count. Returns how many joints were reached. */
static int
depth_first_order(int count, const struct create_scratch *s, int root)
{
    for (int i = 0; i < count; ++i)
        s->first_child[i] = s->next_sibling[i] = -1;
    /* Backwards, so each list comes out in description order. */
    for (int c = count - 1; c >= 0; --c) {
        const int p = s->parent_of[c];
        if (p >= 0) {
            s->next_sibling[c] = s->first_child[p];
            s->first_child[p] = c;
        }
    }
    int n = 0, top = 0;
    s->stack[top++] = root;
    while (top > 0) {
        const int j = s->stack[--top];
        s->order[n++] = j;
        /* Push the children last first, so the first child is visited first: count them,
         * then fill their slots from the top down. */
        int children = 0;
        for (int c = s->first_child[j]; c >= 0; c = s->next_sibling[c])
            children++;
        int slot = top + children;
        for (int c = s->first_child[j]; c >= 0; c = s->next_sibling[c])
            s->stack[--slot] = c;
        top += children;
    }
    return n;
}

static int
compare_names(const void *a, const void *b)
{
    const struct name_index *x = a, *y = b;
    const int c = strcmp(x->name, y->name);
    return c != 0 ? c : (x->index > y->index) - (x->index < y->index);
}

/* Index of the joint called `name`, or -1 (a binary search over `by_name`). */
static int
find_by_name(const struct name_index *by_name, int count, const char *name)
{
    int lo = 0, hi = count - 1;
    while (lo <= hi) {
        const int mid = lo + (hi - lo) / 2;
        const int c = strcmp(by_name[mid].name, name);
        if (c == 0)
            return by_name[mid].index;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

static enum em_result
validate_names(const struct sk_joint_desc *joints, int count, const char *source,
               struct name_index *by_name, struct em_error *err)
{
    for (int i = 0; i < count; ++i) {
        const char *name = joints[i].name;
        if (!name || !name[0])
            return em_fail(err, EM_ERROR_PARSE, "%s: joint %d: empty name", source, i);
        if (strlen(name) >= SK_NAME_MAX)
            return em_fail(err, EM_ERROR_PARSE, "%s: joint \"%s\": name longer than %d bytes",
                           source, name, SK_NAME_MAX - 1);
        if (!m_vec3_is_finite(joints[i].offset_m))
            return em_fail(err, EM_ERROR_PARSE,
                           "%s: joint \"%s\": offset: expected finite numbers", source, name);
        by_name[i] = (struct name_index){name, i};
    }
    /* Sorted by name (then index), a repeated name sits next to its first use. */
    qsort(by_name, (size_t)count, sizeof *by_name, compare_names);
    for (int k = 1; k < count; ++k)
        if (strcmp(by_name[k - 1].name, by_name[k].name) == 0)
            return em_fail(err, EM_ERROR_PARSE, "%s: joint \"%s\" is defined twice", source,
                           by_name[k].name);
    return EM_OK;
}

static enum em_result
validate_descs(const struct sk_joint_desc *joints, int count, const char *source,
               const struct create_scratch *s, int *out_root, struct em_error *err)
{
    if (count <= 0)
        return em_fail(err, EM_ERROR_PARSE, "%s: no joints", source);
    if (count > SK_MAX_JOINTS)
        return em_fail(err, EM_ERROR_LIMIT,
                       "%s: %d joints, at most %d are supported (a humanoid avatar has 20 to "
                       "100)",
                       source, count, SK_MAX_JOINTS);
    enum em_result r = validate_names(joints, count, source, s->by_name, err);
    if (r != EM_OK)
        return r;
    int root = -1;
    for (int i = 0; i < count; ++i) {
        s->parent_of[i] = -1;
        if (!joints[i].parent) {
            if (root >= 0)
                return em_fail(err, EM_ERROR_PARSE,
                               "%s: joints \"%s\" and \"%s\" both have no parent; expected "
                               "exactly one root",
                               source, joints[root].name, joints[i].name);
            root = i;
            continue;
        }
        s->parent_of[i] = find_by_name(s->by_name, count, joints[i].parent);
        if (s->parent_of[i] < 0)
            return em_fail(err, EM_ERROR_PARSE, "%s: joint \"%s\": unknown parent \"%s\"",
                           source, joints[i].name, joints[i].parent);
        if (s->parent_of[i] == i)
            return em_fail(err, EM_ERROR_PARSE, "%s: joint \"%s\" is its own parent", source,
                           joints[i].name);
        if (m_vec3_length(joints[i].offset_m) < MIN_BONE_LENGTH_M)
            return em_fail(err, EM_ERROR_PARSE,
                           "%s: joint \"%s\": zero-length bone (offset from \"%s\" is under "
                           "1e-6 m)",
                           source, joints[i].name, joints[i].parent);
    }
    if (root < 0)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: every joint has a parent, so the hierarchy has a cycle; expected "
                       "one root with no parent",
                       source);
    *out_root = root;
    return EM_OK;
}

/* The first joint (in description order) the traversal did not reach. */
static int
first_unreached(int count, int reached, const struct create_scratch *s)
{
    int *seen = s->first_child; /* free after the traversal */
    for (int i = 0; i < count; ++i)
        seen[i] = 0;
    for (int k = 0; k < reached; ++k)
        seen[s->order[k]] = 1;
    for (int i = 0; i < count; ++i)
        if (!seen[i])
            return i;
    return 0;
}

enum em_result
sk_skeleton_create(const struct sk_joint_desc *joints, int count, const char *source,
                   struct sk_skeleton *out, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    if (!source)
        source = "skeleton";
    if (count > SK_MAX_JOINTS) /* before allocating for them */
        return em_fail(err, EM_ERROR_LIMIT,
                       "%s: %d joints, at most %d are supported (a humanoid avatar has 20 to "
                       "100)",
                       source, count, SK_MAX_JOINTS);
    const size_t n_alloc = (size_t)(count > 0 ? count : 1);
    int *scratch = malloc(5 * n_alloc * sizeof *scratch);
    struct name_index *by_name = malloc(n_alloc * sizeof *by_name);
    if (!scratch || !by_name) {
        free(scratch);
        free(by_name);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", source);
    }
    const struct create_scratch s = {
        .parent_of = scratch,
        .by_name = by_name,
        .first_child = scratch + n_alloc,
        .next_sibling = scratch + 2 * n_alloc,
        .order = scratch + 3 * n_alloc,
        .stack = scratch + 4 * n_alloc,
    };
    int root = -1;
    enum em_result r = validate_descs(joints, count, source, &s, &root, err);
    if (r != EM_OK)
        goto done;
    const int reached = depth_first_order(count, &s, root);
    if (reached != count) {
        /* Some joint never leads back to the root: it is on a cycle or below one. */
        r = em_fail(err, EM_ERROR_PARSE,
                    "%s: joint \"%s\" does not lead back to the root \"%s\": its parents form "
                    "a cycle",
                    source, joints[first_unreached(count, reached, &s)].name, joints[root].name);
        goto done;
    }
    r = alloc_arrays(out, count);
    if (r != EM_OK) {
        em_fail(err, r, "%s: out of memory", source);
        goto done;
    }
    /* new_index[old] lives in `stack`, free now. */
    int *new_index = s.stack;
    for (int n = 0; n < count; ++n)
        new_index[s.order[n]] = n;
    for (int n = 0; n < count; ++n) {
        const int old = s.order[n];
        const struct sk_joint_desc *d = &joints[old];
        strcpy(out->name[n], d->name);
        out->parent[n] = s.parent_of[old] < 0 ? -1 : new_index[s.parent_of[old]];
        m_vec3_copy(d->offset_m, out->offset_m[n]);
        r = check_limit(&d->limit, &out->limit[n], source, d->name, err);
        if (r != EM_OK) {
            sk_skeleton_fini(out);
            goto done;
        }
        const enum sk_bone bone = sk_bone_from_name(d->name);
        out->bone[n] = bone;
        if (bone != SK_BONE_NONE)
            out->bone_joint[bone] = n;
    }
    sk_skeleton_update_derived(out);
done:
    free(scratch);
    free(by_name);
    return r;
}

/* Whether `bone`'s nearest humanoid ancestor in `sk` is its parent in the humanoid's tree
 * (sk_humanoid_tree.h) or an optional bone between them (upperChest between the chest and
 * the neck or shoulders). `out_want` gets that parent: the nearest required ancestor. */
static bool
nests_as_humanoid(const struct sk_skeleton *sk, enum sk_bone bone, enum sk_bone *out_want)
{
    const int j = sk->bone_joint[bone];
    int a = sk->parent[j];
    while (a >= 0 && sk->bone[a] == SK_BONE_NONE)
        a = sk->parent[a];
    bool ok = false;
    enum sk_bone want = sk_humanoid_parent(bone);
    for (; want != SK_BONE_NONE; want = sk_humanoid_parent(want)) {
        ok |= a >= 0 && sk->bone[a] == want;
        if (sk_bone_is_required(want))
            break;
    }
    *out_want = want;
    return ok;
}

enum em_result
sk_humanoid_validate(const struct sk_skeleton *sk, const char *source, struct em_error *err)
{
    if (!source)
        source = "skeleton";
    for (int b = 0; b < SK_BONE_COUNT; ++b)
        if (sk_bone_is_required((enum sk_bone)b) && sk->bone_joint[b] < 0)
            return em_fail(err, EM_ERROR_PARSE, "%s: missing the humanoid joint \"%s\"", source,
                           sk_bone_name((enum sk_bone)b));
    for (int b = 0; b < SK_BONE_COUNT; ++b) {
        enum sk_bone want = SK_BONE_NONE;
        if (b != SK_HIPS && sk_bone_is_required((enum sk_bone)b) &&
            !nests_as_humanoid(sk, (enum sk_bone)b, &want))
            return em_fail(err, EM_ERROR_PARSE, "%s: joint \"%s\" must be below \"%s\"", source,
                           sk_bone_name((enum sk_bone)b), sk_bone_name(want));
    }
    if (sk->bone_joint[SK_HIPS] != 0)
        return em_fail(err, EM_ERROR_PARSE, "%s: \"hips\" must be the root", source);
    return EM_OK;
}

/* A limb segment, measured as the offset of the joint at its far end, and its usual
 * share of standing height (Drillis and Contini 1966). */
struct segment_share {
    enum sk_bone far_end;
    const char *name;
    float share;
};

static const struct segment_share k_segments[] = {
    {SK_LEFT_LOWER_ARM, "left upper arm", 0.186f}, {SK_RIGHT_LOWER_ARM, "right upper arm", 0.186f},
    {SK_LEFT_HAND, "left forearm", 0.146f},        {SK_RIGHT_HAND, "right forearm", 0.146f},
    {SK_LEFT_LOWER_LEG, "left thigh", 0.245f},     {SK_RIGHT_LOWER_LEG, "right thigh", 0.245f},
    {SK_LEFT_FOOT, "left shin", 0.246f},           {SK_RIGHT_FOOT, "right shin", 0.246f},
};
#define SEGMENT_SHARE_MIN 0.4f
#define SEGMENT_SHARE_MAX 2.5f

static enum em_result
check_offsets_finite(const struct sk_skeleton *sk, const char *source, struct em_error *err)
{
    for (int j = 0; j < sk->joint_count; ++j)
        if (!m_vec3_is_finite(sk->offset_m[j]) || !m_vec3_is_finite(sk->rest_position_m[j]) ||
            !isfinite(sk->length_m[j]))
            return em_fail(err, EM_ERROR_PARSE,
                           "%s: joint \"%s\" is not at a finite place (offset %g %g %g m)", source,
                           sk->name[j], (double)sk->offset_m[j][0], (double)sk->offset_m[j][1],
                           (double)sk->offset_m[j][2]);
    return EM_OK;
}

enum em_result
sk_humanoid_check_size(const struct sk_skeleton *sk, const char *source, struct em_error *err)
{
    if (!source)
        source = "skeleton";
    enum em_result r = check_offsets_finite(sk, source, err);
    if (r != EM_OK)
        return r;
    const float height = sk_humanoid_height(sk);
    if (!isfinite(height) || height < SK_HUMANOID_MIN_HEIGHT_M || height > SK_HUMANOID_MAX_HEIGHT_M)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: the avatar is %.4g m tall; a humanoid is %g to %g m (are the "
                       "lengths in metres, or the unit scale right?)",
                       source, (double)height, (double)SK_HUMANOID_MIN_HEIGHT_M,
                       (double)SK_HUMANOID_MAX_HEIGHT_M);
    for (int j = 1; j < sk->joint_count; ++j)
        if (sk->length_m[j] > height)
            return em_fail(err, EM_ERROR_PARSE,
                           "%s: the bone to joint \"%s\" is %.4g m long, longer than the "
                           "avatar is tall (%.3g m)",
                           source, sk->name[j], (double)sk->length_m[j], (double)height);
    for (size_t i = 0; i < sizeof k_segments / sizeof k_segments[0]; ++i) {
        const struct segment_share *s = &k_segments[i];
        const int j = sk->bone_joint[s->far_end];
        if (j < 0)
            continue;
        const float share = sk->length_m[j] / height;
        if (share < SEGMENT_SHARE_MIN * s->share || share > SEGMENT_SHARE_MAX * s->share)
            return em_fail(err, EM_ERROR_PARSE,
                           "%s: the %s is %.3g m, %.0f%% of the avatar's height of %.3g m; a "
                           "person's is about %.0f%% (%.0f%% to %.0f%% accepted)",
                           source, s->name, (double)sk->length_m[j], 100.0 * (double)share,
                           (double)height, 100.0 * (double)s->share,
                           100.0 * (double)(SEGMENT_SHARE_MIN * s->share),
                           100.0 * (double)(SEGMENT_SHARE_MAX * s->share));
    }
    return EM_OK;
}

static float
rest_y(const struct sk_skeleton *sk, enum sk_bone bone, float fallback)
{
    const int j = sk->bone_joint[bone];
    return j >= 0 ? sk->rest_position_m[j][1] : fallback;
}

float
sk_humanoid_floor_y(const struct sk_skeleton *sk)
{
    float floor_y = INFINITY;
    static const enum sk_bone low[] = {SK_LEFT_FOOT,     SK_RIGHT_FOOT,    SK_LEFT_TOES,
                                       SK_RIGHT_TOES,    SK_LEFT_TOES_END, SK_RIGHT_TOES_END};
    for (size_t i = 0; i < sizeof low / sizeof low[0]; ++i)
        floor_y = fminf(floor_y, rest_y(sk, low[i], INFINITY));
    return isfinite(floor_y) ? floor_y : 0.0f;
}

float
sk_humanoid_height(const struct sk_skeleton *sk)
{
    const float floor_y = sk_humanoid_floor_y(sk);
    const float crown = rest_y(sk, SK_HEAD_TOP, -INFINITY);
    if (isfinite(crown))
        return crown - floor_y;
    /* No crown joint (motion capture rarely has one): estimate it from the skull base,
     * which sits at a fixed fraction of standing height (that of config/humanoid.json,
     * 1.556 m of 1.75 m, close to anthropometric tables). */
    const float head = rest_y(sk, SK_HEAD, -INFINITY);
    return isfinite(head) ? (head - floor_y) / SK_HEAD_JOINT_HEIGHT_RATIO : 0.0f;
}

/* Fingers beyond the knuckles, as a fraction of the palm (wrist to knuckles). */
#define FINGER_TO_PALM_RATIO 0.9f

static float
hand_reach_x(const struct sk_skeleton *sk, enum sk_bone hand, enum sk_bone end)
{
    const int h = sk->bone_joint[hand], e = sk->bone_joint[end];
    if (h < 0)
        return 0.0f;
    if (e < 0)
        return sk->rest_position_m[h][0];
    const float palm = sk->rest_position_m[e][0] - sk->rest_position_m[h][0];
    return sk->rest_position_m[e][0] + FINGER_TO_PALM_RATIO * palm;
}

float
sk_humanoid_arm_span(const struct sk_skeleton *sk)
{
    return hand_reach_x(sk, SK_LEFT_HAND, SK_LEFT_HAND_END) -
           hand_reach_x(sk, SK_RIGHT_HAND, SK_RIGHT_HAND_END);
}

static void
scale_subtree(struct sk_skeleton *sk, int top, float k)
{
    for (int i = top + 1; i < sk->joint_count; ++i) {
        int a = sk->parent[i];
        while (a > top)
            a = sk->parent[a];
        if (a == top)
            m_vec3_scale(sk->offset_m[i], k, sk->offset_m[i]);
    }
}

enum em_result
sk_humanoid_fit(struct sk_skeleton *sk, float height_m, float arm_span_m, struct em_error *err)
{
    if (!isfinite(height_m) || height_m < 0.5f || height_m > 2.8f)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "height: expected 0.5 to 2.8 metres, got %g", (double)height_m);
    const float now = sk_humanoid_height(sk);
    if (!(now > 0.1f))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "skeleton has no measurable height (no head above the feet)");
    const float k = height_m / now;
    for (int i = 0; i < sk->joint_count; ++i)
        m_vec3_scale(sk->offset_m[i], k, sk->offset_m[i]);
    sk_skeleton_update_derived(sk);
    if (!(arm_span_m > 0.0f))
        return EM_OK;
    const int ls = sk->bone_joint[SK_LEFT_UPPER_ARM], rs = sk->bone_joint[SK_RIGHT_UPPER_ARM];
    if (ls < 0 || rs < 0)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "skeleton has no arms to fit a span to");
    const float base = sk->rest_position_m[ls][0] - sk->rest_position_m[rs][0];
    const float arms = sk_humanoid_arm_span(sk) - base;
    const float ka = (arm_span_m - base) / arms;
    if (!isfinite(arm_span_m) || !(arms > 0.0f) || ka < 0.6f || ka > 1.6f)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "arm span: %g m is implausible for a height of %g m (expected about "
                       "%.2f m)",
                       (double)arm_span_m, (double)height_m, (double)sk_humanoid_arm_span(sk));
    /* Scale each arm below its shoulder: the upper arm's offset from the shoulder stays. */
    scale_subtree(sk, ls, ka);
    scale_subtree(sk, rs, ka);
    sk_skeleton_update_derived(sk);
    return EM_OK;
}

void
sk_skeleton_copy_limits(const struct sk_skeleton *from, struct sk_skeleton *to)
{
    for (int i = 0; i < to->joint_count; ++i) {
        const enum sk_bone b = to->bone[i];
        const int src = b == SK_BONE_NONE ? -1 : from->bone_joint[b];
        if (src >= 0)
            to->limit[i] = from->limit[src];
    }
}
