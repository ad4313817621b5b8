/*
 * Full-body reconstruction from a headset and two controllers.
 *
 * Each frame: the device poses are filtered (jitter removed without lag); the head and
 * wrists follow from the devices through their offsets; the pelvis is estimated from
 * the head projected to the floor (lowered and moved back when the head drops, turned
 * with a body heading that follows the head and hands with hysteresis); feet stay
 * planted and step procedurally when the body moves or turns (or, with the learned
 * prior, go where it predicts); then the tree FABRIK solver (include/embody/ik.h)
 * reconstructs the spine, head and arms with joint limits, elbows guided by pole targets,
 * and the legs are built in closed form from their targets (no state carried between
 * frames, so they cannot wind up). A lost device's limb blends to a plausible pose and
 * back when it returns; a teleport of the headset restarts the body under it at once.
 *
 * Frames are the tracking space of include/embody/tracking.h (metres, +Y up, floor at
 * y = floor_height_m). An update allocates nothing and never fails: whatever comes in,
 * a finite pose comes out.
 */
#ifndef EMBODY_BODY_H
#define EMBODY_BODY_H

#include <stdbool.h>

#include <cglm/types.h>

#include "embody/export.h"
#include "embody/ik.h"
#include "embody/prior.h"
#include "embody/result.h"
#include "embody/skeleton.h"
#include "embody/tracking.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where each device sits on its bone. Zero means default for every field: the defaults
 * are the devices of the evaluation protocol (../shared/eval/PROTOCOL.md section 2). */
struct body_device_offsets {
    /* The headset's centre-eye view pose in the head joint's frame: 8 cm up and 9 cm
     * forward of the skull base, looking along the head's +Z (view -Z). */
    vec3 head_position_m;
    versor head_rotation;
    /* A controller's grip pose in its hand joint's frame: at `grip_palm_fraction` of
     * the way from the wrist to the knuckles (default 0.5), plus `grip_offset_m`,
     * with the grip axes `grip_rotation` (left and right). */
    float grip_palm_fraction;
    vec3 grip_offset_m[2];
    versor grip_rotation[2];
};

/* Where a body tracker sits on its bone: the tracker's pose in the bone's frame (pelvis:
 * hips, chest: chest, feet: foot, knees: lowerLeg, elbows: lowerArm). A mount that is all
 * zero is the default, PROTOCOL.md section 2b's: pelvis (0, 0.05, -0.12) on the belt at
 * the back, chest (0, 0, 0.10) on the sternum, feet (0, -0.02, 0.07) on the instep, knees
 * (0, -0.10, 0.06) on the shin, elbows (0, 0, -0.05) behind the elbow, all with the
 * bone's axes. */
struct body_tracker_mount {
    vec3 position_m;
    versor rotation;
};

#define BODY_ARM_STRETCH_MAX 0.3f

/* The stages after the learned prior's network that each give up some accuracy for a
 * property they name (docs/accuracy.md, "What each stage after the network costs"). The
 * evaluation switches them off to measure the trade (`embody eval --without NAME`); a
 * player's body keeps them all (body_desc.stages_off 0). */
enum body_stage_flags {
    BODY_STAGE_SMOOTHING = 1u << 0, /* a planted leg's predictions steadied: jitter */
    BODY_STAGE_FILTERS = 1u << 1,   /* One-Euro filters on the predicted legs: jitter */
    BODY_STAGE_PLANTING = 1u << 2,  /* a planted foot held where it was set down: skate */
    BODY_STAGE_REACH = 1u << 3,     /* ankles eased within the leg's reach: knee snaps */
    BODY_STAGE_FLOOR = 1u << 4,     /* feet and knees kept above the floor: the floor */
    BODY_STAGE_COUNT = 5,
    BODY_STAGE_ALL = (1u << BODY_STAGE_COUNT) - 1u,
};

