/*
 * Our conventions -> Unity's, as the VMC protocol and VRChat's OSC trackers use them
 * (src/osc/osc.h), and Unity's humanoid bone names.
 *
 * Derivation. Two frames differ between us and Unity, and both must be converted:
 *
 * 1. The world. Ours is OpenXR STAGE space: right-handed, +Y up, the player initially
 *    facing -Z with +X to their right. Unity's world is left-handed, +Y up, and an XR
 *    player initially faces +Z with +X to their right (Unity's OpenXR plugin maps
 *    OpenXR's -Z forward to Unity's +Z forward). Same up, same right, opposite forward:
 *        p_unity = M p_ours,   M = diag(1, 1, -1)
 *    M has determinant -1: this is the handedness change. Our +X (the player's right) is
 *    Unity's +X; our -Z (ahead of the player) is Unity's +Z.
 *
 * 2. The humanoid's own axes. Our humanoid at rest (identity rotations) faces +Z with its
 *    left at +X; Unity's normalized humanoid at rest (the T-pose VMC's local rotations are
 *    relative to) faces +Z with its left at -X. So a vector in one of our joint frames
 *    becomes, in the matching Unity bone frame,
 *        c_unity = N c_ours,   N = diag(-1, 1, 1)
 *    (also a reflection: our joint axes are right-handed, Unity's left-handed).
 *
 * A joint's global rotation R maps joint coordinates to world coordinates:
 * w_ours = R_ours c_ours. Substituting w_unity = M w_ours and c_ours = N c_unity (N is its
 * own inverse):
 *        R_unity = M R_ours N                                                   (global)
 * a proper rotation again (det = -1 * 1 * -1). A local rotation L = R_parent^-1 R_child:
 *        L_unity = N R_p^-1 M M R_c N = N L_ours N                               (local)
 * and a child's offset in its parent's frame, v = R_p^-1 (p_c - p_p):
 *        v_unity = N R_p^-1 M M (p_c - p_p) = N v_ours                    (local offset)
 *
 * In quaternions (x, y, z, w), conjugating a rotation by a reflection D = diag(d0, d1, d2)
 * (D R D) keeps the component along the reflected axis and negates the other two:
 * M R M = (-x, -y, z, w) and N R N = (x, -y, -z, w). (Check on R's matrix: entry R_ij
 * changes sign exactly when d_i d_j = -1, and so do 2(xz + yw), 2(yz - xw), ... under
 * those substitutions.) For the global case, M R N = (M R M)(M N), and M N =
 * diag(-1, 1, -1) is a half turn about Y, q = (0, 1, 0, 0):
 *        (-x, -y, z, w) (x) (0, 1, 0, 0) = (-z, w, -x, y)
 * Each map is its own inverse (up to the quaternion's sign), which the back-conversions
 * use.
 *
 * Hand-worked cases (tested): our +X -> Unity +X; our (0, 1.5, -2), two metres ahead of
 * the player, -> Unity (0, 1.5, 2). A humanoid at rest in our world faces +Z, behind the
 * player: in Unity its hips turn half a circle about Y (it faces -Z, also behind). A
 * humanoid turned to face -Z (hips q = (0, 1, 0, 0)) is identity in Unity, facing +Z.
 * Raising the left arm from T-pose straight up is, in our humanoid's frame, +90 degrees
 * about +Z (our +X arm to +Y); Unity's arm lies along -X, and the same motion is -90
 * degrees about Z: (0, 0, s, c) -> (0, 0, -s, c).
 *
 * Cameras (the headset) have no humanoid rest to change, only the world and their own
 * axes, and an OpenXR view (-Z forward) and a Unity camera (+Z forward) differ by M as
 * the worlds do: R_unity = M R_ours M.
 *
 * Unity's Euler angles: Quaternion.Euler(x, y, z) rotates z degrees about Z, then x about
 * X, then y about Y (fixed axes), so R = Ry(y) Rx(x) Rz(z), with the usual formulas for
 * the elementary rotations (Unity's quaternion algebra is the same as ours; only the
 * meaning of the coordinates differs). Multiplying out,
 *     R = | cy cz + sy sx sz   -cy sz + sy sx cz   sy cx |
 *         | cx sz              cx cz               -sx   |
 *         | -sy cz + cy sx sz  sy sz + cy sx cz    cy cx |
 * so x = atan2(-R12, hypot(R10, R11)), y = atan2(R02, R22), z = atan2(R10, R11); at
 * x = +-90 degrees (cx = 0) only y -+ z is defined, and z = 0, y = atan2(-R20, R00).
 */
#include <math.h>
#include <stddef.h>

#include "osc/osc.h"

void
osc_unity_position_from_stage(const float *p_m, float *out_p_m)
{
    const float x = p_m[0], y = p_m[1], z = p_m[2];
    out_p_m[0] = x;
    out_p_m[1] = y;
    out_p_m[2] = -z;
}

void
osc_stage_position_from_unity(const float *p_m, float *out_p_m)
{
    osc_unity_position_from_stage(p_m, out_p_m); /* M is its own inverse */
}

void
osc_unity_bone_rotation_from_stage(const float *q, float *out_q)
{
    /* M R N = (-z, w, -x, y), see the derivation above. */
    const float x = q[0], y = q[1], z = q[2], w = q[3];
    out_q[0] = -z;
    out_q[1] = w;
    out_q[2] = -x;
    out_q[3] = y;
}

