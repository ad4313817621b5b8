/*
 * Shared by the out module's tests: test poses, and an independent reference for the
 * conventions, written with 3x3 matrices straight from the derivation (world change
 * M = diag(1, 1, -1), humanoid axes change N = diag(-1, 1, 1), Unity's Euler order
 * R = Ry(y) Rx(x) Rz(z)) rather than with the module's quaternion shortcuts, so the two
 * check each other.
 */
#ifndef EMBODY_TESTS_OUT_SUPPORT_H
#define EMBODY_TESTS_OUT_SUPPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "osc/osc.h"
#include "embody/skeleton.h"

/* ---- Reference math (double) ---- */

extern const double REF_M[3][3]; /* STAGE world -> Unity world */
extern const double REF_N[3][3]; /* our humanoid joint axes -> Unity humanoid bone axes */

void
ref_mat_from_quat(const float *q, double out[3][3]);
void
ref_mat_mul(const double a[3][3], const double b[3][3], double out[3][3]);
void
ref_mat_vec(const double a[3][3], const double *v, double *out);
/* Unity's Quaternion.Euler(x, y, z) as a matrix: Ry(y) Rx(x) Rz(z), degrees. */
void
ref_mat_from_unity_euler_deg(const float *euler_deg, double out[3][3]);
double
ref_mat_max_diff(const double a[3][3], const double b[3][3]);

/* Unity -> ours, from the derivation: R_ours = M R_unity N (global bone), N L N (local),
 * M R M (view); positions p = M p_unity, local offsets v = N v_unity. */
void
ref_stage_bone_rotation_from_unity(const double r_unity[3][3], double out[3][3]);
void
ref_conjugate(const double d[3][3], const double r[3][3], double out[3][3]);

/* ---- Humanoid names, written from Unity's HumanBodyBones, not from the module ---- */

/* The Unity name for a VRM bone name, or NULL when it is not a humanoid bone. */
const char *
ref_unity_name_of_vrm(const char *vrm_name);
/* Unity's humanoid parent of a Unity bone, given whether UpperChest is in the set. */
const char *
ref_unity_parent(const char *unity_name, bool have_upper_chest);

/* ---- Test poses ---- */

void
load_humanoid(struct sk_skeleton *out_skeleton);
/* The default humanoid with an upperChest inserted between chest and neck/shoulders. */
void
load_humanoid_with_upper_chest(struct sk_skeleton *out_skeleton);
/* A random but reproducible pose: any heading, a root somewhere on the stage, local
 * rotations up to 70 degrees about random axes. */
void
make_random_pose(const struct sk_skeleton *sk, uint32_t seed, struct sk_pose *pose);
/* The rest pose (T-pose) with the hips turned by `yaw_deg` about +Y, at (0, hips, 0). */
void
make_turned_rest_pose(const struct sk_skeleton *sk, float yaw_deg, struct sk_pose *pose);

#endif
