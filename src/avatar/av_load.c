/*
 * Reading an avatar: av_file.c checks the container and finds the bone nodes, assimp
 * (Debian's libassimp, its glTF 2.0 importer) reads nodes, meshes, skins, materials and
 * embedded images, and this file turns that into embody's frame:
 *
 *   - every node's global rest transform (assimp's node tree), turned to face +Z;
 *   - the humanoid skeleton from the bone nodes' rest positions, with the bones embody
 *     needs and VRM calls optional (chest, neck, shoulders) placed between their
 *     neighbours, and end joints (headTop from the mesh's top, hand and toe ends);
 *   - the mesh baked at its bind pose (sum of weight * node transform * inverse bind
 *     matrix), each skin joint counted as its nearest humanoid ancestor, four weights kept;
 *     a mesh under a bone node without a skin is weighted 1 to that bone;
 *   - materials (base colour, texture, alpha, MToon/unlit) and decoded textures.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <assimp/GltfMaterial.h>
#include <assimp/cimport.h>
#include <assimp/material.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <cglm/cglm.h>

#include "avatar/av_internal.h"
#include "embody/m_math.h"
#include "skeleton/sk_fingers.h"
#include "skeleton/sk_humanoid_tree.h"
#include "util/u_log.h"

/* One node of assimp's tree, flattened parents first. */
struct flat_node {
    const struct aiNode *node;
    int parent;
    mat4 global; /* rest, embody frame (facing fixed) */
    int joint;   /* nearest humanoid joint at or above this node, or -1 */
};

struct loader {
    const char *path;
    bool fbx; /* an FBX file (else glTF/GLB/VRM) */
    struct av_file file;
    const struct aiScene *scene;
    struct flat_node *nodes;
    int node_count;
    int bone_flat[SK_BONE_COUNT]; /* flat node of each bone, or -1 */
    vec3 bone_pos[SK_BONE_COUNT];
    bool have[SK_BONE_COUNT];
    int joint_of_bone[SK_BONE_COUNT];
    int finger_flat[HD_HAND_COUNT][HD_JOINT_COUNT]; /* flat node of each finger bone, or -1 */
    mat4 facing; /* file frame to embody frame */
    struct av_load_desc limits;
    const struct sk_bone_map *bone_map; /* the player's, or NULL */
    long long texture_pixels; /* decoded so far */
};

static void
mat4_from_ai(const struct aiMatrix4x4 *a, mat4 out)
{
    out[0][0] = a->a1, out[0][1] = a->b1, out[0][2] = a->c1, out[0][3] = a->d1;
    out[1][0] = a->a2, out[1][1] = a->b2, out[1][2] = a->c2, out[1][3] = a->d2;
    out[2][0] = a->a3, out[2][1] = a->b3, out[2][2] = a->c3, out[2][3] = a->d3;
    out[3][0] = a->a4, out[3][1] = a->b4, out[3][2] = a->c4, out[3][3] = a->d4;
}

static int
count_nodes(const struct aiNode *n)
{
    int c = 1;
    for (unsigned i = 0; i < n->mNumChildren; ++i)
        c += count_nodes(n->mChildren[i]);
    return c;
}

static void
flatten(struct loader *L, const struct aiNode *n, int parent, int *at)
{
    const int me = (*at)++;
    struct flat_node *f = &L->nodes[me];
    f->node = n;
    f->parent = parent;
    f->joint = -1;
    mat4 local;
    mat4_from_ai(&n->mTransformation, local);
    if (parent >= 0)
        glm_mat4_mul(L->nodes[parent].global, local, f->global);
    else
        glm_mat4_copy(local, f->global);
    for (unsigned i = 0; i < n->mNumChildren; ++i)
        flatten(L, n->mChildren[i], me, at);
}

static int
find_flat(const struct loader *L, const char *name)
{
    for (int i = 0; i < L->node_count; ++i)
        if (strcmp(L->nodes[i].node->mName.data, name) == 0)
            return i;
    return -1;
}

static bool
is_below(const struct loader *L, int node, int ancestor)
{
    for (int n = L->nodes[node].parent; n >= 0; n = L->nodes[n].parent)
        if (n == ancestor)
            return true;
    return false;
}

/* The bone nodes: a VRM's from its extension (by the names assimp kept), the others'
 * from the node tree by name or shape (sk_rig_find_bones), the player's bone map over
 * both. Keeps the rig as found in `out` for --print-rig. */
static enum em_result
find_bone_nodes(struct loader *L, struct av_avatar *out, struct em_error *err)
{
    int known[SK_BONE_COUNT];
    const bool vrm = L->file.format == AV_FORMAT_VRM0 || L->file.format == AV_FORMAT_VRM1;
    for (int b = 0; b < SK_BONE_COUNT; ++b) {
        known[b] = -1;
        if (!vrm || L->file.bone_node[b] < 0)
            continue;
        char name[256];
        av_file_node_name(&L->file, L->file.bone_node[b], name, sizeof name);
        known[b] = find_flat(L, name);
        if (known[b] < 0)
            return em_fail(err, EM_ERROR_PARSE, "%s: the node of bone \"%s\" (\"%s\") is missing",
                           L->path, sk_bone_name((enum sk_bone)b), name);
    }
    struct sk_rig_node *nodes = calloc((size_t)L->node_count, sizeof *nodes);
    if (!nodes)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", L->path);
    for (int i = 0; i < L->node_count; ++i) {
        nodes[i].name = L->nodes[i].node->mName.data;
        nodes[i].parent = L->nodes[i].parent;
        glm_vec3_copy(L->nodes[i].global[3], nodes[i].position);
    }
    const struct sk_rig_desc desc = {
        .nodes = nodes,
        .node_count = L->node_count,
        .known_node = vrm ? known : NULL,
        .bone_map = L->bone_map,
        .source = L->path,
    };
    struct sk_rig_map map;
    const enum em_result r = sk_rig_find_bones(&desc, &map, err);
    free(nodes);
    if (r != EM_OK)
        return r;
    snprintf(out->rig.source, sizeof out->rig.source, "%s", L->path);
    for (int b = 0; b < SK_BONE_COUNT; ++b) {
        L->bone_flat[b] = map.node[b];
        out->rig_found[b] = map.found[b];
        if (map.node[b] >= 0) { /* (a longer name than a bone map holds is cut) */
            const char *name = L->nodes[map.node[b]].node->mName.data;
            const size_t n = strnlen(name, sizeof out->rig.node[b] - 1);
            memcpy(out->rig.node[b], name, n);
            out->rig.node[b][n] = '\0';
        }
    }
    out->rig_names = map.names;
    out->rig_sides_swapped = map.sides_swapped;
    return EM_OK;
}