/* A stage's name ("smoothing", "filters", "planting", "reach", "floor"), or NULL for a
 * value that is not a single stage. */
EMBODY_API const char *
body_stage_name(unsigned stage);

struct body_desc {
    /* The avatar: a humanoid skeleton (copied), or NULL for config/humanoid.json. */
    const struct sk_skeleton *skeleton;
    /* Fit the avatar to this standing height (floor to crown) and arm span; 0 keeps
     * the skeleton's own. */
    float height_m;
    float arm_span_m;
    /* How far an avatar's arms may stretch past their length to put its hands on
     * controllers out of their reach (an avatar with shorter arms than its player's), as
     * a fraction of the arm's length: 0.15 lets a 60 cm arm reach 69 cm. 0 (the default)
     * never stretches; at most BODY_ARM_STRETCH_MAX. Only the elbow and hand move out
     * along the straight arm; rotations stay. */
    float arm_stretch_max;
    struct body_device_offsets offsets;
    float floor_height_m; /* the floor's y in the tracking space (0 in STAGE space) */
    /* Jitter filter (One-Euro, Casiez et al. 2012): cutoff at rest in Hz (default 3)
     * and speed coefficient (default 8, per m/s); negative min_cutoff turns filtering off. */
    float filter_min_cutoff_hz;
    float filter_beta;
    float loss_blend_s; /* time for a lost limb to settle, and to come back (0.3 s) */
    /* Body trackers (src/body/b_trackers.c), by enum em_tracker. */
    struct body_tracker_mount tracker_mount[EM_TRACKER_COUNT];
    /* The learned body-pose prior (include/embody/prior.h) that places the pelvis, knees
     * and feet, or NULL for the procedural estimate. Not copied: it must outlive the body.
     * Load it with pr_model_load (a refused file leaves NULL: the procedural estimate). */
    const struct pr_model *prior;
    /* enum body_stage_flags switched off, for measuring what each costs; 0: all on. */
    unsigned stages_off;
};

enum body_posture {
    BODY_STANDING = 0,
    BODY_CROUCHING,
    BODY_KNEELING,
    BODY_SITTING,           /* on a seat (chair, stool) */
    BODY_SITTING_ON_FLOOR,  /* cross-legged or knees up */
    BODY_LYING_ON_BACK,
    BODY_LYING_ON_SIDE,
    BODY_LYING_ON_FRONT,
    BODY_POSTURE_COUNT,
};

enum body_foot_state {
    BODY_FOOT_PLANTED = 0,
    BODY_FOOT_STEPPING,
    BODY_FOOT_TRACKED, /* a foot tracker holds it where it is: it never steps */
};

enum body_device_state {
    BODY_DEVICE_TRACKED = 0,
    BODY_DEVICE_LOST,      /* blending toward, or holding, the fallback pose */
    BODY_DEVICE_RETURNING, /* tracked again, blending back */
};

struct body_status {
    enum body_posture posture;
    /* The head and hands could not tell this posture from another (kneeling upright and
     * sitting on a seat put the head at the same height): it was chosen by the way down
     * (the head going back as the hips do sitting down). */
    bool posture_by_motion;
    enum body_foot_state foot[2]; /* left, right */
    enum body_device_state device[EM_DEVICE_COUNT];
    struct ik_stats ik;            /* of the last solve (the torso's); residual_m[e] is
                                    * effector e's below, target_m to reached_m */
    int effector_count;
    const char *effector_name[IK_MAX_EFFECTORS];
    vec3 target_m[IK_MAX_EFFECTORS];  /* where each effector was asked to go */
    vec3 reached_m[IK_MAX_EFFECTORS]; /* where it went */
    float height_m;
    float arm_span_m;
    float heading_rad; /* the body's facing about +Y; 0 = facing +Z */
    long prior_dropped; /* the prior's predictions dropped as not finite, so far (the body
                           then keeps its last one, or the procedural estimate) */
};

struct body;

