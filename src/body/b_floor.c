/*
 * Floor postures: lying on the back, the side or the front, and sitting on the floor.
 *
 * On the feet (the seed, b_seed.c) the pelvis goes no lower than a deep squat, and a head lower
 * still is a torso bending over. A player lying down or sitting on the floor has the head
 * lower than a squat can put it while it is not pitched down as a bent-over torso's is: the
 * body then sits or lies on the floor. How much it does is the floor share, from the head
 * joint's height alone (with the head's facing): 0 above where a body sitting upright on the
 * floor has its head plus a margin, 1 just above that height; for a face turned down (a
 * torso bending over can bring it low) the thresholds are those of lying on the front.
 *
 * On the floor the torso lies along the head's own up axis, relaxed toward upright by what
 * the neck can bend (NECK_RANGE_RAD), its front where the face looks sitting up and its
 * frame the head's own swung onto that axis lying (turn_as_head_lying): the pelvis is the
 * spine's length from the neck along it, tilted further down where it would go under its
 * lowest height (the pelvis resting on the floor; lower on the back or front than sitting),
 * so a head on the floor lays the spine along it, away from where the pelvis was when the
 * head's tilt does not say which way (lean_over_floor). The legs then lie along the floor
 * beyond the pelvis (lying), or stand on the feet ahead of it with the knees up (sitting
 * up), blended by how upright the torso is.
 *
 * Kneeling, sitting on a low seat and squatting put the head at the same heights: the
 * 3 points cannot tell them. The posture shown is chosen by the way down (b_floor_classify):
 * a head that went back on the way down sat down on something, one that did not knelt (or
 * crouches, when low); the status says the choice was made so.
 */
#include <string.h>

#include "b_internal.h"
#include "embody/m_math.h"

/* How long the level part of the torso's axis must be for the torso to lie its way
 * (lying_direction): from the first share of the axis on, in full from the second. */
#define LEAN_AXIS_FROM 0.1f
#define LEAN_AXIS_FULL 0.25f
/* The pelvis's lowest height (hips joint above the floor), as a share of its standing
 * height: sitting on the floor, and as far as the torso lies on its back or front
 * (lying_flat), lying. The HDM05 people
 * lying on the back have the hips joint at the head joint's height or up to 7 cm above
 * it, 0.5 to 9 cm off the floor: a pelvis held at the sitting height (12 to 13 cm) sloped
 * the torso down to the head and a shoulder under the floor. Lying down, four folds summed
 * (MPJPE cm, head p99 cm, deg p95, hands off %, lowest cm, jitter x; clips over the
 * floor's contract, of 16):
 *   0.12, as sitting (before)  21.35  3.55  12.6  6.69  -15.5  63.3  12
 *   0.08                       20.94  3.64  13.9  6.65  -14.1  65.1  10
 *   0.06 (taken)               20.80  3.75  14.6  6.70   -7.1  65.5   8
 *   0.04                       20.73  3.83  15.1  6.69  -14.7  67.2   9
 * (with the torso on its side too, the synthetic postures' lying on the side put a
 * shoulder 1.2 cm under the floor, their limit 1: on the side it stays as sitting, and
 * the taken row is 20.82 3.73 14.4 6.70 -7.1 66.1 8.) */
#define FLOOR_HIPS_SHARE 0.12f
#define LYING_HIPS_SHARE 0.06f
/* A hip joint's lowest height on the floor, as a share of the pelvis's standing height. */
#define HIP_CLEARANCE_SHARE 0.06f
/* The floor share is 1 with the head joint within the first share of the standing head
 * height above where it is sitting upright on the floor, 0 beyond the second; with the face
 * turned down, 1 below the third share of the standing head height, 0 above the fourth. */
#define SIT_FULL_SHARE 0.03f
#define SIT_NONE_SHARE 0.15f
#define FACE_DOWN_FULL_SHARE 0.22f
#define FACE_DOWN_NONE_SHARE 0.35f
/* Nobody gets down onto the floor on the move: while the head goes over the floor faster
 * than the first speed the share rises more slowly, not at all from the second (smoothed
 * with HEAD_SPEED_TAU_S); it always falls as the head rises. A run ducking under something
 * (cmu_127_31, its head 0.65 m up at 0.5 to 0.9 m/s for 2 s) sat on the floor without this
 * (known body, prior: MPJPE 22.07 -> 23.24 cm); with a gate that also lowered the share,
 * the pelvis went up and down (jitter 647 -> 5080 m/s^3). */
