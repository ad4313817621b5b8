/*
 * One frame's fusion: the sources give estimates with confidences, and this step alone
 * turns them into the pelvis, heading, leg and neck targets the solve is built from.
 *
 * The sources, in order of trust: body trackers (b_trackers.c) measure bones; the floor
 * postures (b_floor.c) lay or sit the body on the floor when the head is lower than a
 * squat puts it (the learned prior never saw that); the learned prior (b_prior.c) infers
 * the pelvis's turn and tilt and the feet from the devices' recent motion; the seed
 * (b_seed.c) assumes the pelvis upright under the neck and steps the feet
 * after it. Each part of the body is the most trusted source's by
 * that source's confidence, the rest of the way the next one's, down to the seed, which
 * always speaks: with confidences c_t, c_p a part is c_t T + (1 - c_t)(c_p P + (1 - c_p) S).
 * A source that says nothing of a part (confidence 0) leaves it to those below; none is
 * computed and then overwritten.
 *
 * The pelvis is fused first, because every source places its feet under the pelvis the
 * body will have (a foot's reach, the knee's plane and the stepping's home are measured
 * from the hip joints).
 */
#include <math.h>
#include <string.h>

#include "b_internal.h"
#include "embody/m_math.h"

/* The pelvis's velocity is smoothed toward the frame's own at this rate (per second). */
#define VELOCITY_RATE_PER_S 10.0f

static void
fuse_rotation(float *io, const float *estimate, float confidence)
{
    m_quat_slerp(io, estimate, confidence, io);
    m_quat_normalize(io);
}

/* An estimate this far from the angle fused so far and more pulls less, none at half a
 * turn (fuse_angle). */
#define OPPOSITE_FADE_FROM_DEG 45.0f

/* An angle pulled toward a source's estimate by its confidence, the short way round. An
 * estimate nearly opposite says nothing of which way round to turn, and as the two pass
 * half a turn apart the short way changes side: pulled by a fixed share, the fused angle
 * jumped from one side to the other in a frame (a floor's yaw opposite the network's, a
 * player sitting back on the floor: the pelvis turned 64 degrees in a frame and the knees
 * with it, hdm05_tr_lieDownFloor_020, fold 4), so the pull fades out toward half a turn.
 * Faded only from 135 degrees, the network's pelvis turning from 134 to 163 degrees off
 * the seed's in a frame (leaning back to sit on the floor) took the fused yaw 80 degrees
 * round at once, the shoulders 37 cm (hdm05_bk_lieDownFloor_005, fold 2): the wider the
 * fade, the less such a step moves it. Lying down, four HDM05 folds summed (MPJPE cm, head
 * p99 cm, deg p95, hands off %, jitter x the person's; clips over the head's 2 cm, the
 * hands' and the jitter's contracts; the other kinds unchanged):
 *   a fixed share          14.03  -     5.0  2.42  9.77
 *   fading from 135        13.95  -     4.1  1.84  9.91  (then; with today's body:)
 *   fading from 135        13.92  2.13  3.9  1.45  4.79  10  1  13
 *   fading from 100        13.86  2.03  3.7  0.85  4.46   9  0  14
 *   fading from 75         13.83  1.94  3.8  0.46  4.27   7  0  14
 *   fading from 45         13.81  1.87  3.8  0.37  4.18   5  0  14
 *   fading from 0          13.80  1.81  3.7  0.29  4.20   4  0  15
 *   from 45, with the yaw as a twist (split_yaw, taken)
 *                          13.80  1.90  3.7  0.32  3.98   6  0  13
 *   a source of confidence 1 taken whole (from 135): 13.99  2.21  4.8  1.92  4.95: the
 *   network's pelvis in such a frame is worse than the seed's it was faded toward.
 * The public clips and both labs' folds are the same to 0.01 cm. */
static float
fuse_angle(float angle_rad, float estimate_rad, float confidence)
{
    const float d = m_angle_wrap(estimate_rad - angle_rad);
    const float fade = m_smoothstep(M_PI_F, OPPOSITE_FADE_FROM_DEG * M_DEG_TO_RAD, fabsf(d));
    return m_angle_wrap(angle_rad + confidence * fade * d);
}

/* A rotation as its turn about the vertical and the tilt after it: q = yaw(yaw) * tilt. The
 * turn is the rotation's twist about the vertical (its swing-twist split), which a pelvis
 * lying or folded forward has as well as an upright one; the way its front points over the
 * floor (b_yaw_of) is undefined with the front along the vertical and turned 30 degrees in a
 * frame as the network's pelvis leaned back through it (fuse_angle's table). */
