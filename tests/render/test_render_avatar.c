/*
 * The skinned avatar in the mirror view and a headset eye (needs a display: CI runs it
 * under Xvfb): the default avatar (config/avatar/embody.vrm) bound to the test scene's
 * skeleton covers the head, hands and feet where the pose projects, it is the skinned
 * mesh that is drawn (its eyes show, the capsule figure is left out unless asked for),
 * and an avatar that cannot be drawn leaves the capsule figure in its place.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cglm/cglm.h>

#include "avatar/avatar.h"
#include "embody/m_math.h"
#include "render/render.h"
#include "render/r_internal.h"
#include "render_check.h"

#define HUMANOID EMBODY_SOURCE_DIR "/config/humanoid.json"
#define AVATAR EMBODY_SOURCE_DIR "/config/avatar/embody.vrm"

struct fixture {
    struct render_check_scene ts;
    struct av_avatar avatar;
    struct av_skin_binding binding;
    struct render *r;
};

static void
setup(struct fixture *f)
{
    struct em_error err = {{0}};
    render_check_scene_load(&f->ts, HUMANOID);
    if (av_avatar_load(AVATAR, NULL, &f->avatar, &err) != EM_OK ||
        av_skin_bind(&f->avatar, &f->ts.skeleton, &f->binding, &err) != EM_OK)
        fail_msg("%s", err.message);
    f->ts.scene.avatar = &f->avatar;
    f->ts.scene.avatar_binding = &f->binding;
    f->r = render_check_open_hidden();
}

static void
teardown(struct fixture *f)
{
    render_destroy(&f->r);
    av_skin_binding_fini(&f->binding);
    av_avatar_fini(&f->avatar);
    render_check_scene_fini(&f->ts);
}

static void
expect_parts_covered(struct fixture *f)
{
    struct render_check_image image;
    assert_true(render_check_image_read(f->r, &image));
    char report[2048];
    const int failed = render_check_avatar(f->r, &image, &f->ts.scene, report, sizeof report);
    render_check_image_fini(&image);
    if (failed)
        fail_msg("%d part(s) not drawn where they project:\n%s", failed, report);
}

/* The brightness of the pixel where `world_m` projects in the last image. */
static int
brightness_at(struct fixture *f, const vec3 world_m)
{
    float px[2];
    assert_true(render_project(f->r, world_m, px));
    struct render_check_image image;
    assert_true(render_check_image_read(f->r, &image));
    const uint8_t *p = image.rgba + ((size_t)px[1] * (size_t)image.width + (size_t)px[0]) * 4;
    const int b = (p[0] + p[1] + p[2]) / 3;
    render_check_image_fini(&image);
    return b;
}

static void
skinned_avatar_covers_head_hands_and_feet_in_every_camera(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f);
    /* (From the side, the test pose's raised left arm is in front of the head.) */
    for (int cam = RENDER_CAMERA_MIRROR; cam <= RENDER_CAMERA_FRONT; ++cam) {
        if (cam == RENDER_CAMERA_ORBIT)
            continue;
        render_set_camera(f.r, (enum render_camera)cam);
        f.ts.scene.hidden_devices = (1u << EM_DEVICE_COUNT) - 1; /* a controller hides a hand */
        render_draw(f.r, &f.ts.scene);
        render_draw(f.r, &f.ts.scene);
        expect_parts_covered(&f);
    }
    teardown(&f);
}

/* The default avatar's eyes are dark, in front of the face: drawn only by the skinned
 * mesh (the capsule figure has a plain head), and only while it is posed there. */
static void
it_is_the_skinned_mesh_that_is_drawn(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f);
    render_set_camera(f.r, RENDER_CAMERA_FRONT);
    f.ts.scene.hidden_devices = (1u << EM_DEVICE_COUNT) - 1;
    const int head = f.ts.skeleton.bone_joint[SK_HEAD];
    vec3 local = {0.034f, 0.085f, 0.13f}, eye;
    m_quat_rotate(f.ts.pose.rotation[head], local, eye);
    m_vec3_add(eye, f.ts.pose.position_m[head], eye);
    render_draw(f.r, &f.ts.scene);
    assert_true(f.r->parts.hide_figure);
    const int with_avatar = brightness_at(&f, eye);
    f.ts.scene.avatar = NULL;
    render_draw(f.r, &f.ts.scene);
    const int with_figure = brightness_at(&f, eye);
    if (!(with_avatar < 60 && with_figure > with_avatar + 40))
        fail_msg("eye pixel brightness: %d with the avatar, %d with the capsule figure",
                 with_avatar, with_figure);
    /* B (show_figure) draws the figure over the avatar. */
    f.ts.scene.avatar = &f.avatar;
    f.r->show_figure = true;
    render_draw(f.r, &f.ts.scene);
    assert_false(f.r->parts.hide_figure);
    teardown(&f);
}

