/*
 * The body module's internal state and the pieces of the reconstruction. A frame
 * (body_update, body.c) goes through the stages in this order, each in its own file:
 *
 *  1. devices    b_devices.c   every sample checked, the headset's jumps screened (a
 *                              teleport moves every history), filtered, turned into bone
 *                              targets, with each device's and tracker's state and blend
 *  2. fusion     b_fuse.c      asks the sources for estimates with confidences, the
 *                              pelvis first, then the feet under it, then the torso, and
 *                              fuses them; the sources read no other source:
 *                 b_seed.c       the seed: pelvis, heading, torso and steps from the head
 *                 b_prior.c      the learned prior
 *                 b_floor.c      the floor postures (lying, sitting on the floor)
 *                 b_trackers.c   body trackers
 *  3. solve      body.c        the solver (the trackers' while one it serves counts), the
 *                              clavicles (b_arms.c) and the targets (b_trackers.c the
 *                              chest's and elbows'), one solve of the torso
 *  4. limbs      b_limbs.c     b_limbs_build: the arms built on the solved shoulders
 *                              (b_arms.c) with the limb builder they share with the legs
 *                              (b_limb.c), the elbows kept up on the floor, the legs (a
 *                              tracked foot turned as its tracker), then the forearms'
 *                              twist and a stretch (b_arms.c)
 *  5. posture    b_floor.c     what the status shows
 *
 * Besides: b_filter.c, the One-Euro filter (a tool of the devices and the prior, no
 * stage); b_limb.c, the two-bone limb builder the arms and legs share and the limbs' poles
 * (a tool of the limbs and the sources, calling no other file); b_config.c, the settings' JSON (setup); body.c, setup, reset, status and
 * calibration; this header, the state and what the files call of each other;
 * CMakeLists.txt, the folder's sources in the core library.
 */
#ifndef EMBODY_B_INTERNAL_H
#define EMBODY_B_INTERNAL_H

#include <stdbool.h>

#include "embody/body.h"
#include "embody/ik.h"
#include "embody/prior.h"
#include "embody/m_math.h"
#include "embody/skeleton.h"

/* ---- One-Euro filter (Casiez, Roussel and Vogel, CHI 2012) --------------------------- */

struct b_one_euro {
    float value[4];
    float speed; /* filtered speed (m/s or rad/s) */
    bool started;
    bool has_speed; /* speed measured once (b_filter.c: the first is taken as it is) */
};

/* Filters a position in place; dt in seconds. */
void
b_filter_position(struct b_one_euro *f, float *position_m, float dt_s, float min_cutoff_hz,
                  float beta);

/* The same with the cutoff never above max_cutoff_hz, however fast the point moves. */
void
b_filter_position_capped(struct b_one_euro *f, float *position_m, float dt_s, float min_cutoff_hz,
                         float beta, float max_cutoff_hz);

/* Filters a unit quaternion in place (slerp toward the new value). */
void
b_filter_rotation(struct b_one_euro *f, float *rotation, float dt_s, float min_cutoff_hz,
                  float beta);

/* ---- Joints the reconstruction uses ------------------------------------------------ */

struct b_joints {
    int hips, spine, chest, neck, head;
    int shoulder[2], upper_arm[2], lower_arm[2], hand[2], hand_end[2];
    int upper_leg[2], lower_leg[2], foot[2], toes[2];
};

/* Body measures taken from the avatar at rest. */
struct b_measures {
    float hips_height_m;       /* hips above the floor, standing */
    float head_height_m;       /* head joint above the floor, standing */
    float neck_height_m;
    float hips_to_neck_m;      /* straight-line length of the spine */
    float chest_fraction;      /* the chest joint's share of the back's length (rest) */
    float head_from_neck_m[3]; /* rest offset of the head from the neck */
    float leg_length_m;        /* hip joint to ankle */
    float ankle_height_m;      /* ankle above the floor, standing */
    float upper_arm_m, lower_arm_m, palm_m;
    float foot_length_m;       /* ankle to the toe tip, along the floor */
    float hip_offset_m[2][3];  /* hip joints from the hips (rest) */
    float ankle_offset_m[2][3]; /* ankles from the hips (rest), standing */
    float shoulder_offset_m[2][3]; /* upper arm joints from the chest (rest) */
    float clavicle_rest[2][4];     /* the clavicles' rest rotation, within their limits */
};

/* ---- Feet -------------------------------------------------------------------------- */