static void
split_yaw(const float *q, float *out_yaw_rad, float *out_tilt)
{
    float yaw[4];
    const float twist = q[1] * q[1] + q[3] * q[3];
    *out_yaw_rad = twist > 1e-8f ? m_angle_wrap(2.0f * atan2f(q[1], q[3])) : b_yaw_of(q, 0.0f);
    b_quat_from_yaw(*out_yaw_rad, yaw);
    m_quat_mul_conj_first(yaw, q, out_tilt);
    m_quat_normalize(out_tilt);
}

/* split_yaw's inverse: yaw(yaw_rad) * tilt (not renormalised). */
static void
join_yaw(float yaw_rad, const float *tilt, float *out_q)
{
    b_quat_from_yaw(yaw_rad, out_q);
    m_quat_mul(out_q, tilt, out_q);
}

/* `io_velocity` smoothed toward the velocity from `from` to `to` over dt_s. */
static void
smooth_velocity(const float *from, const float *to, float dt_s, float *io_velocity)
{
    float v[3];
    m_vec3_sub(to, from, v);
    m_vec3_scale(v, 1.0f / dt_s, v);
    m_vec3_lerp(io_velocity, v, fminf(1.0f, VELOCITY_RATE_PER_S * dt_s), io_velocity);
}

/* How much the network bends the back: its back's confidence, less by the floor's share
 * (the floor lays the back itself). The back target's weight in the solve (fuse_back), and
 * the spine's slack (keep_within_reach_of_neck). */
static float
back_weight(const struct body *b, const struct b_torso_estimate *prior)
{
    return prior->back_bend_confidence * (1.0f - b_floor_share(b));
}

/* As far as the network bends the back (the prior's back confidence, BACK_PRIOR_SHARE,
 * less by the floor's share: the back target's weight, fuse_back), the spine is given
 * this share of its length as slack: held at its full length from the pelvis, the neck
 * (and the head) could only be reached with the back straight, and the bend the solve
 * gives the spine left the head short of its headset by up to 3 cm all through a person's
 * squats (hdm05_mm_squat1Reps_037, fold 3). HDM05's people through v8's folds: the
 * transitions (head p99 mean cm and clips over 2 cm, of 119; the squats', of 40), MPJPE
 * (known / height only, HDM05's people; CMU's, cm) and the head of a hand raised above it
 * (test_arms.c, mm from the headset; held to 5):
 *   0 (before)    1.63, 41; 1.74, 16   9.31 / 9.73, 10.63 / 11.00   0.6
 *   0.02          1.52, 27; 1.54,  5                                2.6
 *   0.03 (taken)  1.47, 24; 1.47,  4   9.29 / 9.74, 10.61 / 11.01   4.2
 *   0.04          1.45, 22; 1.39,  4   9.29 / 9.75, 10.62 / 11.02   5.8
 *   0.06          1.50, 22; 1.31,  4
 * A slack taken from the back target's own bend (the chord of the bent spine) changed
 * nothing (41 clips): the spine bends for the head's turn and the neck too. A slack on
 * every body, the seed's too, cost the public clips' procedural body 0.05 cm height
 * only; with the network's alone the prior's there went 8.67 -> 8.70 cm (8.37 known). */
#define SPINE_SLACK_SHARE 0.03f

/* The head joint is the headset's, exactly, and the neck joint where the seed's torso puts
 * it below the head (b_seed_estimate_torso: the head's offset turned by a share of the headset's
 * turn): a pelvis farther from that neck than the spine reaches stretched straight (a seed
 * sitting back in a deep squat, a network's guess of a body ducking) leaves the head short
 * of the headset whatever the solve does. Such a pelvis is drawn toward the neck to that
 * reach, along the line between them, by `share`: a pelvis a body tracker measures stays
 * where it is (the solve then shares out the difference). Bounds tried on three folds of
 * people left out, with the contact thresholds then 0.65 and 0.45 (b_prior.c; known body
 * MPJPE; the squat's head from the headset, posture table; reachable misses on the ducking
 * run cmu_127_31): none 10.43 cm, 8.6 cm, 48.6 %; the head within the spine and neck
 * stretched straight 10.43, 6.4, 50.6 %; 0.97 of that 10.45 (walks 0.2 cm worse); the
 * neck within the spine's length (taken) 10.44, 2.5, 38.1 %; 1.05 of it 10.44, 3.8. */
static void
keep_within_reach_of_neck(const struct body *b, const float *neck_m, float share,
                          float back_bend, float *io_position)
{
    const float reach = b->m.hips_to_neck_m * (1.0f - SPINE_SLACK_SHARE * back_bend);
    float d[3];
    m_vec3_sub(io_position, neck_m, d);
    const float distance = m_vec3_length(d);
    if (distance > reach)
        m_vec3_muladd(io_position, d, share * (reach - distance) / distance, io_position);
}