#define STILL_M_S 0.2f
#define MOVING_M_S 0.5f
/* A head that went back on the way down (sat_down) and moves over the floor slower than
 * SAT_MOVING_M_S is not held: a person sitting on the floor rocks the head back and forth
 * at 0.4 to 0.7 m/s on the way to lying back, and the share stayed at 0.57 for 1.5 s, the
 * pelvis 15 cm up (hdm05_bk_lieDownFloor_007, fold 2). Faster, it is a run: cmu_127_32 runs
 * at 1.2 to 2.4 m/s with its head low and, by the body's heading, going back, and sat on
 * the floor without the bound (MPJPE 23.78 -> 46.33 cm). Lying down, four HDM05 folds
 * summed (MPJPE cm, head p99 cm, hands off %, jitter x the person's, clips over 3x): held
 * (before) 12.34, 1.75, 0.21, 2.67, 4; not held below 0.8 m/s 12.27, 1.65, 0.33, 2.91, 4;
 * below 1 m/s (taken) 12.13, 1.65, 0.31, 2.88, 4; at any speed 12.09, 1.66, 0.33, 2.79, 4
 * (and cmu_127_32 on the floor). */
#define SAT_MOVING_M_S 1.0f
#define HEAD_SPEED_TAU_S 0.3f
/* Nor does anyone run with the head lower than sitting on the floor puts it: the hold
 * above is lifted as the head goes from the first share of that height (held in full)
 * down to the second (not held). A player sitting on the floor and lying back moves the
 * head back over the floor as fast as a run (0.7 to 0.8 m/s): held, the share stayed at
 * its sitting value, half the network's body upright and half the floor's lying, while
 * the head lay on the floor. Chosen on the four HDM05 folds' lying down (16 clips summed;
 * MPJPE cm, head p99 cm, head deg p95, hands off %, lowest joint cm, jitter x; clips
 * over the hands' and the floor's contracts; the other kinds are unchanged throughout):
 *   held at any height (before)  20.79  3.79  16.3  8.93  -15.0  55.6  11  13
 *   0.5 .. 0.7                   21.24  3.66  13.1  6.51  -20.4  62.3  10  12
 *   0.6 .. 0.8 (taken)           21.87  3.58  14.3  6.77   -9.5  60.9  13  12
 *   0.7 .. 0.9                   22.59  3.79  14.5  6.11  -10.0  57.8  11  11
 *   0.8 .. 0.95                  23.11  4.04  12.8  5.01  -10.0  59.6   7  11
 * Lower, a shoulder went deeper under the floor in the frames the share still held; higher,
 * the floor took more of the network's body and the head went farther off its headset.
 * Measured again once the torso lay the right way (lean_over_floor), the same columns and
 * clips over the angle's, hands' and floor's contracts:
 *   held at any height           15.23  2.72   9.2  5.18  -16.6  14.5   3  6 12
 *   0.5 .. 0.7                   14.31  2.21   4.7  1.79  -10.8  10.9   1  2  8
 *   0.6 .. 0.8 (kept)            14.33  2.19   4.7  1.49   -9.6  11.4   1  1  6
 *   0.7 .. 0.9                   14.54  2.21   3.7  0.87   -4.1  11.1   0  0  6
 * 0.7 .. 0.9 meets the angle and the hands on every clip, but the run the hold is for, its
 * head 0.65 m up, is held in full only for players under about 1.7 m (a head sitting
 * upright on the floor is about 0.43 of the height up); at 0.6 .. 0.8, under 1.9 m. */
#define HELD_HEAD_SHARE 0.8f
#define LOW_HEAD_SHARE 0.6f
/* How fast the share follows as it rises and as it falls (time constants, s), and the
 * torso's frame on the floor. */
#define SHARE_RISE_TAU_S 0.3f
#define SHARE_TAU_S 0.15f
#define FRAME_RATE_PER_S 10.0f
/* The torso's front on the floor is the face's way, square to its axis, turned to the
 * heading's as that part grows short (frame_from): the face looking along the torso (a
 * person lying back with the chin tucked, looking at the feet) left a part 0.2 long, and
 * the front swung 60 degrees one way and back every frame, the feet standing ahead of the
 * hips with it (hdm05_bk_lieDownFloor_010, fold 2: 3.6 -> 6.0x the person's jitter once
 * the sitting feet stood 0.75 of the leg ahead). Switched at 0.2 (before), lying down (four
 * HDM05 folds summed: MPJPE cm, jitter x the person's) 12.13, 2.88; turned over 0.1 .. 0.4
 * 12.15, 2.70; 0.2 .. 0.5 12.18, 2.73; 0.15 .. 0.25 (taken) 12.13, 2.71. */
#define FRONT_SHORT_FROM 0.15f
#define FRONT_SHORT_TO 0.25f
/* How far the head may tilt from the torso (the neck's bend) before the torso follows. */
#define NECK_RANGE_RAD (40.0f * M_DEG_TO_RAD)
/* Lying: the torso's axis rises less than the first (as a sine of its slope) from the
 * floor; sitting up: more than the second. */
#define LYING_SLOPE 0.35f
#define SITTING_SLOPE 0.65f
/* Legs lying along the floor reach this share of their length; sitting up, the ankles
 * stand this share of the leg ahead of each hip joint, the knees up (SIT_REACH_SHARE). HDM05's
 * people lying on the back have the knee joints 13 to 21 cm off the floor (16 clips, a
 * second before the end); at 0.93 the knees bent up to 24 to 30 cm. Lying down, four folds
 * summed (MPJPE cm, jitter x the person's, clips over 3x; the other kinds unchanged):
 * 0.93 13.29, 3.30, 8; 0.97 (taken) 13.17, 3.30, 7; 1 13.15, 3.31, 7 (a leg locked straight
 * at the end of its reach). */
