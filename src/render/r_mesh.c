/*
 * The unit meshes every part of the scene is made from (r_internal.h): a sphere, an open
 * cylinder and a box, generated once, drawn instanced with a model matrix and a colour
 * per part.
 */
#include <stdlib.h>
#include <string.h>

#include "embody/m_math.h"
#include "render/r_internal.h"

struct vertex {
    float position[3];
    float normal[3];
};

struct geometry {
    struct vertex *vertices;
    int vertex_count;
    GLuint *indices;
    int index_count;
};

static void
geometry_fini(struct geometry *g)
{
    free(g->vertices);
    free(g->indices);
    memset(g, 0, sizeof *g);
}

static bool
geometry_alloc(struct geometry *g, int vertex_count, int index_count)
{
    g->vertices = calloc((size_t)vertex_count, sizeof *g->vertices);
    g->indices = calloc((size_t)index_count, sizeof *g->indices);
    g->vertex_count = vertex_count;
    g->index_count = index_count;
    return g->vertices && g->indices;
}

static void
set_vertex(struct vertex *v, float px, float py, float pz, float nx, float ny, float nz)
{
    m_vec3_set(v->position, px, py, pz);
    m_vec3_set(v->normal, nx, ny, nz);
}

/* Latitude-longitude sphere; triangles wind counter-clockwise seen from outside. */
static bool
make_sphere(struct geometry *g, int slices, int stacks)
{
    if (!geometry_alloc(g, (slices + 1) * (stacks + 1), slices * stacks * 6))
        return false;
    int v = 0;
    for (int i = 0; i <= stacks; ++i) {
        const float theta = M_PI_F * (float)i / (float)stacks; /* from +Y down */
        for (int j = 0; j <= slices; ++j) {
            const float phi = 2.0f * M_PI_F * (float)j / (float)slices;
            const float x = sinf(theta) * sinf(phi);
            const float y = cosf(theta);
            const float z = sinf(theta) * cosf(phi);
            set_vertex(&g->vertices[v++], x, y, z, x, y, z);
        }
    }
    int k = 0;
    for (int i = 0; i < stacks; ++i) {
        for (int j = 0; j < slices; ++j) {
            const GLuint a = (GLuint)(i * (slices + 1) + j);
            const GLuint b = a + (GLuint)(slices + 1);
            g->indices[k++] = a;
            g->indices[k++] = b;
            g->indices[k++] = a + 1;
            g->indices[k++] = a + 1;
            g->indices[k++] = b;
            g->indices[k++] = b + 1;
        }
    }
    return true;
}

/* Open cylinder of radius 1 around +Y from y = 0 to 1 (the caps are the capsule's
 * spheres). */
static bool
make_cylinder(struct geometry *g, int slices)
{
    if (!geometry_alloc(g, (slices + 1) * 2, slices * 6))
        return false;
    for (int j = 0; j <= slices; ++j) {
        const float phi = 2.0f * M_PI_F * (float)j / (float)slices;
        const float x = sinf(phi), z = cosf(phi);
        set_vertex(&g->vertices[2 * j], x, 0.0f, z, x, 0.0f, z);
        set_vertex(&g->vertices[2 * j + 1], x, 1.0f, z, x, 0.0f, z);
    }
    int k = 0;
    for (int j = 0; j < slices; ++j) {
        const GLuint a = (GLuint)(2 * j);
        g->indices[k++] = a;
        g->indices[k++] = a + 2;
        g->indices[k++] = a + 1;
        g->indices[k++] = a + 1;
        g->indices[k++] = a + 2;
        g->indices[k++] = a + 3;
    }
    return true;
}

