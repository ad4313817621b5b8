/*
 * Skinned avatars (src/avatar/avatar.h) in the mirror and the headset: the mesh
 * uploaded once per avatar (positions, normals, UVs, 4 joints as integers, 4 weights), the
 * joint matrices (av_skin_matrices) for each frame's pose in a uniform buffer, and one draw
 * per primitive with its material (r_material.c). Linear-blend skinning runs on the GPU
 * (shaders/skin.vert).
 *
 * Seen from inside its own head (a headset's eye: within R_SKIN_FIRST_PERSON_M of the head
 * joint) the head is left out, as VR avatars do, by shrinking its joints to a point: the
 * player sees their body, not the inside of their face.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cglm/cglm.h>

#include "avatar/avatar.h"
#include "embody/m_math.h"
#include "render/r_internal.h"

#define R_SKIN_UBO_BINDING 0
#define R_SKIN_FIRST_PERSON_M 0.3f /* eye to head joint, times the avatar's scale */

/* Collapses the joints of the head (and what hangs from it) onto the head joint when the
 * eye is in the head. */
static void
hide_head_from_inside(const struct av_avatar *a, const struct av_skin_binding *b,
                      const struct sk_pose *pose, const float eye_m[3], mat4 *matrices)
{
    const int head = a->skeleton.bone_joint[SK_HEAD];
    if (head < 0)
        return;
    const float *p = pose->position_m[b->body_joint[head]];
    if (m_vec3_distance(eye_m, p) > R_SKIN_FIRST_PERSON_M * b->scale)
        return;
    for (int j = 0; j < a->skeleton.joint_count; ++j) {
        bool in_head = false;
        for (int k = j; k >= 0 && !in_head; k = a->skeleton.parent[k])
            in_head = k == head;
        if (!in_head)
            continue;
        glm_mat4_zero(matrices[j]);
        glm_vec3_copy((float *)p, matrices[j][3]);
        matrices[j][3][3] = 1.0f;
    }
}

static bool
same_avatar(const struct r_skin *s, const struct av_avatar *a)
{
    return s->source == a && s->source_vertices == a->vertices &&
           s->vertex_count == a->vertex_count && s->index_count == a->index_count;
}

void
r_skin_destroy(struct r_skin *s)
{
    if (s->vao)
        glDeleteVertexArrays(1, &s->vao);
    GLuint buffers[3] = {s->vertex_buffer, s->index_buffer, s->joint_buffer};
    for (int i = 0; i < 3; ++i)
        if (buffers[i])
            glDeleteBuffers(1, &buffers[i]);
    r_materials_destroy(&s->materials);
    free(s->matrices);
    memset(s, 0, sizeof *s);
}