struct b_foot {
    float planted_m[3]; /* ankle position while planted */
    float planted_yaw_rad;
    float position_m[3]; /* current ankle target */
    float yaw_rad;
    bool stepping;
    float step_from_m[3], step_to_m[3];
    float step_from_yaw_rad, step_to_yaw_rad;
    float step_time_s, step_duration_s;
};

/* ---- Tracker loss ------------------------------------------------------------------ */

/* Input hygiene: a sample is used only when its flags say so and it is finite, its
 * quaternion is unit (|q|^2 within this of 1) and it is within this distance of the
 * tracking space's origin; a frame less than B_MIN_FRAME_STEP_S after the last is a loss
 * of every device for that frame. */
#define B_MAX_QUAT_NORM2_ERROR 0.01f
#define B_MAX_DEVICE_DISTANCE_M 1000.0f
#define B_MIN_FRAME_STEP_S 1e-4f
/* A frame arriving this long after the previous one restarts the filters and motion
 * (a paused replay, a session that came back), and the arms' easing (b_arms.c). */
#define B_MAX_GAP_S 0.25f

bool
b_device_sample_ok(const struct em_device_pose *d);

/* Bone pose from device pose: device = bone * offset, so bone = device * offset^-1 (a
 * tracker's offset is its mount). */
void
b_bone_from_device(const float *device_pos, const float *device_rot, const float *off_pos,
                   const float *off_rot, float *out_pos, float *out_rot);

/* The device stage (b_devices.c), the frame's first: the frame's step (the filters start
 * over after a gap of B_MAX_GAP_S), the headset's jumps screened (a glitch held as lost, a
 * teleport or recentre moving every history but the prior's, whose move it reports in
 * body->space_moved and space_offset_m for body_update), then every device's state, filtered pose and
 * bone target (head, hands, body trackers; a lost hand toward its side or its elbow
 * tracker). Returns the frame the later stages read: `frame`, or its copy in
 * out_screened without the samples that jumped; out_dt_s is the step the filters took. */
const struct em_tracking_frame *
b_devices_update(struct body *body, const struct em_tracking_frame *frame,
                 struct em_tracking_frame *out_screened, float *out_dt_s);

struct b_device_track {
    enum body_device_state state;
    float blend;           /* 1 = fully the tracked pose, 0 = fully the fallback */
    float last_position_m[3];
    float last_rotation[4];
    bool seen;             /* ever tracked */
    /* The device's own last usable sample and velocity, and the coast over bad samples
     * (b_devices.c): device_now_* is what the body used this frame (sample or coast). */
    float device_position_m[3], device_rotation[4], device_velocity_m_s[3];
    float device_now_m[3], device_now_rotation[4];
    float coast_s;
    bool coasted;     /* this frame was a coast */
    bool coast_reset; /* the next sample starts the velocity afresh */
    float jump_s;     /* a controller's samples have jumped alone this long (b_devices.c) */
};

/* A device that was tracked coasts over bad samples for at most this long. */
#define B_COAST_MAX_S 0.05f

/* A jump: a device sample more than this from the last, faster than this (the headset's
 * and a controller's alone, b_devices.c). */
#define B_TELEPORT_MIN_M 0.2f
#define B_TELEPORT_SPEED_M_S 6.0f
/* A jump that stays at its new place this long is real (a teleport; a controller found
 * again elsewhere), not a glitch (two frames held as lost at 60 Hz, three at 90; within
 * B_COAST_MAX_S, so the devices coast). */
#define B_TELEPORT_CONFIRM_S 0.03f

/* ---- Body trackers (b_trackers.c) -------------------------------------------------- */

struct b_trackers {
    uint32_t present; /* carried by the last frame */
    struct b_one_euro filter_position[EM_TRACKER_COUNT];
    struct b_one_euro filter_rotation[EM_TRACKER_COUNT];
    struct b_device_track track[EM_TRACKER_COUNT]; /* last_* hold the tracker's own pose */
    float weight[EM_TRACKER_COUNT];                /* eased blend, 0 when never seen */
    float bone_position_m[EM_TRACKER_COUNT][3];    /* the bone pose the tracker says */
    float bone_rotation[EM_TRACKER_COUNT][4];
    /* The body's solver with chest, knee and elbow effectors too, swapped with body->ik
     * while a tracker it serves counts, so the other pieces set their targets on whichever
     * is in use. */
    struct ik_solver *spare_ik;
    bool full_solver_in_use;
    int effector_chest, effector_elbow[2];
    /* The pelvis tracker's heading drift as the body sees it (b_trackers.c): how far its
     * yaw has run from the headset's, slowly followed and taken out. */
    float pelvis_yaw_bias_rad;
};

