/*
 * The scene as mesh instances (r_internal.h): the avatar as lit capsules between each
 * joint and its parent, a head with a visor and a nose that show where it faces, hands as
 * a palm and five fingers of three joints (the scene's finger poses), feet as boxes turned
 * by their joints' rotations; the body's left side orange, its right
 * side blue. The tracked devices as small models (a headset, two controllers), grey with a
 * red cross when lost; optionally the IK targets beside where the effectors ended up; a
 * second avatar (--compare) as the first; the ghosts of the truth as translucent sticks.
 *
 * Sizes are for a 1.75 m body and scale with the skeleton's height.
 */
#include <string.h>

#include <cglm/cglm.h>

#include "embody/hand.h"
#include "embody/m_math.h"
#include "render/r_internal.h"

enum side {
    SIDE_CENTER = 0,
    SIDE_LEFT,
    SIDE_RIGHT,
};

static const float k_unit_x[3] = {1.0f, 0.0f, 0.0f};
static const float k_unit_y[3] = {0.0f, 1.0f, 0.0f};
static const float k_unit_z[3] = {0.0f, 0.0f, 1.0f};

/* A frame of three unit axes and an origin (world). */
struct frame {
    vec3 origin;
    vec3 x, y, z;
};

static bool
push_part(struct r_instance_list *list, const struct frame *f, const float scale[3],
          const float rgb[3], float unlit)
{
    struct r_instance *inst = r_instance_push(list);
    if (!inst)
        return false;
    glm_mat4_identity(inst->model);
    for (int a = 0; a < 3; ++a) {
        inst->model[0][a] = f->x[a] * scale[0];
        inst->model[1][a] = f->y[a] * scale[1];
        inst->model[2][a] = f->z[a] * scale[2];
        inst->model[3][a] = f->origin[a];
    }
    m_vec3_copy(rgb, inst->color);
    inst->color[3] = unlit;
    return true;
}

/* A frame whose y axis is `y_dir` (unit) and whose x axis is `x_hint` made perpendicular
 * to it (any perpendicular when the hint is parallel). */
static void
frame_from_y(struct frame *f, const float *origin, const float *y_dir, const float *x_hint)
{
    m_vec3_copy(origin, f->origin);
    m_vec3_copy(y_dir, f->y);
    float x[3];
    m_vec3_muladd(x_hint, y_dir, -m_vec3_dot(x_hint, y_dir), x);
    if (m_vec3_length(x) < 1e-3f) {
        const float *other = fabsf(y_dir[0]) < 0.9f ? k_unit_x : k_unit_z;
        m_vec3_muladd(other, y_dir, -m_vec3_dot(other, y_dir), x);
    }
    m_vec3_normalize_or(x, k_unit_x, f->x);
    m_vec3_cross(f->x, f->y, f->z);
}

/* A frame at `origin` turned by the unit quaternion `q`. */
static void
frame_from_quat(struct frame *f, const float *origin, const float *q)
{
    m_vec3_copy(origin, f->origin);
    m_quat_to_columns(q, f->x, f->y, f->z);
}

/* The point `local` (metres, in frame f's axes) in world coordinates. */
static void
frame_point(const struct frame *f, const float *local, float *out)
{
    m_vec3_copy(f->origin, out);
    m_vec3_muladd(out, f->x, local[0], out);
    m_vec3_muladd(out, f->y, local[1], out);
    m_vec3_muladd(out, f->z, local[2], out);
}

/* A part of frame f's orientation centred at `local` (in f's axes). */
static bool
push_local(struct r_instance_list *list, const struct frame *f, const float *local,
           const float scale[3], const float rgb[3], float unlit)
{
    struct frame g = *f;
    frame_point(f, local, g.origin);
    return push_part(list, &g, scale, rgb, unlit);
}

/* A capsule from a to b with an elliptic section of radii rx (along x_hint) and rz, into
 * the lists `lists` (one per mesh). */