/* Unit box with a flat normal per face. */
static bool
make_box(struct geometry *g)
{
    if (!geometry_alloc(g, 24, 36))
        return false;
    /* Each face: its normal and two in-plane axes u, v with u x v = normal. */
    static const float faces[6][3][3] = {
        {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, {{-1, 0, 0}, {0, 0, 1}, {0, 1, 0}},
        {{0, 1, 0}, {0, 0, 1}, {1, 0, 0}}, {{0, -1, 0}, {1, 0, 0}, {0, 0, 1}},
        {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}}, {{0, 0, -1}, {0, 1, 0}, {1, 0, 0}},
    };
    static const float corner[4][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
    int v = 0, k = 0;
    for (int f = 0; f < 6; ++f) {
        const float *n = faces[f][0], *u = faces[f][1], *w = faces[f][2];
        const GLuint base = (GLuint)v;
        for (int c = 0; c < 4; ++c) {
            float p[3];
            for (int a = 0; a < 3; ++a)
                p[a] = 0.5f * (n[a] + corner[c][0] * u[a] + corner[c][1] * w[a]);
            set_vertex(&g->vertices[v++], p[0], p[1], p[2], n[0], n[1], n[2]);
        }
        const GLuint quad[6] = {0, 1, 2, 0, 2, 3};
        for (int q = 0; q < 6; ++q)
            g->indices[k++] = base + quad[q];
    }
    return true;
}

void
r_mesh_point_instances(size_t first_instance)
{
    const size_t base = first_instance * sizeof(struct r_instance);
    for (GLuint col = 0; col < 4; ++col)
        glVertexAttribPointer(
            2 + col, 4, GL_FLOAT, GL_FALSE, sizeof(struct r_instance),
            (const void *)(base + offsetof(struct r_instance, model) + col * sizeof(vec4)));
    glVertexAttribPointer(6, 4, GL_FLOAT, GL_FALSE, sizeof(struct r_instance),
                          (const void *)(base + offsetof(struct r_instance, color)));
}

static void
upload(struct r_mesh *mesh, const struct geometry *g, GLuint instance_buffer)
{
    glGenVertexArrays(1, &mesh->vao);
    glBindVertexArray(mesh->vao);
    glGenBuffers(1, &mesh->vertex_buffer);
    glBindBuffer(GL_ARRAY_BUFFER, mesh->vertex_buffer);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)((size_t)g->vertex_count * sizeof *g->vertices),
                 g->vertices, GL_STATIC_DRAW);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, sizeof(struct vertex),
                          (const void *)offsetof(struct vertex, position));
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, sizeof(struct vertex),
                          (const void *)offsetof(struct vertex, normal));

    glBindBuffer(GL_ARRAY_BUFFER, instance_buffer);
    for (GLuint a = 2; a <= 6; ++a) {
        glEnableVertexAttribArray(a);
        glVertexAttribDivisor(a, 1);
    }
    r_mesh_point_instances(0);

    glGenBuffers(1, &mesh->index_buffer);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, mesh->index_buffer);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)((size_t)g->index_count * sizeof *g->indices),
                 g->indices, GL_STATIC_DRAW);
    mesh->index_count = g->index_count;
    glBindVertexArray(0);
}

enum em_result
r_meshes_create(struct r_mesh meshes[R_MESH_COUNT], GLuint instance_buffer, struct em_error *err)
{
    memset(meshes, 0, sizeof(struct r_mesh) * R_MESH_COUNT);
    for (int m = 0; m < R_MESH_COUNT; ++m) {
        struct geometry g = {0};
        bool ok = false;
        switch ((enum r_mesh_id)m) {
        case R_MESH_SPHERE: ok = make_sphere(&g, 24, 14); break;
        case R_MESH_CYLINDER: ok = make_cylinder(&g, 24); break;
        case R_MESH_BOX: ok = make_box(&g); break;
        case R_MESH_COUNT: break;
        }
        if (!ok) {
            geometry_fini(&g);
            r_meshes_destroy(meshes);
            return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "render: out of memory for meshes");
        }
        upload(&meshes[m], &g, instance_buffer);
        geometry_fini(&g);
    }
    return EM_OK;
}

void
r_meshes_destroy(struct r_mesh meshes[R_MESH_COUNT])
{
    for (int m = 0; m < R_MESH_COUNT; ++m) {
        if (meshes[m].vao)
            glDeleteVertexArrays(1, &meshes[m].vao);
        if (meshes[m].vertex_buffer)
            glDeleteBuffers(1, &meshes[m].vertex_buffer);
        if (meshes[m].index_buffer)
            glDeleteBuffers(1, &meshes[m].index_buffer);
        memset(&meshes[m], 0, sizeof meshes[m]);
    }
}

struct r_instance *
r_instance_push(struct r_instance_list *list)
{
    if (list->count == list->capacity) {
        const int capacity = list->capacity ? list->capacity * 2 : 64;
        /* r_instance holds mat4/vec4: keep the 16-byte alignment cglm wants. */
        struct r_instance *items = aligned_alloc(16, (size_t)capacity * sizeof(struct r_instance));
        if (!items)
            return NULL;
        if (list->count)
            memcpy(items, list->items, (size_t)list->count * sizeof *items);
        free(list->items);
        list->items = items;
        list->capacity = capacity;
    }
    return &list->items[list->count++];
}

void
r_instance_list_fini(struct r_instance_list *list)
{
    free(list->items);
    memset(list, 0, sizeof *list);
}