static bool
upload(struct r_skin *s, const struct av_avatar *a)
{
    r_skin_destroy(s);
    if (a->skin_joint_count > R_SKIN_MAX_JOINTS || a->skeleton.joint_count > R_SKIN_MAX_JOINTS)
        return false;
    s->matrices = calloc(R_SKIN_MAX_JOINTS, sizeof *s->matrices);
    if (!s->matrices)
        return false;
    glGenVertexArrays(1, &s->vao);
    glGenBuffers(1, &s->vertex_buffer);
    glGenBuffers(1, &s->index_buffer);
    glGenBuffers(1, &s->joint_buffer);
    glBindVertexArray(s->vao);
    glBindBuffer(GL_ARRAY_BUFFER, s->vertex_buffer);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)((size_t)a->vertex_count * sizeof *a->vertices),
                 a->vertices, GL_STATIC_DRAW);
    const GLsizei stride = (GLsizei)sizeof(struct av_vertex);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, stride,
                          (const void *)offsetof(struct av_vertex, position_m));
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, stride,
                          (const void *)offsetof(struct av_vertex, normal));
    glEnableVertexAttribArray(2);
    glVertexAttribPointer(2, 2, GL_FLOAT, GL_FALSE, stride,
                          (const void *)offsetof(struct av_vertex, uv));
    glEnableVertexAttribArray(3);
    glVertexAttribIPointer(3, 4, GL_UNSIGNED_BYTE, stride,
                           (const void *)offsetof(struct av_vertex, joint));
    glEnableVertexAttribArray(4);
    glVertexAttribPointer(4, 4, GL_FLOAT, GL_FALSE, stride,
                          (const void *)offsetof(struct av_vertex, weight));
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, s->index_buffer);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)((size_t)a->index_count * sizeof(uint32_t)),
                 a->indices, GL_STATIC_DRAW);
    glBindVertexArray(0);
    glBindBuffer(GL_UNIFORM_BUFFER, s->joint_buffer);
    glBufferData(GL_UNIFORM_BUFFER, (GLsizeiptr)(R_SKIN_MAX_JOINTS * sizeof(mat4)), NULL,
                 GL_STREAM_DRAW);
    glBindBuffer(GL_UNIFORM_BUFFER, 0);
    if (!r_materials_upload(&s->materials, a))
        return false;
    s->source = a;
    s->source_vertices = a->vertices;
    s->vertex_count = a->vertex_count;
    s->index_count = a->index_count;
    return true;
}

bool
r_skin_draw(struct r_skin *s, GLuint program, const struct render_scene *scene,
            const struct r_view *view, const float key_dir[3])
{
    const struct av_avatar *a = scene->avatar;
    const struct av_skin_binding *b = scene->avatar_binding;
    if (!a || !b || !scene->pose ||
        b->joint_count != (a->skin_joint_count > a->skeleton.joint_count ? a->skin_joint_count
                                                                         : a->skeleton.joint_count))
        return false;
    if (!same_avatar(s, a) && !upload(s, a)) {
        r_skin_destroy(s);
        return false;
    }
    av_skin_matrices(b, scene->pose, s->matrices);
    hide_head_from_inside(a, b, scene->pose, view->eye_m, s->matrices);
    glBindBuffer(GL_UNIFORM_BUFFER, s->joint_buffer);
    glBufferSubData(GL_UNIFORM_BUFFER, 0, (GLsizeiptr)((size_t)b->joint_count * sizeof(mat4)),
                    s->matrices);
    glBindBuffer(GL_UNIFORM_BUFFER, 0);
    glBindBufferBase(GL_UNIFORM_BUFFER, R_SKIN_UBO_BINDING, s->joint_buffer);

    glUseProgram(program);
    glUniformBlockBinding(program, glGetUniformBlockIndex(program, "Joints"), R_SKIN_UBO_BINDING);
    glUniformMatrix4fv(glGetUniformLocation(program, "u_view_proj"), 1, GL_FALSE,
                       (const float *)view->view_proj);
    glUniform3fv(glGetUniformLocation(program, "u_camera_pos"), 1, view->eye_m);
    glUniform3fv(glGetUniformLocation(program, "u_key_dir"), 1, key_dir);
    glEnable(GL_DEPTH_TEST);
    glCullFace(GL_BACK);
    glFrontFace(view->mirrored ? GL_CW : GL_CCW);
    glBindVertexArray(s->vao);
    for (int p = 0; p < a->primitive_count; ++p) {
        const struct av_primitive *prim = &a->primitives[p];
        if (prim->index_count == 0)
            continue;
        r_material_apply(&s->materials, program, &a->materials[prim->material]);
        glDrawElements(GL_TRIANGLES, (GLsizei)prim->index_count, GL_UNSIGNED_INT,
                       (const void *)((size_t)prim->first_index * sizeof(uint32_t)));
    }
    glBindVertexArray(0);
    glBindTexture(GL_TEXTURE_2D, 0);
    glFrontFace(GL_CCW);
    glDisable(GL_CULL_FACE);
    return true;
}
