/*
 * Out module tests without the network: the conventions (hand-worked cases and the
 * matrix derivation), the VMC and VRChat frames converted back to the pose, and strict
 * parsing of destinations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "embody/m_math.h"
#include "test_osc.h"
#include "test_osc_support.h"

#define POSE_COUNT 40

/* Rotation matrices equal within `tol` (so q and -q compare equal). */
static void
assert_rotation_near(const double a[3][3], const double b[3][3], double tol, const char *what)
{
    const double d = ref_mat_max_diff(a, b);
    if (!(d <= tol))
        fail_msg("%s: rotation differs by %.3g (tolerance %.3g)", what, d, tol);
}

static void
assert_vec3_near(const double *a, const float *b, double tol, const char *what)
{
    for (int i = 0; i < 3; ++i)
        if (!(fabs(a[i] - (double)b[i]) <= tol))
            fail_msg("%s: [%d] is %.9g, expected %.9g (tolerance %.3g)", what, i, a[i],
                     (double)b[i], tol);
}

/* The index of bone `b` in a VMC frame, or -1. */
static int
vmc_index(const struct osc_vmc_frame *f, enum sk_bone b)
{
    for (int i = 0; i < f->bone_count; ++i)
        if (f->bone[i] == b)
            return i;
    return -1;
}

/* ---- Hand-worked cases ---------------------------------------------------------------- */

void
positions_convert_by_flipping_z_only(void **state)
{
    (void)state;
    float out[3];
    const float right[3] = {1, 0, 0}; /* the player's right at start */
    osc_unity_position_from_stage(right, out);
    assert_float_equal(out[0], 1.0, 0);
    assert_float_equal(out[1], 0.0, 0);
    assert_float_equal(out[2], 0.0, 0);
    const float ahead[3] = {0, 1.5f, -2.0f}; /* two metres ahead of the player, eye level */
    osc_unity_position_from_stage(ahead, out);
    assert_float_equal(out[0], 0.0, 0);
    assert_float_equal(out[1], 1.5, 0);
    assert_float_equal(out[2], 2.0, 0); /* Unity's forward is +Z */
}

void
rest_pose_facing_players_forward_is_unity_identity(void **state)
{
    (void)state;
    struct sk_skeleton sk;
    struct sk_pose pose;
    load_humanoid(&sk);
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    make_turned_rest_pose(&sk, 180.0f, &pose); /* faces -Z in STAGE: the player's forward */

    struct osc_vmc_frame vmc;
    osc_vmc_frame_build(&sk, &pose, 0.0f, &vmc);
    for (int i = 0; i < vmc.bone_count; ++i) {
        const float *q = vmc.bone_local[i].rotation;
        /* Every bone, the hips included, is at Unity's identity (T-pose facing +Z). */
        if (!(fabsf(fabsf(q[3]) - 1.0f) < 1e-6f))
            fail_msg("%s: rotation (%g %g %g %g) is not identity",
                     osc_unity_bone_name(vmc.bone[i]), (double)q[0], (double)q[1],
                     (double)q[2], (double)q[3]);
    }
    /* Unity's humanoid has its left at -X: the left hand is there. */
    float hand[3];
    osc_unity_position_from_stage(pose.position_m[sk.bone_joint[SK_LEFT_HAND]], hand);
    assert_true(hand[0] < -0.5f);

    struct osc_vrchat_frame vrc;
    osc_vrchat_frame_build(&sk, &pose, NULL, &vrc);
    for (int i = 0; i <= OSC_VRCHAT_BODY_TRACKERS; ++i) {
        assert_true(vrc.tracker[i].present);
        for (int k = 0; k < 3; ++k)
            assert_float_equal(vrc.tracker[i].euler_deg[k], 0.0, 1e-4);
    }
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
}

