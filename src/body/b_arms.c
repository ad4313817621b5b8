/*
 * The arms, and where elbows point. An elbow is predicted from how the hand is held (the
 * forearm leaves the wrist along the hand's own axis when the wrist is straight), blended
 * with an anatomical default (down, back and out from the shoulder). (A knee's pole, the
 * poles' blend and the limb builder the arms use are the limbs', b_limbs.c.)
 *
 * The solver does not move the arms (it solves the torso). Before it, each clavicle rises
 * toward a hand out of the arm's reach and the shoulder asks the torso for what the arm
 * still lacks (an effector pulled toward where the arm reaches, switched off while the
 * hand is within reach); after it, the clavicles are drawn again from the solved chest
 * toward such a hand, or to where an elbow tracker says; then each arm is the
 * exact two-bone answer from the solved shoulder (b_limb_build), its elbow out toward its
 * pole with a swivel continuous in the inputs, turned to the nearest side that keeps the
 * upper arm's twist within range. Finally the forearm takes half of the hand's twist
 * (pronation), so a skinned forearm turns along its length instead of at the wrist alone.
 */
#include <stddef.h>

#include "b_internal.h"
#include "embody/m_math.h"


/* How much the hand's orientation decides the elbow, against the anatomical default. */
#define HAND_CUE_WEIGHT 0.8f

/* The anatomical default of the left elbow from the shoulder, in the heading's frame
 * (down, back and out; the right one mirrors it). */
static const float k_elbow_default_m[3] = {0.25f, -0.45f, -0.2f};

static void
elbow_default(const struct body *b, int side, float *out_m)
{
    float yaw_rot[4];
    const float local[3] = {side == 0 ? k_elbow_default_m[0] : -k_elbow_default_m[0],
                            k_elbow_default_m[1], k_elbow_default_m[2]};
    b_quat_from_yaw(b->heading_rad, yaw_rot);
    m_quat_rotate(yaw_rot, local, out_m);
}

void
b_arm_pole(const struct body *b, int side, float *out_pole_m)
{
    const struct sk_skeleton *sk = &b->skeleton;
    float forearm[3], from_hand[3];
    /* The wrist's rest offset from the elbow, turned as the hand is turned. */
    m_quat_rotate(b->hand_rotation[side], sk->offset_m[b->j.hand[side]], forearm);
    m_vec3_sub(b->hand_position_m[side], forearm, from_hand);
    float anatomical[3];
    elbow_default(b, side, anatomical);
    m_vec3_add(b->pose.position_m[b->j.upper_arm[side]], anatomical, anatomical);
    m_vec3_lerp(anatomical, from_hand, HAND_CUE_WEIGHT, out_pole_m);
}

/* The unit part of `v` square to unit `line`, and how far off the line `v` points (the
 * sine of its angle from it; 0 for a zero `v`). */
static float
square_to_line(const float *v, const float *line, float *out)
{
    float p[3];
    m_vec3_muladd(v, line, -m_vec3_dot(v, line), p);
    const float length = m_vec3_length(v);
    const float off = length > 1e-9f ? m_vec3_length(p) / length : 0.0f;
    m_vec3_normalize_or(p, line, out);
    return off;
}

/* 0 while a direction is within asin(0.17) (10 degrees) of the line, 1 beyond asin(0.42)
 * (25 degrees), smooth between: how much a cue of that direction may decide a side. */
static float
off_line_weight(float off)
{
    return m_smoothstep(0.17f, 0.42f, off);
}

/* The side the elbow goes out to from the shoulder-hand `line` (unit): toward the pole,
 * or, as the pole comes near the line, toward the anatomical default (down, back and
 * out), or, near the line too, toward the back. Every cue fades out before it
 * degenerates, so the side is a continuous function of the pole, the line and the
 * heading (a field of sides over all lines must vanish somewhere: here only where the
 * three cues all fail at once, an arm straight down-back-out with the hand's own axis
 * along it). */
