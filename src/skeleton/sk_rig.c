/*
 * Finding the humanoid bones in a rig's node tree (skeleton.h, sk_rig_find_bones): from
 * the file's extension, the player's bone map, the one name map (sk_names.c) and, where
 * names fail, the skeleton's shape. Also the left/right check from the rest pose and the
 * refusal that says what was found, what is missing and which names looked closest.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embody/skeleton.h"

/* Human proportions as fractions of standing height (Drillis and Contini 1966): upper
 * arm, forearm, thigh, shin, and the ankle's height above the floor. */
#define UPPER_ARM_RATIO 0.186f
#define FOREARM_RATIO 0.146f
#define THIGH_RATIO 0.245f
#define SHIN_RATIO 0.246f
#define ANKLE_RATIO 0.039f

const char *
sk_rig_found_label(enum sk_rig_found found)
{
    switch (found) {
    case SK_RIG_BY_EXTENSION: return "by the file's humanoid extension";
    case SK_RIG_BY_BONE_MAP: return "by the bone map";
    case SK_RIG_BY_NAME: return "by name";
    case SK_RIG_BY_SHAPE: return "guessed from the skeleton's shape";
    case SK_RIG_ABSENT: break;
    }
    return "absent";
}

struct rig {
    const struct sk_rig_desc *d;
    struct sk_rig_map *map;
    bool *used;         /* per node: some bone's */
    int *child_count;   /* per node */
};

static bool
is_below(const struct sk_rig_node *nodes, int node, int ancestor)
{
    for (int n = nodes[node].parent; n >= 0; n = nodes[n].parent)
        if (n == ancestor)
            return true;
    return false;
}

/* The deepest node that is `a` or above it and `b` or above it, or -1. */
static int
common_ancestor(const struct sk_rig_node *nodes, int a, int b)
{
    for (int n = a; n >= 0; n = nodes[n].parent)
        if (n == b || is_below(nodes, b, n))
            return n;
    return -1;
}

static void
assign(struct rig *R, enum sk_bone b, int node, enum sk_rig_found how)
{
    if (R->map->node[b] >= 0)
        R->used[R->map->node[b]] = false;
    R->map->node[b] = node;
    R->map->found[b] = how;
    R->used[node] = true;
}

static int
find_node(const struct sk_rig_desc *d, const char *name)
{
    for (int i = 0; i < d->node_count; ++i)
        if (d->nodes[i].name && strcmp(d->nodes[i].name, name) == 0)
            return i;
    return -1;
}

static enum em_result
apply_bone_map(struct rig *R, struct em_error *err)
{
    const struct sk_bone_map *m = R->d->bone_map;
    for (int b = 0; b < SK_HEAD_TOP; ++b) {
        if (!m->node[b][0])
            continue;
        const int node = find_node(R->d, m->node[b]);
        if (node < 0)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "%s: \"%s\": no node called \"%s\" in %s (--print-rig lists the "
                           "rig's bones as found)",
                           m->source, sk_bone_name((enum sk_bone)b), m->node[b], R->d->source);
        assign(R, (enum sk_bone)b, node, SK_RIG_BY_BONE_MAP);
    }
    return EM_OK;
}

static void
find_by_name(struct rig *R)
{
    const struct sk_rig_desc *d = R->d;
    const char **names = calloc((size_t)d->node_count + 1, sizeof *names);
    if (names) {
        for (int i = 0; i < d->node_count; ++i)
            names[i] = d->nodes[i].name ? d->nodes[i].name : "";
        R->map->names = sk_name_map_guess(names, d->node_count);
        free(names);
    }
    for (int i = 0; i < d->node_count; ++i) {
        if (R->used[i] || !d->nodes[i].name)
            continue;
        const enum sk_bone b = sk_bone_from_node_name_in(R->map->names, d->nodes[i].name);
        if (b != SK_BONE_NONE && R->map->node[b] < 0)
            assign(R, b, i, SK_RIG_BY_NAME);
    }
}

/* MMD: 下半身 (hips) and 上半身 (spine) hang side by side from a centre bone. The hips are
 * then that common parent, which both chains hang from. */