#define LYING_REACH_SHARE 0.97f
/* Sitting on the floor, HDM05's people have their ankles 0.73 m ahead of the pelvis and
 * the knees 0.32 m up, on their way down to lie or back up (16 clips, 720 frames sitting
 * with the torso up; the knees up, the feet on the floor, as a player about to lie down or
 * get up does): folded cross-legged before the pelvis (the ankles 0.32 of the leg ahead of
 * it and 0.12 across, the knees out) they were 42 cm from the person's on average, 0.39 m
 * ahead. Lying down, four folds summed (MPJPE cm, jitter x the person's, clips over 3x; the
 * deposits, MPJPE cm):
 *   cross-legged (before)  13.17  3.20  7   9.05
 *   knees up, 0.6          12.50  2.88  5   9.07
 *   knees up, 0.75 (taken) 12.41  2.90  6   9.09
 *   knees up, 0.85         12.38  2.91  6   9.10
 * (the network's legs, sitting: 13.01 to 13.04, 3.97 to 4.14x). A player sitting
 * cross-legged is shown with the knees up: the three points do not tell them apart. */
#define SIT_REACH_SHARE 0.75f
/* Sitting, the knee's pole this far above the hip and ahead of it. */
#define SIT_POLE_AHEAD_M 0.3f
#define POLE_M 0.5f
/* On the floor the elbows point at least this high. */
#define ELBOW_POLE_HEIGHT_M 0.25f
/* Postures (b_floor_classify): standing with the hips above the first share of their
 * standing height; sitting on a seat or kneeling with the head above the second share of
 * its standing height; below it crouching. The head went back this share of the height on
 * the way down: it sat down. */
#define STANDING_HIPS_SHARE 0.85f
#define SEAT_HEAD_SHARE 0.62f
#define SAT_BACK_PER_HEIGHT 0.055f
/* A head that went back this share of the height on the way down (from the first, fully
 * from the second) sat down on the floor, whichever way the face then looks: the face-down
 * heights (share_from_head) are for a body kneeling or bending forward, and a person
 * sitting on the floor looking down at the feet, the head 0.70 m up, was taken for one
 * (the floor's share 0, the pelvis 30 cm above the floor for 2 s, hdm05_bk_lieDownFloor_005
 * and 007, fold 2). Lying down, four HDM05 folds summed (MPJPE cm, head p99 cm, jitter x
 * the person's, clips over 3x; the other kinds unchanged): the face alone (before) 12.41,
 * 1.82, 2.90, 6; gone back from 0.1 to 0.2 (taken) 12.34, 1.75, 2.67, 4; 0.05 to 0.15 or
 * 0.15 to 0.3 the same. (With the legs cross-legged sitting, before they stood knees up:
 * 13.29 -> 13.46 cm, not taken then.) */
#define SAT_DOWN_FROM_PER_HEIGHT 0.1f
#define SAT_DOWN_FULL_PER_HEIGHT 0.2f
/* Sitting and kneeling are told once the head has settled: while it goes down or up
 * faster than this (smoothed over HEAD_RISE_TAU_S) the body is on its way between standing
 * and low, crouching; once told, a head that bobs (a seated player leaning) keeps it. The
 * demo's squat passed through the seat's and the kneel's head heights at 0.8 m/s and was
 * shown kneeling for 64 frames, 30 on the way down and 30 up. */
#define SETTLED_M_S 0.2f
#define HEAD_RISE_TAU_S 0.1f


float
b_floor_share(const struct body *b)
{
    return b->floor.share;
}

/* The head joint's height above the floor for a body sitting upright on it. */
static float
sitting_head_m(const struct body *b)
{
    return FLOOR_HIPS_SHARE * b->m.hips_height_m + b->m.hips_to_neck_m +
           m_vec3_length(b->m.head_from_neck_m);
}

float
b_floor_lying(const struct body *b)
{
    return b->floor.lying;
}

/* How far the head has gone back (against the heading it stood with) since the body last
 * stood: sitting down, the head goes back with the hips. */
static float
head_gone_back_m(const struct body *b)
{
    const struct b_floor *f = &b->floor;
    return -(sinf(f->down_heading_rad) * (b->head_position_m[0] - f->down_from_m[0]) +
             cosf(f->down_heading_rad) * (b->head_position_m[2] - f->down_from_m[2]));
}

/* 0..1: how surely the head's way down says the body sat down on the floor (it went back
 * SAT_DOWN_FROM_PER_HEIGHT to SAT_DOWN_FULL_PER_HEIGHT of the height). */