/* ---- The learned prior (b_prior.c) ------------------------------------------------ */

struct b_prior_state {
    struct pr_history history;
    bool predicted;     /* outputs hold a prediction */
    bool started;       /* the filtered pose below is set */
    float head_m[3];    /* the heading frame of the last prediction */
    float yaw_rad;
    float outputs[PR_OUTPUT_COUNT];
    struct b_one_euro filter_ankle[2], filter_toes[2], filter_knee[2];
    float hips_rotation[4];
    float ankle_m[2][3], toes_m[2][3], knee_m[2][3]; /* filtered predictions */
    float contact[2];                                /* smoothed probability */
    bool planted[2];                                 /* held more than let go */
    float release_offset_m[2][3], release_toes_offset_m[2][3]; /* from the prediction */
    float foot_ankle_m[2][3], foot_toes_m[2][3]; /* the feet's targets this frame */
    struct b_one_euro filter_hips;               /* the predicted pelvis position */
    float hips_m[3];
    struct b_one_euro filter_neck; /* the predicted neck (has_torso) */
    float neck_m[3];
    bool has_torso;
    /* The predicted back (has_back): pelvis, spine and chest points, all filtered as offsets
     * from the head like the neck (the pelvis's own filter works in the room). */
    struct b_one_euro filter_back[3];
    float back_m[2][3], back_pelvis_m[3];
    bool has_back;
    float still_s; /* how long the body has stood still (feet settle their turn) */
    float seated;  /* 0..1: the evidence that something holds the body up (a seat) */
};

/* ---- One frame's estimates and their fusion (b_fuse.c) ------------------------------ */

/* Where an estimate comes from, in order of trust: a body tracker measures a bone; the
 * floor postures (b_floor.c) say a body sitting or lying on the floor, which the learned
 * prior never saw; the learned prior infers it from the devices' recent motion; the seed
 * (the head projected to the floor, procedural steps) assumes it. */
enum b_source {
    B_SOURCE_TRACKERS,
    B_SOURCE_FLOOR,
    B_SOURCE_PRIOR,
    B_SOURCE_SEED,
    B_SOURCE_COUNT
};

/* One source's say about the pelvis, each part with a confidence in 0..1 (0: it says
 * nothing there; the seed always says all): its position; its rotation, as its turn about
 * the vertical (yaw) and the tilt left after that, each with its own confidence; and the
 * heading (where the body faces: feet step to it, poles point along it). */
struct b_pelvis_estimate {
    float position_m[3], rotation[4], heading_rad;
    float position_confidence, yaw_confidence, tilt_confidence, heading_confidence;
};

/* What the legs are built from each frame (fused), or one source's say about it. */
struct b_leg_targets {
    float ankle_m[2][3];
    float foot_rotation[2][4];
    float knee_pole_m[2][3];
};

struct b_feet_estimate {
    struct b_leg_targets at;
    float ankle_confidence[2], rotation_confidence[2], knee_pole_confidence[2];
};

/* One source's say about the torso: where the neck joint goes (the solver's neck target,
 * which the spine below bends to reach), and how the back bends on the way: the chest
 * joint's offset from the straight line between pelvis and neck. */
struct b_torso_estimate {
    float neck_m[3];
    float neck_confidence;
    float back_bend_m[3];
    float back_bend_confidence;
};

/* The one fusion step of a frame (b_fuse.c): every source's pelvis estimate, fused into
 * the body's pelvis, heading and velocity (the skeleton carried there); then every
 * source's feet for that pelvis, fused into the legs' targets (also kept in
 * body->legs). Each part is the most trusted source's by its confidence, the rest of the
 * way the next one's, down to the seed. */
void
b_fuse_frame(struct body *body, const struct em_tracking_frame *frame, float dt_s);

/* Poles are put this far from a limb's middle (only their direction counts). */
#define B_POLE_DISTANCE_M 0.5f
/* How far a knee may point from where the hips face (the thigh's twist range is 40): the
 * seed's knee poles (b_leg_pole) and the prior's knee planes (b_prior.c). */