static void
lift_hips_above_spine(struct rig *R)
{
    const int hips = R->map->node[SK_HIPS], spine = R->map->node[SK_SPINE];
    if (hips < 0 || spine < 0 || is_below(R->d->nodes, spine, hips) ||
        R->map->found[SK_HIPS] != SK_RIG_BY_NAME)
        return;
    const int top = common_ancestor(R->d->nodes, hips, spine);
    if (top < 0 || R->used[top])
        return;
    assign(R, SK_HIPS, top, SK_RIG_BY_NAME);
    R->map->hips_moved = true;
}

/* ---- The skeleton's shape ---- */

struct shape {
    float floor, top, height, centre_x;
    int head_end, arm_end[2], leg_end[2]; /* [0] at +X, [1] at -X */
};

/* Nodes from below `ancestor` down to `node` (inclusive), top first; the count, or -1. */
static int
chain(const struct sk_rig_node *nodes, int ancestor, int node, int *out, int max)
{
    int n = 0;
    for (int i = node; i != ancestor; i = nodes[i].parent) {
        if (i < 0 || n == max)
            return -1;
        out[n++] = i;
    }
    for (int i = 0; i < n / 2; ++i) {
        const int t = out[i];
        out[i] = out[n - 1 - i];
        out[n - 1 - i] = t;
    }
    return n;
}

static float
node_distance(const struct sk_rig_node *nodes, int a, int b)
{
    const float *p = nodes[a].position, *q = nodes[b].position;
    return sqrtf((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) +
                 (p[2] - q[2]) * (p[2] - q[2]));
}

static bool
find_ends(const struct rig *R, struct shape *s)
{
    const struct sk_rig_node *nodes = R->d->nodes;
    const int n = R->d->node_count;
    s->floor = INFINITY;
    s->top = -INFINITY;
    s->head_end = -1;
    for (int i = 0; i < n; ++i) {
        s->floor = fminf(s->floor, nodes[i].position[1]);
        if (R->child_count[i] == 0 && nodes[i].position[1] > s->top) {
            s->top = nodes[i].position[1];
            s->head_end = i;
        }
    }
    s->height = s->top - s->floor;
    if (s->head_end < 0 || !(s->height > 0.0f))
        return false;
    s->centre_x = nodes[s->head_end].position[0];
    const float margin = 0.05f * s->height;
    float far[2] = {0.0f, 0.0f}, low[2] = {INFINITY, INFINITY};
    s->arm_end[0] = s->arm_end[1] = s->leg_end[0] = s->leg_end[1] = -1;
    for (int i = 0; i < n; ++i) {
        if (R->child_count[i] != 0)
            continue;
        const float dx = nodes[i].position[0] - s->centre_x;
        const int side = dx > 0.0f ? 0 : 1;
        if (fabsf(dx) < margin)
            continue;
        if (fabsf(dx) > far[side]) {
            far[side] = fabsf(dx);
            s->arm_end[side] = i;
        }
        if (nodes[i].position[1] < low[side]) {
            low[side] = nodes[i].position[1];
            s->leg_end[side] = i;
        }
    }
    for (int k = 0; k < 2; ++k)
        if (s->arm_end[k] < 0 || s->leg_end[k] < 0 || s->arm_end[k] == s->leg_end[k])
            return false;
    return true;
}

/* Picks a < b < c along `c_nodes` whose two segments best match `first` and `second`
 * (fractions of the height), plus, with `ankle`, c at the ankle's height. */
static bool
pick_limb(const struct rig *R, const struct shape *s, const int *path, int n, float first,
          float second, bool ankle, int out[3])
{
    const struct sk_rig_node *nodes = R->d->nodes;
    float best = INFINITY;
    for (int a = 0; a < n; ++a)
        for (int b = a + 1; b < n; ++b)
            for (int c = b + 1; c < n; ++c) {
                const float e1 = node_distance(nodes, path[a], path[b]) / s->height - first;
                const float e2 = node_distance(nodes, path[b], path[c]) / s->height - second;
                float cost = e1 * e1 + e2 * e2;
                if (ankle) {
                    const float e3 =
                        (nodes[path[c]].position[1] - s->floor) / s->height - ANKLE_RATIO;
                    cost += e3 * e3;
                }
                if (cost < best) {
                    best = cost;
                    out[0] = a, out[1] = b, out[2] = c;
                }
            }
    return best < INFINITY;
}