void
rest_pose_in_our_world_faces_away_in_unity(void **state)
{
    (void)state;
    struct sk_skeleton sk;
    struct sk_pose pose;
    load_humanoid(&sk);
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    make_turned_rest_pose(&sk, 0.0f, &pose); /* identity: faces +Z, behind the player */

    struct osc_vmc_frame vmc;
    osc_vmc_frame_build(&sk, &pose, 0.0f, &vmc);
    const int hips = vmc_index(&vmc, SK_HIPS);
    assert_true(hips >= 0);
    /* Half a turn about Y: (0, +-1, 0, 0). */
    assert_float_equal(fabsf(vmc.bone_local[hips].rotation[1]), 1.0, 1e-6);
    /* Below the hips, nothing turns. */
    const int arm = vmc_index(&vmc, SK_LEFT_UPPER_ARM);
    assert_float_equal(fabsf(vmc.bone_local[arm].rotation[3]), 1.0, 1e-6);

    struct osc_vrchat_frame vrc;
    osc_vrchat_frame_build(&sk, &pose, NULL, &vrc);
    assert_float_equal(vrc.tracker[0].euler_deg[0], 0.0, 1e-4);
    assert_float_equal(vrc.tracker[0].euler_deg[1], 180.0, 1e-4);
    assert_float_equal(vrc.tracker[0].euler_deg[2], 0.0, 1e-4);
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
}

void
avatar_facing_players_right_reads_yaw_plus_90_in_vrchat(void **state)
{
    (void)state;
    struct sk_skeleton sk;
    struct sk_pose pose;
    load_humanoid(&sk);
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    /* Our +90 degrees about +Y takes the body's forward (+Z) to +X, the player's right. */
    make_turned_rest_pose(&sk, 90.0f, &pose);
    struct osc_vrchat_frame vrc;
    osc_vrchat_frame_build(&sk, &pose, NULL, &vrc);
    /* In Unity, +90 about Y takes +Z (forward) to +X (right). */
    for (int i = 0; i < OSC_VRCHAT_BODY_TRACKERS; ++i) {
        assert_float_equal(vrc.tracker[i].euler_deg[0], 0.0, 1e-4);
        assert_float_equal(vrc.tracker[i].euler_deg[1], 90.0, 1e-4);
        assert_float_equal(vrc.tracker[i].euler_deg[2], 0.0, 1e-4);
    }
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
}

void
raising_the_left_arm_turns_the_unity_arm_up(void **state)
{
    (void)state;
    struct sk_skeleton sk;
    struct sk_pose pose;
    load_humanoid(&sk);
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    sk_pose_set_rest(&pose, &sk);
    /* Ours: the left arm lies along +X; +90 degrees about +Z (forward) lifts it to +Y. */
    const float forward[3] = {0, 0, 1};
    const int arm = sk.bone_joint[SK_LEFT_UPPER_ARM];
    m_quat_from_axis_angle(forward, 90.0f * M_DEG_TO_RAD, pose.local_rotation[arm]);
    sk_pose_forward_kinematics(&pose, &sk);

    struct osc_vmc_frame vmc;
    osc_vmc_frame_build(&sk, &pose, 0.0f, &vmc);
    const float *q = vmc.bone_local[vmc_index(&vmc, SK_LEFT_UPPER_ARM)].rotation;
    /* Unity's left arm lies along -X; the same lift is -90 degrees about Z. */
    const float s = sqrtf(0.5f);
    const float sign = q[3] < 0 ? -1.0f : 1.0f;
    assert_float_equal(sign * q[0], 0.0, 1e-6);
    assert_float_equal(sign * q[1], 0.0, 1e-6);
    assert_float_equal(sign * q[2], -s, 1e-6);
    assert_float_equal(sign * q[3], s, 1e-6);
    /* And it does turn Unity's rest arm direction (-1, 0, 0) to straight up. */
    double r[3][3], up[3];
    const double rest_arm[3] = {-1, 0, 0};
    ref_mat_from_quat(q, r);
    ref_mat_vec(r, rest_arm, up);
    const float expect_up[3] = {0, 1, 0};
    assert_vec3_near(up, expect_up, 1e-6, "lifted arm");
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
}

/* ---- The conversions against the matrix derivation -------------------------------------- */

