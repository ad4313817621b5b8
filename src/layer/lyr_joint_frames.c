/*
 * The joint frames of each API the layer answers (lyr_joint_frames.h), as tables.
 *
 * Meta's frames (XR_FB_body_tracking, XR_META_body_tracking_full_body). Derived, not
 * copied, from the two public descriptions of them that agree: Godot's humanoid skeleton
 * profile (SkeletonProfileHumanoid: every bone's +Y along the bone to its child, the
 * hips' +X to the body's left) and the fixed per-joint rotations Godot's OpenXR vendors
 * plug-in applies to Meta's runtime's joints to reach that profile
 * (openxr_fb_body_tracking_extension.cpp: Godot frame = Meta frame * table rotation).
 * Meta frame = profile frame * table rotation^-1 gives, at the T-pose (axes named for the
 * body: left, up, forward):
 *
 *   spine, hips to head    X down     Y forward  Z right   bone along -X
 *   left arm               X right    Y forward  Z up      bone along -X
 *   right arm              X right    Y back     Z down    bone along +X
 *   left hand and fingers  X right    Y down     Z forward bone along -X
 *   right hand, fingers    X right    Y up       Z back    bone along +X
 *   left thumb             X right    Y back     Z down    bone along -X
 *   right thumb            X right    Y forward  Z up      bone along +X
 *   (the thumbs' frames before the thumb's own turn toward the front: X stays along it)
 *   left leg               X up       Y back     Z right   bone along -X
 *   right leg              X down     Y forward  Z right   bone along +X
 *   left foot (to toes)    X forward  Y up       Z right   bone along +X
 *   right foot             X back     Y down     Z right   bone along -X
 *
 * Joints the plug-in does not map take the frame of the bone they lie on (the middle of
 * the spine, the scapulae, the wrist and ankle twists, the palm, the subtalar and
 * transverse joints). The root, which the plug-in re-derives itself, is a space in
 * OpenXR's sense: +X right, +Y up, -Z the body's forward.
 *
 * XR_BD_body_tracking's frames: the specification's text (XrBodyJointBD): at the T-pose
 * every joint has +X to the body's right, +Z backward, +Y up by the right-hand rule.
 */
#include <math.h>
#include <pthread.h>

#include "layer/lyr_joint_frames.h"

/* A frame class: its X and Z axes at the T-pose in embody's rest (+X the body's left,
 * +Y up, +Z forward), and the sign of X along the bone (0: no bone). */
enum frame_class {
    FRAME_ROOT,
    FRAME_SPINE,
    FRAME_LEFT_ARM,
    FRAME_RIGHT_ARM,
    FRAME_LEFT_HAND,
    FRAME_RIGHT_HAND,
    FRAME_LEFT_THUMB,
    FRAME_RIGHT_THUMB,
    FRAME_LEFT_LEG,
    FRAME_RIGHT_LEG,
    FRAME_LEFT_FOOT,
    FRAME_RIGHT_FOOT,
    FRAME_CLASS_COUNT
};

static const struct {
    float x[3];
    float z[3];
    float bone_sign;
} k_class[FRAME_CLASS_COUNT] = {
    [FRAME_ROOT] = {{-1, 0, 0}, {0, 0, -1}, 0},
    [FRAME_SPINE] = {{0, -1, 0}, {-1, 0, 0}, -1},
    [FRAME_LEFT_ARM] = {{-1, 0, 0}, {0, 1, 0}, -1},
    [FRAME_RIGHT_ARM] = {{-1, 0, 0}, {0, -1, 0}, 1},
    [FRAME_LEFT_HAND] = {{-1, 0, 0}, {0, 0, 1}, -1},
    [FRAME_RIGHT_HAND] = {{-1, 0, 0}, {0, 0, -1}, 1},
    /* The thumb's frame is the hand's rolled a quarter turn about the bone (the palm's
     * normal is its Z, not its Y), given in the thumb's own rest frame: embody's hand
     * rest (lyr_joints.c) turns the thumb's bone from along the fingers to forward. */
    [FRAME_LEFT_THUMB] = {{-1, 0, 0}, {0, -1, 0}, -1},
    [FRAME_RIGHT_THUMB] = {{-1, 0, 0}, {0, 1, 0}, 1},
    [FRAME_LEFT_LEG] = {{0, 1, 0}, {-1, 0, 0}, -1},
    [FRAME_RIGHT_LEG] = {{0, -1, 0}, {-1, 0, 0}, 1},
    [FRAME_LEFT_FOOT] = {{0, 0, 1}, {-1, 0, 0}, 1},
    [FRAME_RIGHT_FOOT] = {{0, 0, -1}, {-1, 0, 0}, -1},
};

#define HAND_JOINTS 26
#define LEFT_HAND_FIRST XR_BODY_JOINT_LEFT_HAND_PALM_FB
#define RIGHT_HAND_FIRST XR_BODY_JOINT_RIGHT_HAND_PALM_FB