#define B_KNEE_MAX_TURN_RAD (22.0f * M_DEG_TO_RAD)

/* A pole between two (b_limb.c), by direction from the middle of the limb root-end: `w`
 * of the way from `from_pole`'s direction to `to_pole`'s (the hinge's plane is all a pole
 * sets). */
void
b_blend_pole(const float *root, const float *end, const float *from_pole, const float *to_pole,
             float w, float *out_pole);

/* ---- Floor postures (b_floor.c) ---------------------------------------------------- */

struct b_floor {
    bool started;
    float share;            /* 0..1: how much the body sits or lies on the floor (smoothed) */
    float lying;            /* 0..1: of that, the torso along the floor rather than up */
    float hips_m[3];        /* the pelvis on the floor, this frame */
    float hips_rotation[4]; /* the torso's frame on the floor (smoothed) */
    float down_from_m[3];   /* the head where the body last stood (the way down) */
    float down_heading_rad;
    float head_m[3];      /* last frame's head target */
    float head_speed_m_s; /* over the floor, smoothed */
    float head_rise_m_s;  /* up (+) or down (-), smoothed */
};

/* ---- The body ---------------------------------------------------------------------- */

struct body {
    struct body_desc desc;
    struct sk_skeleton skeleton;
    struct sk_pose pose;
    struct ik_solver *ik;
    struct b_joints j;
    struct b_measures m;

    int effector_head;
    int effector_neck; /* the neck's place: the fused torso (b_fuse.c) */
    /* The chest joint's place on the back's bend (b_fuse.c); weight 0 when no source says
     * it (the body trackers' solver takes it over for a chest tracker: b_trackers.c). */
    int effector_back;
    /* The upper arm joints, pulled toward a hand out of the arm's reach (b_clavicles_set);
     * weight 0 otherwise. */
    int effector_shoulder[2];
    float shoulder_pull[2];         /* their eased weights (b_arms.c, pull_shoulder) */
    double shoulder_pull_time_s[2]; /* the frame each was last set */
    float elbow_side[2][3];         /* each elbow's eased side (b_arms.c, ease_elbow_side) */
    float elbow_swivel_side[2][3];  /* the side each elbow was built with (limit_swivel) */
    float elbow_swivel_rate[2];     /* how fast it swivelled last frame, rad/s (swivel_move) */
    double elbow_time_s[2];         /* the frame each arm was last built (b_step_s) */
    float knee_side[2][3];          /* each knee's side last frame (b_limbs.c), 0 before */
    double knee_time_s[2];          /* the frame each leg was last built (b_step_s) */

    /* Time. */
    bool started;
    double time_s;
    bool frame_too_soon; /* this frame came under B_MIN_FRAME_STEP_S after the last */
    /* The headset's last usable position as it came (for teleports). */
    float last_head_device_m[3];
    bool head_device_seen;
    /* A head sample that jumped farther and faster than a person moves is suspect
     * (b_devices.c, screen_jump): held as lost until it comes back (a glitch) or stays at its
     * new place for TELEPORT_CONFIRM_S (a teleport). */
    bool jump_suspect;
    float suspect_s;            /* since the first suspect sample */
    float suspect_head_m[3];    /* the latest suspect sample */
    bool recentre_pending;      /* body_recenter: the next head sample is the new place */
    /* The play space's move this frame (a teleport or recentre), which the device stage
     * reports rather than applies to the learned prior: devices call no source, so
     * body_update moves the prior's history by it (b_prior_move). */
    bool space_moved;
    float space_offset_m[3];

    /* Devices: filtered poses, tracking state. */
    struct b_one_euro filter_position[EM_DEVICE_COUNT];
    struct b_one_euro filter_rotation[EM_DEVICE_COUNT];
    struct b_device_track track[EM_DEVICE_COUNT];

    /* Per frame: bone targets from the devices. */
    float head_position_m[3], head_rotation[4];
    float hand_position_m[2][3], hand_rotation[2][4];
    float elbow_pole_m[2][3]; /* where each elbow points (b_arm_pole, trackers) */

    /* The ground under the feet (the floor, or higher on steps). */
    float ground_height_m;