/* The bones the file must have: every required one but those bone_positions places when
 * missing (the chest, neck and shoulders). */
static bool
needed_from_file(enum sk_bone b)
{
    return sk_bone_is_required(b) && b != SK_CHEST && b != SK_NECK && b != SK_LEFT_SHOULDER &&
           b != SK_RIGHT_SHOULDER;
}

/* The bones must nest as a humanoid's do (sk_humanoid_tree.h): each one the file must
 * have below the nearest of its humanoid ancestors the file must have too. */
static enum em_result
check_nesting(struct loader *L, struct em_error *err)
{
    for (int b = 0; b < SK_BONE_COUNT; ++b) {
        if (b == SK_HIPS || !needed_from_file((enum sk_bone)b))
            continue;
        enum sk_bone up = sk_humanoid_parent((enum sk_bone)b);
        while (!needed_from_file(up))
            up = sk_humanoid_parent(up);
        if (!is_below(L, L->bone_flat[b], L->bone_flat[up]))
            return em_fail(err, EM_ERROR_PARSE,
                           "%s: bone \"%s\" (node \"%s\") is not below \"%s\" (node \"%s\") in "
                           "the node tree: not a humanoid skeleton (a bone map file, "
                           "--bone-map FILE.json, can name the right nodes)",
                           L->path, sk_bone_name((enum sk_bone)b),
                           L->nodes[L->bone_flat[b]].node->mName.data, sk_bone_name(up),
                           L->nodes[L->bone_flat[up]].node->mName.data);
    }
    return EM_OK;
}

/* Turns the model about +Y when its left side is at -X (VRM 0.x models face -Z). */
static void
fix_facing(struct loader *L)
{
    const float *l = L->nodes[L->bone_flat[SK_LEFT_UPPER_ARM]].global[3];
    const float *r = L->nodes[L->bone_flat[SK_RIGHT_UPPER_ARM]].global[3];
    glm_mat4_identity(L->facing);
    if (l[0] < r[0]) {
        L->facing[0][0] = -1.0f;
        L->facing[2][2] = -1.0f;
    }
    for (int i = 0; i < L->node_count; ++i)
        glm_mat4_mul(L->facing, L->nodes[i].global, L->nodes[i].global);
}

static void
place_between(struct loader *L, enum sk_bone b, enum sk_bone from, enum sk_bone to, float t)
{
    if (L->have[b])
        return;
    m_vec3_lerp(L->bone_pos[from], L->bone_pos[to], t, L->bone_pos[b]);
    L->have[b] = true;
}

static enum sk_bone
torso_top(const struct loader *L)
{
    return L->have[SK_UPPER_CHEST] ? SK_UPPER_CHEST : SK_CHEST;
}

/* Positions of every bone: from the file, placed, or the end joints. */
static void
bone_positions(struct loader *L, float top_y, float floor_y)
{
    for (int b = 0; b < SK_BONE_COUNT; ++b) {
        L->have[b] = L->bone_flat[b] >= 0;
        if (L->have[b])
            glm_vec3_copy(L->nodes[L->bone_flat[b]].global[3], L->bone_pos[b]);
    }
    if (!L->have[SK_CHEST]) {
        const enum sk_bone above = L->have[SK_UPPER_CHEST] ? SK_UPPER_CHEST
                                   : L->have[SK_NECK]      ? SK_NECK
                                                           : SK_HEAD;
        place_between(L, SK_CHEST, SK_SPINE, above, 0.4f);
    }
    place_between(L, SK_NECK, torso_top(L), SK_HEAD, 0.5f);
    for (int side = 0; side < 2; ++side) {
        const enum sk_bone sh = side ? SK_RIGHT_SHOULDER : SK_LEFT_SHOULDER;
        const enum sk_bone ua = side ? SK_RIGHT_UPPER_ARM : SK_LEFT_UPPER_ARM;
        const enum sk_bone la = side ? SK_RIGHT_LOWER_ARM : SK_LEFT_LOWER_ARM;
        const enum sk_bone hand = side ? SK_RIGHT_HAND : SK_LEFT_HAND;
        const enum sk_bone hand_end = side ? SK_RIGHT_HAND_END : SK_LEFT_HAND_END;
        if (!L->have[sh]) {
            /* At the upper arm's height, a fifth of the way out from the torso's middle. */
            const float *t = L->bone_pos[torso_top(L)], *u = L->bone_pos[ua];
            m_vec3_set(L->bone_pos[sh], t[0] + 0.2f * (u[0] - t[0]), u[1], u[2]);
            L->have[sh] = true;
        }
        /* The hand's end (knuckles) 0.39 forearm lengths on, as the default humanoid. */
        vec3 d;
        m_vec3_sub(L->bone_pos[hand], L->bone_pos[la], d);
        m_vec3_muladd(L->bone_pos[hand], d, 0.39f, L->bone_pos[hand_end]);
        L->have[hand_end] = true;

        const enum sk_bone foot = side ? SK_RIGHT_FOOT : SK_LEFT_FOOT;
        const enum sk_bone toes = side ? SK_RIGHT_TOES : SK_LEFT_TOES;
        const enum sk_bone toes_end = side ? SK_RIGHT_TOES_END : SK_LEFT_TOES_END;
        const enum sk_bone ll = side ? SK_RIGHT_LOWER_LEG : SK_LEFT_LOWER_LEG;
        const float shin = m_vec3_distance(L->bone_pos[foot], L->bone_pos[ll]);
        const float *from = L->bone_pos[L->have[toes] ? toes : foot];
        /* The tip of the toes on the floor, in front: 0.14 (from the toes) or 0.45 (from
         * the ankle) shin lengths, the default humanoid's proportions. */
        m_vec3_set(L->bone_pos[toes_end], from[0], floor_y,
                   from[2] + (L->have[toes] ? 0.14f : 0.45f) * shin);
        L->have[toes_end] = true;
    }
    const float *head = L->bone_pos[SK_HEAD];
    const float head_size = 0.2f * m_vec3_distance(head, L->bone_pos[SK_HIPS]) / 0.7f;
    m_vec3_set(L->bone_pos[SK_HEAD_TOP], head[0], fmaxf(top_y, head[1] + 0.5f * head_size),
               head[2]);
    L->have[SK_HEAD_TOP] = true;
}