static void
elbow_side(const struct body *b, int side, const float *pole_m, const float *line,
           float *out)
{
    const float *shoulder = b->pose.position_m[b->j.upper_arm[side]];
    float yaw_rot[4], to_pole[3], cue[3], anatomical[3], back[3];
    const float local_back[3] = {0, 0, -1};
    m_vec3_sub(pole_m, shoulder, to_pole);
    const float w_pole = off_line_weight(square_to_line(to_pole, line, to_pole));
    elbow_default(b, side, cue);
    const float w_anatomical = off_line_weight(square_to_line(cue, line, anatomical));
    b_quat_from_yaw(b->heading_rad, yaw_rot);
    m_quat_rotate(yaw_rot, local_back, cue);
    square_to_line(cue, line, back);
    float fallback[3];
    m_vec3_lerp(back, anatomical, w_anatomical, fallback);
    m_vec3_lerp(fallback, to_pole, w_pole, out);
    m_vec3_normalize_or(out, back, out);
}

/* Of the turn from a clavicle's rest direction toward its hand target, the share the
 * clavicle takes (within its limit) when the arm reaches without more. Chosen on
 * ../shared/mocap-train (embody eval, learned prior): shares 0, 0.08, 0.15, 0.3 and 0.45
 * gave known-body MPJPE 8.97, 9.01, 9.06, 9.20 and 9.36 cm (upper body 4.33 to 5.16),
 * mean reachable misses 5.13 to 5.24 %: the clavicle stays at rest until a hand is out
 * of the arm's reach (clavicle_reach). */
#define CLAVICLE_SHARE 0.0f

/* Steps and tolerance of the search for the clavicle's share (clavicle_at_distance). */
#define REACH_STEPS 8
#define REACH_TOLERANCE_M 0.0001f

/* Clavicle s turned toward `target_m` by `share` of the way (fading out as the target
 * comes from square to the clavicle's own line to behind it, across the body at the other
 * shoulder, where the shortest turn toward it would flip from one side to the other; a
 * negative share turns away), within its limit: its local rotation, and where that puts
 * the upper arm joint. The fade once began at every target but one straight out: a hand
 * forward and down (square to the line) then turned the clavicle a quarter of the way, the
 * shoulder not coming forward to a controller the arm fell short of (with a pelvis tracker,
 * hands more than 2 cm off on 4.89 % of frames of the public wave cmu_14_24; now 0). */
static void
clavicle_turn(const struct body *b, int s, const float *target_m, float share, float *out_local,
              float *out_upper_m)
{
    const struct sk_skeleton *sk = &b->skeleton;
    const struct sk_pose *pose = &b->pose;
    const int clavicle = b->j.shoulder[s], upper = b->j.upper_arm[s];
    const float *chest_rot = pose->rotation[sk->parent[clavicle]];
    float rest_dir[3], to_target[3], turn[4];
    const float out[3] = {s == 0 ? 1.0f : -1.0f, 0, 0};
    m_vec3_normalize_or(sk->offset_m[upper], out, rest_dir);
    m_vec3_sub(target_m, pose->position_m[clavicle], to_target);
    m_quat_rotate_inv(chest_rot, to_target, to_target);
    m_vec3_normalize_or(to_target, rest_dir, to_target);
    const float ahead = m_clampf(1.0f + m_vec3_dot(rest_dir, to_target), 0.0f, 1.0f);
    const float t = share * ahead * ahead * (3.0f - 2.0f * ahead);
    if (t != 0.0f) {
        const float identity[4] = {0, 0, 0, 1};
        m_quat_from_to(rest_dir, to_target, turn);
        m_quat_slerp(identity, turn, t, out_local);
        ik_limit_apply(&sk->limit[clavicle], rest_dir, out_local);
    } else {
        m_quat_copy(b->m.clavicle_rest[s], out_local);
    }
    float world[4], offset[3];
    m_quat_mul(chest_rot, out_local, world);
    m_quat_rotate(world, sk->offset_m[upper], offset);
    m_vec3_add(pose->position_m[clavicle], offset, out_upper_m);
}

static void
set_clavicle(struct body *b, int s, const float *local)
{
    const struct sk_skeleton *sk = &b->skeleton;
    struct sk_pose *pose = &b->pose;
    const int clavicle = b->j.shoulder[s], upper = b->j.upper_arm[s];
    m_quat_copy(local, pose->local_rotation[clavicle]);
    m_quat_mul(pose->rotation[sk->parent[clavicle]], local, pose->rotation[clavicle]);
    float offset[3];
    m_quat_rotate(pose->rotation[clavicle], sk->offset_m[upper], offset);
    m_vec3_add(pose->position_m[clavicle], offset, pose->position_m[upper]);
    m_quat_mul(pose->rotation[clavicle], pose->local_rotation[upper], pose->rotation[upper]);
}