static float
sat_down(const struct body *b)
{
    return m_smoothstep(SAT_DOWN_FROM_PER_HEIGHT * b->desc.height_m,
                        SAT_DOWN_FULL_PER_HEIGHT * b->desc.height_m, head_gone_back_m(b));
}

/* The share this frame's head asks for (before smoothing). */
static float
share_from_head(const struct body *b)
{
    const float z[3] = {0, 0, 1};
    float fwd[3];
    m_quat_rotate(b->head_rotation, z, fwd);
    const float face_down = m_smoothstep(0.3f, 0.8f, -fwd[1]) * (1.0f - sat_down(b));
    const float head = b->m.head_height_m;
    const float sitting_head = sitting_head_m(b);
    const float full = sitting_head + SIT_FULL_SHARE * head;
    const float none = sitting_head + SIT_NONE_SHARE * head;
    const float full_m = full + (FACE_DOWN_FULL_SHARE * head - full) * face_down;
    const float none_m = none + (FACE_DOWN_NONE_SHARE * head - none) * face_down;
    return m_smoothstep(none_m, full_m, b->head_position_m[1] - b->ground_height_m);
}

/* A frame whose +Y is `up` (unit) and whose +Z is as near `front` as that allows, turned
 * toward `fallback`'s as front's part square to up grows short (FRONT_SHORT_TO down to
 * FRONT_SHORT_FROM: all fallback's). */
static void
frame_from(const float *up, const float *front, const float *fallback, float *out_q)
{
    float z[3], x[3], other[3];
    const float any[3] = {0, 0, 1};
    m_vec3_muladd(front, up, -m_vec3_dot(front, up), z);
    const float w = m_smoothstep(FRONT_SHORT_FROM, FRONT_SHORT_TO, m_vec3_length(z));
    m_vec3_muladd(fallback, up, -m_vec3_dot(fallback, up), other);
    m_vec3_normalize_or(other, any, other);
    m_vec3_normalize_or(z, other, z);
    m_vec3_lerp(other, z, w, z);
    m_vec3_normalize_or(z, any, z);
    m_vec3_cross(up, z, x);
    m_quat_from_columns(x, up, z, out_q);
    m_quat_normalize(out_q);
}

/* The torso's axis from the head's up axis: upright while the head tilts within the neck's
 * range, beyond it tilted with the head by what the neck cannot take. */
static void
torso_axis(const float *head_up, float *out)
{
    const float up[3] = {0, 1, 0};
    const float angle = acosf(m_clampf(m_vec3_dot(head_up, up), -1.0f, 1.0f));
    if (angle <= NECK_RANGE_RAD) {
        m_vec3_copy(up, out);
        return;
    }
    float axis[3], q[4];
    m_vec3_cross(head_up, up, axis);
    const float fallback[3] = {1, 0, 0};
    m_vec3_normalize_or(axis, fallback, axis);
    m_quat_from_axis_angle(axis, NECK_RANGE_RAD, q);
    m_quat_rotate(q, head_up, out);
}

/* The torso's axis on the floor: the head's tilt (torso_axis) turned toward the line from
 * where the floor's pelvis rested last frame to the neck, by RESTING_PELVIS_SHARE, less by
 * RESTING_LYING_FADE of it as far as the torso lies. A pelvis on the floor stays where it
 * sits while the torso moves over it: hung under the neck by the head's tilt alone, it slid
 * along the floor with the head of a player lying back with the chin tucked (the head
 * within the neck's bend says upright), passed under the head and beyond it, and the body
 * lay the other way round, its legs 1.7 m from the person's (hdm05_bd_lieDownFloor_003,
 * fold 1). Lying, the torso's frame is the head's (turn_as_head_lying) and the line fed
 * back through it: at the full share all the way down, cmu_91_04's skeleton lying back on
 * its key poses (test_postures) swung its torso over and put the neck 13 cm under the
 * floor (0.9 cm fading by 0.3, 2.4 cm at 0.4 by 0.5). Lying down, four HDM05 folds summed
 * (MPJPE cm, head p99 cm, hands off %, jitter x the person's; clips over the hands' and the
 * jitter's contracts; the other kinds unchanged):
 *   0 (before)                  13.80  1.90  0.32  3.98  0  13
 *   0.3, not fading             13.36  1.83  0.29  3.20  0   6  (the key poses: 13 cm)
 *   0.3, fading by 0.3          13.34  1.83  0.28  3.32  0   7  (0.9 cm)
 *   0.3, fading by 0.5 (taken)  13.29  1.82  0.21  3.30  0   8
 *   0.3, fading by 1            13.32  1.80  0.21  3.65  0  11
 *   0.5, fading by 1            13.17  1.85  0.51  3.76  0  12
 *   0.5, not fading             13.27  1.86  0.65  3.16  1   7
 *   1, not fading               56.83  4.29 30.57 51.89 13  15  (the body lost) */
#define RESTING_PELVIS_SHARE 0.3f
#define RESTING_LYING_FADE 0.5f

