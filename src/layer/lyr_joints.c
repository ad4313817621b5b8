/*
 * embody's skeleton as the joints of XR_FB_body_tracking (70) and
 * XR_META_body_tracking_full_body (84).
 *
 * Joints the humanoid has (hips, spine, chest, neck, head, shoulders, arms, hands, legs,
 * feet, toes) are its joints; the others sit between them (the middle of the spine, the
 * scapulae, the wrist and ankle twists, the foot's subtalar and transverse joints), with
 * the rotation of the bone they lie on. The root is on the floor under the hips, turned
 * with the body's heading. Fingers come from a relaxed hand at rest (slightly curled, the
 * thumb forward of the palm), sized by the hand (wrist to knuckles) and carried by the
 * hand joint, unless hand tracking or the controller's finger inputs give the hand model's
 * pose (lyr_hand_shape): then the model's joints, placed at the hand joint, blended over
 * the relaxed hand.
 *
 * Frames: the joints are placed and turned in embody's frames (world-aligned at rest, the
 * T-pose facing +Z), then handed out in Meta's (lyr_joint_frames.c), at every pose and in
 * the rest pose xrGetBodySkeletonFB returns alike.
 */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include <cglm/cglm.h>

#include "layer/lyr_internal.h"
#include "layer/lyr_joint_frames.h"

#define HAND_JOINTS 26 /* palm, wrist, thumb 4, four fingers of 5 */
#define LEFT_HAND_FIRST 18
#define RIGHT_HAND_FIRST 44
#define LEGS_FIRST 70
#define LEG_JOINTS 7

uint32_t
lyr_joint_count(XrBodyJointSetFB set)
{
    if (set == XR_BODY_JOINT_SET_DEFAULT_FB)
        return XR_BODY_JOINT_COUNT_FB;
    if (set == XR_BODY_JOINT_SET_FULL_BODY_META)
        return XR_FULL_BODY_JOINT_COUNT_META;
    return 0;
}

/* ---- Parents -------------------------------------------------------------------- */

/* Parent within one hand, by index from the palm (0 palm, 1 wrist, 2..5 thumb, 6..10
 * index, ... 21..25 little): the wrist holds the palm and each finger's metacarpal. */
static int
hand_parent(int k)
{
    if (k == 0)
        return 1;
    if (k == 1)
        return -1; /* the arm's wrist twist: set by the caller */
    if (k == 2)
        return 1;
    if (k < 6)
        return k - 1;
    const int within = (k - 6) % 5;
    return within == 0 ? 1 : k - 1;
}

int32_t
lyr_joint_parent(uint32_t joint)
{
    static const int32_t k_body[18] = {
        XR_BODY_JOINT_NONE_FB,
        0,
        1,
        2,
        3,
        4,
        5,
        6, /* root .. head */
        5,
        8,
        9,
        10,
        11, /* left shoulder .. wrist twist */
        5,
        13,
        14,
        15,
        16, /* right */
    };
    if (joint < 18)
        return k_body[joint];
    if (joint < LEGS_FIRST) {
        const bool left = joint < RIGHT_HAND_FIRST;
        const int first = left ? LEFT_HAND_FIRST : RIGHT_HAND_FIRST;
        const int p = hand_parent((int)joint - first);
        if (p < 0)
            return left ? XR_BODY_JOINT_LEFT_HAND_WRIST_TWIST_FB
                        : XR_BODY_JOINT_RIGHT_HAND_WRIST_TWIST_FB;
        return first + p;
    }
    const int k = ((int)joint - LEGS_FIRST) % LEG_JOINTS;
    if (k == 0)
        return XR_BODY_JOINT_HIPS_FB;
    return (int32_t)joint - 1;
}

int
lyr_joint_driver(uint32_t joint)
{
    if (joint == XR_BODY_JOINT_HEAD_FB)
        return 1;
    /* The wrist and the palm are where the controller is held. */
    if (joint == LEFT_HAND_FIRST || joint == LEFT_HAND_FIRST + 1)
        return 2;
    if (joint == RIGHT_HAND_FIRST || joint == RIGHT_HAND_FIRST + 1)
        return 3;
    return 0;
}

