/*
 * Inside the mirror view (src/render/render.h): the renderer's state and the pieces it
 * is built from. Not a public contract: tests may include it to check the pieces alone.
 *
 *   r_shader.c  shader files (or the built-in copies), compile/link errors as file:line
 *   r_mesh.c    the unit meshes (sphere, cylinder, box, floor quad) and instanced drawing
 *   r_scene.c   turning a scene (skeleton, pose, devices, targets) into mesh instances
 *   r_camera.c  mirror, orbit and preset cameras
 *   r_text.c    the font atlas (stb_truetype) and batches of 2-D quads
 *   r_hud.c     the HUD and the help overlay
 *   r_skin.c    skinned avatars: the mesh on the GPU, joint matrices, drawing
 *   r_material.c  avatar materials: textures and per-material uniforms
 *   r_render.c  the window, events, frame buffers, screenshots: the public functions
 */
#ifndef EMBODY_R_INTERNAL_H
#define EMBODY_R_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <SDL.h>
#include <epoxy/gl.h>

#include <cglm/types.h>

#include "render/render.h"

/* ---- Palette (sRGB): the parts must be told apart, and tests tell them apart. ---- */

#define R_COLOR_CENTER 0.92f, 0.80f, 0.58f /* torso, head: warm sand */
#define R_COLOR_LEFT 0.98f, 0.52f, 0.18f   /* the body's left side: orange */
#define R_COLOR_RIGHT 0.20f, 0.58f, 1.00f  /* the body's right side: blue */
#define R_COLOR_VISOR 0.12f, 0.14f, 0.18f
#define R_COLOR_FLOOR 0.17f, 0.18f, 0.21f
#define R_COLOR_GRID 0.52f, 0.56f, 0.64f
#define R_COLOR_BG_TOP 0.07f, 0.08f, 0.11f
#define R_COLOR_BG_HORIZON 0.22f, 0.25f, 0.31f
#define R_COLOR_DEVICE 0.22f, 0.23f, 0.26f
#define R_COLOR_LOST 0.55f, 0.55f, 0.55f
#define R_COLOR_LOST_MARK 0.95f, 0.12f, 0.10f

/* ---- Shaders ---- */

enum r_program_id {
    R_PROGRAM_MESH = 0,
    R_PROGRAM_FLOOR,
    R_PROGRAM_BACKGROUND,
    R_PROGRAM_TEXT,
    R_PROGRAM_SKIN,
    R_PROGRAM_COUNT,
};

/* A source file as read: its text and the name errors give it. */
struct r_shader_source {
    char path[PATH_MAX];
    char *text; /* owned */
};

/* Reads shader `name` ("mesh.vert") from `dir` when given (it must be there), else from
 * shaders/ found with u_path_find_data, else from the copy built into the program. */
enum em_result r_shader_read(const char *dir, const char *name, struct r_shader_source *out_source,
                             struct em_error *err);

void r_shader_source_fini(struct r_shader_source *source);

/* Compiles and links a vertex + fragment program. Errors name the file and line:
 * "<path>:12: error: ..." (EM_ERROR_PARSE). */
enum em_result r_program_build(const struct r_shader_source *vert,
                               const struct r_shader_source *frag, GLuint *out_program,
                               struct em_error *err);

/* Rewrites a driver's info log so every line that names a line of source 0 starts with
 * "<path>:<line>: " (Mesa "0:12(5): error: x", NVIDIA "0(12) : error C0000: x", and
 * "ERROR: 0:12: x" are understood); other lines are kept with "<path>: " in front.
 * Returns the first source line number found, or 0. */
int r_shader_log_format(const char *path, const char *log, char *out, size_t out_size);

/* The built-in copy of shaders/<name>, or NULL (made by the build from shaders/). */
const char *r_shader_builtin(const char *name);

/* ---- Meshes ---- */

enum r_mesh_id {
    R_MESH_SPHERE = 0, /* unit radius */
    R_MESH_CYLINDER,   /* radius 1 around +Y, from y = 0 to y = 1, open ends */
    R_MESH_BOX,        /* -0.5 to 0.5 on each axis */
    R_MESH_COUNT,
};

/* One drawn part: object to world, and colour (rgb sRGB, a = unlit amount). */
struct r_instance {
    mat4 model;
    vec4 color;
};

struct r_mesh {
    GLuint vao;
    GLuint vertex_buffer;
    GLuint index_buffer;
    GLsizei index_count;
};

struct r_instance_list {
    struct r_instance *items;
    int count;
    int capacity;
};

/* Grows as needed; returns NULL only when out of memory. */
struct r_instance *r_instance_push(struct r_instance_list *list);

