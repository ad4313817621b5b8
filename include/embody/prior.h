/*
 * The body-pose prior: a small network, learned from real motion capture, that says where
 * the pelvis, knees and feet are from how the headset and controllers moved over the last
 * fraction of a second (the head bobs twice per stride and sways over the stance foot,
 * the hands swing against the legs, the head drops before a crouch).
 *
 * Inputs (pr_features): only the 3-point stream, in a frame that follows the head's
 * heading (origin under the current head, +Z the way the head faces, +Y up, floor at
 * y = 0), lengths divided by the player's height over PR_REFERENCE_HEIGHT_M: for each of
 * PR_WINDOW samples taken every PR_STRIDE frames (60 Hz) back from now, the head's
 * position (height above the floor, offset from the current head), its forward and up
 * axes, and both grips relative to that sample's head; and the grips' axes now. No
 * absolute world x/z, so it works anywhere in the room and facing any way.
 *
 * Outputs (enum pr_output), in the same heading frame and units: the pelvis (hips joint
 * position, its yaw relative to the heading as sine and cosine, its up axis = tilt),
 * for each leg the ankle, toes and knee positions, and a contact probability per foot.
 *
 * The network (pr_model): inputs normalised by the training set's mean and deviation,
 * two hidden layers of ReLU units, a linear output layer, outputs denormalised. Inference
 * allocates nothing; its inner loops run along contiguous output rows, so the compiler
 * vectorizes them without reordering any sum (results are the same at -O0 and -O3).
 *
 * Model files (PR_MODEL_MAGIC): a little-endian header (magic, version, sizes, the ids
 * of the feature and output definitions, the training note, a CRC-32 of the whole file)
 * then the float32 normalisation statistics and weights. pr_model_load refuses a file
 * that is truncated, corrupt, of another version or of other sizes, with a reason naming
 * the file. `embody train` (src/prior/pr_train.c, its API in src/prior/pr_train.h, not
 * installed) makes them.
 */
#ifndef EMBODY_PRIOR_H
#define EMBODY_PRIOR_H

#include <stdbool.h>
#include <stdint.h>

#include "embody/export.h"
#include "embody/result.h"
#include "embody/tracking.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Features ------------------------------------------------------------------------- */

#define PR_RATE_HZ 60.0
#define PR_WINDOW 12        /* samples in the history window */
#define PR_STRIDE 4         /* frames (60 Hz) between samples: 0.73 s in all */
#define PR_PER_SAMPLE 15    /* head offset (3), head axes (6), grips from head (6) */
#define PR_CURRENT_EXTRA 12 /* both grips' Y and Z axes now */
#define PR_FEATURE_COUNT (PR_WINDOW * PR_PER_SAMPLE + PR_CURRENT_EXTRA)
#define PR_HISTORY_FRAMES ((PR_WINDOW - 1) * PR_STRIDE + 1)
/* Lengths are divided by height / this, so one model serves people of any height. */
#define PR_REFERENCE_HEIGHT_M 1.75f
/* Ids of the definitions a model file was trained for (bump when they change). */
#define PR_FEATURE_SET_ID 1u
/* Output set 2 adds the torso (neck and shoulders) to set 1's pelvis and legs, set 3 the
 * back (spine and chest), set 4 the elbows; models of sets 1 to 3 (PR_OUTPUT_COUNT_SET1,
 * _SET2, _SET3 outputs) still load and drive what they predict. */
#define PR_OUTPUT_SET_ID 4u

/* What the prior keeps of the past: the devices at 60 Hz. Zeroed = empty. */
struct pr_device_sample {
    float head_position_m[3];
    float head_rotation[4]; /* x, y, z, w */
    float grip_position_m[2][3];
    float grip_rotation[2][4];
};

struct pr_history {
    struct pr_device_sample sample[PR_HISTORY_FRAMES]; /* ring */
    int newest;                                        /* index of the latest sample */
    int count;                                         /* samples held (<= capacity) */
    double next_time_s;                                /* when the next sample is due */
};

EMBODY_API void pr_history_reset(struct pr_history *history);

/* Records the frame's devices when a 60 Hz tick has passed since the last sample (a
 * faster stream is sampled, a 60 Hz stream keeps every frame). A device that is not
 * usable repeats its last sample (its first usable one before that). Returns true when
 * a sample was taken. */