static void
guess(struct rig *R, enum sk_bone b, int node)
{
    if (R->map->node[b] < 0 && !R->used[node])
        assign(R, b, node, SK_RIG_BY_SHAPE);
}

#define CHAIN_MAX 64

/* Fills the missing bones from the skeleton's shape; false when it is no humanoid's. */
static bool
find_by_shape(struct rig *R)
{
    const struct sk_rig_node *nodes = R->d->nodes;
    struct shape s;
    if (!find_ends(R, &s))
        return false;
    const int pelvis = common_ancestor(nodes, s.leg_end[0], s.leg_end[1]);
    const int hips = pelvis < 0 ? -1 : common_ancestor(nodes, pelvis, s.head_end);
    const int upper = common_ancestor(nodes, s.arm_end[0], s.arm_end[1]);
    if (hips < 0 || upper < 0 || upper == hips || !is_below(nodes, upper, hips) ||
        !is_below(nodes, s.head_end, upper))
        return false;
    int torso[CHAIN_MAX], head[CHAIN_MAX], arm[2][CHAIN_MAX], leg[2][CHAIN_MAX];
    const int nt = chain(nodes, hips, upper, torso, CHAIN_MAX);
    const int nh = chain(nodes, upper, s.head_end, head, CHAIN_MAX);
    int na[2], nl[2], pa[2][3], pl[2][3];
    for (int k = 0; k < 2; ++k) {
        na[k] = chain(nodes, upper, s.arm_end[k], arm[k], CHAIN_MAX);
        nl[k] = chain(nodes, hips, s.leg_end[k], leg[k], CHAIN_MAX);
        if (na[k] < 3 || nl[k] < 3 ||
            !pick_limb(R, &s, arm[k], na[k], UPPER_ARM_RATIO, FOREARM_RATIO, false, pa[k]) ||
            !pick_limb(R, &s, leg[k], nl[k], THIGH_RATIO, SHIN_RATIO, true, pl[k]))
            return false;
    }
    if (nt < 1 || nh < 1)
        return false;
    guess(R, SK_HIPS, hips);
    guess(R, SK_SPINE, torso[0]);
    if (nt == 2)
        guess(R, SK_CHEST, torso[1]);
    else if (nt >= 3) {
        guess(R, SK_CHEST, torso[nt - 2]);
        guess(R, SK_UPPER_CHEST, torso[nt - 1]);
    }
    /* The head joint (skull base) at its usual fraction of the height. */
    const float head_y = s.floor + SK_HEAD_JOINT_HEIGHT_RATIO * s.height;
    int h = 0;
    for (int i = 1; i < nh; ++i)
        if (fabsf(nodes[head[i]].position[1] - head_y) < fabsf(nodes[head[h]].position[1] - head_y))
            h = i;
    guess(R, SK_HEAD, head[h]);
    if (h >= 1)
        guess(R, SK_NECK, head[h - 1]);
    for (int k = 0; k < 2; ++k) {
        const enum sk_bone sh = k ? SK_RIGHT_SHOULDER : SK_LEFT_SHOULDER;
        const enum sk_bone ua = k ? SK_RIGHT_UPPER_ARM : SK_LEFT_UPPER_ARM;
        if (pa[k][0] >= 1)
            guess(R, sh, arm[k][pa[k][0] - 1]);
        guess(R, ua, arm[k][pa[k][0]]);
        guess(R, k ? SK_RIGHT_LOWER_ARM : SK_LEFT_LOWER_ARM, arm[k][pa[k][1]]);
        guess(R, k ? SK_RIGHT_HAND : SK_LEFT_HAND, arm[k][pa[k][2]]);
        guess(R, k ? SK_RIGHT_UPPER_LEG : SK_LEFT_UPPER_LEG, leg[k][pl[k][0]]);
        guess(R, k ? SK_RIGHT_LOWER_LEG : SK_LEFT_LOWER_LEG, leg[k][pl[k][1]]);
        guess(R, k ? SK_RIGHT_FOOT : SK_LEFT_FOOT, leg[k][pl[k][2]]);
        if (pl[k][2] + 2 < nl[k]) /* a toe joint, with an end beyond it */
            guess(R, k ? SK_RIGHT_TOES : SK_LEFT_TOES, leg[k][pl[k][2] + 1]);
    }
    return true;
}

