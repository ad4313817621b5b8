/*
 * Skinning an avatar with a body's pose. embody's joint frames are world-aligned at rest,
 * so a joint's posed transform is just its rotation R and position p, and a vertex x at
 * rest follows as p + s R (x - r), with r the joint's rest position in the avatar and s the
 * body's height over the avatar's (the player's calibration scales the mesh with the
 * skeleton). The body's skeleton may not be the avatar's own (the default avatar's mesh on
 * a BVH skeleton): joints are matched by humanoid bone, a bone the body lacks following its
 * nearest ancestor that it has.
 *
 * The fingers are no joints of the body: each finger joint's matrix is its hand joint's,
 * carried down the finger by the rotations av_set_hand_pose leaves (struct av_hand).
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cglm/cglm.h>

#include "avatar/avatar.h"
#include "embody/m_math.h"

static void finger_matrices(const struct av_skin_binding *b, const struct sk_pose *body_pose,
                            mat4 *out);

enum em_result
av_skin_bind(const struct av_avatar *avatar, const struct sk_skeleton *body_skeleton,
             struct av_skin_binding *out_binding, struct em_error *err)
{
    struct av_skin_binding *b = out_binding;
    memset(b, 0, sizeof *b);
    const struct sk_skeleton *a = &avatar->skeleton;
    b->avatar = avatar;
    b->joint_count =
        avatar->skin_joint_count > a->joint_count ? avatar->skin_joint_count : a->joint_count;
    b->body_joint = calloc((size_t)b->joint_count, sizeof *b->body_joint);
    b->anchor_m = calloc((size_t)b->joint_count, sizeof *b->anchor_m);
    if (!b->body_joint || !b->anchor_m) {
        av_skin_binding_fini(b);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", avatar->source);
    }
    for (int j = 0; j < a->joint_count; ++j) {
        /* Up the avatar's tree to the first joint whose bone the body has. */
        int k = j, bj = -1;
        while (k >= 0 && (bj = sk_skeleton_bone_joint(body_skeleton, a->bone[k])) < 0)
            k = a->parent[k];
        if (bj < 0) {
            av_skin_binding_fini(b);
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "%s: the body's skeleton has no \"%s\" or any bone above it",
                           avatar->source, a->name[j]);
        }
        b->body_joint[j] = bj;
        glm_vec3_copy(a->rest_position_m[k], b->anchor_m[j]);
    }
    /* The finger joints: their hand's (av_skin_matrices carries them down the finger). */
    for (int j = a->joint_count; j < b->joint_count; ++j) {
        const int h = (j - a->joint_count) / HD_JOINT_COUNT;
        const int hand = a->bone_joint[h == HD_RIGHT ? SK_RIGHT_HAND : SK_LEFT_HAND];
        b->body_joint[j] = b->body_joint[hand];
        glm_vec3_copy(b->anchor_m[hand], b->anchor_m[j]);
    }
    const float body_h = sk_humanoid_height(body_skeleton);
    b->scale = avatar->height_m > 0.0f && body_h > 0.0f ? body_h / avatar->height_m : 1.0f;
    return EM_OK;
}

void
av_skin_binding_fini(struct av_skin_binding *binding)
{
    free(binding->body_joint);
    free(binding->anchor_m);
    memset(binding, 0, sizeof *binding);
}

void
av_skin_matrices(const struct av_skin_binding *binding, const struct sk_pose *body_pose,
                 mat4 *out_matrices)
{
    for (int j = 0; j < binding->joint_count; ++j) {
        const int bj = binding->body_joint[j];
        mat4 m;
        glm_quat_mat4((float *)body_pose->rotation[bj], m);
        glm_mat4_scale_p(m, binding->scale); /* scales the 4th row too: put it back */
        m[3][3] = 1.0f;
        vec3 t;
        glm_mat4_mulv3(m, (float *)binding->anchor_m[j], 0.0f, t);
        glm_vec3_sub((float *)body_pose->position_m[bj], t, m[3]);
        m[0][3] = m[1][3] = m[2][3] = 0.0f;
        glm_mat4_copy(m, out_matrices[j]);
    }
    finger_matrices(binding, body_pose, out_matrices);
}

/* The matrix taking avatar rest position x to p + s R (x - rest). */
static void
joint_matrix(const versor r, float s, const vec3 p, const vec3 rest, mat4 out)
{
    glm_quat_mat4((float *)r, out);
    glm_mat4_scale_p(out, s);
    out[3][3] = 1.0f;
    vec3 t;
    glm_mat4_mulv3(out, (float *)rest, 0.0f, t);
    glm_vec3_sub((float *)p, t, out[3]);
    out[0][3] = out[1][3] = out[2][3] = 0.0f;
}

/* Each finger of each hand down from its hand joint: a joint's rotation is the hand's
 * times the finger pose's (relative to the hand), its position its parent's plus the
 * parent's rotation of its rest offset. */