static void
floor_torso_axis(const struct body *b, const float *head_up, const float *neck, float *out)
{
    torso_axis(head_up, out);
    if (!b->floor.started)
        return;
    float resting[3];
    m_vec3_sub(neck, b->floor.hips_m, resting);
    const float w = RESTING_PELVIS_SHARE * (1.0f - RESTING_LYING_FADE * b->floor.lying);
    m_vec3_normalize_or(resting, out, resting);
    m_vec3_lerp(out, resting, w, out);
    m_vec3_normalize_or(out, resting, out);
}

/* As far as the torso lies (the last frame's b_floor_lying), its frame `io_rotation`
 * (whose up is `axis`) is turned to the head's own, swung from the head's up to that axis
 * by the shortest arc, instead of the one whose front is the face's direction square to
 * the axis. Lying, the face often looks along the body (at the feet, or back past the
 * top of the head), where that square part is short and turns over as the head nods: the
 * torso's frame rolled from front down to back down in four frames and a shoulder went 8
 * cm under the floor (hdm05_bd_lieDownFloor_002, fold 1). The swing has no such place.
 * Lying down, four HDM05 folds summed (MPJPE cm, head p99 cm, deg p95, hands off %, lowest
 * cm, jitter x; clips over the head's, the angle's, the hands', the floor's contracts):
 *   the face's front (before)  21.87  3.58  14.3  6.77   -9.5  60.9  16  7  13  12
 *   the head's, swung           21.35  3.55  12.6  6.69  -15.5  63.3  16  5  13  12
 * (the lowest is a shoulder as the pelvis still sits high: the next constant). */
static void
turn_as_head_lying(const struct body *b, const float *head_up, const float *axis,
                   float *io_rotation)
{
    const float lying = b->floor.lying;
    if (!(lying > 0.0f))
        return;
    float swing[4], head[4];
    m_quat_from_to(head_up, axis, swing);
    m_quat_mul(swing, b->head_rotation, head);
    m_quat_normalize(head);
    if (m_quat_dot(io_rotation, head) < 0.0f)
        m_quat_set(head, -head[0], -head[1], -head[2], -head[3]);
    m_quat_slerp(io_rotation, head, lying, io_rotation);
    m_quat_normalize(io_rotation);
}

/* 0..1: how much the torso lies on its back or front (the last frame's torso frame on
 * the floor, its front up or down); on its side it rests on a shoulder and a hip. */
static float
lying_flat(const struct body *b)
{
    const float z[3] = {0, 0, 1};
    float front[3];
    m_quat_rotate(b->floor.hips_rotation, z, front);
    return b->floor.lying * fabsf(front[1]);
}

/* Which way a torso whose neck is too low for it to stand up lies over the floor, when the
 * head's tilt does not say (it is within what the neck bends): from where the pelvis was
 * last frame toward the neck, the pelvis resting on the floor while the torso goes down
 * around it; the face's way (the pelvis behind the head) before there is a pelvis, or with
 * it right under the neck. The face's way alone laid a player lying back with the chin
 * tucked (looking at the feet) forward over the legs, face down, until the head tipped back
 * past the neck's range and the torso flipped over to lie behind it in one frame: a 1 m jump
 * of every joint on every one of the HDM05 people's lying down, most of their jitter.
 * Lying down, four folds summed (MPJPE cm, head p99 cm, deg p95, hands off %, lowest cm,
 * jitter x; clips over the head's, the angle's, the hands', the floor's and the jitter's
 * contracts; the other kinds and the public clips unchanged):
 *   the face's way (before)           19.84  2.91  14.0  6.69  -6.3  49.6  16  7 12  9 16
 *   from the pelvis (taken)           14.33  2.19   4.7  1.49  -9.6  11.4  10  1  1  6 15
 *   from it beyond 2 / 5 / 10 / 20 cm 14.37 / 14.38 / 14.40 / 14.98 cm MPJPE, jitter
 *                                     12.9 / 12.8 / 12.4 / 14.4x, the rest as taken
 *   from it, the head's tilt unused   19.23  2.19   4.7  1.49 -10.3  11.4  10  1  1 10 14 */
static void
lean_over_floor(const struct body *b, const float *neck, const float *head_fwd,
                const float *heading, float *out_level)
{
    float face[3];
    m_vec3_set(face, head_fwd[0] + heading[0], 0.0f, head_fwd[2] + heading[2]);
    m_vec3_normalize_or(face, heading, face);
    if (!b->pelvis_started) {
        m_vec3_copy(face, out_level);
        return;
    }
    m_vec3_set(out_level, neck[0] - b->hips_position_m[0], 0.0f,
               neck[2] - b->hips_position_m[2]);
    m_vec3_normalize_or(out_level, face, out_level);
}