/* The other bound: a spine bends, but a person's head comes little nearer the hips than
 * it is standing (the HDM05 people lying down and getting up: no nearer than 0.94 of it). A
 * pelvis nearer the head joint than NETWORK_HEAD_CLEARANCE_SHARE of that (where the network
 * places the pelvis) leaves the head short of
 * the headset whatever the solve does (a pelvis held on the floor while the head lies back
 * past it: 33 cm off). Such a pelvis is pushed away from the head along the line between
 * them, by `share` (a tracker's pelvis stays): the legs give, not the head. Where that
 * would take the hips under the floor (a head low over a pelvis on the floor), it goes
 * along the floor instead, away from the head (behind the body when it is right under it).
 * The floor's postures get no exemption: as a body rolled onto the floor, the pelvis they
 * lay came within 26 cm of the head and left it 30 cm off its headset. Chosen on four
 * folds of people left out across both labs (body-prior-v7's recipe, each fold's model on
 * its people; the neck weight below, the pelvis bound then 20 degrees; MPJPE known / height only on
 * HDM05's people; the transitions' head p99 mean and clips over 2 cm of 119, lying down's
 * head p99 and MPJPE, jitter ratio):
 *   0.9, less by the floor's share (before)  9.90 / 10.73  4.32 cm, 46  21.01 cm, 20.73  11.26x
 *   0.9                                      9.91 / 10.75  2.50 cm, 46   7.53 cm, 21.02  11.28x
 *   0.93                                     9.91 / 10.74  1.80 cm, 36   4.67 cm, 21.09  11.66x
 *   0.95 (taken)                             9.92 / 10.74  1.48 cm, 22   3.17 cm, 21.19  11.61x
 *   0.97                                     9.94 / 10.75  1.36 cm, 17   2.69 cm, 21.33  12.09x
 * (CMU's people 10.68 to 10.69 known throughout; the public clips 8.60 to 8.61.) */
#define NETWORK_HEAD_CLEARANCE_SHARE 0.95f
/* The seed's (the procedural body, and every body before the network's first prediction)
 * keeps what it had, less by the floor's share: 0.9 (0.85 10.2 cm, 0.95 4.5 on the lie-down
 * head p99 then; the procedural body's figures stay as they were). */
#define SEED_HEAD_CLEARANCE_SHARE 0.9f

static void
keep_clear_of_head(const struct body *b, const float *rotation, float clearance_share,
                   float share, float *io_position)
{
    const float(*rest)[3] = (const float(*)[3])b->skeleton.rest_position_m;
    const float clearance = clearance_share * m_vec3_distance(rest[b->j.hips], rest[b->j.head]);
    const float *head = b->head_position_m;
    float d[3];
    m_vec3_sub(io_position, head, d);
    const float distance = m_vec3_length(d);
    if (!(share > 0.0f) || distance >= clearance)
        return;
    float q[3];
    if (distance > 1e-4f)
        m_vec3_muladd(io_position, d, (clearance - distance) / distance, q);
    else
        m_vec3_set(q, head[0], head[1] - clearance, head[2]);
    float lowest = -INFINITY;
    for (int s = 0; s < 2; ++s) {
        float hip[3];
        m_quat_rotate(rotation, b->m.hip_offset_m[s], hip);
        lowest = fmaxf(lowest, b->ground_height_m - hip[1]);
    }
    if (q[1] < lowest) {
        q[1] = lowest;
        const float dy = lowest - head[1];
        const float run = sqrtf(fmaxf(0.0f, clearance * clearance - dy * dy));
        float level[3] = {d[0], 0.0f, d[2]};
        const float behind[3] = {-sinf(b->heading_rad), 0.0f, -cosf(b->heading_rad)};
        m_vec3_normalize_or(level, behind, level);
        q[0] = head[0] + level[0] * run;
        q[2] = head[2] + level[2] * run;
    }
    m_vec3_lerp(io_position, q, share, io_position);
}

