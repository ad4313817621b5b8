/*
 * The values one frame carries, in each protocol's conventions (src/osc/osc.h):
 * the VMC protocol's root and humanoid bone local poses (and the fingers when given), and
 * VRChat's tracker poses.
 * Pure functions of the skeleton and pose: no network here, so tests check them directly.
 */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "embody/m_math.h"
#include "osc/osc.h"

/* A joint VMC carries: a humanoid bone with a Unity name, and the joint the skeleton
 * gives for that bone. */
static bool
is_vmc_bone_joint(const struct sk_skeleton *sk, int joint)
{
    const enum sk_bone b = sk->bone[joint];
    return osc_unity_bone_name(b) != NULL && sk->bone_joint[b] == joint;
}

/* The nearest ancestor of `joint` that VMC carries, or -1 (then the parent is the root).
 * This is Unity's humanoid parent when the skeleton is humanoid, and skips any extra
 * joints a skeleton read from elsewhere may have in between. */
static int
vmc_parent_joint(const struct sk_skeleton *sk, int joint)
{
    for (int j = sk->parent[joint]; j >= 0; j = sk->parent[j])
        if (is_vmc_bone_joint(sk, j))
            return j;
    return -1;
}

static void
vmc_bone_local(const struct sk_skeleton *sk, const struct sk_pose *pose, int joint,
               struct osc_unity_pose *out)
{
    const int p = vmc_parent_joint(sk, joint);
    if (p < 0) {
        /* Relative to the root, which is the STAGE origin: the Unity world pose. */
        osc_unity_position_from_stage(pose->position_m[joint], out->position_m);
        osc_unity_bone_rotation_from_stage(pose->rotation[joint], out->rotation);
        return;
    }
    float d[3], v[3], l[4];
    m_vec3_sub(pose->position_m[joint], pose->position_m[p], d);
    m_quat_rotate_inv(pose->rotation[p], d, v);                /* offset in parent frame */
    m_quat_mul_conj_first(pose->rotation[p], pose->rotation[joint], l); /* R_p^-1 R */
    m_quat_normalize(l);
    osc_unity_local_position_from_ours(v, out->position_m);
    osc_unity_local_rotation_from_ours(l, out->rotation);
}

void
osc_vmc_frame_build(const struct sk_skeleton *skeleton, const struct sk_pose *pose,
                    float time_s, struct osc_vmc_frame *out_frame)
{
    assert(pose->joint_count == skeleton->joint_count);
    memset(out_frame, 0, sizeof *out_frame);
    out_frame->time_s = time_s;
    out_frame->root.rotation[3] = 1.0f; /* the STAGE origin, identity */
    for (int j = 0; j < skeleton->joint_count; ++j) {
        if (!is_vmc_bone_joint(skeleton, j))
            continue;
        const int i = out_frame->bone_count++;
        out_frame->bone[i] = skeleton->bone[j];
        vmc_bone_local(skeleton, pose, j, &out_frame->bone_local[i]);
    }
}

const char *
osc_unity_finger_bone_name(int index)
{
    assert(index >= 0 && index < OSC_VMC_FINGER_BONES);
    return hd_unity_bone_name((enum hd_hand)(index / HD_JOINT_COUNT), index % HD_JOINT_COUNT);
}

void
osc_vmc_frame_set_fingers(struct osc_vmc_frame *frame, const float (*rotation)[4],
                          const float (*offset_m)[3])
{
    frame->finger_count = OSC_VMC_FINGER_BONES;
    for (int i = 0; i < OSC_VMC_FINGER_BONES; ++i) {
        static const float zero[3] = {0.0f, 0.0f, 0.0f};
        struct osc_unity_pose *out = &frame->finger_local[i];
        osc_unity_local_rotation_from_ours(rotation[i], out->rotation);
        osc_unity_local_position_from_ours(offset_m ? offset_m[i] : zero, out->position_m);
    }
}

