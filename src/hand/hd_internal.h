/*
 * The hand module's own helpers (src/hand), shared by its files only.
 */
#ifndef EMBODY_HD_INTERNAL_H
#define EMBODY_HD_INTERNAL_H

#include "embody/hand.h"

/* +1 on the left hand, -1 on the right: the hand frame's +X times this points to the
 * thumb's side. */
static inline float
hd_thumb_side_sign(enum hd_hand hand)
{
    return hand == HD_LEFT ? 1.0f : -1.0f;
}

/* The finger's flexion axis (direction x palmar) and abduction axis (direction x side). */
void hd_finger_axes(const struct hd_model *model, int finger, float *out_flex_axis,
                    float *out_abduct_axis);

/* Normalises a finger's direction and fills its palmar and side vectors from it (index and
 * middle abduct towards the thumb, ring and little away from it; the thumb's are set
 * apart). False, the frame then unusable, when the direction is zero or (a finger's) has nothing
 * along the hand's forward axis (-Z), so that no palmar or side vector is left. */
bool hd_finger_frame_from_direction(struct hd_model *model, int finger);

/* One finger's joints and tip in the hand frame, and the joints' rotations in the hand
 * frame (out_world may be NULL). */
void hd_finger_fk(const struct hd_model *model, const struct hd_pose *pose, int finger,
                  float (*out_point_m)[3], float (*out_world)[4]);

/* The hand frame's axes (columns) from tracked positions: the wrist, index, middle and
 * little knuckles. False when they are degenerate (knuckles on a line with the wrist). */
bool hd_hand_frame(enum hd_hand hand, const float *wrist, const float *index_knuckle,
                   const float *middle_knuckle, const float *little_knuckle, float *out_x,
                   float *out_y, float *out_z);

/* The fault of one joint, wrist checks included (the wrist's own position is read for
 * the distance check only when it is itself usable). */
enum hd_joint_fault hd_check_joint(const struct hd_xr_hand *hand, int joint);

/* The tracked joint that comes before `joint` on its chain (the wrist for the metacarpals),
 * or -1 for the palm and wrist. */
int hd_xr_previous_joint(int joint);

/* The XR joints of finger f: first (its metacarpal) and count (5, the thumb's 4). */
void hd_xr_finger_joints(int finger, int *out_first, int *out_count);

#endif