void r_instance_list_fini(struct r_instance_list *list);

/* Creates the unit meshes, sharing one instance buffer bound to attributes 2 to 6. */
enum em_result r_meshes_create(struct r_mesh meshes[R_MESH_COUNT], GLuint instance_buffer,
                               struct em_error *err);

void r_meshes_destroy(struct r_mesh meshes[R_MESH_COUNT]);

/* Points the bound mesh VAO's instance attributes (2 to 6) at the instance buffer bound
 * to GL_ARRAY_BUFFER, from instance `first_instance` on. */
void r_mesh_point_instances(size_t first_instance);

/* ---- The scene as parts ---- */

/* Everything a frame draws, sorted by mesh: `solid` with depth testing, `overlay` (the
 * lost-device marks) over everything. */
struct r_parts {
    struct r_instance_list solid[R_MESH_COUNT];
    struct r_instance_list ghost[R_MESH_COUNT]; /* translucent, over the solid parts */
    struct r_instance_list overlay[R_MESH_COUNT];
    vec4 shadow[3]; /* floor shadows: x, z, radius, strength */
    vec3 focus_m;   /* where the floor grid is centred */
    bool hide_figure; /* set by the caller: leave out the capsule figure (an avatar is drawn) */
    bool show_ghost;  /* set by the caller: build the scene's ghosts */
};

/* How opaque a ghost is (the mesh program's u_alpha while drawing parts->ghost). */
#define R_GHOST_ALPHA 0.38f
#define R_COLOR_GHOST 0.80f, 0.93f, 1.00f

/* Fills `parts` from the scene. `camera_right` and `camera_up` (world, unit) turn the
 * lost-device crosses towards the viewer. Returns false only when out of memory. */
bool r_parts_build(struct r_parts *parts, const struct render_scene *scene, bool show_targets,
                   const vec3 camera_right, const vec3 camera_up);

void r_parts_fini(struct r_parts *parts);

/* ---- Skinned avatars ---- */

#define R_SKIN_MAX_JOINTS 64 /* the uniform block's size (shaders/skin.vert) */

struct av_avatar;
struct av_material;
struct r_view;

/* An avatar's textures on the GPU. */
struct r_materials {
    GLuint *textures;
    int count;
    GLuint white; /* for materials without a texture */
};

/* Uploads the avatar's textures (replacing any). False when out of memory. */
bool r_materials_upload(struct r_materials *m, const struct av_avatar *avatar);

void r_materials_destroy(struct r_materials *m);

/* Sets `program`'s material uniforms and texture, and face culling, for `mat`. */
void r_material_apply(const struct r_materials *m, GLuint program, const struct av_material *mat);

/* The avatar last drawn, on the GPU (uploaded again when the scene's avatar changes). */
struct r_skin {
    const struct av_avatar *source;
    const void *source_vertices;
    int vertex_count;
    uint32_t index_count;
    GLuint vao;
    GLuint vertex_buffer;
    GLuint index_buffer;
    GLuint joint_buffer; /* uniform buffer of joint matrices */
    struct r_materials materials;
    mat4 *matrices; /* R_SKIN_MAX_JOINTS */
};

/* Draws the scene's avatar at its pose with `program` (skin.vert/frag). Returns false when
 * there is none to draw (or it cannot be uploaded: then the capsule figure stands in). */
bool r_skin_draw(struct r_skin *s, GLuint program, const struct render_scene *scene,
                 const struct r_view *view, const float key_dir[3]);

void r_skin_destroy(struct r_skin *s);

/* ---- Cameras ---- */

struct r_camera_state {
    enum render_camera mode;
    bool have_follow;     /* `follow_*` hold a smoothed player position and facing */
    vec3 follow_m;        /* the player's hips, world */
    float follow_yaw_rad; /* facing about +Y; 0 faces +Z */
    float height_m;       /* the player's standing height, for framing */
    float orbit_yaw_rad;
    float orbit_pitch_rad;
    float orbit_distance_m;
};

/* A camera for one frame. */
struct r_view {
    mat4 view;       /* world to eye */
    mat4 projection; /* mirrored (x negated) for the mirror camera */
    mat4 view_proj;
    vec3 eye_m;
    vec3 right; /* world directions of the image's right and up, as seen on screen */
    vec3 up;
    bool mirrored; /* the image is flipped left-right: triangles wind the other way */
};

void r_camera_init(struct r_camera_state *cam);

/* Moves the followed position and facing towards the scene's player (smoothed over
 * `dt_s` seconds; the first call, or dt_s <= 0, snaps). */