/* The way over the floor a torso tilted down to `axis` lies: the axis's own level part,
 * or, while that part is short (the head within what the neck bends), lean_over_floor's
 * way, turned from one to the other as the part grows from LEAN_AXIS_FROM to
 * LEAN_AXIS_FULL of the axis. Switched at one length, the two ways differ when the head
 * tips back past the neck's range over a pelvis that lay the other way, and the pelvis
 * jumped 22 cm in a frame, the whole body with it (hdm05_bd_lieDownFloor_001, fold 1).
 * Lying down, four HDM05 folds summed (MPJPE cm, jitter x the person's; the other kinds
 * unchanged): switched at 0.1 (before) 13.91, 7.51; turned over 0.06 .. 0.15 13.91, 6.34;
 * 0.1 .. 0.25 (taken) 13.96, 5.97; 0.15 .. 0.375 14.01, 5.72; 0.2 .. 0.5 (without the legs'
 * rebuild, b_limbs.c) 0.12 cm more than taken and 0.4x less. */
static void
lying_direction(const struct body *b, const float *axis, const float *neck,
                const float *head_fwd, const float *heading, float *out_level)
{
    float lean[3];
    lean_over_floor(b, neck, head_fwd, heading, lean);
    const float own = sqrtf(axis[0] * axis[0] + axis[2] * axis[2]);
    const float w = m_smoothstep(LEAN_AXIS_FROM, LEAN_AXIS_FULL, own);
    const float from = atan2f(lean[0], lean[2]);
    const float to = own > 1e-6f ? atan2f(axis[0], axis[2]) : from;
    const float angle = from + w * m_angle_wrap(to - from);
    m_vec3_set(out_level, sinf(angle), 0.0f, cosf(angle));
}

/* The pelvis and torso frame on the floor (see the top of the file). */
static void
floor_pelvis(const struct body *b, float *out_hips, float *out_rotation)
{
    const float y[3] = {0, 1, 0}, z[3] = {0, 0, 1};
    float head_up[3], head_fwd[3], neck[3], off[3], d[3], heading[3];
    m_quat_rotate(b->head_rotation, y, head_up);
    m_quat_rotate(b->head_rotation, z, head_fwd);
    m_vec3_set(heading, sinf(b->heading_rad), 0.0f, cosf(b->heading_rad));
    m_quat_rotate(b->head_rotation, b->m.head_from_neck_m, off);
    m_vec3_sub(b->head_position_m, off, neck);
    floor_torso_axis(b, head_up, neck, d);
    const float *rest_hips = b->skeleton.rest_position_m[b->j.hips];
    const float *rest_neck = b->skeleton.rest_position_m[b->j.neck];
    float rest_delta[3];
    m_vec3_sub(rest_hips, rest_neck, rest_delta);
    const float spine = fmaxf(m_vec3_length(rest_delta), 1e-3f);
    const float lowest_share = m_lerpf(FLOOR_HIPS_SHARE, LYING_HIPS_SHARE, lying_flat(b));
    const float lowest = b->ground_height_m + lowest_share * b->m.hips_height_m;
    if (neck[1] - spine * d[1] < lowest) {
        /* Tilted down until the pelvis rests at its lowest: the spine lies along the floor
         * when the neck is that low. Its direction over the floor: lying_direction. */
        float level[3];
        lying_direction(b, d, neck, head_fwd, heading, level);
        const float rise = m_clampf((neck[1] - lowest) / spine, -1.0f, 1.0f);
        const float run = sqrtf(fmaxf(0.0f, 1.0f - rise * rise));
        m_vec3_set(d, level[0] * run, rise, level[2] * run);
    }
    frame_from(d, head_fwd, heading, out_rotation);
    turn_as_head_lying(b, head_up, d, out_rotation);
    m_quat_rotate(out_rotation, rest_delta, off);
    m_vec3_add(neck, off, out_hips);
    out_hips[1] = fmaxf(out_hips[1], lowest);
    /* Lying on the side the pelvis rests on the lower hip: its joint stays above the floor
     * by a hip's flesh. */
    for (int s = 0; s < 2; ++s) {
        float hip[3];
        m_quat_rotate(out_rotation, b->m.hip_offset_m[s], hip);
        const float clear = b->ground_height_m + HIP_CLEARANCE_SHARE * b->m.hips_height_m;
        out_hips[1] = fmaxf(out_hips[1], clear - hip[1]);
    }
}

void
b_floor_reset(struct body *b)
{
    memset(&b->floor, 0, sizeof b->floor);
    m_quat_identity(b->floor.hips_rotation);
    m_vec3_copy(b->head_position_m, b->floor.down_from_m);
}

/* The head's speed over the floor (a player who moves over it is not sitting or lying on
 * it), the share this frame's head asks for, the torso's frame on the floor. */
