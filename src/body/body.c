/*
 * The body: setup, the per-frame pipeline and calibration (include/embody/body.h).
 *
 * Per frame (body_update; the stages and their files: b_internal.h): the devices
 * (b_devices.c: filtered bone targets, the devices' and trackers' states; bad samples are
 * losses) -> one fusion step (b_fuse.c): the sources' estimates with confidences (the
 * seed: b_seed.c; the learned prior: b_prior.c; the floor postures: b_floor.c; body
 * trackers: b_trackers.c) fused into the pelvis, heading, torso and leg targets, the
 * skeleton carried by the new pelvis -> the tree FABRIK solve with limits of the torso
 * (spine, neck, head; a shoulder pulled toward a hand out of reach) -> the limbs in closed
 * form (b_limbs.c: the arms, b_arms.c, and the legs) -> the posture shown (b_floor.c).
 */
#include <stdlib.h>
#include <string.h>

#include "b_internal.h"
#include "embody/m_math.h"
#include "util/u_path.h"

/* Ankle joint centre above the floor, as a share of standing height (anthropometric
 * tables put the malleolus near 4 %; the joint centre is a little higher). */
#define ANKLE_HEIGHT_PER_STATURE 0.045f
#define DEFAULT_MIN_CUTOFF_HZ 3.0f
#define DEFAULT_BETA 8.0f
#define DEFAULT_LOSS_BLEND_S 0.3f
#define DEFAULT_GRIP_PALM_FRACTION 0.5f
/* The torso's solve (head, neck, a shoulder pulled toward a hand out of reach) is cheap,
 * and a coarse tolerance lets it stick and slip: on ../shared/mocap-train (embody eval,
 * learned prior) known-body jitter 1086 m/s^3 at 2 mm, 1079 at 0.5 mm, update median
 * alike. */
#define IK_TOLERANCE_M 0.0005f
#ifndef IK_MAX_ITERATIONS
#define IK_MAX_ITERATIONS 12
#endif
/* A group whose targets it cannot all reach stops once its worst residual gains less
 * than this in two iterations, instead of creeping for all its iterations. The arms are
 * built exactly after the solve, which only needs to place the torso. On
 * ../shared/mocap-train (embody eval, learned prior), 0.5 and 1 mm: known-body MPJPE 8.96
 * and 8.96 cm, mean reachable misses 5.13 and 5.15 %, sensitivity max 8.1 and 7.6 mm; on
 * the public clips 3.96 and 3.31 iterations per solve (0.1 mm, with the clavicles then
 * turned a share toward the hands: 29.2 mm sensitivity max on mocap-train, 3.66
 * iterations). */
#define IK_STALL_M 0.001f
/* A foot whose lowest part is this far above the ground is in the air, whatever holds it
 * (the HUD says "planted" only of a foot on the ground). */
#define PLANTED_MAX_LIFT_M 0.06f
/* Where soft reach begins, as a share of the leg's length (reachable_foot). */
#define SOFT_REACH_START 0.94f

static bool
quat_is_zero(const float *q)
{
    return q[0] == 0.0f && q[1] == 0.0f && q[2] == 0.0f && q[3] == 0.0f;
}

static void
resolve_offsets(struct body_device_offsets *o)
{
    if (o->head_position_m[0] == 0.0f && o->head_position_m[1] == 0.0f &&
        o->head_position_m[2] == 0.0f)
        m_vec3_set(o->head_position_m, 0.0f, 0.08f, 0.09f);
    if (quat_is_zero(o->head_rotation))
        m_quat_set(o->head_rotation, 0.0f, 1.0f, 0.0f, 0.0f); /* diag(-1, 1, -1) */
    if (o->grip_palm_fraction == 0.0f)
        o->grip_palm_fraction = DEFAULT_GRIP_PALM_FRACTION;
    /* Grip axes in the hand's frame (PROTOCOL.md section 2): columns +X, +Y, +Z. */
    if (quat_is_zero(o->grip_rotation[0])) {
        const float x[3] = {0, -1, 0}, y[3] = {-1, 0, 0}, z[3] = {0, 0, -1};
        m_quat_from_columns(x, y, z, o->grip_rotation[0]);
    }
    if (quat_is_zero(o->grip_rotation[1])) {
        const float x[3] = {0, 1, 0}, y[3] = {1, 0, 0}, z[3] = {0, 0, -1};
        m_quat_from_columns(x, y, z, o->grip_rotation[1]);
    }
    m_quat_normalize(o->head_rotation);
    m_quat_normalize(o->grip_rotation[0]);
    m_quat_normalize(o->grip_rotation[1]);
}