static void
an_avatar_that_cannot_be_drawn_leaves_the_capsule_figure(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f);
    struct av_skin_binding wrong = {0}; /* bound to nothing: joint counts differ */
    f.ts.scene.avatar_binding = &wrong;
    f.ts.scene.hidden_devices = (1u << EM_DEVICE_COUNT) - 1;
    render_draw(f.r, &f.ts.scene);
    assert_false(f.r->parts.hide_figure);
    expect_parts_covered(&f);
    teardown(&f);
}

static void
headset_eye_view_draws_the_skinned_avatar(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f);
    render_make_current(f.r);
    GLuint fb, color, depth;
    glGenFramebuffers(1, &fb);
    glBindFramebuffer(GL_FRAMEBUFFER, fb);
    glGenRenderbuffers(1, &color);
    glBindRenderbuffer(GL_RENDERBUFFER, color);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, 256, 256);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color);
    glGenRenderbuffers(1, &depth);
    glBindRenderbuffer(GL_RENDERBUFFER, depth);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, 256, 256);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, depth);
    assert_int_equal(glCheckFramebufferStatus(GL_FRAMEBUFFER), GL_FRAMEBUFFER_COMPLETE);
    /* An eye 0.6 m in front of the player's face, looking at it (as a friend's headset
     * would), into a 256 x 256 framebuffer of the test's own. */
    const int head = f.ts.skeleton.bone_joint[SK_HEAD];
    vec3 local = {0.034f, 0.085f, 0.13f}, avatar_eye;
    m_quat_rotate(f.ts.pose.rotation[head], local, avatar_eye);
    m_vec3_add(avatar_eye, f.ts.pose.position_m[head], avatar_eye);
    mat4 view, projection;
    vec3 eye = {avatar_eye[0], avatar_eye[1], avatar_eye[2] + 0.6f}, up = {0.0f, 1.0f, 0.0f};
    glm_lookat(eye, avatar_eye, up, view);
    glm_perspective(glm_rad(60.0f), 1.0f, 0.05f, 100.0f, projection);
    f.ts.scene.hidden_devices = (1u << EM_DEVICE_COUNT) - 1;
    render_draw_eye(f.r, &f.ts.scene, view, projection, 256, 256);
    uint8_t rgba[256 * 256 * 4];
    glReadPixels(0, 0, 256, 256, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glDeleteFramebuffers(1, &fb);
    GLuint rbs[2] = {color, depth};
    glDeleteRenderbuffers(2, rbs);
    /* The avatar's (dark) eye is in the middle of the image, its face around it. */
    const uint8_t *mid = rgba + ((size_t)128 * 256 + 128) * 4;
    /* The face: between the eyes and a little down (the pose turns the head). */
    vec3 face_local = {0.0f, 0.05f, 0.1f}, face_m;
    m_quat_rotate(f.ts.pose.rotation[head], face_local, face_m);
    m_vec3_add(face_m, f.ts.pose.position_m[head], face_m);
    mat4 vp;
    glm_mat4_mul(projection, view, vp);
    vec4 clip, p4 = {face_m[0], face_m[1], face_m[2], 1.0f};
    glm_mat4_mulv(vp, p4, clip);
    const float fx = (clip[0] / clip[3] * 0.5f + 0.5f) * 256.0f;
    const float fy = (0.5f - clip[1] / clip[3] * 0.5f) * 256.0f; /* image rows from the top */
    struct render_check_image top_down = {malloc(sizeof rgba), 256, 256};
    assert_non_null(top_down.rgba);
    for (int y = 0; y < 256; ++y)
        memcpy(top_down.rgba + (size_t)y * 1024, rgba + (size_t)(255 - y) * 1024, 1024);
    const float face = render_check_share(&top_down, fx, fy, 6, RENDER_CHECK_AVATAR_CENTER);
    free(top_down.rgba);
    if ((mid[0] + mid[1] + mid[2]) / 3 > 60 || face < 0.5f)
        fail_msg("eye view: middle rgb %d %d %d (the avatar's eye is dark), %.0f%% of the "
                 "face around it",
                 mid[0], mid[1], mid[2], (double)(face * 100.0f));
    teardown(&f);
}

