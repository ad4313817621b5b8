/*
 * The limbs after the solve: the arms (b_arms.c), a shoulder under the floor turned up on
 * its clavicle and on the floor the elbows turned up (the arms built again with the limb
 * builder they share with the legs, b_limb.c), the hands' ends kept above the floor, and
 * the legs built in closed form, kept above the floor, a tracked foot turned as its tracker
 * is.
 *
 * Legs in closed form, without memory. Each frame a leg is built from the hip, the ankle
 * target, the knee pole and the foot's turn alone: the knee from the exact two-bone
 * solution (ik_two_bone_positions), the thigh's frame as the one whose bone points at the
 * knee and whose knee hinge axis is square to the plane of hip, knee and pole (turned about
 * the hip-ankle line as far as the thigh's twist range needs: keep_thigh_twist), the knee
 * bent about its hinge, the foot turned to its target within its limit.
 *
 * Why not the iterative solver or minimal rotations: turning a bone by the shortest arc
 * from where it was keeps whatever twist it had, so a player who turns in place winds
 * the legs up frame after frame; and a leg near full stretch made the iterations stall on
 * one side or the other of the straight pose from frame to frame (knee jitter). A leg
 * that is a function of this frame's targets alone has neither.
 */
#include <string.h>

#include "b_internal.h"
#include "embody/m_math.h"

/* The sole under the ankle joint, as a share of the ankle's standing height: a foot on its
 * instep (kneeling) still has this much under the joint. */
#define FLOOR_SOLE_SHARE 0.5f
/* Builds of a leg to keep its foot above the floor: a pitch, then the ankle raised. */
#define FLOOR_PASSES 8
/* Rounds of the last pitch of toes under the floor (pitch_toes_to_floor). */
#define TOE_PITCH_ROUNDS 3
/* The floor's share (b_floor_share) from which an ankle rises by its toes' depth too. */
#define FLOOR_TOES_RAISE_FROM 0.5f
/* Bisection steps turning a knee that crossed the midline back out. */
#define KNEE_SIDE_STEPS 10
/* The search for a knee side within the thigh's twist (keep_thigh_twist): doublings of
 * the first guess, then halvings toward the range's edge. */
#define THIGH_TWIST_WIDEN_STEPS 3
#define THIGH_TWIST_HALVINGS 8
/* A leg built with its thigh's twist kept in range whose ankle lands further than this
 * from where its two bones reach is built again without the twist's limit: the foot's
 * target first (ankle_thrown_off). The ankle was thrown 0.4 to 0.9 m for a frame, a leg
 * folded to sit on the floor. Lying down, four HDM05 folds summed (MPJPE cm, jitter x the
 * person's; the other kinds unchanged): never 13.95, 9.91; beyond 0.05 or 0.1 m (taken)
 * 13.91, 7.51; beyond 0.2 m 13.91, 7.54. */
#define LEG_THROWN_M 0.1f
/* How fast a knee's side may turn on the floor (keep_knee_swivel_rate). */
#define KNEE_FLOOR_SWIVEL_DEG_S 600.0f
#define KNEE_FLOOR_FULL_SHARE 0.02f
/* ... and with the pelvis sitting on the floor whatever the floor's share says: from this
 * share of its standing height down to the next. */
#define KNEE_LOW_PELVIS_FROM 0.3f
#define KNEE_LOW_PELVIS_FULL 0.15f
/* Each build with the knee under the floor raises its pole this much. */
#define FLOOR_KNEE_POLE_LIFT_M 0.25f
/* An upper arm joint is kept this far above the floor (keep_shoulder_up). Lying down, four
 * HDM05 folds summed (MPJPE cm, lowest joint cm, clips with a joint more than 2 cm under
 * the floor, of 16; head, angle, hands and jitter unchanged; the other kinds, the public
 * clips unchanged): not kept 14.33, -9.6, 6 (a shoulder 3.4 to 9.6 cm under it on four
 * clips, as the torso rolled back onto that side); 1 cm 14.32, -3.6, 3; 3 cm 14.30,
 * -3.6, 3. The three left are hands on their controllers, which the mocap itself has 2 to
 * 4 cm under the floor. */
#define SHOULDER_CLEARANCE_M 0.03f
/* On the floor an elbow is kept this far above it (keep_elbows_up), its side turned
 * up in this many steps at most. */
#define ELBOW_CLEARANCE_M 0.03f
#define ELBOW_LIFT_STEPS 6

/* The direction the knee goes out from the hip-ankle `line` (unit): toward the pole, or,
 * as the pole comes near the line (a leg reaching toward it: a kick, a deep crouch with
 * the hips behind the feet), up, blended so the knee never flips. */