void
conversions_match_the_matrix_derivation_and_invert(void **state)
{
    (void)state;
    struct sk_skeleton sk;
    struct sk_pose pose;
    load_humanoid(&sk);
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    for (uint32_t seed = 1; seed <= POSE_COUNT; ++seed) {
        make_random_pose(&sk, seed, &pose);
        for (int j = 0; j < sk.joint_count; ++j) {
            const float *q = pose.rotation[j];
            double r[3][3], expect[3][3], got[3][3];
            ref_mat_from_quat(q, r);
            float u[4], back[4];

            /* Global bone rotation: M R N. */
            osc_unity_bone_rotation_from_stage(q, u);
            ref_mat_mul(REF_M, r, expect);
            ref_mat_mul(expect, REF_N, expect);
            ref_mat_from_quat(u, got);
            assert_rotation_near(got, expect, 1e-6, "bone rotation");
            osc_stage_bone_rotation_from_unity(u, back);
            ref_mat_from_quat(back, got);
            assert_rotation_near(got, r, 1e-6, "bone rotation back");

            /* Local rotation: N L N. */
            osc_unity_local_rotation_from_ours(q, u);
            ref_conjugate(REF_N, r, expect);
            ref_mat_from_quat(u, got);
            assert_rotation_near(got, expect, 1e-6, "local rotation");
            osc_ours_local_rotation_from_unity(u, back);
            ref_mat_from_quat(back, got);
            assert_rotation_near(got, r, 1e-6, "local rotation back");

            /* A view (camera): M R M. */
            osc_unity_view_rotation_from_stage(q, u);
            ref_conjugate(REF_M, r, expect);
            ref_mat_from_quat(u, got);
            assert_rotation_near(got, expect, 1e-6, "view rotation");

            /* Positions: M p; offsets: N v. */
            const double p[3] = {(double)pose.position_m[j][0], (double)pose.position_m[j][1],
                                 (double)pose.position_m[j][2]};
            double pe[3];
            float pu[3], pb[3];
            osc_unity_position_from_stage(pose.position_m[j], pu);
            ref_mat_vec(REF_M, p, pe);
            assert_vec3_near(pe, pu, 0, "position");
            osc_stage_position_from_unity(pu, pb);
            assert_vec3_near(p, pb, 0, "position back");
            osc_unity_local_position_from_ours(pose.position_m[j], pu);
            ref_mat_vec(REF_N, p, pe);
            assert_vec3_near(pe, pu, 0, "offset");
            osc_ours_local_position_from_unity(pu, pb);
            assert_vec3_near(p, pb, 0, "offset back");
        }
    }
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
}

void
unity_euler_angles_rebuild_the_rotation(void **state)
{
    (void)state;
    struct sk_skeleton sk;
    struct sk_pose pose;
    load_humanoid(&sk);
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    /* Random rotations, plus the gimbal-lock cases x = +-90 where only y -+ z is defined. */
    float cases[64][4];
    int n = 0;
    for (uint32_t seed = 1; seed <= 4; ++seed) {
        make_random_pose(&sk, seed, &pose);
        for (int j = 0; j < sk.joint_count && n < 60; ++j, ++n)
            m_quat_copy(pose.rotation[j], cases[n]);
    }
    const float e_locked[2][3] = {{90.0f, 30.0f, 20.0f}, {-90.0f, -120.0f, 45.0f}};
    for (int k = 0; k < 2; ++k) {
        /* The test's own Quaternion.Euler: q = qy * qx * qz. */
        const float ax[3] = {1, 0, 0}, ay[3] = {0, 1, 0}, az[3] = {0, 0, 1};
        float qx[4], qy[4], qz[4];
        m_quat_from_axis_angle(ax, e_locked[k][0] * M_DEG_TO_RAD, qx);
        m_quat_from_axis_angle(ay, e_locked[k][1] * M_DEG_TO_RAD, qy);
        m_quat_from_axis_angle(az, e_locked[k][2] * M_DEG_TO_RAD, qz);
        m_quat_mul(qy, qx, cases[n]);
        m_quat_mul(cases[n], qz, cases[n]);
        ++n;
    }
    for (int i = 0; i < n; ++i) {
        float e[3];
        osc_unity_euler_deg_from_rotation(cases[i], e);
        assert_true(e[0] >= -90.0f && e[0] <= 90.0f);
        for (int k = 1; k < 3; ++k)
            assert_true(e[k] > -180.0f && e[k] <= 180.0f);
        double from_euler[3][3], from_quat[3][3];
        ref_mat_from_unity_euler_deg(e, from_euler);
        ref_mat_from_quat(cases[i], from_quat);
        assert_rotation_near(from_euler, from_quat, 1e-6, "Euler angles");
    }
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
}