/* The spine bends only so far from the pelvis: a pelvis facing up while the head lies
 * beside it (a pelvis pushed clear of the head, or one the sources stood upright under a
 * head lying back) leaves the solve a back it cannot bend, and the head short. The pelvis
 * is turned, by the shortest arc, until the line to the head joint is within this of its
 * own up axis (the rest spine's direction): SEED_PELVIS_HEAD_MAX_DEG for the seed's and
 * the floor's pelvis, NETWORK_PELVIS_HEAD_MAX_DEG as far as the network tilts it. A
 * network's pelvis tilted back in a squat while the torso leans forward left the head 2 to
 * 4 cm under the headset; turned too far toward a head that ducks, it swings with it (the
 * legs shake and skate). Chosen on four folds of people left out across both labs
 * (body-prior-v7's recipe, each fold's model on its own people; with the neck's weight and
 * the head's clearance below; MPJPE known / height only, HDM05's people then CMU's; the
 * transitions' head p99 mean and clips over 2 cm of 119; CMU folds 1 and 2 (05,127 and
 * 14,49): the worst clip's jitter over the person's, foot skate cm/frame):
 *   45 deg, neck weight 1, clearance 0.9 less on the floor (before)
 *                 9.90 / 10.74, 10.70 / 11.32  4.87 cm, 78
 *   45            -                            -             20.2x, 2.86x  1.683, 0.516
 *   30 (taken)    9.90 / 10.74, 10.69 / 11.32  1.69 cm, 47   26.1x, 3.03x  1.697, 0.520
 *   25            9.90 / 10.74, 10.69 / 11.32  1.55 cm, 20   25.0x, 3.50x  1.716, 0.523
 *   20            9.92 / 10.74, 10.68 / 11.32  1.48 cm, 22   25.2x, 4.04x  1.717, 0.537
 * 25 and 20 hold the head on more crouches but shake a person who ducks (fold 2's worst
 * clip over 3x; the public clips, which showed it first and chose nothing: the ducking run cmu_127_31 4.0x
 * against 1.5x at 30, and the foot skate 0.54 against 0.50 cm/frame). The seed's keeps
 * 45: its pelvis stands under the neck, and 20 cost the procedural body 0.5 to 0.8 cm on
 * that ducking run. */
#define SEED_PELVIS_HEAD_MAX_DEG 45.0f
#define NETWORK_PELVIS_HEAD_MAX_DEG 30.0f

static void
turn_pelvis_toward_head(const struct body *b, const float *position, float share,
                        float network_share, float *io_rotation)
{
    const float(*rest)[3] = (const float(*)[3])b->skeleton.rest_position_m;
    float up_rest[3], up[3], to_head[3];
    m_vec3_sub(rest[b->j.head], rest[b->j.hips], up_rest);
    const float y[3] = {0, 1, 0};
    m_vec3_normalize_or(up_rest, y, up_rest);
    m_quat_rotate(io_rotation, up_rest, up);
    m_vec3_sub(b->head_position_m, position, to_head);
    if (!(share > 0.0f) || m_vec3_length(to_head) < 1e-3f)
        return;
    m_vec3_normalize_or(to_head, up, to_head);
    const float angle = acosf(m_clampf(m_vec3_dot(up, to_head), -1.0f, 1.0f));
    const float limit =
        m_lerpf(SEED_PELVIS_HEAD_MAX_DEG, NETWORK_PELVIS_HEAD_MAX_DEG, network_share) * M_DEG_TO_RAD;
    if (angle <= limit)
        return;
    float axis[3], turn[4];
    m_vec3_cross(up, to_head, axis);
    if (m_vec3_length(axis) < 1e-4f)
        return;
    m_vec3_normalize_or(axis, y, axis);
    m_quat_from_axis_angle(axis, share * (angle - limit), turn);
    m_quat_mul(turn, io_rotation, io_rotation);
    m_quat_normalize(io_rotation);
}

/* No hip joint under the floor: the fused pelvis (its rotation given) is raised until both
 * are on it. The floor postures keep their own pelvis's hips above it, but on the way down
 * a pelvis blended from theirs and the others', turned with the smoothed one, put a wide
 * pelvis's lower hip joint 2 cm under the floor for two frames (cmu_91_04's skeleton lying
 * down on its back, test_postures). */
static void
keep_hips_above_floor(const struct body *b, const float *rotation, float *io_position)
{
    for (int s = 0; s < 2; ++s) {
        float hip[3];
        m_quat_rotate(rotation, b->m.hip_offset_m[s], hip);
        io_position[1] = fmaxf(io_position[1], b->ground_height_m - hip[1]);
    }
}

/* A source's pelvis rotation fused as its turn about the vertical and the tilt after it,
 * each by its own confidence. */
static void
fuse_yaw_and_tilt(const struct b_pelvis_estimate *e, float *io_yaw_rad, float *io_tilt)
{
    float e_yaw, e_tilt[4];
    split_yaw(e->rotation, &e_yaw, e_tilt);
    if (e->yaw_confidence > 0.0f)
        *io_yaw_rad = fuse_angle(*io_yaw_rad, e_yaw, e->yaw_confidence);
    if (e->tilt_confidence > 0.0f)
        fuse_rotation(io_tilt, e_tilt, e->tilt_confidence);
}

