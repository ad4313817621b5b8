/*
 * Test helpers for the mirror view (render_check.h): a posed test scene and pixel checks
 * at projected points.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <SDL.h>

#include "embody/m_math.h"
#include "render_check.h"

bool
render_check_hold_gl(void)
{
    static bool held = false;
    if (held)
        return true;
    if (SDL_InitSubSystem(SDL_INIT_VIDEO) != 0 || SDL_GL_LoadLibrary(NULL) != 0)
        return false;
    held = true;
    return true;
}

struct render *
render_check_open_hidden(void)
{
    struct render_desc desc = {.hidden = true, .hide_hud = true};
    struct render *r = NULL;
    struct em_error err = {{0}};
    assert_true(render_check_hold_gl());
    if (render_create(&desc, &r, &err) != EM_OK)
        fail_msg("render_create: %s", err.message);
    return r;
}

const char *
render_check_class_name(enum render_check_class c)
{
    switch (c) {
    case RENDER_CHECK_OTHER: return "other";
    case RENDER_CHECK_AVATAR_CENTER: return "avatar centre (sand)";
    case RENDER_CHECK_AVATAR_LEFT: return "avatar left (orange)";
    case RENDER_CHECK_AVATAR_RIGHT: return "avatar right (blue)";
    case RENDER_CHECK_BACKDROP: return "backdrop";
    }
    return "?";
}

enum render_check_class
render_check_classify(const uint8_t rgb[3])
{
    const float r = rgb[0], g = rgb[1], b = rgb[2];
    const float hi = fmaxf(r, fmaxf(g, b));
    if (hi < 40.0f)
        return RENDER_CHECK_BACKDROP; /* too dark to tell a hue: the sky's top */
    /* Blue: the right side is strongly blue; the backdrop only a little. */
    if (b >= hi && (b - r) / b > 0.5f && b > 90.0f)
        return RENDER_CHECK_AVATAR_RIGHT;
    if (b >= hi && (b - r) / b < 0.4f && hi < 180.0f)
        return RENDER_CHECK_BACKDROP;
    if (r >= hi && r > 70.0f) {
        const float rg = (r - g) / r, rb = (r - b) / r;
        /* Orange, also where the light catches it: a lit top of the skinned avatar's foot
         * reads (255, 176, 123), r - b only 0.52 of r; the sand centre is told apart by
         * r - g, which orange keeps above 0.3 however lit. */
        if (rg > 0.3f && rb > 0.45f)
            return RENDER_CHECK_AVATAR_LEFT;
        if (rg < 0.25f && rb > 0.2f && rb < 0.6f)
            return RENDER_CHECK_AVATAR_CENTER;
    }
    return RENDER_CHECK_OTHER;
}

bool
render_check_image_read(struct render *render, struct render_check_image *out_image)
{
    render_get_size(render, &out_image->width, &out_image->height);
    const size_t size = (size_t)out_image->width * (size_t)out_image->height * 4;
    out_image->rgba = malloc(size);
    if (!out_image->rgba)
        return false;
    if (!render_read_pixels(render, out_image->rgba, size)) {
        render_check_image_fini(out_image);
        return false;
    }
    return true;
}

void
render_check_image_fini(struct render_check_image *image)
{
    free(image->rgba);
    memset(image, 0, sizeof *image);
}

float
render_check_share(const struct render_check_image *image, float x, float y, int radius_px,
                   enum render_check_class c)
{
    const int cx = (int)floorf(x), cy = (int)floorf(y);
    int total = 0, match = 0;
    for (int dy = -radius_px; dy <= radius_px; ++dy) {
        for (int dx = -radius_px; dx <= radius_px; ++dx) {
            const int px = cx + dx, py = cy + dy;
            if (dx * dx + dy * dy > radius_px * radius_px)
                continue;
            ++total; /* pixels off the image count as not matching */
            if (px < 0 || py < 0 || px >= image->width || py >= image->height)
                continue;
            const uint8_t *p = image->rgba + ((size_t)py * (size_t)image->width + (size_t)px) * 4;
            match += render_check_classify(p) == c;
        }
    }
    return total ? (float)match / (float)total : 0.0f;
}

/* A point well inside each checked part, from the pose. */
struct part_point {
    const char *name;
    enum sk_bone bone;
    enum sk_bone toward; /* the point is a way from `bone` towards this joint */
    float along;
    enum render_check_class expect;
};