static void
knee_side(const float *bend, const float *line, float *out)
{
    float to_pole[3], up[3];
    m_vec3_muladd(bend, line, -m_vec3_dot(bend, line), to_pole);
    const float off = m_vec3_length(to_pole) / fmaxf(m_vec3_length(bend), 1e-6f);
    const float world_up[3] = {0, 1, 0};
    m_vec3_muladd(world_up, line, -m_vec3_dot(world_up, line), up);
    m_vec3_normalize_or(up, world_up, up);
    m_vec3_normalize_or(to_pole, up, to_pole);
    /* Off the line by more than sin(25 deg): the pole alone; under sin(10 deg): up. */
    const float w = m_smoothstep(0.17f, 0.42f, off);
    m_vec3_lerp(up, to_pole, w, out);
    m_vec3_normalize_or(out, to_pole, out);
}

/* How far `point` is to leg s's own side of the body's midline (the vertical plane through
 * the hips square to the line between the hip joints), m; negative: across it. */
static float
own_side_m(const struct body *b, int s, const float *point)
{
    const struct sk_pose *pose = &b->pose;
    float across[3], d[3];
    m_vec3_sub(pose->position_m[b->j.upper_leg[0]], pose->position_m[b->j.upper_leg[1]], across);
    across[1] = 0.0f;
    const float len = m_vec3_length(across);
    if (len < 1e-6f)
        return 0.0f;
    m_vec3_sub(point, pose->position_m[b->j.hips], d);
    return (s == 0 ? 1.0f : -1.0f) * m_vec3_dot(d, across) / len;
}

/* A knee does not cross the body's midline unless its foot does (knees turned in past each
 * other): its side is turned outward, by bisection on the share of the outward direction,
 * until the knee is on the midline. */
static void
keep_knee_on_its_side(const struct body *b, int s, const float *upper_m, float upper_len,
                      float lower_len, const float *end_target, const float *line, float *io_side,
                      float *io_mid_m, float *io_end_m)
{
    if (own_side_m(b, s, io_mid_m) >= 0.0f || own_side_m(b, s, end_target) < 0.0f)
        return;
    const struct sk_pose *pose = &b->pose;
    float out[3];
    m_vec3_sub(pose->position_m[b->j.upper_leg[s]], pose->position_m[b->j.upper_leg[1 - s]], out);
    out[1] = 0.0f;
    m_vec3_muladd(out, line, -m_vec3_dot(out, line), out);
    if (m_vec3_length(out) < 1e-6f)
        return;
    m_vec3_normalize_or(out, io_side, out);
    float lo = 0.0f, hi = 1.0f, side[3], mid[3], end[3];
    for (int i = 0; i < KNEE_SIDE_STEPS; ++i) {
        const float t = 0.5f * (lo + hi);
        m_vec3_lerp(io_side, out, t, side);
        m_vec3_normalize_or(side, out, side);
        ik_two_bone_positions(upper_m, upper_len, lower_len, end_target, side, mid, end);
        if (own_side_m(b, s, mid) < 0.0f)
            lo = t;
        else
            hi = t;
    }
    m_vec3_lerp(io_side, out, hi, side);
    m_vec3_normalize_or(side, out, io_side);
    ik_two_bone_positions(upper_m, upper_len, lower_len, end_target, io_side, io_mid_m, io_end_m);
}

/* The world frames of joint `top` (its rotation: its position hangs on its parent alone)
 * and of every joint below it from their local rotations, the rest of the pose left as it
 * is: between the builds below only one leg changes, and these are the operations
 * sk_pose_forward_kinematics does for those joints (so the same values), over a leg's
 * handful of joints instead of the whole skeleton. */
static void
forward_kinematics_from(struct body *b, int top)
{
    const int parent = b->skeleton.parent[top];
    m_quat_mul(b->pose.rotation[parent], b->pose.local_rotation[top], b->pose.rotation[top]);
    sk_pose_forward_kinematics_below(&b->pose, &b->skeleton, top);
}

/* `rotation` (a joint's world rotation) turned about `pivot_m` so that the point at `offset`
 * from it (`length` its length, 0 for none) comes up to height `to_y`, into out_world (not
 * renormalised); the sine of that point's slope at most `max_sin` (0: level). The turn is
 * about the level square to the offset: a pitch, the heading kept. False when no such turn
 * lifts it (already there, or the offset vertical or none). */
static bool
turned_up_to(const float *pivot_m, const float *offset, float length, float to_y, float max_sin,
             const float *rotation, float *out_world)
{
    const float up[3] = {0, 1, 0};
    float axis[3];
    m_vec3_cross(offset, up, axis);
    const float axis_len = m_vec3_length(axis);
    if (length <= 1e-4f || axis_len <= 1e-4f)
        return false;
    const float now = asinf(m_clampf(offset[1] / length, -1.0f, 1.0f));
    const float want = asinf(m_clampf((to_y - pivot_m[1]) / length, -1.0f, max_sin));
    if (!(want > now))
        return false;
    float turn[4];
    m_vec3_scale(axis, 1.0f / axis_len, axis);
    m_quat_from_axis_angle(axis, want - now, turn);
    m_quat_mul(turn, rotation, out_world);
    return true;
}