/* The floor's rotation of a lying pelvis against the one fused so far (the network's): two
 * pelvises a quarter turn and more apart (one lying face down, the other on its back) are
 * not both partly right, and a blend of them by the floor's share is a pelvis neither
 * says, which swung over from one side to the other as the two turned past each other
 * (the torso and shoulders 0.3 m a frame, hdm05_bk_lieDownFloor_007, fold 2). On the
 * floor the floor's posture knows lying best (the head says which way the face is), so
 * its confidence rises to 1 as they part from FLOOR_OVERRIDES_FROM_DEG to 60 degrees
 * beyond. Lying down, four HDM05 folds summed (MPJPE cm, head p99 cm, hands off %, jitter
 * x the person's; clips over the head's, the hands' and the jitter's contracts; the other
 * kinds unchanged):
 *   never (before)   13.93  2.53  1.86  5.15  11  2  13
 *   from 120         13.93  2.53  1.75  5.07  11  1  13
 *   from 90 (taken)  13.92  2.52  1.45  4.83  12  1  13
 *   from 60          13.92  2.50  1.49  4.81  12  1  15
 *   from 45          13.92  2.50  1.45  4.68  12  1  14 */
#define FLOOR_OVERRIDES_FROM_DEG 90.0f

static float
floor_lying_confidence(const float *fused, const struct b_pelvis_estimate *floor)
{
    const float dot = fminf(1.0f, fabsf(m_quat_dot(fused, floor->rotation)));
    const float apart = 2.0f * acosf(dot) * M_RAD_TO_DEG;
    const float w = m_smoothstep(FLOOR_OVERRIDES_FROM_DEG, FLOOR_OVERRIDES_FROM_DEG + 60.0f, apart);
    return floor->tilt_confidence + (1.0f - floor->tilt_confidence) * w;
}

/* The floor's pelvis (b_floor.c): as the others' while the torso is up, and as one
 * rotation (slerped by its confidence from the rotation fused so far) as far as it lies
 * (b_floor_lying). A pelvis lying on its back or front has its front along the vertical,
 * where its turn about the vertical (split_yaw) is undefined and jumps with every wobble:
 * the floor's yaw and tilt blended apart from the network's, each split at such a jump,
 * rolled the fused pelvis onto its side and over (hdm05_bk_lieDownFloor_008, fold 2: its
 * left axis from -0.98 to +0.96 up in one frame while the floor's lay flat, a shoulder
 * 14 cm under the floor). A torso that is up has no such jump, and there the split keeps
 * the squats as they were (fused as one rotation at every share, a deep squat's floor
 * share shook hdm05_tr_squat1Reps_045 half as much again: jitter 21.6 -> 31.2x). */
static void
fuse_floor_rotation(const struct body *b, const struct b_pelvis_estimate *floor,
                    float *io_yaw_rad, float *io_tilt)
{
    if (!(b_floor_lying(b) > 0.0f)) {
        fuse_yaw_and_tilt(floor, io_yaw_rad, io_tilt);
        return;
    }
    float before[4], upright[4], lying[4];
    join_yaw(*io_yaw_rad, io_tilt, before);
    fuse_yaw_and_tilt(floor, io_yaw_rad, io_tilt);
    join_yaw(*io_yaw_rad, io_tilt, upright);
    m_quat_copy(before, lying);
    fuse_rotation(lying, floor->rotation, floor_lying_confidence(lying, floor));
    if (m_quat_dot(upright, lying) < 0.0f)
        m_quat_set(lying, -lying[0], -lying[1], -lying[2], -lying[3]);
    fuse_rotation(upright, lying, b_floor_lying(b));
    split_yaw(upright, io_yaw_rad, io_tilt);
}

/* The sources' pelvis estimates, from the seed up, into the body's pelvis, heading and
 * velocity; the pelvis within reach of the seed's neck (`out_seed_torso`, made here once
 * the heading is known). */
