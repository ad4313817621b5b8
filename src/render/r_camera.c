/*
 * Cameras of the mirror view (r_internal.h). The mirror camera stands in front of the
 * player facing them and follows their hips and facing (smoothed, so head turns do not
 * swing the view); its image is flipped left-right like a real mirror, so the player's
 * left hand is on the left of the screen. The others: an orbit camera the mouse turns
 * and zooms, and fixed front, side and top views centred on the player.
 */
#include <string.h>

#include <cglm/cglm.h>

#include "embody/m_math.h"
#include "render/r_internal.h"

#define FOV_Y_RAD (40.0f * M_DEG_TO_RAD)
#define NEAR_M 0.05f
#define FAR_M 200.0f
#define FOLLOW_TIME_S 0.35f /* time constant of the follow smoothing */

void
r_camera_init(struct r_camera_state *cam)
{
    memset(cam, 0, sizeof *cam);
    cam->mode = RENDER_CAMERA_MIRROR;
    m_vec3_set(cam->follow_m, 0.0f, 1.0f, 0.0f);
    cam->height_m = 1.75f;
    cam->orbit_yaw_rad = 35.0f * M_DEG_TO_RAD;
    cam->orbit_pitch_rad = 15.0f * M_DEG_TO_RAD;
    cam->orbit_distance_m = 3.6f;
}

/* The player's position (hips), facing (yaw about +Y, 0 = +Z) and standing height, from
 * the pose when there is one, else from the headset. Returns false if neither is known. */
static bool
player_from_scene(const struct render_scene *scene, float *out_position, float *out_yaw,
                  float *out_height)
{
    const struct sk_skeleton *sk = scene->skeleton;
    const struct sk_pose *pose = scene->pose;
    float forward[3];
    if (sk && pose && sk->joint_count > 0 && pose->joint_count == sk->joint_count) {
        int hips = sk->bone_joint[SK_HIPS];
        if (hips < 0)
            hips = 0;
        m_vec3_copy(pose->position_m[hips], out_position);
        const float z[3] = {0.0f, 0.0f, 1.0f};
        m_quat_rotate(pose->rotation[hips], z, forward);
        float top = 0.0f;
        for (int i = 0; i < sk->joint_count; ++i)
            top = fmaxf(top, sk->rest_position_m[i][1]);
        *out_height = top;
    } else if (em_device_pose_usable(&scene->device[EM_DEVICE_HEAD])) {
        const struct em_pose *head = &scene->device[EM_DEVICE_HEAD].pose;
        m_vec3_copy(head->position_m, out_position);
        out_position[1] *= 0.55f; /* about where the hips are */
        const float minus_z[3] = {0.0f, 0.0f, -1.0f};
        m_quat_rotate(head->orientation, minus_z, forward);
        *out_height = head->position_m[1] + 0.1f;
    } else {
        return false;
    }
    if (!m_vec3_is_finite(out_position) || !m_vec3_is_finite(forward))
        return false;
    /* Lying flat, the forward direction has no useful yaw: keep the last one. */
    if (forward[0] * forward[0] + forward[2] * forward[2] > 0.04f)
        *out_yaw = atan2f(forward[0], forward[2]);
    if (!(*out_height > 0.5f && *out_height < 3.0f))
        *out_height = 1.75f;
    return true;
}

/* With a second avatar (--compare) the camera looks between the two hips. */
static void
follow_second(const struct render_scene *scene, float *position)
{
    const struct render_figure *f = &scene->second;
    if (!f->skeleton || !f->pose || f->pose->joint_count != f->skeleton->joint_count)
        return;
    const int hips = f->skeleton->bone_joint[SK_HIPS];
    if (hips < 0 || !m_vec3_is_finite(f->pose->position_m[hips]))
        return;
    m_vec3_lerp(position, f->pose->position_m[hips], 0.5f, position);
}

void
r_camera_follow(struct r_camera_state *cam, const struct render_scene *scene, float dt_s)
{
    float position[3], yaw = cam->follow_yaw_rad, height = cam->height_m;
    if (!player_from_scene(scene, position, &yaw, &height))
        return;
    follow_second(scene, position);
    if (!cam->have_follow || !(dt_s > 0.0f)) {
        m_vec3_copy(position, cam->follow_m);
        cam->follow_yaw_rad = yaw;
        cam->height_m = height;
        cam->have_follow = true;
        return;
    }
    const float k = 1.0f - expf(-fminf(dt_s, 1.0f) / FOLLOW_TIME_S);
    m_vec3_lerp(cam->follow_m, position, k, cam->follow_m);
    cam->follow_yaw_rad =
        m_angle_wrap(cam->follow_yaw_rad + m_angle_wrap(yaw - cam->follow_yaw_rad) * k);
    cam->height_m += (height - cam->height_m) * k;
}

