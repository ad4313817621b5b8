/*
 * The picture of the fingers in docs/hands.md (not a test): the default avatar's left hand
 * from above and in front, at rest, in the hand model's test poses (point, fist, open,
 * thumbs-up), the skinned mesh above and the capsule figure below, written as one PNG.
 *
 *   xvfb-run -a -s "-screen 0 1280x1024x24" build/tests/render/hand_closeup docs/hands.png
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cglm/cglm.h>

#include "avatar/av_internal.h"
#include "avatar/avatar.h"
#include "embody/hand.h"
#include "embody/m_math.h"
#include "render/r_internal.h"
#include "render/render.h"
#include "render_check.h"
#include "../hand/hand_poses.h"

#define TILE 256

static const int k_poses[] = {POSE_POINT, POSE_FIST, POSE_OPEN, POSE_THUMBS_UP};
#define POSES ((int)(sizeof k_poses / sizeof k_poses[0]))

/* Draws the scene from `eye` towards `target` into the tile at (col, row) of `image`
 * (rows from the top). */
static void
draw_tile(struct render *r, const struct render_scene *scene, const vec3 eye, const vec3 target,
          uint8_t *image, int width, int col, int row)
{
    render_make_current(r);
    GLuint fb, rb[2];
    glGenFramebuffers(1, &fb);
    glBindFramebuffer(GL_FRAMEBUFFER, fb);
    glGenRenderbuffers(2, rb);
    glBindRenderbuffer(GL_RENDERBUFFER, rb[0]);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, TILE, TILE);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, rb[0]);
    glBindRenderbuffer(GL_RENDERBUFFER, rb[1]);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, TILE, TILE);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, rb[1]);
    mat4 view, projection;
    vec3 up = {0.0f, 1.0f, 0.0f};
    glm_lookat((float *)eye, (float *)target, up, view);
    glm_perspective(glm_rad(40.0f), 1.0f, 0.01f, 100.0f, projection);
    render_draw_eye(r, scene, view, projection, TILE, TILE);
    static uint8_t rgba[TILE * TILE * 4];
    glReadPixels(0, 0, TILE, TILE, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glDeleteFramebuffers(1, &fb);
    glDeleteRenderbuffers(2, rb);
    for (int y = 0; y < TILE; ++y) /* GL's rows are from the bottom */
        memcpy(image + ((size_t)(row * TILE + y) * (size_t)width + (size_t)col * TILE) * 4,
               rgba + (size_t)(TILE - 1 - y) * TILE * 4, TILE * 4);
}

int
main(int argc, char **argv)
{
    const char *out = argc > 1 ? argv[1] : "hands.png";
    struct render_check_scene ts;
    struct em_error err = {{0}};
    if (!render_check_scene_init(&ts, EMBODY_SOURCE_DIR "/config/humanoid.json", &err)) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    struct av_avatar avatar;
    struct av_skin_binding binding;
    if (av_avatar_load(EMBODY_SOURCE_DIR "/config/avatar/embody.vrm", NULL, &avatar, &err) !=
            EM_OK ||
        av_skin_bind(&avatar, &ts.skeleton, &binding, &err) != EM_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    struct render *r = NULL;
    const struct render_desc desc = {.hidden = true, .hide_hud = true, .width = 640, .height = 480};
    if (render_create(&desc, &r, &err) != EM_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    sk_pose_set_rest(&ts.pose, &ts.skeleton);
    ts.scene.hidden_devices = (1u << EM_DEVICE_COUNT) - 1;
    ts.scene.tracker_present = 0;
    const float *knuckles = ts.pose.position_m[ts.skeleton.bone_joint[SK_LEFT_HAND_END]];
    const vec3 target = {knuckles[0] + 0.02f, knuckles[1], knuckles[2]};
    const vec3 eye = {knuckles[0] + 0.12f, knuckles[1] + 0.22f, knuckles[2] + 0.26f};
    const int width = POSES * TILE, height = 2 * TILE;
    uint8_t *image = calloc((size_t)width * height * 4, 1);
    if (!image)
        return 1;
    for (int p = 0; p < POSES; ++p) {
        struct hd_pose pose;
        test_pose_make(av_hand_model(&avatar, HD_LEFT), k_poses[p], &pose);
        av_set_hand_pose(&avatar, HD_LEFT, &pose);
        ts.scene.avatar = &avatar;
        ts.scene.avatar_binding = &binding;
        ts.scene.hand_pose[HD_LEFT] = NULL;
        draw_tile(r, &ts.scene, eye, target, image, width, p, 0);
        ts.scene.avatar = NULL;
        ts.scene.hand_pose[HD_LEFT] = &pose;
        draw_tile(r, &ts.scene, eye, target, image, width, p, 1);
        ts.scene.hand_pose[HD_LEFT] = NULL;
    }
    size_t size = 0;
    uint8_t *png = av_image_encode_png(image, width, height, &size);
    FILE *f = png ? fopen(out, "wb") : NULL;
    const bool ok = f && fwrite(png, 1, size, f) == size;
    if (f)
        fclose(f);
    free(png);
    free(image);
    render_destroy(&r);
    av_skin_binding_fini(&binding);
    av_avatar_fini(&avatar);
    render_check_scene_fini(&ts);
    if (!ok) {
        fprintf(stderr, "%s: cannot write\n", out);
        return 1;
    }
    printf("%s: %d x %d\n", out, width, height);
    return 0;
}