static enum em_result
resolve_desc(const struct body_desc *in, struct body_desc *out, struct em_error *err)
{
    *out = *in;
    const struct body_device_offsets *o = &in->offsets;
    bool finite = m_vec3_is_finite(o->head_position_m) && m_quat_is_finite(o->head_rotation) &&
                  isfinite(o->grip_palm_fraction) && isfinite(in->height_m) &&
                  isfinite(in->arm_span_m) && isfinite(in->floor_height_m) &&
                  isfinite(in->arm_stretch_max) &&
                  isfinite(in->filter_min_cutoff_hz) && isfinite(in->filter_beta) &&
                  isfinite(in->loss_blend_s);
    for (int s = 0; s < 2; ++s)
        finite = finite && m_vec3_is_finite(o->grip_offset_m[s]) &&
                 m_quat_is_finite(o->grip_rotation[s]);
    if (!finite)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "body: a setting is not a finite number");
    if (!(in->arm_stretch_max >= 0.0f && in->arm_stretch_max <= BODY_ARM_STRETCH_MAX))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "body: arm stretch %g: expected 0 to %g (a fraction of the arm)",
                       (double)in->arm_stretch_max, (double)BODY_ARM_STRETCH_MAX);
    if (in->height_m < 0.0f || in->arm_span_m < 0.0f || in->loss_blend_s < 0.0f ||
        in->filter_beta < 0.0f)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "body: height, arm span, loss blend time and filter beta must be >= 0");
    if (in->stages_off & ~(unsigned)BODY_STAGE_ALL)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "body: stages off 0x%x: expected flags of enum body_stage_flags (0x%x)",
                       in->stages_off, (unsigned)BODY_STAGE_ALL);
    resolve_offsets(&out->offsets);
    b_trackers_resolve_mounts(out);
    if (out->filter_min_cutoff_hz == 0.0f)
        out->filter_min_cutoff_hz = DEFAULT_MIN_CUTOFF_HZ;
    if (out->filter_beta == 0.0f)
        out->filter_beta = DEFAULT_BETA;
    if (out->loss_blend_s == 0.0f)
        out->loss_blend_s = DEFAULT_LOSS_BLEND_S;
    return EM_OK;
}

static int
bone(const struct sk_skeleton *sk, enum sk_bone b)
{
    return sk->bone_joint[b];
}

static void
find_joints(const struct sk_skeleton *sk, struct b_joints *j)
{
    j->hips = bone(sk, SK_HIPS);
    j->spine = bone(sk, SK_SPINE);
    j->chest = bone(sk, SK_CHEST);
    j->neck = bone(sk, SK_NECK);
    j->head = bone(sk, SK_HEAD);
    for (int s = 0; s < 2; ++s) {
        const bool left = s == 0;
        j->shoulder[s] = bone(sk, left ? SK_LEFT_SHOULDER : SK_RIGHT_SHOULDER);
        j->upper_arm[s] = bone(sk, left ? SK_LEFT_UPPER_ARM : SK_RIGHT_UPPER_ARM);
        j->lower_arm[s] = bone(sk, left ? SK_LEFT_LOWER_ARM : SK_RIGHT_LOWER_ARM);
        j->hand[s] = bone(sk, left ? SK_LEFT_HAND : SK_RIGHT_HAND);
        j->hand_end[s] = bone(sk, left ? SK_LEFT_HAND_END : SK_RIGHT_HAND_END);
        j->upper_leg[s] = bone(sk, left ? SK_LEFT_UPPER_LEG : SK_RIGHT_UPPER_LEG);
        j->lower_leg[s] = bone(sk, left ? SK_LEFT_LOWER_LEG : SK_RIGHT_LOWER_LEG);
        j->foot[s] = bone(sk, left ? SK_LEFT_FOOT : SK_RIGHT_FOOT);
        j->toes[s] = bone(sk, left ? SK_LEFT_TOES : SK_RIGHT_TOES);
    }
}