/* Joint j's local rotation for the world rotation `world` under its parent as posed
 * (renormalised); its world frame and those below are left for forward_kinematics_from. */
static void
set_local_from_world(struct body *b, int j, const float *world)
{
    float parent_inv[4];
    m_quat_conjugate(b->pose.rotation[b->skeleton.parent[j]], parent_inv);
    m_quat_mul(parent_inv, world, b->pose.local_rotation[j]);
    m_quat_normalize(b->pose.local_rotation[j]);
}

/* ---- the shoulders and elbows on the floor -------------------------------------- */

/* Arm s's elbow side: the elbow's offset from the shoulder-hand line, square to it (up when
 * the elbow is on the line). */
static void
elbow_side_now(const struct body *b, int s, float *out_side)
{
    const float *shoulder = b->pose.position_m[b->j.upper_arm[s]];
    const float up[3] = {0, 1, 0};
    float line[3];
    m_vec3_sub(b->hand_position_m[s], shoulder, line);
    m_vec3_normalize_or(line, up, line);
    m_vec3_sub(b->pose.position_m[b->j.lower_arm[s]], shoulder, out_side);
    m_vec3_muladd(out_side, line, -m_vec3_dot(out_side, line), out_side);
    m_vec3_normalize_or(out_side, up, out_side);
}

/* An upper arm joint under the floor (the clavicle turned down toward a hand on the floor
 * beside a torso rolled onto that side) has its clavicle turned up about the shoulder
 * joint, within its limit, until the joint clears the floor by SHOULDER_CLEARANCE_M, and
 * the arm is built again on it (its elbow on the side it had, the hand on its target).
 * Expects the pose's world frames up to date and leaves them so. */
static void
keep_shoulder_up(struct body *b, int s)
{
    struct sk_pose *pose = &b->pose;
    const int clavicle = b->j.shoulder[s], upper = b->j.upper_arm[s];
    const float clear = b->ground_height_m + SHOULDER_CLEARANCE_M;
    if (clavicle < 0 || pose->position_m[upper][1] >= clear)
        return;
    const float *root = pose->position_m[clavicle];
    float bone[3], world[4], rest_dir[3];
    m_vec3_sub(pose->position_m[upper], root, bone);
    if (!turned_up_to(root, bone, m_vec3_length(bone), clear, 1.0f, pose->rotation[clavicle],
                      world))
        return;
    float side[3];
    elbow_side_now(b, s, side);
    set_local_from_world(b, clavicle, world);
    const float out[3] = {s == 0 ? 1.0f : -1.0f, 0, 0};
    m_vec3_normalize_or(b->skeleton.offset_m[upper], out, rest_dir);
    ik_limit_apply(&b->skeleton.limit[clavicle], rest_dir, pose->local_rotation[clavicle]);
    forward_kinematics_from(b, clavicle);
    b_limb_build(b, upper, b->hand_position_m[s], b->hand_rotation[s], side, false);
    sk_pose_forward_kinematics_below(pose, &b->skeleton, clavicle);
}

/* Both shoulders (keep_shoulder_up), for a chest low enough that one can reach the floor
 * (within the rest distance from the chest to the upper arm joint: the others cost
 * nothing). */
static void
keep_shoulders_up(struct body *b)
{
    const float reach = m_vec3_length(b->m.shoulder_offset_m[0]);
    if (b->pose.position_m[b->j.chest][1] - b->ground_height_m > reach + SHOULDER_CLEARANCE_M)
        return;
    sk_pose_forward_kinematics(&b->pose, &b->skeleton);
    for (int s = 0; s < 2; ++s)
        keep_shoulder_up(b, s);
}

/* ---- the elbows on the floor --------------------------------------------------- */

/* On the floor (by its share), after the arms are built: an elbow under it is built again
 * with its side turned up until it clears the floor (the hand stays on its target). */
static void
keep_elbows_up(struct body *b)
{
    if (b->floor.share <= 0.0f)
        return;
    sk_pose_forward_kinematics(&b->pose, &b->skeleton);
    const float clear = b->ground_height_m + ELBOW_CLEARANCE_M;
    for (int s = 0; s < 2; ++s) {
        const float *elbow = b->pose.position_m[b->j.lower_arm[s]];
        if (elbow[1] >= clear)
            continue;
        /* The elbow's side of the shoulder-hand line, turned up until it clears the floor
         * (an arm lying on the floor bends up, not through it). */
        const float *shoulder = b->pose.position_m[b->j.upper_arm[s]];
        const float up[3] = {0, 1, 0};
        float line[3], side[3];
        m_vec3_sub(b->hand_position_m[s], shoulder, line);
        m_vec3_normalize_or(line, up, line);
        m_vec3_sub(elbow, shoulder, side);
        m_vec3_muladd(side, line, -m_vec3_dot(side, line), side);
        m_vec3_normalize_or(side, up, side);
        for (int k = 1; k <= ELBOW_LIFT_STEPS; ++k) {
            float turned[3];
            m_vec3_lerp(side, up, (float)k / ELBOW_LIFT_STEPS, turned);
            b_limb_build(b, b->j.upper_arm[s], b->hand_position_m[s], b->hand_rotation[s],
                         turned, false);
            sk_pose_forward_kinematics(&b->pose, &b->skeleton);
            if (b->pose.position_m[b->j.lower_arm[s]][1] >= clear)
                break;
        }
    }
}