void r_camera_follow(struct r_camera_state *cam, const struct render_scene *scene, float dt_s);

/* The point every camera looks at: above the followed hips at a fixed share of the
 * player's height (world, metres). */
void r_camera_center(const struct r_camera_state *cam, float out_m[3]);

/* The view for the current mode and an image of aspect width / height. */
void r_camera_view(const struct r_camera_state *cam, float aspect, struct r_view *out_view);

/* Builds view fields (view_proj, eye, right, up) from a view and a projection matrix. */
void r_view_from_matrices(const mat4 view, const mat4 projection, bool mirrored,
                          struct r_view *out_view);

/* ---- Text ---- */

struct r_text_vertex {
    float x, y;
    float u, v;
    uint8_t rgba[4];
};

struct r_font {
    GLuint texture;
    int atlas_size;
    float pixel_height;
    float ascent_px;
    float line_px;
    void *packed;       /* stbtt_packedchar per range (owned) */
    unsigned char *ttf; /* the font file (owned) */
    char path[512];
};

struct r_text_batch {
    struct r_text_vertex *vertices;
    int count;
    int capacity;
};

/* Loads the font file (`path`, or DejaVu Sans found in the usual Debian places) and
 * bakes an atlas for `pixel_height`. Fails with EM_ERROR_IO naming the paths tried. */
enum em_result r_font_create(struct r_font *font, const char *path, float pixel_height,
                             struct em_error *err);

/* Re-bakes the atlas for another size (a window moved to a display of another scale). */
enum em_result r_font_resize(struct r_font *font, float pixel_height, struct em_error *err);

void r_font_destroy(struct r_font *font);

/* Appends UTF-8 `text` at pen position (x, y: top of the line), returns the end x. */
float r_text_add(struct r_text_batch *batch, const struct r_font *font, float x, float y,
                 const char *text, const uint8_t rgba[4]);

/* Width in pixels of UTF-8 `text`. */
float r_text_width(const struct r_font *font, const char *text);

/* Appends a filled rectangle. */
void r_text_rect(struct r_text_batch *batch, const struct r_font *font, float x, float y, float w,
                 float h, const uint8_t rgba[4]);

void r_text_batch_fini(struct r_text_batch *batch);

/* ---- HUD ---- */

struct r_hud_state {
    bool visible;
    bool help_visible;
    char message[160]; /* the renderer's own transient line (screenshot saved, camera) */
    int64_t message_until_ns;
};

/* Lays out the HUD (when visible) and the help overlay (when open) for a screen of
 * width x height pixels at `scale` (1 on ordinary displays, 2 on high-DPI ones). */
void r_hud_build(struct r_text_batch *batch, const struct r_font *font,
                 const struct r_hud_state *hud, const struct render_scene *scene,
                 enum render_camera camera, float draw_ms, int width, int height, float scale,
                 int64_t now_ns);

/* ---- The renderer ---- */

struct r_target {
    GLuint framebuffer;
    GLuint color;
    GLuint depth;
    int width;
    int height;
    int samples;
};

struct render {
    SDL_Window *window;
    SDL_GLContext context;
    bool sdl_started;
    bool show_targets;
    int msaa_samples;

    GLuint program[R_PROGRAM_COUNT];
    struct r_mesh mesh[R_MESH_COUNT];
    GLuint instance_buffer;
    GLuint floor_vao;
    GLuint floor_buffer;
    GLuint empty_vao;
    GLuint text_vao;
    GLuint text_buffer;

    struct r_target msaa;     /* drawn into (multisampled when msaa_samples > 1) */
    struct r_target resolved; /* single-sampled: HUD, screenshots, shown in the window */

    struct r_parts parts;
    /* The frame's instances (solid, ghost, overlay), uploaded at once: the software
     * renderer finishes the pending draws before a buffer they use is specified again. */
    struct r_instance *staged;
    int staged_capacity;
    int staged_first[3][R_MESH_COUNT];
    struct r_text_batch text;
    struct r_font font;
    float ui_scale;

    struct r_camera_state camera;
    struct r_view last_view;
    int width_px;
    int height_px;
    int64_t last_draw_ns;
    float last_draw_ms;
    bool drawn;

    struct r_hud_state hud;
    bool dragging;

    struct r_skin skin;
    bool show_figure; /* the capsule figure over a skinned avatar (B toggles) */
    bool show_ghost;  /* the scene's ghosts (G toggles) */
};

/* Draws the 3-D scene (background, floor, parts) with `view` into the bound framebuffer
 * of width x height pixels. */
void r_draw_world(struct render *r, const struct render_scene *scene, const struct r_view *view,
                  int width, int height);

#endif