int
lyr_tracker_joint(int tracker, uint32_t count)
{
    static const int k_joint[EM_TRACKER_COUNT] = {
        [EM_TRACKER_PELVIS] = XR_BODY_JOINT_HIPS_FB,
        [EM_TRACKER_CHEST] = XR_BODY_JOINT_SPINE_UPPER_FB,
        [EM_TRACKER_LEFT_FOOT] = XR_FULL_BODY_JOINT_LEFT_FOOT_ANKLE_META,
        [EM_TRACKER_RIGHT_FOOT] = XR_FULL_BODY_JOINT_RIGHT_FOOT_ANKLE_META,
        [EM_TRACKER_LEFT_KNEE] = XR_FULL_BODY_JOINT_LEFT_LOWER_LEG_META,
        [EM_TRACKER_RIGHT_KNEE] = XR_FULL_BODY_JOINT_RIGHT_LOWER_LEG_META,
        [EM_TRACKER_LEFT_ELBOW] = XR_BODY_JOINT_LEFT_ARM_LOWER_FB,
        [EM_TRACKER_RIGHT_ELBOW] = XR_BODY_JOINT_RIGHT_ARM_LOWER_FB,
    };
    if (tracker < 0 || tracker >= EM_TRACKER_COUNT || (uint32_t)k_joint[tracker] >= count)
        return -1;
    return k_joint[tracker];
}

/* ---- The relaxed hand --------------------------------------------------------------- */

/* The left hand at rest in its own frame (world-aligned: fingers along +X, palm down -Y,
 * thumb forward +Z), lengths in units of the wrist-to-knuckles distance. */
static struct lyr_joint_pose g_left_hand[HAND_JOINTS];
static pthread_once_t g_hand_once = PTHREAD_ONCE_INIT;

/* A finger from `base` (metacarpal) through the knuckle: phalanx lengths and the flexion
 * of each joint toward the palm (about +Z, negative: +X turns toward -Y). */
static void
make_finger(int first, const vec3 base, const vec3 knuckle, const float length[3],
            const float flex_deg[3])
{
    struct lyr_joint_pose *j = &g_left_hand[first];
    glm_vec3_copy((float *)base, j[0].position_m);
    glm_quat_identity(j[0].rotation);
    glm_vec3_copy((float *)knuckle, j[1].position_m);
    versor q;
    glm_quat_identity(q);
    for (int i = 0; i < 3; ++i) {
        versor bend;
        glm_quatv(bend, glm_rad(-flex_deg[i]), (vec3){0.0f, 0.0f, 1.0f});
        glm_quat_mul(q, bend, q);
        glm_quat_copy(q, j[1 + i].rotation);
        vec3 step = {length[i], 0.0f, 0.0f};
        glm_quat_rotatev(q, step, step);
        glm_vec3_add(j[1 + i].position_m, step, j[2 + i].position_m);
    }
    glm_quat_copy(q, j[4].rotation);
}

static void
make_left_hand(void)
{
    /* Palm at the middle of the hand, wrist at the origin. */
    glm_vec3_copy((vec3){0.5f, -0.05f, 0.0f}, g_left_hand[0].position_m);
    glm_quat_identity(g_left_hand[0].rotation);
    glm_vec3_zero(g_left_hand[1].position_m);
    glm_quat_identity(g_left_hand[1].rotation);

    /* Thumb: forward and a little down from the heel of the hand, gently bent. */
    vec3 dir = {0.55f, -0.25f, 0.8f};
    glm_vec3_normalize(dir);
    versor turn;
    glm_quat_from_vecs((vec3){1.0f, 0.0f, 0.0f}, dir, turn);
    const float thumb_len[3] = {0.35f, 0.3f, 0.25f};
    vec3 p = {0.12f, -0.05f, 0.18f};
    for (int i = 0; i < 4; ++i) {
        struct lyr_joint_pose *j = &g_left_hand[2 + i];
        glm_vec3_copy(p, j->position_m);
        glm_quat_copy(turn, j->rotation);
        if (i == 3)
            break;
        versor bend;
        glm_quatv(bend, glm_rad(-12.0f), (vec3){0.0f, 1.0f, 0.0f}); /* toward the index */
        vec3 step = {thumb_len[i], 0.0f, 0.0f};
        glm_quat_rotatev(turn, step, step);
        glm_vec3_add(p, step, p);
        glm_quat_mul(turn, bend, turn);
    }

    /* Index, middle, ring, little: across the palm from the thumb side (+Z). */
    static const float k_across[4] = {0.22f, 0.07f, -0.08f, -0.22f};
    static const float k_reach[4] = {0.98f, 1.0f, 0.96f, 0.9f};
    static const float k_length[4][3] = {
        {0.45f, 0.27f, 0.2f}, {0.5f, 0.3f, 0.21f}, {0.47f, 0.29f, 0.2f}, {0.37f, 0.21f, 0.18f}};
    for (int f = 0; f < 4; ++f) {
        /* Relaxed: a little more curl toward the little finger. */
        const float flex[3] = {15.0f + 5.0f * (float)f, 20.0f + 5.0f * (float)f,
                               12.0f + 3.0f * (float)f};
        const vec3 base = {0.1f, 0.0f, 0.6f * k_across[f]};
        const vec3 knuckle = {k_reach[f], 0.0f, k_across[f]};
        make_finger(6 + 5 * f, base, knuckle, k_length[f], flex);
    }
}