/* ---- the hands over the floor -------------------------------------------------- */

/* A hand's end (the fingertips) kept this far above the floor. */
#define HAND_END_CLEARANCE_M 0.005f

/* A hand whose end would go under the floor (a controller held low, turned down: the
 * fingers of a hand resting on the floor went through it on 281 frames of the folds'
 * lying down, 2 to 8 cm; none now) is pitched up about its joint, which stays on its
 * controller, until the end rests on the floor. The hand's turn is the controller's but
 * for that pitch: a hand pressed on the floor lies flat on it. Expects the arm's local
 * rotations set and the world frames of the joints above the hand up to date; leaves the
 * hand's and its children's world frames so. */
static void
keep_hand_end_up(struct body *b, int s)
{
    const int hand = b->j.hand[s], end = b->j.hand_end[s];
    struct sk_pose *pose = &b->pose;
    const float clear = b->ground_height_m + HAND_END_CLEARANCE_M;
    if (pose->position_m[end][1] >= clear)
        return;
    const float *at = pose->position_m[hand];
    float reach[3], world[4];
    m_vec3_sub(pose->position_m[end], at, reach);
    if (!turned_up_to(at, reach, m_vec3_length(reach), clear, 1.0f, pose->rotation[hand], world))
        return;
    set_local_from_world(b, hand, world);
    forward_kinematics_from(b, hand);
}

/* Both hands' ends kept above the floor (keep_hand_end_up), for a hand whose target is
 * within its length of the floor (the only ones that can reach it: the others cost
 * nothing). */
static void
keep_hand_ends_up(struct body *b)
{
    bool updated = false;
    for (int s = 0; s < 2; ++s) {
        if (b->j.hand_end[s] < 0 ||
            b->hand_position_m[s][1] - b->ground_height_m > b->m.palm_m + HAND_END_CLEARANCE_M)
            continue;
        if (!updated)
            sk_pose_forward_kinematics(&b->pose, &b->skeleton);
        updated = true;
        keep_hand_end_up(b, s);
    }
}

/* ---- legs -------------------------------------------------------------------------- */

/* The thigh's twist excess with the knee's side turned by `angle` about the hip-ankle
 * `line` (the thigh alone built so). */
static float
thigh_excess(struct body *b, int upper, const float *ankle_target, const float *line,
             const float *side, float angle)
{
    float turned[3];
    b_limb_swivel(line, side, angle, turned);
    b_limb_turn_upper(b, upper, ankle_target, turned);
    return b_limb_twist_excess(b, upper);
}

/* A knee whose side asks the thigh for more twist than it has is turned about the
 * hip-ankle line to the nearest side its twist allows, the foot still on its target:
 * clamped in the build instead, the knee bent in a plane the target is not in and the
 * foot ended up to 0.5 m from it, jumping there and back as the twist asked went over and
 * under what the floor passes could mend (a leg folding to sit on the floor,
 * hdm05_bd_lieDownFloor_004, fold 1). The turn is found by doubling a first guess (the
 * excess, back) until the twist is within range, then halving toward the edge. */
static bool
keep_thigh_twist(struct body *b, int upper, const float *ankle_target, const float *line,
                 float *io_side)
{
    const float excess = thigh_excess(b, upper, ankle_target, line, io_side, 0.0f);
    if (excess == 0.0f)
        return false;
    float out = -excess, in = 0.0f;
    bool found = false;
    for (int i = 0; i < THIGH_TWIST_WIDEN_STEPS && !found; ++i) {
        const float e = thigh_excess(b, upper, ankle_target, line, io_side, out);
        if (e == 0.0f || (e > 0.0f) != (excess > 0.0f))
            found = true;
        else
            out = m_clampf(2.0f * out, -M_PI_F, M_PI_F);
    }
    if (!found)
        return false;
    for (int i = 0; i < THIGH_TWIST_HALVINGS; ++i) {
        const float mid = 0.5f * (in + out);
        const float e = thigh_excess(b, upper, ankle_target, line, io_side, mid);
        if (e == 0.0f || (e > 0.0f) != (excess > 0.0f))
            out = mid;
        else
            in = mid;
    }
    float turned[3];
    b_limb_swivel(line, io_side, out, turned);
    m_vec3_copy(turned, io_side);
    return true;
}

