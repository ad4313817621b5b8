/*
 * Avatar materials on the GPU: base-colour textures uploaded once per avatar (sRGB data,
 * mipmapped; the shader turns them linear), a white texture for materials without one,
 * and the uniforms each material sets before its triangles are drawn (skin.frag).
 */
#include <stdlib.h>

#include "avatar/avatar.h"
#include "render/r_internal.h"

static GLuint
upload_texture(int width, int height, const uint8_t *rgba)
{
    GLuint t = 0;
    glGenTextures(1, &t);
    glBindTexture(GL_TEXTURE_2D, t);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, width, height, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
    glGenerateMipmap(GL_TEXTURE_2D);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR_MIPMAP_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_REPEAT);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_REPEAT);
    glBindTexture(GL_TEXTURE_2D, 0);
    return t;
}

bool
r_materials_upload(struct r_materials *m, const struct av_avatar *avatar)
{
    r_materials_destroy(m);
    const uint8_t white[4] = {255, 255, 255, 255};
    m->white = upload_texture(1, 1, white);
    m->count = avatar->texture_count;
    m->textures = calloc((size_t)(m->count > 0 ? m->count : 1), sizeof *m->textures);
    if (!m->textures)
        return false;
    for (int i = 0; i < m->count; ++i)
        m->textures[i] = upload_texture(avatar->textures[i].width, avatar->textures[i].height,
                                        avatar->textures[i].rgba);
    return true;
}

void
r_materials_destroy(struct r_materials *m)
{
    if (m->textures && m->count > 0)
        glDeleteTextures(m->count, m->textures);
    if (m->white)
        glDeleteTextures(1, &m->white);
    free(m->textures);
    m->textures = NULL;
    m->count = 0;
    m->white = 0;
}

void
r_material_apply(const struct r_materials *m, GLuint program, const struct av_material *mat)
{
    glUniform4fv(glGetUniformLocation(program, "u_base_color"), 1, mat->base_color);
    const GLuint tex =
        mat->texture >= 0 && mat->texture < m->count ? m->textures[mat->texture] : m->white;
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, tex);
    glUniform1i(glGetUniformLocation(program, "u_base_texture"), 0);
    /* BLEND is drawn cut out too: sorting an avatar's triangles every frame is not worth
     * it for a mirror, and cut-out hair and lashes look right. */
    glUniform1f(glGetUniformLocation(program, "u_alpha_cutoff"),
                mat->alpha_mode == AV_ALPHA_OPAQUE ? 0.0f : mat->alpha_cutoff);
    glUniform1i(glGetUniformLocation(program, "u_shading"), (GLint)mat->shading);
    if (mat->double_sided)
        glDisable(GL_CULL_FACE);
    else
        glEnable(GL_CULL_FACE);
}