/* Reads settings from an embody body file (config/body.json) into `desc`: fields the
 * file has replace desc's, the rest stay. Errors name the file and the field (or the line
 * of malformed JSON); on error `desc` is unchanged. */
EMBODY_API enum em_result
body_desc_load_json(const char *path, struct body_desc *desc, struct em_error *err);

/* The same from text in memory; `source` names it in errors. */
EMBODY_API enum em_result
body_desc_parse_json(const char *text, const char *source, struct body_desc *desc,
                     struct em_error *err);

/* Builds the reconstruction for an avatar. Fails (with a reason) on a skeleton that is
 * not a humanoid, an implausible height or span, or non-finite settings. */
EMBODY_API enum em_result
body_create(const struct body_desc *desc, struct body **out_body, struct em_error *err);

/* Frees the body (NULL is fine) and clears the caller's pointer. */
EMBODY_API void
body_destroy(struct body **body);

/* The description with every default resolved. */
EMBODY_API void
body_get_desc(const struct body *body, struct body_desc *out_desc);

/* Advances to `frame` (its time_s must not go backwards; a repeated or older frame is
 * ignored) and reconstructs the pose. */
EMBODY_API void
body_update(struct body *body, const struct em_tracking_frame *frame);

/* The avatar and its current pose (valid until the next update or destroy). */
EMBODY_API const struct sk_skeleton *
body_skeleton(const struct body *body);

EMBODY_API const struct sk_pose *
body_pose(const struct body *body);

EMBODY_API void
body_get_status(const struct body *body, struct body_status *out_status);

/* What the body does with each body tracker (include/embody/tracking.h). */
struct body_tracker_status {
    bool present;                 /* the source carries it (worn) */
    enum body_device_state state; /* tracked, lost (or never seen), returning */
    float weight;                 /* 0 = the estimate alone, 1 = the tracker alone */
    vec3 position_m;              /* the tracker's last pose used (filtered), world */
    versor rotation;
    vec3 bone_m; /* where it puts its bone's joint (hips, chest, foot, knee, elbow) */
};

/* `out` has EM_TRACKER_COUNT entries. */
EMBODY_API void
body_get_trackers(const struct body *body, struct body_tracker_status *out);

/* Calibrates the mount of every tracker tracked in `frame`, with the player standing
 * straight: the avatar is stood upright under the headset (facing where it faces, arms
 * reaching for the controllers when they are tracked) and each tracker's pose in its bone's
 * frame becomes its mount. body_calibrate does this too, after refitting the avatar. Fails
 * (mounts unchanged) when the headset is not tracked; a tracker further than 0.3 m from its
 * bone keeps its mount. `out_calibrated` (may be NULL) gets the trackers calibrated. */
EMBODY_API enum em_result
body_calibrate_trackers(struct body *body, const struct em_tracking_frame *frame,
                        uint32_t *out_calibrated, struct em_error *err);

/* Calibrates from the frame given, with the player standing straight: the height from
 * the headset's height, and, when the controllers are held out to the sides (T-pose),
 * the arm span. Refits the avatar. Fails (keeping the old fit) when the head is not
 * tracked or the measurement is implausible. */
EMBODY_API enum em_result
body_calibrate(struct body *body, const struct em_tracking_frame *frame, struct em_error *err);

/* Puts the feet back under the body and resets the heading to the head's. Call it when
 * the play space is recentred: the next frame's head sample is taken as the new place, and
 * every history (filters, pelvis, feet, the learned prior's) moves there with it. */
EMBODY_API void
body_recenter(struct body *body);

/* Forgets all history (filters, feet, heading), as for a new session. */
EMBODY_API void
body_reset(struct body *body);

EMBODY_API const char *
body_posture_name(enum body_posture posture);

/* The standing eye height a person of `height_m` has (for calibration and tools). */
EMBODY_API float
body_eye_height_for(float height_m);

#ifdef __cplusplus
}
#endif

#endif