/* On the floor, the knee's side turns about the hip-ankle line no faster than
 * KNEE_FLOOR_SWIVEL_DEG_S from the last frame's (the bound eased in as the floor's share
 * rises to KNEE_FLOOR_FULL_SHARE, so nothing held back is let go in one frame as the body
 * leaves the floor): returns whether it held `io_side` back. Lying and getting up, the
 * side the sources and the thigh's twist give swung the knee across in a frame (the knees
 * carried 45 % of lying down's jitter, 18 to 24x the person's on them). The person's own
 * knees swivel up to 12 degrees a frame at 60 Hz (99.9th percentile, bent more than 8 cm;
 * 25 at most): 600 deg/s is 10 a frame. Lying down, four HDM05 folds summed (MPJPE cm,
 * jitter x the person's, clips over 3x of 16; the other kinds unchanged):
 *   unbounded (before)                          13.94  5.97  15
 *   600 deg/s, full from a share of 0.02 (taken) 13.93  5.15  13
 *   the same, full from 0.1; at any share > 0   13.94  5.35;  13.93  4.96
 *   divided by the share (none at 0)            13.94  5.68
 *   from the knee as carried, 1200 / 600 / 300  5.59 / 5.10 / 5.07
 * On every body and off the floor too it shook the public clips' procedural body (jitter
 * 417 -> 509 m/s^3); the folds and the public clips are unchanged as taken. A pelvis
 * sitting on the floor holds the bound too, at whatever floor share: a person sitting on
 * the floor looking down at the feet reads as kneeling forward (share 0), and a knee took
 * one of two places 30 cm apart frame by frame (hdm05_bk_lieDownFloor_005, fold 2). Lying
 * down 3.30 -> 3.20x (the same from 0.3, 0.5 or 0.7 of the standing height; MPJPE, the
 * other kinds and the public clips unchanged). */
static bool
keep_knee_swivel_rate(struct body *b, int s, const float *line, float *io_side)
{
    const float dt_s = b_step_s(b, &b->knee_time_s[s]);
    float last[3];
    m_vec3_copy(b->knee_side[s], last);
    m_vec3_copy(io_side, b->knee_side[s]);
    const float low =
        m_smoothstep(KNEE_LOW_PELVIS_FROM, KNEE_LOW_PELVIS_FULL, b_hips_height_share(b));
    const float share = fmaxf(b_floor_share(b), low);
    const float last_off_line = m_vec3_length(last) * m_vec3_length(last) -
                                m_vec3_dot(last, line) * m_vec3_dot(last, line);
    if (!(dt_s > 0.0f) || !(share > 0.0f) || last_off_line < 0.25f)
        return false;
    const float angle = b_limb_angle_about(line, io_side, last);
    const float max_step =
        KNEE_FLOOR_SWIVEL_DEG_S * M_DEG_TO_RAD * dt_s / m_smoothstep(0.0f, KNEE_FLOOR_FULL_SHARE, share);
    if (fabsf(angle) <= max_step)
        return false;
    float turned[3];
    b_limb_swivel(line, io_side, angle > 0.0f ? angle - max_step : angle + max_step, turned);
    m_vec3_copy(turned, io_side);
    m_vec3_copy(turned, b->knee_side[s]);
    return true;
}

/* Whether the leg under `upper`, as built, has its ankle more than LEG_THROWN_M from
 * where the two bones put it (`end_m`): the thigh's twist clamped in the build when
 * keep_thigh_twist found no side within range, the knee folded past its hinge in a plane
 * the target is not in. (Brings the pose's world frames below the hip up to date.) */
static bool
ankle_thrown_off(struct body *b, int upper, const float *end_m)
{
    forward_kinematics_from(b, upper);
    const int ankle = b->skeleton.primary_child[b->skeleton.primary_child[upper]];
    return m_vec3_distance(b->pose.position_m[ankle], end_m) > LEG_THROWN_M;
}

/* Leg s built toward its ankle target, the knee out toward `pole` from the line to the
 * target but never across the body's midline unless the foot is, and (`within_twist`)
 * turned from there as far as the thigh's twist range needs (keep_thigh_twist). Without
 * `within_twist` (a floor pass that found the knee under the floor and raised its pole)
 * the knee goes where the pole says and the twist is not clamped: the floor and the foot's
 * target first, the twist range for those frames last. Clamped, the foot was thrown off its
 * target (up to 0.9 m, by a twist asked far past the range) and back within a frame or two.
 * Four HDM05 folds summed, lying down (MPJPE cm, jitter x the person's) and the public
 * procedural rows (known / height only MPJPE cm, jitter m/s^3; the rows with the prior and
 * the other transitions unchanged): clamped 14.30, 11.37x; 13.37 / 13.46, 516.9 / 490.6;
 * not clamped 14.25, 10.42x; 13.32 / 13.44, 433.6 / 406.7. */