/* ---- Frames converted back --------------------------------------------------------------- */

/* Checks a VMC frame against the pose it came from: each bone's local pose converts back
 * to our local rotation and the skeleton's offset, and composing the local poses down
 * Unity's humanoid hierarchy (the test's own table) gives back every global pose. */
void
check_vmc_values_against_pose(const struct sk_skeleton *sk, const struct sk_pose *pose,
                              const struct osc_vmc_frame *f, double local_tol,
                              double global_tol)
{
    bool have_upper_chest = false;
    for (int i = 0; i < f->bone_count; ++i)
        have_upper_chest |= f->bone[i] == SK_UPPER_CHEST;
    /* The root is the STAGE origin. */
    for (int k = 0; k < 3; ++k)
        assert_float_equal(f->root.position_m[k], 0.0, 0);
    assert_float_equal(fabsf(f->root.rotation[3]), 1.0, 1e-6);

    double rot[SK_BONE_COUNT][3][3], pos[SK_BONE_COUNT][3];
    const char *names[SK_BONE_COUNT];
    for (int i = 0; i < f->bone_count; ++i) {
        const int j = sk->bone_joint[f->bone[i]];
        const char *name = ref_unity_name_of_vrm(sk->name[j]);
        assert_non_null(name);
        names[i] = name;
        const struct osc_unity_pose *l = &f->bone_local[i];
        double lr[3][3], lp[3];
        const double lp_unity[3] = {(double)l->position_m[0], (double)l->position_m[1],
                                    (double)l->position_m[2]};
        ref_mat_from_quat(l->rotation, lr);

        const char *parent = ref_unity_parent(name, have_upper_chest);
        int pi = -1;
        for (int k = 0; k < i && parent; ++k)
            if (strcmp(names[k], parent) == 0)
                pi = k;
        if (parent && pi < 0)
            fail_msg("%s arrived before its parent %s", name, parent);
        if (pi < 0) {
            /* Under the root (identity at the origin): the Unity world pose. */
            memcpy(rot[i], lr, sizeof lr);
            memcpy(pos[i], lp_unity, sizeof lp_unity);
        } else {
            /* Local values convert back to ours: N L N and N v. */
            double ours[3][3], expect[3][3];
            ref_conjugate(REF_N, lr, ours);
            ref_mat_from_quat(pose->local_rotation[j], expect);
            assert_rotation_near(ours, expect, local_tol, name);
            ref_mat_vec(REF_N, lp_unity, lp);
            assert_vec3_near(lp, sk->offset_m[j], local_tol, name);
            /* Compose down the hierarchy, in Unity's frame. */
            ref_mat_mul(rot[pi], lr, rot[i]);
            ref_mat_vec(rot[pi], lp_unity, pos[i]);
            for (int k = 0; k < 3; ++k)
                pos[i][k] += pos[pi][k];
        }
        /* Globals back to ours: M p and M R N. */
        double p_ours[3], r_ours[3][3], expect_r[3][3];
        ref_mat_vec(REF_M, pos[i], p_ours);
        assert_vec3_near(p_ours, pose->position_m[j], global_tol, name);
        ref_stage_bone_rotation_from_unity(rot[i], r_ours);
        ref_mat_from_quat(pose->rotation[j], expect_r);
        assert_rotation_near(r_ours, expect_r, global_tol, name);
    }
}

