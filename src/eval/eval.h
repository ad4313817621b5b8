/*
 * The accuracy evaluation (../shared/eval/PROTOCOL.md): real motion capture goes in as
 * only what a headset and two controllers would report, the body reconstructs the rest,
 * and every scored joint is compared with where the real person's joint was.
 *
 * `embody eval DIR` runs the whole protocol over a folder of CMU BVH clips: per clip the
 * 3-point stream (PROTOCOL section 2), a fresh body for each mode (known body: the
 * clip's own skeleton; height only: the default proportions fitted to the clip's
 * height), every row through body_update (timed), and the metrics of section 4 against
 * the true joints at the same rows. A do-nothing avatar (the first true pose carried
 * rigidly under the headset) is scored alongside, for scale. Means are over clips (each
 * clip counts once), also by motion category (MANIFEST.tsv's category column).
 *
 * Layers, each callable on its own (tests use them), each calling only those below it:
 * the metric functions on motions of the 17 scored joints and the per-frame checks; a
 * clip (ev_clip_load) and its reconstruction by a method (ev_clip_reconstruct); the checks
 * that rerun a clip (sensitivity, recovery, turning in place); a whole run over a folder
 * (ev_run) into a report that prints as tables and as JSON; and ev_main, the command line
 * on top (src/eval/CMakeLists.txt lists the files in that order).
 *
 * Units: positions in metres in the stream's tracking space (+Y up, floor at y = 0);
 * MPJPE and foot skate in centimetres, jitter in m/s^3, times in microseconds.
 */
#ifndef EMBODY_EVAL_H
#define EMBODY_EVAL_H

#include <stdbool.h>
#include <stdio.h>

#include "fault/fault.h"
#include "embody/prior.h"
#include "embody/result.h"
#include "embody/skeleton.h"
#include "embody/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The scored joints and their groups (PROTOCOL sections 3 and 4) ------------- */

enum ev_joint {
    EV_HIPS = 0,
    EV_NECK,
    EV_HEAD,
    EV_LEFT_UPPER_ARM,
    EV_LEFT_LOWER_ARM,
    EV_LEFT_HAND,
    EV_RIGHT_UPPER_ARM,
    EV_RIGHT_LOWER_ARM,
    EV_RIGHT_HAND,
    EV_LEFT_UPPER_LEG,
    EV_LEFT_LOWER_LEG,
    EV_LEFT_FOOT,
    EV_LEFT_TOES,
    EV_RIGHT_UPPER_LEG,
    EV_RIGHT_LOWER_LEG,
    EV_RIGHT_FOOT,
    EV_RIGHT_TOES,
    EV_JOINT_COUNT,
};

/* The humanoid bone a scored joint is read from in the reconstruction (SK_LEFT_HAND). */
enum sk_bone
ev_joint_bone(enum ev_joint joint);

/* The CMU joint it is compared with ("LeftHand"). */
const char *
ev_joint_cmu_name(enum ev_joint joint);

/* all: the 17; upper: neck, head, both arms (8); lower: hips, both legs (9); hands: the
 * two hands; feet: foot and toes of both legs (4). */
enum ev_group {
    EV_GROUP_ALL = 0,
    EV_GROUP_UPPER,
    EV_GROUP_LOWER,
    EV_GROUP_HANDS,
    EV_GROUP_FEET,
    EV_GROUP_COUNT,
};

const char *
ev_group_name(enum ev_group group);

bool
ev_joint_in_group(enum ev_joint joint, enum ev_group group);

/* ---- Motions and metrics (PROTOCOL section 4) ------------------------------------- */

/* The positions of the 17 scored joints over a run of equally spaced frames. */
struct ev_motion {
    int frame_count;
    double fps;                                /* frames per second of these frames */
    double (*position_m)[EV_JOINT_COUNT][3];   /* [frame][joint][x, y, z], owned */
};

/* Allocates `frame_count` frames (zeroed). EM_ERROR_OUT_OF_MEMORY leaves `out` empty. */
enum em_result
ev_motion_init(struct ev_motion *out, int frame_count, double fps);

/* Frees; safe on a zeroed struct and twice. */
void
ev_motion_fini(struct ev_motion *motion);

/* MPJPE (centimetres) of `ours` against `truth` (the same frame count): the mean over
 * frames and the group's joints of the distance between the two positions, per group;
 * `out_joint_cm` (may be NULL) gets each joint's mean over frames. */
void
ev_mpjpe_cm(const struct ev_motion *ours, const struct ev_motion *truth,
            double out_cm[EV_GROUP_COUNT], double out_joint_cm[EV_JOINT_COUNT]);

/* One frame's error (centimetres), the step every MPJPE of this module is made of: each
 * scored joint's distance from the truth (`out_joint_cm`), and their mean per group
 * (`out_cm`; ev_group_means_cm). Positions in metres, one frame of an ev_motion. The live
 * program's HUD shows the same numbers for a replayed clip. */
void
ev_frame_joint_error_cm(const double ours_m[EV_JOINT_COUNT][3],
                        const double truth_m[EV_JOINT_COUNT][3], double out_joint_cm[EV_JOINT_COUNT]);

void
ev_frame_error_cm(const double ours_m[EV_JOINT_COUNT][3], const double truth_m[EV_JOINT_COUNT][3],
                  double out_cm[EV_GROUP_COUNT]);

/* The mean of the joints of each group (all, upper, lower, hands, feet). */
void
ev_group_means_cm(const double joint_cm[EV_JOINT_COUNT], double out_cm[EV_GROUP_COUNT]);

/* Jitter (m/s^3): the mean over frames 3.. and the 17 joints of the norm of the third
 * finite difference p[f] - 3 p[f-1] + 3 p[f-2] - p[f-3], times fps^3. NaN with fewer
 * than 4 frames. */