static float
lowest_foot_y(const struct sk_skeleton *sk, const struct b_joints *j)
{
    float y = INFINITY;
    for (int s = 0; s < 2; ++s) {
        y = fminf(y, sk->rest_position_m[j->foot[s]][1]);
        if (j->toes[s] >= 0)
            y = fminf(y, sk->rest_position_m[j->toes[s]][1]);
        const int end = sk->primary_child[j->toes[s] >= 0 ? j->toes[s] : j->foot[s]];
        if (end >= 0)
            y = fminf(y, sk->rest_position_m[end][1]);
    }
    return y;
}

/* How far up the back (its bones from the hips to the neck, at rest) the chest joint is. */
static float
chest_fraction(const struct sk_skeleton *sk, const struct b_joints *j)
{
    float back = 0.0f, to_chest = 0.0f;
    for (int a = j->neck; a != j->hips && a >= 0; a = sk->parent[a])
        back += sk->length_m[a];
    for (int a = j->chest; a != j->hips && a >= 0; a = sk->parent[a])
        to_chest += sk->length_m[a];
    return back > 1e-6f ? to_chest / back : 0.0f;
}

static void
take_measures(const struct sk_skeleton *sk, const struct b_joints *j, struct b_measures *m)
{
    const float (*rest)[3] = (const float(*)[3])sk->rest_position_m;
    const float floor_y = lowest_foot_y(sk, j);
    m->hips_height_m = rest[j->hips][1] - floor_y;
    m->head_height_m = rest[j->head][1] - floor_y;
    m->neck_height_m = rest[j->neck][1] - floor_y;
    m->hips_to_neck_m = m_vec3_distance(rest[j->hips], rest[j->neck]);
    m->chest_fraction = chest_fraction(sk, j);
    m_vec3_sub(rest[j->head], rest[j->neck], m->head_from_neck_m);
    m->leg_length_m = sk->length_m[j->lower_leg[0]] + sk->length_m[j->foot[0]];
    /* A skeleton's lowest joint is not on the floor (joint centres sit inside the foot),
     * so standing ankles are at least the anthropometric ankle height above it. */
    m->ankle_height_m = fmaxf(0.5f * (rest[j->foot[0]][1] + rest[j->foot[1]][1]) - floor_y,
                              ANKLE_HEIGHT_PER_STATURE * sk_humanoid_height(sk));
    m->upper_arm_m = sk->length_m[j->lower_arm[0]];
    m->lower_arm_m = sk->length_m[j->hand[0]];
    m->palm_m = j->hand_end[0] >= 0 ? sk->length_m[j->hand_end[0]] : 0.0f;
    for (int s = 0; s < 2; ++s) {
        m_vec3_sub(rest[j->upper_leg[s]], rest[j->hips], m->hip_offset_m[s]);
        m_vec3_sub(rest[j->foot[s]], rest[j->hips], m->ankle_offset_m[s]);
        m_vec3_sub(rest[j->upper_arm[s]], rest[j->chest], m->shoulder_offset_m[s]);
        float clavicle_dir[3];
        const float out[3] = {s == 0 ? 1.0f : -1.0f, 0, 0};
        m_vec3_normalize_or(sk->offset_m[j->upper_arm[s]], out, clavicle_dir);
        m_quat_identity(m->clavicle_rest[s]);
        ik_limit_apply(&sk->limit[j->shoulder[s]], clavicle_dir, m->clavicle_rest[s]);
    }
}

static enum em_result
load_default_skeleton(struct sk_skeleton *out, struct em_error *err)
{
    char path[1024];
    if (!u_path_find_data("config/humanoid.json", path, sizeof path))
        return em_fail(err, EM_ERROR_IO, "body: config/humanoid.json not found (looked in %s)",
                       path);
    return sk_skeleton_load_json(path, out, err);
}