/* ---- Left and right ---- */

/* +1 when the feet point to +Z (toes in front of the ankles), -1 to -Z, 0 unknown. */
static int
facing_from_feet(const struct rig *R)
{
    float dz = 0.0f;
    int n = 0;
    for (int k = 0; k < 2; ++k) {
        const int foot = R->map->node[k ? SK_RIGHT_FOOT : SK_LEFT_FOOT];
        const int toes = R->map->node[k ? SK_RIGHT_TOES : SK_LEFT_TOES];
        if (foot < 0 || toes < 0)
            continue;
        dz += R->d->nodes[toes].position[2] - R->d->nodes[foot].position[2];
        ++n;
    }
    if (n == 0 || fabsf(dz) < 1e-6f)
        return 0;
    return dz > 0.0f ? 1 : -1;
}

/* A figure facing +Z has its left at +X. Names that say left on the other side are an
 * exporter's mirror: the sides are swapped. Without toes the facing is unknown, and the
 * names are believed (the loader then turns the model to put their left at +X). */
static void
check_sides(struct rig *R)
{
    struct sk_rig_map *m = R->map;
    const int l = m->node[SK_LEFT_UPPER_ARM], r = m->node[SK_RIGHT_UPPER_ARM];
    if (l < 0 || r < 0 || m->found[SK_LEFT_UPPER_ARM] == SK_RIG_BY_EXTENSION ||
        m->found[SK_LEFT_UPPER_ARM] == SK_RIG_BY_BONE_MAP)
        return;
    const int facing = facing_from_feet(R);
    const float dx = R->d->nodes[l].position[0] - R->d->nodes[r].position[0];
    if (facing == 0 || dx * (float)facing >= 0.0f)
        return;
    for (int b = 0; b < SK_HEAD_TOP; ++b) {
        const enum sk_bone o = sk_bone_mirror((enum sk_bone)b);
        if (o <= (enum sk_bone)b || m->found[b] == SK_RIG_BY_BONE_MAP ||
            m->found[o] == SK_RIG_BY_BONE_MAP)
            continue;
        const int node = m->node[b];
        const enum sk_rig_found how = m->found[b];
        m->node[b] = m->node[o];
        m->found[b] = m->found[o];
        m->node[o] = node;
        m->found[o] = how;
    }
    m->sides_swapped = true;
}

/* ---- The refusal ---- */

/* Length of the longest common substring of two folded names. */
static size_t
common_run(const char *a, const char *b)
{
    size_t best = 0;
    for (size_t i = 0; a[i]; ++i)
        for (size_t j = 0; b[j]; ++j) {
            size_t k = 0;
            while (a[i + k] && a[i + k] == b[j + k])
                ++k;
            if (k > best)
                best = k;
        }
    return best;
}

/* How much node `name` looks like some name of `bone` in any convention. */
static size_t
likeness(const char *name, enum sk_bone bone)
{
    char a[SK_NAME_MAX * 2], b[SK_NAME_MAX * 2];
    sk_name_fold(name, a, sizeof a);
    size_t best = 0;
    for (int m = 0; m < SK_NAMES_COUNT; ++m) {
        const char *spelling = sk_mapped_name((enum sk_name_map)m, bone);
        if (!spelling)
            continue;
        sk_name_fold(spelling, b, sizeof b);
        const size_t run = common_run(a, b);
        if (run > best)
            best = run;
    }
    return best;
}

static void
append(char *buf, size_t size, const char *fmt, const char *a, const char *b)
{
    const size_t n = strlen(buf);
    if (n + 1 < size)
        snprintf(buf + n, size - n, fmt, a, b);
}