static bool
push_capsule_into(struct r_instance_list lists[R_MESH_COUNT], const float *a, const float *b,
                  float rx, float rz, const float *x_hint, const float rgb[3])
{
    float d[3], dir[3];
    m_vec3_sub(b, a, d);
    const float len = m_vec3_normalize_or(d, k_unit_y, dir);
    struct frame f;
    frame_from_y(&f, a, dir, x_hint);
    const float cap[3] = {rx, fminf(rx, rz), rz};
    bool ok = push_part(&lists[R_MESH_SPHERE], &f, cap, rgb, 0.0f);
    if (len > 0.0f) {
        const float body[3] = {rx, len, rz};
        ok = ok && push_part(&lists[R_MESH_CYLINDER], &f, body, rgb, 0.0f);
        m_vec3_copy(b, f.origin);
        ok = ok && push_part(&lists[R_MESH_SPHERE], &f, cap, rgb, 0.0f);
    }
    return ok;
}

static bool
push_capsule(struct r_parts *parts, const float *a, const float *b, float rx, float rz,
             const float *x_hint, const float rgb[3])
{
    return push_capsule_into(parts->solid, a, b, rx, rz, x_hint, rgb);
}

static enum side
bone_side(enum sk_bone bone)
{
    switch (bone) {
    case SK_LEFT_SHOULDER:
    case SK_LEFT_UPPER_ARM:
    case SK_LEFT_LOWER_ARM:
    case SK_LEFT_HAND:
    case SK_LEFT_UPPER_LEG:
    case SK_LEFT_LOWER_LEG:
    case SK_LEFT_FOOT:
    case SK_LEFT_TOES:
    case SK_LEFT_HAND_END:
    case SK_LEFT_TOES_END: return SIDE_LEFT;
    case SK_RIGHT_SHOULDER:
    case SK_RIGHT_UPPER_ARM:
    case SK_RIGHT_LOWER_ARM:
    case SK_RIGHT_HAND:
    case SK_RIGHT_UPPER_LEG:
    case SK_RIGHT_LOWER_LEG:
    case SK_RIGHT_FOOT:
    case SK_RIGHT_TOES:
    case SK_RIGHT_HAND_END:
    case SK_RIGHT_TOES_END: return SIDE_RIGHT;
    default: return SIDE_CENTER;
    }
}

/* A joint's side: its own bone's, or else that of the nearest ancestor with a side. */
static enum side
joint_side(const struct sk_skeleton *sk, int joint)
{
    for (int j = joint; j >= 0; j = sk->parent[j]) {
        const enum side side = bone_side(sk->bone[j]);
        if (side != SIDE_CENTER)
            return side;
    }
    return SIDE_CENTER;
}

static void
side_color(enum side side, float out[3])
{
    static const float colors[3][3] = {{R_COLOR_CENTER}, {R_COLOR_LEFT}, {R_COLOR_RIGHT}};
    m_vec3_copy(colors[side], out);
}

/* Section radii (x, z, metres for a 1.75 m body) of the limb from a joint with `bone` to
 * its child with `child_bone`; false when that limb is drawn by a special part. */