/* The slot table documented in osc.h: where each tracker sits and what it turns with. */
static const struct {
    enum sk_bone position_bone;
    enum sk_bone rotation_bone;
} vrchat_slots[OSC_VRCHAT_BODY_TRACKERS] = {
    {SK_HIPS, SK_HIPS},
    {SK_CHEST, SK_CHEST},
    {SK_LEFT_FOOT, SK_LEFT_FOOT},
    {SK_RIGHT_FOOT, SK_RIGHT_FOOT},
    {SK_LEFT_LOWER_LEG, SK_LEFT_UPPER_LEG},
    {SK_RIGHT_LOWER_LEG, SK_RIGHT_UPPER_LEG},
    {SK_LEFT_LOWER_ARM, SK_LEFT_UPPER_ARM},
    {SK_RIGHT_LOWER_ARM, SK_RIGHT_UPPER_ARM},
};

void
osc_vrchat_slot_bones(int index, enum sk_bone *out_position_bone,
                      enum sk_bone *out_rotation_bone)
{
    assert(index >= 0 && index < OSC_VRCHAT_BODY_TRACKERS);
    *out_position_bone = vrchat_slots[index].position_bone;
    *out_rotation_bone = vrchat_slots[index].rotation_bone;
}

static void
vrchat_tracker_from_unity(const float *position_unity_m, const float *rotation_unity,
                          struct osc_vrchat_tracker *out)
{
    out->present = true;
    m_vec3_copy(position_unity_m, out->position_m);
    osc_unity_euler_deg_from_rotation(rotation_unity, out->euler_deg);
}

static void
vrchat_tracker_from_joints(const struct sk_pose *pose, int position_joint, int rotation_joint,
                           struct osc_vrchat_tracker *out)
{
    float p[3], q[4];
    osc_unity_position_from_stage(pose->position_m[position_joint], p);
    osc_unity_bone_rotation_from_stage(pose->rotation[rotation_joint], q);
    vrchat_tracker_from_unity(p, q, out);
}

void
osc_vrchat_frame_build(const struct sk_skeleton *skeleton, const struct sk_pose *pose,
                       const struct em_device_pose *headset, struct osc_vrchat_frame *out_frame)
{
    assert(pose->joint_count == skeleton->joint_count);
    memset(out_frame, 0, sizeof *out_frame);
    for (int i = 0; i < OSC_VRCHAT_BODY_TRACKERS; ++i) {
        struct osc_vrchat_tracker *t = &out_frame->tracker[i];
        snprintf(t->address, sizeof t->address, "/tracking/trackers/%d", i + 1);
        const int pj = sk_skeleton_bone_joint(skeleton, vrchat_slots[i].position_bone);
        const int rj = sk_skeleton_bone_joint(skeleton, vrchat_slots[i].rotation_bone);
        if (pj >= 0 && rj >= 0)
            vrchat_tracker_from_joints(pose, pj, rj, t);
    }

    struct osc_vrchat_tracker *head = &out_frame->tracker[OSC_VRCHAT_HEAD];
    snprintf(head->address, sizeof head->address, "/tracking/trackers/head");
    if (headset && em_device_pose_usable(headset)) {
        /* Copied field by field: em_pose's versor is 16-byte aligned. */
        const float hp[3] = {headset->pose.position_m[0], headset->pose.position_m[1],
                             headset->pose.position_m[2]};
        const float hq[4] = {headset->pose.orientation[0], headset->pose.orientation[1],
                             headset->pose.orientation[2], headset->pose.orientation[3]};
        float p[3], q[4];
        osc_unity_position_from_stage(hp, p);
        osc_unity_view_rotation_from_stage(hq, q);
        vrchat_tracker_from_unity(p, q, head);
        return;
    }
    const int hj = sk_skeleton_bone_joint(skeleton, SK_HEAD);
    if (hj >= 0)
        vrchat_tracker_from_joints(pose, hj, hj, head);
}