static enum em_result
build_skeleton(struct loader *L, struct av_avatar *out, struct em_error *err)
{
    struct sk_joint_desc desc[SK_BONE_COUNT];
    int count = 0;
    for (int b = 0; b < SK_BONE_COUNT; ++b) {
        if (!L->have[b])
            continue;
        const enum sk_bone p = sk_humanoid_parent_among((enum sk_bone)b, L->have);
        struct sk_joint_desc *d = &desc[count++];
        memset(d, 0, sizeof *d);
        d->name = sk_bone_name((enum sk_bone)b);
        d->parent = p == SK_BONE_NONE ? NULL : sk_bone_name(p);
        if (p == SK_BONE_NONE)
            glm_vec3_copy(L->bone_pos[b], d->offset_m);
        else
            m_vec3_sub(L->bone_pos[b], L->bone_pos[p], d->offset_m);
        if (p != SK_BONE_NONE && m_vec3_length(d->offset_m) < 1e-4f)
            return em_fail(err, EM_ERROR_PARSE, "%s: bones \"%s\" and \"%s\" are at the same place",
                           L->path, d->name, d->parent);
    }
    enum em_result r = sk_skeleton_create(desc, count, L->path, &out->skeleton, err);
    if (r == EM_OK)
        r = sk_humanoid_validate(&out->skeleton, L->path, err);
    if (r != EM_OK)
        return r;
    const int n = out->skeleton.joint_count;
    out->rest_rotation = calloc((size_t)n, sizeof *out->rest_rotation);
    out->from_file = calloc((size_t)n, sizeof *out->from_file);
    if (!out->rest_rotation || !out->from_file)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", L->path);
    for (int b = 0; b < SK_BONE_COUNT; ++b)
        L->joint_of_bone[b] = out->skeleton.bone_joint[b];
    for (int j = 0; j < n; ++j) {
        const enum sk_bone b = out->skeleton.bone[j];
        m_quat_identity(out->rest_rotation[j]);
        if (b == SK_BONE_NONE || L->bone_flat[b] < 0)
            continue;
        out->from_file[j] = true;
        mat4 g;
        glm_mat4_copy(L->nodes[L->bone_flat[b]].global, g);
        vec3 x, y, z;
        glm_vec3_normalize_to(g[0], x);
        glm_vec3_normalize_to(g[1], y);
        glm_vec3_normalize_to(g[2], z);
        m_quat_from_columns(x, y, z, out->rest_rotation[j]);
    }
    return EM_OK;
}

/* Which humanoid joint each node moves with: its own bone's, else its parent node's;
 * nodes above the hips move with the hips. */
static void
assign_node_joints(struct loader *L, const struct av_avatar *out)
{
    for (int i = 0; i < L->node_count; ++i) {
        int j = -1;
        for (int b = 0; b < SK_BONE_COUNT; ++b)
            if (L->bone_flat[b] == i)
                j = L->joint_of_bone[b];
        for (int h = 0; h < HD_HAND_COUNT; ++h)
            for (int k = 0; k < HD_JOINT_COUNT; ++k)
                if (L->finger_flat[h][k] == i)
                    j = av_finger_skin_joint(out, (enum hd_hand)h, k);
        if (j < 0 && L->nodes[i].parent >= 0)
            j = L->nodes[L->nodes[i].parent].joint;
        L->nodes[i].joint = j;
    }
    for (int i = 0; i < L->node_count; ++i)
        if (L->nodes[i].joint < 0)
            L->nodes[i].joint = 0;
}

/* ---- Fingers ---- */

static enum sk_bone
hand_bone(int h)
{
    return h == HD_RIGHT ? SK_RIGHT_HAND : SK_LEFT_HAND;
}

static const char *
side_word(int h)
{
    return h == HD_RIGHT ? "right" : "left";
}

/* The finger bones' nodes: a VRM's from its humanBones, the others' by the name map
 * (sk_finger_from_node_name), the sides swapped where the body's were. A finger whose
 * three bones are not all there, each below the one before and the first below the hand,
 * is left out with a warning naming it: its nodes then move with the hand. */