static void clavicle_reach(struct body *b, int s);

/* A shoulder's pull on the torso in the solve (the head's and the neck's weigh 1 each):
 * it starts as the arm comes within SHOULDER_PULL_MARGIN_M of straight and grows to
 * SHOULDER_PULL_WEIGHT over SHOULDER_PULL_RAMP_M more, aimed at the margin, so the torso
 * leans before the arm runs out rather than after the hand is left short; and it is eased
 * over SHOULDER_PULL_EASE_S, so a hand swinging in and out of reach does not shake the
 * torso. Chosen on ../shared/mocap-train (embody eval, learned prior; hands more than
 * 2 cm from their controllers, mean over clips and modes): without the pull 3.29 % of
 * frames, with it 2.60 % (weights 1 and 2 alike; sensitivity max 6.3 and 22.4 mm);
 * without the ease known-body jitter 1114 m/s^3, with it 1079; MPJPE 8.52 cm either
 * way (8.51 before the arms left the solver). */
#define SHOULDER_PULL_WEIGHT 1.0f
#define SHOULDER_PULL_MARGIN_M 0.02f
#define SHOULDER_PULL_RAMP_M 0.03f
#define SHOULDER_PULL_EASE_S 0.1f

/* Shoulder s's effector: toward the nearest place from which the arm, SHOULDER_PULL_
 * MARGIN_M short of straight, reaches its hand (along the line from the shoulder as it
 * is), weighted by how far the hand is beyond that and eased in time; switched off
 * (weight 0) for a hand well within reach, where the arm alone gets there. The chest
 * then leans and turns toward a hand the arm is too short for, as far as the head's and
 * the neck's targets let it. */
static void
pull_shoulder(struct body *b, int s)
{
    const float aim = 0.999f * (b->m.upper_arm_m + b->m.lower_arm_m) - SHOULDER_PULL_MARGIN_M;
    const float *shoulder = b->pose.position_m[b->j.upper_arm[s]];
    float to_hand[3], target[3];
    m_vec3_sub(b->hand_position_m[s], shoulder, to_hand);
    const float distance = m_vec3_length(to_hand);
    const float beyond = distance - aim;
    float wanted = 0.0f;
    if (beyond > 0.0f && distance > 1e-6f) {
        m_vec3_muladd(shoulder, to_hand, beyond / distance, target);
        wanted = SHOULDER_PULL_WEIGHT * fminf(1.0f, beyond / SHOULDER_PULL_RAMP_M);
    } else {
        m_vec3_copy(shoulder, target);
    }
    /* Eased toward the wanted weight; at once on the first frame, after a gap, or when
     * time went back (a reset). */
    const float dt_s = b_step_s(b, &b->shoulder_pull_time_s[s]);
    const float ease = dt_s > 0.0f ? 1.0f - expf(-dt_s / SHOULDER_PULL_EASE_S) : 1.0f;
    b->shoulder_pull[s] += (wanted - b->shoulder_pull[s]) * ease;
    ik_solver_set_target(b->ik, b->effector_shoulder[s], target, NULL);
    ik_solver_set_weight(b->ik, b->effector_shoulder[s], b->shoulder_pull[s]);
}

void
b_clavicles_set(struct body *b)
{
    for (int s = 0; s < 2; ++s) {
        /* The shoulder rises first (from the chest as the pose has it), the torso gives
         * what it still lacks (the solve), and clavicle_reach then redoes the rise from
         * the solved chest. */
        clavicle_reach(b, s);
        sk_pose_forward_kinematics_below(&b->pose, &b->skeleton, b->j.upper_arm[s]);
        pull_shoulder(b, s);
    }
}

/* The clavicle's turn toward `target_m` by the share in [lo, hi] that leaves the upper
 * arm joint `distance_m` from it, or the nearer end of the range when none does: false
 * position (Illinois variant) on the distance, which falls as the share grows. */
