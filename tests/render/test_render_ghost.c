/*
 * The truth beside the avatar in the mirror (issue 28): a scene's ghost is drawn
 * translucent where its bones are and nowhere else, G's switch hides it completely, and a
 * second avatar (--compare) is drawn beside the first with its own parts where they
 * project. Needs a display: CI runs it under Xvfb.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cglm/cglm.h>

#include "embody/m_math.h"
#include "render/r_internal.h"
#include "render_check.h"

#define HUMANOID EMBODY_SOURCE_DIR "/config/humanoid.json"
#define EYE_PX 512
/* A ghost bone is 2.6 cm thick: about 6 px at 2 m in this view; edges and blending
 * spread a little further. */
#define GHOST_MARGIN_PX 10.0f

/* The scene's pose moved by `shift_m`, as a ghost: every joint and its parent. */
struct ghost {
    float (*position_m)[3];
    int *parent;
    int count;
};

static void
ghost_init(struct ghost *g, const struct render_check_scene *ts, const float shift_m[3])
{
    g->count = ts->skeleton.joint_count;
    g->position_m = calloc((size_t)g->count, sizeof *g->position_m);
    g->parent = calloc((size_t)g->count, sizeof *g->parent);
    assert_non_null(g->position_m);
    assert_non_null(g->parent);
    for (int j = 0; j < g->count; ++j) {
        m_vec3_add(ts->pose.position_m[j], shift_m, g->position_m[j]);
        g->parent[j] = ts->skeleton.parent[j];
    }
}

static void
ghost_fini(struct ghost *g)
{
    free(g->position_m);
    free(g->parent);
}

struct eye {
    mat4 view, projection, view_proj;
    GLuint fb, color, depth;
};

/* A fixed eye 2.2 m in front of the player (no camera smoothing between two images), into
 * a framebuffer of the test's own. */
static void
eye_open(struct render *r, struct eye *e)
{
    render_make_current(r);
    glGenFramebuffers(1, &e->fb);
    glBindFramebuffer(GL_FRAMEBUFFER, e->fb);
    glGenRenderbuffers(1, &e->color);
    glBindRenderbuffer(GL_RENDERBUFFER, e->color);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, EYE_PX, EYE_PX);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, e->color);
    glGenRenderbuffers(1, &e->depth);
    glBindRenderbuffer(GL_RENDERBUFFER, e->depth);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, EYE_PX, EYE_PX);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, e->depth);
    assert_int_equal(glCheckFramebufferStatus(GL_FRAMEBUFFER), GL_FRAMEBUFFER_COMPLETE);
    vec3 eye = {0.0f, 1.0f, 2.2f}, center = {0.0f, 0.95f, 0.0f}, up = {0.0f, 1.0f, 0.0f};
    glm_lookat(eye, center, up, e->view);
    glm_perspective(glm_rad(60.0f), 1.0f, 0.05f, 100.0f, e->projection);
    glm_mat4_mul(e->projection, e->view, e->view_proj);
}

static void
eye_close(struct eye *e)
{
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glDeleteFramebuffers(1, &e->fb);
    GLuint rbs[2] = {e->color, e->depth};
    glDeleteRenderbuffers(2, rbs);
}

static uint8_t *
eye_draw(struct render *r, struct eye *e, const struct render_scene *scene)
{
    glBindFramebuffer(GL_FRAMEBUFFER, e->fb);
    render_draw_eye(r, scene, e->view, e->projection, EYE_PX, EYE_PX);
    uint8_t *rgba = malloc((size_t)EYE_PX * EYE_PX * 4);
    assert_non_null(rgba);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, EYE_PX, EYE_PX, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
    return rgba;
}

/* Pixel (rows from the bottom, as glReadPixels) of a world point in the eye's image. */
static void
eye_project(const struct eye *e, const float *p, float out[2])
{
    vec4 v = {p[0], p[1], p[2], 1.0f}, clip;
    glm_mat4_mulv((vec4 *)e->view_proj, v, clip);
    out[0] = (clip[0] / clip[3] * 0.5f + 0.5f) * EYE_PX;
    out[1] = (clip[1] / clip[3] * 0.5f + 0.5f) * EYE_PX;
}

static float
segment_distance(const float p[2], const float a[2], const float b[2])
{
    const float dx = b[0] - a[0], dy = b[1] - a[1];
    const float len2 = dx * dx + dy * dy;
    float t = len2 > 0.0f ? ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / len2 : 0.0f;
    t = fminf(fmaxf(t, 0.0f), 1.0f);
    const float ex = a[0] + t * dx - p[0], ey = a[1] + t * dy - p[1];
    return sqrtf(ex * ex + ey * ey);
}

/* Distance in pixels from pixel `p` to the nearest projected ghost bone. */
static float
ghost_distance(const struct eye *e, const struct ghost *g, const float p[2])
{
    float best = INFINITY;
    for (int j = 0; j < g->count; ++j) {
        if (g->parent[j] < 0)
            continue;
        float a[2], b[2];
        eye_project(e, g->position_m[g->parent[j]], a);
        eye_project(e, g->position_m[j], b);
        best = fminf(best, segment_distance(p, a, b));
    }
    return best;
}