    /* Pelvis and heading, fused (b_fuse.c), and the seed's own heading (b_seed.c). */
    float heading_rad;
    float seed_heading_rad;
    float head_yaw_rad;   /* last frame's */
    float head_yaw_speed; /* smoothed, rad/s */
    float hips_position_m[3];
    float hips_rotation[4];
    float body_velocity_m_s[3]; /* of the pelvis, smoothed */
    /* Of the seed's pelvis, smoothed: how the head carries the body, whatever the other
     * sources put the pelvis at (the prior's stillness, b_prior.c). */
    float seed_velocity_m_s[3];
    float seed_hips_m[3];
    bool pelvis_started;

    struct b_foot foot[2]; /* the seed's feet: planted or stepping (b_seed.c) */
    bool feet_started;
    struct b_leg_targets legs; /* this frame's fused leg targets */
    float neck_target_m[3];    /* this frame's fused neck (the torso), pulled by neck_weight */
    float neck_weight;
    float back_target_m[3];    /* and chest joint, pulled by back_weight */
    float back_weight;
    int last_stepped; /* which foot stepped last (0 left, 1 right) */

    enum body_posture posture;
    bool posture_by_motion; /* the 3 points could not tell: chosen by the way down */
    struct b_floor floor;
    struct ik_stats stats;

    struct b_trackers trackers;
    struct b_prior_state prior; /* used when desc.prior is set */
    long prior_dropped;         /* predictions dropped as not finite (kept across resets) */
};

/* ---- The seed (b_seed.c): the source that always speaks -------------------------- */

/* The seed's pelvis: from the head (and the seed's own heading, which it updates), for
 * the fusion (b_fuse.c). */
void
b_seed_estimate_pelvis(struct body *body, float dt_s, struct b_pelvis_estimate *out);

/* The seed's torso: the neck below the head along the head's rest offset, turned by a
 * share of the headset's turn from the body's upright frame `upright` (the fusion's,
 * b_floor_upright: on the floor, the floor's), for the fusion. */
void
b_seed_estimate_torso(const struct body *body, const float *upright,
                      struct b_torso_estimate *out);

/* A foot body trackers hold this frame (b_trackers_estimate_feet): its ankle, and with a
 * foot tracker (`turned`) its rotation. */
struct b_held_foot {
    bool held, turned;
    float ankle_m[3];
    float rotation[4];
};

/* The seed's feet under the fused pelvis: planted or stepping (the state in body->foot),
 * and their rotations and knee poles, for the fusion. A foot `held` stands where the
 * trackers hold it; with `floor_share` over a half (b_floor_share) the feet take no steps
 * (the legs lie or fold on the floor). */
void
b_seed_estimate_feet(struct body *body, float dt_s, const struct b_held_foot *held,
                     float floor_share, struct b_feet_estimate *out);

void
b_seed_feet_reset(struct body *body);

/* Floor postures (b_floor.c), a source of the fusion trusted above the learned prior
 * (which never saw a body on the floor) and below body trackers. Forgets the floor state (body_reset, after the head target
 * is set). */
void
b_floor_reset(struct body *body);

/* 0..1: how much the body sits or lies on the floor this frame, by the head's height and
 * facing (0 on the feet): the confidence of the floor's estimates. */
float
b_floor_share(const struct body *body);

/* 0..1: of the floor share, how much the torso lies along the floor rather than up. */
float
b_floor_lying(const struct body *body);

/* For the fusion: updates the floor share and the torso's frame on the floor, and says
 * the pelvis on the floor with that share as its confidence. */
void
b_floor_estimate_pelvis(struct body *body, float dt_s, struct b_pelvis_estimate *out);

/* The body's upright frame (for the neck's target): the heading's yaw, tilted toward the
 * torso's frame on the floor by the floor share. */
void
b_floor_upright(const struct body *body, float *out_rotation);

/* For the fusion, under the fused pelvis: the legs lying along the floor, or the feet on it
 * ahead of a pelvis sitting on it with the knees up, with the floor share as their
 * confidence. */
void
b_floor_estimate_feet(const struct body *body, struct b_feet_estimate *out);

/* An elbow pole (world) raised above the floor by the floor share: lying down, the elbows
 * go out and up from the shoulder-hand line, not through the floor. */
void
b_floor_arm_pole(const struct body *body, float *io_pole_m);


/* The posture to show: on the floor (lying on the back, side or front, sitting), standing,
 * or, low on the feet, crouching, kneeling or sitting on a seat; where the 3 points cannot
 * tell kneeling from sitting, chosen by the way down (`out_by_motion` true). */
enum body_posture
b_floor_classify(struct body *body, bool *out_by_motion);