static void
clavicle_at_distance(const struct body *b, int s, const float *target_m, float distance_m,
                     float lo, float hi, float *out_local)
{
    float upper[3], hi_local[4];
    clavicle_turn(b, s, target_m, lo, out_local, upper);
    float f_lo = m_vec3_distance(upper, target_m) - distance_m;
    if (f_lo <= 0.0f)
        return;
    clavicle_turn(b, s, target_m, hi, hi_local, upper);
    float f_hi = m_vec3_distance(upper, target_m) - distance_m;
    m_quat_copy(hi_local, out_local);
    if (f_hi >= 0.0f)
        return;
    int kept = 0; /* which end stayed last time: halve its value (Illinois) */
    for (int i = 0; i < REACH_STEPS; ++i) {
        const float mid = hi - f_hi * (hi - lo) / (f_hi - f_lo);
        float mid_local[4];
        clavicle_turn(b, s, target_m, mid, mid_local, upper);
        const float f = m_vec3_distance(upper, target_m) - distance_m;
        m_quat_copy(mid_local, out_local);
        if (fabsf(f) < REACH_TOLERANCE_M)
            return;
        if (f > 0.0f) {
            lo = mid;
            f_lo = f;
            if (kept == 1)
                f_hi *= 0.5f;
            kept = 1;
        } else {
            hi = mid;
            f_hi = f;
            if (kept == -1)
                f_lo *= 0.5f;
            kept = -1;
        }
    }
}

/* After the solve, from where the solved chest puts it: the clavicle at its share of
 * the way toward the hand, or, for a hand target beyond the arm's reach from there,
 * further by the least share that reaches (or all of it), within its limit. With an
 * elbow tracker, toward where the upper arm's length reaches the tracked elbow (turning
 * away from it when the elbow is nearer than that), blended in by the tracker's weight:
 * the arm, built after, then meets both the controller and the elbow. */
static void
clavicle_reach(struct body *b, int s)
{
    const float reach = 0.999f * (b->m.upper_arm_m + b->m.lower_arm_m);
    float local[4];
    clavicle_at_distance(b, s, b->hand_position_m[s], reach, CLAVICLE_SHARE, 1.0f, local);
    const int t = EM_TRACKER_LEFT_ELBOW + s;
    const float w = b->trackers.weight[t];
    if (w > 0.0f) {
        float elbow_local[4];
        clavicle_at_distance(b, s, b->trackers.bone_position_m[t], b->m.upper_arm_m, -1.0f,
                             1.0f, elbow_local);
        m_quat_slerp(local, elbow_local, w, local);
        m_quat_normalize(local);
    }
    set_clavicle(b, s, local);
}

/* Arm s built with its elbow side turned by `angle` about the shoulder-hand `line`;
 * returns the upper arm's twist excess. */
static float
build_swivelled(struct body *b, int s, const float *line, const float *side, float angle,
                bool keep_twist_limit)
{
    float turned[3];
    b_limb_swivel(line, side, angle, turned);
    b_limb_build(b, b->j.upper_arm[s], b->hand_position_m[s], b->hand_rotation[s], turned,
                 keep_twist_limit);
    return b_limb_twist_excess(b, b->j.upper_arm[s]);
}

/* The upper arm's twist excess with the elbow side turned by `angle`, the upper arm alone
 * turned so (a try of the search below: the forearm and hand are built once, after it). */
static float
try_swivel(struct body *b, int s, const float *line, const float *side, float angle)
{
    float turned[3];
    b_limb_swivel(line, side, angle, turned);
    b_limb_turn_upper(b, b->j.upper_arm[s], b->hand_position_m[s], turned);
    return b_limb_twist_excess(b, b->j.upper_arm[s]);
}

/* The search for the edges of the upper arm's twist range in swivel: steps of this many
 * radians both ways, then bisections of the step that enters the range. */
#define SWIVEL_STEP_RAD (30.0f * M_DEG_TO_RAD)
#define SWIVEL_STEPS 6
#define SWIVEL_BISECTIONS 7

/* The swivel (about `line`, from `side`) nearest to 0 whose twist is within range, by
 * bisection of [from, to] where `from` is outside and `to` inside. */
static float
swivel_edge(struct body *b, int s, const float *line, const float *side, float from, float to)
{
    for (int i = 0; i < SWIVEL_BISECTIONS; ++i) {
        const float mid = 0.5f * (from + to);
        if (try_swivel(b, s, line, side, mid) != 0.0f)
            from = mid;
        else
            to = mid;
    }
    return to;
}

/* How fast an elbow's side follows its cues (time constant): a runner's hand turning fast
 * swings the hand's cue across the shoulder-hand line within a frame or two, and the elbow
 * went round with it (its side turned 141 degrees in one frame on the public run-and-duck
 * cmu_127_31, the forearm's jitter 23 times the truth's). Chosen on three folds of people
 * left out (known body MPJPE cm / clips above 1.5x the truth's jitter, of 112): none 10.417
 * / 34; 0.05 s 10.423 / 32 (taken); 0.1 s 10.440 / 32; 0.2 s 10.460 / 31 (the elbow late
 * where it does move). */