double
ev_jitter_m_s3(const struct ev_motion *motion);

/* A foot or toe joint counts as planted at frame f >= 1 when its true position moved at
 * most this far since frame f - 1. */
#define EV_PLANTED_MAX_STEP_M 0.01

/* Foot skate (centimetres per frame): over the (joint, frame) pairs where a true foot or
 * toe joint is planted, the mean distance our same joint moved since the previous frame.
 * `out_planted` (may be NULL) gets the number of pairs; NaN when there are none. */
double
ev_foot_skate_cm(const struct ev_motion *ours, const struct ev_motion *truth,
                 long *out_planted);

struct ev_scores {
    double mpjpe_cm[EV_GROUP_COUNT];
    double joint_mpjpe_cm[EV_JOINT_COUNT]; /* each scored joint's mean error */
    double jitter_m_s3;   /* of ours */
    double foot_skate_cm; /* NaN when no frame was planted */
    long planted_count;
    /* The feet's delay behind the truth (ms, 60 Hz rows, parabola-refined): the time
     * shift, within EV_MAX_LAG_ROWS rows either way, that best matches our feet's motion
     * (row-to-row steps) with the true feet's; negative when ahead. Motion rather than
     * position, because a standing offset (a foot 20 cm wide of the true one) made the
     * position's best shift the window's edge on half the public clips whatever the
     * timing. NaN for clips too short to tell, or whose feet barely move (no shift better
     * than the worst by EV_LAG_MIN_DEPTH of it, or by EV_LAG_MIN_STEP_M a row). */
    double lag_ms;
};

#define EV_MAX_LAG_ROWS 24
#define EV_LAG_MIN_DEPTH 0.1
#define EV_LAG_MIN_STEP_M 1e-4

/* Every metric of `ours` against `truth`. */
void
ev_score(const struct ev_motion *ours, const struct ev_motion *truth, struct ev_scores *out);

/* The do-nothing avatar: the first frame of `truth` carried rigidly under the headset,
 * upright: at each frame k it is turned about +Y by the change of the headset's heading
 * (the horizontal direction the view looks in) since frames[0] and moved with the
 * headset's position, p -> R_y(heading_k - heading_0) (p - h_0) + h_k. (Turning it by
 * the headset's whole rotation instead would swing the feet with every nod; PROTOCOL's
 * figures for it, 20.5 cm, lower 23.5, hands 30.1, are those of this upright carry.)
 * `frames` has truth->frame_count entries whose head poses are usable. `out` must be
 * initialised with the same frame count. */
void
ev_do_nothing(const struct ev_motion *truth, const struct em_tracking_frame *frames,
              struct ev_motion *out);

/* ---- Timing ------------------------------------------------------------------------- */

/* Durations of body_update calls, microseconds. A zeroed struct is empty. */
struct ev_timing {
    long count;
    long capacity;
    double *us;
};

enum em_result
ev_timing_add(struct ev_timing *timing, double us);

void
ev_timing_fini(struct ev_timing *timing);

/* Median and mean of samples [first, first + count) (NaN when count is 0). The median
 * of an even count is the mean of the two middle samples. */
double
ev_timing_median_us(const struct ev_timing *timing, long first, long count);

double
ev_timing_mean_us(const struct ev_timing *timing, long first, long count);

/* The nearest-rank percentile (`fraction` in (0, 1]: 0.99 for the 99th) of the same. */
double
ev_timing_percentile_us(const struct ev_timing *timing, long first, long count,
                        double fraction);

/* ---- One clip ------------------------------------------------------------------------ */

enum ev_method {
    EV_KNOWN_BODY = 0, /* the body built from the clip's own skeleton */
    EV_HEIGHT_ONLY,    /* the default proportions fitted to the clip's height */
    EV_DO_NOTHING,     /* the baseline (ev_do_nothing) */
    EV_METHOD_COUNT,
};

/* "known body", "height only", "do-nothing"; and a key for JSON ("known_body"). */
const char *
ev_method_name(enum ev_method method);

const char *
ev_method_key(enum ev_method method);

/* A clip ready to be reconstructed and scored. */
struct ev_clip {
    char path[1024];
    int source_frame_count;      /* frames in the BVH */
    int step;                    /* every step-th frame is a stream row (2 for 120 fps) */
    double unit_scale;           /* metres per file unit */
    struct st_stream stream;     /* the rows scored (at most the frame limit) */
    struct ev_motion truth;      /* true positions at the same rows, metres */
    struct sk_skeleton skeleton; /* the known body (st_bvh_to_humanoid) */
    float height_m;              /* its standing height (sk_humanoid_height) */
    /* Each body tracker's axes in its known-body bone's frame: the rotation the humanoid
     * rest pose gave the limb (st_bvh_to_humanoid straightens the legs and arms), identity
     * elsewhere (ev_trackers.c). */
    float tracker_axes[EM_TRACKER_COUNT][4];
    /* The bodies it is run through switch these stages off (body_desc.stages_off;
     * ev_clip_load_for gives it the options'). */
    unsigned body_stages_off;
};

/* Loads a CMU-style BVH clip: its unit scale (st_bvh_guess_unit_scale), its stream
 * (st_mocap_to_stream) cut to the first `frame_limit` rows when `frame_limit` > 0 (at
 * least 4 rows are needed), the true positions of the scored joints at those rows (frame
 * k * step of the clip, by st_bvh_frame_pose, times the unit scale) and the known body.
 * Errors name the file (and line for a malformed file). `out` is the caller's to
 * ev_clip_fini; zeroed on failure. */
enum em_result
ev_clip_load(const char *path, int frame_limit, struct ev_clip *out, struct em_error *err);

struct ev_options;

/* ev_clip_load with the options' frame limit, its bodies set up as the options say
 * (--without). */