/* Within a hand, by index from the palm: 0 palm, 1 wrist, 2..5 thumb (metacarpal,
 * proximal, distal, tip), then four fingers of 5 (metacarpal .. tip). */
static enum frame_class
hand_class(int k, bool left)
{
    if (k >= 2 && k < 6)
        return left ? FRAME_LEFT_THUMB : FRAME_RIGHT_THUMB;
    return left ? FRAME_LEFT_HAND : FRAME_RIGHT_HAND;
}

/* The joint a hand joint aims its bone at, or -1 (tips): the palm and the wrist at the
 * middle finger's knuckle (where Godot's profile points the hand), the others at the
 * next joint of their finger. */
static int
hand_aim(int k)
{
    const int middle_proximal = 6 + 5 * 1 + 1;
    if (k <= 1)
        return middle_proximal;
    if (k < 6)
        return k < 5 ? k + 1 : -1;
    return (k - 6) % 5 == 4 ? -1 : k + 1;
}

static enum frame_class
joint_class(uint32_t j)
{
    if (j == XR_BODY_JOINT_ROOT_FB)
        return FRAME_ROOT;
    if (j <= XR_BODY_JOINT_HEAD_FB)
        return FRAME_SPINE;
    if (j <= XR_BODY_JOINT_LEFT_HAND_WRIST_TWIST_FB)
        return FRAME_LEFT_ARM;
    if (j <= XR_BODY_JOINT_RIGHT_HAND_WRIST_TWIST_FB)
        return FRAME_RIGHT_ARM;
    if (j < RIGHT_HAND_FIRST)
        return hand_class((int)j - LEFT_HAND_FIRST, true);
    if (j < XR_BODY_JOINT_COUNT_FB)
        return hand_class((int)j - RIGHT_HAND_FIRST, false);
    if (j < XR_FULL_BODY_JOINT_LEFT_FOOT_ANKLE_META)
        return FRAME_LEFT_LEG;
    if (j < XR_FULL_BODY_JOINT_RIGHT_UPPER_LEG_META)
        return FRAME_LEFT_FOOT;
    if (j < XR_FULL_BODY_JOINT_RIGHT_FOOT_ANKLE_META)
        return FRAME_RIGHT_LEG;
    return FRAME_RIGHT_FOOT;
}

/* The joint whose position the bone of `j` points at, or -1. Joints that lie between two
 * of embody's (the middle of the spine, the scapula, the twists, the foot's inner joints)
 * aim past them at the next of embody's, so a coincident joint never decides. */
static int
joint_aim(uint32_t j)
{
    switch (j) {
    case XR_BODY_JOINT_ROOT_FB:
    case XR_BODY_JOINT_HEAD_FB:
    case XR_FULL_BODY_JOINT_LEFT_FOOT_BALL_META:
    case XR_FULL_BODY_JOINT_RIGHT_FOOT_BALL_META: return -1;
    case XR_BODY_JOINT_SPINE_LOWER_FB:
    case XR_BODY_JOINT_SPINE_MIDDLE_FB: return XR_BODY_JOINT_SPINE_UPPER_FB;
    case XR_BODY_JOINT_LEFT_SHOULDER_FB:
    case XR_BODY_JOINT_LEFT_SCAPULA_FB: return XR_BODY_JOINT_LEFT_ARM_UPPER_FB;
    case XR_BODY_JOINT_LEFT_ARM_LOWER_FB:
    case XR_BODY_JOINT_LEFT_HAND_WRIST_TWIST_FB: return XR_BODY_JOINT_LEFT_HAND_WRIST_FB;
    case XR_BODY_JOINT_RIGHT_SHOULDER_FB:
    case XR_BODY_JOINT_RIGHT_SCAPULA_FB: return XR_BODY_JOINT_RIGHT_ARM_UPPER_FB;
    case XR_BODY_JOINT_RIGHT_ARM_LOWER_FB:
    case XR_BODY_JOINT_RIGHT_HAND_WRIST_TWIST_FB: return XR_BODY_JOINT_RIGHT_HAND_WRIST_FB;
    case XR_FULL_BODY_JOINT_LEFT_LOWER_LEG_META:
    case XR_FULL_BODY_JOINT_LEFT_FOOT_ANKLE_TWIST_META:
        return XR_FULL_BODY_JOINT_LEFT_FOOT_ANKLE_META;
    case XR_FULL_BODY_JOINT_LEFT_FOOT_ANKLE_META:
    case XR_FULL_BODY_JOINT_LEFT_FOOT_SUBTALAR_META:
    case XR_FULL_BODY_JOINT_LEFT_FOOT_TRANSVERSE_META:
        return XR_FULL_BODY_JOINT_LEFT_FOOT_BALL_META;
    case XR_FULL_BODY_JOINT_RIGHT_LOWER_LEG_META:
    case XR_FULL_BODY_JOINT_RIGHT_FOOT_ANKLE_TWIST_META:
        return XR_FULL_BODY_JOINT_RIGHT_FOOT_ANKLE_META;
    case XR_FULL_BODY_JOINT_RIGHT_FOOT_ANKLE_META:
    case XR_FULL_BODY_JOINT_RIGHT_FOOT_SUBTALAR_META:
    case XR_FULL_BODY_JOINT_RIGHT_FOOT_TRANSVERSE_META:
        return XR_FULL_BODY_JOINT_RIGHT_FOOT_BALL_META;
    default: break;
    }
    if (j >= LEFT_HAND_FIRST && j < RIGHT_HAND_FIRST) {
        const int a = hand_aim((int)j - LEFT_HAND_FIRST);
        return a < 0 ? -1 : LEFT_HAND_FIRST + a;
    }
    if (j >= RIGHT_HAND_FIRST && j < XR_BODY_JOINT_COUNT_FB) {
        const int a = hand_aim((int)j - RIGHT_HAND_FIRST);
        return a < 0 ? -1 : RIGHT_HAND_FIRST + a;
    }
    return (int)j + 1; /* the spine up to the neck, the upper arms and legs */
}