/* ---- Body -> joints ---------------------------------------------------------------- */

struct body_view {
    const struct sk_skeleton *sk;
    const struct sk_pose *pose;
};

static int
bone(const struct body_view *v, enum sk_bone b)
{
    return v->sk->bone_joint[b];
}

static void
set_joint(struct lyr_joint_pose *out, const struct body_view *v, int j)
{
    glm_vec3_copy(v->pose->position_m[j], out->position_m);
    glm_quat_copy(v->pose->rotation[j], out->rotation);
}

/* A joint at `t` of the way from joint a to joint b, turned as a. */
static void
set_between(struct lyr_joint_pose *out, const struct body_view *v, int a, int b, float t)
{
    glm_vec3_lerp(v->pose->position_m[a], v->pose->position_m[b], t, out->position_m);
    glm_quat_copy(v->pose->rotation[a], out->rotation);
}

/* The turn from a hand frame (hand.h: XR_EXT_hand_tracking's wrist axes) to the T-pose's
 * hand in embody's frames: -Z (to the fingers) along the arm, +Y the back of the hand up,
 * the thumb forward (+Z). Left: -90 degrees about +Y; right: +90. */
static void
hand_frame_turn(bool left, versor out_q)
{
    glm_quatv(out_q, glm_rad(left ? -90.0f : 90.0f), (vec3){0.0f, 1.0f, 0.0f});
}

/* A joint's pose in its parent's frame: the local rotation and offset. */
static void
joint_local(const struct lyr_joint_pose *parent, const struct lyr_joint_pose *joint,
            versor out_rotation, vec3 out_offset_m)
{
    versor inv;
    glm_quat_inv((float *)parent->rotation, inv);
    glm_quat_mul(inv, (float *)joint->rotation, out_rotation);
    vec3 d;
    glm_vec3_sub((float *)joint->position_m, (float *)parent->position_m, d);
    glm_quat_rotatev(inv, d, out_offset_m);
}

/* The hand model's 26 joints over the relaxed ones in `out`, by `shape->weight`: each
 * joint's local rotation (slerp) and offset from its parent (lerp) blended, then placed
 * from the wrist down, so the fingers bend smoothly from one hand to the other (blending
 * the joints' positions would bend a finger fastest where it passes straight). */