static void
find_finger_nodes(struct loader *L, const struct av_avatar *out)
{
    for (int h = 0; h < HD_HAND_COUNT; ++h)
        for (int k = 0; k < HD_JOINT_COUNT; ++k)
            L->finger_flat[h][k] = -1;
    const bool vrm = L->file.format == AV_FORMAT_VRM0 || L->file.format == AV_FORMAT_VRM1;
    if (vrm) {
        for (int h = 0; h < HD_HAND_COUNT; ++h)
            for (int k = 0; k < HD_JOINT_COUNT; ++k) {
                if (L->file.finger_node[h][k] < 0)
                    continue;
                char name[256];
                av_file_node_name(&L->file, L->file.finger_node[h][k], name, sizeof name);
                L->finger_flat[h][k] = find_flat(L, name);
            }
    } else {
        const char **names = calloc((size_t)L->node_count, sizeof *names);
        if (!names)
            return; /* no fingers: the avatar still loads */
        for (int i = 0; i < L->node_count; ++i)
            names[i] = L->nodes[i].node->mName.data;
        const enum sk_finger_names convention = sk_finger_names_guess(names, L->node_count);
        free(names);
        for (int i = 0; i < L->node_count; ++i) {
            int side = 0;
            const int k = sk_finger_from_node_name(L->nodes[i].node->mName.data, convention, &side);
            if (k < 0)
                continue;
            if (out->rig_sides_swapped)
                side = 1 - side;
            if (L->finger_flat[side][k] < 0)
                L->finger_flat[side][k] = i;
        }
    }
    for (int h = 0; h < HD_HAND_COUNT; ++h) {
        const int hand = L->bone_flat[hand_bone(h)];
        for (int f = 0; f < HD_FINGER_COUNT; ++f) {
            int *bones = &L->finger_flat[h][f * HD_FINGER_JOINTS];
            int found = 0, up = hand;
            bool chained = hand >= 0;
            for (int k = 0; k < HD_FINGER_JOINTS; ++k) {
                if (bones[k] < 0) {
                    chained = false;
                    continue;
                }
                ++found;
                if (up < 0 || !is_below(L, bones[k], up))
                    chained = false;
                up = bones[k];
            }
            if (found == 0 || (found == HD_FINGER_JOINTS && chained))
                continue;
            U_LOG_W("%s: the %s %s finger is left out (it moves with the hand): %s", L->path,
                    side_word(h), hd_finger_name((enum hd_finger)f),
                    found < HD_FINGER_JOINTS
                        ? "it lacks some of its three bones"
                        : "its bones are not a chain from the hand in the node tree");
            for (int k = 0; k < HD_FINGER_JOINTS; ++k)
                bones[k] = -1;
        }
    }
}

/* The first child node of `node`, or -1. */
static int
first_child_node(const struct loader *L, int node)
{
    for (int i = node + 1; i < L->node_count; ++i)
        if (L->nodes[i].parent == node)
            return i;
    return -1;
}

/* The hand frame (hand.h: -Z to the middle knuckle, +Y the back of the hand, +X towards
 * the thumb on the left hand) as the rig has it at rest, from its knuckles; the T-pose's
 * (fingers out along the arm, palms down, thumbs forward) where they say nothing. */
static void
hand_rest_frame(const struct loader *L, const struct av_avatar *out, int h, versor out_frame)
{
    const struct av_hand *H = &out->hands[h];
    const float *wrist = L->bone_pos[hand_bone(h)];
    const float *ahead = H->has_finger[HD_MIDDLE]
                             ? H->rest_m[HD_MIDDLE * HD_FINGER_JOINTS]
                             : L->bone_pos[h == HD_RIGHT ? SK_RIGHT_HAND_END : SK_LEFT_HAND_END];
    vec3 z, t = {0.0f, 0.0f, 1.0f}, x, y;
    const vec3 tpose_z = {h == HD_RIGHT ? 1.0f : -1.0f, 0.0f, 0.0f};
    m_vec3_sub(wrist, ahead, z);
    m_vec3_normalize_or(z, tpose_z, z);
    if (H->has_finger[HD_INDEX] && H->has_finger[HD_LITTLE]) {
        m_vec3_sub(H->rest_m[HD_INDEX * HD_FINGER_JOINTS], H->rest_m[HD_LITTLE * HD_FINGER_JOINTS],
                   t);
        m_vec3_normalize_or(t, (vec3){0.0f, 0.0f, 1.0f}, t);
    }
    m_vec3_scale(t, h == HD_RIGHT ? -1.0f : 1.0f, x);
    m_vec3_cross(z, x, y);
    if (m_vec3_length(y) < 0.1f) { /* the knuckles along the hand: the T-pose's sideways */
        m_vec3_set(x, 0.0f, 0.0f, h == HD_RIGHT ? -1.0f : 1.0f);
        m_vec3_cross(z, x, y);
    }
    m_vec3_normalize_or(y, (vec3){0.0f, 1.0f, 0.0f}, y);
    m_vec3_cross(y, z, x);
    m_quat_from_columns(x, y, z, out_frame);
}

/* The hands' fingers at rest (positions, tips, the rig's frames) and the hand models
 * they size; then the relaxed pose. A bone length the hand model cannot take is said in
 * a warning and the model's own used; a hand whose model cannot be made has no fingers. */