static enum em_result
make_solver(struct body *b, struct em_error *err)
{
    struct ik_solver_desc d = {
        .skeleton = &b->skeleton,
        .tolerance_m = IK_TOLERANCE_M,
        .max_iterations = IK_MAX_ITERATIONS,
        .stall_m = IK_STALL_M,
        .root_mode = IK_ROOT_FIXED,
    };
    /* The torso only: the arms are built in closed form after the solve (b_arms_solve),
     * so the solver moves the spine, the neck and the head. What the arms need from the
     * chest is a shoulder pulled toward a hand out of the arm's reach (b_clavicles_set),
     * an effector switched off the rest of the time. */
    int n = 0;
    b->effector_head = n;
    d.effector[n++] = (struct ik_effector_desc){.joint = b->j.head, .orientation = true};
    b->effector_neck = n;
    d.effector[n++] = (struct ik_effector_desc){.joint = b->j.neck};
    b->effector_back = n;
    d.effector[n++] = (struct ik_effector_desc){.joint = b->j.chest};
    for (int s = 0; s < 2; ++s) {
        b->effector_shoulder[s] = n;
        d.effector[n++] = (struct ik_effector_desc){.joint = b->j.upper_arm[s]};
    }
    d.effector_count = n;
    const enum em_result r = ik_solver_create(&d, &b->ik, err);
    if (r != EM_OK)
        return r;
    for (int s = 0; s < 2; ++s)
        ik_solver_set_weight(b->ik, b->effector_shoulder[s], 0.0f); /* valid: cannot fail */
    ik_solver_set_weight(b->ik, b->effector_back, 0.0f);
    return b_torso_controls(b, b->ik, err);
}

/* Puts the body trackers' solver (trackers.spare_ik: with chest and elbow effectors) in
 * body->ik, or back the body's own (nothing without a spare). The solver is the solve's
 * choice (solve_torso), so the swap is here, and the trackers' fini and reset are called
 * with the body's own back in place (trackers_fini, body_reset) rather than swapping it
 * themselves, which had the trackers' source call back into body.c. */
static void
use_full_solver(struct body *b, bool use)
{
    struct b_trackers *T = &b->trackers;
    if (!T->spare_ik || use == T->full_solver_in_use)
        return;
    struct ik_solver *in_use = b->ik;
    b->ik = T->spare_ik;
    T->spare_ik = in_use;
    T->full_solver_in_use = use;
}

/* The trackers' fini with the body's own solver back in body->ik first: the spare, which
 * fini destroys, is then the trackers' own. */
static void
trackers_fini(struct body *b)
{
    use_full_solver(b, false);
    b_trackers_fini(b);
}

void
body_destroy(struct body **body)
{
    if (!body || !*body)
        return;
    trackers_fini(*body);
    ik_solver_destroy(&(*body)->ik);
    sk_pose_fini(&(*body)->pose);
    sk_skeleton_fini(&(*body)->skeleton);
    free(*body);
    *body = NULL;
}

/* (Re)builds everything that depends on the avatar's proportions. */
static enum em_result
setup_avatar(struct body *b, struct em_error *err)
{
    trackers_fini(b);
    ik_solver_destroy(&b->ik);
    sk_pose_fini(&b->pose);
    find_joints(&b->skeleton, &b->j);
    b_clavicles_widen(b);
    take_measures(&b->skeleton, &b->j, &b->m);
    if (sk_pose_init(&b->pose, &b->skeleton) != EM_OK)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "body: out of memory");
    const enum em_result r = make_solver(b, err);
    return r == EM_OK ? b_trackers_setup(b, err) : r;
}

enum em_result
body_create(const struct body_desc *desc, struct body **out_body, struct em_error *err)
{
    *out_body = NULL;
    struct body *b = calloc(1, sizeof *b);
    if (!b)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "body: out of memory");
    enum em_result r = resolve_desc(desc, &b->desc, err);
    if (r == EM_OK)
        r = desc->skeleton ? sk_skeleton_copy(desc->skeleton, &b->skeleton)
                           : load_default_skeleton(&b->skeleton, err);
    if (r == EM_ERROR_OUT_OF_MEMORY)
        em_fail(err, r, "body: out of memory");
    if (r == EM_OK)
        r = sk_humanoid_validate(&b->skeleton, "body avatar", err);
    if (r == EM_OK && (desc->height_m > 0.0f || desc->arm_span_m > 0.0f))
        r = sk_humanoid_fit(&b->skeleton,
                            desc->height_m > 0.0f ? desc->height_m
                                                  : sk_humanoid_height(&b->skeleton),
                            desc->arm_span_m, err);
    if (r == EM_OK)
        r = setup_avatar(b, err);
    if (r != EM_OK) {
        body_destroy(&b);
        return r;
    }
    b->desc.skeleton = NULL; /* the caller's skeleton was copied */
    /* A height asked for is the body's (the fit made the skeleton that tall, to a float's
     * rounding, and the prior is given this: the same height, the same input). */
    b->desc.height_m = desc->height_m > 0.0f ? desc->height_m : sk_humanoid_height(&b->skeleton);
    b->desc.arm_span_m = sk_humanoid_arm_span(&b->skeleton);
    body_reset(b);
    *out_body = b;
    return EM_OK;
}