#define ELBOW_SIDE_EASE_S 0.05f

/* Elbow s's side (unit, square to `line`) eased over `dt_s` (b_step_s) from the last
 * frame's toward `io_side`; at once when dt_s is 0, and by an elbow tracker's weight (a
 * measured elbow is not made late). */
static void
ease_elbow_side(struct body *b, int s, float dt_s, const float *line, float *io_side)
{
    float last[3];
    const float off_line = square_to_line(b->elbow_side[s], line, last);
    if (dt_s > 0.0f && off_line > 1e-3f) {
        const float eased = expf(-dt_s / ELBOW_SIDE_EASE_S);
        const float tracked = b->trackers.weight[EM_TRACKER_LEFT_ELBOW + s];
        m_vec3_lerp(last, io_side, 1.0f - eased * (1.0f - tracked), io_side);
        m_vec3_normalize_or(io_side, last, io_side);
    }
    m_vec3_copy(io_side, b->elbow_side[s]);
}

/* How fast an elbow may swivel about the shoulder-hand line, at most (rad/s). Where the
 * side the cues prefer would twist the upper arm beyond its range, the elbow goes round
 * the allowed arc the long way (b_arms_solve); as the preferred side crossed that
 * forbidden arc the elbow was swung round the whole allowed one within a few frames (57
 * degrees a frame, the forearm's jitter 9 times the truth's, on the public run-and-duck
 * cmu_127_31). Capped, it goes round at the pace of a quick arm, by a way that keeps the
 * upper arm's twist within its range (limit_swivel). Chosen on three
 * folds of people left out (known / height only; MPJPE cm and clips above 1.5x the
 * truth's jitter, of 112): no cap 10.023 / 10.647, 25 / 23; 12 rad/s 10.023 / 10.643,
 * 25 / 22; 8 (taken) 10.023 / 10.647, 25 / 22; 5 10.023 / 10.650, 25 / 22 (and a public
 * clip's sensitivity to 1e-5 m of noise 3.4 mm, from the range's fallback). */
#define ELBOW_SWIVEL_MAX_RAD_S 8.0f

/* The signed swivel about unit `line` from `from` to `to` (both square to it). */
static float
swivel_between(const float *line, const float *from, const float *to)
{
    float c[3];
    m_vec3_cross(from, to, c);
    return atan2f(m_vec3_dot(c, line), m_vec3_dot(from, to));
}

/* Steps (rad, at most) at which a swivel path is checked against the upper arm's twist
 * range (swivel_path_allowed). */
#define SWIVEL_PATH_STEP_RAD 0.25f

/* Whether every swivel from `from` to `from + delta` keeps the upper arm's twist within
 * its range, checked at steps of SWIVEL_PATH_STEP_RAD at most. */
static bool
swivel_path_allowed(struct body *b, int s, const float *line, const float *side, float from,
                    float delta)
{
    const int steps = (int)ceilf(fabsf(delta) / SWIVEL_PATH_STEP_RAD);
    for (int k = 1; k <= steps; ++k)
        if (try_swivel(b, s, line, side, from + delta * (float)k / (float)steps) != 0.0f)
            return false;
    return true;
}

/* How fast an elbow's swivel speed follows where it should go (rad/s: a critically
 * damped spring). The cap alone went round at its speed and reversed within a frame (the
 * public run cmu_127_17: the right forearm's jitter 508 m/s^3, the person's 234; with the
 * spring 315): small and moderate changes of side are now eased in and out (a side that
 * swings back by more than about 1 rad still turns the speed round within a 60 Hz frame).
 * Three folds of people left out, known body (MPJPE cm, clips above 1.5x the truth's
 * jitter of 112, cmu_127_17's jitter x the truth's): none 9.977, 18, 1.63; 20 10.000, 16,
 * 1.57; 30 9.990, 17, 1.58; 45 9.987, 17, 1.58 (taken); 80 9.980, 18, 1.60. */
#define ELBOW_SWIVEL_SPRING_RAD_S 45.0f

/* This frame's swivel of elbow s toward `delta` (rad) from where it was, by the spring
 * from last frame's speed (an implicit step, stable at any rate), at most
 * ELBOW_SWIVEL_MAX_RAD_S and never past `delta`. */
