/*
 * The joint frames of the APIs the layer answers, from embody's own.
 *
 * embody's joint frames are world-aligned at rest (the T-pose, facing +Z, the body's left
 * at +X), and a joint's rotation is its turn from there. Applications are written for
 * other frames:
 *
 *   - XR_FB_body_tracking and XR_META_body_tracking_full_body: Meta's runtime's frames
 *     (the specification leaves them to the runtime; every plug-in for it assumes them),
 *     one of a few per-bone frames in which +X or -X runs along the bone to its child;
 *   - XR_BD_body_tracking: the specification's, every joint at the T-pose with +X to the
 *     body's right, +Y up and +Z to its back; a joint's rotation is its turn from there.
 *
 * lyr_joint_frames.c holds these conventions as data (one table per API); nothing else in
 * the layer knows them.
 */
#ifndef EMBODY_LYR_JOINT_FRAMES_H
#define EMBODY_LYR_JOINT_FRAMES_H

#include <stdint.h>

#include <cglm/cglm.h>

#include "layer/lyr_internal.h"

/* Turns the `count` joints of an FB (70) or META (84) set, positioned and turned in
 * embody's frames (lyr_joints_from_pose), into Meta's frames, in place: each joint's
 * rest frame of Meta's convention is carried by the joint's rotation, then turned the
 * least that puts its bone axis on the line to the joint it aims at (its child along the
 * bone), so the frames follow the solved skeleton's bones at every pose. Positions stay. */
void lyr_frames_to_meta(uint32_t count, struct lyr_joint_pose *joints);

/* Meta's bone axis of an FB / META joint, in the joint's frame: (+-1, 0, 0), or zero for
 * joints with no bone to a child (root, head, finger tips, ball of the foot). */
void lyr_frames_meta_bone_axis(uint32_t joint, vec3 out_axis);

/* XR_BD_body_tracking's rotation of a joint from Meta's: `located` is the Meta frame of
 * the joint it stands on at this pose and `tpose` the same joint's frame in
 * xrGetBodySkeletonFB's T-pose (the body facing +Z); both in the same space as the
 * result. The turn from the T-pose (located * tpose^-1) applied to the specification's
 * T-pose frame (+X right, +Y up, +Z back: a half turn about +Y for a body facing +Z). */
void lyr_frames_meta_to_bd(const versor located, const versor tpose, versor out);

#endif