static bool
limb_radii(enum sk_bone bone, enum sk_bone child_bone, float *out_rx, float *out_rz)
{
    float rx = 0.03f, rz = 0.03f;
    switch (bone) {
    case SK_HIPS:
        if (child_bone == SK_SPINE)
            rx = 0.125f, rz = 0.095f;
        else
            rx = rz = 0.075f; /* the pelvis, out to the hip joints */
        break;
    case SK_SPINE: rx = 0.125f, rz = 0.09f; break;
    case SK_CHEST:
    case SK_UPPER_CHEST:
        if (child_bone == SK_NECK || child_bone == SK_UPPER_CHEST)
            rx = 0.135f, rz = 0.095f;
        else
            rx = rz = 0.05f; /* the collar bones */
        break;
    case SK_NECK: rx = rz = 0.048f; break;
    case SK_LEFT_SHOULDER:
    case SK_RIGHT_SHOULDER: rx = rz = 0.05f; break;
    case SK_LEFT_UPPER_ARM:
    case SK_RIGHT_UPPER_ARM: rx = rz = 0.046f; break;
    case SK_LEFT_LOWER_ARM:
    case SK_RIGHT_LOWER_ARM: rx = rz = 0.038f; break;
    case SK_LEFT_UPPER_LEG:
    case SK_RIGHT_UPPER_LEG: rx = rz = 0.068f; break;
    case SK_LEFT_LOWER_LEG:
    case SK_RIGHT_LOWER_LEG: rx = rz = 0.052f; break;
    case SK_HEAD:
    case SK_LEFT_HAND:
    case SK_RIGHT_HAND:
    case SK_LEFT_FOOT:
    case SK_RIGHT_FOOT:
    case SK_LEFT_TOES:
    case SK_RIGHT_TOES:
        if (child_bone != SK_BONE_NONE)
            return false; /* head, hands and feet have their own shapes */
        break;
    default: break;
    }
    *out_rx = rx;
    *out_rz = rz;
    return true;
}

/* The position of `bone` in the pose, or false if the skeleton has no such joint. */
static bool
bone_position(const struct sk_skeleton *sk, const struct sk_pose *pose, enum sk_bone bone,
              float *out)
{
    const int j = sk->bone_joint[bone];
    if (j < 0)
        return false;
    m_vec3_copy(pose->position_m[j], out);
    return true;
}

static bool
build_head(struct r_parts *parts, const struct sk_skeleton *sk, const struct sk_pose *pose, float s)
{
    const int head = sk->bone_joint[SK_HEAD];
    if (head < 0)
        return true;
    float top[3];
    if (!bone_position(sk, pose, SK_HEAD_TOP, top)) {
        const float up[3] = {0.0f, 0.2f * s, 0.0f};
        m_quat_rotate(pose->rotation[head], up, top);
        m_vec3_add(pose->position_m[head], top, top);
    }
    float d[3], y_dir[3], x_hint[3], center[3];
    m_vec3_sub(top, pose->position_m[head], d);
    const float len = m_vec3_normalize_or(d, k_unit_y, y_dir);
    m_quat_rotate(pose->rotation[head], k_unit_x, x_hint);
    m_vec3_lerp(pose->position_m[head], top, 0.5f, center);
    struct frame f;
    frame_from_y(&f, center, y_dir, x_hint); /* +z is where the face looks */
    const float skull_h = fmaxf(0.5f * len + 0.015f * s, 0.09f * s);
    const float skull[3] = {0.082f * s, skull_h, 0.098f * s};
    float rgb[3], visor_rgb[3] = {R_COLOR_VISOR};
    side_color(SIDE_CENTER, rgb);
    const float zero[3] = {0.0f, 0.0f, 0.0f};
    const float visor_at[3] = {0.0f, 0.012f * s, 0.07f * s};
    const float visor[3] = {0.13f * s, 0.042f * s, 0.05f * s};
    const float nose_at[3] = {0.0f, -0.025f * s, 0.095f * s};
    const float nose[3] = {0.014f * s, 0.022f * s, 0.016f * s};
    return push_local(&parts->solid[R_MESH_SPHERE], &f, zero, skull, rgb, 0.0f) &&
           push_local(&parts->solid[R_MESH_BOX], &f, visor_at, visor, visor_rgb, 0.15f) &&
           push_local(&parts->solid[R_MESH_SPHERE], &f, nose_at, nose, rgb, 0.0f);
}

/* A hand: the palm a flat box from the wrist to the knuckles, and five fingers of three
 * capsules each: the hand model's default hand (include/embody/hand.h) in `finger_pose`
 * (NULL: relaxed), scaled so its middle knuckle is at the hand's end, turned by the hand's
 * rotation (palm down at rest). */