void
body_get_desc(const struct body *body, struct body_desc *out_desc)
{
    *out_desc = body->desc;
}

const struct sk_skeleton *
body_skeleton(const struct body *body)
{
    return &body->skeleton;
}

const struct sk_pose *
body_pose(const struct body *body)
{
    return &body->pose;
}

void
body_reset(struct body *b)
{
    b->started = false;
    b->time_s = 0.0;
    b->frame_too_soon = false;
    b->head_device_seen = false;
    b->jump_suspect = false;
    b->recentre_pending = false;
    memset(b->filter_position, 0, sizeof b->filter_position);
    memset(b->filter_rotation, 0, sizeof b->filter_rotation);
    memset(b->track, 0, sizeof b->track);
    for (int d = 0; d < EM_DEVICE_COUNT; ++d)
        b->track[d].state = BODY_DEVICE_LOST;
    b->heading_rad = b->seed_heading_rad = 0.0f;
    b->ground_height_m = b->desc.floor_height_m;
    b->pelvis_started = false;
    b->feet_started = false;
    m_vec3_set(b->body_velocity_m_s, 0, 0, 0);
    m_vec3_set(b->seed_velocity_m_s, 0, 0, 0);
    b->posture = BODY_STANDING;
    b->posture_by_motion = false;
    memset(&b->stats, 0, sizeof b->stats);
    /* The elbows' last sides: none, so the next frame takes its sides at once. */
    memset(b->elbow_side, 0, sizeof b->elbow_side);
    memset(b->elbow_swivel_side, 0, sizeof b->elbow_swivel_side);
    memset(b->elbow_swivel_rate, 0, sizeof b->elbow_swivel_rate);
    memset(b->knee_side, 0, sizeof b->knee_side); /* and the knees' */
    use_full_solver(b, false); /* the body's own solver back before the trackers start over */
    b_trackers_reset(b);
    b_prior_reset(b);
    sk_pose_set_rest(&b->pose, &b->skeleton);
    /* Stand at the origin on the floor until a device says otherwise. */
    b->pose.position_m[b->j.hips][1] += b->desc.floor_height_m;
    sk_pose_forward_kinematics(&b->pose, &b->skeleton);
    m_vec3_copy(b->pose.position_m[b->j.hips], b->hips_position_m);
    m_quat_identity(b->hips_rotation);
    m_vec3_copy(b->pose.position_m[b->j.head], b->head_position_m);
    m_quat_identity(b->head_rotation);
    for (int s = 0; s < 2; ++s) {
        m_vec3_copy(b->pose.position_m[b->j.hand[s]], b->hand_position_m[s]);
        m_quat_identity(b->hand_rotation[s]);
    }
    b_floor_reset(b);
    b_seed_feet_reset(b);
    memset(&b->legs, 0, sizeof b->legs);
    for (int s = 0; s < 2; ++s) {
        m_vec3_copy(b->foot[s].position_m, b->legs.ankle_m[s]);
        m_quat_identity(b->legs.foot_rotation[s]);
    }
}

void
body_recenter(struct body *b)
{
    b->heading_rad = b->seed_heading_rad = b_yaw_of(b->head_rotation, b->heading_rad);
    b->feet_started = false;
    b_seed_feet_reset(b);
    /* The play space moves with a recentre: the next head sample is its new place, and
     * every history restarts there (b_devices.c, screen_jump). */
    b->recentre_pending = true;
}