static void
setup_hands(struct loader *L, struct av_avatar *out)
{
    for (int h = 0; h < HD_HAND_COUNT; ++h) {
        struct av_hand *H = &out->hands[h];
        memset(H, 0, sizeof *H);
        for (int f = 0; f < HD_FINGER_COUNT; ++f) {
            const int *bones = &L->finger_flat[h][f * HD_FINGER_JOINTS];
            H->has_finger[f] = bones[0] >= 0;
            if (!H->has_finger[f])
                continue;
            ++H->finger_count;
            for (int k = 0; k < HD_FINGER_JOINTS; ++k)
                glm_vec3_copy(L->nodes[bones[k]].global[3], H->rest_m[f * HD_FINGER_JOINTS + k]);
            const float *mid = H->rest_m[f * HD_FINGER_JOINTS + 1];
            const float *last = H->rest_m[f * HD_FINGER_JOINTS + 2];
            const int tip = first_child_node(L, bones[2]);
            if (tip >= 0 && m_vec3_distance(L->nodes[tip].global[3], last) > 1e-3f) {
                glm_vec3_copy(L->nodes[tip].global[3], H->tip_m[f]);
            } else { /* no tip: the last bone 0.8 of the one before, straight on */
                vec3 d;
                m_vec3_sub(last, mid, d);
                m_vec3_muladd(last, d, 0.8f, H->tip_m[f]);
            }
        }
        if (H->finger_count == 0)
            continue;
        struct hd_model_desc desc = {.hand = (enum hd_hand)h};
        for (int f = 0; f < HD_FINGER_COUNT; ++f) {
            if (!H->has_finger[f])
                continue;
            for (int k = 0; k < HD_FINGER_JOINTS; ++k) {
                const int j = f * HD_FINGER_JOINTS + k;
                const float len =
                    m_vec3_distance(H->rest_m[j], k < 2 ? H->rest_m[j + 1] : H->tip_m[f]);
                if (len >= HD_MIN_BONE_LENGTH_M && len <= HD_MAX_BONE_LENGTH_M)
                    desc.bone_m[f][k] = len;
                else
                    U_LOG_W("%s: finger bone %s is %.4f m long (the hand model takes %g to %g "
                            "m): the model's own length is used",
                            L->path, hd_vrm_bone_name((enum hd_hand)h, j), (double)len,
                            (double)HD_MIN_BONE_LENGTH_M, (double)HD_MAX_BONE_LENGTH_M);
            }
        }
        if (H->has_finger[HD_MIDDLE]) { /* wrist to the middle fingertip, along its bones */
            float len =
                m_vec3_distance(L->bone_pos[hand_bone(h)], H->rest_m[HD_MIDDLE * HD_FINGER_JOINTS]);
            for (int k = 0; k < HD_FINGER_JOINTS; ++k) {
                const int j = HD_MIDDLE * HD_FINGER_JOINTS + k;
                len +=
                    m_vec3_distance(H->rest_m[j], k < 2 ? H->rest_m[j + 1] : H->tip_m[HD_MIDDLE]);
            }
            if (len >= HD_MIN_HAND_LENGTH_M && len <= HD_MAX_HAND_LENGTH_M)
                desc.hand_length_m = len;
        }
        struct em_error err;
        if (hd_model_init(&desc, &H->model, &err) != EM_OK) {
            U_LOG_W("%s: the %s hand's fingers are left out: %s", L->path, side_word(h),
                    err.message);
            memset(H, 0, sizeof *H);
            continue;
        }
        hand_rest_frame(L, out, h, H->rest_frame);
        for (int f = 0; f < HD_FINGER_COUNT; ++f)
            for (int k = 0; k < HD_FINGER_JOINTS && H->has_finger[f]; ++k) {
                const int j = f * HD_FINGER_JOINTS + k;
                vec3 d;
                m_vec3_sub(k < 2 ? H->rest_m[j + 1] : H->tip_m[f], H->rest_m[j], d);
                m_quat_rotate_inv(H->rest_frame, d, d);
                m_vec3_normalize_or(d, H->model.direction[f], d);
                m_quat_from_to(H->model.direction[f], d, H->align[j]);
            }
        av_set_hand_pose(out, (enum hd_hand)h, NULL);
    }
}

/* ---- The mesh ---- */

struct candidates {
    int joint[8];
    float weight[8];
    int count;
};

static void
candidate_add(struct candidates *c, int joint, float w)
{
    if (!(w > 0.0f))
        return;
    for (int i = 0; i < c->count; ++i)
        if (c->joint[i] == joint) {
            c->weight[i] += w;
            return;
        }
    if (c->count < 8) {
        c->joint[c->count] = joint;
        c->weight[c->count++] = w;
        return;
    }
    int smallest = 0; /* full: replace the smallest if this one is bigger */
    for (int i = 1; i < 8; ++i)
        if (c->weight[i] < c->weight[smallest])
            smallest = i;
    if (w > c->weight[smallest]) {
        c->joint[smallest] = joint;
        c->weight[smallest] = w;
    }
}

/* The four largest weights, normalised; `fallback` when there are none. */
static void
candidates_to_vertex(struct candidates *c, int fallback, struct av_vertex *v)
{
    memset(v->joint, 0, sizeof v->joint);
    memset(v->weight, 0, sizeof v->weight);
    float sum = 0.0f;
    for (int k = 0; k < AV_MAX_WEIGHTS && c->count > 0; ++k) {
        int best = 0;
        for (int i = 1; i < c->count; ++i)
            if (c->weight[i] > c->weight[best])
                best = i;
        v->joint[k] = (uint8_t)c->joint[best];
        v->weight[k] = c->weight[best];
        sum += c->weight[best];
        c->joint[best] = c->joint[c->count - 1];
        c->weight[best] = c->weight[c->count - 1];
        --c->count;
    }
    if (sum <= 1e-6f) {
        v->joint[0] = (uint8_t)fallback;
        v->weight[0] = 1.0f;
        for (int k = 1; k < AV_MAX_WEIGHTS; ++k)
            v->weight[k] = 0.0f;
        return;
    }
    for (int k = 0; k < AV_MAX_WEIGHTS; ++k)
        v->weight[k] /= sum;
}

static enum em_result
check_size(struct loader *L, struct em_error *err)
{
    long long tris = 0, verts = 0;
    for (int i = 0; i < L->node_count; ++i) {
        const struct aiNode *n = L->nodes[i].node;
        for (unsigned k = 0; k < n->mNumMeshes; ++k) {
            const struct aiMesh *m = L->scene->mMeshes[n->mMeshes[k]];
            if (!(m->mPrimitiveTypes & aiPrimitiveType_TRIANGLE))
                continue;
            tris += m->mNumFaces;
            verts += m->mNumVertices;
        }
    }
    if (tris > L->limits.max_triangles)
        return em_fail(err, EM_ERROR_LIMIT,
                       "%s: %lld triangles, more than the %d an avatar may have", L->path, tris,
                       L->limits.max_triangles);
    if (verts > L->limits.max_vertices)
        return em_fail(err, EM_ERROR_LIMIT,
                       "%s: %lld vertices, more than the %d an avatar may have", L->path, verts,
                       L->limits.max_vertices);
    return EM_OK;
}

/* Appends mesh `m` as drawn by flat node `ni`. */
/* Vertex i of mesh m, of node ni, into v: skinned by the bones' matrices (bone_m, whose
 * joints bone_joint gives) with its weights `cand`, or moved with its node (no bones). */
