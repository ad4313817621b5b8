/*
 * Poses: allocation, rest pose, forward kinematics (include/embody/skeleton.h).
 */
#include <stdlib.h>
#include <string.h>

#include "embody/m_math.h"
#include "embody/skeleton.h"

enum em_result
sk_pose_init(struct sk_pose *pose, const struct sk_skeleton *sk)
{
    memset(pose, 0, sizeof *pose);
    const size_t n = (size_t)sk->joint_count;
    /* versor wants 16-byte alignment: sizes rounded up for aligned_alloc. */
    const size_t qbytes = (n * sizeof(versor) + 15) & ~(size_t)15;
    pose->position_m = calloc(n, sizeof *pose->position_m);
    pose->rotation = aligned_alloc(16, qbytes);
    pose->local_rotation = aligned_alloc(16, qbytes);
    pose->joint_count = sk->joint_count;
    if (!pose->position_m || !pose->rotation || !pose->local_rotation) {
        sk_pose_fini(pose);
        return EM_ERROR_OUT_OF_MEMORY;
    }
    sk_pose_set_rest(pose, sk);
    return EM_OK;
}

void
sk_pose_fini(struct sk_pose *pose)
{
    free(pose->position_m);
    free(pose->rotation);
    free(pose->local_rotation);
    memset(pose, 0, sizeof *pose);
}

void
sk_pose_set_rest(struct sk_pose *pose, const struct sk_skeleton *sk)
{
    for (int i = 0; i < sk->joint_count; ++i) {
        m_vec3_copy(sk->rest_position_m[i], pose->position_m[i]);
        m_quat_identity(pose->rotation[i]);
        m_quat_identity(pose->local_rotation[i]);
    }
}

void
sk_pose_forward_kinematics(struct sk_pose *pose, const struct sk_skeleton *sk)
{
    for (int i = 0; i < sk->joint_count; ++i) {
        const int p = sk->parent[i];
        if (p < 0) {
            m_quat_copy(pose->local_rotation[i], pose->rotation[i]);
            continue;
        }
        m_quat_mul(pose->rotation[p], pose->local_rotation[i], pose->rotation[i]);
        float off[3];
        m_quat_rotate(pose->rotation[p], sk->offset_m[i], off);
        m_vec3_add(pose->position_m[p], off, pose->position_m[i]);
    }
}

void
sk_pose_forward_kinematics_below(struct sk_pose *pose, const struct sk_skeleton *skeleton, int top)
{
    /* Joints come parents first: a joint is below `top` when its ancestors reach it. */
    for (int j = top + 1; j < skeleton->joint_count; ++j) {
        int a = skeleton->parent[j];
        while (a > top)
            a = skeleton->parent[a];
        if (a != top)
            continue;
        const int p = skeleton->parent[j];
        float off[3];
        m_quat_mul(pose->rotation[p], pose->local_rotation[j], pose->rotation[j]);
        m_quat_rotate(pose->rotation[p], skeleton->offset_m[j], off);
        m_vec3_add(pose->position_m[p], off, pose->position_m[j]);
    }
}

void
sk_pose_update_local(struct sk_pose *pose, const struct sk_skeleton *sk)
{
    for (int i = 0; i < sk->joint_count; ++i) {
        const int p = sk->parent[i];
        if (p < 0)
            m_quat_copy(pose->rotation[i], pose->local_rotation[i]);
        else
            m_quat_mul_conj_first(pose->rotation[p], pose->rotation[i], pose->local_rotation[i]);
    }
}

void
sk_pose_copy(const struct sk_pose *src, struct sk_pose *dst)
{
    const size_t n = (size_t)(src->joint_count < dst->joint_count ? src->joint_count
                                                                   : dst->joint_count);
    memcpy(dst->position_m, src->position_m, n * sizeof *src->position_m);
    memcpy(dst->rotation, src->rotation, n * sizeof *src->rotation);
    memcpy(dst->local_rotation, src->local_rotation, n * sizeof *src->local_rotation);
}