static bool
build_hand(struct r_parts *parts, const struct sk_skeleton *sk, const struct sk_pose *pose,
           enum sk_bone hand_bone, enum sk_bone end_bone, enum sk_bone arm_bone, float s,
           const struct hd_pose *finger_pose)
{
    const int hand = sk->bone_joint[hand_bone];
    if (hand < 0)
        return true;
    const float *wrist = pose->position_m[hand];
    const float *q = pose->rotation[hand];
    float end[3], d[3], dir[3];
    if (!bone_position(sk, pose, end_bone, end)) {
        /* No hand end: continue the forearm's direction (rest offset, hand frame). */
        const int arm = sk->bone_joint[arm_bone];
        float rest_dir[3] = {hand_bone == SK_LEFT_HAND ? 1.0f : -1.0f, 0.0f, 0.0f};
        if (arm >= 0)
            m_vec3_normalize_or(sk->offset_m[hand], rest_dir, rest_dir);
        m_vec3_scale(rest_dir, 0.09f * s, d);
        m_quat_rotate(q, d, d);
        m_vec3_add(wrist, d, end);
    }
    m_vec3_sub(end, wrist, d);
    const float len = fmaxf(m_vec3_normalize_or(d, k_unit_x, dir), 0.05f * s);
    /* The hand's frame: x along the hand, z towards the thumb (forward at rest), y the
     * back of the hand (up at rest). */
    float back[3], fwd[3], thumb_side[3];
    m_quat_rotate(q, k_unit_y, back);
    m_quat_rotate(q, k_unit_z, fwd);
    m_vec3_muladd(fwd, dir, -m_vec3_dot(fwd, dir), thumb_side);
    if (m_vec3_length(thumb_side) < 1e-3f)
        m_vec3_cross(dir, back, thumb_side);
    struct frame h;
    m_vec3_copy(wrist, h.origin);
    m_vec3_copy(dir, h.x);
    m_vec3_normalize_or(thumb_side, k_unit_z, h.z);
    m_vec3_cross(h.z, h.x, h.y);
    float rgb[3];
    side_color(bone_side(hand_bone), rgb);
    const float palm_at[3] = {0.5f * len, 0.0f, 0.0f};
    const float palm[3] = {len, 0.03f * s, 0.08f * s};
    if (!push_local(&parts->solid[R_MESH_BOX], &h, palm_at, palm, rgb, 0.0f))
        return false;

    const enum hd_hand side = hand_bone == SK_RIGHT_HAND ? HD_RIGHT : HD_LEFT;
    struct hd_model model;
    if (hd_model_init(&(struct hd_model_desc){.hand = side}, &model, NULL) != EM_OK)
        return true; /* the default hand: never refused */
    struct hd_pose fingers;
    if (finger_pose)
        fingers = *finger_pose;
    else
        hd_pose_relaxed(&model, &fingers);
    float at[HD_POINT_COUNT][3];
    hd_pose_positions(&model, &fingers, at);
    /* The hand frame (hand.h: -Z to the middle knuckle, +Y the back, +X towards the thumb
     * on the left hand and the little finger on the right) in the figure's, scaled. */
    const float k = len / m_vec3_length(model.base_m[HD_MIDDLE]);
    const float lateral = side == HD_LEFT ? 1.0f : -1.0f;
    float world[HD_POINT_COUNT][3];
    for (int i = 0; i < HD_POINT_COUNT; ++i) {
        const float local[3] = {-at[i][2] * k, at[i][1] * k, lateral * at[i][0] * k};
        frame_point(&h, local, world[i]);
    }
    for (int f = 0; f < HD_FINGER_COUNT; ++f)
        for (int j = 0; j < HD_FINGER_JOINTS; ++j) {
            const float *a = world[f * (HD_FINGER_JOINTS + 1) + j];
            const float *b = world[f * (HD_FINGER_JOINTS + 1) + j + 1];
            const float r = model.radius_m[f][j] * k;
            if (!push_capsule(parts, a, b, r, r, h.z, rgb))
                return false;
        }
    return true;
}

/* A foot: a shoe-like box from behind the heel to the toe tips, its sole where the toes
 * end, turned by the foot's rotation. */