enum em_result
ev_clip_load_for(const char *path, const struct ev_options *options, struct ev_clip *out,
                 struct em_error *err);

void
ev_clip_fini(struct ev_clip *clip);

/* Reconstructs the clip's motion by `method` into `out` (initialised here; the caller
 * ev_motion_fini's it, also on failure). Known body and height only: a fresh body
 * (body_create), body_update for every stream row with each call timed on the monotonic
 * clock into `timing` (may be NULL), the scored joints read from body_pose. Fails when
 * the body cannot be created, lacks a scored bone, or gives a non-finite position. */
enum em_result
ev_clip_reconstruct(const struct ev_clip *clip, enum ev_method method, struct ev_motion *out,
                    struct ev_timing *timing, struct em_error *err);

struct ev_checks;

/* The same on another stream of the clip's length (a perturbed copy), with `checks` (may
 * be NULL) filled from every frame (ev_checks_add_frame, ev_checks_finish; initialise it
 * first with ev_checks_init). */
enum em_result
ev_clip_reconstruct_stream(const struct ev_clip *clip, const struct st_stream *stream,
                           enum ev_method method, const struct pr_model *prior,
                           struct ev_motion *out, struct ev_timing *timing,
                           struct ev_checks *checks, struct em_error *err);

/* ---- Continuity, tracked effectors and twist ---------------------------------------- */

/* The limb joints whose twist is checked against their limits. */
enum ev_limb {
    EV_LIMB_LEFT_UPPER_ARM = 0,
    EV_LIMB_LEFT_LOWER_ARM,
    EV_LIMB_LEFT_HAND,
    EV_LIMB_RIGHT_UPPER_ARM,
    EV_LIMB_RIGHT_LOWER_ARM,
    EV_LIMB_RIGHT_HAND,
    EV_LIMB_LEFT_UPPER_LEG,
    EV_LIMB_LEFT_LOWER_LEG,
    EV_LIMB_LEFT_FOOT,
    EV_LIMB_RIGHT_UPPER_LEG,
    EV_LIMB_RIGHT_LOWER_LEG,
    EV_LIMB_RIGHT_FOOT,
    EV_LIMB_COUNT,
};

enum sk_bone
ev_limb_bone(enum ev_limb limb);

/* Noise added to every stream value for the sensitivity check: positions by uniform noise
 * in +-1e-5 m, quaternion components by +-1e-5 (then renormalised). */
#define EV_SENSITIVITY_NOISE 1e-5
/* A tracked head or hand farther than this from its target misses it. */
#define EV_EFFECTOR_MISS_M 0.02

/* What a player sees of the body at once (src/eval/ev_body_checks.c, ev_probes.c): the
 * head turned as the headset is, nothing under the floor, a body that comes back after a
 * bad sample, and feet that face where the player faces after turning on the spot. */
#define EV_HEAD_ANGLE_TARGET_DEG 10.0
#define EV_FLOOR_DEPTH_TARGET_M 0.01
#define EV_RECOVERY_TARGET_M 0.05
#define EV_RECOVERY_AFTER_S 0.5
#define EV_TURN_FEET_TARGET_DEG 20.0
/* A still player raising a hand above the head turns the hips at most this far. */
#define EV_HAND_UP_HIPS_TARGET_DEG 10.0
/* Head angles are counted in bins this wide (degrees) up to 180. */
#define EV_HEAD_ANGLE_BIN_DEG 0.5
#define EV_HEAD_ANGLE_BINS 361

struct ev_body_checks {
    /* The angle between the head joint's rotation and the one the headset gives the head
     * bone (device rotation times the headset offset's inverse), over the frames with a
     * tracked headset: a histogram, the largest and the share over the target. */
    int head_angle_count[EV_HEAD_ANGLE_BINS];
    long head_frames;
    double head_angle_max_deg;
    double head_angle_over_share;
    /* How far the lowest joint (any joint, end joints too) and the lowest foot part
     * (foot, toes and toe end) went under the floor, m (0: never). */
    double floor_depth_m;
    double foot_floor_depth_m;
    /* Bad-sample recovery (ev_clip_recovery): a head sample at 1e20 m injected at 1/4, 1/2
     * and 3/4 of the stream; the largest distance of a scored joint from the clean run's
     * EV_RECOVERY_AFTER_S later, worst injection, m. NaN: not measured. */
    double recovery_m;
    double recovery_lower_m; /* the same over the hips and legs alone (EV_GROUP_LOWER) */
    /* Turning in place (ev_clip_turn_in_place) from each of three rows: the clip's
     * standing row (ev_clip_standing_row), its first and its middle row: five 90 degree
     * turns at 90 deg/s to the left, and separately to the right, then 3 s still; the
     * largest angle of a foot from the head's heading at the end, degrees, over all six
     * (a start row where the body ends sitting or lying on the floor does not count: a
     * held crouch low enough to be taken for sitting down). NaN: not measured. */
    double turn_feet_deg;
    int turn_row; /* the row the worst turn started from */
    /* The person's own feet at turn_row, the same angle from that row's view heading (a
     * person kneeling on the insteps has them pointing back), degrees; NaN where neither
     * foot is more than half its length over the floor. */
    double turn_person_deg;
    /* A hand raised above a still head (ev_clip_hand_up): from the standing row, the right
     * controller goes up over 1 s to 25 cm above the headset and stays 2 s; the largest
     * turn of the hips (the line through the hip joints) from before, degrees. NaN: not
     * measured. */
    double hand_up_hips_deg;
};

/* What a reconstruction does beyond accuracy: how much a tiny change of the input moves
 * it, whether it meets its tracked effectors, and how far its limbs twist. */