/* What the status says (b_floor.c): a squat is crouching, not sitting (the hips low and the
 * head up said sitting for the demo's squat to the floor); on the floor, sitting or lying. */
static void
classify_posture(struct body *b)
{
    b->posture = b_floor_classify(b, &b->posture_by_motion);
}

/* The ankle target the leg is built toward: the foot's, drawn in toward the hip as it
 * nears the leg's full reach ("soft" IK): the distance d beyond SOFT_REACH_START of the
 * leg's length L approaches L without reaching it, 1 - e^-x, so a leg straightens
 * smoothly instead of snapping its knee straight (at full reach the knee's offset from
 * the line grows as the square root of the slack: an unbounded speed). A foot out of
 * reach (the body rose, or the foot was left behind) is drawn along the same line. */
static void
reachable_foot(const struct body *b, int side, const float *ankle_m, float *out_m)
{
    const float *hip = b->pose.position_m[b->j.upper_leg[side]];
    const float leg = b->m.leg_length_m;
    if (b->desc.stages_off & BODY_STAGE_REACH) {
        m_vec3_copy(ankle_m, out_m);
        return;
    }
    const float soft_from = SOFT_REACH_START * leg, soft_span = leg - soft_from;
    float d[3];
    m_vec3_sub(ankle_m, hip, d);
    const float dist = m_vec3_length(d);
    if (dist > soft_from) {
        const float soft = soft_from + soft_span * (1.0f - expf(-(dist - soft_from) / soft_span));
        m_vec3_muladd(hip, d, soft / dist, out_m);
    } else {
        m_vec3_copy(ankle_m, out_m);
    }
}

/* This frame's targets: the head's and hands' for the solver; the fused feet (within the
 * legs' soft reach) and knee poles for the legs, which are built after the solve
 * (b_limbs.c). */
static void
set_targets(struct body *b, struct b_leg_targets *legs)
{
    ik_solver_set_target(b->ik, b->effector_head, b->head_position_m, b->head_rotation);
    ik_solver_set_target(b->ik, b->effector_neck, b->neck_target_m, NULL);
    ik_solver_set_weight(b->ik, b->effector_neck, b->neck_weight);
    if (!b->trackers.full_solver_in_use) { /* (its chest effector is the chest tracker's) */
        ik_solver_set_target(b->ik, b->effector_back, b->back_target_m, NULL);
        ik_solver_set_weight(b->ik, b->effector_back, b->back_weight);
    }
    *legs = b->legs;
    for (int s = 0; s < 2; ++s) {
        reachable_foot(b, s, b->legs.ankle_m[s], legs->ankle_m[s]);
        b_arm_pole(b, s, b->elbow_pole_m[s]);
        b_floor_arm_pole(b, b->elbow_pole_m[s]);
    }
    b_trackers_set_targets(b);
}

/* The solve: the solver with the trackers' effectors while a tracker it serves counts
 * (feet alone need only the body's own), the clavicles raised toward hands out of reach,
 * the targets, one solve of the torso; `legs` the targets the legs are built toward after
 * it. */
static void
solve_torso(struct body *b, struct b_leg_targets *legs)
{
    bool full = false;
    for (int t = 0; t < EM_TRACKER_COUNT; ++t)
        if (t != EM_TRACKER_LEFT_FOOT && t != EM_TRACKER_RIGHT_FOOT && b->trackers.weight[t] > 0.0f)
            full = true;
    use_full_solver(b, full);
    b_clavicles_set(b);
    set_targets(b, legs);
    ik_solver_solve(b->ik, &b->pose, &b->stats);
}

/* The play space's move the device stage reported this frame (a teleport, a recentre),
 * applied to the learned prior's history and filtered pose before the fusion reads them:
 * here rather than in b_devices.c, so the devices call no source. */
static void
move_prior_with_space(struct body *b)
{
    if (b->space_moved && b->desc.prior)
        b_prior_move(b, b->space_offset_m);
}

static bool
pose_is_finite(const struct body *b)
{
    for (int j = 0; j < b->pose.joint_count; ++j)
        if (!m_vec3_is_finite(b->pose.position_m[j]) || !m_quat_is_finite(b->pose.rotation[j]))
            return false;
    return true;
}