/* Elbow pole for side s (0 left, 1 right), world frame. */
void
b_arm_pole(const struct body *body, int side, float *out_pole_m);

/* Before the solve: the clavicles (shoulder joints) raised toward hand targets beyond the
 * arms' reach, within their limits, from the chest where the pose has it, the arms below
 * moved with them, and the solver's shoulder effectors pulled toward what the arms still
 * lack (switched off for a hand within reach). The solver keeps the clavicles as set
 * (they are stiff in it). */
void
b_clavicles_set(struct body *body);

/* Raises the top of the clavicles' cones (in the body's own copy of the skeleton) to the
 * shoulder girdle's elevation, keeping their lowest: a hand reaching up takes the shoulder
 * with it. At setup, before the measures are taken. */
void
b_clavicles_widen(struct body *body);

/* The torso's controls on a body solver (the main one and the trackers' spare): stiff
 * clavicles. */
enum em_result
b_torso_controls(struct body *body, struct ik_solver *ik, struct em_error *err);

/* Both arms in closed form from the solved shoulders (the upper arm joints where the
 * solve left them): each hand exactly on its target when the arm reaches it, the elbow
 * out toward body->elbow_pole_m, its swivel continuous in the inputs. Local rotations
 * only (forward kinematics follows with the legs, b_limbs_build). */
void
b_arms_solve(struct body *body);

/* The arms' last steps, once the legs' build has brought the pose's world frames up to
 * date (b_limbs_build): half of each hand's twist about the forearm moved into the forearm
 * (lowerArm) joint, keeping the hand's position and world rotation; then, with
 * desc.arm_stretch_max > 0, an arm whose hand target is beyond its length lengthened along
 * itself (the elbow and the hand with what hangs from it moved out from the shoulder), by
 * at most that fraction. Last of all: nothing after it redoes the arm's forward
 * kinematics. */
void
b_arms_finish(struct body *body);

/* The limbs after the solve (b_limbs.c), in this order: the arms (b_arms_solve); an upper
 * arm joint under the floor lifted on its clavicle and the arm built again on it; on the
 * floor an elbow under it built again turned up until it clears the floor; a hand's end
 * under it pitched up about the hand; both legs in
 * closed form toward `legs`, then the pose's world frames (a foot under the floor lifted,
 * a tracked foot turned as its tracker is); the forearms' twist and the arms' stretch. */
void
b_limbs_build(struct body *body, const struct b_leg_targets *legs);

/* The limb builder the arms and legs share (b_limb.c, a helper below both: it calls no
 * other file, so neither calls the other through it). A two-bone limb (upper joint,
 * middle hinge, end joint) built in closed form toward `end_target`, its middle joint out
 * to unit `side` (square to the line to the target) from that line, and the end turned to
 * `end_rotation` within its limit. With
 * `keep_twist_limit` the upper joint's twist is clamped to its range, which may leave the
 * end short of its target; without, the end meets a reachable target exactly. Sets local
 * rotations only (forward kinematics is the caller's). */
void
b_limb_build(struct body *b, int upper, const float *end_target, const float *end_rotation,
             const float *side, bool keep_twist_limit);

/* b_limb_build with the two-bone positions of the middle and end joints for this target
 * and side already found by the caller (`mid_m`, `end_m`; NULL: found here): the legs
 * move the knee off the midline first (b_limbs.c). */
void
b_limb_build_through(struct body *b, int upper, const float *end_target,
                     const float *end_rotation, const float *side, bool keep_twist_limit,
                     const float *mid_m, const float *end_m);

/* b_limb_build's upper joint alone (its local rotation, without a twist limit; the middle
 * and end joints are left as they were): what a search over the middle joint's side needs
 * to try a side, at a third of the work. */
void
b_limb_turn_upper(struct body *b, int upper, const float *end_target, const float *side);

/* How far the upper joint's twist (its local rotation about its bone's rest direction) is
 * beyond its ball limit's range, signed (radians, the nearer end's side); 0 within it or
 * without a ball limit (b_limb.c). */
float
b_limb_twist_excess(const struct body *b, int upper);

/* The signed angle about unit `axis` from `a` to `b` (their parts square to the axis;
 * b_limb.c). */
float
b_limb_angle_about(const float *axis, const float *a, const float *b);

/* `side` turned by `angle` about the unit `line`, into `out` (b_limb.c): an elbow's or a
 * knee's side swivelled about the limb's root-to-end line. */