static float
swivel_move(struct body *b, int s, float dt_s, float delta)
{
    const float w = ELBOW_SWIVEL_SPRING_RAD_S, wdt = w * dt_s;
    float rate = (b->elbow_swivel_rate[s] + wdt * w * delta) / (1.0f + 2.0f * wdt + wdt * wdt);
    rate = m_clampf(rate, -ELBOW_SWIVEL_MAX_RAD_S, ELBOW_SWIVEL_MAX_RAD_S);
    float move = rate * dt_s;
    if (fabsf(move) >= fabsf(delta) && move * delta >= 0.0f) {
        /* Arrived: at rest there (the step's speed kept would carry it past next frame,
         * by float noise's sign). */
        b->elbow_swivel_rate[s] = 0.0f;
        return delta;
    }
    b->elbow_swivel_rate[s] = rate;
    return move;
}

/* The swivel `angle` (from `side`, about `line`) the elbow of arm s turns to this frame,
 * moved from where it was built last frame (swivel_move), the shorter way round or, when
 * that would twist the upper arm beyond its range on the way, the longer (as the elbow
 * goes round the allowed arc); at once when both would (build_capped also goes at once
 * when the swivel moved to is beyond the range). At once too when `dt_s` is 0
 * (b_step_s: the first frame, after a gap or a reset) and with an elbow tracker (a
 * measured elbow is not made late). The arm is built after (build_capped). */
static float
limit_swivel(struct body *b, int s, float dt_s, const float *line, const float *side,
             float angle)
{
    float last[3];
    const float off_line = square_to_line(b->elbow_swivel_side[s], line, last);
    if (!(dt_s > 0.0f && off_line > 1e-3f) ||
        b->trackers.weight[EM_TRACKER_LEFT_ELBOW + s] > 0.0f) {
        b->elbow_swivel_rate[s] = 0.0f;
        return angle;
    }
    const float from = swivel_between(line, side, last);
    const float shorter = m_angle_wrap(angle - from);
    float delta = shorter;
    if (fabsf(shorter) > ELBOW_SWIVEL_MAX_RAD_S * dt_s) {
        const float longer = shorter - copysignf(2.0f * M_PI_F, shorter);
        if (!swivel_path_allowed(b, s, line, side, from, shorter)) {
            if (!swivel_path_allowed(b, s, line, side, from, longer)) {
                b->elbow_swivel_rate[s] = 0.0f;
                return angle;
            }
            delta = longer;
        }
    }
    const float move = swivel_move(b, s, dt_s, delta);
    return move == delta ? angle : from + move;
}

/* Arm s built at `angle` as limit_swivel moves it; remembers the side it took. */
static void
build_capped(struct body *b, int s, float dt_s, const float *line, const float *side,
             float angle, bool keep_twist_limit)
{
    float capped = limit_swivel(b, s, dt_s, line, side, angle);
    if (capped != angle && build_swivelled(b, s, line, side, capped, false) != 0.0f) {
        /* The swivel moved to is beyond the range (the arc moved under last frame's
         * side): at once to `angle`. */
        capped = angle;
        b->elbow_swivel_rate[s] = 0.0f;
    }
    if (capped == angle)
        build_swivelled(b, s, line, side, angle, keep_twist_limit);
    if (capped == 0.0f)
        m_vec3_copy(side, b->elbow_swivel_side[s]);
    else
        b_limb_swivel(line, side, capped, b->elbow_swivel_side[s]);
}