static bool
build_foot(struct r_parts *parts, const struct sk_skeleton *sk, const struct sk_pose *pose,
           enum sk_bone foot_bone, enum sk_bone toes_end_bone, float s)
{
    const int foot = sk->bone_joint[foot_bone];
    if (foot < 0)
        return true;
    /* The toe tip in the foot's frame: rest orientations are identity, so rest positions
     * differ by exactly that. */
    float toe[3] = {0.0f, -0.08f * s, 0.18f * s};
    const int toes_end = sk->bone_joint[toes_end_bone];
    if (toes_end >= 0)
        m_vec3_sub(sk->rest_position_m[toes_end], sk->rest_position_m[foot], toe);
    struct frame f;
    frame_from_quat(&f, pose->position_m[foot], pose->rotation[foot]);
    const float heel_z = -0.06f * s, height = 0.075f * s;
    const float toe_z = fmaxf(toe[2], 0.1f * s);
    const float center[3] = {toe[0], toe[1] + 0.5f * height, 0.5f * (heel_z + toe_z)};
    const float size[3] = {0.095f * s, height, toe_z - heel_z};
    float rgb[3];
    side_color(bone_side(foot_bone), rgb);
    return push_local(&parts->solid[R_MESH_BOX], &f, center, size, rgb, 0.0f);
}

static bool
build_avatar(struct r_parts *parts, const struct sk_skeleton *sk, const struct sk_pose *pose,
             const struct hd_pose *const hand_pose[HD_HAND_COUNT])
{
    float top = 0.0f;
    for (int i = 0; i < sk->joint_count; ++i)
        top = fmaxf(top, sk->rest_position_m[i][1]);
    const float s = top > 0.5f && top < 3.0f ? top / 1.75f : 1.0f;

    for (int i = 1; i < sk->joint_count; ++i) {
        const int p = sk->parent[i];
        float rx, rz;
        if (p < 0 || !limb_radii(sk->bone[p], sk->bone[i], &rx, &rz))
            continue;
        if (!m_vec3_is_finite(pose->position_m[i]) || !m_vec3_is_finite(pose->position_m[p]))
            continue;
        float rgb[3], x_hint[3];
        side_color(joint_side(sk, i), rgb);
        m_quat_rotate(pose->rotation[p], k_unit_x, x_hint);
        if (!push_capsule(parts, pose->position_m[p], pose->position_m[i], rx * s, rz * s, x_hint,
                          rgb))
            return false;
    }
    return build_head(parts, sk, pose, s) &&
           build_hand(parts, sk, pose, SK_LEFT_HAND, SK_LEFT_HAND_END, SK_LEFT_LOWER_ARM, s,
                      hand_pose ? hand_pose[HD_LEFT] : NULL) &&
           build_hand(parts, sk, pose, SK_RIGHT_HAND, SK_RIGHT_HAND_END, SK_RIGHT_LOWER_ARM, s,
                      hand_pose ? hand_pose[HD_RIGHT] : NULL) &&
           build_foot(parts, sk, pose, SK_LEFT_FOOT, SK_LEFT_TOES_END, s) &&
           build_foot(parts, sk, pose, SK_RIGHT_FOOT, SK_RIGHT_TOES_END, s);
}

/* A red cross over a lost device, turned towards the viewer. */
static bool
build_lost_mark(struct r_parts *parts, const float *at, const float *right, const float *up)
{
    const float rgb[3] = {R_COLOR_LOST_MARK};
    const float size[3] = {0.15f, 0.018f, 0.004f};
    struct frame f;
    m_vec3_copy(at, f.origin);
    m_vec3_cross(right, up, f.z);
    for (int k = 0; k < 2; ++k) {
        const float sign = k ? -1.0f : 1.0f;
        float x[3];
        m_vec3_muladd(right, up, sign, x);
        m_vec3_normalize_or(x, k_unit_x, f.x);
        m_vec3_cross(f.z, f.x, f.y);
        if (!push_part(&parts->overlay[R_MESH_BOX], &f, size, rgb, 1.0f))
            return false;
    }
    return true;
}