void
b_limb_swivel(const float *line, const float *side, float angle, float *out);

/* Knee pole for side s with the ankle at `ankle_m` turned to `foot_yaw_rad` (b_limb.c). */
void
b_leg_pole(const struct body *body, int side, const float *ankle_m, float foot_yaw_rad,
           float *out_pole_m);


/* The learned prior (desc.prior), for the fusion: this frame's samples into its history
 * and its pelvis (`seed`: the seed's, whose distance from the head the prior's keeps) and
 * torso (the neck and the back's bend, with a model of output set 2 or 3) from the
 * prediction; then, under the fused pelvis, its feet (in contact: planted), their
 * rotations and knee poles. Confidence 0 without a model or before its first
 * prediction. */
void
b_prior_estimate_pelvis(struct body *body, const struct em_tracking_frame *frame, float dt_s,
                        const struct b_pelvis_estimate *seed, struct b_pelvis_estimate *out,
                        struct b_torso_estimate *out_torso);
void
b_prior_estimate_feet(struct body *body, float dt_s, struct b_feet_estimate *out);

void
b_prior_reset(struct body *body);

/* A teleport or recentre moved the play space by `offset_m`: the prior's history and its
 * filtered pose move with it (as if the player had always been there). body_update calls
 * it with the move the device stage reports (body->space_offset_m). */
void
b_prior_move(struct body *body, const float *offset_m);

/* 0..1: how surely the prior says the body sits (both feet held off the floor, the pelvis
 * lowered and steady); 0 without a model. Seated, the feet are those of level thighs. */
float
b_prior_seated(const struct body *body);

/* Body trackers (b_trackers.c), in the order body.c calls them. Mount defaults; */
void b_trackers_resolve_mounts(struct body_desc *desc);
/* the chest solver, after the body's solver is made (fini: before it is destroyed; the
 * solve, body.c, puts it in use while a tracker it serves counts and takes the body's own
 * back before fini and reset, use_full_solver: the trackers' source calls nothing of
 * body.c); */
enum em_result b_trackers_setup(struct body *body, struct em_error *err);
/* (with the body's own solver in body->ik: spare_ik is the one destroyed) */
void b_trackers_fini(struct body *body);
void b_trackers_reset(struct body *body);
/* for the fusion: the pelvis a pelvis tracker says (its heading drift taken out); */
void b_trackers_estimate_pelvis(struct body *body, float dt_s, struct b_pelvis_estimate *out);
/* for the fusion: the feet, their turn and the knees' planes that foot and knee trackers
 * say, and (out_held[2], for the seed: its foot does not step there) the feet they hold
 * fully; */
void b_trackers_estimate_feet(struct body *body, struct b_feet_estimate *out,
                              struct b_held_foot *out_held);
/* after the fusion: chest (with the fused pelvis) and elbow targets. (After the solve,
 * b_limbs_build turns a tracked foot as its tracker.) */
void b_trackers_set_targets(struct body *body);

/* Seconds from `*io_last_s` to this frame (which it then becomes), or 0 where what is
 * eased or limited over time must not carry over: the first frame, after a gap of
 * B_MAX_GAP_S or more, or when time went back (a reset). */
static inline float
b_step_s(const struct body *b, double *io_last_s)
{
    const double dt_s = b->time_s - *io_last_s;
    *io_last_s = b->time_s;
    return dt_s > 0.0 && dt_s < (double)B_MAX_GAP_S ? (float)dt_s : 0.0f;
}

/* The fused pelvis's height above the floor as a share of its standing height. */
static inline float
b_hips_height_share(const struct body *b)
{
    return (b->hips_position_m[1] - b->ground_height_m) / fmaxf(b->m.hips_height_m, 1e-3f);
}

/* Yaw (about +Y, 0 = facing +Z) of a rotation's +Z axis projected on the floor. Inline
 * here, below body.c and its helpers, which all use these two. */
static inline float
b_yaw_of(const float *rotation, float fallback_rad)
{
    const float z[3] = {0, 0, 1};
    float f[3];
    m_quat_rotate(rotation, z, f);
    if (f[0] * f[0] + f[2] * f[2] < 1e-6f)
        return fallback_rad;
    return atan2f(f[0], f[2]);
}

static inline void
b_quat_from_yaw(float yaw_rad, float *out)
{
    const float y[3] = {0, 1, 0};
    m_quat_from_axis_angle(y, yaw_rad, out);
}

#endif