/* Draws the eye view (64 x 64, 90 degrees) from `eye` towards `target` into `rgba`. */
static void
draw_eye_view(struct fixture *f, const vec3 eye, const vec3 target, uint8_t *rgba)
{
    render_make_current(f->r);
    GLuint fb, color, depth;
    glGenFramebuffers(1, &fb);
    glBindFramebuffer(GL_FRAMEBUFFER, fb);
    glGenRenderbuffers(1, &color);
    glBindRenderbuffer(GL_RENDERBUFFER, color);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, 64, 64);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color);
    glGenRenderbuffers(1, &depth);
    glBindRenderbuffer(GL_RENDERBUFFER, depth);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, 64, 64);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, depth);
    mat4 view, projection;
    vec3 up = {0.0f, 1.0f, 0.0f};
    glm_lookat((float *)eye, (float *)target, up, view);
    glm_perspective(glm_rad(90.0f), 1.0f, 0.01f, 100.0f, projection);
    render_draw_eye(f->r, &f->ts.scene, view, projection, 64, 64);
    glReadPixels(0, 0, 64, 64, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glDeleteFramebuffers(1, &fb);
    GLuint rbs[2] = {color, depth};
    glDeleteRenderbuffers(2, rbs);
}

/* From the headset's place in the head (8 cm above and 9 cm in front of the head joint)
 * of an avatar at rest, looking ahead: above the horizon the view is the same as with no
 * avatar at all (its
 * own head, whose eyes would be a few centimetres in front of the player's, is left out),
 * while the mirror still shows the head. */
static void
own_head_is_hidden_from_inside_it(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f);
    sk_pose_set_rest(&f.ts.pose, &f.ts.skeleton);
    f.ts.scene.hidden_devices = (1u << EM_DEVICE_COUNT) - 1;
    const float *head = f.ts.pose.position_m[f.ts.skeleton.bone_joint[SK_HEAD]];
    const vec3 eye = {head[0], head[1] + 0.08f, head[2] + 0.09f};
    const vec3 ahead = {head[0], head[1] + 0.08f, head[2] + 1.09f};
    static uint8_t with[64 * 64 * 4], without[64 * 64 * 4];
    draw_eye_view(&f, eye, ahead, with);
    const struct sk_skeleton *skeleton = f.ts.scene.skeleton;
    f.ts.scene.skeleton = NULL;
    f.ts.scene.avatar = NULL;
    draw_eye_view(&f, eye, ahead, without);
    /* Above the horizon (the floor below follows the player: its grid and shadows move). */
    int differing = 0;
    for (int i = 64 * 32; i < 64 * 64; ++i) /* rows from the bottom */
        differing += memcmp(with + i * 4, without + i * 4, 3) != 0;
    printf("view from inside the head: %d of %d pixels above the horizon differ from an empty "
           "scene\n",
           differing, 64 * 32);
    if (differing > 64 * 32 / 100)
        fail_msg("%d pixels of the view from inside the head show the avatar", differing);
    /* The mirror still shows the head. */
    f.ts.scene.skeleton = skeleton;
    f.ts.scene.avatar = &f.avatar;
    render_draw(f.r, &f.ts.scene);
    expect_parts_covered(&f);
    teardown(&f);
}

/* ---- Fingers (issue 44) ---- */

struct hand_view {
    int left_pixels;     /* of the left side's colour, in the whole view */
    bool left_at_finger; /* the open index finger's middle is drawn there */
};

/* Looks down at the left hand of the avatar at rest, from 30 cm above its knuckles, and
 * classifies what is seen: with the avatar posed `pose` (its mesh, or the capsule figure
 * given the same pose when `figure`). `finger_m` is a point on the open index finger. */
static struct hand_view
look_at_left_hand(struct fixture *f, const struct hd_pose *pose, bool figure, const vec3 finger_m)
{
    enum { SIZE = 128 };
    av_set_hand_pose(&f->avatar, HD_LEFT, pose);
    f->ts.scene.avatar = figure ? NULL : &f->avatar;
    f->ts.scene.hand_pose[HD_LEFT] = figure ? pose : NULL;
    const float *knuckles = f->ts.pose.position_m[f->ts.skeleton.bone_joint[SK_LEFT_HAND_END]];
    const vec3 eye = {knuckles[0], knuckles[1] + 0.3f, knuckles[2]};
    render_make_current(f->r);
    GLuint fb, color, depth;
    glGenFramebuffers(1, &fb);
    glBindFramebuffer(GL_FRAMEBUFFER, fb);
    glGenRenderbuffers(1, &color);
    glBindRenderbuffer(GL_RENDERBUFFER, color);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, SIZE, SIZE);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color);
    glGenRenderbuffers(1, &depth);
    glBindRenderbuffer(GL_RENDERBUFFER, depth);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, SIZE, SIZE);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, depth);
    mat4 view, projection, vp;
    vec3 up = {0.0f, 0.0f, -1.0f};
    glm_lookat((float *)eye, (float *)knuckles, up, view);
    glm_perspective(glm_rad(50.0f), 1.0f, 0.01f, 100.0f, projection);
    render_draw_eye(f->r, &f->ts.scene, view, projection, SIZE, SIZE);
    static uint8_t rgba[SIZE * SIZE * 4];
    glReadPixels(0, 0, SIZE, SIZE, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glDeleteFramebuffers(1, &fb);
    GLuint rbs[2] = {color, depth};
    glDeleteRenderbuffers(2, rbs);
    struct hand_view v = {0};
    for (int i = 0; i < SIZE * SIZE; ++i)
        v.left_pixels += render_check_classify(rgba + i * 4) == RENDER_CHECK_AVATAR_LEFT;
    glm_mat4_mul(projection, view, vp);
    vec4 clip, p4 = {finger_m[0], finger_m[1], finger_m[2], 1.0f};
    glm_mat4_mulv(vp, p4, clip);
    const int x = (int)((clip[0] / clip[3] * 0.5f + 0.5f) * SIZE);
    const int y = (int)((clip[1] / clip[3] * 0.5f + 0.5f) * SIZE); /* rows from the bottom */
    int hits = 0;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
            const int px = x + dx, py = y + dy;
            if (px >= 0 && px < SIZE && py >= 0 && py < SIZE)
                hits += render_check_classify(rgba + ((size_t)py * SIZE + (size_t)px) * 4) ==
                        RENDER_CHECK_AVATAR_LEFT;
        }
    v.left_at_finger = hits >= 5;
    return v;
}