static void
fuse_pelvis(struct body *b, const struct b_pelvis_estimate *est,
            const struct b_torso_estimate *prior_torso, float dt_s,
            struct b_torso_estimate *out_seed_torso)
{
    float position[3], yaw_rad, tilt[4], heading_rad;
    const struct b_pelvis_estimate *seed = &est[B_SOURCE_SEED];
    m_vec3_copy(seed->position_m, position);
    split_yaw(seed->rotation, &yaw_rad, tilt);
    heading_rad = seed->heading_rad;
    for (int src = B_SOURCE_SEED - 1; src >= 0; --src) {
        const struct b_pelvis_estimate *e = &est[src];
        if (e->position_confidence > 0.0f)
            m_vec3_lerp(position, e->position_m, e->position_confidence, position);
        if (src == B_SOURCE_FLOOR && e->tilt_confidence > 0.0f)
            fuse_floor_rotation(b, e, &yaw_rad, tilt);
        else if (e->yaw_confidence > 0.0f || e->tilt_confidence > 0.0f)
            fuse_yaw_and_tilt(e, &yaw_rad, tilt);
        if (e->heading_confidence > 0.0f)
            heading_rad = fuse_angle(heading_rad, e->heading_rad, e->heading_confidence);
    }
    b->heading_rad = heading_rad;
    float upright[4];
    b_floor_upright(b, upright);
    b_seed_estimate_torso(b, upright, out_seed_torso);
    keep_within_reach_of_neck(b, out_seed_torso->neck_m,
                              1.0f - est[B_SOURCE_TRACKERS].position_confidence,
                              back_weight(b, prior_torso), position);
    float rotation[4];
    join_yaw(yaw_rad, tilt, rotation);
    m_quat_normalize(rotation);
    const bool network = est[B_SOURCE_PRIOR].position_confidence > 0.0f;
    const float untracked = 1.0f - est[B_SOURCE_TRACKERS].position_confidence;
    keep_clear_of_head(b, rotation,
                       network ? NETWORK_HEAD_CLEARANCE_SHARE : SEED_HEAD_CLEARANCE_SHARE,
                       network ? untracked : untracked * (1.0f - b_floor_share(b)), position);
    /* How much of the tilt is the network's: what the trackers and the floor leave it. */
    const float network_tilt = est[B_SOURCE_PRIOR].tilt_confidence *
                               (1.0f - est[B_SOURCE_FLOOR].tilt_confidence) *
                               (1.0f - est[B_SOURCE_TRACKERS].tilt_confidence);
    turn_pelvis_toward_head(b, position, 1.0f - est[B_SOURCE_TRACKERS].tilt_confidence,
                            network_tilt, rotation);
    keep_hips_above_floor(b, rotation, position);
    if (b->pelvis_started && dt_s > 0.0f) {
        smooth_velocity(b->hips_position_m, position, dt_s, b->body_velocity_m_s);
        smooth_velocity(b->seed_hips_m, seed->position_m, dt_s, b->seed_velocity_m_s);
    }
    m_vec3_copy(seed->position_m, b->seed_hips_m);
    m_vec3_copy(position, b->hips_position_m);
    m_quat_copy(rotation, b->hips_rotation);
    b->pelvis_started = true;
}

/* The sources' leg targets, from the seed up: the ankles and the feet's turn first, then
 * the knees' planes about the fused hip-ankle lines. */
static void
fuse_feet(struct body *b, const struct b_feet_estimate *est, struct b_leg_targets *out)
{
    *out = est[B_SOURCE_SEED].at;
    for (int src = B_SOURCE_SEED - 1; src >= 0; --src) {
        const struct b_feet_estimate *e = &est[src];
        for (int s = 0; s < 2; ++s) {
            if (e->ankle_confidence[s] > 0.0f)
                m_vec3_lerp(out->ankle_m[s], e->at.ankle_m[s], e->ankle_confidence[s],
                            out->ankle_m[s]);
            if (e->rotation_confidence[s] > 0.0f)
                fuse_rotation(out->foot_rotation[s], e->at.foot_rotation[s],
                              e->rotation_confidence[s]);
        }
    }
    for (int src = B_SOURCE_SEED - 1; src >= 0; --src)
        for (int s = 0; s < 2; ++s)
            if (est[src].knee_pole_confidence[s] > 0.0f)
                b_blend_pole(b->pose.position_m[b->j.upper_leg[s]], out->ankle_m[s],
                             out->knee_pole_m[s], est[src].at.knee_pole_m[s],
                             est[src].knee_pole_confidence[s], out->knee_pole_m[s]);
}

/* The controllers speak for the neck too: a hand beyond the arm's reach from the
 * shoulder this neck would carry (the skeleton's rest offset turned with the fused
 * pelvis) draws the neck toward it, level (the head holds its height), by
 * NECK_REACH_SHARE of the shortfall over NECK_REACH_ROUNDS rounds, so two hands pulling
 * apart settle between them instead of one drawing the other's shoulder out of reach. The
 * torso then leans toward an arm held out before the shoulder pull (b_arms.c) has to drag
 * it; less by a chest tracker's weight and the floor's posture's share, which hold the
 * chest themselves. Chosen on three folds of people left out (known / height only: MPJPE
 * cm, mean share of frames with a hand more than 2 cm from its controller, clips above 1
 * %, of 112):
 *   none                                        10.05 / 10.66  1.54 / 0.70 %  30 / 12
 *   the offset as last posed, one round of 0.5  10.05 / 10.67  1.44 / 0.58 %  26 / 12
 *   the same, four rounds                       10.07 / 10.71  1.32 / 0.49 %  22 / 6
 *   (the last posed offset fed the last frame's torso back: a public clip's sensitivity
 *   to 1e-5 m of noise rose to 25 mm, and the vertical part, a neck drawn down toward a
 *   hand hanging low, left that clip's hands off on 2 to 5 % of frames, 0.2 before)
 *   rest offset, level, four rounds of 0.5      10.02 / 10.65  0.88 / 0.44 %  23 / 8
 *   the same, 0.3 / 0.7 / one round             10.02 / 10.64, 10.03 / 10.65, 10.03 / 10.64;
 *                                               0.89 / 0.51, 0.83 / 0.43, 1.03 / 0.50 % */