struct ev_checks {
    /* Displacement of the scored joints between the run on the stream and the run on the
     * perturbed stream, over every (frame, joint): the 99th percentile and the maximum, mm.
     * NaN when not measured. */
    double sensitivity_p99_mm;
    double sensitivity_max_mm;
    /* Share (0..1) of frames where the head or a hand whose target the avatar could reach
     * (no farther from the hips than its chain up to them, stretched) is more than
     * EV_EFFECTOR_MISS_M from it, and the largest such miss (m); and the share of frames
     * with a target out of any pose's reach (the hips are too far from it). */
    double effector_miss_share;
    double effector_worst_miss_m;
    double out_of_reach_share;
    /* Share (0..1) of frames where a tracked hand is more than EV_EFFECTOR_MISS_M from its
     * controller's target, within reach or not (what a player sees: the hand left short
     * of the controller). */
    double hand_off_share;
    /* Each limb joint's twist about its bone (local rotation, swing-twist), min and max
     * over the frames, and its limit (NaN: the joint has none; a hinge's is 0..0). */
    double twist_min_deg[EV_LIMB_COUNT];
    double twist_max_deg[EV_LIMB_COUNT];
    double limit_min_deg[EV_LIMB_COUNT];
    double limit_max_deg[EV_LIMB_COUNT];
    double twist_excess_deg; /* the largest twist beyond a limit, over the limbs (0: none) */
    int twist_excess_limb;   /* the limb it was at, or -1 */
    struct ev_body_checks body; /* ev_body_checks.c, ev_probes.c */
};

/* Sets every value to "nothing measured yet". */
void
ev_checks_init(struct ev_checks *checks);

/* Folds one reconstructed pose into `checks`: the twist of every limb joint, and the
 * head's and hands' distances to their targets (body_get_status). */
struct body;
void
ev_checks_add_frame(struct ev_checks *checks, const struct body *body);

/* Ends a run of `frame_count` frames: the miss share and the worst excess. */
void
ev_checks_finish(struct ev_checks *checks, int frame_count);

/* Runs `method` again on `clip` with its stream perturbed (EV_SENSITIVITY_NOISE, a fixed
 * seed) and compares with `ours`, the unperturbed run: fills the sensitivity fields. */
enum em_result
ev_clip_sensitivity(const struct ev_clip *clip, enum ev_method method,
                    const struct pr_model *prior, const struct ev_motion *ours,
                    struct ev_checks *checks, struct em_error *err);

/* ---- What a player sees (ev_body_checks.c: per frame; ev_probes.c: reruns) ---------- */

/* Nothing measured yet (recovery and turn NaN). */
void
ev_body_checks_init(struct ev_body_checks *checks);

/* Folds one pose: the head's angle from the headset of `frame` (the frame body_update was
 * just given) and the depth of the lowest joint and foot part under the floor. */
struct em_tracking_frame;
void
ev_body_checks_add_frame(struct ev_body_checks *checks, const struct body *body,
                         const struct em_tracking_frame *frame);

/* Ends a run: the share of head frames over the target. */
void
ev_body_checks_finish(struct ev_body_checks *checks);

/* The nearest-rank percentile (`fraction` in (0, 1]) of the head angles, degrees (to the
 * bin's upper edge); NaN without a tracked head frame. */
double
ev_body_checks_head_percentile(const struct ev_body_checks *checks, double fraction);

/* Bad-sample recovery: reruns `method` on `clip` with one head sample at 1e20 m at 1/4,
 * 1/2 and 3/4 of the stream and compares with `ours`, the clean run, EV_RECOVERY_AFTER_S
 * after each; fills checks->recovery_m. Clips too short for it leave NaN. */
enum em_result
ev_clip_recovery(const struct ev_clip *clip, enum ev_method method, const struct pr_model *prior,
                 const struct ev_motion *ours, struct ev_body_checks *checks,
                 struct em_error *err);

/* The stream row the turn in place starts from: the stillest (head and hands over 0.5 s
 * either side) among the rows where the person stands (both ankles down, the head at least
 * 95 % as high as its 90th percentile height) and looks where the feet point (within
 * 15 degrees); failing that, the stillest row with both ankles down facing forward (a
 * person who never stands up straight), then the stillest standing row, then the stillest
 * row. */
int
ev_clip_standing_row(const struct ev_clip *clip);

/* The turn-in-place stream of a clip: row `row`'s head and hands held still for 1 s, then
 * turned about the vertical through the head by five 90 degree turns at 90 deg/s (`sign`
 * +1 to the left, -1 to the right) 0.5 s apart, then held for 3 s. `out` is the caller's
 * to st_stream_fini. */
enum em_result
ev_clip_turn_stream(const struct ev_clip *clip, int row, int sign, struct st_stream *out);

/* Plays both turn streams from each of ev_clip_standing_row, the first and the middle
 * row through a fresh body of `method` (with `prior`) and fills checks->turn_feet_deg and
 * turn_row (the worst). */
enum em_result
ev_clip_turn_in_place(const struct ev_clip *clip, enum ev_method method,
                      const struct pr_model *prior, struct ev_body_checks *checks,
                      struct em_error *err);

/* The hand-up stream of a clip: row `row`'s devices held still 1 s, then the right
 * controller raised over 1 s to 25 cm above the headset (10 cm ahead of it, its rotation
 * kept) and held there 2 s. `out` is the caller's to st_stream_fini. */
enum em_result
ev_clip_hand_up_stream(const struct ev_clip *clip, int row, struct st_stream *out);

/* Plays the hand-up stream from ev_clip_standing_row through a fresh body of `method`
 * (with `prior`) and fills checks->hand_up_hips_deg. */
enum em_result
ev_clip_hand_up(const struct ev_clip *clip, enum ev_method method, const struct pr_model *prior,
                struct ev_body_checks *checks, struct em_error *err);

/* The scored joints of the body's current pose (body_pose), metres, as the evaluation
 * reads them. Fails naming the first scored bone the avatar lacks, or a non-finite
 * position (EM_ERROR_UNSUPPORTED, EM_ERROR_RUNTIME). */