void
b_arms_solve(struct body *b)
{
    for (int s = 0; s < 2; ++s) {
        clavicle_reach(b, s);
        const int upper = b->j.upper_arm[s];
        float line[3], side[3];
        m_vec3_sub(b->hand_position_m[s], b->pose.position_m[upper], line);
        const float down[3] = {0, -1, 0};
        m_vec3_normalize_or(line, down, line);
        elbow_side(b, s, b->elbow_pole_m[s], line, side);
        const float dt_s = b_step_s(b, &b->elbow_time_s[s]);
        ease_elbow_side(b, s, dt_s, line, side);
        if (try_swivel(b, s, line, side, 0.0f) == 0.0f) {
            build_capped(b, s, dt_s, line, side, 0.0f, false);
            continue;
        }
        /* An elbow side that would twist the upper arm beyond its range is swivelled
         * about the shoulder-hand line into it (the hand stays exactly on its target).
         * The forbidden swivels form an arc (a_down, a_up) around the preferred one, 0;
         * where 0 lies in it (u, 0 at a_down to 1 at a_up) maps onto the allowed arc
         * the long way round, from a_down to a_up: at either end of the forbidden arc
         * the elbow is at that edge, in its middle at the middle of the allowed one. A
         * nearest-edge rule would jump from one edge to the other as the preferred
         * swivel crossed the middle; this moves on continuously. Edges: steps both
         * ways, then bisection. */
        float a_up = INFINITY, a_down = -INFINITY;
        for (int k = 1; k <= SWIVEL_STEPS && (isinf(a_up) || isinf(a_down)); ++k) {
            const float step = (float)k * SWIVEL_STEP_RAD, before = step - SWIVEL_STEP_RAD;
            if (isinf(a_up) && try_swivel(b, s, line, side, step) == 0.0f)
                a_up = swivel_edge(b, s, line, side, before, step);
            if (isinf(a_down) && try_swivel(b, s, line, side, -step) == 0.0f)
                a_down = swivel_edge(b, s, line, side, -before, -step);
        }
        const bool found = !isinf(a_up) || !isinf(a_down);
        float angle = 0.0f;
        if (!isinf(a_up) && !isinf(a_down)) {
            const float u = -a_down / (a_up - a_down);
            const float allowed = 2.0f * M_PI_F - (a_up - a_down);
            angle = a_down - u * allowed;
        } else if (found) {
            angle = isinf(a_up) ? a_down : a_up;
        }
        /* No swivel within the range (a bone turned near the far side of its rest
         * direction, where twist is ill-defined): the range wins over the hand. */
        build_capped(b, s, dt_s, line, side, angle, !found);
    }
}

/* Of the hand's twist about the forearm, the share the forearm takes. */
#define FOREARM_TWIST_SHARE 0.5f

/* Moves half of each hand's twist about the forearm into the forearm (lowerArm) joint,
 * keeping the hand's position and world rotation. */
static void
spread_forearm_twist(struct body *b)
{
    const struct sk_skeleton *sk = &b->skeleton;
    struct sk_pose *pose = &b->pose;
    for (int s = 0; s < 2; ++s) {
        const int elbow = b->j.lower_arm[s], hand = b->j.hand[s];
        float axis[3], part[4], part_conj[4], swing[4], held[4];
        const float fallback[3] = {1, 0, 0};
        /* The forearm's axis, elbow to wrist, in the forearm's frame (= the hand's rest
         * frame, where its twist is measured). */
        m_vec3_normalize_or(sk->offset_m[hand], fallback, axis);
        /* Whatever twist the forearm still holds (a solve that needed no iteration keeps
         * the last frame's) goes back to the hand first, so the split is of the total. */
        m_quat_swing_twist(pose->local_rotation[elbow], axis, swing, held);
        m_quat_copy(swing, pose->local_rotation[elbow]);
        m_quat_mul(held, pose->local_rotation[hand], pose->local_rotation[hand]);
        const float angle = m_quat_swing_twist(pose->local_rotation[hand], axis, NULL, NULL);
        m_quat_from_axis_angle(axis, FOREARM_TWIST_SHARE * angle, part);
        /* Turning the forearm about its own axis leaves the wrist where it is; the hand
         * turns back by as much, so its rotation in the world is unchanged. */
        m_quat_mul(pose->local_rotation[elbow], part, pose->local_rotation[elbow]);
        m_quat_mul(pose->rotation[sk->parent[elbow]], pose->local_rotation[elbow],
                   pose->rotation[elbow]);
        m_quat_conjugate(part, part_conj);
        m_quat_mul(part_conj, pose->local_rotation[hand], pose->local_rotation[hand]);
    }
}

/* How high a clavicle may rise above level, at least, when a hand reaches up: the
 * shoulder girdle's elevation (the sternoclavicular joint's, with the scapula's upward
 * turn, 45 to 50 degrees in the anatomy texts). A skeleton's cone that stops lower is
 * widened to this (its top raised, its lowest kept); one that reaches higher is kept. The
 * default humanoid's cone of 30 degrees about a line 15 degrees above level stopped at 45
 * and left a hand reaching up short of its controller (../shared/mocap-train, embody eval,
 * learned prior: hands more than 2 cm off on 2.92 % of frames, mean over clips and modes;
 * 2.69 % with 50 degrees); its cone is now 40 degrees (config/humanoid.json: -25 to 55
 * degrees, for a hand out of reach below the shoulder too). */