void
osc_stage_bone_rotation_from_unity(const float *q, float *out_q)
{
    /* M (M R N) N = R: the same map. */
    osc_unity_bone_rotation_from_stage(q, out_q);
}

void
osc_unity_local_rotation_from_ours(const float *q, float *out_q)
{
    const float x = q[0], y = q[1], z = q[2], w = q[3];
    out_q[0] = x;
    out_q[1] = -y;
    out_q[2] = -z;
    out_q[3] = w;
}

void
osc_ours_local_rotation_from_unity(const float *q, float *out_q)
{
    osc_unity_local_rotation_from_ours(q, out_q);
}

void
osc_unity_local_position_from_ours(const float *v_m, float *out_v_m)
{
    const float x = v_m[0], y = v_m[1], z = v_m[2];
    out_v_m[0] = -x;
    out_v_m[1] = y;
    out_v_m[2] = z;
}

void
osc_ours_local_position_from_unity(const float *v_m, float *out_v_m)
{
    osc_unity_local_position_from_ours(v_m, out_v_m);
}

void
osc_unity_view_rotation_from_stage(const float *q, float *out_q)
{
    const float x = q[0], y = q[1], z = q[2], w = q[3];
    out_q[0] = -x;
    out_q[1] = -y;
    out_q[2] = z;
    out_q[3] = w;
}

/* Degrees in (-180, 180]. */
static double
deg_from_rad(double rad)
{
    double deg = rad * (180.0 / 3.14159265358979323846);
    if (deg <= -180.0)
        deg += 360.0;
    return deg;
}

void
osc_unity_euler_deg_from_rotation(const float *q, float *out_euler_deg)
{
    /* In double: near x = +-90 degrees the angles are sensitive to rounding. */
    double x = (double)q[0], y = (double)q[1], z = (double)q[2], w = (double)q[3];
    const double n = sqrt(x * x + y * y + z * z + w * w);
    if (!(n > 1e-12)) {
        out_euler_deg[0] = out_euler_deg[1] = out_euler_deg[2] = 0.0f;
        return;
    }
    x /= n;
    y /= n;
    z /= n;
    w /= n;
    const double r00 = 1.0 - 2.0 * (y * y + z * z);
    const double r02 = 2.0 * (x * z + y * w);
    const double r10 = 2.0 * (x * y + z * w);
    const double r11 = 1.0 - 2.0 * (x * x + z * z);
    const double r12 = 2.0 * (y * z - x * w);
    const double r20 = 2.0 * (x * z - y * w);
    const double r22 = 1.0 - 2.0 * (x * x + y * y);
    const double cos_x = sqrt(r10 * r10 + r11 * r11);
    double ex, ey, ez;
    ex = atan2(-r12, cos_x);
    if (cos_x > 1e-9) {
        ey = atan2(r02, r22);
        ez = atan2(r10, r11);
    } else { /* gimbal lock: put the whole turn about the vertical into y */
        ey = atan2(-r20, r00);
        ez = 0.0;
    }
    out_euler_deg[0] = (float)deg_from_rad(ex);
    out_euler_deg[1] = (float)deg_from_rad(ey);
    out_euler_deg[2] = (float)deg_from_rad(ez);
}

const char *
osc_unity_bone_name(enum sk_bone bone)
{
    /* Unity's HumanBodyBones enum names, which VMC uses for /VMC/Ext/Bone/Pos. VRM's
     * "left"/"right" and Unity's are both the avatar's own sides. */
    static const char *const names[SK_BONE_COUNT] = {
        [SK_HIPS] = "Hips",
        [SK_SPINE] = "Spine",
        [SK_CHEST] = "Chest",
        [SK_UPPER_CHEST] = "UpperChest",
        [SK_NECK] = "Neck",
        [SK_HEAD] = "Head",
        [SK_LEFT_SHOULDER] = "LeftShoulder",
        [SK_LEFT_UPPER_ARM] = "LeftUpperArm",
        [SK_LEFT_LOWER_ARM] = "LeftLowerArm",
        [SK_LEFT_HAND] = "LeftHand",
        [SK_RIGHT_SHOULDER] = "RightShoulder",
        [SK_RIGHT_UPPER_ARM] = "RightUpperArm",
        [SK_RIGHT_LOWER_ARM] = "RightLowerArm",
        [SK_RIGHT_HAND] = "RightHand",
        [SK_LEFT_UPPER_LEG] = "LeftUpperLeg",
        [SK_LEFT_LOWER_LEG] = "LeftLowerLeg",
        [SK_LEFT_FOOT] = "LeftFoot",
        [SK_LEFT_TOES] = "LeftToes",
        [SK_RIGHT_UPPER_LEG] = "RightUpperLeg",
        [SK_RIGHT_LOWER_LEG] = "RightLowerLeg",
        [SK_RIGHT_FOOT] = "RightFoot",
        [SK_RIGHT_TOES] = "RightToes",
        /* The end joints stay NULL: not humanoid bones. */
    };
    if (bone < 0 || bone >= SK_BONE_COUNT)
        return NULL;
    return names[bone];
}