/* A headset: a box at the eyes reaching forward (-Z of the view pose), with a face plate. */
static bool
build_headset(struct r_parts *parts, const struct frame *f, bool lost)
{
    const float body_rgb[3] = {R_COLOR_DEVICE}, lost_rgb[3] = {R_COLOR_LOST};
    const float plate_rgb[3] = {0.30f, 0.85f, 0.78f};
    const float body_at[3] = {0.0f, 0.01f, -0.05f}, body[3] = {0.19f, 0.105f, 0.085f};
    const float plate_at[3] = {0.0f, 0.01f, -0.095f}, plate[3] = {0.165f, 0.08f, 0.01f};
    return push_local(&parts->solid[R_MESH_BOX], f, body_at, body, lost ? lost_rgb : body_rgb,
                      0.0f) &&
           push_local(&parts->solid[R_MESH_BOX], f, plate_at, plate, lost ? lost_rgb : plate_rgb,
                      lost ? 0.0f : 0.35f);
}

/* A controller: a handle along the grip's Z axis (through the fist) and a tracking ring at
 * its -Z end, the ring in the hand's side colour. */
static bool
build_controller(struct r_parts *parts, const struct frame *f, enum side side, bool lost)
{
    const float body_rgb[3] = {R_COLOR_DEVICE}, lost_rgb[3] = {R_COLOR_LOST};
    float ring_rgb[3];
    side_color(side, ring_rgb);
    m_vec3_scale(ring_rgb, 0.8f, ring_rgb);
    const float handle_at[3] = {0.0f, 0.0f, 0.005f}, handle[3] = {0.034f, 0.038f, 0.11f};
    const float ring_at[3] = {0.0f, -0.012f, -0.068f}, ring[3] = {0.042f, 0.042f, 0.013f};
    return push_local(&parts->solid[R_MESH_BOX], f, handle_at, handle, lost ? lost_rgb : body_rgb,
                      0.0f) &&
           push_local(&parts->solid[R_MESH_SPHERE], f, ring_at, ring, lost ? lost_rgb : ring_rgb,
                      0.0f);
}

static bool
build_devices(struct r_parts *parts, const struct render_scene *scene, const float *right,
              const float *up)
{
    for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
        if (scene->hidden_devices & (1u << d))
            continue;
        const struct em_device_pose *dev = &scene->device[d];
        if (!m_vec3_is_finite(dev->pose.position_m) || !m_quat_is_finite(dev->pose.orientation))
            continue;
        versor q;
        m_quat_copy(dev->pose.orientation, q);
        m_quat_normalize(q);
        struct frame f;
        frame_from_quat(&f, dev->pose.position_m, q);
        const bool lost = !em_device_pose_usable(dev);
        const bool ok =
            d == EM_DEVICE_HEAD
                ? build_headset(parts, &f, lost)
                : build_controller(parts, &f, d == EM_DEVICE_LEFT_HAND ? SIDE_LEFT : SIDE_RIGHT,
                                   lost);
        if (!ok || (lost && !build_lost_mark(parts, dev->pose.position_m, right, up)))
            return false;
    }
    return true;
}

/* A body tracker: a puck (flat, its +Y axis up out of its face) with a ring in its side's
 * colour on top, grey with the red cross while lost. */