static void
update_floor(struct body *b, float dt_s, const float *hips, const float *rotation_in)
{
    struct b_floor *f = &b->floor;
    float rotation[4];
    m_quat_copy(rotation_in, rotation);
    if (f->started && dt_s > 0.0f) {
        const float dx = b->head_position_m[0] - f->head_m[0];
        const float dz = b->head_position_m[2] - f->head_m[2];
        const float speed = sqrtf(dx * dx + dz * dz) / dt_s;
        f->head_speed_m_s += (speed - f->head_speed_m_s) * fminf(1.0f, dt_s / HEAD_SPEED_TAU_S);
        const float rise = (b->head_position_m[1] - f->head_m[1]) / dt_s;
        f->head_rise_m_s += (rise - f->head_rise_m_s) * fminf(1.0f, dt_s / HEAD_RISE_TAU_S);
    }
    m_vec3_copy(b->head_position_m, f->head_m);
    const float raw = share_from_head(b);
    if (!f->started || dt_s <= 0.0f) {
        if (!f->started)
            f->share = raw;
        m_quat_copy(rotation, f->hips_rotation);
    } else {
        if (raw > f->share) {
            /* Nobody sits or lies down on the run: over the floor, the share holds. */
            const float low = (b->head_position_m[1] - b->ground_height_m) / sitting_head_m(b);
            const float sat_rocking =
                sat_down(b) * m_smoothstep(SAT_MOVING_M_S, MOVING_M_S, f->head_speed_m_s);
            const float moving = m_smoothstep(STILL_M_S, MOVING_M_S, f->head_speed_m_s) *
                                 m_smoothstep(LOW_HEAD_SHARE, HELD_HEAD_SHARE, low) *
                                 (1.0f - sat_rocking);
            f->share += (raw - f->share) * (1.0f - moving) * fminf(1.0f, dt_s / SHARE_RISE_TAU_S);
        } else {
            f->share += (raw - f->share) * fminf(1.0f, dt_s / SHARE_TAU_S);
        }
        if (m_quat_dot(f->hips_rotation, rotation) < 0.0f)
            m_quat_set(rotation, -rotation[0], -rotation[1], -rotation[2], -rotation[3]);
        m_quat_slerp(f->hips_rotation, rotation, fminf(1.0f, FRAME_RATE_PER_S * dt_s),
                     f->hips_rotation);
        m_quat_normalize(f->hips_rotation);
    }
    f->started = true;
    m_vec3_copy(hips, f->hips_m);
    const float up[3] = {0, 1, 0};
    float axis[3];
    m_quat_rotate(f->hips_rotation, up, axis);
    f->lying = m_smoothstep(SITTING_SLOPE, LYING_SLOPE, axis[1]);
}

void
b_floor_estimate_pelvis(struct body *b, float dt_s, struct b_pelvis_estimate *out)
{
    float hips[3], rotation[4];
    floor_pelvis(b, hips, rotation);
    update_floor(b, dt_s, hips, rotation);
    memset(out, 0, sizeof *out);
    m_vec3_copy(b->floor.hips_m, out->position_m);
    m_quat_copy(b->floor.hips_rotation, out->rotation);
    out->position_confidence = out->yaw_confidence = out->tilt_confidence = b->floor.share;
}

void
b_floor_upright(const struct body *b, float *out_rotation)
{
    float yaw_rot[4];
    b_quat_from_yaw(b->heading_rad, yaw_rot);
    if (b->floor.share <= 0.0f) {
        m_quat_copy(yaw_rot, out_rotation);
        return;
    }
    m_quat_slerp(yaw_rot, b->floor.hips_rotation, b->floor.share, out_rotation);
    m_quat_normalize(out_rotation);
}

void
b_floor_arm_pole(const struct body *b, float *io_pole)
{
    const float lift_to = b->ground_height_m + ELBOW_POLE_HEIGHT_M;
    if (b->floor.share > 0.0f && io_pole[1] < lift_to)
        io_pole[1] += (lift_to - io_pole[1]) * b->floor.share;
}

/* The ankle `t` of the way from `from` to `to` (both on the floor) around the hip: its turn
 * about the vertical through the hip and its reach from it each blended, so a leg going
 * from before the pelvis (sitting) to lying beyond it swings out around the hip. Blended
 * straight, the ankle passed under the hip when the two lie on either side of it (a body
 * rolling from sitting onto its front) and the leg folded through the floor for a frame:
 * a shin 25 cm under it (hdm05_bk_lieDownFloor_005, fold 2). */
static void
blend_about_hip(const float *hip, const float *from, const float *to, float t, float *out)
{
    if (!(t > 0.0f) || !(t < 1.0f)) { /* the ends as they are, to the bit */
        m_vec3_copy(t > 0.0f ? to : from, out);
        return;
    }
    const float fx = from[0] - hip[0], fz = from[2] - hip[2];
    const float tx = to[0] - hip[0], tz = to[2] - hip[2];
    const float from_rad = atan2f(fx, fz), to_rad = atan2f(tx, tz);
    const float angle = from_rad + t * m_angle_wrap(to_rad - from_rad);
    const float reach = m_lerpf(sqrtf(fx * fx + fz * fz), sqrtf(tx * tx + tz * tz), t);
    m_vec3_set(out, hip[0] + reach * sinf(angle), m_lerpf(from[1], to[1], t),
               hip[2] + reach * cosf(angle));
}

/* Leg s on the floor: lying along it beyond the pelvis, or sitting with the foot on the floor
 * ahead of the hip and the knee up. */