void
body_update(struct body *b, const struct em_tracking_frame *frame)
{
    if (!isfinite(frame->time_s) || (b->started && frame->time_s <= b->time_s))
        return;
    /* The stages in turn: the devices (b_devices.c), the sources' estimates fused into the
     * pelvis, torso and leg targets (b_fuse.c; the skeleton carried to the new pelvis),
     * one solve of the torso, the limbs built on it, the posture. */
    struct em_tracking_frame screened;
    float dt;
    frame = b_devices_update(b, frame, &screened, &dt);
    move_prior_with_space(b);
    b_fuse_frame(b, frame, dt);
    struct b_leg_targets legs;
    solve_torso(b, &legs);
    b_limbs_build(b, &legs);
    classify_posture(b);
    if (!pose_is_finite(b)) {
        /* Whatever got through, it does not stay: start over from the next frame. */
        const double t = b->time_s;
        body_reset(b);
        b->time_s = t;
    }
}

/* Whether joint j belongs to foot s (the foot, its toes, their ends). */
static bool
in_foot(const struct body *b, int s, int j)
{
    const int parent = b->skeleton.parent[j];
    return j == b->j.foot[s] || parent == b->j.foot[s] ||
           (b->j.toes[s] >= 0 && parent == b->j.toes[s]);
}

/* True when foot s, as posed, stands on the ground: held (not stepping, or held by the
 * prior) and its heel or toes within PLANTED_MAX_LIFT_M of where they stand flat. */
static bool
foot_planted(const struct body *b, int s)
{
    const bool held = b->desc.prior && b->prior.started ? b->prior.planted[s] : !b->foot[s].stepping;
    /* How far its least lifted part (ankle, toes or their end: a heel lifted before a step
     * still stands on the toes) is above where it is with the rest pose's foot flat on the
     * ground, its lowest point touching. */
    const float(*rest)[3] = (const float(*)[3])b->skeleton.rest_position_m;
    float rest_lowest = INFINITY, lift = INFINITY;
    for (int j = b->j.foot[s]; j < b->pose.joint_count; ++j)
        if (in_foot(b, s, j))
            rest_lowest = fminf(rest_lowest, rest[j][1]);
    for (int j = b->j.foot[s]; j < b->pose.joint_count; ++j)
        if (in_foot(b, s, j))
            lift = fminf(lift, b->pose.position_m[j][1] - (b->ground_height_m + rest[j][1] - rest_lowest));
    return held && lift <= PLANTED_MAX_LIFT_M;
}

void
body_get_status(const struct body *b, struct body_status *out)
{
    memset(out, 0, sizeof *out);
    out->posture = b->posture;
    out->posture_by_motion = b->posture_by_motion;
    for (int s = 0; s < 2; ++s)
        out->foot[s] = b->trackers.weight[EM_TRACKER_LEFT_FOOT + s] > 0.0f ? BODY_FOOT_TRACKED
                       : foot_planted(b, s)                                ? BODY_FOOT_PLANTED
                                                                           : BODY_FOOT_STEPPING;
    for (int d = 0; d < EM_DEVICE_COUNT; ++d)
        out->device[d] = b->track[d].state;
    out->ik = b->stats;
    out->height_m = b->desc.height_m;
    out->arm_span_m = b->desc.arm_span_m;
    out->heading_rad = b->heading_rad;
    out->prior_dropped = b->prior_dropped;
    static const char *const names[] = {"head", "leftHand", "rightHand", "leftFoot",
                                        "rightFoot"};
    const int joints[] = {b->j.head, b->j.hand[0], b->j.hand[1], b->j.foot[0], b->j.foot[1]};
    const float *targets[] = {b->head_position_m, b->hand_position_m[0], b->hand_position_m[1],
                              b->legs.ankle_m[0], b->legs.ankle_m[1]};
    out->effector_count = 5;
    for (int e = 0; e < 5; ++e) {
        out->effector_name[e] = names[e];
        m_vec3_copy(targets[e], out->target_m[e]);
        m_vec3_copy(b->pose.position_m[joints[e]], out->reached_m[e]);
        /* Per effector named here (the solver's own are the torso's: head, neck and
         * shoulders), so a reader indexing residuals by these names reads the right one. */
        out->ik.residual_m[e] = m_vec3_distance(targets[e], b->pose.position_m[joints[e]]);
    }
    for (int e = 5; e < IK_MAX_EFFECTORS; ++e)
        out->ik.residual_m[e] = 0.0f;
}