static void
add_vertex(const struct loader *L, const struct aiMesh *m, unsigned i, int ni, mat4 *bone_m,
           const int *bone_joint, const struct candidates *cand, struct av_vertex *v)
{
    const int node_joint = L->nodes[ni].joint;
    vec4 p = {m->mVertices[i].x, m->mVertices[i].y, m->mVertices[i].z, 1.0f};
    vec4 nrm = {0.0f, 1.0f, 0.0f, 0.0f};
    if (m->mNormals)
        glm_vec4_copy((vec4){m->mNormals[i].x, m->mNormals[i].y, m->mNormals[i].z, 0.0f}, nrm);
    vec4 pw = {0}, nw = {0};
    if (bone_m) {
        struct candidates joints = {0};
        float total = 0.0f;
        for (int k = 0; k < cand[i].count; ++k) {
            const int b = cand[i].joint[k];
            const float w = cand[i].weight[k];
            vec4 t;
            glm_mat4_mulv(bone_m[b], p, t);
            glm_vec4_muladds(t, w, pw);
            glm_mat4_mulv(bone_m[b], nrm, t);
            glm_vec4_muladds(t, w, nw);
            total += w;
            candidate_add(&joints, bone_joint[b], w);
        }
        if (total > 1e-6f) {
            glm_vec4_scale(pw, 1.0f / total, pw);
        } else {
            glm_mat4_mulv(L->nodes[ni].global, p, pw);
            glm_mat4_mulv(L->nodes[ni].global, nrm, nw);
        }
        candidates_to_vertex(&joints, node_joint, v);
    } else {
        glm_mat4_mulv(L->nodes[ni].global, p, pw);
        glm_mat4_mulv(L->nodes[ni].global, nrm, nw);
        struct candidates one = {0};
        candidates_to_vertex(&one, node_joint, v);
    }
    glm_vec3_copy(pw, v->position_m);
    vec3 n3 = {nw[0], nw[1], nw[2]};
    const vec3 up = {0.0f, 1.0f, 0.0f};
    m_vec3_normalize_or(n3, up, v->normal);
    v->uv[0] = m->mTextureCoords[0] ? m->mTextureCoords[0][i].x : 0.0f;
    /* assimp turns glTF's v (0 at the top) over; turn it back. */
    v->uv[1] = m->mTextureCoords[0] ? 1.0f - m->mTextureCoords[0][i].y : 0.0f;
}

/* Mesh m's triangles (vertices from `base` on) as one primitive of its material; faces
 * that are not triangles or name a vertex the mesh does not have are left out. */
static void
add_faces(const struct aiMesh *m, uint32_t base, struct av_avatar *out)
{
    struct av_primitive *prim = &out->primitives[out->primitive_count++];
    prim->material = (int)m->mMaterialIndex;
    prim->first_index = out->index_count;
    for (unsigned f = 0; f < m->mNumFaces; ++f) {
        const struct aiFace *face = &m->mFaces[f];
        if (face->mNumIndices != 3)
            continue;
        bool ok = true;
        for (int k = 0; k < 3; ++k)
            ok = ok && face->mIndices[k] < m->mNumVertices;
        if (!ok)
            continue;
        for (int k = 0; k < 3; ++k)
            out->indices[out->index_count++] = base + face->mIndices[k];
    }
    prim->index_count = out->index_count - prim->first_index;
}

static enum em_result
add_mesh(struct loader *L, const struct aiMesh *m, int ni, struct av_avatar *out,
         struct candidates *cand, struct em_error *err)
{
    const uint32_t base = (uint32_t)out->vertex_count;
    const int node_joint = L->nodes[ni].joint;
    /* Skin: each bone's matrix (global * inverse bind) and joint. */
    mat4 *bone_m = NULL;
    int *bone_joint = NULL;
    if (m->mNumBones > 0) {
        bone_m = malloc(m->mNumBones * sizeof *bone_m);
        bone_joint = malloc(m->mNumBones * sizeof *bone_joint);
        if (!bone_m || !bone_joint) {
            free(bone_m);
            free(bone_joint);
            return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", L->path);
        }
        memset(cand, 0, m->mNumVertices * sizeof *cand);
        for (unsigned b = 0; b < m->mNumBones; ++b) {
            const struct aiBone *bone = m->mBones[b];
            const int bn = find_flat(L, bone->mName.data);
            mat4 offset;
            mat4_from_ai(&bone->mOffsetMatrix, offset);
            glm_mat4_mul(bn >= 0 ? L->nodes[bn].global : L->nodes[ni].global, offset, bone_m[b]);
            bone_joint[b] = bn >= 0 ? L->nodes[bn].joint : node_joint;
            for (unsigned w = 0; w < bone->mNumWeights; ++w) {
                const unsigned vid = bone->mWeights[w].mVertexId;
                if (vid < m->mNumVertices)
                    candidate_add(&cand[vid], (int)b, bone->mWeights[w].mWeight);
            }
        }
    }
    for (unsigned i = 0; i < m->mNumVertices; ++i)
        add_vertex(L, m, i, ni, bone_m, bone_joint, cand, &out->vertices[out->vertex_count++]);
    free(bone_m);
    free(bone_joint);
    add_faces(m, base, out);
    return EM_OK;
}

static enum em_result
build_mesh(struct loader *L, struct av_avatar *out, struct em_error *err)
{
    size_t verts = 0, idx = 0, prims = 0, max_mesh_verts = 1;
    for (int i = 0; i < L->node_count; ++i) {
        const struct aiNode *n = L->nodes[i].node;
        for (unsigned k = 0; k < n->mNumMeshes; ++k) {
            const struct aiMesh *m = L->scene->mMeshes[n->mMeshes[k]];
            verts += m->mNumVertices;
            idx += 3 * (size_t)m->mNumFaces;
            ++prims;
            if (m->mNumVertices > max_mesh_verts)
                max_mesh_verts = m->mNumVertices;
        }
    }
    out->vertices = calloc(verts ? verts : 1, sizeof *out->vertices);
    out->indices = calloc(idx ? idx : 1, sizeof *out->indices);
    out->primitives = calloc(prims ? prims : 1, sizeof *out->primitives);
    struct candidates *cand = calloc(max_mesh_verts, sizeof *cand);
    enum em_result r = EM_OK;
    if (!out->vertices || !out->indices || !out->primitives || !cand)
        r = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", L->path);
    for (int i = 0; i < L->node_count && r == EM_OK; ++i) {
        const struct aiNode *n = L->nodes[i].node;
        for (unsigned k = 0; k < n->mNumMeshes && r == EM_OK; ++k) {
            const struct aiMesh *m = L->scene->mMeshes[n->mMeshes[k]];
            if (m->mPrimitiveTypes & aiPrimitiveType_TRIANGLE)
                r = add_mesh(L, m, i, out, cand, err);
        }
    }
    free(cand);
    /* Numbers the file got wrong: a position cannot be guessed, the rest can. */
    for (int i = 0; i < out->vertex_count && r == EM_OK; ++i) {
        struct av_vertex *v = &out->vertices[i];
        if (!m_vec3_is_finite(v->position_m))
            r = em_fail(err, EM_ERROR_PARSE, "%s: vertex %d has a position that is not a number",
                        L->path, i);
        if (!m_vec3_is_finite(v->normal))
            m_vec3_set(v->normal, 0.0f, 1.0f, 0.0f);
        if (!isfinite(v->uv[0]) || !isfinite(v->uv[1]))
            v->uv[0] = v->uv[1] = 0.0f;
    }
    return r;
}