static void
build_leg(struct body *b, int s, const float *ankle_target, const float *foot_rotation,
          const float *pole, bool within_twist)
{
    const struct sk_skeleton *sk = &b->skeleton;
    const int upper = b->j.upper_leg[s], mid = sk->primary_child[upper];
    const int end = sk->primary_child[mid];
    const float *hip = b->pose.position_m[upper];
    float bend[3], line[3], side[3], mid_m[3], end_m[3];
    m_vec3_sub(pole, hip, bend);
    m_vec3_sub(ankle_target, hip, line);
    m_vec3_normalize_or(line, bend, line);
    knee_side(bend, line, side);
    ik_two_bone_positions(hip, sk->length_m[mid], sk->length_m[end], ankle_target, side, mid_m,
                          end_m);
    keep_knee_on_its_side(b, s, hip, sk->length_m[mid], sk->length_m[end], ankle_target, line,
                          side, mid_m, end_m);
    if (within_twist) {
        const bool twisted = keep_thigh_twist(b, upper, ankle_target, line, side);
        const bool held = keep_knee_swivel_rate(b, s, line, side);
        if (twisted || held) /* the knee again for the side turned */
            ik_two_bone_positions(hip, sk->length_m[mid], sk->length_m[end], ankle_target, side,
                                  mid_m, end_m);
    }
    /* b_limb_build, given the knee and ankle just found for this side (the same call);
     * in a floor pass that lifts the knee, without the twist clamp (below). */
    b_limb_build_through(b, upper, ankle_target, foot_rotation, side, within_twist, mid_m,
                         end_m);
    if (within_twist && ankle_thrown_off(b, upper, end_m))
        b_limb_build_through(b, upper, ankle_target, foot_rotation, side, false, mid_m, end_m);
}

/* The lowest point of foot s as built (the ankle less a sole, the toes and their end) and
 * how far the farthest of toes and toe end is from the ankle, with its direction. */
static float
foot_lowest(const struct body *b, int s, float *out_reach_dir, float *out_reach_m)
{
    const struct sk_pose *pose = &b->pose;
    const float *ankle = pose->position_m[b->j.foot[s]];
    float lowest = ankle[1] - FLOOR_SOLE_SHARE * b->m.ankle_height_m;
    *out_reach_m = 0.0f;
    for (int j = b->j.foot[s] + 1; j < pose->joint_count; ++j) {
        const int parent = b->skeleton.parent[j];
        if (parent != b->j.foot[s] && (parent != b->j.toes[s] || b->j.toes[s] < 0))
            continue;
        lowest = fminf(lowest, pose->position_m[j][1]);
        float v[3];
        m_vec3_sub(pose->position_m[j], ankle, v);
        const float len = m_vec3_length(v);
        if (len > *out_reach_m) {
            *out_reach_m = len;
            m_vec3_copy(v, out_reach_dir);
        }
    }
    return lowest;
}

/* The lowest of foot s's toe joints (the toes and their end) as built, and its offset from
 * the ankle as a direction and a distance; the ankle's own height when it has none. */
static float
lowest_toe(const struct body *b, int s, float *out_dir, float *out_dist_m)
{
    const struct sk_pose *pose = &b->pose;
    const float *ankle = pose->position_m[b->j.foot[s]];
    float lowest = ankle[1];
    *out_dist_m = 0.0f;
    for (int j = b->j.foot[s] + 1; j < pose->joint_count; ++j) {
        const int parent = b->skeleton.parent[j];
        if (parent != b->j.foot[s] && (parent != b->j.toes[s] || b->j.toes[s] < 0))
            continue;
        if (pose->position_m[j][1] < lowest) {
            lowest = pose->position_m[j][1];
            m_vec3_sub(pose->position_m[j], ankle, out_dir);
            *out_dist_m = m_vec3_length(out_dir);
        }
    }
    return lowest;
}

/* Foot s's world rotation turned about its ankle so that its point at `reach_dir` (`reach_m`
 * from the ankle) comes up to the floor (turned_up_to), into out_world. */
static bool
foot_pitched_to_floor(const struct body *b, int s, const float *reach_dir, float reach_m,
                      float max_sin, float *out_world)
{
    const int foot = b->j.foot[s];
    return turned_up_to(b->pose.position_m[foot], reach_dir, reach_m, b->desc.floor_height_m,
                        max_sin, b->pose.rotation[foot], out_world);
}

/* The last resort when raising the ankle did not lift the toes (a leg folded under a body
 * getting up from the floor, whose ankle target is out of its reach upward): the foot
 * pitched about its ankle until its lowest point is on the floor, beyond the foot's limit
 * if it must (for the frames of such a move, rather than toes through the floor). */