void
vmc_frame_converts_back_to_the_pose(void **state)
{
    (void)state;
    struct sk_skeleton sk;
    struct sk_pose pose;
    load_humanoid(&sk);
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    struct osc_vmc_frame f;
    for (uint32_t seed = 1; seed <= POSE_COUNT; ++seed) {
        make_random_pose(&sk, seed, &pose);
        osc_vmc_frame_build(&sk, &pose, 1.25f, &f);
        assert_float_equal(f.time_s, 1.25, 0);
        check_vmc_values_against_pose(&sk, &pose, &f, 1e-6, 1e-6);
    }
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
}

/* Every humanoid bone the skeleton has, once, and nothing else (no end joints). */
static void
check_vmc_bone_set(const struct sk_skeleton *sk, const struct osc_vmc_frame *f)
{
    int expected = 0;
    for (int j = 0; j < sk->joint_count; ++j) {
        const char *unity = ref_unity_name_of_vrm(sk->name[j]);
        if (!unity)
            continue;
        ++expected;
        int found = 0;
        for (int i = 0; i < f->bone_count; ++i)
            found += strcmp(osc_unity_bone_name(f->bone[i]), unity) == 0;
        if (found != 1)
            fail_msg("%s (%s) appears %d times", unity, sk->name[j], found);
    }
    assert_int_equal(f->bone_count, expected);
}

void
vmc_frame_has_every_humanoid_bone_and_upper_chest_when_present(void **state)
{
    (void)state;
    struct sk_skeleton sk;
    struct sk_pose pose;
    struct osc_vmc_frame f;

    load_humanoid(&sk);
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    make_random_pose(&sk, 7, &pose);
    osc_vmc_frame_build(&sk, &pose, 0.0f, &f);
    check_vmc_bone_set(&sk, &f);
    assert_int_equal(f.bone_count, 21); /* the default humanoid has no upperChest */
    assert_int_equal(vmc_index(&f, SK_UPPER_CHEST), -1);
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);

    load_humanoid_with_upper_chest(&sk);
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    for (uint32_t seed = 1; seed <= 10; ++seed) {
        make_random_pose(&sk, seed, &pose);
        osc_vmc_frame_build(&sk, &pose, 0.0f, &f);
        check_vmc_bone_set(&sk, &f);
        assert_int_equal(f.bone_count, 22);
        /* Neck and shoulders are now relative to UpperChest, as in Unity. */
        check_vmc_values_against_pose(&sk, &pose, &f, 1e-6, 1e-6);
    }
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
}

/* The test's own copy of the documented slot table: position joint, rotation joint. */
static const char *const ref_slots[OSC_VRCHAT_BODY_TRACKERS][3] = {
    {"/tracking/trackers/1", "hips", "hips"},
    {"/tracking/trackers/2", "chest", "chest"},
    {"/tracking/trackers/3", "leftFoot", "leftFoot"},
    {"/tracking/trackers/4", "rightFoot", "rightFoot"},
    {"/tracking/trackers/5", "leftLowerLeg", "leftUpperLeg"},
    {"/tracking/trackers/6", "rightLowerLeg", "rightUpperLeg"},
    {"/tracking/trackers/7", "leftLowerArm", "leftUpperArm"},
    {"/tracking/trackers/8", "rightLowerArm", "rightUpperArm"},
};

void
check_vrchat_values_against_pose(const struct sk_skeleton *sk, const struct sk_pose *pose,
                                 const char *address, const float *position_unity,
                                 const float *euler_deg, double tol)
{
    const char *pos_name = "head", *rot_name = "head";
    for (int i = 0; i < OSC_VRCHAT_BODY_TRACKERS; ++i)
        if (strcmp(ref_slots[i][0], address) == 0) {
            pos_name = ref_slots[i][1];
            rot_name = ref_slots[i][2];
        }
    if (strcmp(pos_name, "head") == 0 && strcmp(address, "/tracking/trackers/head") != 0)
        fail_msg("unexpected tracker address %s", address);
    const int pj = sk_skeleton_find(sk, pos_name), rj = sk_skeleton_find(sk, rot_name);
    assert_true(pj >= 0 && rj >= 0);
    const double pu[3] = {(double)position_unity[0], (double)position_unity[1],
                          (double)position_unity[2]};
    double p[3], ru[3][3], r[3][3], expect[3][3];
    ref_mat_vec(REF_M, pu, p);
    assert_vec3_near(p, pose->position_m[pj], tol, address);
    ref_mat_from_unity_euler_deg(euler_deg, ru);
    ref_stage_bone_rotation_from_unity(ru, r);
    ref_mat_from_quat(pose->rotation[rj], expect);
    assert_rotation_near(r, expect, tol, address);
}

