/*
 * The finger bones in the one humanoid name map (src/skeleton/sk_names.c): which finger
 * joint of which hand a rig's node is, by its name, in every convention the name map
 * knows (VRM 1.0, Unity and VRM 0.x, VRoid, Mixamo, Unreal, Rigify, Character Creator,
 * Daz, CATS/VRChat). Finger joints are the hand module's (include/embody/hand.h: joint
 * f * 3 + j, the thumb's metacarpal, proximal and distal, the other fingers' proximal,
 * intermediate and distal), not humanoid bones of enum sk_bone: the body solves no finger.
 *
 * Internal to the core library (the avatar module links it statically).
 */
#ifndef EMBODY_SK_FINGERS_H
#define EMBODY_SK_FINGERS_H

#include "embody/hand.h"
#include "embody/skeleton.h"

/* VRM 1.0 and Unity give "ThumbProximal" to different bones: VRM 1.0 names the thumb's
 * bones metacarpal, proximal, distal; Unity and VRM 0.x proximal, intermediate, distal. */
enum sk_finger_names {
    SK_FINGER_NAMES_UNITY = 0, /* Unity's HumanBodyBones, VRM 0.x */
    SK_FINGER_NAMES_VRM1 = 1,
};

/* The finger joint (f * 3 + j, in [0, HD_JOINT_COUNT)) a node called `name` is, and its
 * hand in *out_side (enum hd_hand); -1 for a name that is no finger bone. Names compare
 * folded (sk_name_fold). `names` says how "ThumbProximal" reads. */
int sk_finger_from_node_name(const char *name, enum sk_finger_names names, int *out_side);

/* How a rig names its thumb: VRM 1.0's when any name has "ThumbMetacarpal", else Unity's. */
enum sk_finger_names sk_finger_names_guess(const char *const *names, int count);

#endif