static enum em_result
refuse(const struct rig *R, struct em_error *err)
{
    const struct sk_rig_desc *d = R->d;
    char found[300] = "", missing[300] = "", closest[300] = "";
    for (int b = 0; b < SK_HEAD_TOP; ++b) {
        const char *name = sk_bone_name((enum sk_bone)b);
        if (R->map->node[b] >= 0)
            append(found, sizeof found, "%s%s", found[0] ? ", " : "", name);
        else if (sk_bone_is_needed_in_file((enum sk_bone)b))
            append(missing, sizeof missing, "%s%s", missing[0] ? ", " : "", name);
    }
    /* The unused names most like a missing bone's, best first (at most 5): each node's
     * likeness is measured once (a refused file may have thousands of nodes). */
    size_t *like = calloc((size_t)d->node_count + 1, sizeof *like);
    for (int i = 0; like && i < d->node_count; ++i) {
        if (R->used[i] || !d->nodes[i].name)
            continue;
        for (int b = 0; b < SK_HEAD_TOP; ++b)
            if (R->map->node[b] < 0 && sk_bone_is_needed_in_file((enum sk_bone)b)) {
                const size_t l = likeness(d->nodes[i].name, (enum sk_bone)b);
                like[i] = l > like[i] ? l : like[i];
            }
    }
    for (int shown = 0; like && shown < 5; ++shown) {
        int best_node = -1;
        size_t best = 2; /* a run of 3 letters at least */
        for (int i = 0; i < d->node_count; ++i)
            if (like[i] > best) {
                best = like[i];
                best_node = i;
            }
        if (best_node < 0)
            break;
        like[best_node] = 0;
        append(closest, sizeof closest, "%s\"%s\"", closest[0] ? ", " : "",
               d->nodes[best_node].name);
    }
    free(like);
    /* The most useful first: a message is cut at EM_ERROR_MESSAGE_MAX. */
    return em_fail(err, EM_ERROR_PARSE,
                   "%s: no humanoid skeleton embody can read: missing %s; closest names: %s; "
                   "name their nodes in a bone map (JSON, humanoid bone -> node name) and pass "
                   "--bone-map FILE.json. Found (names read as %s): %s",
                   d->source, missing, closest[0] ? closest : "none",
                   sk_name_map_label(R->map->names), found[0] ? found : "none");
}

enum em_result
sk_rig_find_bones(const struct sk_rig_desc *desc, struct sk_rig_map *out_map,
                  struct em_error *err)
{
    struct sk_rig_map *m = out_map;
    memset(m, 0, sizeof *m);
    for (int b = 0; b < SK_BONE_COUNT; ++b)
        m->node[b] = -1;
    m->names = SK_NAMES_VRM;
    if (desc->node_count <= 0)
        return em_fail(err, EM_ERROR_PARSE, "%s: no nodes: no skeleton", desc->source);
    struct rig R = {.d = desc, .map = m};
    R.used = calloc((size_t)desc->node_count, sizeof *R.used);
    R.child_count = calloc((size_t)desc->node_count, sizeof *R.child_count);
    enum em_result r = EM_OK;
    if (!R.used || !R.child_count) {
        r = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", desc->source);
        goto out;
    }
    for (int i = 0; i < desc->node_count; ++i) {
        const int p = desc->nodes[i].parent;
        assert(p < i);
        if (p >= 0)
            ++R.child_count[p];
    }
    for (int b = 0; desc->known_node && b < SK_HEAD_TOP; ++b)
        if (desc->known_node[b] >= 0 && desc->known_node[b] < desc->node_count)
            assign(&R, (enum sk_bone)b, desc->known_node[b], SK_RIG_BY_EXTENSION);
    if (desc->bone_map && (r = apply_bone_map(&R, err)) != EM_OK)
        goto out;
    if (!desc->known_node) {
        find_by_name(&R);
        lift_hips_above_spine(&R);
        bool complete = true;
        for (int b = 0; b < SK_HEAD_TOP; ++b)
            complete &= !sk_bone_is_needed_in_file((enum sk_bone)b) || m->node[b] >= 0;
        if (!complete)
            find_by_shape(&R);
        check_sides(&R);
    }
    for (int b = 0; b < SK_HEAD_TOP; ++b)
        if (sk_bone_is_needed_in_file((enum sk_bone)b) && m->node[b] < 0) {
            r = refuse(&R, err);
            break;
        }
out:
    free(R.used);
    free(R.child_count);
    return r;
}