const char *
body_stage_name(unsigned stage)
{
    static const char *const names[BODY_STAGE_COUNT] = {"smoothing", "filters", "planting",
                                                        "reach", "floor"};
    for (int i = 0; i < BODY_STAGE_COUNT; ++i)
        if (stage == 1u << i)
            return names[i];
    return NULL;
}

const char *
body_posture_name(enum body_posture posture)
{
    switch (posture) {
    case BODY_STANDING: return "standing";
    case BODY_CROUCHING: return "crouching";
    case BODY_KNEELING: return "kneeling";
    case BODY_SITTING: return "sitting";
    case BODY_SITTING_ON_FLOOR: return "sitting on the floor";
    case BODY_LYING_ON_BACK: return "lying on the back";
    case BODY_LYING_ON_SIDE: return "lying on the side";
    case BODY_LYING_ON_FRONT: return "lying on the front";
    case BODY_POSTURE_COUNT: break;
    }
    return "unknown";
}

float
body_eye_height_for(float height_m)
{
    /* The skull base's share of height, plus the default headset offset above it. */
    return SK_HEAD_JOINT_HEIGHT_RATIO * height_m + 0.08f;
}

/* The grip-to-grip distance of a T-pose, turned into the skeleton's arm span: each grip
 * sits at the palm's middle, so the span adds half a palm and the fingers each side. */
static float
span_from_grips(const struct body *b, float grips_m)
{
    const float palm = b->m.palm_m;
    return grips_m + 2.0f * (1.0f - b->desc.offsets.grip_palm_fraction + 0.9f) * palm;
}

enum em_result
body_calibrate(struct body *b, const struct em_tracking_frame *frame, struct em_error *err)
{
    const struct em_device_pose *head = &frame->device[EM_DEVICE_HEAD];
    if (!em_device_pose_usable(head) || !m_vec3_is_finite(head->pose.position_m))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "calibrate: the headset is not tracked; stand straight and try again");
    const float eye = head->pose.position_m[1] - b->desc.floor_height_m;
    const float head_up = b->desc.offsets.head_position_m[1];
    const float height = (eye - head_up) / SK_HEAD_JOINT_HEIGHT_RATIO;
    if (!(height >= 1.0f && height <= 2.5f))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "calibrate: the headset is %.2f m above the floor, which is not a "
                       "standing adult's eye height; stand straight (or check the floor)",
                       (double)eye);
    float span = 0.0f;
    const struct em_device_pose *l = &frame->device[EM_DEVICE_LEFT_HAND];
    const float *r = frame->device[EM_DEVICE_RIGHT_HAND].pose.position_m;
    if (em_device_pose_usable(l) && em_device_pose_usable(&frame->device[EM_DEVICE_RIGHT_HAND])) {
        const float grips = m_vec3_distance(l->pose.position_m, r);
        const float shoulder_y = eye - 0.2f * height;
        /* Only a T-pose (hands wide, near shoulder height) says the span. */
        if (grips > 0.7f * height && fabsf(l->pose.position_m[1] - shoulder_y) < 0.25f &&
            fabsf(r[1] - shoulder_y) < 0.25f)
            span = span_from_grips(b, grips);
    }
    struct sk_skeleton fitted;
    if (sk_skeleton_copy(&b->skeleton, &fitted) != EM_OK)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "calibrate: out of memory");
    enum em_result r2 = sk_humanoid_fit(&fitted, height, span, err);
    if (r2 != EM_OK) {
        sk_skeleton_fini(&fitted);
        return r2;
    }
    sk_skeleton_fini(&b->skeleton);
    b->skeleton = fitted;
    r2 = setup_avatar(b, err);
    if (r2 != EM_OK)
        return r2;
    b->desc.height_m = sk_humanoid_height(&b->skeleton);
    b->desc.arm_span_m = sk_humanoid_arm_span(&b->skeleton);
    const double t = b->time_s;
    body_reset(b);
    b->time_s = t;
    return body_calibrate_trackers(b, frame, NULL, err);
}