EMBODY_API bool pr_history_push(struct pr_history *history, const struct em_tracking_frame *frame);

/* The features of the latest sample (PR_FEATURE_COUNT floats) for a player of
 * `height_m` standing on a floor at `floor_y_m`; `out_yaw_rad` (may be NULL) gets the
 * heading used (about +Y, 0 = facing +Z). Older samples than the history holds repeat
 * the oldest. The history must hold at least one sample. */
EMBODY_API void pr_features(const struct pr_history *history, float height_m, float floor_y_m,
                            float *out_features, float *out_yaw_rad);

/* The head's facing about +Y from a headset rotation (view -Z forward), steady when the
 * head pitches: forward minus its height times up. `fallback_rad` when undefined. */
EMBODY_API float pr_head_yaw(const float *head_rotation, float fallback_rad);

/* ---- Outputs -------------------------------------------------------------------------- */

enum pr_output {
    PR_OUT_HIPS = 0,         /* x, y, z */
    PR_OUT_HIPS_YAW_SIN = 3, /* the pelvis's yaw relative to the heading */
    PR_OUT_HIPS_YAW_COS = 4,
    PR_OUT_HIPS_UP = 5,  /* x, y, z: the pelvis's +Y axis */
    PR_OUT_LEG = 8,      /* left leg; the right leg at PR_OUT_LEG + PR_OUT_PER_LEG */
    PR_OUT_PER_LEG = 9,  /* ankle (3), toes (3), knee (3) */
    PR_OUT_CONTACT = 26, /* left, right: probability the foot is planted */
    PR_OUTPUT_COUNT_SET1 = 28,
    PR_OUT_NECK = 28,       /* x, y, z: the neck joint (CMU's: the base of the neck) */
    PR_OUT_UPPER_ARM = 31,  /* left x, y, z, then right: the shoulder joints */
    PR_OUTPUT_COUNT_SET2 = 37,
    /* x, y, z: the back at a third (spine) and two thirds (chest) of its length from the
     * pelvis to the neck, measured along the rig's own spine joints: the same places on
     * every rig, however many spine bones it has */
    PR_OUT_BACK = 37,
    PR_OUTPUT_COUNT_SET3 = 43,
    PR_OUT_LOWER_ARM = 43, /* left x, y, z, then right: the elbow joints */
    PR_OUTPUT_COUNT = 49,
};
#define PR_LEG_ANKLE 0
#define PR_LEG_TOES 3
#define PR_LEG_KNEE 6

/* The true joints a training target is made from, in the world frame (metres). */
struct pr_truth {
    float hips_m[3];
    float hips_rotation[4];
    float ankle_m[2][3];
    float toes_m[2][3];
    float knee_m[2][3];
    float neck_m[3];         /* the torso: output set 2 only */
    float upper_arm_m[2][3];
    float back_m[2][3]; /* spine, chest (PR_OUT_BACK): output set 3 on */
    float lower_arm_m[2][3]; /* the elbows: output set 4 on */
    bool contact[2];
    bool has_torso; /* pr_decode_outputs: the model predicts neck and shoulders */
    bool has_back;  /* and the back */
    bool has_elbows; /* and the elbows */
};

/* The targets (PR_OUTPUT_COUNT floats) for `truth` in the heading frame of the latest
 * history sample: the same frame pr_features used (its yaw and the head's x/z). */
EMBODY_API void pr_encode_targets(const struct pr_truth *truth, const float *head_position_m,
                                  float yaw_rad, float height_m, float floor_y_m,
                                  float *out_targets);

/* Back to the world frame: the inverse of pr_encode_targets for positions (the contact
 * probabilities are copied; the pelvis rotation is rebuilt from its yaw and up axis).
 * `output_count` is the model's: PR_OUTPUT_COUNT_SET1 decodes no torso (has_torso false),
 * PR_OUTPUT_COUNT_SET2 no back (has_back false), PR_OUTPUT_COUNT_SET3 no elbows
 * (has_elbows false). */
EMBODY_API void pr_decode_outputs(const float *outputs, int output_count,
                                  const float *head_position_m, float yaw_rad, float height_m,
                                  float floor_y_m, struct pr_truth *out_pose, float out_contact[2]);