/* The classes' rest frames as rotations (embody's rest -> Meta's frame at the T-pose). */
static versor g_class_rest[FRAME_CLASS_COUNT];
static pthread_once_t g_class_once = PTHREAD_ONCE_INIT;

static void
make_class_rest(void)
{
    for (int c = 0; c < FRAME_CLASS_COUNT; ++c) {
        vec3 x, y, z;
        glm_vec3_copy((float *)k_class[c].x, x);
        glm_vec3_copy((float *)k_class[c].z, z);
        glm_vec3_normalize(x);
        glm_vec3_cross(z, x, y);
        glm_vec3_normalize(y);
        glm_vec3_cross(x, y, z);
        mat3 m;
        glm_vec3_copy(x, m[0]); /* cglm: column-major, m[i] the i-th column */
        glm_vec3_copy(y, m[1]);
        glm_vec3_copy(z, m[2]);
        glm_mat3_quat(m, g_class_rest[c]);
        glm_quat_normalize(g_class_rest[c]);
    }
}

void
lyr_frames_meta_bone_axis(uint32_t joint, vec3 out_axis)
{
    glm_vec3_zero(out_axis);
    if (joint_aim(joint) >= 0)
        out_axis[0] = k_class[joint_class(joint)].bone_sign;
}

/* The least turn that takes the unit vector `from` onto the unit vector `to` (a half
 * turn about an axis square to `from` when they are opposite). */
static void
least_turn(const vec3 from, const vec3 to, versor out)
{
    const float c = glm_vec3_dot((float *)from, (float *)to);
    if (c < -0.9999f) {
        vec3 axis;
        glm_vec3_cross((float *)from, (vec3){1.0f, 0.0f, 0.0f}, axis);
        if (glm_vec3_norm(axis) < 1e-3f)
            glm_vec3_cross((float *)from, (vec3){0.0f, 1.0f, 0.0f}, axis);
        glm_vec3_normalize(axis);
        glm_quatv(out, GLM_PIf, axis);
        return;
    }
    vec3 axis;
    glm_vec3_cross((float *)from, (float *)to, axis);
    glm_quat_init(out, axis[0], axis[1], axis[2], 1.0f + c);
    glm_quat_normalize(out);
}

void
lyr_frames_to_meta(uint32_t count, struct lyr_joint_pose *joints)
{
    pthread_once(&g_class_once, make_class_rest);
    for (uint32_t j = 0; j < count; ++j) {
        struct lyr_joint_pose *jp = &joints[j];
        versor q;
        glm_quat_mul(jp->rotation, g_class_rest[joint_class(j)], q);
        const int aim = joint_aim(j);
        vec3 to;
        if (aim >= 0 && (uint32_t)aim < count) {
            glm_vec3_sub(joints[aim].position_m, jp->position_m, to);
            const float length = glm_vec3_norm(to);
            if (length > 1e-5f) {
                glm_vec3_scale(to, 1.0f / length, to);
                vec3 bone;
                lyr_frames_meta_bone_axis(j, bone);
                glm_quat_rotatev(q, bone, bone);
                versor turn;
                least_turn(bone, to, turn);
                glm_quat_mul(turn, q, q);
            }
        }
        glm_quat_normalize(q);
        glm_quat_copy(q, jp->rotation);
    }
}

void
lyr_frames_meta_to_bd(const versor located, const versor tpose, versor out)
{
    /* The specification's T-pose frame for a body facing +Z: +X right (-X), +Z back
     * (-Z): a half turn about +Y. */
    const versor bd_tpose = {0.0f, 1.0f, 0.0f, 0.0f};
    versor inv, turn;
    glm_quat_inv((float *)tpose, inv);
    glm_quat_mul((float *)located, inv, turn);
    glm_quat_mul(turn, (float *)bd_tpose, out);
    glm_quat_normalize(out);
}