#define CLAVICLE_ELEVATION_MAX_RAD (50.0f * M_DEG_TO_RAD)

void
b_clavicles_widen(struct body *b)
{
    const float up[3] = {0, 1, 0};
    for (int s = 0; s < 2; ++s) {
        struct sk_limit *limit = &b->skeleton.limit[b->j.shoulder[s]];
        if (limit->kind != SK_LIMIT_BALL)
            continue;
        const float elevation = asinf(m_clampf(m_vec3_dot(limit->axis, up), -1.0f, 1.0f));
        const float lowest = elevation - limit->cone_rad, highest = elevation + limit->cone_rad;
        float level[3];
        m_vec3_muladd(limit->axis, up, -m_vec3_dot(limit->axis, up), level);
        if (!(highest < CLAVICLE_ELEVATION_MAX_RAD) ||
            m_vec3_normalize_or(level, level, level) < 1e-3f)
            continue; /* high enough already, or an axis straight up or down */
        /* The same lowest elevation, the cone's top raised: axis and cone in between. */
        const float middle = 0.5f * (lowest + CLAVICLE_ELEVATION_MAX_RAD);
        limit->cone_rad = 0.5f * (CLAVICLE_ELEVATION_MAX_RAD - lowest);
        m_vec3_scale(level, cosf(middle), limit->axis);
        m_vec3_muladd(limit->axis, up, sinf(middle), limit->axis);
    }
}

enum em_result
b_torso_controls(struct body *b, struct ik_solver *ik, struct em_error *err)
{
    /* The clavicles are set before the solve (b_clavicles_set) and kept by it. */
    enum em_result r = EM_OK;
    for (int s = 0; s < 2 && r == EM_OK; ++s)
        r = ik_solver_set_stiffness(ik, b->j.shoulder[s], 1.0f);
    if (r != EM_OK)
        em_fail(err, r, "body: cannot set the torso's solver controls");
    return r;
}

/* With desc.arm_stretch_max > 0: an arm whose hand target is beyond its length is
 * lengthened along itself (the elbow and the hand with what hangs from it moved out from
 * the shoulder), by at most that fraction. Runs last: nothing after it redoes the arm's
 * forward kinematics. */
static void
stretch_arms(struct body *b)
{
    const float most = b->desc.arm_stretch_max;
    if (!(most > 0.0f))
        return;
    const struct sk_skeleton *sk = &b->skeleton;
    for (int s = 0; s < 2; ++s) {
        const int upper = b->j.upper_arm[s], lower = b->j.lower_arm[s], hand = b->j.hand[s];
        const float *shoulder = b->pose.position_m[upper];
        const float length = b->m.upper_arm_m + b->m.lower_arm_m;
        const float wanted = m_vec3_distance(b->hand_position_m[s], shoulder);
        if (!(wanted > length) || !(length > 1e-6f))
            continue;
        /* The hand goes toward its target by at most the stretch, the elbow out with it
         * (the arm is straight toward the target unless its twist range bent it). */
        float to_target[3], moved[3], delta[3];
        m_vec3_sub(b->hand_position_m[s], b->pose.position_m[hand], to_target);
        const float gap = m_vec3_length(to_target);
        const float step = fminf(gap, most * length);
        if (!(gap > 1e-6f))
            continue;
        m_vec3_muladd(b->pose.position_m[hand], to_target, step / gap, moved);
        const float before = m_vec3_distance(b->pose.position_m[hand], shoulder);
        const float k = before > 1e-6f ? m_vec3_distance(moved, shoulder) / before : 1.0f;
        m_vec3_lerp(shoulder, b->pose.position_m[lower], k, b->pose.position_m[lower]);
        m_vec3_sub(moved, b->pose.position_m[hand], delta);
        for (int j = hand; j < sk->joint_count; ++j) {
            int a = j;
            while (a > hand)
                a = sk->parent[a];
            if (a == hand) /* the hand and what hangs from it (parents come first) */
                m_vec3_add(b->pose.position_m[j], delta, b->pose.position_m[j]);
        }
    }
}

void
b_arms_finish(struct body *b)
{
    spread_forearm_twist(b);
    stretch_arms(b);
}