#define NECK_REACH_SHARE 0.5f
#define NECK_REACH_ROUNDS 4

static void
draw_neck_toward_hands(struct body *b)
{
    /* Not where something else holds the chest: a chest tracker (the shoulders do not
     * follow the neck target there) or the floor's posture (level is along the floor). */
    const float share = NECK_REACH_SHARE * (1.0f - b->trackers.weight[EM_TRACKER_CHEST]) *
                        (1.0f - b_floor_share(b));
    if (!(share > 0.0f))
        return;
    const float reach = b->m.upper_arm_m + b->m.lower_arm_m;
    float offset[2][3];
    for (int s = 0; s < 2; ++s) {
        float d[3];
        m_vec3_sub(b->skeleton.rest_position_m[b->j.upper_arm[s]],
                   b->skeleton.rest_position_m[b->j.neck], d);
        m_quat_rotate(b->hips_rotation, d, offset[s]);
    }
    /* A controller speaks by how far it is tracked: a lost one's hand hangs at the side of
     * a body it does not place (on a first frame, at a pelvis not yet placed). */
    float said[2];
    for (int s = 0; s < 2; ++s) /* eased, as the hand's own blend (b_devices.c) */
        said[s] = share * m_ease(b->track[EM_DEVICE_LEFT_HAND + s].blend);
    for (int round = 0; round < NECK_REACH_ROUNDS; ++round) {
        float move[3] = {0.0f, 0.0f, 0.0f};
        for (int s = 0; s < 2; ++s) {
            float shoulder[3], to_hand[3];
            m_vec3_add(b->neck_target_m, offset[s], shoulder);
            m_vec3_sub(b->hand_position_m[s], shoulder, to_hand);
            const float distance = m_vec3_length(to_hand);
            if (distance > reach)
                m_vec3_muladd(move, to_hand, said[s] * (distance - reach) / distance, move);
        }
        move[1] = 0.0f;
        m_vec3_add(b->neck_target_m, move, b->neck_target_m);
    }
}

/* The chest joint at its share of the way from the pelvis to the neck target, bent as the
 * prior says (the seed says nothing of the back: the solve bends it between pelvis and
 * neck as it can). Pulled by the prior's confidence; on the floor less, by the floor's
 * share: it lays the back along the floor itself. (The body trackers' solver bends its
 * chest target the same way, a chest tracker's weight taking over: b_trackers.c.) */
static void
fuse_back(struct body *b, const struct b_torso_estimate *prior)
{
    m_vec3_lerp(b->hips_position_m, b->neck_target_m, b->m.chest_fraction, b->back_target_m);
    m_vec3_add(b->back_target_m, prior->back_bend_m, b->back_target_m);
    b->back_weight = back_weight(b, prior);
}

/* The sources' necks, from the seed up, into the neck target, drawn toward hands out of
 * reach (draw_neck_toward_hands). On the floor the seed's
 * neck (laid along the floor's frame, b_floor_upright) is the floor's too: the prior
 * never saw a body there. Body trackers place the chest themselves (b_trackers.c). */
/* The neck's target speaks in the solve with weight 1 while the seed makes it (it hangs
 * it from the head by the skeleton's own neck: it never pulls against the head upright),
 * with FLOOR_NECK_WEIGHT as far as the floor does, and with NETWORK_NECK_WEIGHT as far as
 * the network moves it: a network's neck an
 * average person's distance from the head pulled the head joint off the headset by half
 * the difference (FABRIK averages the two pulls). The head is the contract; the neck gives.
 * Chosen on the folds with a 20 degree pelvis bound and the clearance then 0.9 (known /
 * height only on HDM05's people, CMU's; head p99 mean): weight 1 9.91 / 10.73, 10.69 /
 * 11.30, 5.07 cm; 0.3 9.90 / 10.74, 10.69 / 11.34, 4.33 cm; 0.1 9.95 / 10.82, 10.76 /
 * 11.46, 4.60 cm; 0 (no neck target) 10.12 / 11.07, 11.11 / 11.74, 4.64 cm. */