int
render_check_avatar(struct render *render, const struct render_check_image *image,
                    const struct render_scene *scene, char *report, size_t report_size)
{
    static const struct part_point parts[] = {
        /* Near the crown: a headset at the eyes covers the face. */
        {"head", SK_HEAD, SK_HEAD_TOP, 0.9f, RENDER_CHECK_AVATAR_CENTER},
        {"left hand", SK_LEFT_HAND, SK_LEFT_HAND_END, 0.0f, RENDER_CHECK_AVATAR_LEFT},
        {"right hand", SK_RIGHT_HAND, SK_RIGHT_HAND_END, 0.0f, RENDER_CHECK_AVATAR_RIGHT},
        {"left foot", SK_LEFT_FOOT, SK_LEFT_TOES, 0.5f, RENDER_CHECK_AVATAR_LEFT},
        {"right foot", SK_RIGHT_FOOT, SK_RIGHT_TOES, 0.5f, RENDER_CHECK_AVATAR_RIGHT},
    };
    const struct sk_skeleton *sk = scene->skeleton;
    const struct sk_pose *pose = scene->pose;
    size_t used = 0;
    int failed = 0;
    if (report_size)
        report[0] = '\0';
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; ++i) {
        const int j = sk->bone_joint[parts[i].bone];
        if (j < 0)
            continue;
        vec3 point;
        m_vec3_copy(pose->position_m[j], point);
        const int k = sk->bone_joint[parts[i].toward];
        if (k >= 0)
            m_vec3_lerp(pose->position_m[j], pose->position_m[k], parts[i].along, point);
        float px[2] = {-1.0f, -1.0f};
        float share = 0.0f;
        if (render_project(render, point, px))
            share = render_check_share(image, px[0], px[1], 2, parts[i].expect);
        const bool ok = share >= 0.5f;
        failed += !ok;
        const uint8_t *rgba = NULL;
        const int ix = (int)px[0], iy = (int)px[1];
        if (ix >= 0 && iy >= 0 && ix < image->width && iy < image->height)
            rgba = image->rgba + ((size_t)iy * (size_t)image->width + (size_t)ix) * 4;
        if (used < report_size) {
            const int w =
                snprintf(report + used, report_size - used,
                         "%s %s at pixel (%.0f, %.0f): %.0f%% %s, centre rgb %d %d %d\n",
                         ok ? "ok  " : "FAIL", parts[i].name, (double)px[0], (double)px[1],
                         (double)(share * 100.0f), render_check_class_name(parts[i].expect),
                         rgba ? rgba[0] : -1, rgba ? rgba[1] : -1, rgba ? rgba[2] : -1);
            used += w > 0 ? (size_t)w : 0;
        }
    }
    return failed;
}

static void
set_local(struct render_check_scene *ts, enum sk_bone bone, float ax, float ay, float az,
          float angle_deg)
{
    const int j = ts->skeleton.bone_joint[bone];
    if (j < 0)
        return;
    const float axis[3] = {ax, ay, az};
    m_quat_from_axis_angle(axis, angle_deg * M_DEG_TO_RAD, ts->pose.local_rotation[j]);
}

void
render_check_place_devices(struct render_check_scene *ts)
{
    const struct sk_skeleton *sk = &ts->skeleton;
    const struct sk_pose *pose = &ts->pose;
    struct render_scene *scene = &ts->scene;
    const int head = sk->bone_joint[SK_HEAD];
    if (head >= 0) {
        /* The eyes: 8 cm up, 9 cm forward of the skull base; the view's -Z forward. */
        const float eyes[3] = {0.0f, 0.08f, 0.09f};
        float off[3];
        m_quat_rotate(pose->rotation[head], eyes, off);
        m_vec3_add(pose->position_m[head], off, scene->device[EM_DEVICE_HEAD].pose.position_m);
        const float turn[4] = {0.0f, 1.0f, 0.0f, 0.0f}; /* diag(-1, 1, -1) */
        m_quat_mul(pose->rotation[head], turn, scene->device[EM_DEVICE_HEAD].pose.orientation);
    }
    scene->device[EM_DEVICE_HEAD].flags = EM_POSE_ALL_VALID;
    const enum sk_bone hands[2][2] = {{SK_LEFT_HAND, SK_LEFT_HAND_END},
                                      {SK_RIGHT_HAND, SK_RIGHT_HAND_END}};
    for (int h = 0; h < 2; ++h) {
        struct em_device_pose *d = &scene->device[EM_DEVICE_LEFT_HAND + h];
        d->flags = EM_POSE_ALL_VALID;
        const int wrist = sk->bone_joint[hands[h][0]], end = sk->bone_joint[hands[h][1]];
        if (wrist < 0)
            continue;
        /* The palm, between wrist and knuckles; grip axes in the hand's frame. */
        m_vec3_copy(pose->position_m[wrist], d->pose.position_m);
        if (end >= 0)
            m_vec3_lerp(pose->position_m[wrist], pose->position_m[end], 0.5f, d->pose.position_m);
        const float sign = h == 0 ? 1.0f : -1.0f;
        const float x[3] = {0.0f, -sign, 0.0f}, y[3] = {-sign, 0.0f, 0.0f};
        const float z[3] = {0.0f, 0.0f, -1.0f};
        versor grip;
        m_quat_from_columns(x, y, z, grip);
        m_quat_mul(pose->rotation[wrist], grip, d->pose.orientation);
    }
}