static bool
build_trackers(struct r_parts *parts, uint32_t present,
               const struct em_device_pose tracker[EM_TRACKER_COUNT], const float *right,
               const float *up)
{
    const float body_rgb[3] = {R_COLOR_DEVICE}, lost_rgb[3] = {R_COLOR_LOST};
    for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
        if (!(present & EM_TRACKER_BIT(t)))
            continue;
        const struct em_device_pose *dev = &tracker[t];
        if (!m_vec3_is_finite(dev->pose.position_m) || !m_quat_is_finite(dev->pose.orientation) ||
            m_quat_dot(dev->pose.orientation, dev->pose.orientation) < 0.25f)
            continue;
        versor q;
        m_quat_copy(dev->pose.orientation, q);
        m_quat_normalize(q);
        struct frame f;
        frame_from_quat(&f, dev->pose.position_m, q);
        const bool lost = !em_device_pose_usable(dev);
        const enum side side = t == EM_TRACKER_PELVIS || t == EM_TRACKER_CHEST
                                   ? SIDE_CENTER
                                   : ((t - EM_TRACKER_LEFT_FOOT) % 2 == 0 ? SIDE_LEFT : SIDE_RIGHT);
        float ring_rgb[3];
        side_color(side, ring_rgb);
        const float puck_at[3] = {0.0f, 0.0f, 0.0f}, puck[3] = {0.07f, 0.03f, 0.07f};
        const float ring_at[3] = {0.0f, 0.018f, 0.0f}, ring[3] = {0.05f, 0.012f, 0.05f};
        const bool ok = push_local(&parts->solid[R_MESH_SPHERE], &f, puck_at, puck,
                                   lost ? lost_rgb : body_rgb, 0.0f) &&
                        push_local(&parts->solid[R_MESH_SPHERE], &f, ring_at, ring,
                                   lost ? lost_rgb : ring_rgb, 0.0f);
        if (!ok || (lost && !build_lost_mark(parts, dev->pose.position_m, right, up)))
            return false;
    }
    return true;
}

static bool
build_targets(struct r_parts *parts, const struct render_scene *scene)
{
    const float target_rgb[3] = {1.0f, 0.86f, 0.25f}, reached_rgb[3] = {0.95f, 0.95f, 0.95f};
    const int n =
        scene->target_count < RENDER_MAX_TARGETS ? scene->target_count : RENDER_MAX_TARGETS;
    for (int i = 0; i < n; ++i) {
        const struct render_target *t = &scene->target[i];
        if (!m_vec3_is_finite(t->target_m) || !m_vec3_is_finite(t->reached_m))
            continue;
        struct frame f;
        frame_from_y(&f, t->target_m, k_unit_y, k_unit_x);
        const float big[3] = {0.022f, 0.022f, 0.022f}, small[3] = {0.015f, 0.015f, 0.015f};
        bool ok = push_part(&parts->solid[R_MESH_SPHERE], &f, big, target_rgb, 0.4f);
        m_vec3_copy(t->reached_m, f.origin);
        ok = ok && push_part(&parts->solid[R_MESH_SPHERE], &f, small, reached_rgb, 0.4f);
        if (m_vec3_distance(t->target_m, t->reached_m) > 1e-4f)
            ok = ok && push_capsule(parts, t->target_m, t->reached_m, 0.004f, 0.004f, k_unit_x,
                                    target_rgb);
        if (!ok)
            return false;
    }
    return true;
}

/* A ghost: a thin stick from each joint to its parent (the bones as the clip has them),
 * into the translucent list; a joint at its parent's place (an end site, a zero offset)
 * adds nothing. Sticks without balls at the joints: a ball has 14 times a stick's
 * triangles, and the software renderer pays for every one (tests/bench). */
static bool
build_ghost(struct r_parts *parts, const struct render_ghost *g)
{
    const float rgb[3] = {R_COLOR_GHOST}, r = 0.026f;
    for (int i = 0; i < g->joint_count; ++i) {
        const int p = g->parent[i];
        if (p < 0 || p >= i || !m_vec3_is_finite(g->position_m[i]) ||
            !m_vec3_is_finite(g->position_m[p]))
            continue;
        float d[3], dir[3];
        m_vec3_sub(g->position_m[i], g->position_m[p], d);
        const float len = m_vec3_normalize_or(d, k_unit_y, dir);
        if (len < 1e-3f)
            continue;
        struct frame f;
        frame_from_y(&f, g->position_m[p], dir, k_unit_x);
        const float bone[3] = {r, len, r};
        if (!push_part(&parts->ghost[R_MESH_CYLINDER], &f, bone, rgb, 0.0f))
            return false;
    }
    return true;
}