void
vrchat_frame_converts_back_to_the_joints(void **state)
{
    (void)state;
    struct sk_skeleton sk;
    struct sk_pose pose;
    load_humanoid(&sk);
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    struct osc_vrchat_frame f;
    for (uint32_t seed = 1; seed <= POSE_COUNT; ++seed) {
        make_random_pose(&sk, seed, &pose);
        osc_vrchat_frame_build(&sk, &pose, NULL, &f);
        for (int i = 0; i <= OSC_VRCHAT_BODY_TRACKERS; ++i) {
            assert_true(f.tracker[i].present);
            check_vrchat_values_against_pose(&sk, &pose, f.tracker[i].address,
                                             f.tracker[i].position_m, f.tracker[i].euler_deg,
                                             1e-6);
        }
    }
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
}

void
vrchat_head_is_the_headset_when_given(void **state)
{
    (void)state;
    struct sk_skeleton sk;
    struct sk_pose pose;
    load_humanoid(&sk);
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    make_random_pose(&sk, 3, &pose);
    struct em_device_pose headset = {.flags = EM_POSE_ALL_VALID};
    const float axis[3] = {0.6f, 0.8f, 0.0f};
    m_quat_from_axis_angle(axis, 0.7f, headset.pose.orientation);
    m_vec3_set(headset.pose.position_m, 0.2f, 1.62f, -0.4f);

    struct osc_vrchat_frame f;
    osc_vrchat_frame_build(&sk, &pose, &headset, &f);
    const struct osc_vrchat_tracker *h = &f.tracker[OSC_VRCHAT_HEAD];
    assert_true(h->present);
    assert_string_equal(h->address, "/tracking/trackers/head");
    const double pu[3] = {(double)h->position_m[0], (double)h->position_m[1],
                          (double)h->position_m[2]};
    double p[3], ru[3][3], r[3][3], expect[3][3];
    ref_mat_vec(REF_M, pu, p);
    assert_vec3_near(p, headset.pose.position_m, 1e-6, "headset position");
    /* A camera converts by M R M: looking ahead (-Z in STAGE) is Unity's identity. */
    ref_mat_from_unity_euler_deg(h->euler_deg, ru);
    ref_conjugate(REF_M, ru, r);
    ref_mat_from_quat(headset.pose.orientation, expect);
    assert_rotation_near(r, expect, 1e-6, "headset rotation");

    /* A lost headset falls back to the head joint. */
    headset.flags = 0;
    osc_vrchat_frame_build(&sk, &pose, &headset, &f);
    check_vrchat_values_against_pose(&sk, &pose, h->address, h->position_m, h->euler_deg, 1e-6);
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
}

/* ---- Destinations -------------------------------------------------------------------------- */

static void
expect_destination(const char *text, int default_port, const char *host, int port)
{
    char out_host[OSC_HOST_MAX];
    int out_port = -1;
    struct em_error err = {{0}};
    const enum em_result r = osc_parse_destination(text, "--vmc", OSC_DEFAULT_HOST,
                                                   default_port, out_host, &out_port, &err);
    if (r != EM_OK)
        fail_msg("\"%s\" was rejected: %s", text ? text : "(null)", err.message);
    assert_string_equal(out_host, host);
    assert_int_equal(out_port, port);
}