bool
render_check_scene_init(struct render_check_scene *ts, const char *humanoid_json_path,
                        struct em_error *err)
{
    memset(ts, 0, sizeof *ts);
    if (sk_skeleton_load_json(humanoid_json_path, &ts->skeleton, err) != EM_OK)
        return false;
    if (sk_pose_init(&ts->pose, &ts->skeleton) != EM_OK) {
        sk_skeleton_fini(&ts->skeleton);
        return false;
    }
    /* Left arm raised 60 degrees, elbow a little bent; right arm down 35 degrees with the
     * forearm reaching forward; left knee lifted and bent; head turned to its left. */
    set_local(ts, SK_LEFT_UPPER_ARM, 0, 0, 1, 60.0f);
    set_local(ts, SK_LEFT_LOWER_ARM, 0, 0, 1, 25.0f);
    set_local(ts, SK_RIGHT_UPPER_ARM, 0, 0, 1, 35.0f);
    set_local(ts, SK_RIGHT_LOWER_ARM, 0, 1, 0, 60.0f);
    set_local(ts, SK_LEFT_UPPER_LEG, 1, 0, 0, -45.0f);
    set_local(ts, SK_LEFT_LOWER_LEG, 1, 0, 0, 80.0f);
    set_local(ts, SK_LEFT_FOOT, 1, 0, 0, -20.0f);
    set_local(ts, SK_HEAD, 0, 1, 0, 20.0f);
    sk_pose_forward_kinematics(&ts->pose, &ts->skeleton);

    ts->scene.skeleton = &ts->skeleton;
    ts->scene.pose = &ts->pose;
    render_check_place_devices(ts);
    struct render_hud *hud = &ts->scene.hud;
    hud->frame_rate_hz = 90.0f;
    hud->solve_us = 142.0f;
    hud->iterations = 6;
    hud->effector_count = 3;
    hud->effector_name[0] = "head";
    hud->effector_name[1] = "left";
    hud->effector_name[2] = "right";
    hud->residual_mm[0] = 0.4f;
    hud->residual_mm[1] = 2.1f;
    hud->residual_mm[2] = 12.5f;
    hud->source_name = "test";
    hud->posture = "standing";
    hud->stepping = "left foot lifted";
    hud->height_m = sk_humanoid_height(&ts->skeleton);
    hud->arm_span_m = sk_humanoid_arm_span(&ts->skeleton);
    ts->scene.target_count = 2;
    for (int h = 0; h < 2; ++h) {
        const struct em_device_pose *d = &ts->scene.device[EM_DEVICE_LEFT_HAND + h];
        m_vec3_copy(d->pose.position_m, ts->scene.target[h].target_m);
        ts->scene.target[h].target_m[1] += 0.03f;
        m_vec3_copy(d->pose.position_m, ts->scene.target[h].reached_m);
    }
    return true;
}

void
render_check_scene_fini(struct render_check_scene *ts)
{
    sk_pose_fini(&ts->pose);
    sk_skeleton_fini(&ts->skeleton);
    memset(ts, 0, sizeof *ts);
}

void
render_check_scene_load(struct render_check_scene *ts, const char *humanoid_json_path)
{
    struct em_error err = {{0}};
    if (!render_check_scene_init(ts, humanoid_json_path, &err))
        fail_msg("%s", err.message);
}