/* ---- The model ------------------------------------------------------------------------ */

#define PR_MODEL_MAGIC "EMBPRIOR"
#define PR_MODEL_VERSION 1u
#define PR_MAX_HIDDEN 512
#define PR_NOTE_MAX 128
#define PR_HOLDOUT_MAX 64

struct pr_model {
    int feature_count, output_count, hidden_count; /* layers: F -> H -> H -> O */
    char note[PR_NOTE_MAX];                        /* what it was trained on (text) */
    char holdout[PR_HOLDOUT_MAX]; /* subjects held out of training ("02,07,35"; may be "") */
    float *params;                /* owned: every float below, in order */
    float *in_mean, *in_std, *out_mean, *out_std;
    float *w1, *b1, *w2, *b2, *w3, *b3; /* w: [inputs][outputs], row per input */
    /* owned: w1, w2 and w3 again in half precision (IEEE binary16), for pr_model_infer's
     * fast path; filled by pr_model_pack; `packed` says it holds the weights above. */
    uint16_t *half;
    bool packed;
};

/* Floats a model of these sizes holds. */
EMBODY_API long pr_model_param_count(int feature_count, int hidden_count, int output_count);

/* A model of the program's feature and output sizes with `hidden_count` units per hidden
 * layer, every parameter 0 and deviations 1. Caller pr_model_fini's it. */
EMBODY_API enum em_result pr_model_init(struct pr_model *out, int hidden_count,
                                        struct em_error *err);

EMBODY_API void pr_model_fini(struct pr_model *model);

/* Rounds the layers' weights to the nearest half-precision value and keeps them in that
 * form too (model->half), for pr_model_infer: reading the weights is most of a run's
 * time, and half the bytes is nearly half the time. Loading and training do it; call it
 * again after changing the weights by hand. Idempotent. */
EMBODY_API void pr_model_pack(struct pr_model *model);

/* Runs the network: `features` (feature_count) -> `out_outputs` (output_count),
 * denormalised. No allocation. A packed model runs on its half-precision weights where
 * the CPU has AVX2, FMA and F16C; otherwise (and unpacked) as pr_model_infer_portable. */
EMBODY_API void pr_model_infer(const struct pr_model *model, const float *features,
                               float *out_outputs);
/* The same in portable C on the float weights (after pr_model_pack, the same values as
 * the half ones): equal to pr_model_infer within float rounding. */
EMBODY_API void pr_model_infer_portable(const struct pr_model *model, const float *features,
                                        float *out_outputs);

/* Writes the model file. Errors name the file. */
EMBODY_API enum em_result pr_model_save(const struct pr_model *model, const char *path,
                                        struct em_error *err);

/* Reads and validates a model file: magic, version, the feature and output definitions
 * and sizes this program computes, the byte count, the checksum, finite parameters and
 * positive deviations, then pr_model_check. Each refusal names the file and what is wrong. `out` is the
 * caller's to pr_model_fini; zeroed on failure. */
EMBODY_API enum em_result pr_model_load(const char *path, struct pr_model *out,
                                        struct em_error *err);

/* Whether the network can drive a body (pr_check.c): every parameter within 1e4, and a
 * forward pass on a fixed probe (a 1.75 m player standing still) finite, with every
 * decoded joint below the head and within 2.5 m of it. EM_ERROR_PARSE naming `source`
 * and why otherwise. pr_model_load runs it. */
EMBODY_API enum em_result pr_model_check(const struct pr_model *model, const char *source,
                                         struct em_error *err);

/* The same from bytes in memory; `source` names them in errors. */
EMBODY_API enum em_result pr_model_parse(const unsigned char *bytes, long size, const char *source,
                                         struct pr_model *out, struct em_error *err);

/* CRC-32 (IEEE 802.3, as zlib's crc32) of `size` bytes, continuing from `crc` (0 to start). */
EMBODY_API uint32_t pr_crc32(uint32_t crc, const unsigned char *bytes, long size);

/* The shipped model's path relative to the data folder (u_path_find_data). */
#define PR_DEFAULT_MODEL "config/prior/body-prior-v8.bin"

#ifdef __cplusplus
}
#endif

#endif