static void
ghost_is_drawn_where_its_bones_are_and_only_there(void **state)
{
    (void)state;
    struct render_check_scene ts;
    render_check_scene_load(&ts, HUMANOID);
    struct render *r = render_check_open_hidden();
    struct eye e;
    eye_open(r, &e);
    /* The truth 30 cm to the side of the avatar: some of it over the avatar, some not. */
    const float shift[3] = {0.3f, 0.0f, 0.0f};
    struct ghost g;
    ghost_init(&g, &ts, shift);
    struct render_scene without = ts.scene, with = ts.scene;
    with.ghost_count = 1;
    with.ghost[0] = (struct render_ghost){g.count, (const float(*)[3])g.position_m, g.parent};

    assert_true(render_ghost_visible(r));
    uint8_t *plain = eye_draw(r, &e, &without);
    uint8_t *shown = eye_draw(r, &e, &with);
    render_set_ghost_visible(r, false);
    uint8_t *hidden = eye_draw(r, &e, &with);
    render_set_ghost_visible(r, true);

    long differing = 0, elsewhere = 0;
    float worst = 0.0f;
    for (int y = 0; y < EYE_PX; ++y)
        for (int x = 0; x < EYE_PX; ++x) {
            const size_t i = ((size_t)y * EYE_PX + (size_t)x) * 4;
            if (memcmp(plain + i, shown + i, 3) == 0)
                continue;
            differing++;
            const float p[2] = {(float)x + 0.5f, (float)y + 0.5f};
            const float d = ghost_distance(&e, &g, p);
            worst = fmaxf(worst, d);
            elsewhere += d > GHOST_MARGIN_PX;
        }
    print_message("ghost: %ld pixels changed, the farthest %.1f px from a ghost bone\n", differing,
                  (double)worst);
    if (differing < 1000)
        fail_msg("the ghost changed only %ld pixels: it is not drawn", differing);
    if (elsewhere > 0)
        fail_msg("%ld pixels changed farther than %.0f px from any ghost bone (worst %.1f px)",
                 elsewhere, (double)GHOST_MARGIN_PX, (double)worst);
    /* Hidden (G), the image is the one without a ghost, to the bit. */
    assert_memory_equal(plain, hidden, (size_t)EYE_PX * EYE_PX * 4);
    free(plain);
    free(shown);
    free(hidden);
    ghost_fini(&g);
    eye_close(&e);
    render_destroy(&r);
    render_check_scene_fini(&ts);
}

static void
second_avatar_is_drawn_beside_the_first(void **state)
{
    (void)state;
    struct render_check_scene ts;
    render_check_scene_load(&ts, HUMANOID);
    struct sk_pose beside;
    assert_int_equal(sk_pose_init(&beside, &ts.skeleton), EM_OK);
    sk_pose_copy(&ts.pose, &beside);
    const float shift[3] = {1.2f, 0.0f, 0.0f};
    for (int j = 0; j < beside.joint_count; ++j)
        m_vec3_add(beside.position_m[j], shift, beside.position_m[j]);
    struct render_scene scene = ts.scene, second_alone = ts.scene;
    scene.hidden_devices = second_alone.hidden_devices = (1u << EM_DEVICE_COUNT) - 1;
    scene.second.skeleton = &ts.skeleton;
    scene.second.pose = &beside;
    second_alone.pose = &beside; /* what render_check_avatar looks for: the second's parts */

    struct render *r = render_check_open_hidden();
    char report[2048];
    struct render_check_image image;
    /* Without the second avatar its parts are not there. */
    struct render_scene first_alone = scene;
    memset(&first_alone.second, 0, sizeof first_alone.second);
    render_draw(r, &scene); /* the camera frames both: same camera for the two images */
    render_draw(r, &first_alone);
    assert_true(render_check_image_read(r, &image));
    const int missing = render_check_avatar(r, &image, &second_alone, report, sizeof report);
    render_check_image_fini(&image);
    assert_true(missing >= 3);

    render_draw(r, &scene);
    assert_true(render_check_image_read(r, &image));
    int failed = render_check_avatar(r, &image, &scene, report, sizeof report);
    if (failed)
        fail_msg("the first avatar: %d part(s) not where they project:\n%s", failed, report);
    failed = render_check_avatar(r, &image, &second_alone, report, sizeof report);
    if (failed)
        fail_msg("the second avatar: %d part(s) not where they project:\n%s", failed, report);
    render_check_image_fini(&image);
    /* The camera looks between them: both heads are in the image. */
    int w, h;
    render_get_size(r, &w, &h);
    float a[2], b[2];
    assert_true(render_project(r, ts.pose.position_m[ts.skeleton.bone_joint[SK_HEAD]], a));
    assert_true(render_project(r, beside.position_m[ts.skeleton.bone_joint[SK_HEAD]], b));
    assert_true(a[0] > 0.0f && a[0] < (float)w && b[0] > 0.0f && b[0] < (float)w);
    render_destroy(&r);
    sk_pose_fini(&beside);
    render_check_scene_fini(&ts);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ghost_is_drawn_where_its_bones_are_and_only_there),
        cmocka_unit_test(second_avatar_is_drawn_beside_the_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