enum em_result
ev_body_scored_positions(const struct body *body, double out_m[EV_JOINT_COUNT][3],
                         struct em_error *err);

/* A fresh body for `method` on `clip` (its skeleton and tracker mounts for the known body,
 * the default proportions at its height otherwise), with `prior`. */
enum em_result
ev_clip_make_body(const struct ev_clip *clip, enum ev_method method,
                  const struct pr_model *prior, struct body **out_body, struct em_error *err);

/* The turn-in-place stream: a standing player of `height_m` turning `turns` full turns
 * to the left, then as many to the right (4 s a turn), then standing still for 3 s, at
 * `fps`; hands held in front at waist height, turning with the body. `out` is the
 * caller's to st_stream_fini. */
enum em_result
ev_turn_in_place_stream(float height_m, int turns, double fps, struct st_stream *out);

/* The result of the turn-in-place check for the default humanoid. */
struct ev_turn_result {
    bool ok;
    char error[EM_ERROR_MESSAGE_MAX];
    int turns;
    struct ev_checks checks;
    /* At the end (standing still after the turns): how far each foot points from the
     * head's heading, degrees. */
    double foot_heading_error_deg[2];
};

/* Plays the turn-in-place stream (10 turns each way) through a body of the default
 * proportions at 1.75 m and measures twist and where the feet point at the end. */
void
ev_turn_in_place_check(struct ev_turn_result *out);
/* The same with the body's learned prior (NULL: procedural, as ev_clip_reconstruct). */
enum em_result
ev_clip_reconstruct_prior(const struct ev_clip *clip, enum ev_method method,
                          const struct pr_model *prior, struct ev_motion *out,
                          struct ev_timing *timing, struct em_error *err);

/* True when `subjects` is NULL or empty, or names the person of `file` (LAB_PERSON_...:
 * cmu_SUBJECT_TRIAL.bvh, hdm05_ACTOR_CLASS_NNN.bvh; "02" and "2" are the same subject,
 * "bd" or "hdm05:bd" an HDM05 actor; src/prior/pr_person.c). */
bool
ev_clip_of_subjects(const char *file, const char *subjects);

/* ---- Postures (ev_postures.c) -------------------------------------------------------- */

/* Synthetic 3-point streams of a player lying down, sitting on the floor, kneeling, sitting
 * on a chair and squatting, and standing up again, made from a few key poses (the training
 * clips have none of the floor postures). */
enum ev_posture {
    EV_POSTURE_LIE_BACK = 0,
    EV_POSTURE_LIE_SIDE,
    EV_POSTURE_LIE_FRONT,
    EV_POSTURE_SIT_CROSS_LEGGED,
    EV_POSTURE_SIT_KNEES_UP,
    EV_POSTURE_KNEEL,
    EV_POSTURE_SIT_CHAIR,
    EV_POSTURE_SQUAT,
    EV_POSTURE_COUNT,
};

/* What a body must do in each posture: the head joint within this of where the headset
 * puts it, the hands within this of their distance from the controllers standing, and, on
 * the floor, the pelvis this close to it (no joint under the floor: EV_FLOOR_DEPTH_TARGET_M). */
#define EV_POSTURE_HEAD_TARGET_CM 8.0
#define EV_POSTURE_HANDS_TARGET_CM 3.0
#define EV_POSTURE_PELVIS_TARGET_M 0.30

/* "lie on the back", ... */
const char *
ev_posture_name(enum ev_posture posture);

/* True for the postures on the floor (lying, sitting on it). */
bool
ev_posture_on_floor(enum ev_posture posture);

/* Rows of a posture stream: standing before `standing_to`, holding the posture from
 * `hold_from` to `hold_to` (inclusive). */
struct ev_posture_window {
    int standing_to, hold_from, hold_to;
};

/* The posture's stream for a player of `height_m` (the key poses scaled to it) at `fps`,
 * standing 1.5 s, going down, holding, standing up again. `out` is the caller's to
 * st_stream_fini; `out_hold` (may be NULL) gets its rows. */
enum em_result
ev_posture_stream(enum ev_posture posture, float height_m, double fps, struct st_stream *out,
                  struct ev_posture_window *out_hold);

struct ev_posture_result {
    double lowest_joint_m;    /* the lowest joint over the whole stream, above the floor */
    double lowest_hold_m;     /* the same over the hold */
    double head_off_cm;       /* the head joint's largest distance from its target, hold */
    double hands_off_cm;      /* the hands' largest distance from their targets, hold */
    double hands_standing_cm; /* the same while standing at the start */
    double pelvis_m;          /* the pelvis's mean height above the floor, hold */
    int hold_frames;
    int shown;                /* enum body_posture the body says most over the hold */
    double shown_share;       /* on this share of the hold's frames */
    bool meets;               /* every target above */
};

/* Plays the posture's stream (at the body's height, 60 Hz) through `body` (fresh: the
 * stream starts at t = 0) and measures it. */
struct body;
enum em_result
ev_posture_run(struct body *body, enum ev_posture posture, struct ev_posture_result *out,
               struct em_error *err);

/* The table of `results` (EV_POSTURE_COUNT entries) under `title`, with the targets. */
void
ev_postures_print(FILE *out, const char *title, const struct ev_posture_result *results);

/* `embody eval --postures`: the table for the default humanoid at 1.75 m, with each body
 * --body asks for. Returns the exit status (0, or 1 when a body could not be built). */
struct ev_options;
int
ev_postures_main(const struct ev_options *options);

/* ---- A whole run ------------------------------------------------------------------- */

/* Which reconstruction modes to run (the do-nothing baseline always runs). */
enum ev_mode_flags {
    EV_MODE_KNOWN_BODY = 1u << EV_KNOWN_BODY,
    EV_MODE_HEIGHT_ONLY = 1u << EV_HEIGHT_ONLY,
    EV_MODE_BOTH = EV_MODE_KNOWN_BODY | EV_MODE_HEIGHT_ONLY,
};