static void
set_hand_from_model(struct lyr_joint_pose *out, const struct body_view *v, bool left,
                    const struct lyr_hand_shape *shape)
{
    const int hand = bone(v, left ? SK_LEFT_HAND : SK_RIGHT_HAND);
    versor turn, turn_inv, wrist_q;
    hand_frame_turn(left, turn);
    glm_quat_inv(turn, turn_inv);
    glm_quat_mul(v->pose->rotation[hand], turn, wrist_q);
    const float wrist_xyzw[4] = {wrist_q[0], wrist_q[1], wrist_q[2], wrist_q[3]};
    const float wrist_p[3] = {v->pose->position_m[hand][0], v->pose->position_m[hand][1],
                              v->pose->position_m[hand][2]};
    struct hd_xr_hand joints;
    hd_pose_to_tracking(shape->model, shape->pose, wrist_p, wrist_xyzw, &joints);
    struct lyr_joint_pose model[HAND_JOINTS], blended[HAND_JOINTS];
    for (int k = 0; k < HAND_JOINTS; ++k) {
        const struct hd_xr_joint_location *j = &joints.joint[k];
        model[k].position_m[0] = j->position_m[0];
        model[k].position_m[1] = j->position_m[1];
        model[k].position_m[2] = j->position_m[2];
        versor q = {j->orientation[0], j->orientation[1], j->orientation[2], j->orientation[3]};
        glm_quat_mul(q, turn_inv, model[k].rotation); /* as embody's (identity at rest) */
    }
    const float w = glm_clamp(shape->weight, 0.0f, 1.0f);
    /* The wrist is the body's hand joint in both; then the palm and the fingers, each
     * after its parent (the palm's parent is the wrist, every other's comes before it). */
    blended[1] = out[1];
    for (int i = 0; i < HAND_JOINTS; ++i) {
        const int k = i == 0 ? 0 : (i == 1 ? 2 : i + 1); /* 0, 2, 3, ..., 25 */
        if (k >= HAND_JOINTS)
            break;
        const int p = hand_parent(k);
        versor la, lb, l;
        vec3 oa, ob, o;
        joint_local(&out[p], &out[k], la, oa);
        joint_local(&model[p], &model[k], lb, ob);
        if (glm_quat_dot(la, lb) < 0.0f)
            glm_vec4_negate(lb);
        glm_quat_slerp(la, lb, w, l);
        glm_quat_normalize(l);
        glm_vec3_lerp(oa, ob, w, o);
        glm_quat_mul(blended[p].rotation, l, blended[k].rotation);
        glm_quat_normalize(blended[k].rotation);
        glm_quat_rotatev(blended[p].rotation, o, o);
        glm_vec3_add(blended[p].position_m, o, blended[k].position_m);
    }
    memcpy(out, blended, sizeof blended);
}

static void
set_hand(struct lyr_joint_pose *out, const struct body_view *v, bool left,
         const struct lyr_hand_shape *shape)
{
    const int hand = bone(v, left ? SK_LEFT_HAND : SK_RIGHT_HAND);
    const int end = bone(v, left ? SK_LEFT_HAND_END : SK_RIGHT_HAND_END);
    float size = 0.085f;
    if (end >= 0)
        size = glm_vec3_distance(v->sk->rest_position_m[hand], v->sk->rest_position_m[end]);
    versor hand_rot;
    glm_quat_copy(v->pose->rotation[hand], hand_rot);
    for (int k = 0; k < HAND_JOINTS; ++k) {
        vec3 local;
        glm_vec3_scale(g_left_hand[k].position_m, size, local);
        versor rest;
        glm_quat_copy(g_left_hand[k].rotation, rest);
        if (!left) { /* mirror across the body's midplane (x -> -x) */
            local[0] = -local[0];
            rest[1] = -rest[1];
            rest[2] = -rest[2];
        }
        glm_quat_rotatev(hand_rot, local, local);
        glm_vec3_add(v->pose->position_m[hand], local, out[k].position_m);
        glm_quat_mul(hand_rot, rest, out[k].rotation);
    }
    if (shape && shape->model && shape->pose && shape->weight > 0.0f)
        set_hand_from_model(out, v, left, shape);
}