void
r_view_from_matrices(const mat4 view, const mat4 projection, bool mirrored, struct r_view *out_view)
{
    glm_mat4_copy((vec4 *)view, out_view->view);
    glm_mat4_copy((vec4 *)projection, out_view->projection);
    glm_mat4_mul(out_view->projection, out_view->view, out_view->view_proj);
    mat4 inverse;
    glm_mat4_inv(out_view->view, inverse);
    m_vec3_copy(inverse[3], out_view->eye_m);
    /* The rows of the view's rotation are the eye's axes in world coordinates. */
    const float sign = mirrored ? -1.0f : 1.0f;
    m_vec3_set(out_view->right, sign * view[0][0], sign * view[1][0], sign * view[2][0]);
    m_vec3_set(out_view->up, view[0][1], view[1][1], view[2][1]);
    out_view->mirrored = mirrored;
}

void
r_camera_center(const struct r_camera_state *cam, float out_m[3])
{
    m_vec3_set(out_m, cam->follow_m[0], 0.57f * cam->height_m, cam->follow_m[2]);
}

void
r_camera_view(const struct r_camera_state *cam, float aspect, struct r_view *out_view)
{
    const float h = cam->height_m;
    const float tan_half = tanf(0.5f * FOV_Y_RAD);
    /* Far enough to show the whole body from the feet to raised hands (about 1.2 times
     * the height) with a margin, also in a narrow window. */
    float dist = (0.62f * h + 0.15f) / tan_half;
    if (aspect > 0.0f && aspect < 1.0f)
        dist = fmaxf(dist, (0.6f * h + 0.2f) / (tan_half * aspect));
    const float lift = 0.25f * h; /* near eye level, looking a little down at the body */

    vec3 center;
    r_camera_center(cam, center);
    vec3 eye, up = {0.0f, 1.0f, 0.0f};
    bool mirrored = false;
    switch (cam->mode) {
    case RENDER_CAMERA_MIRROR:
    default: {
        const float fx = sinf(cam->follow_yaw_rad), fz = cosf(cam->follow_yaw_rad);
        m_vec3_set(eye, center[0] + fx * dist, center[1] + lift, center[2] + fz * dist);
        mirrored = true;
        break;
    }
    case RENDER_CAMERA_ORBIT: {
        const float cp = cosf(cam->orbit_pitch_rad), sp = sinf(cam->orbit_pitch_rad);
        const float d = cam->orbit_distance_m;
        m_vec3_set(eye, center[0] + d * cp * sinf(cam->orbit_yaw_rad), center[1] + d * sp,
                   center[2] + d * cp * cosf(cam->orbit_yaw_rad));
        break;
    }
    case RENDER_CAMERA_FRONT: m_vec3_set(eye, center[0], center[1] + lift, center[2] + dist); break;
    case RENDER_CAMERA_SIDE: m_vec3_set(eye, center[0] + dist, center[1] + lift, center[2]); break;
    case RENDER_CAMERA_TOP:
        m_vec3_set(eye, center[0], center[1] + dist * 0.75f, center[2]);
        m_vec3_set(up, 0.0f, 0.0f, -1.0f); /* the player's front (+Z) at the bottom */
        break;
    }
    mat4 view, projection;
    glm_lookat(eye, center, up, view);
    glm_perspective(FOV_Y_RAD, aspect > 0.0f ? aspect : 1.0f, NEAR_M, FAR_M, projection);
    if (mirrored)
        projection[0][0] = -projection[0][0]; /* flip the image's x: a mirror */
    r_view_from_matrices(view, projection, mirrored, out_view);
}

/* Here, below both the HUD and the renderer that use it (r_hud.c, r_render.c). */
const char *
render_camera_name(enum render_camera camera)
{
    switch (camera) {
    case RENDER_CAMERA_MIRROR: return "mirror";
    case RENDER_CAMERA_ORBIT: return "orbit";
    case RENDER_CAMERA_FRONT: return "front";
    case RENDER_CAMERA_SIDE: return "side";
    case RENDER_CAMERA_TOP: return "top";
    case RENDER_CAMERA_COUNT: break;
    }
    return "unknown";
}