struct ev_clip_result;

/* Called after each clip has run (index from 0 of `count`) with its result. */
typedef void (*ev_progress_fn)(void *user, int index, int count,
                               const struct ev_clip_result *clip);

/* Zero means default for every field (resolved by ev_options_resolve). */
struct ev_options {
    const char *clip_dir;     /* default EMBODY_SOURCE_DIR "/../shared/mocap", or the
                               * repository's tests/data/mocap when that does not exist */
    const char *json_path;    /* default "eval.json"; "-" writes none */
    unsigned modes;           /* enum ev_mode_flags; default both */
    int frame_limit;          /* rows scored per clip; 0 = all */
    bool quiet;               /* no progress on stderr */
    double max_mean_mpjpe_cm; /* > 0: fail when the known-body mean MPJPE exceeds it */
    ev_progress_fn progress;  /* NULL: none (ev_main prints to stderr) */
    void *progress_user;
    /* Body trackers the body is given besides head and hands (EM_TRACKER_BIT each,
     * PROTOCOL.md section 2b; made from each clip like the 3-point stream); 0 = none. */
    uint32_t trackers;
    bool tracker_setups; /* --trackers all: the table of every named setup (ev_trackers.c) */
    /* The body's learned prior (include/embody/prior.h) for the known-body and height-only
     * runs; NULL: the procedural estimate. */
    const struct pr_model *prior;
    /* Only clips of these people ("02,07", "bd", "05,hdm05:bd"; ev_clip_of_subjects);
     * NULL or "": all. */
    const char *subjects;
    /* `embody eval` only (src/eval/ev_prior.c): --body procedural|prior|both (NULL: both
     * when the model loads), --prior MODEL, --validation DIR. */
    const char *body_mode;
    const char *prior_path;
    const char *validation_dir;
    /* Faults put into every clip's stream once its trackers are chosen (--fault, --seed;
     * src/fault/fault.h); a zeroed set is none. */
    struct flt_set faults;
    bool fault_table; /* --fault-table: every named setup x the typical faults (ev_faults.c) */
    bool postures;    /* --postures: the synthetic postures' table alone (ev_postures.c) */
    bool transitions; /* --transitions: real transitions frame by frame (ev_transitions.c) */
    bool stages;      /* --stages: the network's joints against the body's (ev_stages.c) */
    /* --without: enum body_stage_flags switched off in every body the run makes (to
     * measure what each stage after the network costs); 0: none. */
    unsigned stages_off;
    /* --plot DIR: the observer (a program's plots, src/plot/plot.h) is told of each
     * figure the run makes and draws it into that folder; NULL: no plots. */
    const char *plot_dir;
    const struct ev_observer *observer;
};

/* What a caller above the core (the program's plots) is told of a run, each with the
 * resolved options (options->plot_dir says where to draw). Each returns EM_OK or fills
 * `err` naming what could not be written. Any member may be NULL. */
struct ev_clip;
struct ev_motion;
struct ev_report;
struct ev_means;
struct ev_observer {
    /* A clip's known-body reconstruction `ours` (clip->truth beside it), in ev_run. */
    enum em_result (*clip)(const struct ev_options *options, const struct ev_clip *clip,
                           const struct ev_motion *ours, struct em_error *err);
    /* A whole run's report, once its tables are printed. */
    enum em_result (*report)(const struct ev_options *options, const struct ev_report *report,
                             struct em_error *err);
    /* --trackers all: the means of each named setup. */
    enum em_result (*setups)(const struct ev_options *options, int count,
                             const char *const *names, const struct ev_means *means,
                             struct em_error *err);
    /* --fault-table: [row][col] known-body MPJPE and lower-body MPJPE (cm; NaN: not run). */
    enum em_result (*faults)(const struct ev_options *options, int rows,
                             const char *const *row_names, int cols,
                             const char *const *col_names, const double *mpjpe_cm,
                             const double *lower_cm, struct em_error *err);
};

/* Fills in the defaults. The clip folder is not checked here (ev_run does). */
void
ev_options_resolve(const struct ev_options *options, struct ev_options *out_resolved);

/* The result of one clip: scores by method, or the reason it failed. */
struct ev_clip_result {
    char file[256];    /* file name within the folder */
    char category[64]; /* from MANIFEST.tsv, or "other" */
    bool ok;
    char error[EM_ERROR_MESSAGE_MAX];
    int source_frames;
    int frames; /* rows scored */
    double fps;
    float height_m;
    double truth_jitter_m_s3;
    bool has[EV_METHOD_COUNT];
    struct ev_scores scores[EV_METHOD_COUNT];
    double update_median_us[EV_METHOD_COUNT]; /* NaN for the do-nothing */
    double update_mean_us[EV_METHOD_COUNT];
    struct ev_checks checks[EV_METHOD_COUNT]; /* known body and height only */
};

/* Means over clips (each counts once; a clip without a value, such as foot skate with
 * no planted frame, is left out of that mean). */
struct ev_means {
    int clip_count;
    struct ev_scores scores[EV_METHOD_COUNT];
    double truth_jitter_m_s3;
};

struct ev_category {
    char name[64];
    struct ev_means means;
};

struct ev_timing_summary {
    long frames;
    double median_us;
    double mean_us;
    double p99_us;
};