static bool
figure_drawable(const struct sk_skeleton *sk, const struct sk_pose *pose)
{
    return sk && pose && pose->joint_count == sk->joint_count && sk->joint_count > 0;
}

/* The second avatar (--compare) and its trackers, drawn as the first. */
static bool
build_second(struct r_parts *parts, const struct render_figure *f, const float *right,
             const float *up)
{
    if (!figure_drawable(f->skeleton, f->pose))
        return true;
    if (!parts->hide_figure && !build_avatar(parts, f->skeleton, f->pose, NULL))
        return false;
    return build_trackers(parts, f->tracker_present, f->tracker, right, up);
}

/* Soft shadows on the floor under the hips and both feet, and the grid's centre. */
static void
build_floor_marks(struct r_parts *parts, const struct render_scene *scene)
{
    memset(parts->shadow, 0, sizeof parts->shadow);
    const struct sk_skeleton *sk = scene->skeleton;
    const struct sk_pose *pose = scene->pose;
    if (!sk || !pose || pose->joint_count != sk->joint_count || sk->joint_count == 0) {
        if (em_device_pose_usable(&scene->device[EM_DEVICE_HEAD])) {
            const float *p = scene->device[EM_DEVICE_HEAD].pose.position_m;
            m_vec3_set(parts->focus_m, p[0], 0.0f, p[2]);
        }
        return;
    }
    const enum sk_bone bones[3] = {SK_HIPS, SK_LEFT_FOOT, SK_RIGHT_FOOT};
    const float radius[3] = {0.38f, 0.16f, 0.16f};
    for (int k = 0; k < 3; ++k) {
        float p[3];
        if (!bone_position(sk, pose, bones[k], p) || !m_vec3_is_finite(p))
            continue;
        const float lift = m_clampf(p[1] / (k == 0 ? 2.0f : 0.6f), 0.0f, 1.0f);
        parts->shadow[k][0] = p[0];
        parts->shadow[k][1] = p[2];
        parts->shadow[k][2] = radius[k] * (1.0f + lift);
        parts->shadow[k][3] = (k == 0 ? 0.35f : 0.4f) * (1.0f - 0.7f * lift);
        if (k == 0)
            m_vec3_set(parts->focus_m, p[0], 0.0f, p[2]);
    }
}

bool
r_parts_build(struct r_parts *parts, const struct render_scene *scene, bool show_targets,
              const vec3 camera_right, const vec3 camera_up)
{
    for (int m = 0; m < R_MESH_COUNT; ++m) {
        parts->solid[m].count = 0;
        parts->ghost[m].count = 0;
        parts->overlay[m].count = 0;
    }
    m_vec3_set(parts->focus_m, 0.0f, 0.0f, 0.0f);
    build_floor_marks(parts, scene);
    const struct sk_skeleton *sk = scene->skeleton;
    const struct sk_pose *pose = scene->pose;
    if (figure_drawable(sk, pose) && !parts->hide_figure &&
        !build_avatar(parts, sk, pose, scene->hand_pose))
        return false;
    if (!build_devices(parts, scene, camera_right, camera_up) ||
        !build_trackers(parts, scene->tracker_present, scene->tracker, camera_right, camera_up) ||
        !build_second(parts, &scene->second, camera_right, camera_up))
        return false;
    const int ghosts = scene->ghost_count < RENDER_MAX_GHOSTS ? scene->ghost_count
                                                               : RENDER_MAX_GHOSTS;
    for (int g = 0; parts->show_ghost && g < ghosts; ++g)
        if (!build_ghost(parts, &scene->ghost[g]))
            return false;
    return !show_targets || build_targets(parts, scene);
}

void
r_parts_fini(struct r_parts *parts)
{
    for (int m = 0; m < R_MESH_COUNT; ++m) {
        r_instance_list_fini(&parts->solid[m]);
        r_instance_list_fini(&parts->ghost[m]);
        r_instance_list_fini(&parts->overlay[m]);
    }
}