/* ---- Materials ---- */

static int
add_texture(struct loader *L, struct av_avatar *out, const char *tex_path)
{
    int w = 0, h = 0;
    uint8_t *rgba = NULL;
    if (tex_path[0] == '*') {
        const long k = strtol(tex_path + 1, NULL, 10);
        if (k < 0 || k >= (long)L->scene->mNumTextures)
            return -1;
        const struct aiTexture *t = L->scene->mTextures[k];
        if (t->mHeight == 0) /* compressed (PNG, JPEG): mWidth is its size in bytes */
            rgba = av_image_decode((const uint8_t *)t->pcData, t->mWidth, &w, &h);
    } else if (!L->file.is_glb) {
        char full[4096];
        const char *slash = strrchr(L->path, '/');
        const int dir_len = slash ? (int)(slash - L->path + 1) : 0;
        snprintf(full, sizeof full, "%.*s%s", dir_len, L->path, tex_path);
        rgba = av_image_load(full, &w, &h);
    }
    if (!rgba)
        return -1;
    L->texture_pixels += (long long)w * h;
    struct av_texture *grown =
        realloc(out->textures, (size_t)(out->texture_count + 1) * sizeof *grown);
    if (!grown) {
        free(rgba);
        return -1;
    }
    out->textures = grown;
    out->textures[out->texture_count] = (struct av_texture){w, h, rgba};
    return out->texture_count++;
}

static enum em_result
build_materials(struct loader *L, struct av_avatar *out, struct em_error *err)
{
    const unsigned count = L->scene->mNumMaterials;
    out->materials = calloc(count ? count : 1, sizeof *out->materials);
    if (!out->materials)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", L->path);
    out->material_count = (int)count;
    for (unsigned i = 0; i < count; ++i) {
        const struct aiMaterial *am = L->scene->mMaterials[i];
        struct av_material *m = &out->materials[i];
        struct aiString s;
        if (aiGetMaterialString(am, AI_MATKEY_NAME, &s) == AI_SUCCESS)
            snprintf(m->name, sizeof m->name, "%.63s", s.data);
        struct aiColor4D c = {1.0f, 1.0f, 1.0f, 1.0f};
        if (aiGetMaterialColor(am, AI_MATKEY_BASE_COLOR, &c) != AI_SUCCESS)
            aiGetMaterialColor(am, AI_MATKEY_COLOR_DIFFUSE, &c);
        m->base_color[0] = c.r, m->base_color[1] = c.g, m->base_color[2] = c.b;
        m->base_color[3] = c.a;
        m->texture = -1;
        if (aiGetMaterialTexture(am, aiTextureType_DIFFUSE, 0, &s, NULL, NULL, NULL, NULL, NULL,
                                 NULL) == AI_SUCCESS ||
            aiGetMaterialTexture(am, aiTextureType_BASE_COLOR, 0, &s, NULL, NULL, NULL, NULL, NULL,
                                 NULL) == AI_SUCCESS)
            m->texture = add_texture(L, out, s.data);
        m->alpha_cutoff = 0.5f;
        if (aiGetMaterialString(am, AI_MATKEY_GLTF_ALPHAMODE, &s) == AI_SUCCESS) {
            if (strcmp(s.data, "MASK") == 0)
                m->alpha_mode = AV_ALPHA_MASK;
            else if (strcmp(s.data, "BLEND") == 0)
                m->alpha_mode = AV_ALPHA_BLEND;
        }
        ai_real cutoff = 0.5f;
        if (aiGetMaterialFloatArray(am, AI_MATKEY_GLTF_ALPHACUTOFF, &cutoff, NULL) == AI_SUCCESS)
            m->alpha_cutoff = (float)cutoff;
        int two = 0;
        if (aiGetMaterialIntegerArray(am, AI_MATKEY_TWOSIDED, &two, NULL) == AI_SUCCESS)
            m->double_sided = two != 0;
        bool unlit = false;
        const bool toon = av_file_material_is_toon(&L->file, m->name, &unlit);
        m->shading = toon ? AV_SHADING_TOON : unlit ? AV_SHADING_UNLIT : AV_SHADING_LIT;
    }
    if (L->texture_pixels > AV_MAX_TEXTURE_PIXELS)
        return em_fail(err, EM_ERROR_LIMIT,
                       "%s: textures of %lld pixels, more than the %d an avatar may have", L->path,
                       L->texture_pixels, AV_MAX_TEXTURE_PIXELS);
    for (int p = 0; p < out->primitive_count; ++p)
        if (out->primitives[p].material < 0 || out->primitives[p].material >= (int)count)
            out->primitives[p].material = 0;
    if (count == 0) { /* every primitive needs a material: a plain white one */
        out->material_count = 1;
        out->materials[0] = (struct av_material){.base_color = {1, 1, 1, 1}, .texture = -1};
    }
    return EM_OK;
}