static void
expect_rejected(const char *text, const char *option, const char *message_part)
{
    char out_host[OSC_HOST_MAX];
    int out_port = -1;
    struct em_error err = {{0}};
    const enum em_result r = osc_parse_destination(text, option, OSC_DEFAULT_HOST, 9000,
                                                   out_host, &out_port, &err);
    if (r == EM_OK)
        fail_msg("\"%s\" was accepted as %s:%d", text, out_host, out_port);
    assert_int_equal(r, EM_ERROR_INVALID_ARGUMENT);
    if (strncmp(err.message, option, strlen(option)) != 0 || !strstr(err.message, message_part))
        fail_msg("\"%s\": message \"%s\" should name %s and say \"%s\"", text, err.message,
                 option, message_part);
}

void
destinations_parse_with_defaults(void **state)
{
    (void)state;
    expect_destination(NULL, OSC_VMC_DEFAULT_PORT, "127.0.0.1", 39539);
    expect_destination("", OSC_VMC_DEFAULT_PORT, "127.0.0.1", 39539);
    expect_destination("192.168.1.20:39540", OSC_VMC_DEFAULT_PORT, "192.168.1.20", 39540);
    expect_destination("localhost", OSC_VRCHAT_DEFAULT_PORT, "localhost", 9000);
    expect_destination(":9001", OSC_VRCHAT_DEFAULT_PORT, "127.0.0.1", 9001);
    expect_destination("[::1]:9002", OSC_VRCHAT_DEFAULT_PORT, "::1", 9002);
    expect_destination("::1", OSC_VRCHAT_DEFAULT_PORT, "::1", 9000);
    expect_destination("10.0.0.5:65535", OSC_VRCHAT_DEFAULT_PORT, "10.0.0.5", 65535);
}

void
bad_destinations_are_rejected_naming_the_option(void **state)
{
    (void)state;
    expect_rejected("127.0.0.1:99999", "--vmc", "port \"99999\" is out of range 1-65535");
    expect_rejected("127.0.0.1:0", "--vmc", "port \"0\" is out of range 1-65535");
    expect_rejected("127.0.0.1:123456789012345678901234", "--vmc", "is out of range 1-65535");
    expect_rejected("127.0.0.1:abc", "--vrchat-osc", "port \"abc\" is not a number");
    expect_rejected("127.0.0.1:+90", "--vmc", "port \"+90\" is not a number");
    expect_rejected("127.0.0.1: 90", "--vmc", "is not a number");
    expect_rejected("127.0.0.1:90x", "--vmc", "port \"90x\" is not a number");
    expect_rejected("127.0.0.1:", "--vmc", "no port after ':'");
    expect_rejected(":", "--vmc", "no port after ':'");
    expect_rejected("[::1", "--vmc", "no closing ']'");
    expect_rejected("[::1]9000", "--vmc", "after ']'");
    expect_rejected("[]:9000", "--vmc", "empty host");
    expect_rejected("a:b:c", "--vmc", "more than one ':'");
    expect_rejected("no such host:9000", "--vrchat-osc", "host \"no such host\"");
}

void
sender_rejects_bad_arguments_with_reasons(void **state)
{
    (void)state;
    struct osc_sender *s = (struct osc_sender *)&s; /* must be cleared on failure */
    struct em_error err = {{0}};
    assert_int_equal(osc_sender_create(OSC_PROTOCOL_VMC, "no such host", 9000, &s, &err),
                     EM_ERROR_INVALID_ARGUMENT);
    assert_null(s);
    assert_non_null(strstr(err.message, "no such host"));
    assert_non_null(strstr(err.message, "VMC"));
    assert_int_equal(osc_sender_create(OSC_PROTOCOL_VRCHAT, "127.0.0.1", 70000, &s, &err),
                     EM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "70000"));
    assert_int_equal(osc_sender_create(OSC_PROTOCOL_VRCHAT, "", 9000, &s, &err),
                     EM_ERROR_INVALID_ARGUMENT);
    osc_sender_destroy(&s); /* NULL: nothing to do */
    osc_sender_destroy(NULL);
}