static void
set_leg(struct lyr_joint_pose *out, const struct body_view *v, bool left)
{
    const int upper = bone(v, left ? SK_LEFT_UPPER_LEG : SK_RIGHT_UPPER_LEG);
    const int lower = bone(v, left ? SK_LEFT_LOWER_LEG : SK_RIGHT_LOWER_LEG);
    const int foot = bone(v, left ? SK_LEFT_FOOT : SK_RIGHT_FOOT);
    int toes = bone(v, left ? SK_LEFT_TOES : SK_RIGHT_TOES);
    set_joint(&out[0], v, upper);
    set_joint(&out[1], v, lower);
    set_between(&out[2], v, lower, foot, 0.85f); /* ankle twist */
    set_joint(&out[3], v, foot);
    if (toes < 0) { /* no toes: the ball 12 % of the leg's length ahead of the ankle */
        set_joint(&out[4], v, foot);
        set_joint(&out[5], v, foot);
        set_joint(&out[6], v, foot);
        vec3 ahead = {0.0f, 0.0f, 0.12f * v->sk->length_m[lower]};
        glm_quat_rotatev(v->pose->rotation[foot], ahead, ahead);
        glm_vec3_add(out[6].position_m, ahead, out[6].position_m);
        return;
    }
    set_between(&out[4], v, foot, toes, 0.25f); /* subtalar */
    set_between(&out[5], v, foot, toes, 0.6f);  /* transverse */
    set_joint(&out[6], v, toes);
}

void
lyr_joints_from_pose(const struct sk_skeleton *skeleton, const struct sk_pose *pose,
                     float heading_rad, float floor_y_m, uint32_t count,
                     const struct lyr_hand_shape *hands, struct lyr_joint_pose *out)
{
    pthread_once(&g_hand_once, make_left_hand);
    const struct body_view v = {skeleton, pose};

    const int hips = bone(&v, SK_HIPS), spine = bone(&v, SK_SPINE), chest = bone(&v, SK_CHEST);
    const int upper_chest = bone(&v, SK_UPPER_CHEST), neck = bone(&v, SK_NECK);
    glm_vec3_copy(v.pose->position_m[hips], out[0].position_m);
    out[0].position_m[1] = floor_y_m;
    glm_quatv(out[0].rotation, heading_rad, (vec3){0.0f, 1.0f, 0.0f});
    set_joint(&out[XR_BODY_JOINT_HIPS_FB], &v, hips);
    set_joint(&out[XR_BODY_JOINT_SPINE_LOWER_FB], &v, spine);
    set_between(&out[XR_BODY_JOINT_SPINE_MIDDLE_FB], &v, spine, chest, 0.5f);
    set_joint(&out[XR_BODY_JOINT_SPINE_UPPER_FB], &v, chest);
    if (upper_chest >= 0)
        set_joint(&out[XR_BODY_JOINT_CHEST_FB], &v, upper_chest);
    else
        set_between(&out[XR_BODY_JOINT_CHEST_FB], &v, chest, neck, 0.5f);
    set_joint(&out[XR_BODY_JOINT_NECK_FB], &v, neck);
    set_joint(&out[XR_BODY_JOINT_HEAD_FB], &v, bone(&v, SK_HEAD));
    for (int side = 0; side < 2; ++side) {
        const bool left = side == 0;
        struct lyr_joint_pose *arm =
            &out[left ? XR_BODY_JOINT_LEFT_SHOULDER_FB : XR_BODY_JOINT_RIGHT_SHOULDER_FB];
        const int shoulder = bone(&v, left ? SK_LEFT_SHOULDER : SK_RIGHT_SHOULDER);
        const int upper = bone(&v, left ? SK_LEFT_UPPER_ARM : SK_RIGHT_UPPER_ARM);
        const int lower = bone(&v, left ? SK_LEFT_LOWER_ARM : SK_RIGHT_LOWER_ARM);
        const int hand = bone(&v, left ? SK_LEFT_HAND : SK_RIGHT_HAND);
        set_joint(&arm[0], &v, shoulder);
        set_between(&arm[1], &v, shoulder, upper, 0.5f); /* scapula */
        set_joint(&arm[2], &v, upper);
        set_joint(&arm[3], &v, lower);
        set_between(&arm[4], &v, lower, hand, 0.8f); /* wrist twist */
        set_hand(&out[left ? LEFT_HAND_FIRST : RIGHT_HAND_FIRST], &v, left,
                 hands ? &hands[left ? HD_LEFT : HD_RIGHT] : NULL);
    }
    if (count >= XR_FULL_BODY_JOINT_COUNT_META) {
        set_leg(&out[LEGS_FIRST], &v, true);
        set_leg(&out[LEGS_FIRST + LEG_JOINTS], &v, false);
    }
    lyr_frames_to_meta(count, out);
}