static void
floor_leg(const struct body *b, int s, float *out_ankle, float *out_rotation, float *out_pole)
{
    const struct b_floor *f = &b->floor;
    const float y[3] = {0, 1, 0}, z[3] = {0, 0, 1};
    float axis[3], front[3];
    m_quat_rotate(f->hips_rotation, y, axis);
    m_quat_rotate(f->hips_rotation, z, front);
    const float *hip = b->pose.position_m[b->j.upper_leg[s]];
    const float ankle_y = b->ground_height_m + b->m.ankle_height_m;
    const float leg = b->m.leg_length_m;
    /* Lying: straight along the floor away from the head, toes where the front is. */
    float away[3] = {-axis[0], 0.0f, -axis[2]}, lie[3], lie_pole[3];
    float fallback[3] = {-front[0], 0.0f, -front[2]};
    m_vec3_normalize_or(fallback, z, fallback);
    m_vec3_normalize_or(away, fallback, away);
    m_vec3_muladd(hip, away, LYING_REACH_SHARE * leg, lie);
    lie[1] = ankle_y;
    float mid[3];
    m_vec3_lerp(hip, lie, 0.5f, mid);
    m_vec3_muladd(mid, front, POLE_M, lie_pole);
    /* Sitting: the foot on the floor ahead of the hip, the knee up. */
    float ahead[3] = {front[0], 0.0f, front[2]};
    m_vec3_normalize_or(ahead, z, ahead);
    float sit[3], sit_pole[3];
    m_vec3_muladd(hip, ahead, SIT_REACH_SHARE * leg, sit);
    sit[1] = ankle_y;
    m_vec3_muladd(hip, y, POLE_M, sit_pole);
    m_vec3_muladd(sit_pole, ahead, SIT_POLE_AHEAD_M, sit_pole);
    blend_about_hip(hip, sit, lie, f->lying, out_ankle);
    m_vec3_lerp(sit_pole, lie_pole, f->lying, out_pole);
    /* The foot: as at rest under the torso lying; sitting, pointing ahead. */
    float sit_rot[4];
    b_quat_from_yaw(atan2f(ahead[0], ahead[2]), sit_rot);
    m_quat_slerp(sit_rot, f->hips_rotation, f->lying, out_rotation);
    m_quat_normalize(out_rotation);
}

void
b_floor_estimate_feet(const struct body *b, struct b_feet_estimate *out)
{
    memset(out, 0, sizeof *out);
    const float share = b->floor.share;
    if (share <= 0.0f)
        return;
    for (int s = 0; s < 2; ++s) {
        floor_leg(b, s, out->at.ankle_m[s], out->at.foot_rotation[s], out->at.knee_pole_m[s]);
        out->ankle_confidence[s] = out->rotation_confidence[s] = share;
        out->knee_pole_confidence[s] = share;
    }
}

/* On the floor: lying on the back, the side or the front by where the torso's front
 * faces, or sitting on it. */
static enum body_posture
floor_posture(const struct body *b)
{
    if (b->floor.lying < 0.5f)
        return BODY_SITTING_ON_FLOOR;
    const float z[3] = {0, 0, 1};
    float front[3];
    m_quat_rotate(b->floor.hips_rotation, z, front);
    return front[1] > 0.5f    ? BODY_LYING_ON_BACK
           : front[1] < -0.5f ? BODY_LYING_ON_FRONT
                              : BODY_LYING_ON_SIDE;
}

enum body_posture
b_floor_classify(struct body *b, bool *out_by_motion)
{
    struct b_floor *f = &b->floor;
    *out_by_motion = false;
    const float hips = b_hips_height_share(b);
    const float head =
        (b->head_position_m[1] - b->ground_height_m) / fmaxf(b->m.head_height_m, 1e-3f);
    if (f->share > 0.5f)
        return floor_posture(b);
    if (b_prior_seated(b) > 0.5f)
        return BODY_SITTING; /* the prior's feet say a seat holds the body up */
    if (hips > STANDING_HIPS_SHARE) {
        /* Standing: the way down starts here. */
        m_vec3_copy(b->head_position_m, f->down_from_m);
        f->down_heading_rad = b->heading_rad;
        return BODY_STANDING;
    }
    if (head < SEAT_HEAD_SHARE)
        return BODY_CROUCHING; /* a squat: too low for a seat or upright knees */
    const bool told = b->posture == BODY_SITTING || b->posture == BODY_KNEELING;
    if (!told && fabsf(f->head_rise_m_s) > SETTLED_M_S)
        return BODY_CROUCHING; /* on the way down or up: not told yet */
    /* Kneeling upright, or sitting on a seat: the way down tells. Sitting down, the head
     * goes back with the hips; kneeling, it stays over the knees or goes forward. */
    const float back = head_gone_back_m(b);
    *out_by_motion = true;
    return back > SAT_BACK_PER_HEIGHT * b->desc.height_m ? BODY_SITTING : BODY_KNEELING;
}