static void
finger_matrices(const struct av_skin_binding *b, const struct sk_pose *body_pose, mat4 *out)
{
    const struct av_avatar *a = b->avatar;
    if (!a || b->joint_count < a->skin_joint_count ||
        a->skin_joint_count <= a->skeleton.joint_count)
        return;
    for (int h = 0; h < HD_HAND_COUNT; ++h) {
        const struct av_hand *H = &a->hands[h];
        const int hand = a->skeleton.bone_joint[h == HD_RIGHT ? SK_RIGHT_HAND : SK_LEFT_HAND];
        if (H->finger_count == 0 || hand < 0)
            continue;
        const int bj = b->body_joint[hand];
        const float *hand_q = body_pose->rotation[bj];
        for (int f = 0; f < HD_FINGER_COUNT; ++f) {
            if (!H->has_finger[f])
                continue;
            vec3 p;
            versor up;
            for (int k = 0; k < HD_FINGER_JOINTS; ++k) {
                const int j = f * HD_FINGER_JOINTS + k;
                vec3 d;
                if (k == 0) {
                    m_vec3_sub(H->rest_m[j], b->anchor_m[hand], d);
                    m_quat_rotate(hand_q, d, d);
                    m_vec3_muladd(body_pose->position_m[bj], d, b->scale, p);
                } else {
                    m_vec3_sub(H->rest_m[j], H->rest_m[j - 1], d);
                    m_quat_rotate(up, d, d);
                    m_vec3_muladd(p, d, b->scale, p);
                }
                m_quat_mul(hand_q, H->rotation[j], up);
                joint_matrix(up, b->scale, p, H->rest_m[j],
                             out[av_finger_skin_joint(a, (enum hd_hand)h, j)]);
            }
        }
    }
}

void
av_set_hand_pose(struct av_avatar *avatar, enum hd_hand hand, const struct hd_pose *pose)
{
    assert(hand >= 0 && hand < HD_HAND_COUNT);
    struct av_hand *H = &avatar->hands[hand];
    if (H->finger_count == 0)
        return;
    bool finite = pose != NULL;
    for (int f = 0; f < HD_FINGER_COUNT && finite; ++f) {
        finite = isfinite(pose->abduct_rad[f]);
        for (int k = 0; k < HD_FINGER_JOINTS && finite; ++k)
            finite = isfinite(pose->flex_rad[f][k]);
    }
    struct hd_pose p;
    if (finite)
        p = *pose;
    else
        hd_pose_relaxed(&H->model, &p);
    float local[HD_JOINT_COUNT][4];
    hd_pose_local_rotations(&H->model, &p, local);
    versor frame_inv;
    m_quat_conjugate(H->rest_frame, frame_inv);
    for (int f = 0; f < HD_FINGER_COUNT; ++f) {
        if (!H->has_finger[f]) /* (its joints follow the hand: finger_matrices) */
            continue;
        versor w; /* the chain of local rotations to this joint (hand frame) */
        m_quat_identity(w);
        for (int k = 0; k < HD_FINGER_JOINTS; ++k) {
            const int j = f * HD_FINGER_JOINTS + k;
            versor t, align_inv;
            m_quat_mul(w, local[j], t);
            m_quat_copy(t, w);
            m_quat_conjugate(H->align[j], align_inv);
            m_quat_mul(w, align_inv, t);
            versor u;
            m_quat_mul(H->rest_frame, t, u);
            m_quat_mul(u, frame_inv, H->rotation[j]);
            m_quat_normalize(H->rotation[j]);
        }
    }
}

const struct hd_model *
av_hand_model(const struct av_avatar *avatar, enum hd_hand hand)
{
    assert(hand >= 0 && hand < HD_HAND_COUNT);
    return avatar->hands[hand].finger_count > 0 ? &avatar->hands[hand].model : NULL;
}

void
av_skin_vertex(const struct av_vertex *v, const mat4 *matrices, vec3 out_m)
{
    vec4 sum = {0.0f, 0.0f, 0.0f, 0.0f};
    const vec4 p = {v->position_m[0], v->position_m[1], v->position_m[2], 1.0f};
    for (int k = 0; k < AV_MAX_WEIGHTS; ++k) {
        if (v->weight[k] <= 0.0f)
            continue;
        vec4 t;
        glm_mat4_mulv((vec4 *)matrices[v->joint[k]], (float *)p, t);
        glm_vec4_muladds(t, v->weight[k], sum);
    }
    glm_vec3_copy(sum, out_m);
}

void
av_bone_rotation(const struct av_avatar *avatar, const struct av_skin_binding *binding,
                 const struct sk_pose *body_pose, int joint, versor out_rotation)
{
    m_quat_mul(body_pose->rotation[binding->body_joint[joint]], avatar->rest_rotation[joint],
               out_rotation);
}
