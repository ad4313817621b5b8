/*
 * Skinning an avatar with a body's pose. embody's joint frames are world-aligned at rest,
 * so a joint's posed transform is just its rotation R and position p, and a vertex x at
 * rest follows as p + s R (x - r), with r the joint's rest position in the avatar and s the
 * body's height over the avatar's (the player's calibration scales the mesh with the
 * skeleton). The body's skeleton may not be the avatar's own (the default avatar's mesh on
 * a BVH skeleton): joints are matched by humanoid bone, a bone the body lacks following its
 * nearest ancestor that it has.
 */
#include <stdlib.h>
#include <string.h>

#include <cglm/cglm.h>

#include "avatar/avatar.h"
#include "embody/m_math.h"

enum em_result
av_skin_bind(const struct av_avatar *avatar, const struct sk_skeleton *body_skeleton,
             struct av_skin_binding *out_binding, struct em_error *err)
{
    struct av_skin_binding *b = out_binding;
    memset(b, 0, sizeof *b);
    const struct sk_skeleton *a = &avatar->skeleton;
    b->joint_count = a->joint_count;
    b->body_joint = calloc((size_t)a->joint_count, sizeof *b->body_joint);
    b->anchor_m = calloc((size_t)a->joint_count, sizeof *b->anchor_m);
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