struct ev_report {
    struct ev_options options; /* resolved */
    char clip_dir[1024];
    int clip_count;
    struct ev_clip_result *clips;
    int failed_count;
    char manifest_error[EM_ERROR_MESSAGE_MAX]; /* empty when MANIFEST.tsv was fine */
    struct ev_means means;
    int category_count;
    struct ev_category *categories;
    /* body_update times by mode, and over every avatar-frame of the run. */
    struct ev_timing_summary timing[EV_METHOD_COUNT];
    struct ev_timing_summary timing_all;
    struct ev_turn_result turn; /* the turn-in-place check */
    double elapsed_s;
    char plot_error[EM_ERROR_MESSAGE_MAX]; /* the first figure the observer failed to draw */
};

/* Runs the evaluation over every *.bvh file of the folder (in name order). A clip that
 * fails (malformed file, a body that cannot be built) is recorded with its error and
 * the run goes on. Fails only when the folder cannot be read or holds no clip, or on
 * running out of memory. `out` is the caller's to ev_report_fini (also on failure). */
enum em_result
ev_run(const struct ev_options *options, struct ev_report *out, struct em_error *err);

/* ---- Folds of people left out (ev_folds.c) ------------------------------------------ */

/* A fold model's means over the clips of its people left out in one folder, by mode
 * (EV_KNOWN_BODY, EV_HEIGHT_ONLY): MPJPE, the hips' error and the lower body's, cm. */
struct ev_fold_scores {
    int clips; /* 0: the folder has no clip of those people (the figures are 0) */
    double mpjpe_cm[EV_DO_NOTHING], hips_cm[EV_DO_NOTHING], lower_cm[EV_DO_NOTHING];
};

/* Runs the body on `prior` (known body and height only) over the clips of `people` ("05,127",
 * "bd"; ev_clip_of_subjects) in `dir`, into `out`; a folder without such clips gives
 * clips 0. Fails as ev_run. */
enum em_result ev_fold_score(const struct pr_model *prior, const char *dir, const char *people,
                             struct ev_fold_scores *out, struct em_error *err);

/* ---- Tracker setups (ev_trackers.c) ---------------------------------------------- */

/* --trackers VALUE: a setup (3, 4, 6, 8, 11 or a list of tracker names) into
 * options->trackers, or "all" for the table of every named setup. */
enum em_result ev_trackers_parse(const char *value, struct ev_options *options,
                                 struct em_error *err);

/* Keeps only the trackers of `mask` in the clip's stream (the clip carries all eight
 * when its skeleton has their joints). Fails naming the clip when it has none and the
 * mask asks for some. */
enum em_result ev_trackers_select(struct ev_clip *clip, uint32_t mask, struct em_error *err);

/* Fills clip->tracker_axes from the clip's hierarchy (bone offsets only). */
void ev_trackers_known_axes(const struct st_bvh *bvh, struct ev_clip *clip);

/* The known body's tracker mounts (`out_mounts` is a body_desc's tracker_mount array):
 * PROTOCOL section 2b's offsets, expressed in the avatar's bone frames. */
void ev_trackers_known_mounts(const struct ev_clip *clip, void *out_mounts);

/* Runs the evaluation once per named setup (3, 4, 6, 8, 11) and prints one row per setup
 * and mode (MPJPE, lower body, feet, foot skate, jitter against the truth's, the worst
 * clip's jitter ratio, update time) and the targets. Returns the exit status as ev_main. */
int ev_trackers_main(const struct ev_options *options);

/* ---- Stages: the network against the body (ev_stages.c) ---------------------------- */

/* The joint groups the learned prior's network predicts (include/embody/prior.h), as
 * scored joints: the hips (CMU's Hips), both knees (LeftLeg, RightLeg), ankles (LeftFoot,
 * RightFoot), toes (LeftToeBase, RightToeBase), the neck (Neck) and the shoulders
 * (LeftArm, RightArm; both the torso's, models of output set 2 and up), the elbows
 * (LeftForeArm, RightForeArm; set 4 and up), and all of them together. The trainer's targets are these same joints
 * (src/prior/pr_truth.c), so the network is scored against what it learned. */
enum ev_stage_group {
    EV_STAGE_HIPS = 0,
    EV_STAGE_KNEES,
    EV_STAGE_ANKLES,
    EV_STAGE_TOES,
    EV_STAGE_NECK,
    EV_STAGE_SHOULDERS,
    EV_STAGE_ELBOWS,
    EV_STAGE_PREDICTED,
    EV_STAGE_COUNT,
};

const char *
ev_stage_group_name(enum ev_stage_group group);

/* The stage group of a scored joint, or -1 when the network does not predict it. */
int
ev_stage_group_of(enum ev_joint joint);

/* One clip in one mode: per group, the mean over rows and the group's joints of the
 * distance from the truth (cm) of the network's raw output (run from the stream alone,
 * unfiltered, as the body runs it) and of the body's final joints (after fusion and the
 * solve), on the same rows; NaN for a group the model does not predict (the torso's
 * before output set 2, the elbows before set 4). */
struct ev_stage_result {
    int rows;           /* rows counted: every row the network had a prediction for */
    int dropped;        /* rows whose network output was not finite (the last one stood) */
    bool has_group[EV_STAGE_COUNT]; /* the groups the model predicts */
    double network_cm[EV_STAGE_COUNT];
    double body_cm[EV_STAGE_COUNT];
    double body_mpjpe_cm; /* the body over all 17 scored joints and every row, as ev_run */
};

/* Runs the body of `method` (ev_clip_make_body) with `prior` over the clip's rows and,
 * beside it, the prior's network alone on the same frames (pr_history_push, pr_features,
 * pr_model_infer, pr_decode_outputs with the body's own height and floor). */
enum em_result
ev_stage_run(const struct ev_clip *clip, enum ev_method method, const struct pr_model *prior,
             struct ev_stage_result *out, struct em_error *err);

/* `embody eval --stages`: the table per mode over the folder's clips (means over rows, then
 * over clips); --json PATH gets it too. Returns the exit status as ev_main. */
int
ev_stages_main(const struct ev_options *options);