/* The mirror draws fingers: the open hand and the fist look different from above, and the
 * open index finger is where the hand model puts it; for the skinned avatar and for the
 * capsule figure alike. */
static void
fingers_are_drawn_open_and_closed(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f);
    sk_pose_set_rest(&f.ts.pose, &f.ts.skeleton);
    f.ts.scene.hidden_devices = (1u << EM_DEVICE_COUNT) - 1;
    const struct hd_model *model = av_hand_model(&f.avatar, HD_LEFT);
    assert_non_null(model);
    struct hd_pose open, fist;
    struct hd_curls curls = {{0.0f, 0.0f, 0.0f, 0.0f, 0.0f}, 0.0f};
    hd_pose_from_curls(model, &curls, &open);
    for (int i = 0; i < HD_FINGER_COUNT; ++i)
        curls.curl[i] = 1.0f;
    hd_pose_from_curls(model, &curls, &fist);
    /* The middle of the open index finger's intermediate bone, where the skinned avatar
     * puts it. */
    av_set_hand_pose(&f.avatar, HD_LEFT, &open);
    mat4 *m = calloc((size_t)f.binding.joint_count, sizeof *m);
    assert_non_null(m);
    av_skin_matrices(&f.binding, &f.ts.pose, m);
    const struct av_hand *H = &f.avatar.hands[HD_LEFT];
    const int j = HD_INDEX * HD_FINGER_JOINTS + 1; /* (not the middle finger: the floor's
                                                    * red X axis lies under it) */
    vec3 mid_rest, finger_m;
    m_vec3_lerp(H->rest_m[j], H->rest_m[j + 1], 0.5f, mid_rest);
    const struct av_vertex v = {.position_m = {mid_rest[0], mid_rest[1], mid_rest[2]},
                                .joint = {(uint8_t)av_finger_skin_joint(&f.avatar, HD_LEFT, j)},
                                .weight = {1.0f}};
    av_skin_vertex(&v, (const mat4 *)m, finger_m);
    free(m);
    for (int figure = 0; figure < 2; ++figure) {
        const struct hand_view o = look_at_left_hand(&f, &open, figure, finger_m);
        const struct hand_view c = look_at_left_hand(&f, &fist, figure, finger_m);
        printf("# %s: left-coloured pixels from above: open %d, fist %d; the open index "
               "finger drawn: %s open, %s closed\n",
               figure ? "capsule figure" : "skinned avatar", o.left_pixels, c.left_pixels,
               o.left_at_finger ? "yes" : "no", c.left_at_finger ? "yes" : "no");
        if (!(o.left_pixels > c.left_pixels + c.left_pixels / 5 && o.left_at_finger &&
              !c.left_at_finger))
            fail_msg("%s: the fingers do not show open and closed",
                     figure ? "capsule figure" : "skinned avatar");
    }
    f.ts.scene.hand_pose[HD_LEFT] = NULL;
    teardown(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(skinned_avatar_covers_head_hands_and_feet_in_every_camera),
        cmocka_unit_test(it_is_the_skinned_mesh_that_is_drawn),
        cmocka_unit_test(an_avatar_that_cannot_be_drawn_leaves_the_capsule_figure),
        cmocka_unit_test(headset_eye_view_draws_the_skinned_avatar),
        cmocka_unit_test(own_head_is_hidden_from_inside_it),
        cmocka_unit_test(fingers_are_drawn_open_and_closed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