/* Moves everything up so the floor (lowest vertex) is at y = 0, and finds the top. */
static void
vertical_extent(const struct loader *L, const struct av_avatar *out, float *out_floor,
                float *out_top)
{
    float lo = FLT_MAX, hi = -FLT_MAX;
    for (int i = 0; i < out->vertex_count; ++i) {
        lo = fminf(lo, out->vertices[i].position_m[1]);
        hi = fmaxf(hi, out->vertices[i].position_m[1]);
    }
    for (int b = 0; b < SK_BONE_COUNT; ++b)
        if (L->bone_flat[b] >= 0)
            lo = fminf(lo, L->nodes[L->bone_flat[b]].global[3][1]);
    *out_floor = lo;
    *out_top = out->vertex_count ? hi : -FLT_MAX;
}

static enum em_result
load(struct loader *L, struct av_avatar *out, struct em_error *err)
{
    enum em_result r = L->fbx ? av_file_read_fbx(L->path, &L->file, err)
                              : av_file_read(L->path, &L->file, err);
    if (r != EM_OK)
        return r;
    out->format = L->file.format;
    const unsigned flags = aiProcess_Triangulate | aiProcess_GenSmoothNormals |
                           aiProcess_SortByPType | aiProcess_ValidateDataStructure;
    if (L->fbx) /* FBX lengths are in the file's unit (often cm): the global scale makes metres */
        L->scene = aiImportFileFromMemory((const char *)L->file.bytes, (unsigned)L->file.size,
                                          flags | aiProcess_GlobalScale, "fbx");
    else if (L->file.is_glb)
        L->scene = aiImportFileFromMemory((const char *)L->file.bytes, (unsigned)L->file.size,
                                          flags, "glb");
    else
        L->scene = aiImportFile(L->path, flags);
    if (!L->scene || !L->scene->mRootNode)
        return em_fail(err, EM_ERROR_PARSE, "%s: the %s reader (assimp) refused it: %s", L->path,
                       L->fbx ? "FBX" : "glTF", aiGetErrorString());
    L->node_count = count_nodes(L->scene->mRootNode);
    L->nodes = calloc((size_t)L->node_count, sizeof *L->nodes);
    if (!L->nodes)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", L->path);
    int at = 0;
    flatten(L, L->scene->mRootNode, -1, &at);
    if ((r = find_bone_nodes(L, out, err)) != EM_OK || (r = check_nesting(L, err)) != EM_OK ||
        (r = check_size(L, err)) != EM_OK)
        return r;
    find_finger_nodes(L, out);
    fix_facing(L);

    /* The mesh is baked before the skeleton is known (it needs only node joints), but the
     * node joints need the skeleton: so first a skeleton from the bones alone. */
    for (int b = 0; b < SK_BONE_COUNT; ++b)
        L->joint_of_bone[b] = -1;
    bone_positions(L, -FLT_MAX, 0.0f);
    if ((r = build_skeleton(L, out, err)) != EM_OK)
        return r;
    out->skin_joint_count = out->skeleton.joint_count + HD_HAND_COUNT * HD_JOINT_COUNT;
    assign_node_joints(L, out);
    if ((r = build_mesh(L, out, err)) != EM_OK || (r = build_materials(L, out, err)) != EM_OK)
        return r;

    /* Now the real floor and top: rebuild the skeleton with the ends placed on them (same
     * joints, same order, so the vertices' joints stay right). */
    float floor_y = 0.0f, top_y = 0.0f;
    vertical_extent(L, out, &floor_y, &top_y);
    for (int i = 0; i < L->node_count; ++i)
        L->nodes[i].global[3][1] -= floor_y;
    for (int i = 0; i < out->vertex_count; ++i)
        out->vertices[i].position_m[1] -= floor_y;
    top_y -= floor_y;
    sk_skeleton_fini(&out->skeleton);
    free(out->rest_rotation);
    free(out->from_file);
    out->rest_rotation = NULL;
    out->from_file = NULL;
    bone_positions(L, top_y, 0.0f);
    if ((r = build_skeleton(L, out, err)) != EM_OK)
        return r;
    out->height_m = sk_humanoid_height(&out->skeleton);
    setup_hands(L, out);
    /* A person's size, as every skeleton (a file scaled to 4 m is a mistake, not a giant). */
    return sk_humanoid_check_size(&out->skeleton, L->path, err);
}

enum em_result
av_avatar_load(const char *path, const struct av_load_desc *desc, struct av_avatar *out_avatar,
               struct em_error *err)
{
    memset(out_avatar, 0, sizeof *out_avatar);
    snprintf(out_avatar->source, sizeof out_avatar->source, "%s", path);
    struct loader L = {.path = path};
    L.limits.max_triangles =
        desc && desc->max_triangles > 0 && desc->max_triangles < AV_MAX_TRIANGLES
            ? desc->max_triangles
            : AV_MAX_TRIANGLES;
    L.limits.max_vertices = desc && desc->max_vertices > 0 && desc->max_vertices < AV_MAX_VERTICES
                                ? desc->max_vertices
                                : AV_MAX_VERTICES;
    L.bone_map = desc ? desc->bone_map : NULL;
    const char *ext = strrchr(path, '.');
    enum em_result r;
    L.fbx = ext && strcasecmp(ext, ".fbx") == 0;
    if (!ext || (!L.fbx && strcasecmp(ext, ".vrm") != 0 && strcasecmp(ext, ".glb") != 0 &&
                 strcasecmp(ext, ".gltf") != 0))
        r = em_fail(err, EM_ERROR_UNSUPPORTED,
                    "%s: not an avatar file this reader knows (expected .vrm, .glb, .gltf or "
                    ".fbx)",
                    path);
    else
        r = load(&L, out_avatar, err);
    if (L.scene)
        aiReleaseImport(L.scene);
    free(L.nodes);
    av_file_fini(&L.file);
    if (r != EM_OK)
        av_avatar_fini(out_avatar);
    return r;
}

void
av_avatar_fini(struct av_avatar *avatar)
{
    sk_skeleton_fini(&avatar->skeleton);
    free(avatar->rest_rotation);
    free(avatar->from_file);
    free(avatar->vertices);
    free(avatar->indices);
    free(avatar->primitives);
    free(avatar->materials);
    for (int i = 0; i < avatar->texture_count; ++i)
        free(avatar->textures[i].rgba);
    free(avatar->textures);
    memset(avatar, 0, sizeof *avatar);
}