/* ---- Faults (ev_faults.c) ---------------------------------------------------------- */

/* --fault KIND:DEVICE:AMOUNT (repeatable) and --seed N into options->faults. */
enum em_result ev_faults_option(const char *name, const char *value, struct ev_options *options,
                                struct em_error *err);

/* Fails naming the fault when one names a body tracker the setup (options->trackers) does
 * not carry, so a fault is never silently without effect. */
enum em_result ev_faults_check_setup(const struct ev_options *options, struct em_error *err);

/* Graceful degradation (issue 28). A pelvis tracker drifting EV_DRIFT_DEG_PER_MIN for long
 * enough to be EV_DRIFT_DEG off must turn the body's hips and shoulders at most
 * EV_DRIFT_TURN_TARGET_DEG; a lost tracker's joints must be within EV_FALLBACK_NEAR_CM of
 * the estimate without it within EV_FALLBACK_TARGET_S. */
#define EV_DRIFT_DEG 30.0
#define EV_DRIFT_DEG_PER_MIN 6.0
#define EV_DRIFT_TURN_TARGET_DEG 10.0
#define EV_FALLBACK_TARGET_S 0.3
#define EV_FALLBACK_NEAR_CM 3.0

/* The clip's stream played forth and back (continuous, time going on) for `seconds`, with
 * only the trackers of `mask`; out is the caller's to st_stream_fini. */
enum em_result ev_stream_back_and_forth(const struct st_stream *stream, double seconds,
                                        uint32_t mask, struct st_stream *out,
                                        struct em_error *err);

/* The pelvis drift check on one clip and setup (known body): the clip played back and forth
 * until a pelvis tracker drifting EV_DRIFT_DEG_PER_MIN is EV_DRIFT_DEG off, with and without
 * the drift; how far the body's hips (the upper legs' line) and shoulders (the upper arms')
 * turned from the clean run's, degrees, mean over the last 0.25 s. */
enum em_result ev_faults_drift_turn(const struct ev_clip *clip, uint32_t setup,
                                    const struct pr_model *prior, double *out_hips_deg,
                                    double *out_shoulders_deg, struct em_error *err);

/* The fallback check on one clip: the trackers `dropped` of `setup` lost from the clip's
 * middle on; seconds until the joints they drive (the hips; the feet) are within
 * EV_FALLBACK_NEAR_CM of the run without those trackers (NaN: never). */
enum em_result ev_faults_fallback_s(const struct ev_clip *clip, uint32_t setup, uint32_t dropped,
                                    const struct pr_model *prior, double *out_s,
                                    struct em_error *err);

/* The typical faults (one of each kind at a size real trackers show) run on every named
 * setup that carries their devices; prints one table of setups x faults (MPJPE and lower
 * body, known body) and the graceful-degradation checks. Returns the exit status as ev_main. */
int ev_faults_main(const struct ev_options *options);

/* The absolute path of a file just written (as `path` when it cannot be resolved), for
 * telling the user where to look. */
void
ev_written_where(const char *path, char *out, size_t out_size);

/* True (with the reason in `err`) when `json` is one of the files the run read: a clip
 * or the folder's MANIFEST.tsv; such a JSON is not written. */
bool
ev_json_is_an_input(const struct ev_report *report, const char *json, struct em_error *err);

void
ev_report_fini(struct ev_report *report);

/* Hands the report to options->observer's report (when --plot asked for it); false, with
 * the reason on stderr, when a figure of the run or of the report could not be drawn. */
bool
ev_report_observe(const struct ev_report *report);

/* The tables: per clip for each method, by category, timing, and the summary with the
 * targets (markdown, readable in a terminal). */
void
ev_report_print(const struct ev_report *report, FILE *out);

/* The same as JSON (cJSON). */
enum em_result
ev_report_write_json(const struct ev_report *report, const char *path, struct em_error *err);

/* True when the bound is set and the known-body mean MPJPE exceeds it (or is missing). */
bool
ev_report_exceeds_bound(const struct ev_report *report);

/* ---- The command line ------------------------------------------------------------- */

/* Parses `embody eval` options (argv[0] is the command's name; options start at
 * argv[1]):
 *     [DIR] [--json PATH|-] [--mode known|height|both] [--frames N] [--max-mpjpe CM]
 *     [--quiet] [--help]
 * Values may follow as the next argument or after '='. Strings in `out` point into argv.
 * Sets `out_help` for --help. Errors name the option and what was expected. */
enum em_result
ev_parse_options(int argc, char **argv, struct ev_options *out, bool *out_help,
                 struct em_error *err);

/* The usage text. */
void
ev_print_usage(FILE *out);

/* --body, --prior, --validation and --subjects (src/eval/ev_prior.c): checks and stores
 * `value`. */
enum em_result
ev_prior_option(const char *name, const char *value, struct ev_options *out,
                struct em_error *err);

/* The run with the learned prior, procedural and prior side by side (--body both, the
 * default) or the prior alone, plus the validation subjects' figures. Returns false, having
 * done nothing, for --body procedural or when the model cannot be loaded (with a warning
 * naming the file and the reason): the caller then runs the procedural body. Otherwise
 * sets `out_status` (as ev_main's) and returns true. */
bool
ev_prior_main(const struct ev_options *options, int *out_status);

/* Parses, runs, prints the tables on stdout and progress on stderr, writes the JSON.
 * Returns the exit status: 0 when everything ran and met the bound; 1 when a clip or
 * MANIFEST.tsv failed, the JSON could not be written, or the known-body mean MPJPE is
 * above --max-mpjpe; 2 for bad options or a folder without clips. */
int
ev_main(int argc, char **argv);

/* The same with an observer for --plot (NULL: --plot is refused as not built in). */
int
ev_main_observed(int argc, char **argv, const struct ev_observer *observer);

#ifdef __cplusplus
}
#endif

#endif