static void
pitch_toes_to_floor(struct body *b, int s)
{
    /* Each round lifts the lowest point of the toes to the floor; another (the toes joint
     * below the line to the toe end) may then be the lowest, a few millimetres under. */
    for (int round = 0; round < TOE_PITCH_ROUNDS; ++round) {
        float dir[3] = {0, 0, 1}, dist, world[4];
        if (b->desc.floor_height_m - lowest_toe(b, s, dir, &dist) <= 0.0f ||
            !foot_pitched_to_floor(b, s, dir, dist, 1.0f, world))
            return;
        set_local_from_world(b, b->j.foot[s], world);
        forward_kinematics_from(b, b->j.foot[s]);
    }
}

/* Whether a build of leg s toward these targets is the one it last had: then it gives the
 * pose the leg has, to the bit, and so would every pass after it. */
static bool
same_build(const float *target, const float *rotation, const float *pole, const float *last_target,
           const float *last_rotation, const float *last_pole)
{
    return memcmp(target, last_target, 3 * sizeof *target) == 0 &&
           memcmp(rotation, last_rotation, 4 * sizeof *rotation) == 0 &&
           memcmp(pole, last_pole, 3 * sizeof *pole) == 0;
}

/* How far the sole under foot s's ankle as built is under the floor (<= 0: not under it). */
static float
sole_depth(const struct body *b, int s)
{
    const float sole = b->pose.position_m[b->j.foot[s]][1] - FLOOR_SOLE_SHARE * b->m.ankle_height_m;
    return b->desc.floor_height_m - sole;
}

/* How far leg s's foot (its lowest part, foot_lowest's reach out) and knee are under the
 * floor (<= 0: not under it). */
static void
leg_depths(const struct body *b, int s, float *out_reach_dir, float *out_reach_m,
           float *out_foot_m, float *out_knee_m)
{
    const float floor_y = b->desc.floor_height_m;
    *out_foot_m = floor_y - foot_lowest(b, s, out_reach_dir, out_reach_m);
    *out_knee_m = floor_y - b->pose.position_m[b->j.lower_leg[s]][1];
}

/* No part of a foot under the floor (a kneeling player's toes went 16 cm through it): a
 * foot whose toes would go under is pitched up about its ankle just enough, within its
 * limit; a leg whose ankle's own sole is under the floor has its ankle target raised by
 * that much; a knee under the floor has its pole raised; the leg is then built again.
 * Toes the foot's limit still keeps under are pitched up beyond it at the end
 * (pitch_toes_to_floor), not lifted by raising the ankle: a squat's shin leans further
 * than the ankle bends within its limit, and raising the ankle by the toes' depth lifted
 * the heel by an amount that changed with the lean every frame (HDM05's people left out,
 * the transitions through v8's fold models, jitter over the person's: squats 9.0x -> 1.8x,
 * clips over 3x 8 -> 1 of 40; deposits 4.7x -> 2.5x; no joint under the floor either way).
 * On the floor (FLOOR_TOES_RAISE_FROM) the ankle still rises by the toes' depth: lying on
 * the front, the shins and toes carry the legs (a knee went 1.1 cm under without it).
 * Expects the pose's world frames up to date and leaves them so.
 *
 * A foot resting on the floor often ends a hair under it (the depth a float's rounding
 * leaves, 1e-9 m) with nothing left to change: the passes after a build that repeats the
 * last one are skipped, as they would repeat it too (on 4 % of the evaluation's frames a
 * leg took all the passes, most of them such repeats). */