#define NETWORK_NECK_WEIGHT 0.3f
/* On the floor the same neck, hung from a head lying back or turned, is one the spine's
 * limits often cannot give together with the head's turn: at weight 1 it pulled the head
 * 3 to 5 cm off its headset with the body lying still (hdm05_bd_lieDownFloor_001, fold
 * 1). The floor's posture lays the pelvis and the torso's frame itself; its neck only
 * leans the spine. Lying down, four HDM05 folds summed (MPJPE cm, head p99 cm, deg p95,
 * hands off %, lowest cm, jitter x; clips over the head's and the floor's contracts; the
 * squats' head p99 1.81 -> 1.80 cm and jitter 7.44 -> 7.43x, the other kinds and the
 * public clips unchanged; the synthetic sitting on the floor's head 0.5 to 1.2 -> 0.1 cm):
 *   1 (before)  20.82  3.73  14.4  6.70  -7.1  66.1  16   8
 *   0.3         20.81  3.16  14.1  6.71  -6.2  66.3  16   8
 *   0.2         20.82  3.04  14.1  6.70  -5.9  66.3  16   9
 *   0.1 (taken) 20.82  2.91  14.0  6.69  -6.3  66.3  16   9
 *   0.05        20.83  2.84  14.1  6.74  -6.6  66.1  14   9
 *   0           20.87  2.82  14.4  6.74  -7.0  66.1  13  10 */
#define FLOOR_NECK_WEIGHT 0.1f

static void
fuse_torso(struct body *b, struct b_torso_estimate *est)
{
    est[B_SOURCE_FLOOR] = est[B_SOURCE_SEED];
    est[B_SOURCE_FLOOR].neck_confidence = b_floor_share(b);
    m_vec3_copy(est[B_SOURCE_SEED].neck_m, b->neck_target_m);
    for (int src = B_SOURCE_SEED - 1; src >= B_SOURCE_FLOOR; --src)
        if (est[src].neck_confidence > 0.0f)
            m_vec3_lerp(b->neck_target_m, est[src].neck_m, est[src].neck_confidence,
                        b->neck_target_m);
    const float network_neck =
        (est[B_SOURCE_PRIOR].neck_confidence > 0.0f ? 1.0f : 0.0f) * (1.0f - b_floor_share(b));
    b->neck_weight = m_lerpf(1.0f, NETWORK_NECK_WEIGHT, network_neck);
    b->neck_weight = m_lerpf(b->neck_weight, FLOOR_NECK_WEIGHT, b_floor_share(b));
    draw_neck_toward_hands(b);
    fuse_back(b, &est[B_SOURCE_PRIOR]);
}

/* The skeleton carried with the fused pelvis (a warm start for the solve, and the hip
 * joints the feet are placed from). */
static void
carry_skeleton(struct body *b)
{
    m_vec3_copy(b->hips_position_m, b->pose.position_m[b->j.hips]);
    m_quat_copy(b->hips_rotation, b->pose.local_rotation[b->j.hips]);
    sk_pose_forward_kinematics(&b->pose, &b->skeleton);
}

void
b_fuse_frame(struct body *b, const struct em_tracking_frame *frame, float dt_s)
{
    struct b_pelvis_estimate pelvis[B_SOURCE_COUNT];
    struct b_torso_estimate torso[B_SOURCE_COUNT];
    b_seed_estimate_pelvis(b, dt_s, &pelvis[B_SOURCE_SEED]);
    b_prior_estimate_pelvis(b, frame, dt_s, &pelvis[B_SOURCE_SEED], &pelvis[B_SOURCE_PRIOR],
                            &torso[B_SOURCE_PRIOR]);
    b_floor_estimate_pelvis(b, dt_s, &pelvis[B_SOURCE_FLOOR]);
    b_trackers_estimate_pelvis(b, dt_s, &pelvis[B_SOURCE_TRACKERS]);
    fuse_pelvis(b, pelvis, &torso[B_SOURCE_PRIOR], dt_s, &torso[B_SOURCE_SEED]);
    carry_skeleton(b);
    /* The trackers' feet first: a foot they hold, the seed does not step. */
    struct b_feet_estimate feet[B_SOURCE_COUNT];
    struct b_held_foot held[2];
    b_trackers_estimate_feet(b, &feet[B_SOURCE_TRACKERS], held);
    b_seed_estimate_feet(b, dt_s, held, b_floor_share(b), &feet[B_SOURCE_SEED]);
    b_prior_estimate_feet(b, dt_s, &feet[B_SOURCE_PRIOR]);
    b_floor_estimate_feet(b, &feet[B_SOURCE_FLOOR]);
    fuse_feet(b, feet, &b->legs);
    fuse_torso(b, torso);
}