static void
keep_foot_above_floor(struct body *b, int s, const float *ankle_target, const float *foot_rotation,
                      const float *knee_pole)
{
    float target[3], rotation[4], pole[3];
    m_vec3_copy(ankle_target, target);
    m_quat_copy(foot_rotation, rotation);
    m_vec3_copy(knee_pole, pole);
    float built_target[3], built_rotation[4], built_pole[3];
    bool built = false; /* by a pass (the first build, in build_legs, was before the
                         * pose's world frames were brought up to date) */
    /* The build that went least under the floor so far (the first: build_legs's). */
    float best_target[3], best_rotation[4], best_pole[3], best_depth = INFINITY;
    bool within_twist = true, built_within_twist = true, best_within_twist = true;
    for (int pass = 0; pass < FLOOR_PASSES; ++pass) {
        float reach_dir[3] = {0, 0, 1}, reach_m, depth, knee_depth;
        leg_depths(b, s, reach_dir, &reach_m, &depth, &knee_depth);
        if (depth <= 0.0f && knee_depth <= 0.0f)
            return;
        if (fmaxf(depth, knee_depth) < best_depth) {
            best_depth = fmaxf(depth, knee_depth);
            m_vec3_copy(built ? built_target : ankle_target, best_target);
            m_quat_copy(built ? built_rotation : foot_rotation, best_rotation);
            m_vec3_copy(built ? built_pole : knee_pole, best_pole);
            best_within_twist = built_within_twist;
        }
        if (knee_depth > 0.0f) /* a knee through the floor: its plane turns up */
            pole[1] += FLOOR_KNEE_POLE_LIFT_M;
        if (depth > 0.0f) {
            float world[4];
            if (foot_pitched_to_floor(b, s, reach_dir, reach_m, 0.0f, world)) {
                m_quat_normalize(world);
                m_quat_copy(world, rotation);
            }
        }
        /* What the pitch did not lift: the ankle rises by its own sole's depth, and by the
         * toes' as far as the body is on the floor (lying on the front, the shins and toes
         * carry the legs). */
        if (pass > 0 && depth > 0.0f)
            target[1] += m_lerpf(fmaxf(0.0f, sole_depth(b, s)), depth,
                                 m_smoothstep(FLOOR_TOES_RAISE_FROM, 1.0f, b_floor_share(b)));
        if (knee_depth > 0.0f)
            within_twist = false; /* the floor first: see build_leg */
        if (built && within_twist == built_within_twist &&
            same_build(target, rotation, pole, built_target, built_rotation, built_pole))
            break;
        build_leg(b, s, target, rotation, pole, within_twist);
        built_within_twist = within_twist;
        forward_kinematics_from(b, b->j.upper_leg[s]);
        m_vec3_copy(target, built_target);
        m_quat_copy(rotation, built_rotation);
        m_vec3_copy(pole, built_pole);
        built = true;
    }
    /* The passes can overshoot (an ankle raised toward the hip folds the foot under):
     * the last build stands only if it is no deeper than the best one. */
    float reach_dir[3] = {0, 0, 1}, reach_m, depth, knee_depth;
    leg_depths(b, s, reach_dir, &reach_m, &depth, &knee_depth);
    if (fmaxf(depth, knee_depth) > best_depth) {
        build_leg(b, s, best_target, best_rotation, best_pole, best_within_twist);
        forward_kinematics_from(b, b->j.upper_leg[s]);
    }
    pitch_toes_to_floor(b, s);
}

/* A tracked foot turns as its tracker does, even beyond the avatar's ankle limits: the
 * limits are a guess at a body, the tracker is a measurement (a shin's twist the knee's
 * hinge cannot take ends up in the ankle). The toes follow rigidly. */
static void
turn_tracked_feet(struct body *b)
{
    const struct b_trackers *T = &b->trackers;
    struct sk_pose *pose = &b->pose;
    const struct sk_skeleton *sk = &b->skeleton;
    for (int s = 0; s < 2; ++s) {
        const int t = EM_TRACKER_LEFT_FOOT + s;
        const float w = T->weight[t];
        if (w <= 0.0f)
            continue;
        const int foot = b->j.foot[s];
        float *rot = pose->rotation[foot];
        m_quat_slerp(rot, T->bone_rotation[t], w, rot);
        m_quat_normalize(rot);
        m_quat_mul_conj_first(pose->rotation[sk->parent[foot]], rot, pose->local_rotation[foot]);
        sk_pose_forward_kinematics_below(pose, sk, foot); /* its toes and their end */
    }
}

/* Both legs built toward their targets, then the pose's world frames; a foot under the
 * floor lifted, a tracked foot turned as its tracker is. */
static void
build_legs(struct body *b, const float (*ankle_target)[3], const float (*foot_rotation)[4],
           const float (*knee_pole)[3])
{
    for (int s = 0; s < 2; ++s) {
        /* Below the foot (toes) stays at rest: no target says otherwise. */
        for (int j = b->j.foot[s] + 1; j < b->pose.joint_count; ++j)
            if (b->skeleton.parent[j] == b->j.foot[s] || b->skeleton.parent[j] == b->j.toes[s])
                m_quat_identity(b->pose.local_rotation[j]);
        build_leg(b, s, ankle_target[s], foot_rotation[s], knee_pole[s], true);
    }
    sk_pose_forward_kinematics(&b->pose, &b->skeleton);
    for (int s = 0; s < 2; ++s)
        if (b->trackers.weight[EM_TRACKER_LEFT_FOOT + s] <= 0.0f && /* a foot tracker knows */
            !(b->desc.stages_off & BODY_STAGE_FLOOR))
            keep_foot_above_floor(b, s, ankle_target[s], foot_rotation[s], knee_pole[s]);
    turn_tracked_feet(b);
}

void
b_limbs_build(struct body *b, const struct b_leg_targets *legs)
{
    b_arms_solve(b);
    keep_shoulders_up(b);
    keep_elbows_up(b);
    keep_hand_ends_up(b);
    build_legs(b, (const float(*)[3])legs->ankle_m, (const float(*)[4])legs->foot_rotation,
               (const float(*)[3])legs->knee_pole_m);
    b_arms_finish(b); /* wants the world frames build_legs brought up to date */
}
